/* reliable.h
 * Registration of the reliable protocol (docs/reliable.md), called from
 * plugin.c; for the protocols in reliable's payload (yojimbo): what reliable
 * passes up with a payload (reliable_payload_info_t) and its header reader.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RELIABLE_H
#define RELIABLE_H

#include <epan/packet.h>

void proto_register_reliable(void);
void proto_reg_handoff_reliable(void);

struct netcode_payload_info;

/* A regular packet header (docs/reliable.md, "Wire format"). */
#define RELIABLE_MAX_HEADER_LEN 9

typedef struct reliable_header {
    guint8 prefix;
    guint16 seq, ack;
    guint32 ack_bits;
    guint len;                     /* bytes read */
    gboolean canonical;            /* encoding it again gives the same bytes */
} reliable_header_t;

/* Reads a regular packet header at offset as the library does (whatever the
 * prefix's fragment bit says): FALSE when the bytes are too few for it
 * (h->len is then what it needs, 0 for none at all). Never throws. */
gboolean reliable_read_header(tvbuff_t *tvb, guint offset, reliable_header_t *h);

/* How the payload handed on came to be. */
typedef enum {
    RELIABLE_PAYLOAD_PACKET,       /* a regular packet's, after its header in this datagram */
    RELIABLE_PAYLOAD_REASSEMBLED   /* a fragmented packet's, completed by this datagram's fragment */
} reliable_payload_kind_t;

/* What reliable passes up (docs/architecture.md, "Stacked layers"): the data
 * argument of every dissector reliable hands a payload to, through its
 * reliable.payload heuristic list or Decode As table. Valid during that call
 * only; given on every pass, with or without a tree, unless marked "first
 * pass" (the pass in which the analyses of the layers above are made;
 * later passes read what they kept). */
typedef struct reliable_payload_info {
    const struct netcode_payload_info *netcode; /* the layer below when reliable is in netcode's payload
                                                 * (netcode.h), NULL otherwise (on UDP, by Decode As) */
    reliable_payload_kind_t kind;
    guint16 seq;                   /* the packet's sequence */
    guint8 fragment_id;            /* REASSEMBLED: the fragment of this datagram, and */
    guint16 num_fragments;         /* the packet's fragment count */
    gboolean has_header;           /* this datagram holds a packet header (a regular packet, or
                                    * fragment 0): its ack and ack_bits */
    guint16 ack;
    guint32 ack_bits;              /* bit i: the peer's sequence ack - i received */
    gboolean has_packet_acks;      /* the acks the library applies for this packet: a regular
                                    * packet's (ack, ack_bits again), or for a reassembled one its
                                    * fragment 0's, from this datagram or an earlier one (first
                                    * pass; later passes only when fragment 0 is this datagram) */
    guint16 packet_ack;
    guint32 packet_ack_bits;
    /* From reliable's analysis (NULL/0 when it did not analyse the packet:
     * an ICMP error's copy of a datagram). */
    guint64 ext_seq;               /* the sequence unwrapped in its direction; 0: not analysed */
    guint16 n_newly_acked;         /* the peer's packets this packet's acks acknowledge first: */
    const guint16 *newly_acked;    /* their sequences, newest first (the packet's scope) */
} reliable_payload_info_t;

#endif /* RELIABLE_H */
