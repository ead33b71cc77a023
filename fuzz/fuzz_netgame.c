/*
 * fuzz_netgame: libFuzzer harness that drives a netgame client and server
 * (endpoints/src/netgame/connection.c) with arbitrary sequences of datagrams
 * and time steps.
 *
 * The two are wired through two queues the input controls: A holds the
 * client's datagrams on their way to the server, B the server's on their way
 * back. The input decides when time moves, which datagrams are delivered,
 * dropped, duplicated or reordered, mutates real ones, injects arbitrary
 * datagrams (from the peer's address or a stranger's) and sends by hand.
 *
 * Input: a config byte, then operations (one byte, then its arguments; a
 * missing byte reads as 0):
 *   config bits 0-1  MaxSequence 0xFFFFFFFF, 31, 255, 65535
 *          bit 2     first sequence 20 below MaxSequence (else 0)
 *          bit 3     no flow control: only op 10 sends
 *          bits 4-5  payload 0, 4, 32, 300 bytes
 *          bit 6     the server stops acking at 2 s (the fault)
 *          bit 7     timeout 1 s (else 10 s)
 *   op % 12:  0 advance time by b ms (255: 3 s), update both
 *             1 deliver the oldest of A   2 drop it   3 deliver A[b] again
 *             4 deliver the oldest of B   5 drop it   6 deliver B[b] again
 *             7 inject: flags f (bit 0 to the client, else the server; bit 1
 *               from a stranger; bit 2 set our protocol id), LE16 length
 *               (at most 2048), that many bytes
 *             8 mutate a copy of A[b]: flip bit LE16, deliver it to the server
 *             9 the same with B[b], to the client
 *             10 side b & 1 sends by hand, payload of b >> 1 bytes
 *             11 b rounds of: deliver all of A and B, advance 33 ms, update
 *               (at most 3000 updates per input in all)
 *
 * What it checks (abort on failure, so libFuzzer keeps the input):
 * - every datagram sent is at least 16 bytes with our protocol id, its
 *   sequence the one after the previous, its ack within MaxSequence and no ack
 *   bit for a sequence that cannot be older than the ack;
 * - every ack and loss reported is of a packet sent and still pending (each
 *   once), and acked + lost + pending = sent (the counters and the model);
 * - RTT samples are not negative, the smoothed RTT lies within the samples;
 * - an update sends at most what 30 packets a second allow;
 * - while no injected or mutated datagram has been taken (the header has no
 *   authentication) and MaxSequence is 2^32 - 1: every ack is true, the
 *   peer took that packet before it sent the one that acked it (across a
 *   server's timeout and new connection too: its sequence goes on).
 * ASan and UBSan check the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netgame.h"
#include "harness.h"

#define QUEUE_MAX 64
#define MODEL_MAX 4096
#define INJECT_MAX 2048
/* Updates per input at most (about 100 s at the example's 30 a second): keeps
 * an input fast, still past a 10-s timeout and several mode switches. */
#define UPDATE_BUDGET 3000

typedef struct datagram_t {
    uint8_t *data;
    int bytes;
    int from;  /* side that sent it */
    int index; /* its record in the sender's model, or -1 (forged) */
} datagram_t;

typedef struct sent_t {
    uint32_t sequence;
    double time, taken_time;
    int taken, resolved;
} sent_t;

typedef struct side_t {
    netgame_connection_t *c;
    sent_t sent[MODEL_MAX];
    int count;           /* records (capped: the model stops past MODEL_MAX) */
    int pending;         /* records not resolved */
    int first;           /* no unresolved record before this one */
    uint32_t next_sequence;
    int any_sent;
    double max_sample;
    int in_update, update_sends;
} side_t;

static struct {
    side_t side[2];
    datagram_t queue[2][QUEUE_MAX];
    int queued[2];
    double now;
    uint32_t max_sequence, first_sequence;
    int forged;    /* a forged datagram was taken: acks may be false */
    int current_from, current_index;
    int overflow;  /* the model ran out of records: stop checking it */
    int updates;
} h;

static const uint8_t ADDRESS[3][1] = {{'A'}, {'B'}, {'X'}};
static int trace; /* NETGAME_FUZZ_TRACE set: every event on stderr, to read a crash */

static void on_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    (void)address;
    (void)address_bytes;
    int from = (int)(intptr_t)context;
    side_t *s = &h.side[from];
    REQUIRE(bytes >= NETGAME_HEADER_BYTES && bytes <= NETGAME_MAX_PACKET_BYTES);
    netgame_header_t hd;
    REQUIRE(netgame_read_header(packet, bytes, &hd) == 0);
    REQUIRE(hd.protocol_id == NETGAME_DEFAULT_PROTOCOL_ID);
    REQUIRE(hd.sequence <= h.max_sequence && hd.ack <= h.max_sequence);
    for (int i = 0; i < 32; i++) {
        if (!((hd.ack_bits >> i) & 1u)) continue;
        uint32_t sequence = netgame_sequence_distance(hd.ack, (uint32_t)i + 1, h.max_sequence);
        REQUIRE(netgame_bit_index(sequence, hd.ack, h.max_sequence) == i);
    }
    /* One sequence after the other, across connections too. */
    if (s->any_sent) REQUIRE(hd.sequence == s->next_sequence);
    s->any_sent = 1;
    s->next_sequence = hd.sequence == h.max_sequence ? 0 : hd.sequence + 1;
    if (s->in_update) s->update_sends++;
    if (trace)
        fprintf(stderr, "%.3f %c sends seq %u ack %u bits %08x (%s)\n", h.now, "CS"[from], hd.sequence, hd.ack, hd.ack_bits,
                netgame_state_name(netgame_connection_state(s->c)));

    int index = -1;
    if (s->count < MODEL_MAX) {
        index = s->count++;
        s->sent[index] = (sent_t){hd.sequence, h.now, 0, 0, 0};
        s->pending++;
    } else {
        h.overflow = 1;
    }
    int to = 1 - from;
    if (h.queued[from] == QUEUE_MAX) { /* a full link drops the oldest */
        free(h.queue[from][0].data);
        memmove(&h.queue[from][0], &h.queue[from][1], (QUEUE_MAX - 1) * sizeof h.queue[from][0]);
        h.queued[from]--;
    }
    (void)to;
    datagram_t *d = &h.queue[from][h.queued[from]++];
    d->data = malloc((size_t)bytes);
    memcpy(d->data, packet, (size_t)bytes);
    d->bytes = bytes;
    d->from = from;
    d->index = index;
}

/* The pending record of side with this sequence that was sent first. */
static sent_t *find_pending(side_t *s, uint32_t sequence)
{
    while (s->first < s->count && s->sent[s->first].resolved) s->first++;
    for (int i = s->first; i < s->count; i++)
        if (!s->sent[i].resolved && s->sent[i].sequence == sequence) return &s->sent[i];
    return NULL;
}

static void on_acked(void *context, uint32_t sequence, double rtt)
{
    side_t *s = &h.side[(int)(intptr_t)context];
    if (trace) fprintf(stderr, "  %c: %u acked\n", "CS"[(int)(intptr_t)context], sequence);
    REQUIRE(rtt >= 0);
    if (rtt > s->max_sample) s->max_sample = rtt;
    if (h.overflow) return;
    sent_t *r = find_pending(s, sequence);
    REQUIRE(r != NULL);
    r->resolved = 1;
    s->pending--;
    /* A forged datagram (current_index < 0) may ack anything it likes. */
    if (h.forged || h.max_sequence != 0xFFFFFFFFu || h.current_index < 0) return;
    const sent_t *acking = &h.side[h.current_from].sent[h.current_index];
    REQUIRE(r->taken && r->taken_time <= acking->time);
}

static void on_lost(void *context, uint32_t sequence)
{
    side_t *s = &h.side[(int)(intptr_t)context];
    if (h.overflow) return;
    sent_t *r = find_pending(s, sequence);
    REQUIRE(r != NULL);
    r->resolved = 1;
    s->pending--;
}

/* Hands a datagram to side `to`, as from `from_address` (0 A, 1 B, 2 stranger). */
static void deliver(int to, int from_address, const uint8_t *data, int bytes, int from, int index)
{
    h.current_from = from;
    h.current_index = index;
    if (trace) {
        netgame_header_t hd = {0, 0, 0, 0};
        netgame_read_header(data, bytes, &hd);
        fprintf(stderr, "%.3f %c receives %d bytes from %c: seq %u ack %u bits %08x%s\n", h.now, "CS"[to], bytes,
                "ABX"[from_address], hd.sequence, hd.ack, hd.ack_bits, index < 0 ? " (forged)" : "");
    }
    int taken = netgame_connection_receive_packet(h.side[to].c, h.now, ADDRESS[from_address], 1, data, bytes);
    if (taken && index < 0) h.forged = 1;
    if (taken && index >= 0 && !h.overflow) {
        sent_t *r = &h.side[from].sent[index];
        if (!r->taken) {
            r->taken = 1;
            r->taken_time = h.now;
        }
    }
    h.current_index = -1;
}

static void deliver_queued(int from, int i, int remove)
{
    if (h.queued[from] == 0) return;
    i %= h.queued[from];
    datagram_t d = h.queue[from][i];
    deliver(1 - from, from, d.data, d.bytes, from, d.index);
    if (!remove) return;
    free(d.data);
    memmove(&h.queue[from][i], &h.queue[from][i + 1], (size_t)(h.queued[from] - i - 1) * sizeof d);
    h.queued[from]--;
}

static void drop_oldest(int from)
{
    if (h.queued[from] == 0) return;
    free(h.queue[from][0].data);
    memmove(&h.queue[from][0], &h.queue[from][1], (size_t)(h.queued[from] - 1) * sizeof h.queue[from][0]);
    h.queued[from]--;
}

static void update_both(double dt)
{
    h.updates++;
    h.now += dt;
    for (int s = 0; s < 2; s++) {
        side_t *side = &h.side[s];
        side->in_update = 1;
        side->update_sends = 0;
        netgame_connection_update(side->c, h.now);
        side->in_update = 0;
        /* 30 a second, after up to 0.1 s saved in Bad mode */
        REQUIRE(side->update_sends <= dt * NETGAME_GOOD_RATE + 3);
    }
}

static void check_counts(void)
{
    for (int s = 0; s < 2; s++) {
        const side_t *side = &h.side[s];
        const uint64_t *k = netgame_connection_counters(side->c);
        double rtt = netgame_connection_rtt(side->c);
        REQUIRE(rtt >= 0 && rtt <= side->max_sample + 1e-9);
        REQUIRE(netgame_connection_state(side->c) < NETGAME_STATE_COUNT);
        if (h.overflow) continue;
        REQUIRE(k[NETGAME_COUNTER_PACKETS_SENT] == (uint64_t)side->count);
        REQUIRE(k[NETGAME_COUNTER_PACKETS_ACKED] + k[NETGAME_COUNTER_PACKETS_LOST] + (uint64_t)side->pending ==
                k[NETGAME_COUNTER_PACKETS_SENT]);
    }
}


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memset(&h, 0, sizeof h);
    h.current_index = -1;
    trace = getenv("NETGAME_FUZZ_TRACE") != NULL;
    input_t r = {data, size, 0};
    uint8_t config_byte = next_byte(&r);
    static const uint32_t maxes[4] = {0xFFFFFFFFu, 31, 255, 65535};
    static const int payloads[4] = {0, 4, 32, 300};
    h.max_sequence = maxes[config_byte & 3];
    h.first_sequence = (config_byte & 4) ? h.max_sequence - 20 : 0;
    for (int s = 0; s < 2; s++) {
        netgame_config_t config;
        netgame_default_config(&config);
        config.role = s ? NETGAME_SERVER : NETGAME_CLIENT;
        config.max_sequence = h.max_sequence;
        config.first_sequence = h.first_sequence;
        config.flow_control = !(config_byte & 8);
        config.payload_bytes = payloads[(config_byte >> 4) & 3];
        if (s == 1 && (config_byte & 0x40)) config.fault_stop_acking_at = 2.0;
        config.timeout = (config_byte & 0x80) ? 1.0 : 10.0;
        config.send = on_send;
        config.acked = on_acked;
        config.lost = on_lost;
        config.context = (void *)(intptr_t)s;
        h.side[s].c = netgame_connection_create(&config);
        REQUIRE(h.side[s].c != NULL);
    }
    netgame_connection_start(h.side[1].c, 0, NULL, 0);
    netgame_connection_start(h.side[0].c, 0, ADDRESS[1], 1);

    static uint8_t buffer[INJECT_MAX + NETGAME_MAX_PACKET_BYTES];
    int ops = 0;
    while (r.at < r.size && ops++ < 5000) {
        uint8_t op = next_byte(&r) % 12;
        switch (op) {
        case 0: {
            uint8_t b = next_byte(&r);
            update_both(b == 255 ? 3.0 : b / 1000.0);
            break;
        }
        case 1: deliver_queued(0, 0, 1); break;
        case 2: drop_oldest(0); break;
        case 3: deliver_queued(0, next_byte(&r), 0); break;
        case 4: deliver_queued(1, 0, 1); break;
        case 5: drop_oldest(1); break;
        case 6: deliver_queued(1, next_byte(&r), 0); break;
        case 7: {
            uint8_t flags = next_byte(&r);
            int bytes = next_le16(&r) % (INJECT_MAX + 1);
            for (int i = 0; i < bytes; i++) buffer[i] = next_byte(&r);
            if ((flags & 4) && bytes >= 4) {
                buffer[0] = 0x11, buffer[1] = 0x22, buffer[2] = 0x33, buffer[3] = 0x44;
            }
            int to = (flags & 1) ? 0 : 1;
            deliver(to, (flags & 2) ? 2 : 1 - to, buffer, bytes, 1 - to, -1);
            break;
        }
        case 8:
        case 9: {
            int from = op == 8 ? 0 : 1;
            int i = next_byte(&r);
            int bit = next_le16(&r);
            if (h.queued[from] == 0) break;
            const datagram_t *d = &h.queue[from][i % h.queued[from]];
            memcpy(buffer, d->data, (size_t)d->bytes);
            buffer[(bit / 8) % d->bytes] ^= (uint8_t)(1u << (bit % 8));
            deliver(1 - from, from, buffer, d->bytes, from, -1);
            break;
        }
        case 10: {
            uint8_t b = next_byte(&r);
            static const uint8_t zeros[128];
            netgame_connection_send_packet(h.side[b & 1].c, h.now, zeros, b >> 1);
            break;
        }
        case 11: {
            int rounds = next_byte(&r);
            for (int k = 0; k < rounds && h.updates < UPDATE_BUDGET; k++) {
                while (h.queued[0]) deliver_queued(0, 0, 1);
                while (h.queued[1]) deliver_queued(1, 0, 1);
                update_both(0.033);
            }
            break;
        }
        }
        check_counts();
    }
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < h.queued[s]; i++) free(h.queue[s][i].data);
        netgame_connection_destroy(h.side[s].c);
    }
    return 0;
}
