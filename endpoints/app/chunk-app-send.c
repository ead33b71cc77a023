/* chunk-send: sends a file or stdin over real UDP as a queue of chunks, with
 * the reference sender (chunk_sender_*), and exits 0 once every chunk is
 * acked. See --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk.h"
#include "app.h"
#include "chunk-app.h"
#include "udplink.h"
#include "platform.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 };

static const char *program = "chunk-send";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chunk-send [options] HOST[:PORT] [FILE]\n"
            "\n"
            "Sends FILE (default: stdin, also '-') to a chunk receiver (chunk-recv) at\n"
            "HOST:PORT over UDP, as a queue of chunks of up to SliceSize*MaxSlicesPerChunk\n"
            "bytes (256 KiB by default), one chunk in flight at a time. Exits once the\n"
            "receiver has acked every slice of every chunk.\n"
            "HOST is a name, an IPv4 address or an IPv6 address ([::1]:40000, or ::1\n"
            "without a port); PORT defaults to %d.\n"
            "\n"
            "options:\n"
            "  -c, --chunk-size BYTES   bytes per chunk, 1..SliceSize*MaxSlicesPerChunk (default: the maximum);\n"
            "                           suffixes K, M (binary)\n"
            "  -r, --rate RATE          bandwidth budget: bytes/s, or with units 125kB, 8Mbit;\n"
            "                           'unlimited' or 0 for none (default 1MB = 1000000 bytes/s)\n"
            "      --resend-delay SEC   minimum time before a slice is resent (default 0.1; 100ms works too)\n"
            "      --rtt SEC            RTT estimate: the resend delay becomes 1.25 * RTT (default: none)\n"
            "      --burst BYTES        send every slice of chunks up to BYTES at once, then pace (default 0: off)\n"
            "      --slice-size N       SliceSize, 1..%d (default %d)\n"
            "      --max-slices N       MaxSlicesPerChunk, 1..%d (default %d; the article's program uses 32)\n"
            "      --protocol-id N      protocol id seeding the CRC (default 0x%08X)\n"
            "      --first-chunk-id N   id of the first chunk, 0..65535 (default 0)\n"
            "  -b, --bind ADDR[:PORT]   local address and port to send from (default: any, a free port)\n"
            "  -4, -6                   resolve HOST to IPv4 / IPv6 only\n"
            "  -t, --timeout SEC        give up after SEC seconds in all (default: never)\n"
            "      --idle-timeout SEC   give up when no slice is newly acked for SEC seconds while\n"
            "                           chunks are unacked: the receiver is silent, or acks but a\n"
            "                           slice never gets through (default 10; 0: never)\n"
            "  -w, --pcap FILE          record every datagram sent and received (real time and addresses)\n"
            "  -q, --quiet              no progress line, and no summary unless it fails\n"
            "  -v, --verbose            log more (-v info, -vv debug: every dropped datagram and why)\n"
            "  -h, --help               this text\n"
            "\n"
            "Datagrams from any address other than HOST:PORT are dropped and counted.\n"
            "exit status: 0 every chunk acked; 1 I/O error (input, socket, pcap); 2 bad arguments;\n"
            "3 timeout or idle timeout; 128+N interrupted by signal N (SIGINT: 130), after the summary.\n",
            CHUNK_DEFAULT_PORT, CHUNK_SLICE_SIZE_LIMIT, CHUNK_DEFAULT_SLICE_SIZE, CHUNK_MAX_SLICES_LIMIT,
            CHUNK_DEFAULT_MAX_SLICES, CHUNK_DEFAULT_PROTOCOL_ID);
}

/* Sizes of the chunks queued and not yet acked, oldest first, so progress
 * can count acked bytes from the completed-chunk counter. */
typedef struct size_ring_t {
    int *sizes;
    int capacity, head, count;
} size_ring_t;

typedef struct send_t {
    /* options */
    chunk_sender_config_t config;
    long long chunk_size;
    double timeout, idle_timeout;
    app_common_options_t common; /* -w, -q, -v, -b, -4, -6 */
    const char *host_text, *input_path;
    /* I/O */
    udp_link_t link;
    int input_fd;
    long long input_total; /* known for regular files: progress shows a percentage; else -1 */
    uint8_t *pending;      /* the chunk being read from the input */
    /* state */
    chunk_sender_t *sender;
    const uint64_t *counters;
    size_ring_t ring;
    double start, last_heard, last_progress, next_progress;
    uint64_t slices_acked_seen, chunks_seen_completed;
    long long pending_bytes, bytes_read, bytes_acked;
    int input_eof, pending_full, exit_code, progress_shown;
    const char *failure; /* why it stopped, NULL when all is acked */
    char failure_text[160];
} send_t;

/* ---- options ---- */

enum { OPT_RESEND = 256, OPT_RTT, OPT_BURST };

/* Applies one of chunk-send's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    send_t *s = context;
    const long long max_chunk = (long long)CHUNK_SLICE_SIZE_LIMIT * CHUNK_MAX_SLICES_LIMIT;
    if (chunk_app_wire_option(program, opt, text, &s->config.wire, &s->config.first_chunk_id) ||
        app_timeout_option(program, opt, text, &s->timeout, &s->idle_timeout))
        return 1;
    switch (opt) {
    case 'c': s->chunk_size = app_bytes_arg(program, "chunk-size", text, 1, max_chunk, "bytes, e.g. 65536 or 64K"); break;
    case 'r':
        s->config.rate_bytes_per_second =
            app_rate_arg(program, "rate", text, "bytes/s, e.g. 125000, 125kB, 1Mbit or unlimited");
        break;
    case OPT_RESEND:
        s->config.resend_delay = app_seconds_arg(program, "resend-delay", text, 3600, "seconds, e.g. 0.1 or 100ms");
        break;
    case OPT_RTT: s->config.rtt = app_seconds_arg(program, "rtt", text, 3600, "seconds, e.g. 0.05 or 50ms"); break;
    case OPT_BURST:
        s->config.initial_burst_bytes =
            (int)app_bytes_arg(program, "burst", text, 0, max_chunk, "bytes, e.g. 262144 or 256K");
        break;
    default: return 0;
    }
    return 1;
}

static void parse_options(send_t *s, int argc, char **argv)
{
    chunk_sender_default_config(&s->config);
    s->config.rate_bytes_per_second = 1e6;
    s->idle_timeout = 10;
    static const struct option options[] = {
        {"chunk-size", required_argument, NULL, 'c'},
        {"rate", required_argument, NULL, 'r'},
        {"resend-delay", required_argument, NULL, OPT_RESEND},
        {"rtt", required_argument, NULL, OPT_RTT},
        {"burst", required_argument, NULL, OPT_BURST},
        CHUNK_APP_WIRE_LONG_OPTIONS,
        CHUNK_APP_FIRST_CHUNK_ID_LONG_OPTION,
        {"bind", required_argument, NULL, 'b'},
        APP_TIMEOUT_LONG_OPTIONS,
        APP_COMMON_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int first = app_parse_options(program, argc, argv, ":c:r:b:t:w:46qvh", options, usage, &s->common, own_option, s);
    if (first >= argc) app_bad_argument(program, "%s", "missing HOST[:PORT] of the receiver");
    if (argc - first > 2) app_bad_argument(program, "unexpected argument '%s'", argv[first + 2]);
    s->host_text = argv[first];
    s->input_path = first + 1 < argc ? argv[first + 1] : "-";

    long long max_chunk = (long long)s->config.wire.slice_size * s->config.wire.max_slices;
    if (s->chunk_size == 0) s->chunk_size = max_chunk;
    if (s->chunk_size > max_chunk)
        app_bad_argument(program, "--chunk-size %lld is more than SliceSize*MaxSlicesPerChunk = %lld", s->chunk_size,
                         max_chunk);
    app_set_verbosity(s->common.verbosity);
}

/* ---- setting up ---- */

/* Resolves, opens the input, the socket and the pcap, and creates the sender.
 * Returns 0, or the exit code after printing why. */
static int set_up(send_t *s)
{
    s->link.program = program;
    s->link.peer_known = 1; /* the receiver, given on the command line */
    platform_address_t bind_address;
    if (app_resolve_peer(program, s->host_text, s->common.family, CHUNK_DEFAULT_PORT, s->common.bind_text, &s->link.peer,
                         &bind_address) != 0)
        return EXIT_USAGE;
    if (app_open_input(program, s->input_path, &s->input_fd, &s->input_total) != 0) return EXIT_IO;
    if (udp_link_open(&s->link, &bind_address, s->common.pcap_path) != 0) return EXIT_IO;

    s->config.send = udp_link_send;
    s->config.context = &s->link;
    s->sender = chunk_sender_create(&s->config);
    s->ring.capacity = s->config.queue_capacity + 2;
    s->ring.sizes = calloc((size_t)s->ring.capacity, sizeof *s->ring.sizes);
    s->pending = malloc((size_t)s->chunk_size);
    if (!s->sender || !s->ring.sizes || !s->pending) return app_out_of_memory(program, EXIT_IO);
    s->counters = chunk_sender_counters(s->sender);
    return 0;
}

/* ---- one turn of the event loop ---- */

/* Reads input into the pending chunk; it is full at chunk_size bytes or at
 * EOF. Returns 0, or -1 on a read error (printed, exit code set). */
static int read_input(send_t *s)
{
    ssize_t n = read(s->input_fd, s->pending + s->pending_bytes, (size_t)(s->chunk_size - s->pending_bytes));
    if (n < 0 && errno != EINTR && errno != EAGAIN) {
        fprintf(stderr, "%s: reading %s: %s\n", program, s->input_path, strerror(errno));
        s->exit_code = EXIT_IO;
        s->failure = "input error";
        return -1;
    }
    if (n == 0) s->input_eof = 1;
    if (n > 0) {
        s->pending_bytes += n;
        s->bytes_read += n;
    }
    if (s->pending_bytes == s->chunk_size || (s->input_eof && s->pending_bytes > 0)) s->pending_full = 1;
    return 0;
}

/* Queues the pending chunk when it is full and the sender has room. */
static void queue_pending(send_t *s, double now)
{
    if (!s->pending_full) return;
    int was_busy = chunk_sender_busy(s->sender);
    if (chunk_sender_queue_chunk(s->sender, s->pending, (int)s->pending_bytes) != 0) return;
    s->ring.sizes[(s->ring.head + s->ring.count) % s->ring.capacity] = (int)s->pending_bytes;
    s->ring.count++;
    s->pending_bytes = 0;
    s->pending_full = 0;
    /* Silence before the first chunk is not the receiver's fault. */
    if (!was_busy) s->last_heard = s->last_progress = now;
}

/* Hands every waiting datagram from the receiver to the sender. Returns 0,
 * or -1 on a socket error (printed, exit code set). */
static int receive_acks(send_t *s, double now)
{
    for (;;) {
        platform_address_t from;
        int n = udp_link_receive_or_stop(&s->link, &from, EXIT_IO, &s->exit_code, &s->failure);
        if (n < 0) return n == -1 ? 0 : -1;
        if (!udp_link_accept(&s->link, &from, s->link.datagram, n, "not the receiver")) continue;
        s->last_heard = now;
        chunk_sender_receive_packet(s->sender, now, s->link.datagram, n);
    }
}

/* Counts the bytes of newly completed chunks as acked. */
static void count_completed(send_t *s)
{
    while (s->chunks_seen_completed < s->counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED] && s->ring.count > 0) {
        s->bytes_acked += s->ring.sizes[s->ring.head];
        s->ring.head = (s->ring.head + 1) % s->ring.capacity;
        s->ring.count--;
        s->chunks_seen_completed++;
    }
}

/* 1 when the run is over: all acked, --timeout, or --idle-timeout (exit
 * code and failure set). */
static int finished(send_t *s, double now)
{
    if (s->input_eof && !s->pending_full && !chunk_sender_busy(s->sender)) { /* all acked */
        /* A chunk is 1 byte or more, so empty input sends nothing at all. */
        if (s->bytes_read == 0) s->failure = "empty input, nothing sent";
        return 1;
    }
    if (app_timed_out(s->timeout, s->start, now, EXIT_TIMEOUT, &s->exit_code, &s->failure)) return 1;
    if (s->counters[CHUNK_SENDER_COUNTER_SLICES_ACKED] != s->slices_acked_seen) {
        s->slices_acked_seen = s->counters[CHUNK_SENDER_COUNTER_SLICES_ACKED];
        s->last_progress = now;
    }
    if (s->idle_timeout > 0 && chunk_sender_busy(s->sender) && now - s->last_progress >= s->idle_timeout) {
        s->exit_code = EXIT_TIMEOUT;
        /* The receiver acks only while slices arrive, so a slice the
         * network always drops silences it too: say what is known. */
        if (s->counters[CHUNK_SENDER_COUNTER_ACKS_RECEIVED] == 0)
            snprintf(s->failure_text, sizeof s->failure_text, "idle timeout: no ack from the receiver in %.1f s",
                     now - s->start);
        else
            snprintf(s->failure_text, sizeof s->failure_text,
                     "idle timeout: no slice newly acked for %.1f s, last heard from the receiver %.1f s ago "
                     "(chunk %u stuck)",
                     now - s->last_progress, now - s->last_heard, (unsigned)chunk_sender_chunk_id(s->sender));
        s->failure = s->failure_text;
        return 1;
    }
    return 0;
}

static void print_progress(send_t *s, double now)
{
    char rate[32];
    app_format_rate(s->bytes_acked / (now - s->start), rate, sizeof rate);
    char total[48] = "";
    if (s->input_total > 0)
        snprintf(total, sizeof total, " of %lld (%.0f%%)", s->input_total, 100.0 * s->bytes_acked / s->input_total);
    fprintf(stderr, "%s: %lld bytes acked%s, %llu chunks, %s, %llu slices sent (%llu resent)%s", program,
            s->bytes_acked, total, (unsigned long long)s->counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED], rate,
            (unsigned long long)s->counters[CHUNK_SENDER_COUNTER_SLICES_SENT],
            (unsigned long long)s->counters[CHUNK_SENDER_COUNTER_SLICES_RESENT], app_progress_end());
    s->progress_shown = 1;
    s->next_progress = now + 1.0;
}

/* Sends until every chunk is acked or a timeout, a signal or an error stops it. */
static void run(send_t *s)
{
    s->start = s->last_heard = s->last_progress = platform_time();
    s->next_progress = s->start + 1.0;
    for (;;) {
        int fds[2] = {s->link.socket.fd, -1}, readable[2];
        if (!s->input_eof && !s->pending_full) fds[1] = s->input_fd;
        /* 1 ms ticks while sending keep the pacing smooth; when only waiting
         * for input, a slower tick is enough for timeouts and progress. */
        double wait = chunk_sender_busy(s->sender) ? 0.001 : 0.05;
        if (app_wait(program, fds, 2, wait, readable, &s->exit_code, &s->failure) != 0) return;
        double now = platform_time();
        if (fds[1] >= 0 && readable[1] && read_input(s) != 0) return;
        queue_pending(s, now);
        chunk_sender_update(s->sender, now);
        if (receive_acks(s, now) != 0) return;
        count_completed(s);
        if (finished(s, now)) return;
        if (!s->common.quiet && now >= s->next_progress) print_progress(s, now);
    }
}

static void print_summary(const send_t *s, double elapsed)
{
    char rate[32], text[PLATFORM_ADDRESS_STRING_SIZE];
    app_format_rate(elapsed > 0 ? s->bytes_acked / elapsed : 0, rate, sizeof rate);
    app_progress_finish(s->progress_shown);
    fprintf(stderr, "%s: %s: %lld bytes acked of %lld read, %llu chunks, to %s in %.3f s (%s goodput)\n", program,
            s->failure ? s->failure : "done", s->bytes_acked, s->bytes_read,
            (unsigned long long)s->counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED],
            platform_address_format(&s->link.peer, text, sizeof text), elapsed, rate);
    udp_link_print_traffic(&s->link, "sender", s->counters, CHUNK_SENDER_COUNTER_COUNT, chunk_sender_counter_name);
    chunk_app_print_invalid(chunk_sender_invalid_counters(s->sender));
    app_capture_print(&s->link.capture);
}

int chunk_app_send_main(int argc, char **argv)
{
    static send_t s;
    parse_options(&s, argc, argv);
    int code = set_up(&s);
    if (code != 0) return code;
    platform_catch_signals();
    char text[PLATFORM_ADDRESS_STRING_SIZE], local[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: sending %s to %s from %s", program, s.input_path,
                platform_address_format(&s.link.peer, text, sizeof text),
                platform_address_format(&s.link.local, local, sizeof local));

    run(&s);
    double elapsed = platform_time() - s.start;
    s.exit_code = app_capture_finish(&s.link.capture, program, s.exit_code);
    if (!s.common.quiet || s.exit_code != EXIT_OK) print_summary(&s, elapsed);
    chunk_sender_destroy(s.sender);
    platform_socket_close(&s.link.socket);
    free(s.ring.sizes);
    free(s.pending);
    if (s.input_fd != 0) close(s.input_fd);
    return s.exit_code;
}
