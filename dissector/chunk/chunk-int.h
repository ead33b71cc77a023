/* chunk/chunk-int.h
 * Interface between the chunk packet decoder (chunk/dissect.c) and the
 * transfer analysis (chunk/analysis.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PACKET_CHUNK_H
#define PACKET_CHUNK_H

#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/conversation.h>

#include "common/register-util.h"

/* Keys for p_add_proto_data(<scope>, pinfo, proto_chunk, key, ...): the
 * analysis uses the keys from CHUNK_PDATA_ANALYSIS_BASE on; the decoder
 * keeps nothing per frame.
 * Per conversation, the decoder's protocol id and variant decisions live in
 * protocol2's map (dp2_conv_state()), the analysis' flows in a map of its own
 * keyed by conversation index (chunk/analysis.c, get_flow()); neither uses
 * conversation_add_proto_data(). The decoder looks the conversation up once
 * per datagram and hands it to the analysis. */
#define CHUNK_PDATA_ANALYSIS_BASE 16

/* A slice packet that decoded cleanly (every strict-reader rule held and the
 * CRC agrees with the conversation's protocol id). */
typedef struct chunk_slice_info {
    guint16 chunk_id;
    guint32 slice_id;
    guint32 num_slices;   /* as meant (the wire carries num_slices-1) */
    guint32 slice_bytes;  /* bytes of data in this slice */
    gint    data_offset;  /* offset of the data in the tvb passed along */
    guint32 max_slices;   /* variant used to decode (MaxSlicesPerChunk) */
    guint32 slice_size;   /* SliceSize used to decode */
    conversation_t *conv; /* find_or_create_conversation(pinfo), already found by the decoder */
} chunk_slice_info_t;

/* An ack packet that decoded cleanly. */
typedef struct chunk_ack_info {
    guint16 chunk_id;
    guint32 num_slices;
    const guint8 *acked;  /* num_slices entries of 0 or 1, slice 0 first; pinfo->pool scope */
    guint32 acked_count;
    guint32 max_slices;
    guint32 slice_size;
    conversation_t *conv; /* as in chunk_slice_info_t */
} chunk_ack_info_t;

/* Implemented in chunk/stats.c: called from proto_register_chunk(), before
 * the analysis. Registers the transfers table, the stats tree and export
 * objects; returns the export-object tap id (the analysis queues on it). */
int chunk_stats_register(int proto_chunk);

/* Implemented in chunk/analysis.c. */

/* Called from proto_register_chunk(): registers the analysis' hf/ett/ei
 * arrays, preferences (in the chunk module) and tap; the reassembled chunks
 * go to export objects on eo_tap (chunk_stats_register()). */
void chunk_analysis_register(int proto_chunk, module_t *chunk_module, int eo_tap);

/* Called from proto_reg_handoff_chunk(). */
void chunk_analysis_handoff(void);

/* Called for every cleanly decoded slice, after the decoder has added its
 * fields under chunk_tree (which may be NULL). tvb is the whole datagram. */
void chunk_analysis_slice(tvbuff_t *tvb, packet_info *pinfo, proto_tree *chunk_tree,
                          const chunk_slice_info_t *slice);

/* Called for every cleanly decoded ack. */
void chunk_analysis_ack(tvbuff_t *tvb, packet_info *pinfo, proto_tree *chunk_tree,
                        const chunk_ack_info_t *ack);

#endif /* PACKET_CHUNK_H */
