/* analysis.c
 * The yojimbo analysis (docs/yojimbo.md, "Analysis"): per conversation and
 * direction, the packets that carried each message id of a reliable-ordered
 * channel and each block fragment, their resends, the peer packet whose
 * reliable ack first covered one of them, resends after that ack, block
 * progress and stalls, and a plain-language diagnosis of what never
 * completed. Built on the first pass (with or without a tree); later passes
 * read what it kept.
 *
 * Reliable's header comes from reliable, with the payload
 * (reliable_payload_info_t, reliable.h): its sequence, and the acks the
 * library applies for the packet (a reassembled packet's are its fragment
 * 0's, which reliable's analysis kept).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/proto_data.h>

#include "yojimbo-int.h"
#include "common/analysis-util.h"
#include "common/cs-bytes.h"
#include "common/conv-cache.h"
#include "common/single-pass.h"

static wmem_map_t *convs;           /* conversation_t * -> yj_conv_t */
static GPtrArray *all_msgs;         /* yj_msg_t *, first sight order */
static guint n_convs;
static nstime_t capture_end;
static guint64 n_frag_slots;        /* fragment records allocated for the file */

/* What a packet with a reliable sequence carried, for the peer's acks: kept
 * while an ack of it can still come (YJ_SENT_WINDOW). */
typedef struct yj_sent_ref {
    yj_msg_t *msg;
    gint32 frag;                    /* -1: a message; else the fragment id */
} yj_sent_ref_t;

typedef struct yj_sent {
    guint32 frame;
    guint32 n;
    gboolean acked;
    yj_sent_ref_t refs[];
} yj_sent_t;

/* reliable keeps 256 sent packets for acks and ignores an ack of an older
 * one: a direction's packets 1024 and more behind its newest sequence are
 * forgotten (docs/yojimbo.md, "Analysis"). */
#define YJ_SENT_WINDOW 1024u

static ws_cb_bool pref_single_pass = TRUE;  /* yojimbo.single_pass (common/single-pass.h) */
static gboolean transient;          /* this frame is in tshark's single pass */
static GArray *frames_kept;         /* frame number -> guint32 record word (passes that revisit) */
static GPtrArray *kept_blocks;      /* the packed records (frame_keep) */
static guint32 kept_used;           /* bytes used of the last block */
static const frame_data *last_fd;   /* the frame analysed last in the single pass */
static guint32 last_num;

/* ---- state -------------------------------------------------------------- */

static void dir_free(yj_dir_t *d)
{
    if (d->sent)
        g_hash_table_destroy(d->sent);
    for (int i = 0; i < YJ_MAX_CHANNELS; i++)
        if (d->msgs[i])
            g_hash_table_destroy(d->msgs[i]);
}

static int analysis_proto = -1;     /* proto_yojimbo: the proto data key */
static double stall_seconds = 1.0;  /* yojimbo.stall_ms */

void yj_analysis_set_stall(double seconds)
{
    stall_seconds = seconds;
}

gboolean yj_analysis_begin(packet_info *pinfo)
{
    transient = cs_sp_begin_packet(pinfo, pref_single_pass);
    return transient;
}

void yj_analysis_register_prefs(module_t *m)
{
    cs_sp_register();
    cs_sp_register_pref(m, &pref_single_pass);
}

void yj_analysis_handoff(void)
{
    cs_sp_handoff();
}

void yj_analysis_end(packet_info *pinfo)
{
    cs_sp_end_packet(pinfo);
}

void yj_analysis_init(int proto)
{
    analysis_proto = proto;
    transient = FALSE;
    last_fd = NULL;
    last_num = 0;
    if (!frames_kept) {
        frames_kept = g_array_new(FALSE, TRUE, sizeof(guint32));
        kept_blocks = g_ptr_array_new_with_free_func(g_free);
    }
    g_array_set_size(frames_kept, 0);
    g_ptr_array_set_size(kept_blocks, 0);
    kept_used = 0;
    cs_sp_init();
    convs = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
    all_msgs = g_ptr_array_new();
    n_convs = 0;
    n_frag_slots = 0;
    nstime_set_zero(&capture_end);
}

static void conv_free_cb(gpointer key _U_, gpointer value, gpointer user _U_)
{
    yj_conv_t *c = (yj_conv_t *)value;
    dir_free(&c->dir[0]);
    dir_free(&c->dir[1]);
}

void yj_analysis_cleanup(void)
{
    if (convs)
        wmem_map_foreach(convs, conv_free_cb, NULL);
    convs = NULL;
    if (all_msgs)
        g_ptr_array_free(all_msgs, TRUE);
    all_msgs = NULL;
    if (frames_kept) {
        g_array_set_size(frames_kept, 0);
        g_ptr_array_set_size(kept_blocks, 0);
    }
}

GPtrArray *yj_all_msgs(void)
{
    return all_msgs;
}

nstime_t yj_capture_end(void)
{
    return capture_end;
}

/* A 16-bit value unwrapped next to the last unwrapped one. */
static guint32 unwrap16(guint16 v, guint32 last)
{
    guint32 cand = (last & ~0xFFFFu) | v;
    if (cand + 0x8000u < last)
        cand += 0x10000u;
    else if (cand > last + 0x8000u && cand >= 0x10000u)
        cand -= 0x10000u;
    return cand;
}

static yj_dir_t *get_dir(packet_info *pinfo, yj_conv_t **conv_out, int *which)
{
    conversation_t *conv = cs_conv_find_or_create(pinfo);
    yj_conv_t *c = (yj_conv_t *)wmem_map_lookup(convs, conv);
    int d;

    if (!c) {
        c = wmem_new0(wmem_file_scope(), yj_conv_t);
        c->index = ++n_convs;
        wmem_map_insert(convs, conv, c);
    }
    if (!c->dir[0].active) {
        d = 0;
    } else if (addresses_equal(&c->dir[0].src, &pinfo->src) && c->dir[0].sport == pinfo->srcport &&
               addresses_equal(&c->dir[0].dst, &pinfo->dst) && c->dir[0].dport == pinfo->destport) {
        d = 0;
    } else {
        d = 1;
    }
    if (!c->dir[d].active) {
        yj_dir_t *y = &c->dir[d];
        y->active = TRUE;
        au_copy_endpoints(pinfo, FALSE, &y->src, &y->sport, &y->dst, &y->dport);
        y->sent = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    }
    *conv_out = c;
    *which = d;
    return &c->dir[d];
}

static yj_msg_t *get_msg(yj_conv_t *c, int d, const yj_pending_item_t *p, packet_info *pinfo)
{
    yj_dir_t *y = &c->dir[d];
    guint ch = p->channel;
    guint32 ext;
    yj_msg_t *m;

    if (!y->msgs[ch])
        y->msgs[ch] = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (!y->have_id[ch]) {
        ext = 0x10000u + p->id;     /* room to unwrap backwards */
        y->have_id[ch] = TRUE;
        y->last_ext_id[ch] = ext;
    } else {
        ext = unwrap16(p->id, y->last_ext_id[ch]);
        if (ext > y->last_ext_id[ch])
            y->last_ext_id[ch] = ext;
    }
    m = (yj_msg_t *)g_hash_table_lookup(y->msgs[ch], GUINT_TO_POINTER(ext));
    if (m && m->is_block != p->is_block)
        m = NULL;   /* a block and a message cannot share an id: start again */
    if (!m) {
        /* Bounds on what one file makes the analysis keep: a few bytes of
         * hostile packet can claim a new id with 65535 fragments. */
        if (all_msgs->len >= YJ_MAX_TRACKED_MSGS ||
            (p->is_block && n_frag_slots + p->num_fragments > YJ_MAX_TRACKED_FRAGMENTS))
            return NULL;
        n_frag_slots += p->is_block ? p->num_fragments : 0;
        m = (yj_msg_t *)wmem_alloc0(wmem_file_scope(), YJ_MSG_SIZE(p->is_block));
        m->index = all_msgs->len + 1;
        m->dir = (guint8)d;
        m->channel = (guint8)ch;
        m->is_block = p->is_block ? 1 : 0;
        m->id = p->id;
        m->type = -1;
        m->conv = c;
        m->first_frame = pinfo->num;
        m->first_time = pinfo->abs_ts;
        if (p->is_block) {
            m->last_progress = pinfo->abs_ts;
            m->num_fragments = p->num_fragments;
            m->frags = wmem_alloc0_array(wmem_file_scope(), yj_frag_t, p->num_fragments ? p->num_fragments : 1);
        }
        g_hash_table_insert(y->msgs[ch], GUINT_TO_POINTER(ext), m);
        g_ptr_array_add(all_msgs, m);
    }
    return m;
}

/* The peer's packet (this one) acks sequence ext of direction y. */
static guint32 confirm(yj_dir_t *y, guint32 ext, packet_info *pinfo)
{
    yj_sent_t *s = (yj_sent_t *)g_hash_table_lookup(y->sent, GUINT_TO_POINTER(ext));
    guint32 n = 0;

    if (!s || s->acked || s->frame >= pinfo->num)
        return 0;
    s->acked = TRUE;
    for (guint32 i = 0; i < s->n; i++) {
        const yj_sent_ref_t *it = &s->refs[i];
        yj_msg_t *m = it->msg;
        if (it->frag < 0) {
            if (!m->acked_frame) {
                m->acked_frame = pinfo->num;
                m->acked_time = pinfo->abs_ts;
                n++;
            }
        } else if (it->frag < (gint32)m->num_fragments && !m->frags[it->frag].acked_frame) {
            nstime_t gap;
            guint64 ns;
            m->frags[it->frag].acked_frame = pinfo->num;
            m->frags_acked++;
            n++;
            nstime_delta(&gap, &pinfo->abs_ts, &m->last_progress);
            ns = (guint64)gap.secs * 1000000000u + (guint64)gap.nsecs;
            if (gap.secs >= 0 && ns > m->max_stall_ns)
                m->max_stall_ns = ns;
            m->last_progress = pinfo->abs_ts;
            if (m->frags_acked == m->num_fragments) {
                m->acked_frame = pinfo->num;
                m->acked_time = pinfo->abs_ts;
            }
        }
    }
    return n;
}

/* A frame's record as kept for the passes that revisit it (none in tshark's
 * single pass: the frame is never dissected again) is one 32-bit word by
 * frame number (0: none): a packet that carries nothing followed keeps its
 * reliable sequence and the count it confirmed in the word itself (tag bit
 * 0), which saves the record for most packets of a capture
 * (docs/yojimbo.md, "Limits"). A packet with items keeps them packed, and
 * the word says where (the block and the place in it, shifted past the tag
 * bit): its counts, sequence and flags, then each item: its message's or
 * block's record by how far back in all_msgs it stands, and the frames as
 * distances back from this one, each a variable-length number (7 bits a
 * byte), about 7 bytes an item instead of the 32 of a yj_item_t. The
 * records lie end to end in blocks of YJ_KEPT_BLOCK bytes (a larger one in a
 * block of its own): no allocation, header or pointer a record. A revisit
 * unpacks them into the packet's scope. */
#define YJ_TAG_CONFIRMED_SHIFT 18
#define YJ_TAG_CONFIRMED_MAX ((1u << 13) - 1)   /* what fits the 32-bit word */
#define YJ_KEPT_SHIFT 18
#define YJ_KEPT_BLOCK (1u << YJ_KEPT_SHIFT)
#define YJ_KEPT_MAX_BLOCKS ((1u << (31 - YJ_KEPT_SHIFT)) - 1)  /* 2 GiB of records in all */

/* cs_get_varint into a 32-bit field (every number packed here is one). */
static const guint8 *get_num(const guint8 *p, guint32 *v)
{
    guint64 w;

    p = cs_get_varint(p, &w);
    *v = (guint32)w;
    return p;
}

/* A frame (0: none) as its distance back from this one, folded so that a
 * later frame fits too. */
static guint32 frame_back(guint32 frame, guint32 num)
{
    gint64 d;

    if (!frame)
        return 0;
    d = (gint64)num - frame;
    return (guint32)(d >= 0 ? 2 * d + 1 : -2 * d + 2);
}

static guint32 frame_from_back(guint32 v, guint32 num)
{
    if (!v)
        return 0;
    return v & 1 ? num - (v - 1) / 2 : num + (v - 2) / 2;
}

/* The record of fr packed into the blocks: its word, 0 when the blocks are
 * full. At most 5 numbers of 5 bytes a record and 6 an item. */
static guint32 pack_items(packet_info *pinfo, const yj_frame_t *fr)
{
    gsize room = 25 + (gsize)fr->n_items * 30, len;
    guint8 *buf = (guint8 *)wmem_alloc(pinfo->pool, room), *p = buf, *block;
    guint32 at;

    p = cs_put_varint(p, fr->n_items);
    p = cs_put_varint(p, fr->n_confirmed);
    p = cs_put_varint(p, all_msgs->len);
    p = cs_put_varint(p, fr->seq);
    p = cs_put_varint(p, (fr->have_header ? 1u : 0u) | (fr->limited ? 2u : 0u));
    for (guint32 i = 0; i < fr->n_items; i++) {
        const yj_item_t *it = &fr->items[i];
        p = cs_put_varint(p, all_msgs->len - it->msg->index);
        p = cs_put_varint(p, (guint32)(it->frag + 1));
        p = cs_put_varint(p, it->send_no);
        p = cs_put_varint(p, frame_back(it->prev_frame, pinfo->num));
        p = cs_put_varint(p, frame_back(it->acked_before, pinfo->num));
        if (it->frag >= 0)
            p = cs_put_varint(p, it->progress);
    }
    len = (gsize)(p - buf);
    if (len > YJ_KEPT_BLOCK || !kept_blocks->len || kept_used + len > YJ_KEPT_BLOCK) {
        if (kept_blocks->len >= YJ_KEPT_MAX_BLOCKS)
            return 0;
        g_ptr_array_add(kept_blocks, g_malloc(MAX(len, YJ_KEPT_BLOCK)));
        kept_used = 0;
    }
    block = (guint8 *)g_ptr_array_index(kept_blocks, kept_blocks->len - 1);
    at = kept_used;
    memcpy(block + at, buf, len);
    kept_used += (guint32)len;
    if (len > YJ_KEPT_BLOCK)
        kept_used = YJ_KEPT_BLOCK;  /* a block of its own */
    return (((kept_blocks->len - 1) << YJ_KEPT_SHIFT | at) << 1) + 2;    /* never 0 */
}

static yj_frame_t *unpack_items(packet_info *pinfo, guint32 word)
{
    yj_frame_t *fr = wmem_new0(pinfo->pool, yj_frame_t);
    guint32 pos = (word - 2) >> 1;
    const guint8 *p = (const guint8 *)g_ptr_array_index(kept_blocks, pos >> YJ_KEPT_SHIFT) +
                      (pos & (YJ_KEPT_BLOCK - 1));
    guint32 v, n_msgs;

    p = get_num(p, &fr->n_items);
    p = get_num(p, &fr->n_confirmed);
    p = get_num(p, &n_msgs);
    p = get_num(p, &v);
    fr->seq = (guint16)v;
    p = get_num(p, &v);
    fr->have_header = (v & 1u) != 0;
    fr->limited = (v & 2u) != 0;
    fr->items = wmem_alloc0_array(pinfo->pool, yj_item_t, fr->n_items ? fr->n_items : 1);
    for (guint32 i = 0; i < fr->n_items; i++) {
        yj_item_t *it = &fr->items[i];
        p = get_num(p, &v);
        it->msg = (yj_msg_t *)g_ptr_array_index(all_msgs, n_msgs - v - 1);
        p = get_num(p, &v);
        it->frag = (gint32)v - 1;
        p = get_num(p, &it->send_no);
        p = get_num(p, &v);
        it->prev_frame = frame_from_back(v, pinfo->num);
        p = get_num(p, &v);
        it->acked_before = frame_from_back(v, pinfo->num);
        if (it->frag >= 0)
            p = get_num(p, &it->progress);
    }
    return fr;
}

static yj_frame_t *frame_keep(packet_info *pinfo, yj_frame_t *fr)
{
    guint32 kept;

    if (transient) {
        last_fd = pinfo->fd;
        last_num = pinfo->num;
        return fr;
    }
    if (!fr->n_items && !fr->limited && fr->n_confirmed <= YJ_TAG_CONFIRMED_MAX)
        kept = fr->n_confirmed << YJ_TAG_CONFIRMED_SHIFT | ((guint32)fr->seq << 2) | (fr->have_header ? 2u : 0u) | 1u;
    else
        kept = pack_items(pinfo, fr);
    if (frames_kept->len <= pinfo->num)
        g_array_set_size(frames_kept, pinfo->num + 1);
    g_array_index(frames_kept, guint32, pinfo->num) = kept;
    return fr;
}

static guint32 frame_kept(packet_info *pinfo)
{
    return frames_kept->len > pinfo->num ? g_array_index(frames_kept, guint32, pinfo->num) : 0;
}

static yj_frame_t *frame_record(packet_info *pinfo)
{
    guint32 v = frame_kept(pinfo);
    yj_frame_t *fr;

    if (!v)
        return NULL;
    if (!(v & 1u))
        return unpack_items(pinfo, v);
    fr = wmem_new0(pinfo->pool, yj_frame_t);
    fr->have_header = (v & 2u) != 0;
    fr->seq = (guint16)(v >> 2);
    fr->n_confirmed = v >> YJ_TAG_CONFIRMED_SHIFT;
    return fr;
}

/* A header of direction y after sequences the capture does not hold (lost
 * before the capture point, or missed by the capture): its missing headers
 * may have acked the peer's packets, which yj_diagnosis then does not call
 * unacknowledged. */
static void note_gap(packet_info *pinfo, yj_dir_t *y, const yj_dir_t *peer, guint16 seq)
{
    guint16 fwd = (guint16)(seq - y->header_seq);

    if (y->have_header_seq && fwd >= 0x8000)
        return;                     /* older: reordered */
    if (y->have_header_seq && fwd > 1) {
        y->gap_frame = pinfo->num;
        y->gap_peer_acked_ext = peer->max_acked_ext;
    }
    y->have_header_seq = TRUE;
    y->header_seq = seq;
}

/* The acks of this packet's reliable header (a reassembled packet: its
 * fragment 0's) confirm the peer's packets. */
static void take_acks(packet_info *pinfo, yj_frame_t *fr, yj_dir_t *y, yj_dir_t *peer, guint16 ack,
                      guint32 ack_bits, gboolean have_ack)
{
    y->packets++;
    if (have_ack && peer->active && peer->have_seq) {
        guint32 ext_ack = unwrap16(ack, peer->last_ext_seq);
        guint32 before = fr->n_confirmed;
        guint32 looked = 0, done = 0;
        if ((ack_bits & 1u) && ext_ack > peer->max_acked_ext)
            peer->max_acked_ext = ext_ack;
        /* A sequence the last acks of this direction looked up confirms
         * nothing now when nothing entered the peer's sent since: it was
         * not there (nor is it now), or it was confirmed then or before (an
         * entry always comes from an earlier frame, so confirm never finds
         * it too new). Most acks repeat most of the last one's; each lookup
         * costs. */
        if (y->have_acks && y->acks_gen == peer->sent_gen) {
            if (ext_ack >= y->acks_ext && ext_ack - y->acks_ext < 32)
                done = y->acks_looked << (ext_ack - y->acks_ext);
            else if (ext_ack < y->acks_ext && y->acks_ext - ext_ack < 32)
                done = y->acks_looked >> (y->acks_ext - ext_ack);
        }
        for (guint32 i = 0; i < 32; i++)
            if ((ack_bits >> i) & 1u && ext_ack >= i) {
                looked |= 1u << i;
                if (!((done >> i) & 1u))
                    fr->n_confirmed += confirm(peer, ext_ack - i, pinfo);
            }
        y->have_acks = TRUE;
        y->acks_ext = ext_ack;
        y->acks_looked = looked;
        y->acks_gen = peer->sent_gen;
        if (fr->n_confirmed > before) {
            y->acks_sent++;
            y->last_ack_frame = pinfo->num;
            y->last_ack_time = pinfo->abs_ts;
        }
    }
}

/* One message or fragment the packet carried (p), as item it of the frame:
 * FALSE when it is not followed (a fragment count that changed). */
static gboolean record_item(packet_info *pinfo, yj_item_t *it, yj_msg_t *m, const yj_pending_item_t *p,
                            guint32 ext)
{
    if (p->type >= 0 && (!p->is_block || p->frag == 0))
        m->type = p->type;
    if (!m->first_ext_seq)
        m->first_ext_seq = ext;
    it->msg = m;
    it->frag = p->frag;
    if (p->frag < 0) {
        it->send_no = ++m->sends;
        it->prev_frame = m->last_frame;
        if (m->acked_frame) {
            it->acked_before = m->acked_frame;
            m->sends_after_ack++;
        }
    } else {
        yj_frag_t *f;
        if (p->num_fragments != m->num_fragments || p->frag >= (gint32)m->num_fragments)
            return FALSE;   /* a fragment count that changed: not this block */
        f = &m->frags[p->frag];
        it->send_no = ++f->sends;
        it->prev_frame = f->last_frame;
        f->last_frame = pinfo->num;
        if (f->sends == 1) {
            f->first_frame = pinfo->num;
            f->size = p->size;
            m->frags_seen++;
            m->block_bytes += p->size;
        }
        if (f->acked_frame) {
            it->acked_before = f->acked_frame;
            f->sends_after_ack++;
            m->sends_after_ack++;
        }
        it->progress = m->frags_acked;
        m->sends++;
    }
    m->last_frame = pinfo->num;
    return TRUE;
}

static gboolean sent_is_old(gpointer key, gpointer value _U_, gpointer limit)
{
    return GPOINTER_TO_UINT(key) < *(const guint32 *)limit;
}

/* Remembers what sequence ext of direction y carried, for the peer's acks,
 * and forgets what can no longer be acked. */
static void remember_sent(packet_info *pinfo, yj_dir_t *y, const yj_frame_t *fr, guint32 ext)
{
    yj_sent_t *s = (yj_sent_t *)g_malloc(sizeof *s + fr->n_items * sizeof s->refs[0]);

    s->frame = pinfo->num;
    s->n = fr->n_items;
    s->acked = FALSE;
    for (guint32 i = 0; i < fr->n_items; i++) {
        s->refs[i].msg = fr->items[i].msg;
        s->refs[i].frag = fr->items[i].frag;
    }
    g_hash_table_insert(y->sent, GUINT_TO_POINTER(ext), s);
    y->sent_gen++;
    if (y->last_ext_seq >= y->sent_pruned_at + YJ_SENT_WINDOW) {
        guint32 limit = y->last_ext_seq - YJ_SENT_WINDOW;
        g_hash_table_foreach_remove(y->sent, sent_is_old, &limit);
        y->sent_pruned_at = y->last_ext_seq;
    }
}

/* The items of this packet (conversation c, direction d). */
static void record_items(packet_info *pinfo, yj_frame_t *fr, yj_conv_t *c, int d, const yj_pending_item_t *items,
                         guint n_items, guint32 ext)
{
    fr->items = wmem_alloc0_array(pinfo->pool, yj_item_t, n_items);
    for (guint i = 0; i < n_items; i++) {
        const yj_pending_item_t *p = &items[i];
        yj_msg_t *m;

        if (p->channel >= YJ_MAX_CHANNELS)
            continue;
        m = get_msg(c, d, p, pinfo);
        if (!m) {
            fr->limited = TRUE;
            continue;
        }
        if (record_item(pinfo, &fr->items[fr->n_items], m, p, ext))
            fr->n_items++;
    }
}

yj_frame_t *yj_analysis_packet(packet_info *pinfo, const reliable_payload_info_t *rl,
                               const yj_pending_item_t *items, guint n_items)
{
    yj_frame_t *fr;
    yj_conv_t *c;
    yj_dir_t *y, *peer;
    int d;
    guint16 seq = 0;
    guint32 ext;

    if (!convs)
        return NULL;
    if (pinfo->fd->visited)
        return frame_record(pinfo);
    if (transient ? last_fd == pinfo->fd && last_num == pinfo->num : frame_kept(pinfo) != 0)
        return NULL;    /* a second connection packet in one frame: analysed once */

    /* Made in the packet's scope: most packets carry nothing and confirm
     * nothing, and keep only their sequence (frame_keep). */
    fr = wmem_new0(pinfo->pool, yj_frame_t);
    if (nstime_cmp(&pinfo->abs_ts, &capture_end) > 0)
        capture_end = pinfo->abs_ts;

    y = get_dir(pinfo, &c, &d);
    peer = &c->dir[1 - d];
    y->last_frame = pinfo->num;
    y->last_time = pinfo->abs_ts;

    fr->have_header = rl != NULL;
    if (rl) {
        fr->seq = seq = rl->seq;
        note_gap(pinfo, y, peer, seq);
        take_acks(pinfo, fr, y, peer, rl->packet_ack, rl->packet_ack_bits, rl->has_packet_acks);
    }
    if (!n_items)
        return frame_keep(pinfo, fr);
    ext = !fr->have_header ? 0 : y->have_seq ? unwrap16(seq, y->last_ext_seq) : 0x10000u + seq;
    record_items(pinfo, fr, c, d, items, n_items, ext);
    if (fr->have_header) {
        if (!y->have_seq || ext > y->last_ext_seq)
            y->last_ext_seq = ext;
        y->have_seq = TRUE;
        /* remember what this sequence carried, for the peer's acks */
        if (fr->n_items)
            remember_sent(pinfo, y, fr, ext);
    }
    return frame_keep(pinfo, fr);
}

/* The block record of (this packet's direction, ch, id), without making one. */
static yj_msg_t *find_block(packet_info *pinfo, guint ch, guint16 id)
{
    conversation_t *conv;
    yj_conv_t *c;
    yj_dir_t *y;
    yj_msg_t *m;

    if (!convs || ch >= YJ_MAX_CHANNELS)
        return NULL;
    conv = find_conversation_pinfo(pinfo, 0);
    if (!conv || !(c = (yj_conv_t *)wmem_map_lookup(convs, conv)))
        return NULL;
    y = &c->dir[0];
    if (!(y->active && addresses_equal(&y->src, &pinfo->src) && y->sport == pinfo->srcport &&
          addresses_equal(&y->dst, &pinfo->dst) && y->dport == pinfo->destport))
        y = &c->dir[1];
    if (!y->active || !y->msgs[ch] || !y->have_id[ch])
        return NULL;
    m = (yj_msg_t *)g_hash_table_lookup(y->msgs[ch], GUINT_TO_POINTER(unwrap16(id, y->last_ext_id[ch])));
    return m && m->is_block ? m : NULL;
}

guint32 yj_block_reassembled_in(packet_info *pinfo, guint ch, guint16 id)
{
    yj_msg_t *m = find_block(pinfo, ch, id);
    return m ? m->reassembled_frame : 0;
}

void yj_block_set_reassembled(packet_info *pinfo, guint ch, guint16 id)
{
    yj_msg_t *m = find_block(pinfo, ch, id);
    if (m && !m->reassembled_frame)
        m->reassembled_frame = pinfo->num;
}

static void append_list(wmem_strbuf_t *sb, const guint32 *v, guint n)
{
    for (guint i = 0; i < n && i < 12; i++)
        wmem_strbuf_append_printf(sb, "%s%u", i ? ", " : "", v[i]);
    if (n > 12)
        wmem_strbuf_append_printf(sb, " and %u more", n - 12);
}

char *yj_diagnosis(wmem_allocator_t *scope, const yj_msg_t *m)
{
    const yj_conv_t *c = m->conv;
    const yj_dir_t *peer = &c->dir[1 - m->dir];
    wmem_strbuf_t *sb;
    nstime_t tail;
    double first_s, since_ack_s;

    /* Without reliable headers on either side there are no acks to judge by. */
    if (c->dir[m->dir].packets == 0 && peer->packets == 0)
        return NULL;
    /* Packets of the peer the capture does not hold, after the last send
     * and before its acks moved 32 past the first: one of them may have
     * acked it. */
    if (!m->acked_frame && peer->gap_frame > m->last_frame && m->first_ext_seq &&
        peer->gap_peer_acked_ext < m->first_ext_seq + 32)
        return NULL;
    if (m->acked_frame && (!m->is_block || m->frags_acked == m->num_fragments)) {
        double stall = m->is_block ? (double)m->max_stall_ns / 1e9 : 0.0;
        if (m->is_block && stall >= stall_seconds)
            return wmem_strdup_printf(scope, "Block %u on channel %u completed, but stalled %.2f s with no new fragment acknowledged",
                                      m->id, m->channel, stall);
        return NULL;
    }
    sb = wmem_strbuf_new(scope, "");
    nstime_delta(&tail, &capture_end, &m->first_time);
    first_s = nstime_to_sec(&tail);
    nstime_delta(&tail, &capture_end, &peer->last_ack_time);
    since_ack_s = peer->last_ack_frame ? nstime_to_sec(&tail) : 0.0;
    if (!m->is_block) {
        wmem_strbuf_append_printf(sb, "Message %u on channel %u was sent %u time%s (frames %u to %u) and never acknowledged: ",
                                  m->id, m->channel, m->sends, m->sends == 1 ? "" : "s", m->first_frame, m->last_frame);
    } else {
        guint32 *never_sent = g_new(guint32, m->num_fragments ? m->num_fragments : 1);
        guint32 *unacked = g_new(guint32, m->num_fragments ? m->num_fragments : 1);
        guint n_ns = 0, n_un = 0;
        for (guint i = 0; i < m->num_fragments; i++) {
            if (!m->frags[i].sends)
                never_sent[n_ns++] = i;
            else if (!m->frags[i].acked_frame)
                unacked[n_un++] = i;
        }
        wmem_strbuf_append_printf(sb, "Block %u on channel %u never completed: %u of %u fragments acknowledged",
                                  m->id, m->channel, m->frags_acked, m->num_fragments);
        if (n_ns) {
            wmem_strbuf_append(sb, "; never sent in this capture: fragment ");
            append_list(sb, never_sent, n_ns);
        }
        if (n_un) {
            wmem_strbuf_append(sb, "; sent but never acknowledged: fragment ");
            append_list(sb, unacked, n_un);
        }
        if ((double)m->max_stall_ns / 1e9 >= stall_seconds)
            wmem_strbuf_append_printf(sb, "; it stalled %.2f s", (double)m->max_stall_ns / 1e9);
        {
            nstime_t idle;
            nstime_delta(&idle, &capture_end, &m->last_progress);
            if (nstime_to_sec(&idle) >= stall_seconds)
                wmem_strbuf_append_printf(sb, "; no fragment acknowledged in its last %.2f s", nstime_to_sec(&idle));
        }
        wmem_strbuf_append(sb, ": ");
        g_free(never_sent);
        g_free(unacked);
    }
    /* Judged from the first send: a message resent for seconds is not
     * explained by the capture ending soon after its last resend. */
    if (!peer->active || peer->packets == 0)
        wmem_strbuf_append(sb, "the capture holds no packet of the peer with a reliable header: no ack could be seen (one direction captured?)");
    else if (peer->last_frame < m->last_frame)
        wmem_strbuf_append_printf(sb, "the peer went silent: its last packet is frame %u, before the last send", peer->last_frame);
    else if (peer->last_ack_frame <= m->first_frame && since_ack_s >= 1.0)
        wmem_strbuf_append_printf(sb, "the peer kept sending but acknowledged nothing new since frame %u, %.2f s before the capture ends: "
                                  "it stopped acknowledging, or no longer receives this direction's packets",
                                  peer->last_ack_frame, since_ack_s);
    else if (first_s < 1.0)
        wmem_strbuf_append_printf(sb, "the capture ends %.3f s after the first send, too soon to see its ack", first_s);
    else if (m->first_ext_seq && c->dir[m->dir].max_acked_ext > m->first_ext_seq)
        wmem_strbuf_append(sb, "the peer kept acknowledging later packets but never one carrying this: those packets were lost on the way to the peer (after this capture point) or the peer rejected them (check that both ends share the channel and message configuration)");
    else
        wmem_strbuf_append(sb, "the peer kept sending but acknowledged nothing new after the first send: it stopped acknowledging, or does not receive this direction's packets");
    return wmem_strbuf_finalize(sb);
}
