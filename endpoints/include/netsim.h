/*
 * netsim.h: the network simulator: two one-way links (direction 0 "A to B",
 * 1 "B to A") with seeded loss, latency, jitter, duplicates, reordering, a
 * bandwidth cap behind a router buffer, and fault filters. Pure and seeded:
 * datagrams go in with a virtual time and come out at a computed delivery
 * time; nothing here reads a clock. chunk-sim drives it in virtual time,
 * chunk-relay in real time.
 */
#ifndef NETSIM_H
#define NETSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest datagram the simulator carries: any UDP payload. */
#define NETSIM_MAX_DATAGRAM 65536

/* The impairments of one direction ("A to B" is 0, "B to A" is 1). */
typedef struct netsim_link_config_t {
    double loss;            /* probability a packet is dropped, 0..1 */
    double latency;         /* one-way seconds */
    double jitter;          /* up to +- this many seconds added, uniform */
    double duplicate;       /* probability a packet is delivered twice */
    double reorder;         /* probability a packet is held back an extra reorder_delay */
    double reorder_delay;   /* seconds, default 0.05 */
    double bandwidth;       /* bytes per second on the wire (with IP/UDP overhead); <= 0 unlimited */
    int queue_bytes;        /* router buffer in front of the bandwidth cap; overflow drops; default 64 KiB */
} netsim_link_config_t;

/* Decides, before the random impairments, whether the datagram of bytes
 * bytes handed to direction dir is dropped: returns nonzero to drop it
 * (counted as NETSIM_COUNTER_FAULT_DROPPED), 0 to let it through. This is
 * where a protocol's faults live (chunk_faults_filter drops acks or one slice
 * id): the simulator itself knows no protocol. Called once per datagram, in
 * send order. */
typedef int (*netsim_filter_fn)(void *context, int dir, const uint8_t *packet, int bytes);

typedef struct netsim_config_t {
    netsim_link_config_t link[2];
    uint64_t seed;
    netsim_filter_fn filter;   /* NULL: no faults */
    void *filter_context;
    int max_packets_in_flight; /* default 65536; beyond it packets are dropped (counted) */
} netsim_config_t;

void netsim_default_config(netsim_config_t *config);

typedef struct netsim_t netsim_t;

netsim_t *netsim_create(const netsim_config_t *config);
void netsim_destroy(netsim_t *sim);

/* Hands a datagram of 1..NETSIM_MAX_DATAGRAM bytes to the link in direction
 * dir at time (never decreasing per direction). Copies it. */
void netsim_send(netsim_t *sim, int dir, double time, const uint8_t *packet, int bytes);

/* Pops the next datagram in direction dir due at or before time, in order of
 * delivery time. Returns its length (copied into buffer, which must hold
 * the largest datagram sent) and sets *delivery_time, or 0 when none is due. */
int netsim_receive(netsim_t *sim, int dir, double time, uint8_t *buffer, double *delivery_time);

/* Earliest pending delivery time over both directions, or a negative value
 * when nothing is in flight (lets a driver skip idle virtual time). */
double netsim_next_delivery(const netsim_t *sim);

enum {
    NETSIM_COUNTER_SENT,
    NETSIM_COUNTER_DELIVERED,
    NETSIM_COUNTER_LOST,          /* random loss */
    NETSIM_COUNTER_DUPLICATED,
    NETSIM_COUNTER_REORDERED,
    NETSIM_COUNTER_QUEUE_DROPPED, /* router buffer overflow */
    NETSIM_COUNTER_FAULT_DROPPED, /* dropped by the config's filter */
    NETSIM_COUNTER_COUNT
};

/* Counters per direction: counters(sim, dir)[NETSIM_COUNTER_*]. */
const uint64_t *netsim_counters(const netsim_t *sim, int dir);
const char *netsim_counter_name(int counter);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_H */
