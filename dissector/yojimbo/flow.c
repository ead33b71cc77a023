/* flow.c
 * yojimbo's Flow Graph of blocks (Statistics > Flow Graph, "Yojimbo
 * Blocks"; tshark -z flow,yojimbo,network): an arrow per packet that
 * carries a block's fragments, saying which fragment of how many and its
 * send, and per packet whose acks confirm block fragments of the peer,
 * saying which and how much of the block is acked then. Packets with
 * messages only are left out (the yojimbo Messages table follows those).
 * It reads the "yojimbo_stats" tap's records (the analysis' frame
 * records, dissect.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>
#include <epan/tap.h>

#include "yojimbo-int.h"
#include "common/ws-compat.h"
#include "common/flow-conv.h"

/* The blocks among the analysis' records (yj_all_msgs()), gathered as they
 * appear: an ack's fragments are looked for in blocks only. Forgotten at
 * the start of every file (the records are the file's). */
static GPtrArray *blocks;
static guint msgs_scanned;

static void flow_init(void)
{
    if (blocks)
        g_ptr_array_set_size(blocks, 0);
    else
        blocks = g_ptr_array_new();
    msgs_scanned = 0;
}

static void flow_cleanup(void)
{
    if (blocks)
        g_ptr_array_free(blocks, TRUE);
    blocks = NULL;
    msgs_scanned = 0;
}

static void gather_blocks(void)
{
    GPtrArray *all = yj_all_msgs();

    if (!all || !blocks)
        return;
    for (; msgs_scanned < all->len; msgs_scanned++) {
        yj_msg_t *m = (yj_msg_t *)g_ptr_array_index(all, msgs_scanned);
        if (m->is_block)
            g_ptr_array_add(blocks, m);
    }
}

/* The fragments this packet's acks confirmed, per block: "block 3 fragments
 * 0-2 (3/4 acked)"; appended to label and comment. */
static void acked_fragments(packet_info *pinfo, wmem_strbuf_t *label, wmem_strbuf_t *comment, guint *conv)
{
    gather_blocks();
    for (guint i = 0; blocks && i < blocks->len; i++) {
        const yj_msg_t *m = (const yj_msg_t *)g_ptr_array_index(blocks, i);
        au_idset_t set;
        guint32 n = 0, upto = 0;
        guint8 *mask;

        if (m->first_frame >= pinfo->num || (m->acked_frame && m->acked_frame < pinfo->num))
            continue;
        /* mask: 0 for the fragments this packet acked (au_idset_zero_bytes) */
        mask = (guint8 *)wmem_alloc(pinfo->pool, m->num_fragments ? m->num_fragments : 1);
        for (guint32 k = 0; k < m->num_fragments; k++) {
            guint32 f = m->frags[k].acked_frame;
            mask[k] = f != pinfo->num;
            n += f == pinfo->num;
            upto += f && f <= pinfo->num;
        }
        if (!n)
            continue;
        set = au_idset_zero_bytes(mask, m->num_fragments);
        wmem_strbuf_append_printf(label, "%sAck block %u", wmem_strbuf_get_len(label) ? ", " : "", m->id);
        wmem_strbuf_append_printf(comment, "%sAcks block %u fragment%s %s (%u/%u acked%s)",
                                  wmem_strbuf_get_len(comment) ? "; " : "", m->id, n > 1 ? "s" : "",
                                  au_ranges(pinfo->pool, &set, 200), upto, m->num_fragments,
                                  upto == m->num_fragments ? ", block complete" : "");
        *conv = m->conv->index;
    }
}

static tap_packet_status flow_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    const yj_frame_t *fr = ((const yj_tap_t *)data)->frame;
    wmem_strbuf_t *label = wmem_strbuf_new(pinfo->pool, "");
    wmem_strbuf_t *comment = wmem_strbuf_new(pinfo->pool, "");
    guint conv = 0;

    for (guint32 i = 0; i < fr->n_items; i++) {
        const yj_item_t *it = &fr->items[i];
        const yj_msg_t *m = it->msg;

        if (!m || !m->is_block || it->frag < 0)
            continue;
        wmem_strbuf_append_printf(label, "%sBlock %u frag %d of %u", wmem_strbuf_get_len(label) ? ", " : "", m->id,
                                  it->frag, m->num_fragments);
        wmem_strbuf_append_printf(comment, "%sBlock %u (channel %u): fragment %d of %u",
                                  wmem_strbuf_get_len(comment) ? "; " : "", m->id, m->channel, it->frag,
                                  m->num_fragments);
        if (it->send_no > 1)
            wmem_strbuf_append_printf(comment, " (resend %u)", it->send_no - 1);
        conv = m->conv->index;
    }
    if (fr->n_confirmed)
        acked_fragments(pinfo, label, comment, &conv);
    if (!wmem_strbuf_get_len(label))
        return TAP_PACKET_DONT_REDRAW;
    return fc_flow_add(tapdata, pinfo, conv, wmem_strbuf_get_str(label), wmem_strbuf_get_str(comment));
}

void yj_flow_register(int proto)
{
    fc_flow_register("yojimbo", "Yojimbo Blocks", proto, "yojimbo_stats", flow_packet);
    register_init_routine(flow_init);
    register_cleanup_routine(flow_cleanup);
}
