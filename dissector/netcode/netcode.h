/* netcode.h
 * The netcode protocol's registration, for plugin.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NETCODE_H
#define NETCODE_H

void proto_register_netcode(void);
void proto_reg_handoff_netcode(void);

#endif /* NETCODE_H */
