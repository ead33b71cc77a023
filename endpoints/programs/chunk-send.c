/* chunk-send: sends a file or stdin over real UDP as a queue of chunks, with
 * the reference sender (chunk_sender_*), and exits 0 once every chunk is
 * acked. See --help. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int main(int argc, char **argv)
{
    chunk_sender_config_t config;
    chunk_sender_default_config(&config);
    config.rate_bytes_per_second = 1e6;
    long long chunk_size = 0;
    double timeout = 0, idle_timeout = 10;
    const char *bind_text = NULL, *pcap_path = NULL;
    int family = 0, quiet = 0, verbosity = 0;
    long long value;

    enum { OPT_RESEND = 256, OPT_RTT, OPT_BURST, OPT_IDLE };
    static const struct option options[] = {
        {"chunk-size", required_argument, NULL, 'c'},
        {"rate", required_argument, NULL, 'r'},
        {"resend-delay", required_argument, NULL, OPT_RESEND},
        {"rtt", required_argument, NULL, OPT_RTT},
        {"burst", required_argument, NULL, OPT_BURST},
        {"slice-size", required_argument, NULL, CHUNK_OPT_SLICE_SIZE},
        {"max-slices", required_argument, NULL, CHUNK_OPT_MAX_SLICES},
        {"protocol-id", required_argument, NULL, CHUNK_OPT_PROTOCOL_ID},
        {"first-chunk-id", required_argument, NULL, CHUNK_OPT_FIRST_CHUNK_ID},
        {"bind", required_argument, NULL, 'b'},
        {"timeout", required_argument, NULL, 't'},
        {"idle-timeout", required_argument, NULL, OPT_IDLE},
        {"pcap", required_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0; /* our own messages, with exit code 2 */
    while ((opt = getopt_long(argc, argv, ":c:r:b:t:w:46qvh", options, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (platform_parse_bytes(optarg, (long long)CHUNK_SLICE_SIZE_LIMIT * CHUNK_MAX_SLICES_LIMIT, &chunk_size) != 0 ||
                chunk_size < 1)
                app_bad_argument(program, "bad --chunk-size '%s': expected bytes, e.g. 65536 or 64K", optarg);
            break;
        case 'r':
            if (platform_parse_rate(optarg, &config.rate_bytes_per_second) != 0)
                app_bad_argument(program,
                                       "bad --rate '%s': expected bytes/s, e.g. 125000, 125kB, 1Mbit or unlimited",
                                       optarg);
            break;
        case OPT_RESEND:
            if (platform_parse_seconds(optarg, 3600, &config.resend_delay) != 0)
                app_bad_argument(program, "bad --resend-delay '%s': expected seconds, e.g. 0.1 or 100ms", optarg);
            break;
        case OPT_RTT:
            if (platform_parse_seconds(optarg, 3600, &config.rtt) != 0)
                app_bad_argument(program, "bad --rtt '%s': expected seconds, e.g. 0.05 or 50ms", optarg);
            break;
        case OPT_BURST:
            if (platform_parse_bytes(optarg, (long long)CHUNK_SLICE_SIZE_LIMIT * CHUNK_MAX_SLICES_LIMIT, &value) != 0)
                app_bad_argument(program, "bad --burst '%s': expected bytes, e.g. 262144 or 256K", optarg);
            config.initial_burst_bytes = (int)value;
            break;
        case CHUNK_OPT_SLICE_SIZE:
        case CHUNK_OPT_MAX_SLICES:
        case CHUNK_OPT_PROTOCOL_ID:
        case CHUNK_OPT_FIRST_CHUNK_ID:
            chunk_app_wire_option(program, opt, optarg, &config.wire, &config.first_chunk_id);
            break;
        case 'b': bind_text = optarg; break;
        case '4': family = 4; break;
        case '6': family = 6; break;
        case 't':
            if (platform_parse_seconds(optarg, 1e9, &timeout) != 0)
                app_bad_argument(program, "bad --timeout '%s': expected seconds", optarg);
            break;
        case OPT_IDLE:
            if (platform_parse_seconds(optarg, 1e9, &idle_timeout) != 0)
                app_bad_argument(program, "bad --idle-timeout '%s': expected seconds", optarg);
            break;
        case 'w': pcap_path = optarg; break;
        case 'q': quiet = 1; break;
        case 'v': verbosity++; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]); break;
        default: app_bad_argument(program, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (optind >= argc) app_bad_argument(program, "%s", "missing HOST[:PORT] of the receiver");
    if (argc - optind > 2) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 2]);
    const char *host_text = argv[optind];
    const char *input_path = optind + 1 < argc ? argv[optind + 1] : "-";

    long long max_chunk = (long long)config.wire.slice_size * config.wire.max_slices;
    if (chunk_size == 0) chunk_size = max_chunk;
    if (chunk_size > max_chunk) {
        fprintf(stderr, "%s: --chunk-size %lld is more than SliceSize*MaxSlicesPerChunk = %lld (try --help)\n",
                program, chunk_size, max_chunk);
        return EXIT_USAGE;
    }
    app_set_verbosity(verbosity);

    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    udp_link_t link;
    memset(&link, 0, sizeof link);
    link.program = program;
    link.peer_known = 1; /* the receiver, given on the command line */
    if (platform_address_parse(host_text, family, CHUNK_DEFAULT_PORT, &link.peer, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s (try --help)\n", program, err);
        return EXIT_USAGE;
    }
    if (link.peer.port == 0) app_bad_argument(program, "receiver port 0 in '%s': give the port it listens on",
                                                    host_text);
    platform_address_t bind_address;
    platform_address_any(&bind_address, link.peer.family, 0);
    if (bind_text) {
        if (platform_address_parse(bind_text, link.peer.family, 0, &bind_address, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --bind: %s (try --help)\n", program, err);
            return EXIT_USAGE;
        }
    }
    if (bind_address.family != link.peer.family) {
        fprintf(stderr, "%s: --bind %s is not the address family of %s (try --help)\n", program, bind_text, host_text);
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
    long long input_total = -1; /* known for regular files: progress shows a percentage */
    struct stat st;
    if (fstat(input_fd, &st) == 0 && S_ISREG(st.st_mode)) input_total = (long long)st.st_size;

    if (platform_socket_open(&link.socket, &bind_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", program, err);
        return EXIT_IO;
    }
    platform_socket_local_address(&link.socket, &link.peer, &link.local);
    if (app_capture_open(&link.capture, program, pcap_path) != 0) return EXIT_IO;

    config.send = udp_link_send;
    config.context = &link;
    chunk_sender_t *sender = chunk_sender_create(&config);
    size_ring_t ring = {0};
    ring.capacity = config.queue_capacity + 2;
    ring.sizes = calloc((size_t)ring.capacity, sizeof *ring.sizes);
    uint8_t *pending = malloc((size_t)chunk_size);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!sender || !ring.sizes || !pending || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    log_message(LOG_LEVEL_INFO, "%s: sending %s to %s from %s", program, input_path,
              platform_address_format(&link.peer, text, sizeof text),
              platform_address_format(&link.local, err, sizeof err));

    const uint64_t *counters = chunk_sender_counters(sender);
    double start = platform_time(), last_heard = start, last_progress = start, next_progress = start + 1.0;
    uint64_t slices_acked_seen = 0;
    long long pending_bytes = 0, bytes_read = 0, bytes_acked = 0;
    uint64_t chunks_seen_completed = 0;
    int input_eof = 0, pending_full = 0, exit_code = EXIT_OK, progress_shown = 0;
    const char *failure = NULL;
    char failure_text[160];

    for (;;) {
        int fds[2] = {link.socket.fd, -1}, readable[2];
        if (!input_eof && !pending_full) fds[1] = input_fd;
        /* 1 ms ticks while sending keep the pacing smooth; when only waiting
         * for input, a slower tick is enough for timeouts and progress. */
        double wait = chunk_sender_busy(sender) ? 0.001 : 0.05;
        if (app_wait(program, fds, 2, wait, readable, &exit_code, &failure) != 0) break;
        double now = platform_time();

        /* Input: fill one chunk at a time, queue it when full or at EOF. */
        if (fds[1] >= 0 && readable[1]) {
            ssize_t n = read(input_fd, pending + pending_bytes, (size_t)(chunk_size - pending_bytes));
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                fprintf(stderr, "%s: reading %s: %s\n", program, input_path, strerror(errno));
                exit_code = EXIT_IO;
                failure = "input error";
                break;
            }
            if (n == 0) input_eof = 1;
            if (n > 0) {
                pending_bytes += n;
                bytes_read += n;
            }
            if (pending_bytes == chunk_size || (input_eof && pending_bytes > 0)) pending_full = 1;
        }
        if (pending_full) {
            int was_busy = chunk_sender_busy(sender);
            if (chunk_sender_queue_chunk(sender, pending, (int)pending_bytes) == 0) {
                ring.sizes[(ring.head + ring.count) % ring.capacity] = (int)pending_bytes;
                ring.count++;
                pending_bytes = 0;
                pending_full = 0;
                /* Silence before the first chunk is not the receiver's fault. */
                if (!was_busy) last_heard = last_progress = now;
            }
        }

        chunk_sender_update(sender, now);

        for (;;) {
            platform_address_t from;
            int n = udp_link_receive(&link, &from, datagram);
            if (n == -1) break;
            if (n == -2) {
                fprintf(stderr, "%s: receive: %s\n", program, strerror(errno));
                exit_code = EXIT_IO;
                failure = "socket error";
                goto done;
            }
            if (!udp_link_accept(&link, &from, datagram, n, "not the receiver")) continue;
            last_heard = now;
            chunk_sender_receive_packet(sender, now, datagram, n);
        }

        while (chunks_seen_completed < counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED] && ring.count > 0) {
            bytes_acked += ring.sizes[ring.head];
            ring.head = (ring.head + 1) % ring.capacity;
            ring.count--;
            chunks_seen_completed++;
        }

        if (input_eof && !pending_full && !chunk_sender_busy(sender)) { /* all acked */
            /* A chunk is 1 byte or more, so empty input sends nothing at all. */
            if (bytes_read == 0) failure = "empty input, nothing sent";
            break;
        }
        if (timeout > 0 && now - start >= timeout) {
            exit_code = EXIT_TIMEOUT;
            failure = "timeout";
            break;
        }
        if (counters[CHUNK_SENDER_COUNTER_SLICES_ACKED] != slices_acked_seen) {
            slices_acked_seen = counters[CHUNK_SENDER_COUNTER_SLICES_ACKED];
            last_progress = now;
        }
        if (idle_timeout > 0 && chunk_sender_busy(sender) && now - last_progress >= idle_timeout) {
            exit_code = EXIT_TIMEOUT;
            /* The receiver acks only while slices arrive, so a slice the
             * network always drops silences it too: say what is known. */
            if (counters[CHUNK_SENDER_COUNTER_ACKS_RECEIVED] == 0)
                snprintf(failure_text, sizeof failure_text, "idle timeout: no ack from the receiver in %.1f s",
                         now - start);
            else
                snprintf(failure_text, sizeof failure_text,
                         "idle timeout: no slice newly acked for %.1f s, last heard from the receiver %.1f s ago "
                         "(chunk %u stuck)",
                         now - last_progress, now - last_heard, (unsigned)chunk_sender_chunk_id(sender));
            failure = failure_text;
            break;
        }
        if (!quiet && now >= next_progress) {
            char rate[32];
            app_format_rate(bytes_acked / (now - start), rate, sizeof rate);
            char total[48] = "";
            if (input_total > 0)
                snprintf(total, sizeof total, " of %lld (%.0f%%)", input_total, 100.0 * bytes_acked / input_total);
            fprintf(stderr, "%s: %lld bytes acked%s, %llu chunks, %s, %llu slices sent (%llu resent)%s", program,
                    bytes_acked, total, (unsigned long long)counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED], rate,
                    (unsigned long long)counters[CHUNK_SENDER_COUNTER_SLICES_SENT],
                    (unsigned long long)counters[CHUNK_SENDER_COUNTER_SLICES_RESENT],
                    app_progress_end());
            progress_shown = 1;
            next_progress = now + 1.0;
        }
    }
done:;
    double elapsed = platform_time() - start;
    exit_code = app_capture_finish(&link.capture, program, exit_code);
    if (!quiet || exit_code != EXIT_OK) {
        char rate[32];
        app_format_rate(elapsed > 0 ? bytes_acked / elapsed : 0, rate, sizeof rate);
        app_progress_finish(progress_shown);
        fprintf(stderr, "%s: %s: %lld bytes acked of %lld read, %llu chunks, to %s in %.3f s (%s goodput)\n",
                program, failure ? failure : "done", bytes_acked, bytes_read,
                (unsigned long long)counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED],
                platform_address_format(&link.peer, text, sizeof text), elapsed, rate);
        udp_link_print_datagrams(&link);
        fprintf(stderr, "  sender:");
        app_print_counters(counters, CHUNK_SENDER_COUNTER_COUNT, chunk_sender_counter_name);
        chunk_app_print_invalid(chunk_sender_invalid_counters(sender));
        app_capture_print(&link.capture);
    }
    chunk_sender_destroy(sender);
    platform_socket_close(&link.socket);
    free(ring.sizes);
    free(pending);
    free(datagram);
    if (input_fd != 0) close(input_fd);
    return exit_code;
}
