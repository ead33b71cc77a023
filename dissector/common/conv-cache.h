/* common/conv-cache.h
 * A protocol's own state per UDP conversation, found through a cache of the
 * last two address and port pairs looked up (a session's two directions).
 * find_or_create_conversation() hashes the addresses and searches its
 * tables, about 1 000 instructions a datagram (bench/RESULTS.md); a hit here
 * costs a few comparisons. protocol2's state (common/protocol2-conv.c) and
 * netgame's are kept this way.
 *
 * Only plain address and port conversations are cached (no endpoint
 * override by a lower layer); the addresses are copies; the cache is
 * emptied when a file is opened or closed, as the conversations are. A hit
 * holds only for the frames its conversation covers: conversations of one
 * address and port pair are chained in the order they were set up, and a
 * frame belongs to the last one set up at or before it (a GUI revisit of an
 * early frame must not get a later conversation).
 *
 * Prefix cs_conv_. Each cache is a static cs_conv_cache_t of its user,
 * registered once (at most CS_CONV_CACHES of them).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_CONV_CACHE_H
#define CS_CONV_CACHE_H

#include <epan/packet.h>
#include <epan/conversation.h>

#define CS_CONV_CACHES 4

typedef struct cs_conv_hit {
    conversation_t *conv;   /* NULL: empty */
    void *state;
    port_type ptype;
    guint32 srcport, destport;
    address src, dst;
} cs_conv_hit_t;

typedef struct cs_conv_cache {
    wmem_map_t *states;     /* conversation -> state (file scope) */
    size_t size;            /* bytes of one state, created zeroed */
    cs_conv_hit_t hits[2];
    guint next;             /* the hit replaced next */
} cs_conv_cache_t;

/* Sets cache up for states of `size` bytes; from a proto_register_*. */
void cs_conv_cache_register(cs_conv_cache_t *cache, size_t size);

/* The state of the datagram's conversation, created zeroed on first use
 * (file scope), and the conversation itself in *conv_out (may be NULL). */
void *cs_conv_cache_get(cs_conv_cache_t *cache, packet_info *pinfo, conversation_t **conv_out);

/* The state of conv, NULL when none was created. */
static inline void *cs_conv_cache_lookup(const cs_conv_cache_t *cache, conversation_t *conv)
{
    return wmem_map_lookup(cache->states, conv);
}

/* find_or_create_conversation() through a cache of the last two plain
 * address and port pairs, shared by its callers: the protocols layered in
 * one datagram (reliable, yojimbo) each ask for the same conversation. The
 * hit counts the frame in the conversation's last frame, as the lookup
 * does. */
conversation_t *cs_conv_find_or_create(packet_info *pinfo);

#endif /* CS_CONV_CACHE_H */
