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

/* Server updates and payloads every tick. */
#define TICK 0.01

typedef struct server_t {
    /* options */
    netcode_server_config_t config;
    app_common_options_t common; /* -b, -w, -q, -v */
    const char *public_text, *port_file, *keys_path;
    double duration, rate;
    int payload_bytes, once;
    /* I/O */
    netcode_app_link_t link;
    FILE *keylog;      /* --keys: a connection line for each client */
    uint8_t payload[NETCODE_MAX_PAYLOAD_BYTES];
    /* state */
    netcode_server_t *server;
    double start, now, next_tick, next_progress;
    double next_payload[NETCODE_MAX_CLIENTS];
    int served, ended, exit_code, progress_shown;
    const char *outcome; /* why it stopped */
} server_t;

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

/* ---- options ---- */

enum { OPT_PUBLIC = 256, OPT_PORT_FILE, OPT_KEY, OPT_KEY_FILE, OPT_PROTOCOL_ID, OPT_MAX_CLIENTS, OPT_RATE, OPT_PAYLOAD,
       OPT_ONCE, OPT_KEYS };

/* Applies one of netcode-server's own options (app_own_option_fn). */
static int own_option(void *context, int opt, const char *text)
{
    server_t *s = context;
    char err[256];
    switch (opt) {
    case OPT_PUBLIC: s->public_text = text; break;
    case OPT_PORT_FILE: s->port_file = text; break;
    case OPT_KEY:
        if (netcode_app_parse_key(text, s->config.private_key) != 0)
            app_bad_argument(program, "bad --key '%s': expected 64 hex digits", text);
        break;
    case OPT_KEY_FILE:
        if (netcode_app_read_key_file(text, s->config.private_key, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --key-file %s: %s\n", program, text, err);
            exit(EXIT_IO);
        }
        break;
    case OPT_PROTOCOL_ID:
        if (netcode_app_parse_u64(text, &s->config.protocol_id) != 0)
            app_bad_argument(program, "bad --protocol-id '%s': expected a 64-bit number", text);
        break;
    case OPT_MAX_CLIENTS: s->config.max_clients = (int)app_int_option(program, "max-clients", text, 1, NETCODE_MAX_CLIENTS); break;
    case OPT_RATE: s->rate = (double)app_int_option(program, "rate", text, 0, 1000); break;
    case OPT_PAYLOAD: s->payload_bytes = (int)app_int_option(program, "payload", text, 1, NETCODE_MAX_PAYLOAD_BYTES); break;
    case OPT_ONCE: s->once = 1; break;
    case 't':
        s->duration = app_positive_seconds_arg(program, "duration", text, 1e7, "seconds above 0, e.g. 20 or 500ms");
        break;
    case OPT_KEYS: s->keys_path = text; break;
    default: return 0;
    }
    return 1;
}

static void parse_options(server_t *s, int argc, char **argv)
{
    static const struct option options[] = {
        {"bind", required_argument, 0, 'b'},          {"public", required_argument, 0, OPT_PUBLIC},
        {"port-file", required_argument, 0, OPT_PORT_FILE}, {"key", required_argument, 0, OPT_KEY},
        {"key-file", required_argument, 0, OPT_KEY_FILE}, {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
        {"max-clients", required_argument, 0, OPT_MAX_CLIENTS}, {"rate", required_argument, 0, OPT_RATE},
        {"payload", required_argument, 0, OPT_PAYLOAD}, {"once", no_argument, 0, OPT_ONCE},
        {"duration", required_argument, 0, 't'},      {"keys", required_argument, 0, OPT_KEYS},
        APP_COMMON_LONG_OPTIONS,                      {0, 0, 0, 0},
    };
    netcode_server_default_config(&s->config);
    memcpy(s->config.private_key, netcode_app_example_key, NETCODE_KEY_BYTES);
    s->rate = 10;
    s->payload_bytes = NETCODE_MAX_PAYLOAD_BYTES;
    int first = app_parse_options(program, argc, argv, ":b:t:w:qvh", options, usage, &s->common, own_option, s);
    if (first < argc) app_bad_argument(program, "unexpected argument '%s'", argv[first]);
    if (!s->common.bind_text) s->common.bind_text = "127.0.0.1:40000";
    app_set_verbosity(s->common.verbosity);
}

/* ---- setting up ---- */

/* The address to listen on (--bind) and the one tokens must name (--public,
 * or the bind address). Returns only when both are good: a bad one is a
 * usage error. */
static void resolve_addresses(const server_t *s, platform_address_t *bind_address, platform_address_t *public_address)
{
    const char *bind_text = s->common.bind_text;
    char err[256];
    if (platform_address_parse(bind_text, 0, NETCODE_DEFAULT_SERVER_PORT, bind_address, err, sizeof err) != 0)
        app_bad_argument(program, "bad --bind '%s': %s", bind_text, err);
    static const uint8_t zero[16];
    int unspecified = memcmp(bind_address->addr, zero, bind_address->family == 6 ? 16 : 4) == 0;
    if (s->public_text) {
        if (platform_address_parse(s->public_text, 0, bind_address->port, public_address, err, sizeof err) != 0)
            app_bad_argument(program, "bad --public '%s': %s", s->public_text, err);
    } else if (unspecified) {
        app_bad_argument(program, "--bind %s is no address a token can name: give --public ADDR:PORT", bind_text);
    } else {
        *public_address = *bind_address;
    }
}

static void on_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    server_t *s = context;
    netcode_app_link_send(&s->link, to, packet, bytes);
}

static void on_payload(void *context, int client_index, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)client_index;
    (void)sequence;
    server_t *s = context;
    netcode_app_link_check_payload(&s->link, payload, bytes);
}

static void on_client(void *context, int index, int connected, int reason)
{
    server_t *s = context;
    char text[64];
    if (connected) {
        s->served++;
        s->next_payload[index] = s->now;
        if (s->keylog) {
            uint8_t c2s[NETCODE_KEY_BYTES], s2c[NETCODE_KEY_BYTES];
            netcode_server_client_keys(s->server, index, c2s, s2c);
            fprintf(s->keylog, "# client %d, %s\n", index,
                    netcode_address_format(netcode_server_client_address(s->server, index), text, sizeof text));
            netcode_app_keylog_connection(s->keylog, c2s, s2c);
        }
        cs_log_message(CS_LOG_LEVEL_INFO, "%.3f s: client %d connected from %s, id 0x%016llx", s->now, index,
                    netcode_address_format(netcode_server_client_address(s->server, index), text, sizeof text),
                    (unsigned long long)netcode_server_client_id(s->server, index));
    } else {
        s->ended++;
        cs_log_message(CS_LOG_LEVEL_INFO, "%.3f s: client %d %s", s->now, index, netcode_end_reason_name(reason));
    }
}

/* Resolves the addresses, opens the socket, the port file, the pcap and the
 * key log, and creates the server. Returns 0, or the exit code after
 * printing why. */
static int set_up(server_t *s)
{
    platform_address_t bind_address, public_address;
    resolve_addresses(s, &bind_address, &public_address);
    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    if (platform_socket_open(&s->link.socket, &bind_address, 0, err, sizeof err) != 0) {
        fprintf(stderr, "%s: cannot listen on %s: %s\n", program, platform_address_format(&bind_address, text, sizeof text), err);
        return EXIT_IO;
    }
    if (public_address.port == 0) public_address.port = s->link.socket.bound.port; /* --bind ...:0 */
    if (s->port_file && app_write_port_file(program, s->port_file, s->link.socket.bound.port) != 0) return EXIT_IO;
    if (app_capture_open(&s->link.capture, program, s->common.pcap_path) != 0) return EXIT_IO;
    if (s->keys_path) {
        s->keylog = netcode_app_keylog_open(program, s->keys_path, 1);
        if (!s->keylog) return EXIT_IO;
        netcode_app_keylog_private_key(s->keylog, s->config.private_key);
        fflush(s->keylog);
    }
    netcode_app_address_from_platform(&public_address, &s->config.public_address);
    s->start = platform_time();
    s->config.unix_epoch = platform_wall_time();
    s->config.send = on_send;
    s->config.receive = on_payload;
    s->config.client_event = on_client;
    s->config.context = s;
    s->server = netcode_server_create(&s->config, 0);
    if (!s->server) {
        fprintf(stderr, "%s: out of memory (or libsodium cannot start)\n", program);
        return EXIT_IO;
    }
    netcode_app_fill_payload(s->payload, s->payload_bytes);
    return 0;
}

/* ---- one turn of the event loop ---- */

/* A datagram for the server (netcode_app_link_receive_all), at s->now. */
static void on_packet(void *context, const netcode_address_t *from, const uint8_t *packet, int bytes)
{
    server_t *s = context;
    netcode_server_receive_packet(s->server, s->now, from, packet, bytes);
}

/* Sends each connected client its payloads due at --rate. */
static void send_payloads(server_t *s, double now)
{
    for (int i = 0; i < s->config.max_clients && s->rate > 0; i++) {
        if (!netcode_server_client_connected(s->server, i) || now < s->next_payload[i]) continue;
        netcode_server_send_payload(s->server, now, i, s->payload, s->payload_bytes);
        app_advance_deadline(&s->next_payload[i], 1.0 / s->rate, now);
    }
}

/* 1 when the run is over: --once and the client's connection ended, or
 * --duration (outcome and exit code set). */
static int finished(server_t *s, double now)
{
    if (s->once && s->ended > 0) {
        s->outcome = "the client's connection ended";
        return 1;
    }
    if (s->duration > 0 && now >= s->duration) {
        s->outcome = "done";
        if (s->once && !s->served) s->exit_code = EXIT_NO_CLIENT, s->outcome = "no client";
        return 1;
    }
    return 0;
}

static void print_progress(server_t *s)
{
    s->next_progress += 1.0;
    const uint64_t *k = netcode_server_counters(s->server);
    fprintf(stderr, "%s: %d connected, sent %llu, received %llu, payloads %llu/%llu%s", program,
            netcode_server_connected_clients(s->server), (unsigned long long)k[NETCODE_SERVER_COUNTER_SENT],
            (unsigned long long)k[NETCODE_SERVER_COUNTER_RECEIVED],
            (unsigned long long)k[NETCODE_SERVER_COUNTER_PAYLOADS_SENT],
            (unsigned long long)k[NETCODE_SERVER_COUNTER_PAYLOADS_RECEIVED], app_progress_end());
    s->progress_shown = 1;
}

/* Serves until --duration, --once's client is done, a signal or an error
 * stops it; then disconnects every client. */
static void run(server_t *s)
{
    s->next_progress = 1;
    for (;;) {
        double now;
        if (app_wait_for_tick(program, s->link.socket.fd, s->start, s->next_tick, &now, &s->exit_code, &s->outcome) != 0)
            break;
        s->now = now;
        if (netcode_app_link_receive_all(&s->link, program, EXIT_IO, &s->exit_code, &s->outcome, on_packet, s) != 0)
            break;
        if (!app_tick_due(&s->next_tick, TICK, now)) continue;
        netcode_server_update(s->server, now);
        send_payloads(s, now);
        if (finished(s, now)) break;
        if (!s->common.quiet && now >= s->next_progress) print_progress(s);
    }
    for (int i = 0; i < s->config.max_clients; i++)
        netcode_server_disconnect_client(s->server, platform_time() - s->start, i);
}

static void print_summary(const server_t *s)
{
    const uint64_t *k = netcode_server_counters(s->server);
    fprintf(stderr, "%s: %s after %.1f s; %d client(s) served\n", program, s->outcome ? s->outcome : "stopped",
            platform_time() - s->start, s->served);
    netcode_app_link_print_summary(&s->link, k[NETCODE_SERVER_COUNTER_PAYLOADS_SENT],
                                   k[NETCODE_SERVER_COUNTER_PAYLOADS_RECEIVED], k, NETCODE_SERVER_COUNTER_COUNT,
                                   netcode_server_counter_name);
}

int netcode_app_server_main(int argc, char **argv)
{
    static server_t s;
    cs_log_set_name(program);
    parse_options(&s, argc, argv);
    int code = set_up(&s);
    if (code != 0) return code;
    platform_catch_signals();
    char text[PLATFORM_ADDRESS_STRING_SIZE], address[64];
    cs_log_message(CS_LOG_LEVEL_INFO, "listening on %s for tokens naming %s, protocol id 0x%016llx, %d slots",
                platform_address_format(&s.link.socket.bound, text, sizeof text),
                netcode_address_format(&s.config.public_address, address, sizeof address),
                (unsigned long long)s.config.protocol_id, s.config.max_clients);

    run(&s);
    if (!s.common.quiet) app_progress_finish(s.progress_shown);
    s.exit_code = app_capture_finish(&s.link.capture, program, s.exit_code);
    if (s.keylog && netcode_app_keylog_close(program, s.keys_path, s.keylog) != 0 && s.exit_code == EXIT_OK)
        s.exit_code = EXIT_IO;
    print_summary(&s);
    if (s.link.payloads_bad && s.exit_code == EXIT_OK) s.exit_code = EXIT_NO_CLIENT;
    netcode_server_destroy(s.server);
    platform_socket_close(&s.link.socket);
    return s.exit_code;
}
