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
void dp2_conv_register(void);

/* The port part of dp2_prefs_apply() (protocol2-id.c). */
void dp2_ports_apply(dp2_protocol_t *p);

#endif /* PROTOCOL2_INT_H */
