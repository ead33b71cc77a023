/* common/protocol2-reader.c
 * protocol2's bit reader: least-significant-bit-first fields, padding to
 * byte boundaries and the end check, never past the captured bytes
 * (docs/protocol.md, "Bits" and "Every packet"; interface: protocol2.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"

void dp2_reader_init(dp2_reader_t *r, tvbuff_t *tvb)
{
    memset(r, 0, sizeof *r);
    r->tvb = tvb;
    r->bit = DP2_BODY_BIT;
    r->limit = tvb_captured_length(tvb) * 8;
    if (r->limit)
        r->data = tvb_get_ptr(tvb, 0, r->limit / 8);
    if (r->limit < DP2_BODY_BIT) {
        r->errors |= DP2_ERR_TRUNCATED;
        r->need_bytes = DP2_CRC_LEN;
    }
}

guint dp2_bits_required(guint32 min, guint32 max)
{
    guint32 range = max - min;

    /* The position of the highest set bit: one instruction, not a loop per
     * bit (it runs for every field of every datagram). */
    return range ? 32 - (guint)__builtin_clz(range) : 0;
}

/* Marks the reader truncated: the fields need at least `need` bytes. */
static void dp2_truncate(dp2_reader_t *r, guint need)
{
    if (!(r->errors & DP2_ERR_TRUNCATED)) {
        r->errors |= DP2_ERR_TRUNCATED;
        r->need_bytes = need;
    }
}

gboolean dp2_skip_bits(dp2_reader_t *r, guint nbits)
{
    if (r->errors & DP2_ERR_TRUNCATED)
        return FALSE;
    if ((guint64)r->bit + nbits > r->limit) {
        dp2_truncate(r, (guint)(((guint64)r->bit + nbits + 7) / 8));
        return FALSE;
    }
    r->bit += nbits;
    return TRUE;
}

guint32 dp2_read_bits(dp2_reader_t *r, guint nbits)
{
    guint start = r->bit, sh = start & 7, nbytes;
    const guint8 *p;
    guint64 w = 0;

    if (nbits == 0 || !dp2_skip_bits(r, nbits))
        return 0;
    /* Least significant bit first, across at most five bytes (what
     * tvb_get_bits32(..., ENC_LITTLE_ENDIAN) returns, without its checks:
     * dp2_skip_bits has checked the bits are there). */
    p = r->data + start / 8;
    if (start / 8 + 8 <= r->limit / 8) {
        /* Eight bytes are there: one load instead of a byte loop (the
         * field takes at most five). */
        memcpy(&w, p, sizeof w);
        w = GUINT64_FROM_LE(w);
    } else {
        nbytes = (sh + nbits + 7) / 8;
        for (guint i = 0; i < nbytes; i++)
            w |= (guint64)p[i] << (8 * i);
    }
    return (guint32)((w >> sh) & ((G_GUINT64_CONSTANT(1) << nbits) - 1));
}

guint32 dp2_read_int(dp2_reader_t *r, guint32 min, guint32 max)
{
    guint32 v = dp2_read_bits(r, dp2_bits_required(min, max)) + min;

    if (!(r->errors & DP2_ERR_TRUNCATED) && v > max)
        r->errors |= DP2_ERR_RANGE;
    return v;
}

gboolean dp2_read_align(dp2_reader_t *r)
{
    guint n;
    guint32 v;

    if (r->errors & DP2_ERR_TRUNCATED)
        return FALSE;
    n = (8 - (r->bit & 7)) & 7;
    if (n == 0)
        return TRUE;
    /* The padding lies in a byte whose first bits were read, so it is there:
     * its high n bits, least significant first (what tvb_get_bits32(...,
     * ENC_LITTLE_ENDIAN) returns, without its checks). */
    v = (guint32)(r->data[r->bit / 8] >> (r->bit & 7)) & ((1u << n) - 1);
    if (r->n_pads < DP2_MAX_PADS) {
        r->pads[r->n_pads].bit = r->bit;
        r->pads[r->n_pads].nbits = (guint8)n;
        r->pads[r->n_pads].value = (guint8)v;
        r->n_pads++;
    }
    r->bit += n;
    if (v != 0) {
        r->errors |= DP2_ERR_PADDING;
        return FALSE;
    }
    return TRUE;
}

gint dp2_read_bytes(dp2_reader_t *r, guint n)
{
    guint off;

    dp2_read_align(r);
    if (r->errors & DP2_ERR_TRUNCATED)
        return -1;
    off = r->bit / 8;
    if ((guint64)off + n > r->limit / 8) {
        dp2_truncate(r, off + n);
        return -1;
    }
    r->bit += n * 8;
    return (gint)off;
}

void dp2_read_check(dp2_reader_t *r)
{
    guint off;

    dp2_read_align(r);
    if (r->errors & DP2_ERR_TRUNCATED)
        return;
    off = r->bit / 8;
    if (off + DP2_END_CHECK_LEN > r->limit / 8) {
        dp2_truncate(r, off + DP2_END_CHECK_LEN);
        return;
    }
    r->check_read = TRUE;
    r->check_offset = off;
    r->check_value = tvb_get_letohl(r->tvb, off);
    r->bit += DP2_END_CHECK_LEN * 8;
    if (r->check_value != DP2_END_CHECK)
        r->errors |= DP2_ERR_END_CHECK;
    else if (tvb_reported_length(r->tvb) > off + DP2_END_CHECK_LEN)
        r->errors |= DP2_ERR_TRAILING;
}

gboolean dp2_ends_with_check(tvbuff_t *tvb)
{
    guint len = tvb_captured_length(tvb);

    if (len < DP2_CRC_LEN + DP2_END_CHECK_LEN || len != tvb_reported_length(tvb))
        return FALSE;
    return tvb_get_letohl(tvb, len - DP2_END_CHECK_LEN) == DP2_END_CHECK;
}
