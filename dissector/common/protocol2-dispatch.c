/* common/protocol2-dispatch.c
 * protocol2's registry of protocols and its one UDP entry point: the
 * protocol id each datagram's CRC implies, computed once, and the datagram
 * handed to the protocol configured with it (interface: protocol2.h;
 * docs/architecture.md, "How a datagram travels").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"
#include "protocol2-int.h"

static dp2_protocol_t *dp2_protocols[DP2_MAX_PROTOCOLS];
static guint dp2_n_protocols;
static dissector_table_t dp2_id_table;   /* "protocol2.id": implied id -> a protocol's dissect */

/* Files every registered protocol's configured id, in registration order
 * (the first one configured with an id keeps it, as dp2_protocol_for()). */
static void dp2_ids_file(void)
{
    for (guint i = 0; i < dp2_n_protocols; i++)
        dissector_delete_all("protocol2.id", dp2_protocols[i]->id_handle);
    for (guint i = 0; i < dp2_n_protocols; i++)
        if (!dissector_get_uint_handle(dp2_id_table, *dp2_protocols[i]->cfg_id))
            dissector_add_uint("protocol2.id", *dp2_protocols[i]->cfg_id, dp2_protocols[i]->id_handle);
}

void dp2_register_protocol(dp2_protocol_t *p)
{
    DISSECTOR_ASSERT(dp2_n_protocols < DP2_MAX_PROTOCOLS);
    if (!dp2_n_protocols) {
        dp2_crc_init();
        dp2_conv_register();
        dp2_id_table = register_dissector_table("protocol2.id", "protocol2 protocol id (implied by the CRC)",
                                               p->proto, FT_UINT32, BASE_HEX);
    }
    p->index = dp2_n_protocols;
    p->id_handle = create_dissector_handle(p->dissect, p->proto);
    dp2_protocols[dp2_n_protocols++] = p;
}

void dp2_prefs_apply(dp2_protocol_t *p)
{
    dp2_ports_apply(p);
    dp2_ids_file();
}

/* The last datagram's result: a datagram is looked at by the entry point
 * and, when no port claims it, by each protocol's heuristic in turn. */
static struct {
    gboolean valid;
    guint32 num;
    const guint8 *data;
    guint len;
    dp2_frame_t f;
} dp2_frame_cache;

static guint32 dp2_last_known_id = DP2_DEFAULT_PROTOCOL_ID;

void dp2_frame_get(tvbuff_t *tvb, packet_info *pinfo, dp2_frame_t *f)
{
    guint len = tvb_captured_length(tvb);
    const guint8 *data;
    guint32 ref_id, computed;

    memset(f, 0, sizeof *f);
    f->crc_known = len >= DP2_CRC_LEN && len == tvb_reported_length(tvb);
    if (!f->crc_known)
        return;
    data = tvb_get_ptr(tvb, 0, len);
    f->stored_crc = tvb_get_letohl(tvb, 0);
    if (dp2_frame_cache.valid && dp2_frame_cache.num == pinfo->num && dp2_frame_cache.data == data &&
        dp2_frame_cache.len == len && dp2_frame_cache.f.stored_crc == f->stored_crc) {
        *f = dp2_frame_cache.f;
        return;
    }
    /* Any id will do as the starting point. The id the last recognised
     * datagram implied makes a run of one protocol's packets (the common
     * case) cost one CRC each, with no id to work back. */
    ref_id = dp2_last_known_id;
    computed = dp2_crc_datagram(tvb, dp2_crc_prefix(ref_id));
    f->implied_id = dp2_implied_protocol_id(f->stored_crc, computed, ref_id, len);
    if (f->implied_id != ref_id && dp2_protocol_for(f))
        dp2_last_known_id = f->implied_id;
    dp2_frame_cache.valid = TRUE;
    dp2_frame_cache.num = pinfo->num;
    dp2_frame_cache.data = data;
    dp2_frame_cache.len = len;
    dp2_frame_cache.f = *f;
}

dp2_protocol_t *dp2_protocol_for(const dp2_frame_t *f)
{
    if (!f->crc_known)
        return NULL;
    for (guint i = 0; i < dp2_n_protocols; i++)
        if (*dp2_protocols[i]->cfg_id == f->implied_id)
            return dp2_protocols[i];
    return NULL;
}

/* TRUE when UDP called owner's handle for a port the user gave it with
 * Decode As: the port UDP matched is not in owner's port preference. (The
 * udp.port table cannot tell: Wireshark 4.0 applies -o <proto>.udp.port with
 * dissector_change_uint, as Decode As does, so both leave the port's initial
 * handle alone.) A conversation pinned by a heuristic is not Decode As. */
static gboolean dp2_is_decode_as(packet_info *pinfo, const dp2_protocol_t *owner)
{
    static dissector_table_t udp;
    guint32 port = pinfo->match_uint;

    if (pinfo->ptype != PT_UDP || (port != pinfo->srcport && port != pinfo->destport))
        return FALSE;
    if (!udp)
        udp = find_dissector_table("udp.port");
    if (!udp || dissector_get_uint_handle(udp, port) != owner->handle)
        return FALSE;
    /* ports_applied: the preference as last applied (dp2_ports_apply), not
     * looked up by name for every datagram. */
    return !owner->ports_applied || !value_is_in_range(owner->ports_applied, port);
}

/* Wireshark put `proto` in the frame's layers when it called its handle; a
 * datagram handed on to another protocol is not `proto`'s, so take it out
 * (frame.protocols then reads "udp:p2frag", as for a datagram found by the
 * heuristic, and reassembly keys that include the layer number agree). */
static void dp2_leave_layer(packet_info *pinfo, int proto)
{
    wmem_list_frame_t *tail = wmem_list_tail(pinfo->layers);

    if (tail && GPOINTER_TO_INT(wmem_list_frame_data(tail)) == proto) {
        wmem_list_remove_frame(pinfo->layers, tail);
        pinfo->curr_layer_num--;
    }
}

int dp2_dissect_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_,
                   dp2_protocol_t *owner)
{
    dp2_frame_t f;

    dp2_frame_get(tvb, pinfo, &f);
    /* The datagram's id is another protocol's: that protocol's dissect,
     * from the protocol2.id table, with the frame (its id computed once).
     * call_dissector_with_data, not dissector_try_uint: a disabled target
     * shows the datagram as data, as Wireshark does for a disabled
     * protocol's port, instead of handing it back to UDP. */
    if (f.crc_known && !dp2_is_decode_as(pinfo, owner)) {
        dissector_handle_t target = dissector_get_uint_handle(dp2_id_table, f.implied_id);
        if (target && target != owner->id_handle) {
            dp2_leave_layer(pinfo, owner->proto);
            return call_dissector_with_data(target, tvb, pinfo, tree, &f);
        }
    }
    return owner->dissect(tvb, pinfo, tree, &f);
}

gboolean dp2_heur_frame(tvbuff_t *tvb, packet_info *pinfo, const dp2_protocol_t *p, dp2_frame_t *f)
{
    const dp2_protocol_t *target;

    dp2_frame_get(tvb, pinfo, f);
    target = dp2_protocol_for(f);
    return !target || target == p;
}
