/* common/single-pass.h
 * Memory in tshark's single pass, shared by every protocol's analysis that
 * keeps per-frame records (all six: chunk, p2frag, netgame, netcode,
 * reliable, yojimbo): tells the single pass from Wireshark's passes, drops
 * the table's reassembled data once its frame is done, reassembles in
 * buffers of a protocol's own within a budget (chunk, p2frag), and shows
 * such a reassembly as the table would. The one single-pass mechanism of the
 * plugin. Why and how: common/single-pass.c and docs/architecture.md
 * (which says what each protocol puts there).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_SINGLE_PASS_H
#define CS_SINGLE_PASS_H

#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/reassemble.h>

#include "ws-compat.h"

/* The probe tap and -z chunkshark,single_pass: cs_sp_register() from a
 * registration routine, cs_sp_handoff() from a handoff; each acts once,
 * whoever calls. */
void cs_sp_register(void);
void cs_sp_handoff(void);

/* Registers <protocol>.single_pass in module m, the protocol's switch for
 * this path (default on: *var TRUE); what the protocol hands to
 * cs_sp_begin_packet() as `allowed`. */
void cs_sp_register_pref(module_t *m, ws_cb_bool *var);

/* Forgets the previous file (from an init routine; any protocol's). */
void cs_sp_init(void);

/* Call first for every analysed packet. Drops the data a previous frame
 * left to cs_sp_free_later(), and returns TRUE when this packet is the first
 * visit of tshark's single pass (its frame will never be dissected again)
 * and `allowed` (the protocol's <protocol>.single_pass preference). Protocols
 * layered in one frame (netcode, reliable, yojimbo) each call it: the frame
 * is recognised once, and counted once in -z chunkshark,single_pass. */
gboolean cs_sp_begin_packet(packet_info *pinfo, gboolean allowed);

/* The scope a frame's analysis record lives in: the packet's in the single
 * pass (transient: what cs_sp_begin_packet() returned, never TRUE on a
 * revisit), the file's otherwise. */
static inline wmem_allocator_t *cs_sp_record_scope(packet_info *pinfo, gboolean transient)
{
    return transient ? pinfo->pool : wmem_file_scope();
}

/* Call last for every analysed packet (queues the probe on first passes). */
void cs_sp_end_packet(packet_info *pinfo);

/* A packet Wireshark's table reassembled in this frame, in the single pass:
 * its data is dropped at the next analysed frame (the table keeps the
 * small head). Up to 8 a frame; more stay in the table. */
void cs_sp_free_later(fragment_head *fd);

/* ---- Reassembly in buffers of the protocol's own --------------------------
 * In the single pass a reassembly begun there goes to a buffer of its own
 * instead of Wireshark's table: count pieces (all piece_size bytes but the
 * last, which may be longer or shorter), each copied as it comes; when the
 * last missing one comes, the whole goes to a tvb freed with that packet
 * and the buffer is gone. A protocol's buffers are counted in a pool of its
 * own (a static cs_sp_pool_t, zero at start), against a budget it gives
 * each time one starts: a buffer counts its whole size (count x piece_size,
 * and what a longer last piece adds) from its start, so a pool never holds
 * more than the budget (and a last piece) whatever the traffic claims. */
typedef struct cs_sp_buf cs_sp_buf_t;
typedef struct cs_sp_pool {
    guint64 bytes;          /* counted by the live buffers */
    GPtrArray *live;        /* the live buffers (cs_sp_buf_t *) */
} cs_sp_pool_t;

/* A new buffer of count pieces (1..65536) in pool, or NULL when the pool
 * would then count more than budget bytes (the reassembly then uses the
 * table, as it must from then on: it may not move between the two). Only
 * while cs_sp_begin_packet() returned TRUE for this packet. */
cs_sp_buf_t *cs_sp_buf_new(cs_sp_pool_t *pool, guint32 count, guint32 piece_size, guint64 budget);

/* Whether piece i is in b already. */
gboolean cs_sp_buf_has(const cs_sp_buf_t *b, guint32 i);

/* Copies piece i (len bytes of tvb at offset, sent in this frame) into *bp:
 * ignored when i is out of range or already in. When that completes it,
 * returns the reassembled data as a child of tvb (freed with this packet's
 * tvbs), a data source named source, with the tree
 * process_reassembled_data() shows under tree with fit (cs_reasm_show_fragments);
 * *bp is then freed and NULL. Otherwise NULL. */
tvbuff_t *cs_sp_buf_add(cs_sp_buf_t **bp, tvbuff_t *tvb, guint offset, guint32 len, guint32 i,
                        packet_info *pinfo, proto_tree *tree, const char *source, const fragment_items *fit);

/* Frees *bp, if any, and sets it NULL (a reassembly given up). */
void cs_sp_buf_free(cs_sp_buf_t **bp);

/* Frees every buffer of pool (at the end of the file scope: the
 * reassemblies that never completed; their owners go with that scope). */
void cs_sp_pool_clear(cs_sp_pool_t *pool);


#endif /* CS_SINGLE_PASS_H */
