/* chunk/analysis.c
 * Transfer analysis for the chunk protocol: streams, transfers, resends,
 * ack outcomes, hang diagnosis and reassembly.
 *
 * Everything is computed on the first pass, in frame order, and cached per
 * frame (backward-looking results), or kept in per-slice and per-transfer
 * state that is final after the first pass (forward-looking results such as
 * "acked in" and "reassembled in": they show up with -2 and in the GUI).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/expert.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/tap.h>
#include <epan/to_str.h>
#include <epan/wmem_scopes.h>

#include "common/ws-compat.h"
#include "common/analysis-util.h"
#include "common/flow-conv.h"

#include "chunk-int.h"
#include "common/single-pass.h"

/* Per-frame keys (p_add_proto_data). */
#define PDATA_FRAME (CHUNK_PDATA_ANALYSIS_BASE + 0)
#define PDATA_STALL (CHUNK_PDATA_ANALYSIS_BASE + 1)       /* missing slices, when a stall was found */
#define PDATA_STALL_SINCE (CHUNK_PDATA_ANALYSIS_BASE + 2) /* last frame with progress then */

static int proto_chunk_a = -1;

/* Preferences. */
static guint pref_min_resend_ms = 100;
static guint pref_resend_jitter_ms = 40;
static guint pref_ack_interval_ms = 100;
static guint pref_stall_ms = 1000;
static guint pref_not_listening_acks = 3;
static ws_cb_bool pref_reassemble = TRUE;
static ws_cb_bool pref_single_pass = TRUE;

/* The heuristics' constants; the thresholds a user may want to move are
 * preferences above. */
#define NS_PER_MS 1000000
/* Chunk ids wrap at 65536: an id up to half the space ahead is newer. */
#define CHUNK_ID_HALF 32768
/* A stall is never called sooner than this many times the longest
 * send-to-ack time seen: on a slow or bloated path acks take long by nature. */
#define STALL_ACK_DELAY_FACTOR 2
/* stall_min_sends(): every missing slice must have been sent at least
 * STALL_MIN_SENDS times (enough at up to STALL_LOW_LOSS loss), more at
 * higher loss until random loss explains the stall less often than
 * STALL_CHANCE, at most STALL_MAX_SENDS (loss near 100% is a stall too). */
#define STALL_MIN_SENDS 3
#define STALL_LOW_LOSS  0.1
#define STALL_CHANCE    0.001
#define STALL_MAX_SENDS 40
/* An ack gap under interval / ACK_FAST_DIVISOR is fast (pacing), and a copy of
 * the previous ack that soon is a network duplicate. */
#define ACK_FAST_DIVISOR 2
/* Acks too fast: the CHUNK_PACED_WINDOW - 1 gaps of the window add up to less
 * than this share of as many intervals (room for jitter either way). */
#define TOO_FAST_PERCENT 60
/* One ack per slice: this many fast acks in a row, each answering at most
 * one slice (a receiver that answers every slice at once). */
#define AMPLIFICATION_RUN 4
/* Missing slices with their send counts in a stall message: at most this
 * many ranges or, past this many characters, " and more" (keeps the
 * message under Wireshark's 240-character item label). */
#define STALL_MISSING_MAX_RANGES 24
#define STALL_MISSING_MAX_LEN    60
/* Missing slices in a diagnosis sentence, cut with ",..." (same reason). */
#define DIAG_MISSING_MAX_LEN 60

static gint64 ms_to_ns(guint ms)
{
    return (gint64)ms * NS_PER_MS;
}

static int hf_chunk_stream = -1;
static int hf_chunk_transfer = -1;
static int hf_chunk_flags = -1;
static int hf_chunk_resend = -1;
static int hf_chunk_resend_of = -1;
static int hf_chunk_since_last = -1;
static int hf_chunk_first_send = -1;
static int hf_chunk_already_acked_in = -1;
static int hf_chunk_acked_in = -1;
static int hf_chunk_ack_time = -1;
static int hf_chunk_stale = -1;
static int hf_chunk_completed_in = -1;
static int hf_chunk_prev_chunk = -1;
static int hf_chunk_newly_acked = -1;
static int hf_chunk_newly_acked_slices = -1;
static int hf_chunk_duplicate_ack = -1;
static int hf_chunk_regressed = -1;
static int hf_chunk_ack_delta = -1;
static int hf_chunk_prev_ack = -1;
static int hf_chunk_chunk_complete = -1;
static int hf_chunk_transfer_time = -1;
static int hf_chunk_goodput = -1;
static int hf_chunk_chunk_size = -1;
static int hf_chunk_stall_since = -1;
static int hf_chunk_diagnosis = -1;
static int hf_chunk_check = -1;
static int hf_chunk_reassembled_in = -1;
static int hf_chunk_reassembled_length = -1;
static int hf_chunk_fragments = -1;
static int hf_chunk_fragment = -1;
static int hf_chunk_fragment_overlap = -1;
static int hf_chunk_fragment_overlap_conflicts = -1;
static int hf_chunk_fragment_multiple_tails = -1;
static int hf_chunk_fragment_too_long_fragment = -1;
static int hf_chunk_fragment_error = -1;
static int hf_chunk_fragment_count = -1;

static gint ett_chunk_analysis = -1;
static gint ett_chunk_fragment = -1;
static gint ett_chunk_fragments = -1;

static expert_field ei_chunk_resend = EI_INIT;
static expert_field ei_chunk_too_soon = EI_INIT;
static expert_field ei_chunk_already_acked = EI_INIT;
static expert_field ei_chunk_not_listening = EI_INIT;
static expert_field ei_chunk_stale = EI_INIT;
static expert_field ei_chunk_early = EI_INIT;
static expert_field ei_chunk_not_captured = EI_INIT;
static int hf_chunk_not_captured = -1;
static expert_field ei_chunk_count_mismatch = EI_INIT;
static expert_field ei_chunk_size_mismatch = EI_INIT;
static expert_field ei_chunk_stall = EI_INIT;
static expert_field ei_chunk_silent = EI_INIT;
static expert_field ei_chunk_not_reading = EI_INIT;
static expert_field ei_chunk_dup_ack = EI_INIT;
static expert_field ei_chunk_stale_ack = EI_INIT;
static expert_field ei_chunk_regression = EI_INIT;
static expert_field ei_chunk_regression_note = EI_INIT;
static expert_field ei_chunk_unknown_chunk = EI_INIT;
static expert_field ei_chunk_ack_before_slices = EI_INIT;
static expert_field ei_chunk_ack_count_mismatch = EI_INIT;
static expert_field ei_chunk_too_fast = EI_INIT;
static expert_field ei_chunk_amplification = EI_INIT;
static expert_field ei_chunk_complete = EI_INIT;
static expert_field ei_chunk_incomplete = EI_INIT;
static expert_field ei_chunk_capped = EI_INIT;

static const fragment_items chunk_frag_items = {
    &ett_chunk_fragment, &ett_chunk_fragments,
    &hf_chunk_fragments, &hf_chunk_fragment, &hf_chunk_fragment_overlap, &hf_chunk_fragment_overlap_conflicts,
    &hf_chunk_fragment_multiple_tails, &hf_chunk_fragment_too_long_fragment, &hf_chunk_fragment_error,
    &hf_chunk_fragment_count, &hf_chunk_reassembled_in, &hf_chunk_reassembled_length, NULL,
    "Slices"
};

static reassembly_table chunk_reassembly_table;
static int chunk_tap = -1;
static int chunk_eo_tap = -1;
static int chunk_flow_tap = -1;   /* "chunk": Flow Graph, Conversations, Endpoints */

/* All transfers of the file, in order of their first slice. */
static wmem_array_t *all_transfers;
static guint32 next_stream;
static wmem_map_t *flows_by_conv;   /* conversation index -> chunk_flow_t *[2] */
/* The last conversation's entry of flows_by_conv: a run of packets of one
 * conversation (the common case) looks it up once. */
static guint32 last_conv_index;
static chunk_flow_t **last_conv_flows;
/* Transfers of every flow by (flow stream, chunk id) (flow_chunk_key()): one
 * map, not one per flow. A wmem_map holding one entry costs 1.4 KiB on
 * Wireshark 4.6 against 400 B on 4.0 and 4.4, which made a map per flow add
 * 100 MiB on 100 000 conversations (docs/robustness.md, "Dissector"). */
static wmem_map_t *transfers_by_chunk;
static gboolean sp_transient;        /* this packet is in tshark's single pass: cs_sp_begin_packet() */
static wmem_allocator_t *rec_scope; /* where this packet's frame record lives: cs_sp_record_scope() */
static cs_sp_pool_t sp_pool;        /* the transfers' own reassembly buffers in the single pass */

/* Cap on per-slice state (docs/robustness.md, "Dissector"). A single
 * 15-byte slice claims 256 slices, i.e. 10 KiB of per-slice state: 65 536
 * chunk ids or 100 000 conversations made tshark use 5x its own memory. A
 * transfer gets per-slice state only while all of it stays within
 * CHUNK_STATE_FLOOR + CHUNK_STATE_PER_BYTE x the chunk packet bytes seen so
 * far (honest traffic needs 40 bytes per slice of up to 1 KiB); past it the
 * transfer is decoded but not analysed (slices == NULL, ei_chunk_capped). */
#define CHUNK_STATE_FLOOR    (32u << 20)
#define CHUNK_STATE_PER_BYTE 2u
/* What the cap counts per slice: its chunk_slice_state_t and its three
 * times at their widest (64 bits: slice_ns()), 40 bytes; most transfers
 * take 28 (times in 32 bits). */
#define CHUNK_SLICE_STATE_COST (sizeof(chunk_slice_state_t) + SLICE_T_N * sizeof(gint64))
static gint64 capture_last_ns; /* time of the latest chunk packet analysed */
static guint64 state_bytes;   /* per-slice state allocated in this file */
static guint64 chunk_bytes;   /* bytes of clean chunk packets analysed */

/* Bytes of state the analysis may hold at this point of the file. */
static guint64 state_budget(void)
{
    return CHUNK_STATE_FLOOR + CHUNK_STATE_PER_BYTE * chunk_bytes;
}

#define REACT_UNKNOWN G_MAXUINT32

/* A slice's times, three a slice in the transfer's slice_dt or
 * slice_wide_ns (chunk/chunk-int.h): its first send, its last send, the
 * first ack showing it. Each is read only once set (a send or an ack). */
enum { SLICE_T_FIRST, SLICE_T_LAST, SLICE_T_ACKED, SLICE_T_N };

static inline gint64 slice_ns(const chunk_transfer_t *t, guint32 i, guint which)
{
    gsize k = (gsize)i * SLICE_T_N + which;
    return t->slice_wide_ns ? t->slice_wide_ns[k] : t->first_ns + t->slice_dt[k];
}

/* A time 4.29 s or more after the transfer's first slice, or before it
 * (timestamps going back): every time of the transfer goes to 64 bits. */
static void slice_times_widen(chunk_transfer_t *t)
{
    gsize n = (gsize)t->num_slices * SLICE_T_N;
    gint64 *w = wmem_alloc_array(wmem_file_scope(), gint64, n);
    for (gsize k = 0; k < n; k++)
        w[k] = t->first_ns + t->slice_dt[k];
    wmem_free(wmem_file_scope(), t->slice_dt);
    t->slice_dt = NULL;
    t->slice_wide_ns = w;
}

static inline void set_slice_ns(chunk_transfer_t *t, guint32 i, guint which, gint64 ns)
{
    gsize k = (gsize)i * SLICE_T_N + which;
    if (!t->slice_wide_ns) {
        gint64 d = ns - t->first_ns;
        if (d >= 0 && d <= (gint64)G_MAXUINT32) {
            t->slice_dt[k] = (guint32)d;
            return;
        }
        slice_times_widen(t);
    }
    t->slice_wide_ns[k] = ns;
}

/* Frame record: what the analysis found in one frame, fixed on the first
 * pass. Kept small: one per chunk packet. */
typedef struct frame_rec {
    chunk_transfer_t *t;   /* NULL: ack for a chunk no slice was seen of */
    chunk_flow_t *flow;
    guint32 flags;         /* CHUNK_F_* raised here (backward-looking) */
    guint32 notes;         /* N_* */
    guint32 ref_frame;     /* slice: previous send; ack: previous ack */
    guint32 info_frame;    /* stale: completed in; early: previous chunk's first frame;
                            * not captured: how many packets at least */
    gint64 delta_ns;       /* slice: since last sent; ack: since previous ack */
    guint32 slice_id;
    guint16 resend;        /* slice: n on the n-th resend */
    guint16 newly;         /* ack: slices newly acked */
    guint16 cleared;       /* ack: slices acked before and clear now */
    guint16 acks_seen;     /* slice: acks that had shown it acked, at this send */
    guint32 react_us;      /* already acked: the flow's react_ns then (us); REACT_UNKNOWN */
    guint8 *newly_bits;    /* ack: newly acked slices, one bit each; NULL if none */
} frame_rec_t;

enum {
    N_RESEND        = 1u << 0,
    N_ALREADY_ACKED = 1u << 1,
    N_STALE         = 1u << 2,
    N_DUP_ACK       = 1u << 3,
    N_STALE_ACK     = 1u << 4,
    N_COMPLETE      = 1u << 5,
    N_REGRESSED     = 1u << 8,
    N_CAPPED        = 1u << 9,   /* transfer over the state cap: not analysed */
    N_ACK_BEFORE_SLICES = 1u << 10, /* ack of an unknown chunk before any slice of the stream */
    N_NOT_CAPTURED  = 1u << 11,  /* the capture missed packets here (count in info_frame) */
    N_IN_GAP        = 1u << 12,  /* ack of a chunk the capture missed, the gap already shown */
};

/* Wrap-aware "a is newer than b": chunk ids wrap 65535 -> 0
 * (docs/protocol.md), so an id up to half the space ahead is newer. */
static gboolean chunk_newer(guint16 a, guint16 b)
{
    return (a > b && a - b <= CHUNK_ID_HALF) || (a < b && b - a > CHUNK_ID_HALF);
}

/* wmem callback at the end of the file scope: frees what lives outside it,
 * the single-pass buffers of transfers that never completed. Returns FALSE:
 * analysis_init() registers it again for the next file. */
static ws_cb_bool analysis_file_end(wmem_allocator_t *allocator _U_, wmem_cb_event_t event _U_,
                                    void *user_data _U_)
{
    cs_sp_pool_clear(&sp_pool);
    all_transfers = NULL;
    return FALSE;
}

static void analysis_init(void)
{
    next_stream = 0;
    all_transfers = wmem_array_new(wmem_file_scope(), sizeof(chunk_transfer_t *));
    flows_by_conv = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    last_conv_flows = NULL;
    transfers_by_chunk = wmem_map_new(wmem_file_scope(), g_int64_hash, g_int64_equal);
    capture_last_ns = 0;
    state_bytes = 0;
    chunk_bytes = 0;
    cs_sp_init();
    wmem_register_callback(wmem_file_scope(), analysis_file_end, NULL);
}



/* Returns the flow this packet belongs to: for a slice the flow from its
 * source, for an ack the flow towards its source (acks answer slices). */
static chunk_flow_t *get_flow(packet_info *pinfo, conversation_t *c, gboolean is_ack)
{
    /* Keyed by conversation index, in the analysis' own map (chunk/chunk-int.h
     * says who keeps what per conversation); c is pinfo's conversation, as
     * the decoder found it. */
    chunk_flow_t **fl = last_conv_flows && last_conv_index == c->conv_index ? last_conv_flows
                      : (chunk_flow_t **)wmem_map_lookup(flows_by_conv, GUINT_TO_POINTER(c->conv_index));
    if (!fl) {
        fl = wmem_alloc0_array(wmem_file_scope(), chunk_flow_t *, 2);
        wmem_map_insert(flows_by_conv, GUINT_TO_POINTER(c->conv_index), fl);
    }
    last_conv_index = c->conv_index;
    last_conv_flows = fl;
    /* Direction 0 is from the endpoint with the lower address/port, so both
     * directions agree whichever packet is seen first. */
    int cmp = cmp_address(&pinfo->src, &pinfo->dst);
    if (cmp == 0)
        cmp = (pinfo->srcport > pinfo->destport) - (pinfo->srcport < pinfo->destport);
    int dir = cmp <= 0 ? 0 : 1;
    if (is_ack)
        dir ^= 1;
    if (!fl[dir]) {
        chunk_flow_t *f = wmem_new0(wmem_file_scope(), chunk_flow_t);
        f->stream = next_stream++;
        /* Record the slice direction's endpoints. */
        if (is_ack) {
            copy_address_wmem(wmem_file_scope(), &f->src, &pinfo->dst);
            copy_address_wmem(wmem_file_scope(), &f->dst, &pinfo->src);
            f->sport = pinfo->destport;
            f->dport = pinfo->srcport;
        } else {
            copy_address_wmem(wmem_file_scope(), &f->src, &pinfo->src);
            copy_address_wmem(wmem_file_scope(), &f->dst, &pinfo->dst);
            f->sport = pinfo->srcport;
            f->dport = pinfo->destport;
        }
        f->react_ns = -1;
        fl[dir] = f;
    }
    return fl[dir];
}

static gint64 flow_chunk_key(const chunk_flow_t *fl, guint16 chunk_id)
{
    return ((gint64)fl->stream << 16) | chunk_id;
}

/* The transfer of chunk_id in flow fl, or NULL. Most packets are of the
 * flow's newest chunk: that one is asked first, without the map. */
static chunk_transfer_t *flow_transfer(const chunk_flow_t *fl, guint16 chunk_id)
{
    if (fl->cur && fl->cur->chunk_id == chunk_id && fl->cur->keyed)
        return fl->cur;
    gint64 key = flow_chunk_key(fl, chunk_id);
    return (chunk_transfer_t *)wmem_map_lookup(transfers_by_chunk, &key);
}

static chunk_transfer_t *new_transfer(chunk_flow_t *fl, packet_info *pinfo,
                                      const chunk_slice_info_t *slice)
{
    chunk_transfer_t *t = wmem_new0(wmem_file_scope(), chunk_transfer_t);
    t->index = wmem_array_get_count(all_transfers);
    t->flow = fl;
    t->chunk_id = slice->chunk_id;
    t->num_slices = slice->num_slices;
    t->max_slices = slice->max_slices;
    t->slice_size = slice->slice_size;
    /* num_slices is bounded by the variant's MaxSlicesPerChunk: the decoder
     * rejected anything larger. Past the cap no state (see CHUNK_STATE_FLOOR). */
    guint64 need = (guint64)t->num_slices * CHUNK_SLICE_STATE_COST;
    t->first_frame = pinfo->num;
    t->first_ns = au_ns(&pinfo->abs_ts);
    if (state_bytes + need <= state_budget()) {
        t->slices = wmem_alloc0_array(wmem_file_scope(), chunk_slice_state_t, t->num_slices);
        t->slice_dt = wmem_alloc0_array(wmem_file_scope(), guint32, (gsize)t->num_slices * SLICE_T_N);
        state_bytes += need;
    }
    t->progress_ns = t->first_ns;
    t->progress_frame = pinfo->num;
    t->prev_done_frame = fl->last_done_frame;
    t->prev_done_chunk = fl->last_done_chunk;
    if (fl->last_done_frame && t->first_ns >= fl->last_done_ns &&
        (fl->react_ns < 0 || t->first_ns - fl->last_done_ns < fl->react_ns))
        fl->react_ns = t->first_ns - fl->last_done_ns;
    wmem_array_append_one(all_transfers, t);
    /* A chunk id comes back after 65536 chunks: forget the transfer half a
     * wrap behind, so an id seen again starts a new transfer. */
    gint64 old = flow_chunk_key(fl, (guint16)(slice->chunk_id ^ CHUNK_ID_HALF));
    chunk_transfer_t *gone = (chunk_transfer_t *)wmem_map_remove(transfers_by_chunk, &old);
    if (gone)
        gone->keyed = FALSE;
    gint64 *key = wmem_new(wmem_file_scope(), gint64);
    *key = flow_chunk_key(fl, (guint16)slice->chunk_id);
    wmem_map_insert(transfers_by_chunk, key, t);
    t->keyed = TRUE;
    return t;
}

/* The missing (unacked) slices of a transfer, as an id set. */
static gboolean slice_missing(const void *data, guint32 id)
{
    return !((const chunk_transfer_t *)data)->slices[id].acked_in;
}

/* ... in runs of slices sent equally often. */
static gboolean same_sends(const void *data, guint32 first, guint32 id)
{
    const chunk_transfer_t *t = (const chunk_transfer_t *)data;
    return t->slices[id].sends == t->slices[first].sends;
}

static au_idset_t missing_set(const chunk_transfer_t *t, gboolean by_sends)
{
    au_idset_t s = { t->num_slices, slice_missing, by_sends ? same_sends : NULL, t };
    return s;
}

/* Missing slices of t as ranges, each with how often it was sent:
 * "3-5 (sent 4x), 17 (sent 6x)", at most about 90 characters (then " and
 * more"). Built only when a stall is found. */
static char *missing_with_sends(wmem_allocator_t *scope, const chunk_transfer_t *t)
{
    wmem_strbuf_t *sb = wmem_strbuf_new(scope, "");
    guint32 next = 0, first, last, shown = 0;
    au_idset_t s;

    if (!t->slices)
        return wmem_strbuf_finalize(sb);
    s = missing_set(t, TRUE);
    while (au_idset_next_run(&s, &next, &first, &last)) {
        /* Keeps the expert message that holds it under the 240-character
         * item label. */
        if (shown++ == STALL_MISSING_MAX_RANGES || wmem_strbuf_get_len(sb) > STALL_MISSING_MAX_LEN) {
            wmem_strbuf_append(sb, " and more");
            break;
        }
        if (wmem_strbuf_get_len(sb))
            wmem_strbuf_append(sb, ", ");
        au_append_range(sb, first, last);
        wmem_strbuf_append_printf(sb, " (sent %ux)", t->slices[first].sends);
    }
    return wmem_strbuf_finalize(sb);
}

char *chunk_analysis_missing_ranges(wmem_allocator_t *scope, const chunk_transfer_t *t)
{
    au_idset_t s;

    if (!t->slices)   /* over the state cap: not known */
        return wmem_strdup(scope, "?");
    s = missing_set(t, FALSE);
    return au_ranges(scope, &s, 0);
}

/* Sends every missing slice needs before a stall is called: enough that
 * random loss at the rate this flow shows (1 - acked slices / their sends) would fail that
 * often less than once in a thousand times. */
static guint32 stall_min_sends(const chunk_flow_t *fl)
{
    /* From the slices that got through: a slice that never does (the
     * stall itself) must not raise the estimate. */
    double r = fl->acked_sends ? 1.0 - (double)fl->acked_slices / (double)fl->acked_sends : 0.0;
    if (r <= STALL_LOW_LOSS)
        return STALL_MIN_SENDS;
    guint32 m = 1;
    double p = r;
    while (p >= STALL_CHANCE && m < STALL_MAX_SENDS) {
        p *= r;
        m++;
    }
    return m < STALL_MIN_SENDS ? STALL_MIN_SENDS : m;
}

/* A transfer that made no progress for longer than the stall threshold while
 * slices kept coming: classify and remember where it was found. */
static void check_stall(packet_info *pinfo, chunk_transfer_t *t, frame_rec_t *fr, gint64 now)
{
    chunk_flow_t *fl = t->flow;
    if (t->complete_frame || t->stall_frame)
        return;
    /* On a slow or bloated path acks take long by nature: never call a
     * stall sooner than twice the longest send-to-ack time seen, and not
     * while the receiver is still acking an older chunk (its queue is still
     * draining). */
    gint64 threshold = ms_to_ns(pref_stall_ms);
    if (threshold < STALL_ACK_DELAY_FACTOR * fl->max_ack_delay_ns)
        threshold = STALL_ACK_DELAY_FACTOR * fl->max_ack_delay_ns;
    gint64 ref = t->progress_ns;
    if (fl->has_old_ack && fl->cur == t && fl->old_ack_ns > ref)
        ref = fl->old_ack_ns;
    if (now - ref <= threshold)
        return;
    if (t->acks > 0) {
        /* The receiver answers: only a stall if every missing slice was
         * sent often enough that loss alone does not explain it. */
        guint32 m = stall_min_sends(fl);
        for (guint32 i = 0; i < t->num_slices; i++)
            if (!t->slices[i].acked_in && t->slices[i].sends < m)
                return;
    }
    guint32 flag;
    if (t->acks == 0 && t->flow->acks == 0)
        flag = CHUNK_F_SILENT_RECEIVER;
    else if (t->acks == 0 && t->flow->completed)
        flag = CHUNK_F_NOT_READING;
    else if (t->acks == 0)
        flag = CHUNK_F_SILENT_RECEIVER;
    else
        flag = CHUNK_F_STALL;
    fr->flags |= flag;
    t->stall_frame = pinfo->num;
    t->stall_since_frame = t->progress_frame;
    if (!t->first_stall_frame)
        t->first_stall_frame = pinfo->num;
    p_add_proto_data(rec_scope, pinfo, proto_chunk_a, PDATA_STALL,
                     missing_with_sends(rec_scope, t));
    p_add_proto_data(rec_scope, pinfo, proto_chunk_a, PDATA_STALL_SINCE,
                     GUINT_TO_POINTER(t->progress_frame));
}

/* A new chunk t while the flow's current one is not fully acked in the
 * capture: the sender moves on only once it is (one chunk in flight), so
 * this is packets the capture missed (a kernel's drops), not an early
 * start, when the capture shows it missed some: chunk ids skipped (whole
 * chunks missed), a slice of the current chunk never seen sent (the sender
 * sends every slice), or no ack of the receiver for more than two ack
 * intervals (it acks at that pace while a chunk is in flight) or for much
 * longer than the sender takes to move on after a completing ack (the
 * completing ack is missing: *acks_only). Returns how many packets were
 * missed at least, 0 when none is known. */
#define REACT_SLACK_NS (20 * 1000000LL)

static guint32 early_not_captured(const chunk_flow_t *fl, const chunk_transfer_t *t, gint64 now,
                                  gboolean *acks_only)
{
    const chunk_transfer_t *c = fl->cur;
    guint32 missed = (guint16)(t->chunk_id - c->chunk_id) - 1u, unseen = 0;

    for (guint32 i = 0; i < c->num_slices; i++)
        if (!c->slices[i].sends)
            unseen++;
    missed += unseen;
    *acks_only = FALSE;
    if (!missed && fl->has_last_ack &&
        (now - fl->last_ack_ns > 2 * ms_to_ns(pref_ack_interval_ms) ||
         (fl->react_ns >= 0 && now - fl->last_ack_ns > MAX(2 * fl->react_ns, fl->react_ns + REACT_SLACK_NS)))) {
        missed = 1;         /* the ack that completed it */
        *acks_only = TRUE;
    }
    return missed;
}

/* The transfer a slice belongs to, made at its first slice; a new chunk
 * while the previous one is not fully acked is either in flight early
 * (CHUNK_F_EARLY) or followed acks or slices the capture missed. */
static chunk_transfer_t *slice_transfer(packet_info *pinfo, chunk_flow_t *fl, const chunk_slice_info_t *slice,
                                        frame_rec_t *fr, gint64 now)
{
    chunk_transfer_t *t = flow_transfer(fl, (guint16)slice->chunk_id);

    if (!t) {
        t = new_transfer(fl, pinfo, slice);
        if (fl->cur && fl->cur != t && chunk_newer(t->chunk_id, fl->cur->chunk_id) &&
            fl->cur->slices && fl->cur->acked_count < fl->cur->num_slices) {
            gboolean acks_only;
            guint32 missed = early_not_captured(fl, t, now, &acks_only);
            if (missed) {
                /* The acks that completed it are among packets the capture
                 * missed: shown once a run (slices or acks missing). */
                gboolean *open = acks_only ? &fl->nc_acks_open : &fl->nc_open;
                if (!*open) {
                    fr->notes |= N_NOT_CAPTURED;
                    fr->info_frame = missed;
                }
                fl->nc_acks_open = acks_only;
                fl->cur->done_unseen = TRUE;
            } else {
                /* One chunk in flight: the previous one was not fully acked. */
                fr->flags |= CHUNK_F_EARLY;
                fr->info_frame = fl->cur->first_frame;
            }
        }
    }
    return t;
}

static frame_rec_t *analyse_slice(tvbuff_t *tvb, packet_info *pinfo, const chunk_slice_info_t *slice,
                                  frame_rec_t *fr)
{
    chunk_flow_t *fl = get_flow(pinfo, slice->conv, FALSE);
    gint64 now = au_ns(&pinfo->abs_ts);
    fr->flow = fl;
    fr->slice_id = slice->slice_id;
    fl->slices_since_ack++;
    if (now > capture_last_ns)
        capture_last_ns = now;
    chunk_bytes += tvb_reported_length(tvb);

    chunk_transfer_t *t = slice_transfer(pinfo, fl, slice, fr, now);
    fl->nc_open = FALSE;    /* a slice of the flow captured again */
    if (!fl->cur || chunk_newer(t->chunk_id, fl->cur->chunk_id))
        fl->cur = t;
    fr->t = t;

    t->slice_pkts++;
    t->bytes_sent += tvb_reported_length(tvb);
    t->last_frame = pinfo->num;
    t->last_ns = now;

    if (t->complete_frame) {
        fr->notes |= N_STALE;
        fr->info_frame = t->complete_frame;
    }

    if (slice->num_slices != t->num_slices || slice->slice_id >= t->num_slices) {
        /* Widening or narrowing after the fact: the receiver must ignore it;
         * no per-slice state is kept for it. */
        fr->flags |= CHUNK_F_COUNT_MISMATCH;
        t->problems |= fr->flags;
        return fr;
    }
    if (!t->slices) {
        fr->notes |= N_CAPPED;
        return fr;
    }
    if (slice->slice_id == t->num_slices - 1) {
        if (!t->size_known) {
            t->size_known = TRUE;
            t->last_bytes = slice->slice_bytes;
            t->size = (t->num_slices - 1) * t->slice_size + slice->slice_bytes;
        } else if (t->last_bytes != slice->slice_bytes) {
            fr->flags |= CHUNK_F_SIZE_MISMATCH;
        }
    } else if (slice->slice_bytes != t->slice_size) {
        fr->flags |= CHUNK_F_SIZE_MISMATCH;
    }

    chunk_slice_state_t *s = &t->slices[slice->slice_id];
    if (s->sends == 0) {
        s->first_frame = pinfo->num;
        set_slice_ns(t, slice->slice_id, SLICE_T_FIRST, now);
    } else {
        fr->notes |= N_RESEND;
        fr->resend = s->sends < G_MAXUINT16 ? s->sends : G_MAXUINT16;
        fr->ref_frame = s->last_frame;
        fr->delta_ns = now - slice_ns(t, slice->slice_id, SLICE_T_LAST);
        t->resends++;
        /* Jitter between the sender and the capture point moves two sends
         * of a slice closer by up to twice its amplitude: allow for it. */
        if (fr->delta_ns + ms_to_ns(pref_resend_jitter_ms) < ms_to_ns(pref_min_resend_ms))
            fr->flags |= CHUNK_F_TOO_SOON;
    }
    if (s->acked_in) {
        fr->notes |= N_ALREADY_ACKED;
        t->wasted++;
        fr->acks_seen = s->acks_seen;
        fr->react_us = fl->react_ns < 0 ? REACT_UNKNOWN
                     : (guint32)MIN(fl->react_ns / 1000, (gint64)REACT_UNKNOWN - 1);
        /* Acks are seen before the sender has them (capture at the
         * receiver, latency) and get lost: only a slice acked by several
         * acks and for longer than the stall threshold is proof. */
        if (s->acks_seen >= pref_not_listening_acks &&
            now - slice_ns(t, slice->slice_id, SLICE_T_ACKED) > ms_to_ns(pref_stall_ms))
            fr->flags |= CHUNK_F_NOT_LISTENING;
    }
    if (s->sends < G_MAXUINT16)
        s->sends++;
    s->last_frame = pinfo->num;
    set_slice_ns(t, slice->slice_id, SLICE_T_LAST, now);

    check_stall(pinfo, t, fr, now);
    t->problems |= fr->flags;
    return fr;
}

/* Applies an ack's bitfield to t's slices: marks the newly acked ones
 * (fr->newly, fr->newly_bits), counts those acked before and clear now
 * (fr->cleared), and feeds the flow's loss and ack delay estimates. */
static void apply_ack_bits(packet_info *pinfo, const chunk_ack_info_t *ack, chunk_transfer_t *t,
                           frame_rec_t *fr, gint64 now)
{
    chunk_flow_t *fl = t->flow;
    guint32 n = t->num_slices;

    for (guint32 i = 0; i < n; i++) {
        chunk_slice_state_t *s = &t->slices[i];
        if (ack->acked[i]) {
            if (s->acks_seen < G_MAXUINT16)
                s->acks_seen++;
            if (!s->acked_in) {
                if (!fr->newly_bits)
                    fr->newly_bits = (guint8 *)wmem_alloc0(rec_scope, (n + 7) / 8);
                fr->newly_bits[i >> 3] |= (guint8)(1u << (i & 7));
                fr->newly++;
                s->acked_in = pinfo->num;
                set_slice_ns(t, i, SLICE_T_ACKED, now);
                /* A slice acked but never seen sent (the capture
                 * started mid-transfer) says nothing of loss or delay. */
                if (s->sends) {
                    gint64 delay = now - slice_ns(t, i, SLICE_T_LAST);
                    fl->acked_slices++;
                    fl->acked_sends += s->sends;
                    if (delay > fl->max_ack_delay_ns)
                        fl->max_ack_delay_ns = delay;
                }
            }
        } else if (s->acked_in) {
            fr->cleared++;
        }
    }
}

/* What the ack means for t once applied: progress, a regression, the
 * completing ack, a repeated all-ones ack, or a duplicate. Returns TRUE
 * when it completes the chunk. */
static gboolean ack_outcome(packet_info *pinfo, const chunk_ack_info_t *ack, chunk_transfer_t *t,
                            frame_rec_t *fr, gint64 now)
{
    chunk_flow_t *fl = t->flow;
    guint32 n = t->num_slices;

    t->acked_count += fr->newly;
    if (fr->newly) {
        t->progress_ns = now;
        t->progress_frame = pinfo->num;
        t->stall_frame = 0;
    }
    /* A reordered ack regresses once; a receiver that reset keeps
     * regressing: only two regressing acks in a row are a problem. */
    if (fr->cleared) {
        fr->notes |= N_REGRESSED;
        if (t->prev_ack_regressed)
            fr->flags |= CHUNK_F_REGRESSION;
    }
    t->prev_ack_regressed = fr->cleared != 0;
    if (ack->acked_count == n && !t->complete_frame) {
        t->complete_frame = pinfo->num;
        t->complete_ns = now;
        fr->notes |= N_COMPLETE;
        fl->completed++;
        fl->last_done_frame = pinfo->num;
        fl->last_done_chunk = t->chunk_id;
        fl->last_done_ns = now;
        return TRUE;
    }
    if (ack->acked_count == n) {
        fr->notes |= N_STALE_ACK;
        fr->info_frame = t->complete_frame;
    } else if (!fr->newly) {
        fr->notes |= N_DUP_ACK;
    }
    return FALSE;
}

/* Pacing. The completing ack may go at once (the final ack:
 * docs/robustness.md), so it is neither checked nor the reference for the
 * next one; a copy of the previous ack arriving soon after it is a network
 * duplicate. One gap
 * says little once jitter is involved, so the rate is judged over
 * CHUNK_PACED_WINDOW acks: gaps that add up to less than TOO_FAST_PERCENT
 * of as many intervals. */
static void check_ack_pacing(packet_info *pinfo, const chunk_ack_info_t *ack, chunk_flow_t *fl,
                             frame_rec_t *fr, gboolean completes, gint64 now)
{
    gint64 interval = ms_to_ns(pref_ack_interval_ms);
    gboolean netdup = fl->has_last_ack && fl->last_ack_chunk == ack->chunk_id &&
                      fl->last_ack_count == ack->acked_count && fr->newly == 0 &&
                      now - fl->last_ack_ns < interval / ACK_FAST_DIVISOR;
    if (fl->has_paced_ack) {
        fr->ref_frame = fl->paced_ack_frame;
        fr->delta_ns = now - fl->paced_ack_ns;
    }
    if (!completes && !netdup) {
        if (fl->has_paced_ack) {
            gboolean fast = fr->delta_ns < interval / ACK_FAST_DIVISOR;
            /* One ack per slice: a run of fast acks each answering at most
             * one slice. */
            if (fast && fl->slices_since_ack <= 1)
                fl->one_per_slice_run++;
            else
                fl->one_per_slice_run = 0;
            if (fl->one_per_slice_run >= AMPLIFICATION_RUN)
                fr->flags |= CHUNK_F_AMPLIFICATION;
        }
        fl->paced_ring[fl->paced_count % CHUNK_PACED_WINDOW] = now;
        fl->paced_count++;
        if (fl->paced_count >= CHUNK_PACED_WINDOW &&
            now - fl->paced_ring[fl->paced_count % CHUNK_PACED_WINDOW] <
                interval * (CHUNK_PACED_WINDOW - 1) * TOO_FAST_PERCENT / 100)
            fr->flags |= CHUNK_F_TOO_FAST;
        fl->has_paced_ack = TRUE;
        fl->paced_ack_frame = pinfo->num;
        fl->paced_ack_ns = now;
    }
    fl->has_last_ack = TRUE;
    fl->last_ack_chunk = ack->chunk_id;
    fl->last_ack_count = ack->acked_count;
    fl->last_ack_ns = now;
    fl->slices_since_ack = 0;
}

static frame_rec_t *analyse_ack(tvbuff_t *tvb, packet_info *pinfo, const chunk_ack_info_t *ack,
                                frame_rec_t *fr)
{
    chunk_bytes += tvb_reported_length(tvb);
    chunk_flow_t *fl = get_flow(pinfo, ack->conv, TRUE);
    gint64 now = au_ns(&pinfo->abs_ts);
    fr->flow = fl;
    fl->acks++;
    fl->nc_acks_open = FALSE;   /* an ack of the flow captured again */
    if (now > capture_last_ns)
        capture_last_ns = now;

    chunk_transfer_t *t = flow_transfer(fl, (guint16)ack->chunk_id);
    fr->t = t;
    gboolean completes = FALSE;
    if (!t) {
        /* Before any slice of the stream this is most likely a capture
         * that started mid-transfer: a note. Once the sender is seen
         * sending, an ack for a chunk it never sent is a problem. */
        if (fl->cur && ack->acked_count && chunk_newer((guint16)ack->chunk_id, fl->cur->chunk_id) &&
            ((guint16)(ack->chunk_id - fl->cur->chunk_id) == 1 || fl->nc_open ||
             now - MAX(fl->cur->last_ns, fl->has_last_ack ? fl->last_ack_ns : G_MININT64) >
                 2 * ms_to_ns(pref_ack_interval_ms))) {
            /* The receiver holds slices of the next chunk, which the
             * capture never saw (or of a later one, after such an ack, or
             * after a silence of the stream longer than two ack intervals):
             * slices the capture missed, not a chunk never sent. */
            if (!fl->nc_open) {
                fr->notes |= N_NOT_CAPTURED;
                fr->info_frame = ack->acked_count;
                fl->nc_open = TRUE;
            } else {
                fr->notes |= N_IN_GAP;
            }
        } else if (fl->cur) {
            fr->flags |= CHUNK_F_UNKNOWN_CHUNK;
        } else {
            fr->notes |= N_ACK_BEFORE_SLICES;
        }
    } else {
        t->acks++;
        if (fl->cur && fl->cur != t && chunk_newer(fl->cur->chunk_id, t->chunk_id)) {
            fl->has_old_ack = TRUE;
            fl->old_ack_ns = now;
        }
        t->last_frame = pinfo->num;
        t->last_ns = now;
        if (ack->num_slices != t->num_slices) {
            fr->flags |= CHUNK_F_COUNT_MISMATCH;
        } else if (!t->slices) {
            fr->notes |= N_CAPPED;
        } else {
            apply_ack_bits(pinfo, ack, t, fr, now);
            completes = ack_outcome(pinfo, ack, t, fr, now);
        }
    }

    check_ack_pacing(pinfo, ack, fl, fr, completes, now);
    if (t)
        t->problems |= fr->flags;
    return fr;
}

/* Starts the analysis of a packet (cs_sp_begin_packet; the caller ends it
 * with cs_sp_end_packet) and returns the frame's record, made on an earlier
 * visit. In tshark's single pass there is none: the frame is visited once,
 * so its record is neither looked up nor kept. */
static frame_rec_t *begin_record(packet_info *pinfo)
{
    sp_transient = cs_sp_begin_packet(pinfo, pref_single_pass);
    rec_scope = cs_sp_record_scope(pinfo, sp_transient);
    if (sp_transient)
        return NULL;
    return (frame_rec_t *)p_get_proto_data(rec_scope, pinfo, proto_chunk_a, PDATA_FRAME);
}

/* A new, zeroed record: kept in the file scope for later visits, or, in
 * tshark's single pass, the caller's `local` (nothing keeps it past the
 * packet). */
static frame_rec_t *new_record(frame_rec_t *local)
{
    if (sp_transient)
        return memset(local, 0, sizeof *local);
    return wmem_new0(rec_scope, frame_rec_t);
}

static void keep_record(packet_info *pinfo, frame_rec_t *fr)
{
    if (!sp_transient)
        p_add_proto_data(rec_scope, pinfo, proto_chunk_a, PDATA_FRAME, fr);
}

static void add_gen_uint(proto_tree *tree, int hf, tvbuff_t *tvb, guint32 v)
{
    if (tree)
        proto_item_set_generated(proto_tree_add_uint(tree, hf, tvb, 0, 0, v));
}

static void add_gen_time(proto_tree *tree, int hf, tvbuff_t *tvb, gint64 ns)
{
    nstime_t t = au_nstime(ns);
    if (tree)
        proto_item_set_generated(proto_tree_add_time(tree, hf, tvb, 0, 0, &t));
}

/* Missing slices of t as ranges ("3-5,17"), cut at a range boundary with
 * ",..." so that a message holding it stays well under Wireshark's
 * 240-character item label. */
static char *missing_short(wmem_allocator_t *scope, const chunk_transfer_t *t, gsize max)
{
    return au_ranges_cut(scope, chunk_analysis_missing_ranges(scope, t), max);
}

/* Fewest and most sends of t's missing slices; FALSE when none is missing. */
static gboolean missing_sends(const chunk_transfer_t *t, guint32 *lo, guint32 *hi, guint32 *first)
{
    gboolean any = FALSE;
    for (guint32 i = 0; i < t->num_slices; i++) {
        if (t->slices[i].acked_in)
            continue;
        guint32 n = t->slices[i].sends;
        if (!any) {
            *lo = *hi = n;
            *first = i;
            any = TRUE;
        }
        if (n < *lo)
            *lo = n;
        if (n > *hi)
            *hi = n;
    }
    return any;
}

#define CHECK_NOT_LISTENING \
    "The sender does not act on the acks: check that ack packets reach the chunk sender and that it reads " \
    "their chunk id and bitfield right (bit order, variant). Captured at the receiver, lost acks look the " \
    "same: capture at the sender to tell."

/* End-of-capture diagnosis of an unfinished transfer in plain words; needs
 * the state after the whole capture (so only at the end of a pass). Each
 * part is one or two sentences ending in '.', under 240 characters. */
gboolean chunk_analysis_diagnose(wmem_allocator_t *scope, const chunk_transfer_t *t, chunk_diagnosis_t *d)
{
    const chunk_flow_t *fl = t->flow;
    if (!t->slices) {
        d->what = wmem_strdup_printf(scope,
            "Not analysed: chunk %u started after the analysis reached its memory cap; its %u slice packets and %u acks were only decoded.",
            t->chunk_id, t->slice_pkts, t->acks);
        d->check = wmem_strdup_printf(scope,
            "The cap (per-slice state above %u MiB + %u bytes per chunk packet byte) guards against hostile captures: split the capture (editcap -c) to analyse this transfer.",
            CHUNK_STATE_FLOOR >> 20, CHUNK_STATE_PER_BYTE);
        return TRUE;
    }
    if (t->complete_frame && (t->problems & CHUNK_F_NOT_LISTENING) && fl->cur == t) {
        d->what = wmem_strdup_printf(scope,
            "Sender not listening: the receiver completed chunk %u in frame %u, yet the sender resent acked slices %u times and never moved on.",
            t->chunk_id, t->complete_frame, t->wasted);
        d->check = CHECK_NOT_LISTENING;
        return TRUE;
    }
    if (t->complete_frame || t->done_unseen)
        return FALSE;
    char *missing = missing_short(scope, t, DIAG_MISSING_MAX_LEN);
    guint32 nmiss = t->num_slices - t->acked_count;
    if (t->acks == 0 && fl->acks == 0) {
        d->what = wmem_strdup_printf(scope,
            "Silent receiver: %u slice packets of chunk %u went to %s:%u and no ack for any chunk of this stream is in the capture.",
            t->slice_pkts, t->chunk_id, address_to_str(scope, &fl->dst), fl->dport);
        d->check = "Check that the receiver runs and listens on that port, that no firewall or NAT drops its acks, and that it answers from that port (acks from another port show as \"ack before any slice\" notes).";
        return TRUE;
    }
    if (t->acks == 0 && fl->completed) {
        if (t->prev_done_frame)
            d->what = wmem_strdup_printf(scope,
                "Receiver not reading: chunk %u completed in frame %u, then %u slice packets of chunk %u got no ack at all.",
                t->prev_done_chunk, t->prev_done_frame, t->slice_pkts, t->chunk_id);
        else
            d->what = wmem_strdup_printf(scope,
                "Receiver not reading: the receiver completed an earlier chunk, then %u slice packets of chunk %u got no ack at all.",
                t->slice_pkts, t->chunk_id);
        d->check = "It still holds the completed chunk (readyToRead stays set) and discards the next one: check that the game pops completed chunks every frame, also during a load screen.";
        return TRUE;
    }
    if (t->acks == 0) {
        d->what = wmem_strdup_printf(scope,
            "No ack for chunk %u: %u slice packets and not one ack for it, although the receiver acks other chunks of this stream.",
            t->chunk_id, t->slice_pkts);
        d->check = "The receiver ignores this chunk's slices: check the chunk id it expects (after a restart or an id wrap) and its slice count and size limits.";
        return TRUE;
    }
    if (t->problems & CHUNK_F_NOT_LISTENING) {
        d->what = wmem_strdup_printf(scope,
            "Sender not listening: acks showed slices of chunk %u as received, yet the sender resent them %u times; still missing %s.",
            t->chunk_id, t->wasted, missing);
        d->check = CHECK_NOT_LISTENING;
        return TRUE;
    }
    if (t->stall_frame || t->first_stall_frame) {
        guint32 since = t->stall_frame ? t->stall_since_frame : t->progress_frame;
        guint32 lo = 0, hi = 0, first = 0;
        missing_sends(t, &lo, &hi, &first);
        if (nmiss == 1 && t->acked_count)
            d->what = wmem_strdup_printf(scope,
                "Stalled: slice %u of chunk %u was sent %u times and never acked, while every other slice is; no progress since frame %u.",
                first, t->chunk_id, hi, since);
        else if (lo == hi)
            d->what = wmem_strdup_printf(scope,
                "Stalled: slices %s (%u of %u) of chunk %u were sent %u times each and never acked; no progress since frame %u.",
                missing, nmiss, t->num_slices, t->chunk_id, hi, since);
        else
            d->what = wmem_strdup_printf(scope,
                "Stalled: slices %s (%u of %u) of chunk %u were sent %u to %u times each and never acked; no progress since frame %u.",
                missing, nmiss, t->num_slices, t->chunk_id, lo, hi, since);
        if (t->acked_count == 0)
            d->check = "The receiver answers but accepts none of these slices: check that it expects this chunk id and slice count, and what it does with a rejected slice.";
        else if (nmiss == 1)
            d->check = "One slice lost every time: look for something that drops that one datagram (its size? a filter? the MTU?) or a receiver that rejects it (its slice id or size checks).";
        else
            d->check = "The same slices are lost every time while others get through: look for something that drops those datagrams (their size? a filter?) or a receiver that rejects them.";
        return TRUE;
    }
    /* Quiet at the end: captured at the receiver, a slice that never
     * arrives leaves nothing to see once the rest is acked. */
    gint64 quiet = capture_last_ns - t->last_ns;
    if (quiet > ms_to_ns(pref_stall_ms)) {
        d->what = wmem_strdup_printf(scope,
            "Incomplete at end of capture: chunk %u has %u/%u slices acked, missing %s; nothing of it in the last %.1f s of the capture.",
            t->chunk_id, t->acked_count, t->num_slices, missing, (double)quiet / 1e9);
        d->check = "The sender stopped sending it (gave up, reset or closed), or, captured at the receiver, its slices stopped arriving: look at the sender at that time.";
        return TRUE;
    }
    d->what = wmem_strdup_printf(scope,
        "Incomplete at end of capture: chunk %u has %u/%u slices acked, missing %s.",
        t->chunk_id, t->acked_count, t->num_slices, missing);
    d->check = "It was still under way when the capture ended: capture for longer to see whether it completes.";
    return TRUE;
}

char *chunk_analysis_diagnosis(wmem_allocator_t *scope, const chunk_transfer_t *t)
{
    chunk_diagnosis_t d;
    if (!chunk_analysis_diagnose(scope, t, &d))
        return NULL;
    return wmem_strdup_printf(scope, "%s %s", d.what, d.check);
}

/* chunk.analysis.flags, its value followed by the names of the problems. */
static void show_flags(packet_info *pinfo, tvbuff_t *tvb, proto_tree *tree, guint32 flags)
{
    if (!tree)
        return;   /* only an item: no text to build for it */
    wmem_strbuf_t *sb = wmem_strbuf_new(pinfo->pool, "");
    for (guint i = 0; i < CHUNK_F_COUNT; i++) {
        if (flags & (1u << i))
            wmem_strbuf_append_printf(sb, "%s%s", wmem_strbuf_get_len(sb) ? ", " : "",
                                      chunk_analysis_flag_name(1u << i));
    }
    proto_item *it = proto_tree_add_uint_format_value(tree, hf_chunk_flags, tvb, 0, 0, flags,
                        "0x%04x (%s)", flags, wmem_strbuf_get_str(sb));
    proto_item_set_generated(it);
}

/* On the last frame of an unfinished transfer, with the whole capture seen
 * (second pass, GUI): why it did not finish. */
static gboolean is_last_of_unfinished(packet_info *pinfo, const chunk_transfer_t *t)
{
    return t && PINFO_FD_VISITED(pinfo) && t->last_frame == pinfo->num && !t->complete_frame;
}

static void show_end_of_capture(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at,
                                const chunk_transfer_t *t)
{
    chunk_diagnosis_t d;
    if (!chunk_analysis_diagnose(pinfo->pool, t, &d))
        return;
    proto_item *ti = proto_tree_add_string(at, hf_chunk_diagnosis, tvb, 0, 0, d.what);
    proto_item_set_generated(ti);
    /* The diagnosis item shows what is incomplete: the expert info, with its
     * fixed summary, hangs on it. */
    au_expert_add_info(pinfo, ti, &ei_chunk_incomplete);
    proto_item_set_generated(proto_tree_add_string(at, hf_chunk_check, tvb, 0, 0, d.check));
}

/* A slice sent after an ack in the capture showed it: wasted, and why, as
 * far as the capture tells. The sender's soonest reaction to an ack seen in
 * this capture (react_us) says where the capture was made: at the sender
 * (a millisecond or so) an ack in the capture had reached it; at the
 * receiver (a round trip) a slice that arrives sooner after the ack than
 * that was sent before the ack could arrive. Sooner than the reaction: the
 * ack was still on its way; later: it was lost, or the sender did not apply
 * it in time. Before the capture shows a reaction it cannot tell. */
static void already_acked_expert(packet_info *pinfo, proto_item *ti, const frame_rec_t *fr,
                                 const chunk_slice_state_t *s)
{
    double gap_ms = (double)(au_ns(&pinfo->abs_ts) - slice_ns(fr->t, fr->slice_id, SLICE_T_ACKED)) / 1e6;
    if (fr->react_us == REACT_UNKNOWN)
        AU_EXPERT(pinfo, ti, &ei_chunk_already_acked,
            "Slice %u sent %.0f ms after the ack in frame %u showed it (wasted): that ack was on its way or lost; the capture shows no reaction to an ack yet to tell which.",
            fr->slice_id, gap_ms, s->acked_in);
    else if (gap_ms * 1000.0 < (double)fr->react_us)
        AU_EXPERT(pinfo, ti, &ei_chunk_already_acked,
            "Slice %u sent %.0f ms after the ack in frame %u showed it, sooner than the sender reacts to an ack here (%.0f ms): the ack was still on its way (wasted, not lost).",
            fr->slice_id, gap_ms, s->acked_in, (double)fr->react_us / 1000.0);
    else
        AU_EXPERT(pinfo, ti, &ei_chunk_already_acked,
            "Slice %u sent %.0f ms after the ack in frame %u showed it, later than the sender reacts to an ack here (%.0f ms): that ack was lost or not applied (wasted).",
            fr->slice_id, gap_ms, s->acked_in, (double)fr->react_us / 1000.0);
}

/* The "Transfer analysis" subtree, made when there is something to put in it. */
static proto_tree *analysis_tree(proto_tree **at, proto_tree *tree, tvbuff_t *tvb)
{
    if (!*at && tree) {   /* without a tree every item is NULL anyway */
        proto_item *ti = NULL;
        *at = proto_tree_add_subtree(tree, tvb, 0, 0, ett_chunk_analysis, &ti, "Transfer analysis");
        proto_item_set_generated(ti);
    }
    return *at;
}
/* The analysis subtree under tree, made on first use; each show_* function
 * has proto_tree **atp, pointing at the one subtree of its packet. */
#define AT analysis_tree(atp, tree, tvb)

/* The packets the capture missed here: a note with their count. */
static void show_not_captured(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, const frame_rec_t *fr)
{
    proto_item *ti = proto_tree_add_uint(at, hf_chunk_not_captured, tvb, 0, 0, fr->info_frame);
    proto_item_set_generated(ti);
    au_expert_add_info(pinfo, ti, &ei_chunk_not_captured);
}

static void capped_expert(packet_info *pinfo, proto_item *ti, const chunk_transfer_t *t)
{
    AU_EXPERT(pinfo, ti, &ei_chunk_capped,
        "Not analysed: chunk %u started after the analysis reached its memory cap (per-slice state above %u MiB + %u x the chunk packet bytes seen); its packets are decoded only.",
        t->chunk_id, CHUNK_STATE_FLOOR >> 20, CHUNK_STATE_PER_BYTE);
}

/* A slice's resend, and whether an ack had already shown it (or, looking
 * forward, which ack first does). s is NULL when the slice has no state. */
static void show_slice_sends(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree **atp,
                             const frame_rec_t *fr, const chunk_slice_state_t *s)
{
    const chunk_transfer_t *t = fr->t;
    proto_item *ti;

    if (fr->notes & N_RESEND) {
        ti = proto_tree_add_uint(AT, hf_chunk_resend, tvb, 0, 0, fr->resend);
        proto_item_set_generated(ti);
        AU_EXPERT(pinfo, ti, &ei_chunk_resend, "Resend %u of slice %u of chunk %u (previous send frame %u).",
                               fr->resend, fr->slice_id, t->chunk_id, fr->ref_frame);
        add_gen_uint(AT, hf_chunk_resend_of, tvb, fr->ref_frame);
        if (s && s->first_frame != fr->ref_frame)
            add_gen_uint(AT, hf_chunk_first_send, tvb, s->first_frame);
        {
            nstime_t d = au_nstime(fr->delta_ns);
            ti = proto_tree_add_time(AT, hf_chunk_since_last, tvb, 0, 0, &d);
        }
        proto_item_set_generated(ti);
        if (fr->flags & CHUNK_F_TOO_SOON)
            AU_EXPERT(pinfo, ti, &ei_chunk_too_soon,
                "Slice resent %.1f ms after its last send (minimum %u ms, %u ms allowed for jitter): the sender's resend delay is not applied.",
                (double)fr->delta_ns / 1e6, pref_min_resend_ms, pref_resend_jitter_ms);
    }
    if (s && (fr->notes & N_ALREADY_ACKED)) {
        ti = proto_tree_add_uint(AT, hf_chunk_already_acked_in, tvb, 0, 0, s->acked_in);
        proto_item_set_generated(ti);
        if (fr->flags & CHUNK_F_NOT_LISTENING)
            AU_EXPERT(pinfo, ti, &ei_chunk_not_listening,
                "Slice %u sent although %u acks since frame %u (over the stall threshold ago) showed it acked: the sender is not applying acks.",
                fr->slice_id, fr->acks_seen, s->acked_in);
        else
            already_acked_expert(pinfo, ti, fr, s);
    } else if (s && s->acked_in) {
        /* Forward-looking: known once the whole capture was seen. */
        add_gen_uint(AT, hf_chunk_acked_in, tvb, s->acked_in);
        add_gen_time(AT, hf_chunk_ack_time, tvb,
                     slice_ns(t, fr->slice_id, SLICE_T_ACKED) - slice_ns(t, fr->slice_id, SLICE_T_FIRST));
    }
}

/* The stall found at this slice, if any: since when, and what is missing. */
static void show_slice_stall(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree **atp,
                             const frame_rec_t *fr)
{
    const chunk_transfer_t *t = fr->t;
    proto_item *ti;

    if (!(fr->flags & (CHUNK_F_STALL | CHUNK_F_SILENT_RECEIVER | CHUNK_F_NOT_READING)))
        return;
    const char *missing = (const char *)p_get_proto_data(rec_scope, pinfo, proto_chunk_a, PDATA_STALL);
    guint32 since = (guint32)GPOINTER_TO_UINT(p_get_proto_data(rec_scope, pinfo, proto_chunk_a, PDATA_STALL_SINCE));
    ti = proto_tree_add_uint(AT, hf_chunk_stall_since, tvb, 0, 0, since);
    proto_item_set_generated(ti);
    if (fr->flags & CHUNK_F_STALL)
        AU_EXPERT(pinfo, ti, &ei_chunk_stall,
            "Stall: no new slice of chunk %u acked for over %u ms (since frame %u) while slices keep coming; never acked: %s.",
            t->chunk_id, pref_stall_ms, since, missing ? missing : "?");
    else if (fr->flags & CHUNK_F_NOT_READING)
        AU_EXPERT(pinfo, ti, &ei_chunk_not_reading,
            "Receiver not reading: chunk %u sent for over %u ms after the previous chunk completed, and no ack for it: the completed chunk is not popped.",
            t->chunk_id, pref_stall_ms);
    else
        AU_EXPERT(pinfo, ti, &ei_chunk_silent,
            "Silent receiver: chunk %u sent for over %u ms and no ack for it so far; unacked: %s.",
            t->chunk_id, pref_stall_ms, missing ? missing : "?");
}

/* The end-of-capture expert info of show_end_of_capture, without a tree. */
static void end_of_capture_expert(packet_info *pinfo, const chunk_transfer_t *t)
{
    chunk_diagnosis_t d;
    if (chunk_analysis_diagnose(pinfo->pool, t, &d))
        au_expert_add(pinfo, &ei_chunk_incomplete);
}

/* show_slice without a tree (the first pass, tshark's single pass, the
 * packet list, taps): there every item is NULL, so all it adds are its
 * expert infos, hung on no item with their fixed summaries (what AU_EXPERT
 * and au_expert_add_info do without an item). The same expert infos in the
 * same order, without the calls that make nothing and without formatting
 * their details. */
static void slice_experts(packet_info *pinfo, const frame_rec_t *fr)
{
    const chunk_transfer_t *t = fr->t;
    gboolean has_state = !(fr->flags & CHUNK_F_COUNT_MISMATCH) && t->slices;

    if (fr->notes & N_CAPPED)
        au_expert_add(pinfo, &ei_chunk_capped);
    if (fr->notes & N_RESEND) {
        au_expert_add(pinfo, &ei_chunk_resend);
        if (fr->flags & CHUNK_F_TOO_SOON)
            au_expert_add(pinfo, &ei_chunk_too_soon);
    }
    if (has_state && (fr->notes & N_ALREADY_ACKED))
        au_expert_add(pinfo, (fr->flags & CHUNK_F_NOT_LISTENING) ? &ei_chunk_not_listening
                                                                 : &ei_chunk_already_acked);
    if (fr->notes & N_STALE)
        au_expert_add(pinfo, &ei_chunk_stale);
    if (fr->notes & N_NOT_CAPTURED)
        au_expert_add(pinfo, &ei_chunk_not_captured);
    if (fr->flags & CHUNK_F_EARLY)
        au_expert_add(pinfo, &ei_chunk_early);
    if (fr->flags & CHUNK_F_COUNT_MISMATCH)
        au_expert_add(pinfo, &ei_chunk_count_mismatch);
    if (fr->flags & CHUNK_F_SIZE_MISMATCH)
        au_expert_add(pinfo, &ei_chunk_size_mismatch);
    if (fr->flags & CHUNK_F_STALL)
        au_expert_add(pinfo, &ei_chunk_stall);
    else if (fr->flags & CHUNK_F_NOT_READING)
        au_expert_add(pinfo, &ei_chunk_not_reading);
    else if (fr->flags & CHUNK_F_SILENT_RECEIVER)
        au_expert_add(pinfo, &ei_chunk_silent);
    if (is_last_of_unfinished(pinfo, t))
        end_of_capture_expert(pinfo, t);
}

static void show_slice(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                       const chunk_slice_info_t *slice, const frame_rec_t *fr)
{
    const chunk_transfer_t *t = fr->t;
    proto_tree *at = NULL, **atp = &at;
    proto_item *ti;
    guint32 flags = fr->flags;
    gboolean last_of_transfer;

    if (!tree) {
        slice_experts(pinfo, fr);
        return;
    }
    last_of_transfer = is_last_of_unfinished(pinfo, t);
    if (last_of_transfer)
        flags |= CHUNK_F_INCOMPLETE;

    add_gen_uint(tree, hf_chunk_stream, tvb, fr->flow->stream);
    add_gen_uint(tree, hf_chunk_transfer, tvb, t->index);

    const chunk_slice_state_t *s = (fr->flags & CHUNK_F_COUNT_MISMATCH) || !t->slices ? NULL : &t->slices[fr->slice_id];

    if (fr->notes & N_CAPPED)
        capped_expert(pinfo, AT, t);
    show_slice_sends(tvb, pinfo, tree, atp, fr, s);
    if (fr->notes & N_STALE) {
        ti = proto_tree_add_uint(AT, hf_chunk_stale, tvb, 0, 0, fr->info_frame);
        proto_item_set_generated(ti);
        AU_EXPERT(pinfo, ti, &ei_chunk_stale,
            "Stale slice: the receiver completed chunk %u in frame %u (the final ack was lost or ignored).",
            t->chunk_id, fr->info_frame);
    }
    if (fr->notes & N_NOT_CAPTURED)
        show_not_captured(tvb, pinfo, AT, fr);
    if (fr->flags & CHUNK_F_EARLY) {
        ti = proto_tree_add_uint(AT, hf_chunk_prev_chunk, tvb, 0, 0, fr->info_frame);
        proto_item_set_generated(ti);
        AU_EXPERT(pinfo, ti, &ei_chunk_early,
            "Chunk %u started before the previous chunk (first frame %u) was fully acked: one chunk in flight is broken.",
            t->chunk_id, fr->info_frame);
    }
    if (fr->flags & CHUNK_F_COUNT_MISMATCH)
        AU_EXPERT(pinfo, AT, &ei_chunk_count_mismatch,
            "Slice count %u differs from %u in the chunk's first slice (frame %u): a receiver ignores it.",
            slice->num_slices, t->num_slices, t->first_frame);
    if (fr->flags & CHUNK_F_SIZE_MISMATCH)
        AU_EXPERT(pinfo, AT, &ei_chunk_size_mismatch,
            "Slice carries %u bytes, earlier slices of this chunk imply %u.",
            slice->slice_bytes, fr->slice_id == t->num_slices - 1 ? t->last_bytes : t->slice_size);

    show_slice_stall(tvb, pinfo, tree, atp, fr);
    if (t->reassembled_in && t->reassembled_in != pinfo->num) {
        add_gen_uint(tree, hf_chunk_reassembled_in, tvb, t->reassembled_in);
    }
    if (last_of_transfer)
        show_end_of_capture(tvb, pinfo, AT, t);
    if (flags)
        show_flags(pinfo, tvb, AT, flags);
}

/* The completing ack: chunk, transfer time, size and goodput. */
static void show_ack_complete(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree **atp,
                              const chunk_transfer_t *t)
{
    gint64 dur = t->complete_ns - t->first_ns;
    proto_item *ti = proto_tree_add_uint(AT, hf_chunk_chunk_complete, tvb, 0, 0, t->chunk_id);
    proto_item_set_generated(ti);
    add_gen_time(AT, hf_chunk_transfer_time, tvb, dur);
    if (t->size_known) {
        add_gen_uint(AT, hf_chunk_chunk_size, tvb, t->size);
        if (dur > 0) {
            proto_item *g = proto_tree_add_double(AT, hf_chunk_goodput, tvb, 0, 0,
                                                  (double)t->size * 8e9 / (double)dur);
            proto_item_set_generated(g);
        }
    }
    AU_EXPERT(pinfo, ti, &ei_chunk_complete,
        "Chunk %u complete: %u slices acked, transfer time %.3f s.",
        t->chunk_id, t->num_slices, (double)dur / 1e9);
}

/* show_ack without a tree: its expert infos alone, as slice_experts. */
static void ack_experts(packet_info *pinfo, const frame_rec_t *fr)
{
    const chunk_transfer_t *t = fr->t;

    if (!t && (fr->notes & (N_NOT_CAPTURED | N_IN_GAP))) {
        if (fr->notes & N_NOT_CAPTURED)
            au_expert_add(pinfo, &ei_chunk_not_captured);
    } else if (!t && (fr->notes & N_ACK_BEFORE_SLICES)) {
        au_expert_add(pinfo, &ei_chunk_ack_before_slices);
    } else if (!t) {
        au_expert_add(pinfo, &ei_chunk_unknown_chunk);
    } else if (fr->flags & CHUNK_F_COUNT_MISMATCH) {
        au_expert_add(pinfo, &ei_chunk_ack_count_mismatch);
    } else if (fr->notes & N_CAPPED) {
        au_expert_add(pinfo, &ei_chunk_capped);
    } else {
        if (fr->notes & N_DUP_ACK)
            au_expert_add(pinfo, &ei_chunk_dup_ack);
        if (fr->notes & N_STALE_ACK)
            au_expert_add(pinfo, &ei_chunk_stale_ack);
        if (fr->notes & N_REGRESSED)
            au_expert_add(pinfo, (fr->flags & CHUNK_F_REGRESSION) ? &ei_chunk_regression
                                                                  : &ei_chunk_regression_note);
        if (fr->notes & N_COMPLETE)
            au_expert_add(pinfo, &ei_chunk_complete);
    }
    if (is_last_of_unfinished(pinfo, t))
        end_of_capture_expert(pinfo, t);
    if (fr->flags & CHUNK_F_AMPLIFICATION)
        au_expert_add(pinfo, &ei_chunk_amplification);
    else if (fr->flags & CHUNK_F_TOO_FAST)
        au_expert_add(pinfo, &ei_chunk_too_fast);
}

static void show_ack(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                     const chunk_ack_info_t *ack, const frame_rec_t *fr)
{
    const chunk_transfer_t *t = fr->t;
    proto_tree *at = NULL, **atp = &at;
    proto_item *ti;
    guint32 flags = fr->flags;

    if (!tree) {
        ack_experts(pinfo, fr);
        return;
    }

    add_gen_uint(tree, hf_chunk_stream, tvb, fr->flow->stream);
    if (t)
        add_gen_uint(tree, hf_chunk_transfer, tvb, t->index);

    if (!t && (fr->notes & (N_NOT_CAPTURED | N_IN_GAP))) {
        if (fr->notes & N_NOT_CAPTURED)
            show_not_captured(tvb, pinfo, AT, fr);
    } else if (!t && (fr->notes & N_ACK_BEFORE_SLICES)) {
        AU_EXPERT(pinfo, AT, &ei_chunk_ack_before_slices,
            "Ack for chunk %u before any slice of this stream: the capture started mid-transfer, or the acks go to a peer that sends no slices.",
            ack->chunk_id);
    } else if (!t) {
        AU_EXPERT(pinfo, AT, &ei_chunk_unknown_chunk,
            "Ack for chunk %u, but no slice of that chunk was seen in this stream: the sender is not sending it.",
            ack->chunk_id);
    } else if (fr->flags & CHUNK_F_COUNT_MISMATCH) {
        AU_EXPERT(pinfo, AT, &ei_chunk_ack_count_mismatch,
            "Ack has %u slices, the chunk has %u: the sender ignores it.",
            ack->num_slices, t->num_slices);
    } else if (fr->notes & N_CAPPED) {
        capped_expert(pinfo, AT, t);
    } else {
        ti = proto_tree_add_uint(AT, hf_chunk_newly_acked, tvb, 0, 0, fr->newly);
        proto_item_set_generated(ti);
        if (fr->newly_bits && tree) {
            au_idset_t newly = au_idset_set_bits(fr->newly_bits, t->num_slices);
            ti = proto_tree_add_string(AT, hf_chunk_newly_acked_slices, tvb, 0, 0,
                                       au_ranges(pinfo->pool, &newly, 0));
            proto_item_set_generated(ti);
        }
        if (fr->notes & N_DUP_ACK) {
            ti = proto_tree_add_boolean(AT, hf_chunk_duplicate_ack, tvb, 0, 0, TRUE);
            proto_item_set_generated(ti);
            au_expert_add_info(pinfo, ti, &ei_chunk_dup_ack);
        }
        if (fr->notes & N_STALE_ACK) {
            ti = proto_tree_add_uint(AT, hf_chunk_completed_in, tvb, 0, 0, fr->info_frame);
            proto_item_set_generated(ti);
            AU_EXPERT(pinfo, ti, &ei_chunk_stale_ack,
                "Repeated all-ones ack for chunk %u (completed in frame %u): the receiver answers stale slices.",
                t->chunk_id, fr->info_frame);
        }
        if (fr->notes & N_REGRESSED) {
            ti = proto_tree_add_uint(AT, hf_chunk_regressed, tvb, 0, 0, fr->cleared);
            proto_item_set_generated(ti);
            if (fr->flags & CHUNK_F_REGRESSION)
                AU_EXPERT(pinfo, ti, &ei_chunk_regression,
                    "Ack regression again: %u slices acked earlier are clear here: the receiver lost its state (reset).",
                    fr->cleared);
            else
                AU_EXPERT(pinfo, ti, &ei_chunk_regression_note,
                    "Ack regression: %u slices acked earlier are clear here (a reordered, older ack).",
                    fr->cleared);
        }
        if (fr->notes & N_COMPLETE)
            show_ack_complete(tvb, pinfo, tree, atp, t);
    }
    if (fr->ref_frame) {
        add_gen_uint(AT, hf_chunk_prev_ack, tvb, fr->ref_frame);
        add_gen_time(AT, hf_chunk_ack_delta, tvb, fr->delta_ns);
    }
    if (is_last_of_unfinished(pinfo, t)) {
        flags |= CHUNK_F_INCOMPLETE;
        show_end_of_capture(tvb, pinfo, AT, t);
    }
    if (fr->flags & CHUNK_F_AMPLIFICATION)
        au_expert_add_info(pinfo, AT, &ei_chunk_amplification);
    else if (fr->flags & CHUNK_F_TOO_FAST)
        AU_EXPERT(pinfo, AT, &ei_chunk_too_fast,
            "Acks too fast: %u acks within %.0f ms (interval %u ms).", CHUNK_PACED_WINDOW,
            (double)pref_ack_interval_ms * (CHUNK_PACED_WINDOW - 1) * TOO_FAST_PERCENT / 100.0,
            pref_ack_interval_ms);
    if (flags)
        show_flags(pinfo, tvb, AT, flags);
}

/* Short marks in the Info column, as TCP's "[TCP Retransmission]", so the
 * packet list alone shows what happened. All come from the frame record,
 * fixed on the first pass, so one pass and two show the same; only
 * [Incomplete] needs the whole capture. A mark is selected by the record's
 * CHUNK_F_* flags (low 32 bits) and N_* notes (MARK_NOTE). */
#define MARK_NOTE(n) ((guint64)(n) << 32)

static const au_info_mark_t slice_marks[] = {
    { CHUNK_F_TOO_SOON,          0, " [Too soon]" },
    { CHUNK_F_NOT_LISTENING,     0, " [Not listening]" },
    { MARK_NOTE(N_ALREADY_ACKED), CHUNK_F_NOT_LISTENING | MARK_NOTE(N_STALE), " [Already acked]" },
    { MARK_NOTE(N_STALE),        0, " [Stale]" },
    { CHUNK_F_EARLY,             0, " [Early]" },
    { CHUNK_F_SIZE_MISMATCH,     0, " [Size mismatch]" },
    { CHUNK_F_STALL,             0, " [Stall]" },
    { CHUNK_F_SILENT_RECEIVER,   0, " [Silent receiver]" },
    { CHUNK_F_NOT_READING,       0, " [Not reading]" },
    { CHUNK_F_COUNT_MISMATCH,    0, " [Count mismatch]" },
    { CHUNK_F_INCOMPLETE,        0, " [Incomplete]" },
};

static const au_info_mark_t ack_marks[] = {
    { MARK_NOTE(N_DUP_ACK),      0, " [Duplicate ack]" },
    { MARK_NOTE(N_STALE_ACK),    0, " [Already complete]" },
    { CHUNK_F_REGRESSION,        0, " [Ack regression]" },
    { MARK_NOTE(N_REGRESSED),    CHUNK_F_REGRESSION, " [Reordered]" },
    { CHUNK_F_UNKNOWN_CHUNK,     0, " [Unknown chunk]" },
    { CHUNK_F_AMPLIFICATION,     0, " [One ack per slice]" },
    { CHUNK_F_TOO_FAST,          CHUNK_F_AMPLIFICATION, " [Acks too fast]" },
    { CHUNK_F_COUNT_MISMATCH,    0, " [Count mismatch]" },
    { CHUNK_F_INCOMPLETE,        0, " [Incomplete]" },
};

/* The bits that select fr's marks. */
static guint64 mark_bits(packet_info *pinfo, const frame_rec_t *fr)
{
    guint64 bits = fr->flags | MARK_NOTE(fr->notes);

    if (is_last_of_unfinished(pinfo, fr->t))
        bits |= CHUNK_F_INCOMPLETE;
    return bits;
}

/* The marks' lengths, measured once (mark_lengths(), at registration), so
 * that a packet's marks are copied without measuring each one again. */
static guint8 slice_mark_len[array_length(slice_marks)];
static guint8 ack_mark_len[array_length(ack_marks)];
/* Room for the marks of one packet: a lead of at most 40 characters and
 * every mark of a table (mark_lengths() checks that they fit). */
#define MARKS_BUF_LEN 512
#define MARKS_LEAD_MAX 40

static void mark_lengths(const au_info_mark_t *table, guint8 *len, size_t n)
{
    size_t all = 0;

    for (size_t i = 0; i < n; i++) {
        len[i] = (guint8)strlen(table[i].mark);
        all += len[i];
    }
    DISSECTOR_ASSERT(MARKS_LEAD_MAX + all < MARKS_BUF_LEN);
}

/* Writes at p the marks of table[0..n) that bits selects, in table order
 * (as au_info_marks selects them); returns the end. */
static char *put_marks(char *p, guint64 bits, const au_info_mark_t *table, const guint8 *len, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if ((bits & table[i].when) && !(bits & table[i].unless)) {
            memcpy(p, table[i].mark, len[i]);
            p += len[i];
        }
    }
    return p;
}

static void info_marks(packet_info *pinfo, const frame_rec_t *fr, gboolean is_ack)
{
    if (!pinfo->cinfo)
        return;
    guint64 bits = mark_bits(pinfo, fr);
    /* The marks with a number come first, then the table's; all written
     * here without printf and appended with one call. */
    char buf[MARKS_BUF_LEN], *p = buf;
    if (!is_ack) {
        if (fr->notes & N_RESEND) {
            p = au_put_str(p, " [Resend ");
            p = au_put_uint(p, fr->resend);
            p = au_put_str(p, "]");
        }
        if (bits)
            p = put_marks(p, bits, slice_marks, slice_mark_len, array_length(slice_marks));
    } else {
        if (fr->notes & N_COMPLETE) {
            p = au_put_str(p, " [Chunk ");
            p = au_put_uint(p, fr->t->chunk_id);
            p = au_put_str(p, " complete]");
        }
        if (bits)
            p = put_marks(p, bits, ack_marks, ack_mark_len, array_length(ack_marks));
    }
    if (p == buf)
        return;     /* most packets: nothing to mark */
    *p = '\0';
    au_info_marks(pinfo, buf, 0, NULL, 0);
}

/* Reassembly: each first send of a slice goes to the reassembly table until
 * the chunk is whole; the frame that completes it shows the chunk.
 *
 * In tshark's single pass a transfer's slices go to a buffer of its own
 * instead (common/single-pass.c says why), and the completing frame shows the
 * same tree, data source and export object. */
static void reassemble(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                       const chunk_slice_info_t *slice, frame_rec_t *fr)
{
    chunk_transfer_t *t = fr->t;
    fragment_head *fd = NULL;
    tvbuff_t *rtvb = NULL;

    if (!PINFO_FD_VISITED(pinfo)) {
        /* Only first sends, and not for a transfer over the state cap: its
         * resends are not told apart, and every copy would be kept. */
        if (t->reassembled_in || (fr->flags & (CHUNK_F_COUNT_MISMATCH | CHUNK_F_SIZE_MISMATCH)) ||
            (fr->notes & (N_RESEND | N_CAPPED)))
            return;
        /* Decided at the transfer's first slice reassembled: a transfer
         * begun in the table stays there. */
        if (!t->reasm && sp_transient && !t->in_table)
            t->reasm = cs_sp_buf_new(&sp_pool, t->num_slices, t->slice_size, state_budget());
        if (t->reasm) {
            rtvb = cs_sp_buf_add(&t->reasm, tvb, slice->data_offset, slice->slice_bytes, slice->slice_id,
                                 pinfo, tree, "Reassembled chunk", &chunk_frag_items);
            if (!rtvb)
                return;
            t->reassembled_in = pinfo->num;
        } else {
            t->in_table = TRUE;
            fd = fragment_add_seq_check(&chunk_reassembly_table, tvb, slice->data_offset, pinfo,
                                        t->index, NULL, slice->slice_id, slice->slice_bytes,
                                        slice->slice_id != t->num_slices - 1);
            if (fd)
                t->reassembled_in = pinfo->num;
        }
    } else if (t->reassembled_in == pinfo->num) {
        fd = fragment_get_reassembled_id(&chunk_reassembly_table, pinfo, t->index);
    }
    if (!rtvb) {
        if (!fd)
            return;
        rtvb = process_reassembled_data(tvb, slice->data_offset, pinfo, "Reassembled chunk",
                                        fd, &chunk_frag_items, NULL, tree);
        if (!rtvb)
            return;
        cs_sp_free_later(fd);
    }
    if (have_tap_listener(chunk_eo_tap)) {
        chunk_eo_t *eo = wmem_new0(pinfo->pool, chunk_eo_t);
        eo->t = t;
        eo->len = tvb_captured_length(rtvb);
        eo->data = tvb_get_ptr(rtvb, 0, eo->len);
        tap_queue_packet(chunk_eo_tap, pinfo, eo);
    }
}

/* The statistics' record of frame fr, with what slices and acks share, when
 * a tap listens; NULL otherwise. */
static chunk_tap_info_t *tap_info(packet_info *pinfo, const frame_rec_t *fr, gboolean is_ack)
{
    if (!have_tap_listener(chunk_tap))
        return NULL;
    chunk_tap_info_t *ti = wmem_new0(pinfo->pool, chunk_tap_info_t);
    ti->t = fr->t;
    ti->flow = fr->flow;
    ti->is_ack = is_ack;
    ti->flags = fr->flags;
    return ti;
}

/* The Flow Graph's and the Conversations tab's record of a slice and of an
 * ack (only while one of them listens). */
static void queue_flow_slice(packet_info *pinfo, const frame_rec_t *fr, const chunk_slice_info_t *slice)
{
    chunk_flow_tap_info_t *fi = wmem_new0(pinfo->pool, chunk_flow_tap_info_t);

    fi->flow = fr->flow;
    fi->chunk_id = slice->chunk_id;
    fi->slice_id = slice->slice_id;
    fi->num_slices = slice->num_slices;
    fi->resend = (fr->notes & N_RESEND) ? fr->resend : 0;
    fi->marks = fc_marks(pinfo->pool, mark_bits(pinfo, fr), slice_marks, array_length(slice_marks));
    tap_queue_packet(chunk_flow_tap, pinfo, fi);
}

static void queue_flow_ack(packet_info *pinfo, const frame_rec_t *fr, const chunk_ack_info_t *ack)
{
    chunk_flow_tap_info_t *fi = wmem_new0(pinfo->pool, chunk_flow_tap_info_t);
    const char *marks = fc_marks(pinfo->pool, mark_bits(pinfo, fr), ack_marks, array_length(ack_marks));

    fi->flow = fr->flow;
    fi->is_ack = TRUE;
    fi->chunk_id = ack->chunk_id;
    fi->num_slices = ack->num_slices;
    fi->acked_count = ack->acked_count;
    if (ack->acked) {
        au_idset_t clear = au_idset_zero_bytes(ack->acked, ack->num_slices);
        fi->missing = au_ranges(pinfo->pool, &clear, 200);
    } else {
        fi->missing = "";
    }
    fi->marks = (fr->notes & N_COMPLETE) && fr->t
                    ? wmem_strdup_printf(pinfo->pool, " [Chunk %u complete]%s", fr->t->chunk_id, marks)
                    : marks;
    tap_queue_packet(chunk_flow_tap, pinfo, fi);
}

void chunk_analysis_slice(tvbuff_t *tvb, packet_info *pinfo, proto_tree *chunk_tree,
                          const chunk_slice_info_t *slice)
{
    frame_rec_t local;
    frame_rec_t *fr = begin_record(pinfo);
    if (!fr) {
        if (PINFO_FD_VISITED(pinfo))
            return;   /* not a clean slice on the first pass */
        fr = analyse_slice(tvb, pinfo, slice, new_record(&local));
        keep_record(pinfo, fr);
    }
    /* Also without a tree (first pass, packet list, taps, Expert
     * Information): the expert infos go to the expert tap either way. */
    show_slice(tvb, pinfo, chunk_tree, slice, fr);
    info_marks(pinfo, fr, FALSE);
    if (pref_reassemble)
        reassemble(tvb, pinfo, chunk_tree, slice, fr);
    if (have_tap_listener(chunk_flow_tap))
        queue_flow_slice(pinfo, fr, slice);
    if (chunk_tree && fr->flow)
        chunk_flow_end_fields(chunk_tree, tvb, pinfo, fr->flow, FALSE);
    chunk_tap_info_t *ti = tap_info(pinfo, fr, FALSE);
    if (ti) {
        ti->resend = fr->resend;
        ti->already_acked = (fr->notes & N_ALREADY_ACKED) != 0;
        ti->stale = (fr->notes & N_STALE) != 0;
        tap_queue_packet(chunk_tap, pinfo, ti);
    }
    cs_sp_end_packet(pinfo);
}

void chunk_analysis_ack(tvbuff_t *tvb, packet_info *pinfo, proto_tree *chunk_tree,
                        const chunk_ack_info_t *ack)
{
    frame_rec_t local;
    frame_rec_t *fr = begin_record(pinfo);
    if (!fr) {
        if (PINFO_FD_VISITED(pinfo))
            return;
        fr = analyse_ack(tvb, pinfo, ack, new_record(&local));
        keep_record(pinfo, fr);
    }
    show_ack(tvb, pinfo, chunk_tree, ack, fr);
    info_marks(pinfo, fr, TRUE);
    if (have_tap_listener(chunk_flow_tap))
        queue_flow_ack(pinfo, fr, ack);
    if (chunk_tree && fr->flow)
        chunk_flow_end_fields(chunk_tree, tvb, pinfo, fr->flow, TRUE);
    chunk_tap_info_t *ti = tap_info(pinfo, fr, TRUE);
    if (ti) {
        ti->newly = fr->newly;
        ti->dup = (fr->notes & N_DUP_ACK) != 0;
        ti->stale_ack = (fr->notes & N_STALE_ACK) != 0;
        ti->complete = (fr->notes & N_COMPLETE) != 0;
        tap_queue_packet(chunk_tap, pinfo, ti);
    }
    cs_sp_end_packet(pinfo);
}

static const value_string flag_names[] = {
    { CHUNK_F_TOO_SOON, "resent too soon" },
    { CHUNK_F_NOT_LISTENING, "sender not listening" },
    { CHUNK_F_EARLY, "chunk started early" },
    { CHUNK_F_COUNT_MISMATCH, "slice count mismatch" },
    { CHUNK_F_SIZE_MISMATCH, "slice size mismatch" },
    { CHUNK_F_STALL, "stall" },
    { CHUNK_F_SILENT_RECEIVER, "silent receiver" },
    { CHUNK_F_NOT_READING, "receiver not reading" },
    { CHUNK_F_REGRESSION, "ack regression" },
    { CHUNK_F_UNKNOWN_CHUNK, "ack for a chunk not being sent" },
    { CHUNK_F_TOO_FAST, "acks too fast" },
    { CHUNK_F_AMPLIFICATION, "one ack per slice" },
    { CHUNK_F_INCOMPLETE, "incomplete at end of capture" },
    { 0, NULL }
};

const char *chunk_analysis_flag_name(guint32 flag)
{
    return val_to_str_const(flag, flag_names, "?");
}

void chunk_analysis_register(int proto_chunk, module_t *chunk_module, int eo_tap)
{
    static hf_register_info hf[] = {
        { &hf_chunk_stream, { "Stream index", "chunk.stream", FT_UINT32, BASE_DEC, NULL, 0x0,
            "One per UDP conversation and direction of slices (its acks go the other way)", HFILL } },
        { &hf_chunk_transfer, { "Transfer index", "chunk.transfer", FT_UINT32, BASE_DEC, NULL, 0x0,
            "One per chunk sent in a stream, numbered across the capture", HFILL } },
        { &hf_chunk_flags, { "Analysis flags", "chunk.analysis.flags", FT_UINT32, BASE_HEX, NULL, 0x0,
            "Set on every packet where the analysis found a problem", HFILL } },
        { &hf_chunk_resend, { "Resend", "chunk.analysis.resend", FT_UINT32, BASE_DEC, NULL, 0x0,
            "n on the n-th resend of this slice", HFILL } },
        { &hf_chunk_resend_of, { "Resend of frame", "chunk.analysis.resend_of", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RETRANS_PREV), 0x0,
            "The previous send of this slice", HFILL } },
        { &hf_chunk_since_last, { "Time since last sent", "chunk.analysis.since_last_sent", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_first_send, { "First sent in frame", "chunk.analysis.first_sent_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_already_acked_in, { "Already acked in frame", "chunk.analysis.already_acked_in", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0x0,
            "This slice was acked before this send: wasted", HFILL } },
        { &hf_chunk_acked_in, { "Acked in frame", "chunk.analysis.acked_in", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0x0,
            "The first ack showing this slice", HFILL } },
        { &hf_chunk_ack_time, { "Time from first send to ack", "chunk.analysis.ack_time", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_stale, { "Stale: chunk completed in frame", "chunk.analysis.stale", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            "Slice of a chunk the receiver already completed", HFILL } },
        { &hf_chunk_completed_in, { "Chunk acked complete in frame", "chunk.analysis.completed_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            "The receiver's first all-ones ack of the chunk (later than chunk.reassembled_in, where the capture first holds every slice)", HFILL } },
        { &hf_chunk_not_captured, { "Packets not captured", "chunk.analysis.not_captured", FT_UINT32, BASE_DEC,
            NULL, 0x0, "Packets of this stream the capture missed here, at least (docs/analysis.md)", HFILL } },
        { &hf_chunk_prev_chunk, { "Early: previous chunk not fully acked, started in frame", "chunk.analysis.early", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_newly_acked, { "Newly acked slices", "chunk.analysis.newly_acked", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_newly_acked_slices, { "Newly acked", "chunk.analysis.newly_acked_slices", FT_STRING, BASE_NONE, NULL, 0x0,
            "Slices this ack is the first to show, as ranges", HFILL } },
        { &hf_chunk_duplicate_ack, { "Duplicate ack", "chunk.analysis.duplicate_ack", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Nothing newly acked", HFILL } },
        { &hf_chunk_regressed, { "Slices regressed", "chunk.analysis.regressed", FT_UINT32, BASE_DEC, NULL, 0x0,
            "Slices acked earlier that are clear in this ack", HFILL } },
        { &hf_chunk_prev_ack, { "Previous ack in frame", "chunk.analysis.prev_ack", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_ack_delta, { "Time since previous ack", "chunk.analysis.ack_delta", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_chunk_complete, { "Chunk complete", "chunk.analysis.chunk_complete", FT_UINT16, BASE_DEC, NULL, 0x0,
            "First all-ones ack of the chunk (value: chunk id)", HFILL } },
        { &hf_chunk_transfer_time, { "Transfer time", "chunk.analysis.transfer_time", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
            "From the chunk's first slice to its completing ack", HFILL } },
        { &hf_chunk_goodput, { "Goodput (bit/s)", "chunk.analysis.goodput", FT_DOUBLE, BASE_NONE, NULL, 0x0,
            "Chunk bits divided by the transfer time", HFILL } },
        { &hf_chunk_chunk_size, { "Chunk size", "chunk.analysis.chunk_size", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_stall_since, { "No progress since frame", "chunk.analysis.stall_since", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            "Last frame that newly acked a slice (or the chunk's first)", HFILL } },
        { &hf_chunk_diagnosis, { "Diagnosis", "chunk.analysis.diagnosis", FT_STRING, BASE_NONE, NULL, 0x0,
            "Why the transfer did not complete (end of capture), with the evidence", HFILL } },
        { &hf_chunk_check, { "What to check", "chunk.analysis.check", FT_STRING, BASE_NONE, NULL, 0x0,
            "The next thing to look at for this diagnosis", HFILL } },
        { &hf_chunk_reassembled_in, { "Reassembled in (every slice sent)", "chunk.reassembled_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            "Frame where the capture first holds every slice of the chunk: it is reassembled (and exported) there; "
            "the receiver acks it complete later (chunk.analysis.completed_in)", HFILL } },
        { &hf_chunk_reassembled_length, { "Reassembled chunk length", "chunk.reassembled.length", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_fragments, { "Slices", "chunk.slices", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment, { "Slice", "chunk.slice", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment_overlap, { "Slice overlap", "chunk.slice.overlap", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment_overlap_conflicts, { "Slice overlapping with conflicting data", "chunk.slice.overlap.conflicts", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment_multiple_tails, { "Multiple last slices", "chunk.slice.multipletails", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment_too_long_fragment, { "Slice too long", "chunk.slice.toolongfragment", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment_error, { "Reassembly error", "chunk.slice.error", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_fragment_count, { "Slice count", "chunk.slice.count", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
    };
    static gint *ett[] = { &ett_chunk_analysis, &ett_chunk_fragment, &ett_chunk_fragments };
    static ei_register_info ei[] = {
        { &ei_chunk_resend, { "chunk.analysis.resend.expert", PI_SEQUENCE, PI_NOTE, "Slice resent", EXPFILL } },
        { &ei_chunk_too_soon, { "chunk.analysis.too_soon", PI_SEQUENCE, PI_WARN, "Slice resent sooner than the minimum resend delay", EXPFILL } },
        { &ei_chunk_already_acked, { "chunk.analysis.already_acked", PI_SEQUENCE, PI_NOTE, "Slice sent although already acked", EXPFILL } },
        { &ei_chunk_not_listening, { "chunk.analysis.sender_not_listening", PI_SEQUENCE, PI_WARN, "Sender keeps resending acked slices: not applying acks", EXPFILL } },
        { &ei_chunk_stale, { "chunk.analysis.stale.expert", PI_SEQUENCE, PI_NOTE, "Slice of a chunk the receiver completed", EXPFILL } },
        { &ei_chunk_not_captured, { "chunk.analysis.not_captured.expert", PI_SEQUENCE, PI_NOTE, "Packets not captured.", EXPFILL } },
        { &ei_chunk_early, { "chunk.analysis.early.expert", PI_SEQUENCE, PI_WARN, "Chunk started before the previous one was fully acked", EXPFILL } },
        { &ei_chunk_count_mismatch, { "chunk.analysis.slice_count_mismatch", PI_MALFORMED, PI_WARN, "Slice count differs from the chunk's first slice", EXPFILL } },
        { &ei_chunk_size_mismatch, { "chunk.analysis.slice_size_mismatch", PI_MALFORMED, PI_WARN, "Slice size differs from earlier slices of the chunk", EXPFILL } },
        { &ei_chunk_stall, { "chunk.analysis.stall", PI_SEQUENCE, PI_WARN, "Transfer stalled: no new slice acked", EXPFILL } },
        { &ei_chunk_silent, { "chunk.analysis.silent_receiver", PI_SEQUENCE, PI_WARN, "Silent receiver: slices and no ack", EXPFILL } },
        { &ei_chunk_not_reading, { "chunk.analysis.receiver_not_reading", PI_SEQUENCE, PI_WARN, "Receiver not reading: next chunk never acked", EXPFILL } },
        { &ei_chunk_dup_ack, { "chunk.analysis.duplicate_ack.expert", PI_SEQUENCE, PI_NOTE, "Duplicate ack: nothing newly acked.", EXPFILL } },
        { &ei_chunk_stale_ack, { "chunk.analysis.stale_ack", PI_SEQUENCE, PI_NOTE, "Repeated all-ones ack for a completed chunk", EXPFILL } },
        { &ei_chunk_regression, { "chunk.analysis.ack_regression", PI_SEQUENCE, PI_WARN, "Ack regression in consecutive acks: the receiver reset", EXPFILL } },
        { &ei_chunk_regression_note, { "chunk.analysis.ack_reordered", PI_SEQUENCE, PI_NOTE, "Ack regression once: a reordered older ack", EXPFILL } },
        { &ei_chunk_unknown_chunk, { "chunk.analysis.ack_unknown_chunk", PI_SEQUENCE, PI_WARN, "Ack for a chunk the sender is not sending", EXPFILL } },
        { &ei_chunk_ack_before_slices, { "chunk.analysis.ack_before_slices", PI_SEQUENCE, PI_NOTE, "Ack before any slice of the stream", EXPFILL } },
        { &ei_chunk_ack_count_mismatch, { "chunk.analysis.ack_count_mismatch", PI_MALFORMED, PI_WARN, "Ack slice count differs from the chunk's", EXPFILL } },
        { &ei_chunk_too_fast, { "chunk.analysis.ack_too_fast", PI_SEQUENCE, PI_WARN, "Acks faster than the ack interval", EXPFILL } },
        { &ei_chunk_amplification, { "chunk.analysis.ack_amplification", PI_SECURITY, PI_WARN, "One ack per slice: the receiver can be used for amplification.", EXPFILL } },
        { &ei_chunk_complete, { "chunk.analysis.complete", PI_SEQUENCE, PI_CHAT, "Chunk complete", EXPFILL } },
        { &ei_chunk_capped, { "chunk.analysis.capped", PI_UNDECODED, PI_NOTE, "Transfer not analysed: the analysis' memory cap was reached", EXPFILL } },
        { &ei_chunk_incomplete, { "chunk.analysis.incomplete", PI_SEQUENCE, PI_WARN, "Transfer incomplete at end of capture", EXPFILL } },
    };

    proto_chunk_a = proto_chunk;
    CS_REGISTER_ARRAYS(proto_chunk, hf, ett, ei);

    prefs_register_uint_preference(chunk_module, "min_resend_ms", "Minimum resend delay (ms)",
        "A slice resent sooner than this after its last send is flagged (the article's sender: 100 ms)",
        10, &pref_min_resend_ms);
    prefs_register_uint_preference(chunk_module, "resend_jitter_ms", "Resend jitter allowance (ms)",
        "A resend is flagged only when it comes this much sooner than the minimum resend delay: jitter between sender and capture point moves sends closer",
        10, &pref_resend_jitter_ms);
    prefs_register_uint_preference(chunk_module, "ack_interval_ms", "Ack interval (ms)",
        "Acks closer together than this are flagged (the article's receiver: 100 ms)",
        10, &pref_ack_interval_ms);
    prefs_register_uint_preference(chunk_module, "stall_ms", "Stall threshold (ms)",
        "A transfer whose slices keep coming without a new slice acked for longer than this is stalled",
        10, &pref_stall_ms);
    prefs_register_uint_preference(chunk_module, "not_listening_acks", "Acks before 'sender not listening'",
        "A slice resent after this many acks showed it acked means the sender is not applying acks",
        10, &pref_not_listening_acks);
    prefs_register_bool_preference(chunk_module, "reassemble", "Reassemble chunks",
        "Reassemble each chunk from its slices and show it in the frame that completes it",
        &pref_reassemble);
    cs_sp_register_pref(chunk_module, &pref_single_pass);

    reassembly_table_register(&chunk_reassembly_table, &addresses_ports_reassembly_table_functions);
    register_init_routine(analysis_init);
    chunk_tap = register_tap("chunk_transfers");
    chunk_flow_tap = register_tap("chunk");
    chunk_flow_register(proto_chunk);
    cs_sp_register();
    chunk_eo_tap = eo_tap;
    mark_lengths(slice_marks, slice_mark_len, array_length(slice_marks));
    mark_lengths(ack_marks, ack_mark_len, array_length(ack_marks));
}

void chunk_analysis_handoff(void)
{
    cs_sp_handoff();
}
