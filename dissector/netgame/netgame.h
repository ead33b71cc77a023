/* netgame.h
 * Registration routines of netgame/dissect.c, called from plugin.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NETGAME_H
#define NETGAME_H

/* Registers protocol "Netgame": fields, expert infos, preferences, the
 * heuristic, the connection analysis and its statistics. */
void proto_register_netgame(void);

/* Hooks the dissector to UDP (port preference, Decode As, heuristic). */
void proto_reg_handoff_netgame(void);

#endif /* NETGAME_H */
