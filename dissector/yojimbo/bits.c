/* bits.c
 * The bit reader of yojimbo's connection packet, in serialize's order
 * (docs/yojimbo.md, "The format, in short"): least significant bit first within
 * little-endian bytes, serialize_int's width for a range, and
 * serialize_int_relative. Used by the decoder and the schema run.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/packet.h>

#include "yojimbo-int.h"

int yj_bits_required(guint32 min, guint32 max)
{
    guint32 d = max - min;
    int n = 0;
    if (min == max)
        return 0;
    while (d) {
        n++;
        d >>= 1;
    }
    return n;
}

void yj_bits_init(yj_bits_t *b, tvbuff_t *tvb)
{
    b->tvb = tvb;
    b->pos = 0;
    b->end = (guint64)tvb_reported_length(tvb) * 8;
    b->avail = tvb_captured_length(tvb);
    b->data = b->avail ? tvb_get_ptr(tvb, 0, b->avail) : NULL;
}

/* serialize_int_relative, reading: the value after previous. */
gboolean yj_read_relative(yj_bits_t *b, guint32 previous, guint32 *current, const char **why)
{
    static const guint32 lo[] = { 2, 7, 24, 281, 4378 };
    static const guint32 hi[] = { 6, 23, 280, 4377, 69914 };
    guint32 flag, v;

    *why = "the data ends inside it";
    if (!yj_read_bits(b, 1, &flag))
        return FALSE;
    if (flag) {
        *current = previous + 1;
        return TRUE;
    }
    for (guint i = 0; i < array_length(lo); i++) {
        if (!yj_read_bits(b, 1, &flag))
            return FALSE;
        if (flag) {
            if (!yj_read_bits(b, yj_bits_required(lo[i], hi[i]), &v))
                return FALSE;
            if (v > hi[i] - lo[i]) {
                *why = "its difference is out of its range";
                return FALSE;
            }
            *current = previous + lo[i] + v;
            return TRUE;
        }
    }
    if (!yj_read_bits(b, 32, &v))
        return FALSE;
    if (v <= previous) {
        *why = "its full 32-bit value is not above the previous value";
        return FALSE;
    }
    *current = v;
    return TRUE;
}
