/*
 * netgame-sim: a netgame client (host A, 10.0.0.1:30001) and server (host B,
 * 10.0.0.2:30000) talking through the network simulator in virtual time,
 * each sending at its flow control's rate (10 or 30 packets per second).
 * Writes a pcap of what a capture on one of the two hosts would see, prints a
 * summary, and can write a JSON account of every packet (the truth file,
 * docs/truth.md "netgame-sim") for tests of the dissector's analysis.
 *
 * Link 0 carries A -> B, link 1 B -> A. The same options give the same pcap
 * and truth file byte for byte.
 *
 * Exit codes: 0 the run lasted its duration with the client connected at the
 * end (or a fault explains why not); 1 the client never connected or lost
 * the connection; 2 bad arguments; 4 a file could not be written.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "netgame.h"
#include "netsim.h"
#include "platform.h"
#include "simprog.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_DISCONNECTED = 1, EXIT_USAGE = SIMPROG_EXIT_USAGE, EXIT_IO = SIMPROG_EXIT_IO };
static const char *const program = "netgame-sim";

#define SIDE_A SIMPROG_SIDE_A /* the client */
#define SIDE_B SIMPROG_SIDE_B /* the server */
#define MAX_SPIKES 8

typedef struct spike_t {
    double start, duration, extra; /* extra one-way delay in both directions */
} spike_t;

typedef struct options_t {
    simprog_t sp;              /* hosts, pcap, truth, --time-limit (= --duration), --tick, links */
    netgame_config_t endpoint; /* template for both sides */
    double stop_acking_at[2];  /* per side, -1 off */
    spike_t spikes[MAX_SPIKES];
    int spike_count;
} options_t;

/* One datagram a side sent: the truth file's per-packet record. */
typedef struct record_t {
    double time;
    uint32_t sequence, ack, ack_bits;
    int bytes;
    double rtt;         /* the sender's smoothed RTT when it sent this */
    int mode;           /* the sender's flow-control mode when it sent this */
    int fate;           /* SIMPROG_FATE_* */
    int deliveries;     /* copies the peer's host received */
    int taken;          /* the peer's connection took it (not a duplicate, not dropped) */
    double taken_time;
    uint32_t acked_in;  /* first frame of the capture with a peer packet that truly acks it, 0 none */
    uint32_t frames[3]; /* frames holding it in the capture (a duplicate twice) */
    int frame_count;
    int acked, lost;
    double acked_time, rtt_sample, lost_time;
    int acked_by;       /* index of the peer's record that acked it, -1 */
    uint32_t acked_by_frame;
} record_t;


typedef struct switch_t {
    double time;
    int mode;
    double penalty, rtt;
    uint32_t from_sequence; /* the first packet sent in the new mode */
} switch_t;

/* One side; also its connection's callbacks' context. */
typedef struct side_t {
    struct run_t *run;
    int index; /* SIDE_A or SIDE_B */
    netgame_connection_t *connection;
    record_t *records;
    int count, capacity;
    switch_t *switches;
    int switch_count, switch_capacity;
    double time_in_mode[2];
    int mode;
    uint64_t sent; /* datagrams, also without --truth */
    int connected_once;
    double connected_at; /* when it first became connected */
} side_t;

typedef struct run_t {
    options_t *opt;
    simprog_t *sp;
    side_t side[2];
    double now;
    double last_release[2]; /* spikes keep each link first in, first out */
    int keep_records;
    /* the datagram being processed: its sender and record, and its frame at the capture point */
    int current_from, current_index;
    uint32_t current_frame;
    double previous;    /* the step before this one */
    int client_dropped; /* the client was connected, then not */
} run_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: netgame-sim [options]\n"
"Runs a netgame client (host A, 10.0.0.1:30001) and server (host B,\n"
"10.0.0.2:30000) over a seeded network simulator in virtual time. Each sends\n"
"at its flow control's rate: 10 packets/s in Bad mode, 30 in Good.\n"
"\n");
    simprog_print_help_output(out, "client|a (default) or server|b", "per-packet");
    fprintf(out,
"Run:\n"
"      --duration SEC       virtual time to run (default 30s; same as --time-limit)\n"
"      --time-limit SEC     the same\n"
"      --tick SEC           endpoint update interval (default 1/30 s, the example's)\n");
    simprog_print_help_link(out);
    fprintf(out,
"      --spike START:LEN:EXTRA  from START for LEN seconds, add EXTRA seconds\n"
"                           of one-way delay both ways (first in, first out;\n"
"                           up to %d, e.g. --spike 8:3:150ms)\n"
"Endpoints:\n"
"      --payload BYTES      payload of every packet (default 32; 0 makes\n"
"                           16-byte datagrams, which the original ignores)\n"
"      --protocol-id N      protocol id (default 0x11223344)\n"
"      --max-sequence N     MaxSequence (default 0xFFFFFFFF; the original's wrap\n"
"                           test uses 31)\n"
"      --first-sequence N   both sides' first sequence (default 0; near 2^32 to\n"
"                           see the full wrap)\n"
"      --timeout SEC        connection timeout (default 10s)\n"
"Faults:\n"
"      --client-stops-acking SEC  from this time the client's ack and ack bits\n"
"                           stop moving (it still sends and receives)\n"
"      --server-stops-acking SEC  the same for the server\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 ran the whole duration, connected; 1 the client never\n"
"connected or lost the connection; 2 bad arguments; 4 file error.\n", MAX_SPIKES);
}

/* ---- options ---- */

enum {
    OPT_DURATION = 256, OPT_SPIKE, OPT_PAYLOAD, OPT_PROTOCOL_ID, OPT_MAX_SEQUENCE, OPT_FIRST_SEQUENCE, OPT_TIMEOUT,
    OPT_CLIENT_STOPS, OPT_SERVER_STOPS,
};

static void parse_spike(options_t *opt, const char *text)
{
    if (opt->spike_count == MAX_SPIKES) app_bad_argument(program, "at most %d --spike options", MAX_SPIKES);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *second = strchr(buf, ':');
    char *third = second ? strchr(second + 1, ':') : NULL;
    if (!second || !third) app_bad_argument(program, "--spike wants START:LEN:EXTRA, e.g. 8:3:150ms, not '%s'", text);
    *second++ = 0;
    *third++ = 0;
    spike_t *s = &opt->spikes[opt->spike_count++];
    if (platform_parse_seconds(buf, 1e6, &s->start) != 0 || platform_parse_seconds(second, 1e6, &s->duration) != 0 ||
        platform_parse_seconds(third, 60, &s->extra) != 0)
        app_bad_argument(program, "--spike wants START:LEN:EXTRA, e.g. 8:3:150ms, not '%s'", text);
}

/* netgame-sim's own options (simprog_parse_options adds the common ones). */
static const struct option own_options[] = {
    {"duration", required_argument, 0, OPT_DURATION},
    {"spike", required_argument, 0, OPT_SPIKE},
    {"payload", required_argument, 0, OPT_PAYLOAD},
    {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
    {"max-sequence", required_argument, 0, OPT_MAX_SEQUENCE},
    {"first-sequence", required_argument, 0, OPT_FIRST_SEQUENCE},
    {"timeout", required_argument, 0, OPT_TIMEOUT},
    {"client-stops-acking", required_argument, 0, OPT_CLIENT_STOPS},
    {"server-stops-acking", required_argument, 0, OPT_SERVER_STOPS},
    {"help", no_argument, 0, 'h'},
};

static void own_option(void *context, int c, const char *name, const char *text)
{
    options_t *opt = context;
    switch (c) {
    case OPT_DURATION: opt->sp.time_limit = app_seconds_option(program, name, text, 1e6); break;
    case OPT_SPIKE: parse_spike(opt, text); break;
    case OPT_PAYLOAD: opt->endpoint.payload_bytes = (int)app_int_option(program, name, text, 0, NETGAME_MAX_PAYLOAD_BYTES); break;
    case OPT_PROTOCOL_ID: opt->endpoint.protocol_id = (uint32_t)app_int_option(program, name, text, 0, 0xffffffffLL); break;
    case OPT_MAX_SEQUENCE: opt->endpoint.max_sequence = (uint32_t)app_int_option(program, name, text, 1, 0xffffffffLL); break;
    case OPT_FIRST_SEQUENCE: opt->endpoint.first_sequence = (uint32_t)app_int_option(program, name, text, 0, 0xffffffffLL); break;
    case OPT_TIMEOUT: opt->endpoint.timeout = app_seconds_option(program, name, text, 3600); break;
    case OPT_CLIENT_STOPS: opt->stop_acking_at[SIDE_A] = app_seconds_option(program, name, text, 1e7); break;
    case OPT_SERVER_STOPS: opt->stop_acking_at[SIDE_B] = app_seconds_option(program, name, text, 1e7); break;
    default: app_bad_argument(program, "unhandled option");
    }
}

static void parse_options(options_t *opt, int argc, char **argv)
{
    simprog_init(&opt->sp, program, "client", "server", NETGAME_DEFAULT_CLIENT_PORT, NETGAME_DEFAULT_SERVER_PORT);
    opt->sp.time_limit = 30;
    opt->sp.tick = 1.0 / 30.0;
    netgame_default_config(&opt->endpoint);
    opt->endpoint.payload_bytes = 32;
    opt->stop_acking_at[0] = opt->stop_acking_at[1] = -1;
    cs_log_set_name(program);
    simprog_parse_options(&opt->sp, argc, argv, own_options, (int)(sizeof own_options / sizeof own_options[0]), usage,
                          own_option, opt);
    if (opt->sp.time_limit <= 0) app_bad_argument(program, "--duration must be above 0");
    if (opt->endpoint.timeout <= 0) app_bad_argument(program, "--timeout must be above 0");
    if (opt->endpoint.first_sequence > opt->endpoint.max_sequence)
        app_bad_argument(program, "--first-sequence %u is above --max-sequence %u", opt->endpoint.first_sequence,
                  opt->endpoint.max_sequence);
}

/* ---- bookkeeping ---- */

/* The latest record of side `side` with this sequence that matches `want`
 * (0 any, 1 still pending), or -1. Sequences are recent: a short walk back. */
static int find_record(const side_t *s, uint32_t sequence, int pending_only)
{
    for (int i = s->count - 1, walked = 0; i >= 0 && walked < 1 << 16; i--, walked++) {
        const record_t *r = &s->records[i];
        if (r->sequence != sequence) continue;
        if (pending_only && (r->acked || r->lost)) continue;
        return i;
    }
    return -1;
}

static double spike_extra(const options_t *opt, double time)
{
    double extra = 0;
    for (int i = 0; i < opt->spike_count; i++) {
        const spike_t *s = &opt->spikes[i];
        if (time >= s->start && time < s->start + s->duration && s->extra > extra) extra = s->extra;
    }
    return extra;
}

/* A frame of the capture holds a packet from side `from`, sent at sent_time:
 * every packet of the other side that this header acknowledges and that the
 * sender had really received by then (so not the false ack of sequence 0)
 * gets this frame as its acked_in, if it has none yet. */
static void note_acked_in(run_t *run, int from, double sent_time, const uint8_t *packet, int bytes, uint32_t frame)
{
    netgame_header_t h;
    if (!frame || netgame_read_header(packet, bytes, &h) != 0) return;
    side_t *peer = &run->side[1 - from];
    uint32_t max = run->opt->endpoint.max_sequence;
    for (int i = -1; i < 32; i++) {
        uint32_t sequence = h.ack;
        if (i >= 0) {
            if (!((h.ack_bits >> i) & 1u)) continue;
            sequence = netgame_sequence_distance(h.ack, (uint32_t)i + 1, max);
            if (netgame_bit_index(sequence, h.ack, max) != i) continue;
        }
        int k = find_record(peer, sequence, 0);
        if (k < 0) continue;
        record_t *r = &peer->records[k];
        if (r->taken && r->taken_time <= sent_time && !r->acked_in) r->acked_in = frame;
    }
}

static void record_frame(record_t *r, uint32_t frame)
{
    if (r && frame && r->frame_count < 3) r->frames[r->frame_count++] = frame;
}

static void on_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    (void)address;
    (void)address_bytes;
    side_t *s = context;
    run_t *run = s->run;
    int link = s->index;
    s->sent++;
    uint32_t frame = simprog_record(run->sp, s->index, link, run->now, packet, bytes);
    /* Spikes delay a link first in, first out: nothing overtakes. */
    double release = run->now + spike_extra(run->opt, run->now);
    if (release < run->last_release[link]) release = run->last_release[link];
    run->last_release[link] = release;
    int fate = simprog_send(run->sp, link, release, packet, bytes);
    if (!run->keep_records) return;

    s->records = simprog_grow(run->sp, s->records, s->count, &s->capacity, sizeof *s->records);
    record_t *r = &s->records[s->count++];
    memset(r, 0, sizeof *r);
    netgame_header_t h;
    netgame_read_header(packet, bytes, &h);
    r->time = run->now;
    r->sequence = h.sequence;
    r->ack = h.ack;
    r->ack_bits = h.ack_bits;
    r->bytes = bytes;
    r->rtt = netgame_connection_rtt(s->connection);
    r->mode = netgame_connection_mode(s->connection);
    r->acked_by = -1;
    r->fate = fate;
    record_frame(r, frame);
    note_acked_in(run, s->index, run->now, packet, bytes, frame);
}

/* The record of the packet a connection callback (context) speaks of, or
 * NULL when records are not kept or it has none. */
static record_t *callback_record(void *context, uint32_t sequence)
{
    side_t *s = context;
    if (!s->run->keep_records) return NULL;
    int i = find_record(s, sequence, 1);
    return i < 0 ? NULL : &s->records[i];
}

static void on_acked(void *context, uint32_t sequence, double rtt)
{
    run_t *run = ((side_t *)context)->run;
    record_t *r = callback_record(context, sequence);
    if (!r) return;
    r->acked = 1;
    r->acked_time = run->now;
    r->rtt_sample = rtt;
    r->acked_by = run->current_index;
    r->acked_by_frame = run->current_frame;
}

static void on_lost(void *context, uint32_t sequence)
{
    record_t *r = callback_record(context, sequence);
    if (!r) return;
    r->lost = 1;
    r->lost_time = ((side_t *)context)->run->now;
}

/* simprog_run's arrival: a datagram from link `link` reaches the other side's host. */
static void deliver(void *context, int link, const uint8_t *packet, int bytes)
{
    run_t *run = context;
    int to = 1 - link;
    uint32_t frame = simprog_record(run->sp, to, link, run->now, packet, bytes);
    run->current_from = link;
    run->current_index = -1;
    record_t *r = NULL;
    if (run->keep_records) {
        netgame_header_t h;
        if (netgame_read_header(packet, bytes, &h) == 0) run->current_index = find_record(&run->side[link], h.sequence, 0);
        if (run->current_index >= 0) {
            r = &run->side[link].records[run->current_index];
            r->deliveries++;
            record_frame(r, frame);
            /* The acking packet's frame at the capture point: this arrival,
             * or (captured at its sender) its send. */
            run->current_frame = frame ? frame : r->frame_count ? r->frames[0] : 0;
            note_acked_in(run, link, r->time, packet, bytes, frame);
        }
    }
    uint8_t address = (uint8_t)link; /* opaque: 0 is A, 1 is B */
    int taken = netgame_connection_receive_packet(run->side[to].connection, run->now, &address, 1, packet, bytes);
    side_t *receiver = &run->side[to];
    if (!receiver->connected_once && netgame_connection_connected(receiver->connection)) {
        receiver->connected_once = 1;
        receiver->connected_at = run->now;
    }
    if (r && taken) {
        r->taken = 1;
        r->taken_time = run->now;
    }
    run->current_index = -1;
    run->current_frame = 0;
}

/* After an update: time spent in the mode, and a switch if the update made
 * one (the packets it then sent, from first_sequence on, are in the new mode). */
static void note_mode(run_t *run, int side, double dt, uint32_t first_sequence)
{
    side_t *s = &run->side[side];
    netgame_connection_t *c = s->connection;
    if (netgame_connection_connected(c)) s->time_in_mode[s->mode] += dt;
    int mode = netgame_connection_mode(c);
    if (mode == s->mode) return;
    s->mode = mode;
    s->switches = simprog_grow(run->sp, s->switches, s->switch_count, &s->switch_capacity, sizeof *s->switches);
    s->switches[s->switch_count++] = (switch_t){run->now, mode, netgame_connection_penalty_time(c),
                                                netgame_connection_rtt(c), first_sequence};
}

/* simprog_run's tick: both connections' updates, and what they change. */
static int tick(void *context)
{
    run_t *run = context;
    for (int s = 0; s < 2; s++) {
        netgame_connection_t *c = run->side[s].connection;
        netgame_state_t before = netgame_connection_state(c);
        uint32_t first_sequence = netgame_connection_local_sequence(c);
        netgame_connection_update(c, run->now);
        netgame_state_t after = netgame_connection_state(c);
        if (s == SIDE_A && before == NETGAME_STATE_CONNECTED && after != NETGAME_STATE_CONNECTED) run->client_dropped = 1;
        note_mode(run, s, run->now - run->previous, first_sequence);
    }
    run->previous = run->now;
    return 0;
}

static void describe(void *context, char *text, size_t size)
{
    const run_t *run = context;
    snprintf(text, size, "%llu datagrams sent", (unsigned long long)(run->side[0].sent + run->side[1].sent));
}

/* ---- output ---- */

/* One element of the truth file's "packets": record r, side sd's record index. */
static void truth_packet(FILE *out, int sd, int index, const void *record)
{
    const record_t *r = record;
    fprintf(out, "{\"from\": \"%s\", \"index\": %d, \"time\": %.6f, \"sequence\": %u, \"ack\": %u, "
                 "\"ack_bits\": %u, \"bytes\": %d, \"rtt\": %.6f, \"mode\": \"%s\", \"fate\": \"%s\", "
                 "\"deliveries\": %d, \"taken\": %s, \"frames\": ",
            simprog_side_name(sd), index, r->time, r->sequence, r->ack, r->ack_bits, r->bytes, r->rtt,
            netgame_mode_name((netgame_mode_t)r->mode), simprog_fate_name(r->fate), r->deliveries, truth_bool(r->taken));
    truth_frames(out, r->frames, r->frame_count);
    fprintf(out, ", \"acked_in\": ");
    truth_number(out, r->acked_in ? (long long)r->acked_in : -1);
    fprintf(out, ", ");
    if (r->acked) {
        fprintf(out, "\"acked\": {\"time\": %.6f, \"rtt_sample\": %.6f, \"by_index\": %d, ", r->acked_time,
                r->rtt_sample, r->acked_by);
        truth_frame_or_null(out, "by_frame", r->acked_by_frame);
        fprintf(out, "}");
    } else {
        fprintf(out, "\"acked\": null");
    }
    fprintf(out, ", ");
    truth_time_or_null(out, "lost", r->lost, r->lost_time);
    fprintf(out, "}");
}

static int write_truth(const run_t *run, double end_time, int exit_code)
{
    const options_t *opt = run->opt;
    const simprog_t *sp = run->sp;
    FILE *out = simprog_truth_begin(sp);
    if (!out) return -1;
    const netgame_config_t *e = &opt->endpoint;
    fprintf(out, "  \"config\": {\"seed\": %llu, \"duration\": %.6f, \"tick\": %.6f, \"payload\": %d, \"protocol_id\": %u, "
                 "\"max_sequence\": %u, \"first_sequence\": %u, \"timeout\": %.6f, "
                 "\"client_stops_acking\": ",
            (unsigned long long)sp->sim.seed, sp->time_limit, sp->tick, e->payload_bytes, e->protocol_id,
            e->max_sequence, e->first_sequence, e->timeout);
    for (int s = 0; s < 2; s++) {
        if (s) fprintf(out, ", \"server_stops_acking\": ");
        truth_seconds(out, opt->stop_acking_at[s]);
    }
    fprintf(out, ",\n    \"spikes\": [");
    for (int i = 0; i < opt->spike_count; i++)
        fprintf(out, "%s{\"start\": %.6f, \"duration\": %.6f, \"extra\": %.6f}", i ? ", " : "", opt->spikes[i].start,
                opt->spikes[i].duration, opt->spikes[i].extra);
    fprintf(out, "],\n");
    simprog_truth_config_links(out, sp);
    simprog_truth_capture_result(out, sp, 1, end_time, exit_code);
    fprintf(out, "  \"sides\": [");
    for (int sd = 0; sd < 2; sd++) {
        const side_t *s = &run->side[sd];
        netgame_connection_t *c = s->connection;
        fprintf(out, "%s\n    {\"side\": \"%s\", \"host\": \"%s\", \"role\": \"%s\", \"state\": \"%s\", \"rtt\": %.6f, "
                     "\"mode\": \"%s\", \"penalty\": %.3f, \"time_good\": %.6f, \"time_bad\": %.6f, ",
                sd ? "," : "", simprog_side_name(sd), sp->host[sd], sd ? "server" : "client",
                netgame_state_name(netgame_connection_state(c)), netgame_connection_rtt(c),
                netgame_mode_name(netgame_connection_mode(c)), netgame_connection_penalty_time(c),
                s->time_in_mode[NETGAME_MODE_GOOD], s->time_in_mode[NETGAME_MODE_BAD]);
        truth_time_or_null(out, "connected_at", s->connected_once, s->connected_at);
        fprintf(out, ",\n     \"counters\": {");
        const uint64_t *counters = netgame_connection_counters(c);
        for (int i = 0; i < NETGAME_COUNTER_COUNT; i++) {
            fprintf(out, "%s", i ? ", " : "");
            truth_key(out, netgame_counter_name(i));
            fprintf(out, ": %llu", (unsigned long long)counters[i]);
        }
        fprintf(out, "},\n     \"mode_switches\": [");
        for (int i = 0; i < s->switch_count; i++) {
            const switch_t *w = &s->switches[i];
            fprintf(out, "%s\n       {\"time\": %.6f, \"mode\": \"%s\", \"penalty\": %.3f, \"rtt\": %.6f, \"from_sequence\": %u}",
                    i ? "," : "", w->time, netgame_mode_name((netgame_mode_t)w->mode), w->penalty, w->rtt, w->from_sequence);
        }
        fprintf(out, "%s]}", s->switch_count ? "\n     " : "");
    }
    fprintf(out, "\n  ]");
    simprog_packets_t packets = {{run->side[0].records, run->side[1].records}, {run->side[0].count, run->side[1].count},
                                 sizeof(record_t), offsetof(record_t, time), truth_packet};
    return simprog_truth_finish(out, sp, &packets);
}

static void print_summary(const run_t *run, double end_time, int exit_code)
{
    const simprog_t *sp = run->sp;
    printf("netgame-sim: %.1f s of virtual time, seed %llu\n", end_time, (unsigned long long)sp->sim.seed);
    for (int sd = 0; sd < 2; sd++) {
        const side_t *s = &run->side[sd];
        netgame_connection_t *c = s->connection;
        const uint64_t *k = netgame_connection_counters(c);
        printf("%s (%s): %s, mode %s (penalty %.0f s), rtt %.1f ms, Good %.1f s, Bad %.1f s, %d switches\n",
               sd ? "server" : "client", sp->host[sd],
               netgame_state_name(netgame_connection_state(c)), netgame_mode_name(netgame_connection_mode(c)),
               netgame_connection_penalty_time(c), netgame_connection_rtt(c) * 1000, s->time_in_mode[1],
               s->time_in_mode[0], s->switch_count);
        printf("  sent %llu, received %llu, acked %llu, lost %llu (%.1f%%)\n",
               (unsigned long long)k[NETGAME_COUNTER_PACKETS_SENT], (unsigned long long)k[NETGAME_COUNTER_PACKETS_RECEIVED],
               (unsigned long long)k[NETGAME_COUNTER_PACKETS_ACKED], (unsigned long long)k[NETGAME_COUNTER_PACKETS_LOST],
               k[NETGAME_COUNTER_PACKETS_SENT] ? 100.0 * k[NETGAME_COUNTER_PACKETS_LOST] / k[NETGAME_COUNTER_PACKETS_SENT] : 0.0);
        printf("  counters:");
        app_print_nonzero_counters(stdout, k, NETGAME_COUNTER_COUNT, netgame_counter_name);
    }
    simprog_print_links(sp);
    if (sp->pcap_path) printf("pcap: %u frames at %s in %s\n", sp->frames, simprog_side_name(sp->capture_side), sp->pcap_path);
    printf("result: %s\n", exit_code == EXIT_OK ? "ok" : exit_code == EXIT_DISCONNECTED ? "not connected at the end" : "file error");
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    static options_t opt;
    parse_options(&opt, argc, argv);
    simprog_t *sp = &opt.sp;

    static run_t run;
    run.opt = &opt;
    run.sp = sp;
    run.keep_records = sp->truth_path != NULL;
    run.current_index = -1;
    int start = simprog_start(sp);
    if (start != 0) return start;
    for (int s = 0; s < 2; s++) {
        run.side[s].run = &run;
        run.side[s].index = s;
        netgame_config_t config = opt.endpoint;
        config.role = s == SIDE_A ? NETGAME_CLIENT : NETGAME_SERVER;
        config.fault_stop_acking_at = opt.stop_acking_at[s];
        config.send = on_send;
        config.acked = on_acked;
        config.lost = on_lost;
        config.context = &run.side[s];
        run.side[s].connection = netgame_connection_create(&config);
        if (!run.side[s].connection) return app_out_of_memory(program, EXIT_IO);
    }
    const uint8_t server_address = SIDE_B;
    netgame_connection_start(run.side[SIDE_B].connection, 0, NULL, 0);
    netgame_connection_start(run.side[SIDE_A].connection, 0, &server_address, 1);

    double end_time;
    simprog_run(sp, sp->time_limit, &(simprog_loop_t){&run.now, &run, tick, deliver, describe, NULL, 0}, &end_time);

    int faulty = opt.stop_acking_at[0] >= 0 || opt.stop_acking_at[1] >= 0;
    int connected = netgame_connection_connected(run.side[SIDE_A].connection);
    int exit_code = (connected && !run.client_dropped) || faulty ? EXIT_OK : EXIT_DISCONNECTED;
    if (simprog_close_pcap(sp) != 0) exit_code = EXIT_IO;
    if (sp->truth_path && write_truth(&run, end_time, exit_code) != 0) exit_code = EXIT_IO;
    if (!sp->quiet) print_summary(&run, end_time, exit_code);
    for (int s = 0; s < 2; s++) {
        netgame_connection_destroy(run.side[s].connection);
        free(run.side[s].records);
        free(run.side[s].switches);
    }
    simprog_free(sp);
    return exit_code;
}
