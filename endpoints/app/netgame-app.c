/*
 * netgame-app.c: netgame-client and netgame-server. One netgame connection
 * over one UDP socket: the connection's update runs every tick (1/30 s, the
 * example's DeltaTime) with the wall clock, every datagram waiting on the
 * socket goes to it with its source address, and its packets go out to the
 * peer it holds (the server's: the first valid sender). Each side sends at
 * its flow control's rate, 10 packets/s in Bad mode and 30 in Good.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "netgame-app.h"
#include "platform.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_DISCONNECTED = 1, EXIT_USAGE = 2, EXIT_IO = 3 };

/* The connection holds peers as opaque bytes: family, address, port, scope. */
#define ADDRESS_BYTES 23

static void address_to_bytes(const platform_address_t *a, uint8_t *out)
{
    out[0] = (uint8_t)a->family;
    memcpy(out + 1, a->addr, 16);
    out[17] = (uint8_t)(a->port >> 8);
    out[18] = (uint8_t)a->port;
    for (int i = 0; i < 4; i++) out[19 + i] = (uint8_t)(a->scope_id >> (24 - 8 * i));
}

static void address_from_bytes(const uint8_t *in, platform_address_t *a)
{
    memset(a, 0, sizeof *a);
    a->family = in[0];
    memcpy(a->addr, in + 1, 16);
    a->port = (uint16_t)(in[17] << 8 | in[18]);
    for (int i = 0; i < 4; i++) a->scope_id = a->scope_id << 8 | in[19 + i];
}

typedef struct app_t {
    const char *program;
    platform_socket_t socket;
    app_capture_t capture;
    uint64_t datagrams_sent, send_errors, datagrams_received, datagrams_dropped;
    double mode_since, time_in_mode[2];
    int mode, switches;
} app_t;

static void on_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    app_t *app = context;
    if (address_bytes != ADDRESS_BYTES) return;
    platform_address_t to, local;
    address_from_bytes(address, &to);
    if (platform_socket_send(&app->socket, &to, packet, bytes) != 0) {
        app->send_errors++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "send: %s", strerror(errno));
        return;
    }
    app->datagrams_sent++;
    platform_socket_local_address(&app->socket, &to, &local);
    app_capture_record(&app->capture, &local, &to, packet, bytes);
}

static void usage(FILE *out, netgame_role_t role)
{
    if (role == NETGAME_CLIENT)
        fprintf(out,
"usage: netgame-client [options] SERVER[:PORT]\n"
"Connects to a netgame server (default port %d) and exchanges packets with\n"
"the 2008 reliability header: 10 packets/s in Bad mode, 30 in Good (after 4 s\n"
"of RTT at most 250 ms). Prints progress every second and a summary.\n"
"  netgame-server &\n"
"  netgame-client 127.0.0.1 --duration 20\n"
"\n"
"options:\n"
"  -b, --bind ADDR[:PORT]   local address (default any, port chosen by the kernel)\n"
"  -p, --port PORT          local port\n"
"  -t, --duration SEC       stop after SEC seconds (default: run until interrupted)\n",
                NETGAME_DEFAULT_SERVER_PORT);
    else
        fprintf(out,
"usage: netgame-server [options]\n"
"Listens for a netgame client and exchanges packets with it (the 2008\n"
"reliability header): the first valid packet's sender becomes the peer,\n"
"others are ignored; after --timeout seconds of silence it listens again.\n"
"  netgame-server -p %d &\n"
"  netgame-client 127.0.0.1:%d\n"
"\n"
"options:\n"
"  -b, --bind ADDR[:PORT]   listen address (default all, IPv6 and IPv4)\n"
"  -p, --port PORT          listen port (default %d; 0 picks a free one)\n"
"      --port-file FILE     write the listening port to FILE once bound\n"
"      --once               exit after the first client's connection ends\n"
"  -t, --duration SEC       stop after SEC seconds (default: run until interrupted)\n",
                NETGAME_DEFAULT_SERVER_PORT, NETGAME_DEFAULT_SERVER_PORT, NETGAME_DEFAULT_SERVER_PORT);
    fprintf(out,
"      --timeout SEC        connection timeout (default 10)\n"
"      --payload BYTES      payload of every packet (default 256 zero bytes, as\n"
"                           the article's example; 0 makes 16-byte datagrams,\n"
"                           which the original ignores)\n"
"      --protocol-id N      protocol id (default 0x11223344)\n"
"      --max-sequence N     MaxSequence (default 0xFFFFFFFF)\n"
"      --first-sequence N   our first sequence (default 0)\n"
"  -4, -6                   IPv4 or IPv6 only\n"
"  -w, --pcap FILE          record every datagram sent and received\n"
"  -q, --quiet              no progress lines\n"
"  -v, --verbose            more log (twice: debug)\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 ran its course connected (server: served a client); 1 %s;\n"
"2 bad arguments; 3 socket or file error; 128 + signal when interrupted.\n",
            role == NETGAME_CLIENT ? "could not connect, or the connection timed out" : "no client came (--once)");
}

enum { OPT_PORT_FILE = 256, OPT_ONCE, OPT_TIMEOUT, OPT_PAYLOAD, OPT_PROTOCOL_ID, OPT_MAX_SEQUENCE, OPT_FIRST_SEQUENCE };

static long long int_option(const char *program, const char *name, const char *text, long long min, long long max)
{
    long long v;
    if (platform_parse_int(text, min, max, &v) != 0) {
        char message[160];
        snprintf(message, sizeof message, "--%s wants an integer in %lld..%lld, not '%%s'", name, min, max);
        app_bad_argument(program, message, text);
    }
    return v;
}

static void print_summary(app_t *app, netgame_connection_t *c, double elapsed, const char *outcome)
{
    const char *program = app->program;
    const uint64_t *k = netgame_connection_counters(c);
    char text[PLATFORM_ADDRESS_STRING_SIZE] = "none";
    int peer_bytes;
    const uint8_t *peer = netgame_connection_peer(c, &peer_bytes);
    if (peer && peer_bytes == ADDRESS_BYTES) {
        platform_address_t a;
        address_from_bytes(peer, &a);
        platform_address_format(&a, text, sizeof text);
    }
    fprintf(stderr, "%s: %s after %.1f s; peer %s, %s\n", program, outcome, elapsed, text,
            netgame_state_name(netgame_connection_state(c)));
    fprintf(stderr, "  packets: %llu sent, %llu received, %llu acked, %llu lost (%.1f%%)\n",
            (unsigned long long)k[NETGAME_COUNTER_PACKETS_SENT], (unsigned long long)k[NETGAME_COUNTER_PACKETS_RECEIVED],
            (unsigned long long)k[NETGAME_COUNTER_PACKETS_ACKED], (unsigned long long)k[NETGAME_COUNTER_PACKETS_LOST],
            k[NETGAME_COUNTER_PACKETS_SENT] ? 100.0 * k[NETGAME_COUNTER_PACKETS_LOST] / k[NETGAME_COUNTER_PACKETS_SENT] : 0.0);
    fprintf(stderr, "  flow control: mode %s, penalty %.0f s, rtt %.1f ms, Good %.1f s, Bad %.1f s, %d switches\n",
            netgame_mode_name(netgame_connection_mode(c)), netgame_connection_penalty_time(c),
            netgame_connection_rtt(c) * 1000, app->time_in_mode[NETGAME_MODE_GOOD], app->time_in_mode[NETGAME_MODE_BAD],
            app->switches);
    fprintf(stderr, "  counters:");
    app_print_counters(k, NETGAME_COUNTER_COUNT, netgame_counter_name);
    char local[PLATFORM_ADDRESS_STRING_SIZE];
    fprintf(stderr, "  datagrams: %llu sent from %s, %llu received, %llu dropped, %llu send errors\n",
            (unsigned long long)app->datagrams_sent, platform_address_format(&app->socket.bound, local, sizeof local),
            (unsigned long long)app->datagrams_received, (unsigned long long)app->datagrams_dropped,
            (unsigned long long)app->send_errors);
    app_capture_print(&app->capture);
}

int netgame_app_main(int argc, char **argv, netgame_role_t role)
{
    const char *program = role == NETGAME_CLIENT ? "netgame-client" : "netgame-server";
    cs_log_set_name(program);
    netgame_config_t config;
    netgame_default_config(&config);
    config.role = role;
    const char *bind_text = NULL, *port_file = NULL;
    app_common_options_t common = {NULL, 0, 0};
    uint16_t port = role == NETGAME_SERVER ? NETGAME_DEFAULT_SERVER_PORT : 0;
    int port_given = 0, family = 0, once = 0;
    double duration = 0;

    static const struct option options[] = {
        {"bind", required_argument, 0, 'b'},       {"port", required_argument, 0, 'p'},
        {"port-file", required_argument, 0, OPT_PORT_FILE}, {"once", no_argument, 0, OPT_ONCE},
        {"duration", required_argument, 0, 't'},   {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"payload", required_argument, 0, OPT_PAYLOAD}, {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
        {"max-sequence", required_argument, 0, OPT_MAX_SEQUENCE},
        {"first-sequence", required_argument, 0, OPT_FIRST_SEQUENCE},
        APP_COMMON_LONG_OPTIONS,
        {0, 0, 0, 0},
    };
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":b:p:t:w:46qvh", options, NULL)) != -1) {
        switch (opt) {
        case 'b': bind_text = optarg; break;
        case 'p':
            if (platform_parse_port(optarg, &port) != 0) app_bad_argument(program, "bad --port '%s'", optarg);
            port_given = 1;
            break;
        case OPT_PORT_FILE:
            if (role == NETGAME_CLIENT) app_bad_argument(program, "unknown option '%s'", "--port-file");
            port_file = optarg;
            break;
        case OPT_ONCE:
            if (role == NETGAME_CLIENT) app_bad_argument(program, "unknown option '%s'", "--once");
            once = 1;
            break;
        case 't':
            if (platform_parse_seconds(optarg, 1e7, &duration) != 0 || duration <= 0)
                app_bad_argument(program, "bad --duration '%s': expected seconds above 0, e.g. 20 or 500ms", optarg);
            break;
        case OPT_TIMEOUT:
            if (platform_parse_seconds(optarg, 3600, &config.timeout) != 0 || config.timeout <= 0)
                app_bad_argument(program, "bad --timeout '%s': expected seconds above 0", optarg);
            break;
        case OPT_PAYLOAD: config.payload_bytes = (int)int_option(program, "payload", optarg, 0, NETGAME_MAX_PAYLOAD_BYTES); break;
        case OPT_PROTOCOL_ID: config.protocol_id = (uint32_t)int_option(program, "protocol-id", optarg, 0, 0xffffffffLL); break;
        case OPT_MAX_SEQUENCE: config.max_sequence = (uint32_t)int_option(program, "max-sequence", optarg, 1, 0xffffffffLL); break;
        case OPT_FIRST_SEQUENCE: config.first_sequence = (uint32_t)int_option(program, "first-sequence", optarg, 0, 0xffffffffLL); break;
        case '4': family = 4; break;
        case '6': family = 6; break;
        case 'h': usage(stdout, role); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]); break;
        default:
            if (!app_common_option(&common, opt, optarg))
                app_bad_argument(program, "unknown option '%s'", argv[optind - 1]);
            break;
        }
    }
    const char *pcap_path = common.pcap_path;
    int quiet = common.quiet;
    if (config.first_sequence > config.max_sequence)
        app_bad_argument(program, "--first-sequence is above --max-sequence (%s)", "");
    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    platform_address_t server;
    if (role == NETGAME_CLIENT) {
        if (optind >= argc) app_bad_argument(program, "%s", "missing SERVER[:PORT]");
        if (argc - optind > 1) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 1]);
        if (platform_address_parse(argv[optind], family, NETGAME_DEFAULT_SERVER_PORT, &server, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s: %s (try --help)\n", program, argv[optind], err);
            return EXIT_USAGE;
        }
        if (family == 0) family = server.family;
    } else if (optind < argc) {
        app_bad_argument(program, "unexpected argument '%s'", argv[optind]);
    }
    app_set_verbosity(common.verbosity);

    app_t app;
    memset(&app, 0, sizeof app);
    app.program = program;
    int listening = app_listen(program, &app.socket, bind_text, family, port, port_given, port_file);
    if (listening != APP_LISTEN_OK) return listening == APP_LISTEN_USAGE ? EXIT_USAGE : EXIT_IO;
    if (app_capture_open(&app.capture, program, pcap_path) != 0) return EXIT_IO;

    config.send = on_send;
    config.context = &app;
    netgame_connection_t *c = netgame_connection_create(&config);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!c || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    double start = platform_time();
    if (role == NETGAME_CLIENT) {
        uint8_t bytes[ADDRESS_BYTES];
        address_to_bytes(&server, bytes);
        netgame_connection_start(c, 0, bytes, ADDRESS_BYTES);
        cs_log_message(CS_LOG_LEVEL_INFO, "connecting to %s", platform_address_format(&server, text, sizeof text));
    } else {
        netgame_connection_start(c, 0, NULL, 0);
        cs_log_message(CS_LOG_LEVEL_INFO, "listening on %s",
                    platform_address_format(&app.socket.bound, text, sizeof text));
    }

    const double tick = 1.0 / 30.0;
    double next_tick = 0, next_progress = 1.0, last = 0;
    int exit_code = EXIT_OK, progress_shown = 0, was_connected = 0;
    const char *outcome = NULL;
    const uint64_t *k = netgame_connection_counters(c);
    for (;;) {
        double now = platform_time() - start;
        int readable;
        double wait = next_tick - now;
        if (app_wait(program, &app.socket.fd, 1, wait > 0 ? wait : 0, &readable, &exit_code, &outcome) != 0) break;
        now = platform_time() - start;
        for (;;) {
            platform_address_t from;
            int n = platform_socket_receive(&app.socket, &from, datagram);
            if (n == -1) break;
            if (n == -2) {
                fprintf(stderr, "%s: receive: %s\n", program, strerror(errno));
                exit_code = EXIT_IO;
                outcome = "socket error";
                goto done;
            }
            app.datagrams_received++;
            uint8_t bytes[ADDRESS_BYTES];
            address_to_bytes(&from, bytes);
            int was = netgame_connection_connected(c);
            if (netgame_connection_receive_packet(c, now, bytes, ADDRESS_BYTES, datagram, n)) {
                platform_address_t local;
                platform_socket_local_address(&app.socket, &from, &local);
                app_capture_record(&app.capture, &from, &local, datagram, n);
                if (!was && netgame_connection_connected(c))
                    cs_log_message(CS_LOG_LEVEL_INFO, "connected to %s",
                                platform_address_format(&from, text, sizeof text));
            } else {
                app.datagrams_dropped++;
                cs_log_message(CS_LOG_LEVEL_DEBUG, "dropped %d bytes from %s", n,
                            platform_address_format(&from, text, sizeof text));
            }
        }
        if (now < next_tick) continue;
        next_tick += tick;
        if (next_tick < now) next_tick = now + tick; /* after a stall: no burst of catch-up ticks */

        int connected_before = netgame_connection_connected(c);
        netgame_connection_update(c, now);
        int connected = netgame_connection_connected(c);
        if (connected_before) app.time_in_mode[app.mode] += now - last;
        last = now;
        if ((int)netgame_connection_mode(c) != app.mode) {
            app.mode = netgame_connection_mode(c);
            if (connected) { /* a dropped connection starts over in Bad: not a switch */
                app.switches++;
                cs_log_message(CS_LOG_LEVEL_INFO, "%.1f s: %s mode (rtt %.1f ms, penalty %.0f s)", now,
                            netgame_mode_name((netgame_mode_t)app.mode), netgame_connection_rtt(c) * 1000,
                            netgame_connection_penalty_time(c));
            }
        }
        if (connected) was_connected = 1;
        netgame_state_t state = netgame_connection_state(c);
        if (role == NETGAME_CLIENT && state == NETGAME_STATE_CONNECT_FAIL) {
            exit_code = EXIT_DISCONNECTED;
            outcome = "could not connect";
            break;
        }
        if (connected_before && !connected) {
            if (role == NETGAME_CLIENT) {
                exit_code = EXIT_DISCONNECTED;
                outcome = "connection timed out";
                break;
            }
            cs_log_message(CS_LOG_LEVEL_INFO, "client timed out; listening again");
            if (once) {
                outcome = "client gone";
                break;
            }
        }
        if (duration > 0 && now >= duration) {
            outcome = "done";
            if (role == NETGAME_CLIENT && !connected) exit_code = EXIT_DISCONNECTED, outcome = "not connected";
            if (role == NETGAME_SERVER && once && !was_connected) exit_code = EXIT_DISCONNECTED, outcome = "no client";
            break;
        }
        if (!quiet && now >= next_progress) {
            next_progress += 1.0;
            fprintf(stderr, "%s%s: %s, %s, rtt %.1f ms, sent %llu, acked %llu, lost %llu%s", progress_shown ? "" : "",
                    program, netgame_state_name(state), netgame_mode_name(netgame_connection_mode(c)),
                    netgame_connection_rtt(c) * 1000, (unsigned long long)k[NETGAME_COUNTER_PACKETS_SENT],
                    (unsigned long long)k[NETGAME_COUNTER_PACKETS_ACKED], (unsigned long long)k[NETGAME_COUNTER_PACKETS_LOST],
                    app_progress_end());
            progress_shown = 1;
        }
    }
done:
    if (!quiet) app_progress_finish(progress_shown);
    exit_code = app_capture_finish(&app.capture, program, exit_code);
    print_summary(&app, c, platform_time() - start, outcome ? outcome : "stopped");
    netgame_connection_destroy(c);
    free(datagram);
    platform_socket_close(&app.socket);
    return exit_code;
}
