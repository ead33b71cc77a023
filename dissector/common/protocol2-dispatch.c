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

static p2_protocol_t *p2_protocols[P2_MAX_PROTOCOLS];
static guint p2_n_protocols;
static dissector_table_t p2_id_table;   /* "protocol2.id": implied id -> a protocol's dissect */

/* Files every registered protocol's configured id, in registration order
 * (the first one configured with an id keeps it, as p2_protocol_for()). */
static void p2_ids_file(void)
{
    for (guint i = 0; i < p2_n_protocols; i++)
        dissector_delete_all("protocol2.id", p2_protocols[i]->id_handle);
    for (guint i = 0; i < p2_n_protocols; i++)
        if (!dissector_get_uint_handle(p2_id_table, *p2_protocols[i]->cfg_id))
            dissector_add_uint("protocol2.id", *p2_protocols[i]->cfg_id, p2_protocols[i]->id_handle);
}

void p2_register_protocol(p2_protocol_t *p)
{
    DISSECTOR_ASSERT(p2_n_protocols < P2_MAX_PROTOCOLS);
    if (!p2_n_protocols) {
        p2_crc_init();
        p2_conv_register();
        p2_id_table = register_dissector_table("protocol2.id", "protocol2 protocol id (implied by the CRC)",
                                               p->proto, FT_UINT32, BASE_HEX);
    }
    p->index = p2_n_protocols;
    p->id_handle = create_dissector_handle(p->dissect, p->proto);
    p2_protocols[p2_n_protocols++] = p;
}

void p2_prefs_apply(p2_protocol_t *p)
{
    p2_ports_apply(p);
    p2_ids_file();
}

/* The last datagram's result: a datagram is looked at by the entry point
 * and, when no port claims it, by each protocol's heuristic in turn. */
static struct {
    gboolean valid;
    guint32 num;
    const guint8 *data;
    guint len;
    p2_frame_t f;
} p2_frame_cache;

static guint32 p2_last_known_id = P2_DEFAULT_PROTOCOL_ID;

void p2_frame_get(tvbuff_t *tvb, packet_info *pinfo, p2_frame_t *f)
{
    guint len = tvb_captured_length(tvb);
    const guint8 *data;
    guint32 ref_id, computed;

    memset(f, 0, sizeof *f);
    f->crc_known = len >= P2_CRC_LEN && len == tvb_reported_length(tvb);
    if (!f->crc_known)
        return;
    data = tvb_get_ptr(tvb, 0, len);
    f->stored_crc = tvb_get_letohl(tvb, 0);
    if (p2_frame_cache.valid && p2_frame_cache.num == pinfo->num && p2_frame_cache.data == data &&
        p2_frame_cache.len == len && p2_frame_cache.f.stored_crc == f->stored_crc) {
        *f = p2_frame_cache.f;
        return;
    }
    /* Any id will do as the starting point. The id the last recognised
     * datagram implied makes a run of one protocol's packets (the common
     * case) cost one CRC each, with no id to work back. */
    ref_id = p2_last_known_id;
    computed = p2_crc_datagram(tvb, p2_crc_prefix(ref_id));
    f->implied_id = p2_implied_protocol_id(f->stored_crc, computed, ref_id, len);
    if (f->implied_id != ref_id && p2_protocol_for(f))
        p2_last_known_id = f->implied_id;
    p2_frame_cache.valid = TRUE;
    p2_frame_cache.num = pinfo->num;
    p2_frame_cache.data = data;
    p2_frame_cache.len = len;
    p2_frame_cache.f = *f;
}

p2_protocol_t *p2_protocol_for(const p2_frame_t *f)
{
    if (!f->crc_known)
        return NULL;
    for (guint i = 0; i < p2_n_protocols; i++)
        if (*p2_protocols[i]->cfg_id == f->implied_id)
            return p2_protocols[i];
    return NULL;
}

/* TRUE when UDP called owner's handle for a port the user gave it with
 * Decode As: the port UDP matched is not in owner's port preference. (The
 * udp.port table cannot tell: Wireshark 4.0 applies -o <proto>.udp.port with
 * dissector_change_uint, as Decode As does, so both leave the port's initial
 * handle alone.) A conversation pinned by a heuristic is not Decode As. */
static gboolean p2_is_decode_as(packet_info *pinfo, const p2_protocol_t *owner)
{
    static dissector_table_t udp;
    guint32 port = pinfo->match_uint;

    if (pinfo->ptype != PT_UDP || (port != pinfo->srcport && port != pinfo->destport))
        return FALSE;
    if (!udp)
        udp = find_dissector_table("udp.port");
    if (!udp || dissector_get_uint_handle(udp, port) != owner->handle)
        return FALSE;
    /* ports_applied: the preference as last applied (p2_ports_apply), not
     * looked up by name for every datagram. */
    return !owner->ports_applied || !value_is_in_range(owner->ports_applied, port);
}

/* Wireshark put `proto` in the frame's layers when it called its handle; a
 * datagram handed on to another protocol is not `proto`'s, so take it out
 * (frame.protocols then reads "udp:p2frag", as for a datagram found by the
 * heuristic, and reassembly keys that include the layer number agree). */
static void p2_leave_layer(packet_info *pinfo, int proto)
{
    wmem_list_frame_t *tail = wmem_list_tail(pinfo->layers);

    if (tail && GPOINTER_TO_INT(wmem_list_frame_data(tail)) == proto) {
        wmem_list_remove_frame(pinfo->layers, tail);
        pinfo->curr_layer_num--;
    }
}

int p2_dissect_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_,
                   p2_protocol_t *owner)
{
    p2_frame_t f;

    p2_frame_get(tvb, pinfo, &f);
    /* The datagram's id is another protocol's: that protocol's dissect,
     * from the protocol2.id table, with the frame (its id computed once).
     * call_dissector_with_data, not dissector_try_uint: a disabled target
     * shows the datagram as data, as Wireshark does for a disabled
     * protocol's port, instead of handing it back to UDP. */
    if (f.crc_known && !p2_is_decode_as(pinfo, owner)) {
        dissector_handle_t target = dissector_get_uint_handle(p2_id_table, f.implied_id);
        if (target && target != owner->id_handle) {
            p2_leave_layer(pinfo, owner->proto);
            return call_dissector_with_data(target, tvb, pinfo, tree, &f);
        }
    }
    return owner->dissect(tvb, pinfo, tree, &f);
}

gboolean p2_heur_frame(tvbuff_t *tvb, packet_info *pinfo, const p2_protocol_t *p, p2_frame_t *f)
{
    const p2_protocol_t *target;

    p2_frame_get(tvb, pinfo, f);
    target = p2_protocol_for(f);
    return !target || target == p;
}
