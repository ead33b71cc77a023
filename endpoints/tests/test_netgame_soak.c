/*
 * test_netgame_soak.c: the netgame soak. Iteration after iteration, a client
 * and a server run over the simulator with random impairments (loss up to
 * 50%, latency, jitter, duplicates, reordering), a random sequence space and
 * first sequence, random payload sizes and tick, for 5 to 30 s of virtual time.
 * Invariants checked on every run:
 *   - every ack our endpoint reports is true: the peer had taken that packet
 *     before it sent the packet that acked it (sequence spaces of 255 and up;
 *     with 31 an ack can honestly be ambiguous);
 *   - no packet reaches the peer's application twice (the same spaces);
 *   - acked + lost + pending = sent, RTT samples within [0, 1 s + a tick], the
 *     smoothed RTT within the samples' range, at most 30 packets a second;
 *   - without loss and with little delay, nothing is lost, both reach Good;
 *     with at most 30% loss the client is connected at the end.
 * CHUNK_TEST_SEED picks the seed (scripts/loop-tests.sh), NETGAME_SOAK_ITERATIONS
 * the count (default 150).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netgame.h"
#include "netsim.h"
#include "test.h"
#include "util.h"

typedef struct soak_record_t {
    uint32_t sequence;
    double time, taken_time;
    int taken, acked, lost;
} soak_record_t;

typedef struct soak_side_t {
    netgame_connection_t *c;
    soak_record_t *records;
    int count, capacity;
    double max_sample;
    int false_acks, double_takes, bad_samples;
} soak_side_t;

typedef struct soak_t {
    netsim_t *sim;
    soak_side_t side[2];
    double now;
    uint32_t max_sequence;
    int current_from, current_index; /* the datagram being processed */
} soak_t;

typedef struct soak_cb_t {
    soak_t *soak;
    int side;
} soak_cb_t;

static int soak_find(const soak_side_t *s, uint32_t sequence, int pending_only)
{
    for (int i = s->count - 1, walked = 0; i >= 0 && walked < 4096; i--, walked++) {
        const soak_record_t *r = &s->records[i];
        if (r->sequence == sequence && (!pending_only || (!r->acked && !r->lost))) return i;
    }
    return -1;
}

static void soak_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    (void)address;
    (void)address_bytes;
    soak_cb_t *cb = context;
    soak_side_t *s = &cb->soak->side[cb->side];
    if (s->count == s->capacity) {
        s->capacity = s->capacity ? s->capacity * 2 : 256;
        s->records = realloc(s->records, (size_t)s->capacity * sizeof *s->records);
    }
    netgame_header_t h;
    netgame_read_header(packet, bytes, &h);
    s->records[s->count++] = (soak_record_t){h.sequence, cb->soak->now, 0, 0, 0, 0};
    netsim_send(cb->soak->sim, cb->side, cb->soak->now, packet, bytes);
}

static void soak_acked(void *context, uint32_t sequence, double rtt)
{
    soak_cb_t *cb = context;
    soak_t *soak = cb->soak;
    soak_side_t *s = &soak->side[cb->side];
    int i = soak_find(s, sequence, 1);
    if (rtt < 0 || rtt > 1.0 + 0.2) s->bad_samples++;
    if (rtt > s->max_sample) s->max_sample = rtt;
    if (i < 0) {
        s->false_acks++;
        return;
    }
    soak_record_t *r = &s->records[i];
    r->acked = 1;
    if (soak->max_sequence < 255 || soak->current_index < 0) return;
    const soak_record_t *acking = &soak->side[soak->current_from].records[soak->current_index];
    if (!r->taken || r->taken_time > acking->time) s->false_acks++;
}

static void soak_lost(void *context, uint32_t sequence)
{
    soak_cb_t *cb = context;
    soak_side_t *s = &cb->soak->side[cb->side];
    int i = soak_find(s, sequence, 1);
    if (i >= 0) s->records[i].lost = 1;
}

static void soak_receive(void *context, uint32_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    (void)payload;
    (void)bytes;
    soak_cb_t *cb = context;
    soak_t *soak = cb->soak;
    if (soak->current_index < 0) return;
    soak_record_t *r = &soak->side[soak->current_from].records[soak->current_index];
    if (r->taken && soak->max_sequence >= 255) soak->side[cb->side].double_takes++;
    r->taken = 1;
    r->taken_time = soak->now;
}

/* Hands every datagram due before virtual time `until` to the other side,
 * noting which recorded packet it is for the callbacks' checks. */
static void deliver_before(soak_t *soak, double until)
{
    static uint8_t buffer[CS_IP_UDP_OVERHEAD + NETGAME_MAX_PACKET_BYTES + 65536];
    double due;
    while ((due = netsim_next_delivery(soak->sim)) >= 0 && due < until) {
        for (int link = 0; link < 2; link++) {
            double at;
            int bytes = netsim_receive(soak->sim, link, due, buffer, &at);
            if (bytes <= 0) continue;
            soak->now = at;
            netgame_header_t h;
            netgame_read_header(buffer, bytes, &h);
            soak->current_from = link;
            soak->current_index = soak_find(&soak->side[link], h.sequence, 0);
            uint8_t from = (uint8_t)link;
            netgame_connection_receive_packet(soak->side[1 - link].c, at, &from, 1, buffer, bytes);
            soak->current_index = -1;
            break;
        }
    }
}

/* The checks of one side after the run (good_at: when it reached Good mode,
 * or -1), and frees its records. */
static void check_side(soak_side_t *side, double duration, int quiet, double good_at)
{
    const uint64_t *k = netgame_connection_counters(side->c);
    uint64_t sent = k[NETGAME_COUNTER_PACKETS_SENT], acked = k[NETGAME_COUNTER_PACKETS_ACKED];
    uint64_t lost = k[NETGAME_COUNTER_PACKETS_LOST];
    int pending = 0;
    for (int i = 0; i < side->count; i++) pending += !side->records[i].acked && !side->records[i].lost;
    CHECK_EQ(side->false_acks, 0);
    CHECK_EQ(side->double_takes, 0);
    CHECK_EQ(side->bad_samples, 0);
    CHECK_EQ(sent, (uint64_t)side->count);
    CHECK_EQ(acked + lost + (uint64_t)pending, sent);
    double rtt = netgame_connection_rtt(side->c);
    CHECK(rtt >= 0 && rtt <= side->max_sample + 1e-9);
    CHECK(sent <= (uint64_t)(duration * 30 + 4));
    if (quiet) {
        CHECK_EQ(lost, 0);
        CHECK(good_at > 4.0 && good_at < 5.0);
    }
    free(side->records);
}

/* One iteration; returns the number of failed checks. */
static int soak_iteration(uint64_t seed, int verbose)
{
    int failures_before = chunk_test_failures;
    cs_rng_t rng;
    cs_rng_seed(&rng, seed);
    netsim_config_t sc;
    netsim_default_config(&sc);
    sc.seed = seed;
    double loss = cs_rng_uniform(&rng) < 0.3 ? 0 : 0.5 * cs_rng_uniform(&rng);
    double latency = 0.3 * cs_rng_uniform(&rng);
    int quiet = loss == 0 && cs_rng_uniform(&rng) < 0.5;
    for (int d = 0; d < 2; d++) {
        netsim_link_config_t *l = &sc.link[d];
        l->loss = loss * (d == 0 ? 1 : cs_rng_uniform(&rng) * 2 > 1 ? 1 : 0.5);
        l->latency = quiet ? 0.02 : latency;
        l->jitter = quiet ? 0 : 0.05 * cs_rng_uniform(&rng);
        l->duplicate = quiet ? 0 : 0.2 * cs_rng_uniform(&rng);
        l->reorder = quiet ? 0 : 0.2 * cs_rng_uniform(&rng);
    }
    static const uint32_t maxes[] = {31, 255, 0xFFFF, 0xFFFFFFFFu, 0xFFFFFFFFu};
    uint32_t max = maxes[cs_rng_next(&rng) % 5];
    uint32_t first = cs_rng_uniform(&rng) < 0.5 ? 0 : (uint32_t)(cs_rng_next(&rng) % ((uint64_t)max + 1));
    if (max == 0xFFFFFFFFu && cs_rng_uniform(&rng) < 0.5) first = 0xFFFFFFFFu - (uint32_t)(cs_rng_next(&rng) % 200);
    double duration = 5 + 25 * cs_rng_uniform(&rng);
    double tick = 1.0 / (10 + (double)(cs_rng_next(&rng) % 51));
    int payload = (int)(cs_rng_next(&rng) % 65);

    static soak_t soak;
    memset(&soak, 0, sizeof soak);
    soak.sim = netsim_create(&sc);
    soak.max_sequence = max;
    soak.current_index = -1;
    soak_cb_t cbs[2];
    for (int s = 0; s < 2; s++) {
        cbs[s] = (soak_cb_t){&soak, s};
        netgame_config_t config;
        netgame_default_config(&config);
        config.role = s ? NETGAME_SERVER : NETGAME_CLIENT;
        config.max_sequence = max;
        config.first_sequence = first;
        config.payload_bytes = payload;
        config.send = soak_send;
        config.acked = soak_acked;
        config.lost = soak_lost;
        config.receive = soak_receive;
        config.context = &cbs[s];
        soak.side[s].c = netgame_connection_create(&config);
    }
    uint8_t server = 1;
    netgame_connection_start(soak.side[1].c, 0, NULL, 0);
    netgame_connection_start(soak.side[0].c, 0, &server, 1);
    double good_at[2] = {-1, -1};
    for (long step = 0; step * tick <= duration; step++) {
        soak.now = step * tick;
        for (int s = 0; s < 2; s++) {
            netgame_connection_update(soak.side[s].c, soak.now);
            if (good_at[s] < 0 && netgame_connection_mode(soak.side[s].c) == NETGAME_MODE_GOOD) good_at[s] = soak.now;
        }
        deliver_before(&soak, (step + 1) * tick);
    }
    for (int s = 0; s < 2; s++) check_side(&soak.side[s], duration, quiet, good_at[s]);
    if (loss <= 0.3 && latency + 0.1 < 1.0) CHECK(netgame_connection_connected(soak.side[0].c));
    int failed = chunk_test_failures - failures_before;
    if (failed || verbose)
        fprintf(stderr, "netgame soak seed %llu: loss %.2f latency %.3f max %u first %u duration %.1f tick %.4f payload %d: %s\n",
                (unsigned long long)seed, loss, latency, max, first, duration, tick, payload, failed ? "FAILED" : "ok");
    for (int s = 0; s < 2; s++) netgame_connection_destroy(soak.side[s].c);
    netsim_destroy(soak.sim);
    return failed;
}

static void test_soak(void)
{
    int iterations = getenv("NETGAME_SOAK_ITERATIONS") ? atoi(getenv("NETGAME_SOAK_ITERATIONS")) : 150;
    int failed = 0;
    for (int i = 0; i < iterations && failed < 5; i++)
        failed += soak_iteration(chunk_test_seed * 1000003ull + (uint64_t)i, getenv("NETGAME_SOAK_VERBOSE") != NULL) != 0;
    CHECK_EQ(failed, 0);
}

const chunk_test_t netgame_soak_tests[] = {
    {"soak", test_soak},
    {NULL, NULL},
};
