/* bytes_test.c: cs_count_above() (dissector/common/cs-bytes.c) against the
 * obvious loop, for every shift, lengths 0..300 and values near the
 * maximum, each run in a buffer of exactly the bytes it may read (run under
 * ASan or valgrind, a read past them is caught). Exit 0 when all agree.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/cs-bytes.h"

static uint32_t slow(const uint8_t *p, uint32_t n, unsigned shift, unsigned max)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned v = shift ? ((unsigned)(p[i] >> shift) | ((unsigned)p[i + 1] << (8 - shift))) & 0xFF : p[i];
        bad += v > max;
    }
    return bad;
}

static uint32_t rnd_state = 1;
static uint32_t rnd(void)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

int main(void)
{
    static const unsigned maxes[] = { 128, 200, 254 };
    unsigned failures = 0, runs = 0;
    for (unsigned mi = 0; mi < 3; mi++) {
        unsigned max = maxes[mi];
        for (unsigned shift = 0; shift < 8; shift++) {
            for (uint32_t n = 0; n <= 300; n++) {
                for (int rep = 0; rep < 20; rep++) {
                    uint32_t nbytes = n + (shift ? 1 : 0);
                    uint8_t *p = malloc(nbytes ? nbytes : 1);
                    for (uint32_t i = 0; i < nbytes; i++) {
                        /* Mostly values around max, some anywhere. */
                        p[i] = (uint8_t)(rep % 4 == 0 ? rnd() : max - 2 + rnd() % 5);
                    }
                    if (rep == 1)
                        for (uint32_t i = 0; i < nbytes; i++)
                            p[i] = 0xFF;
                    uint32_t want = slow(p, n, shift, max), got = cs_count_above(p, n, shift, max);
                    if (got != want && failures++ < 10)
                        fprintf(stderr, "FAIL: max %u shift %u n %u: %u, expected %u\n", max, shift, n, got, want);
                    runs++;
                    free(p);
                }
            }
        }
    }
    if (failures) {
        fprintf(stderr, "bytes_test: %u of %u runs wrong\n", failures, runs);
        return 1;
    }
    printf("bytes_test: %u runs agree\n", runs);
    return 0;
}
