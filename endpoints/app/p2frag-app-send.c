/* p2frag-send: sends a file over real UDP as fragmented packets with the
 * reference fragmenting sender (p2frag_sender_*): the file is cut into packets
 * of --packet-size bytes, each split into fragments of up to 1024 bytes,
 * paced at --rate. Nothing is resent (the protocol has no acks): a lost
 * fragment loses its packet, and p2frag-recv says which. See --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "chunk.h"
#include "p2frag.h"
#include "p2frag-app.h"
#include "platform.h"
#include "udplink.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2 };

static const char *program = "p2frag-send";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: p2frag-send [options] HOST[:PORT] [FILE]\n"
            "\n"
            "Sends FILE (default: stdin, also '-') to a fragment receiver (p2frag-recv) at\n"
            "HOST:PORT over UDP: packets of --packet-size bytes of the file, each sent as\n"
            "fragments of up to 1024 bytes (protocol id 0x%08X), paced at --rate. Nothing\n"
            "is resent: a fragment the network loses loses its packet. Exits once every\n"
            "packet is sent.\n"
            "HOST is a name, an IPv4 address or an IPv6 address ([::1]:40000, or ::1\n"
            "without a port); PORT defaults to %d.\n"
            "\n"
            "options:\n"
            "  -s, --packet-size BYTES  bytes per packet, 1..%d (255 fragments; default 4096)\n"
            "  -r, --rate RATE          bandwidth budget: bytes/s, or with units 125kB, 8Mbit;\n"
            "                           'unlimited' or 0 for none (default 1MB = 1000000 bytes/s)\n"
            "      --interleave N       fragments of up to N packets alternate (default 1)\n"
            "      --first-sequence N   sequence of the first packet, 0..65535 (default 0)\n"
            "      --protocol-id N      protocol id seeding the CRC (default 0x%08X)\n"
            "      --manifest FILE      write 'sequence bytes sha256' for every packet sent\n"
            "  -b, --bind ADDR[:PORT]   local address and port to send from (default: any, a free port)\n"
            "  -4, -6                   resolve HOST to IPv4 / IPv6 only\n"
            "  -w, --pcap FILE          record every datagram sent (real time and addresses)\n"
            "  -q, --quiet              no progress line, and no summary unless it fails\n"
            "  -v, --verbose            log more (-v info, -vv debug)\n"
            "  -h, --help               this text\n"
            "\n"
            "exit status: 0 every packet sent; 1 I/O error (input, socket, pcap, manifest);\n"
            "2 bad arguments; 128+N interrupted by signal N (SIGINT: 130), after the summary.\n",
            P2FRAG_DEFAULT_PROTOCOL_ID, CHUNK_DEFAULT_PORT, P2FRAG_MAX_PACKET_BYTES, P2FRAG_DEFAULT_PROTOCOL_ID);
}

typedef struct send_t {
    /* options */
    p2frag_sender_config_t config;
    long long packet_size;
    app_common_options_t common; /* -w, -q, -v, -b, -4, -6 */
    const char *host_text, *input_path, *manifest_path;
    /* I/O */
    udp_link_t link;
    int input_fd;
    FILE *manifest;
    uint8_t *packet;   /* packet_size bytes: the packet being read */
    /* state */
    p2frag_sender_t *sender;
    const uint64_t *counters;
    double start, next_progress;
    long long bytes_read, packets;
    int input_done, exit_code, progress_shown;
    const char *outcome; /* why it stopped; NULL: stopped before the loop said */
} send_t;

/* ---- options ---- */

enum { OPT_INTERLEAVE = 256, OPT_FIRST, OPT_PROTOCOL, OPT_MANIFEST };

/* Applies one of p2frag-send's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    send_t *s = context;
    switch (opt) {
    case 's':
        s->packet_size = app_bytes_arg(program, "packet-size", text, 1, P2FRAG_MAX_PACKET_BYTES, "1..261120 bytes");
        break;
    case 'r':
        s->config.rate_bytes_per_second = app_rate_arg(program, "rate", text, "bytes/s, e.g. 125kB or 8Mbit");
        break;
    case OPT_INTERLEAVE: s->config.interleave = (int)app_int_arg(program, "interleave", text, 1, 64, "1..64"); break;
    case OPT_FIRST:
        s->config.first_sequence = (uint16_t)app_int_arg(program, "first-sequence", text, 0, 65535, "0..65535");
        break;
    case OPT_PROTOCOL: s->config.wire.protocol_id = p2frag_app_protocol_id_option(program, text); break;
    case OPT_MANIFEST: s->manifest_path = text; break;
    default: return 0;
    }
    return 1;
}

static void parse_options(send_t *s, int argc, char **argv)
{
    p2frag_sender_default_config(&s->config);
    s->config.rate_bytes_per_second = 1000000;
    s->packet_size = 4096;
    static const struct option options[] = {
        {"packet-size", required_argument, NULL, 's'},
        {"rate", required_argument, NULL, 'r'},
        {"interleave", required_argument, NULL, OPT_INTERLEAVE},
        {"first-sequence", required_argument, NULL, OPT_FIRST},
        {"protocol-id", required_argument, NULL, OPT_PROTOCOL},
        {"manifest", required_argument, NULL, OPT_MANIFEST},
        {"bind", required_argument, NULL, 'b'},
        APP_COMMON_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int first = app_parse_options(program, argc, argv, ":s:r:b:w:46qvh", options, usage, &s->common, own_option, s);
    if (first >= argc) app_bad_argument(program, "%s", "no receiver given: p2frag-send HOST[:PORT] [FILE]");
    if (argc - first > 2) app_bad_argument(program, "unexpected argument '%s'", argv[first + 2]);
    s->host_text = argv[first];
    s->input_path = first + 1 < argc ? argv[first + 1] : "-";
    app_set_verbosity(s->common.verbosity);
    cs_log_set_name("p2frag");
}

/* ---- setting up ---- */

/* Resolves, opens the input, the manifest, the socket and the pcap, and
 * creates the sender. Returns 0, or the exit code after printing why. */
static int set_up(send_t *s)
{
    s->link.program = program;
    s->link.peer_known = 1; /* the receiver, given on the command line */
    platform_address_t bind_address;
    long long input_size;
    if (app_resolve_peer(program, s->host_text, s->common.family, CHUNK_DEFAULT_PORT, s->common.bind_text, &s->link.peer,
                         &bind_address) != 0)
        return EXIT_USAGE;
    if (app_open_input(program, s->input_path, &s->input_fd, &input_size) != 0) return EXIT_IO;
    if (p2frag_app_manifest_open(program, s->manifest_path, &s->manifest) != 0) return EXIT_IO;
    if (udp_link_open(&s->link, &bind_address, s->common.pcap_path) != 0) return EXIT_IO;

    /* The loop wakes about every millisecond: bank 10 ms of budget, so that
     * the rate, not the wake-ups, sets the pace. */
    s->config.max_burst_bytes = s->config.rate_bytes_per_second * 0.01;
    s->config.send = udp_link_send;
    s->config.context = &s->link;
    s->sender = p2frag_sender_create(&s->config);
    s->packet = malloc((size_t)s->packet_size);
    if (!s->sender || !s->packet) return app_out_of_memory(program, EXIT_IO);
    s->counters = p2frag_sender_counters(s->sender);
    return 0;
}

/* ---- one turn of the event loop ---- */

/* Reads up to size bytes (fewer only at the end of the input). Returns the
 * count, or -1 on a read error. */
static long read_full(int fd, uint8_t *buffer, long size)
{
    long got = 0;
    while (got < size) {
        ssize_t n = read(fd, buffer + got, (size_t)(size - got));
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) break;
        got += n;
    }
    return got;
}

/* Keeps a few packets queued, so that the budget, not the reads, sets the
 * pace. Returns 0, or -1 on a read error (printed, exit code set). */
static int queue_input(send_t *s)
{
    while (!s->input_done && p2frag_sender_queued(s->sender) < s->config.interleave + 1) {
        long n = read_full(s->input_fd, s->packet, (long)s->packet_size);
        if (n < 0) {
            fprintf(stderr, "%s: reading %s: %s\n", program, s->input_path, strerror(errno));
            s->exit_code = EXIT_IO;
            s->outcome = "input error";
            return -1;
        }
        if (n == 0) {
            s->input_done = 1;
            break;
        }
        int sequence = p2frag_sender_queue_raw(s->sender, s->packet, (int)n);
        p2frag_app_manifest_write(s->manifest, (unsigned)sequence, s->packet, (int)n);
        s->bytes_read += n;
        s->packets++;
        if (n < s->packet_size) s->input_done = 1;
    }
    return 0;
}

/* Anything arriving is not ours to read (no acks): drains and counts it. */
static void drain_socket(send_t *s)
{
    platform_address_t from;
    int n;
    while ((n = udp_link_receive(&s->link, &from)) >= 0)
        if (udp_link_accept(&s->link, &from, s->link.datagram, n, "not the receiver"))
            cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: ignored %d bytes from the receiver (fragments have no acks)",
                           program, n);
}

static void print_progress(send_t *s, double now)
{
    char rate[32];
    app_format_rate(s->counters[P2FRAG_SENDER_COUNTER_BYTES_SENT] / (now - s->start), rate, sizeof rate);
    fprintf(stderr, "%s: %lld packets (%lld bytes) read, %llu datagrams sent, %s%s", program, s->packets,
            s->bytes_read, (unsigned long long)s->counters[P2FRAG_SENDER_COUNTER_DATAGRAMS_SENT], rate,
            app_progress_end());
    s->progress_shown = 1;
    s->next_progress = now + 1.0;
}

/* Sends until every packet is out, or a signal or an error stops it. */
static void run(send_t *s)
{
    s->start = platform_time();
    s->next_progress = s->start + 1.0;
    for (;;) {
        if (queue_input(s) != 0) return;
        double now = platform_time();
        p2frag_sender_update(s->sender, now);
        if (s->input_done && !p2frag_sender_busy(s->sender)) {
            s->outcome = "done";
            return;
        }
        int readable;
        if (app_wait(program, &s->link.socket.fd, 1, 0.001, &readable, &s->exit_code, &s->outcome) != 0) return;
        drain_socket(s);
        if (!s->common.quiet && now >= s->next_progress) print_progress(s, now);
    }
}

static void print_summary(const send_t *s, double elapsed)
{
    char rate[32], text[PLATFORM_ADDRESS_STRING_SIZE];
    app_format_rate(elapsed > 0 ? s->counters[P2FRAG_SENDER_COUNTER_BYTES_SENT] / elapsed : 0, rate, sizeof rate);
    app_progress_finish(s->progress_shown);
    fprintf(stderr, "%s: %s: %lld bytes in %llu packets to %s in %.3f s (%s)\n", program,
            s->outcome ? s->outcome : "stopped", s->bytes_read,
            (unsigned long long)s->counters[P2FRAG_SENDER_COUNTER_PACKETS_SENT],
            platform_address_format(&s->link.peer, text, sizeof text), elapsed, rate);
    udp_link_print_traffic(&s->link, "sender", s->counters, P2FRAG_SENDER_COUNTER_COUNT, p2frag_sender_counter_name);
    app_capture_print(&s->link.capture);
}

int p2frag_app_send_main(int argc, char **argv)
{
    static send_t frag;
    parse_options(&frag, argc, argv);
    int code = set_up(&frag);
    if (code != 0) return code;
    platform_catch_signals();
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: sending to %s", program,
                   platform_address_format(&frag.link.peer, text, sizeof text));

    run(&frag);
    double elapsed = platform_time() - frag.start;
    frag.exit_code = app_capture_finish(&frag.link.capture, program, frag.exit_code);
    frag.exit_code = p2frag_app_manifest_close(program, frag.manifest_path, frag.manifest, frag.exit_code, EXIT_IO);
    if (!frag.common.quiet || frag.exit_code != EXIT_OK) print_summary(&frag, elapsed);
    if (frag.input_fd != 0) close(frag.input_fd);
    p2frag_sender_destroy(frag.sender);
    platform_socket_close(&frag.link.socket);
    free(frag.packet);
    return frag.exit_code;
}
