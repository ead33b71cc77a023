/* chunk-analysis.c
 * Transfer analysis for the chunk protocol: streams and transfers.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/proto_data.h>
#include <epan/wmem_scopes.h>

#include "packet-chunk.h"

/* Per-frame record key (p_add_proto_data). */
#define PDATA_FRAME (CHUNK_PDATA_ANALYSIS_BASE + 0)

static int proto_chunk_a = -1;
static int hf_stream = -1;
static int hf_transfer = -1;

/* One direction of slice flow inside a UDP conversation (acks go the other
 * way). */
typedef struct flow {
    guint32 stream;
    guint32 last_transfer;
    gboolean has_transfer;
    guint16 last_chunk;
} flow_t;

typedef struct conv {
    address a_addr;   /* the endpoint seen first: direction 0 is from it */
    guint32 a_port;
    flow_t *flow[2];  /* indexed by the direction of the slices */
} conv_t;

typedef struct frame_rec {
    guint32 stream;
    guint32 transfer;
    gboolean has_transfer;
} frame_rec_t;

static guint32 next_stream;
static guint32 next_transfer;

static void analysis_init(void)
{
    next_stream = 0;
    next_transfer = 0;
}

/* Returns the flow of slices that this packet belongs to: for a slice the
 * flow from its source, for an ack the flow towards its source. */
static flow_t *get_flow(packet_info *pinfo, gboolean is_ack)
{
    conversation_t *c = find_or_create_conversation(pinfo);
    conv_t *cv = (conv_t *)conversation_get_proto_data(c, proto_chunk_a);
    if (!cv) {
        cv = wmem_new0(wmem_file_scope(), conv_t);
        copy_address_wmem(wmem_file_scope(), &cv->a_addr, &pinfo->src);
        cv->a_port = pinfo->srcport;
        conversation_add_proto_data(c, proto_chunk_a, cv);
    }
    int dir = (addresses_equal(&cv->a_addr, &pinfo->src) && cv->a_port == pinfo->srcport) ? 0 : 1;
    if (is_ack)
        dir ^= 1;
    if (!cv->flow[dir]) {
        cv->flow[dir] = wmem_new0(wmem_file_scope(), flow_t);
        cv->flow[dir]->stream = next_stream++;
    }
    return cv->flow[dir];
}

static frame_rec_t *frame_record(packet_info *pinfo, gboolean is_ack, guint16 chunk_id)
{
    frame_rec_t *fr = (frame_rec_t *)p_get_proto_data(wmem_file_scope(), pinfo, proto_chunk_a, PDATA_FRAME);
    if (fr || PINFO_FD_VISITED(pinfo))
        return fr;
    flow_t *fl = get_flow(pinfo, is_ack);
    fr = wmem_new0(wmem_file_scope(), frame_rec_t);
    fr->stream = fl->stream;
    if (!is_ack && (!fl->has_transfer || fl->last_chunk != chunk_id)) {
        fl->has_transfer = TRUE;
        fl->last_chunk = chunk_id;
        fl->last_transfer = next_transfer++;
    }
    if (fl->has_transfer && fl->last_chunk == chunk_id) {
        fr->has_transfer = TRUE;
        fr->transfer = fl->last_transfer;
    }
    p_add_proto_data(wmem_file_scope(), pinfo, proto_chunk_a, PDATA_FRAME, fr);
    return fr;
}

static void show_ids(tvbuff_t *tvb, proto_tree *tree, const frame_rec_t *fr)
{
    proto_item *it;
    if (!tree || !fr)
        return;
    it = proto_tree_add_uint(tree, hf_stream, tvb, 0, 0, fr->stream);
    proto_item_set_generated(it);
    if (fr->has_transfer) {
        it = proto_tree_add_uint(tree, hf_transfer, tvb, 0, 0, fr->transfer);
        proto_item_set_generated(it);
    }
}

void chunk_analysis_slice(tvbuff_t *tvb, packet_info *pinfo, proto_tree *chunk_tree,
                          const chunk_slice_info_t *slice)
{
    show_ids(tvb, chunk_tree, frame_record(pinfo, FALSE, slice->chunk_id));
}

void chunk_analysis_ack(tvbuff_t *tvb, packet_info *pinfo, proto_tree *chunk_tree,
                        const chunk_ack_info_t *ack)
{
    show_ids(tvb, chunk_tree, frame_record(pinfo, TRUE, ack->chunk_id));
}

void chunk_analysis_register(int proto_chunk, module_t *chunk_module)
{
    static hf_register_info hf[] = {
        { &hf_stream, { "Stream index", "chunk.stream", FT_UINT32, BASE_DEC, NULL, 0x0,
            "One per UDP conversation and direction of slices", HFILL } },
        { &hf_transfer, { "Transfer index", "chunk.transfer", FT_UINT32, BASE_DEC, NULL, 0x0,
            "One per chunk sent in a stream", HFILL } },
    };
    (void)chunk_module;
    proto_chunk_a = proto_chunk;
    proto_register_field_array(proto_chunk, hf, array_length(hf));
    register_init_routine(analysis_init);
}

void chunk_analysis_handoff(void)
{
}
