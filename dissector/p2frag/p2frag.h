/* p2frag/p2frag.h
 * Registration routines of p2frag/dissect.c, called from plugin.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PACKET_P2FRAG_PLUGIN_H
#define PACKET_P2FRAG_PLUGIN_H

/* Registers protocol "P2frag": fields, expert infos, preferences, the
 * reassembly table, the tap and its statistics. */
void proto_register_p2frag(void);

/* Hooks the dissector to UDP (port preference, Decode As, heuristic). */
void proto_reg_handoff_p2frag(void);

#endif /* PACKET_P2FRAG_PLUGIN_H */
