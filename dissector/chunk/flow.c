/* flow.c
 * chunk's Flow Graph (Statistics > Flow Graph, "Chunk Flows"; tshark
 * -z flow,chunk,network): an arrow per slice and per ack between sender
 * and receiver, each saying which slice of how many it is and its resend,
 * or what the ack shows acked and missing, with the analysis' marks; and
 * its Conversations and Endpoints tabs (tshark -z conv,chunk and
 * -z endpoints,chunk): one row per stream (one direction of slices and its
 * acks). Both read the "chunk" tap's records (chunk/analysis.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>
#include <epan/tap.h>

#include "common/ws-compat.h"
#include "common/flow-conv.h"
#include "chunk-int.h"

static int proto_chunk_flow = -1;   /* chunk's, for its Conversations rows */
static fc_end_fields_t end_fields;

static tap_packet_status flow_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    const chunk_flow_tap_info_t *fi = (const chunk_flow_tap_info_t *)data;
    wmem_allocator_t *pool = pinfo->pool;
    const char *label, *comment;

    if (!fi->is_ack) {
        label = wmem_strdup_printf(pool, "Slice %u", fi->slice_id);
        comment = wmem_strdup_printf(pool, "Slice %u of %u%s, chunk %u%s", fi->slice_id, fi->num_slices,
                                     fi->resend ? wmem_strdup_printf(pool, " (resend %u)", fi->resend) : "",
                                     fi->chunk_id, fi->marks);
    } else {
        label = wmem_strdup_printf(pool, "Ack %u/%u", fi->acked_count, fi->num_slices);
        comment = wmem_strdup_printf(pool, "Ack %u/%u%s%s, chunk %u%s", fi->acked_count, fi->num_slices,
                                     *fi->missing ? ", missing " : "", fi->missing, fi->chunk_id, fi->marks);
    }
    return fc_flow_add(tapdata, pinfo, fi->flow->stream, label, comment);
}

/* The stream's sender (of its slices) and receiver. */
static void stream_ends(packet_info *pinfo, const chunk_flow_t *f, char **sender, char **receiver)
{
    *sender = fc_end_name(pinfo->pool, &f->src, f->sport);
    *receiver = fc_end_name(pinfo->pool, &f->dst, f->dport);
}

static tap_packet_status conv_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags)
{
    const chunk_flow_tap_info_t *fi = (const chunk_flow_tap_info_t *)data;
    char *sender, *receiver;

    stream_ends(pinfo, fi->flow, &sender, &receiver);
    if (fi->is_ack)
        return fc_conv_add(tapdata, pinfo, flags, proto_chunk_flow, receiver, sender, fi->flow->stream);
    return fc_conv_add(tapdata, pinfo, flags, proto_chunk_flow, sender, receiver, fi->flow->stream);
}

static tap_packet_status endpoint_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                         const void *data, tap_flags_t flags)
{
    const chunk_flow_tap_info_t *fi = (const chunk_flow_tap_info_t *)data;
    char *sender, *receiver;

    stream_ends(pinfo, fi->flow, &sender, &receiver);
    if (fi->is_ack)
        return fc_endpoint_add(tapdata, pinfo, flags, proto_chunk_flow, receiver, sender);
    return fc_endpoint_add(tapdata, pinfo, flags, proto_chunk_flow, sender, receiver);
}

void chunk_flow_end_fields(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const chunk_flow_t *flow,
                           gboolean is_ack)
{
    char *sender, *receiver;

    if (!fc_end_fields_wanted(tree, &end_fields))
        return;
    stream_ends(pinfo, flow, &sender, &receiver);
    if (is_ack)
        fc_add_end_fields(tree, tvb, &end_fields, receiver, sender);
    else
        fc_add_end_fields(tree, tvb, &end_fields, sender, receiver);
}

void chunk_flow_register(int proto_chunk)
{
    proto_chunk_flow = proto_chunk;
    fc_flow_register("chunk", "Chunk Flows", proto_chunk, "chunk", flow_packet);
    fc_conv_register(proto_chunk, conv_packet, endpoint_packet, &end_fields);
}
