/* chunk/single-pass-buffer.c
 * The chunk analysis' own reassembly buffer for tshark's single pass (the
 * mechanism, and why: common/single-pass.c). A transfer's first sends go to a
 * buffer of its own, taken at its first slice (num slices x slice size,
 * within the analysis' state cap) and given to the reassembled chunk when
 * its last missing slice comes, whose frame shows the same Slices tree,
 * "Reassembled chunk" data source and export object as the table gives.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>
#include <epan/reassemble.h>

#include "common/single-pass.h"
#include "single-pass-buffer.h"

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

gboolean chunk_sp_takes(chunk_transfer_t *t, gboolean transient, guint64 budget)
{
    return t->reasm || (transient && !t->in_table && reasm_start(t, budget));
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
    cs_sp_show_pieces(pinfo, tree, rtvb, t->num_slices, t->slice_size, r->last_len, r->frame, fit);
    chunk_sp_free(t);
    return rtvb;
}
