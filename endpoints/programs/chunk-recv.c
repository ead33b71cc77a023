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

int main(int argc, char **argv)
{
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    double timeout = 0, idle_timeout = 5, linger = 1;
    long long want_chunks = -1, want_bytes = -1;
    const char *bind_text = NULL, *pcap_path = NULL, *port_file = NULL;
    int family = 0, quiet = 0, verbosity = 0, port_given = 0;
    uint16_t port = CHUNK_DEFAULT_PORT;

    enum { OPT_PORTFILE = 256, OPT_BYTES, OPT_IDLE, OPT_LINGER, OPT_ACKI };
    static const struct option options[] = {
        {"port", required_argument, NULL, 'p'},
        {"bind", required_argument, NULL, 'b'},
        {"port-file", required_argument, NULL, OPT_PORTFILE},
        {"chunks", required_argument, NULL, 'n'},
        {"bytes", required_argument, NULL, OPT_BYTES},
        {"idle-timeout", required_argument, NULL, OPT_IDLE},
        {"linger", required_argument, NULL, OPT_LINGER},
        {"timeout", required_argument, NULL, 't'},
        {"ack-interval", required_argument, NULL, OPT_ACKI},
        {"slice-size", required_argument, NULL, CHUNK_OPT_SLICE_SIZE},
        {"max-slices", required_argument, NULL, CHUNK_OPT_MAX_SLICES},
        {"protocol-id", required_argument, NULL, CHUNK_OPT_PROTOCOL_ID},
        {"first-chunk-id", required_argument, NULL, CHUNK_OPT_FIRST_CHUNK_ID},
        {"pcap", required_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":p:b:n:t:w:46qvh", options, NULL)) != -1) {
        switch (opt) {
        case 'p':
            if (platform_parse_port(optarg, &port) != 0)
                app_bad_argument(program, "bad --port '%s': expected 0..65535", optarg);
            port_given = 1;
            break;
        case 'b': bind_text = optarg; break;
        case OPT_PORTFILE: port_file = optarg; break;
        case 'n':
            if (platform_parse_int(optarg, 1, (long long)1 << 48, &want_chunks) != 0)
                app_bad_argument(program, "bad --chunks '%s': expected a count >= 1", optarg);
            break;
        case OPT_BYTES:
            if (platform_parse_bytes(optarg, (long long)1 << 60, &want_bytes) != 0 || want_bytes < 1)
                app_bad_argument(program, "bad --bytes '%s': expected a byte count >= 1, e.g. 1048576 or 1M",
                                       optarg);
            break;
        case OPT_IDLE:
            if (platform_parse_seconds(optarg, 1e9, &idle_timeout) != 0)
                app_bad_argument(program, "bad --idle-timeout '%s': expected seconds", optarg);
            break;
        case OPT_LINGER:
            if (platform_parse_seconds(optarg, 3600, &linger) != 0)
                app_bad_argument(program, "bad --linger '%s': expected seconds", optarg);
            break;
        case 't':
            if (platform_parse_seconds(optarg, 1e9, &timeout) != 0)
                app_bad_argument(program, "bad --timeout '%s': expected seconds", optarg);
            break;
        case OPT_ACKI:
            if (platform_parse_seconds(optarg, 3600, &config.ack_interval) != 0)
                app_bad_argument(program, "bad --ack-interval '%s': expected seconds, e.g. 0.1 or 100ms", optarg);
            break;
        case CHUNK_OPT_SLICE_SIZE:
        case CHUNK_OPT_MAX_SLICES:
        case CHUNK_OPT_PROTOCOL_ID:
        case CHUNK_OPT_FIRST_CHUNK_ID:
            chunk_app_wire_option(program, opt, optarg, &config.wire, &config.first_chunk_id);
            break;
        case 'w': pcap_path = optarg; break;
        case '4': family = 4; break;
        case '6': family = 6; break;
        case 'q': quiet = 1; break;
        case 'v': verbosity++; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]); break;
        default: app_bad_argument(program, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (argc - optind > 1) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 1]);
    const char *output_path = optind < argc ? argv[optind] : "-";
    if (want_chunks > 0 && want_bytes > 0) app_bad_argument(program, "%s", "give --chunks or --bytes, not both");
    app_set_verbosity(verbosity);

    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    udp_link_t link;
    memset(&link, 0, sizeof link);
    link.program = program;
    platform_address_t bind_address;
    int dual_stack = 0;
    if (bind_text) {
        if (platform_address_parse(bind_text, family, port, &bind_address, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --bind: %s (try --help)\n", program, err);
            return EXIT_USAGE;
        }
        if (port_given) bind_address.port = port;
    } else {
        platform_address_any(&bind_address, family ? family : 6, port);
        dual_stack = family == 0;
    }
    if (app_open_listener(program, &link.socket, &bind_address, dual_stack) != 0) return EXIT_IO;
    if (port_file && app_write_port_file(program, port_file, link.socket.bound.port) != 0) return EXIT_IO;

    int output_fd = 1;
    if (strcmp(output_path, "-") != 0) {
        output_fd = open(output_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (output_fd < 0) {
            fprintf(stderr, "%s: cannot create %s: %s\n", program, output_path, strerror(errno));
            return EXIT_IO;
        }
    }
    if (app_capture_open(&link.capture, program, pcap_path) != 0) return EXIT_IO;

    config.send = udp_link_send;
    config.context = &link;
    chunk_receiver_t *receiver = chunk_receiver_create(&config);
    size_t chunk_capacity = (size_t)config.wire.slice_size * (size_t)config.wire.max_slices;
    uint8_t *chunk = malloc(chunk_capacity);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!receiver || !chunk || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    log_message(LOG_LEVEL_INFO, "%s: listening on %s", program,
              platform_address_format(&link.socket.bound, text, sizeof text));

    const uint64_t *counters = chunk_receiver_counters(receiver);
    double start = platform_time(), first_heard = -1, last_heard = 0, last_stale = 0, done_at = -1;
    double next_progress = start + 1.0;
    long long bytes_written = 0, chunks_written = 0;
    uint64_t accepted_at_last_chunk = 0, stale_seen = 0;
    uint16_t last_chunk_id = 0;
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
                /* Lock onto the first sender whose datagram the wire format
                 * accepts, so one stray packet cannot capture the receiver. */
                chunk_packet_t packet;
                if (chunk_read_packet(&config.wire, datagram, n, &packet) == CHUNK_READ_OK) {
                    link.peer_known = 1;
                    link.peer = from;
                    platform_socket_local_address(&link.socket, &from, &link.local);
                    first_heard = now;
                    log_message(LOG_LEVEL_INFO, "%s: receiving from %s", program,
                              platform_address_format(&from, text, sizeof text));
                }
            }
            if (!udp_link_accept(&link, &from, datagram, n,
                                   link.peer_known ? "not the sender locked onto" : "not a valid chunk packet"))
                continue;
            last_heard = now;
            chunk_receiver_receive_packet(receiver, now, datagram, n);
        }
        chunk_receiver_update(receiver, now);

        /* Write completed chunks, unless the count asked for is reached:
         * chunks beyond it stay unacked, which is what the sender should see. */
        int reached = (want_chunks > 0 && chunks_written >= want_chunks) || (want_bytes > 0 && bytes_written >= want_bytes);
        while (!reached) {
            uint16_t id;
            int size = chunk_receiver_pop_chunk(receiver, chunk, (int)chunk_capacity, &id);
            if (size <= 0) break;
            if (write_all(output_fd, chunk, (size_t)size) != 0) {
                fprintf(stderr, "%s: writing %s: %s\n", program, output_path, strerror(errno));
                exit_code = EXIT_IO;
                outcome = "output error";
                goto done;
            }
            bytes_written += size;
            chunks_written++;
            last_chunk_id = id;
            accepted_at_last_chunk = counters[CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED];
            reached = (want_chunks > 0 && chunks_written >= want_chunks) || (want_bytes > 0 && bytes_written >= want_bytes);
        }
        if (reached && done_at < 0) {
            done_at = now;
            last_stale = now;
            stale_seen = counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE];
        }

        if (done_at >= 0) {
            /* Linger: the final ack may have been lost; each stale slice is
             * the sender asking again, and the receiver answers it. */
            if (counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE] != stale_seen) {
                stale_seen = counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE];
                last_stale = now;
            }
            if (now - last_stale >= linger) {
                if (want_bytes > 0 && bytes_written > want_bytes) {
                    exit_code = EXIT_TOO_MUCH;
                    outcome = "more data than --bytes";
                } else {
                    outcome = "done";
                }
                break;
            }
        } else if (idle_timeout > 0 && first_heard >= 0 && now - last_heard >= idle_timeout) {
            int partial = counters[CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED] != accepted_at_last_chunk;
            if (want_chunks > 0 || want_bytes > 0) {
                exit_code = EXIT_INCOMPLETE;
                outcome = "idle timeout before the expected data arrived";
                break;
            }
            if (chunks_written > 0 || partial) {
                exit_code = partial ? EXIT_INCOMPLETE : EXIT_OK;
                outcome = partial ? "idle timeout with a chunk half received" : "done (sender idle)";
                break;
            }
        }
        if (timeout > 0 && now - start >= timeout) {
            exit_code = EXIT_INCOMPLETE;
            outcome = "timeout";
            break;
        }
        if (!quiet && done_at < 0 && first_heard >= 0 && now >= next_progress && now - first_heard >= 1.0) {
            char rate[32];
            app_format_rate(bytes_written / (now - first_heard), rate, sizeof rate);
            fprintf(stderr, "%s: %lld bytes in %lld chunks written, %s, %llu slices received (%llu duplicate)%s",
                    program, bytes_written, chunks_written, rate,
                    (unsigned long long)counters[CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED],
                    (unsigned long long)counters[CHUNK_RECEIVER_COUNTER_SLICES_DUPLICATE],
                    app_progress_end());
            progress_shown = 1;
            next_progress = now + 1.0;
        }
    }
done:;
    double end = platform_time();
    exit_code = app_capture_finish(&link.capture, program, exit_code);
    if (output_fd != 1 && close(output_fd) != 0) {
        fprintf(stderr, "%s: closing %s: %s\n", program, output_path, strerror(errno));
        if (exit_code == EXIT_OK) exit_code = EXIT_IO;
    }
    if (!quiet || exit_code != EXIT_OK) {
        char rate[32], last[32] = "";
        double busy = first_heard >= 0 ? (done_at >= 0 ? done_at : end) - first_heard : 0;
        app_format_rate(busy > 0 ? bytes_written / busy : 0, rate, sizeof rate);
        if (chunks_written > 0) snprintf(last, sizeof last, " (last chunk id %u)", (unsigned)last_chunk_id);
        app_progress_finish(progress_shown);
        fprintf(stderr, "%s: %s: %lld bytes in %lld chunks%s from %s in %.3f s (%s goodput)\n", program,
                outcome ? outcome : "stopped", bytes_written, chunks_written, last,
                link.peer_known ? platform_address_format(&link.peer, text, sizeof text) : "nobody", busy, rate);
        udp_link_print_datagrams(&link);
        fprintf(stderr, "  receiver:");
        app_print_counters(counters, CHUNK_RECEIVER_COUNTER_COUNT, chunk_receiver_counter_name);
        uint64_t unwritten = counters[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED] - (uint64_t)chunks_written;
        if (unwritten > 0)
            fprintf(stderr, "  note: %llu more chunk(s) completed, and were acked, but not written%s\n",
                    (unsigned long long)unwritten,
                    done_at >= 0 ? ": they came after the data --chunks/--bytes asked for" : "");
        chunk_app_print_invalid(chunk_receiver_invalid_counters(receiver));
        app_capture_print(&link.capture);
    }
    chunk_receiver_destroy(receiver);
    platform_socket_close(&link.socket);
    free(chunk);
    free(datagram);
    return exit_code;
}
