/* chunk-single-pass.c
 * Memory in tshark's single pass: the one place where the chunk analysis
 * depends on tshark's internals. Do not copy it into another protocol; the
 * fragment and netgame analyses use Wireshark's reassembly table and
 * file-scope records as they are.
 *
 * Why. Frames are never revisited in tshark's single pass (`tshark -r`
 * without -2), so keeping a record per frame and every reassembled chunk for
 * the whole file would only cost memory: the reassembled data alone is as
 * large as the capture's payload, and the table's bookkeeping (a
 * fragment_head and fragment_items, about 135 bytes a slice) stays for the
 * whole file. On the 508 697-frame benchmark capture this path takes peak
 * memory from 1.38x to 1.09x of tshark without the plugin (bench/RESULTS.md).
 *
 * How the pass is recognised: tshark's single pass dissects every frame in
 * the same frame_data (a local of its packet loop) and runs the taps (a
 * probe listener of ours sees them) or fills columns. The first pass of its
 * -2 mode uses one frame_data too, but with neither taps nor columns;
 * Wireshark keeps a frame_data per frame. Both keep everything. A file's
 * first frame is never seen as the single pass.
 *
 * What it does there: per-frame records live in the packet scope; a
 * transfer's first sends go to a buffer of its own, taken at its first
 * slice (num slices x slice size, within the analysis' state cap) and given
 * to the reassembled chunk when its last missing slice comes, whose frame
 * shows the same Slices tree, "Reassembled chunk" data source and export
 * object as the table gives (show_own_slices() rebuilds the tree item by
 * item); the data of a chunk the table reassembled is freed by hand
 * (tvb_data) once its frame has been dissected and tapped.
 *
 * What guards it: analysis.truth (dissector/tests/analysis/test_truth.py)
 * compares the single pass with columns against -T fields and checks every
 * exported chunk byte for byte; dissector.goldens compares each capture's
 * one-pass -V output (golden/<capture>.txt, this path) with what the
 * two-pass output (golden/<capture>.2pass.txt, the table) shows.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>
#include <epan/reassemble.h>
#include <epan/tap.h>
#include <wsutil/str_util.h>

#include "ws-compat.h"
#include "chunk-single-pass.h"

static gboolean transient;          /* this packet is in tshark's single pass */
static const frame_data *prev_fd;
static guint32 prev_num;
static fragment_head *pending_free; /* reassembled data to drop at the next packet */
static int probe_tap = -1;          /* taps run for this frame? */
static guint32 probe_seen_num;
static guint64 reasm_bytes;         /* live own buffers, counted against the budget */

/* A transfer's first sends gathered in a buffer of its own. */
typedef struct chunk_reasm {
    guint8 *data;       /* g_malloc'd; slice i at i x slice_size */
    guint32 cap;        /* bytes allocated at data */
    guint32 have;       /* slices in */
    guint32 last_len;   /* bytes of the last slice, once in */
    guint32 frame[];    /* per slice: frame of its first send, 0 while missing */
} chunk_reasm_t;

void chunk_sp_init(void)
{
    transient = FALSE;
    prev_fd = NULL;
    prev_num = 0;
    pending_free = NULL;
    probe_seen_num = 0;
    reasm_bytes = 0;
}

void chunk_sp_free(chunk_transfer_t *t)
{
    chunk_reasm_t *r = t->reasm;
    if (!r)
        return;
    reasm_bytes -= r->cap + sizeof(chunk_reasm_t) + (guint64)t->num_slices * sizeof(guint32);
    g_free(r->data);
    g_free(r);
    t->reasm = NULL;
}

static tap_packet_status probe_packet(void *tapdata _U_, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data _U_, tap_flags_t flags _U_)
{
    probe_seen_num = pinfo->num;
    return TAP_PACKET_DONT_REDRAW;
}

wmem_allocator_t *chunk_sp_begin_packet(packet_info *pinfo)
{
    if (!PINFO_FD_VISITED(pinfo)) {
        transient = pinfo->fd == prev_fd && pinfo->num != prev_num &&
                    (pinfo->cinfo != NULL || (prev_num && probe_seen_num == prev_num));
        prev_fd = pinfo->fd;
        prev_num = pinfo->num;
    }
    if (pending_free) {
        /* The reassembled tvb of that frame is gone with its packet; the
         * table keeps the (small) head, without the data. */
        if (pending_free->tvb_data && !(pending_free->flags & FD_SUBSET_TVB))
            tvb_free(pending_free->tvb_data);
        pending_free->tvb_data = NULL;
        pending_free = NULL;
    }
    return transient && !PINFO_FD_VISITED(pinfo) ? pinfo->pool : wmem_file_scope();
}

void chunk_sp_end_packet(packet_info *pinfo)
{
    if (!PINFO_FD_VISITED(pinfo))
        tap_queue_packet(probe_tap, pinfo, NULL);
}

/* Starts t's buffer: num_slices x slice_size bytes, within budget counted
 * over the buffers alive at once. Returns FALSE (t->reasm stays NULL) when
 * over it: the transfer then uses the reassembly table, which keeps only the
 * bytes that really came. */
static gboolean reasm_start(chunk_transfer_t *t, guint64 budget)
{
    guint64 cap = (guint64)t->num_slices * t->slice_size;
    guint64 need = cap + sizeof(chunk_reasm_t) + (guint64)t->num_slices * sizeof(guint32);
    if (cap > G_MAXUINT32 / 2 || reasm_bytes + need > budget)
        return FALSE;
    chunk_reasm_t *r = (chunk_reasm_t *)g_malloc0(sizeof(chunk_reasm_t) + t->num_slices * sizeof(guint32));
    r->data = (guint8 *)g_malloc(cap ? cap : 1);
    r->cap = (guint32)cap;
    reasm_bytes += need;
    t->reasm = r;
    return TRUE;
}

gboolean chunk_sp_takes(chunk_transfer_t *t, guint64 budget)
{
    return t->reasm || (transient && !t->in_table && reasm_start(t, budget));
}

void chunk_sp_reassembled(fragment_head *fd)
{
    if (transient)
        pending_free = fd;
}

/* The slices tree of a chunk completed in the single pass, item for item
 * what process_reassembled_data() shows for a fragment_add_seq_check()
 * reassembly (show_fragment_seq_tree() in epan/reassemble.c): the output
 * must not depend on the number of passes. Slices are contiguous: all but
 * the last are slice_size bytes (others are not reassembled). */
static void show_own_slices(packet_info *pinfo, proto_tree *tree, tvbuff_t *rtvb,
                            const chunk_transfer_t *t, const chunk_reasm_t *r,
                            const fragment_items *fit)
{
    guint32 count = t->num_slices, total = tvb_captured_length(rtvb);
    pinfo->fragmented = FALSE;
    proto_item *fi = proto_tree_add_item(tree, *fit->hf_fragments, rtvb, 0, -1, ENC_NA);
    proto_item_set_generated(fi);
    proto_tree *ft = proto_item_add_subtree(fi, *fit->ett_fragments);
    for (guint32 i = 0; i < count; i++) {
        guint32 off = i * t->slice_size;
        guint32 len = i == count - 1 ? r->last_len : t->slice_size;
        guint32 frame = r->frame[i];
        if (i == 0)
            proto_item_set_text(fi, "%u %s (%u byte%s): ", count,
                                proto_registrar_get_name(count == 1 ? *fit->hf_fragment : *fit->hf_fragments),
                                total, plurality(total, "", "s"));
        else
            proto_item_append_text(fi, ", ");
        proto_item_append_text(fi, "#%u(%u)", frame, len);
        proto_item *fei;
        if (len == 0)
            fei = proto_tree_add_uint_format(ft, *fit->hf_fragment, rtvb, off, 0, frame,
                                             "Frame: %u (no data)", frame);
        else
            fei = proto_tree_add_uint_format(ft, *fit->hf_fragment, rtvb, off, len, frame,
                                             "Frame: %u, payload: %u-%u (%u byte%s)", frame, off,
                                             off + len - 1, len, plurality(len, "", "s"));
        proto_item_set_generated(fei);
        CS_MARK_DEPENDED_UPON(pinfo, frame);
    }
    proto_item_set_generated(proto_tree_add_uint(ft, *fit->hf_fragment_count, rtvb, 0, 0, count));
    proto_item_set_generated(proto_tree_add_uint(ft, *fit->hf_reassembled_length, rtvb, 0, 0, total));
}

tvbuff_t *chunk_sp_add(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                       const chunk_slice_info_t *slice, chunk_transfer_t *t,
                       const fragment_items *fit)
{
    chunk_reasm_t *r = t->reasm;
    guint32 id = slice->slice_id, len = slice->slice_bytes;
    guint64 end = (guint64)id * t->slice_size + len;
    if (r->frame[id] || end > G_MAXUINT32 / 2)
        return NULL;   /* first sends only come once; a huge last slice is not kept */
    if (end > r->cap) {
        /* Only the last slice can be longer than slice_size. */
        r->data = (guint8 *)g_realloc(r->data, (gsize)end);
        reasm_bytes += end - r->cap;
        r->cap = (guint32)end;
    }
    tvb_memcpy(tvb, r->data + (gsize)id * t->slice_size, slice->data_offset, len);
    r->frame[id] = pinfo->num;
    if (id == t->num_slices - 1)
        r->last_len = len;
    if (++r->have < t->num_slices)
        return NULL;

    guint32 total = (t->num_slices - 1) * t->slice_size + r->last_len;
    t->reassembled_in = pinfo->num;
    /* The data now belongs to the tvb, freed with this packet's tvbs. */
    tvbuff_t *rtvb = tvb_new_child_real_data(tvb, r->data, total, total);
    tvb_set_free_cb(rtvb, g_free);
    reasm_bytes -= r->cap;
    r->cap = 0;
    r->data = NULL;
    add_new_data_source(pinfo, rtvb, "Reassembled chunk");
    /* Should the tree throw, the file scope's end frees the rest. */
    show_own_slices(pinfo, tree, rtvb, t, r, fit);
    chunk_sp_free(t);
    return rtvb;
}

void chunk_sp_register(void)
{
    probe_tap = register_tap("chunk_analysis_probe");
}

void chunk_sp_handoff(void)
{
    /* The probe that tells tshark's single pass (taps run) from the first
     * pass of -2 (no taps); it needs neither tree nor columns. Once: the
     * handoff runs again when preferences change. */
    static gboolean registered;
    if (registered)
        return;
    registered = TRUE;
    GString *err = register_tap_listener("chunk_analysis_probe", &probe_tap, NULL,
                                         TL_IS_DISSECTOR_HELPER, NULL, probe_packet, NULL, NULL);
    if (err) {
        ws_warning("chunk analysis: cannot register its tap probe: %s", err->str);
        g_string_free(err, TRUE);
    }
}
