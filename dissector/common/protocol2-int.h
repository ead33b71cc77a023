/* common/protocol2-int.h
 * Between the files of protocol2 (common/protocol2-*.c); the protocols use
 * protocol2.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PROTOCOL2_INT_H
#define PROTOCOL2_INT_H

/* Makes the per-conversation map and the cache's init and cleanup routines
 * (protocol2-conv.c); once, with the first protocol registered. */
void p2_conv_register(void);

/* The port part of p2_prefs_apply() (protocol2-id.c). */
void p2_ports_apply(p2_protocol_t *p);

#endif /* PROTOCOL2_INT_H */
