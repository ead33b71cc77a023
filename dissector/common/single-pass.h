/* common/single-pass.h
 * Memory in tshark's single pass, shared by every protocol's analysis that
 * keeps per-frame records (all six: chunk, p2frag, netgame, netcode,
 * reliable, yojimbo): tells the single pass from Wireshark's passes, drops
 * reassembled data once its frame is done, and
 * shows a reassembly made outside Wireshark's table as the table would.
 * Why and how: common/single-pass.c and docs/architecture.md.
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

/* The tree process_reassembled_data() shows for a fragment_add_seq_check()
 * reassembly, for one made in a buffer of the protocol's own: count pieces,
 * all piece_size bytes but the last (last_len), piece i first sent in
 * frames[i]. */
void cs_sp_show_pieces(packet_info *pinfo, proto_tree *tree, tvbuff_t *rtvb, guint32 count,
                       guint32 piece_size, guint32 last_len, const guint32 *frames,
                       const fragment_items *fit);

#endif /* CS_SINGLE_PASS_H */
