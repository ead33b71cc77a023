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
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netgame.h"
#include "netsim.h"
#include "pcapout.h"
#include "platform.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_DISCONNECTED = 1, EXIT_USAGE = 2, EXIT_IO = 4 };

#define SIDE_A 0 /* the client */
#define SIDE_B 1 /* the server */
#define MAX_SPIKES 8

typedef struct spike_t {
    double start, duration, extra; /* extra one-way delay in both directions */
} spike_t;

typedef struct options_t {
    netsim_config_t sim;
    netgame_config_t endpoint; /* template for both sides */
    int capture_side;
    const char *pcap_path, *truth_path;
    double duration, tick;
    double stop_acking_at[2]; /* per side, -1 off */
    spike_t spikes[MAX_SPIKES];
    int spike_count;
    int quiet;
} options_t;

/* One datagram a side sent: the truth file's per-packet record. */
typedef struct record_t {
    double time;
    uint32_t sequence, ack, ack_bits;
    int bytes;
    double rtt;         /* the sender's smoothed RTT when it sent this */
    int mode;           /* the sender's flow-control mode when it sent this */
    int fate;           /* FATE_* */
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

enum { FATE_DELIVERED, FATE_LOST, FATE_DUPLICATED, FATE_QUEUE_DROPPED, FATE_FAULT_DROPPED, FATE_REORDERED };
static const char *const fate_names[] = {"delivered", "lost", "duplicated", "queue_dropped", "fault_dropped",
                                         "reordered"};

typedef struct switch_t {
    double time;
    int mode;
    double penalty, rtt;
    uint32_t from_sequence; /* the first packet sent in the new mode */
} switch_t;

typedef struct side_t {
    netgame_connection_t *connection;
    record_t *records;
    int count, capacity;
    switch_t *switches;
    int switch_count, switch_capacity;
    double time_in_mode[2];
    int mode;
    uint64_t sent; /* datagrams, also without --truth */
    int was_connected;
} side_t;

typedef struct run_t {
    options_t *opt;
    netsim_t *sim;
    side_t side[2];
    double now;
    double last_release[2]; /* spikes keep each link first in, first out */
    pcapout_t *pcap;
    pcapout_addr_t addr[2];
    uint32_t frames;
    int io_error;
    int keep_records;
    /* the datagram being processed: its sender and record, and its frame at the capture point */
    int current_from, current_index;
    uint32_t current_frame;
} run_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: netgame-sim [options]\n"
"Runs a netgame client (host A, 10.0.0.1:30001) and server (host B,\n"
"10.0.0.2:30000) over a seeded network simulator in virtual time. Each sends\n"
"at its flow control's rate: 10 packets/s in Bad mode, 30 in Good.\n"
"\n"
"Output:\n"
"  -w, --pcap FILE          write a pcap of the traffic seen at the capture point\n"
"      --capture-at WHERE   client|a (default) or server|b\n"
"      --truth FILE         write the per-packet JSON account (docs/truth.md)\n"
"  -q, --quiet              no summary on stdout\n"
"  -v, --verbose            more log on stderr\n"
"Run:\n"
"      --duration SEC       virtual time to run (default 30s)\n"
"      --tick SEC           endpoint update interval (default 1/30 s, the example's)\n"
"      --seed N             seeds the simulator (default 1)\n"
"Link (each also as --NAME-ab for A->B only and --NAME-ba for B->A only):\n"
"      --loss P             drop probability, 0.1 or 10%% (default 0)\n"
"      --latency SEC        one-way latency (default 0); RTT is twice this\n"
"      --jitter SEC         uniform +- jitter added to the latency (default 0)\n"
"      --duplicate P        probability of delivering a second copy (default 0)\n"
"      --reorder P          probability of holding a packet back (default 0)\n"
"      --reorder-delay SEC  how long it is held back (default 50ms)\n"
"      --bandwidth RATE     link rate, e.g. 1Mbit or 125000 (default unlimited)\n"
"      --queue BYTES        router buffer before the link; overflow drops\n"
"                           (default 64K; 0 = no limit)\n"
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

_Noreturn static void die_usage(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "netgame-sim: ");
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, " (try --help)\n");
    exit(EXIT_USAGE);
}

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q) {
        fprintf(stderr, "netgame-sim: out of memory\n");
        exit(EXIT_IO);
    }
    return q;
}

/* ---- options ---- */

enum {
    OPT_CAPTURE_AT = 256, OPT_TRUTH, OPT_DURATION, OPT_TICK, OPT_SEED, OPT_SPIKE, OPT_PAYLOAD, OPT_PROTOCOL_ID,
    OPT_MAX_SEQUENCE, OPT_FIRST_SEQUENCE, OPT_TIMEOUT, OPT_CLIENT_STOPS, OPT_SERVER_STOPS,
    OPT_LINK_BASE = 1000 /* + 3 * link option + (0 both, 1 ab, 2 ba) */
};

enum { LINK_LOSS, LINK_LATENCY, LINK_JITTER, LINK_DUPLICATE, LINK_REORDER, LINK_REORDER_DELAY,
       LINK_BANDWIDTH, LINK_QUEUE, LINK_OPTION_COUNT };
static const char *const link_option_names[LINK_OPTION_COUNT] = {
    "loss", "latency", "jitter", "duplicate", "reorder", "reorder-delay", "bandwidth", "queue",
};

static void set_link_option(options_t *opt, int which, int variant, const char *name, const char *text)
{
    for (int d = 0; d < 2; d++) {
        if ((variant == 1 && d != 0) || (variant == 2 && d != 1)) continue;
        netsim_link_config_t *link = &opt->sim.link[d];
        long long bytes;
        int bad = 0;
        switch (which) {
        case LINK_LOSS: bad = platform_parse_probability(text, &link->loss); break;
        case LINK_LATENCY: bad = platform_parse_seconds(text, 3600, &link->latency); break;
        case LINK_JITTER: bad = platform_parse_seconds(text, 3600, &link->jitter); break;
        case LINK_DUPLICATE: bad = platform_parse_probability(text, &link->duplicate); break;
        case LINK_REORDER: bad = platform_parse_probability(text, &link->reorder); break;
        case LINK_REORDER_DELAY: bad = platform_parse_seconds(text, 3600, &link->reorder_delay); break;
        case LINK_BANDWIDTH: bad = platform_parse_rate(text, &link->bandwidth); break;
        case LINK_QUEUE:
            bad = platform_parse_bytes(text, 1LL << 30, &bytes);
            link->queue_bytes = (int)bytes;
            break;
        }
        if (bad) die_usage("bad value for --%s: '%s'", name, text);
    }
}

static long long parse_int_option(const char *name, const char *text, long long min, long long max)
{
    long long v;
    if (platform_parse_int(text, min, max, &v) != 0)
        die_usage("--%s wants an integer in %lld..%lld, not '%s'", name, min, max, text);
    return v;
}

static double parse_seconds_option(const char *name, const char *text, double max)
{
    double v;
    if (platform_parse_seconds(text, max, &v) != 0) die_usage("--%s wants a time like 0.1, 100ms or 2s, not '%s'", name, text);
    return v;
}

static void parse_spike(options_t *opt, const char *text)
{
    if (opt->spike_count == MAX_SPIKES) die_usage("at most %d --spike options", MAX_SPIKES);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *second = strchr(buf, ':');
    char *third = second ? strchr(second + 1, ':') : NULL;
    if (!second || !third) die_usage("--spike wants START:LEN:EXTRA, e.g. 8:3:150ms, not '%s'", text);
    *second++ = 0;
    *third++ = 0;
    spike_t *s = &opt->spikes[opt->spike_count++];
    if (platform_parse_seconds(buf, 1e6, &s->start) != 0 || platform_parse_seconds(second, 1e6, &s->duration) != 0 ||
        platform_parse_seconds(third, 60, &s->extra) != 0)
        die_usage("--spike wants START:LEN:EXTRA, e.g. 8:3:150ms, not '%s'", text);
}

static void parse_options(options_t *opt, int argc, char **argv)
{
    netsim_default_config(&opt->sim);
    netgame_default_config(&opt->endpoint);
    opt->endpoint.payload_bytes = 32;
    opt->capture_side = SIDE_A;
    opt->duration = 30;
    opt->tick = 1.0 / 30.0;
    opt->stop_acking_at[0] = opt->stop_acking_at[1] = -1;

    static struct option fixed[] = {
        {"pcap", required_argument, 0, 'w'},
        {"capture-at", required_argument, 0, OPT_CAPTURE_AT},
        {"truth", required_argument, 0, OPT_TRUTH},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"duration", required_argument, 0, OPT_DURATION},
        {"tick", required_argument, 0, OPT_TICK},
        {"seed", required_argument, 0, OPT_SEED},
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
    enum { FIXED = sizeof fixed / sizeof fixed[0] };
    static char link_names[LINK_OPTION_COUNT * 3][32];
    static struct option options[FIXED + LINK_OPTION_COUNT * 3 + 1];
    memcpy(options, fixed, sizeof fixed);
    for (int i = 0; i < LINK_OPTION_COUNT; i++)
        for (int v = 0; v < 3; v++) {
            char *name = link_names[i * 3 + v];
            snprintf(name, 32, "%s%s", link_option_names[i], v == 0 ? "" : v == 1 ? "-ab" : "-ba");
            options[FIXED + i * 3 + v] = (struct option){name, required_argument, 0, OPT_LINK_BASE + i * 3 + v};
        }
    memset(&options[FIXED + LINK_OPTION_COUNT * 3], 0, sizeof options[0]);

    int c, index, verbosity = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":w:qvh", options, &index)) != -1) {
        const char *name = c >= 256 ? options[index].name : "";
        switch (c) {
        case 'w': opt->pcap_path = optarg; break;
        case 'q': opt->quiet = 1; break;
        case 'v': verbosity++; break;
        case 'h': usage(stdout); exit(0);
        case OPT_CAPTURE_AT:
            if (strcmp(optarg, "client") == 0 || strcmp(optarg, "a") == 0) opt->capture_side = SIDE_A;
            else if (strcmp(optarg, "server") == 0 || strcmp(optarg, "b") == 0) opt->capture_side = SIDE_B;
            else die_usage("--capture-at wants client, server, a or b, not '%s'", optarg);
            break;
        case OPT_TRUTH: opt->truth_path = optarg; break;
        case OPT_DURATION: opt->duration = parse_seconds_option(name, optarg, 1e7); break;
        case OPT_TICK: opt->tick = parse_seconds_option(name, optarg, 1); break;
        case OPT_SEED: opt->sim.seed = (uint64_t)parse_int_option(name, optarg, 0, INT64_MAX); break;
        case OPT_SPIKE: parse_spike(opt, optarg); break;
        case OPT_PAYLOAD: opt->endpoint.payload_bytes = (int)parse_int_option(name, optarg, 0, NETGAME_MAX_PAYLOAD_BYTES); break;
        case OPT_PROTOCOL_ID: opt->endpoint.protocol_id = (uint32_t)parse_int_option(name, optarg, 0, 0xffffffffLL); break;
        case OPT_MAX_SEQUENCE: opt->endpoint.max_sequence = (uint32_t)parse_int_option(name, optarg, 1, 0xffffffffLL); break;
        case OPT_FIRST_SEQUENCE: opt->endpoint.first_sequence = (uint32_t)parse_int_option(name, optarg, 0, 0xffffffffLL); break;
        case OPT_TIMEOUT: opt->endpoint.timeout = parse_seconds_option(name, optarg, 3600); break;
        case OPT_CLIENT_STOPS: opt->stop_acking_at[SIDE_A] = parse_seconds_option(name, optarg, 1e7); break;
        case OPT_SERVER_STOPS: opt->stop_acking_at[SIDE_B] = parse_seconds_option(name, optarg, 1e7); break;
        case ':': die_usage("option %s needs a value", argv[optind - 1]);
        case '?':
            if (optopt) die_usage("unknown option -%c", optopt);
            die_usage("unknown option %s", argv[optind - 1]);
        default:
            if (c >= OPT_LINK_BASE && c < OPT_LINK_BASE + LINK_OPTION_COUNT * 3)
                set_link_option(opt, (c - OPT_LINK_BASE) / 3, (c - OPT_LINK_BASE) % 3, name, optarg);
            else
                die_usage("unhandled option");
        }
    }
    if (optind < argc) die_usage("unexpected argument '%s'", argv[optind]);
    if (opt->tick <= 0) die_usage("--tick must be above 0");
    if (opt->duration <= 0) die_usage("--duration must be above 0");
    if (opt->endpoint.timeout <= 0) die_usage("--timeout must be above 0");
    if (opt->endpoint.first_sequence > opt->endpoint.max_sequence)
        die_usage("--first-sequence %u is above --max-sequence %u", opt->endpoint.first_sequence,
                  opt->endpoint.max_sequence);
    log_set_name("netgame-sim");
    log_set_level(verbosity == 0 ? LOG_LEVEL_ERROR : verbosity == 1 ? LOG_LEVEL_INFO : LOG_LEVEL_DEBUG);
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

typedef struct callback_t {
    run_t *run;
    int side;
} callback_t;

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
    callback_t *cb = context;
    run_t *run = cb->run;
    side_t *s = &run->side[cb->side];
    int link = cb->side;
    s->sent++;
    uint32_t frame = 0;
    if (run->pcap && cb->side == run->opt->capture_side) {
        if (pcapout_write_udp(run->pcap, run->now, &run->addr[link], &run->addr[1 - link], packet, bytes) != 0)
            run->io_error = 1;
        frame = ++run->frames;
    }
    /* Spikes delay a link first in, first out: nothing overtakes. */
    double release = run->now + spike_extra(run->opt, run->now);
    if (release < run->last_release[link]) release = run->last_release[link];
    run->last_release[link] = release;
    const uint64_t *c = netsim_counters(run->sim, link);
    uint64_t before[NETSIM_COUNTER_COUNT];
    memcpy(before, c, sizeof before);
    netsim_send(run->sim, link, release, packet, bytes);
    if (!run->keep_records) return;

    if (s->count == s->capacity) {
        s->capacity = s->capacity ? s->capacity * 2 : 1024;
        s->records = xrealloc(s->records, (size_t)s->capacity * sizeof *s->records);
    }
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
    if (c[NETSIM_COUNTER_FAULT_DROPPED] > before[NETSIM_COUNTER_FAULT_DROPPED]) r->fate = FATE_FAULT_DROPPED;
    else if (c[NETSIM_COUNTER_LOST] > before[NETSIM_COUNTER_LOST]) r->fate = FATE_LOST;
    else if (c[NETSIM_COUNTER_QUEUE_DROPPED] > before[NETSIM_COUNTER_QUEUE_DROPPED]) r->fate = FATE_QUEUE_DROPPED;
    else if (c[NETSIM_COUNTER_DUPLICATED] > before[NETSIM_COUNTER_DUPLICATED]) r->fate = FATE_DUPLICATED;
    else if (c[NETSIM_COUNTER_REORDERED] > before[NETSIM_COUNTER_REORDERED]) r->fate = FATE_REORDERED;
    else r->fate = FATE_DELIVERED;
    record_frame(r, frame);
    note_acked_in(run, cb->side, run->now, packet, bytes, frame);
}

static void on_acked(void *context, uint32_t sequence, double rtt)
{
    callback_t *cb = context;
    run_t *run = cb->run;
    if (!run->keep_records) return;
    side_t *s = &run->side[cb->side];
    int i = find_record(s, sequence, 1);
    if (i < 0) return;
    record_t *r = &s->records[i];
    r->acked = 1;
    r->acked_time = run->now;
    r->rtt_sample = rtt;
    r->acked_by = run->current_index;
    r->acked_by_frame = run->current_frame;
}

static void on_lost(void *context, uint32_t sequence)
{
    callback_t *cb = context;
    run_t *run = cb->run;
    if (!run->keep_records) return;
    side_t *s = &run->side[cb->side];
    int i = find_record(s, sequence, 1);
    if (i < 0) return;
    s->records[i].lost = 1;
    s->records[i].lost_time = run->now;
}

/* A datagram from link `link` reaches the other side's host. */
static void deliver(run_t *run, int link, const uint8_t *packet, int bytes)
{
    int to = 1 - link;
    uint32_t frame = 0;
    if (run->pcap && to == run->opt->capture_side) {
        if (pcapout_write_udp(run->pcap, run->now, &run->addr[link], &run->addr[to], packet, bytes) != 0)
            run->io_error = 1;
        frame = ++run->frames;
    }
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
    if (s->switch_count == s->switch_capacity) {
        s->switch_capacity = s->switch_capacity ? s->switch_capacity * 2 : 16;
        s->switches = xrealloc(s->switches, (size_t)s->switch_capacity * sizeof *s->switches);
    }
    s->switches[s->switch_count++] = (switch_t){run->now, mode, netgame_connection_penalty_time(c),
                                                netgame_connection_rtt(c), first_sequence};
}

/* ---- output ---- */

static const char *side_name(int side) { return side == SIDE_A ? "a" : "b"; }

static void json_key(FILE *out, const char *name)
{
    fputc('"', out);
    for (; *name; name++) fputc(*name == ' ' ? '_' : *name, out);
    fputc('"', out);
}

static int write_truth(const run_t *run, const char *path, double end_time, int exit_code)
{
    const options_t *opt = run->opt;
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "netgame-sim: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    const char *endpoint[2] = {"10.0.0.1:30001", "10.0.0.2:30000"};
    const netgame_config_t *e = &opt->endpoint;
    fprintf(out, "{\n  \"format\": \"chunkshark-truth\",\n  \"version\": 1,\n  \"generator\": \"netgame-sim\",\n");
    fprintf(out, "  \"endpoints\": {\"a\": \"%s\", \"b\": \"%s\"},\n", endpoint[0], endpoint[1]);
    fprintf(out, "  \"config\": {\"seed\": %llu, \"duration\": %.6f, \"tick\": %.6f, \"payload\": %d, \"protocol_id\": %u, "
                 "\"max_sequence\": %u, \"first_sequence\": %u, \"timeout\": %.6f, "
                 "\"client_stops_acking\": ",
            (unsigned long long)opt->sim.seed, opt->duration, opt->tick, e->payload_bytes, e->protocol_id,
            e->max_sequence, e->first_sequence, e->timeout);
    for (int s = 0; s < 2; s++) {
        if (s) fprintf(out, ", \"server_stops_acking\": ");
        if (opt->stop_acking_at[s] >= 0) fprintf(out, "%.6f", opt->stop_acking_at[s]);
        else fprintf(out, "null");
    }
    fprintf(out, ",\n    \"spikes\": [");
    for (int i = 0; i < opt->spike_count; i++)
        fprintf(out, "%s{\"start\": %.6f, \"duration\": %.6f, \"extra\": %.6f}", i ? ", " : "", opt->spikes[i].start,
                opt->spikes[i].duration, opt->spikes[i].extra);
    fprintf(out, "],\n    \"links\": [");
    for (int d = 0; d < 2; d++) {
        const netsim_link_config_t *l = &opt->sim.link[d];
        fprintf(out, "%s\n      {\"link\": \"%s\", \"loss\": %.6f, \"latency\": %.6f, \"jitter\": %.6f, \"duplicate\": %.6f, "
                     "\"reorder\": %.6f, \"reorder_delay\": %.6f, \"bandwidth\": %.3f, \"queue_bytes\": %d}",
                d ? "," : "", d ? "b_to_a" : "a_to_b", l->loss, l->latency, l->jitter, l->duplicate, l->reorder,
                l->reorder_delay, l->bandwidth, l->queue_bytes);
    }
    fprintf(out, "\n    ]},\n");
    fprintf(out, "  \"capture\": {\"file\": %s, \"at\": \"%s\", \"host\": \"%s\", \"frames\": %u},\n",
            opt->pcap_path ? "true" : "false", side_name(opt->capture_side), endpoint[opt->capture_side],
            run->frames);
    fprintf(out, "  \"result\": {\"end_time\": %.6f, \"exit_code\": %d},\n", end_time, exit_code);
    fprintf(out, "  \"sides\": [");
    for (int sd = 0; sd < 2; sd++) {
        const side_t *s = &run->side[sd];
        netgame_connection_t *c = s->connection;
        fprintf(out, "%s\n    {\"side\": \"%s\", \"host\": \"%s\", \"role\": \"%s\", \"state\": \"%s\", \"rtt\": %.6f, "
                     "\"mode\": \"%s\", \"penalty\": %.3f, \"time_good\": %.6f, \"time_bad\": %.6f,\n",
                sd ? "," : "", side_name(sd), endpoint[sd], sd ? "server" : "client",
                netgame_state_name(netgame_connection_state(c)), netgame_connection_rtt(c),
                netgame_mode_name(netgame_connection_mode(c)), netgame_connection_penalty_time(c),
                s->time_in_mode[NETGAME_MODE_GOOD], s->time_in_mode[NETGAME_MODE_BAD]);
        fprintf(out, "     \"counters\": {");
        const uint64_t *counters = netgame_connection_counters(c);
        for (int i = 0; i < NETGAME_COUNTER_COUNT; i++) {
            fprintf(out, "%s", i ? ", " : "");
            json_key(out, netgame_counter_name(i));
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
    fprintf(out, "\n  ],\n  \"links\": [");
    for (int d = 0; d < 2; d++) {
        const uint64_t *c = netsim_counters(run->sim, d);
        fprintf(out, "%s\n    {\"link\": \"%s\"", d ? "," : "", d ? "b_to_a" : "a_to_b");
        for (int i = 0; i < NETSIM_COUNTER_COUNT; i++) {
            fprintf(out, ", ");
            json_key(out, netsim_counter_name(i));
            fprintf(out, ": %llu", (unsigned long long)c[i]);
        }
        fprintf(out, "}");
    }
    fprintf(out, "\n  ],\n  \"packets\": [");
    /* Both sides' packets merged in send order (A first at equal times). */
    int next[2] = {0, 0}, first = 1;
    for (;;) {
        int sd = -1;
        for (int k = 0; k < 2; k++) {
            if (next[k] >= run->side[k].count) continue;
            if (sd < 0 || run->side[k].records[next[k]].time < run->side[sd].records[next[sd]].time) sd = k;
        }
        if (sd < 0) break;
        int index = next[sd]++;
        const record_t *r = &run->side[sd].records[index];
        fprintf(out, "%s\n    {\"from\": \"%s\", \"index\": %d, \"time\": %.6f, \"sequence\": %u, \"ack\": %u, "
                     "\"ack_bits\": %u, \"bytes\": %d, \"rtt\": %.6f, \"mode\": \"%s\", \"fate\": \"%s\", "
                     "\"deliveries\": %d, \"taken\": %s, \"frames\": [",
                first ? "" : ",", side_name(sd), index, r->time, r->sequence, r->ack, r->ack_bits, r->bytes, r->rtt,
                netgame_mode_name((netgame_mode_t)r->mode), fate_names[r->fate], r->deliveries,
                r->taken ? "true" : "false");
        first = 0;
        for (int i = 0; i < r->frame_count; i++) fprintf(out, "%s%u", i ? ", " : "", r->frames[i]);
        fprintf(out, "], \"acked_in\": ");
        if (r->acked_in) fprintf(out, "%u, ", r->acked_in);
        else fprintf(out, "null, ");
        if (r->acked) {
            fprintf(out, "\"acked\": {\"time\": %.6f, \"rtt_sample\": %.6f, \"by_index\": %d, \"by_frame\": ",
                    r->acked_time, r->rtt_sample, r->acked_by);
            if (r->acked_by_frame) fprintf(out, "%u}", r->acked_by_frame);
            else fprintf(out, "null}");
        } else {
            fprintf(out, "\"acked\": null");
        }
        if (r->lost) fprintf(out, ", \"lost\": %.6f}", r->lost_time);
        else fprintf(out, ", \"lost\": null}");
    }
    fprintf(out, "\n  ]\n}\n");
    int bad = ferror(out);
    if (fclose(out) != 0) bad = 1;
    if (bad) fprintf(stderr, "netgame-sim: error writing %s\n", path);
    return bad ? -1 : 0;
}

static void print_summary(const run_t *run, double end_time, int exit_code)
{
    printf("netgame-sim: %.1f s of virtual time, seed %llu\n", end_time, (unsigned long long)run->opt->sim.seed);
    for (int sd = 0; sd < 2; sd++) {
        const side_t *s = &run->side[sd];
        netgame_connection_t *c = s->connection;
        const uint64_t *k = netgame_connection_counters(c);
        printf("  %s (%s): %s, mode %s (penalty %.0f s), rtt %.1f ms, Good %.1f s, Bad %.1f s, %d switches\n",
               sd ? "server" : "client", sd ? "10.0.0.2:30000" : "10.0.0.1:30001",
               netgame_state_name(netgame_connection_state(c)), netgame_mode_name(netgame_connection_mode(c)),
               netgame_connection_penalty_time(c), netgame_connection_rtt(c) * 1000, s->time_in_mode[1],
               s->time_in_mode[0], s->switch_count);
        printf("    sent %llu, received %llu, acked %llu, lost %llu (%.1f%%)\n",
               (unsigned long long)k[NETGAME_COUNTER_PACKETS_SENT], (unsigned long long)k[NETGAME_COUNTER_PACKETS_RECEIVED],
               (unsigned long long)k[NETGAME_COUNTER_PACKETS_ACKED], (unsigned long long)k[NETGAME_COUNTER_PACKETS_LOST],
               k[NETGAME_COUNTER_PACKETS_SENT] ? 100.0 * k[NETGAME_COUNTER_PACKETS_LOST] / k[NETGAME_COUNTER_PACKETS_SENT] : 0.0);
        printf("    counters:");
        int shown = 0;
        for (int i = 0; i < NETGAME_COUNTER_COUNT; i++) {
            if (!k[i]) continue;
            printf("%s %s %llu", shown++ ? "," : "", netgame_counter_name(i), (unsigned long long)k[i]);
        }
        printf("\n");
    }
    for (int d = 0; d < 2; d++) {
        const uint64_t *c = netsim_counters(run->sim, d);
        printf("  link %s:", d ? "B->A" : "A->B");
        for (int i = 0; i < NETSIM_COUNTER_COUNT; i++) printf("%s %s %llu", i ? "," : "", netsim_counter_name(i), (unsigned long long)c[i]);
        printf("\n");
    }
    if (run->opt->pcap_path) printf("  pcap: %u frames at %s in %s\n", run->frames, side_name(run->opt->capture_side), run->opt->pcap_path);
    printf("  result: %s\n", exit_code == EXIT_OK ? "ok" : exit_code == EXIT_DISCONNECTED ? "not connected at the end" : "file error");
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    static options_t opt;
    parse_options(&opt, argc, argv);

    static run_t run;
    run.opt = &opt;
    run.keep_records = opt.truth_path != NULL;
    pcapout_addr_ipv4(&run.addr[SIDE_A], 10, 0, 0, 1, NETGAME_DEFAULT_CLIENT_PORT);
    pcapout_addr_ipv4(&run.addr[SIDE_B], 10, 0, 0, 2, NETGAME_DEFAULT_SERVER_PORT);
    run.sim = netsim_create(&opt.sim);
    static callback_t callbacks[2];
    for (int s = 0; s < 2; s++) {
        callbacks[s] = (callback_t){&run, s};
        netgame_config_t config = opt.endpoint;
        config.role = s == SIDE_A ? NETGAME_CLIENT : NETGAME_SERVER;
        config.fault_stop_acking_at = opt.stop_acking_at[s];
        config.send = on_send;
        config.acked = on_acked;
        config.lost = on_lost;
        config.context = &callbacks[s];
        run.side[s].connection = netgame_connection_create(&config);
        run.current_index = -1;
        if (!run.sim || !run.side[s].connection) {
            fprintf(stderr, "netgame-sim: out of memory\n");
            return EXIT_IO;
        }
    }
    if (opt.pcap_path) {
        char err[256];
        run.pcap = pcapout_open(opt.pcap_path, err, sizeof err);
        if (!run.pcap) {
            fprintf(stderr, "netgame-sim: cannot write %s: %s\n", opt.pcap_path, err);
            return EXIT_IO;
        }
    }
    const uint8_t server_address = SIDE_B;
    netgame_connection_start(run.side[SIDE_B].connection, 0, NULL, 0);
    netgame_connection_start(run.side[SIDE_A].connection, 0, &server_address, 1);

    double wall_start = platform_time(), wall_last = wall_start;
    int tty = platform_stderr_is_tty(), progress_shown = 0, client_dropped = 0;
    uint8_t buffer[NETSIM_IP_UDP_OVERHEAD + NETGAME_MAX_PACKET_BYTES + 65536];
    double previous = 0;
    for (long long step = 0;; step++) {
        run.now = (double)step * opt.tick;
        if (run.now > opt.duration + 1e-9) break;
        for (int s = 0; s < 2; s++) {
            netgame_state_t before = netgame_connection_state(run.side[s].connection);
            uint32_t first_sequence = netgame_connection_local_sequence(run.side[s].connection);
            netgame_connection_update(run.side[s].connection, run.now);
            netgame_state_t after = netgame_connection_state(run.side[s].connection);
            if (s == SIDE_A && before == NETGAME_STATE_CONNECTED && after != NETGAME_STATE_CONNECTED) client_dropped = 1;
            note_mode(&run, s, run.now - previous, first_sequence);
        }
        previous = run.now;

        /* Deliver everything due before the next tick at its own time, both
         * directions merged in time order. */
        double next = (double)(step + 1) * opt.tick;
        double due;
        while ((due = netsim_next_delivery(run.sim)) >= 0 && due < next) {
            for (int link = 0; link < 2; link++) {
                double at;
                int bytes = netsim_receive(run.sim, link, due, buffer, &at);
                if (bytes <= 0) continue;
                run.now = at;
                deliver(&run, link, buffer, bytes);
                break;
            }
        }
        if (run.side[SIDE_A].was_connected == 0 && netgame_connection_connected(run.side[SIDE_A].connection))
            run.side[SIDE_A].was_connected = 1;

        if ((step & 1023) == 0) {
            double wall = platform_time();
            if (wall - wall_start > 1.0 && wall - wall_last > (tty ? 0.2 : 2.0)) {
                wall_last = wall;
                fprintf(stderr, "%snetgame-sim: virtual time %.0f s of %.0f, %llu datagrams sent%s", tty ? "\r" : "",
                        (double)step * opt.tick, opt.duration,
                        (unsigned long long)(run.side[0].sent + run.side[1].sent), tty ? "   " : "\n");
                progress_shown = 1;
            }
        }
    }
    if (progress_shown && tty) fprintf(stderr, "\n");
    double end_time = previous;

    int faulty = opt.stop_acking_at[0] >= 0 || opt.stop_acking_at[1] >= 0;
    int connected = netgame_connection_connected(run.side[SIDE_A].connection);
    int exit_code = (connected && !client_dropped) || faulty ? EXIT_OK : EXIT_DISCONNECTED;
    if (run.pcap && pcapout_close(run.pcap) != 0) {
        fprintf(stderr, "netgame-sim: error writing %s\n", opt.pcap_path);
        run.io_error = 1;
    }
    run.pcap = NULL;
    if (run.io_error) exit_code = EXIT_IO;
    if (opt.truth_path && write_truth(&run, opt.truth_path, end_time, exit_code) != 0) exit_code = EXIT_IO;
    if (!opt.quiet) print_summary(&run, end_time, exit_code);
    for (int s = 0; s < 2; s++) {
        netgame_connection_destroy(run.side[s].connection);
        free(run.side[s].records);
        free(run.side[s].switches);
    }
    netsim_destroy(run.sim);
    return exit_code;
}
