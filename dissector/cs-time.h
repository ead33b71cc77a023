/* cs-time.h
 * Capture times as nanoseconds and back. Plain C, no Wireshark headers, so
 * that dissector/tests/time_test.c can check it; analysis-util.h wraps it
 * for nstime_t (au_ts_ns, au_ns_ts).
 *
 * A negative time keeps both parts at or below zero (-1.5 s is -1 s and
 * -500 000 000 ns), as Wireshark's nstime_delta() writes a negative delta
 * and as its relative-time display reads one: seconds -2 with +500 000 000
 * ns would show as "-2.500000000".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_TIME_H
#define CS_TIME_H

#include <stdint.h>

#define CS_NS_PER_S 1000000000LL

/* secs + nsecs / 1e9, in nanoseconds. */
static inline int64_t cs_time_ns(int64_t secs, int32_t nsecs)
{
    return secs * CS_NS_PER_S + nsecs;
}

/* ns as seconds and nanoseconds of the same sign (|*nsecs| < 1e9). */
static inline void cs_time_split(int64_t ns, int64_t *secs, int32_t *nsecs)
{
    *secs = ns / CS_NS_PER_S; /* C division truncates toward zero */
    *nsecs = (int32_t)(ns % CS_NS_PER_S);
}

#endif /* CS_TIME_H */
