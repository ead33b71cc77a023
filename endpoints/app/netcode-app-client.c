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

/* Client updates and payloads every tick. */
#define TICK 0.01

typedef struct client_t {
    /* options */
    app_common_options_t common; /* -b, -w, -q, -v */
    const char *keys_path, *token_path;
    double duration, rate;
    int payload_bytes;
    /* I/O */
    netcode_app_link_t link;
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES + 1];
    int token_bytes;
    netcode_connect_token_t fields; /* the token's public part */
    uint8_t payload[NETCODE_MAX_PAYLOAD_BYTES];
    /* state */
    netcode_client_t *client;
    double start, now, next_tick, next_payload, next_progress, connected_at;
    int exit_code, progress_shown, ever_connected, interrupted;
    const char *outcome; /* why it stopped */
} client_t;

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

/* ---- options ---- */

enum { OPT_RATE = 256, OPT_PAYLOAD, OPT_KEYS };

/* Applies one of netcode-client's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    client_t *c = context;
    switch (opt) {
    case 't':
        c->duration = app_positive_seconds_arg(program, "duration", text, 1e7, "seconds above 0, e.g. 5 or 500ms");
        break;
    case OPT_RATE: c->rate = (double)app_int_option(program, "rate", text, 0, 1000); break;
    case OPT_PAYLOAD: c->payload_bytes = (int)app_int_option(program, "payload", text, 1, NETCODE_MAX_PAYLOAD_BYTES); break;
    case OPT_KEYS: c->keys_path = text; break;
    default: return 0;
    }
    return 1;
}

static void parse_options(client_t *c, int argc, char **argv)
{
    static const struct option options[] = {
        {"duration", required_argument, 0, 't'}, {"rate", required_argument, 0, OPT_RATE},
        {"payload", required_argument, 0, OPT_PAYLOAD}, {"bind", required_argument, 0, 'b'},
        {"keys", required_argument, 0, OPT_KEYS}, APP_COMMON_LONG_OPTIONS, {0, 0, 0, 0},
    };
    c->rate = 10;
    c->payload_bytes = NETCODE_MAX_PAYLOAD_BYTES;
    int first = app_parse_options(program, argc, argv, ":t:b:w:qvh", options, usage, &c->common, own_option, c);
    if (first >= argc) app_bad_argument(program, "missing TOKEN_FILE");
    if (argc - first > 1) app_bad_argument(program, "unexpected argument '%s'", argv[first + 1]);
    c->token_path = argv[first];
    app_set_verbosity(c->common.verbosity);
}

/* ---- setting up ---- */

/* Reads the token file and its public part. Returns 0, or the exit code
 * after printing why. */
static int read_token(client_t *c)
{
    FILE *in = fopen(c->token_path, "rb");
    if (!in) {
        fprintf(stderr, "%s: cannot read %s: %s\n", program, c->token_path, strerror(errno));
        return EXIT_IO;
    }
    c->token_bytes = (int)fread(c->token, 1, sizeof c->token, in);
    fclose(in);
    netcode_token_result_t tr = netcode_read_connect_token(c->token, c->token_bytes, &c->fields);
    if (tr != NETCODE_TOKEN_OK) {
        fprintf(stderr, "%s: %s is not a netcode 1.02 connect token: %s\n", program, c->token_path,
                netcode_token_result_name(tr));
        return EXIT_USAGE;
    }
    return 0;
}

/* Opens the socket on --bind (or the any address) of the first server's
 * family. Returns 0, or the exit code after printing why. */
static int open_socket(client_t *c)
{
    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    int family = c->fields.servers[0].type == NETCODE_ADDRESS_IPV6 ? 6 : 4;
    platform_address_t local;
    if (c->common.bind_text) {
        if (platform_address_parse(c->common.bind_text, family, 0, &local, err, sizeof err) != 0)
            app_bad_argument(program, "bad --bind '%s': %s", c->common.bind_text, err);
    } else {
        platform_address_any(&local, family, 0);
    }
    if (platform_socket_open(&c->link.socket, &local, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: cannot open a socket on %s: %s\n", program, platform_address_format(&local, text, sizeof text), err);
        return EXIT_IO;
    }
    return 0;
}

static void on_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    client_t *c = context;
    netcode_app_link_send(&c->link, to, packet, bytes);
}

static void on_payload(void *context, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    client_t *c = context;
    netcode_app_link_check_payload(&c->link, payload, bytes);
}

static void on_state(void *context, int from, int to)
{
    client_t *c = context;
    cs_log_message(CS_LOG_LEVEL_INFO, "%.3f s: %s -> %s", c->now, netcode_client_state_name(from), netcode_client_state_name(to));
}

/* Reads the token, opens the socket, the pcap and the key log, and creates
 * the client. Returns 0, or the exit code after printing why. */
static int set_up(client_t *c)
{
    int code = read_token(c);
    if (code != 0) return code;
    if (netcode_crypto_init() != 0) {
        fprintf(stderr, "%s: libsodium cannot start\n", program);
        return EXIT_IO;
    }
    code = open_socket(c);
    if (code != 0) return code;
    if (app_capture_open(&c->link.capture, program, c->common.pcap_path) != 0) return EXIT_IO;
    if (c->keys_path) {
        FILE *log = netcode_app_keylog_open(program, c->keys_path, 1);
        if (!log) return EXIT_IO;
        netcode_app_keylog_connection(log, c->fields.client_to_server_key, c->fields.server_to_client_key);
        if (netcode_app_keylog_close(program, c->keys_path, log) != 0) return EXIT_IO;
    }
    c->start = platform_time();
    netcode_client_config_t config = {platform_wall_time(), on_send, on_payload, on_state, c};
    c->client = netcode_client_create(&config);
    if (!c->client) return app_out_of_memory(program, EXIT_IO);
    netcode_app_fill_payload(c->payload, c->payload_bytes);
    return 0;
}

/* ---- one turn of the event loop ---- */

/* A datagram for the client (netcode_app_link_receive_all), at c->now. */
static void on_packet(void *context, const netcode_address_t *from, const uint8_t *packet, int bytes)
{
    client_t *c = context;
    netcode_client_receive_packet(c->client, c->now, from, packet, bytes);
}

/* While connected: notes the connection, sends the payloads due at --rate.
 * Returns 1 when --duration has passed since it connected (outcome set). */
static int connected(client_t *c, double now)
{
    if (!c->ever_connected) {
        c->ever_connected = 1;
        c->connected_at = now;
        c->next_payload = now;
        cs_log_message(CS_LOG_LEVEL_INFO, "connected as client %d of %d", netcode_client_index(c->client),
                    netcode_client_max_clients(c->client));
    }
    if (c->rate > 0 && now >= c->next_payload) {
        netcode_client_send_payload(c->client, now, c->payload, c->payload_bytes);
        app_advance_deadline(&c->next_payload, 1.0 / c->rate, now);
    }
    if (c->duration > 0 && now - c->connected_at >= c->duration) {
        c->outcome = "done";
        return 1;
    }
    return 0;
}

/* 1 when the run is over: --duration after connecting, or the client
 * disconnected or failed to connect (outcome and exit code set). */
static int finished(client_t *c, double now, int state)
{
    if (state == NETCODE_CLIENT_CONNECTED) return connected(c, now);
    if (state > NETCODE_CLIENT_DISCONNECTED) return 0;
    c->outcome = netcode_client_state_name(state);
    if (state < NETCODE_CLIENT_DISCONNECTED || !c->ever_connected) c->exit_code = EXIT_NOT_CONNECTED;
    if (state == NETCODE_CLIENT_DISCONNECTED && c->ever_connected) c->outcome = "disconnected by the server";
    return 1;
}

static void print_progress(client_t *c, int state)
{
    c->next_progress += 1.0;
    const uint64_t *k = netcode_client_counters(c->client);
    fprintf(stderr, "%s: %s, sent %llu, received %llu, payloads %llu/%llu%s", program,
            netcode_client_state_name(state), (unsigned long long)k[NETCODE_CLIENT_COUNTER_SENT],
            (unsigned long long)k[NETCODE_CLIENT_COUNTER_DECRYPTED],
            (unsigned long long)k[NETCODE_CLIENT_COUNTER_PAYLOADS_SENT],
            (unsigned long long)k[NETCODE_CLIENT_COUNTER_PAYLOADS_RECEIVED], app_progress_end());
    c->progress_shown = 1;
}

/* Connects and exchanges payloads until --duration, the end of the
 * connection, a signal or an error stops it; then says goodbye when still
 * connected or connecting. */
static void run(client_t *c)
{
    c->next_progress = 1;
    c->connected_at = -1;
    for (;;) {
        double now;
        if (app_wait_for_tick(program, c->link.socket.fd, c->start, c->next_tick, &now, &c->exit_code,
                              &c->outcome) != 0) {
            c->interrupted = 1;
            break;
        }
        c->now = now;
        if (netcode_app_link_receive_all(&c->link, program, EXIT_IO, &c->exit_code, &c->outcome, on_packet, c) != 0)
            break;
        if (!app_tick_due(&c->next_tick, TICK, now)) continue;
        netcode_client_update(c->client, now);
        int state = netcode_client_state(c->client);
        if (finished(c, now, state)) break;
        if (!c->common.quiet && now >= c->next_progress) print_progress(c, state);
    }
    if (netcode_client_state(c->client) > NETCODE_CLIENT_DISCONNECTED) {
        /* Stopped (duration or signal): say goodbye, as the library's client does. */
        netcode_client_disconnect(c->client, platform_time() - c->start);
        if (!c->ever_connected && !c->interrupted && c->exit_code == EXIT_OK) c->exit_code = EXIT_NOT_CONNECTED;
    }
}

static void print_summary(const client_t *c)
{
    const uint64_t *k = netcode_client_counters(c->client);
    fprintf(stderr, "%s: %s after %.1f s; final state: %s%s\n", program, c->outcome ? c->outcome : "stopped",
            platform_time() - c->start, netcode_client_state_name(netcode_client_state(c->client)),
            c->ever_connected ? "" : " (never connected)");
    netcode_app_link_print_summary(&c->link, k[NETCODE_CLIENT_COUNTER_PAYLOADS_SENT],
                                   k[NETCODE_CLIENT_COUNTER_PAYLOADS_RECEIVED], k, NETCODE_CLIENT_COUNTER_COUNT,
                                   netcode_client_counter_name);
}

int netcode_app_client_main(int argc, char **argv)
{
    static client_t c;
    cs_log_set_name(program);
    parse_options(&c, argc, argv);
    int code = set_up(&c);
    if (code != 0) return code;
    platform_catch_signals();
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    cs_log_message(CS_LOG_LEVEL_INFO, "connecting to %s", netcode_address_format(&c.fields.servers[0], text, sizeof text));
    netcode_client_connect(c.client, 0, c.token, c.token_bytes);

    run(&c);
    if (!c.common.quiet) app_progress_finish(c.progress_shown);
    c.exit_code = app_capture_finish(&c.link.capture, program, c.exit_code);
    print_summary(&c);
    if (c.link.payloads_bad && c.exit_code == EXIT_OK) c.exit_code = EXIT_NOT_CONNECTED;
    netcode_client_destroy(c.client);
    platform_socket_close(&c.link.socket);
    return c.exit_code;
}
