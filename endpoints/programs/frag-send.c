/* frag-send: sends a file over real UDP as fragmented packets with the
 * reference fragmenting sender (frag_sender_*): the file is cut into packets
 * of --packet-size bytes, each split into fragments of up to 1024 bytes,
 * paced at --rate. Nothing is resent (the protocol has no acks): a lost
 * fragment loses its packet, and frag-recv says which. See --help. */
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

enum { EXIT_OK = 0, EXIT_IO = 1, EXIT_USAGE = 2 };

static const char *program = "frag-send";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: frag-send [options] HOST[:PORT] [FILE]\n"
            "\n"
            "Sends FILE (default: stdin, also '-') to a fragment receiver (frag-recv) at\n"
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
            FRAG_DEFAULT_PROTOCOL_ID, CHUNK_DEFAULT_PORT, FRAG_MAX_PACKET_BYTES, FRAG_DEFAULT_PROTOCOL_ID);
}

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

int main(int argc, char **argv)
{
    frag_sender_config_t config;
    frag_sender_default_config(&config);
    config.rate_bytes_per_second = 1000000;
    long long packet_size = 4096, value;
    const char *bind_text = NULL, *manifest_path = NULL;
    app_common_options_t common = {NULL, 0, 0};
    int family = 0;

    enum { OPT_INTERLEAVE = 256, OPT_FIRST, OPT_PROTOCOL, OPT_MANIFEST };
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
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":s:r:b:w:46qvh", options, NULL)) != -1) {
        if (app_common_option(&common, opt, optarg)) continue;
        switch (opt) {
        case 's':
            if (platform_parse_bytes(optarg, FRAG_MAX_PACKET_BYTES, &packet_size) != 0 || packet_size < 1)
                app_bad_argument(program, "bad --packet-size '%s': expected 1..261120 bytes", optarg);
            break;
        case 'r':
            if (platform_parse_rate(optarg, &config.rate_bytes_per_second) != 0)
                app_bad_argument(program, "bad --rate '%s': expected bytes/s, e.g. 125kB or 8Mbit", optarg);
            break;
        case OPT_INTERLEAVE:
            if (platform_parse_int(optarg, 1, 64, &value) != 0)
                app_bad_argument(program, "bad --interleave '%s': expected 1..64", optarg);
            config.interleave = (int)value;
            break;
        case OPT_FIRST:
            if (platform_parse_int(optarg, 0, 65535, &value) != 0)
                app_bad_argument(program, "bad --first-sequence '%s': expected 0..65535", optarg);
            config.first_sequence = (uint16_t)value;
            break;
        case OPT_PROTOCOL:
            if (platform_parse_int(optarg, 0, 0xffffffffLL, &value) != 0)
                app_bad_argument(program, "bad --protocol-id '%s': expected 0..0xffffffff", optarg);
            config.wire.protocol_id = (uint32_t)value;
            break;
        case OPT_MANIFEST: manifest_path = optarg; break;
        case 'b': bind_text = optarg; break;
        case '4': family = 4; break;
        case '6': family = 6; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]); break;
        default: app_bad_argument(program, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (optind >= argc) app_bad_argument(program, "%s", "no receiver given: frag-send HOST[:PORT] [FILE]");
    if (argc - optind > 2) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 2]);
    const char *host_text = argv[optind];
    const char *input_path = optind + 1 < argc ? argv[optind + 1] : "-";
    app_set_verbosity(common.verbosity);
    cs_log_set_name("frag");

    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    udp_link_t link;
    memset(&link, 0, sizeof link);
    link.program = program;
    link.peer_known = 1; /* the receiver, given on the command line */
    if (platform_address_parse(host_text, family, CHUNK_DEFAULT_PORT, &link.peer, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    if (link.peer.port == 0) app_bad_argument(program, "receiver port 0 in '%s': give the port it listens on", host_text);
    platform_address_t bind_address;
    platform_address_any(&bind_address, link.peer.family, 0);
    if (bind_text && platform_address_parse(bind_text, link.peer.family, 0, &bind_address, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --bind: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    int input_fd = 0;
    if (strcmp(input_path, "-") != 0) {
        input_fd = open(input_path, O_RDONLY);
        if (input_fd < 0) {
            fprintf(stderr, "%s: cannot open %s: %s\n", program, input_path, strerror(errno));
            return EXIT_IO;
        }
    }
    FILE *manifest = NULL;
    if (manifest_path && !(manifest = fopen(manifest_path, "w"))) {
        fprintf(stderr, "%s: cannot write %s: %s\n", program, manifest_path, strerror(errno));
        return EXIT_IO;
    }
    if (platform_socket_open(&link.socket, &bind_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", program, err);
        return EXIT_IO;
    }
    platform_socket_local_address(&link.socket, &link.peer, &link.local);
    if (app_capture_open(&link.capture, program, common.pcap_path) != 0) return EXIT_IO;

    /* The loop wakes about every millisecond: bank 10 ms of budget, so that
     * the rate, not the wake-ups, sets the pace. */
    config.max_burst_bytes = config.rate_bytes_per_second * 0.01;
    config.send = udp_link_send;
    config.context = &link;
    frag_sender_t *sender = frag_sender_create(&config);
    uint8_t *packet = malloc((size_t)packet_size);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!sender || !packet || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    cs_log_message(CS_LOG_LEVEL_INFO, "%s: sending to %s", program, platform_address_format(&link.peer, text, sizeof text));

    const uint64_t *counters = frag_sender_counters(sender);
    double start = platform_time(), next_progress = start + 1.0;
    long long bytes_read = 0, packets = 0;
    int input_done = 0, exit_code = EXIT_OK, progress_shown = 0;
    const char *outcome = NULL;
    for (;;) {
        /* Keep a few packets queued, so that the budget, not the reads, sets the pace. */
        while (!input_done && frag_sender_queued(sender) < config.interleave + 1) {
            long n = read_full(input_fd, packet, (long)packet_size);
            if (n < 0) {
                fprintf(stderr, "%s: reading %s: %s\n", program, input_path, strerror(errno));
                exit_code = EXIT_IO;
                outcome = "input error";
                goto done;
            }
            if (n == 0) {
                input_done = 1;
                break;
            }
            int sequence = frag_sender_queue_raw(sender, packet, (int)n);
            if (manifest) {
                char digest[65];
                cs_sha256_hex(packet, (size_t)n, digest);
                fprintf(manifest, "%d %ld %s\n", sequence, n, digest);
            }
            bytes_read += n;
            packets++;
            if (n < packet_size) input_done = 1;
        }
        double now = platform_time();
        frag_sender_update(sender, now);
        if (input_done && !frag_sender_busy(sender)) {
            outcome = "done";
            break;
        }
        /* Anything arriving is not ours to read (no acks); drain and count it. */
        int readable;
        if (app_wait(program, &link.socket.fd, 1, 0.001, &readable, &exit_code, &outcome) != 0) break;
        platform_address_t from;
        int n;
        while ((n = udp_link_receive(&link, &from, datagram)) >= 0)
            if (udp_link_accept(&link, &from, datagram, n, "not the receiver"))
                cs_log_message(CS_LOG_LEVEL_DEBUG, "%s: ignored %d bytes from the receiver (fragments have no acks)", program, n);
        if (!common.quiet && now >= next_progress) {
            char rate[32];
            app_format_rate(counters[FRAG_SENDER_COUNTER_BYTES_SENT] / (now - start), rate, sizeof rate);
            fprintf(stderr, "%s: %lld packets (%lld bytes) read, %llu datagrams sent, %s%s", program, packets,
                    bytes_read, (unsigned long long)counters[FRAG_SENDER_COUNTER_DATAGRAMS_SENT], rate,
                    app_progress_end());
            progress_shown = 1;
            next_progress = now + 1.0;
        }
    }
done:;
    double elapsed = platform_time() - start;
    exit_code = app_capture_finish(&link.capture, program, exit_code);
    if (manifest && fclose(manifest) != 0) {
        fprintf(stderr, "%s: error writing %s\n", program, manifest_path);
        if (exit_code == EXIT_OK) exit_code = EXIT_IO;
    }
    if (!common.quiet || exit_code != EXIT_OK) {
        char rate[32];
        app_format_rate(elapsed > 0 ? counters[FRAG_SENDER_COUNTER_BYTES_SENT] / elapsed : 0, rate, sizeof rate);
        app_progress_finish(progress_shown);
        fprintf(stderr, "%s: %s: %lld bytes in %llu packets to %s in %.3f s (%s)\n", program,
                outcome ? outcome : "stopped", bytes_read, (unsigned long long)counters[FRAG_SENDER_COUNTER_PACKETS_SENT],
                platform_address_format(&link.peer, text, sizeof text), elapsed, rate);
        udp_link_print_datagrams(&link);
        fprintf(stderr, "  sender:");
        app_print_counters(counters, FRAG_SENDER_COUNTER_COUNT, frag_sender_counter_name);
        app_capture_print(&link.capture);
    }
    if (input_fd != 0) close(input_fd);
    frag_sender_destroy(sender);
    platform_socket_close(&link.socket);
    free(packet);
    free(datagram);
    return exit_code;
}
