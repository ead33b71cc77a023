/* time_test.c: cs_time_ns() and cs_time_split() (dissector/cs-time.h):
 * round trips, and negative times split into parts of the same sign, as
 * Wireshark's relative-time display reads them. Exit 0 when all hold.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>

#include "cs-time.h"

static int failures;

static void check_split(int64_t ns, int64_t want_secs, int32_t want_nsecs)
{
    int64_t secs;
    int32_t nsecs;
    cs_time_split(ns, &secs, &nsecs);
    if (secs != want_secs || nsecs != want_nsecs || cs_time_ns(secs, nsecs) != ns) {
        fprintf(stderr, "time_test: %lld ns split into %lld s %d ns, want %lld s %d ns\n", (long long)ns,
                (long long)secs, nsecs, (long long)want_secs, want_nsecs);
        failures++;
    }
}

int main(void)
{
    check_split(0, 0, 0);
    check_split(1500000000LL, 1, 500000000);
    check_split(999999999LL, 0, 999999999);
    check_split(-1500000000LL, -1, -500000000); /* -1.5 s: shown as -1.500000000 */
    check_split(-1500000LL, 0, -1500000);       /* -1.5 ms: shown as -0.001500000 */
    check_split(-1000000000LL, -1, 0);
    check_split(-1LL, 0, -1);
    /* Round trips over both signs and a capture's range of times. */
    for (int64_t ns = -5000000000LL; ns <= 5000000000LL; ns += 123456789LL) {
        int64_t secs;
        int32_t nsecs;
        cs_time_split(ns, &secs, &nsecs);
        if (cs_time_ns(secs, nsecs) != ns || nsecs <= -CS_NS_PER_S || nsecs >= CS_NS_PER_S ||
            (secs < 0 && nsecs > 0) || (secs > 0 && nsecs < 0)) {
            fprintf(stderr, "time_test: %lld ns does not round trip (%lld s %d ns)\n", (long long)ns,
                    (long long)secs, nsecs);
            failures++;
        }
    }
    if (failures == 0) printf("time_test: all good\n");
    return failures ? 1 : 0;
}
