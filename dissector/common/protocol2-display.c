/* common/protocol2-display.c
 * protocol2's display helpers: bit fields, padding, the end check, the CRC
 * and the protocol id it implies, with their expert infos (interface:
 * protocol2.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"
#include "analysis-util.h"

#include <wsutil/str_util.h>

/* ---- Display ------------------------------------------------------------ */

proto_item *dp2_add_bits(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit,
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

void dp2_add_padding(proto_tree *tree, packet_info *pinfo, dp2_display_t *d,
                    const dp2_reader_t *r, guint *next_pad, gboolean experts)
{
    /* Without a tree: the expert infos of non-zero padding alone. */
    if (!tree && (!experts || !(r->errors & DP2_ERR_PADDING))) {
        *next_pad = MAX(*next_pad, r->n_pads);
        return;
    }
    for (; *next_pad < r->n_pads; (*next_pad)++) {
        const dp2_pad_t *p = &r->pads[*next_pad];
        proto_item *ti = dp2_add_bits(tree, d->hf_padding, r->tvb, p->bit, p->nbits, 0);

        if (p->value != 0 && experts)
            AU_EXPERT(pinfo, ti, &d->ei_padding,
                                   "Padding bits %u-%u are 0x%02x, not zero (a strict reader drops the packet)",
                                   p->bit, p->bit + p->nbits - 1, p->value);
    }
}

void dp2_add_end_check(proto_tree *tree, packet_info *pinfo, dp2_display_t *d,
                      const dp2_reader_t *r, gboolean experts)
{
    proto_item *ti, *st;
    gboolean good;

    if (!r->check_read)
        return;
    good = r->check_value == DP2_END_CHECK;
    /* Without a tree: the expert infos alone, when there are any. */
    if (!tree && (!experts || (good && !(r->errors & DP2_ERR_TRAILING))))
        return;
    ti = proto_tree_add_item(tree, d->hf_end_check, r->tvb, r->check_offset,
                             DP2_END_CHECK_LEN, ENC_LITTLE_ENDIAN);
    if (!good)
        proto_item_append_text(ti, " [incorrect, should be 0x%08x]", DP2_END_CHECK);
    st = proto_tree_add_uint(tree, d->hf_end_check_status, r->tvb, r->check_offset,
                             DP2_END_CHECK_LEN,
                             good ? PROTO_CHECKSUM_E_GOOD : PROTO_CHECKSUM_E_BAD);
    proto_item_set_generated(st);
    if (!good && experts)
        AU_EXPERT(pinfo, ti, &d->ei_end_check,
                               "End check at byte %u is 0x%08x, not 0x%08x",
                               r->check_offset, r->check_value, DP2_END_CHECK);
    if (good && (r->errors & DP2_ERR_TRAILING)) {
        guint off = r->check_offset + DP2_END_CHECK_LEN;
        gint n = tvb_captured_length_remaining(r->tvb, off);
        guint extra = tvb_reported_length(r->tvb) - off;

        ti = proto_tree_add_item(tree, d->hf_trailing, r->tvb, off, n > 0 ? n : 0, ENC_NA);
        if (experts)
            AU_EXPERT(pinfo, ti, &d->ei_trailing,
                                   "%u byte%s after the end check (the original program ignored them; a strict reader drops the packet)",
                                   extra, plurality(extra, "", "s"));
    }
}

void dp2_add_crc(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, dp2_display_t *d,
                const dp2_protocol_t *p, const dp2_id_t *id)
{
    proto_item *ti, *st, *idi;
    guint status;

    if (tvb_captured_length(tvb) < DP2_CRC_LEN)
        return;
    /* Without a tree there are only the expert infos of a CRC that is not
     * the configured id's (the items would not be made). */
    if (!tree && (id->status == DP2_ID_GOOD || !id->crc_known))
        return;
    ti = tree ? proto_tree_add_item(tree, d->hf_crc, tvb, 0, DP2_CRC_LEN, ENC_LITTLE_ENDIAN) : NULL;
    switch (id->status) {
    case DP2_ID_GOOD:
        status = PROTO_CHECKSUM_E_GOOD;
        proto_item_append_text(ti, " [correct]");
        break;
    case DP2_ID_OTHER:
        status = PROTO_CHECKSUM_E_GOOD;
        proto_item_append_text(ti, " [correct for protocol id 0x%08x]", id->implied_id);
        break;
    case DP2_ID_BAD:
        status = PROTO_CHECKSUM_E_BAD;
        proto_item_append_text(ti, " [incorrect for protocol id 0x%08x]", id->conv_id);
        break;
    case DP2_ID_WRONG:
        status = PROTO_CHECKSUM_E_BAD;
        proto_item_append_text(ti, " [incorrect for protocol id 0x%08x]", id->cfg_id);
        break;
    default:
        status = PROTO_CHECKSUM_E_UNVERIFIED;
        break;
    }
    st = proto_tree_add_uint(tree, d->hf_crc_status, tvb, 0, DP2_CRC_LEN, status);
    proto_item_set_generated(st);
    if (!id->crc_known)
        return;
    idi = proto_tree_add_uint(tree, d->hf_protocol_id, tvb, 0, DP2_CRC_LEN, id->implied_id);
    proto_item_set_generated(idi);
    switch (id->status) {
    case DP2_ID_OTHER:
        AU_EXPERT(pinfo, idi, &d->ei_id_other,
                               "Protocol id 0x%08x, not the configured 0x%08x: the id this conversation uses",
                               id->implied_id, id->cfg_id);
        break;
    case DP2_ID_BAD:
        AU_EXPERT(pinfo, ti, &d->ei_crc_bad,
                               "Bad CRC: implies protocol id 0x%08x, the conversation uses 0x%08x (corrupt packet)",
                               id->implied_id, id->conv_id);
        break;
    case DP2_ID_UNCONFIRMED:
        AU_EXPERT(pinfo, ti, &d->ei_id_unconfirmed,
                               "CRC implies protocol id 0x%08x, not the configured 0x%08x, and no earlier packet "
                               "of this conversation confirms it: a corrupt packet, or a game with its own id "
                               "(set %s.protocol_id)", id->implied_id, id->cfg_id, p->filter_name);
        break;
    case DP2_ID_WRONG: {
        const dp2_protocol_t *other = dp2_protocol_for(&(dp2_frame_t){ TRUE, 0, id->implied_id, FALSE });
        if (other)
            AU_EXPERT(pinfo, ti, &d->ei_crc_bad,
                                   "Bad CRC for protocol id 0x%08x: it implies 0x%08x, the id of %s packets",
                                   id->cfg_id, id->implied_id, other->filter_name);
        else
            AU_EXPERT(pinfo, ti, &d->ei_crc_bad,
                                   "Bad CRC: implies protocol id 0x%08x, not the configured 0x%08x "
                                   "(a corrupt packet, or a game with its own id: set %s.protocol_id)",
                                   id->implied_id, id->cfg_id, p->filter_name);
        break;
    }
    default:
        break;
    }
}

/* ---- Registration --------------------------------------------------------- */

void dp2_display_register(int proto, dp2_display_t *d, const dp2_display_names_t *names)
{
    const char *n = names->name;
    const hf_register_info hf[] = {
        { &d->hf_crc, { "CRC-32", g_strconcat(n, ".crc32", NULL), FT_UINT32, BASE_HEX, NULL, 0x0,
            "zlib CRC-32 of LE32(protocol id), 4 zero bytes and the rest of the datagram", HFILL } },
        { &d->hf_crc_status, { "CRC-32 status", g_strconcat(n, ".crc32.status", NULL), FT_UINT8, BASE_NONE,
            VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
        { &d->hf_protocol_id, { "Protocol id (implied by the CRC)", g_strconcat(n, ".protocol_id", NULL),
            FT_UINT32, BASE_HEX, NULL, 0x0,
            "The protocol id is never sent; this is the id that makes the CRC right", HFILL } },
        { &d->hf_padding, { "Padding", g_strconcat(n, ".padding", NULL), FT_UINT8, BASE_HEX, NULL, 0x0,
            "Zero bits up to the next byte boundary", HFILL } },
        { &d->hf_end_check, { "End check", g_strconcat(n, ".end_check", NULL), FT_UINT32, BASE_HEX, NULL, 0x0,
            names->end_check_blurb ? names->end_check_blurb : "0x9908ace2 (e2 ac 08 99)", HFILL } },
        { &d->hf_end_check_status, { "End check status", g_strconcat(n, ".end_check.status", NULL), FT_UINT8,
            BASE_NONE, VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
        { &d->hf_trailing, { "Bytes after the end check", g_strconcat(n, ".trailing", NULL), FT_BYTES,
            BASE_NONE, NULL, 0x0, NULL, HFILL } },
    };
    /* The two statuses of a learnt id come second, left out where no
     * conversation learns one. */
    const ei_register_info ei[] = {
        { &d->ei_crc_bad, { g_strconcat(n, ".crc32.bad", NULL), PI_CHECKSUM, PI_ERROR, names->crc_bad,
            EXPFILL } },
        { &d->ei_padding, { g_strconcat(n, ".padding.nonzero", NULL), PI_MALFORMED, PI_ERROR,
            "Non-zero padding bits", EXPFILL } },
        { &d->ei_end_check, { g_strconcat(n, ".end_check.bad", NULL), PI_MALFORMED, PI_ERROR,
            "Wrong end check", EXPFILL } },
        { &d->ei_trailing, { g_strconcat(n, ".trailing_bytes", NULL), PI_PROTOCOL, PI_WARN,
            "Bytes after the end check", EXPFILL } },
        { &d->ei_id_other, { g_strconcat(n, ".protocol_id.other", NULL), PI_PROTOCOL, PI_NOTE,
            "Protocol id other than the configured one, used by the whole conversation", EXPFILL } },
        { &d->ei_id_unconfirmed, { g_strconcat(n, ".protocol_id.unconfirmed", NULL), PI_CHECKSUM, PI_WARN,
            "CRC implies an unconfigured protocol id that no earlier packet confirms", EXPFILL } },
    };
    const expert_field unset = EI_INIT;

    G_STATIC_ASSERT(sizeof hf == sizeof d->hf && sizeof ei == sizeof d->ei);
    memcpy(d->hf, hf, sizeof hf);
    memcpy(d->ei, ei, sizeof ei);
    for (guint i = 0; i < array_length(hf); i++)
        *hf[i].p_id = -1;
    for (guint i = 0; i < array_length(ei); i++)
        *ei[i].ids = unset;
    proto_register_field_array(proto, d->hf, array_length(d->hf));
    expert_register_field_array(expert_register_protocol(proto), d->ei,
                                names->learns_ids ? array_length(d->ei) : array_length(d->ei) - 2);
}
