/* reliable.h
 * Registration of the reliable protocol (docs/reliable.md), called from
 * plugin.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RELIABLE_H
#define RELIABLE_H

void proto_register_reliable(void);
void proto_reg_handoff_reliable(void);

#endif /* RELIABLE_H */
