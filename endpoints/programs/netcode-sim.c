/*
 * netcode-sim: netcode 1.02 clients (host A, 10.0.0.1:50000, 50001, ...) and
 * a server (host B, 10.0.0.2:40000) talking through the network simulator in
 * virtual time: connect tokens, the handshake, payloads both ways at a rate,
 * and the clients' disconnect at the end. Every key and nonce comes from the
 * seed, so the same options give the same pcap, truth file and key log byte
 * for byte. Faults: an expired token, a wrong protocol id or private key, a
 * full server, lost challenges or responses, a side that goes silent.
 *
 * Link 0 carries A -> B, link 1 B -> A. The truth file is described in
 * docs/truth.md "netcode-sim", the key log in docs/netcode-endpoints.md.
 *
 * Exit codes: 0 every client connected (or a fault option explains why
 * not); 1 a client never connected; 2 bad arguments; 4 a file could not be
 * written.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "netcode-app.h"
#include "netcode-stack.h"
#include "netcode.h"
#include "netsim.h"
#include "platform.h"
#include "simprog.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_NOT_CONNECTED = 1, EXIT_USAGE = SIMPROG_EXIT_USAGE, EXIT_IO = SIMPROG_EXIT_IO };
static const char *const program = "netcode-sim";

#define MAX_SIM_CLIENTS 16
#define CLIENT_PORT NETCODE_STACK_CLIENT_PORT
#define SERVER_PORT NETCODE_STACK_SERVER_PORT
#define SIM_UNIX_EPOCH NETCODE_STACK_UNIX_EPOCH
/* Bytes the simulator carries in front of each datagram: client, record index. */
#define TAG_BYTES 5
#define GRACE 0.5 /* virtual seconds after the clients disconnect */

typedef struct options_t {
    simprog_t sp;
    int clients, max_clients;
    double duration, stagger;
    int payload_bytes;
    double rate;
    uint64_t protocol_id, server_protocol_id;
    int server_protocol_given;
    int expire_seconds, timeout_seconds;
    int expired_token, wrong_key, no_disconnect;
    double server_disconnects_at;
    netcode_faults_t faults;
    int drop_challenges, drop_responses; /* as asked (the faults count down) */
    const char *keys_path;
} options_t;

typedef struct record_t {
    double time;
    int from_server, client, type, bytes, fate, deliveries, taken;
    uint64_t sequence;
    uint32_t frames[3];
    int frame_count;
} record_t;


typedef struct state_change_t {
    double time;
    int state;
} state_change_t;

typedef struct client_side_t {
    netcode_client_t *client;
    netcode_connect_token_t token;
    uint64_t client_id;
    double start_time, next_payload;
    int started;
    state_change_t changes[16];
    int change_count;
    int connected_once;
    double connected_at;
    uint64_t payloads_ok, payloads_bad;
    /* the server's view of this client */
    int slot;                /* -1 none */
    int server_connected_once;
    double server_connected_at, server_ended_at;
    int server_end_reason;   /* NETCODE_END_*, or -1 still connected at the end */
    double server_next_payload;
    uint64_t server_payloads_ok, server_payloads_bad;
} client_side_t;

typedef struct run_t {
    options_t *opt;
    simprog_t *sp;
    netcode_stack_t stack; /* the keys, the server */
    client_side_t c[MAX_SIM_CLIENTS];
    pcapout_addr_t client_addr[MAX_SIM_CLIENTS], server_addr;
    record_t *records;
    int count, capacity;
    double now;
    uint8_t token_key[NETCODE_KEY_BYTES]; /* what the tokens are encrypted with: the private key, or not (--wrong-key) */
    uint8_t payload[NETCODE_MAX_PAYLOAD_BYTES];
    int disconnected, server_disconnected; /* at --duration, at --server-disconnects-at */
} run_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: netcode-sim [options]\n"
"Runs netcode 1.02 clients (host A, 10.0.0.1:50000, 50001, ...) and a server\n"
"(host B, 10.0.0.2:40000) over a seeded network simulator in virtual time:\n"
"connect tokens, challenge and response, payloads both ways, and the clients'\n"
"disconnect at the end. Keys and nonces come from --seed.\n"
"\n");
    simprog_print_help_output(out, "client|a (default) or server|b", "per-connection");
    fprintf(out,
"      --keys FILE          write the key log (private key and each connection's keys)\n"
"Run:\n"
"      --duration SEC       virtual time before the clients disconnect (default 5s;\n"
"                           the run goes on 0.5 s more); same as --time-limit\n"
"      --tick SEC           endpoint update interval (default 10ms)\n");
    simprog_print_help_link(out);
    fprintf(out,
"Endpoints:\n"
"      --clients N          clients, started --stagger apart (1..%d, default 1)\n"
"      --stagger SEC        between client starts (default 250ms)\n"
"      --max-clients N      server slots (1..256, default 4)\n"
"      --payload BYTES      payload of every payload packet (1..1200, default 64;\n"
"                           bytes 0, 1, 2, ... as the reference examples)\n"
"      --rate PPS           payload packets per second each way per client (default 10; 0 none)\n"
"      --protocol-id N      the tokens' and the server's protocol id (default 0x1122334455667788)\n"
"      --expire SEC         token expiry after its creation (default 30)\n"
"      --timeout SEC        token timeout (default 5; -1 none)\n"
"      --no-disconnect      the clients do not disconnect at the end\n"
"      --server-disconnects-at SEC  the server disconnects every client at SEC\n"
"Faults:\n"
"      --expired-token      tokens created --expire + 1 s before their client starts\n"
"      --server-protocol-id N  the server expects another protocol id\n"
"      --wrong-key          tokens encrypted with another private key than the server's\n"
"      --drop-challenges N  lose the first N challenge packets ('all' for every one)\n"
"      --drop-responses N   lose the first N response packets ('all' for every one)\n"
"      --server-silent-at SEC  from SEC, every datagram of the server is lost\n"
"      --client-silent-at SEC  from SEC, every datagram of the clients is lost\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 every client connected (or a fault explains why not); 1 a\n"
"client never connected; 2 bad arguments; 4 file error.\n", MAX_SIM_CLIENTS);
}

/* ---- options ---- */

enum {
    OPT_DURATION = 256, OPT_CLIENTS, OPT_STAGGER, OPT_MAX_CLIENTS, OPT_PAYLOAD, OPT_RATE, OPT_PROTOCOL_ID, OPT_EXPIRE,
    OPT_TIMEOUT, OPT_NO_DISCONNECT, OPT_SERVER_DISCONNECTS, OPT_EXPIRED_TOKEN, OPT_SERVER_PROTOCOL_ID, OPT_WRONG_KEY,
    OPT_DROP_CHALLENGES, OPT_DROP_RESPONSES, OPT_SERVER_SILENT, OPT_CLIENT_SILENT, OPT_KEYS,
};

static const struct option own_options[] = {
    {"duration", required_argument, 0, OPT_DURATION},
    {"clients", required_argument, 0, OPT_CLIENTS},
    {"stagger", required_argument, 0, OPT_STAGGER},
    {"max-clients", required_argument, 0, OPT_MAX_CLIENTS},
    {"payload", required_argument, 0, OPT_PAYLOAD},
    {"rate", required_argument, 0, OPT_RATE},
    {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
    {"expire", required_argument, 0, OPT_EXPIRE},
    {"timeout", required_argument, 0, OPT_TIMEOUT},
    {"no-disconnect", no_argument, 0, OPT_NO_DISCONNECT},
    {"server-disconnects-at", required_argument, 0, OPT_SERVER_DISCONNECTS},
    {"expired-token", no_argument, 0, OPT_EXPIRED_TOKEN},
    {"server-protocol-id", required_argument, 0, OPT_SERVER_PROTOCOL_ID},
    {"wrong-key", no_argument, 0, OPT_WRONG_KEY},
    {"drop-challenges", required_argument, 0, OPT_DROP_CHALLENGES},
    {"drop-responses", required_argument, 0, OPT_DROP_RESPONSES},
    {"server-silent-at", required_argument, 0, OPT_SERVER_SILENT},
    {"client-silent-at", required_argument, 0, OPT_CLIENT_SILENT},
    {"keys", required_argument, 0, OPT_KEYS},
    {"help", no_argument, 0, 'h'},
};

static int drop_count(const char *name, const char *text)
{
    if (strcmp(text, "all") == 0) return -1;
    return (int)app_int_option(program, name, text, 0, 1000000);
}

static void own_option(void *context, int c, const char *name, const char *text)
{
    options_t *opt = context;
    switch (c) {
    case OPT_DURATION: opt->sp.time_limit = app_seconds_option(program, name, text, 1e5); break;
    case OPT_CLIENTS: opt->clients = (int)app_int_option(program, name, text, 1, MAX_SIM_CLIENTS); break;
    case OPT_STAGGER: opt->stagger = app_seconds_option(program, name, text, 3600); break;
    case OPT_MAX_CLIENTS: opt->max_clients = (int)app_int_option(program, name, text, 1, NETCODE_MAX_CLIENTS); break;
    case OPT_PAYLOAD: opt->payload_bytes = (int)app_int_option(program, name, text, 1, NETCODE_MAX_PAYLOAD_BYTES); break;
    case OPT_RATE: opt->rate = (double)app_int_option(program, name, text, 0, 1000); break;
    case OPT_PROTOCOL_ID:
    case OPT_SERVER_PROTOCOL_ID: {
        uint64_t v;
        if (netcode_app_parse_u64(text, &v) != 0)
            app_bad_argument(program, "bad --%s '%s': expected a 64-bit number (decimal or 0x hex)", name, text);
        if (c == OPT_PROTOCOL_ID) opt->protocol_id = v;
        else opt->server_protocol_id = v, opt->server_protocol_given = 1;
        break;
    }
    case OPT_EXPIRE: opt->expire_seconds = (int)app_int_option(program, name, text, 1, 86400 * 365); break;
    case OPT_TIMEOUT: opt->timeout_seconds = (int)app_int_option(program, name, text, -1, 3600); break;
    case OPT_NO_DISCONNECT: opt->no_disconnect = 1; break;
    case OPT_SERVER_DISCONNECTS: opt->server_disconnects_at = app_seconds_option(program, name, text, 1e5); break;
    case OPT_EXPIRED_TOKEN: opt->expired_token = 1; break;
    case OPT_WRONG_KEY: opt->wrong_key = 1; break;
    case OPT_DROP_CHALLENGES: opt->faults.drop_challenges = drop_count(name, text); break;
    case OPT_DROP_RESPONSES: opt->faults.drop_responses = drop_count(name, text); break;
    case OPT_SERVER_SILENT: opt->faults.silent_at[1] = app_seconds_option(program, name, text, 1e5); break;
    case OPT_CLIENT_SILENT: opt->faults.silent_at[0] = app_seconds_option(program, name, text, 1e5); break;
    case OPT_KEYS: opt->keys_path = text; break;
    default: app_bad_argument(program, "unhandled option");
    }
}

static void parse_options(options_t *opt, int argc, char **argv)
{
    simprog_init(&opt->sp, program, "client", "server", CLIENT_PORT, SERVER_PORT);
    opt->sp.time_limit = 5;
    opt->sp.tick = 0.01;
    opt->clients = 1;
    opt->max_clients = 4;
    opt->stagger = 0.25;
    opt->payload_bytes = 64;
    opt->rate = 10;
    opt->protocol_id = NETCODE_DEFAULT_PROTOCOL_ID;
    opt->expire_seconds = 30;
    opt->timeout_seconds = 5;
    opt->server_disconnects_at = -1;
    netcode_faults_init(&opt->faults);
    cs_log_set_name(program);
    simprog_parse_options(&opt->sp, argc, argv, own_options, (int)(sizeof own_options / sizeof own_options[0]), usage,
                          own_option, opt);
    if (opt->sp.time_limit <= 0) app_bad_argument(program, "--duration must be above 0");
    if (!opt->server_protocol_given) opt->server_protocol_id = opt->protocol_id;
    opt->duration = opt->sp.time_limit;
    opt->drop_challenges = opt->faults.drop_challenges;
    opt->drop_responses = opt->faults.drop_responses;
}

static int faulty(const options_t *opt)
{
    return opt->expired_token || opt->wrong_key || opt->server_protocol_id != opt->protocol_id ||
           opt->drop_challenges || opt->drop_responses || opt->faults.silent_at[0] >= 0 ||
           opt->faults.silent_at[1] >= 0 || opt->clients > opt->max_clients;
}

/* ---- endpoints' callbacks ---- */

typedef struct callback_t {
    run_t *run;
    int client; /* -1: the server */
} callback_t;

static callback_t callbacks[MAX_SIM_CLIENTS + 1];

static int client_of_address(const run_t *run, const netcode_address_t *a)
{
    int index = a->port - CLIENT_PORT;
    return index >= 0 && index < run->opt->clients ? index : -1;
}

/* Records a datagram in the pcap when side is the capture point. */
static uint32_t record_frame(run_t *run, int side, int from_server, int client, const uint8_t *packet, int bytes)
{
    simprog_t *sp = run->sp;
    if (!sp->pcap || side != sp->capture_side) return 0;
    const pcapout_addr_t *src = from_server ? &run->server_addr : &run->client_addr[client];
    const pcapout_addr_t *dst = from_server ? &run->client_addr[client] : &run->server_addr;
    /* frames on the clock the tokens are stamped with (virtual time 0 is
     * SIM_UNIX_EPOCH), so that a reader can compare the two */
    if (pcapout_write_udp(sp->pcap, SIM_UNIX_EPOCH + run->now, src, dst, packet, bytes) != 0) sp->io_error = 1;
    return ++sp->frames;
}

static void on_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    callback_t *cb = context;
    run_t *run = cb->run;
    int from_server = cb->client < 0;
    int client = from_server ? client_of_address(run, to) : cb->client;
    if (client < 0) return;
    run->records = simprog_grow(run->sp, run->records, run->count, &run->capacity, sizeof *run->records);
    int index = run->count++;
    record_t *r = &run->records[index];
    memset(r, 0, sizeof *r);
    r->time = run->now;
    r->from_server = from_server;
    r->client = client;
    r->type = packet[0] & 0x0f;
    r->bytes = bytes;
    if (packet[0] != 0) {
        int n = packet[0] >> 4;
        for (int i = 0; i < n && 1 + i < bytes; i++) r->sequence |= (uint64_t)packet[1 + i] << (8 * i);
    }
    uint32_t frame = record_frame(run, from_server ? SIMPROG_SIDE_B : SIMPROG_SIDE_A, from_server, client, packet, bytes);
    if (frame) r->frames[r->frame_count++] = frame;

    static uint8_t tagged[NETCODE_MAX_PACKET_BYTES + TAG_BYTES];
    tagged[0] = (uint8_t)client;
    for (int i = 0; i < 4; i++) tagged[1 + i] = (uint8_t)(index >> (8 * i));
    memcpy(tagged + TAG_BYTES, packet, (size_t)bytes);
    int link = from_server ? 1 : 0;
    run->opt->faults.now = run->now;
    r->fate = simprog_send(run->sp, link, run->now, tagged, bytes + TAG_BYTES);
}

/* netsim's filter sees the tagged datagram: the faults read the packet. */
static int sim_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    if (bytes <= TAG_BYTES) return 0;
    return netcode_faults_filter(context, dir, packet + TAG_BYTES, bytes - TAG_BYTES);
}

static void on_client_state(void *context, int from, int to)
{
    (void)from;
    callback_t *cb = context;
    run_t *run = cb->run;
    client_side_t *c = &run->c[cb->client];
    if (c->change_count < (int)(sizeof c->changes / sizeof c->changes[0]))
        c->changes[c->change_count++] = (state_change_t){run->now, to};
    if (to == NETCODE_CLIENT_CONNECTED && !c->connected_once) {
        c->connected_once = 1;
        c->connected_at = run->now;
    }
}

static void on_client_payload(void *context, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    callback_t *cb = context;
    client_side_t *c = &cb->run->c[cb->client];
    if (netcode_app_payload_ok(payload, bytes)) c->payloads_ok++;
    else c->payloads_bad++;
}

static void on_server_payload(void *context, int slot, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    callback_t *cb = context;
    run_t *run = cb->run;
    int client = client_of_address(run, netcode_server_client_address(run->stack.server, slot));
    if (client < 0) return;
    if (netcode_app_payload_ok(payload, bytes)) run->c[client].server_payloads_ok++;
    else run->c[client].server_payloads_bad++;
}

static void on_server_client(void *context, int slot, int connected, int reason)
{
    callback_t *cb = context;
    run_t *run = cb->run;
    int client = client_of_address(run, netcode_server_client_address(run->stack.server, slot));
    if (client < 0) return;
    client_side_t *c = &run->c[client];
    if (connected) {
        c->slot = slot;
        c->server_end_reason = -1;
        if (!c->server_connected_once) c->server_connected_at = run->now;
        c->server_connected_once = 1;
        c->server_next_payload = run->now;
    } else {
        c->server_end_reason = reason;
        c->server_ended_at = run->now;
    }
}

/* simprog_run's arrival: a datagram from link `link` reaches the other host. */
static void deliver(void *context, int link, const uint8_t *tagged, int bytes)
{
    run_t *run = context;
    if (bytes <= TAG_BYTES) return;
    int client = tagged[0];
    uint32_t index = 0;
    for (int i = 0; i < 4; i++) index |= (uint32_t)tagged[1 + i] << (8 * i);
    const uint8_t *packet = tagged + TAG_BYTES;
    bytes -= TAG_BYTES;
    if (client >= run->opt->clients || index >= (uint32_t)run->count) return;
    record_t *r = &run->records[index];
    r->deliveries++;
    uint32_t frame = record_frame(run, link == 0 ? SIMPROG_SIDE_B : SIMPROG_SIDE_A, link == 1, client, packet, bytes);
    if (frame && r->frame_count < 3) r->frames[r->frame_count++] = frame;
    netcode_address_t from;
    int taken;
    if (link == 0) {
        netcode_address_ipv4(&from, 10, 0, 0, 1, (uint16_t)(CLIENT_PORT + client));
        taken = netcode_server_receive_packet(run->stack.server, run->now, &from, packet, bytes);
    } else {
        from = run->stack.server_address;
        taken = netcode_client_receive_packet(run->c[client].client, run->now, &from, packet, bytes);
    }
    if (taken) r->taken++;
}

/* ---- output ---- */

static void count_types(const run_t *run, int client, int from_server, uint64_t sent[7], uint64_t arrived[7],
                        uint64_t taken[7])
{
    memset(sent, 0, 7 * sizeof *sent);
    memset(arrived, 0, 7 * sizeof *arrived);
    memset(taken, 0, 7 * sizeof *taken);
    for (int i = 0; i < run->count; i++) {
        const record_t *r = &run->records[i];
        if (r->client != client || r->from_server != from_server || r->type >= 7) continue;
        sent[r->type]++;
        arrived[r->type] += (uint64_t)r->deliveries;
        taken[r->type] += (uint64_t)r->taken;
    }
}

static void write_types(FILE *out, const char *name, const uint64_t v[7])
{
    fprintf(out, "\"%s\": {", name);
    for (int t = 0; t < 7; t++) fprintf(out, "%s\"%s\": %llu", t ? ", " : "", netcode_packet_type_name(t), (unsigned long long)v[t]);
    fprintf(out, "}");
}

/* The truth file's "config" object (with the faults and the links). */
static void truth_config(FILE *out, const run_t *run)
{
    const options_t *opt = run->opt;
    const simprog_t *sp = run->sp;
    fprintf(out, "  \"config\": {\"seed\": %llu, \"duration\": %.6f, \"tick\": %.6f, \"clients\": %d, \"stagger\": %.6f, "
                 "\"max_clients\": %d, \"payload\": %d, \"rate\": %.3f, \"protocol_id\": \"0x%016llx\", "
                 "\"server_protocol_id\": \"0x%016llx\", \"expire\": %d, \"timeout\": %d, \"unix_epoch\": %.0f, "
                 "\"disconnect\": %s, \"server_disconnects_at\": ",
            (unsigned long long)sp->sim.seed, opt->duration, sp->tick, opt->clients, opt->stagger, opt->max_clients,
            opt->payload_bytes, opt->rate, (unsigned long long)opt->protocol_id,
            (unsigned long long)opt->server_protocol_id, opt->expire_seconds, opt->timeout_seconds, SIM_UNIX_EPOCH,
            truth_bool(!opt->no_disconnect));
    truth_seconds(out, opt->server_disconnects_at);
    fprintf(out, ",\n    \"faults\": {\"expired_token\": %s, \"wrong_key\": %s, \"drop_challenges\": %d, "
                 "\"drop_responses\": %d, \"server_silent_at\": ",
            truth_bool(opt->expired_token), truth_bool(opt->wrong_key), opt->drop_challenges, opt->drop_responses);
    truth_seconds(out, opt->faults.silent_at[1]);
    fprintf(out, ", \"client_silent_at\": ");
    truth_seconds(out, opt->faults.silent_at[0]);
    fprintf(out, "},\n");
    simprog_truth_config_links(out, sp);
}

/* A connection's "client_side" object: client i's state, its packets and counters. */
static void truth_client_side(FILE *out, const run_t *run, int i)
{
    const client_side_t *c = &run->c[i];
    uint64_t sent[7], arrived[7], taken[7];
    fprintf(out, "     \"client_side\": {\"state\": \"%s\", ", netcode_client_state_name(netcode_client_state(c->client)));
    truth_time_or_null(out, "connected_at", c->connected_once, c->connected_at);
    fprintf(out, ", \"client_index\": %d, \"max_clients\": %d, \"states\": [", netcode_client_index(c->client),
            netcode_client_max_clients(c->client));
    for (int k = 0; k < c->change_count; k++)
        fprintf(out, "%s{\"time\": %.6f, \"state\": \"%s\"}", k ? ", " : "", c->changes[k].time,
                netcode_client_state_name(c->changes[k].state));
    count_types(run, i, 0, sent, arrived, taken);
    fprintf(out, "],\n       ");
    write_types(out, "sent", sent);
    fprintf(out, ",\n       ");
    count_types(run, i, 1, sent, arrived, taken);
    write_types(out, "received", arrived);
    fprintf(out, ",\n       ");
    write_types(out, "decrypted", taken);
    fprintf(out, ",\n       \"payloads_ok\": %llu, \"payloads_bad\": %llu, \"counters\": ",
            (unsigned long long)c->payloads_ok, (unsigned long long)c->payloads_bad);
    truth_counters(out, netcode_client_counters(c->client), NETCODE_CLIENT_COUNTER_COUNT, netcode_client_counter_name);
    fprintf(out, "},\n");
}

/* A connection's "server_side" object: client i's slot on the server and the server's packets to it. */
static void truth_server_side(FILE *out, const run_t *run, int i)
{
    const client_side_t *c = &run->c[i];
    uint64_t sent[7], arrived[7], taken[7];
    fprintf(out, "     \"server_side\": {");
    if (c->server_connected_once) fprintf(out, "\"slot\": %d, ", c->slot);
    else fprintf(out, "\"slot\": null, ");
    truth_time_or_null(out, "connected_at", c->server_connected_once, c->server_connected_at);
    fprintf(out, ", ");
    truth_time_or_null(out, "ended_at", c->server_connected_once && c->server_end_reason >= 0, c->server_ended_at);
    fprintf(out, ", \"end\": ");
    if (!c->server_connected_once) fprintf(out, "null");
    else if (c->server_end_reason < 0) fprintf(out, "\"still connected\"");
    else fprintf(out, "\"%s\"", netcode_end_reason_name(c->server_end_reason));
    fprintf(out, ",\n       ");
    count_types(run, i, 1, sent, arrived, taken);
    write_types(out, "sent", sent);
    count_types(run, i, 0, sent, arrived, taken);
    fprintf(out, ",\n       ");
    write_types(out, "received", arrived);
    fprintf(out, ",\n       ");
    write_types(out, "decrypted", taken);
    fprintf(out, ",\n       \"payloads_ok\": %llu, \"payloads_bad\": %llu}}", (unsigned long long)c->server_payloads_ok,
            (unsigned long long)c->server_payloads_bad);
}

/* One element of the "connections" array: client i, its keys and token, both sides. */
static void truth_connection(FILE *out, const run_t *run, int i)
{
    const client_side_t *c = &run->c[i];
    fprintf(out, "%s\n    {\"client\": %d, \"address\": \"10.0.0.1:%d\", \"client_id\": \"0x%016llx\", "
                 "\"start_time\": %.6f, ",
            i ? "," : "", i, CLIENT_PORT + i, (unsigned long long)c->client_id, c->start_time);
    netcode_app_print_session_keys(out, &c->token);
    fprintf(out, ",\n     \"token\": {\"create_timestamp\": %llu, \"expire_timestamp\": %llu, \"timeout\": %d},\n",
            (unsigned long long)c->token.create_timestamp, (unsigned long long)c->token.expire_timestamp,
            c->token.timeout_seconds);
    truth_client_side(out, run, i);
    truth_server_side(out, run, i);
}

/* The "packets" array: every packet sent, its fate and its frames. */
static void truth_packets(FILE *out, const run_t *run)
{
    fprintf(out, ",\n  \"packets\": [");
    for (int i = 0; i < run->count; i++) {
        const record_t *r = &run->records[i];
        fprintf(out, "%s\n    {\"index\": %d, \"time\": %.6f, \"from\": \"%s\", \"client\": %d, \"type\": \"%s\", ",
                i ? "," : "", i, r->time, r->from_server ? "b" : "a", r->client, netcode_packet_type_name(r->type));
        if (r->type == NETCODE_REQUEST) fprintf(out, "\"sequence\": null, ");
        else fprintf(out, "\"sequence\": %llu, ", (unsigned long long)r->sequence);
        fprintf(out, "\"bytes\": %d, \"fate\": \"%s\", \"deliveries\": %d, \"taken\": %d, \"frames\": ", r->bytes,
                simprog_fate_name(r->fate), r->deliveries, r->taken);
        truth_frames(out, r->frames, r->frame_count);
        fprintf(out, "}");
    }
    fprintf(out, "\n  ]\n}\n");
}

/* Writes the truth file (docs/truth.md). Returns 0, or -1 after printing why. */
static int write_truth(const run_t *run, double end_time, int exit_code)
{
    const simprog_t *sp = run->sp;
    FILE *out = simprog_truth_begin(sp);
    if (!out) return -1;
    truth_config(out, run);
    simprog_truth_capture_result(out, sp, 0, end_time, exit_code);
    netcode_stack_truth_private_key(out, &run->stack);
    fprintf(out, "  \"server\": {\"address\": \"10.0.0.2:%d\", \"connected_clients\": %d, \"counters\": ", SERVER_PORT,
            netcode_server_connected_clients(run->stack.server));
    truth_counters(out, netcode_server_counters(run->stack.server), NETCODE_SERVER_COUNTER_COUNT, netcode_server_counter_name);
    fprintf(out, "},\n  \"connections\": [");
    for (int i = 0; i < run->opt->clients; i++) truth_connection(out, run, i);
    fprintf(out, "\n  ],\n  \"links\": ");
    simprog_truth_link_counters(out, sp);
    truth_packets(out, run);
    return simprog_truth_close(sp, out);
}

/* Client i's connect token, for netcode_stack_write_keys. */
static const netcode_connect_token_t *client_token(const void *context, int i)
{
    return &((const run_t *)context)->c[i].token;
}

static int write_keys(const run_t *run)
{
    return netcode_stack_write_keys(&run->stack, run->opt->keys_path, run->opt->clients, client_token, run);
}

static void print_summary(const run_t *run, double end_time, int exit_code)
{
    const options_t *opt = run->opt;
    printf("netcode-sim: %.2f s of virtual time, seed %llu, %d client(s), %d slot(s)\n", end_time,
           (unsigned long long)run->sp->sim.seed, opt->clients, opt->max_clients);
    for (int i = 0; i < opt->clients; i++) {
        const client_side_t *c = &run->c[i];
        printf("client %d (10.0.0.1:%d): %s", i, CLIENT_PORT + i, netcode_client_state_name(netcode_client_state(c->client)));
        if (c->connected_once) printf(", connected at %.3f s as slot %d", c->connected_at, netcode_client_index(c->client));
        printf(", payloads received %llu (bad %llu)\n", (unsigned long long)c->payloads_ok, (unsigned long long)c->payloads_bad);
        printf("  counters:");
        app_print_nonzero_counters(stdout, netcode_client_counters(c->client), NETCODE_CLIENT_COUNTER_COUNT, netcode_client_counter_name);
    }
    printf("server (10.0.0.2:%d): %d connected\n  counters:", SERVER_PORT, netcode_server_connected_clients(run->stack.server));
    app_print_nonzero_counters(stdout, netcode_server_counters(run->stack.server), NETCODE_SERVER_COUNTER_COUNT, netcode_server_counter_name);
    simprog_print_links(run->sp);
    if (run->sp->pcap_path) printf("pcap: %u frames in %s\n", run->sp->frames, run->sp->pcap_path);
    printf("result: %s\n", exit_code == EXIT_OK ? "ok" : exit_code == EXIT_NOT_CONNECTED ? "a client never connected" : "file error");
}

/* ---- setting up ---- */

/* The server at 10.0.0.2 with the run's private key. Returns 0, or -1 after printing why. */
static int create_server(run_t *run)
{
    const options_t *opt = run->opt;
    callbacks[MAX_SIM_CLIENTS] = (callback_t){run, -1};
    netcode_server_config_t sc;
    netcode_server_default_config(&sc);
    sc.protocol_id = opt->server_protocol_id;
    sc.max_clients = opt->max_clients;
    sc.send = on_send;
    sc.receive = on_server_payload;
    sc.client_event = on_server_client;
    sc.context = &callbacks[MAX_SIM_CLIENTS];
    return netcode_stack_create_server(&run->stack, &sc);
}

/* The clients at 10.0.0.1, ports CLIENT_PORT + i, each starting --stagger after the one before. Returns 0, or -1
 * after printing why. */
static int create_clients(run_t *run)
{
    const options_t *opt = run->opt;
    for (int i = 0; i < opt->clients; i++) {
        client_side_t *c = &run->c[i];
        callbacks[i] = (callback_t){run, i};
        pcapout_addr_ipv4(&run->client_addr[i], 10, 0, 0, 1, (uint16_t)(CLIENT_PORT + i));
        c->client = netcode_stack_create_client(on_send, on_client_payload, on_client_state, &callbacks[i]);
        if (!c->client) return app_out_of_memory(program, -1);
        c->slot = -1;
        c->server_end_reason = -1;
        c->start_time = i * opt->stagger;
        c->client_id = 0x1000 + (uint64_t)i;
    }
    return 0;
}

/* Starts the simulator, draws the keys from --seed and creates the endpoints. Returns 0 or the exit code. */
static int set_up(run_t *run, options_t *opt)
{
    simprog_t *sp = &opt->sp;
    if (netcode_stack_init(&run->stack, program, sp->sim.seed, 0x6e6574636f646531ull) != 0) return EXIT_IO;
    run->opt = opt;
    run->sp = sp;
    sp->sim.filter = sim_filter;
    sp->sim.filter_context = &opt->faults;
    int start = simprog_start(sp);
    if (start != 0) return start;
    /* The key the tokens are made with: drawn after the private key either way, so that --wrong-key changes
     * nothing else. */
    cs_rng_bytes(&run->stack.token_rng, run->token_key, NETCODE_KEY_BYTES);
    if (!opt->wrong_key) memcpy(run->token_key, run->stack.private_key, NETCODE_KEY_BYTES);
    pcapout_addr_ipv4(&run->server_addr, 10, 0, 0, 2, SERVER_PORT);
    if (create_server(run) != 0 || create_clients(run) != 0) return EXIT_IO;
    netcode_app_fill_payload(run->payload, opt->payload_bytes);
    return 0;
}

/* ---- one step of virtual time ---- */

/* Client c's connect token, made at its start time, and its connect. Returns 0, or -1 after printing why. */
static int start_client(run_t *run, client_side_t *c)
{
    const options_t *opt = run->opt;
    c->started = 1;
    double created = SIM_UNIX_EPOCH + run->now - (opt->expired_token ? opt->expire_seconds + 1 : 0);
    netcode_token_params_t p;
    netcode_token_params_init(&p, opt->protocol_id, c->client_id, (uint64_t)floor(created), &run->stack.server_address);
    p.expire_seconds = opt->expire_seconds;
    p.timeout_seconds = opt->timeout_seconds;
    if (netcode_stack_connect(&run->stack, c->client, run->now, &p, run->token_key, &c->token) != 0) return -1;
    c->next_payload = run->now;
    return 0;
}

/* Starts the clients whose time has come, updates the started ones and sends their payloads. Returns 0, or -1
 * after printing why. */
static int update_clients(run_t *run)
{
    const options_t *opt = run->opt;
    for (int i = 0; i < opt->clients; i++) {
        client_side_t *c = &run->c[i];
        if (!c->started && run->now >= c->start_time - 1e-9 && start_client(run, c) != 0) return -1;
        if (!c->started) continue;
        netcode_client_update(c->client, run->now);
        if (opt->rate > 0 && netcode_client_state(c->client) == NETCODE_CLIENT_CONNECTED &&
            run->now >= c->next_payload - 1e-9 && run->now < opt->duration) {
            netcode_client_send_payload(c->client, run->now, run->payload, opt->payload_bytes);
            c->next_payload += 1.0 / opt->rate;
            if (c->next_payload < run->now) c->next_payload = run->now + 1.0 / opt->rate;
        }
    }
    return 0;
}

/* Updates the server, disconnects every client at --server-disconnects-at, and sends the payloads to the
 * clients. */
static void update_server(run_t *run)
{
    const options_t *opt = run->opt;
    netcode_server_update(run->stack.server, run->now);
    if (opt->server_disconnects_at >= 0 && !run->server_disconnected && run->now >= opt->server_disconnects_at - 1e-9) {
        run->server_disconnected = 1;
        for (int s = 0; s < opt->max_clients; s++) netcode_server_disconnect_client(run->stack.server, run->now, s);
    }
    for (int i = 0; i < opt->clients; i++) {
        client_side_t *c = &run->c[i];
        if (opt->rate <= 0 || c->slot < 0 || !netcode_server_client_connected(run->stack.server, c->slot) ||
            c->server_end_reason >= 0 || run->now >= opt->duration || run->now < c->server_next_payload - 1e-9)
            continue;
        netcode_server_send_payload(run->stack.server, run->now, c->slot, run->payload, opt->payload_bytes);
        c->server_next_payload += 1.0 / opt->rate;
        if (c->server_next_payload < run->now) c->server_next_payload = run->now + 1.0 / opt->rate;
    }
}

/* At --duration, every started client disconnects (unless --no-disconnect). */
static void disconnect_clients(run_t *run)
{
    const options_t *opt = run->opt;
    if (run->disconnected || opt->no_disconnect || run->now < opt->duration - 1e-9) return;
    run->disconnected = 1;
    for (int i = 0; i < opt->clients; i++)
        if (run->c[i].started) netcode_client_disconnect(run->c[i].client, run->now);
}

/* simprog_run's tick: the clients, the server, and the clients' disconnect. Returns 0, or EXIT_IO after printing
 * why. */
static int tick(void *context)
{
    run_t *run = context;
    if (update_clients(run) != 0) return EXIT_IO;
    update_server(run);
    disconnect_clients(run);
    return 0;
}

static void describe(void *context, char *text, size_t size)
{
    snprintf(text, size, "%d datagrams sent", ((const run_t *)context)->count);
}

/* Steps virtual time by --tick to --duration (and the grace after it). Returns 0, or EXIT_IO after printing why;
 * *end_time is the last step's time. */
static int simulate(run_t *run, double *end_time)
{
    const options_t *opt = run->opt;
    double end = opt->duration + (opt->no_disconnect ? 0 : GRACE);
    return simprog_run(run->sp, end, &(simprog_loop_t){&run->now, run, tick, deliver, describe, NULL, 0}, end_time);
}

/* Frees everything a run holds (so that LeakSanitizer stays quiet). */
static void free_run(run_t *run, simprog_t *sp)
{
    for (int i = 0; i < MAX_SIM_CLIENTS; i++) netcode_client_destroy(run->c[i].client);
    netcode_stack_free(&run->stack);
    free(run->records);
    simprog_free(sp);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    static options_t opt;
    static run_t run;
    parse_options(&opt, argc, argv);
    int exit_code = set_up(&run, &opt);
    double end_time = 0;
    if (exit_code == 0) exit_code = simulate(&run, &end_time);
    if (exit_code != 0) {
        free_run(&run, &opt.sp);
        return exit_code;
    }
    simprog_t *sp = &opt.sp;
    int all_connected = 1;
    for (int i = 0; i < opt.clients; i++) all_connected &= run.c[i].connected_once;
    exit_code = all_connected || faulty(&opt) ? EXIT_OK : EXIT_NOT_CONNECTED;
    if (simprog_close_pcap(sp) != 0) exit_code = EXIT_IO;
    if (sp->truth_path && write_truth(&run, end_time, exit_code) != 0) exit_code = EXIT_IO;
    if (opt.keys_path && write_keys(&run) != 0) exit_code = EXIT_IO;
    if (!sp->quiet) print_summary(&run, end_time, exit_code);
    free_run(&run, sp);
    return exit_code;
}
