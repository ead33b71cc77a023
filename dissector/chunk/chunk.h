/* chunk/chunk.h
 * Registration routines of chunk/dissect.c, called from plugin.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PACKET_CHUNK_PLUGIN_H
#define PACKET_CHUNK_PLUGIN_H

/* Registers protocol "Chunk": fields, expert infos, preferences, the
 * heuristic, and (through chunk_analysis_register) the transfer analysis. */
void proto_register_chunk(void);

/* Hooks the dissector to UDP (port range, Decode As, heuristic). */
void proto_reg_handoff_chunk(void);

#endif /* PACKET_CHUNK_PLUGIN_H */
