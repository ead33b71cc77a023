/* flow.c
 * Netgame's Flow Graph (Statistics > Flow Graph, "Netgame Flows"; tshark
 * -z flow,netgame,network): an arrow per packet with its sequence, its ack
 * and ack bits, what the ack newly acknowledged and the analysis' flags;
 * and its Conversations and Endpoints tabs (tshark -z conv,netgame and
 * -z endpoints,netgame): one row per connection. Both read the "netgame"
 * tap's records (netgame/analysis.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>
#include <epan/tap.h>

#include "common/ws-compat.h"
#include "common/flow-conv.h"
#include "netgame-int.h"

static int proto_netgame_flow = -1;   /* netgame's, for its Conversations rows */
static fc_end_fields_t end_fields;

static tap_packet_status flow_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    const ng_tap_info_t *t = (const ng_tap_info_t *)data;
    wmem_strbuf_t *c = wmem_strbuf_new(pinfo->pool, "");

    wmem_strbuf_append_printf(c, "Seq %u, ack %u, ack bits 0x%08x, %u bytes", t->seq, t->ack, t->ack_bits,
                              t->payload_len);
    if (t->rec->n_links)
        wmem_strbuf_append_printf(c, ", acks %u new", t->rec->n_links);
    if (t->flags) {
        const char *sep = " [";
        for (guint i = 0; i < 32; i++)
            if (t->flags & (1u << i)) {
                wmem_strbuf_append_printf(c, "%s%s", sep, netgame_flag_name(1u << i));
                sep = ", ";
            }
        wmem_strbuf_append(c, "]");
    }
    return fc_flow_add(tapdata, pinfo, t->conn->index,
                       wmem_strdup_printf(pinfo->pool, "Seq %u Ack %u", t->seq, t->ack), wmem_strbuf_get_str(c));
}

static tap_packet_status conv_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags)
{
    const ng_tap_info_t *t = (const ng_tap_info_t *)data;

    return fc_conv_add(tapdata, pinfo, flags, proto_netgame_flow, fc_src_name(pinfo), fc_dst_name(pinfo), t->conn->index);
}

static tap_packet_status endpoint_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                         const void *data _U_, tap_flags_t flags)
{
    return fc_endpoint_add(tapdata, pinfo, flags, proto_netgame_flow, fc_src_name(pinfo), fc_dst_name(pinfo));
}

void netgame_flow_end_fields(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo)
{
    if (fc_end_fields_wanted(tree, &end_fields))
        fc_add_end_fields(tree, tvb, &end_fields, fc_src_name(pinfo), fc_dst_name(pinfo));
}

void netgame_flow_register(int proto)
{
    proto_netgame_flow = proto;
    fc_flow_register("netgame", "Netgame Flows", proto, "netgame", flow_packet);
    fc_conv_register(proto, conv_packet, endpoint_packet, &end_fields);
}
