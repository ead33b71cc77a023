/* yojimbo.h
 * Registration routines of the yojimbo dissector (docs/yojimbo.md), called
 * from plugin.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef YOJIMBO_H
#define YOJIMBO_H

/* Registers protocol "yojimbo": fields, expert infos, preferences, the
 * analysis, its statistics, Flow Graph and Export Objects. */
void proto_register_yojimbo(void);

/* Hooks the dissector to reliable's payload (heuristic, Decode As) and to
 * UDP (Decode As). */
void proto_reg_handoff_yojimbo(void);

#endif /* YOJIMBO_H */
