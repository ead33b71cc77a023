/* decode-only.c
 * For bench/dissector.sh only: the transfer analysis interface of
 * dissector/chunk/chunk-int.h with nothing behind it, linked instead of
 * chunk-analysis*.c into a second chunk.so, so the benchmark can measure what
 * the decoder alone costs while the plugin has no preference
 * that switches the analysis off. Never installed; the real plugin is built
 * by dissector/CMakeLists.txt.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <epan/packet.h>

#include "chunk/chunk-int.h"

/* Registers nothing: the decoder's own fields are registered by
 * proto_register_chunk() before it calls this. */
void chunk_analysis_register(int proto_chunk _U_, module_t *chunk_module _U_, int eo_tap _U_)
{
}

int chunk_stats_register(int proto_chunk _U_)
{
    return -1;
}

void chunk_analysis_handoff(void)
{
}

/* Keeps no state and adds nothing to the tree. */
void chunk_analysis_slice(tvbuff_t *tvb _U_, packet_info *pinfo _U_, proto_tree *chunk_tree _U_,
                          const chunk_slice_info_t *slice _U_)
{
}

/* Keeps no state and adds nothing to the tree. */
void chunk_analysis_ack(tvbuff_t *tvb _U_, packet_info *pinfo _U_, proto_tree *chunk_tree _U_,
                        const chunk_ack_info_t *ack _U_)
{
}
