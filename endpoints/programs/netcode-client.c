/*
 * netcode-client: a netcode 1.02 client over real UDP. Connects with a
 * connect token file (netcode-token, or any backend's), sends payload packets
 * at a rate once connected (bytes 0, 1, 2, ... as the reference examples, so
 * either side can check the other's), and disconnects at the end with the
 * redundant disconnect packets. Can record a pcap and the key log.
 * docs/netcode-endpoints.md.
 *
 * Exit codes: 0 connected and ran its course (or the server disconnected it);
 * 1 never connected (the final state says why) or the connection timed out;
 * 2 bad arguments; 3 socket or file error; 128 + signal when interrupted.
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

enum { EXIT_OK = 0, EXIT_NOT_CONNECTED = 1, EXIT_USAGE = 2, EXIT_IO = 3 };
static const char *const program = "netcode-client";

typedef struct client_app_t {
    platform_socket_t socket;
    app_capture_t capture;
    uint64_t datagrams_sent, send_errors, datagrams_received, payloads_ok, payloads_bad;
    double now;
} client_app_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: netcode-client [options] TOKEN_FILE\n"
"Connects to a netcode 1.02 server with a connect token (2048 bytes, from\n"
"netcode-token) and exchanges payload packets with it. Payload bytes are\n"
"0, 1, 2, ... as in the reference library's examples.\n"
"  netcode-token -o token.bin && netcode-client token.bin --duration 5\n"
"\n"
"options:\n"
"  -t, --duration SEC       disconnect after SEC seconds connected (default:\n"
"                           run until interrupted, then disconnect)\n"
"      --rate PPS           payload packets per second (default 10; 0 none,\n"
"                           keep-alives only)\n"
"      --payload BYTES      payload bytes (1..1200, default 1200)\n"
"  -b, --bind ADDR[:PORT]   local address (default any, port from the kernel)\n"
"  -w, --pcap FILE          record every datagram sent and received\n"
"      --keys FILE          write the key log (this connection's keys)\n"
"  -q, --quiet              no progress lines\n"
"  -v, --verbose            more log (twice: debug)\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 connected and ran its course (or the server disconnected it);\n"
"1 never connected (the final state says why) or the connection timed out;\n"
"2 bad arguments; 3 socket or file error; 128 + signal when interrupted.\n");
}

static void on_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    client_app_t *app = context;
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

static void on_payload(void *context, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    client_app_t *app = context;
    if (netcode_app_payload_ok(payload, bytes)) app->payloads_ok++;
    else app->payloads_bad++;
}

static void on_state(void *context, int from, int to)
{
    client_app_t *app = context;
    cs_log_message(CS_LOG_LEVEL_INFO, "%.3f s: %s -> %s", app->now, netcode_client_state_name(from), netcode_client_state_name(to));
}

enum { OPT_RATE = 256, OPT_PAYLOAD, OPT_KEYS };

int main(int argc, char **argv)
{
    cs_log_set_name(program);
    static const struct option options[] = {
        {"duration", required_argument, 0, 't'}, {"rate", required_argument, 0, OPT_RATE},
        {"payload", required_argument, 0, OPT_PAYLOAD}, {"bind", required_argument, 0, 'b'},
        {"keys", required_argument, 0, OPT_KEYS}, APP_COMMON_LONG_OPTIONS, {0, 0, 0, 0},
    };
    app_common_options_t common = {0};
    const char *bind_text = NULL, *keys_path = NULL;
    double duration = 0, rate = 10;
    int payload_bytes = NETCODE_MAX_PAYLOAD_BYTES;
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":t:b:w:qvh", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            if (platform_parse_seconds(optarg, 1e7, &duration) != 0 || duration <= 0)
                app_bad_argument(program, "bad --duration '%s': expected seconds above 0, e.g. 5 or 500ms", optarg);
            break;
        case OPT_RATE: rate = (double)app_int_option(program, "rate", optarg, 0, 1000); break;
        case OPT_PAYLOAD: payload_bytes = (int)app_int_option(program, "payload", optarg, 1, NETCODE_MAX_PAYLOAD_BYTES); break;
        case 'b': bind_text = optarg; break;
        case OPT_KEYS: keys_path = optarg; break;
        case 'h': usage(stdout); return EXIT_OK;
        case ':': app_bad_argument(program, "option %s needs a value", argv[optind - 1]);
        default:
            if (!app_common_option(&common, opt, optarg)) app_bad_argument(program, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) app_bad_argument(program, "missing TOKEN_FILE");
    if (argc - optind > 1) app_bad_argument(program, "unexpected argument '%s'", argv[optind + 1]);
    app_set_verbosity(common.verbosity);

    const char *token_path = argv[optind];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES + 1];
    FILE *in = fopen(token_path, "rb");
    if (!in) {
        fprintf(stderr, "%s: cannot read %s: %s\n", program, token_path, strerror(errno));
        return EXIT_IO;
    }
    int token_bytes = (int)fread(token, 1, sizeof token, in);
    fclose(in);
    netcode_connect_token_t fields;
    netcode_token_result_t tr = netcode_read_connect_token(token, token_bytes, &fields);
    if (tr != NETCODE_TOKEN_OK) {
        fprintf(stderr, "%s: %s is not a netcode 1.02 connect token: %s\n", program, token_path,
                netcode_token_result_name(tr));
        return EXIT_USAGE;
    }
    if (netcode_crypto_init() != 0) {
        fprintf(stderr, "%s: libsodium cannot start\n", program);
        return EXIT_IO;
    }

    static client_app_t app;
    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    int family = fields.servers[0].type == NETCODE_ADDRESS_IPV6 ? 6 : 4;
    platform_address_t local;
    if (bind_text) {
        if (platform_address_parse(bind_text, family, 0, &local, err, sizeof err) != 0)
            app_bad_argument(program, "bad --bind '%s': %s", bind_text, err);
    } else {
        platform_address_any(&local, family, 0);
    }
    if (platform_socket_open(&app.socket, &local, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: cannot open a socket on %s: %s\n", program, platform_address_format(&local, text, sizeof text), err);
        return EXIT_IO;
    }
    if (app_capture_open(&app.capture, program, common.pcap_path) != 0) return EXIT_IO;
    if (keys_path) {
        FILE *log = netcode_app_keylog_open(program, keys_path, 1);
        if (!log) return EXIT_IO;
        netcode_app_keylog_connection(log, fields.client_to_server_key, fields.server_to_client_key);
        if (netcode_app_keylog_close(program, keys_path, log) != 0) return EXIT_IO;
    }

    double start = platform_time();
    netcode_client_config_t config = {platform_wall_time(), on_send, on_payload, on_state, &app};
    netcode_client_t *client = netcode_client_create(&config);
    uint8_t *datagram = malloc(PLATFORM_SOCKET_MAX_DATAGRAM);
    if (!client || !datagram) {
        fprintf(stderr, "%s: out of memory\n", program);
        return EXIT_IO;
    }
    platform_catch_signals();
    cs_log_message(CS_LOG_LEVEL_INFO, "connecting to %s", netcode_address_format(&fields.servers[0], text, sizeof text));
    netcode_client_connect(client, 0, token, token_bytes);
    uint8_t payload[NETCODE_MAX_PAYLOAD_BYTES];
    netcode_app_fill_payload(payload, payload_bytes);

    const double tick = 0.01;
    double next_tick = 0, next_payload = 0, next_progress = 1, connected_at = -1;
    int exit_code = EXIT_OK, progress_shown = 0, ever_connected = 0, interrupted = 0;
    const char *outcome = NULL;
    for (;;) {
        double now = platform_time() - start;
        int readable;
        double wait = next_tick - now;
        int stop_code;
        if (app_wait(program, &app.socket.fd, 1, wait > 0 ? wait : 0, &readable, &stop_code, &outcome) != 0) {
            exit_code = stop_code;
            interrupted = 1;
            break;
        }
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
            if (n <= NETCODE_MAX_PACKET_BYTES) netcode_client_receive_packet(client, now, &nfrom, datagram, n);
        }
        if (now < next_tick) continue;
        next_tick += tick;
        if (next_tick < now) next_tick = now + tick;
        netcode_client_update(client, now);
        int state = netcode_client_state(client);
        if (state == NETCODE_CLIENT_CONNECTED) {
            if (!ever_connected) {
                ever_connected = 1;
                connected_at = now;
                next_payload = now;
                cs_log_message(CS_LOG_LEVEL_INFO, "connected as client %d of %d", netcode_client_index(client),
                            netcode_client_max_clients(client));
            }
            if (rate > 0 && now >= next_payload) {
                netcode_client_send_payload(client, now, payload, payload_bytes);
                next_payload += 1.0 / rate;
                if (next_payload < now) next_payload = now + 1.0 / rate;
            }
            if (duration > 0 && now - connected_at >= duration) {
                outcome = "done";
                break;
            }
        } else if (state <= NETCODE_CLIENT_DISCONNECTED) {
            outcome = netcode_client_state_name(state);
            if (state < NETCODE_CLIENT_DISCONNECTED || !ever_connected) exit_code = EXIT_NOT_CONNECTED;
            if (state == NETCODE_CLIENT_DISCONNECTED && ever_connected) outcome = "disconnected by the server";
            break;
        }
        if (!common.quiet && now >= next_progress) {
            next_progress += 1.0;
            const uint64_t *k = netcode_client_counters(client);
            fprintf(stderr, "%s: %s, sent %llu, received %llu, payloads %llu/%llu%s", program,
                    netcode_client_state_name(state), (unsigned long long)k[NETCODE_CLIENT_COUNTER_SENT],
                    (unsigned long long)k[NETCODE_CLIENT_COUNTER_DECRYPTED],
                    (unsigned long long)k[NETCODE_CLIENT_COUNTER_PAYLOADS_SENT],
                    (unsigned long long)k[NETCODE_CLIENT_COUNTER_PAYLOADS_RECEIVED], app_progress_end());
            progress_shown = 1;
        }
    }
done:
    if (netcode_client_state(client) > NETCODE_CLIENT_DISCONNECTED) {
        /* Stopped (duration or signal): say goodbye, as the library's client does. */
        netcode_client_disconnect(client, platform_time() - start);
        if (!ever_connected && !interrupted && exit_code == EXIT_OK) exit_code = EXIT_NOT_CONNECTED;
    }
    if (!common.quiet) app_progress_finish(progress_shown);
    exit_code = app_capture_finish(&app.capture, program, exit_code);
    const uint64_t *k = netcode_client_counters(client);
    fprintf(stderr, "%s: %s after %.1f s; final state: %s%s\n", program, outcome ? outcome : "stopped",
            platform_time() - start, netcode_client_state_name(netcode_client_state(client)),
            ever_connected ? "" : " (never connected)");
    fprintf(stderr, "  payloads: %llu sent, %llu received (%llu with the expected bytes, %llu not)\n",
            (unsigned long long)k[NETCODE_CLIENT_COUNTER_PAYLOADS_SENT],
            (unsigned long long)k[NETCODE_CLIENT_COUNTER_PAYLOADS_RECEIVED], (unsigned long long)app.payloads_ok,
            (unsigned long long)app.payloads_bad);
    fprintf(stderr, "  counters:");
    int shown = 0;
    for (int i = 0; i < NETCODE_CLIENT_COUNTER_COUNT; i++)
        if (k[i]) fprintf(stderr, "%s %s %llu", shown++ ? "," : "", netcode_client_counter_name(i), (unsigned long long)k[i]);
    fprintf(stderr, "\n  datagrams: %llu sent, %llu received, %llu send errors\n", (unsigned long long)app.datagrams_sent,
            (unsigned long long)app.datagrams_received, (unsigned long long)app.send_errors);
    app_capture_print(&app.capture);
    if (app.payloads_bad && exit_code == EXIT_OK) exit_code = EXIT_NOT_CONNECTED;
    netcode_client_destroy(client);
    free(datagram);
    platform_socket_close(&app.socket);
    return exit_code;
}
