/* common/protocol2-conv.c
 * protocol2's per-conversation state (each registered protocol's id state
 * and data pointer), found through the cache of common/conv-cache.h
 * (interface: protocol2.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"
#include "protocol2-int.h"
#include "conv-cache.h"

/* The state of every protocol2 protocol in one UDP conversation. */
typedef struct dp2_conv {
    dp2_id_state_t ids[DP2_MAX_PROTOCOLS];
    void *data[DP2_MAX_PROTOCOLS];
} dp2_conv_t;

/* Conversation -> dp2_conv_t. Not conversation_add_proto_data(): the
 * protocols keep their analysis state there. */
static cs_conv_cache_t dp2_convs;

dp2_id_state_t *dp2_conv_state(packet_info *pinfo, const dp2_protocol_t *p, void ***data,
                             conversation_t **conv_out)
{
    dp2_conv_t *pc = (dp2_conv_t *)cs_conv_cache_get(&dp2_convs, pinfo, conv_out);
    if (data)
        *data = &pc->data[p->index];
    return &pc->ids[p->index];
}

void dp2_conv_register(void)
{
    cs_conv_cache_register(&dp2_convs, sizeof(dp2_conv_t));
}
