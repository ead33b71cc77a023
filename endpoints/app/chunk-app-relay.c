/* chunk-relay: a UDP relay between a sender and a receiver that puts real
 * traffic through the network simulator (netsim) in real time: loss, latency,
 * jitter, duplicates, reordering, bandwidth, since kernel netem is not
 * available everywhere. It forwards any UDP protocol; the chunk protocol's
 * faults (drop every ack, drop one slice id) are options of their own. See
 * --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "chunk-app.h"
#include "chunk.h"
#include "linkopt.h"
#include "netsim.h"
#include "platform.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2 };
enum { DIR_FORWARD = 0, DIR_BACK = 1 }; /* toward the receiver / toward the sender */
enum { CAPTURE_SENDER, CAPTURE_RECEIVER, CAPTURE_IN, CAPTURE_OUT };
static const char *capture_names[] = {"sender", "receiver", "in", "out"};

static const char *program = "chunk-relay";

#define DEFAULT_LISTEN_PORT 40001

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chunk-relay [options]\n"
            "\n"
            "Listens for a sender on --listen and relays its datagrams to the receiver at\n"
            "--to, and the receiver's answers back, through the network simulator in real\n"
            "time. It forwards any UDP protocol. Point the sender at the relay and the relay\n"
            "at the receiver:\n"
            "  chunk-recv -p 40000 out.bin &\n"
            "  chunk-relay --listen 40001 --to 127.0.0.1:40000 --loss 20%% --latency 25ms &\n"
            "  chunk-send 127.0.0.1:40001 in.bin\n"
            "The first address that sends to --listen is the sender; datagrams from any other\n"
            "address, and datagrams to the relay's receiver-side socket from anyone but the\n"
            "receiver, are dropped and counted.\n"
            "\n"
            "options:\n"
            "  -l, --listen [ADDR:]PORT  where the sender sends to (default all addresses, port %d;\n"
            "                            port 0 picks a free port)\n"
            "  -T, --to HOST[:PORT]      the receiver (default 127.0.0.1:%d)\n"
            "      --port-file FILE      write the listening port to FILE once bound (for scripts)\n"
            "\n",
            DEFAULT_LISTEN_PORT, CHUNK_DEFAULT_PORT);
    linkopt_print_help(out, "sender to receiver", "receiver to sender");
    fprintf(out,
            "\n"
            "chunk protocol faults (packets recognised with the chunk wire constants):\n"
            "      --drop-acks           drop every ack\n"
            "      --drop-slice N        drop every slice packet with slice id N\n"
            "      --slice-size N, --max-slices N, --protocol-id N\n"
            "                            wire constants, to recognise chunk packets for the faults\n"
            "                            (defaults %d, %d, 0x%08X)\n"
            "\n"
            "  -t, --timeout SEC         stop after SEC seconds (default: run until interrupted)\n"
            "      --idle-exit SEC       stop once traffic has started and nothing arrived for SEC\n"
            "  -w, --pcap FILE           write what crosses the relay to FILE\n"
            "      --capture-at WHERE    which datagrams go in the pcap, with real addresses:\n"
            "                            sender: the sender's leg, as the sender sees it (its\n"
            "                              datagrams before the impairments, the answers after), one\n"
            "                              UDP conversation between the sender and the relay (the default)\n"
            "                            receiver: the receiver's leg, as the receiver sees it, one\n"
            "                              conversation\n"
            "                            in: both directions as they arrive at the relay (before the\n"
            "                              impairments); out: both as the relay sends them on. These two\n"
            "                              span both legs, so the two directions are in different UDP\n"
            "                              conversations and a dissector cannot pair them\n"
            "  -q, --quiet               no progress line, and no summary unless it fails\n"
            "  -v, --verbose             log more (-v info, -vv debug)\n"
            "  -h, --help                this text\n"
            "\n"
            "Empty datagrams are dropped and counted (bad size).\n"
            "exit status: 0 stopped by --timeout or --idle-exit; 1 I/O error; 2 bad arguments;\n"
            "128+N stopped by signal N (SIGINT: 130), after the summary.\n",
            CHUNK_DEFAULT_SLICE_SIZE, CHUNK_DEFAULT_MAX_SLICES, CHUNK_DEFAULT_PROTOCOL_ID);
}

typedef struct relay_t {
    /* options */
    app_common_options_t common; /* -w, -q, -v */
    const char *listen_text, *to_text, *port_file;
    double timeout, idle_exit;
    int capture_at; /* CAPTURE_* */
    netsim_config_t sim_config;
    chunk_faults_t chunk_faults; /* chunk packets the network drops on purpose */
    /* sockets and peers */
    platform_socket_t listen;   /* faces the sender */
    platform_socket_t upstream; /* faces the receiver */
    int sender_known;
    platform_address_t sender, receiver;
    platform_address_t listen_local;   /* listen socket's address as the sender sees it */
    platform_address_t upstream_local; /* upstream socket's address as the receiver sees it */
    /* run */
    netsim_t *sim;
    uint8_t datagram[PLATFORM_SOCKET_MAX_DATAGRAM];
    app_capture_t capture;
    double start, last_arrival, next_progress;
    int progress_shown;
    uint64_t arrived[2], forwarded[2], foreign_dropped[2], size_dropped[2], send_errors[2];
    uint64_t bytes_forwarded[2];
} relay_t;

/* The simulator's filter: each protocol's faults in turn (a datagram that is
 * not a packet of a protocol passes that protocol's filter). */
static int relay_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    relay_t *relay = context;
    return chunk_faults_any(&relay->chunk_faults) &&
           chunk_faults_filter(&relay->chunk_faults, dir, packet, bytes);
}

/* 1 when datagrams in direction dir are captured as they arrive at the
 * relay, 0 when as they leave it (after the impairments). */
static int capture_on_arrival(int capture_at, int dir)
{
    switch (capture_at) {
    case CAPTURE_SENDER: return dir == DIR_FORWARD;
    case CAPTURE_RECEIVER: return dir == DIR_BACK;
    case CAPTURE_IN: return 1;
    default: return 0;
    }
}

/* ---- options ---- */

enum { OPT_PORTFILE = 256, OPT_IDLE, OPT_AT };

static const struct option *option_table(void)
{
    static const struct option own[] = {
        {"listen", required_argument, NULL, 'l'},
        {"to", required_argument, NULL, 'T'},
        {"port-file", required_argument, NULL, OPT_PORTFILE},
        {"drop-acks", no_argument, NULL, CHUNK_OPT_DROP_ACKS},
        {"drop-slice", required_argument, NULL, CHUNK_OPT_DROP_SLICE},
        {"drop-slice-id", required_argument, NULL, CHUNK_OPT_DROP_SLICE},
        CHUNK_APP_WIRE_LONG_OPTIONS,
        {"timeout", required_argument, NULL, 't'},
        {"idle-exit", required_argument, NULL, OPT_IDLE},
        {"capture-at", required_argument, NULL, OPT_AT},
        APP_COMMON_LONG_OPTIONS,
    };
    enum { OWN = sizeof own / sizeof own[0] };
    static struct option options[OWN + LINKOPT_COUNT + 1];
    memcpy(options, own, sizeof own);
    linkopt_add(options, OWN);
    return options;
}

/* Applies one of chunk-relay's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    relay_t *relay = context;
    if (chunk_app_wire_option(program, opt, text, &relay->chunk_faults.wire, NULL) ||
        app_timeout_option(program, opt, text, &relay->timeout, NULL) ||
        linkopt_apply(program, opt, text, &relay->sim_config))
        return 1;
    switch (opt) {
    case 'l': relay->listen_text = text; break;
    case 'T': relay->to_text = text; break;
    case OPT_PORTFILE: relay->port_file = text; break;
    case CHUNK_OPT_DROP_ACKS:
    case CHUNK_OPT_DROP_SLICE: chunk_app_fault_option(program, opt, text, &relay->chunk_faults); break;
    case OPT_IDLE: relay->idle_exit = app_seconds_arg(program, "idle-exit", text, 1e9, "seconds"); break;
    case OPT_AT:
        relay->capture_at = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(text, capture_names[i]) == 0) relay->capture_at = i;
        if (relay->capture_at < 0)
            app_bad_argument(program, "bad --capture-at '%s': expected sender, receiver, in or out", text);
        break;
    default: return 0;
    }
    return 1;
}

static void parse_options(relay_t *relay, int argc, char **argv)
{
    netsim_default_config(&relay->sim_config);
    chunk_faults_default(&relay->chunk_faults);
    relay->listen_text = "40001";
    int first = app_parse_options(program, argc, argv, ":l:T:t:w:qvh", option_table(), usage, &relay->common, own_option,
                                  relay);
    if (first < argc) app_bad_argument(program, "unexpected argument '%s'", argv[first]);
    chunk_app_check_faults(program, &relay->chunk_faults);
    relay->sim_config.filter = relay_filter;
    relay->sim_config.filter_context = relay;
    app_set_verbosity(relay->common.verbosity);
}

/* ---- sockets ---- */

/* Parses --listen and --to, opens both sockets, writes the port file, opens
 * the pcap and creates the simulator. Returns 0, EXIT_USAGE or EXIT_IO
 * (after printing why). */
static int set_up(relay_t *relay)
{
    char err[256];
    /* --listen: "PORT" alone, or ADDR:PORT / [ADDR]:PORT. */
    platform_address_t listen_address;
    uint16_t port;
    int dual_stack = 0;
    if (platform_parse_port(relay->listen_text, &port) == 0) {
        platform_address_any(&listen_address, 6, port);
        dual_stack = 1;
    } else if (platform_address_parse(relay->listen_text, 0, DEFAULT_LISTEN_PORT, &listen_address, err,
                                      sizeof err) != 0) {
        fprintf(stderr, "%s: --listen: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    char default_to[32];
    snprintf(default_to, sizeof default_to, "127.0.0.1:%d", CHUNK_DEFAULT_PORT);
    if (platform_address_parse(relay->to_text ? relay->to_text : default_to, 0, CHUNK_DEFAULT_PORT,
                               &relay->receiver, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --to: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    if (relay->receiver.port == 0)
        app_bad_argument(program, "--to '%s' has port 0: give the receiver's port", relay->to_text);

    if (app_open_listener(program, &relay->listen, &listen_address, dual_stack) != 0) return EXIT_IO;
    platform_address_t upstream_address;
    platform_address_any(&upstream_address, relay->receiver.family, 0);
    if (platform_socket_open(&relay->upstream, &upstream_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", program, err);
        return EXIT_IO;
    }
    platform_socket_local_address(&relay->upstream, &relay->receiver, &relay->upstream_local);
    if (relay->port_file && app_write_port_file(program, relay->port_file, relay->listen.bound.port) != 0)
        return EXIT_IO;
    if (app_capture_open(&relay->capture, program, relay->common.pcap_path) != 0) return EXIT_IO;
    relay->sim = netsim_create(&relay->sim_config);
    if (!relay->sim) return app_out_of_memory(program, EXIT_IO);
    return 0;
}

/* ---- the event loop ---- */

/* Takes every datagram waiting on direction dir's socket into the simulator
 * at now (seconds since start). Returns 0, or -1 on a socket error (printed). */
static int take_arrivals(relay_t *relay, int dir, double now)
{
    platform_socket_t *in = dir == DIR_FORWARD ? &relay->listen : &relay->upstream;
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    for (;;) {
        platform_address_t from;
        int n = platform_socket_receive(in, &from, relay->datagram);
        if (n == -1) return 0;
        if (n == -2) {
            fprintf(stderr, "%s: receive: %s\n", program, strerror(errno));
            return -1;
        }
        if (dir == DIR_FORWARD && !relay->sender_known) {
            relay->sender_known = 1;
            relay->sender = from;
            platform_socket_local_address(&relay->listen, &from, &relay->listen_local);
            cs_log_message(CS_LOG_LEVEL_INFO, "%s: sender is %s", program,
                        platform_address_format(&from, text, sizeof text));
        }
        const platform_address_t *peer = dir == DIR_FORWARD ? &relay->sender : &relay->receiver;
        /* Answers have nowhere to go before the sender is known. */
        if (!platform_address_equal(&from, peer) || !relay->sender_known) {
            relay->foreign_dropped[dir]++;
            cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: dropped %d bytes from %s: not the %s", program, n,
                        platform_address_format(&from, text, sizeof text), dir == DIR_FORWARD ? "sender" : "receiver");
            continue;
        }
        relay->arrived[dir]++;
        relay->last_arrival = now;
        if (capture_on_arrival(relay->capture_at, dir))
            app_capture_record(&relay->capture, peer,
                               dir == DIR_FORWARD ? &relay->listen_local : &relay->upstream_local,
                               relay->datagram, n);
        if (n <= 0 || n > NETSIM_MAX_DATAGRAM) {
            relay->size_dropped[dir]++;
            cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: dropped a datagram of %d bytes: the simulator carries 1..%d",
                        program, n, NETSIM_MAX_DATAGRAM);
            continue;
        }
        netsim_send(relay->sim, dir, now, relay->datagram, n);
    }
}

/* Sends on every datagram the simulator delivers by now. */
static void forward_due(relay_t *relay, double now)
{
    for (int dir = 0; dir < 2; dir++) {
        double delivery;
        int n;
        while ((n = netsim_receive(relay->sim, dir, now, relay->datagram, &delivery)) > 0) {
            platform_socket_t *out = dir == DIR_FORWARD ? &relay->upstream : &relay->listen;
            const platform_address_t *to = dir == DIR_FORWARD ? &relay->receiver : &relay->sender;
            if (platform_socket_send(out, to, relay->datagram, n) != 0) {
                relay->send_errors[dir]++;
                cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: send failed: %s", program, strerror(errno));
                continue;
            }
            relay->forwarded[dir]++;
            relay->bytes_forwarded[dir] += (uint64_t)n;
            if (!capture_on_arrival(relay->capture_at, dir))
                app_capture_record(&relay->capture,
                                   dir == DIR_FORWARD ? &relay->upstream_local : &relay->listen_local, to,
                                   relay->datagram, n);
        }
    }
}

/* Datagrams the simulator dropped in direction dir, for any reason. */
static unsigned long long sim_dropped(const relay_t *relay, int dir)
{
    const uint64_t *c = netsim_counters(relay->sim, dir);
    return (unsigned long long)(c[NETSIM_COUNTER_LOST] + c[NETSIM_COUNTER_QUEUE_DROPPED] +
                                c[NETSIM_COUNTER_FAULT_DROPPED]);
}

static void print_progress(relay_t *relay, double now)
{
    fprintf(stderr, "%s: forward %llu in, %llu out (%llu lost), back %llu in, %llu out (%llu lost), %.1f kB/s forward%s",
            program, (unsigned long long)relay->arrived[0], (unsigned long long)relay->forwarded[0],
            sim_dropped(relay, DIR_FORWARD), (unsigned long long)relay->arrived[1],
            (unsigned long long)relay->forwarded[1], sim_dropped(relay, DIR_BACK),
            relay->bytes_forwarded[0] / now / 1e3, app_progress_end());
    relay->progress_shown = 1;
    relay->next_progress = now + relay->start + 1.0;
}

/* Relays until --timeout, --idle-exit, a signal or a socket error. Returns
 * the exit code and sets *outcome. */
static int run(relay_t *relay, const char **outcome)
{
    int exit_code = EXIT_OK;
    *outcome = "stopped";
    /* The simulator runs on monotonic time since start. */
    relay->start = platform_time();
    relay->last_arrival = -1;
    relay->next_progress = relay->start + 1.0;
    for (;;) {
        double now = platform_time() - relay->start;
        double next = netsim_next_delivery(relay->sim);
        double wait = 0.05;
        if (next >= 0) wait = next - now < 0 ? 0 : next - now < wait ? next - now : wait;
        int fds[2] = {relay->listen.fd, relay->upstream.fd}, readable[2];
        if (app_wait(program, fds, 2, wait, readable, &exit_code, outcome) != 0) return exit_code;
        now = platform_time() - relay->start;
        for (int dir = 0; dir < 2; dir++)
            if (take_arrivals(relay, dir, now) != 0) {
                *outcome = "socket error";
                return EXIT_IO;
            }
        forward_due(relay, now);

        if (relay->timeout > 0 && now >= relay->timeout) {
            *outcome = "timeout reached";
            return exit_code;
        }
        if (relay->idle_exit > 0 && relay->last_arrival >= 0 && now - relay->last_arrival >= relay->idle_exit &&
            netsim_next_delivery(relay->sim) < 0) {
            *outcome = "idle";
            return exit_code;
        }
        if (!relay->common.quiet && relay->last_arrival >= 0 && now + relay->start >= relay->next_progress)
            print_progress(relay, now);
    }
}

static void print_summary(const relay_t *relay, const char *outcome)
{
    char text[PLATFORM_ADDRESS_STRING_SIZE], text2[PLATFORM_ADDRESS_STRING_SIZE];
    app_progress_finish(relay->progress_shown);
    fprintf(stderr, "%s: %s after %.3f s; sender %s, receiver %s, seed %llu\n", program, outcome,
            platform_time() - relay->start,
            relay->sender_known ? platform_address_format(&relay->sender, text, sizeof text) : "never heard",
            platform_address_format(&relay->receiver, text2, sizeof text2),
            (unsigned long long)relay->sim_config.seed);
    for (int dir = 0; dir < 2; dir++) {
        fprintf(stderr,
                "  %s: %llu in, %llu out, %llu from other addresses dropped, %llu bad size dropped, %llu send errors; sim:",
                dir == DIR_FORWARD ? "forward (to receiver)" : "back (to sender)",
                (unsigned long long)relay->arrived[dir], (unsigned long long)relay->forwarded[dir],
                (unsigned long long)relay->foreign_dropped[dir], (unsigned long long)relay->size_dropped[dir],
                (unsigned long long)relay->send_errors[dir]);
        app_print_counters(netsim_counters(relay->sim, dir), NETSIM_COUNTER_COUNT, netsim_counter_name);
    }
    if (relay->common.pcap_path)
        fprintf(stderr, "  pcap: %llu datagrams (capture at %s) in %s\n", (unsigned long long)relay->capture.records,
                capture_names[relay->capture_at], relay->common.pcap_path);
}

int chunk_app_relay_main(int argc, char **argv)
{
    static relay_t relay;
    parse_options(&relay, argc, argv);
    int exit_code = set_up(&relay);
    if (exit_code != 0) return exit_code;
    platform_catch_signals();
    char text[PLATFORM_ADDRESS_STRING_SIZE], text2[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: listening on %s, relaying to %s", program,
                platform_address_format(&relay.listen.bound, text, sizeof text),
                platform_address_format(&relay.receiver, text2, sizeof text2));

    const char *outcome;
    exit_code = run(&relay, &outcome);
    exit_code = app_capture_finish(&relay.capture, program, exit_code);
    if (!relay.common.quiet || exit_code != EXIT_OK) print_summary(&relay, outcome);
    netsim_destroy(relay.sim);
    platform_socket_close(&relay.listen);
    platform_socket_close(&relay.upstream);
    return exit_code;
}
