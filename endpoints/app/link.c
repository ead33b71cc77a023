/* link.c: the socket, pcap and summary code chunk-send, chunk-recv and
 * chunk-relay share. See link.h. */
#define _POSIX_C_SOURCE 200809L

#include "link.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_USAGE = 2 };

void chunk_app_bad_argument(const char *program, const char *format, const char *value)
{
    fprintf(stderr, "%s: ", program);
    fprintf(stderr, format, value);
    fprintf(stderr, " (try --help)\n");
    exit(EXIT_USAGE);
}

void chunk_app_set_verbosity(int verbosity)
{
    chunk_set_log_level(verbosity >= 2 ? CHUNK_LOG_DEBUG : verbosity == 1 ? CHUNK_LOG_INFO : CHUNK_LOG_ERROR);
}

void chunk_app_wire_option(const char *program, int opt, const char *text, chunk_wire_config_t *wire,
                           uint16_t *first_chunk_id)
{
    long long value;
    switch (opt) {
    case CHUNK_OPT_SLICE_SIZE:
        if (chunk_parse_int(text, 1, CHUNK_SLICE_SIZE_LIMIT, &value) != 0)
            chunk_app_bad_argument(program, "bad --slice-size '%s': expected 1..8192", text);
        wire->slice_size = (int)value;
        break;
    case CHUNK_OPT_MAX_SLICES:
        if (chunk_parse_int(text, 1, CHUNK_MAX_SLICES_LIMIT, &value) != 0)
            chunk_app_bad_argument(program, "bad --max-slices '%s': expected 1..1024", text);
        wire->max_slices = (int)value;
        break;
    case CHUNK_OPT_PROTOCOL_ID:
        if (chunk_parse_int(text, 0, 0xffffffffLL, &value) != 0)
            chunk_app_bad_argument(program, "bad --protocol-id '%s': expected a 32-bit number, e.g. 0x11223344",
                                   text);
        wire->protocol_id = (uint32_t)value;
        break;
    default:
        assert(opt == CHUNK_OPT_FIRST_CHUNK_ID && first_chunk_id);
        if (chunk_parse_int(text, 0, 65535, &value) != 0)
            chunk_app_bad_argument(program, "bad --first-chunk-id '%s': expected 0..65535", text);
        *first_chunk_id = (uint16_t)value;
        break;
    }
}

int chunk_app_open_listener(const char *program, chunk_socket_t *socket, chunk_address_t *address,
                            int dual_stack)
{
    char err[256];
    if (chunk_socket_open(socket, address, dual_stack, err, sizeof err) == 0) return 0;
    if (dual_stack && address->family == 6) {
        /* No IPv6 on this machine: listen on IPv4 alone. */
        chunk_address_any(address, 4, address->port);
        if (chunk_socket_open(socket, address, 0, err, sizeof err) == 0) return 0;
    }
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
}

int chunk_app_write_port_file(const char *program, const char *path, uint16_t port)
{
    char err[256];
    if (chunk_platform_write_port_file(path, port, err, sizeof err) == 0) return 0;
    fprintf(stderr, "%s: --port-file: %s\n", program, err);
    return -1;
}

int chunk_capture_open(chunk_capture_t *capture, const char *program, const char *path)
{
    memset(capture, 0, sizeof *capture);
    capture->path = path;
    if (!path) return 0;
    char err[256];
    capture->pcap = chunk_pcap_open(path, err, sizeof err);
    if (capture->pcap) return 0;
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
}

void chunk_capture_record(chunk_capture_t *capture, const chunk_address_t *src, const chunk_address_t *dst,
                          const uint8_t *data, int bytes)
{
    if (!capture->pcap) return;
    chunk_pcap_addr_t s, d;
    chunk_address_to_pcap(src, &s);
    chunk_address_to_pcap(dst, &d);
    if (chunk_pcap_write_udp(capture->pcap, chunk_platform_wall_time(), &s, &d, data, bytes) == 0)
        capture->records++;
    else
        capture->failed = 1;
}

int chunk_capture_finish(chunk_capture_t *capture, const char *program, int exit_code)
{
    if (capture->pcap && chunk_pcap_close(capture->pcap) != 0) capture->failed = 1;
    capture->pcap = NULL;
    if (!capture->failed) return exit_code;
    fprintf(stderr, "%s: writing %s failed\n", program, capture->path);
    return exit_code == 0 ? 1 : exit_code;
}

void chunk_link_send(void *context, const uint8_t *packet, int bytes)
{
    chunk_link_t *link = context;
    /* chunk-recv: only a valid slice, which sets the peer, makes an ack. */
    if (!link->peer_known) return;
    if (chunk_socket_send(&link->socket, &link->peer, packet, bytes) != 0) {
        link->send_errors++;
        chunk_log(CHUNK_LOG_DEBUG, "%s: send failed: %s", link->program, strerror(errno));
        return;
    }
    link->datagrams_sent++;
    chunk_capture_record(&link->capture, &link->local, &link->peer, packet, bytes);
}

int chunk_link_receive(chunk_link_t *link, chunk_address_t *from, uint8_t *buffer)
{
    int n = chunk_socket_receive(&link->socket, from, buffer);
    if (n >= 0) link->datagrams_received++;
    return n;
}

int chunk_link_accept(chunk_link_t *link, const chunk_address_t *from, const uint8_t *data, int bytes,
                      const char *why)
{
    if (link->peer_known && chunk_address_equal(from, &link->peer)) {
        chunk_capture_record(&link->capture, &link->peer, &link->local, data, bytes);
        return 1;
    }
    chunk_address_t local;
    chunk_socket_local_address(&link->socket, from, &local);
    chunk_capture_record(&link->capture, from, &local, data, bytes);
    link->foreign_dropped++;
    char text[CHUNK_ADDRESS_STRING_SIZE];
    chunk_log(CHUNK_LOG_DEBUG, "%s: dropped %d bytes from %s: %s", link->program, bytes,
              chunk_address_format(from, text, sizeof text), why);
    return 0;
}

void chunk_app_format_rate(double bytes_per_second, char *buf, size_t size)
{
    if (bytes_per_second >= 1e6)
        snprintf(buf, size, "%.2f MB/s", bytes_per_second / 1e6);
    else
        snprintf(buf, size, "%.1f kB/s", bytes_per_second / 1e3);
}

const char *chunk_app_progress_end(void)
{
    return chunk_platform_stderr_is_tty() ? "   \r" : "\n";
}

void chunk_app_progress_finish(int progress_shown)
{
    if (progress_shown && chunk_platform_stderr_is_tty()) fputc('\n', stderr);
}

void chunk_app_print_counters(const uint64_t *counters, int count, const char *(*name)(int))
{
    for (int i = 0; i < count; i++)
        fprintf(stderr, "%s %s %llu", i ? "," : "", name(i), (unsigned long long)counters[i]);
    fputc('\n', stderr);
}

void chunk_link_print_datagrams(const chunk_link_t *link)
{
    char text[CHUNK_ADDRESS_STRING_SIZE];
    fprintf(stderr, "  datagrams: %llu sent from %s, %llu received, %llu from other addresses dropped, %llu send errors\n",
            (unsigned long long)link->datagrams_sent,
            chunk_address_format(link->local.family ? &link->local : &link->socket.bound, text, sizeof text),
            (unsigned long long)link->datagrams_received, (unsigned long long)link->foreign_dropped,
            (unsigned long long)link->send_errors);
}

void chunk_app_print_invalid(const uint64_t *invalid)
{
    for (int i = 1; i < CHUNK_READ_RESULT_COUNT; i++)
        if (invalid[i])
            fprintf(stderr, "  dropped as invalid: %s %llu\n", chunk_read_result_name((chunk_read_result_t)i),
                    (unsigned long long)invalid[i]);
}

void chunk_capture_print(const chunk_capture_t *capture)
{
    if (capture->path)
        fprintf(stderr, "  pcap: %llu datagrams in %s\n", (unsigned long long)capture->records, capture->path);
}

int chunk_app_wait(const char *program, const int *fds, int count, double seconds, int *readable,
                   int *exit_code, const char **outcome)
{
    if (chunk_platform_wait(fds, count, seconds, readable) < 0) {
        fprintf(stderr, "%s: poll: %s\n", program, strerror(errno));
        *exit_code = 1; /* every socket program's I/O error code */
        *outcome = "poll error";
        return -1;
    }
    if (chunk_platform_stop_signal()) {
        *exit_code = 128 + chunk_platform_stop_signal();
        *outcome = "interrupted";
        return -1;
    }
    return 0;
}
