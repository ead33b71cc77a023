/* common/reasm-store.c
 * Reassembled packets in a store of the plugin's own instead of Wireshark's
 * reassembly table, with the same tree and data source: reliable's
 * fragmented packets and yojimbo's blocks (common/reasm-store.h).
 *
 * Why: the table keeps every reassembled packet for the revisit (-2, the
 * GUI) with its bookkeeping: a fragment_head, a fragment_item a fragment,
 * hash entries and keys for each fragment's frame, a tvb a packet, and the
 * heap's holes between the fragments' copies (freed at completion) and the
 * packets kept. On the real yojimbo soak that was 44.5 MB of peak memory for
 * 26 MB of reliable packets on 300 000 frames, and 8.7 MB for 5.1 MB of
 * yojimbo blocks (bench/RESULTS.md). Here:
 *
 *  - a packet under way keeps its fragments, each copied as it comes
 *    (frame, fragment number, length, bytes), freed at completion; in
 *    reliable's way also once no fragment can join it any more (the
 *    protocol says when: for reliable, a sequence unwraps to at least its
 *    direction's newest minus 32768, and the newest never goes back, so a
 *    packet that far behind never completes; the table kept such
 *    fragments, lost ones' partners, for the whole file: on the soak, a
 *    quarter of the fragmented packets);
 *  - a completed packet is one block: its length, the frame that completed
 *    it, the frame of each fragment (and where they differ from "all of one
 *    length but the last", each fragment's length and the table's flags),
 *    and its bytes (in reliable's way but those of the completing frame's
 *    own fragment: the revisit of that frame has them in its tvb) as a list
 *    of chunks;
 *  - the chunks are cut where the bytes before say (content-defined, as
 *    backup tools do) and kept once for the file, in one table for every
 *    store: what a sender resends (yojimbo resends a block fragment until
 *    it is acked, each time in a new reliable packet) is kept once,
 *    whatever its offset in the packet, and a block's bytes once for the
 *    reliable packets that carried them and the block (on the soak: 22.2 MB
 *    of reliable packets kept in 5.0 MB of chunks);
 *  - the frames of its fragments map to it in one array of (frame, packet),
 *    sorted when a revisit first looks in it.
 *
 * What the revisit shows is what fragment_add_seq_check() and
 * process_reassembled_data() showed: the completing frame gets the
 * reassembled packet (the data source, the fragment list of
 * show_fragment_seq_tree(), item for item), every other fragment's frame
 * "Reassembled in", and a packet never completed nothing. In tshark's
 * single pass (transient) nothing is kept once the packet has completed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <epan/packet.h>
#include <epan/reassemble.h>
#include <wsutil/str_util.h>

#include "reasm-store.h"
#include "ws-compat.h"

/* A fragment of a packet under way. */
typedef struct cs_piece {
    guint32 frame;
    guint32 frag;             /* its number in the packet */
    guint32 len;
    guint8 flags;             /* FD_MULTIPLETAILS, FD_TOOLONGFRAGMENT */
    guint8 *data;             /* g_malloc'd copy; NULL when len is 0 */
} cs_piece_t;

/* A packet under way: the fragments that came, by fragment number (one
 * number's in the order they came). */
typedef struct cs_part {
    const void *dir;          /* key: the direction ... */
    guint64 id;               /* ... and the packet's id */
    guint32 count;            /* counted: the fragment count; seq: the tail's number + 1 (0: no tail yet) */
    guint32 n, cap;
    guint16 flags;            /* the table's head flags (seq) */
    cs_piece_t *pieces;
} cs_part_t;

/* A piece of kept bytes, shared by every packet that holds the same (one
 * copy of what a sender resends: on the soak, yojimbo's block fragments). */
typedef struct cs_chunk {
    guint32 len;
    guint32 hash;
    guint8 data[];
} cs_chunk_t;

/* Cut points depend on the bytes before them only (a gear hash of the last
 * 64 bytes), so the same bytes at another offset cut alike: at least MIN
 * bytes a chunk, on average MIN + 256, at most MAX. */
#define CS_CHUNK_MIN 64
#define CS_CHUNK_MAX 1024
#define CS_CHUNK_MASK G_GUINT64_CONSTANT(0xFF00000000000000)

/* A fragment's flag beside the table's (FD_*, all below it): its number is
 * the previous fragment's (it shows at the same offset). */
#define CS_FD_SAME 0x80

/* A completed packet, kept for the revisit. */
#define CS_W_ITEMS 0x01       /* lens and flags of each fragment follow the frames */
#define CS_W_NO_OWN G_MAXUINT32

typedef struct cs_whole {
    guint32 total;            /* bytes of the packet */
    guint32 in_frame;         /* the frame that completed it */
    guint32 id;               /* seq: the id it was keyed by */
    guint32 n_chunks;
    guint32 piece_size;       /* bytes of every fragment but the last (without CS_W_ITEMS) */
    guint32 count;            /* fragments shown */
    guint32 own;              /* in_frame's fragment, whose bytes are not kept (CS_W_NO_OWN: all kept) */
    guint8 in_layer;          /* the layer that completed it */
    guint8 head_flags;        /* the table's flags of the packet */
    guint8 form;              /* CS_W_ITEMS */
    guint32 frames[];         /* count frames; with CS_W_ITEMS count lengths and
                               * count flags; then (aligned) the n_chunks chunks
                               * of the kept bytes, in order */
} cs_whole_t;

typedef struct cs_frame_map {
    guint32 frame;
    guint32 whole;            /* index in wholes */
} cs_frame_map_t;

struct cs_reasm {
    const char *source;
    cs_reasm_unreachable_fn unreachable;
    GHashTable *parts;        /* cs_part_t (key and value) */
    guint adds_since_prune;
    GPtrArray *wholes;        /* cs_whole_t (g_malloc'd) */
    GArray *frame_map;        /* cs_frame_map_t */
    gboolean map_sorted;
};

/* The endpoints of a seq store's key: the addresses and ports, as the
 * table's addresses_ports functions key. */
typedef struct cs_ends {
    address src, dst;
    guint32 sport, dport;
} cs_ends_t;

static GPtrArray *stores;     /* cs_reasm_t */
static GHashTable *chunks;    /* cs_chunk_t (g_malloc'd), by content: every store's */
static GHashTable *ends;      /* cs_ends_t (key and value) */
static guint64 gear[256];

static guint part_hash(gconstpointer p)
{
    const cs_part_t *a = (const cs_part_t *)p;
    return g_direct_hash(a->dir) ^ (guint)a->id ^ (guint)(a->id >> 32);
}

static gboolean part_equal(gconstpointer p, gconstpointer q)
{
    const cs_part_t *a = (const cs_part_t *)p, *b = (const cs_part_t *)q;
    return a->dir == b->dir && a->id == b->id;
}

static void part_free(gpointer p)
{
    cs_part_t *a = (cs_part_t *)p;

    for (guint32 i = 0; i < a->n; i++)
        g_free(a->pieces[i].data);
    g_free(a->pieces);
    g_free(a);
}

static guint ends_hash(gconstpointer p)
{
    const cs_ends_t *e = (const cs_ends_t *)p;
    return add_address_to_hash(add_address_to_hash(e->sport << 16 ^ e->dport, &e->src), &e->dst);
}

static gboolean ends_equal(gconstpointer p, gconstpointer q)
{
    const cs_ends_t *a = (const cs_ends_t *)p, *b = (const cs_ends_t *)q;
    return a->sport == b->sport && a->dport == b->dport && addresses_equal(&a->src, &b->src) &&
           addresses_equal(&a->dst, &b->dst);
}

static void ends_free(gpointer p)
{
    cs_ends_t *e = (cs_ends_t *)p;
    free_address(&e->src);
    free_address(&e->dst);
    g_free(e);
}

static void reasm_clear(void)
{
    for (guint i = 0; stores && i < stores->len; i++) {
        cs_reasm_t *s = (cs_reasm_t *)g_ptr_array_index(stores, i);
        g_hash_table_remove_all(s->parts);
        g_ptr_array_set_size(s->wholes, 0);
        g_array_set_size(s->frame_map, 0);
        s->map_sorted = TRUE;
        s->adds_since_prune = 0;
    }
    if (chunks)
        g_hash_table_remove_all(chunks);
    if (ends)
        g_hash_table_remove_all(ends);
}

static gboolean part_unreachable(gpointer key, gpointer value _U_, gpointer data)
{
    const cs_part_t *a = (const cs_part_t *)key;
    const cs_reasm_t *s = (const cs_reasm_t *)data;
    return a->dir && s->unreachable(a->dir, a->id);
}

static guint chunk_hash(gconstpointer p)
{
    return ((const cs_chunk_t *)p)->hash;
}

static gboolean chunk_equal(gconstpointer p, gconstpointer q)
{
    const cs_chunk_t *a = (const cs_chunk_t *)p, *b = (const cs_chunk_t *)q;
    return a->hash == b->hash && a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* The length of the chunk that starts at p (n bytes left). */
static guint32 chunk_cut(const guint8 *p, guint32 n)
{
    guint32 max = MIN(n, CS_CHUNK_MAX);
    guint64 h = 0;

    if (n <= CS_CHUNK_MIN)
        return n;
    for (guint32 i = 0; i < max; i++) {
        h = (h << 1) + gear[p[i]];
        if (i + 1 >= CS_CHUNK_MIN && !(h & CS_CHUNK_MASK))
            return i + 1;
    }
    return max;
}

/* The kept chunk holding these bytes: one already kept, or a new one. */
static cs_chunk_t *chunk_keep(const guint8 *p, guint32 len)
{
    static union {
        cs_chunk_t c;
        guint8 room[sizeof(cs_chunk_t) + CS_CHUNK_MAX];
    } probe;
    guint32 h = 2166136261u;
    cs_chunk_t *c;

    for (guint32 i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    probe.c.len = len;
    probe.c.hash = h;
    memcpy(probe.c.data, p, len);
    c = (cs_chunk_t *)g_hash_table_lookup(chunks, &probe.c);
    if (!c) {
        c = (cs_chunk_t *)g_malloc(sizeof *c + len);
        memcpy(c, &probe.c, sizeof *c + len);
        g_hash_table_add(chunks, c);
    }
    return c;
}

cs_reasm_t *cs_reasm_new(const char *source, cs_reasm_unreachable_fn unreachable)
{
    cs_reasm_t *s = g_new0(cs_reasm_t, 1);

    if (!stores) {
        guint64 x = 0x9E3779B97F4A7C15u;

        /* splitmix64: fixed values, the same cuts in every run */
        for (guint i = 0; i < 256; i++) {
            guint64 z = (x += G_GUINT64_CONSTANT(0x9E3779B97F4A7C15));
            z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94D049BB133111EB);
            gear[i] = z ^ (z >> 31);
        }
        stores = g_ptr_array_new();
        chunks = g_hash_table_new_full(chunk_hash, chunk_equal, g_free, NULL);
        ends = g_hash_table_new_full(ends_hash, ends_equal, ends_free, NULL);
        register_init_routine(reasm_clear);
        register_cleanup_routine(reasm_clear);
    }
    s->source = source;
    s->unreachable = unreachable;
    s->parts = g_hash_table_new_full(part_hash, part_equal, part_free, NULL);
    s->wholes = g_ptr_array_new_with_free_func(g_free);
    s->frame_map = g_array_new(FALSE, FALSE, sizeof(cs_frame_map_t));
    s->map_sorted = TRUE;
    g_ptr_array_add(stores, s);
    return s;
}

/* ---- completed packets ---------------------------------------------------- */

static guint32 *whole_lens(const cs_whole_t *w)
{
    return (guint32 *)(w->frames + w->count);
}

static guint8 *whole_flags(const cs_whole_t *w)
{
    return (guint8 *)(whole_lens(w) + w->count);
}

static cs_chunk_t **whole_chunks(const cs_whole_t *w)
{
    guintptr end = w->form & CS_W_ITEMS ? (guintptr)(whole_flags(w) + w->count) : (guintptr)(w->frames + w->count);
    return (cs_chunk_t **)((end + 7) & ~(guintptr)7);
}

/* Fragment i's length, and its offset in the packet (in *off). */
static guint32 whole_piece(const cs_whole_t *w, guint32 i, guint32 *off)
{
    if (!(w->form & CS_W_ITEMS)) {
        *off = i * w->piece_size;
        return i == w->count - 1 ? w->total - *off : w->piece_size;
    }
    /* (only reliable's way has an own fragment, and it has no items) */
    *off = 0;
    return whole_lens(w)[i];
}

static gint map_cmp(gconstpointer p, gconstpointer q)
{
    guint32 a = ((const cs_frame_map_t *)p)->frame, b = ((const cs_frame_map_t *)q)->frame;
    return a < b ? -1 : a > b;
}

/* The packet that frame was a fragment of: with by_id the last one added
 * with that id (the table's lookup by frame and id), else the first. */
static const cs_whole_t *whole_of_frame(cs_reasm_t *s, guint32 frame, gboolean by_id, guint32 id)
{
    const cs_whole_t *found = NULL;
    guint lo = 0, hi;

    if (!s->map_sorted) {
        g_array_sort(s->frame_map, map_cmp);    /* stable: equal frames stay in the order added */
        s->map_sorted = TRUE;
    }
    hi = s->frame_map->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(s->frame_map, cs_frame_map_t, mid).frame < frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < s->frame_map->len && g_array_index(s->frame_map, cs_frame_map_t, lo).frame == frame; lo++) {
        const cs_whole_t *w = (const cs_whole_t *)g_ptr_array_index(s->wholes,
                                                                    g_array_index(s->frame_map, cs_frame_map_t, lo).whole);
        if (!by_id)
            return w;
        if (w->id == id)
            found = w;
    }
    return found;
}

static void map_add(cs_reasm_t *s, guint32 frame, guint32 whole)
{
    cs_frame_map_t m = { frame, whole };

    if (s->frame_map->len && g_array_index(s->frame_map, cs_frame_map_t, s->frame_map->len - 1).frame > frame)
        s->map_sorted = FALSE;
    g_array_append_val(s->frame_map, m);
}

/* Keeps a completed packet: its data (total bytes) but own_len bytes at
 * own_off, its fragments' frames, and with lens (NULL: all of piece_size
 * but the last) their lengths and flags. */
static void whole_keep(cs_reasm_t *s, packet_info *pinfo, const guint8 *data, guint32 total, guint32 id,
                       guint32 count, guint32 piece_size, guint32 own, guint32 own_off, guint32 own_len,
                       const guint32 *frames, const guint32 *lens, const guint8 *flags, guint8 head_flags)
{
    cs_whole_t *w;
    guint8 *kept;
    guint32 kept_len = total - own_len, n = 0, at;
    gsize items = lens ? count * (sizeof(guint32) + 1) : 0;

    kept = (guint8 *)wmem_alloc(pinfo->pool, kept_len + 1);
    memcpy(kept, data, own_off);
    memcpy(kept + own_off, data + own_off + own_len, kept_len - own_off);
    for (at = 0; at < kept_len; n++)
        at += chunk_cut(kept + at, kept_len - at);
    w = (cs_whole_t *)g_malloc(sizeof *w + count * sizeof(guint32) + items + 8 + n * sizeof(cs_chunk_t *));
    w->total = total;
    w->in_frame = pinfo->num;
    w->id = id;
    w->piece_size = piece_size;
    w->count = count;
    w->own = own;
    w->in_layer = pinfo->curr_layer_num;
    w->head_flags = head_flags;
    w->form = lens ? CS_W_ITEMS : 0;
    w->n_chunks = n;
    memcpy(w->frames, frames, count * sizeof(guint32));
    if (lens) {
        memcpy(whole_lens(w), lens, count * sizeof(guint32));
        memcpy(whole_flags(w), flags, count);
    }
    n = 0;
    for (at = 0; at < kept_len; n++) {
        guint32 len = chunk_cut(kept + at, kept_len - at);
        whole_chunks(w)[n] = chunk_keep(kept + at, len);
        at += len;
    }
    g_ptr_array_add(s->wholes, w);
    for (guint32 i = 0; i < count; i++)
        map_add(s, frames[i], s->wholes->len - 1);
}

/* ---- the tree --------------------------------------------------------------- */

/* (common/reasm-store.h) Fragment i of the same number as fragment i - 1
 * (CS_FD_SAME) shows at its offset. */
void cs_reasm_show_fragments(const fragment_items *fit, packet_info *pinfo, proto_tree *tree, tvbuff_t *whole,
                             guint32 count, guint32 piece_size, const guint32 *frames, const guint32 *lens,
                             const guint8 *flags, guint8 head_flags)
{
    guint32 total = tvb_captured_length(whole), off = 0, next_off = 0;
    proto_item *fi;
    proto_tree *ft;

    pinfo->fragmented = FALSE;
    fi = proto_tree_add_item(tree, *fit->hf_fragments, whole, 0, -1, ENC_NA);
    proto_item_set_generated(fi);
    ft = proto_item_add_subtree(fi, *fit->ett_fragments);
    for (guint32 i = 0; i < count; i++) {
        guint32 len, frame = frames[i];
        guint8 fl = flags ? flags[i] : 0;
        proto_item *fei;
        int hf;

        if (lens) {
            len = lens[i];
            if (!(fl & CS_FD_SAME)) {
                off = next_off;
                next_off += len;
            }
        } else {
            off = i * piece_size;
            len = i == count - 1 ? total - off : piece_size;
        }
        if (i == 0)
            proto_item_set_text(fi, "%u %s (%u byte%s): ", count,
                                proto_registrar_get_name(count == 1 ? *fit->hf_fragment : *fit->hf_fragments),
                                total, plurality(total, "", "s"));
        else
            proto_item_append_text(fi, ", ");
        proto_item_append_text(fi, "#%u(%u)", frame, len);
        hf = fl & (FD_OVERLAPCONFLICT | FD_MULTIPLETAILS | FD_TOOLONGFRAGMENT) ? *fit->hf_fragment_error
                                                                                : *fit->hf_fragment;
        if (len == 0)
            fei = proto_tree_add_uint_format(ft, hf, whole, off, 0, frame, "Frame: %u (no data)", frame);
        else
            fei = proto_tree_add_uint_format(ft, hf, whole, off, len, frame, "Frame: %u, payload: %u-%u (%u byte%s)",
                                             frame, off, off + len - 1, len, plurality(len, "", "s"));
        proto_item_set_generated(fei);
        CS_MARK_DEPENDED_UPON(pinfo, frame);
        if (fl & (FD_OVERLAP | FD_OVERLAPCONFLICT | FD_MULTIPLETAILS | FD_TOOLONGFRAGMENT)) {
            proto_tree *fet = proto_item_add_subtree(fei, *fit->ett_fragment);
            if (fl & FD_OVERLAP)
                proto_item_set_generated(proto_tree_add_boolean(fet, *fit->hf_fragment_overlap, whole, 0, 0, TRUE));
            if (fl & FD_OVERLAPCONFLICT)
                proto_item_set_generated(proto_tree_add_boolean(fet, *fit->hf_fragment_overlap_conflict, whole, 0, 0,
                                                                TRUE));
            if (fl & FD_MULTIPLETAILS)
                proto_item_set_generated(proto_tree_add_boolean(fet, *fit->hf_fragment_multiple_tails, whole, 0, 0,
                                                                TRUE));
            if (fl & FD_TOOLONGFRAGMENT)
                proto_item_set_generated(proto_tree_add_boolean(fet, *fit->hf_fragment_too_long_fragment, whole, 0, 0,
                                                                TRUE));
        }
    }
    proto_item_set_generated(proto_tree_add_uint(ft, *fit->hf_fragment_count, whole, 0, 0, count));
    proto_item_set_generated(proto_tree_add_uint(ft, *fit->hf_reassembled_length, whole, 0, 0, total));
    if (fit->hf_reassembled_data)
        proto_item_set_generated(proto_tree_add_item(ft, *fit->hf_reassembled_data, whole, 0, total, ENC_NA));
    if (head_flags & (FD_OVERLAPCONFLICT | FD_MULTIPLETAILS | FD_TOOLONGFRAGMENT))
        col_add_fstr(pinfo->cinfo, COL_INFO, "[Illegal %s]", fit->tag);
}

/* The reassembled packet as a tvb of this packet (its bytes in the
 * packet's scope), shown as the table shows it. */
static tvbuff_t *show_whole(const cs_reasm_t *s, const fragment_items *fit, tvbuff_t *tvb, packet_info *pinfo,
                            proto_tree *tree, guint8 *data, guint32 total, guint32 count, guint32 piece_size,
                            const guint32 *frames, const guint32 *lens, const guint8 *flags, guint8 head_flags)
{
    tvbuff_t *whole = tvb_new_child_real_data(tvb, data, total, total);

    add_new_data_source(pinfo, whole, s->source);
    cs_reasm_show_fragments(fit, pinfo, tree, whole, count, piece_size, frames, lens, flags, head_flags);
    return whole;
}

/* Revisit: what the first pass kept for this frame; own_len: the bytes of
 * this frame's fragment at data_off (reliable's way). */
static tvbuff_t *revisit(cs_reasm_t *s, const fragment_items *fit, tvbuff_t *tvb, guint data_off, guint data_len,
                         packet_info *pinfo, proto_tree *tree, gboolean by_id, guint32 id)
{
    const cs_whole_t *w = whole_of_frame(s, pinfo->num, by_id, id);
    guint32 own_off = 0, own_len = 0, at = 0;
    guint8 *kept, *data;

    if (!w)
        return NULL;
    if (w->in_frame != pinfo->num || (by_id && w->in_layer != pinfo->curr_layer_num)) {
        proto_item_set_generated(proto_tree_add_uint(tree, *fit->hf_reassembled_in, tvb, 0, 0, w->in_frame));
        return NULL;
    }
    if (w->own != CS_W_NO_OWN) {
        own_len = whole_piece(w, w->own, &own_off);
        if (own_len != data_len)
            return NULL;    /* not the frame the first pass saw */
    }
    kept = (guint8 *)wmem_alloc(pinfo->pool, w->total - own_len + 1);
    for (guint32 i = 0; i < w->n_chunks; i++) {
        const cs_chunk_t *c = whole_chunks(w)[i];
        memcpy(kept + at, c->data, c->len);
        at += c->len;
    }
    data = (guint8 *)wmem_alloc(pinfo->pool, w->total ? w->total : 1);
    memcpy(data, kept, own_off);
    if (own_len)
        tvb_memcpy(tvb, data + own_off, data_off, own_len);
    memcpy(data + own_off + own_len, kept + own_off, w->total - own_off - own_len);
    return show_whole(s, fit, tvb, pinfo, tree, data, w->total, w->count, w->piece_size, w->frames,
                      w->form & CS_W_ITEMS ? whole_lens(w) : NULL, w->form & CS_W_ITEMS ? whole_flags(w) : NULL,
                      w->head_flags);
}

/* ---- packets under way -------------------------------------------------- */

static cs_part_t *part_get(cs_reasm_t *s, const void *dir, guint64 id)
{
    cs_part_t key, *a;

    key.dir = dir;
    key.id = id;
    a = (cs_part_t *)g_hash_table_lookup(s->parts, &key);
    if (!a) {
        a = g_new0(cs_part_t, 1);
        a->dir = dir;
        a->id = id;
        g_hash_table_insert(s->parts, a, a);
    }
    return a;
}

/* Adds p after the fragments of its number and those before: its index. */
static guint32 part_link(cs_part_t *a, const cs_piece_t *p)
{
    guint32 i = a->n;

    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 4;
        a->pieces = g_renew(cs_piece_t, a->pieces, a->cap);
    }
    while (i > 0 && a->pieces[i - 1].frag > p->frag)
        i--;
    memmove(&a->pieces[i + 1], &a->pieces[i], (a->n - i) * sizeof(cs_piece_t));
    a->pieces[i] = *p;
    a->n++;
    return i;
}

static gboolean part_has(const cs_part_t *a, guint32 frag)
{
    guint32 lo = 0, hi = a->n;

    while (lo < hi) {
        guint32 mid = lo + (hi - lo) / 2;
        if (a->pieces[mid].frag < frag)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->n && a->pieces[lo].frag == frag;
}

static guint32 *part_frames(const cs_part_t *a, packet_info *pinfo)
{
    guint32 *frames = (guint32 *)wmem_alloc(pinfo->pool, (a->n ? a->n : 1) * sizeof(guint32));

    for (guint32 i = 0; i < a->n; i++)
        frames[i] = a->pieces[i].frame;
    return frames;
}

tvbuff_t *cs_reasm_add_counted(cs_reasm_t *s, tvbuff_t *tvb, guint off, guint len, packet_info *pinfo,
                               proto_tree *tree, const void *dir, guint64 id, guint32 frag, guint32 count,
                               gboolean transient, const fragment_items *fit)
{
    cs_part_t key, *a;
    cs_piece_t p;
    guint32 total, piece_size, *frames;
    guint8 *data;

    if (PINFO_FD_VISITED(pinfo))
        return revisit(s, fit, tvb, off, len, pinfo, tree, FALSE, 0);
    if (frag >= count)
        return NULL;
    key.dir = dir;
    key.id = id;
    a = (cs_part_t *)g_hash_table_lookup(s->parts, &key);
    if (a && a->count != count)
        return NULL;    /* the protocol keeps these apart (reliable: RLA_FRAG_COUNT) */
    if (!a) {
        a = part_get(s, dir, id);
        a->count = count;
    }
    if (part_has(a, frag))
        return NULL;    /* a fragment comes once (reliable: RLA_DUPLICATE) */
    if (s->unreachable && ++s->adds_since_prune >= 4096) {
        g_hash_table_foreach_remove(s->parts, part_unreachable, s);
        s->adds_since_prune = 0;
    }
    p.frame = pinfo->num;
    p.frag = frag;
    p.len = len;
    p.flags = 0;
    p.data = (guint8 *)tvb_memdup(NULL, tvb, off, len);
    part_link(a, &p);
    if (a->n < count)
        return NULL;

    /* Complete: every fragment but the last has the same length (reliable's
     * decoder drops the others, reliable.fragment_size). */
    piece_size = count > 1 ? a->pieces[0].len : len;
    total = 0;
    for (guint32 i = 0; i < count; i++) {
        if (i < count - 1 && a->pieces[i].len != piece_size) {
            g_hash_table_remove(s->parts, a);
            return NULL;
        }
        total += a->pieces[i].len;
    }
    data = (guint8 *)wmem_alloc(pinfo->pool, total ? total : 1);
    for (guint32 i = 0; i < count; i++)
        memcpy(data + i * piece_size, a->pieces[i].data, a->pieces[i].len);
    frames = part_frames(a, pinfo);
    if (!transient)
        whole_keep(s, pinfo, data, total, 0, count, piece_size, frag, frag * piece_size, len, frames, NULL, NULL, 0);
    g_hash_table_remove(s->parts, a);
    return show_whole(s, fit, tvb, pinfo, tree, data, total, count, piece_size, frames, NULL, NULL, 0);
}

/* The interned endpoints of this packet (a seq store's direction). */
static const void *ends_of(packet_info *pinfo)
{
    cs_ends_t probe, *e;

    probe.src = pinfo->src;
    probe.dst = pinfo->dst;
    probe.sport = pinfo->srcport;
    probe.dport = pinfo->destport;
    e = (cs_ends_t *)g_hash_table_lookup(ends, &probe);
    if (!e) {
        e = g_new0(cs_ends_t, 1);
        copy_address(&e->src, &pinfo->src);
        copy_address(&e->dst, &pinfo->dst);
        e->sport = pinfo->srcport;
        e->dport = pinfo->destport;
        g_hash_table_add(ends, e);
    }
    return e;
}

tvbuff_t *cs_reasm_add_seq(cs_reasm_t *s, tvbuff_t *tvb, guint off, guint len, packet_info *pinfo,
                           proto_tree *tree, guint32 id, guint32 frag, gboolean more, gboolean transient,
                           const fragment_items *fit)
{
    cs_part_t *a;
    cs_piece_t p;
    guint32 at, max = 0, size = 0, pos = 0, *frames, *lens;
    guint8 *flags, *data;
    gboolean uniform = TRUE;

    if (PINFO_FD_VISITED(pinfo))
        return revisit(s, fit, tvb, off, len, pinfo, tree, TRUE, id);
    a = part_get(s, ends_of(pinfo), id);
    p.frame = pinfo->num;
    p.frag = frag;
    p.len = len;
    p.flags = 0;
    p.data = NULL;
    /* fragment_add_seq_work(), step by step */
    if (!more) {
        if (a->flags & FD_DATALEN_SET) {
            if (a->count != frag) {
                p.flags |= FD_MULTIPLETAILS;
                a->flags |= FD_MULTIPLETAILS;
            }
        } else {
            a->count = frag;    /* the tail's number */
            a->flags |= FD_DATALEN_SET;
        }
    }
    if (len) {
        if (!tvb_bytes_exist(tvb, off, len))
            return NULL;
        p.data = (guint8 *)tvb_memdup(NULL, tvb, off, len);
    }
    at = part_link(a, &p);
    if (!(a->flags & FD_DATALEN_SET))
        return NULL;
    for (guint32 i = 0; i < a->n; i++)
        if (a->pieces[i].frag == max)
            max++;
    if (max <= a->count)
        return NULL;
    if (max > a->count + 1) {
        a->pieces[at].flags |= FD_TOOLONGFRAGMENT;
        a->flags |= FD_TOOLONGFRAGMENT;
    }

    /* Complete: fragment_defragment_and_free()'s bytes and flags. */
    for (guint32 i = 0; i < a->n; i++)
        if (i == 0 || a->pieces[i - 1].frag != a->pieces[i].frag)
            size += a->pieces[i].len;
    data = (guint8 *)wmem_alloc(pinfo->pool, size ? size : 1);
    frames = part_frames(a, pinfo);
    lens = (guint32 *)wmem_alloc(pinfo->pool, a->n * sizeof(guint32));
    flags = (guint8 *)wmem_alloc(pinfo->pool, a->n);
    for (guint32 i = 0; i < a->n; i++) {
        cs_piece_t *q = &a->pieces[i];
        const cs_piece_t *last = i ? &a->pieces[i - 1] : NULL;

        if (last && last->frag == q->frag)
            q->flags |= CS_FD_SAME;
        if (q->len) {
            if (!last || last->frag != q->frag) {
                memcpy(data + pos, q->data, q->len);
                pos += q->len;
            } else {
                q->flags |= FD_OVERLAP;
                a->flags |= FD_OVERLAP;
                if (last->len != q->len || memcmp(last->data, q->data, last->len) != 0) {
                    q->flags |= FD_OVERLAPCONFLICT;
                    a->flags |= FD_OVERLAPCONFLICT;
                }
            }
        }
        lens[i] = q->len;
        flags[i] = q->flags;
        if (q->flags || (i + 1 < a->n && q->len != a->pieces[0].len))
            uniform = FALSE;
    }
    if (!transient)
        whole_keep(s, pinfo, data, size, id, a->n, uniform ? lens[0] : 0, CS_W_NO_OWN, 0, 0, frames,
                   uniform ? NULL : lens, uniform ? NULL : flags, (guint8)(a->flags & ~FD_DATALEN_SET));
    {
        guint8 head_flags = (guint8)(a->flags & ~FD_DATALEN_SET);
        guint32 n = a->n;
        g_hash_table_remove(s->parts, a);
        return show_whole(s, fit, tvb, pinfo, tree, data, size, n, uniform ? lens[0] : 0, frames,
                          uniform ? NULL : lens, uniform ? NULL : flags, head_flags);
    }
}
