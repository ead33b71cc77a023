/* chunk-recv: receives chunks over real UDP with the reference receiver
 * (chunk_receiver_*) and writes them, in order and byte-exact, to a file or
 * stdout. See --help for when it stops. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
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

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2, EXIT_INCOMPLETE = 3, EXIT_TOO_MUCH = 4 };

static const char *program = "chunk-recv";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chunk-recv [options] [FILE]\n"
            "\n"
            "Receives chunks from one chunk sender (chunk-send) over UDP and writes them,\n"
            "in order and byte-exact, to FILE (default: stdout, also '-').\n"
            "\n"
            "When it stops:\n"
            "  --chunks N / --bytes N   once N chunks / N bytes are written, then after --linger;\n"
            "                           exit 0. A stall of --idle-timeout before that: exit 3.\n"
            "  otherwise                after the first complete chunk, once the sender is silent for\n"
            "                           --idle-timeout: exit 0 if no chunk was left half received,\n"
            "                           else 3. (A sender silent that long has got its acks or died;\n"
            "                           use --chunks or --bytes when the exit code must prove the\n"
            "                           whole transfer arrived.)\n"
            "\n"
            "options:\n"
            "  -p, --port PORT          UDP port to listen on (default %d; 0 picks a free port)\n"
            "  -b, --bind ADDR[:PORT]   address to listen on (default: all IPv6 and IPv4 addresses)\n"
            "  -4, -6                   listen on IPv4 / IPv6 only (with the default address)\n"
            "      --port-file FILE     write the port listened on to FILE once bound (with -p 0: a\n"
            "                           free port for scripts, without races)\n"
            "  -n, --chunks N           stop after N chunks\n"
            "      --bytes N            stop after N bytes (suffixes K, M, G: binary)\n"
            "      --idle-timeout SEC   see above (default 5; 0: never)\n"
            "      --linger SEC         after the last chunk, keep re-sending the final ack while the\n"
            "                           sender resends slices of it, until SEC seconds pass without\n"
            "                           one (default 1; must exceed the sender's resend delay)\n"
            "  -t, --timeout SEC        give up after SEC seconds in all: exit 3 (default: never)\n"
            "      --ack-interval SEC   at most one ack per SEC (default 0.1)\n"
            "      --slice-size N       SliceSize, 1..%d (default %d)\n"
            "      --max-slices N       MaxSlicesPerChunk, 1..%d (default %d; the article's program uses 32)\n"
            "      --protocol-id N      protocol id seeding the CRC (default 0x%08X)\n"
            "      --first-chunk-id N   id of the first chunk expected, 0..65535 (default 0)\n"
            "  -w, --pcap FILE          record every datagram sent and received (real time and addresses)\n"
            "  -q, --quiet              no progress line, and no summary unless it fails\n"
            "  -v, --verbose            log more (-v info, -vv debug: every dropped datagram and why)\n"
            "  -h, --help               this text\n"
            "\n"
            "It locks onto the first address that sends a datagram the wire format accepts;\n"
            "datagrams from any other address are then dropped and counted.\n"
            "exit status: 0 done (see above); 1 I/O error (output, socket, pcap); 2 bad arguments;\n"
            "3 incomplete (timeout, or idle with chunks missing); 4 more data than --bytes allowed\n"
            "(all of it is written); 128+N interrupted by signal N (SIGINT: 130), after the summary.\n",
            CHUNK_DEFAULT_PORT, CHUNK_SLICE_SIZE_LIMIT, CHUNK_DEFAULT_SLICE_SIZE, CHUNK_MAX_SLICES_LIMIT,
            CHUNK_DEFAULT_MAX_SLICES, CHUNK_DEFAULT_PROTOCOL_ID);
}

static int write_all(int fd, const uint8_t *data, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

typedef struct recv_t {
    /* options */
    chunk_receiver_config_t config;
    double timeout, idle_timeout, linger;
    long long want_chunks, want_bytes; /* -1: not asked for */
    app_common_options_t common; /* -w, -q, -v, -b, -4, -6 */
    const char *output_path;
    app_listen_options_t listen; /* -p, --port-file */
    /* I/O */
    udp_link_t link;
    int output_fd;
    uint8_t *chunk;        /* chunk_capacity bytes: a popped chunk */
    size_t chunk_capacity;
    /* state */
    chunk_receiver_t *receiver;
    const uint64_t *counters;
    double start, first_heard, last_heard, last_stale, done_at, next_progress;
    long long bytes_written, chunks_written;
    uint64_t accepted_at_last_chunk, stale_seen;
    uint16_t last_chunk_id;
    int exit_code, progress_shown;
    const char *outcome;
} recv_t;

/* ---- options ---- */

enum { OPT_BYTES = 256, OPT_LINGER, OPT_ACKI };

/* Applies one of chunk-recv's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    recv_t *r = context;
    if (app_listen_option(program, opt, text, &r->listen) ||
        chunk_app_wire_option(program, opt, text, &r->config.wire, &r->config.first_chunk_id) ||
        app_timeout_option(program, opt, text, &r->timeout, &r->idle_timeout))
        return 1;
    switch (opt) {
    case 'n': r->want_chunks = app_int_arg(program, "chunks", text, 1, (long long)1 << 48, "a count >= 1"); break;
    case OPT_BYTES:
        r->want_bytes = app_bytes_arg(program, "bytes", text, 1, (long long)1 << 60,
                                      "a byte count >= 1, e.g. 1048576 or 1M");
        break;
    case OPT_LINGER: r->linger = app_seconds_arg(program, "linger", text, 3600, "seconds"); break;
    case OPT_ACKI:
        r->config.ack_interval = app_seconds_arg(program, "ack-interval", text, 3600, "seconds, e.g. 0.1 or 100ms");
        break;
    default: return 0;
    }
    return 1;
}

static void parse_options(recv_t *r, int argc, char **argv)
{
    chunk_receiver_default_config(&r->config);
    r->idle_timeout = 5;
    r->linger = 1;
    r->want_chunks = r->want_bytes = -1;
    r->listen.port = CHUNK_DEFAULT_PORT;
    static const struct option options[] = {
        {"bind", required_argument, NULL, 'b'},
        APP_LISTEN_LONG_OPTIONS,
        {"chunks", required_argument, NULL, 'n'},
        {"bytes", required_argument, NULL, OPT_BYTES},
        APP_TIMEOUT_LONG_OPTIONS,
        {"linger", required_argument, NULL, OPT_LINGER},
        {"ack-interval", required_argument, NULL, OPT_ACKI},
        CHUNK_APP_WIRE_LONG_OPTIONS,
        CHUNK_APP_FIRST_CHUNK_ID_LONG_OPTION,
        APP_COMMON_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int first = app_parse_options(program, argc, argv, ":p:b:n:t:w:46qvh", options, usage, &r->common, own_option, r);
    if (argc - first > 1) app_bad_argument(program, "unexpected argument '%s'", argv[first + 1]);
    r->output_path = first < argc ? argv[first] : "-";
    if (r->want_chunks > 0 && r->want_bytes > 0) app_bad_argument(program, "%s", "give --chunks or --bytes, not both");
    app_set_verbosity(r->common.verbosity);
}

/* ---- setting up ---- */

/* Opens the socket (and --port-file), the output and the pcap, and creates
 * the receiver. Returns 0, or the exit code after printing why. */
static int set_up(recv_t *r)
{
    int listening = udp_link_listen(&r->link, program, &r->common, &r->listen);
    if (listening != APP_LISTEN_OK) return listening == APP_LISTEN_USAGE ? EXIT_USAGE : EXIT_IO;

    if (app_open_output(program, r->output_path, &r->output_fd) != 0) return EXIT_IO;
    if (app_capture_open(&r->link.capture, program, r->common.pcap_path) != 0) return EXIT_IO;

    r->config.send = udp_link_send;
    r->config.context = &r->link;
    r->receiver = chunk_receiver_create(&r->config);
    r->chunk_capacity = (size_t)r->config.wire.slice_size * (size_t)r->config.wire.max_slices;
    r->chunk = malloc(r->chunk_capacity);
    if (!r->receiver || !r->chunk) return app_out_of_memory(program, EXIT_IO);
    r->counters = chunk_receiver_counters(r->receiver);
    udp_link_ready_to_listen(&r->link);
    return 0;
}

/* ---- one turn of the event loop ---- */

/* Locks onto the sender of a datagram when none is known yet and the wire
 * format accepts the datagram, so one stray packet cannot capture the
 * receiver. */
static void lock_on(recv_t *r, const platform_address_t *from, int bytes, double now)
{
    if (r->link.peer_known) return;
    chunk_packet_t packet;
    if (chunk_read_packet(&r->config.wire, r->link.datagram, bytes, &packet) != CHUNK_READ_OK) return;
    udp_link_lock_on(&r->link, from);
    r->first_heard = now;
}

/* Hands every waiting datagram from the sender to the receiver. Returns 0,
 * or -1 on a socket error (printed, exit code set). */
static int receive_slices(recv_t *r, double now)
{
    for (;;) {
        platform_address_t from;
        int n = udp_link_receive_or_stop(&r->link, &from, EXIT_IO, &r->exit_code, &r->outcome);
        if (n < 0) return n == -1 ? 0 : -1;
        lock_on(r, &from, n, now);
        if (!udp_link_accept(&r->link, &from, r->link.datagram, n,
                             r->link.peer_known ? "not the sender locked onto" : "not a valid chunk packet"))
            continue;
        r->last_heard = now;
        chunk_receiver_receive_packet(r->receiver, now, r->link.datagram, n);
    }
}

/* 1 once the --chunks or --bytes asked for are written. */
static int reached(const recv_t *r)
{
    return (r->want_chunks > 0 && r->chunks_written >= r->want_chunks) ||
           (r->want_bytes > 0 && r->bytes_written >= r->want_bytes);
}

/* Writes completed chunks, unless the count asked for is reached: chunks
 * beyond it stay unacked, which is what the sender should see. Returns 0, or
 * -1 on an output error (printed, exit code set). */
static int write_chunks(recv_t *r)
{
    while (!reached(r)) {
        uint16_t id;
        int size = chunk_receiver_pop_chunk(r->receiver, r->chunk, (int)r->chunk_capacity, &id);
        if (size <= 0) break;
        if (write_all(r->output_fd, r->chunk, (size_t)size) != 0) {
            fprintf(stderr, "%s: writing %s: %s\n", program, r->output_path, strerror(errno));
            r->exit_code = EXIT_IO;
            r->outcome = "output error";
            return -1;
        }
        r->bytes_written += size;
        r->chunks_written++;
        r->last_chunk_id = id;
        r->accepted_at_last_chunk = r->counters[CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED];
    }
    return 0;
}

/* 1 when the run is over (exit code and outcome set): the linger after the
 * data asked for, the idle timeout, or --timeout. */
static int finished(recv_t *r, double now)
{
    if (reached(r) && r->done_at < 0) {
        r->done_at = now;
        r->last_stale = now;
        r->stale_seen = r->counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE];
    }
    if (r->done_at >= 0) {
        /* Linger: the final ack may have been lost; each stale slice is
         * the sender asking again, and the receiver answers it. */
        if (r->counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE] != r->stale_seen) {
            r->stale_seen = r->counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE];
            r->last_stale = now;
        }
        if (now - r->last_stale >= r->linger) {
            if (r->want_bytes > 0 && r->bytes_written > r->want_bytes) {
                r->exit_code = EXIT_TOO_MUCH;
                r->outcome = "more data than --bytes";
            } else {
                r->outcome = "done";
            }
            return 1;
        }
    } else if (r->idle_timeout > 0 && r->first_heard >= 0 && now - r->last_heard >= r->idle_timeout) {
        int partial = r->counters[CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED] != r->accepted_at_last_chunk;
        if (r->want_chunks > 0 || r->want_bytes > 0) {
            r->exit_code = EXIT_INCOMPLETE;
            r->outcome = "idle timeout before the expected data arrived";
            return 1;
        }
        if (r->chunks_written > 0 || partial) {
            r->exit_code = partial ? EXIT_INCOMPLETE : EXIT_OK;
            r->outcome = partial ? "idle timeout with a chunk half received" : "done (sender idle)";
            return 1;
        }
    }
    return app_timed_out(r->timeout, r->start, now, EXIT_INCOMPLETE, &r->exit_code, &r->outcome);
}

static void print_progress(recv_t *r, double now)
{
    char rate[32];
    app_format_rate(r->bytes_written / (now - r->first_heard), rate, sizeof rate);
    fprintf(stderr, "%s: %lld bytes in %lld chunks written, %s, %llu slices received (%llu duplicate)%s", program,
            r->bytes_written, r->chunks_written, rate,
            (unsigned long long)r->counters[CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED],
            (unsigned long long)r->counters[CHUNK_RECEIVER_COUNTER_SLICES_DUPLICATE], app_progress_end());
    r->progress_shown = 1;
    r->next_progress = now + 1.0;
}

/* Receives until done, a timeout, a signal or an error. */
static void run(recv_t *r)
{
    r->start = platform_time();
    r->first_heard = r->done_at = -1;
    r->next_progress = r->start + 1.0;
    for (;;) {
        int readable;
        if (app_wait(program, &r->link.socket.fd, 1, 0.005, &readable, &r->exit_code, &r->outcome) != 0) return;
        double now = platform_time();
        if (receive_slices(r, now) != 0) return;
        chunk_receiver_update(r->receiver, now);
        if (write_chunks(r) != 0) return;
        if (finished(r, now)) return;
        if (!r->common.quiet && r->done_at < 0 && r->first_heard >= 0 && now >= r->next_progress &&
            now - r->first_heard >= 1.0)
            print_progress(r, now);
    }
}

static void print_summary(const recv_t *r, double end)
{
    char rate[32], last[32] = "", text[PLATFORM_ADDRESS_STRING_SIZE];
    double busy = r->first_heard >= 0 ? (r->done_at >= 0 ? r->done_at : end) - r->first_heard : 0;
    app_format_rate(busy > 0 ? r->bytes_written / busy : 0, rate, sizeof rate);
    if (r->chunks_written > 0) snprintf(last, sizeof last, " (last chunk id %u)", (unsigned)r->last_chunk_id);
    app_progress_finish(r->progress_shown);
    fprintf(stderr, "%s: %s: %lld bytes in %lld chunks%s from %s in %.3f s (%s goodput)\n", program,
            r->outcome ? r->outcome : "stopped", r->bytes_written, r->chunks_written, last,
            r->link.peer_known ? platform_address_format(&r->link.peer, text, sizeof text) : "nobody", busy, rate);
    udp_link_print_traffic(&r->link, "receiver", r->counters, CHUNK_RECEIVER_COUNTER_COUNT, chunk_receiver_counter_name);
    uint64_t unwritten = r->counters[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED] - (uint64_t)r->chunks_written;
    if (unwritten > 0)
        fprintf(stderr, "  note: %llu more chunk(s) completed, and were acked, but not written%s\n",
                (unsigned long long)unwritten,
                r->done_at >= 0 ? ": they came after the data --chunks/--bytes asked for" : "");
    chunk_app_print_invalid(chunk_receiver_invalid_counters(r->receiver));
    app_capture_print(&r->link.capture);
}

int chunk_app_recv_main(int argc, char **argv)
{
    static recv_t r;
    parse_options(&r, argc, argv);
    int code = set_up(&r);
    if (code != 0) return code;
    run(&r);
    double end = platform_time();
    r.exit_code = app_capture_finish(&r.link.capture, program, r.exit_code);
    if (r.output_fd != 1 && close(r.output_fd) != 0) {
        fprintf(stderr, "%s: closing %s: %s\n", program, r.output_path, strerror(errno));
        if (r.exit_code == EXIT_OK) r.exit_code = EXIT_IO;
    }
    if (!r.common.quiet || r.exit_code != EXIT_OK) print_summary(&r, end);
    chunk_receiver_destroy(r.receiver);
    platform_socket_close(&r.link.socket);
    free(r.chunk);
    return r.exit_code;
}
