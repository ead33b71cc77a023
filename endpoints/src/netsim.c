/*
 * netsim.c: the network simulator (netsim.h). Pure and seeded: datagrams go in
 * with a virtual time and come out at a computed delivery time; nothing here
 * reads a clock.
 *
 * What happens to a datagram handed to a link, in this order:
 *   1. the config's filter (a protocol's faults), which may drop it;
 *   2. random loss;
 *   3. the bandwidth cap: the datagram joins a FIFO router buffer drained at
 *      `bandwidth` bytes per second (its wire size counts the IPv4/UDP
 *      overhead); when the bytes not yet serialised plus this datagram exceed
 *      queue_bytes, the datagram is dropped (the bytes not yet serialised
 *      include the datagram on the wire, so queue_bytes is the most a burst
 *      may put ahead of the link; queue_bytes <= 0 is a buffer without limit);
 *   4. latency, plus a uniform jitter in [-jitter, +jitter] (never earlier
 *      than the moment it left the queue), plus reorder_delay with
 *      probability `reorder`;
 *   5. with probability `duplicate`, a second copy with its own jitter.
 *
 * Every datagram draws the same five random numbers from its direction's
 * generator whatever the configuration, so the two directions have separate
 * streams and turning one impairment on does not reshuffle the loss pattern
 * of another: the same seed gives the same fate to the n-th datagram.
 *
 * Datagrams beyond max_packets_in_flight are dropped and counted as
 * NETSIM_COUNTER_QUEUE_DROPPED (it is the simulator's own buffer that
 * overflowed).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "netsim.h"

typedef struct sim_packet_t {
    double delivery_time;
    uint64_t sequence; /* breaks ties: equal delivery times leave in send order */
    int bytes;
    uint8_t *data;
} sim_packet_t;

typedef struct sim_direction_t {
    netsim_link_config_t config;
    cs_rng_t rng;
    sim_packet_t *heap; /* min-heap on (delivery_time, sequence) */
    int count;
    int capacity;
    double link_free_time; /* when the router buffer will have drained */
    uint64_t counters[NETSIM_COUNTER_COUNT];
} sim_direction_t;

struct netsim_t {
    netsim_config_t config;
    sim_direction_t dir[2];
    uint64_t next_sequence;
    int in_flight; /* over both directions */
};

/* Slack for comparing the queue's backlog, which is computed in floating point. */
#define SIM_EPSILON 1e-9

void netsim_default_config(netsim_config_t *config)
{
    assert(config);
    memset(config, 0, sizeof *config);
    for (int d = 0; d < 2; d++) {
        netsim_link_config_t *link = &config->link[d];
        link->reorder_delay = 0.05;
        link->queue_bytes = 64 * 1024;
    }
    config->seed = 1;
    config->max_packets_in_flight = 65536;
}

netsim_t *netsim_create(const netsim_config_t *config)
{
    assert(config);
    assert(config->max_packets_in_flight > 0);
    netsim_t *sim = calloc(1, sizeof *sim);
    if (!sim) return NULL;
    sim->config = *config;
    for (int d = 0; d < 2; d++) {
        const netsim_link_config_t *link = &config->link[d];
        assert(link->loss >= 0 && link->loss <= 1);
        assert(link->duplicate >= 0 && link->duplicate <= 1);
        assert(link->reorder >= 0 && link->reorder <= 1);
        assert(link->latency >= 0 && link->jitter >= 0 && link->reorder_delay >= 0);
        sim->dir[d].config = *link;
        /* Distinct, fixed streams per direction derived from the one seed. */
        cs_rng_seed(&sim->dir[d].rng, config->seed * 2 + (uint64_t)d + 0x5eed0000u);
    }
    return sim;
}

void netsim_destroy(netsim_t *sim)
{
    if (!sim) return;
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < sim->dir[d].count; i++) free(sim->dir[d].heap[i].data);
        free(sim->dir[d].heap);
    }
    free(sim);
}

static int packet_before(const sim_packet_t *a, const sim_packet_t *b)
{
    if (a->delivery_time != b->delivery_time) return a->delivery_time < b->delivery_time;
    return a->sequence < b->sequence;
}

static void heap_swap(sim_packet_t *heap, int i, int j)
{
    sim_packet_t t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
}

/* Returns 0, or -1 when out of memory. Takes ownership of data on success. */
static int heap_push(sim_direction_t *dir, double delivery_time, uint64_t sequence, uint8_t *data, int bytes)
{
    if (dir->count == dir->capacity) {
        int capacity = dir->capacity ? dir->capacity * 2 : 64;
        sim_packet_t *heap = realloc(dir->heap, (size_t)capacity * sizeof *heap);
        if (!heap) return -1;
        dir->heap = heap;
        dir->capacity = capacity;
    }
    int i = dir->count++;
    dir->heap[i] = (sim_packet_t){delivery_time, sequence, bytes, data};
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!packet_before(&dir->heap[i], &dir->heap[parent])) break;
        heap_swap(dir->heap, i, parent);
        i = parent;
    }
    return 0;
}

static sim_packet_t heap_pop(sim_direction_t *dir)
{
    assert(dir->count > 0);
    sim_packet_t top = dir->heap[0];
    dir->heap[0] = dir->heap[--dir->count];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < dir->count && packet_before(&dir->heap[l], &dir->heap[m])) m = l;
        if (r < dir->count && packet_before(&dir->heap[r], &dir->heap[m])) m = r;
        if (m == i) break;
        heap_swap(dir->heap, i, m);
        i = m;
    }
    return top;
}

static double jitter_offset(const netsim_link_config_t *link, double u)
{
    return link->jitter * (2.0 * u - 1.0);
}

/* Queues one copy for delivery; counts a drop when the simulator is full. */
static void schedule(netsim_t *sim, sim_direction_t *dir, double delivery_time, const uint8_t *packet, int bytes)
{
    if (sim->in_flight >= sim->config.max_packets_in_flight) {
        dir->counters[NETSIM_COUNTER_QUEUE_DROPPED]++;
        return;
    }
    uint8_t *copy = malloc((size_t)bytes);
    if (!copy || heap_push(dir, delivery_time, sim->next_sequence, copy, bytes) != 0) {
        free(copy);
        cs_log_message(CS_LOG_LEVEL_ERROR, "sim: out of memory, datagram dropped");
        dir->counters[NETSIM_COUNTER_QUEUE_DROPPED]++;
        return;
    }
    memcpy(copy, packet, (size_t)bytes);
    sim->next_sequence++;
    sim->in_flight++;
}

void netsim_send(netsim_t *sim, int dir_index, double time, const uint8_t *packet, int bytes)
{
    assert(sim && (dir_index == 0 || dir_index == 1));
    assert(packet && bytes > 0 && bytes <= NETSIM_MAX_DATAGRAM);
    sim_direction_t *dir = &sim->dir[dir_index];
    const netsim_link_config_t *link = &dir->config;
    dir->counters[NETSIM_COUNTER_SENT]++;

    /* Always five draws per datagram, used or not (see the top comment). */
    double u_loss = cs_rng_uniform(&dir->rng);
    double u_jitter = cs_rng_uniform(&dir->rng);
    double u_reorder = cs_rng_uniform(&dir->rng);
    double u_duplicate = cs_rng_uniform(&dir->rng);
    double u_duplicate_jitter = cs_rng_uniform(&dir->rng);

    if (sim->config.filter && sim->config.filter(sim->config.filter_context, dir_index, packet, bytes)) {
        dir->counters[NETSIM_COUNTER_FAULT_DROPPED]++;
        return;
    }
    if (u_loss < link->loss) {
        dir->counters[NETSIM_COUNTER_LOST]++;
        return;
    }

    double departure = time;
    if (link->bandwidth > 0) {
        double wire_bytes = (double)bytes + CS_IP_UDP_OVERHEAD;
        double start = dir->link_free_time > time ? dir->link_free_time : time;
        double backlog = (start - time) * link->bandwidth;
        if (link->queue_bytes > 0 && backlog + wire_bytes > (double)link->queue_bytes + SIM_EPSILON) {
            dir->counters[NETSIM_COUNTER_QUEUE_DROPPED]++;
            return;
        }
        departure = start + wire_bytes / link->bandwidth;
        dir->link_free_time = departure;
    }

    double delivery = departure + link->latency + jitter_offset(link, u_jitter);
    if (delivery < departure) delivery = departure;
    if (u_reorder < link->reorder) {
        delivery += link->reorder_delay;
        dir->counters[NETSIM_COUNTER_REORDERED]++;
    }
    schedule(sim, dir, delivery, packet, bytes);

    if (u_duplicate < link->duplicate) {
        double again = departure + link->latency + jitter_offset(link, u_duplicate_jitter);
        if (again < departure) again = departure;
        dir->counters[NETSIM_COUNTER_DUPLICATED]++;
        schedule(sim, dir, again, packet, bytes);
    }
}

int netsim_receive(netsim_t *sim, int dir_index, double time, uint8_t *buffer, double *delivery_time)
{
    assert(sim && (dir_index == 0 || dir_index == 1) && buffer);
    sim_direction_t *dir = &sim->dir[dir_index];
    if (dir->count == 0 || dir->heap[0].delivery_time > time) return 0;
    sim_packet_t p = heap_pop(dir);
    memcpy(buffer, p.data, (size_t)p.bytes);
    free(p.data);
    sim->in_flight--;
    dir->counters[NETSIM_COUNTER_DELIVERED]++;
    if (delivery_time) *delivery_time = p.delivery_time;
    return p.bytes;
}

double netsim_next_delivery(const netsim_t *sim)
{
    assert(sim);
    double next = -1.0;
    for (int d = 0; d < 2; d++) {
        if (sim->dir[d].count == 0) continue;
        double t = sim->dir[d].heap[0].delivery_time;
        if (next < 0 || t < next) next = t;
    }
    return next;
}

const uint64_t *netsim_counters(const netsim_t *sim, int dir_index)
{
    assert(sim && (dir_index == 0 || dir_index == 1));
    return sim->dir[dir_index].counters;
}

const char *netsim_counter_name(int counter)
{
    static const char *const names[NETSIM_COUNTER_COUNT] = {
        "sent", "delivered", "lost", "duplicated", "reordered", "queue dropped", "fault dropped",
    };
    if (counter < 0 || counter >= NETSIM_COUNTER_COUNT) return "unknown";
    return names[counter];
}
