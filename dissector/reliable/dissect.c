/* dissect.c
 * Routines for the reliable protocol: packet acknowledgement (sequence, ack,
 * ack bits with their byte elisions) and fragmentation over datagrams, the
 * descendant of the 2008 reliability header. The wire format, the canonical
 * encoding rule and the receiver's checks are described in docs/reliable.md;
 * this is an independent implementation of them (no code shared with
 * endpoints/). The analysis is analysis.c, the statistics stats.c.
 *
 * Found: under netcode's decrypted payload (heuristic, on), by Decode As on
 * a UDP port, and by a UDP heuristic (off by default: the header has no
 * magic). The payload goes to the reliable.payload heuristic list and Decode
 * As table, else to data.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/expert.h>
#include <epan/conversation.h>
#include <epan/decode_as.h>
#include <epan/reassemble.h>
#include <epan/proto_data.h>

#include "reliable-int.h"
#include "common/analysis-util.h"
#include "common/single-pass.h"
#include "common/ws-compat.h"
#include "netcode/netcode.h"

#define RELIABLE_DEFAULT_FRAGMENT_SIZE 1024
#define RELIABLE_DEFAULT_MAX_FRAGMENTS 16
#define RELIABLE_DEFAULT_MAX_PACKET 16384

static int proto_reliable = -1;
static dissector_handle_t reliable_handle;
static dissector_table_t payload_table;
static heur_dissector_list_t payload_heur;

static int hf_reliable_prefix = -1;
static int hf_reliable_prefix_fragment = -1;
static int hf_reliable_prefix_byte0 = -1;
static int hf_reliable_prefix_byte1 = -1;
static int hf_reliable_prefix_byte2 = -1;
static int hf_reliable_prefix_byte3 = -1;
static int hf_reliable_prefix_short_ack = -1;
static int hf_reliable_prefix_reserved = -1;
static int hf_reliable_sequence = -1;
static int hf_reliable_ack = -1;
static int hf_reliable_ack_difference = -1;
static int hf_reliable_ack_bits = -1;
static int hf_reliable_ack_bits_byte = -1;
static int hf_reliable_acked = -1;
static int hf_reliable_header_len = -1;
static int hf_reliable_canonical = -1;
static int hf_reliable_fragment_id = -1;
static int hf_reliable_num_fragments = -1;
static int hf_reliable_fragment_bytes = -1;
static int hf_reliable_payload = -1;
static int hf_reliable_payload_len = -1;

static gint ett_reliable = -1;
static gint ett_reliable_prefix = -1;
static gint ett_reliable_ack_bits = -1;
static gint ett_reliable_header = -1;

static expert_field ei_reliable_short = EI_INIT;
static expert_field ei_reliable_reserved = EI_INIT;
static expert_field ei_reliable_not_canonical = EI_INIT;
static expert_field ei_reliable_fragment_not_canonical = EI_INIT;
static expert_field ei_reliable_fragment_prefix = EI_INIT;
static expert_field ei_reliable_fragment_id_range = EI_INIT;
static expert_field ei_reliable_too_many_fragments = EI_INIT;
static expert_field ei_reliable_sequence_mismatch = EI_INIT;
static expert_field ei_reliable_fragment_too_big = EI_INIT;
static expert_field ei_reliable_fragment_size = EI_INIT;
static expert_field ei_reliable_too_large = EI_INIT;

static cs_reassembly_fields_t reliable_reasm;

static guint pref_fragment_size = RELIABLE_DEFAULT_FRAGMENT_SIZE;
static guint pref_max_fragments = RELIABLE_DEFAULT_MAX_FRAGMENTS;
static guint pref_max_packet = RELIABLE_DEFAULT_MAX_PACKET;
static ws_cb_bool pref_reassemble = TRUE;

/* ---- The header ---------------------------------------------------------- */

/* Canonical length and bytes of (seq, ack, ack_bits): docs/reliable.md. */
static guint canonical_encode(guint16 seq, guint16 ack, guint32 bits, guint8 out[RELIABLE_MAX_HEADER_LEN])
{
    guint16 diff = (guint16)(seq - ack);
    guint8 prefix = diff <= 255 ? 0x20 : 0;
    guint n = 3;

    for (guint k = 0; k < 4; k++)
        if (((bits >> (8 * k)) & 0xFF) != 0xFF)
            prefix |= (guint8)(2u << k);
    out[0] = prefix;
    out[1] = (guint8)seq;
    out[2] = (guint8)(seq >> 8);
    if (diff <= 255) {
        out[n++] = (guint8)diff;
    } else {
        out[n++] = (guint8)ack;
        out[n++] = (guint8)(ack >> 8);
    }
    for (guint k = 0; k < 4; k++)
        if (((bits >> (8 * k)) & 0xFF) != 0xFF)
            out[n++] = (guint8)(bits >> (8 * k));
    return n;
}

/* reliable.h: also yojimbo's reader of a plain reliable header. */
gboolean reliable_read_header(tvbuff_t *tvb, guint offset, reliable_header_t *h)
{
    gint avail = tvb_captured_length_remaining(tvb, offset);
    const guint8 *p;
    guint need;

    memset(h, 0, sizeof *h);
    if (avail < 1)
        return FALSE;
    /* The header's bytes at once (it runs for every packet, two or three
     * times: byte by byte through the tvb cost more than the rest). */
    p = tvb_get_ptr(tvb, offset, MIN(avail, RELIABLE_MAX_HEADER_LEN));
    h->prefix = p[0];
    need = 3 + (h->prefix & 0x20 ? 1 : 2);
    for (guint k = 0; k < 4; k++)
        need += (h->prefix >> (k + 1)) & 1;
    h->len = need;
    if ((guint)avail < need)
        return FALSE;
    h->seq = (guint16)(p[1] | p[2] << 8);
    guint o = 3;
    if (h->prefix & 0x20) {
        h->ack = (guint16)(h->seq - p[o]);
        o += 1;
    } else {
        h->ack = (guint16)(p[o] | p[o + 1] << 8);
        o += 2;
    }
    h->ack_bits = 0xFFFFFFFFu;
    for (guint k = 0; k < 4; k++) {
        if (!((h->prefix >> (k + 1)) & 1))
            continue;
        h->ack_bits &= ~(0xFFu << (8 * k));
        h->ack_bits |= (guint32)p[o++] << (8 * k);
    }
    guint8 again[RELIABLE_MAX_HEADER_LEN];
    guint n = canonical_encode(h->seq, h->ack, h->ack_bits, again);
    h->canonical = n == need && memcmp(p, again, n) == 0;
    return TRUE;
}

/* Shows a header read by reliable_read_header at offset; the items of the acked
 * sequences (bit i: ack - i). */
static proto_item *show_header(proto_tree *tree, tvbuff_t *tvb, guint offset, const reliable_header_t *h)
{
    static int *const prefix_bits[] = {
        &hf_reliable_prefix_fragment, &hf_reliable_prefix_byte0, &hf_reliable_prefix_byte1,
        &hf_reliable_prefix_byte2, &hf_reliable_prefix_byte3, &hf_reliable_prefix_short_ack,
        &hf_reliable_prefix_reserved, NULL
    };
    proto_item *ti, *pi;
    proto_tree *bt;
    guint o = offset + 3;

    pi = proto_tree_add_bitmask(tree, tvb, offset, hf_reliable_prefix, ett_reliable_prefix, prefix_bits, ENC_NA);
    proto_tree_add_item(tree, hf_reliable_sequence, tvb, offset + 1, 2, ENC_LITTLE_ENDIAN);
    if (h->prefix & 0x20) {
        proto_tree_add_item(tree, hf_reliable_ack_difference, tvb, o, 1, ENC_NA);
        ti = proto_tree_add_uint(tree, hf_reliable_ack, tvb, o, 1, h->ack);
        proto_item_set_generated(ti);
        o += 1;
    } else {
        proto_tree_add_item(tree, hf_reliable_ack, tvb, o, 2, ENC_LITTLE_ENDIAN);
        o += 2;
    }
    ti = proto_tree_add_uint(tree, hf_reliable_ack_bits, tvb, o, h->len - (o - offset), h->ack_bits);
    if (h->len == o - offset)
        proto_item_append_text(ti, " (all four bytes 0xFF, left out)");
    bt = proto_item_add_subtree(ti, ett_reliable_ack_bits);
    for (guint k = 0; k < 4; k++) {
        if ((h->prefix >> (k + 1)) & 1) {
            proto_item *bi = proto_tree_add_item(bt, hf_reliable_ack_bits_byte, tvb, o++, 1, ENC_NA);
            proto_item_append_text(bi, " (byte %u: sequences %u..%u)", k, (guint16)(h->ack - 8 * k),
                                   (guint16)(h->ack - 8 * k - 7));
        } else {
            proto_item *bi = proto_tree_add_uint(bt, hf_reliable_ack_bits_byte, tvb, offset, 0, 0xFF);
            proto_item_append_text(bi, " (byte %u: left out, 0xFF)", k);
            proto_item_set_generated(bi);
        }
    }
    for (guint i = 0; i < 32; i++)
        if ((h->ack_bits >> i) & 1)
            proto_item_set_generated(proto_tree_add_uint(tree, hf_reliable_acked, tvb, offset, h->len,
                                                         (guint16)(h->ack - i)));
    proto_item_set_generated(proto_tree_add_uint(tree, hf_reliable_header_len, tvb, offset, h->len, h->len));
    proto_item_set_generated(proto_tree_add_boolean(tree, hf_reliable_canonical, tvb, offset, h->len, h->canonical));
    return pi;
}

/* ---- The payload ----------------------------------------------------------- */

/* The payload to the reliable.payload table or heuristic list, with what
 * reliable passes up (reliable.h; docs/architecture.md, "Stacked layers"):
 * info's header fields are the caller's, the analysis' are added here. */
static void dissect_payload(tvbuff_t *next, packet_info *pinfo, proto_tree *tree, reliable_payload_info_t *info,
                            const rl_frame_t *rec)
{
    if (rec && rec->conn) {
        info->ext_seq = rec->ext_seq;
        if (rec->n_links) {
            guint16 *seqs = wmem_alloc_array(pinfo->pool, guint16, rec->n_links);
            for (guint i = 0; i < rec->n_links; i++)
                seqs[i] = rec->links[i].seq;
            info->n_newly_acked = rec->n_links;
            info->newly_acked = seqs;
        }
    }
    cs_call_payload(payload_table, payload_heur, next, pinfo, tree, info);
}

/* ---- Validity (heuristics) -------------------------------------------------- */

/* Whether the library would take the datagram, with this dissector's
 * preferences for its receiver configuration. */
static gboolean looks_valid(tvbuff_t *tvb)
{
    guint len = tvb_captured_length(tvb);
    reliable_header_t h;

    if (len < 1 || tvb_reported_length(tvb) != len)
        return FALSE;
    if (len > pref_max_packet + RELIABLE_MAX_HEADER_LEN + RELIABLE_FRAGMENT_HEADER_LEN)
        return FALSE;
    guint8 prefix = rl_get_u8(tvb, 0);
    if (!(prefix & 1))
        return (prefix & 0xC0) == 0 && reliable_read_header(tvb, 0, &h) && h.canonical;
    if (prefix != 1 || len < RELIABLE_FRAGMENT_HEADER_LEN)
        return FALSE;
    guint id = rl_get_u8(tvb, 3), num = rl_get_u8(tvb, 4) + 1u;
    guint data = len - RELIABLE_FRAGMENT_HEADER_LEN;
    if (num > pref_max_fragments || id >= num)
        return FALSE;
    if (id == 0) {
        if (!reliable_read_header(tvb, RELIABLE_FRAGMENT_HEADER_LEN, &h) || !h.canonical ||
            h.seq != tvb_get_letohs(tvb, 1))
            return FALSE;
        data -= h.len;
    }
    return data <= pref_fragment_size && (id == num - 1 || data == pref_fragment_size);
}

/* ---- Dissection ----------------------------------------------------------- */

/* The Info texts, written without printf (they are written for every
 * packet): "Seq=<n> Ack=<n> AckBits=0x<8 hex> Len=<n>" of a regular packet. */
static void info_regular(packet_info *pinfo, const reliable_header_t *h, guint32 payload_len)
{
    char *buf, *p;

    if (!pinfo->cinfo)
        return;
    buf = p = (char *)wmem_alloc(pinfo->pool, 64);
    p = au_put_str(p, "Seq=");
    p = au_put_uint(p, h->seq);
    p = au_put_acks(p, h->ack, h->ack_bits);
    p = au_put_str(p, " Len=");
    p = au_put_uint(p, payload_len);
    *p = 0;
    col_set_str(pinfo->cinfo, COL_INFO, buf);
}

/* "Fragment <id>/<count> Seq=<n> Len=<n>", and fragment 0's
 * " Ack=<n> AckBits=0x<8 hex>". */
static void info_fragment(packet_info *pinfo, const reliable_pkt_t *pkt, guint32 data_len)
{
    char *buf, *p;

    if (!pinfo->cinfo)
        return;
    buf = p = (char *)wmem_alloc(pinfo->pool, 96);
    p = au_put_str(p, "Fragment ");
    p = au_put_uint(p, pkt->fragment_id);
    *p++ = '/';
    p = au_put_uint(p, pkt->num_fragments);
    p = au_put_str(p, " Seq=");
    p = au_put_uint(p, pkt->seq);
    p = au_put_str(p, " Len=");
    p = au_put_uint(p, data_len);
    if (pkt->has_header)
        p = au_put_acks(p, pkt->ack, pkt->ack_bits);
    *p = 0;
    col_set_str(pinfo->cinfo, COL_INFO, buf);
}

static int dissect_regular(tvbuff_t *tvb, packet_info *pinfo, proto_tree *rt, proto_item *ti, proto_tree *tree,
                           gboolean too_large, const netcode_payload_info_t *below)
{
    guint len = tvb_captured_length(tvb);
    reliable_pkt_t pkt;
    rl_frame_t *rec = NULL;
    gboolean transient = FALSE;
    reliable_header_t h;

    if (!reliable_read_header(tvb, 0, &h)) {
        proto_tree_add_item(rt, hf_reliable_prefix, tvb, 0, 1, ENC_NA);
        AU_EXPERT(pinfo, ti, &ei_reliable_short,
                  "Datagram of %u bytes, shorter than the %u-byte header its prefix announces: "
                  "the receiver drops it", len, h.len);
        col_add_fstr(pinfo->cinfo, COL_INFO, "Short packet (%u bytes, header needs %u)", len, h.len);
        return len;
    }
    if (rt)
        show_header(rt, tvb, 0, &h);
    if (h.prefix & 0xC0)
        expert_add_info(pinfo, ti, &ei_reliable_reserved);
    if (!h.canonical)
        AU_EXPERT(pinfo, ti, &ei_reliable_not_canonical,
                  "Header not canonically encoded (an ack-bits byte of 0xFF sent, a 16-bit ack where "
                  "the difference fits a byte, or bits 6-7 set): the library reads it here, but "
                  "rejects such a header inside a fragment");
    if (rt)
        proto_item_set_generated(proto_tree_add_uint(rt, hf_reliable_payload_len, tvb, h.len, 0, len - h.len));
    info_regular(pinfo, &h, len - h.len);
    proto_item_append_text(ti, ", Seq: %u, Ack: %u, Ack bits: 0x%08x", h.seq, h.ack, h.ack_bits);

    memset(&pkt, 0, sizeof pkt);
    pkt.seq = h.seq;
    pkt.has_header = TRUE;
    pkt.ack = h.ack;
    pkt.ack_bits = h.ack_bits;
    pkt.valid = len - h.len <= pref_max_packet;
    if (!pkt.valid && !too_large)
        AU_EXPERT(pinfo, ti, &ei_reliable_too_large,
                  "Payload of %u bytes, above the receiver's %u (reliable.max_packet_size): dropped",
                  len - h.len, pref_max_packet);
    pkt.valid = pkt.valid && !too_large;
    if (!pinfo->flags.in_error_pkt)
        rec = reliable_analysis_packet(pinfo, &pkt, len, &transient);
    reliable_analysis_show(tvb, pinfo, rt, ti, rec);
    if (len > h.len) {
        reliable_payload_info_t info;

        memset(&info, 0, sizeof info);
        info.netcode = below;
        info.kind = RELIABLE_PAYLOAD_PACKET;
        info.seq = h.seq;
        info.has_header = info.has_packet_acks = TRUE;
        info.ack = info.packet_ack = h.ack;
        info.ack_bits = info.packet_ack_bits = h.ack_bits;
        if (rt)
            proto_tree_add_item(rt, hf_reliable_payload, tvb, h.len, -1, ENC_NA);
        dissect_payload(tvb_new_subset_remaining(tvb, h.len), pinfo, tree, &info, rec);
    }
    return len;
}

/* Fragment 0's embedded packet header: FALSE when the receiver drops the
 * fragment for it; the acks into pkt, the data's offset moved past it. */
static gboolean fragment0_header(tvbuff_t *tvb, packet_info *pinfo, proto_tree *rt, reliable_pkt_t *pkt,
                                 guint *data_off)
{
    proto_item *pi;
    proto_tree *ht = proto_tree_add_subtree(rt, tvb, RELIABLE_FRAGMENT_HEADER_LEN, -1, ett_reliable_header, &pi,
                                            "Packet header (fragment 0)");
    gboolean valid = TRUE;
    reliable_header_t h;

    if (!reliable_read_header(tvb, RELIABLE_FRAGMENT_HEADER_LEN, &h) || (h.prefix & 1)) {
        AU_EXPERT(pinfo, pi, &ei_reliable_short,
                  "Fragment 0 has no readable packet header: the receiver drops it");
        return FALSE;
    }
    proto_item_set_len(pi, h.len);
    if (ht)
        show_header(ht, tvb, RELIABLE_FRAGMENT_HEADER_LEN, &h);
    pkt->has_header = TRUE;
    pkt->ack = h.ack;
    pkt->ack_bits = h.ack_bits;
    *data_off += h.len;
    if (h.seq != pkt->seq) {
        AU_EXPERT(pinfo, pi, &ei_reliable_sequence_mismatch,
                  "Packet header's sequence %u differs from the fragment's %u: the receiver "
                  "drops it", h.seq, pkt->seq);
        valid = FALSE;
    }
    if (!h.canonical) {
        expert_add_info(pinfo, pi, &ei_reliable_fragment_not_canonical);
        valid = FALSE;
    }
    return valid;
}

/* The fragment's data size against the receiver's rules (checked only for a
 * fragment still valid): whether it stays valid. */
static gboolean fragment_size_ok(tvbuff_t *tvb, packet_info *pinfo, proto_tree *rt, const reliable_pkt_t *pkt,
                                 guint data_off, guint data_len, gboolean valid)
{
    guint len = tvb_captured_length(tvb);
    proto_item *pi = proto_tree_add_uint(rt, hf_reliable_fragment_bytes, tvb, data_off < len ? data_off : len,
                                         data_len, data_len);

    if (valid && data_len > pref_fragment_size) {
        AU_EXPERT(pinfo, pi, &ei_reliable_fragment_too_big,
                  "%u bytes of fragment data, above the fragment size %u (reliable.fragment_size): "
                  "dropped", data_len, pref_fragment_size);
        return FALSE;
    }
    if (valid && pkt->fragment_id != pkt->num_fragments - 1 && data_len != pref_fragment_size) {
        AU_EXPERT(pinfo, pi, &ei_reliable_fragment_size,
                  "Fragment %u of %u carries %u bytes; every fragment but the last carries exactly "
                  "%u (reliable.fragment_size): dropped", pkt->fragment_id, pkt->num_fragments, data_len,
                  pref_fragment_size);
        return FALSE;
    }
    return valid;
}

/* The fragment's data into reliable's own reassembly (reasm.c), keyed by
 * the packet's extended sequence; the whole packet's payload dissected where
 * it completes. */
static void reassemble(tvbuff_t *tvb, packet_info *pinfo, proto_tree *rt, proto_tree *tree, const reliable_pkt_t *pkt,
                       const rl_frame_t *rec, guint data_off, guint data_len, gboolean transient,
                       const netcode_payload_info_t *below)
{
    gboolean save_fragmented = pinfo->fragmented;
    tvbuff_t *whole;

    pinfo->fragmented = TRUE;
    whole = rl_reasm_add(tvb, data_off, data_len, pinfo, rt, rec, pkt, transient, &reliable_reasm.items);
    pinfo->fragmented = save_fragmented;
    if (whole) {
        col_append_fstr(pinfo->cinfo, COL_INFO, " [Reassembled %u bytes]", tvb_reported_length(whole));
        if (tvb_reported_length(whole)) {
            reliable_payload_info_t info;

            memset(&info, 0, sizeof info);
            info.netcode = below;
            info.kind = RELIABLE_PAYLOAD_REASSEMBLED;
            info.seq = pkt->seq;
            info.fragment_id = pkt->fragment_id;
            info.num_fragments = pkt->num_fragments;
            info.has_header = pkt->has_header;
            info.ack = pkt->ack;
            info.ack_bits = pkt->ack_bits;
            /* The packet's header is fragment 0's: this one's, or kept by
             * the analysis from an earlier frame (first pass). */
            if (pkt->has_header) {
                info.has_packet_acks = TRUE;
                info.packet_ack = pkt->ack;
                info.packet_ack_bits = pkt->ack_bits;
            } else if (rec->packet_acks) {
                info.has_packet_acks = TRUE;
                info.packet_ack = rec->packet_ack;
                info.packet_ack_bits = rec->packet_ack_bits;
            }
            dissect_payload(whole, pinfo, tree, &info, rec);
        }
    }
}

static int dissect_fragment(tvbuff_t *tvb, packet_info *pinfo, proto_tree *rt, proto_item *ti, proto_tree *tree,
                            gboolean too_large, const netcode_payload_info_t *below)
{
    guint len = tvb_captured_length(tvb);
    reliable_pkt_t pkt;
    rl_frame_t *rec = NULL;
    guint data_off = RELIABLE_FRAGMENT_HEADER_LEN, data_len;
    gboolean valid = TRUE, transient = FALSE;
    proto_item *pi;

    if (len < RELIABLE_FRAGMENT_HEADER_LEN) {
        proto_tree_add_item(rt, hf_reliable_prefix, tvb, 0, 1, ENC_NA);
        AU_EXPERT(pinfo, ti, &ei_reliable_short,
                  "Fragment of %u bytes, shorter than the 5-byte fragment header: the receiver "
                  "drops it", len);
        col_add_fstr(pinfo->cinfo, COL_INFO, "Short fragment (%u bytes)", len);
        return len;
    }
    memset(&pkt, 0, sizeof pkt);
    pkt.is_fragment = TRUE;
    pkt.seq = tvb_get_letohs(tvb, 1);
    pkt.fragment_id = rl_get_u8(tvb, 3);
    pkt.num_fragments = (guint16)(rl_get_u8(tvb, 4) + 1);

    /* Without a tree no item (the five bytes are there: checked above). */
    pi = rt ? proto_tree_add_item(rt, hf_reliable_prefix, tvb, 0, 1, ENC_NA) : NULL;
    if (rl_get_u8(tvb, 0) != 1) {
        expert_add_info(pinfo, pi, &ei_reliable_fragment_prefix);
        valid = FALSE;
    }
    if (rt)
        proto_tree_add_item(rt, hf_reliable_sequence, tvb, 1, 2, ENC_LITTLE_ENDIAN);
    pi = rt ? proto_tree_add_item(rt, hf_reliable_fragment_id, tvb, 3, 1, ENC_NA) : NULL;
    if (pkt.fragment_id >= pkt.num_fragments) {
        AU_EXPERT(pinfo, pi, &ei_reliable_fragment_id_range,
                  "Fragment id %u is not below the count %u: the receiver drops it",
                  pkt.fragment_id, pkt.num_fragments);
        valid = FALSE;
    }
    pi = proto_tree_add_uint(rt, hf_reliable_num_fragments, tvb, 4, 1, pkt.num_fragments);
    proto_item_append_text(pi, " (stored as %u)", pkt.num_fragments - 1);
    if (pkt.num_fragments > pref_max_fragments) {
        AU_EXPERT(pinfo, pi, &ei_reliable_too_many_fragments,
                  "%u fragments, above the receiver's %u (reliable.max_fragments): dropped",
                  pkt.num_fragments, pref_max_fragments);
        valid = FALSE;
    }
    if (pkt.fragment_id == 0)
        valid = fragment0_header(tvb, pinfo, rt, &pkt, &data_off) && valid;
    data_len = len > data_off ? len - data_off : 0;
    valid = fragment_size_ok(tvb, pinfo, rt, &pkt, data_off, data_len, valid);
    pkt.valid = valid && !too_large;
    info_fragment(pinfo, &pkt, data_len);
    proto_item_append_text(ti, ", Fragment %u of %u, Seq: %u", pkt.fragment_id, pkt.num_fragments, pkt.seq);

    if (!pinfo->flags.in_error_pkt)
        rec = reliable_analysis_packet(pinfo, &pkt, len, &transient);
    reliable_analysis_show(tvb, pinfo, rt, ti, rec);

    if (pkt.valid && rec && pref_reassemble && data_len && !(rec->flags & (RLA_FRAG_COUNT | RLA_DUPLICATE)))
        reassemble(tvb, pinfo, rt, tree, &pkt, rec, data_off, data_len, transient, below);
    return len;
}

/* below: netcode's, when reliable is in its payload. */
static int dissect_reliable_on(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                               const netcode_payload_info_t *below)
{
    guint len = tvb_captured_length(tvb);
    proto_item *ti;
    proto_tree *rt;
    gboolean too_large;

    if (len < 1)
        return 0;
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "reliable");
    col_clear(pinfo->cinfo, COL_INFO);
    /* No item without a tree (it cannot throw: a byte is there). */
    ti = tree ? proto_tree_add_item(tree, proto_reliable, tvb, 0, -1, ENC_NA) : NULL;
    rt = proto_item_add_subtree(ti, ett_reliable);
    too_large = tvb_reported_length(tvb) > pref_max_packet + RELIABLE_MAX_HEADER_LEN + RELIABLE_FRAGMENT_HEADER_LEN;
    if (too_large)
        AU_EXPERT(pinfo, ti, &ei_reliable_too_large,
                  "Datagram of %u bytes, above what the receiver takes (%u + 14, "
                  "reliable.max_packet_size): dropped", tvb_reported_length(tvb), pref_max_packet);
    if (rl_get_u8(tvb, 0) & 1)
        return dissect_fragment(tvb, pinfo, rt, ti, tree, too_large, below);
    return dissect_regular(tvb, pinfo, rt, ti, tree, too_large, below);
}

/* On UDP (Decode As; and the handle registered by name): UDP's data is not
 * netcode's. */
static int dissect_reliable(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    return dissect_reliable_on(tvb, pinfo, tree, NULL);
}

/* Decode As in netcode's payload: data is netcode's (netcode.h). */
static int dissect_reliable_netcode(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    return dissect_reliable_on(tvb, pinfo, tree, (const netcode_payload_info_t *)data);
}

/* UDP heuristic (off by default): a datagram the library would take, and
 * then the conversation is this protocol's. */
static ws_cb_bool dissect_reliable_heur_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    if (!looks_valid(tvb))
        return FALSE;
    conversation_set_dissector(find_or_create_conversation(pinfo), reliable_handle);
    dissect_reliable(tvb, pinfo, tree, data);
    return TRUE;
}

/* Under netcode's decrypted payload. A payload can be any bytes, and one
 * datagram alone says little (a first byte 0x00 and any four more make a
 * well-formed header), so the decision takes the connection's history, per
 * direction of the netcode conversation, as a reliable endpoint sends it
 * (docs/reliable.md, "How chunkshark finds it"). Until a direction is
 * confirmed, its payload is claimed when:
 *   - the header is one the library takes (looks_valid);
 *   - the ack is not ahead of the newest sequence the peer sent;
 *   - its sequence moves the direction on: 1..RL_HEUR_AHEAD past the
 *     direction's newest (then the direction is confirmed);
 *   - or, for the direction's first payload, it is an endpoint's start
 *     (sequence under RL_HEUR_AHEAD, and ack 65535 with no ack bits, or an
 *     ack of a confirmed peer's recent packet: it heard the peer first);
 *     a first payload that is not is remembered, and the next one that
 *     follows it is claimed (a capture begun mid-connection).
 * Every well-formed payload of a direction not yet confirmed whose ack passes
 * becomes its newest sequence, claimed or not. The netcode examples' payloads (the same
 * bytes 0, 1, 2, ... in every packet: sequence 513, ack 1027) never move a
 * direction on, so they are never claimed.
 * A confirmed direction carries reliable packets: every later well-formed
 * payload of it is claimed, wherever its sequence and ack are, so that the
 * decode goes on after packets the capture missed (a kernel's drops, one
 * direction or both, across a wrap), a reconnect on the same ports, or
 * reordering; the analysis shows what the jump means. The first pass
 * decides; later passes read the decision. The directions' state is in the
 * analysis' record of the conversation (rl_conn_t): once a direction is
 * confirmed, its packets are analysed, and its newest sequence is the
 * analysis'. */
#define RL_HEUR_AHEAD 1024u
#define RL_HEUR_BEHIND 256u

enum { RL_HEUR_UNDECIDED, RL_HEUR_CLAIMED, RL_HEUR_REJECTED };

/* The first pass's decisions, two bits a frame by frame number (a proto data
 * entry would cost some 40 bytes a frame). */
static guint8 *heur_decisions;
static guint32 heur_decisions_len;   /* bytes */

static void heur_decisions_clear(void)
{
    g_free(heur_decisions);
    heur_decisions = NULL;
    heur_decisions_len = 0;
}

static guint heur_decision(guint32 frame)
{
    return frame / 4 < heur_decisions_len ? (heur_decisions[frame / 4] >> (2 * (frame % 4))) & 3u : RL_HEUR_UNDECIDED;
}

static void heur_decide(guint32 frame, guint decision)
{
    if (frame / 4 >= heur_decisions_len) {
        guint32 n = MAX(heur_decisions_len * 2, frame / 4 + 1024);
        heur_decisions = (guint8 *)g_realloc(heur_decisions, n);
        memset(heur_decisions + heur_decisions_len, 0, n - heur_decisions_len);
        heur_decisions_len = n;
    }
    heur_decisions[frame / 4] = (guint8)((heur_decisions[frame / 4] & ~(3u << (2 * (frame % 4)))) |
                                         (decision << (2 * (frame % 4))));
}

/* The newest sequence of the peer of a direction under the heuristic: the
 * analysis' once the peer is confirmed (its packets are analysed), the
 * heuristic's own until then. */
static guint16 heur_peer_newest(const rl_conn_t *c, const rl_heur_dir_t *peer, packet_info *pinfo)
{
    const rl_dir_t *pd = peer->confirmed ? reliable_conn_dir(c, &pinfo->dst, pinfo->destport) : NULL;

    return pd ? (guint16)pd->newest : peer->newest;
}

static gboolean heur_first_pass_decision(tvbuff_t *tvb, packet_info *pinfo)
{
    rl_conn_t *c;
    rl_heur_dir_t *me, *peer;
    reliable_header_t h;
    gboolean fragment, have_header, claim;
    guint16 seq;
    guint d;

    if (!looks_valid(tvb))
        return FALSE;

    /* The conversation's state is the analysis' (one record, one tracker of
     * sequences); the heuristic adds its view of the directions. */
    c = reliable_conn_of(pinfo);
    if (c->heur_src0.type == AT_NONE) {
        copy_address_wmem(wmem_file_scope(), &c->heur_src0, &pinfo->src);
        c->heur_port0 = pinfo->srcport;
    }
    d = (addresses_equal(&c->heur_src0, &pinfo->src) && c->heur_port0 == pinfo->srcport) ? 0 : 1;
    me = &c->heur[d];
    peer = &c->heur[1 - d];

    if (me->confirmed)
        return TRUE;                /* its sequences are the analysis' to follow */
    /* (the header reads: looks_valid read it) */
    fragment = (rl_get_u8(tvb, 0) & 1) != 0;
    seq = fragment ? tvb_get_letohs(tvb, 1) : 0;
    have_header = !fragment || rl_get_u8(tvb, 3) == 0;
    if (have_header) {
        if (!reliable_read_header(tvb, fragment ? RELIABLE_FRAGMENT_HEADER_LEN : 0, &h))
            return FALSE;
        seq = h.seq;
    }
    if (have_header && peer->seen) {
        guint16 ahead = (guint16)(h.ack - heur_peer_newest(c, peer, pinfo));
        if (ahead != 0 && ahead < 0x8000)
            return FALSE;           /* acknowledges what the peer never sent */
    }
    if (!me->seen) {
        /* An endpoint's start: it has received nothing (ack 65535, no ack
         * bits), or it answers a confirmed peer whose packets it acks (an
         * endpoint that heard the peer before its own first send). */
        claim = have_header && seq < RL_HEUR_AHEAD &&
                ((h.ack == 0xFFFF && h.ack_bits == 0) ||
                 (peer->confirmed && (guint16)(heur_peer_newest(c, peer, pinfo) - h.ack) < RL_HEUR_BEHIND));
        me->seen = TRUE;
        me->confirmed = claim;
        me->newest = seq;
        return claim;
    }
    {
        guint16 fwd = (guint16)(seq - me->newest);
        me->newest = seq;
        if (fwd != 0 && fwd <= RL_HEUR_AHEAD) {
            me->confirmed = TRUE;
            return TRUE;
        }
        return FALSE;
    }
}

static ws_cb_bool dissect_reliable_heur_netcode(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    guint decision = heur_decision(pinfo->num);

    if (decision == RL_HEUR_UNDECIDED) {
        if (PINFO_FD_VISITED(pinfo))
            return FALSE;           /* not seen by the first pass (e.g. Decode As changed since) */
        decision = heur_first_pass_decision(tvb, pinfo) ? RL_HEUR_CLAIMED : RL_HEUR_REJECTED;
        heur_decide(pinfo->num, decision);
    }
    if (decision != RL_HEUR_CLAIMED)
        return FALSE;
    dissect_reliable_on(tvb, pinfo, tree, (const netcode_payload_info_t *)data);
    return TRUE;
}

/* ---- Registration ----------------------------------------------------------- */

static void reliable_prefs_apply(void)
{
    if (pref_max_fragments < 1)
        pref_max_fragments = 1;
    if (pref_max_fragments > 256)
        pref_max_fragments = 256;
}

void proto_register_reliable(void)
{
    static hf_register_info hf[] = {
        { &hf_reliable_prefix, { "Prefix", "reliable.prefix", FT_UINT8, BASE_HEX, NULL, 0x0,
            "Bit 0: fragment; bits 1-4: ack-bits byte 0-3 sent; bit 5: ack as a one-byte difference", HFILL } },
        { &hf_reliable_prefix_fragment, { "Fragment", "reliable.prefix.fragment", FT_BOOLEAN, 8, NULL, 0x01,
            NULL, HFILL } },
        { &hf_reliable_prefix_byte0, { "Ack-bits byte 0 sent", "reliable.prefix.ack_bits_byte0", FT_BOOLEAN, 8,
            NULL, 0x02, NULL, HFILL } },
        { &hf_reliable_prefix_byte1, { "Ack-bits byte 1 sent", "reliable.prefix.ack_bits_byte1", FT_BOOLEAN, 8,
            NULL, 0x04, NULL, HFILL } },
        { &hf_reliable_prefix_byte2, { "Ack-bits byte 2 sent", "reliable.prefix.ack_bits_byte2", FT_BOOLEAN, 8,
            NULL, 0x08, NULL, HFILL } },
        { &hf_reliable_prefix_byte3, { "Ack-bits byte 3 sent", "reliable.prefix.ack_bits_byte3", FT_BOOLEAN, 8,
            NULL, 0x10, NULL, HFILL } },
        { &hf_reliable_prefix_short_ack, { "Ack as a one-byte difference", "reliable.prefix.short_ack",
            FT_BOOLEAN, 8, NULL, 0x20, NULL, HFILL } },
        { &hf_reliable_prefix_reserved, { "Reserved", "reliable.prefix.reserved", FT_UINT8, BASE_HEX, NULL, 0xC0,
            NULL, HFILL } },
        { &hf_reliable_sequence, { "Sequence", "reliable.sequence", FT_UINT16, BASE_DEC, NULL, 0x0,
            "The packet's sequence number (little-endian)", HFILL } },
        { &hf_reliable_ack, { "Ack", "reliable.ack", FT_UINT16, BASE_DEC, NULL, 0x0,
            "The most recent sequence received from the peer", HFILL } },
        { &hf_reliable_ack_difference, { "Ack difference", "reliable.ack_difference", FT_UINT8, BASE_DEC, NULL,
            0x0, "Sequence - ack, sent as one byte when it fits", HFILL } },
        { &hf_reliable_ack_bits, { "Ack bits", "reliable.ack_bits", FT_UINT32, BASE_HEX, NULL, 0x0,
            "Bit i set: sequence ack - i received (bit 0 is ack itself)", HFILL } },
        { &hf_reliable_ack_bits_byte, { "Ack-bits byte", "reliable.ack_bits_byte", FT_UINT8, BASE_HEX, NULL, 0x0,
            NULL, HFILL } },
        { &hf_reliable_acked, { "Acked sequence", "reliable.acked", FT_UINT16, BASE_DEC, NULL, 0x0,
            "A sequence this header acknowledges: ack - i for every set bit i", HFILL } },
        { &hf_reliable_header_len, { "Header length", "reliable.header_len", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_reliable_canonical, { "Canonical encoding", "reliable.canonical", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Whether re-encoding the header gives the same bytes", HFILL } },
        { &hf_reliable_fragment_id, { "Fragment id", "reliable.fragment_id", FT_UINT8, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_reliable_num_fragments, { "Fragments", "reliable.num_fragments", FT_UINT16, BASE_DEC, NULL, 0x0,
            "The packet's fragment count (the byte stores it minus one)", HFILL } },
        { &hf_reliable_fragment_bytes, { "Fragment data bytes", "reliable.fragment_bytes", FT_UINT32, BASE_DEC,
            NULL, 0x0, NULL, HFILL } },
        { &hf_reliable_payload, { "Payload", "reliable.payload", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_reliable_payload_len, { "Payload length", "reliable.payload_len", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
    };
    static gint *ett[] = { &ett_reliable, &ett_reliable_prefix, &ett_reliable_ack_bits, &ett_reliable_header };
    static ei_register_info ei[] = {
        { &ei_reliable_short, { "reliable.short", PI_MALFORMED, PI_ERROR,
            "Datagram shorter than its header", EXPFILL } },
        { &ei_reliable_reserved, { "reliable.prefix.reserved_set", PI_PROTOCOL, PI_WARN,
            "Prefix bits 6-7 set: they are always zero", EXPFILL } },
        { &ei_reliable_not_canonical, { "reliable.not_canonical", PI_PROTOCOL, PI_WARN,
            "Header not canonically encoded", EXPFILL } },
        { &ei_reliable_fragment_not_canonical, { "reliable.fragment.not_canonical", PI_MALFORMED, PI_ERROR,
            "Fragment 0's packet header is not canonically encoded: the receiver drops the fragment", EXPFILL } },
        { &ei_reliable_fragment_prefix, { "reliable.fragment.bad_prefix", PI_MALFORMED, PI_ERROR,
            "Fragment prefix is not exactly 1: the receiver drops it", EXPFILL } },
        { &ei_reliable_fragment_id_range, { "reliable.fragment.id_range", PI_MALFORMED, PI_ERROR,
            "Fragment id not below the fragment count", EXPFILL } },
        { &ei_reliable_too_many_fragments, { "reliable.fragment.too_many", PI_PROTOCOL, PI_ERROR,
            "More fragments than the receiver takes", EXPFILL } },
        { &ei_reliable_sequence_mismatch, { "reliable.fragment.sequence_mismatch", PI_MALFORMED, PI_ERROR,
            "Fragment 0's packet header has another sequence", EXPFILL } },
        { &ei_reliable_fragment_too_big, { "reliable.fragment.too_big", PI_PROTOCOL, PI_ERROR,
            "Fragment data above the fragment size", EXPFILL } },
        { &ei_reliable_fragment_size, { "reliable.fragment.size", PI_PROTOCOL, PI_ERROR,
            "A fragment other than the last is not exactly the fragment size", EXPFILL } },
        { &ei_reliable_too_large, { "reliable.too_large", PI_PROTOCOL, PI_ERROR,
            "Packet above the receiver's maximum size", EXPFILL } },
    };
    static const cs_reassembly_names_t reasm_names = {
        .prefix = "reliable", .fragments = "Fragments", .fragment = "Fragment", .tag = "Fragments",
        .overlap_conflicts = "Fragment overlapping with conflicting data",
    };
    module_t *module;

    proto_reliable = proto_register_protocol("Reliable (packet acknowledgement and fragmentation)", "Reliable",
                                             "reliable");
    CS_REGISTER_ARRAYS_REASSEMBLY(proto_reliable, hf, &reliable_reasm, &reasm_names, ett, ei);

    module = prefs_register_protocol(proto_reliable, reliable_prefs_apply);
    prefs_register_uint_preference(module, "fragment_size", "Fragment size",
        "Data bytes of every fragment but the last (the receiver's fragment_size; default 1024)", 10,
        &pref_fragment_size);
    prefs_register_uint_preference(module, "max_fragments", "Max fragments",
        "Fragments a packet may have (the receiver's max_fragments, 1-256; default 16)", 10, &pref_max_fragments);
    prefs_register_uint_preference(module, "max_packet_size", "Max packet size",
        "Payload bytes a packet may have (the receiver's max_packet_size; default 16384)", 10, &pref_max_packet);
    prefs_register_bool_preference(module, "reassemble", "Reassemble fragmented packets",
        "Reassemble the fragments of a packet and dissect its payload", &pref_reassemble);

    reliable_handle = register_dissector("reliable", dissect_reliable, proto_reliable);
    rl_reasm_register();
    payload_heur = CS_REGISTER_HEUR_LIST("reliable.payload", "Reliable payload", proto_reliable);
    payload_table = register_decode_as_next_proto(proto_reliable, "reliable.payload", "Reliable payload", NULL);

    reliable_analysis_register(proto_reliable, module);
    reliable_stats_register();
    register_init_routine(heur_decisions_clear);
    register_cleanup_routine(heur_decisions_clear);
}

void proto_reg_handoff_reliable(void)
{
    reliable_analysis_handoff();
    dissector_add_for_decode_as_with_preference("udp.port", reliable_handle);
    heur_dissector_add("udp", dissect_reliable_heur_udp, "Reliable over UDP", "reliable_udp", proto_reliable,
                       HEURISTIC_DISABLE);
    /* netcode, when that dissector is in the plugin: its decrypted payload. */
    if (find_heur_dissector_list("netcode.payload"))
        heur_dissector_add("netcode.payload", dissect_reliable_heur_netcode, "Reliable over netcode",
                           "reliable_netcode", proto_reliable, HEURISTIC_ENABLE);
    if (find_dissector_table("netcode.payload"))
        dissector_add_for_decode_as("netcode.payload",
                                    create_dissector_handle(dissect_reliable_netcode, proto_reliable));
}
