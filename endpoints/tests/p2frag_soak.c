/*
 * p2frag-soak: the soak test of the fragment endpoints. Iteration after
 * iteration, a fragmenting sender and a reassembling receiver exchange
 * packets of random sizes (1 byte to 255 fragments, test packets and raw
 * bytes, some from outside the window) through the simulator with random
 * impairments (loss, duplicates, reordering, jitter), with a random
 * interleave, pacing and first sequence, in virtual time. It checks:
 *   - every delivered packet is delivered once and equals what was sent;
 *   - every packet sent from inside the window whose datagrams all arrived
 *     is delivered (the rules lose a packet only with a fragment);
 *   - a packet sent from outside the window is dropped as too old once the
 *     receiver has accepted anything from inside it;
 *   - the receiver's counters add up, and it ends with nothing in progress
 *     that could still complete.
 *
 * Each iteration draws everything from its own seed: a failure is
 * reproduced with `p2frag-soak --seed S --only I` as printed.
 *
 * Exit codes: 0 all iterations passed; 1 a failure; 2 bad arguments.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chunk.h"
#include "p2frag.h"
#include "netsim.h"
#include "util.h"

#define MAX_PACKETS 200

typedef struct soak_packet_t {
    uint16_t sequence;
    int bytes;
    uint8_t *data;
    int num_datagrams;
    int arrived[P2FRAG_MAX_FRAGMENTS]; /* copies of each datagram that reached the receiver */
    int out_of_window;
    int delivered;
} soak_packet_t;

typedef struct soak_t {
    netsim_t *sim;
    p2frag_sender_t *sender;
    p2frag_receiver_t *receiver;
    p2frag_wire_config_t wire;
    soak_packet_t packets[MAX_PACKETS];
    int count;
    int index_of[65536];
    double now;
    int failed;
    int in_window_seen; /* a datagram of an in-window packet was accepted */
    p2frag_test_packet_t test;
    uint8_t buffer[P2FRAG_MAX_PACKET_BYTES];
} soak_t;

static soak_t soak;

static void fail(const char *what, int packet)
{
    if (!soak.failed) fprintf(stderr, "p2frag-soak: %s (packet %d)\n", what, packet);
    soak.failed = 1;
}

static void on_send(void *context, const uint8_t *datagram, int bytes)
{
    (void)context;
    netsim_send(soak.sim, 0, soak.now, datagram, bytes);
}

static void on_deliver(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes, int fragmented)
{
    (void)context, (void)time, (void)fragmented;
    int i = soak.index_of[sequence];
    if (i < 0) return fail("delivered a sequence never sent", -1);
    soak_packet_t *p = &soak.packets[i];
    if (p->delivered) return fail("delivered twice", i);
    p->delivered = 1;
    if (bytes != p->bytes || memcmp(packet, p->data, (size_t)bytes) != 0) fail("delivered bytes differ", i);
}

static void arrive(const uint8_t *datagram, int bytes)
{
    p2frag_packet_t parsed;
    parsed.regular = NULL;
    int i = -1;
    if (p2frag_read_packet(&soak.wire, datagram, bytes, &parsed) == P2FRAG_READ_OK) {
        i = soak.index_of[parsed.sequence];
        if (i >= 0) {
            int id = parsed.type == P2FRAG_PACKET_FRAGMENT ? parsed.fragment.fragment_id : 0;
            if (id < soak.packets[i].num_datagrams) soak.packets[i].arrived[id]++;
        }
    } else {
        fail("the sender sent a datagram the codec rejects", -1);
    }
    p2frag_verdict_t verdict = p2frag_receiver_receive_packet(soak.receiver, soak.now, datagram, bytes);
    if (i < 0) return;
    /* Out-of-window packets go 557 or more behind the newest sequence queued,
     * so at least 497 behind any in-window packet: once one of those has been
     * accepted, they are too old. (Before, a receiver that has seen nothing
     * rightly accepts them.) */
    if (soak.packets[i].out_of_window) {
        if (soak.in_window_seen && verdict != P2FRAG_VERDICT_TOO_OLD) fail("an out-of-window datagram was not too old", i);
    } else if (verdict == P2FRAG_VERDICT_ACCEPTED || verdict == P2FRAG_VERDICT_DELIVERED) {
        soak.in_window_seen = 1;
    }
}

static int check_counters(void)
{
    const uint64_t *c = p2frag_receiver_counters(soak.receiver);
    uint64_t regular = c[P2FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED] - c[P2FRAG_RECEIVER_COUNTER_PACKETS_REASSEMBLED];
    uint64_t sum = regular;
    for (int k = P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID; k <= P2FRAG_RECEIVER_COUNTER_NO_MEMORY; k++) sum += c[k];
    return sum == c[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED];
}

/* Draws from the iteration's generator (a cs_rng_t *rng in scope). */
#define DRAW(n) ((int)(cs_rng_next(rng) % (uint64_t)(n)))
#define UNIFORM() cs_rng_uniform(rng)

/* Draws the next packet (its size, kind and data) and queues it: a B test
 * packet sometimes, raw bytes otherwise, every out_every-th one under a
 * sequence far behind the newest. Returns 0, or -1 when the sender's queue
 * is full (failed). */
static int queue_packet(cs_rng_t *rng, int big, int out_every)
{
    soak_packet_t *p = &soak.packets[soak.count];
    int max = big ? P2FRAG_MAX_PACKET_BYTES : 8000;
    p->bytes = 1 + DRAW(max);
    p->out_of_window = out_every && soak.count % out_every == out_every - 1;
    int sequence;
    if (!p->out_of_window && DRAW(2) && p->bytes >= 13 && p->bytes <= 13 + P2FRAG_MAX_B_ITEMS) {
        soak.test.type = P2FRAG_PACKET_B;
        soak.test.num_items = p->bytes - 13;
        for (int k = 0; k < soak.test.num_items; k++) soak.test.items[k] = (int8_t)(DRAW(201) - 100);
        soak.test.sequence = p2frag_sender_next_sequence(soak.sender);
        p2frag_write_test_packet(&soak.wire, &soak.test, soak.buffer, (int)sizeof soak.buffer);
        sequence = p2frag_sender_queue_test_packet(soak.sender, &soak.test);
        p->num_datagrams = p->bytes <= P2FRAG_MAX_REGULAR_BYTES ? 1 : p2frag_fragment_count(p->bytes);
    } else {
        for (int k = 0; k < p->bytes; k++) soak.buffer[k] = (uint8_t)DRAW(256);
        if (p->out_of_window)
            sequence = p2frag_sender_queue_raw_at(
                soak.sender, (uint16_t)(p2frag_sender_next_sequence(soak.sender) - 1 - 557 - DRAW(1000)),
                soak.buffer, p->bytes);
        else
            sequence = p2frag_sender_queue_raw(soak.sender, soak.buffer, p->bytes);
        p->num_datagrams = p2frag_fragment_count(p->bytes);
    }
    if (sequence < 0) {
        fail("sender queue full", soak.count);
        return -1;
    }
    p->sequence = (uint16_t)sequence;
    p->data = malloc((size_t)p->bytes);
    memcpy(p->data, soak.buffer, (size_t)p->bytes);
    /* an out-of-window packet may reuse a sequence: it owns it from now on */
    soak.index_of[p->sequence] = soak.count;
    soak.count++;
    return 0;
}

/* An out-of-window packet takes over a sequence; packets it shadows are
 * judged only if they were not shadowed (index_of still points at them). */
static void check_deliveries(void)
{
    for (int i = 0; i < soak.count && !soak.failed; i++) {
        soak_packet_t *p = &soak.packets[i];
        int all = 1;
        for (int k = 0; k < p->num_datagrams; k++) all &= p->arrived[k] > 0;
        if (soak.index_of[p->sequence] != i) continue;
        if (!p->out_of_window && all && !p->delivered) fail("every datagram arrived but the packet was not delivered", i);
        if (!all && p->delivered) fail("delivered without all its datagrams", i);
    }
}

/* One scenario drawn from seed; returns 0 when every check holds. */
static int run_iteration(uint64_t seed, int verbose)
{
    cs_rng_t rng_state, *rng = &rng_state;
    cs_rng_seed(rng, seed);
    memset(&soak, 0, sizeof soak);
    for (int s = 0; s < 65536; s++) soak.index_of[s] = -1;
    p2frag_wire_default_config(&soak.wire);

    netsim_config_t sim;
    netsim_default_config(&sim);
    sim.seed = seed;
    sim.link[0].loss = UNIFORM() < 0.3 ? 0 : UNIFORM() * 0.3;
    sim.link[0].duplicate = UNIFORM() * 0.2;
    sim.link[0].reorder = UNIFORM() * 0.2;
    sim.link[0].latency = UNIFORM() * 0.1;
    sim.link[0].jitter = UNIFORM() * 0.02;
    sim.link[0].queue_bytes = 0; /* no bandwidth cap: losses are the drawn ones */
    soak.sim = netsim_create(&sim);

    p2frag_sender_config_t sc;
    p2frag_sender_default_config(&sc);
    sc.interleave = 1 + DRAW(8);
    sc.rate_bytes_per_second = DRAW(2) ? 0 : 50000 + DRAW(500000);
    sc.first_sequence = (uint16_t)(DRAW(2) ? 65536 - DRAW(100) : DRAW(65536));
    sc.queue_capacity = MAX_PACKETS;
    sc.send = on_send;
    soak.sender = p2frag_sender_create(&sc);
    p2frag_receiver_config_t rc;
    p2frag_receiver_default_config(&rc);
    rc.deliver = on_deliver;
    soak.receiver = p2frag_receiver_create(&rc);

    int packets = 1 + DRAW(60);
    int big = DRAW(4) == 0; /* sometimes up to 255 fragments */
    int out_every = DRAW(3) == 0 ? 3 + DRAW(5) : 0;
    double interval = 0.001 + UNIFORM() * 0.03;
    if (verbose)
        fprintf(stderr, "  loss %.3f dup %.3f reorder %.3f latency %.3f interleave %d rate %.0f first %u packets %d out %d\n",
                sim.link[0].loss, sim.link[0].duplicate, sim.link[0].reorder, sim.link[0].latency, sc.interleave,
                sc.rate_bytes_per_second, sc.first_sequence, packets, out_every);

    double next_queue = 0;
    for (long step = 0; step < 200000 && !soak.failed; step++) {
        soak.now = step * 0.001;
        while (soak.count < packets && next_queue <= soak.now) {
            if (queue_packet(rng, big, out_every) != 0) break;
            next_queue += interval;
        }
        p2frag_sender_update(soak.sender, soak.now);
        uint8_t datagram[NETSIM_MAX_DATAGRAM];
        double at;
        int bytes;
        while ((bytes = netsim_receive(soak.sim, 0, soak.now, datagram, &at)) > 0) arrive(datagram, bytes);
        if (soak.count == packets && !p2frag_sender_busy(soak.sender) && netsim_next_delivery(soak.sim) < 0) break;
    }

    check_deliveries();
    if (!soak.failed && !check_counters()) fail("receiver counters do not add up", -1);
    if (!soak.failed && soak.count < packets) fail("not every packet was queued in time", -1);
    for (int i = 0; i < soak.count; i++) free(soak.packets[i].data);
    p2frag_sender_destroy(soak.sender);
    p2frag_receiver_destroy(soak.receiver);
    netsim_destroy(soak.sim);
    return soak.failed;
}

#undef DRAW
#undef UNIFORM

static void usage(FILE *out)
{
    fprintf(out,
"usage: p2frag-soak [options]\n"
"Sends packets of random sizes (up to 255 fragments) over random impairments\n"
"in virtual time and checks the receive rules' promises.\n"
"  --seed N          seed of the whole run (default 1)\n"
"  --iterations N    iterations, each a fresh scenario (default 200)\n"
"  --seconds S       instead, run iterations until S seconds of wall time pass\n"
"  --only I          run only iteration I (to reproduce a failure)\n"
"  -v, --verbose     print each scenario\n"
"  -h, --help        this help\n");
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    unsigned long long seed = 1;
    long long iterations = 200, only = -1;
    double seconds = 0;
    int verbose = 0;
    static struct option options[] = {
        {"seed", required_argument, 0, 's'}, {"iterations", required_argument, 0, 'i'},
        {"seconds", required_argument, 0, 'S'}, {"only", required_argument, 0, 'o'},
        {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "vh", options, NULL)) != -1) {
        switch (c) {
        case 's': seed = strtoull(optarg, &end, 0); if (*end) goto bad; break;
        case 'i': iterations = strtoll(optarg, &end, 10); if (*end || iterations < 1) goto bad; break;
        case 'S': seconds = strtod(optarg, &end); if (*end || seconds <= 0) goto bad; break;
        case 'o': only = strtoll(optarg, &end, 10); if (*end || only < 0) goto bad; break;
        case 'v': verbose = 1; break;
        case 'h': usage(stdout); return 0;
        default: goto bad;
        }
    }
    if (optind < argc) goto bad;
    double start = wall_seconds();
    long long done = 0;
    for (long long i = only >= 0 ? only : 0;; i++) {
        if (only >= 0 && i > only) break;
        if (only < 0 && seconds <= 0 && i >= iterations) break;
        if (only < 0 && seconds > 0 && wall_seconds() - start >= seconds) break;
        uint64_t iteration_seed = seed * 1000003ull + (uint64_t)i;
        if (verbose) fprintf(stderr, "iteration %lld\n", i);
        if (run_iteration(iteration_seed, verbose)) {
            fprintf(stderr, "p2frag-soak: iteration %lld failed; reproduce with: p2frag-soak --seed %llu --only %lld -v\n", i,
                    seed, i);
            return 1;
        }
        done++;
    }
    printf("p2frag-soak: %lld iterations passed (seed %llu, %.1f s)\n", done, seed, wall_seconds() - start);
    return 0;
bad:
    fprintf(stderr, "p2frag-soak: bad arguments (try --help)\n");
    return 2;
}
