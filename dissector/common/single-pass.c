/* common/single-pass.c
 * Memory in tshark's single pass: the one place where the analyses depend on
 * tshark's internals (docs/architecture.md, "Single pass").
 *
 * Why. Frames are never revisited in tshark's single pass (`tshark -r`
 * without -2), so keeping a record per frame and every reassembled packet
 * for the whole file only costs memory: the reassembled data alone is as
 * large as the capture's payload, and Wireshark's reassembly table keeps it
 * and its bookkeeping (a fragment_head and fragment_items, 135-215 bytes a
 * piece) until the file closes. On the benchmark captures this path takes
 * peak memory from 1.38x to 1.09x of tshark without the plugin for chunk,
 * and from 4.2x to about 1.1x for p2frag (bench/RESULTS.md).
 *
 * How the pass is recognised: tshark's single pass dissects every frame in
 * the same frame_data (a local of its packet loop) and runs the taps (a
 * probe listener of ours sees them) or fills columns. The first pass of its
 * -2 mode uses one frame_data too, but with neither taps nor columns;
 * Wireshark keeps a frame_data per frame. Both keep everything. A file's
 * first frame is never seen as the single pass.
 *
 * What the analyses do there, all through this file: per-frame records
 * live in the packet scope (cs_sp_record_scope); a reassembly begun in the
 * single pass goes to a buffer of the protocol's own (cs_sp_buf_*: chunk's
 * transfers, p2frag's packets), handed to a tvb freed with the completing
 * packet, whose frame shows the same tree (cs_reasm_show_fragments, common/reasm-store.h) and data
 * source as the table gives; the data of a packet the table reassembled
 * (chunk's and p2frag's begun outside the single pass or over budget) is
 * freed here once its frame has been dissected and tapped
 * (cs_sp_free_later). reliable's packets and yojimbo's blocks are made in
 * common/reasm-store.c, in the packet's scope in this pass.
 *
 * What guards it: each protocol's goldens compare the one-pass -V output
 * with the two-pass one (chunk: dissector.goldens; p2frag:
 * p2frag.truth), analysis.truth checks every exported chunk
 * byte for byte, dissector.single_pass that the pass is recognised
 * (`tshark -q -z chunkshark,single_pass` counts the analysed frames taken as
 * the single pass) and dissector.single_pass_memory that the own buffers
 * and the freed table data keep tshark's memory bounded on long captures
 * (the same -z prints the reassemblies and the bytes held at once). Each
 * protocol can be kept off this path with its
 * <protocol>.single_pass preference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/reassemble.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <wsutil/str_util.h>

#include "ws-compat.h"
#include "single-pass.h"
#include "reasm-store.h"
#include "stats-util.h"

static gboolean transient;          /* this frame is in tshark's single pass */
static gboolean taken;              /* what cs_sp_begin_packet() returned last (with `allowed`) */
static gboolean counted;            /* this frame is counted in n_single */
static const frame_data *prev_fd;
static guint32 prev_num;
/* Reassembled data to drop at the next frame (a few a frame: reliable's
 * packet and yojimbo's block in one frame), and the frame that left it. */
#define CS_SP_MAX_PENDING 8
static fragment_head *pending_free[CS_SP_MAX_PENDING];
static guint n_pending;
static guint32 pending_num;
static int probe_tap = -1;          /* taps run for this frame? */
static guint32 probe_seen_num;
/* For -z chunkshark,single_pass: first visits of analysed packets, and
 * those taken as the single pass. */
static guint32 n_analysed, n_single;
/* And what the reassemblies of that pass held: reassemblies completed in
 * buffers of the protocols' own, the bytes their live buffers count (every
 * pool) and the most at once, table reassemblies whose data was dropped. */
static guint32 n_own_done, n_table_freed;
static guint64 own_bytes, own_peak;

/* The recognition rests on how tshark's packet loop works, read in its
 * source for every version the plugin is built for (4.0 to 4.6): one
 * frame_data for every frame of the single pass. Built against a later
 * Wireshark the path stays off (every frame kept, as in two passes: the
 * same output, the memory of two passes) until it is checked there
 * (dissector.single_pass, dissector.single_pass_memory) and this bound
 * moved. */
#define CS_SP_KNOWN_LOOP (!CS_WS_AT_LEAST(4, 7))

void cs_sp_init(void)
{
    transient = FALSE;
    taken = FALSE;
    counted = FALSE;
    prev_fd = NULL;
    prev_num = 0;
    n_pending = 0;
    pending_num = 0;
    probe_seen_num = 0;
    n_analysed = 0;
    n_single = 0;
    n_own_done = 0;
    n_table_freed = 0;
    own_bytes = 0;
    own_peak = 0;
}

static tap_packet_status probe_packet(void *tapdata _U_, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data _U_, tap_flags_t flags _U_)
{
    probe_seen_num = pinfo->num;
    return TAP_PACKET_DONT_REDRAW;
}

static void drop_pending(void)
{
    /* The reassembled tvbs of that frame are gone with its packet; the table
     * keeps the (small) heads, without the data. */
    for (guint i = 0; i < n_pending; i++) {
        if (pending_free[i]->tvb_data && !(pending_free[i]->flags & FD_SUBSET_TVB)) {
            tvb_free(pending_free[i]->tvb_data);
            n_table_freed++;
        }
        pending_free[i]->tvb_data = NULL;
    }
    n_pending = 0;
}

gboolean cs_sp_begin_packet(packet_info *pinfo, gboolean allowed)
{
    /* A protocol layered on another that analyses too (reliable in netcode,
     * yojimbo in reliable) calls again for the same frame: same answer. */
    gboolean again = pinfo->fd == prev_fd && pinfo->num == prev_num;

    if (!PINFO_FD_VISITED(pinfo) && !again) {
        transient = CS_SP_KNOWN_LOOP && pinfo->fd == prev_fd && pinfo->num != prev_num &&
                    (pinfo->cinfo != NULL || (prev_num && probe_seen_num == prev_num));
        counted = FALSE;
        prev_fd = pinfo->fd;
        prev_num = pinfo->num;
        n_analysed++;
    }
    if (n_pending && pending_num != pinfo->num)
        drop_pending();
    taken = !PINFO_FD_VISITED(pinfo) && transient && allowed;
    if (!taken)
        return FALSE;
    if (!counted) {
        n_single++;
        counted = TRUE;
    }
    return TRUE;
}

void cs_sp_end_packet(packet_info *pinfo)
{
    if (!PINFO_FD_VISITED(pinfo))
        tap_queue_packet(probe_tap, pinfo, NULL);
}

void cs_sp_free_later(fragment_head *fd)
{
    /* In the single pass, for the protocol that called cs_sp_begin_packet()
     * last (its preference on); the frame is the one that call saw. */
    if (!taken)
        return;
    if (n_pending && pending_num != prev_num)
        drop_pending();
    for (guint i = 0; i < n_pending; i++)
        if (pending_free[i] == fd)
            return;
    if (n_pending == CS_SP_MAX_PENDING)
        return;                     /* kept by the table, as in two passes */
    pending_num = prev_num;
    pending_free[n_pending++] = fd;
}

/* ---- Reassembly in buffers of the protocols' own ------------------------- */

struct cs_sp_buf {
    cs_sp_pool_t *pool;
    guint32 slot;           /* index in pool->live */
    guint32 count, piece_size, have;
    guint64 counted;        /* bytes counted in pool->bytes */
    guint8 **piece;         /* piece i as it came (g_malloc'd), NULL while missing */
    guint32 *len;           /* its bytes */
    guint32 *frame;         /* the frame it came in, 0 while missing */
};

/* Reassemblies past this size are left to the table (whose data is only
 * what really came). */
#define CS_SP_MAX_BYTES (G_MAXUINT32 / 2)

static void own_count(cs_sp_buf_t *b, guint64 bytes)
{
    b->counted += bytes;
    b->pool->bytes += bytes;
    own_bytes += bytes;
    if (own_bytes > own_peak)
        own_peak = own_bytes;
}

cs_sp_buf_t *cs_sp_buf_new(cs_sp_pool_t *pool, guint32 count, guint32 piece_size, guint64 budget)
{
    guint64 size = (guint64)count * piece_size;
    guint64 need = sizeof(cs_sp_buf_t) + (guint64)count * (sizeof(guint8 *) + 2 * sizeof(guint32)) + size;
    cs_sp_buf_t *b;

    if (count == 0 || count > 65536 || size > CS_SP_MAX_BYTES || pool->bytes + need > budget)
        return NULL;
    /* One block: the struct, then the pointers, then the two arrays. */
    b = (cs_sp_buf_t *)g_malloc0(sizeof(cs_sp_buf_t) + (gsize)count * (sizeof(guint8 *) + 2 * sizeof(guint32)));
    b->piece = (guint8 **)(b + 1);
    b->len = (guint32 *)(b->piece + count);
    b->frame = b->len + count;
    b->pool = pool;
    b->count = count;
    b->piece_size = piece_size;
    if (!pool->live)
        pool->live = g_ptr_array_new();
    b->slot = pool->live->len;
    g_ptr_array_add(pool->live, b);
    own_count(b, need);
    return b;
}

gboolean cs_sp_buf_has(const cs_sp_buf_t *b, guint32 i)
{
    return i < b->count && b->piece[i] != NULL;
}

static void buf_release(cs_sp_buf_t *b)
{
    GPtrArray *live = b->pool->live;

    for (guint32 i = 0; i < b->count; i++)
        g_free(b->piece[i]);
    b->pool->bytes -= b->counted;
    own_bytes -= b->counted;
    g_ptr_array_remove_index_fast(live, b->slot);
    if (b->slot < live->len)
        ((cs_sp_buf_t *)g_ptr_array_index(live, b->slot))->slot = b->slot;
    g_free(b);
}

void cs_sp_buf_free(cs_sp_buf_t **bp)
{
    if (*bp)
        buf_release(*bp);
    *bp = NULL;
}

void cs_sp_pool_clear(cs_sp_pool_t *pool)
{
    while (pool->live && pool->live->len)
        buf_release((cs_sp_buf_t *)g_ptr_array_index(pool->live, pool->live->len - 1));
}

tvbuff_t *cs_sp_buf_add(cs_sp_buf_t **bp, tvbuff_t *tvb, guint offset, guint32 len, guint32 i,
                        packet_info *pinfo, proto_tree *tree, const char *source, const fragment_items *fit)
{
    cs_sp_buf_t *b = *bp;
    guint32 count, piece_size, last, total, *frames;
    guint8 *data;
    tvbuff_t *rtvb;

    if (i >= b->count || b->piece[i] || (guint64)i * b->piece_size + len > CS_SP_MAX_BYTES)
        return NULL;   /* a piece comes once; a huge last one is not kept */
    b->piece[i] = (guint8 *)tvb_memdup(NULL, tvb, offset, len);
    b->len[i] = len;
    b->frame[i] = pinfo->num;
    if (len > b->piece_size)
        own_count(b, len - b->piece_size);   /* only the last can be longer */
    if (++b->have < b->count)
        return NULL;

    /* Every piece is in: all but the last piece_size bytes (a shorter one
     * leaves zeros; the protocols give only full ones). */
    last = b->len[b->count - 1];
    total = (b->count - 1) * b->piece_size + last;
    data = (guint8 *)g_malloc0(total ? total : 1);
    for (guint32 k = 0; k < b->count; k++)
        memcpy(data + (gsize)k * b->piece_size, b->piece[k],
               k == b->count - 1 ? last : MIN(b->len[k], b->piece_size));
    count = b->count;
    piece_size = b->piece_size;
    frames = (guint32 *)wmem_memdup(pinfo->pool, b->frame, count * sizeof(guint32));
    cs_sp_buf_free(bp);
    n_own_done++;
    /* The data now belongs to the tvb, freed with this packet's tvbs. */
    rtvb = tvb_new_child_real_data(tvb, data, total, total);
    tvb_set_free_cb(rtvb, g_free);
    add_new_data_source(pinfo, rtvb, source);
    /* Without a tree neither the items nor the frames marked as depended
     * upon reach anyone: the marks are read only for frames that pass a
     * display filter (tshark's first of two passes, the GUI), which needs a
     * tree, and this runs only in tshark's single pass. */
    if (tree)
        cs_reasm_show_fragments(fit, pinfo, tree, rtvb, count, piece_size, frames, NULL, NULL, 0);
    else
        pinfo->fragmented = FALSE;
    return rtvb;
}

/* -z chunkshark,single_pass: how many analysed packets the protocols took as
 * tshark's single pass (the first frame of a file never is). */
static tap_packet_status count_packet(void *tapdata _U_, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                      const void *data _U_, tap_flags_t flags _U_)
{
    return TAP_PACKET_REDRAW;
}

static void count_draw(void *tapdata _U_)
{
    printf("chunkshark single pass: %u of %u analysed packets\n", n_single, n_analysed);
    printf("chunkshark single pass: %u reassemblies in own buffers, at most %" G_GUINT64_FORMAT
           " bytes held at once; %u reassembled by the table, their data freed\n",
           n_own_done, own_peak, n_table_freed);
}

static void count_finish(void *tapdata _U_)
{
}

static CS_TAP_INIT_RET count_init(const char *opt_arg, void *userdata _U_)
{
    static int listener;   /* the listener's identity */

    if (!su_text_listen(opt_arg, "chunkshark,single_pass", "chunkshark_single_pass_probe", &listener, NULL,
                        count_packet, count_draw, count_finish))
        CS_TAP_INIT_FAILED;
    CS_TAP_INIT_OK;
}

void cs_sp_register(void)
{
    static stat_tap_ui count_ui;

    if (probe_tap != -1)
        return;
    probe_tap = register_tap("chunkshark_single_pass_probe");
    su_register_text_ui(&count_ui, "tshark single pass (packets)", "chunkshark,single_pass", count_init);
}

void cs_sp_register_pref(module_t *m, ws_cb_bool *var)
{
    /* Labelled as what it is in the GUI's preference page, where it does
     * nothing: Wireshark always keeps the records it reads back. */
    prefs_register_bool_preference(m, "single_pass", "tshark only: save memory in its single pass (no effect in Wireshark)",
        "tshark only, no effect in Wireshark: in tshark's single pass (tshark -r without -2) keep no "
        "analysis record per frame and reassemble in buffers freed as soon as a packet is complete; the "
        "output is the same either way. Off: keep everything for the whole file, as Wireshark and tshark -2 do",
        var);
}

void cs_sp_handoff(void)
{
    /* The probe that tells tshark's single pass (taps run) from the first
     * pass of -2 (no taps); it needs neither tree nor columns. Once: the
     * handoffs run again when preferences change. */
    static gboolean registered;
    if (registered)
        return;
    registered = TRUE;
    GString *err = register_tap_listener("chunkshark_single_pass_probe", &probe_tap, NULL,
                                         TL_IS_DISSECTOR_HELPER, NULL, probe_packet, NULL, NULL);
    if (err) {
        ws_warning("chunkshark: cannot register the single-pass probe tap: %s", err->str);
        g_string_free(err, TRUE);
    }
}
