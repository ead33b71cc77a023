/* udplink.h: the endpoints' send callback over one socket to one peer, and
 * dropping (and recording) datagrams from anyone else: chunk-send,
 * chunk-recv, p2frag-send, p2frag-recv. */
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
    uint8_t datagram[PLATFORM_SOCKET_MAX_DATAGRAM]; /* what udp_link_receive took last */
} udp_link_t;

/* The endpoints' send callback (context: a udp_link_t): sends packet to
 * the peer and records it. Does nothing before the peer is known. A send the
 * kernel refuses is counted in send_errors and logged at debug level: a full
 * socket buffer is a lost packet, which the protocol resends. */
void udp_link_send(void *context, const uint8_t *packet, int bytes);

/* Takes the next datagram waiting on the link's socket into link->datagram
 * and counts it in datagrams_received. Returns its length, -1 when none is
 * waiting, or -2 on a socket error (errno set). */
int udp_link_receive(udp_link_t *link, platform_address_t *from);

/* udp_link_receive for an event loop: the same results, and on a socket
 * error also prints "PROGRAM: receive: why" and sets *exit_code to
 * io_exit_code and *outcome to "socket error". */
int udp_link_receive_or_stop(udp_link_t *link, platform_address_t *from, int io_exit_code, int *exit_code,
                             const char **outcome);

/* Returns 1 when a datagram from `from` comes from the known peer: it is
 * recorded, and the caller hands it to its endpoint. Otherwise returns 0: it
 * is recorded with the address it came to, counted in foreign_dropped and
 * logged at debug level as "dropped N bytes from ADDR: <why>". */
int udp_link_accept(udp_link_t *link, const platform_address_t *from, const uint8_t *data, int bytes,
                    const char *why);

/* A sending program's socket: opened on bind_address, link->local set to
 * our address as the peer sees it, and the pcap started (pcap_path, or no
 * recording when NULL). Returns 0, or -1 after printing "PROGRAM: why" (the
 * caller exits 1). */
int udp_link_open(udp_link_t *link, const platform_address_t *bind_address, const char *pcap_path);

/* A receiving program's socket: link->program set, and the socket listening
 * (app_listen) on common's -b/-4/-6 and options' -p/--port-file. Returns
 * what app_listen returns. */
int udp_link_listen(udp_link_t *link, const char *program, const app_common_options_t *common,
                    const app_listen_options_t *options);

/* A receiving program's peer: the sender of a datagram it has accepted as
 * one of its protocol. Sets the peer to from, link->local to our address as
 * from sees it, and logs (info) "PROGRAM: receiving from ADDRESS". */
void udp_link_lock_on(udp_link_t *link, const platform_address_t *from);

/* A receiving program's last step of setting up: catches SIGINT/SIGTERM and
 * logs (info) "PROGRAM: listening on ADDRESS". */
void udp_link_ready_to_listen(const udp_link_t *link);

/* The summary's datagram line (sent from our address, received, dropped
 * as foreign, send errors), then the endpoint's counters: "  ROLE: NAME
 * VALUE, ..." (count counters named by name). */
void udp_link_print_traffic(const udp_link_t *link, const char *role, const uint64_t *counters, int count,
                            const char *(*name)(int));

#endif /* UDPLINK_H */
