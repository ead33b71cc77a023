/*
 * reliable-sim: two reliable endpoints, A (10.0.0.1:50000) and B
 * (10.0.0.2:50001), exchanging packets through the network simulator in
 * virtual time. A sends packets of --payload bytes (every --large-every'th of
 * --large bytes, fragmented above --fragment-above), B answers with small
 * ones; each side acknowledges the other's in its headers. Writes a pcap of
 * plain UDP as one host sees it, a summary, and a JSON account of every
 * packet (the truth file, docs/truth.md "reliable-sim").
 *
 * Link 0 carries A -> B, link 1 B -> A. The same options give the same pcap
 * and truth file byte for byte.
 *
 * Exit codes: 0 ran its duration; 2 bad arguments; 4 a file could not be
 * written.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "netsim.h"
#include "reliable.h"
#include "simprog.h"
#include "util.h"

enum { EXIT_OK = 0, EXIT_USAGE = SIMPROG_EXIT_USAGE, EXIT_IO = SIMPROG_EXIT_IO };
static const char *const program = "reliable-sim";

#define SIDE_A SIMPROG_SIDE_A
#define SIDE_B SIMPROG_SIDE_B
#define MAX_FRAMES 8 /* frames kept per datagram of a record (copies) */

typedef struct options_t {
    simprog_t sp;
    rl_config_t endpoint;   /* template for both sides */
    double rate;            /* packets per second, each side */
    int payload_min, payload_max; /* A's packets */
    int large_every, large_bytes;
    int reply_bytes;        /* B's packets */
    double stop_acking_at;  /* B's fault, -1 off */
    rl_faults_t faults;
} options_t;

/* One packet a side sent. */
typedef struct record_t {
    double time;
    rl_header_t header;
    int payload, fragments; /* fragments 0: a regular packet */
    uint32_t *frames;       /* per datagram (fragment id), MAX_FRAMES each */
    uint8_t *frame_count;
    uint8_t *seen;          /* per fragment: seen at the capture point */
    int seen_count;
    int deliveries;         /* datagrams of it that reached the peer's host */
    int taken;
    double taken_time;
    uint32_t acked_in;
    int acked, lost;
    double acked_time, rtt, lost_time;
    uint32_t acked_by_frame;
} record_t;

/* One side; also its endpoint's callbacks' context. */
typedef struct side_t {
    struct run_t *run;
    int index; /* SIDE_A or SIDE_B */
    rl_endpoint_t *endpoint;
    record_t *records;
    int count, capacity;
    double next_send;
    uint64_t sent_packets;
} side_t;

typedef struct run_t {
    options_t *opt;
    simprog_t *sp;
    double now, interval;     /* virtual time; between a side's packets */
    side_t side[2];
    cs_rng_t rng;             /* the payload sizes' own generator, seeded from --seed */
    uint32_t current_frame;   /* the datagram being delivered: its frame */
    uint8_t *payload;         /* MAX_PAYLOAD bytes for send_one */
} run_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: reliable-sim [options]\n"
"Runs two reliable endpoints, A (10.0.0.1:50000) and B (10.0.0.2:50001),\n"
"over a seeded network simulator in virtual time. A sends packets of\n"
"--payload bytes (fragmenting those above --fragment-above), B answers with\n"
"--reply bytes; each acknowledges the other's packets in its headers.\n"
"Decode the pcap with: tshark -d udp.port==50000,reliable -r FILE\n"
"\n");
    simprog_print_help_output(out, "a (default) or b", "per-packet");
    fprintf(out,
"Run:\n"
"      --duration SEC       virtual time to run (default 10s; same as --time-limit)\n"
"      --time-limit SEC     the same\n"
"      --tick SEC           endpoint update interval (default 1ms)\n");
    simprog_print_help_link(out);
    fprintf(out,
"Endpoints:\n"
"      --rate N             packets per second each side (default 30)\n"
"      --payload MIN[-MAX]  A's payload bytes, drawn per packet (default 100)\n"
"      --large-every N      every Nth packet of A is --large bytes (default 0: none)\n"
"      --large BYTES        size of those packets (default 3000)\n"
"      --reply BYTES        B's payload bytes (default 40)\n"
"      --fragment-above N   fragment payloads above N bytes (default 1024)\n"
"      --fragment-size N    data bytes per fragment (default 1024)\n"
"      --max-fragments N    at most N fragments a packet (default 16, up to 256)\n"
"      --first-sequence N   both sides' first sequence (default 0; 65500 to\n"
"                           see the wrap)\n"
"Faults:\n"
"      --stops-acking SEC   from this time B's ack and ack bits stop moving\n"
"                           (it still receives and sends)\n"
"      --drop-fragment ID   every fragment ID of A's packets is lost\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 ran the whole duration; 2 bad arguments; 4 file error.\n");
}

enum {
    OPT_DURATION = 256, OPT_RATE, OPT_PAYLOAD, OPT_LARGE_EVERY, OPT_LARGE, OPT_REPLY, OPT_FRAGMENT_ABOVE,
    OPT_FRAGMENT_SIZE, OPT_MAX_FRAGMENTS, OPT_FIRST_SEQUENCE, OPT_STOPS_ACKING, OPT_DROP_FRAGMENT,
};

static const struct option own_options[] = {
    {"duration", required_argument, 0, OPT_DURATION},
    {"rate", required_argument, 0, OPT_RATE},
    {"payload", required_argument, 0, OPT_PAYLOAD},
    {"large-every", required_argument, 0, OPT_LARGE_EVERY},
    {"large", required_argument, 0, OPT_LARGE},
    {"reply", required_argument, 0, OPT_REPLY},
    {"fragment-above", required_argument, 0, OPT_FRAGMENT_ABOVE},
    {"fragment-size", required_argument, 0, OPT_FRAGMENT_SIZE},
    {"max-fragments", required_argument, 0, OPT_MAX_FRAGMENTS},
    {"first-sequence", required_argument, 0, OPT_FIRST_SEQUENCE},
    {"stops-acking", required_argument, 0, OPT_STOPS_ACKING},
    {"drop-fragment", required_argument, 0, OPT_DROP_FRAGMENT},
    {"help", no_argument, 0, 'h'},
};

#define MAX_PAYLOAD (256 * 1024)

static void own_option(void *context, int c, const char *name, const char *text)
{
    options_t *opt = context;
    switch (c) {
    case OPT_DURATION: opt->sp.time_limit = app_seconds_option(program, name, text, 1e6); break;
    case OPT_RATE: opt->rate = (double)app_int_option(program, name, text, 1, 1000); break;
    case OPT_PAYLOAD: {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", text);
        char *dash = strchr(buf, '-');
        if (dash) *dash++ = 0;
        opt->payload_min = (int)app_int_option(program, name, buf, 0, MAX_PAYLOAD);
        opt->payload_max = dash ? (int)app_int_option(program, name, dash, 0, MAX_PAYLOAD) : opt->payload_min;
        if (opt->payload_max < opt->payload_min) app_bad_argument(program, "--payload %s: MAX below MIN", text);
        break;
    }
    case OPT_LARGE_EVERY: opt->large_every = (int)app_int_option(program, name, text, 0, 1000000); break;
    case OPT_LARGE: opt->large_bytes = (int)app_int_option(program, name, text, 0, MAX_PAYLOAD); break;
    case OPT_REPLY: opt->reply_bytes = (int)app_int_option(program, name, text, 0, MAX_PAYLOAD); break;
    case OPT_FRAGMENT_ABOVE: opt->endpoint.fragment_above = (int)app_int_option(program, name, text, 0, MAX_PAYLOAD); break;
    case OPT_FRAGMENT_SIZE: opt->endpoint.fragment_size = (int)app_int_option(program, name, text, 1, 60000); break;
    case OPT_MAX_FRAGMENTS: opt->endpoint.max_fragments = (int)app_int_option(program, name, text, 1, RL_MAX_FRAGMENTS); break;
    case OPT_FIRST_SEQUENCE: opt->endpoint.first_sequence = (uint16_t)app_int_option(program, name, text, 0, 65535); break;
    case OPT_STOPS_ACKING: opt->stop_acking_at = app_seconds_option(program, name, text, 1e6); break;
    case OPT_DROP_FRAGMENT: opt->faults.drop_fragment = (int)app_int_option(program, name, text, 0, 255); break;
    default: app_bad_argument(program, "unhandled option");
    }
}

static void parse_options(options_t *opt, int argc, char **argv)
{
    simprog_init(&opt->sp, program, "a", "b", RL_DEFAULT_PORT_A, RL_DEFAULT_PORT_B);
    opt->sp.time_limit = 10;
    rl_default_config(&opt->endpoint);
    opt->rate = 30;
    opt->payload_min = opt->payload_max = 100;
    opt->large_bytes = 3000;
    opt->reply_bytes = 40;
    opt->stop_acking_at = -1;
    opt->faults.drop_fragment = -1;
    opt->faults.drop_dir = 0;
    simprog_parse_options(&opt->sp, argc, argv, own_options, (int)(sizeof own_options / sizeof own_options[0]), usage,
                          own_option, opt);
    if (opt->sp.time_limit <= 0) app_bad_argument(program, "--duration must be above 0");
    const rl_config_t *e = &opt->endpoint;
    int biggest = opt->payload_max > opt->large_bytes && opt->large_every ? opt->payload_max
                  : opt->large_every ? opt->large_bytes : opt->payload_max;
    if (opt->reply_bytes > biggest) biggest = opt->reply_bytes;
    if (biggest > e->fragment_above && (biggest + e->fragment_size - 1) / e->fragment_size > e->max_fragments)
        app_bad_argument(program, "a %d-byte packet needs more than --max-fragments %d fragments of %d bytes", biggest,
                  e->max_fragments, e->fragment_size);
    if (biggest > e->max_packet_size) opt->endpoint.max_packet_size = biggest;
}

/* ---- bookkeeping ---- */

static int find_record(const side_t *s, uint16_t sequence)
{
    for (int i = s->count - 1, walked = 0; i >= 0 && walked < 65536; i--, walked++)
        if (s->records[i].header.sequence == sequence) return i;
    return -1;
}

static void record_frame(record_t *r, int id, uint32_t frame)
{
    if (!frame) return;
    int slot = r->fragments ? id : 0;
    if (r->frame_count[slot] < MAX_FRAMES) r->frames[slot * MAX_FRAMES + r->frame_count[slot]++] = frame;
}

/* A datagram of record r (from side `from`) is at the capture point as frame
 * `frame`: when that completes the packet there (a regular packet, or its
 * last missing fragment), the peer's packets its header acknowledges and that
 * the peer had taken by the header's send time get frame as acked_in. */
static void note_capture(run_t *run, int from, record_t *r, int id, uint32_t frame)
{
    if (!frame) return;
    if (r->fragments) {
        if (r->seen[id]) return;
        r->seen[id] = 1;
        if (++r->seen_count < r->fragments) return;
    } else {
        if (r->seen_count++) return;
    }
    side_t *peer = &run->side[1 - from];
    for (int i = 0; i < 32; i++) {
        if (!((r->header.ack_bits >> i) & 1)) continue;
        int k = find_record(peer, (uint16_t)(r->header.ack - i));
        if (k < 0) continue;
        record_t *p = &peer->records[k];
        if (p->taken && p->taken_time <= r->time && !p->acked_in) p->acked_in = frame;
    }
}

static void on_send(void *context, uint16_t sequence, const uint8_t *packet, int bytes)
{
    side_t *s = context;
    run_t *run = s->run;
    uint32_t frame = simprog_record(run->sp, s->index, s->index, run->now, packet, bytes);
    netsim_send(run->sp->netsim, s->index, run->now, packet, bytes);
    int k = find_record(s, sequence);
    if (k < 0) return;
    record_t *r = &s->records[k];
    int id = packet[0] & 1 ? packet[3] : 0;
    record_frame(r, id, frame);
    note_capture(run, s->index, r, id, frame);
}

static int on_process(void *context, uint16_t sequence, const uint8_t *payload, int bytes)
{
    (void)payload;
    (void)bytes;
    const side_t *s = context;
    run_t *run = s->run;
    side_t *peer = &run->side[1 - s->index];
    int k = find_record(peer, sequence);
    if (k >= 0 && !peer->records[k].taken) {
        peer->records[k].taken = 1;
        peer->records[k].taken_time = run->now;
    }
    return 1;
}

static void on_acked(void *context, uint16_t sequence, double rtt)
{
    side_t *s = context;
    run_t *run = s->run;
    int k = find_record(s, sequence);
    if (k < 0) return;
    record_t *r = &s->records[k];
    r->acked = 1;
    r->acked_time = run->now;
    r->rtt = rtt;
    r->acked_by_frame = run->current_frame;
}

static void on_lost(void *context, uint16_t sequence)
{
    side_t *s = context;
    run_t *run = s->run;
    int k = find_record(s, sequence);
    if (k < 0) return;
    s->records[k].lost = 1;
    s->records[k].lost_time = run->now;
}

static void send_one(run_t *run, int side, uint8_t *payload)
{
    const options_t *opt = run->opt;
    side_t *s = &run->side[side];
    int bytes;
    if (side == SIDE_B) {
        bytes = opt->reply_bytes;
    } else if (opt->large_every && (s->sent_packets + 1) % (uint64_t)opt->large_every == 0) {
        bytes = opt->large_bytes;
    } else {
        int span = opt->payload_max - opt->payload_min + 1;
        bytes = opt->payload_min + (span > 1 ? (int)(cs_rng_next(&run->rng) % (uint64_t)span) : 0);
    }
    uint16_t sequence = rl_endpoint_next_sequence(s->endpoint);
    for (int i = 0; i < bytes; i++) payload[i] = (uint8_t)(sequence * 7 + i * 13 + side);
    s->records = simprog_grow(run->sp, s->records, s->count, &s->capacity, sizeof *s->records);
    record_t *r = &s->records[s->count++];
    memset(r, 0, sizeof *r);
    const rl_config_t *c = &opt->endpoint;
    r->time = run->now;
    r->payload = bytes;
    r->fragments = bytes > c->fragment_above ? (bytes + c->fragment_size - 1) / c->fragment_size : 0;
    int slots = r->fragments ? r->fragments : 1;
    r->frames = simprog_calloc(run->sp, (size_t)slots * MAX_FRAMES, sizeof *r->frames);
    r->frame_count = simprog_calloc(run->sp, (size_t)slots, 1);
    r->seen = simprog_calloc(run->sp, (size_t)slots, 1);
    r->header.sequence = sequence;
    /* The ack state this packet carries (a fault freezes it at the send
     * itself, to the state of that moment: the same either way). */
    rl_endpoint_ack_state(s->endpoint, &r->header.ack, &r->header.ack_bits);
    s->sent_packets++;
    rl_endpoint_send(s->endpoint, payload, bytes);
}

/* simprog_run's arrival: a datagram from link `link` reaches the other
 * side's host, whose endpoint is brought up to this time first. */
static void deliver(void *context, int link, const uint8_t *packet, int bytes)
{
    run_t *run = context;
    int to = 1 - link;
    rl_endpoint_update(run->side[to].endpoint, run->now);
    uint32_t frame = simprog_record(run->sp, to, link, run->now, packet, bytes);
    run->current_frame = frame;
    if (bytes >= 3) {
        uint16_t sequence = (uint16_t)(packet[1] | packet[2] << 8);
        side_t *from = &run->side[link];
        int k = find_record(from, sequence);
        if (k >= 0) {
            record_t *r = &from->records[k];
            int id = packet[0] & 1 && bytes >= 4 ? packet[3] : 0;
            if (r->fragments && id >= r->fragments) id = 0;
            r->deliveries++;
            record_frame(r, id, frame);
            note_capture(run, link, r, id, frame);
            if (!frame) run->current_frame = r->frame_count[r->fragments ? id : 0] ? r->frames[(r->fragments ? id : 0) * MAX_FRAMES] : 0;
        }
    }
    rl_endpoint_receive(run->side[to].endpoint, packet, bytes);
    run->current_frame = 0;
}

/* simprog_run's tick: both endpoints' updates and the packets due. */
static int tick(void *context)
{
    run_t *run = context;
    for (int s = 0; s < 2; s++) {
        rl_endpoint_update(run->side[s].endpoint, run->now);
        if (run->now + 1e-9 >= run->side[s].next_send) {
            send_one(run, s, run->payload);
            run->side[s].next_send += run->interval;
        }
    }
    return 0;
}

static void describe(void *context, char *text, size_t size)
{
    const run_t *run = context;
    snprintf(text, size, "%llu packets sent", (unsigned long long)(run->side[0].sent_packets + run->side[1].sent_packets));
}

/* ---- output ---- */

/* One element of the truth file's "packets": record r, side sd's record index. */
static void truth_packet(FILE *out, int sd, int index, const void *record)
{
    const record_t *r = record;
    fprintf(out, "{\"from\": \"%s\", \"index\": %d, \"time\": %.6f, \"sequence\": %u, \"ack\": %u, "
                 "\"ack_bits\": %u, \"payload\": %d, \"fragments\": %d, \"frames\": [",
            simprog_side_name(sd), index, r->time, r->header.sequence, r->header.ack, r->header.ack_bits, r->payload,
            r->fragments);
    int slots = r->fragments ? r->fragments : 1;
    for (int s = 0; s < slots; s++) {
        fprintf(out, "%s[", s ? ", " : "");
        for (int i = 0; i < r->frame_count[s]; i++) fprintf(out, "%s%u", i ? ", " : "", r->frames[s * MAX_FRAMES + i]);
        fprintf(out, "]");
    }
    fprintf(out, "], \"deliveries\": %d, ", r->deliveries);
    truth_time_or_null(out, "received", r->taken, r->taken_time);
    fprintf(out, ", ");
    truth_frame_or_null(out, "acked_in", r->acked_in);
    if (r->acked) {
        fprintf(out, ", \"acked\": {\"time\": %.6f, \"rtt\": %.6f, ", r->acked_time, r->rtt);
        truth_frame_or_null(out, "by_frame", r->acked_by_frame);
        fprintf(out, "}");
    } else {
        fprintf(out, ", \"acked\": null");
    }
    fprintf(out, ", ");
    truth_time_or_null(out, "lost", r->lost, r->lost_time);
    fprintf(out, "}");
}

static int write_truth(const run_t *run, double end_time)
{
    const options_t *opt = run->opt;
    const simprog_t *sp = run->sp;
    FILE *out = simprog_truth_begin(sp);
    if (!out) return -1;
    const rl_config_t *e = &opt->endpoint;
    fprintf(out, "  \"config\": {\"seed\": %llu, \"duration\": %.6f, \"tick\": %.6f, \"rate\": %.0f, "
                 "\"payload_min\": %d, \"payload_max\": %d, \"large_every\": %d, \"large\": %d, \"reply\": %d, "
                 "\"fragment_above\": %d, \"fragment_size\": %d, \"max_fragments\": %d, \"first_sequence\": %u, "
                 "\"stops_acking\": ",
            (unsigned long long)sp->sim.seed, sp->time_limit, sp->tick, opt->rate, opt->payload_min, opt->payload_max,
            opt->large_every, opt->large_bytes, opt->reply_bytes, e->fragment_above, e->fragment_size,
            e->max_fragments, e->first_sequence);
    truth_seconds(out, opt->stop_acking_at);
    fprintf(out, ", \"drop_fragment\": ");
    truth_number(out, opt->faults.drop_fragment);
    fprintf(out, ",\n");
    simprog_truth_config_links(out, sp);
    simprog_truth_capture_result(out, sp, 1, end_time, EXIT_OK);
    fprintf(out, "  \"sides\": [");
    for (int sd = 0; sd < 2; sd++) {
        const rl_endpoint_t *ep = run->side[sd].endpoint;
        fprintf(out, "%s\n    {\"side\": \"%s\", \"host\": \"%s\", \"rtt\": %.6f, \"counters\": ", sd ? "," : "",
                simprog_side_name(sd), sp->host[sd], rl_endpoint_rtt(ep));
        truth_counters(out, rl_endpoint_counters(ep), RL_COUNTER_COUNT, rl_counter_name);
        fprintf(out, "}");
    }
    fprintf(out, "\n  ]");
    simprog_packets_t packets = {{run->side[0].records, run->side[1].records}, {run->side[0].count, run->side[1].count},
                                 sizeof(record_t), offsetof(record_t, time), truth_packet};
    return simprog_truth_finish(out, sp, &packets);
}

static void print_summary(const run_t *run, double end_time)
{
    const simprog_t *sp = run->sp;
    printf("reliable-sim: %.1f s of virtual time, seed %llu\n", end_time, (unsigned long long)sp->sim.seed);
    for (int sd = 0; sd < 2; sd++) {
        const rl_endpoint_t *ep = run->side[sd].endpoint;
        const uint64_t *k = rl_endpoint_counters(ep);
        printf("%s (%s): rtt %.1f ms\n  counters:", simprog_side_name(sd), sp->host[sd],
               rl_endpoint_rtt(ep) * 1000);
        app_print_nonzero_counters(stdout, k, RL_COUNTER_COUNT, rl_counter_name);
    }
    simprog_print_links(sp);
    if (sp->pcap_path) printf("pcap: %u frames at %s in %s\n", sp->frames, simprog_side_name(sp->capture_side), sp->pcap_path);
}

int main(int argc, char **argv)
{
    static options_t opt;
    parse_options(&opt, argc, argv);
    simprog_t *sp = &opt.sp;
    if (opt.faults.drop_fragment >= 0) {
        sp->sim.filter = rl_faults_filter;
        sp->sim.filter_context = &opt.faults;
    }
    static run_t run;
    run.opt = &opt;
    run.sp = sp;
    cs_rng_seed(&run.rng, sp->sim.seed ^ 0x5DEECE66Dull);
    int start = simprog_start(sp);
    if (start != 0) return start;
    for (int s = 0; s < 2; s++) {
        run.side[s].run = &run;
        run.side[s].index = s;
        rl_config_t config = opt.endpoint;
        config.stop_acking_at = s == SIDE_B ? opt.stop_acking_at : -1;
        config.send = on_send;
        config.process = on_process;
        config.acked = on_acked;
        config.lost = on_lost;
        config.context = &run.side[s];
        run.side[s].endpoint = rl_endpoint_create(&config, 0);
        if (!run.side[s].endpoint) {
            fprintf(stderr, "%s: cannot create the endpoints (out of memory or bad sizes)\n", program);
            return EXIT_IO;
        }
    }
    run.payload = simprog_calloc(sp, MAX_PAYLOAD, 1);
    run.interval = 1.0 / opt.rate;
    /* B answers half an interval after A. */
    run.side[SIDE_B].next_send = run.interval / 2;
    double previous;
    simprog_run(sp, sp->time_limit, &(simprog_loop_t){&run.now, &run, tick, deliver, describe, NULL, 0}, &previous);
    int exit_code = EXIT_OK;
    if (simprog_close_pcap(sp) != 0) exit_code = EXIT_IO;
    if (sp->truth_path && write_truth(&run, previous) != 0) exit_code = EXIT_IO;
    if (!sp->quiet) print_summary(&run, previous);
    for (int s = 0; s < 2; s++) {
        rl_endpoint_destroy(run.side[s].endpoint);
        for (int i = 0; i < run.side[s].count; i++) {
            free(run.side[s].records[i].frames);
            free(run.side[s].records[i].frame_count);
            free(run.side[s].records[i].seen);
        }
        free(run.side[s].records);
    }
    free(run.payload);
    simprog_free(sp);
    return exit_code;
}
