/* reasm.c
 * reliable's fragmented packets, reassembled in the plugin's own store
 * (common/reasm-store.c) instead of Wireshark's reassembly table, with the
 * same tree and data source, keyed by the direction and the packet's
 * extended sequence.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>

#include "reliable-int.h"
#include "common/reasm-store.h"

static cs_reasm_t *store;

/* Behind the newest of its direction by more than a 16-bit sequence can
 * unwrap back to: no fragment can join it any more (the newest never goes
 * back). */
static gboolean unreachable(const void *dir, guint64 ext)
{
    return ext + 32768 < ((const rl_dir_t *)dir)->newest;
}

void rl_reasm_register(void)
{
    store = cs_reasm_new("Reassembled reliable packet", unreachable);
}

tvbuff_t *rl_reasm_add(tvbuff_t *tvb, guint data_off, guint data_len, packet_info *pinfo, proto_tree *rt,
                       const rl_frame_t *rec, const reliable_pkt_t *pkt, gboolean transient,
                       const fragment_items *fit)
{
    const void *dir = rec->conn ? (const void *)&rec->conn->dir[rec->dir] : NULL;

    return cs_reasm_add_counted(store, tvb, data_off, data_len, pinfo, rt, dir, rec->ext_seq, pkt->fragment_id,
                                pkt->num_fragments, transient, fit);
}
