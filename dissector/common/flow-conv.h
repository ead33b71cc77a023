/* common/flow-conv.h
 * What the protocols' Flow Graphs and Conversations/Endpoints tabs share:
 *
 * - Statistics > Flow Graph with the protocol in its flow type box (and
 *   tshark -z flow,<name>,network): one arrow per packet between the two
 *   ends, a short label above it and a comment beside it. Each protocol's
 *   packet function reads its own tap record and calls fc_flow_add().
 * - Statistics > Conversations and Endpoints, the protocol's tab (tshark
 *   -z conv,<proto> and -z endpoints,<proto>): one row per connection or
 *   stream, its ends named "10.0.0.1:40000" (and what else names them, a
 *   netcode client id), so that tshark, which prints no port column for a
 *   protocol other than TCP, UDP and SCTP, shows the ports too. Apply as
 *   Filter on a row filters on hidden string fields holding the same names
 *   (<proto>.end, .src_end, .dst_end), which a dissector adds only when
 *   fc_end_fields_wanted() says a filter, a column or a shown tree wants them.
 *
 * Both run only while a Flow Graph or Conversations window (or tshark's -z)
 * listens to the tap: the protocols queue their tap records only when
 * have_tap_listener() says someone listens. Prefix fc_.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FLOW_CONV_H
#define FLOW_CONV_H

#include <epan/packet.h>
#include <epan/tap.h>

#include "analysis-util.h"

/* Registers the Flow Graph name (tshark -z flow,<name>,network), shown as
 * ui_name in the Flow Graph's flow type box, of protocol proto: packet_func
 * gets every record queued on the tap named tap. */
void fc_flow_register(const char *name, const char *ui_name, int proto, const char *tap,
                      tap_packet_cb packet_func);

/* Adds the arrow of pinfo's packet to the Flow Graph tapdata (a flow
 * packet function's first argument), from its source to its destination,
 * with label above it and comment beside it (both copied); conv groups the
 * arrows of one connection (their colour in the GUI). */
tap_packet_status fc_flow_add(void *tapdata, packet_info *pinfo, guint conv, const char *label,
                              const char *comment);

/* The marks of table[0..n) that bits selects, as au_info_marks() appends
 * them to the Info column (" [Connected] [Gap]"), in scope; "" when none. */
char *fc_marks(wmem_allocator_t *scope, guint64 bits, const au_info_mark_t *table, size_t n);

/* The hidden fields that make a row's ends filterable (the Conversations
 * and Endpoints tabs' Apply as Filter): <abbrev>.end, either end of the
 * packet, and <abbrev>.src_end / <abbrev>.dst_end, named as in the rows. */
typedef struct fc_end_fields {
    int end, src_end, dst_end;
} fc_end_fields_t;

/* Registers proto's Conversations and Endpoints tabs; they listen to the tap
 * named after the protocol's filter name ("netcode"). Registers the end
 * fields too, under the protocol's filter name. */
void fc_conv_register(int proto, tap_packet_cb conv_func, tap_packet_cb endpoint_func, fc_end_fields_t *fields);

/* Whether the end fields are wanted in tree (a filter or a column names one,
 * or the tree is shown): only then does a dissector compute the names. */
gboolean fc_end_fields_wanted(proto_tree *tree, const fc_end_fields_t *fields);

/* Adds the end fields of a packet from src to dst (end names) to tree. */
void fc_add_end_fields(proto_tree *tree, tvbuff_t *tvb, const fc_end_fields_t *fields, const char *src,
                       const char *dst);

/* "10.0.0.1:40000" ("[2001:db8::1]:40000" for IPv6), in scope. */
char *fc_end_name(wmem_allocator_t *scope, const address *addr, guint32 port);

/* The source and destination of pinfo's packet as fc_end_name() has them. */
char *fc_src_name(packet_info *pinfo);
char *fc_dst_name(packet_info *pinfo);

/* Counts pinfo's packet, sent by src to dst (end names), in the row of
 * conversation id of protocol proto's Conversations table tapdata (a
 * conversation packet function's first argument); flags: the function's. */
tap_packet_status fc_conv_add(void *tapdata, packet_info *pinfo, tap_flags_t flags, int proto, const char *src,
                              const char *dst, guint32 id);

/* Counts pinfo's packet for its sender src and its receiver dst in protocol
 * proto's Endpoints table tapdata. */
tap_packet_status fc_endpoint_add(void *tapdata, packet_info *pinfo, tap_flags_t flags, int proto, const char *src,
                                  const char *dst);

#endif /* FLOW_CONV_H */
