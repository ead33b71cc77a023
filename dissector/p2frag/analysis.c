/* p2frag/analysis.c
 * The fragment protocol's analysis, made on the first pass in frame order
 * and kept per frame: per fragmented packet, the fragments seen, complete
 * or lost (out of the 256-packet receive window); per direction, loss rates.
 * The receive rules: docs/p2frag.md. Also the packets' reassembly buffers
 * in tshark's single pass (common/single-pass.c says why).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/conversation.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>

#include "p2frag-int.h"
#include "common/protocol2.h"
#include "common/analysis-util.h"
#include "common/single-pass.h"
#include "common/ws-compat.h"

static int proto_p2frag = -1;
static ws_cb_bool pref_single_pass = TRUE;
static const dp2_protocol_t *p2frag_p2;   /* its conversation state */

static int hf_p2frag_analysis = -1;
static int hf_p2frag_an_seen = -1;
static int hf_p2frag_an_expected = -1;
static int hf_p2frag_an_complete_in = -1;
static int hf_p2frag_an_lost_in = -1;
static int hf_p2frag_an_missing = -1;
static int hf_p2frag_an_missing_count = -1;
static int hf_p2frag_an_duplicate_of = -1;
static int hf_p2frag_an_frag_loss = -1;
static int hf_p2frag_an_pkt_loss = -1;
static int hf_p2frag_an_predicted = -1;
static int hf_p2frag_an_lost_packet = -1;

static gint ett_p2frag_analysis = -1;

static expert_field ei_p2frag_count_conflict = EI_INIT;
static expert_field ei_p2frag_duplicate = EI_INIT;
static expert_field ei_p2frag_too_old = EI_INIT;
static expert_field ei_p2frag_lost = EI_INIT;
static expert_field ei_p2frag_missing = EI_INIT;
static expert_field ei_p2frag_orig_interleaved = EI_INIT;
static expert_field ei_p2frag_orig_seq256 = EI_INIT;

typedef struct p2frag_conv {
    address a_src;        /* the first datagram's source: direction 0 */
    guint32 a_port;
    p2frag_dir_t dir[2];
} p2frag_conv_t;


static guint32 p2frag_pkt_counter;
static gboolean sp_transient;        /* this packet is in tshark's single pass: cs_sp_begin_packet() */
static wmem_allocator_t *rec_scope;  /* where this packet's frame record lives */
/* Single pass (below): */
static cs_sp_pool_t sp_pool;         /* the packets' own buffers */
static GQueue sp_lost;               /* lost packets holding fragments, in the order they were lost */

guint32 p2frag_pkt_bytes(const p2frag_pkt_t *pkt)
{
    if (!pkt->last_bytes)
        return 0;
    return (pkt->num_fragments - 1) * P2FRAG_FRAGMENT_SIZE + pkt->last_bytes;
}

/* The position of key in the sorted v[0..n): where it is, or where it
 * would go. */
static guint32 sorted_pos(const guint8 *v, guint32 n, guint32 key)
{
    guint32 lo = 0, hi = n;

    while (lo < hi) {
        guint32 mid = (lo + hi) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The position of fragment id `id` in pkt's sorted list of fragments seen. */
static guint32 p2frag_frag_pos(const p2frag_pkt_t *pkt, guint32 id)
{
    return sorted_pos(pkt->frag_ids, pkt->seen, id);
}

/* The frame of fragment id's first copy, 0 if never seen. */
static guint32 p2frag_frag_frame(const p2frag_pkt_t *pkt, guint32 id)
{
    guint32 i = p2frag_frag_pos(pkt, id);
    return i < pkt->seen && pkt->frag_ids[i] == id ? pkt->frag_frames[i] : 0;
}

/* Records fragment id (not seen before) as first seen in `frame`. */
static void p2frag_frag_add(p2frag_pkt_t *pkt, guint32 id, guint32 frame)
{
    guint32 i = p2frag_frag_pos(pkt, id);

    if (pkt->seen == pkt->frags_cap) {
        /* A packet of up to 8 fragments gets room for all at once (one
         * allocation instead of three); a larger claim grows as fragments
         * come, so it costs what was sent. */
        guint32 cap = pkt->num_fragments <= 8 ? pkt->num_fragments
                                              : MIN(MAX(pkt->frags_cap * 2, 2), pkt->num_fragments);
        pkt->frag_ids = (guint8 *)wmem_realloc(wmem_file_scope(), pkt->frag_ids, cap);
        pkt->frag_frames = (guint32 *)wmem_realloc(wmem_file_scope(), pkt->frag_frames, cap * sizeof(guint32));
        pkt->frags_cap = cap;
    }
    memmove(pkt->frag_ids + i + 1, pkt->frag_ids + i, pkt->seen - i);
    memmove(pkt->frag_frames + i + 1, pkt->frag_frames + i, (pkt->seen - i) * sizeof(guint32));
    pkt->frag_ids[i] = (guint8)id;
    pkt->frag_frames[i] = frame;
    pkt->seen++;
}

/* ---- Reassembly in tshark's single pass (common/single-pass.c says why) ------------- */

/* Bytes the packets' own buffers count at once (each its claimed size from
 * its first fragment) past which a new packet goes to the table. */
#define P2FRAG_SP_BUDGET  (64u << 20)
/* A fragment's sequence unwraps to the nearest of seq + k x 65536 around
 * the newest, so a packet this far behind it is out of reach for good. */
#define P2FRAG_REACH      32768

/* Starts holding pkt's fragments, at its first fragment given to
 * reassembly; FALSE when over the budget (the packet then uses the table). */
gboolean p2frag_sp_start(p2frag_pkt_t *pkt)
{
    pkt->sp_buf = cs_sp_buf_new(&sp_pool, pkt->num_fragments, P2FRAG_FRAGMENT_SIZE, P2FRAG_SP_BUDGET);
    if (!pkt->sp_buf)
        return FALSE;
    if (pkt->lost_frame)
        g_queue_push_tail(&sp_lost, pkt);   /* out of the window from its first fragment */
    return TRUE;
}

/* A lost packet may still complete (its missing fragments late: the
 * dissector reassembles whatever completes), so it keeps its fragments
 * until its direction's newest sequence puts it out of reach. */
static void p2frag_sp_expire(void)
{
    p2frag_pkt_t *pkt;

    while ((pkt = (p2frag_pkt_t *)g_queue_peek_head(&sp_lost)) != NULL) {
        if (pkt->sp_buf && pkt->dir->newest - pkt->ext <= P2FRAG_REACH)
            break;
        g_queue_pop_head(&sp_lost);
        if (pkt->sp_buf) {
            cs_sp_buf_free(&pkt->sp_buf);
            pkt->sp_dropped = TRUE;
        }
    }
}

/* Adds a fragment (recorded by the analysis, not yet held) to pkt's;
 * returns the reassembled packet, shown under tree as
 * process_reassembled_data() shows it, when this fragment completes it (its
 * data freed with the packet's tvbs), else NULL. Each fragment is copied
 * when it comes, so a packet holds what was sent, not what it claims. */
tvbuff_t *p2frag_sp_add(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, guint32 fragment_id,
                        guint data_offset, guint data_len, p2frag_pkt_t *pkt, const fragment_items *fit)
{
    DISSECTOR_ASSERT(!cs_sp_buf_has(pkt->sp_buf, fragment_id));
    return cs_sp_buf_add(&pkt->sp_buf, tvb, data_offset, data_len, fragment_id, pinfo, tree,
                         "Reassembled packet", fit);
}

/* wmem callback at the end of the file scope: frees the fragments of
 * packets that never completed. Returns FALSE: analysis_init() registers it
 * again for the next file. */
static ws_cb_bool p2frag_file_end(wmem_allocator_t *allocator _U_, wmem_cb_event_t event _U_,
                                  void *user_data _U_)
{
    cs_sp_pool_clear(&sp_pool);
    g_queue_clear(&sp_lost);
    return FALSE;
}

/* One more fragmented packet of n fragments in dir (count_n kept sorted). */
static void p2frag_count_add(p2frag_dir_t *dir, guint32 n)
{
    guint32 lo = sorted_pos(dir->count_n, dir->n_counts, n);

    if (lo < dir->n_counts && dir->count_n[lo] == n) {
        dir->count_pkts[lo]++;
        return;
    }
    if (dir->n_counts == dir->counts_cap) {
        guint32 cap = MAX(dir->counts_cap * 2, 4);
        dir->count_n = (guint8 *)wmem_realloc(wmem_file_scope(), dir->count_n, cap);
        dir->count_pkts = (guint32 *)wmem_realloc(wmem_file_scope(), dir->count_pkts, cap * sizeof(guint32));
        dir->counts_cap = cap;
    }
    memmove(dir->count_n + lo + 1, dir->count_n + lo, dir->n_counts - lo);
    memmove(dir->count_pkts + lo + 1, dir->count_pkts + lo, (dir->n_counts - lo) * sizeof(guint32));
    dir->count_n[lo] = (guint8)n;
    dir->count_pkts[lo] = 1;
    dir->n_counts++;
}

char *p2frag_missing_str(wmem_allocator_t *scope, const p2frag_pkt_t *pkt)
{
    wmem_strbuf_t *sb = wmem_strbuf_new(scope, "");
    guint32 i = 0, n = pkt->num_fragments, k = 0;

    /* The gaps between the sorted ids seen. */
    while (i < n) {
        guint32 start;
        if (k < pkt->seen && pkt->frag_ids[k] == i) {
            i++;
            k++;
            continue;
        }
        start = i;
        i = k < pkt->seen ? pkt->frag_ids[k] : n;
        if (wmem_strbuf_get_len(sb))
            wmem_strbuf_append_c(sb, ',');
        if (i - 1 == start)
            wmem_strbuf_append_printf(sb, "%u", start);
        else
            wmem_strbuf_append_printf(sb, "%u-%u", start, i - 1);
    }
    return wmem_strbuf_finalize(sb);
}

char *p2frag_status_str(wmem_allocator_t *scope, const p2frag_pkt_t *pkt)
{
    char *m;

    if (pkt->complete_frame && !pkt->lost_frame)
        return wmem_strdup_printf(scope, "complete in frame %u", pkt->complete_frame);
    if (pkt->complete_frame)
        return wmem_strdup_printf(scope, "complete in frame %u, after leaving the window in frame %u",
                                  pkt->complete_frame, pkt->lost_frame);
    m = p2frag_missing_str(scope, pkt);
    if (pkt->lost_frame)
        return wmem_strdup_printf(scope, "lost in frame %u, missing %s", pkt->lost_frame, m);
    return wmem_strdup_printf(scope, "incomplete, missing %s", m);
}

static p2frag_dir_t *p2frag_get_dir(packet_info *pinfo)
{
    void **data;
    conversation_t *conv;
    p2frag_conv_t *pc;
    int d;

    dp2_conv_state(pinfo, p2frag_p2, &data, &conv);
    pc = (p2frag_conv_t *)*data;
    if (!pc) {
        pc = wmem_new0(wmem_file_scope(), p2frag_conv_t);
        /* One copy of each address, shared by both directions; the packet
         * tree and list of a direction come with its first fragment, so a
         * conversation costs what it carries (100 000 conversations:
         * docs/robustness.md, "p2frag"). */
        copy_address_wmem(wmem_file_scope(), &pc->dir[0].src, &pinfo->src);
        copy_address_wmem(wmem_file_scope(), &pc->dir[0].dst, &pinfo->dst);
        copy_address_shallow(&pc->dir[1].src, &pc->dir[0].dst);
        copy_address_shallow(&pc->dir[1].dst, &pc->dir[0].src);
        copy_address_shallow(&pc->a_src, &pc->dir[0].src);
        pc->a_port = pinfo->srcport;
        for (d = 0; d < 2; d++) {
            p2frag_dir_t *dir = &pc->dir[d];
            dir->stream = conv->conv_index;
            dir->sport = d ? pinfo->destport : pinfo->srcport;
            dir->dport = d ? pinfo->srcport : pinfo->destport;
        }
        *data = pc;
    }
    d = (addresses_equal(&pinfo->src, &pc->a_src) && pinfo->srcport == pc->a_port) ? 0 : 1;
    return &pc->dir[d];
}

/* The sequence unwrapped around the direction's newest: the nearest of
 * seq + k * 65536 (the spec's wrap-aware comparison). */
static gint64 p2frag_unwrap(const p2frag_dir_t *dir, guint16 seq)
{
    if (!dir->have_newest)
        return seq;
    return dir->newest + (gint16)(guint16)(seq - (guint16)dir->newest);
}

/* A newer sequence arrived at `frame`: packets in progress that are now
 * P2FRAG_WINDOW or more behind are lost (a receiver evicts or refuses
 * them); older ones that are still in the window saw a newer sequence
 * before completing (what the original receiver cannot survive). */
static void p2frag_advance(p2frag_dir_t *dir, p2frag_frame_t *ff, guint32 frame, gint64 ext)
{
    wmem_list_frame_t *it = dir->in_progress ? wmem_list_head(dir->in_progress) : NULL;

    dir->have_newest = TRUE;
    dir->newest = ext;
    while (it) {
        wmem_list_frame_t *next = wmem_list_frame_next(it);
        p2frag_pkt_t *pkt = (p2frag_pkt_t *)wmem_list_frame_data(it);

        if (pkt->ext < ext && !pkt->interleave_frame) {
            pkt->interleave_frame = frame;
            pkt->interleave_seq = (guint16)ext;
        }
        if (ext - pkt->ext >= P2FRAG_WINDOW) {
            pkt->lost_frame = frame;
            pkt->lost_by = ext;
            ff->lost = (p2frag_pkt_t **)wmem_realloc(rec_scope, ff->lost, (ff->n_lost + 1) * sizeof *ff->lost);
            ff->lost[ff->n_lost++] = pkt;
            wmem_list_remove_frame(dir->in_progress, it);
            if (pkt->sp_buf)
                g_queue_push_tail(&sp_lost, pkt);
        }
        it = next;
    }
    if (!g_queue_is_empty(&sp_lost))
        p2frag_sp_expire();
}

/* pkt completed in `frame`: the older packets of its direction still
 * incomplete then are lost unless their missing fragments come late (a
 * receiver delivers in sequence order only what completes); their loss
 * shows in this frame, once per packet. */
static void p2frag_overtake(p2frag_dir_t *dir, p2frag_frame_t *ff, const p2frag_pkt_t *pkt, guint32 frame)
{
    for (wmem_list_frame_t *it = wmem_list_head(dir->in_progress); it; it = wmem_list_frame_next(it)) {
        p2frag_pkt_t *old = (p2frag_pkt_t *)wmem_list_frame_data(it);

        if (old->ext >= pkt->ext || old->overtaken_frame || old->complete_frame)
            continue;
        old->overtaken_frame = frame;
        old->overtaken_by = pkt->seq;
        ff->overtaken = (p2frag_pkt_t **)wmem_realloc(rec_scope, ff->overtaken,
                                                      (ff->n_overtaken + 1) * sizeof *ff->overtaken);
        ff->overtaken[ff->n_overtaken++] = old;
    }
}

/* First pass: the analysis of a datagram that a receiver would not drop on
 * its own (clean parse, the configured id). */
static p2frag_frame_t *p2frag_analyse(packet_info *pinfo, const p2frag_body_t *b)
{
    p2frag_frame_t *ff = wmem_new0(rec_scope, p2frag_frame_t);
    p2frag_dir_t *dir = p2frag_get_dir(pinfo);
    gint64 ext = p2frag_unwrap(dir, b->seq);
    p2frag_pkt_t *pkt;

    ff->dir = dir;
    ff->ext = ext;
    if (dir->have_newest && dir->newest - ext > P2FRAG_WINDOW) {
        ff->flags |= P2FRAG_FF_TOO_OLD;
        ff->newest_seq = (guint16)dir->newest;
    }
    if (!p2frag_is_fragment(b)) {
        dir->regular++;
    } else {
        if (!dir->pkts) {
            dir->pkts = wmem_tree_new(wmem_file_scope());
            dir->in_progress = wmem_list_new(wmem_file_scope());
        }
        /* Fragments of one packet mostly come together. */
        pkt = dir->last_pkt && dir->last_pkt->ext == ext ? dir->last_pkt
                                                         : (p2frag_pkt_t *)wmem_tree_lookup32(dir->pkts, (guint32)ext);
        if (!pkt) {
            pkt = wmem_new0(wmem_file_scope(), p2frag_pkt_t);
            pkt->dir = dir;
            pkt->index = ++p2frag_pkt_counter;
            pkt->ext = ext;
            pkt->seq = b->seq;
            pkt->num_fragments = b->num_fragments;
            pkt->first_frame = pinfo->num;
            pkt->first_ts = pinfo->abs_ts;
            wmem_tree_insert32(dir->pkts, (guint32)ext, pkt);
            if (!(ff->flags & P2FRAG_FF_TOO_OLD))
                wmem_list_append(dir->in_progress, pkt);
            else
                pkt->lost_frame = pinfo->num;   /* out of the window from its first fragment */
            dir->frag_pkts++;
            dir->frags_expected += pkt->num_fragments;
            p2frag_count_add(dir, pkt->num_fragments);
        }
        ff->pkt = pkt;
        dir->last_pkt = pkt;
        pkt->last_frame = pinfo->num;
        pkt->last_ts = pinfo->abs_ts;
        if (b->num_fragments != pkt->num_fragments) {
            ff->flags |= P2FRAG_FF_CONFLICT;
            ff->other_count = pkt->num_fragments;
            /* The lowest fragment id seen (the list is sorted). */
            ff->other_frame = pkt->seen ? pkt->frag_frames[0] : pkt->first_frame;
        } else if (p2frag_frag_frame(pkt, b->fragment_id)) {
            ff->flags |= P2FRAG_FF_DUP;
            ff->other_frame = p2frag_frag_frame(pkt, b->fragment_id);
            pkt->dups++;
        } else {
            p2frag_frag_add(pkt, b->fragment_id, pinfo->num);
            dir->frags_seen++;
            if (b->fragment_id == pkt->num_fragments - 1)
                pkt->last_bytes = b->data_len;
            if (pkt->seen == pkt->num_fragments) {
                pkt->complete_frame = pinfo->num;
                pkt->complete_ts = pinfo->abs_ts;
                ff->flags |= P2FRAG_FF_COMPLETES;
                dir->frag_pkts_complete++;
                p2frag_overtake(dir, ff, pkt, pinfo->num);
                if (!pkt->lost_frame) {
                    wmem_list_frame_t *it;
                    for (it = wmem_list_head(dir->in_progress); it; it = wmem_list_frame_next(it))
                        if (wmem_list_frame_data(it) == pkt) {
                            wmem_list_remove_frame(dir->in_progress, it);
                            break;
                        }
                }
            }
        }
    }
    if (!dir->have_newest || ext > dir->newest)
        p2frag_advance(dir, ff, pinfo->num, ext);
    return ff;
}

/* A packet lost for fragments missing: its item (the numbers) and the
 * warning (a fixed summary, so Expert Information groups them). */
static void p2frag_missing_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, const p2frag_pkt_t *lp)
{
    proto_item *ti = proto_tree_add_uint(at, hf_p2frag_an_lost_packet, tvb, 0, 0, lp->seq);

    proto_item_set_generated(ti);
    if (at) {
        proto_item_append_text(ti, ", %u of its %u fragments arrived, missing %s; ", lp->seen, lp->num_fragments,
                               p2frag_missing_str(pinfo->pool, lp));
        if (lp->overtaken_frame)
            proto_item_append_text(ti, "newer packet %u complete in frame %u", lp->overtaken_by,
                                   lp->overtaken_frame);
        else
            proto_item_append_text(ti, "incomplete at the end of the capture");
    }
    expert_add_info(pinfo, ti, &ei_p2frag_missing);
}

void p2frag_analysis_show(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const p2frag_body_t *b,
                          const p2frag_frame_t *ff, gboolean original_notes)
{
    const p2frag_dir_t *dir = ff->dir;
    const p2frag_pkt_t *pkt = ff->pkt;
    proto_item *ai, *ti;
    proto_tree *at;

    ai = proto_tree_add_item(tree, hf_p2frag_analysis, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ai);
    at = proto_item_add_subtree(ai, ett_p2frag_analysis);
    if (ff->flags & P2FRAG_FF_TOO_OLD)
        AU_EXPERT(pinfo, ai, &ei_p2frag_too_old,
                  "Sequence %u is more than %u behind the newest %u: a receiver drops it",
                  b->seq, P2FRAG_WINDOW, ff->newest_seq);
    if (ff->flags & P2FRAG_FF_CONFLICT)
        AU_EXPERT(pinfo, ai, &ei_p2frag_count_conflict,
                  "Fragment count %u disagrees with the %u of earlier fragments of sequence %u "
                  "(frame %u): a receiver drops it", b->num_fragments, ff->other_count, b->seq,
                  ff->other_frame);
    if (ff->flags & P2FRAG_FF_DUP)
        AU_EXPERT(pinfo, ai, &ei_p2frag_duplicate,
                  "Duplicate of fragment %u of packet %u (first in frame %u): a receiver drops it",
                  b->fragment_id, b->seq, ff->other_frame);
    for (guint32 i = 0; i < ff->n_lost; i++) {
        const p2frag_pkt_t *lp = ff->lost[i];
        AU_EXPERT(pinfo, ai, &ei_p2frag_lost,
                  "Packet %u lost: %u of its %u fragments arrived (missing %s); sequence %u "
                  "moves it out of the %u-packet window",
                  lp->seq, lp->seen, lp->num_fragments,
                  p2frag_missing_str(pinfo->pool, lp), (guint16)lp->lost_by, P2FRAG_WINDOW);
    }
    /* Loss at once: in the frame that completed a newer packet of the
     * direction; for a packet no newer one overtook, in its own last frame
     * once the capture is read (the second pass, the GUI). The first pass
     * knows only what came so far; later passes show only the packets that
     * never completed (missing fragments that came late were not lost). */
    for (guint32 i = 0; i < ff->n_overtaken; i++)
        if (!ff->overtaken[i]->complete_frame)
            p2frag_missing_show(tvb, pinfo, at, ff->overtaken[i]);
    if (pkt && PINFO_FD_VISITED(pinfo) && pinfo->num == pkt->last_frame && !pkt->complete_frame &&
        !pkt->overtaken_frame)
        p2frag_missing_show(tvb, pinfo, at, pkt);
    if (original_notes && !(ff->flags & P2FRAG_FF_TOO_OLD)) {
        gboolean delivered = pkt ? (ff->flags & P2FRAG_FF_COMPLETES) && !pkt->lost_frame : TRUE;
        if (delivered && pkt && pkt->interleave_frame && pkt->interleave_frame < pinfo->num)
            AU_EXPERT(pinfo, ai, &ei_p2frag_orig_interleaved,
                      "The original example's receiver would have lost this packet: sequence %u "
                      "(frame %u) arrived before it was complete, and that receiver discards every "
                      "partial packet on a newer sequence (original bug 4)",
                      pkt->interleave_seq, pkt->interleave_frame);
        if (delivered && b->seq >= P2FRAG_ORIGINAL_SEQ_LIMIT)
            expert_add_info(pinfo, ai, &ei_p2frag_orig_seq256);
    }

    if (!tree)
        return;   /* the rest is only fields and text (printf, pow): nothing to add them to */
    if (pkt) {
        ti = proto_tree_add_uint(at, hf_p2frag_an_seen, tvb, 0, 0, pkt->seen);
        proto_item_set_generated(ti);
        ti = proto_tree_add_uint(at, hf_p2frag_an_expected, tvb, 0, 0, pkt->num_fragments);
        proto_item_set_generated(ti);
        if (ff->flags & P2FRAG_FF_DUP) {
            ti = proto_tree_add_uint(at, hf_p2frag_an_duplicate_of, tvb, 0, 0, ff->other_frame);
            proto_item_set_generated(ti);
        }
        if (pkt->complete_frame) {
            ti = proto_tree_add_uint(at, hf_p2frag_an_complete_in, tvb, 0, 0, pkt->complete_frame);
            proto_item_set_generated(ti);
        }
        if (pkt->lost_frame) {
            ti = proto_tree_add_uint(at, hf_p2frag_an_lost_in, tvb, 0, 0, pkt->lost_frame);
            proto_item_set_generated(ti);
        }
        if (!pkt->complete_frame) {
            ti = proto_tree_add_string(at, hf_p2frag_an_missing, tvb, 0, 0, p2frag_missing_str(pinfo->pool, pkt));
            proto_item_set_generated(ti);
            ti = proto_tree_add_uint(at, hf_p2frag_an_missing_count, tvb, 0, 0, pkt->num_fragments - pkt->seen);
            proto_item_set_generated(ti);
        }
        proto_item_append_text(ai, ": packet %u, %u of %u fragments, %s", pkt->seq, pkt->seen,
                               pkt->num_fragments, p2frag_status_str(pinfo->pool, pkt));
    } else {
        proto_item_append_text(ai, ": regular packet %u", b->seq);
    }
    if (dir->frags_expected) {
        double p = 1.0 - (double)dir->frags_seen / (double)dir->frags_expected;
        double pl = 1.0 - (double)dir->frag_pkts_complete / (double)dir->frag_pkts;
        double pred = 0.0;
        for (guint32 k = 0; k < dir->n_counts; k++)
            pred += dir->count_pkts[k] * (1.0 - pow(1.0 - p, (double)dir->count_n[k]));
        pred /= (double)dir->frag_pkts;
        ti = proto_tree_add_double(at, hf_p2frag_an_frag_loss, tvb, 0, 0, 100.0 * p);
        proto_item_set_generated(ti);
        ti = proto_tree_add_double(at, hf_p2frag_an_pkt_loss, tvb, 0, 0, 100.0 * pl);
        proto_item_set_generated(ti);
        ti = proto_tree_add_double(at, hf_p2frag_an_predicted, tvb, 0, 0, 100.0 * pred);
        proto_item_append_text(ti, " (mean of 1 - (1 - p)^n over the packets, n their fragment counts)");
        proto_item_set_generated(ti);
    }
}

static void analysis_init(void)
{
    p2frag_pkt_counter = 0;
    cs_sp_init();
    wmem_register_callback(wmem_file_scope(), p2frag_file_end, NULL);
}

p2frag_frame_t *p2frag_analysis_packet(packet_info *pinfo, const p2frag_body_t *b, gboolean *transient)
{
    p2frag_frame_t *ff;

    sp_transient = cs_sp_begin_packet(pinfo, pref_single_pass);
    rec_scope = cs_sp_record_scope(pinfo, sp_transient);
    *transient = sp_transient;
    /* In the single pass the record lives in the packet scope and is
     * never looked up again. */
    ff = sp_transient ? NULL : (p2frag_frame_t *)p_get_proto_data(wmem_file_scope(), pinfo, proto_p2frag, 0);
    if (!ff && !PINFO_FD_VISITED(pinfo)) {
        ff = p2frag_analyse(pinfo, b);
        if (!sp_transient)
            p_add_proto_data(wmem_file_scope(), pinfo, proto_p2frag, 0, ff);
    }
    return ff;
}

void p2frag_analysis_register(int proto, module_t *module, const dp2_protocol_t *p2)
{
    static hf_register_info hf[] = {
        { &hf_p2frag_analysis, { "Analysis", "p2frag.analysis", FT_NONE, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_an_seen, { "Fragments seen", "p2frag.analysis.fragments_seen", FT_UINT32, BASE_DEC, NULL, 0x0,
            "Distinct fragments of this packet seen (so far, on the first pass)", HFILL } },
        { &hf_p2frag_an_expected, { "Fragments expected", "p2frag.analysis.fragments_expected", FT_UINT32, BASE_DEC,
            NULL, 0x0, NULL, HFILL } },
        { &hf_p2frag_an_complete_in, { "Complete in", "p2frag.analysis.complete_in", FT_FRAMENUM, BASE_NONE, NULL,
            0x0, "The frame whose fragment completed the packet", HFILL } },
        { &hf_p2frag_an_lost_in, { "Lost in", "p2frag.analysis.lost_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            "The frame whose newer sequence moved the unfinished packet out of the 256-packet window", HFILL } },
        { &hf_p2frag_an_missing, { "Missing fragments", "p2frag.analysis.missing", FT_STRING, BASE_NONE, NULL, 0x0,
            "Fragment ids never seen, as ranges (e.g. 3-5,17)", HFILL } },
        { &hf_p2frag_an_missing_count, { "Missing fragment count", "p2frag.analysis.missing_count", FT_UINT32,
            BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_p2frag_an_duplicate_of, { "Duplicate of", "p2frag.analysis.duplicate_of", FT_FRAMENUM, BASE_NONE,
            NULL, 0x0, "The frame with the first copy of this fragment", HFILL } },
        { &hf_p2frag_an_frag_loss, { "Direction: fragment loss (%)", "p2frag.analysis.fragment_loss", FT_DOUBLE,
            BASE_NONE, NULL, 0x0, "Fragments never seen / fragments of the packets seen, in this direction", HFILL } },
        { &hf_p2frag_an_pkt_loss, { "Direction: packet loss (%)", "p2frag.analysis.packet_loss", FT_DOUBLE,
            BASE_NONE, NULL, 0x0, "Fragmented packets not complete / fragmented packets seen", HFILL } },
        { &hf_p2frag_an_predicted, { "Direction: predicted packet loss (%)", "p2frag.analysis.predicted_loss",
            FT_DOUBLE, BASE_NONE, NULL, 0x0, "Mean over the fragmented packets seen of 1 - (1 - fragment loss)^n, n the packet's fragment count", HFILL } },
        { &hf_p2frag_an_lost_packet, { "Lost packet", "p2frag.analysis.lost_packet", FT_UINT16, BASE_DEC, NULL,
            0x0, "Sequence of an older fragmented packet still incomplete when a newer one of its direction "
            "completed (or at the end of the capture), that never completed", HFILL } },
    };

    static gint *ett[] = { &ett_p2frag_analysis };

    static ei_register_info ei[] = {
        { &ei_p2frag_count_conflict, { "p2frag.num_fragments.conflict", PI_PROTOCOL, PI_ERROR,
            "Fragment count disagrees with earlier fragments of the sequence", EXPFILL } },
        { &ei_p2frag_duplicate, { "p2frag.fragment.duplicate", PI_SEQUENCE, PI_NOTE,
            "Duplicate fragment", EXPFILL } },
        { &ei_p2frag_too_old, { "p2frag.sequence.too_old", PI_SEQUENCE, PI_WARN,
            "Sequence more than 256 behind the newest", EXPFILL } },
        { &ei_p2frag_lost, { "p2frag.analysis.lost", PI_SEQUENCE, PI_WARN,
            "Fragmented packet lost", EXPFILL } },
        { &ei_p2frag_missing, { "p2frag.analysis.fragments_missing", PI_SEQUENCE, PI_WARN,
            "Packet lost: fragments missing", EXPFILL } },
        { &ei_p2frag_orig_interleaved, { "p2frag.original.interleaved", PI_PROTOCOL, PI_NOTE,
            "The original example's receiver would have lost this packet (bug 4: interleaved packets)", EXPFILL } },
        { &ei_p2frag_orig_seq256, { "p2frag.original.sequence_256", PI_PROTOCOL, PI_NOTE,
            "The original example's receiver would not deliver this packet: sequence 256 or more "
            "(original bug 2: it indexes (oldest + i) & 0xFF)", EXPFILL } },
    };

    proto_p2frag = proto;
    p2frag_p2 = p2;
    CS_REGISTER_ARRAYS(proto, hf, ett, ei);
    register_init_routine(analysis_init);
    cs_sp_register();
    cs_sp_register_pref(module, &pref_single_pass);
}

void p2frag_analysis_handoff(void)
{
    cs_sp_handoff();
}
