/* common/conv-cache.c
 * Per-conversation state behind a cache of the last two address and port
 * pairs (interface and rules: conv-cache.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "conv-cache.h"

static cs_conv_cache_t *caches[CS_CONV_CACHES];
static guint n_caches;
static cs_conv_cache_t found;   /* cs_conv_find_or_create's hits (no states) */

/* Empties a cache's hits. */
static void clear_cache(cs_conv_cache_t *cache)
{
    for (guint i = 0; i < G_N_ELEMENTS(cache->hits); i++) {
        free_address(&cache->hits[i].src);
        free_address(&cache->hits[i].dst);
        memset(&cache->hits[i], 0, sizeof cache->hits[i]);
    }
    cache->next = 0;
}

/* Empties every cache's hits: when a file is opened or closed. */
static void clear_hits(void)
{
    for (guint c = 0; c < n_caches; c++)
        clear_cache(caches[c]);
    clear_cache(&found);
}

void cs_conv_cache_register(cs_conv_cache_t *cache, size_t size)
{
    DISSECTOR_ASSERT(n_caches < CS_CONV_CACHES);
    memset(cache, 0, sizeof *cache);
    cache->states = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    cache->size = size;
    if (n_caches++ == 0) {
        register_init_routine(clear_hits);
        register_cleanup_routine(clear_hits);
    }
    caches[n_caches - 1] = cache;
}

/* TRUE when the datagram's conversation is found by its address and port
 * pair alone (no endpoint or element overrides), so a hit may stand for it. */
static inline gboolean plain_pair(const packet_info *pinfo)
{
    return !pinfo->use_conv_addr_port_endpoints && !pinfo->conv_elements;
}

/* TRUE when find_or_create_conversation() would give conv for frame num. */
static inline gboolean covers(const conversation_t *conv, guint32 num)
{
    return conv->setup_frame <= num && (!conv->next || conv->next->setup_frame > num);
}

/* The hit of cache for the datagram's address and port pair, NULL when
 * none (or the pair is not plain: plain says). */
static cs_conv_hit_t *find_hit(cs_conv_cache_t *cache, packet_info *pinfo, gboolean plain)
{
    if (!plain)
        return NULL;
    for (guint i = 0; i < G_N_ELEMENTS(cache->hits); i++) {
        cs_conv_hit_t *h = &cache->hits[i];
        if (h->conv && h->ptype == pinfo->ptype && h->srcport == pinfo->srcport &&
            h->destport == pinfo->destport && covers(h->conv, pinfo->num) &&
            addresses_equal(&h->src, &pinfo->src) && addresses_equal(&h->dst, &pinfo->dst))
            return h;
    }
    return NULL;
}

/* Remembers conv and state as cache's hit for the datagram's pair. */
static void add_hit(cs_conv_cache_t *cache, packet_info *pinfo, conversation_t *conv, void *state)
{
    cs_conv_hit_t *h = &cache->hits[cache->next];

    cache->next = (cache->next + 1) % G_N_ELEMENTS(cache->hits);
    free_address(&h->src);
    free_address(&h->dst);
    copy_address(&h->src, &pinfo->src);
    copy_address(&h->dst, &pinfo->dst);
    h->ptype = pinfo->ptype;
    h->srcport = pinfo->srcport;
    h->destport = pinfo->destport;
    h->conv = conv;
    h->state = state;
}

void *cs_conv_cache_get(cs_conv_cache_t *cache, packet_info *pinfo, conversation_t **conv_out)
{
    gboolean plain = plain_pair(pinfo);
    cs_conv_hit_t *h = find_hit(cache, pinfo, plain);
    conversation_t *conv;
    void *state;

    if (h) {
        if (conv_out)
            *conv_out = h->conv;
        return h->state;
    }
    conv = find_or_create_conversation(pinfo);
    state = wmem_map_lookup(cache->states, conv);
    if (!state) {
        state = wmem_alloc0(wmem_file_scope(), cache->size);
        wmem_map_insert(cache->states, conv, state);
    }
    if (plain)
        add_hit(cache, pinfo, conv, state);
    if (conv_out)
        *conv_out = conv;
    return state;
}

conversation_t *cs_conv_find_or_create(packet_info *pinfo)
{
    gboolean plain = plain_pair(pinfo);
    cs_conv_hit_t *h = find_hit(&found, pinfo, plain);
    conversation_t *conv;

    if (h) {
        if (pinfo->num > h->conv->last_frame)
            h->conv->last_frame = pinfo->num;
        return h->conv;
    }
    conv = find_or_create_conversation(pinfo);
    if (plain)
        add_hit(&found, pinfo, conv, NULL);
    return conv;
}
