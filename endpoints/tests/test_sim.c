/* Tests of the network simulator (src/netsim.c): each impairment alone, with
 * exact times where the model gives exact times, and determinism. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "test.h"
#include "netsim.h"
#include "simprog.h"
#include "util.h"

/* Payload whose first four bytes carry an index, so tests see which datagram came out. */
static int make_payload(uint8_t *buffer, uint32_t index, int bytes)
{
    memset(buffer, 0xab, (size_t)bytes);
    buffer[0] = (uint8_t)index;
    buffer[1] = (uint8_t)(index >> 8);
    buffer[2] = (uint8_t)(index >> 16);
    buffer[3] = (uint8_t)(index >> 24);
    return bytes;
}

static uint32_t payload_index(const uint8_t *buffer)
{
    return (uint32_t)buffer[0] | (uint32_t)buffer[1] << 8 | (uint32_t)buffer[2] << 16 | (uint32_t)buffer[3] << 24;
}

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

/* Sends a datagram of `bytes` bytes (at most 2048) carrying index in dir at time. */
static void send_one(netsim_t *sim, int dir, double time, uint32_t index, int bytes)
{
    uint8_t packet[2048];
    make_payload(packet, index, bytes);
    netsim_send(sim, dir, time, packet, bytes);
}

/* Sends n datagrams of `bytes` bytes in dir at times 0, step, 2*step, ... */
static void send_many(netsim_t *sim, int dir, int n, int bytes, double step)
{
    for (int i = 0; i < n; i++) send_one(sim, dir, i * step, (uint32_t)i, bytes);
}

/* Takes the next datagram of dir due by `until` and checks that it has
 * `bytes` bytes. Returns the index it carries; *t is its delivery time. */
static uint32_t receive_one(netsim_t *sim, int dir, double until, int bytes, double *t)
{
    uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    CHECK_EQ(netsim_receive(sim, dir, until, buffer, t), bytes);
    return payload_index(buffer);
}

/* Drains dir completely; returns how many datagrams came out. */
static int drain(netsim_t *sim, int dir)
{
    uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    double t;
    int n = 0;
    while (netsim_receive(sim, dir, 1e12, buffer, &t) > 0) n++;
    return n;
}

static void test_loss_rate(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].loss = 0.1;
    config.link[1].loss = 0.5;
    config.seed = 7;
    netsim_t *sim = netsim_create(&config);
    const int n = 40000;
    send_many(sim, 0, n, 100, 0.001);
    send_many(sim, 1, n, 100, 0.001);
    const uint64_t *c0 = netsim_counters(sim, 0), *c1 = netsim_counters(sim, 1);
    CHECK_EQ(c0[NETSIM_COUNTER_SENT], n);
    /* 3 standard deviations: sqrt(p(1-p)/n) is 0.0015 at 10% and 0.0025 at 50%. */
    double rate0 = (double)c0[NETSIM_COUNTER_LOST] / n, rate1 = (double)c1[NETSIM_COUNTER_LOST] / n;
    CHECK(fabs(rate0 - 0.1) < 0.0045);
    CHECK(fabs(rate1 - 0.5) < 0.0075);
    CHECK_EQ(drain(sim, 0), n - (int)c0[NETSIM_COUNTER_LOST]);
    CHECK_EQ(drain(sim, 1), n - (int)c1[NETSIM_COUNTER_LOST]);
    CHECK_EQ(c0[NETSIM_COUNTER_DELIVERED] + c0[NETSIM_COUNTER_LOST], n);
    netsim_destroy(sim);

    /* The extremes are exact. */
    netsim_default_config(&config);
    config.link[0].loss = 1.0;
    sim = netsim_create(&config);
    send_many(sim, 0, 1000, 50, 0.01);
    send_many(sim, 1, 1000, 50, 0.01);
    CHECK_EQ(netsim_counters(sim, 0)[NETSIM_COUNTER_LOST], 1000);
    CHECK_EQ(netsim_counters(sim, 1)[NETSIM_COUNTER_LOST], 0);
    CHECK_EQ(drain(sim, 0), 0);
    CHECK_EQ(drain(sim, 1), 1000);
    CHECK(netsim_next_delivery(sim) < 0);
    netsim_destroy(sim);
}

static void test_latency_exact(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].latency = 0.25;
    config.link[1].latency = 0.125;
    netsim_t *sim = netsim_create(&config);
    uint8_t packet[64], buffer[CHUNK_MAX_PACKET_BYTES];
    send_one(sim, 0, 1.0, 1, 64);
    send_one(sim, 1, 1.0, 2, 64);
    CHECK(netsim_next_delivery(sim) == 1.125);
    double t = -1;
    CHECK_EQ(netsim_receive(sim, 0, 1.2499, buffer, &t), 0);
    CHECK_EQ(netsim_receive(sim, 1, 1.1249, buffer, &t), 0);
    CHECK_EQ(receive_one(sim, 1, 1.125, 64, &t), 2);
    CHECK(t == 1.125);
    CHECK(netsim_next_delivery(sim) == 1.25);
    CHECK_EQ(netsim_receive(sim, 0, 5.0, buffer, &t), 64);
    CHECK(t == 1.25);
    CHECK_EQ(payload_index(buffer), 1);
    make_payload(packet, 1, 64);
    CHECK(memcmp(buffer + 4, packet + 4, 60) == 0);
    CHECK(netsim_next_delivery(sim) < 0);
    netsim_destroy(sim);
}

static void test_jitter_bounds(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].latency = 0.1;
    config.link[0].jitter = 0.04;
    netsim_t *sim = netsim_create(&config);
    double lowest = 1, highest = 0;
    int out_of_order = 0;
    uint32_t last = 0;
    send_many(sim, 0, 2000, 16, 0.01);
    double t, previous = 0;
    for (int i = 0; i < 2000; i++) {
        uint32_t index = receive_one(sim, 0, 1e9, 16, &t);
        double delay = t - index * 0.01;
        if (delay < lowest) lowest = delay;
        if (delay > highest) highest = delay;
        CHECK(t >= previous); /* delivered in time order */
        previous = t;
        if (i > 0 && index < last) out_of_order++;
        last = index;
    }
    CHECK(lowest >= 0.06 - 1e-9 && highest <= 0.14 + 1e-9);
    /* Uniform over +-40 ms: the extremes are approached, and a 10 ms spacing
     * lets jitter reorder some datagrams. */
    CHECK(lowest < 0.062 && highest > 0.138);
    CHECK(out_of_order > 100);
    netsim_destroy(sim);

    /* Jitter larger than the latency never delivers before the send time. */
    netsim_default_config(&config);
    config.link[0].latency = 0.01;
    config.link[0].jitter = 0.5;
    sim = netsim_create(&config);
    for (int i = 0; i < 500; i++) send_one(sim, 0, 10.0 + i, (uint32_t)i, 16);
    for (int i = 0; i < 500; i++) {
        uint32_t index = receive_one(sim, 0, 1e9, 16, &t);
        CHECK(t >= 10.0 + index);
    }
    netsim_destroy(sim);
}

static void test_bandwidth_serialisation(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].bandwidth = 10000; /* bytes per second */
    config.link[0].latency = 0.05;
    netsim_t *sim = netsim_create(&config);
    /* 972 + 28 bytes of IPv4/UDP = 1000 bytes on the wire = 0.1 s each. */
    send_many(sim, 0, 3, 1000 - CS_IP_UDP_OVERHEAD, 0.0);
    double t;
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(receive_one(sim, 0, 1e9, 972, &t), i);
        CHECK(near(t, 0.1 * (i + 1) + 0.05));
    }
    /* After the link has gone idle a datagram is serialised from its own send time. */
    send_one(sim, 0, 2.0, 9, 472);
    receive_one(sim, 0, 1e9, 472, &t);
    CHECK(near(t, 2.0 + 0.05 + 0.05));
    /* One sent while the link is busy waits for it: the first leaves the
     * queue at 3.05, the second at 3.10. */
    send_one(sim, 0, 3.0, 9, 472);
    send_one(sim, 0, 3.01, 9, 472);
    receive_one(sim, 0, 1e9, 472, &t);
    CHECK(near(t, 3.1));
    receive_one(sim, 0, 1e9, 472, &t);
    CHECK(near(t, 3.15));
    netsim_destroy(sim);
}

static void test_queue_overflow(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].bandwidth = 1000;
    config.link[0].queue_bytes = 3000;
    netsim_t *sim = netsim_create(&config);
    /* A burst of five 1000-byte (wire) datagrams: three fit in the buffer. */
    send_many(sim, 0, 5, 1000 - CS_IP_UDP_OVERHEAD, 0.0);
    const uint64_t *c = netsim_counters(sim, 0);
    CHECK_EQ(c[NETSIM_COUNTER_QUEUE_DROPPED], 2);
    /* At t=1 the first has left: room for exactly one more. */
    send_one(sim, 0, 1.0, 5, 972);
    CHECK_EQ(c[NETSIM_COUNTER_QUEUE_DROPPED], 2);
    send_one(sim, 0, 1.0, 6, 972);
    CHECK_EQ(c[NETSIM_COUNTER_QUEUE_DROPPED], 3);
    double t;
    uint32_t expected[] = {0, 1, 2, 5};
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(receive_one(sim, 0, 1e9, 972, &t), expected[i]);
        CHECK(near(t, i + 1.0));
    }
    CHECK_EQ(drain(sim, 0), 0);
    netsim_destroy(sim);

    /* The other direction has its own (uncapped) link. */
    netsim_default_config(&config);
    config.link[0].bandwidth = 1000;
    config.link[0].queue_bytes = 1000;
    sim = netsim_create(&config);
    send_many(sim, 1, 50, 972, 0.0);
    CHECK_EQ(drain(sim, 1), 50);
    netsim_destroy(sim);
}

static void test_max_in_flight(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].latency = 1;
    config.max_packets_in_flight = 10;
    netsim_t *sim = netsim_create(&config);
    send_many(sim, 0, 12, 20, 0.001);
    CHECK_EQ(netsim_counters(sim, 0)[NETSIM_COUNTER_QUEUE_DROPPED], 2);
    CHECK_EQ(drain(sim, 0), 10);
    send_many(sim, 0, 10, 20, 0.001);
    CHECK_EQ(drain(sim, 0), 10);
    netsim_destroy(sim);
}

static void test_duplicates(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].duplicate = 1.0;
    config.link[1].duplicate = 0.2;
    config.link[0].latency = config.link[1].latency = 0.01;
    netsim_t *sim = netsim_create(&config);
    send_many(sim, 0, 100, 30, 0.1);
    uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    double t;
    int copies[100] = {0};
    while (netsim_receive(sim, 0, 1e9, buffer, &t) == 30) copies[payload_index(buffer)]++;
    for (int i = 0; i < 100; i++) CHECK_EQ(copies[i], 2);
    send_many(sim, 1, 10000, 30, 0.001);
    const uint64_t *c1 = netsim_counters(sim, 1);
    CHECK(c1[NETSIM_COUNTER_DUPLICATED] > 1850 && c1[NETSIM_COUNTER_DUPLICATED] < 2150);
    CHECK_EQ(drain(sim, 1), 10000 + (int)c1[NETSIM_COUNTER_DUPLICATED]);
    netsim_destroy(sim);
}

static void test_reorder(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.link[0].latency = 0.02;
    config.link[0].reorder = 1.0;
    config.link[0].reorder_delay = 0.03;
    config.link[1].latency = 0.02;
    config.link[1].reorder = 0.25;
    config.link[1].reorder_delay = 0.5;
    netsim_t *sim = netsim_create(&config);
    send_one(sim, 0, 1.0, 0, 16);
    double t;
    receive_one(sim, 0, 1e9, 16, &t);
    CHECK(near(t, 1.05));

    /* A held-back datagram arrives after ones sent later. */
    send_many(sim, 1, 4000, 16, 0.01);
    const uint64_t *c1 = netsim_counters(sim, 1);
    CHECK(c1[NETSIM_COUNTER_REORDERED] > 900 && c1[NETSIM_COUNTER_REORDERED] < 1100);
    int late = 0;
    uint32_t highest = 0;
    for (int i = 0; i < 4000; i++) {
        uint32_t index = receive_one(sim, 1, 1e9, 16, &t);
        if (index < highest) late++;
        else highest = index;
        double delay = t - index * 0.01;
        CHECK(near(delay, 0.02) || near(delay, 0.52));
    }
    CHECK(late > 800);
    netsim_destroy(sim);
}

static int write_slice(const chunk_wire_config_t *wire, uint8_t *buffer, uint16_t chunk_id, int slice_id, int num_slices)
{
    static uint8_t data[CHUNK_DEFAULT_SLICE_SIZE];
    chunk_slice_packet_t slice = {chunk_id, slice_id, num_slices,
                                  slice_id == num_slices - 1 ? 100 : wire->slice_size, data};
    return chunk_write_slice_packet(wire, &slice, buffer, CHUNK_MAX_PACKET_BYTES);
}

static int write_ack(const chunk_wire_config_t *wire, uint8_t *buffer, uint16_t chunk_id, int num_slices)
{
    static chunk_ack_packet_t ack;
    memset(&ack, 0, sizeof ack);
    ack.chunk_id = chunk_id;
    ack.num_slices = num_slices;
    ack.acked[0] = 1;
    return chunk_write_ack_packet(wire, &ack, buffer, CHUNK_MAX_PACKET_BYTES);
}

static void test_fault_drop_acks(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    chunk_faults_t faults;
    chunk_faults_default(&faults);
    faults.drop_acks[1] = 1;
    config.filter = chunk_faults_filter;
    config.filter_context = &faults;
    netsim_t *sim = netsim_create(&config);
    uint8_t packet[CHUNK_MAX_PACKET_BYTES], buffer[CHUNK_MAX_PACKET_BYTES];
    double t;
    int ack_bytes = write_ack(&faults.wire, packet, 5, 10);
    CHECK(ack_bytes > 0);
    netsim_send(sim, 1, 0.0, packet, ack_bytes);
    netsim_send(sim, 0, 0.0, packet, ack_bytes); /* only link 1 drops acks */
    int slice_bytes = write_slice(&faults.wire, packet, 5, 0, 10);
    netsim_send(sim, 1, 0.0, packet, slice_bytes);
    /* Not a valid packet (bad CRC): the filter cannot recognise it, so it passes. */
    write_ack(&faults.wire, packet, 5, 10);
    packet[0] ^= 1;
    netsim_send(sim, 1, 0.0, packet, ack_bytes);
    CHECK_EQ(netsim_counters(sim, 1)[NETSIM_COUNTER_FAULT_DROPPED], 1);
    CHECK_EQ(netsim_receive(sim, 1, 1.0, buffer, &t), slice_bytes);
    CHECK_EQ(netsim_receive(sim, 1, 1.0, buffer, &t), ack_bytes);
    CHECK_EQ(netsim_receive(sim, 1, 1.0, buffer, &t), 0);
    CHECK_EQ(netsim_receive(sim, 0, 1.0, buffer, &t), ack_bytes);
    netsim_destroy(sim);
}

static void test_fault_drop_slice(void)
{
    netsim_config_t config;
    netsim_default_config(&config);
    chunk_faults_t faults;
    chunk_faults_default(&faults);
    faults.wire.max_slices = 32; /* the filter parses with the configured variant */
    faults.drop_slice_id[0] = 3;
    config.filter = chunk_faults_filter;
    config.filter_context = &faults;
    netsim_t *sim = netsim_create(&config);
    uint8_t packet[CHUNK_MAX_PACKET_BYTES], buffer[CHUNK_MAX_PACKET_BYTES];
    double t;
    for (int round = 0; round < 3; round++)
        for (int s = 0; s < 6; s++) {
            int bytes = write_slice(&faults.wire, packet, (uint16_t)(100 + round), s, 6);
            netsim_send(sim, 0, round, packet, bytes);
        }
    int bytes = write_ack(&faults.wire, packet, 100, 6);
    netsim_send(sim, 0, 5.0, packet, bytes);
    CHECK_EQ(netsim_counters(sim, 0)[NETSIM_COUNTER_FAULT_DROPPED], 3);
    int seen = 0;
    chunk_packet_t parsed;
    while ((bytes = netsim_receive(sim, 0, 1e9, buffer, &t)) > 0) {
        CHECK_EQ(chunk_read_packet(&faults.wire, buffer, bytes, &parsed), CHUNK_READ_OK);
        if (parsed.type == CHUNK_PACKET_SLICE) CHECK(parsed.u.slice.slice_id != 3);
        seen++;
    }
    CHECK_EQ(seen, 3 * 5 + 1);
    netsim_destroy(sim);
}

/* The filter: the simulator's only protocol hook. */
typedef struct filter_log_t {
    int calls[2];
} filter_log_t;

/* Drops every datagram with an odd index in direction 0 and counts calls. */
static int drop_odd_in_dir0(void *context, int dir, const uint8_t *packet, int bytes)
{
    filter_log_t *log = context;
    CHECK(bytes >= 4);
    log->calls[dir]++;
    return dir == 0 && (payload_index(packet) & 1);
}

/* Sends 2000 datagrams each way at 30% loss and returns a bitmap (as a
 * hash) of which even-indexed direction-0 datagrams came out. */
static uint64_t filtered_run(netsim_filter_fn filter, filter_log_t *log)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.seed = 11;
    config.link[0].loss = config.link[1].loss = 0.3;
    config.filter = filter;
    config.filter_context = log;
    netsim_t *sim = netsim_create(&config);
    send_many(sim, 0, 2000, 40, 0.001);
    send_many(sim, 1, 2000, 40, 0.001);
    if (filter) {
        CHECK_EQ(netsim_counters(sim, 0)[NETSIM_COUNTER_FAULT_DROPPED], 1000);
        CHECK_EQ(netsim_counters(sim, 1)[NETSIM_COUNTER_FAULT_DROPPED], 0);
    }
    uint8_t buffer[64];
    double t;
    uint64_t hash = 1469598103934665603ull;
    int n;
    while ((n = netsim_receive(sim, 0, 1e9, buffer, &t)) > 0) {
        uint32_t index = payload_index(buffer);
        if (filter) CHECK((index & 1) == 0);
        if ((index & 1) == 0) hash = (hash ^ index) * 1099511628211ull;
    }
    netsim_destroy(sim);
    return hash;
}

static void test_filter_callback(void)
{
    filter_log_t log = {{0, 0}};
    uint64_t with = filtered_run(drop_odd_in_dir0, &log);
    CHECK_EQ(log.calls[0], 2000);
    CHECK_EQ(log.calls[1], 2000);
    /* A filter does not reshuffle the random fates of the datagrams it lets
     * through: the even ones are lost exactly as without it. */
    CHECK(with == filtered_run(NULL, NULL));
}

/* Runs a fixed traffic pattern through a fully impaired simulator and
 * returns a hash of every (time, direction, bytes) that came out. */
static uint64_t impaired_run(uint64_t seed)
{
    netsim_config_t config;
    netsim_default_config(&config);
    config.seed = seed;
    for (int d = 0; d < 2; d++) {
        config.link[d].loss = 0.3;
        config.link[d].latency = 0.05;
        config.link[d].jitter = 0.02;
        config.link[d].duplicate = 0.1;
        config.link[d].reorder = 0.1;
        config.link[d].bandwidth = 200000;
        config.link[d].queue_bytes = 8000;
    }
    netsim_t *sim = netsim_create(&config);
    uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    uint64_t hash = 1469598103934665603ull;
    for (int i = 0; i < 3000; i++) {
        double now = i * 0.002;
        int bytes = 20 + (i * 37) % 1000;
        send_one(sim, i % 3 == 0, now, (uint32_t)i, bytes);
        for (int d = 0; d < 2; d++) {
            double t;
            int n;
            while ((n = netsim_receive(sim, d, now, buffer, &t)) > 0) {
                uint64_t v[3] = {(uint64_t)llround(t * 1e9), (uint64_t)d, payload_index(buffer)};
                for (int k = 0; k < 3; k++) hash = (hash ^ v[k]) * 1099511628211ull;
                hash = (hash ^ (uint64_t)n) * 1099511628211ull;
            }
        }
    }
    hash ^= (uint64_t)drain(sim, 0) << 32 | (uint64_t)drain(sim, 1);
    netsim_destroy(sim);
    return hash;
}

static void test_determinism(void)
{
    uint64_t a = impaired_run(42), b = impaired_run(42), c = impaired_run(43);
    CHECK(a == b);
    CHECK(a != c);
}

static void test_loss_pattern_stable(void)
{
    /* Adding jitter does not change which datagrams are lost (fixed draws). */
    netsim_config_t config;
    uint8_t lost_plain[500], lost_jitter[500];
    for (int variant = 0; variant < 2; variant++) {
        netsim_default_config(&config);
        config.link[0].loss = 0.3;
        config.link[0].jitter = variant ? 0.01 : 0;
        config.link[0].latency = 0.02;
        netsim_t *sim = netsim_create(&config);
        send_many(sim, 0, 500, 16, 0.1);
        uint8_t *lost = variant ? lost_jitter : lost_plain;
        memset(lost, 1, 500);
        uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
        double t;
        while (netsim_receive(sim, 0, 1e9, buffer, &t) > 0) lost[payload_index(buffer)] = 0;
        netsim_destroy(sim);
    }
    CHECK(memcmp(lost_plain, lost_jitter, 500) == 0);
}

static void test_counter_names(void)
{
    for (int i = 0; i < NETSIM_COUNTER_COUNT; i++) CHECK(strcmp(netsim_counter_name(i), "unknown") != 0);
    CHECK(strcmp(netsim_counter_name(NETSIM_COUNTER_COUNT), "unknown") == 0);
}

/* ---- simprog_run (app/simprog.c): the step loop every simulator runs on ---- */

/* A run's endpoints for simprog_run: the first `sends` ticks send a datagram
 * on link 0; done() is 1 always (always_done) or once one arrived
 * (done_on_arrival); the log says what happened when ("T0.25 A0.5 ..."). */
typedef struct loop_probe_t {
    simprog_t sp;
    double now;
    int sends, ticks, arrived, always_done, done_on_arrival;
    char log[256];
} loop_probe_t;

static void probe_log(loop_probe_t *p, char what)
{
    size_t n = strlen(p->log);
    snprintf(p->log + n, sizeof p->log - n, "%s%c%g", n ? " " : "", what, p->now);
}

static int probe_tick(void *context)
{
    loop_probe_t *p = context;
    probe_log(p, 'T');
    uint8_t packet[8] = {0};
    if (p->ticks++ < p->sends) netsim_send(p->sp.netsim, 0, p->now, packet, sizeof packet);
    return 0;
}

static void probe_arrive(void *context, int link, const uint8_t *packet, int bytes)
{
    (void)link, (void)packet, (void)bytes;
    loop_probe_t *p = context;
    p->arrived++;
    probe_log(p, 'A');
}

static void probe_describe(void *context, char *text, size_t size)
{
    (void)context;
    snprintf(text, size, "probe");
}

static int probe_done(void *context)
{
    const loop_probe_t *p = context;
    return p->always_done || (p->done_on_arrival && p->arrived > 0);
}

/* Runs the probe p (its sends and done settings) with ticks and latency of
 * 0.25 s (exact in binary) to end, with a done hook and drain when with_done.
 * Returns 1 when the log is `expected` and the run ended at end_time. */
static int run_probe(loop_probe_t *p, int with_done, double drain, double end, const char *expected, double end_time)
{
    simprog_init(&p->sp, "test", "a", "b", 1, 2);
    p->sp.tick = 0.25;
    p->sp.sim.link[0].latency = p->sp.sim.link[1].latency = 0.25;
    CHECK(simprog_start(&p->sp) == 0);
    simprog_loop_t loop = {&p->now, p, probe_tick, probe_arrive, probe_describe, with_done ? probe_done : NULL, drain};
    double ended = -1;
    CHECK(simprog_run(&p->sp, end, &loop, &ended) == 0);
    simprog_free(&p->sp);
    if (strcmp(p->log, expected) != 0 || ended != end_time) {
        fprintf(stderr, "    simprog_run: \"%s\" ending at %g, expected \"%s\" at %g\n", p->log, ended, expected,
                end_time);
        return 0;
    }
    return 1;
}

/* Without a done hook: every step up to end with its arrivals; a datagram due
 * exactly at the next step waits for that step's tick. */
static void test_simprog_run_to_end(void)
{
    static loop_probe_t p = {.sends = 1};
    CHECK(run_probe(&p, 0, 0, 0.5, "T0 T0.25 A0.25 T0.5", 0.5));
}

/* With a done hook: the run ends after the tick of the first step at which
 * the work is done and the network empty; a datagram due exactly at the next
 * step arrives before that step's tick. */
static void test_simprog_run_done(void)
{
    static loop_probe_t p = {.sends = 1, .done_on_arrival = 1};
    CHECK(run_probe(&p, 1, 10, 100, "T0 A0.25 T0.25", 0.25));
}

/* With a done hook and a datagram every tick (the network never empty): done
 * from the start, the run ends after the tick drain seconds on, before that
 * step's arrivals; never done, after the tick of the first step at or past
 * end. */
static void test_simprog_run_drain_and_end(void)
{
    static loop_probe_t drained = {.sends = 1000, .always_done = 1};
    CHECK(run_probe(&drained, 1, 0.5, 100, "T0 A0.25 T0.25 A0.5 T0.5", 0.5));
    static loop_probe_t never = {.sends = 1000};
    CHECK(run_probe(&never, 1, 0, 0.5, "T0 A0.25 T0.25 A0.5 T0.5", 0.5));
}

const chunk_test_t sim_tests[] = {
    {"loss_rate", test_loss_rate},
    {"latency_exact", test_latency_exact},
    {"jitter_bounds", test_jitter_bounds},
    {"bandwidth_serialisation", test_bandwidth_serialisation},
    {"queue_overflow", test_queue_overflow},
    {"max_in_flight", test_max_in_flight},
    {"duplicates", test_duplicates},
    {"reorder", test_reorder},
    {"filter_callback", test_filter_callback},
    {"fault_drop_acks", test_fault_drop_acks},
    {"fault_drop_slice", test_fault_drop_slice},
    {"determinism", test_determinism},
    {"loss_pattern_stable", test_loss_pattern_stable},
    {"counter_names", test_counter_names},
    {"simprog_run_to_end", test_simprog_run_to_end},
    {"simprog_run_done", test_simprog_run_done},
    {"simprog_run_drain_and_end", test_simprog_run_drain_and_end},
    {NULL, NULL},
};
