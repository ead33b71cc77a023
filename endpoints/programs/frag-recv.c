/* frag-recv: receives fragmented packets over real UDP with the reference
 * reassembling receiver (frag_receiver_*) and writes every packet it
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
#include "frag.h"
#include "platform.h"
#include "sha256.h"
#include "udplink.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2, EXIT_INCOMPLETE = 3 };

static const char *program = "frag-recv";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: frag-recv [options] [FILE]\n"
            "\n"
            "Receives fragmented packets from one sender (frag-send) over UDP, reassembles\n"
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
            CHUNK_DEFAULT_PORT, FRAG_DEFAULT_PROTOCOL_ID);
}

typedef struct output_t {
    int fd;
    FILE *manifest;
    long long packets, bytes;
    int failed;
} output_t;

static void on_deliver(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes, int fragmented)
{
    (void)time, (void)fragmented;
    output_t *out = context;
    if (out->failed) return;
    for (int done = 0; done < bytes;) {
        ssize_t n = write(out->fd, packet + done, (size_t)(bytes - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            out->failed = 1;
            return;
        }
        done += (int)n;
    }
    if (out->manifest) {
        char digest[65];
        cs_sha256_hex(packet, (size_t)bytes, digest);
        fprintf(out->manifest, "%u %d %s\n", sequence, bytes, digest);
    }
    out->packets++;
    out->bytes += bytes;
}

int main(int argc, char **argv)
{
    frag_receiver_config_t config;
    frag_receiver_default_config(&config);
    double timeout = 0, idle_timeout = 2;
    long long want_packets = -1, value;
    const char *bind_text = NULL, *port_file = NULL, *manifest_path = NULL;
    app_common_options_t common = {NULL, 0, 0};
    int family = 0, port_given = 0;
    uint16_t port = CHUNK_DEFAULT_PORT;

    enum { OPT_PORTFILE = 256, OPT_IDLE, OPT_MAXFRAG, OPT_PROTOCOL, OPT_MANIFEST };
    static const struct option options[] = {
        {"port", required_argument, NULL, 'p'},
        {"bind", required_argument, NULL, 'b'},
        {"port-file", required_argument, NULL, OPT_PORTFILE},
        {"packets", required_argument, NULL, 'n'},
        {"idle-timeout", required_argument, NULL, OPT_IDLE},
        {"timeout", required_argument, NULL, 't'},
        {"max-fragments", required_argument, NULL, OPT_MAXFRAG},
        {"protocol-id", required_argument, NULL, OPT_PROTOCOL},
        {"manifest", required_argument, NULL, OPT_MANIFEST},
        APP_COMMON_LONG_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":p:b:n:t:w:46qvh", options, NULL)) != -1) {
        if (app_common_option(&common, opt, optarg)) continue;
        switch (opt) {
        case 'p':
            if (platform_parse_port(optarg, &port) != 0)
                app_bad_argument(program, "bad --port '%s': expected 0..65535", optarg);
            port_given = 1;
            break;
        case 'b': bind_text = optarg; break;
        case OPT_PORTFILE: port_file = optarg; break;
        case 'n':
            if (platform_parse_int(optarg, 1, (long long)1 << 48, &want_packets) != 0)
                app_bad_argument(program, "bad --packets '%s': expected a count >= 1", optarg);
            break;
        case OPT_IDLE:
            if (platform_parse_seconds(optarg, 1e9, &idle_timeout) != 0)
                app_bad_argument(program, "bad --idle-timeout '%s': expected seconds", optarg);
            break;
        case 't':
            if (platform_parse_seconds(optarg, 1e9, &timeout) != 0)
                app_bad_argument(program, "bad --timeout '%s': expected seconds", optarg);
            break;
        case OPT_MAXFRAG:
            if (platform_parse_int(optarg, 1, FRAG_MAX_FRAGMENTS, &value) != 0)
                app_bad_argument(program, "bad --max-fragments '%s': expected 1..255", optarg);
            config.max_fragments = (int)value;
            break;
        case OPT_PROTOCOL:
            if (platform_parse_int(optarg, 0, 0xffffffffLL, &value) != 0)
                app_bad_argument(program, "bad --protocol-id '%s': expected 0..0xffffffff", optarg);
            config.wire.protocol_id = (uint32_t)value;
            break;
        case OPT_MANIFEST: manifest_path = optarg; break;
        case '4': family = 4; break;
        case '6': family = 6; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]); break;
        default: app_bad_argument(program, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (argc - optind > 1) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 1]);
    const char *output_path = optind < argc ? argv[optind] : "-";
    app_set_verbosity(common.verbosity);
    cs_log_set_name("frag");

    char text[PLATFORM_ADDRESS_STRING_SIZE];
    udp_link_t link;
    memset(&link, 0, sizeof link);
    link.program = program;
    int listening = app_listen(program, &link.socket, bind_text, family, port, port_given, port_file);
    if (listening != APP_LISTEN_OK) return listening == APP_LISTEN_USAGE ? EXIT_USAGE : EXIT_IO;

    output_t output = {1, NULL, 0, 0, 0};
    if (strcmp(output_path, "-") != 0) {
        output.fd = open(output_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (output.fd < 0) {
            fprintf(stderr, "%s: cannot create %s: %s\n", program, output_path, strerror(errno));
            return EXIT_IO;
        }
    }
    if (manifest_path && !(output.manifest = fopen(manifest_path, "w"))) {
        fprintf(stderr, "%s: cannot write %s: %s\n", program, manifest_path, strerror(errno));
        return EXIT_IO;
    }
    if (app_capture_open(&link.capture, program, common.pcap_path) != 0) return EXIT_IO;

    config.deliver = on_deliver;
    config.context = &output;
    frag_receiver_t *receiver = frag_receiver_create(&config);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!receiver || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: listening on %s", program,
                platform_address_format(&link.socket.bound, text, sizeof text));

    const uint64_t *counters = frag_receiver_counters(receiver);
    double start = platform_time(), first_heard = -1, last_heard = 0, next_progress = start + 1.0;
    int exit_code = EXIT_OK, progress_shown = 0;
    const char *outcome = NULL;
    for (;;) {
        int readable;
        if (app_wait(program, &link.socket.fd, 1, 0.005, &readable, &exit_code, &outcome) != 0) break;
        double now = platform_time();
        for (;;) {
            platform_address_t from;
            int n = udp_link_receive(&link, &from, datagram);
            if (n == -1) break;
            if (n == -2) {
                fprintf(stderr, "%s: receive: %s\n", program, strerror(errno));
                exit_code = EXIT_IO;
                outcome = "socket error";
                goto done;
            }
            if (!link.peer_known) {
                /* Lock onto the first sender whose datagram the format accepts. */
                frag_packet_t packet;
                packet.regular = NULL;
                if (frag_read_packet(&config.wire, datagram, n, &packet) == FRAG_READ_OK) {
                    link.peer_known = 1;
                    link.peer = from;
                    platform_socket_local_address(&link.socket, &from, &link.local);
                    first_heard = now;
                    cs_log_message(CS_LOG_LEVEL_INFO, "%s: receiving from %s", program,
                                platform_address_format(&from, text, sizeof text));
                }
            }
            if (!udp_link_accept(&link, &from, datagram, n,
                                 link.peer_known ? "not the sender locked onto" : "not a valid fragment packet"))
                continue;
            last_heard = now;
            frag_verdict_t verdict = frag_receiver_receive_packet(receiver, now, datagram, n);
            if (verdict != FRAG_VERDICT_ACCEPTED && verdict != FRAG_VERDICT_DELIVERED)
                cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: dropped %d bytes: %s", program, n, frag_verdict_name(verdict));
        }
        if (output.failed) {
            fprintf(stderr, "%s: writing %s: %s\n", program, output_path, strerror(errno));
            exit_code = EXIT_IO;
            outcome = "output error";
            break;
        }
        if (want_packets > 0 && output.packets >= want_packets) {
            outcome = "done";
            break;
        }
        if (idle_timeout > 0 && first_heard >= 0 && now - last_heard >= idle_timeout) {
            exit_code = want_packets > 0 ? EXIT_INCOMPLETE : EXIT_OK;
            outcome = want_packets > 0 ? "idle timeout before --packets were delivered" : "done (sender idle)";
            break;
        }
        if (timeout > 0 && now - start >= timeout) {
            exit_code = EXIT_INCOMPLETE;
            outcome = "timeout";
            break;
        }
        if (!common.quiet && first_heard >= 0 && now >= next_progress) {
            fprintf(stderr, "%s: %lld packets (%lld bytes) delivered, %llu datagrams, %llu fragments accepted%s", program,
                    output.packets, output.bytes, (unsigned long long)counters[FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED],
                    (unsigned long long)counters[FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED], app_progress_end());
            progress_shown = 1;
            next_progress = now + 1.0;
        }
    }
done:;
    double busy = first_heard >= 0 ? last_heard - first_heard : 0;
    exit_code = app_capture_finish(&link.capture, program, exit_code);
    if (output.fd != 1 && close(output.fd) != 0 && exit_code == EXIT_OK) exit_code = EXIT_IO;
    if (output.manifest && fclose(output.manifest) != 0) {
        fprintf(stderr, "%s: error writing %s\n", program, manifest_path);
        if (exit_code == EXIT_OK) exit_code = EXIT_IO;
    }
    if (!common.quiet || exit_code != EXIT_OK) {
        app_progress_finish(progress_shown);
        fprintf(stderr, "%s: %s: %lld packets (%lld bytes) delivered from %s in %.3f s; %d unfinished at the end (lost)\n",
                program, outcome ? outcome : "stopped", output.packets, output.bytes,
                link.peer_known ? platform_address_format(&link.peer, text, sizeof text) : "nobody", busy,
                frag_receiver_in_progress(receiver));
        udp_link_print_datagrams(&link);
        fprintf(stderr, "  receiver:");
        app_print_counters(counters, FRAG_RECEIVER_COUNTER_COUNT, frag_receiver_counter_name);
        const uint64_t *invalid = frag_receiver_invalid_counters(receiver);
        int any = 0;
        for (int i = 1; i < FRAG_READ_RESULT_COUNT; i++)
            if (invalid[i]) {
                fprintf(stderr, "%s %s %llu", any ? "," : "  invalid:", frag_read_result_name((frag_read_result_t)i),
                        (unsigned long long)invalid[i]);
                any = 1;
            }
        if (any) fprintf(stderr, "\n");
        app_capture_print(&link.capture);
    }
    frag_receiver_destroy(receiver);
    platform_socket_close(&link.socket);
    free(datagram);
    return exit_code;
}
