/* analysis.c
 * The reliable analysis (docs/reliable.md "Analysis"): per conversation and
 * direction, which frame first acknowledges each packet and after how long,
 * which packets can no longer be acknowledged (lost), duplicates, reordering,
 * sequence gaps, acknowledgement state that contradicts itself, stalled
 * acks and reassemblies that never completed. Everything is decided on the
 * first pass, in frame order, and kept with the frame that decided it; every
 * pass (with or without a tree) shows that record.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/expert.h>
#include <epan/proto_data.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "reliable-int.h"
#include "common/analysis-util.h"
#include "common/cs-bytes.h"
#include "common/conv-cache.h"
#include "common/single-pass.h"

/* The library's reassembly window: a packet 64 older than the newest is
 * dropped from reassembly. */
#define RL_REASSEMBLY_WINDOW 64
/* A packet's ack bits cover the ack and the 31 before it. */
#define RL_ACK_WINDOW 32
/* A packet at most this many places behind the newest sent goes into its
 * place in the direction's sorted array; one later than that (hostile
 * input) is kept beside it. */
#define RL_IN_PLACE 64

static int proto_reliable = -1;
static int reliable_tap = -1;

static int hf_reliable_acked_in = -1;
static int hf_reliable_rtt = -1;
static int hf_reliable_acks = -1;
static int hf_reliable_lost = -1;
static int hf_reliable_lost_frame = -1;
static int hf_reliable_lost_in = -1;
static int hf_reliable_duplicate_of = -1;
static int hf_reliable_gap = -1;
static int hf_reliable_incomplete = -1;
static int hf_reliable_ext_seq = -1;
static int hf_reliable_not_captured = -1;
static gint ett_reliable_analysis = -1;

static expert_field ei_reliable_duplicate = EI_INIT;
static expert_field ei_reliable_out_of_order = EI_INIT;
static expert_field ei_reliable_gap = EI_INIT;
static expert_field ei_reliable_ack_back = EI_INIT;
static expert_field ei_reliable_ack_undone = EI_INIT;
static expert_field ei_reliable_ack_stalled = EI_INIT;
static expert_field ei_reliable_frag_count = EI_INIT;
static expert_field ei_reliable_lost = EI_INIT;
static expert_field ei_reliable_incomplete = EI_INIT;
static expert_field ei_reliable_not_captured = EI_INIT;
static expert_field ei_reliable_restart = EI_INIT;

static ws_cb_bool pref_single_pass = TRUE;   /* reliable.single_pass (common/single-pass.h) */

/* A frame's record as kept for the passes that revisit it (Wireshark, tshark
 * -2), 32 bytes: what the frame decided, without what later frames add
 * (acked in, RTT, lost in: in its packet's rl_sent_t) or its links (the
 * peer's packets whose acked_in is this frame, all within the 32 sequences
 * below ack_ext). A frame with a problem to show keeps its whole record too
 * (rare, by index). */
typedef struct rl_kept {
    rl_conn_t *conn;
    guint64 ext_seq;
    guint64 ack_ext;
    guint32 bits;             /* RLA_* flags, links << 16, direction << 31 */
    guint32 rare;             /* 1 + index in kept_rare, 0: none */
} rl_kept_t;

#define RL_KEPT_LINKS_SHIFT 16
#define RL_KEPT_DIR (1u << 31)
static wmem_map_t *convs;      /* conversation_t * -> rl_conn_t */
static GPtrArray *conn_list;   /* in order of first sight (file lifetime) */
/* The passes that revisit: the kept records in frame order, the index + 1
 * of each frame's (0: none) by frame number, and the whole records of the
 * frames with a problem to show. */
static GArray *kept;           /* rl_kept_t */
static GArray *kept_index;     /* guint32 */
static GPtrArray *kept_rare;   /* packed rl_frame_t (rare_pack, file scope) */
/* The frame analysed last, in the single pass: a second call in the same
 * frame gets the same record. */
static const frame_data *last_fd;
static guint32 last_num;
static rl_frame_t *last_rec;

static void free_dir(rl_dir_t *d)
{
    g_free(d->sent);
    g_free(d->pending);
    g_free(d->und);
    if (d->late)
        g_hash_table_destroy(d->late);
}

static void clear_conns(void)
{
    if (conn_list) {
        for (guint i = 0; i < conn_list->len; i++) {
            rl_conn_t *c = (rl_conn_t *)g_ptr_array_index(conn_list, i);
            free_dir(&c->dir[0]);
            free_dir(&c->dir[1]);
        }
        g_ptr_array_set_size(conn_list, 0);
    }
    if (kept) {
        g_array_set_size(kept, 0);
        g_array_set_size(kept_index, 0);
        g_ptr_array_set_size(kept_rare, 0);
    }
    last_fd = NULL;
    last_num = 0;
    last_rec = NULL;
    cs_sp_init();
}

static gint64 ts_ns(const packet_info *pinfo)
{
    return (gint64)pinfo->abs_ts.secs * 1000000000 + pinfo->abs_ts.nsecs;
}

static guint64 unwrap(const rl_dir_t *d, guint16 seq)
{
    return d->newest + (gint64)(gint16)(guint16)(seq - (guint16)d->newest);
}

/* ---- The sent packets of a direction ------------------------------------ */

/* Index of the first entry of d->sent with ext >= ext (n_sent: none). */
static guint sent_lower_bound(const rl_dir_t *d, guint64 ext)
{
    guint lo = 0, hi = d->n_sent;

    /* Most lookups are of the newest packets: try where ext would be if
     * the last few were all there. */
    if (hi && d->sent[hi - 1].ext < ext)
        return hi;
    if (hi && d->sent[hi - 1].ext - ext < hi) {
        guint k = hi - 1 - (guint)(d->sent[hi - 1].ext - ext);
        if (d->sent[k].ext == ext)
            return k;
    }
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (d->sent[mid].ext < ext)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static rl_sent_t *sent_find(const rl_dir_t *d, guint64 ext)
{
    guint k = sent_lower_bound(d, ext);

    if (k < d->n_sent && d->sent[k].ext == ext)
        return &d->sent[k];
    return d->late ? (rl_sent_t *)g_hash_table_lookup(d->late, &ext) : NULL;
}

/* A new sequence (sent_find found none). The pointer is valid until the
 * next insertion in this direction. */
static rl_sent_t *sent_add(rl_dir_t *d, guint64 ext, guint32 frame, gint64 t_ns)
{
    guint k = sent_lower_bound(d, ext);
    rl_sent_t *e;

    if (d->n_sent - k > RL_IN_PLACE) {
        /* Far behind (hostile input): kept aside, not moved into place. */
        if (!d->late)
            d->late = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
        e = g_new0(rl_sent_t, 1);
        e->ext = ext;
        g_hash_table_insert(d->late, &e->ext, e);
    } else {
        if (d->n_sent == d->sent_cap) {
            d->sent_cap = d->sent_cap ? d->sent_cap * 2 : 8;
            d->sent = g_renew(rl_sent_t, d->sent, d->sent_cap);
        }
        memmove(d->sent + k + 1, d->sent + k, (d->n_sent - k) * sizeof *d->sent);
        d->n_sent++;
        e = &d->sent[k];
        memset(e, 0, sizeof *e);
        e->ext = ext;
    }
    e->frame = frame;
    e->t_ns = t_ns;
    return e;
}

/* ---- Reassemblies under way --------------------------------------------- */

static rl_reasm_t *pending_find(const rl_dir_t *d, guint64 ext)
{
    for (guint i = 0; i < d->n_pending; i++)
        if (d->pending[i].ext == ext)
            return &d->pending[i];
    return NULL;
}

static void pending_add(rl_dir_t *d, guint64 ext, guint32 frame, guint16 num)
{
    rl_reasm_t *r;

    if (d->n_pending == d->pending_cap) {
        d->pending_cap = d->pending_cap ? d->pending_cap * 2 : 4;
        d->pending = g_renew(rl_reasm_t, d->pending, d->pending_cap);
    }
    r = &d->pending[d->n_pending++];
    memset(r, 0, sizeof *r);
    r->ext = ext;
    r->first_frame = frame;
    r->num = num;
}

static void pending_remove(rl_dir_t *d, rl_reasm_t *r)
{
    *r = d->pending[--d->n_pending];
}

/* ---- The frame's record -------------------------------------------------- */

static void append_link(wmem_allocator_t *scope, rl_frame_t *rec, guint32 frame, guint16 seq, gint64 rtt)
{
    rec->links = (rl_ack_link_t *)wmem_realloc(scope, rec->links, (rec->n_links + 1) * sizeof *rec->links);
    rec->links[rec->n_links].frame = frame;
    rec->links[rec->n_links].seq = seq;
    rec->links[rec->n_links].rtt_ns = rtt;
    rec->n_links++;
}

static void append_lost(wmem_allocator_t *scope, rl_frame_t *rec, guint32 frame, guint16 seq)
{
    rec->lost_frames = (guint32 *)wmem_realloc(scope, rec->lost_frames, (rec->n_lost + 1) * sizeof(guint32));
    rec->lost_seqs = (guint16 *)wmem_realloc(scope, rec->lost_seqs, (rec->n_lost + 1) * sizeof(guint16));
    rec->lost_frames[rec->n_lost] = frame;
    rec->lost_seqs[rec->n_lost] = seq;
    rec->n_lost++;
}

/* The record of a frame with a problem, packed for the passes that revisit
 * it (a quarter of the payload frames on the real soak, most of them
 * duplicates): the fields kept_record() takes from it, each a
 * variable-length number (7 bits a byte; a signed one folded), and the
 * lists, about 20 bytes instead of a 150-byte rl_frame_t and its five
 * arrays. */
static guint64 fold(gint64 v)
{
    return v >= 0 ? (guint64)v << 1 : ((guint64)(-(v + 1)) << 1) | 1;
}

static gint64 unfold(guint64 v)
{
    return v & 1 ? -(gint64)(v >> 1) - 1 : (gint64)(v >> 1);
}

static guint8 *rare_pack(wmem_allocator_t *scope, const rl_frame_t *rec)
{
    /* 13 numbers of at most 10 bytes, and 3 and 3 a list entry */
    guint8 *buf = (guint8 *)g_malloc(13 * 10 + ((gsize)rec->n_lost * 2 + (gsize)rec->n_incomplete * 3) * 10);
    guint8 *p = buf, *kept;

    p = cs_put_varint(p, rec->dup_of);
    p = cs_put_varint(p, rec->gap);
    p = cs_put_varint(p, rec->prev_ack);
    p = cs_put_varint(p, rec->stalled_packets);
    p = cs_put_varint(p, rec->undone_seq);
    p = cs_put_varint(p, rec->first_count);
    p = cs_put_varint(p, rec->not_captured);
    p = cs_put_varint(p, rec->packet_ack);
    p = cs_put_varint(p, rec->packet_ack_bits);
    p = cs_put_varint(p, rec->acked_in);
    p = cs_put_varint(p, fold(rec->rtt_ns));
    p = cs_put_varint(p, rec->lost_in);
    p = cs_put_varint(p, rec->n_lost);
    for (guint i = 0; i < rec->n_lost; i++) {
        p = cs_put_varint(p, rec->lost_frames[i]);
        p = cs_put_varint(p, rec->lost_seqs[i]);
    }
    p = cs_put_varint(p, rec->n_incomplete);
    for (guint i = 0; i < rec->n_incomplete; i++) {
        p = cs_put_varint(p, rec->incomplete_seqs[i]);
        p = cs_put_varint(p, rec->incomplete_missing[i]);
        p = cs_put_varint(p, rec->incomplete_frames[i]);
    }
    kept = (guint8 *)wmem_memdup(scope, buf, (gsize)(p - buf));
    g_free(buf);
    return kept;
}

static void rare_unpack(wmem_allocator_t *scope, const guint8 *p, rl_frame_t *rec)
{
    guint64 v;

    p = cs_get_varint(p, &v); rec->dup_of = (guint32)v;
    p = cs_get_varint(p, &v); rec->gap = (guint32)v;
    p = cs_get_varint(p, &v); rec->prev_ack = (guint16)v;
    p = cs_get_varint(p, &v); rec->stalled_packets = (guint32)v;
    p = cs_get_varint(p, &v); rec->undone_seq = (guint16)v;
    p = cs_get_varint(p, &v); rec->first_count = (guint16)v;
    p = cs_get_varint(p, &v); rec->not_captured = (guint32)v;
    p = cs_get_varint(p, &v); rec->packet_ack = (guint16)v;
    p = cs_get_varint(p, &v); rec->packet_ack_bits = (guint32)v;
    p = cs_get_varint(p, &v); rec->acked_in = (guint32)v;
    p = cs_get_varint(p, &v); rec->rtt_ns = unfold(v);
    p = cs_get_varint(p, &v); rec->lost_in = (guint32)v;
    p = cs_get_varint(p, &v); rec->n_lost = (guint16)v;
    if (rec->n_lost) {
        rec->lost_frames = wmem_alloc_array(scope, guint32, rec->n_lost);
        rec->lost_seqs = wmem_alloc_array(scope, guint16, rec->n_lost);
    }
    for (guint i = 0; i < rec->n_lost; i++) {
        p = cs_get_varint(p, &v); rec->lost_frames[i] = (guint32)v;
        p = cs_get_varint(p, &v); rec->lost_seqs[i] = (guint16)v;
    }
    p = cs_get_varint(p, &v); rec->n_incomplete = (guint16)v;
    if (rec->n_incomplete) {
        rec->incomplete_seqs = wmem_alloc_array(scope, guint16, rec->n_incomplete);
        rec->incomplete_missing = wmem_alloc_array(scope, guint16, rec->n_incomplete);
        rec->incomplete_frames = wmem_alloc_array(scope, guint32, rec->n_incomplete);
    }
    for (guint i = 0; i < rec->n_incomplete; i++) {
        p = cs_get_varint(p, &v); rec->incomplete_seqs[i] = (guint16)v;
        p = cs_get_varint(p, &v); rec->incomplete_missing[i] = (guint16)v;
        p = cs_get_varint(p, &v); rec->incomplete_frames[i] = (guint32)v;
    }
}

/* Keeps the record of a frame for the passes that revisit it. */
static void keep_record(packet_info *pinfo, const rl_frame_t *rec)
{
    wmem_allocator_t *f = wmem_file_scope();
    rl_kept_t k;
    guint32 idx;

    k.conn = rec->conn;
    k.ext_seq = rec->ext_seq;
    k.ack_ext = rec->ack_ext;
    k.bits = rec->flags | (guint32)rec->n_links << RL_KEPT_LINKS_SHIFT | (rec->dir ? RL_KEPT_DIR : 0);
    k.rare = 0;
    if (rec->flags || rec->n_lost || rec->n_incomplete) {
        g_ptr_array_add(kept_rare, rare_pack(f, rec));
        k.rare = kept_rare->len;
    }
    g_array_append_val(kept, k);
    if (kept_index->len <= pinfo->num)
        g_array_set_size(kept_index, pinfo->num + 1);
    idx = kept->len;
    g_array_index(kept_index, guint32, pinfo->num) = idx;
}

static const rl_kept_t *kept_find(const packet_info *pinfo)
{
    guint32 idx = kept_index->len > pinfo->num ? g_array_index(kept_index, guint32, pinfo->num) : 0;
    return idx ? &g_array_index(kept, rl_kept_t, idx - 1) : NULL;
}

/* The record of a revisited frame, in the packet's scope: what the first
 * pass kept, with what later frames found. */
static rl_frame_t *kept_record(packet_info *pinfo, const rl_kept_t *k)
{
    rl_frame_t *rec = wmem_new0(pinfo->pool, rl_frame_t);
    guint dir = k->bits & RL_KEPT_DIR ? 1 : 0;
    guint n_links = (k->bits >> RL_KEPT_LINKS_SHIFT) & 0xFF;
    const rl_dir_t *d = &k->conn->dir[dir], *p = &k->conn->dir[1 - dir];
    const rl_sent_t *e;

    if (k->rare) {
        rare_unpack(pinfo->pool, (const guint8 *)g_ptr_array_index(kept_rare, k->rare - 1), rec);
        rec->packet_acks = FALSE;   /* first pass only, for every frame alike */
    }
    rec->conn = k->conn;
    rec->dir = (guint8)dir;
    rec->ext_seq = k->ext_seq;
    rec->flags = k->bits & ((1u << RL_KEPT_LINKS_SHIFT) - 1);
    rec->ack_ext = k->ack_ext;
    rec->n_links = 0;
    rec->links = NULL;
    e = sent_find(d, k->ext_seq);
    if (e && e->frame == pinfo->num) {
        rec->acked_in = e->acked_in;
        rec->rtt_ns = e->acked_in ? e->t_ns : 0;
        rec->lost_in = e->lost_in;
    }
    /* The links in the order the first pass made them: ack, ack - 1, ... */
    for (guint i = 0; i < RL_ACK_WINDOW && rec->n_links < n_links && k->ack_ext >= i; i++) {
        e = sent_find(p, k->ack_ext - i);
        if (e && e->acked_in == pinfo->num)
            append_link(pinfo->pool, rec, e->frame, (guint16)e->ext, e->t_ns);
    }
    return rec;
}

/* ---- The analysis ------------------------------------------------------------ */

/* One acknowledged packet e of the peer direction p, at this frame. */
static void ack_one(packet_info *pinfo, wmem_allocator_t *scope, rl_frame_t *rec, rl_dir_t *p, rl_sent_t *e,
                    gint64 now)
{
    gint64 rtt = now - e->t_ns;

    if (e->lost_in) {
        /* Found lost earlier, acknowledged by a header sent before that
         * and seen after (reordered): not lost. */
        e->lost_in = 0;
        p->lost--;
    }
    e->acked_in = pinfo->num;
    e->t_ns = rtt;
    append_link(scope, rec, e->frame, (guint16)e->ext, rtt);
    p->acked++;
    if (!p->rtt_sum_ns && p->acked == 1) {
        p->rtt_min_ns = p->rtt_max_ns = rtt;
    } else {
        if (rtt < p->rtt_min_ns) p->rtt_min_ns = rtt;
        if (rtt > p->rtt_max_ns) p->rtt_max_ns = rtt;
    }
    p->rtt_sum_ns += rtt;
}

/* The header of a packet of direction d (sent by one side), taken at this
 * frame: acknowledgements of the peer direction p's packets, and loss. */
static void process_header(packet_info *pinfo, wmem_allocator_t *scope, rl_frame_t *rec, rl_dir_t *d, rl_dir_t *p,
                           guint16 ack, guint32 bits)
{
    gint64 now = ts_ns(pinfo);
    /* Older than the packet whose header gave the last ack (reordered, or a
     * fragmented packet completing after a newer packet): its ack is older
     * too, and says nothing about where the ack is now. */
    gboolean older = d->have_ack && rec->ext_seq < d->last_ack_seq;
    gboolean gap_before = d->gap_since_header;

    d->gap_since_header = FALSE;
    if (d->stale)
        return;             /* acks of the peer before it started again */
    if (!older && d->have_ack && (gint16)(guint16)(ack - d->last_ack) < 0) {
        rec->flags |= RLA_ACK_BACK;
        rec->prev_ack = d->last_ack;
    }
    if (!d->have_ack || ack != d->last_ack) {
        p->stall_flagged = FALSE;
        d->last_ack_frame = pinfo->num;
    }
    if (!older) {
        d->last_ack = ack;
        d->last_ack_seq = rec->ext_seq;
        d->last_ack_start = ack == 0xFFFF && bits == 0;
        d->have_ack = TRUE;
    }
    if (!p->active)
        return;

    guint64 ack_ext = unwrap(p, ack);
    guint64 missed = 0;
    rec->ack_ext = ack_ext;
    /* Packets of the peer that this side received (it acks them) and the
     * capture does not hold: everything up to an ack ahead of the peer's
     * newest, and a set bit for a sequence between the peer's first and
     * newest that the capture never saw. A capture at either endpoint sees
     * every packet sent there and every packet received there, so these
     * are packets the capture missed (a kernel's drops). */
    /* Each counted once: the peer's sequences up to missed_to are counted;
     * a set bit in a run the capture lacks counts the whole run. */
    guint64 counted = MAX(p->newest, p->missed_to), missed_top = 0;
    if (bits && ack_ext > counted) {
        missed = ack_ext - counted;
        missed_top = ack_ext;
    }
    /* The 32 sequences from the ack down, found in one walk down the sorted
     * array (k: the first entry not below s) instead of 32 searches. */
    guint k = sent_lower_bound(p, ack_ext);
    for (guint i = 0; i < 32; i++) {
        guint64 s = ack_ext - i;
        rl_sent_t *e;
        while (k > 0 && p->sent[k - 1].ext >= s)
            k--;
        if (k < p->n_sent && p->sent[k].ext == s)
            e = &p->sent[k];
        else
            e = p->late ? (rl_sent_t *)g_hash_table_lookup(p->late, &s) : NULL;
        if ((bits >> i) & 1) {
            if (!e) {
                if (s <= p->newest && s > p->missed_to && p->n_sent && s > p->sent[0].ext) {
                    /* The whole run of sequences the capture lacks around s
                     * (k: where s would be). */
                    guint64 upper = k < p->n_sent ? p->sent[k].ext : p->newest + 1;
                    /* A run partly shown already (the rest of one an ack
                     * ahead showed) adds no new note. */
                    if (p->missed_to < p->sent[k - 1].ext)
                        missed += upper - p->sent[k - 1].ext - 1;
                    p->missed_to = upper - 1;
                }
            } else if (!e->acked_in) {
                ack_one(pinfo, scope, rec, p, e, now);
            }
        } else if (e && e->acked_in && !older && !(rec->flags & RLA_ACK_UNDONE)) {
            rec->flags |= RLA_ACK_UNDONE;
            rec->undone_seq = (guint16)s;
        }
    }
    if (missed && p->missed && counted == p->missed_to && counted >= p->newest) {
        /* The run of the peer's packets already shown, still going on
         * (the peer has sent nothing the capture holds since): no new note. */
        p->missed_to = MAX(p->missed_to, missed_top);
    } else if (missed) {
        rec->flags |= RLA_NOT_CAPTURED;
        rec->not_captured = (guint32)MIN(missed, G_MAXUINT32);
        p->missed = TRUE;
        p->missed_to = MAX(p->missed_to, missed_top);
    }
    /* Loss: a packet the ack has moved 32 or more past, never acked. A
     * header with no bit set (the initial ack of 65535) says nothing; nor
     * does the first header after a gap in this direction when the capture
     * is known to have missed packets of it or of the peer there: the
     * headers it missed may have acknowledged them. */
    gboolean undecidable = gap_before && (d->missed || missed);
    if (gap_before)
        d->missed = FALSE;
    while (bits && p->und_head < p->und_len && p->und[p->und_head] + RL_ACK_WINDOW <= ack_ext) {
        guint64 s = p->und[p->und_head++];
        rl_sent_t *e = sent_find(p, s);
        if (undecidable || !e || e->acked_in || e->lost_in)
            continue;
        e->lost_in = pinfo->num;
        p->lost++;
        append_lost(scope, rec, e->frame, (guint16)s);
    }
}

/* Enters a new sent sequence among the undecided ones, in order: at the end,
 * or (reordered) up to 64 places before it; further back (hostile input) at
 * the start of what is left, so that it is decided by the next header. */
static void add_undecided(rl_dir_t *d, guint64 ext)
{
    guint i;

    if (d->und_head > 1024 && d->und_head * 2 > d->und_len) {
        memmove(d->und, d->und + d->und_head, (d->und_len - d->und_head) * sizeof(guint64));
        d->und_len -= d->und_head;
        d->und_head = 0;
    }
    if (d->und_len == d->und_cap) {
        d->und_cap = d->und_cap ? d->und_cap * 2 : 8;
        d->und = g_renew(guint64, d->und, d->und_cap);
    }
    i = d->und_len;
    while (i > d->und_head && d->und_len - i < 64 && d->und[i - 1] > ext)
        i--;
    if (i > d->und_head && d->und[i - 1] > ext)
        i = d->und_head;
    memmove(d->und + i + 1, d->und + i, (d->und_len - i) * sizeof(guint64));
    d->und[i] = ext;
    d->und_len++;
}

rl_conn_t *reliable_conn_of(packet_info *pinfo)
{
    conversation_t *conv = cs_conv_find_or_create(pinfo);
    rl_conn_t *c = (rl_conn_t *)wmem_map_lookup(convs, conv);

    if (!c) {
        c = wmem_new0(wmem_file_scope(), rl_conn_t);
        wmem_map_insert(convs, conv, c);
    }
    return c;
}

const rl_dir_t *reliable_conn_dir(const rl_conn_t *c, const address *src, guint32 port)
{
    for (guint i = 0; i < 2; i++)
        if (c->dir[i].active && c->dir[i].sport == port && addresses_equal(&c->dir[i].src, src))
            return &c->dir[i];
    return NULL;
}

static rl_conn_t *get_conn(packet_info *pinfo, guint *dir_out)
{
    rl_conn_t *c = reliable_conn_of(pinfo);
    if (!c->listed) {
        /* numbered in the order of the first packet analysed */
        c->listed = TRUE;
        c->index = conn_list->len;
        g_ptr_array_add(conn_list, c);
    }
    guint dir;
    if (!c->dir[0].active)
        dir = 0;
    else if (addresses_equal(&c->dir[0].src, &pinfo->src) && c->dir[0].sport == pinfo->srcport)
        dir = 0;
    else
        dir = 1;
    rl_dir_t *d = &c->dir[dir];
    if (!d->active) {
        d->active = TRUE;
        au_copy_endpoints(pinfo, FALSE, &d->src, &d->sport, &d->dst, &d->dport);
        d->first_frame = pinfo->num;
        d->first_ns = ts_ns(pinfo);
    }
    *dir_out = dir;
    return c;
}

static gint cmp_reasm(gconstpointer a, gconstpointer b)
{
    const rl_reasm_t *x = (const rl_reasm_t *)a, *y = (const rl_reasm_t *)b;
    return x->ext < y->ext ? -1 : x->ext > y->ext;
}

/* Reassemblies the library would have given up: 64 older than the newest. */
static void drop_stale(wmem_allocator_t *scope, rl_frame_t *rec, rl_dir_t *d)
{
    rl_reasm_t gone[RL_REASSEMBLY_WINDOW * 2];
    guint n = 0;

    for (guint i = 0; i < d->n_pending;) {
        if (d->newest >= d->pending[i].ext + RL_REASSEMBLY_WINDOW && n < G_N_ELEMENTS(gone)) {
            gone[n++] = d->pending[i];
            pending_remove(d, &d->pending[i]);
        } else {
            i++;
        }
    }
    if (!n)
        return;
    qsort(gone, n, sizeof gone[0], cmp_reasm);
    rec->incomplete_seqs = (guint16 *)wmem_alloc(scope, n * sizeof(guint16));
    rec->incomplete_missing = (guint16 *)wmem_alloc(scope, n * sizeof(guint16));
    rec->incomplete_frames = (guint32 *)wmem_alloc(scope, n * sizeof(guint32));
    for (guint i = 0; i < n; i++) {
        rec->incomplete_seqs[i] = (guint16)gone[i].ext;
        rec->incomplete_missing[i] = (guint16)(gone[i].num - gone[i].have_count);
        rec->incomplete_frames[i] = gone[i].first_frame;
    }
    rec->n_incomplete = (guint16)n;
    d->incomplete += n;
}

static void queue_tap(packet_info *pinfo, const rl_frame_t *rec)
{
    rl_tap_info_t *ti = wmem_new(pinfo->pool, rl_tap_info_t);
    ti->conn = rec->conn;
    ti->dir = rec->dir;
    tap_queue_packet(reliable_tap, pinfo, ti);
}

/* A new sequence of direction d (sent_find found none): its entry, the
 * undecided list, order, gaps, and a reassembly for a fragment. */
static void new_sequence(packet_info *pinfo, rl_frame_t *rec, rl_dir_t *d, const reliable_pkt_t *pkt, guint64 ext,
                         gboolean first)
{
    sent_add(d, ext, pinfo->num, ts_ns(pinfo));
    d->packets++;
    add_undecided(d, ext);
    if (first) {
        d->newest = ext;
    } else if (ext > d->newest) {
        if (ext > d->newest + 1) {
            rec->flags |= RLA_GAP;
            rec->gap = (guint32)(ext - d->newest - 1);
            d->gap_seqs += rec->gap;
            d->gap_since_header = TRUE;
        }
        d->newest = ext;
    } else {
        rec->flags |= RLA_OUT_OF_ORDER;
        d->reordered++;
    }
    if (pkt->is_fragment)
        pending_add(d, ext, pinfo->num, pkt->num_fragments);
}

/* A fragment of a packet under reassembly (not a duplicate): TRUE when it
 * completes the packet and the packet's header is to be taken (*ack, *bits). */
static gboolean add_fragment(rl_frame_t *rec, rl_dir_t *d, const reliable_pkt_t *pkt, guint32 first_frame,
                             guint16 *ack, guint32 *bits)
{
    rl_reasm_t *r = pending_find(d, rec->ext_seq);

    if (!r)
        return FALSE;
    if (r->num != pkt->num_fragments) {
        rec->flags |= RLA_FRAG_COUNT;
        rec->first_count = r->num;
        return FALSE;
    }
    if ((r->have[pkt->fragment_id / 8] >> (pkt->fragment_id % 8)) & 1) {
        rec->flags |= RLA_DUPLICATE;
        rec->dup_of = first_frame;
        d->dups++;
        return FALSE;
    }
    r->have[pkt->fragment_id / 8] |= (guint8)(1u << (pkt->fragment_id % 8));
    r->have_count++;
    if (pkt->has_header) {
        r->has_header = TRUE;
        r->ack = pkt->ack;
        r->ack_bits = pkt->ack_bits;
    }
    if (r->have_count != r->num)
        return FALSE;
    d->reassembled++;
    rec->packet_acks = (guint8)r->has_header;
    rec->packet_ack = r->ack;
    rec->packet_ack_bits = r->ack_bits;
    if (r->has_header) {
        *ack = r->ack;
        *bits = r->ack_bits;
    }
    gboolean take = r->has_header;
    pending_remove(d, r);
    return take;
}

/* The peer's ack has not moved while this side sent 32 and more newer
 * packets: nothing new can be acknowledged. */
static void check_stall(rl_frame_t *rec, rl_dir_t *d, const rl_dir_t *p)
{
    /* Not while the peer's packets are missing from the capture (its ack
     * moved in headers the capture does not hold), nor while the peer has
     * received nothing (its start: ack 65535, no ack bits). */
    if (p->have_ack && !p->missed && !p->last_ack_start && !d->stall_flagged && !(rec->flags & RLA_DUPLICATE)) {
        guint64 ack_ext = unwrap(d, p->last_ack);
        /* 33 and more newer packets in the capture too: after packets the
         * capture missed, the peer's ack is only as old as its last header
         * the capture holds. */
        if (d->newest > ack_ext && d->newest - ack_ext > RL_ACK_WINDOW &&
            d->n_sent - sent_lower_bound(d, ack_ext + 1) > RL_ACK_WINDOW) {
            rec->flags |= RLA_ACK_STALLED;
            rec->prev_ack = p->last_ack;
            rec->stalled_packets = (guint32)(d->newest - ack_ext);
            d->stall_flagged = TRUE;
        }
    }
}

/* An endpoint's start (ack 65535 and no ack bits: it has received nothing;
 * a header that acks anything has bit 0 set) with a sequence under
 * RL_RESTART_SEQ, in a direction whose headers acknowledged before, or a
 * sequence under RL_RESTART_SEQ far behind after the peer started again:
 * the endpoint started again on the same ports (a reconnect), its
 * sequences over from 0. */
#define RL_RESTART_SEQ 64

static gboolean is_restart(const rl_dir_t *d, const reliable_pkt_t *pkt)
{
    if (!pkt->valid || !pkt->has_header || pkt->seq >= RL_RESTART_SEQ)
        return FALSE;
    /* After the peer started again, this side's start may already ack the
     * peer's new packets: a sequence under RL_RESTART_SEQ far behind. */
    if (d->stale && unwrap(d, pkt->seq) + RL_RESTART_SEQ <= d->newest)
        return TRUE;
    return pkt->ack == 0xFFFF && pkt->ack_bits == 0 && d->have_ack && !d->last_ack_start;
}

/* The direction d starts over: what its old packets left undecided stays
 * so, its reassemblies under way are dropped (the endpoint dropped them
 * too), and its new sequences come after every old one, from the next
 * 2^16; the peer p's headers ack nothing until p starts again too. */
static guint64 restart_dir(rl_dir_t *d, rl_dir_t *p, guint16 seq)
{
    /* The peer's headers, until it starts again too, ack the old packets;
     * this side following a peer that started first is in step again. */
    if (d->stale)
        d->stale = FALSE;
    else
        p->stale = p->active;
    d->und_head = d->und_len;
    d->n_pending = 0;
    d->have_ack = FALSE;
    d->missed = FALSE;
    d->gap_since_header = FALSE;
    d->stall_flagged = FALSE;
    d->restarts++;
    return ((d->newest >> 16) + 2) << 16 | seq;
}

/* First visit: the analysis of the packet, in frame order. */
static void analyse(packet_info *pinfo, wmem_allocator_t *scope, rl_frame_t *rec, const reliable_pkt_t *pkt,
                    guint32 bytes)
{
    guint dirn;
    rl_conn_t *c = get_conn(pinfo, &dirn);
    rl_dir_t *d = &c->dir[dirn], *p = &c->dir[1 - dirn];

    rec->conn = c;
    rec->dir = (guint8)dirn;
    gboolean first = d->packets == 0 && d->fragments == 0;
    guint64 ext = first ? ((guint64)1 << 20) + pkt->seq : unwrap(d, pkt->seq);

    if (!first && is_restart(d, pkt)) {
        ext = restart_dir(d, p, pkt->seq);
        rec->flags |= RLA_RESTART;
        first = TRUE;       /* no gap from the old sequences */
    }
    rec->ext_seq = ext;
    d->last_frame = pinfo->num;
    d->last_ns = ts_ns(pinfo);
    d->bytes += bytes;
    if (pkt->is_fragment)
        d->fragments++;
    if (!pkt->valid) {
        d->bad++;
        return;
    }

    rl_sent_t *e = sent_find(d, ext);
    guint32 first_frame = e ? e->frame : pinfo->num;
    gboolean process = FALSE;
    guint16 ack = pkt->ack;
    guint32 bits = pkt->ack_bits;

    if (!e) {
        new_sequence(pinfo, rec, d, pkt, ext, first);
        process = !pkt->is_fragment;
    } else if (!pkt->is_fragment || !pending_find(d, ext)) {
        rec->flags |= RLA_DUPLICATE;
        rec->dup_of = e->frame;
        d->dups++;
    }
    if (pkt->is_fragment && !(rec->flags & RLA_DUPLICATE))
        process = add_fragment(rec, d, pkt, first_frame, &ack, &bits);
    if (process)
        process_header(pinfo, scope, rec, d, p, ack, bits);
    drop_stale(scope, rec, d);
    check_stall(rec, d, p);
}

rl_frame_t *reliable_analysis_packet(packet_info *pinfo, const reliable_pkt_t *pkt, guint32 bytes,
                                     gboolean *transient)
{
    rl_frame_t *rec;
    const rl_kept_t *k = kept_find(pinfo);

    *transient = cs_sp_begin_packet(pinfo, pref_single_pass);
    if (k || PINFO_FD_VISITED(pinfo)) {
        /* Every pass feeds the tap: the GUI's tables retap the file. */
        rec = k ? kept_record(pinfo, k) : NULL;
        if (rec)
            queue_tap(pinfo, rec);
        return rec;
    }
    if (*transient && last_fd == pinfo->fd && last_num == pinfo->num)
        return last_rec;    /* analysed already in this frame */

    rec = wmem_new0(pinfo->pool, rl_frame_t);
    analyse(pinfo, pinfo->pool, rec, pkt, bytes);
    if (*transient) {
        last_fd = pinfo->fd;
        last_num = pinfo->num;
        last_rec = rec;
    } else {
        keep_record(pinfo, rec);
    }
    queue_tap(pinfo, rec);
    cs_sp_end_packet(pinfo);
    return rec;
}

void reliable_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *ti, rl_frame_t *rec)
{
    proto_item *it;
    proto_tree *at;

    if (!rec || !rec->conn)
        return;
    at = proto_tree_add_subtree(tree, tvb, 0, 0, ett_reliable_analysis, &it, "Analysis");
    proto_item_set_generated(it);
    proto_item_set_generated(proto_tree_add_uint64(at, hf_reliable_ext_seq, tvb, 0, 0, rec->ext_seq));
    if (rec->acked_in) {
        proto_item_set_generated(proto_tree_add_uint(at, hf_reliable_acked_in, tvb, 0, 0, rec->acked_in));
        proto_item_set_generated(proto_tree_add_double(at, hf_reliable_rtt, tvb, 0, 0, (double)rec->rtt_ns / 1e9));
    }
    if (rec->lost_in)
        proto_item_set_generated(proto_tree_add_uint(at, hf_reliable_lost_in, tvb, 0, 0, rec->lost_in));
    for (guint i = 0; i < rec->n_links; i++) {
        it = proto_tree_add_uint_format_value(at, hf_reliable_acks, tvb, 0, 0, rec->links[i].frame,
                                              "%u (sequence %u, RTT %.3f ms)", rec->links[i].frame,
                                              rec->links[i].seq, (double)rec->links[i].rtt_ns / 1e6);
        proto_item_set_generated(it);
    }
    if (rec->flags & RLA_DUPLICATE) {
        it = proto_tree_add_uint(at, hf_reliable_duplicate_of, tvb, 0, 0, rec->dup_of);
        proto_item_set_generated(it);
        AU_EXPERT(pinfo, ti, &ei_reliable_duplicate,
                  "Duplicate of frame %u: the receiver ignores it", rec->dup_of);
    }
    if (rec->flags & RLA_OUT_OF_ORDER)
        AU_EXPERT(pinfo, ti, &ei_reliable_out_of_order,
                  "Out of order: older than the newest sequence of this direction");
    if (rec->flags & RLA_GAP) {
        proto_item_set_generated(proto_tree_add_uint(at, hf_reliable_gap, tvb, 0, 0, rec->gap));
        AU_EXPERT(pinfo, ti, &ei_reliable_gap,
                  "%u sequence%s before this one not seen (lost before the capture point, or late)",
                  rec->gap, rec->gap == 1 ? "" : "s");
    }
    if (rec->flags & RLA_ACK_BACK)
        AU_EXPERT(pinfo, ti, &ei_reliable_ack_back,
                  "Ack went back from %u while the sequence went forward", rec->prev_ack);
    if (rec->flags & RLA_RESTART)
        expert_add_info(pinfo, ti, &ei_reliable_restart);
    if (rec->flags & RLA_NOT_CAPTURED) {
        it = proto_tree_add_uint_format_value(at, hf_reliable_not_captured, tvb, 0, 0, rec->not_captured,
                                              "%u (packets of the peer acknowledged here that the capture "
                                              "does not hold)", rec->not_captured);
        proto_item_set_generated(it);
        expert_add_info(pinfo, it, &ei_reliable_not_captured);
    }
    if (rec->flags & RLA_ACK_UNDONE)
        AU_EXPERT(pinfo, ti, &ei_reliable_ack_undone,
                  "Ack bits inconsistent: sequence %u was acknowledged by an earlier packet of this "
                  "side and is not here", rec->undone_seq);
    if (rec->flags & RLA_ACK_STALLED)
        AU_EXPERT(pinfo, ti, &ei_reliable_ack_stalled,
                  "The peer's ack is stuck at %u, %u sequences behind: nothing newer can be "
                  "acknowledged (a receiver that stopped acking, or its packets are lost)",
                  rec->prev_ack, rec->stalled_packets);
    if (rec->flags & RLA_FRAG_COUNT)
        AU_EXPERT(pinfo, ti, &ei_reliable_frag_count,
                  "Fragment count differs from the packet's first fragment (%u): the receiver "
                  "drops it", rec->first_count);
    for (guint i = 0; i < rec->n_lost; i++) {
        it = proto_tree_add_uint(at, hf_reliable_lost, tvb, 0, 0, rec->lost_seqs[i]);
        proto_item_set_generated(it);
        proto_item_set_generated(proto_tree_add_uint(at, hf_reliable_lost_frame, tvb, 0, 0, rec->lost_frames[i]));
        AU_EXPERT(pinfo, it, &ei_reliable_lost,
                  "Sequence %u (frame %u) lost: this ack moved 32 past it without acknowledging it",
                  rec->lost_seqs[i], rec->lost_frames[i]);
    }
    for (guint i = 0; i < rec->n_incomplete; i++) {
        it = proto_tree_add_uint(at, hf_reliable_incomplete, tvb, 0, 0, rec->incomplete_seqs[i]);
        proto_item_set_generated(it);
        AU_EXPERT(pinfo, it, &ei_reliable_incomplete,
                  "Packet %u (first fragment frame %u) never completed: %u fragment%s missing when it "
                  "left the 64-packet reassembly window", rec->incomplete_seqs[i],
                  rec->incomplete_frames[i], rec->incomplete_missing[i],
                  rec->incomplete_missing[i] == 1 ? "" : "s");
    }
    if (rec->flags & (RLA_DUPLICATE | RLA_OUT_OF_ORDER | RLA_GAP) || rec->n_lost || rec->n_incomplete ||
        rec->flags & (RLA_ACK_STALLED | RLA_ACK_UNDONE | RLA_NOT_CAPTURED)) {
        col_append_str(pinfo->cinfo, COL_INFO,
                       rec->flags & RLA_DUPLICATE ? " [Duplicate]" :
                       rec->flags & RLA_OUT_OF_ORDER ? " [Out of order]" : "");
        if (rec->n_lost)
            col_append_fstr(pinfo->cinfo, COL_INFO, " [Lost: %u]", rec->n_lost);
        if (rec->flags & RLA_ACK_STALLED)
            col_append_str(pinfo->cinfo, COL_INFO, " [Ack stalled]");
        if (rec->flags & RLA_NOT_CAPTURED)
            col_append_str(pinfo->cinfo, COL_INFO, " [Packets not captured]");
        if (rec->n_incomplete)
            col_append_str(pinfo->cinfo, COL_INFO, " [Reassembly abandoned]");
    }
}

void reliable_analysis_register(int proto, module_t *module)
{
    static hf_register_info hf[] = {
        { &hf_reliable_acked_in, { "Acked in", "reliable.analysis.acked_in", FT_FRAMENUM, BASE_NONE,
            FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0x0, "The first frame whose header acknowledges this packet", HFILL } },
        { &hf_reliable_rtt, { "RTT (s)", "reliable.analysis.rtt", FT_DOUBLE, BASE_NONE, NULL, 0x0,
            "Seconds from this packet to the frame that first acknowledges it, at the capture point", HFILL } },
        { &hf_reliable_acks, { "Acknowledges frame", "reliable.analysis.acks", FT_FRAMENUM, BASE_NONE,
            FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0x0, "A packet of the peer this header acknowledges first", HFILL } },
        { &hf_reliable_lost, { "Lost sequence", "reliable.analysis.lost", FT_UINT16, BASE_DEC, NULL, 0x0,
            "A packet of the peer that this ack moved 32 past without acknowledging it", HFILL } },
        { &hf_reliable_lost_frame, { "Lost packet's frame", "reliable.analysis.lost_frame", FT_FRAMENUM, BASE_NONE,
            NULL, 0x0, NULL, HFILL } },
        { &hf_reliable_lost_in, { "Found lost in", "reliable.analysis.lost_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            "The frame whose ack showed this packet lost", HFILL } },
        { &hf_reliable_duplicate_of, { "Duplicate of", "reliable.analysis.duplicate_of", FT_FRAMENUM, BASE_NONE,
            FRAMENUM_TYPE(FT_FRAMENUM_DUP_ACK), 0x0, NULL, HFILL } },
        { &hf_reliable_gap, { "Sequences skipped", "reliable.analysis.gap", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_reliable_incomplete, { "Abandoned reassembly", "reliable.analysis.incomplete", FT_UINT16, BASE_DEC,
            NULL, 0x0, "A fragmented packet of this direction that never completed", HFILL } },
        { &hf_reliable_ext_seq, { "Extended sequence", "reliable.analysis.extended_sequence", FT_UINT64, BASE_DEC,
            NULL, 0x0, "The sequence unwrapped in its direction (starts at 2^20 + the first)", HFILL } },
        { &hf_reliable_not_captured, { "Packets not captured", "reliable.analysis.not_captured", FT_UINT32, BASE_DEC,
            NULL, 0x0, "Packets of the peer this header acknowledges that the capture does not hold (it missed "
            "them: a capture's drops, or a capture begun after them)", HFILL } },
    };
    static gint *ett[] = { &ett_reliable_analysis };
    static ei_register_info ei[] = {
        { &ei_reliable_duplicate, { "reliable.analysis.duplicate.expert", PI_SEQUENCE, PI_NOTE,
            "Duplicate packet or fragment", EXPFILL } },
        { &ei_reliable_out_of_order, { "reliable.analysis.out_of_order", PI_SEQUENCE, PI_NOTE,
            "Out-of-order packet", EXPFILL } },
        { &ei_reliable_gap, { "reliable.analysis.gap.expert", PI_SEQUENCE, PI_NOTE,
            "Sequences skipped", EXPFILL } },
        { &ei_reliable_ack_back, { "reliable.analysis.ack_back", PI_SEQUENCE, PI_WARN,
            "Ack went back", EXPFILL } },
        { &ei_reliable_ack_undone, { "reliable.analysis.ack_bits_inconsistent", PI_PROTOCOL, PI_WARN,
            "Ack bits contradict an earlier acknowledgement", EXPFILL } },
        { &ei_reliable_ack_stalled, { "reliable.analysis.ack_stalled", PI_SEQUENCE, PI_WARN,
            "The peer's ack stopped moving", EXPFILL } },
        { &ei_reliable_frag_count, { "reliable.analysis.fragment_count_changed", PI_MALFORMED, PI_ERROR,
            "Fragment count differs within a packet", EXPFILL } },
        { &ei_reliable_lost, { "reliable.analysis.lost.expert", PI_SEQUENCE, PI_WARN,
            "Packet lost", EXPFILL } },
        { &ei_reliable_incomplete, { "reliable.analysis.incomplete.expert", PI_REASSEMBLE, PI_WARN,
            "Fragmented packet never completed", EXPFILL } },
        { &ei_reliable_not_captured, { "reliable.analysis.not_captured.expert", PI_SEQUENCE, PI_NOTE,
            "Packets not captured", EXPFILL } },
        { &ei_reliable_restart, { "reliable.analysis.restart", PI_SEQUENCE, PI_NOTE,
            "Endpoint started again: sequences start over", EXPFILL } },
    };

    proto_reliable = proto;
    CS_REGISTER_ARRAYS(proto, hf, ett, ei);
    reliable_tap = register_tap("reliable");
    convs = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    conn_list = g_ptr_array_new();
    kept = g_array_new(FALSE, FALSE, sizeof(rl_kept_t));
    kept_index = g_array_new(FALSE, TRUE, sizeof(guint32));
    kept_rare = g_ptr_array_new();
    register_init_routine(clear_conns);
    register_cleanup_routine(clear_conns);
    cs_sp_register();
    cs_sp_register_pref(module, &pref_single_pass);
}

void reliable_analysis_handoff(void)
{
    cs_sp_handoff();
}
