/*
 * connection.c: one netgame virtual connection (docs/netgame-endpoints.md):
 * the header on every packet, the received set and its ack bits, acks and
 * RTT, loss after rtt_maximum, the example's flow control (Good 30 / Bad 10
 * packets per second), the connection and timeout rules, and counters for
 * all of it.
 *
 * Where the original 2008 code has quirks, this endpoint does what the
 * article means (each choice is in docs/netgame-endpoints.md, "Our endpoint
 * and the original"); every datagram it sends is one the original accepts.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "netgame.h"

typedef struct pending_t {
    uint32_t sequence;
    double time; /* when it was sent */
    int resolved; /* acked (it stays in the ring until the ones before it go) */
} pending_t;

struct netgame_connection_t {
    netgame_config_t config;
    netgame_state_t state;
    uint8_t peer[NETGAME_MAX_ADDRESS_BYTES];
    int peer_bytes; /* 0: no peer */
    double last_update, last_receive;

    /* reliability */
    uint32_t local_sequence;  /* the next one we send */
    uint32_t remote_sequence; /* most recent received: the ack we send */
    int received_any;
    uint64_t received_mask;   /* bit j: remote_sequence - j received (j 0..63) */
    int peer_acked_something; /* the peer sent an ack or ack bits other than 0 */
    uint32_t peer_acked_from; /* the sequence of the first packet in which it did */
    pending_t *pending;       /* ring in send order */
    int pending_head, pending_count;
    double rtt;

    /* flow control (the example's FlowControl) */
    netgame_mode_t mode;
    double penalty_time, good_conditions_time, penalty_reduction_accumulator;
    double send_accumulator;

    uint64_t counters[NETGAME_COUNTER_COUNT];
    uint8_t buffer[NETGAME_MAX_PACKET_BYTES];
};

void netgame_default_config(netgame_config_t *config)
{
    assert(config);
    memset(config, 0, sizeof *config);
    config->role = NETGAME_CLIENT;
    config->protocol_id = NETGAME_DEFAULT_PROTOCOL_ID;
    config->max_sequence = NETGAME_DEFAULT_MAX_SEQUENCE;
    config->timeout = NETGAME_DEFAULT_TIMEOUT;
    config->rtt_maximum = NETGAME_RTT_MAXIMUM;
    config->flow_control = 1;
    config->payload_bytes = 256;
    config->pending_capacity = 1024;
    config->fault_stop_acking_at = -1;
}

netgame_connection_t *netgame_connection_create(const netgame_config_t *config)
{
    assert(config && config->send);
    assert(config->role == NETGAME_CLIENT || config->role == NETGAME_SERVER);
    assert(config->max_sequence >= 1);
    assert(config->first_sequence <= config->max_sequence);
    assert(config->timeout > 0 && config->rtt_maximum > 0);
    assert(config->payload_bytes >= 0 && config->payload_bytes <= NETGAME_MAX_PAYLOAD_BYTES);
    assert(config->pending_capacity >= 1);
    netgame_connection_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->pending = calloc((size_t)config->pending_capacity, sizeof *c->pending);
    if (!c->pending) {
        free(c);
        return NULL;
    }
    c->config = *config;
    c->state = NETGAME_STATE_DISCONNECTED;
    return c;
}

void netgame_connection_destroy(netgame_connection_t *c)
{
    if (!c) return;
    free(c->pending);
    free(c);
}

static void reset_flow_control(netgame_connection_t *c)
{
    c->mode = NETGAME_MODE_BAD;
    c->penalty_time = 4.0;
    c->good_conditions_time = 0;
    c->penalty_reduction_accumulator = 0;
}

/* The original's ClearData, but for our own sequence: a new connection has
 * nothing received, pending or measured. Our sequence goes on from where it
 * was (start() sets it): the header has no connection id, so had a server
 * that timed out started its next connection from 0 again, a peer that still
 * held the old connection's acks (or a datagram of it, delayed) would ack the
 * new packets with the same numbers, and drop them as duplicates. */
static void reset_reliability(netgame_connection_t *c)
{
    c->remote_sequence = 0;
    c->received_any = 0;
    c->received_mask = 0;
    c->peer_acked_something = 0;
    c->pending_head = c->pending_count = 0;
    c->rtt = 0;
}

void netgame_connection_start(netgame_connection_t *c, double time, const uint8_t *address, int address_bytes)
{
    assert(c);
    if (c->config.role == NETGAME_CLIENT) {
        assert(address && address_bytes >= 1 && address_bytes <= NETGAME_MAX_ADDRESS_BYTES);
        memcpy(c->peer, address, (size_t)address_bytes);
        c->peer_bytes = address_bytes;
        c->state = NETGAME_STATE_CONNECTING;
    } else {
        assert(!address && address_bytes == 0);
        c->peer_bytes = 0;
        c->state = NETGAME_STATE_LISTENING;
    }
    c->local_sequence = c->config.first_sequence;
    reset_reliability(c);
    reset_flow_control(c);
    c->send_accumulator = 0;
    c->last_update = c->last_receive = time;
}

static int can_send(const netgame_connection_t *c)
{
    return c->peer_bytes > 0 && (c->state == NETGAME_STATE_CONNECTING || c->state == NETGAME_STATE_CONNECTED);
}

static uint32_t next_sequence(const netgame_connection_t *c, uint32_t s)
{
    return s == c->config.max_sequence ? 0 : s + 1;
}

static uint32_t current_ack_bits(const netgame_connection_t *c)
{
    if (!c->received_any) return 0;
    uint32_t bits = 0;
    for (int i = 0; i < 32; i++) {
        if (!((c->received_mask >> (i + 1)) & 1u)) continue;
        uint32_t s = netgame_sequence_distance(c->remote_sequence, (uint32_t)i + 1, c->config.max_sequence);
        /* A tiny sequence space (max 31) has fewer than 32 older sequences. */
        if (netgame_bit_index(s, c->remote_sequence, c->config.max_sequence) == i) bits |= 1u << i;
    }
    return bits;
}

/* Forgets the oldest pending packet, counting it lost unless it was acked. */
static void lose_oldest(netgame_connection_t *c)
{
    pending_t *p = &c->pending[c->pending_head];
    int was_resolved = p->resolved;
    c->pending_head = (c->pending_head + 1) % c->config.pending_capacity;
    c->pending_count--;
    if (was_resolved) return;
    c->counters[NETGAME_COUNTER_PACKETS_LOST]++;
    if (c->config.lost) c->config.lost(c->config.context, p->sequence);
}

int64_t netgame_connection_send_packet(netgame_connection_t *c, double time, const uint8_t *payload, int bytes)
{
    assert(c && bytes >= 0 && bytes <= NETGAME_MAX_PAYLOAD_BYTES && (payload || bytes == 0));
    if (!can_send(c)) return -1;
    netgame_header_t h = {c->config.protocol_id, c->local_sequence, c->remote_sequence, current_ack_bits(c)};
    int n = netgame_write_packet(&h, payload, bytes, c->buffer, (int)sizeof c->buffer);
    assert(n == NETGAME_HEADER_BYTES + bytes);
    if (c->pending_count == c->config.pending_capacity) lose_oldest(c);
    int slot = (c->pending_head + c->pending_count) % c->config.pending_capacity;
    c->pending[slot] = (pending_t){h.sequence, time, 0};
    c->pending_count++;
    c->local_sequence = next_sequence(c, c->local_sequence);
    c->counters[NETGAME_COUNTER_PACKETS_SENT]++;
    c->counters[NETGAME_COUNTER_BYTES_SENT] += (uint64_t)n;
    c->config.send(c->config.context, c->peer, c->peer_bytes, c->buffer, n);
    return h.sequence;
}

/* Records a received sequence. Returns 0 taken, 1 duplicate, 2 taken but
 * too old to record. */
static int record_received(netgame_connection_t *c, uint32_t s)
{
    uint32_t max = c->config.max_sequence;
    if (!c->received_any) {
        /* The first sequence heard becomes the ack whatever its value (the
         * original compares it with its initial 0, see the docs). */
        c->received_any = 1;
        c->remote_sequence = s;
        c->received_mask = 1;
        return 0;
    }
    if (s == c->remote_sequence) return 1;
    if (netgame_sequence_more_recent(s, c->remote_sequence, max)) {
        uint32_t k = netgame_sequence_distance(s, c->remote_sequence, max);
        c->received_mask = (k >= 64 ? 0 : c->received_mask << k) | 1u;
        c->remote_sequence = s;
        return 0;
    }
    uint32_t j = netgame_sequence_distance(c->remote_sequence, s, max);
    if (j > 32) return 2;
    if ((c->received_mask >> j) & 1u) return 1;
    c->received_mask |= (uint64_t)1 << j;
    return 0;
}

static void process_ack(netgame_connection_t *c, double time, uint32_t sequence, uint32_t ack, uint32_t ack_bits)
{
    if (ack != 0 || ack_bits != 0) {
        if (!c->peer_acked_something) c->peer_acked_from = sequence;
        c->peer_acked_something = 1;
    } else if (!c->peer_acked_something ||
               !netgame_sequence_more_recent(sequence, c->peer_acked_from, c->config.max_sequence)) {
        /* Ack 0 with no bits is what a peer sends before it received
         * anything: not an ack of our sequence 0 unless the peer sent it
         * after the first packet in which it acked something (the original
         * counts it as one every time). A packet the network held back can
         * bring it late. */
        for (int i = 0; i < c->pending_count; i++) {
            const pending_t *p = &c->pending[(c->pending_head + i) % c->config.pending_capacity];
            if (!p->resolved && p->sequence == 0) {
                c->counters[NETGAME_COUNTER_FALSE_ACK_ZERO]++;
                break;
            }
        }
        return;
    }
    for (int i = 0; i < c->pending_count; i++) {
        pending_t *p = &c->pending[(c->pending_head + i) % c->config.pending_capacity];
        if (p->resolved || !netgame_sequence_acked(p->sequence, ack, ack_bits, c->config.max_sequence)) continue;
        p->resolved = 1;
        double sample = time - p->time;
        c->rtt += (sample - c->rtt) * 0.1;
        c->counters[NETGAME_COUNTER_PACKETS_ACKED]++;
        if (c->config.acked) c->config.acked(c->config.context, p->sequence, sample);
    }
    while (c->pending_count > 0 && c->pending[c->pending_head].resolved) lose_oldest(c);
}

int netgame_connection_receive_packet(netgame_connection_t *c, double time, const uint8_t *address, int address_bytes,
                                      const uint8_t *packet, int bytes)
{
    assert(c && address && address_bytes >= 1 && address_bytes <= NETGAME_MAX_ADDRESS_BYTES);
    assert(packet || bytes <= 0);
    netgame_header_t h;
    if (netgame_read_header(packet, bytes, &h) != 0) {
        c->counters[NETGAME_COUNTER_DROP_SHORT]++;
        return 0;
    }
    if (h.protocol_id != c->config.protocol_id) {
        c->counters[NETGAME_COUNTER_DROP_PROTOCOL_ID]++;
        return 0;
    }
    if (h.sequence > c->config.max_sequence || h.ack > c->config.max_sequence) {
        /* Not of our sequence space (MaxSequence below 2^32 - 1): no sense
         * can be made of it, and it must not become our ack. */
        c->counters[NETGAME_COUNTER_DROP_OUT_OF_RANGE]++;
        return 0;
    }
    if (c->state == NETGAME_STATE_DISCONNECTED || c->state == NETGAME_STATE_CONNECT_FAIL) {
        c->counters[NETGAME_COUNTER_DROP_NOT_STARTED]++;
        return 0;
    }
    if (c->state == NETGAME_STATE_LISTENING) {
        /* The server takes the first valid packet's sender as its peer. */
        memcpy(c->peer, address, (size_t)address_bytes);
        c->peer_bytes = address_bytes;
        c->state = NETGAME_STATE_CONNECTED;
        reset_reliability(c);
        reset_flow_control(c);
        c->send_accumulator = 0;
        c->counters[NETGAME_COUNTER_CONNECTS]++;
    } else if (address_bytes != c->peer_bytes || memcmp(address, c->peer, (size_t)address_bytes) != 0) {
        c->counters[NETGAME_COUNTER_DROP_FOREIGN]++;
        return 0;
    } else if (c->state == NETGAME_STATE_CONNECTING) {
        c->state = NETGAME_STATE_CONNECTED;
        c->counters[NETGAME_COUNTER_CONNECTS]++;
    }
    c->last_receive = time;

    int stopped = c->config.fault_stop_acking_at >= 0 && time >= c->config.fault_stop_acking_at;
    int recorded = stopped ? 0 : record_received(c, h.sequence);
    if (recorded == 1) {
        c->counters[NETGAME_COUNTER_DROP_DUPLICATE]++;
        return 0;
    }
    if (recorded == 2) c->counters[NETGAME_COUNTER_RECEIVED_OLD]++;
    c->counters[NETGAME_COUNTER_PACKETS_RECEIVED]++;
    c->counters[NETGAME_COUNTER_BYTES_RECEIVED] += (uint64_t)bytes;
    if (bytes == NETGAME_HEADER_BYTES) c->counters[NETGAME_COUNTER_RECEIVED_HEADER_ONLY]++;
    process_ack(c, time, h.sequence, h.ack, h.ack_bits);
    if (c->config.receive)
        c->config.receive(c->config.context, h.sequence, packet + NETGAME_HEADER_BYTES, bytes - NETGAME_HEADER_BYTES);
    return 1;
}

/* The example's FlowControl::Update, with the smoothed RTT in seconds. */
static void update_flow_control(netgame_connection_t *c, double dt)
{
    if (c->mode == NETGAME_MODE_GOOD) {
        if (c->rtt > NETGAME_RTT_THRESHOLD) {
            c->mode = NETGAME_MODE_BAD;
            c->counters[NETGAME_COUNTER_MODE_TO_BAD]++;
            if (c->good_conditions_time < 10.0 && c->penalty_time < 60.0) {
                c->penalty_time *= 2.0;
                if (c->penalty_time > 60.0) c->penalty_time = 60.0;
                c->counters[NETGAME_COUNTER_PENALTY_DOUBLED]++;
            }
            c->good_conditions_time = 0;
            c->penalty_reduction_accumulator = 0;
            return;
        }
        c->good_conditions_time += dt;
        c->penalty_reduction_accumulator += dt;
        if (c->penalty_reduction_accumulator > 10.0 && c->penalty_time > 1.0) {
            c->penalty_time /= 2.0;
            if (c->penalty_time < 1.0) c->penalty_time = 1.0;
            c->counters[NETGAME_COUNTER_PENALTY_HALVED]++;
            c->penalty_reduction_accumulator = 0;
        }
        return;
    }
    if (c->rtt <= NETGAME_RTT_THRESHOLD) c->good_conditions_time += dt;
    else c->good_conditions_time = 0;
    if (c->good_conditions_time > c->penalty_time) {
        c->good_conditions_time = 0;
        c->penalty_reduction_accumulator = 0;
        c->mode = NETGAME_MODE_GOOD;
        c->counters[NETGAME_COUNTER_MODE_TO_GOOD]++;
    }
}

/* Packets per second the flow control allows now (30 Good, 10 Bad). */
static double send_rate(const netgame_connection_t *c)
{
    return c->mode == NETGAME_MODE_GOOD ? NETGAME_GOOD_RATE : NETGAME_BAD_RATE;
}

static void send_due(netgame_connection_t *c, double time, double dt)
{
    double interval = 1.0 / send_rate(c);
    c->send_accumulator += dt;
    /* The example sends while the accumulator is above the interval; with
     * its own tick of 1/30 s that comparison of equal floats skips a tick
     * now and then and sends two on the next. Within a microsecond counts as
     * reached here: one packet per tick at 30 per second, same average rate. */
    while (c->send_accumulator > interval - 1e-6) {
        c->send_accumulator -= interval;
        if (!can_send(c)) continue; /* the example's SendPacket without a peer: nothing */
        int bytes = c->config.payload_bytes;
        uint8_t payload[NETGAME_MAX_PAYLOAD_BYTES];
        if (c->config.payload) {
            bytes = c->config.payload(c->config.context, c->local_sequence, payload, NETGAME_MAX_PAYLOAD_BYTES);
            assert(bytes >= 0 && bytes <= NETGAME_MAX_PAYLOAD_BYTES);
        } else {
            memset(payload, 0, (size_t)bytes);
        }
        netgame_connection_send_packet(c, time, payload, bytes);
    }
}

void netgame_connection_update(netgame_connection_t *c, double time)
{
    assert(c && time >= c->last_update);
    double dt = time - c->last_update;
    c->last_update = time;
    if ((c->state == NETGAME_STATE_CONNECTING || c->state == NETGAME_STATE_CONNECTED) &&
        time - c->last_receive > c->config.timeout) {
        c->counters[NETGAME_COUNTER_TIMEOUTS]++;
        /* What was still awaiting an ack will never get one: lost. */
        while (c->pending_count > 0) lose_oldest(c);
        if (c->state == NETGAME_STATE_CONNECTING) {
            c->state = NETGAME_STATE_CONNECT_FAIL;
        } else if (c->config.role == NETGAME_SERVER) {
            c->state = NETGAME_STATE_LISTENING; /* and takes the next peer */
            c->peer_bytes = 0;
        } else {
            c->state = NETGAME_STATE_DISCONNECTED;
        }
        reset_reliability(c);
        reset_flow_control(c);
        return;
    }
    while (c->pending_count > 0) {
        const pending_t *p = &c->pending[c->pending_head];
        if (!p->resolved && time - p->time <= c->config.rtt_maximum) break;
        lose_oldest(c);
    }
    if (c->state == NETGAME_STATE_CONNECTED) update_flow_control(c, dt);
    if (c->config.flow_control) send_due(c, time, dt);
}

netgame_state_t netgame_connection_state(const netgame_connection_t *c)
{
    assert(c);
    return c->state;
}

const char *netgame_state_name(netgame_state_t state)
{
    static const char *const names[NETGAME_STATE_COUNT] = {"disconnected", "listening", "connecting",
                                                           "connect failed", "connected"};
    return state >= 0 && state < NETGAME_STATE_COUNT ? names[state] : "unknown";
}

int netgame_connection_connected(const netgame_connection_t *c)
{
    assert(c);
    return c->state == NETGAME_STATE_CONNECTED;
}

const uint8_t *netgame_connection_peer(const netgame_connection_t *c, int *address_bytes)
{
    assert(c && address_bytes);
    *address_bytes = c->peer_bytes;
    return c->peer_bytes ? c->peer : NULL;
}

uint32_t netgame_connection_local_sequence(const netgame_connection_t *c) { assert(c); return c->local_sequence; }
uint32_t netgame_connection_remote_sequence(const netgame_connection_t *c) { assert(c); return c->remote_sequence; }
uint32_t netgame_connection_ack_bits(const netgame_connection_t *c) { assert(c); return current_ack_bits(c); }
double netgame_connection_rtt(const netgame_connection_t *c) { assert(c); return c->rtt; }
netgame_mode_t netgame_connection_mode(const netgame_connection_t *c) { assert(c); return c->mode; }
double netgame_connection_penalty_time(const netgame_connection_t *c) { assert(c); return c->penalty_time; }

const char *netgame_mode_name(netgame_mode_t mode)
{
    return mode == NETGAME_MODE_GOOD ? "good" : "bad";
}

const uint64_t *netgame_connection_counters(const netgame_connection_t *c)
{
    assert(c);
    return c->counters;
}

const char *netgame_counter_name(int counter)
{
    static const char *const names[NETGAME_COUNTER_COUNT] = {
        "packets sent", "bytes sent", "packets received", "bytes received", "packets acked", "packets lost",
        "drop short", "drop protocol id", "drop foreign", "drop not started", "drop duplicate", "drop out of range",
        "received old",
        "received header only", "false ack zero", "connects", "timeouts", "mode to good", "mode to bad",
        "penalty doubled", "penalty halved",
    };
    return counter >= 0 && counter < NETGAME_COUNTER_COUNT ? names[counter] : "unknown";
}
