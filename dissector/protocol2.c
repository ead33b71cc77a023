/* protocol2.c
 * protocol2 framing: CRC-32 / protocol id, LSB-first bit reader, padding and
 * end check. See protocol2.h and ../shared/spec/wire-format.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"

#include <wsutil/str_util.h>
#include <zlib.h>

void p2_reader_init(p2_reader_t *r, tvbuff_t *tvb)
{
    memset(r, 0, sizeof *r);
    r->tvb = tvb;
    r->bit = P2_BODY_BIT;
    r->limit = tvb_captured_length(tvb) * 8;
    if (r->limit < P2_BODY_BIT) {
        r->errors |= P2_ERR_TRUNCATED;
        r->need_bytes = P2_CRC_LEN;
    }
}

guint p2_bits_required(guint32 min, guint32 max)
{
    guint32 range = max - min;
    guint n = 0;

    while (range) {
        n++;
        range >>= 1;
    }
    return n;
}

/* Marks the reader truncated: the fields need at least `need` bytes. */
static void p2_truncate(p2_reader_t *r, guint need)
{
    if (!(r->errors & P2_ERR_TRUNCATED)) {
        r->errors |= P2_ERR_TRUNCATED;
        r->need_bytes = need;
    }
}

gboolean p2_skip_bits(p2_reader_t *r, guint nbits)
{
    if (r->errors & P2_ERR_TRUNCATED)
        return FALSE;
    if ((guint64)r->bit + nbits > r->limit) {
        p2_truncate(r, (guint)(((guint64)r->bit + nbits + 7) / 8));
        return FALSE;
    }
    r->bit += nbits;
    return TRUE;
}

guint32 p2_read_bits(p2_reader_t *r, guint nbits)
{
    guint start = r->bit;

    if (nbits == 0 || !p2_skip_bits(r, nbits))
        return 0;
    /* tvb_get_bits32 with ENC_LITTLE_ENDIAN numbers bits from each byte's
     * least significant bit, as the stream does (tvb_get_bits8 would not). */
    return tvb_get_bits32(r->tvb, start, nbits, ENC_LITTLE_ENDIAN);
}

guint32 p2_read_int(p2_reader_t *r, guint32 min, guint32 max)
{
    guint32 v = p2_read_bits(r, p2_bits_required(min, max)) + min;

    if (!(r->errors & P2_ERR_TRUNCATED) && v > max)
        r->errors |= P2_ERR_RANGE;
    return v;
}

gboolean p2_read_align(p2_reader_t *r)
{
    guint n;
    guint32 v;

    if (r->errors & P2_ERR_TRUNCATED)
        return FALSE;
    n = (8 - (r->bit & 7)) & 7;
    if (n == 0)
        return TRUE;
    /* The padding lies in a byte whose first bits were read, so it is there. */
    v = tvb_get_bits32(r->tvb, r->bit, n, ENC_LITTLE_ENDIAN);
    if (r->n_pads < P2_MAX_PADS) {
        r->pads[r->n_pads].bit = r->bit;
        r->pads[r->n_pads].nbits = (guint8)n;
        r->pads[r->n_pads].value = (guint8)v;
        r->n_pads++;
    }
    r->bit += n;
    if (v != 0) {
        r->errors |= P2_ERR_PADDING;
        return FALSE;
    }
    return TRUE;
}

gint p2_read_bytes(p2_reader_t *r, guint n)
{
    guint off;

    p2_read_align(r);
    if (r->errors & P2_ERR_TRUNCATED)
        return -1;
    off = r->bit / 8;
    if ((guint64)off + n > r->limit / 8) {
        p2_truncate(r, off + n);
        return -1;
    }
    r->bit += n * 8;
    return (gint)off;
}

void p2_read_check(p2_reader_t *r)
{
    guint off;

    p2_read_align(r);
    if (r->errors & P2_ERR_TRUNCATED)
        return;
    off = r->bit / 8;
    if (off + P2_END_CHECK_LEN > r->limit / 8) {
        p2_truncate(r, off + P2_END_CHECK_LEN);
        return;
    }
    r->check_read = TRUE;
    r->check_offset = off;
    r->check_value = tvb_get_letohl(r->tvb, off);
    r->bit += P2_END_CHECK_LEN * 8;
    if (r->check_value != P2_END_CHECK)
        r->errors |= P2_ERR_END_CHECK;
    else if (tvb_reported_length(r->tvb) > off + P2_END_CHECK_LEN)
        r->errors |= P2_ERR_TRAILING;
}

gboolean p2_ends_with_check(tvbuff_t *tvb)
{
    guint len = tvb_captured_length(tvb);

    if (len < P2_CRC_LEN + P2_END_CHECK_LEN || len != tvb_reported_length(tvb))
        return FALSE;
    return tvb_get_letohl(tvb, len - P2_END_CHECK_LEN) == P2_END_CHECK;
}

/* ---- CRC-32 and the protocol id --------------------------------------- */

/* The reflected CRC-32 table (polynomial 0xEDB88320) and, because the top
 * bytes of its 256 entries are all different, the entry index for each top
 * byte: together they run the CRC register backwards one zero byte. */
static guint32 p2_crc_table[256];
static guint8 p2_crc_index_of_top[256];

void p2_crc_init(void)
{
    for (guint i = 0; i < 256; i++) {
        guint32 c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        p2_crc_table[i] = c;
        p2_crc_index_of_top[c >> 24] = (guint8)i;
    }
}

guint32 p2_crc_prefix(guint32 protocol_id)
{
    guint8 prefix[8] = {
        (guint8)protocol_id, (guint8)(protocol_id >> 8),
        (guint8)(protocol_id >> 16), (guint8)(protocol_id >> 24),
        0, 0, 0, 0
    };

    return (guint32)crc32(0, prefix, sizeof prefix);
}

guint32 p2_crc_datagram(tvbuff_t *tvb, guint32 prefix_crc)
{
    guint len = tvb_captured_length(tvb);

    if (len < P2_CRC_LEN)
        return 0;
    /* zlib's CRC-32 is the spec's (check value 0xcbf43926) and much faster
     * than a byte table: it runs over every datagram. */
    if (len == P2_CRC_LEN)
        return prefix_crc;
    return (guint32)crc32(prefix_crc, tvb_get_ptr(tvb, P2_CRC_LEN, len - P2_CRC_LEN),
                          len - P2_CRC_LEN);
}

guint32 p2_implied_protocol_id(guint32 stored, guint32 computed, guint32 id,
                               guint datagram_length)
{
    /* For messages of equal length the CRC difference depends only on the
     * difference of the messages: CRC(a) ^ CRC(b) = Z^n(a ^ b as a register),
     * where Z feeds one zero byte through the raw register and n is the
     * message length (datagram_length + 4: the id replaces nothing, it is
     * prepended and the CRC field counts as zero). The ids differ in the
     * first four bytes only, so undo n zero bytes and the register holds
     * LE32(implied ^ id). */
    guint32 d = stored ^ computed;
    guint n = datagram_length + 4;

    if (d == 0)
        return id;
    for (guint i = 0; i < n; i++) {
        guint8 j = p2_crc_index_of_top[d >> 24];
        d = ((d ^ p2_crc_table[j]) << 8) | j;
    }
    return id ^ d;
}

/* ---- Display ------------------------------------------------------------ */

proto_item *p2_add_bits(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit,
                        guint nbits, guint32 value_if_empty)
{
    proto_item *ti;

    if (!tree)
        return NULL;
    if (nbits == 0) {
        ti = proto_tree_add_uint(tree, hf, tvb, bit / 8, 0, value_if_empty);
        proto_item_append_text(ti, " (0 bits: not sent)");
        proto_item_set_generated(ti);
        return ti;
    }
    ti = proto_tree_add_bits_item(tree, hf, tvb, bit, nbits, ENC_LITTLE_ENDIAN);
    if (nbits < 64)
        proto_item_set_bits_offset_len(ti, bit & 7, nbits);
    return ti;
}

void p2_add_padding(proto_tree *tree, packet_info *pinfo, const p2_display_t *d,
                    const p2_reader_t *r, guint *next_pad, gboolean experts)
{
    for (; *next_pad < r->n_pads; (*next_pad)++) {
        const p2_pad_t *p = &r->pads[*next_pad];
        proto_item *ti = p2_add_bits(tree, d->hf_padding, r->tvb, p->bit, p->nbits, 0);

        if (p->value != 0 && experts)
            expert_add_info_format(pinfo, ti, d->ei_padding,
                                   "Padding bits %u-%u are 0x%02x, not zero (a strict reader drops the packet)",
                                   p->bit, p->bit + p->nbits - 1, p->value);
    }
}

void p2_add_end_check(proto_tree *tree, packet_info *pinfo, const p2_display_t *d,
                      const p2_reader_t *r, gboolean experts)
{
    proto_item *ti, *st;
    gboolean good;

    if (!r->check_read)
        return;
    good = r->check_value == P2_END_CHECK;
    ti = proto_tree_add_item(tree, d->hf_end_check, r->tvb, r->check_offset,
                             P2_END_CHECK_LEN, ENC_LITTLE_ENDIAN);
    if (!good)
        proto_item_append_text(ti, " [incorrect, should be 0x%08x]", P2_END_CHECK);
    st = proto_tree_add_uint(tree, d->hf_end_check_status, r->tvb, r->check_offset,
                             P2_END_CHECK_LEN,
                             good ? PROTO_CHECKSUM_E_GOOD : PROTO_CHECKSUM_E_BAD);
    proto_item_set_generated(st);
    if (!good && experts)
        expert_add_info_format(pinfo, ti, d->ei_end_check,
                               "End check at byte %u is 0x%08x, not 0x%08x",
                               r->check_offset, r->check_value, P2_END_CHECK);
    if (good && (r->errors & P2_ERR_TRAILING)) {
        guint off = r->check_offset + P2_END_CHECK_LEN;
        gint n = tvb_captured_length_remaining(r->tvb, off);
        guint extra = tvb_reported_length(r->tvb) - off;

        ti = proto_tree_add_item(tree, d->hf_trailing, r->tvb, off, n > 0 ? n : 0, ENC_NA);
        if (experts)
            expert_add_info_format(pinfo, ti, d->ei_trailing,
                                   "%u byte%s after the end check (the original program ignored them; a strict reader drops the packet)",
                                   extra, plurality(extra, "", "s"));
    }
}
