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

typedef struct game_t {
    /* options */
    const char *program;
    netgame_role_t role;
    netgame_config_t config;
    app_common_options_t common; /* -w, -q, -v, -b, -4, -6 */
    const char *port_file;
    uint16_t port;
    int port_given, once;
    double duration;             /* --duration; 0: until interrupted */
    platform_address_t server;   /* the client's peer */
    /* I/O */
    platform_socket_t socket;
    app_capture_t capture;
    uint8_t datagram[PLATFORM_SOCKET_MAX_DATAGRAM];
    uint64_t datagrams_sent, send_errors, datagrams_received, datagrams_dropped;
    /* state: times in seconds since start */
    netgame_connection_t *connection;
    double start, next_tick, next_progress, last;
    double time_in_mode[2];
    int mode, switches, was_connected, exit_code, progress_shown;
    const char *outcome;         /* why it stopped; NULL: stopped before the loop said */
} game_t;

static void on_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    game_t *g = context;
    if (address_bytes != ADDRESS_BYTES) return;
    platform_address_t to;
    address_from_bytes(address, &to);
    app_send_recorded(&g->socket, &g->capture, &to, packet, bytes, &g->datagrams_sent, &g->send_errors);
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

/* ---- options ---- */

/* The client's SERVER[:PORT], or no argument at all for the server. Returns
 * 0, or EXIT_USAGE after printing why. */
static int parse_arguments(game_t *g, int argc, char **argv)
{
    const char *program = g->program;
    if (g->role == NETGAME_SERVER) {
        if (optind < argc) app_bad_argument(program, "unexpected argument '%s'", argv[optind]);
        return 0;
    }
    if (optind >= argc) app_bad_argument(program, "%s", "missing SERVER[:PORT]");
    if (argc - optind > 1) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 1]);
    char err[256];
    if (platform_address_parse(argv[optind], g->common.family, NETGAME_DEFAULT_SERVER_PORT, &g->server, err, sizeof err) !=
        0) {
        fprintf(stderr, "%s: %s: %s (try --help)\n", program, argv[optind], err);
        return EXIT_USAGE;
    }
    if (g->common.family == 0) g->common.family = g->server.family;
    return 0;
}

/* Returns 0, or EXIT_USAGE after printing why. */
static int parse_options(game_t *g, int argc, char **argv)
{
    const char *program = g->program;
    netgame_default_config(&g->config);
    g->config.role = g->role;
    g->port = g->role == NETGAME_SERVER ? NETGAME_DEFAULT_SERVER_PORT : 0;
    enum { OPT_PORT_FILE = 256, OPT_ONCE, OPT_TIMEOUT, OPT_PAYLOAD, OPT_PROTOCOL_ID, OPT_MAX_SEQUENCE, OPT_FIRST_SEQUENCE };
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
    netgame_config_t *config = &g->config;
    int opt;
    opterr = 0; /* our own messages, with exit code 2 */
    while ((opt = getopt_long(argc, argv, ":b:p:t:w:46qvh", options, NULL)) != -1) {
        switch (opt) {
        case 'p':
            if (platform_parse_port(optarg, &g->port) != 0) app_bad_argument(program, "bad --port '%s'", optarg);
            g->port_given = 1;
            break;
        case OPT_PORT_FILE:
            if (g->role == NETGAME_CLIENT) app_bad_argument(program, "unknown option '%s'", "--port-file");
            g->port_file = optarg;
            break;
        case OPT_ONCE:
            if (g->role == NETGAME_CLIENT) app_bad_argument(program, "unknown option '%s'", "--once");
            g->once = 1;
            break;
        case 't':
            g->duration = app_positive_seconds_arg(program, "duration", optarg, 1e7, "seconds above 0, e.g. 20 or 500ms");
            break;
        case OPT_TIMEOUT:
            config->timeout = app_positive_seconds_arg(program, "timeout", optarg, 3600, "seconds above 0");
            break;
        case OPT_PAYLOAD: config->payload_bytes = (int)app_int_option(program, "payload", optarg, 0, NETGAME_MAX_PAYLOAD_BYTES); break;
        case OPT_PROTOCOL_ID: config->protocol_id = (uint32_t)app_int_option(program, "protocol-id", optarg, 0, 0xffffffffLL); break;
        case OPT_MAX_SEQUENCE: config->max_sequence = (uint32_t)app_int_option(program, "max-sequence", optarg, 1, 0xffffffffLL); break;
        case OPT_FIRST_SEQUENCE: config->first_sequence = (uint32_t)app_int_option(program, "first-sequence", optarg, 0, 0xffffffffLL); break;
        case 'h': usage(stdout, g->role); exit(EXIT_OK);
        default:
            if (!app_common_option(&g->common, opt, optarg)) app_option_error(program, opt, argv);
            break;
        }
    }
    if (config->first_sequence > config->max_sequence)
        app_bad_argument(program, "--first-sequence is above --max-sequence (%s)", "");
    int code = parse_arguments(g, argc, argv);
    if (code == 0) app_set_verbosity(g->common.verbosity);
    return code;
}

/* ---- setting up ---- */

/* Listens, opens the pcap, creates the connection and starts it: the client
 * connecting to its server, the server listening. Returns 0, or the exit
 * code after printing why. */
static int set_up(game_t *g)
{
    const char *program = g->program;
    int listening = app_listen(program, &g->socket, g->common.bind_text, g->common.family, g->port, g->port_given, g->port_file);
    if (listening != APP_LISTEN_OK) return listening == APP_LISTEN_USAGE ? EXIT_USAGE : EXIT_IO;
    if (app_capture_open(&g->capture, program, g->common.pcap_path) != 0) return EXIT_IO;

    g->config.send = on_send;
    g->config.context = g;
    g->connection = netgame_connection_create(&g->config);
    if (!g->connection) return app_out_of_memory(program, EXIT_IO);
    return 0;
}

static void start(game_t *g)
{
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    g->start = platform_time();
    g->next_progress = 1.0;
    if (g->role == NETGAME_CLIENT) {
        uint8_t bytes[ADDRESS_BYTES];
        address_to_bytes(&g->server, bytes);
        netgame_connection_start(g->connection, 0, bytes, ADDRESS_BYTES);
        cs_log_message(CS_LOG_LEVEL_INFO, "connecting to %s", platform_address_format(&g->server, text, sizeof text));
    } else {
        netgame_connection_start(g->connection, 0, NULL, 0);
        cs_log_message(CS_LOG_LEVEL_INFO, "listening on %s",
                       platform_address_format(&g->socket.bound, text, sizeof text));
    }
}

/* ---- one turn of the event loop ---- */

/* Hands every waiting datagram to the connection with its source address.
 * Returns 0, or -1 on a socket error (printed, exit code set). */
static int receive_datagrams(game_t *g, double now)
{
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    netgame_connection_t *c = g->connection;
    for (;;) {
        platform_address_t from;
        int n = platform_socket_receive(&g->socket, &from, g->datagram);
        if (n == -1) return 0;
        if (n == -2) {
            fprintf(stderr, "%s: receive: %s\n", g->program, strerror(errno));
            g->exit_code = EXIT_IO;
            g->outcome = "socket error";
            return -1;
        }
        g->datagrams_received++;
        uint8_t bytes[ADDRESS_BYTES];
        address_to_bytes(&from, bytes);
        int was = netgame_connection_connected(c);
        if (netgame_connection_receive_packet(c, now, bytes, ADDRESS_BYTES, g->datagram, n)) {
            app_capture_exchange(&g->capture, &g->socket, &from, 1, g->datagram, n);
            if (!was && netgame_connection_connected(c))
                cs_log_message(CS_LOG_LEVEL_INFO, "connected to %s", platform_address_format(&from, text, sizeof text));
        } else {
            g->datagrams_dropped++;
            cs_log_message(CS_LOG_LEVEL_DEBUG, "dropped %d bytes from %s", n,
                           platform_address_format(&from, text, sizeof text));
        }
    }
}

/* Counts the time spent in the mode, and a switch of mode while connected
 * (a dropped connection starts over in Bad: not a switch). */
static void track_mode(game_t *g, double now, int connected_before, int connected)
{
    netgame_connection_t *c = g->connection;
    if (connected_before) g->time_in_mode[g->mode] += now - g->last;
    g->last = now;
    if ((int)netgame_connection_mode(c) == g->mode) return;
    g->mode = netgame_connection_mode(c);
    if (!connected) return;
    g->switches++;
    cs_log_message(CS_LOG_LEVEL_INFO, "%.1f s: %s mode (rtt %.1f ms, penalty %.0f s)", now,
                   netgame_mode_name((netgame_mode_t)g->mode), netgame_connection_rtt(c) * 1000,
                   netgame_connection_penalty_time(c));
}

/* 1 when the run is over after this tick (exit code and outcome set): the
 * client could not connect or lost its connection, the server's --once
 * client is gone, or --duration is reached. */
static int finished(game_t *g, double now, int connected_before, int connected)
{
    int client = g->role == NETGAME_CLIENT;
    if (client && netgame_connection_state(g->connection) == NETGAME_STATE_CONNECT_FAIL) {
        g->exit_code = EXIT_DISCONNECTED;
        g->outcome = "could not connect";
        return 1;
    }
    if (connected_before && !connected) {
        if (client) {
            g->exit_code = EXIT_DISCONNECTED;
            g->outcome = "connection timed out";
            return 1;
        }
        cs_log_message(CS_LOG_LEVEL_INFO, "client timed out; listening again");
        if (g->once) {
            g->outcome = "client gone";
            return 1;
        }
    }
    if (g->duration > 0 && now >= g->duration) {
        g->outcome = "done";
        if (client && !connected) g->exit_code = EXIT_DISCONNECTED, g->outcome = "not connected";
        if (!client && g->once && !g->was_connected) g->exit_code = EXIT_DISCONNECTED, g->outcome = "no client";
        return 1;
    }
    return 0;
}

/* One tick (1/30 s): the connection's update, then the checks. Returns 1
 * when the run is over. */
static int tick(game_t *g, double now)
{
    netgame_connection_t *c = g->connection;
    int connected_before = netgame_connection_connected(c);
    netgame_connection_update(c, now);
    int connected = netgame_connection_connected(c);
    track_mode(g, now, connected_before, connected);
    if (connected) g->was_connected = 1;
    return finished(g, now, connected_before, connected);
}

static void print_progress(game_t *g)
{
    netgame_connection_t *c = g->connection;
    const uint64_t *k = netgame_connection_counters(c);
    g->next_progress += 1.0;
    fprintf(stderr, "%s: %s, %s, rtt %.1f ms, sent %llu, acked %llu, lost %llu%s", g->program,
            netgame_state_name(netgame_connection_state(c)), netgame_mode_name(netgame_connection_mode(c)),
            netgame_connection_rtt(c) * 1000, (unsigned long long)k[NETGAME_COUNTER_PACKETS_SENT],
            (unsigned long long)k[NETGAME_COUNTER_PACKETS_ACKED], (unsigned long long)k[NETGAME_COUNTER_PACKETS_LOST],
            app_progress_end());
    g->progress_shown = 1;
}

/* Runs the connection until finished, or a signal or an error stops it. */
static void run(game_t *g)
{
    const double tick_seconds = 1.0 / 30.0;
    for (;;) {
        double now;
        if (app_wait_for_tick(g->program, g->socket.fd, g->start, g->next_tick, &now, &g->exit_code, &g->outcome) != 0)
            return;
        if (receive_datagrams(g, now) != 0) return;
        if (!app_tick_due(&g->next_tick, tick_seconds, now)) continue;
        if (tick(g, now)) return;
        if (!g->common.quiet && now >= g->next_progress) print_progress(g);
    }
}

static void print_summary(const game_t *g, double elapsed)
{
    const netgame_connection_t *c = g->connection;
    const char *program = g->program;
    const uint64_t *k = netgame_connection_counters(c);
    char text[PLATFORM_ADDRESS_STRING_SIZE] = "none";
    int peer_bytes;
    const uint8_t *peer = netgame_connection_peer(c, &peer_bytes);
    if (peer && peer_bytes == ADDRESS_BYTES) {
        platform_address_t a;
        address_from_bytes(peer, &a);
        platform_address_format(&a, text, sizeof text);
    }
    fprintf(stderr, "%s: %s after %.1f s; peer %s, %s\n", program, g->outcome ? g->outcome : "stopped", elapsed, text,
            netgame_state_name(netgame_connection_state(c)));
    fprintf(stderr, "  packets: %llu sent, %llu received, %llu acked, %llu lost (%.1f%%)\n",
            (unsigned long long)k[NETGAME_COUNTER_PACKETS_SENT], (unsigned long long)k[NETGAME_COUNTER_PACKETS_RECEIVED],
            (unsigned long long)k[NETGAME_COUNTER_PACKETS_ACKED], (unsigned long long)k[NETGAME_COUNTER_PACKETS_LOST],
            k[NETGAME_COUNTER_PACKETS_SENT] ? 100.0 * k[NETGAME_COUNTER_PACKETS_LOST] / k[NETGAME_COUNTER_PACKETS_SENT] : 0.0);
    fprintf(stderr, "  flow control: mode %s, penalty %.0f s, rtt %.1f ms, Good %.1f s, Bad %.1f s, %d switches\n",
            netgame_mode_name(netgame_connection_mode(c)), netgame_connection_penalty_time(c),
            netgame_connection_rtt(c) * 1000, g->time_in_mode[NETGAME_MODE_GOOD], g->time_in_mode[NETGAME_MODE_BAD],
            g->switches);
    fprintf(stderr, "  counters:");
    app_print_counters(k, NETGAME_COUNTER_COUNT, netgame_counter_name);
    char local[PLATFORM_ADDRESS_STRING_SIZE];
    fprintf(stderr, "  datagrams: %llu sent from %s, %llu received, %llu dropped, %llu send errors\n",
            (unsigned long long)g->datagrams_sent, platform_address_format(&g->socket.bound, local, sizeof local),
            (unsigned long long)g->datagrams_received, (unsigned long long)g->datagrams_dropped,
            (unsigned long long)g->send_errors);
    app_capture_print(&g->capture);
}

int netgame_app_main(int argc, char **argv, netgame_role_t role)
{
    static game_t g;
    g.role = role;
    g.program = role == NETGAME_CLIENT ? "netgame-client" : "netgame-server";
    cs_log_set_name(g.program);
    int code = parse_options(&g, argc, argv);
    if (code == 0) code = set_up(&g);
    if (code != 0) return code;
    platform_catch_signals();
    start(&g);

    run(&g);
    if (!g.common.quiet) app_progress_finish(g.progress_shown);
    g.exit_code = app_capture_finish(&g.capture, g.program, g.exit_code);
    print_summary(&g, platform_time() - g.start);
    netgame_connection_destroy(g.connection);
    platform_socket_close(&g.socket);
    return g.exit_code;
}
