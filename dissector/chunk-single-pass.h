/* chunk-single-pass.h
 * The chunk analysis' memory path for tshark's single pass: see
 * chunk-single-pass.c for why it exists and what guards it. Only
 * chunk-analysis.c calls it; a new protocol must not (use Wireshark's
 * reassembly and file-scope records as they are).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CHUNK_SINGLE_PASS_H
#define CHUNK_SINGLE_PASS_H

#include <epan/packet.h>
#include <epan/reassemble.h>

#include "packet-chunk.h"
#include "chunk-analysis-int.h"

/* Registers the probe tap (from the analysis' registration) and its
 * listener (from its handoff; once). */
void chunk_sp_register(void);
void chunk_sp_handoff(void);

/* Forgets the previous file (from the analysis' init routine). */
void chunk_sp_init(void);

/* Call first for every analysed packet: tells the single pass and drops
 * the previous packet's reassembled data there. Returns the scope this
 * frame's analysis record lives in: the packet's in the single pass, the
 * file's otherwise. */
wmem_allocator_t *chunk_sp_begin_packet(packet_info *pinfo);

/* Call last for every analysed packet (queues the probe on the first pass). */
void chunk_sp_end_packet(packet_info *pinfo);

/* For a first send of t's slices on the first pass: TRUE when the slices go
 * to a buffer of t's own (chunk_sp_add) instead of the reassembly table.
 * Decided at t's first slice in the single pass, while the buffers alive at
 * once stay within budget bytes; a transfer begun in the table stays there. */
gboolean chunk_sp_takes(chunk_transfer_t *t, guint64 budget);

/* Adds a first send to t's own buffer; returns the reassembled chunk, shown
 * under tree as process_reassembled_data() shows it with fit, when this
 * slice completes it (its data freed with the packet's tvbs), else NULL. */
tvbuff_t *chunk_sp_add(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                       const chunk_slice_info_t *slice, chunk_transfer_t *t,
                       const fragment_items *fit);

/* A chunk the table reassembled in this frame: in the single pass its data
 * is dropped at the next analysed packet. */
void chunk_sp_reassembled(fragment_head *fd);

/* Frees t's own buffer, if any (a transfer that never completed: at the end
 * of the file scope). */
void chunk_sp_free(chunk_transfer_t *t);

#endif /* CHUNK_SINGLE_PASS_H */
