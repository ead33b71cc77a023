/* chunk-relay: a UDP relay between a chunk sender and a chunk receiver that
 * puts real traffic through the network simulator (chunk_sim_*) in real time:
 * loss, latency, jitter, duplicates, reordering, bandwidth and the faults,
 * since kernel netem is not available everywhere. See --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "app.h"
#include "chunk-app.h"
#include "udplink.h"
#include "platform.h"
#include "util.h"
#include "netsim.h"

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2 };
enum { DIR_FORWARD = 0, DIR_BACK = 1 }; /* toward the receiver / toward the sender */
enum { CAPTURE_SENDER, CAPTURE_RECEIVER, CAPTURE_IN, CAPTURE_OUT };
static const char *capture_names[] = {"sender", "receiver", "in", "out"};

static const char *program = "chunk-relay";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: chunk-relay [options]\n"
            "\n"
            "Listens for a chunk sender on --listen and relays its datagrams to the receiver\n"
            "at --to, and the receiver's answers back, through the network simulator in real\n"
            "time. Point chunk-send at the relay and the relay at chunk-recv:\n"
            "  chunk-recv -p 40000 out.bin &\n"
            "  chunk-relay --listen 40001 --to 127.0.0.1:40000 --loss 20%% --latency 25ms &\n"
            "  chunk-send 127.0.0.1:40001 in.bin\n"
            "The first address that sends to --listen is the sender; datagrams from any other\n"
            "address, and datagrams to the relay's receiver-side socket from anyone but the\n"
            "receiver, are dropped and counted.\n"
            "\n"
            "options:\n"
            "  -l, --listen [ADDR:]PORT  where the sender sends to (default all addresses, port 40001;\n"
            "                            port 0 picks a free port)\n"
            "  -T, --to HOST[:PORT]      the receiver (default 127.0.0.1:%d)\n"
            "      --port-file FILE      write the listening port to FILE once bound (for scripts)\n"
            "\n"
            "impairments (each also as --NAME-ab for sender to receiver only, and --NAME-ba\n"
            "for receiver to sender only, as in chunk-sim):\n"
            "      --loss P              probability a datagram is lost (0.2 or 20%%)\n"
            "      --latency SEC         one-way delay (0.05 or 50ms)\n"
            "      --jitter SEC          up to +- this much added to the delay, uniform\n"
            "      --duplicate P         probability a datagram is delivered twice\n"
            "      --reorder P           probability a datagram is held back --reorder-delay\n"
            "      --reorder-delay SEC   (default 0.05)\n"
            "      --bandwidth RATE      link rate with IP/UDP overhead, e.g. 1Mbit (default unlimited)\n"
            "      --queue BYTES         router buffer in front of the bandwidth cap (default 64K)\n"
            "      --drop-acks           fault: drop every ack\n"
            "      --drop-slice N        fault: drop every slice packet with slice id N\n"
            "      --seed N              simulator seed (default 1): the same seed draws the same\n"
            "                            losses for the same sequence of datagrams\n"
            "      --slice-size N, --max-slices N, --protocol-id N\n"
            "                            wire constants, to recognise packets for the faults\n"
            "                            (defaults %d, %d, 0x%08X)\n"
            "\n"
            "  -t, --timeout SEC         stop after SEC seconds (default: run until interrupted)\n"
            "      --idle-exit SEC       stop once traffic has started and nothing arrived for SEC\n"
            "  -w, --pcap FILE           write what crosses the relay to FILE\n"
            "      --capture-at WHERE    which datagrams go in the pcap, with real addresses:\n"
            "                            sender: the sender's leg, as chunk-send sees it (slices\n"
            "                              before the impairments, acks after), one UDP conversation\n"
            "                              between the sender and the relay (the default)\n"
            "                            receiver: the receiver's leg, as chunk-recv sees it (slices\n"
            "                              after, acks before), one conversation\n"
            "                            in: both directions as they arrive at the relay (before the\n"
            "                              impairments); out: both as the relay sends them on. These two\n"
            "                              span both legs, so slices and acks are in different UDP\n"
            "                              conversations and a dissector cannot pair them\n"
            "  -q, --quiet               no progress line, and no summary unless it fails\n"
            "  -v, --verbose             log more (-v info, -vv debug)\n"
            "  -h, --help                this text\n"
            "\n"
            "Datagrams that are empty or larger than %d bytes are dropped and counted.\n"
            "exit status: 0 stopped by --timeout or --idle-exit; 1 I/O error; 2 bad arguments;\n"
            "128+N stopped by signal N (SIGINT: 130), after the summary.\n",
            CHUNK_DEFAULT_PORT, CHUNK_DEFAULT_SLICE_SIZE, CHUNK_DEFAULT_MAX_SLICES, CHUNK_DEFAULT_PROTOCOL_ID,
            CHUNK_MAX_PACKET_BYTES);
}

/* Kinds of per-direction option values. */
enum { VALUE_PROBABILITY, VALUE_SECONDS, VALUE_RATE, VALUE_BYTES };

static int parse_one(int kind, const char *text, double *out)
{
    long long bytes;
    switch (kind) {
    case VALUE_PROBABILITY: return platform_parse_probability(text, out);
    case VALUE_SECONDS: return platform_parse_seconds(text, 3600, out);
    case VALUE_RATE: return platform_parse_rate(text, out);
    default:
        if (platform_parse_bytes(text, 1LL << 40, &bytes) != 0) return -1;
        *out = (double)bytes;
        return 0;
    }
}

/* The link options, each also as NAME-ab (sender to receiver only) and
 * NAME-ba (receiver to sender only), as in chunk-sim. */
static const struct {
    const char *name;
    int kind;
    size_t offset; /* of the double or int in netsim_link_config_t */
} link_options[] = {
    {"loss", VALUE_PROBABILITY, offsetof(netsim_link_config_t, loss)},
    {"latency", VALUE_SECONDS, offsetof(netsim_link_config_t, latency)},
    {"jitter", VALUE_SECONDS, offsetof(netsim_link_config_t, jitter)},
    {"duplicate", VALUE_PROBABILITY, offsetof(netsim_link_config_t, duplicate)},
    {"reorder", VALUE_PROBABILITY, offsetof(netsim_link_config_t, reorder)},
    {"reorder-delay", VALUE_SECONDS, offsetof(netsim_link_config_t, reorder_delay)},
    {"bandwidth", VALUE_RATE, offsetof(netsim_link_config_t, bandwidth)},
    {"queue", VALUE_BYTES, offsetof(netsim_link_config_t, queue_bytes)},
};
#define LINK_OPTION_COUNT (int)(sizeof link_options / sizeof link_options[0])
#define OPT_LINK_BASE 1000 /* getopt value: OPT_LINK_BASE + 3 * option + (0 both, 1 ab, 2 ba) */

static const char *link_value_help[] = {
    "a probability, 0.2 or 20%", "seconds, 0.05 or 50ms", "a rate, 125000, 125kB or 1Mbit",
    "bytes, 65536 or 64K (at most 1G)",
};

/* Sets link option `index` from text on the directions `variant` selects.
 * Returns 0, or -1 when text is not a valid value. */
static int set_link_option(netsim_config_t *config, int index, int variant, const char *text)
{
    double value;
    if (parse_one(link_options[index].kind, text, &value) != 0) return -1;
    if (link_options[index].kind == VALUE_BYTES && value > (double)(1 << 30)) return -1;
    for (int dir = 0; dir < 2; dir++) {
        if ((variant == 1 && dir != 0) || (variant == 2 && dir != 1)) continue;
        char *field = (char *)&config->link[dir] + link_options[index].offset;
        if (link_options[index].kind == VALUE_BYTES)
            *(int *)field = (int)value;
        else
            *(double *)field = value;
    }
    return 0;
}

typedef struct relay_t {
    platform_socket_t listen;   /* faces the sender */
    platform_socket_t upstream; /* faces the receiver */
    int sender_known;
    platform_address_t sender, receiver;
    platform_address_t listen_local;   /* listen socket's address as the sender sees it */
    platform_address_t upstream_local; /* upstream socket's address as the receiver sees it */
    app_capture_t capture;
    int capture_at; /* CAPTURE_* */
    uint64_t arrived[2], forwarded[2], foreign_dropped[2], size_dropped[2], send_errors[2];
    uint64_t bytes_forwarded[2];
} relay_t;

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

int main(int argc, char **argv)
{
    netsim_config_t sim_config;
    netsim_default_config(&sim_config);
    chunk_faults_t faults; /* chunk packets the network drops on purpose */
    chunk_faults_default(&faults);
    const char *listen_text = "40001", *to_text = NULL, *pcap_path = NULL, *port_file = NULL;
    double timeout = 0, idle_exit = 0;
    int quiet = 0, verbosity = 0;
    long long value;
    relay_t relay;
    memset(&relay, 0, sizeof relay);

    enum { OPT_PORTFILE = 256, OPT_DROP_ACKS, OPT_DROP_SLICE, OPT_SEED, OPT_IDLE, OPT_AT };
    static const struct option fixed_options[] = {
        {"listen", required_argument, NULL, 'l'},
        {"to", required_argument, NULL, 'T'},
        {"port-file", required_argument, NULL, OPT_PORTFILE},
        {"drop-acks", no_argument, NULL, OPT_DROP_ACKS},
        {"drop-slice", required_argument, NULL, OPT_DROP_SLICE},
        {"drop-slice-id", required_argument, NULL, OPT_DROP_SLICE},
        {"seed", required_argument, NULL, OPT_SEED},
        {"slice-size", required_argument, NULL, CHUNK_OPT_SLICE_SIZE},
        {"max-slices", required_argument, NULL, CHUNK_OPT_MAX_SLICES},
        {"protocol-id", required_argument, NULL, CHUNK_OPT_PROTOCOL_ID},
        {"timeout", required_argument, NULL, 't'},
        {"idle-exit", required_argument, NULL, OPT_IDLE},
        {"pcap", required_argument, NULL, 'w'},
        {"capture-at", required_argument, NULL, OPT_AT},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    enum { FIXED_OPTION_COUNT = sizeof fixed_options / sizeof fixed_options[0] - 1 };
    struct option options[FIXED_OPTION_COUNT + 3 * LINK_OPTION_COUNT + 1];
    char link_names[3 * LINK_OPTION_COUNT][32];
    memcpy(options, fixed_options, sizeof(struct option) * FIXED_OPTION_COUNT);
    for (int i = 0; i < 3 * LINK_OPTION_COUNT; i++) {
        snprintf(link_names[i], sizeof link_names[i], "%s%s", link_options[i / 3].name,
                 i % 3 == 0 ? "" : i % 3 == 1 ? "-ab" : "-ba");
        options[FIXED_OPTION_COUNT + i] = (struct option){link_names[i], required_argument, NULL, OPT_LINK_BASE + i};
    }
    options[FIXED_OPTION_COUNT + 3 * LINK_OPTION_COUNT] = (struct option){NULL, 0, NULL, 0};
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":l:T:t:w:qvh", options, NULL)) != -1) {
        switch (opt) {
        case 'l': listen_text = optarg; break;
        case 'T': to_text = optarg; break;
        case OPT_PORTFILE: port_file = optarg; break;
        case OPT_DROP_ACKS: faults.drop_acks[DIR_FORWARD] = faults.drop_acks[DIR_BACK] = 1; break;
        case OPT_DROP_SLICE:
            if (platform_parse_int(optarg, 0, CHUNK_MAX_SLICES_LIMIT - 1, &value) != 0)
                app_bad_argument(program, "bad --drop-slice '%s': expected a slice id, 0..1023", optarg);
            faults.drop_slice_id[DIR_FORWARD] = faults.drop_slice_id[DIR_BACK] = (int)value;
            break;
        case OPT_SEED:
            if (platform_parse_int(optarg, 0, INT64_MAX, &value) != 0)
                app_bad_argument(program, "bad --seed '%s': expected a non-negative integer", optarg);
            sim_config.seed = (uint64_t)value;
            break;
        case CHUNK_OPT_SLICE_SIZE:
        case CHUNK_OPT_MAX_SLICES:
        case CHUNK_OPT_PROTOCOL_ID:
            chunk_app_wire_option(program, opt, optarg, &faults.wire, NULL);
            break;
        case 't':
            if (platform_parse_seconds(optarg, 1e9, &timeout) != 0)
                app_bad_argument(program, "bad --timeout '%s': expected seconds", optarg);
            break;
        case OPT_IDLE:
            if (platform_parse_seconds(optarg, 1e9, &idle_exit) != 0)
                app_bad_argument(program, "bad --idle-exit '%s': expected seconds", optarg);
            break;
        case 'w': pcap_path = optarg; break;
        case OPT_AT:
            relay.capture_at = -1;
            for (int i = 0; i < 4; i++)
                if (strcmp(optarg, capture_names[i]) == 0) relay.capture_at = i;
            if (relay.capture_at < 0)
                app_bad_argument(program, "bad --capture-at '%s': expected sender, receiver, in or out", optarg);
            break;
        case 'q': quiet = 1; break;
        case 'v': verbosity++; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]); break;
        default:
            if (opt >= OPT_LINK_BASE && opt < OPT_LINK_BASE + 3 * LINK_OPTION_COUNT) {
                int index = (opt - OPT_LINK_BASE) / 3;
                if (set_link_option(&sim_config, index, (opt - OPT_LINK_BASE) % 3, optarg) != 0) {
                    fprintf(stderr, "%s: bad --%s '%s': expected %s (try --help)\n", program,
                            link_names[opt - OPT_LINK_BASE], optarg, link_value_help[link_options[index].kind]);
                    return EXIT_USAGE;
                }
                break;
            }
            app_bad_argument(program, "unknown option '%s'", argv[optind - 1]);
            break;
        }
    }
    if (optind < argc) app_bad_argument(program, "unexpected argument '%s'", argv[optind]);
    if (faults.drop_slice_id[DIR_FORWARD] >= faults.wire.max_slices)
        app_bad_argument(program, "--drop-slice is not below --max-slices%s", "");
    app_set_verbosity(verbosity);

    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE], text2[PLATFORM_ADDRESS_STRING_SIZE];
    /* --listen: "PORT" alone, or ADDR:PORT / [ADDR]:PORT. */
    platform_address_t listen_address;
    uint16_t port;
    int dual_stack = 0;
    if (platform_parse_port(listen_text, &port) == 0) {
        platform_address_any(&listen_address, 6, port);
        dual_stack = 1;
    } else if (platform_address_parse(listen_text, 0, 40001, &listen_address, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --listen: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    char default_to[32];
    snprintf(default_to, sizeof default_to, "127.0.0.1:%d", CHUNK_DEFAULT_PORT);
    if (platform_address_parse(to_text ? to_text : default_to, 0, CHUNK_DEFAULT_PORT, &relay.receiver, err,
                            sizeof err) != 0) {
        fprintf(stderr, "%s: --to: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    if (relay.receiver.port == 0) app_bad_argument(program, "--to '%s' has port 0: give the receiver's port",
                                                         to_text);

    if (app_open_listener(program, &relay.listen, &listen_address, dual_stack) != 0) return EXIT_IO;
    platform_address_t upstream_address;
    platform_address_any(&upstream_address, relay.receiver.family, 0);
    if (platform_socket_open(&relay.upstream, &upstream_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", program, err);
        return EXIT_IO;
    }
    platform_socket_local_address(&relay.upstream, &relay.receiver, &relay.upstream_local);
    if (port_file && app_write_port_file(program, port_file, relay.listen.bound.port) != 0) return EXIT_IO;
    if (app_capture_open(&relay.capture, program, pcap_path) != 0) return EXIT_IO;
    if (chunk_faults_any(&faults)) {
        sim_config.filter = chunk_faults_filter;
        sim_config.filter_context = &faults;
    }
    netsim_t *sim = netsim_create(&sim_config);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!sim || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    log_message(LOG_LEVEL_INFO, "%s: listening on %s, relaying to %s", program,
              platform_address_format(&relay.listen.bound, text, sizeof text),
              platform_address_format(&relay.receiver, text2, sizeof text2));

    /* The simulator runs on monotonic time since start. */
    double start = platform_time(), last_arrival = -1, next_progress = start + 1.0;
    int exit_code = EXIT_OK, progress_shown = 0;
    const char *outcome = "stopped";
    platform_socket_t *in_socket[2] = {&relay.listen, &relay.upstream};

    for (;;) {
        double now = platform_time() - start;
        double next = netsim_next_delivery(sim);
        double wait = 0.05;
        if (next >= 0) wait = next - now < 0 ? 0 : next - now < wait ? next - now : wait;
        int fds[2] = {relay.listen.fd, relay.upstream.fd}, readable[2];
        if (app_wait(program, fds, 2, wait, readable, &exit_code, &outcome) != 0) break;
        now = platform_time() - start;

        for (int dir = 0; dir < 2; dir++) {
            for (;;) {
                platform_address_t from;
                int n = platform_socket_receive(in_socket[dir], &from, datagram);
                if (n == -1) break;
                if (n == -2) {
                    fprintf(stderr, "%s: receive: %s\n", program, strerror(errno));
                    exit_code = EXIT_IO;
                    outcome = "socket error";
                    goto done;
                }
                if (dir == DIR_FORWARD && !relay.sender_known) {
                    relay.sender_known = 1;
                    relay.sender = from;
                    platform_socket_local_address(&relay.listen, &from, &relay.listen_local);
                    log_message(LOG_LEVEL_INFO, "%s: sender is %s", program, platform_address_format(&from, text, sizeof text));
                }
                const platform_address_t *peer = dir == DIR_FORWARD ? &relay.sender : &relay.receiver;
                /* Answers have nowhere to go before the sender is known. */
                if (!platform_address_equal(&from, peer) || !relay.sender_known) {
                    relay.foreign_dropped[dir]++;
                    log_message(LOG_LEVEL_DEBUG, "%s: dropped %d bytes from %s: not the %s", program, n,
                              platform_address_format(&from, text, sizeof text), dir == DIR_FORWARD ? "sender" : "receiver");
                    continue;
                }
                relay.arrived[dir]++;
                last_arrival = now;
                if (capture_on_arrival(relay.capture_at, dir))
                    app_capture_record(&relay.capture, peer,
                                         dir == DIR_FORWARD ? &relay.listen_local : &relay.upstream_local, datagram, n);
                if (n <= 0 || n > CHUNK_MAX_PACKET_BYTES) {
                    /* The simulator carries only what a chunk packet can be. */
                    relay.size_dropped[dir]++;
                    log_message(LOG_LEVEL_DEBUG, "%s: dropped a datagram of %d bytes: no chunk packet is that size", program, n);
                    continue;
                }
                netsim_send(sim, dir, now, datagram, n);
            }
        }

        for (int dir = 0; dir < 2; dir++) {
            double delivery;
            int n;
            while ((n = netsim_receive(sim, dir, now, datagram, &delivery)) > 0) {
                platform_socket_t *out = dir == DIR_FORWARD ? &relay.upstream : &relay.listen;
                const platform_address_t *to = dir == DIR_FORWARD ? &relay.receiver : &relay.sender;
                if (platform_socket_send(out, to, datagram, n) != 0) {
                    relay.send_errors[dir]++;
                    log_message(LOG_LEVEL_DEBUG, "%s: send failed: %s", program, strerror(errno));
                    continue;
                }
                relay.forwarded[dir]++;
                relay.bytes_forwarded[dir] += (uint64_t)n;
                if (!capture_on_arrival(relay.capture_at, dir))
                    app_capture_record(&relay.capture, dir == DIR_FORWARD ? &relay.upstream_local : &relay.listen_local,
                                         to, datagram, n);
            }
        }

        if (timeout > 0 && now >= timeout) {
            outcome = "timeout reached";
            break;
        }
        if (idle_exit > 0 && last_arrival >= 0 && now - last_arrival >= idle_exit && netsim_next_delivery(sim) < 0) {
            outcome = "idle";
            break;
        }
        if (!quiet && last_arrival >= 0 && now + start >= next_progress) {
            const uint64_t *c0 = netsim_counters(sim, DIR_FORWARD), *c1 = netsim_counters(sim, DIR_BACK);
            fprintf(stderr,
                    "%s: forward %llu in, %llu out (%llu lost), back %llu in, %llu out (%llu lost), %.1f kB/s forward%s",
                    program, (unsigned long long)relay.arrived[0], (unsigned long long)relay.forwarded[0],
                    (unsigned long long)(c0[NETSIM_COUNTER_LOST] + c0[NETSIM_COUNTER_QUEUE_DROPPED] +
                                         c0[NETSIM_COUNTER_FAULT_DROPPED]),
                    (unsigned long long)relay.arrived[1], (unsigned long long)relay.forwarded[1],
                    (unsigned long long)(c1[NETSIM_COUNTER_LOST] + c1[NETSIM_COUNTER_QUEUE_DROPPED] +
                                         c1[NETSIM_COUNTER_FAULT_DROPPED]),
                    relay.bytes_forwarded[0] / now / 1e3, app_progress_end());
            progress_shown = 1;
            next_progress = now + start + 1.0;
        }
    }
done:;
    exit_code = app_capture_finish(&relay.capture, program, exit_code);
    if (!quiet || exit_code != EXIT_OK) {
        app_progress_finish(progress_shown);
        fprintf(stderr, "%s: %s after %.3f s; sender %s, receiver %s, seed %llu\n", program, outcome,
                platform_time() - start,
                relay.sender_known ? platform_address_format(&relay.sender, text, sizeof text) : "never heard",
                platform_address_format(&relay.receiver, text2, sizeof text2), (unsigned long long)sim_config.seed);
        for (int dir = 0; dir < 2; dir++) {
            const uint64_t *c = netsim_counters(sim, dir);
            fprintf(stderr, "  %s: %llu in, %llu out, %llu from other addresses dropped, %llu bad size dropped, %llu send errors; sim:",
                    dir == DIR_FORWARD ? "forward (to receiver)" : "back (to sender)",
                    (unsigned long long)relay.arrived[dir], (unsigned long long)relay.forwarded[dir],
                    (unsigned long long)relay.foreign_dropped[dir], (unsigned long long)relay.size_dropped[dir],
                    (unsigned long long)relay.send_errors[dir]);
            app_print_counters(c, NETSIM_COUNTER_COUNT, netsim_counter_name);
        }
        if (pcap_path)
            fprintf(stderr, "  pcap: %llu datagrams (capture at %s) in %s\n", (unsigned long long)relay.capture.records,
                    capture_names[relay.capture_at], pcap_path);
    }
    netsim_destroy(sim);
    platform_socket_close(&relay.listen);
    platform_socket_close(&relay.upstream);
    free(datagram);
    return exit_code;
}
