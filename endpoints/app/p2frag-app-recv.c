/* p2frag-recv: receives fragmented packets over real UDP with the reference
 * reassembling receiver (p2frag_receiver_*) and writes every packet it
 * delivers, in the order delivered, to a file or stdout. See --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
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

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2, EXIT_INCOMPLETE = 3 };

static const char *program = "p2frag-recv";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: p2frag-recv [options] [FILE]\n"
            "\n"
            "Receives fragmented packets from one sender (p2frag-send) over UDP, reassembles\n"
            "them by the rules (any order, duplicates dropped, up to 256 packets in\n"
            "progress, sequences more than 256 behind the newest dropped as too old) and\n"
            "writes each packet delivered, in the order delivered, to FILE (default: stdout,\n"
            "also '-'). A packet with a lost fragment is lost: nothing is resent.\n"
            "\n"
            "When it stops:\n"
            "  --packets N              once N packets are delivered: exit 0. Before that, a\n"
            "                           silence of --idle-timeout or the --timeout: exit 3.\n"
            "  otherwise                once the sender is silent for --idle-timeout after\n"
            "                           the first datagram: exit 0.\n"
            "\n"
            "options:\n"
            "  -p, --port PORT          UDP port to listen on (default %d; 0 picks a free port)\n"
            "  -b, --bind ADDR[:PORT]   address to listen on (default: all IPv6 and IPv4 addresses)\n"
            "  -4, -6                   listen on IPv4 / IPv6 only (with the default address)\n"
            "      --port-file FILE     write the port listened on to FILE once bound\n"
            "  -n, --packets N          stop after N packets delivered\n"
            "      --idle-timeout SEC   see above (default 2; 0: never)\n"
            "  -t, --timeout SEC        give up after SEC seconds in all: exit 3 (default: never)\n"
            "      --max-fragments N    drop fragments of packets claiming more, 1..255 (default 255)\n"
            "      --protocol-id N      protocol id seeding the CRC (default 0x%08X)\n"
            "      --manifest FILE      write 'sequence bytes sha256' for every packet delivered\n"
            "  -w, --pcap FILE          record every datagram received (real time and addresses)\n"
            "  -q, --quiet              no progress line, and no summary unless it fails\n"
            "  -v, --verbose            log more (-v info, -vv debug)\n"
            "  -h, --help               this text\n"
            "\n"
            "It locks onto the first address that sends a datagram the fragment format\n"
            "accepts; datagrams from any other address are then dropped and counted.\n"
            "exit status: 0 done (see above); 1 I/O error (output, socket, pcap, manifest);\n"
            "2 bad arguments; 3 incomplete; 128+N interrupted by signal N, after the summary.\n",
            CHUNK_DEFAULT_PORT, P2FRAG_DEFAULT_PROTOCOL_ID);
}

typedef struct recv_t {
    /* options */
    p2frag_receiver_config_t config;
    double timeout, idle_timeout;
    long long want_packets; /* -1: not asked for */
    app_common_options_t common; /* -w, -q, -v, -b, -4, -6 */
    const char *output_path, *manifest_path;
    app_listen_options_t listen; /* -p, --port-file */
    /* I/O */
    udp_link_t link;
    int output_fd;
    FILE *manifest;
    /* state */
    p2frag_receiver_t *receiver;
    const uint64_t *counters;
    double start, first_heard, last_heard, next_progress;
    long long packets, bytes;
    int output_failed, exit_code, progress_shown;
    const char *outcome; /* why it stopped; NULL: stopped before the loop said */
} recv_t;

/* ---- options ---- */

enum { OPT_MAXFRAG = 256, OPT_PROTOCOL, OPT_MANIFEST };

/* Applies one of p2frag-recv's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    recv_t *r = context;
    if (app_listen_option(program, opt, text, &r->listen) ||
        app_timeout_option(program, opt, text, &r->timeout, &r->idle_timeout))
        return 1;
    switch (opt) {
    case 'n': r->want_packets = app_int_arg(program, "packets", text, 1, (long long)1 << 48, "a count >= 1"); break;
    case OPT_MAXFRAG:
        r->config.max_fragments = (int)app_int_arg(program, "max-fragments", text, 1, P2FRAG_MAX_FRAGMENTS, "1..255");
        break;
    case OPT_PROTOCOL: r->config.wire.protocol_id = p2frag_app_protocol_id_option(program, text); break;
    case OPT_MANIFEST: r->manifest_path = text; break;
    default: return 0;
    }
    return 1;
}

static void parse_options(recv_t *r, int argc, char **argv)
{
    p2frag_receiver_default_config(&r->config);
    r->idle_timeout = 2;
    r->want_packets = -1;
    r->listen.port = CHUNK_DEFAULT_PORT;
    static const struct option options[] = {
        {"bind", required_argument, NULL, 'b'},
        APP_LISTEN_LONG_OPTIONS,
        {"packets", required_argument, NULL, 'n'},
        APP_TIMEOUT_LONG_OPTIONS,
        {"max-fragments", required_argument, NULL, OPT_MAXFRAG},
        {"protocol-id", required_argument, NULL, OPT_PROTOCOL},
        {"manifest", required_argument, NULL, OPT_MANIFEST},
        APP_COMMON_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int first = app_parse_options(program, argc, argv, ":p:b:n:t:w:46qvh", options, usage, &r->common, own_option, r);
    if (argc - first > 1) app_bad_argument(program, "unexpected argument '%s'", argv[first + 1]);
    r->output_path = first < argc ? argv[first] : "-";
    app_set_verbosity(r->common.verbosity);
    cs_log_set_name("p2frag");
}

/* ---- setting up ---- */

/* The receiver's deliver callback: writes the packet to the output and the
 * manifest. A failed write stops the writing; the loop reports it. */
static void on_deliver(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes, int fragmented)
{
    (void)time, (void)fragmented;
    recv_t *r = context;
    if (r->output_failed) return;
    for (int done = 0; done < bytes;) {
        ssize_t n = write(r->output_fd, packet + done, (size_t)(bytes - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            r->output_failed = 1;
            return;
        }
        done += (int)n;
    }
    p2frag_app_manifest_write(r->manifest, sequence, packet, bytes);
    r->packets++;
    r->bytes += bytes;
}

/* Listens, opens the output, the manifest and the pcap, and creates the
 * receiver. Returns 0, or the exit code after printing why. */
static int set_up(recv_t *r)
{
    int listening = udp_link_listen(&r->link, program, &r->common, &r->listen);
    if (listening != APP_LISTEN_OK) return listening == APP_LISTEN_USAGE ? EXIT_USAGE : EXIT_IO;
    if (app_open_output(program, r->output_path, &r->output_fd) != 0) return EXIT_IO;
    if (p2frag_app_manifest_open(program, r->manifest_path, &r->manifest) != 0) return EXIT_IO;
    if (app_capture_open(&r->link.capture, program, r->common.pcap_path) != 0) return EXIT_IO;

    r->config.deliver = on_deliver;
    r->config.context = r;
    r->receiver = p2frag_receiver_create(&r->config);
    if (!r->receiver) return app_out_of_memory(program, EXIT_IO);
    r->counters = p2frag_receiver_counters(r->receiver);
    udp_link_ready_to_listen(&r->link);
    return 0;
}

/* ---- one turn of the event loop ---- */

/* Locks onto the first sender whose datagram the format accepts. */
static void lock_onto_sender(recv_t *r, const platform_address_t *from, int n, double now)
{
    p2frag_packet_t packet;
    packet.regular = NULL;
    if (p2frag_read_packet(&r->config.wire, r->link.datagram, n, &packet) != P2FRAG_READ_OK) return;
    udp_link_lock_on(&r->link, from);
    r->first_heard = now;
}

/* Hands every waiting datagram from the sender to the receiver. Returns 0,
 * or -1 on a socket error (printed, exit code set). */
static int receive_fragments(recv_t *r, double now)
{
    for (;;) {
        platform_address_t from;
        int n = udp_link_receive_or_stop(&r->link, &from, EXIT_IO, &r->exit_code, &r->outcome);
        if (n < 0) return n == -1 ? 0 : -1;
        if (!r->link.peer_known) lock_onto_sender(r, &from, n, now);
        if (!udp_link_accept(&r->link, &from, r->link.datagram, n,
                             r->link.peer_known ? "not the sender locked onto" : "not a valid fragment packet"))
            continue;
        r->last_heard = now;
        p2frag_verdict_t verdict = p2frag_receiver_receive_packet(r->receiver, now, r->link.datagram, n);
        if (verdict != P2FRAG_VERDICT_ACCEPTED && verdict != P2FRAG_VERDICT_DELIVERED)
            cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: dropped %d bytes: %s", program, n, p2frag_verdict_name(verdict));
    }
}

static void print_progress(recv_t *r, double now)
{
    fprintf(stderr, "%s: %lld packets (%lld bytes) delivered, %llu datagrams, %llu fragments accepted%s", program,
            r->packets, r->bytes, (unsigned long long)r->counters[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED],
            (unsigned long long)r->counters[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED], app_progress_end());
    r->progress_shown = 1;
    r->next_progress = now + 1.0;
}

/* 1 when the run is over: an output error, --packets delivered, the idle
 * timeout or --timeout (exit code and outcome set). */
static int finished(recv_t *r, double now)
{
    if (r->output_failed) {
        fprintf(stderr, "%s: writing %s: %s\n", program, r->output_path, strerror(errno));
        r->exit_code = EXIT_IO;
        r->outcome = "output error";
        return 1;
    }
    if (r->want_packets > 0 && r->packets >= r->want_packets) {
        r->outcome = "done";
        return 1;
    }
    if (r->idle_timeout > 0 && r->first_heard >= 0 && now - r->last_heard >= r->idle_timeout) {
        r->exit_code = r->want_packets > 0 ? EXIT_INCOMPLETE : EXIT_OK;
        r->outcome = r->want_packets > 0 ? "idle timeout before --packets were delivered" : "done (sender idle)";
        return 1;
    }
    return app_timed_out(r->timeout, r->start, now, EXIT_INCOMPLETE, &r->exit_code, &r->outcome);
}

/* Receives until finished, or a signal or an error stops it. */
static void run(recv_t *r)
{
    r->start = platform_time();
    r->first_heard = -1;
    r->next_progress = r->start + 1.0;
    for (;;) {
        int readable;
        if (app_wait(program, &r->link.socket.fd, 1, 0.005, &readable, &r->exit_code, &r->outcome) != 0) return;
        double now = platform_time();
        if (receive_fragments(r, now) != 0) return;
        if (finished(r, now)) return;
        if (!r->common.quiet && r->first_heard >= 0 && now >= r->next_progress) print_progress(r, now);
    }
}

static void print_summary(const recv_t *r)
{
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    double busy = r->first_heard >= 0 ? r->last_heard - r->first_heard : 0;
    app_progress_finish(r->progress_shown);
    fprintf(stderr, "%s: %s: %lld packets (%lld bytes) delivered from %s in %.3f s; %d unfinished at the end (lost)\n",
            program, r->outcome ? r->outcome : "stopped", r->packets, r->bytes,
            r->link.peer_known ? platform_address_format(&r->link.peer, text, sizeof text) : "nobody", busy,
            p2frag_receiver_in_progress(r->receiver));
    udp_link_print_traffic(&r->link, "receiver", r->counters, P2FRAG_RECEIVER_COUNTER_COUNT, p2frag_receiver_counter_name);
    p2frag_app_print_invalid(p2frag_receiver_invalid_counters(r->receiver));
    app_capture_print(&r->link.capture);
}

int p2frag_app_recv_main(int argc, char **argv)
{
    static recv_t frag;
    parse_options(&frag, argc, argv);
    int code = set_up(&frag);
    if (code != 0) return code;
    run(&frag);
    frag.exit_code = app_capture_finish(&frag.link.capture, program, frag.exit_code);
    if (frag.output_fd != 1 && close(frag.output_fd) != 0 && frag.exit_code == EXIT_OK) frag.exit_code = EXIT_IO;
    frag.exit_code = p2frag_app_manifest_close(program, frag.manifest_path, frag.manifest, frag.exit_code, EXIT_IO);
    if (!frag.common.quiet || frag.exit_code != EXIT_OK) print_summary(&frag);
    p2frag_receiver_destroy(frag.receiver);
    platform_socket_close(&frag.link.socket);
    return frag.exit_code;
}
