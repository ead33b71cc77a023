/*
 * yojimbo-sim: a yojimbo client (host A, 10.0.0.1:50000) and server (host B,
 * 10.0.0.2:40000) in virtual time over the network simulator: a netcode 1.02
 * connection carrying reliable packets (fragmented above 1 KiB) carrying
 * yojimbo connection packets, one each way every tick once connected. Both
 * sides send test messages; the client sends blocks, which go out as
 * fragments, acked and resent as the library does. Keys come from the seed:
 * the same options give the same pcap, truth file and key log byte for byte.
 *
 * Link 0 carries A -> B, link 1 B -> A. The truth file is described in
 * docs/truth.md "yojimbo-sim", the program in docs/yojimbo-endpoints.md.
 *
 * Exit codes: 0 connected and every message and block delivered (or a fault
 * option explains why not); 1 not connected, or something not delivered; 2
 * bad arguments; 4 a file could not be written.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "netcode-app.h"
#include "netcode-stack.h"
#include "netcode.h"
#include "netsim.h"
#include "reliable.h"
#include "simprog.h"
#include "util.h"
#include "yojimbo.h"

enum { EXIT_OK = 0, EXIT_INCOMPLETE = 1, EXIT_USAGE = SIMPROG_EXIT_USAGE, EXIT_IO = SIMPROG_EXIT_IO };
static const char *const program = "yojimbo-sim";

#define CLIENT_PORT NETCODE_STACK_CLIENT_PORT
#define SERVER_PORT NETCODE_STACK_SERVER_PORT
#define GRACE 0.5                   /* after the client disconnects */
#define MAX_ITEMS 100000

enum { CLIENT = 0, SERVER = 1 };

typedef struct options_t {
    simprog_t sp;
    yojimbo_config_t yj;
    const char *channels_text;
    double duration, message_rate, block_at, stop_acking_at;
    int messages, blocks, block_size, message_channel, block_channel, server_messages;
    int drop_block_fragment;
    const char *keys_path;
} options_t;

typedef struct send_t {
    double time;
    uint16_t sequence;
    int fragment;
} send_t;

/* One message or block, as the truth file tells it. */
typedef struct item_t {
    int from, channel, type, size, fragments;
    uint16_t id;
    double queued, acked, received, delivered; /* -1: never */
    send_t *sends;
    int send_count, send_capacity;
    double *fragment_acked;
    int delivered_ok;
} item_t;

typedef struct side_t {
    rl_endpoint_t *rl;
    yojimbo_connection_t *yj;
    int connected;
    double connected_at;
    int sent_messages, sent_blocks;
    double next_message;
    uint16_t channel_count[YOJIMBO_MAX_CHANNELS]; /* messages queued per channel: the next id */
    uint16_t drop_sequence;
    int drop_armed;
} side_t;

typedef struct run_t {
    options_t *opt;
    simprog_t *sp;
    netcode_stack_t stack; /* the keys, the server */
    netcode_client_t *client;
    netcode_connect_token_t token;
    side_t side[2];
    int slot;
    item_t *items;
    int item_count, item_capacity;
    double now;
    int drop_current;
    int disconnected; /* the client, at --duration */
    uint64_t datagrams[2], dropped_fragments;
} run_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: yojimbo-sim [options]\n"
"Runs a yojimbo client (host A, 10.0.0.1:50000) and server (host B,\n"
"10.0.0.2:40000) over a seeded network simulator in virtual time: netcode 1.02\n"
"carrying reliable packets carrying yojimbo connection packets, one each way\n"
"per tick once connected. Keys and nonces come from --seed.\n"
"\n");
    simprog_print_help_output(out, "client|a (default) or server|b", "per-message and per-block");
    fprintf(out,
"      --keys FILE          write the key log (private key and the connection's keys)\n"
"Run:\n"
"      --duration SEC       virtual time before the client disconnects (default 5s;\n"
"                           the run goes on 0.5 s more); same as --time-limit\n"
"      --tick SEC           update and packet interval (default 10ms, yojimbo's examples)\n");
    simprog_print_help_link(out);
    fprintf(out,
"Connection:\n"
"      --channels SPEC      comma-separated TYPE[:MAXBLOCK[:FRAGMENT[:MAXMESSAGES]]],\n"
"                           TYPE ro or uu (default ro,ro: 256 KiB blocks, 1 KiB\n"
"                           fragments, 256 messages a packet)\n"
"      --messages N         test messages the client sends (default 20)\n"
"      --server-messages N  test messages the server sends (default the same)\n"
"      --message-rate PPS   messages queued per second from the connect (default 20)\n"
"      --message-channel C  their channel (default 0)\n"
"      --blocks N           blocks the client sends (default 0)\n"
"      --block-size BYTES   each block's size (default 4000)\n"
"      --block-channel C    their channel (default the last)\n"
"      --block-at SEC       blocks queued this long after the connect (default 0.2s)\n"
"Faults:\n"
"      --drop-block-fragment N  every datagram of a packet holding block fragment N is lost\n"
"      --stop-acking-at SEC the server's reliable endpoint stops acking at SEC\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 connected and everything delivered (or a fault explains why\n"
"not); 1 not connected or something not delivered; 2 bad arguments; 4 file error.\n");
}

/* ---- options ---- */

enum {
    OPT_DURATION = 256, OPT_CHANNELS, OPT_MESSAGES, OPT_SERVER_MESSAGES, OPT_MESSAGE_RATE, OPT_MESSAGE_CHANNEL,
    OPT_BLOCKS, OPT_BLOCK_SIZE, OPT_BLOCK_CHANNEL, OPT_BLOCK_AT, OPT_DROP_FRAGMENT, OPT_STOP_ACKING, OPT_KEYS,
};

static const struct option own_options[] = {
    {"duration", required_argument, 0, OPT_DURATION},
    {"channels", required_argument, 0, OPT_CHANNELS},
    {"messages", required_argument, 0, OPT_MESSAGES},
    {"server-messages", required_argument, 0, OPT_SERVER_MESSAGES},
    {"message-rate", required_argument, 0, OPT_MESSAGE_RATE},
    {"message-channel", required_argument, 0, OPT_MESSAGE_CHANNEL},
    {"blocks", required_argument, 0, OPT_BLOCKS},
    {"block-size", required_argument, 0, OPT_BLOCK_SIZE},
    {"block-channel", required_argument, 0, OPT_BLOCK_CHANNEL},
    {"block-at", required_argument, 0, OPT_BLOCK_AT},
    {"drop-block-fragment", required_argument, 0, OPT_DROP_FRAGMENT},
    {"stop-acking-at", required_argument, 0, OPT_STOP_ACKING},
    {"keys", required_argument, 0, OPT_KEYS},
    {"help", no_argument, 0, 'h'},
};

static void own_option(void *context, int c, const char *name, const char *text)
{
    options_t *opt = context;
    switch (c) {
    case OPT_DURATION: opt->sp.time_limit = app_seconds_option(program, name, text, 1e5); break;
    case OPT_CHANNELS: {
        char error[200];
        if (yojimbo_parse_channels(text, &opt->yj, error, sizeof error) != 0)
            app_bad_argument(program, "bad --channels '%s': %s", text, error);
        opt->channels_text = text;
        break;
    }
    case OPT_MESSAGES: opt->messages = (int)app_int_option(program, name, text, 0, 10000); break;
    case OPT_SERVER_MESSAGES: opt->server_messages = (int)app_int_option(program, name, text, 0, 10000); break;
    case OPT_MESSAGE_RATE: opt->message_rate = (double)app_int_option(program, name, text, 1, 10000); break;
    case OPT_MESSAGE_CHANNEL: opt->message_channel = (int)app_int_option(program, name, text, 0, YOJIMBO_MAX_CHANNELS - 1); break;
    case OPT_BLOCKS: opt->blocks = (int)app_int_option(program, name, text, 0, 1000); break;
    case OPT_BLOCK_SIZE: opt->block_size = (int)app_int_option(program, name, text, 1, 16 * 1024 * 1024); break;
    case OPT_BLOCK_CHANNEL: opt->block_channel = (int)app_int_option(program, name, text, 0, YOJIMBO_MAX_CHANNELS - 1); break;
    case OPT_BLOCK_AT: opt->block_at = app_seconds_option(program, name, text, 1e5); break;
    case OPT_DROP_FRAGMENT: opt->drop_block_fragment = (int)app_int_option(program, name, text, 0, 65535); break;
    case OPT_STOP_ACKING: opt->stop_acking_at = app_seconds_option(program, name, text, 1e5); break;
    case OPT_KEYS: opt->keys_path = text; break;
    default: app_bad_argument(program, "unhandled option");
    }
}

static void check_options(options_t *opt)
{
    const yojimbo_config_t *yj = &opt->yj;
    if (opt->sp.time_limit <= 0) app_bad_argument(program, "--duration must be above 0");
    if (opt->message_channel >= yj->num_channels)
        app_bad_argument(program, "--message-channel %d: there are %d channels", opt->message_channel, yj->num_channels);
    if (opt->block_channel < 0) opt->block_channel = yj->num_channels - 1;
    if (opt->block_channel >= yj->num_channels)
        app_bad_argument(program, "--block-channel %d: there are %d channels", opt->block_channel, yj->num_channels);
    const yojimbo_channel_config_t *bc = &yj->channel[opt->block_channel];
    if (opt->blocks && opt->block_size > bc->max_block_size)
        app_bad_argument(program, "--block-size %d is above channel %d's largest block (%d)", opt->block_size,
                         opt->block_channel, bc->max_block_size);
    if (opt->blocks && bc->type == YOJIMBO_UNRELIABLE_UNORDERED && opt->block_size > 4000)
        app_bad_argument(program, "--block-size %d: an unreliable channel sends a block inside one packet (at most 4000 "
                         "bytes here)", opt->block_size);
    if (opt->drop_block_fragment >= 0 && !opt->blocks)
        app_bad_argument(program, "--drop-block-fragment needs --blocks");
}

static void parse_options(options_t *opt, int argc, char **argv)
{
    simprog_init(&opt->sp, program, "client", "server", CLIENT_PORT, SERVER_PORT);
    opt->sp.time_limit = 5;
    opt->sp.tick = 0.01;
    yojimbo_default_config(&opt->yj);
    opt->messages = 20;
    opt->server_messages = -1;
    opt->message_rate = 20;
    opt->block_size = 4000;
    opt->block_channel = -1;
    opt->block_at = 0.2;
    opt->stop_acking_at = -1;
    opt->drop_block_fragment = -1;
    cs_log_set_name(program);
    simprog_parse_options(&opt->sp, argc, argv, own_options, (int)(sizeof own_options / sizeof own_options[0]), usage,
                          own_option, opt);
    if (opt->server_messages < 0) opt->server_messages = opt->messages;
    opt->duration = opt->sp.time_limit;
    check_options(opt);
}

static int faulty(const options_t *opt)
{
    return opt->drop_block_fragment >= 0 || opt->stop_acking_at >= 0;
}

/* ---- the truth file's items ---- */

static int *item_index[2][YOJIMBO_MAX_CHANNELS]; /* id -> item + 1, per sender and channel */

static item_t *find_item(run_t *run, int from, int channel, uint16_t id)
{
    int *index = item_index[from][channel];
    return index && index[id] ? &run->items[index[id] - 1] : NULL;
}

static item_t *new_item(run_t *run, int from, int channel, uint16_t id)
{
    if (!item_index[from][channel]) item_index[from][channel] = simprog_calloc(run->sp, 65536, sizeof(int));
    int *index = item_index[from][channel];
    run->items = simprog_grow(run->sp, run->items, run->item_count, &run->item_capacity, sizeof *run->items);
    item_t *it = &run->items[run->item_count++];
    memset(it, 0, sizeof *it);
    it->from = from;
    it->channel = channel;
    it->id = id;
    it->queued = run->now;
    it->acked = it->received = it->delivered = -1;
    index[id] = run->item_count;
    return it;
}

static void add_send(const run_t *run, item_t *it, double time, uint16_t sequence, int fragment)
{
    it->sends = simprog_grow(run->sp, it->sends, it->send_count, &it->send_capacity, sizeof *it->sends);
    it->sends[it->send_count++] = (send_t){time, sequence, fragment};
}

typedef struct side_context_t {
    run_t *run;
    int side;
} side_context_t;

static side_context_t contexts[2];

static void on_event(void *context, const yojimbo_event_t *e)
{
    side_context_t *sc = context;
    run_t *run = sc->run;
    int from = e->kind == YOJIMBO_EVENT_RECEIVED || e->kind == YOJIMBO_EVENT_DELIVERED ? 1 - sc->side : sc->side;
    item_t *it = find_item(run, from, e->channel, e->id);
    if (!it) return;
    switch (e->kind) {
    case YOJIMBO_EVENT_MESSAGE_SENT: add_send(run, it, run->now, e->sequence, -1); break;
    case YOJIMBO_EVENT_FRAGMENT_SENT:
        add_send(run, it, run->now, e->sequence, e->fragment);
        if (e->fragment == run->opt->drop_block_fragment) {
            run->side[sc->side].drop_sequence = e->sequence;
            run->side[sc->side].drop_armed = 1;
        }
        break;
    case YOJIMBO_EVENT_MESSAGE_ACKED: if (it->acked < 0) it->acked = run->now; break;
    case YOJIMBO_EVENT_FRAGMENT_ACKED:
        if (it->fragment_acked && e->fragment < it->fragments && it->fragment_acked[e->fragment] < 0)
            it->fragment_acked[e->fragment] = run->now;
        break;
    case YOJIMBO_EVENT_RECEIVED: if (it->received < 0) it->received = run->now; break;
    case YOJIMBO_EVENT_DELIVERED: if (it->delivered < 0) it->delivered = run->now; break;
    }
}

/* ---- the layers' callbacks ---- */

static void on_datagram(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    (void)to;
    side_context_t *sc = context;
    run_t *run = sc->run;
    int link = sc->side; /* 0: the client's datagrams, A -> B */
    run->datagrams[link]++;
    simprog_record(run->sp, sc->side, link, run->now, packet, bytes);
    netsim_send(run->sp->netsim, link, run->now, packet, bytes);
}

static int sim_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    (void)dir, (void)packet, (void)bytes;
    run_t *run = context;
    return run->drop_current;
}

static void rl_send(void *context, uint16_t sequence, const uint8_t *packet, int bytes)
{
    side_context_t *sc = context;
    run_t *run = sc->run;
    side_t *s = &run->side[sc->side];
    run->drop_current = s->drop_armed && s->drop_sequence == sequence;
    if (run->drop_current) run->dropped_fragments++;
    if (sc->side == CLIENT) netcode_client_send_payload(run->client, run->now, packet, bytes);
    else netcode_server_send_payload(run->stack.server, run->now, run->slot, packet, bytes);
    run->drop_current = 0;
}

static int rl_process(void *context, uint16_t sequence, const uint8_t *payload, int bytes)
{
    side_context_t *sc = context;
    return yojimbo_connection_process(sc->run->side[sc->side].yj, sequence, payload, bytes);
}

static void rl_acked(void *context, uint16_t sequence, double rtt)
{
    (void)rtt;
    side_context_t *sc = context;
    yojimbo_connection_ack(sc->run->side[sc->side].yj, sequence);
}

/* The netcode connection is up on this side: its reliable endpoint and
 * yojimbo connection start (ClientServerConfig's reliable settings). */
static void side_connect(run_t *run, int side)
{
    side_t *s = &run->side[side];
    if (s->connected) return;
    rl_config_t rc;
    rl_default_config(&rc);
    rc.max_packet_size = run->opt->yj.max_packet_size;
    rc.fragment_above = 1024;
    rc.fragment_size = 1024;
    rc.max_fragments = (run->opt->yj.max_packet_size + 1023) / 1024;
    rc.reassembly_window = 64;
    rc.sent_window = rc.received_window = 256;
    rc.stop_acking_at = side == SERVER ? run->opt->stop_acking_at : -1;
    rc.send = rl_send;
    rc.process = rl_process;
    rc.acked = rl_acked;
    rc.context = &contexts[side];
    s->rl = rl_endpoint_create(&rc, run->now);
    s->yj = yojimbo_connection_create(&run->opt->yj, run->now, on_event, &contexts[side]);
    if (!s->rl || !s->yj) exit(app_out_of_memory(program, EXIT_IO));
    s->connected = 1;
    s->connected_at = run->now;
    s->next_message = run->now;
}

/* A netcode payload is a reliable packet (or one of its fragments). */
static void take_reliable(side_t *s, const uint8_t *payload, int bytes)
{
    rl_read_result_t r = rl_endpoint_receive(s->rl, payload, bytes);
    if (r != RL_READ_OK) cs_log_message(CS_LOG_LEVEL_DEBUG, "reliable packet refused: %s", rl_read_result_name(r));
}

static void on_client_state(void *context, int from, int to)
{
    (void)from;
    side_context_t *sc = context;
    if (to == NETCODE_CLIENT_CONNECTED) side_connect(sc->run, CLIENT);
}

static void on_client_payload(void *context, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    side_context_t *sc = context;
    side_t *s = &sc->run->side[CLIENT];
    if (s->connected) take_reliable(s, payload, bytes);
}

static void on_server_payload(void *context, int slot, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    side_context_t *sc = context;
    side_t *s = &sc->run->side[SERVER];
    if (s->connected && slot == sc->run->slot) take_reliable(s, payload, bytes);
}

static void on_server_client(void *context, int slot, int connected, int reason)
{
    (void)reason;
    side_context_t *sc = context;
    if (connected && sc->run->slot < 0) {
        sc->run->slot = slot;
        side_connect(sc->run, SERVER);
    }
}

/* ---- the application on each side ---- */

static uint8_t block_byte(uint16_t id, int i) { return (uint8_t)(i * 7 + id * 13 + (i >> 8)); }

static void queue_message(run_t *run, int side, int channel, int type)
{
    side_t *s = &run->side[side];
    static uint8_t block[16 * 1024 * 1024];
    yojimbo_message_t m = {type, 0, s->channel_count[channel], NULL, 0};
    if (yojimbo_is_block_message(type)) {
        m.block = block;
        m.block_size = run->opt->block_size;
        for (int i = 0; i < m.block_size; i++) block[i] = block_byte(m.sequence, i);
    }
    int id = yojimbo_connection_send(s->yj, channel, &m);
    if (id < 0) return;
    s->channel_count[channel]++;
    item_t *it = new_item(run, side, channel, (uint16_t)id);
    it->type = type;
    it->size = m.block ? m.block_size : yojimbo_message_body_bits(&m);
    if (m.block && run->opt->yj.channel[channel].type == YOJIMBO_RELIABLE_ORDERED) {
        int fragment_size = run->opt->yj.channel[channel].block_fragment_size;
        it->fragments = (m.block_size + fragment_size - 1) / fragment_size;
        it->fragment_acked = simprog_calloc(run->sp, (size_t)it->fragments, sizeof(double));
        for (int i = 0; i < it->fragments; i++) it->fragment_acked[i] = -1;
    }
}

/* Queues what is due, takes what arrived, checks it. */
static void run_application(run_t *run, int side)
{
    side_t *s = &run->side[side];
    const options_t *opt = run->opt;
    int quota = side == CLIENT ? opt->messages : opt->server_messages;
    while (s->sent_messages < quota && run->now >= s->next_message - 1e-9 && run->now < opt->duration) {
        queue_message(run, side, opt->message_channel, YOJIMBO_TEST_MESSAGE);
        s->sent_messages++;
        s->next_message += 1.0 / opt->message_rate;
    }
    if (side == CLIENT && s->sent_blocks < opt->blocks && run->now >= s->connected_at + opt->block_at - 1e-9) {
        for (; s->sent_blocks < opt->blocks; s->sent_blocks++)
            queue_message(run, side, opt->block_channel, YOJIMBO_TEST_BLOCK_MESSAGE);
    }
    yojimbo_message_t m;
    for (int c = 0; c < opt->yj.num_channels; c++) {
        while (yojimbo_connection_receive(s->yj, c, &m)) {
            uint16_t key = opt->yj.channel[c].type == YOJIMBO_RELIABLE_ORDERED ? m.id : m.sequence;
            item_t *it = find_item(run, 1 - side, c, key);
            int ok = it && it->type == m.type && m.sequence == key;
            if (ok && m.block) {
                ok = m.block_size == it->size;
                for (int i = 0; ok && i < m.block_size; i++) ok = m.block[i] == block_byte(m.sequence, i);
            }
            if (it) it->delivered_ok = ok;
            free(m.block);
        }
    }
}

static void run_side(run_t *run, int side)
{
    side_t *s = &run->side[side];
    if (!s->connected) return;
    int up = side == CLIENT ? netcode_client_state(run->client) == NETCODE_CLIENT_CONNECTED
                            : run->slot >= 0 && netcode_server_client_connected(run->stack.server, run->slot);
    if (!up) return;
    rl_endpoint_update(s->rl, run->now);
    yojimbo_connection_advance_time(s->yj, run->now);
    run_application(run, side);
    if (yojimbo_connection_error(s->yj)) return;
    static uint8_t packet[YOJIMBO_MAX_PACKET_SIZE];
    uint16_t sequence = rl_endpoint_next_sequence(s->rl);
    int bytes = yojimbo_connection_generate(s->yj, sequence, packet, run->opt->yj.max_packet_size);
    if (bytes > 0) rl_endpoint_send(s->rl, packet, bytes);
}

/* ---- output ---- */

static void write_truth_config(FILE *out, const run_t *run)
{
    const options_t *opt = run->opt;
    const simprog_t *sp = run->sp;
    fprintf(out, "  \"config\": {\"seed\": %llu, \"duration\": %.6f, \"tick\": %.6f, \"channels\": [",
            (unsigned long long)sp->sim.seed, opt->duration, sp->tick);
    for (int c = 0; c < opt->yj.num_channels; c++) {
        const yojimbo_channel_config_t *ch = &opt->yj.channel[c];
        fprintf(out, "%s{\"type\": \"%s\", \"max_block_size\": %d, \"block_fragment_size\": %d, "
                     "\"max_messages_per_packet\": %d}", c ? ", " : "",
                ch->type == YOJIMBO_RELIABLE_ORDERED ? "ro" : "uu", ch->max_block_size, ch->block_fragment_size,
                ch->max_messages_per_packet);
    }
    fprintf(out, "],\n    \"max_packet_size\": %d, \"message_types\": %d, \"messages\": %d, \"server_messages\": %d, "
                 "\"message_rate\": %.3f, \"message_channel\": %d, \"blocks\": %d, \"block_size\": %d, "
                 "\"block_channel\": %d, \"block_at\": %.6f,\n    \"faults\": {\"drop_block_fragment\": ",
            opt->yj.max_packet_size, opt->yj.num_message_types, opt->messages, opt->server_messages, opt->message_rate,
            opt->message_channel, opt->blocks, opt->block_size, opt->block_channel, opt->block_at);
    truth_number(out, opt->drop_block_fragment);
    fprintf(out, ", \"stop_acking_at\": ");
    truth_seconds(out, opt->stop_acking_at);
    fprintf(out, "},\n");
    simprog_truth_config_links(out, sp);
}

static void write_truth_side(FILE *out, const run_t *run, int side)
{
    const side_t *s = &run->side[side];
    fprintf(out, "    \"%s\": {\"connected_at\": ", side == CLIENT ? "client" : "server");
    truth_seconds(out, s->connected ? s->connected_at : -1);
    fprintf(out, ", \"datagrams_sent\": %llu", (unsigned long long)run->datagrams[side]);
    if (s->connected) {
        fprintf(out, ",\n      \"yojimbo_counters\": ");
        truth_counters(out, yojimbo_connection_counters(s->yj), YOJIMBO_COUNTER_COUNT, yojimbo_counter_name);
        fprintf(out, ",\n      \"reliable_counters\": ");
        truth_counters(out, rl_endpoint_counters(s->rl), RL_COUNTER_COUNT, rl_counter_name);
        fprintf(out, ", \"rtt\": %.6f, \"last_rtt\": %.6f, \"error\": %s", rl_endpoint_rtt(s->rl),
                rl_endpoint_last_rtt(s->rl), truth_bool(yojimbo_connection_error(s->yj)));
    }
    fprintf(out, "}");
}

static void write_truth_item(FILE *out, const item_t *it, int first)
{
    fprintf(out, "%s\n    {\"from\": \"%s\", \"channel\": %d, \"id\": %u, \"kind\": \"%s\", \"type\": \"%s\", "
                 "\"size\": %d, \"queued\": %.6f,\n     \"sends\": [",
            first ? "" : ",", it->from == CLIENT ? "client" : "server", it->channel, it->id,
            yojimbo_is_block_message(it->type) ? "block" : "message", yojimbo_message_type_name(it->type), it->size,
            it->queued);
    for (int k = 0; k < it->send_count; k++) {
        fprintf(out, "%s{\"time\": %.6f, \"reliable_sequence\": %u", k ? ", " : "", it->sends[k].time,
                it->sends[k].sequence);
        if (it->sends[k].fragment >= 0) fprintf(out, ", \"fragment\": %d", it->sends[k].fragment);
        fprintf(out, "}");
    }
    fprintf(out, "],\n     ");
    if (it->fragments) {
        fprintf(out, "\"fragments\": %d, \"fragments_acked\": [", it->fragments);
        for (int f = 0; f < it->fragments; f++) {
            fprintf(out, "%s", f ? ", " : "");
            truth_seconds(out, it->fragment_acked[f]);
        }
        fprintf(out, "], ");
    }
    fprintf(out, "\"acked\": ");
    truth_seconds(out, it->acked);
    fprintf(out, ", \"received\": ");
    truth_seconds(out, it->received);
    fprintf(out, ", \"delivered\": ");
    truth_seconds(out, it->delivered);
    fprintf(out, ", \"delivered_ok\": %s}", truth_bool(it->delivered >= 0 && it->delivered_ok));
}

static int write_truth(const run_t *run, double end_time, int exit_code)
{
    const simprog_t *sp = run->sp;
    FILE *out = simprog_truth_begin(sp);
    if (!out) return -1;
    write_truth_config(out, run);
    simprog_truth_capture_result(out, sp, 0, end_time, exit_code);
    netcode_stack_truth_private_key(out, &run->stack);
    fprintf(out, "  ");
    netcode_app_print_session_keys(out, &run->token);
    fprintf(out, ",\n  \"sides\": {\n");
    write_truth_side(out, run, CLIENT);
    fprintf(out, ",\n");
    write_truth_side(out, run, SERVER);
    fprintf(out, "\n  },\n  \"block_fragment_datagrams_dropped\": %llu,\n  \"links\": ",
            (unsigned long long)run->dropped_fragments);
    simprog_truth_link_counters(out, sp);
    fprintf(out, ",\n  \"items\": [");
    for (int i = 0; i < run->item_count; i++) write_truth_item(out, &run->items[i], i == 0);
    fprintf(out, "\n  ]\n}\n");
    return simprog_truth_close(sp, out);
}

/* The client's connect token, for netcode_stack_write_keys. */
static const netcode_connect_token_t *client_token(const void *context, int i)
{
    (void)i;
    return &((const run_t *)context)->token;
}

static int write_keys(const run_t *run)
{
    return netcode_stack_write_keys(&run->stack, run->opt->keys_path, 1, client_token, run);
}

/* Reliable-ordered items all delivered intact, and both sides connected. */
static int complete(const run_t *run)
{
    if (!run->side[CLIENT].connected || !run->side[SERVER].connected) return 0;
    for (int i = 0; i < run->item_count; i++) {
        const item_t *it = &run->items[i];
        if (run->opt->yj.channel[it->channel].type != YOJIMBO_RELIABLE_ORDERED) continue;
        if (it->delivered < 0 || !it->delivered_ok) return 0;
    }
    return 1;
}

static void print_summary(const run_t *run, double end_time, int exit_code)
{
    int delivered[2] = {0, 0}, items[2] = {0, 0}, resends = 0;
    for (int i = 0; i < run->item_count; i++) {
        const item_t *it = &run->items[i];
        items[it->from]++;
        delivered[it->from] += it->delivered >= 0 && it->delivered_ok;
        int sends = it->send_count - (it->fragments ? it->fragments : 1);
        resends += sends > 0 ? sends : 0;
    }
    printf("%s: %.2f s of virtual time, seed %llu, %d channel(s)\n", program, end_time,
           (unsigned long long)run->sp->sim.seed, run->opt->yj.num_channels);
    for (int side = 0; side < 2; side++) {
        const side_t *s = &run->side[side];
        printf("%s (%s): ", side == CLIENT ? "client" : "server", run->sp->host[side]);
        if (s->connected) printf("connected at %.3f s", s->connected_at);
        else printf("never connected");
        printf(", %d of %d messages and blocks delivered to the other side\n", delivered[side], items[side]);
    }
    printf("resends (messages and fragments): %d\n", resends);
    if (run->dropped_fragments) printf("datagrams of block fragments dropped: %llu\n", (unsigned long long)run->dropped_fragments);
    simprog_print_links(run->sp);
    if (run->sp->pcap_path) printf("pcap: %u frames in %s\n", run->sp->frames, run->sp->pcap_path);
    printf("result: %s\n", exit_code == EXIT_OK ? "ok" : exit_code == EXIT_INCOMPLETE ? "not everything delivered" : "file error");
}

/* ---- main ---- */

/* The server, the client and its connect. Returns 0, or -1 after printing why. */
static int set_up(run_t *run)
{
    contexts[CLIENT] = (side_context_t){run, CLIENT};
    contexts[SERVER] = (side_context_t){run, SERVER};
    run->slot = -1;
    netcode_server_config_t sc;
    netcode_server_default_config(&sc);
    sc.protocol_id = NETCODE_DEFAULT_PROTOCOL_ID;
    sc.max_clients = 4;
    sc.send = on_datagram;
    sc.receive = on_server_payload;
    sc.client_event = on_server_client;
    sc.context = &contexts[SERVER];
    if (netcode_stack_create_server(&run->stack, &sc) != 0) return -1;
    run->client = netcode_stack_create_client(on_datagram, on_client_payload, on_client_state, &contexts[CLIENT]);
    if (!run->client) return app_out_of_memory(program, -1);
    netcode_token_params_t p;
    netcode_token_params_init(&p, NETCODE_DEFAULT_PROTOCOL_ID, 0x1000, (uint64_t)NETCODE_STACK_UNIX_EPOCH,
                              &run->stack.server_address);
    return netcode_stack_connect(&run->stack, run->client, 0, &p, run->stack.private_key, &run->token);
}

/* simprog_run's tick: netcode's endpoints, then each side's reliable and yojimbo layers; the client disconnects
 * at --duration. */
static int tick(void *context)
{
    run_t *run = context;
    netcode_client_update(run->client, run->now);
    netcode_server_update(run->stack.server, run->now);
    run_side(run, CLIENT);
    run_side(run, SERVER);
    if (!run->disconnected && run->now >= run->opt->duration - 1e-9) {
        run->disconnected = 1;
        netcode_client_disconnect(run->client, run->now);
    }
    return 0;
}

/* simprog_run's arrival: a datagram reaches the other side's netcode endpoint. */
static void arrive(void *context, int link, const uint8_t *packet, int bytes)
{
    run_t *run = context;
    simprog_record(run->sp, 1 - link, link, run->now, packet, bytes);
    if (link == 0) {
        netcode_address_t from;
        netcode_address_ipv4(&from, 10, 0, 0, 1, CLIENT_PORT);
        netcode_server_receive_packet(run->stack.server, run->now, &from, packet, bytes);
    } else {
        netcode_client_receive_packet(run->client, run->now, &run->stack.server_address, packet, bytes);
    }
}

static void describe(void *context, char *text, size_t size)
{
    snprintf(text, size, "%d items", ((const run_t *)context)->item_count);
}

int main(int argc, char **argv)
{
    static options_t opt;
    parse_options(&opt, argc, argv);
    simprog_t *sp = &opt.sp;
    static run_t run;
    if (netcode_stack_init(&run.stack, program, sp->sim.seed, 0x796f6a696d626f31ull) != 0) return EXIT_IO;
    run.opt = &opt;
    run.sp = sp;
    sp->sim.filter = sim_filter;
    sp->sim.filter_context = &run;
    int start = simprog_start(sp);
    if (start != 0) return start;
    if (set_up(&run) != 0) return EXIT_IO;
    double end_time;
    simprog_run(sp, opt.duration + GRACE, &(simprog_loop_t){&run.now, &run, tick, arrive, describe, NULL, 0}, &end_time);
    int exit_code = complete(&run) || faulty(&opt) ? EXIT_OK : EXIT_INCOMPLETE;
    if (simprog_close_pcap(sp) != 0) exit_code = EXIT_IO;
    if (sp->truth_path && write_truth(&run, end_time, exit_code) != 0) exit_code = EXIT_IO;
    if (opt.keys_path && write_keys(&run) != 0) exit_code = EXIT_IO;
    if (!sp->quiet) print_summary(&run, end_time, exit_code);
    for (int side = 0; side < 2; side++) {
        rl_endpoint_destroy(run.side[side].rl);
        yojimbo_connection_destroy(run.side[side].yj);
    }
    for (int i = 0; i < run.item_count; i++) {
        free(run.items[i].sends);
        free(run.items[i].fragment_acked);
    }
    for (int s = 0; s < 2; s++)
        for (int c = 0; c < YOJIMBO_MAX_CHANNELS; c++) free(item_index[s][c]);
    free(run.items);
    netcode_client_destroy(run.client);
    netcode_stack_free(&run.stack);
    simprog_free(sp);
    return exit_code;
}
