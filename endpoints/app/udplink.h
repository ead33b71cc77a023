/* udplink.h: the endpoints' send callback over one socket to one peer, and
 * dropping (and recording) datagrams from anyone else: chunk-send,
 * chunk-recv, frag-send, frag-recv. */
#ifndef UDPLINK_H
#define UDPLINK_H

#include <stdint.h>

#include "app.h"
#include "platform.h"

/* ---- one socket, one peer ---- */

typedef struct udp_link_t {
    const char *program;   /* for log lines */
    platform_socket_t socket;
    int peer_known;        /* peer is set; until then nothing is sent */
    platform_address_t peer;  /* the other endpoint */
    platform_address_t local; /* our address as the peer sees it (for pcap) */
    app_capture_t capture;
    uint64_t datagrams_sent, send_errors, datagrams_received, foreign_dropped;
} udp_link_t;

/* The endpoints' send callback (context: a udp_link_t): sends packet to
 * the peer and records it. Does nothing before the peer is known. A send the
 * kernel refuses is counted in send_errors and logged at debug level: a full
 * socket buffer is a lost packet, which the protocol resends. */
void udp_link_send(void *context, const uint8_t *packet, int bytes);

/* Takes the next datagram waiting on the link's socket into buffer
 * (PLATFORM_SOCKET_MAX_DATAGRAM bytes) and counts it in datagrams_received.
 * Returns its length, -1 when none is waiting, or -2 on a socket error
 * (errno set). */
int udp_link_receive(udp_link_t *link, platform_address_t *from, uint8_t *buffer);

/* Returns 1 when a datagram from `from` comes from the known peer: it is
 * recorded, and the caller hands it to its endpoint. Otherwise returns 0: it
 * is recorded with the address it came to, counted in foreign_dropped and
 * logged at debug level as "dropped N bytes from ADDR: <why>". */
int udp_link_accept(udp_link_t *link, const platform_address_t *from, const uint8_t *data, int bytes,
                    const char *why);

/* The summary's datagram line: sent from our address, received, dropped
 * as foreign, send errors. */
void udp_link_print_datagrams(const udp_link_t *link);

#endif /* UDPLINK_H */
