/* link.h: what the real-UDP programs (chunk-send, chunk-recv, chunk-relay)
 * do alike around their sockets: recording datagrams to a pcap, the
 * endpoints' send callback over one socket to one peer, dropping datagrams
 * from anyone else, the wire options, and the usage errors and summary lines
 * they print the same way. Each program keeps only what is its own. */
#ifndef CHUNK_LINK_H
#define CHUNK_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "chunk.h"
#include "pcapout.h"
#include "platform.h"

/* ---- usage errors and logging ---- */

/* Prints "PROGRAM: " format (with value for its %s) " (try --help)" to
 * stderr and exits 2. Never returns. */
void chunk_app_bad_argument(const char *program, const char *format, const char *value);

/* Sets the log level from the count of -v options: 0 errors, 1 info, 2+ debug. */
void chunk_app_set_verbosity(int verbosity);

/* getopt_long values of the wire options, above every program's own (256..)
 * and below chunk-relay's per-direction link options (1000..). */
enum {
    CHUNK_OPT_SLICE_SIZE = 512,
    CHUNK_OPT_MAX_SLICES,
    CHUNK_OPT_PROTOCOL_ID,
    CHUNK_OPT_FIRST_CHUNK_ID,
};

/* Applies --slice-size, --max-slices, --protocol-id (to wire) or
 * --first-chunk-id (to *first_chunk_id), opt being one of CHUNK_OPT_*. A
 * value out of range is a usage error: message and exit 2. */
void chunk_app_wire_option(const char *program, int opt, const char *text, chunk_wire_config_t *wire,
                           uint16_t *first_chunk_id);

/* ---- sockets ---- */

/* Opens a listening socket on *address. When dual_stack is set and no IPv6
 * socket can be had (a machine without IPv6), listens on IPv4 alone on the
 * same port instead, and *address says so. Returns 0, or -1 after printing
 * "PROGRAM: why" (the caller exits 1). */
int chunk_app_open_listener(const char *program, chunk_socket_t *socket, chunk_address_t *address,
                            int dual_stack);

/* Writes port to path (chunk_platform_write_port_file). Returns 0, or -1
 * after printing "PROGRAM: --port-file: why" (the caller exits 1). */
int chunk_app_write_port_file(const char *program, const char *path, uint16_t port);

/* ---- pcap recording ---- */

typedef struct chunk_capture_t {
    chunk_pcap_t *pcap; /* NULL: not recording */
    const char *path;
    uint64_t records; /* datagrams written */
    int failed;       /* a record or the close failed */
} chunk_capture_t;

/* Starts recording to path, or sets capture up to record nothing when path
 * is NULL. Returns 0, or -1 after printing "PROGRAM: why" (the caller exits 1). */
int chunk_capture_open(chunk_capture_t *capture, const char *program, const char *path);

/* Writes one UDP datagram from src to dst, stamped with the wall clock. A
 * failure is remembered for chunk_capture_finish, not reported here. */
void chunk_capture_record(chunk_capture_t *capture, const chunk_address_t *src, const chunk_address_t *dst,
                          const uint8_t *data, int bytes);

/* Closes the pcap. When any record or the close failed, prints "PROGRAM:
 * writing PATH failed" and returns 1 (I/O error) if exit_code was 0;
 * otherwise returns exit_code unchanged. */
int chunk_capture_finish(chunk_capture_t *capture, const char *program, int exit_code);

/* ---- one socket, one peer (chunk-send, chunk-recv) ---- */

typedef struct chunk_link_t {
    const char *program;   /* for log lines */
    chunk_socket_t socket;
    int peer_known;        /* peer is set; until then nothing is sent */
    chunk_address_t peer;  /* the other endpoint */
    chunk_address_t local; /* our address as the peer sees it (for pcap) */
    chunk_capture_t capture;
    uint64_t datagrams_sent, send_errors, datagrams_received, foreign_dropped;
} chunk_link_t;

/* The endpoints' send callback (context: a chunk_link_t): sends packet to
 * the peer and records it. Does nothing before the peer is known. A send the
 * kernel refuses is counted in send_errors and logged at debug level: a full
 * socket buffer is a lost packet, which the protocol resends. */
void chunk_link_send(void *context, const uint8_t *packet, int bytes);

/* Takes the next datagram waiting on the link's socket into buffer
 * (CHUNK_SOCKET_MAX_DATAGRAM bytes) and counts it in datagrams_received.
 * Returns its length, -1 when none is waiting, or -2 on a socket error
 * (errno set). */
int chunk_link_receive(chunk_link_t *link, chunk_address_t *from, uint8_t *buffer);

/* Returns 1 when a datagram from `from` comes from the known peer: it is
 * recorded, and the caller hands it to its endpoint. Otherwise returns 0: it
 * is recorded with the address it came to, counted in foreign_dropped and
 * logged at debug level as "dropped N bytes from ADDR: <why>". */
int chunk_link_accept(chunk_link_t *link, const chunk_address_t *from, const uint8_t *data, int bytes,
                      const char *why);

/* ---- summaries ---- */

/* One turn of a program's event loop: waits up to seconds for one of fds to
 * become readable (readable[i] set as chunk_platform_wait does), then checks
 * for SIGINT/SIGTERM. Returns 0 to go on. Returns -1 to stop, with *exit_code
 * and *outcome set: 1 and "poll error" when poll failed (the error printed),
 * 128 + the signal and "interrupted" when a stop signal came. */
int chunk_app_wait(const char *program, const int *fds, int count, double seconds, int *readable,
                   int *exit_code, const char **outcome);

/* Formats a rate as "1.23 MB/s" (1 MB/s and up) or "12.3 kB/s". */
void chunk_app_format_rate(double bytes_per_second, char *buf, size_t size);

/* The end of a progress line: redrawn in place on a terminal, one line each
 * otherwise. */
const char *chunk_app_progress_end(void);

/* Ends a progress line left open on a terminal, before the summary. */
void chunk_app_progress_finish(int progress_shown);

/* Prints ", "-separated "NAME VALUE" pairs of count counters and a newline,
 * each pair after a space (the caller prints what goes before). */
void chunk_app_print_counters(const uint64_t *counters, int count, const char *(*name)(int));

/* The summary's datagram line: sent from our address, received, dropped
 * as foreign, send errors. */
void chunk_link_print_datagrams(const chunk_link_t *link);

/* The summary's lines for datagrams the wire format rejected, one per
 * reason seen (invalid: CHUNK_READ_RESULT_COUNT counters). */
void chunk_app_print_invalid(const uint64_t *invalid);

/* The summary's pcap line, when recording. */
void chunk_capture_print(const chunk_capture_t *capture);

#endif
