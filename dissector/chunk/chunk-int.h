/* chunk/chunk-int.h
 * Internal to the chunk protocol: the interface between the packet decoder
 * (chunk/dissect.c) and the transfer analysis (chunk/analysis.c), then the
 * analysis' state shared with its statistics and export objects
 * (chunk/stats.c) and its Flow Graph (chunk/flow.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PACKET_CHUNK_H
#define PACKET_CHUNK_H

#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/conversation.h>

#include "common/register-util.h"
#include "common/single-pass.h"

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

/* ---- The transfer analysis' state (chunk/analysis.c, chunk/stats.c, chunk/flow.c) ---- */

/* Problems: every one sets chunk.analysis.flags (bit values are shown). */
enum {
    CHUNK_F_TOO_SOON        = 1u << 0,
    CHUNK_F_NOT_LISTENING   = 1u << 1,
    CHUNK_F_EARLY           = 1u << 2,
    CHUNK_F_COUNT_MISMATCH  = 1u << 3,
    CHUNK_F_SIZE_MISMATCH   = 1u << 4,
    CHUNK_F_STALL           = 1u << 5,
    CHUNK_F_SILENT_RECEIVER = 1u << 6,
    CHUNK_F_NOT_READING     = 1u << 7,
    CHUNK_F_REGRESSION      = 1u << 8,
    CHUNK_F_UNKNOWN_CHUNK   = 1u << 9,
    CHUNK_F_TOO_FAST        = 1u << 10,
    CHUNK_F_AMPLIFICATION   = 1u << 11,
    CHUNK_F_INCOMPLETE      = 1u << 12,
    CHUNK_F_COUNT           = 13
};

/* Acks the pacing check judges the ack rate over: one gap says little once
 * jitter is involved (the pacing check in chunk/analysis.c). */
#define CHUNK_PACED_WINDOW 5

/* Per slice of a transfer; its times (first send, last send, first ack) are
 * the transfer's slice_dt or slice_wide_ns (slice_ns() in chunk/analysis.c). */
typedef struct chunk_slice_state {
    guint32 first_frame, last_frame;
    guint32 acked_in;      /* first ack showing it; 0 while unacked */
    guint16 sends;
    guint16 acks_seen;     /* acks showing it acked */
} chunk_slice_state_t;

struct chunk_transfer;

/* One direction of slices in a UDP conversation (its acks go the other way). */
typedef struct chunk_flow {
    guint32 stream;
    address src, dst;      /* of the slices */
    guint32 sport, dport;
    struct chunk_transfer *cur;   /* newest chunk the sender sends */
    guint32 acks, completed;
    gboolean nc_open;         /* "Packets not captured" of slices shown, and no slice captured since */
    gboolean nc_acks_open;    /* "Packets not captured" of acks shown, and no ack captured since */
    guint32 last_done_frame;  /* the latest completing ack, and its chunk */
    guint16 last_done_chunk;
    gint64 last_done_ns;
    /* Soonest the capture showed the sender react to an ack: from a
     * completing ack to the next chunk's first slice; -1 until seen. At the
     * sender this is its processing time, at the receiver a round trip. */
    gint64 react_ns;
    gboolean has_paced_ack;
    guint32 paced_ack_frame;
    gint64 paced_ack_ns;
    gint64 paced_ring[CHUNK_PACED_WINDOW]; /* times of the last paced acks, for the rate check */
    guint32 paced_count;
    guint32 slices_since_ack;
    guint32 one_per_slice_run;
    gboolean has_last_ack;    /* the previous ack, to spot network duplicates */
    guint16 last_ack_chunk;
    guint32 last_ack_count;
    gint64 last_ack_ns;
    gint64 max_ack_delay_ns;  /* longest send-to-ack time seen: scales the stall threshold */
    gint64 old_ack_ns;        /* last ack for a chunk older than the one being sent */
    gboolean has_old_ack;
    guint32 acked_slices, acked_sends; /* slices acked and their sends: the loss estimate */
} chunk_flow_t;

/* One chunk sent in a flow. */
typedef struct chunk_transfer {
    guint32 index;
    chunk_flow_t *flow;
    guint16 chunk_id;
    gboolean keyed;           /* in the analysis' map of transfers (until its id wraps) */
    gboolean done_unseen;     /* the sender moved on after acks the capture missed: complete */
    gboolean size_known;
    guint32 num_slices, max_slices, slice_size, last_bytes, size;
    chunk_slice_state_t *slices;
    /* The slices' times, three a slice: nanoseconds after first_ns in 32 bits
     * while every one fits (4.29 s), else (slice_dt freed) all of them in
     * 64 bits; 12 bytes a slice instead of 24 in the common case. */
    guint32 *slice_dt;
    gint64 *slice_wide_ns;
    guint32 first_frame, last_frame;
    gint64 first_ns, last_ns;
    guint32 slice_pkts, resends, wasted, acks, acked_count;
    guint64 bytes_sent;
    guint32 complete_frame;
    gint64 complete_ns;
    guint32 reassembled_in;
    /* tshark's single pass only (common/single-pass.h): the slices gathered
     * so far in a buffer of the transfer's own, or NULL; in_table when the
     * transfer went to Wireshark's reassembly table instead. */
    cs_sp_buf_t *reasm;
    gboolean in_table;
    gint64 progress_ns;       /* last new slice acked (or first send) */
    guint32 progress_frame;
    guint32 stall_frame;      /* where the current stall was found; 0: none */
    guint32 stall_since_frame;
    guint32 first_stall_frame;
    guint32 prev_done_frame;  /* the flow's latest completing ack when this transfer began */
    guint16 prev_done_chunk;
    gboolean prev_ack_regressed; /* the previous ack of this transfer cleared slices acked before */
    guint32 problems;         /* CHUNK_F_* seen on its frames */
} chunk_transfer_t;

/* Queued on the "chunk_transfers" tap for every analysed packet. */
typedef struct chunk_tap_info {
    chunk_transfer_t *t;   /* NULL for an ack of an unknown chunk */
    chunk_flow_t *flow;
    gboolean is_ack;
    guint32 flags;
    guint32 resend;        /* slice: n-th resend, 0 first send */
    gboolean already_acked, stale;
    guint32 newly;         /* ack */
    gboolean dup, stale_ack, complete;
} chunk_tap_info_t;

/* Queued on the "chunk" tap (the Flow Graph and the Conversations and
 * Endpoints tabs, chunk/flow.c) for every analysed packet, when one listens. */
typedef struct chunk_flow_tap_info {
    const chunk_flow_t *flow;  /* its slices' direction */
    gboolean is_ack;
    guint16 chunk_id;
    guint32 slice_id;          /* slice */
    guint32 num_slices;
    guint32 resend;            /* slice: n-th resend, 0 first send */
    guint32 acked_count;       /* ack: slices it shows acked */
    const char *missing;       /* ack: the others, as ranges "3-5,17"; "" none */
    const char *marks;         /* the Info column's analysis marks, " [Stall]" */
} chunk_flow_tap_info_t;

/* Registers the Flow Graph and the Conversations and Endpoints tabs
 * (chunk/flow.c); they listen to the "chunk" tap. */
void chunk_flow_register(int proto_chunk);
/* The hidden fields chunk.end, src_end and dst_end of a slice or ack of
 * flow, when a filter or the tree wants them. */
void chunk_flow_end_fields(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const chunk_flow_t *flow,
                           gboolean is_ack);

/* Queued on the export-object tap at the frame that completes a chunk. */
typedef struct chunk_eo {
    chunk_transfer_t *t;
    guint32 len;
    const guint8 *data;
} chunk_eo_t;


/* Missing (unacked) slices of t as ranges "3-5,17"; "" when none. */
char *chunk_analysis_missing_ranges(wmem_allocator_t *scope, const chunk_transfer_t *t);

/* Diagnosis of an unfinished transfer: what happened, with its evidence,
 * and what to check next. Each is one or two sentences ending in '.', under
 * Wireshark's 240-character item label. */
typedef struct chunk_diagnosis {
    const char *what;
    const char *check;
} chunk_diagnosis_t;

/* Fills d from the state at the end of the pass; returns FALSE (d
 * untouched) when the transfer completed and nothing is wrong with it. */
gboolean chunk_analysis_diagnose(wmem_allocator_t *scope, const chunk_transfer_t *t, chunk_diagnosis_t *d);

/* The whole diagnosis, "what check", for the statistics; NULL when
 * chunk_analysis_diagnose() returns FALSE. */
char *chunk_analysis_diagnosis(wmem_allocator_t *scope, const chunk_transfer_t *t);

/* Short name of one CHUNK_F_* bit. */
const char *chunk_analysis_flag_name(guint32 flag);

#endif /* PACKET_CHUNK_H */
