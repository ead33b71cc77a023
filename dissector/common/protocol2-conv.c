/* common/protocol2-conv.c
 * protocol2's per-conversation state (each registered protocol's id state
 * and data pointer), found through a cache of the last two address and
 * port pairs (interface: protocol2.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"
#include "protocol2-int.h"

#include <epan/conversation.h>

/* The state of every protocol2 protocol in one UDP conversation. */
typedef struct dp2_conv {
    dp2_id_state_t ids[DP2_MAX_PROTOCOLS];
    void *data[DP2_MAX_PROTOCOLS];
} dp2_conv_t;

/* Conversation -> dp2_conv_t. Not conversation_add_proto_data(): the
 * protocols keep their analysis state there. */
static wmem_map_t *dp2_convs;

/* The conversations of the last two address and port pairs looked up (a
 * transfer's two directions): find_or_create_conversation() hashes the
 * addresses and searches its tables, about 1 000 instructions a datagram
 * (bench/RESULTS.md). Only for plain address and port conversations (no
 * endpoint override by a lower layer); the addresses are copies; emptied
 * when a file is opened or closed, as the conversations are. A hit holds
 * only for the frames its conversation covers (dp2_conv_covers). */
typedef struct dp2_conv_hit {
    conversation_t *conv;   /* NULL: empty */
    dp2_conv_t *pc;
    port_type ptype;
    guint32 srcport, destport;
    address src, dst;
} dp2_conv_hit_t;

static dp2_conv_hit_t dp2_conv_hits[2];
static guint dp2_conv_hit_next;

static void dp2_conv_hits_clear(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(dp2_conv_hits); i++) {
        free_address(&dp2_conv_hits[i].src);
        free_address(&dp2_conv_hits[i].dst);
        memset(&dp2_conv_hits[i], 0, sizeof dp2_conv_hits[i]);
    }
    dp2_conv_hit_next = 0;
}

/* TRUE when find_or_create_conversation() would give conv for frame num:
 * conversations of one address and port pair are chained in the order they
 * were set up, and a frame belongs to the last one set up at or before it
 * (a GUI revisit of an early frame must not get a later conversation). */
static inline gboolean dp2_conv_covers(const conversation_t *conv, guint32 num)
{
    return conv->setup_frame <= num && (!conv->next || conv->next->setup_frame > num);
}

static dp2_conv_t *dp2_conv_find(packet_info *pinfo, conversation_t **conv_out)
{
    gboolean plain = !pinfo->use_conv_addr_port_endpoints && !pinfo->conv_elements;
    dp2_conv_hit_t *h;
    conversation_t *conv;
    dp2_conv_t *pc;

    if (plain) {
        for (guint i = 0; i < G_N_ELEMENTS(dp2_conv_hits); i++) {
            h = &dp2_conv_hits[i];
            if (h->conv && h->ptype == pinfo->ptype && h->srcport == pinfo->srcport &&
                h->destport == pinfo->destport && dp2_conv_covers(h->conv, pinfo->num) &&
                addresses_equal(&h->src, &pinfo->src) && addresses_equal(&h->dst, &pinfo->dst)) {
                *conv_out = h->conv;
                return h->pc;
            }
        }
    }
    conv = find_or_create_conversation(pinfo);
    pc = (dp2_conv_t *)wmem_map_lookup(dp2_convs, conv);
    if (!pc) {
        pc = wmem_new0(wmem_file_scope(), dp2_conv_t);
        wmem_map_insert(dp2_convs, conv, pc);
    }
    if (plain) {
        h = &dp2_conv_hits[dp2_conv_hit_next];
        dp2_conv_hit_next = (dp2_conv_hit_next + 1) % G_N_ELEMENTS(dp2_conv_hits);
        free_address(&h->src);
        free_address(&h->dst);
        copy_address(&h->src, &pinfo->src);
        copy_address(&h->dst, &pinfo->dst);
        h->ptype = pinfo->ptype;
        h->srcport = pinfo->srcport;
        h->destport = pinfo->destport;
        h->conv = conv;
        h->pc = pc;
    }
    *conv_out = conv;
    return pc;
}

dp2_id_state_t *dp2_conv_state(packet_info *pinfo, const dp2_protocol_t *p, void ***data,
                             conversation_t **conv_out)
{
    conversation_t *conv;
    dp2_conv_t *pc = dp2_conv_find(pinfo, &conv);
    if (data)
        *data = &pc->data[p->index];
    if (conv_out)
        *conv_out = conv;
    return &pc->ids[p->index];
}

void dp2_conv_register(void)
{
    dp2_convs = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    register_init_routine(dp2_conv_hits_clear);
    register_cleanup_routine(dp2_conv_hits_clear);
}
