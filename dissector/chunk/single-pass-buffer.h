/* chunk/single-pass-buffer.h
 * The chunk analysis' own reassembly buffer for tshark's single pass
 * (chunk/single-pass-buffer.c; the shared mechanism: common/single-pass.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CHUNK_SINGLE_PASS_H
#define CHUNK_SINGLE_PASS_H

#include <epan/packet.h>
#include <epan/reassemble.h>

#include "chunk-int.h"

/* Forgets the previous file's budget (from the analysis' init routine). */
void chunk_sp_init(void);

/* For a first send of t's slices on the first pass: TRUE when the slices go
 * to a buffer of t's own (chunk_sp_add) instead of the reassembly table.
 * Decided at t's first slice in the single pass (transient: what
 * cs_sp_begin_packet() returned), while the buffers alive at
 * once stay within budget bytes; a transfer begun in the table stays there. */
gboolean chunk_sp_takes(chunk_transfer_t *t, gboolean transient, guint64 budget);

/* Adds a first send to t's own buffer; returns the reassembled chunk, shown
 * under tree as process_reassembled_data() shows it with fit, when this
 * slice completes it (its data freed with the packet's tvbs), else NULL. */
tvbuff_t *chunk_sp_add(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                       const chunk_slice_info_t *slice, chunk_transfer_t *t,
                       const fragment_items *fit);

/* Frees t's own buffer, if any (a transfer that never completed: at the end
 * of the file scope). */
void chunk_sp_free(chunk_transfer_t *t);

#endif /* CHUNK_SINGLE_PASS_H */
