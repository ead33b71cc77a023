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
typedef struct p2_conv {
    p2_id_state_t ids[P2_MAX_PROTOCOLS];
    void *data[P2_MAX_PROTOCOLS];
} p2_conv_t;

/* Conversation -> p2_conv_t. Not conversation_add_proto_data(): the
 * protocols keep their analysis state there. */
static wmem_map_t *p2_convs;

/* The conversations of the last two address and port pairs looked up (a
 * transfer's two directions): find_or_create_conversation() hashes the
 * addresses and searches its tables, about 1 000 instructions a datagram
 * (bench/RESULTS.md). Only for plain address and port conversations (no
 * endpoint override by a lower layer); the addresses are copies; emptied
 * when a file is opened or closed, as the conversations are. */
typedef struct p2_conv_hit {
    conversation_t *conv;   /* NULL: empty */
    p2_conv_t *pc;
    port_type ptype;
    guint32 srcport, destport;
    address src, dst;
} p2_conv_hit_t;

static p2_conv_hit_t p2_conv_hits[2];
static guint p2_conv_hit_next;

static void p2_conv_hits_clear(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(p2_conv_hits); i++) {
        free_address(&p2_conv_hits[i].src);
        free_address(&p2_conv_hits[i].dst);
        memset(&p2_conv_hits[i], 0, sizeof p2_conv_hits[i]);
    }
    p2_conv_hit_next = 0;
}

static p2_conv_t *p2_conv_find(packet_info *pinfo, conversation_t **conv_out)
{
    gboolean plain = !pinfo->use_conv_addr_port_endpoints && !pinfo->conv_elements;
    p2_conv_hit_t *h;
    conversation_t *conv;
    p2_conv_t *pc;

    if (plain) {
        for (guint i = 0; i < G_N_ELEMENTS(p2_conv_hits); i++) {
            h = &p2_conv_hits[i];
            if (h->conv && h->ptype == pinfo->ptype && h->srcport == pinfo->srcport &&
                h->destport == pinfo->destport && addresses_equal(&h->src, &pinfo->src) &&
                addresses_equal(&h->dst, &pinfo->dst)) {
                *conv_out = h->conv;
                return h->pc;
            }
        }
    }
    conv = find_or_create_conversation(pinfo);
    pc = (p2_conv_t *)wmem_map_lookup(p2_convs, conv);
    if (!pc) {
        pc = wmem_new0(wmem_file_scope(), p2_conv_t);
        wmem_map_insert(p2_convs, conv, pc);
    }
    if (plain) {
        h = &p2_conv_hits[p2_conv_hit_next];
        p2_conv_hit_next = (p2_conv_hit_next + 1) % G_N_ELEMENTS(p2_conv_hits);
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

p2_id_state_t *p2_conv_state(packet_info *pinfo, const p2_protocol_t *p, void ***data,
                             conversation_t **conv_out)
{
    conversation_t *conv;
    p2_conv_t *pc = p2_conv_find(pinfo, &conv);
    if (data)
        *data = &pc->data[p->index];
    if (conv_out)
        *conv_out = conv;
    return &pc->ids[p->index];
}

void p2_conv_register(void)
{
    p2_convs = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    register_init_routine(p2_conv_hits_clear);
    register_cleanup_routine(p2_conv_hits_clear);
}
