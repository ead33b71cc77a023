/*
 * chunk-soak: the soak test of the chunk endpoints (docs/robustness.md,
 * "Soak").
 * Iteration after iteration, a sender and a receiver (or two of each, both
 * directions at once) exchange chunks of random sizes through the simulator
 * with random impairments (up to 90% loss by default, duplicates, reordering,
 * jitter, a bandwidth cap with a finite queue) in virtual time. Every chunk must
 * arrive intact and in order, each within a generous virtual-time bound (a
 * hang shows up as a missed bound, never as a stuck test).
 *
 * Each iteration draws everything from its own seed, so a failure is
 * reproduced with `chunk-soak --seed S --only I` as printed.
 *
 * Exit codes: 0 every chunk delivered intact and in order; 1 a failure
 * (corrupt, out of order, or not delivered within the bound); 2 bad arguments.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chunk.h"
#include "util.h"
#include "netsim.h"

typedef struct soak_options_t {
    uint64_t seed;
    long long iterations;
    long long only; /* run just this iteration, or -1 */
    double seconds; /* > 0: run iterations until this much wall time has passed */
    double max_loss, max_latency, max_jitter;
    int verbose;
} soak_options_t;

/* One flow of an iteration: chunks from a sender on one side to a receiver on the other. */
typedef struct soak_flow_t {
    chunk_sender_t *sender;
    chunk_receiver_t *receiver;
    uint8_t **chunks;
    int *sizes;
    int count, queued, popped;
    double chunk_started; /* virtual time the chunk now expected was queued or the previous popped */
    double next_pop;      /* the application reads completed chunks at this time or later */
} soak_flow_t;

typedef struct soak_run_t soak_run_t;

/* The context of a side's send callback: what it sends goes on link `side`. */
typedef struct soak_side_t {
    soak_run_t *run;
    int side;
} soak_side_t;

/* One iteration: its scenario, drawn from the iteration's seed, and its state. */
struct soak_run_t {
    /* scenario */
    chunk_wire_config_t wire;
    netsim_config_t sim_config;
    double rtt, rate, tick, pop_interval;
    uint16_t first_id;
    int use_rtt, burst, ready_queue, no_resend_delay;
    int capacity; /* bytes of the largest chunk */
    /* state */
    netsim_t *sim;
    soak_side_t sides[2];
    soak_flow_t flow[2];
    int flows;
    double now;
    uint8_t *buffer; /* capacity bytes: a popped chunk */
    long long flow_bytes;
    int failed;
    char where[128]; /* "iteration I (reproduce: ...)" for messages: up to 108 bytes */
};

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *out)
{
    fprintf(out,
"usage: chunk-soak [options]\n"
"Sends chunks of random sizes over random impairments in virtual time and\n"
"checks that every chunk arrives intact, in order, within a time bound.\n"
"  --seed N          seed of the whole run (default 1)\n"
"  --iterations N    iterations, each a fresh scenario (default 200)\n"
"  --seconds S       instead, run iterations until S seconds of wall time pass\n"
"  --only I          run only iteration I (to reproduce a failure)\n"
"  --max-loss P      highest loss drawn per direction (default 0.9)\n"
"  --max-latency S   highest one-way latency drawn (default 0.2)\n"
"  --max-jitter S    highest jitter drawn (default 0.1)\n"
"  --extreme         99%% loss, 10 s latency, 3 s jitter at most (the long mode)\n"
"  -v, --verbose     one line per iteration\n"
"      --debug       the endpoints' debug log on stderr (with --only)\n"
"  -h, --help        this help\n"
"Exit status: 0 all delivered, 1 a failure, 2 bad arguments.\n");
}

static int parse_double(const char *text, double min, double max, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= min && v <= max)) return -1;
    *out = v;
    return 0;
}

static int parse_count(const char *text, long long min, long long max, long long *out)
{
    char *end;
    long long v = strtoll(text, &end, 0);
    if (end == text || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static void parse_options(soak_options_t *opt, int argc, char **argv)
{
    *opt = (soak_options_t){.seed = 1, .iterations = 200, .only = -1, .max_loss = 0.9, .max_latency = 0.2, .max_jitter = 0.1};
    static const struct option options[] = {
        {"seed", required_argument, 0, 's'},       {"iterations", required_argument, 0, 'i'},
        {"seconds", required_argument, 0, 'S'},    {"only", required_argument, 0, 'o'},
        {"max-loss", required_argument, 0, 'l'},   {"max-latency", required_argument, 0, 'L'},
        {"max-jitter", required_argument, 0, 'j'}, {"extreme", no_argument, 0, 'x'},
        {"verbose", no_argument, 0, 'v'},          {"help", no_argument, 0, 'h'},
        {"debug", no_argument, 0, 'd'},
        {0, 0, 0, 0},
    };
    int c;
    long long n;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":vh", options, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 's': bad = parse_count(optarg, 0, INT64_MAX, &n); opt->seed = (uint64_t)n; break;
        case 'i': bad = parse_count(optarg, 1, INT64_MAX, &opt->iterations); break;
        case 'o': bad = parse_count(optarg, 0, INT64_MAX, &opt->only); break;
        case 'S': bad = parse_double(optarg, 0.001, 1e7, &opt->seconds); break;
        case 'l': bad = parse_double(optarg, 0, 0.99, &opt->max_loss); break;
        case 'L': bad = parse_double(optarg, 0, 60, &opt->max_latency); break;
        case 'j': bad = parse_double(optarg, 0, 60, &opt->max_jitter); break;
        case 'x': opt->max_loss = 0.99, opt->max_latency = 10, opt->max_jitter = 3; break;
        case 'v': opt->verbose = 1; break;
        case 'd': cs_log_set_level(CS_LOG_LEVEL_DEBUG); break;
        case 'h': usage(stdout); exit(0);
        case ':': fprintf(stderr, "chunk-soak: option %s needs a value (try --help)\n", argv[optind - 1]); exit(2);
        default: fprintf(stderr, "chunk-soak: unknown option %s (try --help)\n", argv[optind - 1]); exit(2);
        }
        if (bad) {
            fprintf(stderr, "chunk-soak: bad value '%s' for %s (try --help)\n", optarg, argv[optind - 1]);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "chunk-soak: unexpected argument '%s' (try --help)\n", argv[optind]);
        exit(2);
    }
}

static double uniform(cs_rng_t *rng, double lo, double hi) { return lo + (hi - lo) * cs_rng_uniform(rng); }

static void on_send(void *context, const uint8_t *packet, int bytes)
{
    soak_side_t *side = context;
    netsim_send(side->run->sim, side->side, side->run->now, packet, bytes);
}

/* Hands a datagram that reached `side` to its sender (acks) or receiver (the rest). */
static void dispatch(soak_run_t *run, int side, const uint8_t *packet, int bytes)
{
    chunk_sender_t *sender = side < run->flows ? run->flow[side].sender : NULL;
    chunk_receiver_t *receiver = 1 - side < run->flows ? run->flow[1 - side].receiver : NULL;
    chunk_packet_t parsed;
    int is_ack = chunk_read_packet(&run->wire, packet, bytes, &parsed) == CHUNK_READ_OK && parsed.type == CHUNK_PACKET_ACK;
    if ((is_ack && sender) || !receiver)
        chunk_sender_receive_packet(sender, run->now, packet, bytes);
    else
        chunk_receiver_receive_packet(receiver, run->now, packet, bytes);
}

typedef struct soak_totals_t {
    long long chunks, bytes, slices_sent, slices_resent;
    double virtual_time;
} soak_totals_t;

/* Pops every ready chunk of a flow and checks it. Returns 0, or -1 on a bad chunk. */
static int pop_and_check(soak_run_t *run, soak_flow_t *flow, uint16_t first_id, uint8_t *buffer, int capacity,
                         const char *where)
{
    uint16_t id;
    int size;
    while ((size = chunk_receiver_pop_chunk(flow->receiver, buffer, capacity, &id)) > 0) {
        int k = flow->popped;
        if (k >= flow->count) {
            fprintf(stderr, "chunk-soak: %s: a chunk (id %u) popped after all %d were delivered\n", where, id, flow->count);
            return -1;
        }
        uint16_t want = (uint16_t)(first_id + k);
        if (id != want || size != flow->sizes[k] || memcmp(buffer, flow->chunks[k], (size_t)size) != 0) {
            fprintf(stderr, "chunk-soak: %s: chunk %d: got id %u, %d bytes; want id %u, %d bytes%s\n", where, k, id, size,
                    want, flow->sizes[k], id == want && size == flow->sizes[k] ? " (data differs)" : "");
            return -1;
        }
        flow->popped++;
        flow->chunk_started = run->now;
    }
    return 0;
}

/* Draws the iteration's wire format, links and endpoint settings. */
static void draw_scenario(soak_run_t *run, const soak_options_t *opt, cs_rng_t *rng)
{
    chunk_wire_default_config(&run->wire);
    /* Mostly the two variants in the wild; sometimes small slices, so that
     * chunks of many slices stay cheap. */
    double variant = cs_rng_uniform(rng);
    if (variant < 0.2) run->wire.max_slices = 32;
    else if (variant < 0.35) run->wire.slice_size = 1 + (int)(cs_rng_next(rng) % 300), run->wire.max_slices = 64;
    run->flows = cs_rng_uniform(rng) < 0.25 ? 2 : 1;

    netsim_config_t *sim = &run->sim_config;
    netsim_default_config(sim);
    sim->seed = cs_rng_next(rng);
    for (int d = 0; d < 2; d++) {
        netsim_link_config_t *l = &sim->link[d];
        l->loss = uniform(rng, 0, opt->max_loss);
        l->latency = uniform(rng, 0, opt->max_latency);
        l->jitter = uniform(rng, 0, opt->max_jitter);
        l->duplicate = uniform(rng, 0, 0.2);
        l->reorder = uniform(rng, 0, 0.2);
        l->reorder_delay = uniform(rng, 0, 0.1);
        if (cs_rng_uniform(rng) < 0.3) {
            l->bandwidth = uniform(rng, 100e3, 2e6);
            l->queue_bytes = 4096 + (int)(cs_rng_next(rng) % (256 * 1024));
        }
        run->rtt += l->latency;
    }
    run->rate = uniform(rng, 100e3, 4e6);
    run->tick = uniform(rng, 0.001, 0.02);
    run->first_id = (uint16_t)cs_rng_next(rng); /* wraps within some iterations */
    run->use_rtt = cs_rng_uniform(rng) < 0.5;
    run->burst = cs_rng_uniform(rng) < 0.2 ? (int)(cs_rng_next(rng) % (64 * 1024)) : 0;
    run->ready_queue = 1 + (int)(cs_rng_next(rng) % 3);
    /* Sometimes the application reads completed chunks only now and then, so
     * that the receiver's ready queue fills and it discards the next chunk's
     * slices meanwhile; sometimes the sender behaves like the article's
     * program and resends without delay. Neither may stop delivery. */
    run->pop_interval = cs_rng_uniform(rng) < 0.3 ? uniform(rng, 0, 0.5) : 0;
    run->no_resend_delay = cs_rng_uniform(rng) < 0.1;
    run->capacity = run->wire.slice_size * run->wire.max_slices;
}

/* Creates flow f's sender (on side f) and receiver (on the other side), and
 * draws its chunks. */
static void create_flow(soak_run_t *run, int f, cs_rng_t *rng)
{
    soak_flow_t *flow = &run->flow[f];
    chunk_sender_config_t sc;
    chunk_sender_default_config(&sc);
    sc.wire = run->wire;
    sc.rate_bytes_per_second = run->rate;
    if (run->use_rtt) sc.rtt = run->rtt;
    sc.fault_no_resend_delay = run->no_resend_delay;
    sc.initial_burst_bytes = run->burst;
    sc.first_chunk_id = run->first_id;
    sc.send = on_send;
    sc.context = &run->sides[f];
    chunk_receiver_config_t rc;
    chunk_receiver_default_config(&rc);
    rc.wire = run->wire;
    rc.first_chunk_id = run->first_id;
    rc.ready_queue_length = run->ready_queue;
    rc.send = on_send;
    rc.context = &run->sides[1 - f];
    flow->sender = chunk_sender_create(&sc);
    flow->receiver = chunk_receiver_create(&rc);
    /* Sizes spread over every scale, 1 byte up to the largest chunk,
     * uniform in log size. */
    flow->count = 1 + (int)(cs_rng_next(rng) % 12);
    flow->chunks = calloc((size_t)flow->count, sizeof *flow->chunks);
    flow->sizes = calloc((size_t)flow->count, sizeof *flow->sizes);
    for (int k = 0; k < flow->count; k++) {
        int size = (int)pow((double)run->capacity, cs_rng_uniform(rng));
        if (size < 1) size = 1;
        if (size > run->capacity) size = run->capacity;
        flow->sizes[k] = size;
        flow->chunks[k] = malloc((size_t)size);
        for (int i = 0; i < size; i++) flow->chunks[k][i] = (uint8_t)cs_rng_next(rng);
        run->flow_bytes += size;
    }
}

/* Virtual-time bound for one chunk: 30 times a pessimistic estimate of what
 * it takes. The last round trip needs a slice through one link and the ack
 * back through the other, so each try succeeds with probability
 * (1 - loss0)(1 - loss1) and costs a resend delay plus a round trip; the
 * chance of an honest transfer missing the bound is about e^-30. */
static double per_chunk_bound(const soak_run_t *run, const soak_options_t *opt)
{
    double attempt = run->capacity * 1.1 / run->rate + 1.25 * run->rtt + 0.1 + 0.1 /* ack interval */ + run->rtt +
                     2 * opt->max_jitter + 0.1;
    const netsim_config_t *sim = &run->sim_config;
    return 60.0 + 30.0 * attempt / ((1.0 - sim->link[0].loss) * (1.0 - sim->link[1].loss));
}

/* One tick of every flow: queue, update, pop and check, the bound. Returns
 * 1 when every flow is done; sets run->failed on a failure (reported). */
static int step_flows(soak_run_t *run, double bound)
{
    int done = 1;
    for (int f = 0; f < run->flows; f++) {
        soak_flow_t *flow = &run->flow[f];
        while (flow->queued < flow->count &&
               chunk_sender_queue_chunk(flow->sender, flow->chunks[flow->queued], flow->sizes[flow->queued]) == 0)
            flow->queued++;
        chunk_sender_update(flow->sender, run->now);
        chunk_receiver_update(flow->receiver, run->now);
        if (run->now >= flow->next_pop) {
            if (pop_and_check(run, flow, run->first_id, run->buffer, run->capacity, run->where) != 0) run->failed = 1;
            flow->next_pop = run->now + run->pop_interval;
        }
        if (flow->popped < flow->count || chunk_sender_busy(flow->sender)) done = 0;
        if (flow->popped < flow->count && run->now - flow->chunk_started > bound) {
            fprintf(stderr, "chunk-soak: %s: flow %d: chunk %d of %d not delivered within %.0f s of virtual time "
                    "(loss %.2f/%.2f, rate %.0f B/s, slice size %d, max slices %d, size %d)\n",
                    run->where, f, flow->popped, flow->count, bound, run->sim_config.link[0].loss,
                    run->sim_config.link[1].loss, run->rate, run->wire.slice_size, run->wire.max_slices,
                    flow->sizes[flow->popped]);
            run->failed = 1;
        }
    }
    return done;
}

/* Delivers every datagram the simulator has due up to virtual time `until`. */
static void deliver_until(soak_run_t *run, double until)
{
    uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    double due;
    while ((due = netsim_next_delivery(run->sim)) >= 0 && due <= until) {
        for (int link = 0; link < 2; link++) {
            double at;
            int bytes = netsim_receive(run->sim, link, due, packet, &at);
            if (bytes <= 0) continue;
            run->now = at;
            dispatch(run, 1 - link, packet, bytes);
            break;
        }
    }
}

/* The iteration's line: to stdout with --verbose, to stderr on a failure. */
static void print_iteration(const soak_run_t *run, long long iteration)
{
    const netsim_link_config_t *l = run->sim_config.link;
    fprintf(run->failed ? stderr : stdout,
            "iteration %lld: %s, %d flow(s), %d+%d chunks, %lld bytes, slice %d x %d, loss %.2f/%.2f, "
            "latency %.3f/%.3f, jitter %.3f/%.3f, dup %.2f/%.2f, reorder %.2f/%.2f, bw %.0f/%.0f, rate %.0f, "
            "tick %.3f, pop every %.3f s%s, virtual %.2f s\n",
            iteration, run->failed ? "FAILED" : "ok", run->flows, run->flow[0].count,
            run->flows > 1 ? run->flow[1].count : 0, run->flow_bytes, run->wire.slice_size, run->wire.max_slices,
            l[0].loss, l[1].loss, l[0].latency, l[1].latency, l[0].jitter, l[1].jitter, l[0].duplicate,
            l[1].duplicate, l[0].reorder, l[1].reorder, l[0].bandwidth, l[1].bandwidth, run->rate, run->tick,
            run->pop_interval, run->no_resend_delay ? ", no resend delay" : "", run->now);
}

/* After a failure: the counters say where it stuck. */
static void print_counters(const soak_run_t *run)
{
    for (int f = 0; f < run->flows; f++) {
        const soak_flow_t *flow = &run->flow[f];
        const uint64_t *sc = chunk_sender_counters(flow->sender);
        const uint64_t *rc = chunk_receiver_counters(flow->receiver);
        fprintf(stderr, "  flow %d: %d/%d popped, sender chunk id %u, busy %d; sender:", f, flow->popped, flow->count,
                chunk_sender_chunk_id(flow->sender), chunk_sender_busy(flow->sender));
        for (int i = 0; i < CHUNK_SENDER_COUNTER_COUNT; i++)
            fprintf(stderr, " %s %llu,", chunk_sender_counter_name(i), (unsigned long long)sc[i]);
        fprintf(stderr, "\n    receiver:");
        for (int i = 0; i < CHUNK_RECEIVER_COUNTER_COUNT; i++)
            fprintf(stderr, " %s %llu,", chunk_receiver_counter_name(i), (unsigned long long)rc[i]);
        fprintf(stderr, "\n");
    }
    for (int d = 0; d < 2; d++) {
        const uint64_t *c = netsim_counters(run->sim, d);
        fprintf(stderr, "  link %d:", d);
        for (int i = 0; i < NETSIM_COUNTER_COUNT; i++)
            fprintf(stderr, " %s %llu,", netsim_counter_name(i), (unsigned long long)c[i]);
        fprintf(stderr, "\n");
    }
}

/* Adds the iteration to totals and frees it. */
static void finish_iteration(soak_run_t *run, soak_totals_t *totals)
{
    for (int f = 0; f < run->flows; f++) {
        soak_flow_t *flow = &run->flow[f];
        const uint64_t *sc = chunk_sender_counters(flow->sender);
        totals->chunks += flow->popped;
        totals->slices_sent += (long long)sc[CHUNK_SENDER_COUNTER_SLICES_SENT];
        totals->slices_resent += (long long)sc[CHUNK_SENDER_COUNTER_SLICES_RESENT];
        for (int k = 0; k < flow->popped; k++) totals->bytes += flow->sizes[k];
        for (int k = 0; k < flow->count; k++) free(flow->chunks[k]);
        free(flow->chunks);
        free(flow->sizes);
        chunk_sender_destroy(flow->sender);
        chunk_receiver_destroy(flow->receiver);
    }
    totals->virtual_time += run->now;
    netsim_destroy(run->sim);
    free(run->buffer);
}

/* Runs one iteration. Returns 0, or -1 on a failure (already reported). */
static int run_iteration(const soak_options_t *opt, long long iteration, soak_totals_t *totals)
{
    cs_rng_t rng;
    cs_rng_seed(&rng, opt->seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)iteration * 0xc2b2ae3d27d4eb4full);
    static soak_run_t run;
    memset(&run, 0, sizeof run);
    snprintf(run.where, sizeof run.where, "iteration %lld (reproduce: chunk-soak --seed %llu --only %lld)",
             iteration, (unsigned long long)opt->seed, iteration);
    draw_scenario(&run, opt, &rng);
    run.sim = netsim_create(&run.sim_config);
    run.sides[0] = (soak_side_t){&run, 0};
    run.sides[1] = (soak_side_t){&run, 1};
    run.buffer = malloc((size_t)run.capacity);
    for (int f = 0; f < run.flows; f++) create_flow(&run, f, &rng);

    double bound = per_chunk_bound(&run, opt);
    for (long long step = 0; !run.failed; step++) {
        run.now = (double)step * run.tick;
        if (step_flows(&run, bound) || run.failed) break;
        deliver_until(&run, (double)(step + 1) * run.tick);
    }
    if (opt->verbose || run.failed) print_iteration(&run, iteration);
    if (run.failed) print_counters(&run);
    int failed = run.failed;
    finish_iteration(&run, totals);
    return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
    soak_options_t opt;
    parse_options(&opt, argc, argv);
    soak_totals_t totals;
    memset(&totals, 0, sizeof totals);
    double start = wall_seconds(), last_progress = start;
    long long iterations = 0, failures = 0;
    long long first = opt.only >= 0 ? opt.only : 0;
    for (long long i = first;; i++) {
        if (opt.only >= 0 && i > opt.only) break;
        if (opt.only < 0 && opt.seconds <= 0 && i >= opt.iterations) break;
        if (opt.only < 0 && opt.seconds > 0 && wall_seconds() - start >= opt.seconds) break;
        if (run_iteration(&opt, i, &totals) != 0) failures++;
        iterations++;
        double now = wall_seconds();
        if (now - start > 1.0 && now - last_progress > 2.0) {
            last_progress = now;
            fprintf(stderr, "chunk-soak: %lld iterations, %lld chunks, %lld failures, %.0f s\n", iterations,
                    totals.chunks, failures, now - start);
        }
    }
    printf("chunk-soak: seed %llu: %lld iterations, %lld chunks (%lld bytes) delivered intact and in order, "
           "%lld slices sent (%lld resent), %.0f s of virtual time in %.1f s; %lld failed\n",
           (unsigned long long)opt.seed, iterations, totals.chunks, totals.bytes, totals.slices_sent,
           totals.slices_resent, totals.virtual_time, wall_seconds() - start, failures);
    return failures ? 1 : 0;
}
