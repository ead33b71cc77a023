/* common/reasm-store.h
 * A store of the plugin's own for reassembled packets (reliable's
 * fragmented packets, yojimbo's blocks) instead of Wireshark's reassembly
 * table, with the table's tree (the fields of common/reassembly-fields.h),
 * data source and "Reassembled in": completed packets kept for the revisit
 * as content-defined chunks, each chunk kept once for the file and shared
 * by every store. Why and how: common/reasm-store.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_REASM_STORE_H
#define CS_REASM_STORE_H

#include <epan/packet.h>
#include <epan/reassemble.h>

typedef struct cs_reasm cs_reasm_t;

/* A packet under way of direction dir and id that can no longer complete
 * (cs_reasm_add_counted's pruning), or NULL: none is ever dropped. */
typedef gboolean (*cs_reasm_unreachable_fn)(const void *dir, guint64 id);

/* One protocol's store, from its registration routine: source names the
 * data source of a reassembled packet. Each call below takes the
 * protocol's fields (fit) as process_reassembled_data() does. */
cs_reasm_t *cs_reasm_new(const char *source, cs_reasm_unreachable_fn unreachable);

/* reliable's way: fragment frag of count (all but the last of one length),
 * keyed by (dir, id); a fragment that comes again, or with another count, is
 * not added; a packet is complete when every fragment came. The completing
 * frame's own fragment is not kept (the revisit takes it from the tvb:
 * len bytes at off, else nothing is shown). A revisit finds the packet by
 * the frame alone. */
tvbuff_t *cs_reasm_add_counted(cs_reasm_t *s, tvbuff_t *tvb, guint off, guint len, packet_info *pinfo,
                               proto_tree *tree, const void *dir, guint64 id, guint32 frag, guint32 count,
                               gboolean transient, const fragment_items *fit);

/* fragment_add_seq_check()'s way, item for item (yojimbo's blocks): keyed
 * by the addresses and ports and id, fragment frag (the tail when !more),
 * every fragment that comes kept and shown, the table's error flags; a
 * revisit finds the packet by (frame, id). With process_reassembled_data()'s
 * result: the reassembled packet in the frame that completed it, with the
 * fragment list under tree; NULL elsewhere, with "Reassembled in" on a
 * revisit. */
tvbuff_t *cs_reasm_add_seq(cs_reasm_t *s, tvbuff_t *tvb, guint off, guint len, packet_info *pinfo,
                           proto_tree *tree, guint32 id, guint32 frag, gboolean more, gboolean transient,
                           const fragment_items *fit);

/* Item for item what show_fragment_seq_tree() (and show_fragment()) in
 * epan/reassemble.c show for the fragments of the reassembled packet whole
 * (a tvb, the data source): count fragments of frames; with lens NULL all
 * of piece_size bytes but the last (what is left of the packet), else of
 * lens[i] bytes with the table's flags[i] (FD_OVERLAP, FD_OVERLAPCONFLICT,
 * FD_MULTIPLETAILS, FD_TOOLONGFRAGMENT, and 0x80: the same fragment number
 * as fragment i - 1); head_flags the packet's ("[Illegal ...]" in the Info
 * column). Also marks the frames as depended upon, tree or not. */
void cs_reasm_show_fragments(const fragment_items *fit, packet_info *pinfo, proto_tree *tree, tvbuff_t *whole,
                             guint32 count, guint32 piece_size, const guint32 *frames, const guint32 *lens,
                             const guint8 *flags, guint8 head_flags);

#endif /* CS_REASM_STORE_H */
