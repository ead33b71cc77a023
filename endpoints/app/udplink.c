/* udplink.c: one socket, one peer. See udplink.h. */
#define _POSIX_C_SOURCE 200809L

#include "udplink.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

void udp_link_send(void *context, const uint8_t *packet, int bytes)
{
    udp_link_t *link = context;
    /* chunk-recv: only a valid slice, which sets the peer, makes an ack. */
    if (!link->peer_known) return;
    if (platform_socket_send(&link->socket, &link->peer, packet, bytes) != 0) {
        link->send_errors++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: send failed: %s", link->program, strerror(errno));
        return;
    }
    link->datagrams_sent++;
    app_capture_record(&link->capture, &link->local, &link->peer, packet, bytes);
}

int udp_link_receive(udp_link_t *link, platform_address_t *from)
{
    int n = platform_socket_receive(&link->socket, from, link->datagram);
    if (n >= 0) link->datagrams_received++;
    return n;
}

int udp_link_receive_or_stop(udp_link_t *link, platform_address_t *from, int io_exit_code, int *exit_code,
                             const char **outcome)
{
    int n = udp_link_receive(link, from);
    if (n == -2) {
        fprintf(stderr, "%s: receive: %s\n", link->program, strerror(errno));
        *exit_code = io_exit_code;
        *outcome = "socket error";
    }
    return n;
}

int udp_link_open(udp_link_t *link, const platform_address_t *bind_address, const char *pcap_path)
{
    char err[256];
    if (platform_socket_open(&link->socket, bind_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", link->program, err);
        return -1;
    }
    platform_socket_local_address(&link->socket, &link->peer, &link->local);
    return app_capture_open(&link->capture, link->program, pcap_path);
}

int udp_link_listen(udp_link_t *link, const char *program, const app_common_options_t *common,
                    const app_listen_options_t *options)
{
    link->program = program;
    return app_listen(program, &link->socket, common->bind_text, common->family, options->port, options->port_given,
                      options->port_file);
}

void udp_link_lock_on(udp_link_t *link, const platform_address_t *from)
{
    link->peer_known = 1;
    link->peer = *from;
    platform_socket_local_address(&link->socket, from, &link->local);
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: receiving from %s", link->program,
                   platform_address_format(from, text, sizeof text));
}

void udp_link_ready_to_listen(const udp_link_t *link)
{
    platform_catch_signals();
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: listening on %s", link->program,
                   platform_address_format(&link->socket.bound, text, sizeof text));
}

int udp_link_accept(udp_link_t *link, const platform_address_t *from, const uint8_t *data, int bytes,
                    const char *why)
{
    if (link->peer_known && platform_address_equal(from, &link->peer)) {
        app_capture_record(&link->capture, &link->peer, &link->local, data, bytes);
        return 1;
    }
    app_capture_exchange(&link->capture, &link->socket, from, 1, data, bytes);
    link->foreign_dropped++;
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: dropped %d bytes from %s: %s", link->program, bytes,
              platform_address_format(from, text, sizeof text), why);
    return 0;
}

void udp_link_print_traffic(const udp_link_t *link, const char *role, const uint64_t *counters, int count,
                            const char *(*name)(int))
{
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    fprintf(stderr, "  datagrams: %llu sent from %s, %llu received, %llu from other addresses dropped, %llu send errors\n",
            (unsigned long long)link->datagrams_sent,
            platform_address_format(link->local.family ? &link->local : &link->socket.bound, text, sizeof text),
            (unsigned long long)link->datagrams_received, (unsigned long long)link->foreign_dropped,
            (unsigned long long)link->send_errors);
    fprintf(stderr, "  %s:", role);
    app_print_counters(counters, count, name);
}
