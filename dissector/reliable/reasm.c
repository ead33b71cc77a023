/* reasm.c
 * reliable's fragmented packets, reassembled in a store of its own instead
 * of Wireshark's reassembly table, with the same tree and data source.
 *
 * Why: the table keeps every reassembled packet for the revisit (-2, the
 * GUI) with its bookkeeping: a fragment_head, a fragment_item a fragment,
 * hash entries and keys for each fragment's frame, a tvb a packet, and the
 * heap's holes between the fragments' copies (freed at completion) and the
 * packets kept. On the real yojimbo soak that was 44.5 MB of peak memory for
 * 26 MB of packets on 300 000 frames (bench/RESULTS.md). Here:
 *
 *  - a packet under way keeps its fragments' bytes, each copied as it comes
 *    (one block a packet: the frames, lengths and pointers), freed at
 *    completion, or once no fragment can join it any more: a sequence
 *    unwraps to at least its direction's newest minus 32768, and the newest
 *    never goes back, so a packet that far behind never completes (the
 *    table kept such fragments, lost ones' partners, for the whole file:
 *    on the soak, a quarter of the fragmented packets);
 *  - a completed packet is one block: its length, the frame that completed
 *    it, the count, the fragment size, the frame of each fragment, and its
 *    bytes but those of the completing frame's own fragment (the revisit of
 *    that frame has them in its tvb) as a list of chunks;
 *  - the chunks are cut where the bytes before say (content-defined, as
 *    backup tools do) and kept once for the file: what a sender resends
 *    (yojimbo resends a block fragment until it is acked, each time in a new
 *    reliable packet) is kept once, whatever its offset in the packet (on
 *    the soak: 22.2 MB of packets kept in 5.0 MB of chunks);
 *  - the frames of its fragments map to it in one array of (frame, packet),
 *    sorted when a revisit first looks in it.
 *
 * What the revisit shows is what fragment_add_seq_check() and
 * process_reassembled_data() showed: the completing frame gets the
 * reassembled packet (data source "Reassembled reliable packet", the
 * fragment list of show_fragment_seq_tree(), through cs_sp_show_pieces),
 * every other fragment's frame "Reassembled in", and a packet never
 * completed nothing. In tshark's single pass (transient) nothing is kept
 * once the packet has completed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <epan/packet.h>
#include <epan/reassemble.h>

#include "reliable-int.h"
#include "common/single-pass.h"
#include "common/ws-compat.h"

/* A packet under way: the fragments that came. */
typedef struct rl_part {
    const void *dir;          /* key: the direction ... */
    guint64 ext;              /* ... and the packet's extended sequence */
    guint32 count, have;
    guint32 *frames;          /* the frame of fragment i, 0 while missing */
    guint32 *lens;
    guint8 **data;            /* g_malloc'd copy of fragment i */
} rl_part_t;

/* A piece of kept bytes, shared by every packet that holds the same (one
 * copy of what a sender resends: on the soak, yojimbo's block fragments). */
typedef struct rl_chunk {
    guint32 len;
    guint32 hash;
    guint8 data[];
} rl_chunk_t;

/* Cut points depend on the bytes before them only (a gear hash of the last
 * 64 bytes), so the same bytes at another offset cut alike: at least MIN
 * bytes a chunk, on average MIN + 256, at most MAX. */
#define RL_CHUNK_MIN 64
#define RL_CHUNK_MAX 1024
#define RL_CHUNK_MASK G_GUINT64_CONSTANT(0xFF00000000000000)

/* A completed packet, kept for the revisit. */
typedef struct rl_whole {
    guint32 total;            /* bytes of the packet */
    guint32 in_frame;         /* the frame that completed it */
    guint32 piece_size;       /* bytes of every fragment but the last */
    guint16 count;
    guint16 own;              /* in_frame's fragment: its bytes are not kept */
    guint32 n_chunks;
    guint32 frames[];         /* count frames, then (aligned) the n_chunks
                               * chunks of the other bytes, in order */
} rl_whole_t;

static rl_chunk_t **whole_chunks(const rl_whole_t *w)
{
    return (rl_chunk_t **)(((guintptr)(w->frames + w->count) + 7) & ~(guintptr)7);
}

typedef struct rl_frame_map {
    guint32 frame;
    guint32 whole;            /* index in wholes */
} rl_frame_map_t;

static GHashTable *parts;     /* rl_part_t (key and value) */
static guint adds_since_prune;
static GPtrArray *wholes;     /* rl_whole_t (g_malloc'd) */
static GHashTable *chunks;    /* rl_chunk_t (g_malloc'd), by content */
static guint64 gear[256];
static GArray *frame_map;     /* rl_frame_map_t */
static gboolean map_sorted = TRUE;

static guint part_hash(gconstpointer p)
{
    const rl_part_t *a = (const rl_part_t *)p;
    return g_direct_hash(a->dir) ^ (guint)a->ext ^ (guint)(a->ext >> 32);
}

static gboolean part_equal(gconstpointer p, gconstpointer q)
{
    const rl_part_t *a = (const rl_part_t *)p, *b = (const rl_part_t *)q;
    return a->dir == b->dir && a->ext == b->ext;
}

static void part_free(gpointer p)
{
    rl_part_t *a = (rl_part_t *)p;

    for (guint32 i = 0; i < a->count; i++)
        g_free(a->data[i]);
    g_free(a);
}

static void reasm_clear(void)
{
    if (parts)
        g_hash_table_remove_all(parts);
    if (wholes)
        g_ptr_array_set_size(wholes, 0);
    if (chunks)
        g_hash_table_remove_all(chunks);
    if (frame_map)
        g_array_set_size(frame_map, 0);
    map_sorted = TRUE;
    adds_since_prune = 0;
}

/* Behind the newest of its direction by more than a 16-bit sequence can
 * unwrap back to. */
static gboolean part_unreachable(gpointer key, gpointer value _U_, gpointer data _U_)
{
    const rl_part_t *a = (const rl_part_t *)key;
    return a->dir && a->ext + 32768 < ((const rl_dir_t *)a->dir)->newest;
}

static guint chunk_hash(gconstpointer p)
{
    return ((const rl_chunk_t *)p)->hash;
}

static gboolean chunk_equal(gconstpointer p, gconstpointer q)
{
    const rl_chunk_t *a = (const rl_chunk_t *)p, *b = (const rl_chunk_t *)q;
    return a->hash == b->hash && a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* The length of the chunk that starts at p (n bytes left). */
static guint32 chunk_cut(const guint8 *p, guint32 n)
{
    guint32 max = MIN(n, RL_CHUNK_MAX);
    guint64 h = 0;

    if (n <= RL_CHUNK_MIN)
        return n;
    for (guint32 i = 0; i < max; i++) {
        h = (h << 1) + gear[p[i]];
        if (i + 1 >= RL_CHUNK_MIN && !(h & RL_CHUNK_MASK))
            return i + 1;
    }
    return max;
}

/* The kept chunk holding these bytes: one already kept, or a new one. */
static rl_chunk_t *chunk_keep(const guint8 *p, guint32 len)
{
    static union {
        rl_chunk_t c;
        guint8 room[sizeof(rl_chunk_t) + RL_CHUNK_MAX];
    } probe;
    guint32 h = 2166136261u;
    rl_chunk_t *c;

    for (guint32 i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    probe.c.len = len;
    probe.c.hash = h;
    memcpy(probe.c.data, p, len);
    c = (rl_chunk_t *)g_hash_table_lookup(chunks, &probe.c);
    if (!c) {
        c = (rl_chunk_t *)g_malloc(sizeof *c + len);
        memcpy(c, &probe.c, sizeof *c + len);
        g_hash_table_add(chunks, c);
    }
    return c;
}

void rl_reasm_register(void)
{
    guint64 x = 0x9E3779B97F4A7C15u;

    /* splitmix64: fixed values, the same cuts in every run */
    for (guint i = 0; i < 256; i++) {
        guint64 z = (x += G_GUINT64_CONSTANT(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94D049BB133111EB);
        gear[i] = z ^ (z >> 31);
    }
    chunks = g_hash_table_new_full(chunk_hash, chunk_equal, g_free, NULL);
    parts = g_hash_table_new_full(part_hash, part_equal, part_free, NULL);
    wholes = g_ptr_array_new_with_free_func(g_free);
    frame_map = g_array_new(FALSE, FALSE, sizeof(rl_frame_map_t));
    register_init_routine(reasm_clear);
    register_cleanup_routine(reasm_clear);
}

static gint map_cmp(gconstpointer p, gconstpointer q)
{
    guint32 a = ((const rl_frame_map_t *)p)->frame, b = ((const rl_frame_map_t *)q)->frame;
    return a < b ? -1 : a > b;
}

static const rl_whole_t *whole_of_frame(guint32 frame)
{
    guint lo = 0, hi;

    if (!map_sorted) {
        g_array_sort(frame_map, map_cmp);
        map_sorted = TRUE;
    }
    hi = frame_map->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(frame_map, rl_frame_map_t, mid).frame < frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < frame_map->len && g_array_index(frame_map, rl_frame_map_t, lo).frame == frame)
        return (const rl_whole_t *)g_ptr_array_index(wholes, g_array_index(frame_map, rl_frame_map_t, lo).whole);
    return NULL;
}

static void map_add(guint32 frame, guint32 whole)
{
    rl_frame_map_t m = { frame, whole };

    if (frame_map->len && g_array_index(frame_map, rl_frame_map_t, frame_map->len - 1).frame > frame)
        map_sorted = FALSE;
    g_array_append_val(frame_map, m);
}

/* The reassembled packet as a tvb of this packet (its bytes in the
 * packet's scope), shown as the table shows it. */
static tvbuff_t *show_whole(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, guint8 *data, guint32 total,
                            guint32 count, guint32 piece_size, const guint32 *frames, const fragment_items *fit)
{
    tvbuff_t *whole = tvb_new_child_real_data(tvb, data, total, total);
    guint32 last = total - (count - 1) * piece_size;

    add_new_data_source(pinfo, whole, "Reassembled reliable packet");
    if (tree) {
        cs_sp_show_pieces(pinfo, tree, whole, count, piece_size, last, frames, fit);
    } else {
        /* show_fragment_seq_tree() marks them with no tree too */
        pinfo->fragmented = FALSE;
        for (guint32 i = 0; i < count; i++)
            CS_MARK_DEPENDED_UPON(pinfo, frames[i]);
    }
    return whole;
}

/* Revisit: what the first pass kept for this frame. */
static tvbuff_t *revisit(tvbuff_t *tvb, guint data_off, guint data_len, packet_info *pinfo, proto_tree *rt,
                         const fragment_items *fit)
{
    const rl_whole_t *w = whole_of_frame(pinfo->num);
    guint8 *kept;
    guint32 own_off, own_len, at;
    guint8 *data;

    if (!w)
        return NULL;
    if (w->in_frame != pinfo->num) {
        proto_item_set_generated(proto_tree_add_uint(rt, *fit->hf_reassembled_in, tvb, 0, 0, w->in_frame));
        return NULL;
    }
    own_off = w->own * w->piece_size;
    own_len = w->own == w->count - 1 ? w->total - own_off : w->piece_size;
    if (own_len != data_len)
        return NULL;    /* not the frame the first pass saw */
    kept = (guint8 *)wmem_alloc(pinfo->pool, w->total - own_len + 1);
    at = 0;
    for (guint32 i = 0; i < w->n_chunks; i++) {
        const rl_chunk_t *c = whole_chunks(w)[i];
        memcpy(kept + at, c->data, c->len);
        at += c->len;
    }
    data = (guint8 *)wmem_alloc(pinfo->pool, w->total ? w->total : 1);
    memcpy(data, kept, own_off);
    tvb_memcpy(tvb, data + own_off, data_off, own_len);
    memcpy(data + own_off + own_len, kept + own_off, w->total - own_off - own_len);
    return show_whole(tvb, pinfo, rt, data, w->total, w->count, w->piece_size, w->frames, fit);
}

tvbuff_t *rl_reasm_add(tvbuff_t *tvb, guint data_off, guint data_len, packet_info *pinfo, proto_tree *rt,
                       const rl_frame_t *rec, const reliable_pkt_t *pkt, gboolean transient,
                       const fragment_items *fit)
{
    rl_part_t key, *a;
    guint32 id = pkt->fragment_id, count = pkt->num_fragments, total, piece_size, own_off;
    guint8 *data;

    if (PINFO_FD_VISITED(pinfo))
        return revisit(tvb, data_off, data_len, pinfo, rt, fit);
    if (id >= count)
        return NULL;
    key.dir = rec->conn ? (const void *)&rec->conn->dir[rec->dir] : NULL;
    key.ext = rec->ext_seq;
    a = (rl_part_t *)g_hash_table_lookup(parts, &key);
    if (a && a->count != count)
        return NULL;    /* the analysis keeps these apart (RLA_FRAG_COUNT) */
    if (!a) {
        /* One block: the struct, the pointers, the frames and lengths. */
        a = (rl_part_t *)g_malloc0(sizeof *a + count * (sizeof(guint8 *) + 2 * sizeof(guint32)));
        a->data = (guint8 **)(a + 1);
        a->frames = (guint32 *)(a->data + count);
        a->lens = a->frames + count;
        a->dir = key.dir;
        a->ext = key.ext;
        a->count = count;
        g_hash_table_insert(parts, a, a);
    }
    if (a->data[id])
        return NULL;    /* a fragment comes once (RLA_DUPLICATE) */
    if (++adds_since_prune >= 4096) {
        g_hash_table_foreach_remove(parts, part_unreachable, NULL);
        adds_since_prune = 0;
    }
    a->data[id] = (guint8 *)tvb_memdup(NULL, tvb, data_off, data_len);
    a->lens[id] = data_len;
    a->frames[id] = pinfo->num;
    if (++a->have < count)
        return NULL;

    /* Complete: every fragment but the last has the same length (the
     * decoder drops the others, reliable.fragment_size). */
    piece_size = count > 1 ? a->lens[0] : data_len;
    total = 0;
    for (guint32 i = 0; i < count; i++) {
        if (i < count - 1 && a->lens[i] != piece_size) {
            g_hash_table_remove(parts, a);
            return NULL;
        }
        total += a->lens[i];
    }
    data = (guint8 *)wmem_alloc(pinfo->pool, total ? total : 1);
    for (guint32 i = 0; i < count; i++)
        memcpy(data + i * piece_size, a->data[i], a->lens[i]);
    if (!transient) {
        rl_whole_t *w;
        guint8 *kept;
        guint32 kept_len = total - data_len, n = 0, at;

        /* The bytes but this frame's fragment, cut into chunks. */
        own_off = id * piece_size;
        kept = (guint8 *)wmem_alloc(pinfo->pool, kept_len + 1);
        memcpy(kept, data, own_off);
        memcpy(kept + own_off, data + own_off + data_len, kept_len - own_off);
        for (at = 0; at < kept_len; n++)
            at += chunk_cut(kept + at, kept_len - at);
        w = (rl_whole_t *)g_malloc(sizeof *w + count * sizeof(guint32) + 8 + n * sizeof(rl_chunk_t *));
        w->total = total;
        w->in_frame = pinfo->num;
        w->piece_size = piece_size;
        w->count = (guint16)count;
        w->own = (guint16)id;
        w->n_chunks = n;
        memcpy(w->frames, a->frames, count * sizeof(guint32));
        n = 0;
        for (at = 0; at < kept_len; n++) {
            guint32 len = chunk_cut(kept + at, kept_len - at);
            whole_chunks(w)[n] = chunk_keep(kept + at, len);
            at += len;
        }
        g_ptr_array_add(wholes, w);
        for (guint32 i = 0; i < count; i++)
            map_add(a->frames[i], wholes->len - 1);
    }
    {
        guint32 *frames = (guint32 *)wmem_memdup(pinfo->pool, a->frames, count * sizeof(guint32));
        g_hash_table_remove(parts, a);
        return show_whole(tvb, pinfo, rt, data, total, count, piece_size, frames, fit);
    }
}
