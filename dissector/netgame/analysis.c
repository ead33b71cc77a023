/* netgame/analysis.c
 * Connection analysis for netgame (docs/netgame.md, "Analysis"): per UDP
 * conversation and direction, which packets the peer acknowledged and when
 * (acked-in links both ways, RTT), loss by the original's 1-second rule,
 * sequence gaps, duplicates and reordering, the smoothed RTT as the original
 * computes it, and the flow-control mode (30 or 10 packets/s) inferred from
 * the packet intervals.
 *
 * Everything is computed on the first pass, in frame order, and cached per
 * frame. Results that need later frames (acked in, RTT and loss of a packet)
 * are written into the packet's record by the later frame, so they show with
 * tshark -2 and in the GUI. tshark's single pass keeps no record per frame
 * (memory grows with the connections, not the packets: see begin_packet());
 * it shows the backward-looking half instead: on the acking frame, the frames
 * it acknowledges with their RTT, and on the first frame more than 1 s after
 * an unacknowledged packet, that packet's loss.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/expert.h>
#include <epan/proto_data.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "common/analysis-util.h"
#include "common/single-pass.h"
#include "common/ws-compat.h"
#include "netgame-int.h"

#define NS_PER_S      AU_NS_PER_S
#define RTT_MAXIMUM   NS_PER_S          /* the original's RttMaximum: 1 s, then lost */
#define RETAIN_NS     (3 * NS_PER_S)    /* how long a sent packet can still be linked to a late ack */
#define SENT_MAX      8192              /* pending packets kept per direction at most */
/* Acks are matched against the newest ACK_SCAN packets of the direction:
 * 17 s at 30 packets/s, far beyond the 33 sequences one header covers plus
 * the packets in flight; it bounds the work per packet on hostile input. */
#define ACK_SCAN      512
#define TIMES_MAX     1024              /* send times kept for the rate at most */
#define RTT_THRESHOLD_S 0.25            /* the example's Good/Bad threshold */
/* Interval between Good (1/30 s) and Bad (1/10 s) sends: geometric mean. */
#define MODE_SPLIT_NS 57735027LL
#define MODE_WINDOW   6                 /* intervals whose trimmed mean sets the mode */

static int proto_ng = -1;
static int ng_tap = -1;

static int hf_netgame_stream = -1;
static int hf_netgame_direction = -1;
static int hf_netgame_analysis = -1;
static int hf_netgame_flags = -1;
static int hf_netgame_acked_in = -1;
static int hf_netgame_rtt = -1;
static int hf_netgame_lost = -1;
static int hf_netgame_seq_gap = -1;
static int hf_netgame_duplicate = -1;
static int hf_netgame_duplicate_of = -1;
static int hf_netgame_send_rate = -1;
static int hf_netgame_mode = -1;
static int hf_netgame_smoothed_rtt = -1;
static int hf_netgame_acks_frame = -1;
static int hf_netgame_ack_rtt = -1;
static int hf_netgame_lost_frame = -1;
static int hf_netgame_false_ack0 = -1;
static int hf_netgame_not_captured = -1;

static gint ett_netgame_analysis = -1;
static gint ett_netgame_flags = -1;

static expert_field ei_netgame_seq_gap = EI_INIT;
static expert_field ei_netgame_seq_back = EI_INIT;
static expert_field ei_netgame_seq_repeat = EI_INIT;
static expert_field ei_netgame_ack_back = EI_INIT;
static expert_field ei_netgame_ack_unsent = EI_INIT;
static expert_field ei_netgame_false_ack0 = EI_INIT;
static expert_field ei_netgame_lost = EI_INIT;
static expert_field ei_netgame_mode_switch = EI_INIT;
static expert_field ei_netgame_not_captured = EI_INIT;

static const value_string mode_vals[] = {
    { NG_MODE_GOOD, "Good (30 packets/s)" },
    { NG_MODE_BAD, "Bad (10 packets/s)" },
    { 0, NULL }
};

static wmem_array_t *all_conns;     /* ng_conn_t *, in order of first packet */
static wmem_map_t *conns_by_conv;   /* conversation -> ng_conn_t */
static gint64 capture_last_ns;      /* latest netgame packet time analysed */
static wmem_allocator_t *rec_scope; /* where this packet's record lives */
static gboolean transient;          /* tshark's single pass: cs_sp_begin_packet() */
static ws_cb_bool pref_single_pass = TRUE;

/* Frees the per-direction rings (g_malloc'd: they grow) at the end of the
 * file. Returns FALSE: analysis_init() registers it again for the next. */
static ws_cb_bool free_rings(wmem_allocator_t *allocator _U_, wmem_cb_event_t event _U_, void *user_data _U_)
{
    guint n = all_conns ? wmem_array_get_count(all_conns) : 0;
    for (guint i = 0; i < n; i++) {
        ng_conn_t *c = *(ng_conn_t **)wmem_array_index(all_conns, i);
        for (guint d = 0; d < 2; d++) {
            g_free(c->dir[d].sent);
            g_free(c->dir[d].times);
            g_free(c->dir[d].open);
            c->dir[d].sent = NULL;
            c->dir[d].times = NULL;
            c->dir[d].open = NULL;
        }
    }
    all_conns = NULL;
    return FALSE;
}

static void analysis_init(void)
{
    all_conns = wmem_array_new(wmem_file_scope(), sizeof(ng_conn_t *));
    conns_by_conv = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    capture_last_ns = G_MININT64;
    transient = FALSE;
    cs_sp_init();
    wmem_register_callback(wmem_file_scope(), free_rings, NULL);
}



/* tshark's single pass (common/single-pass.c): records then live in the
 * packet scope, and a loss is raised where it becomes known. */
static void begin_packet(packet_info *pinfo)
{
    transient = cs_sp_begin_packet(pinfo, pref_single_pass);
    rec_scope = cs_sp_record_scope(pinfo, transient);
}

/* ---- Per-direction state ------------------------------------------------- */

static ng_sent_t *sent_at(ng_dir_t *d, guint32 i)
{
    return &d->sent[(d->sent_head + i) & (d->sent_cap - 1)];
}

/* ---- The open packets: kept, neither acked nor superseded ---------------- */

/* The ring position of the packet of absolute index a (d->pushed counts
 * every packet pushed, the ring holds the last sent_count). */
static guint32 pos_of(const ng_dir_t *d, guint32 a)
{
    return a - (d->pushed - d->sent_count);
}

static gboolean is_open(const ng_sent_t *s)
{
    return !s->acked_frame && !s->superseded;
}

static void open_append(ng_dir_t *d, guint32 a)
{
    if (d->open_end == d->open_cap) {
        guint32 n = d->open_end - d->open_start;
        if (d->open_start && d->open_start >= d->open_cap / 2) {
            memmove(d->open, d->open + d->open_start, n * sizeof *d->open);
        } else {
            /* At most sent_cap open packets: the list stays under twice that. */
            guint32 ncap = d->open_cap ? d->open_cap * 2 : 8;
            guint32 *no = g_new(guint32, ncap);
            if (n)
                memcpy(no, d->open + d->open_start, n * sizeof *d->open);
            g_free(d->open);
            d->open = no;
            d->open_cap = ncap;
        }
        d->open_start = 0;
        d->open_end = n;
    }
    d->open[d->open_end++] = a;
}

/* The oldest kept packet leaves the ring (before sent_count drops). */
static void drop_oldest(ng_dir_t *d)
{
    if (is_open(sent_at(d, 0))) {
        d->n_open--;
        /* It is the oldest open one, the list's first. */
        if (d->open_start < d->open_end && d->open[d->open_start] == d->pushed - d->sent_count)
            d->open_start++;
    }
}

/* Takes the packets no longer open out of the list, from its index `from`. */
static void open_compact(ng_dir_t *d, guint32 from)
{
    guint32 w = from;
    for (guint32 r = from; r < d->open_end; r++)
        if (is_open(sent_at(d, pos_of(d, d->open[r]))))
            d->open[w++] = d->open[r];
    d->open_end = w;
}

/* The list index of the oldest open packet among the newest ACK_SCAN (only
 * they can be acked or superseded): the open ones from there to the end. */
static guint32 open_scan_from(const ng_dir_t *d)
{
    guint32 span = MIN(d->sent_count, ACK_SCAN);
    guint32 i = d->open_end;
    while (i > d->open_start && d->pushed - d->open[i - 1] <= span)
        i--;
    return i;
}

/* Marks s unknown: neither lost nor acked in time (its acks may be in
 * packets the capture missed). */
static void set_unknown(ng_sent_t *s)
{
    s->decided = 3;
    if (s->rec)
        s->rec->unknown = 1;
}

/* Decides the loss of packets sent more than 1 s before now and drops
 * those older than RETAIN_NS; new losses are listed in rec. While the
 * capture is missing packets of the peer (its acks of d), d's packets are
 * not lost but unknown. */
static void decide_losses(ng_dir_t *d, const ng_dir_t *acker, gint64 now, ng_frame_t *rec, wmem_allocator_t *scope)
{
    while (d->sent_undecided < d->sent_count) {
        ng_sent_t *s = sent_at(d, d->sent_undecided);
        if (now - s->t_ns <= RTT_MAXIMUM)
            break;
        if (!s->decided && acker->nc_open) {
            set_unknown(s);
        } else if (!s->decided) {
            s->decided = 2;
            d->lost++;
            if (s->rec) {
                s->rec->lost = 1;
                s->rec->flags |= NG_F_LOST;
            }
            if (rec && rec->n_lost_here < G_MAXUINT16) {
                if ((rec->n_lost_here & (rec->n_lost_here - 1)) == 0 || !rec->lost_here) {
                    guint32 ncap = rec->n_lost_here ? rec->n_lost_here * 2u : 4u;
                    guint32 *nl = (guint32 *)wmem_alloc(scope, ncap * sizeof(guint32));
                    if (rec->n_lost_here)
                        memcpy(nl, rec->lost_here, rec->n_lost_here * sizeof(guint32));
                    rec->lost_here = nl;
                }
                rec->lost_here[rec->n_lost_here++] = s->frame;
            }
        }
        d->sent_undecided++;
    }
    while (d->sent_count && d->sent_undecided > 0) {
        ng_sent_t *s = sent_at(d, 0);
        if (now - s->t_ns <= RETAIN_NS)
            break;
        drop_oldest(d);
        d->sent_head = (d->sent_head + 1) & (d->sent_cap - 1);
        d->sent_count--;
        d->sent_undecided--;
    }
}

static void sent_push(ng_dir_t *d, const ng_sent_t *s)
{
    /* A sequence sent again (a wrapped sequence space): acks of it now
     * mean the new packet, so the old one can no longer be acked. Only the
     * newest packets can be acked (ACK_SCAN), so only they are looked at. */
    guint32 from = open_scan_from(d), changed = d->open_end;
    for (guint32 i = from; i < d->open_end; i++) {
        ng_sent_t *o = sent_at(d, pos_of(d, d->open[i]));
        if (o->seq == s->seq) {
            o->superseded = 1;
            d->n_open--;
            changed = MIN(changed, i);
        }
    }
    if (changed < d->open_end)
        open_compact(d, changed);
    if (d->sent_count == d->sent_cap) {
        if (d->sent_cap < SENT_MAX) {
            guint32 ncap = d->sent_cap ? d->sent_cap * 2 : 4;
            ng_sent_t *n = g_new(ng_sent_t, ncap);
            for (guint32 i = 0; i < d->sent_count; i++)
                n[i] = *sent_at(d, i);
            g_free(d->sent);
            d->sent = n;
            d->sent_cap = ncap;
            d->sent_head = 0;
        } else {
            /* Full: the oldest goes undecided (counted as neither). */
            drop_oldest(d);
            d->sent_head = (d->sent_head + 1) & (d->sent_cap - 1);
            d->sent_count--;
            if (d->sent_undecided)
                d->sent_undecided--;
        }
    }
    d->sent[(d->sent_head + d->sent_count) & (d->sent_cap - 1)] = *s;
    d->sent_count++;
    d->n_open++;
    open_append(d, d->pushed++);
}

/* Packets of d in the last second, this one included. */
static guint32 send_rate(ng_dir_t *d, gint64 now)
{
    while (d->times_count && now - d->times[d->times_head] >= NS_PER_S) {
        d->times_head = (d->times_head + 1) & (d->times_cap - 1);
        d->times_count--;
    }
    if (d->times_count == d->times_cap) {
        if (d->times_cap < TIMES_MAX) {
            guint32 ncap = d->times_cap ? d->times_cap * 2 : 4;
            gint64 *n = g_new(gint64, ncap);
            for (guint32 i = 0; i < d->times_count; i++)
                n[i] = d->times[(d->times_head + i) & (d->times_cap - 1)];
            g_free(d->times);
            d->times = n;
            d->times_cap = ncap;
            d->times_head = 0;
        } else {
            d->times_head = (d->times_head + 1) & (d->times_cap - 1);
            d->times_count--;
        }
    }
    d->times[(d->times_head + d->times_count) & (d->times_cap - 1)] = now;
    d->times_count++;
    return d->times_count;
}

/* Whether sequence s of d was seen: 1 yes, 0 no, 2 unknown (too old).
 * The window is read first: in a small space (MaxSequence 31) a sequence
 * half the space behind the newest counts as "more recent" by the 2008
 * rule, yet it is the one sent 16 packets ago. */
static guint8 seen_state(const ng_dir_t *d, guint32 s, guint32 max_seq)
{
    guint32 k;
    guint64 span = MIN((guint64)max_seq + 1, NG_SEEN_WINDOW);
    if (!d->active)
        return 0;
    if (s == d->hi_seq)
        return 1;
    k = netgame_seq_sub(d->hi_seq, s, max_seq);
    if (k < span && ((d->seen[k / 64] >> (k % 64)) & 1))
        return 1;
    if (netgame_more_recent(s, d->hi_seq, max_seq))
        return 0;
    return k < NG_SEEN_WINDOW ? 0 : 2;
}

/* Marks sequence s seen; s more recent than hi_seq moves the window. */
static void mark_seen(ng_dir_t *d, guint32 s, guint32 max_seq)
{
    if (!d->active) {
        memset(d->seen, 0, sizeof d->seen);
        d->hi_seq = s;
        d->seen[0] = 1;
        return;
    }
    if (netgame_more_recent(s, d->hi_seq, max_seq)) {
        guint32 shift = netgame_seq_sub(s, d->hi_seq, max_seq);
        if (shift >= NG_SEEN_WINDOW) {
            memset(d->seen, 0, sizeof d->seen);
        } else {
            guint words = shift / 64, bits = shift % 64;
            for (int w = NG_SEEN_WINDOW / 64 - 1; w >= 0; w--) {
                guint64 v = 0;
                int from = w - (int)words;
                if (from >= 0) {
                    v = d->seen[from] << bits;
                    if (bits && from > 0)
                        v |= d->seen[from - 1] >> (64 - bits);
                }
                d->seen[w] = v;
            }
        }
        d->hi_seq = s;
        d->seen[0] |= 1;
    } else {
        guint32 k = netgame_seq_sub(d->hi_seq, s, max_seq);
        if (k < NG_SEEN_WINDOW)
            d->seen[k / 64] |= 1ull << (k % 64);
    }
}

/* Mode at a packet of d sent at now with sequence s more recent than the
 * previous most recent (step sequences later). The mode is the rate of the
 * last MODE_WINDOW intervals (each divided by the sequences it spans, so
 * loss before the capture point does not lengthen it), as a mean without the
 * longest and the shortest: a sender that sends two packets in one update
 * and none in the next still averages its rate, and one stretched or
 * squeezed interval (a delay spike starting or ending between the sender
 * and the capture point) does not switch it. The switch is put on a packet
 * whose own interval agrees with the new mode. */
static void infer_mode(ng_dir_t *d, gint64 now, guint32 step, ng_frame_t *rec)
{
    if (step >= 1 && step <= 8 && d->hi_ns != G_MININT64) {
        gint64 interval = (now - d->hi_ns) / step;
        gint64 sum = 0, lo = G_MAXINT64, hi = G_MININT64;
        d->iv[d->iv_head] = interval;
        d->iv_head = (guint8)((d->iv_head + 1) % MODE_WINDOW);
        if (d->n_iv < MODE_WINDOW)
            d->n_iv++;
        for (guint i = 0; i < d->n_iv; i++) {
            sum += d->iv[i];
            lo = MIN(lo, d->iv[i]);
            hi = MAX(hi, d->iv[i]);
        }
        if (d->n_iv >= 3) {
            gint64 mean = (sum - lo - hi) / (d->n_iv - 2);
            guint8 want = mean < MODE_SPLIT_NS ? NG_MODE_GOOD : NG_MODE_BAD;
            guint8 own = interval < MODE_SPLIT_NS ? NG_MODE_GOOD : NG_MODE_BAD;
            if (want != d->mode && own == want) {
                if (d->mode == NG_MODE_GOOD)
                    d->good_ns += now - d->mode_since_ns;
                else
                    d->bad_ns += now - d->mode_since_ns;
                d->mode = want;
                d->mode_since_ns = now;
                d->switches++;
                if (want == NG_MODE_BAD) {
                    d->to_bad++;
                    rec->flags |= NG_F_TO_BAD;
                }
                rec->switched = 1;
            }
        }
    }
    rec->mode = d->mode;
}

static ng_conn_t *get_conn(packet_info *pinfo, conversation_t *conv, guint *dir_out)
{
    ng_conn_t *c = (ng_conn_t *)wmem_map_lookup(conns_by_conv, conv);

    if (!c) {
        c = wmem_new0(wmem_file_scope(), ng_conn_t);
        c->index = wmem_array_get_count(all_conns);
        for (guint d = 0; d < 2; d++) {
            c->dir[d].mode = NG_MODE_BAD;   /* the example starts in Bad */
            c->dir[d].hi_ns = G_MININT64;
        }
        au_copy_endpoints(pinfo, FALSE, &c->dir[0].src, &c->dir[0].sport, &c->dir[0].dst, &c->dir[0].dport);
        au_copy_endpoints(pinfo, TRUE, &c->dir[1].src, &c->dir[1].sport, &c->dir[1].dst, &c->dir[1].dport);
        wmem_map_insert(conns_by_conv, conv, c);
        wmem_array_append_one(all_conns, c);
    }
    *dir_out = (addresses_equal(&pinfo->src, &c->dir[0].src) && pinfo->srcport == c->dir[0].sport) ? 0 : 1;
    return c;
}

/* The bits of p's ack bits that ack something (the original applies bit i
 * only to a sequence older than the ack, at most half the space back). */
static guint32 acked_bits(const netgame_pkt_t *p, guint32 max_seq)
{
    guint32 acked_mask = 0;

    if (max_seq == 0xFFFFFFFFu)
        return p->ack_bits;   /* ack - 1 - i, i < 32: always older, never the ack */
    for (guint i = 0; i < 32; i++) {
        if ((p->ack_bits >> i) & 1) {
            guint32 s = netgame_seq_sub(p->ack, i + 1, max_seq);
            if (s != p->ack && !netgame_more_recent(s, p->ack, max_seq))
                acked_mask |= 1u << i;
        }
    }
    return acked_mask;
}

/* Counts the packet s of d acked by frame at now; returns its RTT. */
static gint64 ack_one(ng_dir_t *d, ng_sent_t *s, gint64 now, guint32 frame)
{
    gint64 rtt = now - s->t_ns;

    s->acked_frame = frame;
    d->n_open--;
    if (s->rec) {
        s->rec->acked_in = frame;
        s->rec->rtt_ns = rtt;
    }
    if (s->rec)
        s->rec->unknown = 0;
    if (!s->decided || s->decided == 3) {
        /* Within 1 s (decide_losses runs after this), or unknown: counts. */
        s->decided = 1;
        d->acked++;
        d->rtt_min_ns = d->acked == 1 ? rtt : MIN(d->rtt_min_ns, rtt);
        d->rtt_max_ns = MAX(d->rtt_max_ns, rtt);
        d->rtt_sum_ns += rtt;
        d->srtt += ((double)rtt / 1e9 - d->srtt) * 0.1;
        d->srtt_max = MAX(d->srtt_max, d->srtt);
    } else {
        d->late++;
    }
    return rtt;
}

/* Applies the acks of packet p (from the peer of `d`) to d's pending
 * packets; fills rec's links. */
static void apply_acks(ng_dir_t *d, const netgame_pkt_t *p, gint64 now, guint32 frame, ng_frame_t *rec,
                       guint32 max_seq, wmem_allocator_t *scope)
{
    guint32 n_links = 0;
    ng_ack_link_t links[64];
    guint32 acked_mask = acked_bits(p, max_seq);
    gboolean ack_applies = !rec->false_ack0;
    guint32 hits[ACK_SCAN];
    guint32 n_hits = 0, from = open_scan_from(d), changed = d->open_end;

    /* The open packets (most kept packets are acked already) among the
     * newest ACK_SCAN, newest first; the acked ones are then applied oldest
     * first, the original's pending-queue order. */
    for (guint32 i = d->open_end; i-- > from;) {
        guint32 k = pos_of(d, d->open[i]);
        ng_sent_t *s = sent_at(d, k);
        gboolean acked;
        if (s->seq == p->ack) {
            acked = ack_applies;
        } else if (!netgame_more_recent(s->seq, p->ack, max_seq)) {
            guint32 dist = netgame_seq_sub(p->ack, s->seq, max_seq);
            acked = dist >= 1 && dist <= 32 && (acked_mask >> (dist - 1)) & 1;
        } else {
            acked = FALSE;
        }
        if (acked) {
            hits[n_hits++] = k;
            changed = i;
        }
    }
    while (n_hits) {
        ng_sent_t *s = sent_at(d, hits[--n_hits]);
        gint64 rtt = ack_one(d, s, now, frame);
        if (n_links < G_N_ELEMENTS(links)) {
            links[n_links].frame = s->frame;
            links[n_links].seq = s->seq;
            links[n_links].rtt_ns = rtt;
            n_links++;
        }
    }
    if (changed < d->open_end)
        open_compact(d, changed);
    if (n_links) {
        rec->links = (ng_ack_link_t *)wmem_memdup(scope, links, n_links * sizeof links[0]);
        rec->n_links = (guint16)n_links;
    }
}

/* ---- First pass ---------------------------------------------------------- */

/* The packet's sequence against its direction's: new (the mode, a gap),
 * back (reordered) or a repeat (duplicate). Returns TRUE for a duplicate. */
static gboolean analyse_sequence(ng_dir_t *d, const netgame_pkt_t *p, gint64 now, ng_frame_t *rec)
{
    guint32 max_seq = p->max_seq;
    guint8 st;

    if (!d->active) {
        mark_seen(d, p->seq, max_seq);
        rec->mode = d->mode;
        d->hi_ns = now;
        d->active = TRUE;
        return FALSE;
    }
    if (netgame_more_recent(p->seq, d->hi_seq, max_seq)) {
        guint32 step = netgame_seq_sub(p->seq, d->hi_seq, max_seq);
        if (step > 1) {
            rec->seq_gap = step - 1;
            rec->flags |= NG_F_SEQ_GAP;
            d->gaps++;
            d->missing += step - 1;
            d->have_gap = TRUE;
            d->gap_lo = netgame_seq_sub(d->hi_seq, max_seq, max_seq);   /* hi_seq + 1 */
            d->gap_hi = netgame_seq_sub(p->seq, 1, max_seq);
            /* The rest of a run of this side's packets already shown (the
             * peer acked up to nc_to) belongs to that run. */
            if (d->nc_open && netgame_more_recent(d->gap_hi, d->nc_to, max_seq))
                d->nc_to = d->gap_hi;
        }
        infer_mode(d, now, step, rec);
        mark_seen(d, p->seq, max_seq);
        d->hi_ns = now;
        return FALSE;
    }
    st = seen_state(d, p->seq, max_seq);
    rec->mode = d->mode;
    if (st != 1) {
        rec->back = 1;
        rec->flags |= NG_F_SEQ_BACK;
        d->backs++;
        mark_seen(d, p->seq, max_seq);
        return FALSE;
    }
    rec->dup = 1;
    rec->flags |= NG_F_DUPLICATE;
    d->dups++;
    for (guint32 k = d->sent_count; k-- > 0;) {
        if (sent_at(d, k)->seq == p->seq) {
            rec->dup_of = sent_at(d, k)->frame;
            break;
        }
    }
    return TRUE;
}

/* Bits base..base+31 of d's seen window (base + 31 < NG_SEEN_WINDOW). */
static guint32 window_bits(const ng_dir_t *d, guint32 base)
{
    guint w = base / 64, off = base % 64;
    guint64 v = d->seen[w] >> off;

    if (off > 32)
        v |= d->seen[w + 1] << (64 - off);
    return (guint32)v;
}

/* Which sequences ack - 1 - i the ack bits name are known (not before the
 * peer's first packet here, nor older than the window), were seen, or are
 * acked but were never sent. */
static void ack_bit_masks(const ng_dir_t *peer, const netgame_pkt_t *p, ng_frame_t *rec)
{
    guint32 max_seq = p->max_seq;

    if (!peer->active)
        return;
    if (max_seq == 0xFFFFFFFFu) {
        /* Sequence ack - 1 - i is bit base + i of the window; when all 32
         * are inside it, and all are at most half the space after the
         * peer's first sequence, every one is known and none is more
         * recent than the ack: the loop below, in three operations. */
        guint32 base = peer->hi_seq - (p->ack - 1);
        guint32 after_first = (p->ack - 32) - peer->first_seq;
        if (base <= NG_SEEN_WINDOW - 32 && after_first <= 0x7FFFFFFFu - 31) {
            guint32 seen = window_bits(peer, base);
            rec->known_mask = 0xFFFFFFFFu;
            rec->seen_mask = seen;
            rec->unsent_mask = p->ack_bits & ~seen;
            return;
        }
    }
    for (guint i = 0; i < 32; i++) {
        guint32 s = netgame_seq_sub(p->ack, i + 1, max_seq);
        guint8 st = seen_state(peer, s, max_seq);
        if (st == 2 || netgame_more_recent(peer->first_seq, s, max_seq))
            continue;
        rec->known_mask |= 1u << i;
        if (st == 1)
            rec->seen_mask |= 1u << i;
        else if (((p->ack_bits >> i) & 1) && s != p->ack && !netgame_more_recent(s, p->ack, max_seq))
            rec->unsent_mask |= 1u << i;
    }
}

/* Counts the sequences up to s of peer (missing from the capture) that
 * are not counted yet; the whole last gap when s is in it. */
static guint32 count_missing(ng_dir_t *peer, guint32 s, guint32 max_seq)
{
    guint32 from = peer->hi_seq, n;

    if (peer->nc_have && !netgame_more_recent(s, peer->nc_to, max_seq))
        return 0;           /* counted already */
    if (!netgame_more_recent(s, peer->hi_seq, max_seq)) {
        /* inside the sequences seen: the gap it is in, or itself */
        if (peer->have_gap && !netgame_more_recent(peer->gap_lo, s, max_seq) &&
            !netgame_more_recent(s, peer->gap_hi, max_seq)) {
            from = netgame_seq_sub(peer->gap_lo, 1, max_seq);
            s = peer->gap_hi;
        } else {
            from = netgame_seq_sub(s, 1, max_seq);
        }
    }
    if (peer->nc_have && netgame_more_recent(peer->nc_to, from, max_seq))
        from = peer->nc_to;
    n = netgame_seq_sub(s, from, max_seq);
    if (!peer->nc_have || netgame_more_recent(s, peer->nc_to, max_seq))
        peer->nc_to = s;
    peer->nc_have = TRUE;
    return n;
}

/* Acks of the peer's sequences the capture does not hold. A capture at
 * either endpoint sees every packet sent there and every packet received
 * there, so an acked sequence inside the peer's sequences seen, or a run
 * ahead of the peer's newest whose sequence before the ack is acked too
 * (ack bit 0: a run received), is packets the capture missed (a kernel's
 * drops, a capture's start), not an ack of something never sent: they
 * are counted (one note per run while the peer has no captured packet)
 * instead of flagged. An ack ahead without its bit 0 stays "never sent". */
static void find_not_captured(ng_dir_t *peer, const netgame_pkt_t *p, ng_frame_t *rec)
{
    guint32 max_seq = p->max_seq, n = 0;
    gboolean ahead = netgame_more_recent(p->ack, peer->hi_seq, max_seq);

    if (!peer->active || rec->false_ack0 || !(rec->ack_unsent || rec->unsent_mask))
        return;
    if (ahead && !(p->ack_bits & 1))
        return;
    for (guint i = 32; i-- > 0;)
        if (rec->unsent_mask & (1u << i))
            n += count_missing(peer, netgame_seq_sub(p->ack, i + 1, max_seq), max_seq);
    if (rec->ack_unsent)
        n += count_missing(peer, p->ack, max_seq);
    rec->ack_unsent = 0;
    rec->unsent_mask = 0;
    if (!n || peer->nc_open)
        return;             /* counted already, or the run already shown goes on */
    rec->not_captured = n;
    rec->flags |= NG_F_NOT_CAPTURED;
    peer->nc_open = TRUE;
    peer->not_captured += n;
}

/* Acks, those of a header-only datagram too: the original receiver
 * ignores them (its expert info says so), other implementations, ours
 * among them, do not; the analysis reads what the wire says. */
static void analyse_acks(ng_dir_t *d, ng_dir_t *peer, const netgame_pkt_t *p, gint64 now, guint32 frame,
                         ng_frame_t *rec)
{
    guint32 max_seq = p->max_seq;

    if (d->have_ack && !(p->ack == 0 && p->ack_bits == 0) &&
        netgame_more_recent(d->last_ack, p->ack, max_seq)) {
        rec->prev_ack = d->last_ack;
        rec->flags |= NG_F_ACK_BACK;
    }
    if (p->ack == 0 && p->ack_bits == 0 && seen_state(peer, 0, max_seq) != 1) {
        rec->false_ack0 = 1;
        rec->flags |= NG_F_FALSE_ACK0;
    } else if (peer->active) {
        /* Never sent: not seen, and not from before the capture began
         * (older than the peer's first sequence here). With nothing
         * from the peer yet, the capture cannot tell. */
        rec->ack_seen = seen_state(peer, p->ack, max_seq);
        rec->ack_unsent = rec->ack_seen == 0 && !netgame_more_recent(peer->first_seq, p->ack, max_seq);
    } else {
        rec->ack_seen = 2;
    }
    ack_bit_masks(peer, p, rec);
    find_not_captured(peer, p, rec);
    if (rec->ack_unsent || rec->unsent_mask)
        rec->flags |= NG_F_ACK_UNSENT;
    /* An ack of a sequence never sent is not the reference for "ack
     * goes back" afterwards. */
    if (!rec->ack_unsent && !rec->false_ack0 &&
        (!d->have_ack || netgame_more_recent(p->ack, d->last_ack, max_seq))) {
        d->last_ack = p->ack;
        d->have_ack = TRUE;
    }
    apply_acks(peer, p, now, frame, rec, max_seq, rec_scope);
    if (rec->n_links) {
        d->acks_sent++;
        peer->last_acked_ns = now;
        peer->last_acked_frame = frame;
        peer->peer_pkts_at_ack = d->packets;
    }
}

static ng_frame_t *netgame_analyse(packet_info *pinfo, const netgame_pkt_t *p)
{
    gint64 now = au_ns(&pinfo->abs_ts);
    guint di;
    ng_conn_t *c = get_conn(pinfo, p->conv ? p->conv : find_or_create_conversation(pinfo), &di);
    ng_dir_t *d = &c->dir[di], *peer = &c->dir[di ^ 1];
    ng_frame_t *rec = wmem_new0(rec_scope, ng_frame_t);
    gboolean dup, gap_s;

    rec->conn = c;
    rec->dir = (guint8)di;
    rec->t_ns = now;
    if (now > capture_last_ns)
        capture_last_ns = now;
    if (!d->active) {
        d->first_frame = pinfo->num;
        d->first_ns = now;
        d->first_seq = p->seq;
        d->mode_since_ns = now;
    }
    d->last_frame = pinfo->num;
    d->last_ns = now;
    d->packets++;
    d->payload_bytes += p->payload_len;
    rec->send_rate = send_rate(d, now);
    if (p->header_only)
        rec->flags |= NG_F_HEADER_ONLY;

    gap_s = d->active && d->hi_ns != G_MININT64 && now - d->hi_ns > RTT_MAXIMUM;
    dup = analyse_sequence(d, p, now, rec);
    d->nc_open = FALSE;     /* a packet of this side captured again */
    rec->srtt_ns = (gint64)(d->srtt * 1e9);
    /* The header-only datagram is counted as sent (the peer will not ack
     * it); a duplicate is not sent again. */
    if (!dup) {
        ng_sent_t s;
        memset(&s, 0, sizeof s);
        s.seq = p->seq;
        s.frame = pinfo->num;
        s.t_ns = now;
        s.rec = transient ? NULL : rec;
        rec->pending = 1;
        sent_push(d, &s);
    }
    analyse_acks(d, peer, p, now, pinfo->num, rec);

    /* After more than 1 s of this side missing from the capture, the
     * peer's packets older than this ack's 33 sequences may have been
     * acked by the packets the capture missed: unknown. */
    if (gap_s && rec->seq_gap && !rec->false_ack0) {
        for (guint32 k = peer->sent_undecided; k < peer->sent_count; k++) {
            ng_sent_t *s = sent_at(peer, k);
            if (!s->decided && !s->acked_frame &&
                (netgame_more_recent(p->ack, s->seq, p->max_seq) &&
                 netgame_seq_sub(p->ack, s->seq, p->max_seq) > 32))
                set_unknown(s);
        }
    }
    decide_losses(peer, d, now, rec, rec_scope);
    decide_losses(d, peer, now, rec, rec_scope);
    if (rec->n_lost_here && transient)
        rec->flags |= NG_F_LOST;   /* single pass: raised where found */
    return rec;
}

ng_frame_t *netgame_analysis_packet(packet_info *pinfo, const netgame_pkt_t *pkt)
{
    ng_frame_t *rec;

    if (pkt->foreign_id)
        return NULL;
    begin_packet(pinfo);
    /* In tshark's single pass the frame is visited once: no record to find
     * and none to keep (it lives in the packet scope, used by this visit). */
    rec = transient ? NULL : (ng_frame_t *)p_get_proto_data(rec_scope, pinfo, proto_ng, 1);
    if (!rec) {
        if (PINFO_FD_VISITED(pinfo))
            return NULL;
        rec = netgame_analyse(pinfo, pkt);
        if (!transient)
            p_add_proto_data(rec_scope, pinfo, proto_ng, 1, rec);
    }
    cs_sp_end_packet(pinfo);
    return rec;
}

/* ---- Showing ------------------------------------------------------------- */

static const value_string flag_names[] = {
    { NG_F_SEQ_GAP, "sequence gap" },
    { NG_F_DUPLICATE, "duplicate" },
    { NG_F_SEQ_BACK, "sequence back" },
    { NG_F_ACK_BACK, "ack back" },
    { NG_F_ACK_UNSENT, "ack of unsent sequence" },
    { NG_F_FALSE_ACK0, "false ack of 0" },
    { NG_F_LOST, "lost" },
    { NG_F_TO_BAD, "switch to Bad mode" },
    { NG_F_HEADER_ONLY, "header only" },
    { NG_F_NOT_CAPTURED, "packets not captured" },
    { 0, NULL }
};

const char *netgame_flag_name(guint32 flag)
{
    return val_to_str_const(flag, flag_names, "?");
}

/* Lost as the display shows it: decided on the first pass, or (packets
 * still pending at the end of the connection) unacknowledged and more than
 * 1 s before the end of the capture. */
static gboolean rec_lost(const ng_frame_t *rec)
{
    if (rec->lost)
        return TRUE;
    return !rec->unknown && rec->pending && !rec->acked_in && capture_last_ns - rec->t_ns > RTT_MAXIMUM;
}

static void add_gen_time(proto_tree *tree, int hf, tvbuff_t *tvb, gint64 ns)
{
    nstime_t t = au_nstime(ns);
    proto_item_set_generated(proto_tree_add_time(tree, hf, tvb, 0, 0, &t));
}

/* The connection index and the analysis subtree (NULL without a tree),
 * with the direction in it. */
static proto_tree *show_head(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const ng_frame_t *rec)
{
    const ng_dir_t *d = &rec->conn->dir[rec->dir];
    proto_item *ai, *ti;
    proto_tree *at;
    char *s, *t;

    if (!tree)
        return NULL;
    ti = proto_tree_add_uint(tree, hf_netgame_stream, tvb, 0, 0, rec->conn->index);
    proto_item_set_generated(ti);
    ai = proto_tree_add_item(tree, hf_netgame_analysis, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ai);
    at = proto_item_add_subtree(ai, ett_netgame_analysis);
    s = address_to_str(pinfo->pool, &d->src);
    t = address_to_str(pinfo->pool, &d->dst);
    ti = proto_tree_add_string_format_value(at, hf_netgame_direction, tvb, 0, 0, "", "%s:%u -> %s:%u",
                                            s, d->sport, t, d->dport);
    proto_item_set_generated(ti);
    return at;
}

/* This packet's fate (needs later frames). */
static void show_fate(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, const netgame_pkt_t *pkt,
                      const ng_frame_t *rec, gboolean lost_here)
{
    proto_item *ti = NULL;

    if (rec->acked_in && at) {
        ti = proto_tree_add_uint(at, hf_netgame_acked_in, tvb, 0, 0, rec->acked_in);
        proto_item_set_generated(ti);
        add_gen_time(at, hf_netgame_rtt, tvb, rec->rtt_ns);
    }
    if (!lost_here)
        return;
    if (at) {
        ti = proto_tree_add_boolean(at, hf_netgame_lost, tvb, 0, 0, TRUE);
        proto_item_set_generated(ti);
    }
    /* A loss a later frame found has its expert info there (show_acks),
     * on every pass, as TCP raises "previous segment not captured" on
     * the segment after the gap: the first pass, which sets the
     * GUI's expert indicator, sees it. Only a loss known at the end of
     * the capture alone (no frame came 1 s later) has it here. */
    if (rec->lost)
        ;
    else if (rec->acked_in)
        AU_EXPERT(pinfo, ti, &ei_netgame_lost,
                  "Lost: not acknowledged within 1 s (acknowledged late, in frame %u, "
                  "after %.3f s)", rec->acked_in, (double)rec->rtt_ns / 1e9);
    else
        AU_EXPERT(pinfo, ti, &ei_netgame_lost,
                  "Lost: sequence %u was never acknowledged within 1 s", pkt->seq);
}

/* Sequence: gap, repeat, back. */
static void show_sequence(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, proto_item *ng_item,
                          const netgame_pkt_t *pkt, const ng_frame_t *rec)
{
    proto_item *ti;

    if (rec->seq_gap) {
        ti = proto_tree_add_uint(at, hf_netgame_seq_gap, tvb, 4, 4, rec->seq_gap);
        proto_item_set_generated(ti);
        AU_EXPERT(pinfo, ti, &ei_netgame_seq_gap,
                  "%u sequence(s) missing before %u in this direction at this capture point",
                  rec->seq_gap, pkt->seq);
    }
    if (rec->dup) {
        ti = proto_tree_add_boolean(at, hf_netgame_duplicate, tvb, 4, 4, TRUE);
        proto_item_set_generated(ti);
        if (rec->dup_of) {
            AU_EXPERT(pinfo, ti, &ei_netgame_seq_repeat,
                      "Sequence %u repeats (first in frame %u): a duplicate", pkt->seq, rec->dup_of);
            proto_item_set_generated(proto_tree_add_uint(at, hf_netgame_duplicate_of, tvb, 4, 4, rec->dup_of));
        } else {
            AU_EXPERT(pinfo, ti, &ei_netgame_seq_repeat, "Sequence %u repeats: a duplicate", pkt->seq);
        }
    }
    if (rec->back)
        AU_EXPERT(pinfo, ng_item, &ei_netgame_seq_back,
                  "Sequence %u goes back (older than %u, seen earlier): reordered",
                  pkt->seq, rec->conn->dir[rec->dir].hi_seq);
}

/* The sequences an ack of a never-sent sequence names: "7,12". */
static const char *unsent_list(packet_info *pinfo, const netgame_pkt_t *pkt, const ng_frame_t *rec)
{
    wmem_strbuf_t *sb = wmem_strbuf_new(pinfo->pool, "");

    if (rec->ack_unsent)
        wmem_strbuf_append_printf(sb, "%u", pkt->ack);
    for (guint i = 0; i < 32; i++)
        if (rec->unsent_mask & (1u << i))
            wmem_strbuf_append_printf(sb, "%s%u", wmem_strbuf_get_len(sb) ? "," : "",
                                      netgame_seq_sub(pkt->ack, i + 1, pkt->max_seq));
    return wmem_strbuf_get_str(sb);
}

/* Acks: back, false ack of 0, unsent sequences, the frames this one acks
 * first, and the losses found at this frame. */
static void show_acks(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, proto_item *ng_item,
                      const netgame_pkt_t *pkt, const ng_frame_t *rec)
{
    proto_item *ti = NULL;

    if (rec->flags & NG_F_ACK_BACK)
        AU_EXPERT(pinfo, ng_item, &ei_netgame_ack_back,
                  "Ack %u goes back: this side acked %u before", pkt->ack, rec->prev_ack);
    if (rec->false_ack0) {
        ti = proto_tree_add_boolean(at, hf_netgame_false_ack0, tvb, 8, 4, TRUE);
        proto_item_set_generated(ti);
        au_expert_add_info(pinfo, ti, &ei_netgame_false_ack0);
    }
    if (rec->not_captured) {
        ti = proto_tree_add_uint_format_value(at, hf_netgame_not_captured, tvb, 8, 8, rec->not_captured,
                                              "%u (the peer's packets this ack names, which the capture does "
                                              "not hold)", rec->not_captured);
        proto_item_set_generated(ti);
        au_expert_add_info(pinfo, ti ? ti : ng_item, &ei_netgame_not_captured);
    }
    if (rec->ack_unsent || rec->unsent_mask)
        AU_EXPERT(pinfo, ng_item, &ei_netgame_ack_unsent,
                  "Acks sequence(s) the peer never sent in this capture: %s", unsent_list(pinfo, pkt, rec));
    for (guint i = 0; at && i < rec->n_links; i++) {
        ti = proto_tree_add_uint_format_value(at, hf_netgame_acks_frame, tvb, 8, 8, rec->links[i].frame,
                                              "%u (sequence %u)", rec->links[i].frame, rec->links[i].seq);
        proto_item_set_generated(ti);
        add_gen_time(at, hf_netgame_ack_rtt, tvb, rec->links[i].rtt_ns);
    }
    for (guint i = 0; i < rec->n_lost_here; i++) {
        ti = proto_tree_add_uint(at, hf_netgame_lost_frame, tvb, 0, 0, rec->lost_here[i]);
        proto_item_set_generated(ti);
        /* Raised here, where the loss becomes known, on every pass. */
        AU_EXPERT(pinfo, ti, &ei_netgame_lost,
                  "Lost: frame %u was not acknowledged within 1 s", rec->lost_here[i]);
    }
}

/* Rate, mode and smoothed RTT of the sender at this send (known on every
 * pass), in the tree and the Info column. */
static char *show_mode(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, const ng_frame_t *rec, char *info)
{
    proto_item *ti = NULL;

    if (at) {
        ti = proto_tree_add_uint(at, hf_netgame_send_rate, tvb, 0, 0, rec->send_rate);
        proto_item_set_generated(ti);
        ti = proto_tree_add_uint(at, hf_netgame_mode, tvb, 0, 0, rec->mode);
        proto_item_set_generated(ti);
    }
    if (rec->switched)
        AU_EXPERT(pinfo, ti, &ei_netgame_mode_switch, "Flow-control mode switch to %s (packet intervals)",
                  val_to_str_const(rec->mode, mode_vals, "?"));
    if (at)
        add_gen_time(at, hf_netgame_smoothed_rtt, tvb, rec->srtt_ns);
    if (!info)
        return NULL;
    info = au_put_str(info, rec->mode == NG_MODE_GOOD ? " Mode=Good" : " Mode=Bad");
    if (rec->srtt_ns > 0) {
        /* "%.0f" of the milliseconds: the nearest integer, ties to even. */
        info = au_put_str(info, " SRTT=");
        info = au_put_uint64(info, (guint64)nearbyint((double)rec->srtt_ns / 1e6));
        info = au_put_str(info, "ms");
    }
    return info;
}

/* Writes " [sequence gap, lost]" at o, adding each name to ft (may be NULL);
 * returns the end. The names themselves start at o + 2. */
static char *put_flag_names(char *o, tvbuff_t *tvb, proto_tree *ft, guint32 flags)
{
    char *start;

    o = au_put_str(o, " [");
    start = o;
    for (guint i = 0; i < NG_F_COUNT; i++) {
        if (flags & (1u << i)) {
            if (o != start)
                o = au_put_str(o, ", ");
            o = au_put_str(o, netgame_flag_name(1u << i));
            if (ft)
                proto_tree_add_uint_format(ft, hf_netgame_flags, tvb, 0, 0, 1u << i, "%s",
                                           netgame_flag_name(1u << i));
        }
    }
    return au_put_str(o, "]");
}

/* The flags, as an item with a subtree of their names, " (sequence gap,
 * lost)", and as " [sequence gap, lost]" in the Info column. */
static char *show_flags(tvbuff_t *tvb, proto_tree *at, guint32 flags, char *info)
{
    proto_item *ti = NULL;
    proto_tree *ft = NULL;
    char *end;

    if (at) {
        ti = proto_tree_add_uint(at, hf_netgame_flags, tvb, 0, 0, flags);
        proto_item_set_generated(ti);
        ft = proto_item_add_subtree(ti, ett_netgame_flags);
    }
    if (!info) {
        char own[256];   /* the ten names take 142 characters */
        if (ti) {
            end = put_flag_names(own, tvb, ft, flags);
            proto_item_append_text(ti, " (%.*s)", (int)(end - own - 3), own + 2);
        }
        return NULL;
    }
    end = put_flag_names(info, tvb, ft, flags);
    if (ti)
        proto_item_append_text(ti, " (%.*s)", (int)(end - info - 3), info + 2);
    return end;
}

char *netgame_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *ng_item,
                            const netgame_pkt_t *pkt, ng_frame_t *rec, char *info)
{
    proto_tree *at;
    guint32 flags = rec->flags;
    gboolean lost_here = FALSE;

    /* Forward-looking loss, known once the pass is over (not in the
     * single pass, where the record is gone before its loss is known). */
    if (PINFO_FD_VISITED(pinfo) && !(flags & NG_F_LOST) && rec_lost(rec)) {
        flags |= NG_F_LOST;
        lost_here = TRUE;
    }
    if (rec->lost)
        lost_here = TRUE;

    at = show_head(tvb, pinfo, tree, rec);
    show_fate(tvb, pinfo, at, pkt, rec, lost_here);
    show_sequence(tvb, pinfo, at, ng_item, pkt, rec);
    show_acks(tvb, pinfo, at, ng_item, pkt, rec);
    info = show_mode(tvb, pinfo, at, rec, info);
    if (flags)
        info = show_flags(tvb, at, flags, info);

    if (have_tap_listener(ng_tap)) {
        ng_tap_info_t *tinfo = wmem_new0(pinfo->pool, ng_tap_info_t);
        tinfo->conn = rec->conn;
        tinfo->dir = rec->dir;
        tinfo->rec = rec;
        tinfo->seq = pkt->seq;
        tinfo->ack = pkt->ack;
        tinfo->ack_bits = pkt->ack_bits;
        tinfo->payload_len = pkt->payload_len;
        tinfo->flags = flags;
        tap_queue_packet(ng_tap, pinfo, tinfo);
    }
    return info;
}

/* ---- End-of-capture view for the statistics ----------------------------- */

guint32 netgame_dir_lost_final(const ng_dir_t *d)
{
    guint32 lost = d->lost;
    for (guint32 k = d->sent_undecided; k < d->sent_count; k++) {
        const ng_sent_t *s = &d->sent[(d->sent_head + k) & (d->sent_cap - 1)];
        if (!s->decided && capture_last_ns - s->t_ns > RTT_MAXIMUM)
            lost++;
    }
    return lost;
}

void netgame_dir_mode_times(const ng_dir_t *d, gint64 *good_ns, gint64 *bad_ns)
{
    *good_ns = d->good_ns;
    *bad_ns = d->bad_ns;
    if (!d->active)
        return;
    if (d->mode == NG_MODE_GOOD)
        *good_ns += d->last_ns - d->mode_since_ns;
    else
        *bad_ns += d->last_ns - d->mode_since_ns;
}

char *netgame_dir_diagnosis(wmem_allocator_t *scope, const ng_conn_t *c, guint di)
{
    const ng_dir_t *d = &c->dir[di], *peer = &c->dir[di ^ 1];
    wmem_strbuf_t *sb = wmem_strbuf_new(scope, "");
    guint32 lost = netgame_dir_lost_final(d);
    guint32 peer_lost = netgame_dir_lost_final(peer);
    gint64 good, bad;

    if (!d->active)
        return NULL;
    netgame_dir_mode_times(d, &good, &bad);
    if (d->packets >= 5 && d->acked == 0 && lost > 0)
        wmem_strbuf_append_printf(sb, "never acked: none of %u packets was acknowledged by the peer "
                                  "(the peer %s); ", d->packets,
                                  peer->active ? "sends but does not ack them" : "is silent in this capture");
    else if (peer->active && peer->packets >= 5 && d->acks_sent == 0 && peer->acked == 0)
        wmem_strbuf_append_printf(sb, "this side never acks the peer's %u packets; ", peer->packets);
    else if (d->acked && lost >= 5 && peer->active && peer->packets - d->peer_pkts_at_ack >= 10 &&
             peer->last_ns - d->last_acked_ns > 2 * NS_PER_S)
        wmem_strbuf_append_printf(sb, "acks stopped: the peer acked nothing of this direction after frame %u, "
                                  "although it sent %u more packets over %.1f s; ", d->last_acked_frame,
                                  peer->packets - d->peer_pkts_at_ack,
                                  (double)(peer->last_ns - d->last_acked_ns) / 1e9);
    if (d->srtt_max > RTT_THRESHOLD_S)
        wmem_strbuf_append_printf(sb, "smoothed RTT rose to %.0f ms, above the 250 ms threshold (the example "
                                  "drops to Bad, 10 packets/s; %.0f ms at the end); ",
                                  d->srtt_max * 1000.0, d->srtt * 1000.0);
    if (d->last_ns - d->first_ns > 10 * NS_PER_S && d->mode == NG_MODE_BAD &&
        d->last_ns - d->mode_since_ns > 10 * NS_PER_S)
        wmem_strbuf_append_printf(sb, "stuck in Bad mode: 10 packets/s for the last %.1f s; ",
                                  (double)(d->last_ns - d->mode_since_ns) / 1e9);
    else if (d->last_ns - d->first_ns > 10 * NS_PER_S && bad * 2 > d->last_ns - d->first_ns)
        wmem_strbuf_append_printf(sb, "mostly in Bad mode: %.1f s of %.1f s at 10 packets/s (%u switches); ",
                                  (double)bad / 1e9, (double)(d->last_ns - d->first_ns) / 1e9, d->switches);
    if (!strstr(wmem_strbuf_get_str(sb), "acks stopped") && !strstr(wmem_strbuf_get_str(sb), "never acked") &&
        d->packets >= 20 && peer->packets >= 20 && lost * 10 > d->packets &&
        peer_lost * 20 < peer->packets && d->acked > 0)
        wmem_strbuf_append_printf(sb, "one-way loss: %.1f%% of this direction lost, %.1f%% the other way; ",
                                  100.0 * lost / d->packets, 100.0 * peer_lost / peer->packets);
    if (!wmem_strbuf_get_len(sb))
        return NULL;
    wmem_strbuf_truncate(sb, wmem_strbuf_get_len(sb) - 2);
    return wmem_strbuf_finalize(sb);
}

/* ---- Registration ------------------------------------------------------- */

void netgame_analysis_register(int proto, module_t *module)
{
    static hf_register_info hf[] = {
        { &hf_netgame_stream, { "Connection index", "netgame.stream", FT_UINT32, BASE_DEC, NULL, 0x0,
            "One per UDP conversation", HFILL } },
        { &hf_netgame_analysis, { "Connection analysis", "netgame.analysis", FT_NONE, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_netgame_direction, { "Direction", "netgame.analysis.direction", FT_STRING, BASE_NONE, NULL, 0x0,
            "Sender -> receiver of this packet", HFILL } },
        { &hf_netgame_flags, { "Analysis flags", "netgame.analysis.flags", FT_UINT32, BASE_HEX, NULL, 0x0,
            "Set on every packet where the analysis found a problem", HFILL } },
        { &hf_netgame_acked_in, { "Acked in frame", "netgame.analysis.acked_in", FT_FRAMENUM, BASE_NONE,
            FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0x0,
            "The first frame from the peer that acknowledges this packet", HFILL } },
        { &hf_netgame_rtt, { "RTT", "netgame.analysis.rtt", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
            "Seconds from this packet to the frame that acknowledges it, at this capture point", HFILL } },
        { &hf_netgame_lost, { "Lost", "netgame.analysis.lost", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Not acknowledged within 1 s (the original's RttMaximum)", HFILL } },
        { &hf_netgame_seq_gap, { "Sequences missing before this one", "netgame.analysis.seq_gap", FT_UINT32,
            BASE_DEC, NULL, 0x0, "In this direction, at this capture point", HFILL } },
        { &hf_netgame_duplicate, { "Duplicate", "netgame.analysis.duplicate", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "This sequence was seen before in this direction", HFILL } },
        { &hf_netgame_duplicate_of, { "Duplicate of frame", "netgame.analysis.duplicate_of", FT_FRAMENUM,
            BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_DUP_ACK), 0x0, NULL, HFILL } },
        { &hf_netgame_send_rate, { "Send rate (packets/s)", "netgame.analysis.send_rate", FT_UINT32, BASE_DEC,
            NULL, 0x0, "Packets of this direction in the last second, this one included", HFILL } },
        { &hf_netgame_mode, { "Flow-control mode", "netgame.analysis.mode", FT_UINT32, BASE_DEC, VALS(mode_vals),
            0x0, "Inferred from the packet intervals: 30 Good, 10 Bad", HFILL } },
        { &hf_netgame_smoothed_rtt, { "Sender's smoothed RTT", "netgame.analysis.smoothed_rtt", FT_RELATIVE_TIME,
            BASE_NONE, NULL, 0x0,
            "The RTT the sender computes as the original does (10% steps), from the acks seen so far",
            HFILL } },
        { &hf_netgame_acks_frame, { "Acknowledges frame", "netgame.analysis.acks_frame", FT_FRAMENUM, BASE_NONE,
            FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0x0, "A peer packet this frame is the first to acknowledge",
            HFILL } },
        { &hf_netgame_ack_rtt, { "RTT of that frame", "netgame.analysis.ack_rtt", FT_RELATIVE_TIME, BASE_NONE,
            NULL, 0x0, "From that frame to this one", HFILL } },
        { &hf_netgame_lost_frame, { "Loss found of frame", "netgame.analysis.lost_frame", FT_FRAMENUM, BASE_NONE,
            NULL, 0x0, "A packet now more than 1 s old and never acknowledged", HFILL } },
        { &hf_netgame_false_ack0, { "False ack of sequence 0", "netgame.analysis.false_ack0", FT_BOOLEAN,
            BASE_NONE, NULL, 0x0,
            "Ack 0 with no bits before the peer's sequence 0 reached this capture point", HFILL } },
        { &hf_netgame_not_captured, { "Packets not captured", "netgame.analysis.not_captured", FT_UINT32,
            BASE_DEC, NULL, 0x0,
            "Packets of the peer that this ack names as received and the capture does not hold (docs/netgame.md)",
            HFILL } },
    };
    static gint *ett[] = { &ett_netgame_analysis, &ett_netgame_flags };
    static ei_register_info ei[] = {
        { &ei_netgame_seq_gap, { "netgame.analysis.seq_gap.expert", PI_SEQUENCE, PI_NOTE,
            "Sequences missing before this one", EXPFILL } },
        { &ei_netgame_seq_back, { "netgame.analysis.sequence_back", PI_SEQUENCE, PI_NOTE,
            "Sequence goes back: reordered", EXPFILL } },
        { &ei_netgame_seq_repeat, { "netgame.analysis.sequence_repeat", PI_SEQUENCE, PI_NOTE,
            "Sequence repeats: duplicate", EXPFILL } },
        { &ei_netgame_ack_back, { "netgame.analysis.ack_back", PI_SEQUENCE, PI_NOTE,
            "Ack goes back", EXPFILL } },
        { &ei_netgame_ack_unsent, { "netgame.analysis.ack_unsent", PI_SEQUENCE, PI_WARN,
            "Ack of a sequence the peer never sent in this capture", EXPFILL } },
        { &ei_netgame_false_ack0, { "netgame.analysis.false_ack0.expert", PI_SEQUENCE, PI_NOTE,
            "False ack of sequence 0: ack 0 with no bits before the peer's sequence 0 was seen "
            "(the original counts it as an ack)", EXPFILL } },
        { &ei_netgame_lost, { "netgame.analysis.lost.expert", PI_SEQUENCE, PI_WARN,
            "Packet lost: not acknowledged within 1 s", EXPFILL } },
        { &ei_netgame_mode_switch, { "netgame.analysis.mode_switch", PI_SEQUENCE, PI_NOTE,
            "Flow-control mode switch", EXPFILL } },
        { &ei_netgame_not_captured, { "netgame.analysis.not_captured.expert", PI_SEQUENCE, PI_NOTE,
            "Packets not captured", EXPFILL } },
    };

    proto_ng = proto;
    CS_REGISTER_ARRAYS(proto, hf, ett, ei);
    register_init_routine(analysis_init);
    ng_tap = register_tap("netgame");
    cs_sp_register();
    cs_sp_register_pref(module, &pref_single_pass);
}

void netgame_analysis_handoff(void)
{
    cs_sp_handoff();
}
