/*
 * netcode-server: a netcode 1.02 server over real UDP. Takes clients with
 * valid connect tokens into its slots (denies them when full), sends each
 * connected client payload packets at a rate (bytes 0, 1, 2, ... as the
 * reference examples) and keep-alives, times clients out, and disconnects
 * every client with the redundant disconnect packets when it stops.
 * docs/netcode-endpoints.md.
 *
 * Exit codes: 0 ran its course (with --once: served a client); 1 --once and
 * no client connected; 2 bad arguments; 3 socket or file error; 128 + signal
 * when interrupted.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "netcode-app.h"
#include "netcode.h"
#include "platform.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_NO_CLIENT = 1, EXIT_USAGE = 2, EXIT_IO = 3 };
static const char *const program = "netcode-server";

typedef struct server_app_t {
    platform_socket_t socket;
    app_capture_t capture;
    netcode_server_t *server;
    uint64_t datagrams_sent, send_errors, datagrams_received, payloads_ok, payloads_bad;
    double next_payload[NETCODE_MAX_CLIENTS];
    int served, ended;
    double now;
    FILE *keylog; /* --keys: a connection line for each client */
} server_app_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: netcode-server [options]\n"
"A netcode 1.02 server: takes clients with valid connect tokens (for this\n"
"server's address, protocol id and private key), sends each payload packets\n"
"(bytes 0, 1, 2, ... as the reference library's examples) and keep-alives.\n"
"  netcode-server &\n"
"  netcode-token -o token.bin && netcode-client token.bin\n"
"\n"
"options:\n"
"  -b, --bind ADDR[:PORT]   listen address (default 127.0.0.1:40000)\n"
"      --public ADDR:PORT   the address tokens must name (default: the bind\n"
"                           address; required when binding 0.0.0.0 or ::)\n"
"      --port-file FILE     write the listening port to FILE once bound\n"
"      --key HEX            private key, 64 hex digits (default: the reference\n"
"                           library examples' key, 606abe6e...15aba1)\n"
"      --key-file FILE      the private key from FILE (32 bytes or 64 hex digits)\n"
"      --protocol-id N      protocol id (default 0x1122334455667788)\n"
"      --max-clients N      client slots (1..256, default 64)\n"
"      --rate PPS           payload packets per second to each client (default 10;\n"
"                           0 none, keep-alives only)\n"
"      --payload BYTES      payload bytes (1..1200, default 1200)\n"
"      --once               exit when the first client's connection ends\n"
"  -t, --duration SEC       stop after SEC seconds (default: run until interrupted)\n"
"  -w, --pcap FILE          record every datagram sent and received\n"
"      --keys FILE          write the key log: the private key, and each client's\n"
"                           keys when it connects\n"
"  -q, --quiet              no progress lines\n"
"  -v, --verbose            more log (twice: debug)\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 ran its course (--once: served a client); 1 --once and no\n"
"client came; 2 bad arguments; 3 socket or file error; 128 + signal when\n"
"interrupted.\n");
}

static void on_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    server_app_t *app = context;
    platform_address_t dst, local;
    netcode_app_address_to_platform(to, &dst);
    if (platform_socket_send(&app->socket, &dst, packet, bytes) != 0) {
        app->send_errors++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "send: %s", strerror(errno));
        return;
    }
    app->datagrams_sent++;
    platform_socket_local_address(&app->socket, &dst, &local);
    app_capture_record(&app->capture, &local, &dst, packet, bytes);
}

static void on_payload(void *context, int client_index, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)client_index;
    (void)sequence;
    server_app_t *app = context;
    if (netcode_app_payload_ok(payload, bytes)) app->payloads_ok++;
    else app->payloads_bad++;
}

static void on_client(void *context, int index, int connected, int reason)
{
    server_app_t *app = context;
    char text[64];
    if (connected) {
        app->served++;
        app->next_payload[index] = app->now;
        if (app->keylog) {
            uint8_t c2s[NETCODE_KEY_BYTES], s2c[NETCODE_KEY_BYTES];
            netcode_server_client_keys(app->server, index, c2s, s2c);
            fprintf(app->keylog, "# client %d, %s\n", index,
                    netcode_address_format(netcode_server_client_address(app->server, index), text, sizeof text));
            netcode_app_keylog_connection(app->keylog, c2s, s2c);
        }
        cs_log_message(CS_LOG_LEVEL_INFO, "%.3f s: client %d connected from %s, id 0x%016llx", app->now, index,
                    netcode_address_format(netcode_server_client_address(app->server, index), text, sizeof text),
                    (unsigned long long)netcode_server_client_id(app->server, index));
    } else {
        app->ended++;
        cs_log_message(CS_LOG_LEVEL_INFO, "%.3f s: client %d %s", app->now, index, netcode_end_reason_name(reason));
    }
}

enum { OPT_PUBLIC = 256, OPT_PORT_FILE, OPT_KEY, OPT_KEY_FILE, OPT_PROTOCOL_ID, OPT_MAX_CLIENTS, OPT_RATE, OPT_PAYLOAD,
       OPT_ONCE, OPT_KEYS };

int main(int argc, char **argv)
{
    cs_log_set_name(program);
    static const struct option options[] = {
        {"bind", required_argument, 0, 'b'},          {"public", required_argument, 0, OPT_PUBLIC},
        {"port-file", required_argument, 0, OPT_PORT_FILE}, {"key", required_argument, 0, OPT_KEY},
        {"key-file", required_argument, 0, OPT_KEY_FILE}, {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
        {"max-clients", required_argument, 0, OPT_MAX_CLIENTS}, {"rate", required_argument, 0, OPT_RATE},
        {"payload", required_argument, 0, OPT_PAYLOAD}, {"once", no_argument, 0, OPT_ONCE},
        {"duration", required_argument, 0, 't'},      {"keys", required_argument, 0, OPT_KEYS},
        APP_COMMON_LONG_OPTIONS,                      {0, 0, 0, 0},
    };
    app_common_options_t common = {0};
    const char *bind_text = "127.0.0.1:40000", *public_text = NULL, *port_file = NULL, *keys_path = NULL;
    netcode_server_config_t config;
    netcode_server_default_config(&config);
    memcpy(config.private_key, netcode_app_example_key, NETCODE_KEY_BYTES);
    double duration = 0, rate = 10;
    int payload_bytes = NETCODE_MAX_PAYLOAD_BYTES, once = 0;
    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":b:t:w:qvh", options, NULL)) != -1) {
        switch (opt) {
        case 'b': bind_text = optarg; break;
        case OPT_PUBLIC: public_text = optarg; break;
        case OPT_PORT_FILE: port_file = optarg; break;
        case OPT_KEY:
            if (netcode_app_parse_key(optarg, config.private_key) != 0)
                app_bad_argument(program, "bad --key '%s': expected 64 hex digits", optarg);
            break;
        case OPT_KEY_FILE:
            if (netcode_app_read_key_file(optarg, config.private_key, err, sizeof err) != 0) {
                fprintf(stderr, "%s: --key-file %s: %s\n", program, optarg, err);
                return EXIT_IO;
            }
            break;
        case OPT_PROTOCOL_ID:
            if (netcode_app_parse_u64(optarg, &config.protocol_id) != 0)
                app_bad_argument(program, "bad --protocol-id '%s': expected a 64-bit number", optarg);
            break;
        case OPT_MAX_CLIENTS: config.max_clients = (int)app_int_option(program, "max-clients", optarg, 1, NETCODE_MAX_CLIENTS); break;
        case OPT_RATE: rate = (double)app_int_option(program, "rate", optarg, 0, 1000); break;
        case OPT_PAYLOAD: payload_bytes = (int)app_int_option(program, "payload", optarg, 1, NETCODE_MAX_PAYLOAD_BYTES); break;
        case OPT_ONCE: once = 1; break;
        case 't':
            if (platform_parse_seconds(optarg, 1e7, &duration) != 0 || duration <= 0)
                app_bad_argument(program, "bad --duration '%s': expected seconds above 0, e.g. 20 or 500ms", optarg);
            break;
        case OPT_KEYS: keys_path = optarg; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]);
        default:
            if (!app_common_option(&common, opt, optarg)) app_bad_argument(program, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) app_bad_argument(program, "unexpected argument '%s'", argv[optind]);
    app_set_verbosity(common.verbosity);

    platform_address_t bind_address, public_address;
    if (platform_address_parse(bind_text, 0, NETCODE_DEFAULT_SERVER_PORT, &bind_address, err, sizeof err) != 0)
        app_bad_argument(program, "bad --bind '%s': %s", bind_text, err);
    static const uint8_t zero[16];
    int unspecified = memcmp(bind_address.addr, zero, bind_address.family == 6 ? 16 : 4) == 0;
    if (public_text) {
        if (platform_address_parse(public_text, 0, bind_address.port, &public_address, err, sizeof err) != 0)
            app_bad_argument(program, "bad --public '%s': %s", public_text, err);
    } else if (unspecified) {
        app_bad_argument(program, "--bind %s is no address a token can name: give --public ADDR:PORT", bind_text);
    } else {
        public_address = bind_address;
    }

    static server_app_t app;
    if (platform_socket_open(&app.socket, &bind_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: cannot listen on %s: %s\n", program, platform_address_format(&bind_address, text, sizeof text), err);
        return EXIT_IO;
    }
    if (public_address.port == 0) public_address.port = app.socket.bound.port; /* --bind ...:0 */
    if (port_file && app_write_port_file(program, port_file, app.socket.bound.port) != 0) return EXIT_IO;
    if (app_capture_open(&app.capture, program, common.pcap_path) != 0) return EXIT_IO;
    if (keys_path) {
        app.keylog = netcode_app_keylog_open(program, keys_path, 1);
        if (!app.keylog) return EXIT_IO;
        netcode_app_keylog_private_key(app.keylog, config.private_key);
        fflush(app.keylog);
    }
    netcode_app_address_from_platform(&public_address, &config.public_address);
    double start = platform_time();
    config.unix_epoch = platform_wall_time();
    config.send = on_send;
    config.receive = on_payload;
    config.client_event = on_client;
    config.context = &app;
    app.server = netcode_server_create(&config, 0);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!app.server || !datagram) {
        fprintf(stderr, "%s: out of memory (or libsodium cannot start)\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    cs_log_message(CS_LOG_LEVEL_INFO, "listening on %s for tokens naming %s, protocol id 0x%016llx, %d slots",
                platform_address_format(&app.socket.bound, text, sizeof text),
                netcode_address_format(&config.public_address, err, sizeof err),
                (unsigned long long)config.protocol_id, config.max_clients);
    uint8_t payload[NETCODE_MAX_PAYLOAD_BYTES];
    netcode_app_fill_payload(payload, payload_bytes);

    const double tick = 0.01;
    double next_tick = 0, next_progress = 1;
    int exit_code = EXIT_OK, progress_shown = 0;
    const char *outcome = NULL;
    for (;;) {
        double now = platform_time() - start;
        int readable;
        double wait = next_tick - now;
        if (app_wait(program, &app.socket.fd, 1, wait > 0 ? wait : 0, &readable, &exit_code, &outcome) != 0) break;
        now = app.now = platform_time() - start;
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
            platform_address_t to;
            platform_socket_local_address(&app.socket, &from, &to);
            app_capture_record(&app.capture, &from, &to, datagram, n);
            netcode_address_t nfrom;
            netcode_app_address_from_platform(&from, &nfrom);
            if (n <= NETCODE_MAX_PACKET_BYTES) netcode_server_receive_packet(app.server, now, &nfrom, datagram, n);
        }
        if (now < next_tick) continue;
        next_tick += tick;
        if (next_tick < now) next_tick = now + tick;
        netcode_server_update(app.server, now);
        for (int i = 0; i < config.max_clients && rate > 0; i++) {
            if (!netcode_server_client_connected(app.server, i) || now < app.next_payload[i]) continue;
            netcode_server_send_payload(app.server, now, i, payload, payload_bytes);
            app.next_payload[i] += 1.0 / rate;
            if (app.next_payload[i] < now) app.next_payload[i] = now + 1.0 / rate;
        }
        if (once && app.ended > 0) {
            outcome = "the client's connection ended";
            break;
        }
        if (duration > 0 && now >= duration) {
            outcome = "done";
            if (once && !app.served) exit_code = EXIT_NO_CLIENT, outcome = "no client";
            break;
        }
        if (!common.quiet && now >= next_progress) {
            next_progress += 1.0;
            const uint64_t *k = netcode_server_counters(app.server);
            fprintf(stderr, "%s: %d connected, sent %llu, received %llu, payloads %llu/%llu%s", program,
                    netcode_server_connected_clients(app.server), (unsigned long long)k[NETCODE_SERVER_COUNTER_SENT],
                    (unsigned long long)k[NETCODE_SERVER_COUNTER_RECEIVED],
                    (unsigned long long)k[NETCODE_SERVER_COUNTER_PAYLOADS_SENT],
                    (unsigned long long)k[NETCODE_SERVER_COUNTER_PAYLOADS_RECEIVED], app_progress_end());
            progress_shown = 1;
        }
    }
done:
    for (int i = 0; i < config.max_clients; i++)
        netcode_server_disconnect_client(app.server, platform_time() - start, i);
    if (!common.quiet) app_progress_finish(progress_shown);
    exit_code = app_capture_finish(&app.capture, program, exit_code);
    if (app.keylog && netcode_app_keylog_close(program, keys_path, app.keylog) != 0 && exit_code == EXIT_OK)
        exit_code = EXIT_IO;
    const uint64_t *k = netcode_server_counters(app.server);
    fprintf(stderr, "%s: %s after %.1f s; %d client(s) served\n", program, outcome ? outcome : "stopped",
            platform_time() - start, app.served);
    fprintf(stderr, "  payloads: %llu sent, %llu received (%llu with the expected bytes, %llu not)\n",
            (unsigned long long)k[NETCODE_SERVER_COUNTER_PAYLOADS_SENT],
            (unsigned long long)k[NETCODE_SERVER_COUNTER_PAYLOADS_RECEIVED], (unsigned long long)app.payloads_ok,
            (unsigned long long)app.payloads_bad);
    fprintf(stderr, "  counters:");
    int shown = 0;
    for (int i = 0; i < NETCODE_SERVER_COUNTER_COUNT; i++)
        if (k[i]) fprintf(stderr, "%s %s %llu", shown++ ? "," : "", netcode_server_counter_name(i), (unsigned long long)k[i]);
    fprintf(stderr, "\n  datagrams: %llu sent, %llu received, %llu send errors\n", (unsigned long long)app.datagrams_sent,
            (unsigned long long)app.datagrams_received, (unsigned long long)app.send_errors);
    app_capture_print(&app.capture);
    if (app.payloads_bad && exit_code == EXIT_OK) exit_code = EXIT_NO_CLIENT;
    netcode_server_destroy(app.server);
    free(datagram);
    platform_socket_close(&app.socket);
    return exit_code;
}
