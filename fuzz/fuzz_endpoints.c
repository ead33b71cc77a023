/*
 * fuzz_endpoints: libFuzzer harness that drives a chunk sender and a chunk
 * receiver (sender.c, receiver.c) with arbitrary sequences of datagrams and
 * time steps.
 *
 * The two are wired through two queues that the input controls: A holds the
 * sender's slices on their way to the receiver, B the receiver's acks on
 * their way back. The input decides when time moves, which packets are
 * delivered, dropped, duplicated or reordered, mutates real packets, injects
 * arbitrary datagrams at either end, queues chunks and pops them.
 *
 * Input: a config byte, a first-chunk-id byte, then operations (one byte,
 * then its arguments; a missing byte reads as 0):
 *   config bits 0-1  0/3 the article's 256 x 1024, 1 the example program's
 *                    32 x 1024, 2 small: two more bytes give slice_size
 *                    1..64 and max_slices 1..64
 *          bit 2     sender initial burst on
 *          bit 3     receiver ready queue of 2 (else 1)
 *          bit 4     sender fault: no resend delay
 *          bits 5-6  ack interval 0.1, 0.05, 0, 0.3 s
 *          bit 7     sender rate unlimited (else 125 000 B/s)
 *   second byte b    bit 7: first chunk id 65532 + (b & 3), to cross the
 *                    wrap, else (b & 3) * 100; bits 2-3: sender RTT estimate
 *                    none, 0.03, 0.2, 1.5 s; bits 4 and 5 both set: sender
 *                    fault_ignore_acks; bit 6: sender queue of 0 (else 4)
 *   op % 13:  0 advance time by b ms (255: 5 s), update both ends
 *             1 deliver the oldest of A    2 drop the oldest of A
 *             3 deliver A[b] again (duplicate / reorder)
 *             4 deliver the oldest of B    5 drop the oldest of B
 *             6 deliver B[b] again
 *             7 inject: flags f (bit 0 fix the CRC, bit 1 to the sender),
 *               LE16 length, that many bytes
 *             8 mutate a copy of A[b]: flip bit LE16, f bit 0 fixes the CRC
 *             9 the same on B[b], to the sender
 *             10 queue a chunk of 1 + (LE16 | (h & 3) << 16 if h >= 0xf0)
 *                % capacity bytes, h the byte after LE16; a data seed byte
 *             11 pop every ready chunk
 *             12 run b rounds of: deliver all of A, update, deliver all of
 *                B, advance 10 ms (lets the fuzzer finish transfers cheaply)
 *
 * What it checks (abort on failure, so libFuzzer keeps the input):
 * - every datagram either end sends is one the wire format accepts, of the
 *   right type;
 * - the receiver's counters add up (each valid slice counted exactly once);
 * - acks: one sent from chunk_receiver_update comes at least ack_interval
 *   after the previous ack; one sent while a datagram is processed is the
 *   final ack of a chunk that has just completed (docs/protocol.md, "Final ack");
 *   for the two variants in the wild, ack bytes never exceed the bytes handed
 *   to the receiver;
 * - while no injected or mutated datagram has been accepted as a slice (the
 *   protocol has no authentication; a forged slice may carry forged data),
 *   every chunk popped is the next one queued, byte for byte, with its id:
 *   loss, duplicates, reordering, junk and forged acks may stall a transfer
 *   but never corrupt one.
 * ASan and UBSan check the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "harness.h"

enum { QUEUE_CAPACITY = 64, MAX_CHUNKS = 256, MAX_CHUNK_BYTES = 256 * 1024 };

/* Datagrams sent and delivered per input, at most: an unlimited rate with
 * no resend delay sends a whole chunk at every update (correctly: that is
 * the fault), and 255 rounds of that took 90 s for one input under ASan. An
 * input stops doing work here; what it found before counts. */
enum { WORK_LIMIT = 20000 };

typedef struct queue_t {
    int head, count;
    int bytes[QUEUE_CAPACITY];
    uint8_t data[QUEUE_CAPACITY][CHUNK_MAX_PACKET_BYTES];
} queue_t;

static struct {
    chunk_wire_config_t wire;
    double ack_interval;
    int check_amplification;
    double now;
    chunk_sender_t *sender;
    chunk_receiver_t *receiver;
    queue_t a, b;
    int in_receiver_update;
    int acks_sent, have_ack;
    double last_ack_time;
    uint64_t completed_seen;
    uint64_t bytes_to_receiver, ack_bytes;
    int tainted;
    long work;
    uint16_t first_id;
    int queued, popped;
    int sizes[MAX_CHUNKS];
    uint8_t seeds[MAX_CHUNKS];
} st;

static uint8_t scratch[CHUNK_MAX_PACKET_BYTES + 64 * 1024];
static uint8_t chunk_buffer[MAX_CHUNK_BYTES];
static chunk_packet_t parsed;


static void push(queue_t *q, const uint8_t *packet, int bytes)
{
    REQUIRE(bytes > 0 && bytes <= CHUNK_MAX_PACKET_BYTES);
    if (q->count == QUEUE_CAPACITY) return; /* a full link drops, like a router queue */
    int slot = (q->head + q->count) % QUEUE_CAPACITY;
    memcpy(q->data[slot], packet, (size_t)bytes);
    q->bytes[slot] = bytes;
    q->count++;
}

static void pop_front(queue_t *q)
{
    if (q->count == 0) return;
    q->head = (q->head + 1) % QUEUE_CAPACITY;
    q->count--;
}

/* The receiver's counters: each valid slice lands in exactly one bucket. */
static void check_receiver_counters(void)
{
    const uint64_t *c = chunk_receiver_counters(st.receiver);
    uint64_t sum = c[CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED] + c[CHUNK_RECEIVER_COUNTER_SLICES_DUPLICATE] +
                   c[CHUNK_RECEIVER_COUNTER_SLICES_STALE] + c[CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK] +
                   c[CHUNK_RECEIVER_COUNTER_SLICES_NUM_MISMATCH] + c[CHUNK_RECEIVER_COUNTER_SLICES_BAD_SIZE] +
                   c[CHUNK_RECEIVER_COUNTER_SLICES_NOT_READY];
    REQUIRE(sum == c[CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED]);
    REQUIRE(c[CHUNK_RECEIVER_COUNTER_CHUNKS_POPPED] <= c[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED]);
    REQUIRE(c[CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT] == st.ack_bytes);
    if (st.check_amplification) REQUIRE(st.ack_bytes <= st.bytes_to_receiver);
}

static void on_sender_send(void *context, const uint8_t *packet, int bytes)
{
    (void)context;
    REQUIRE(chunk_read_packet(&st.wire, packet, bytes, &parsed) == CHUNK_READ_OK);
    REQUIRE(parsed.type == CHUNK_PACKET_SLICE);
    st.work++;
    push(&st.a, packet, bytes);
}

static void on_receiver_send(void *context, const uint8_t *packet, int bytes)
{
    (void)context;
    REQUIRE(chunk_read_packet(&st.wire, packet, bytes, &parsed) == CHUNK_READ_OK);
    REQUIRE(parsed.type == CHUNK_PACKET_ACK);
    uint64_t completed = chunk_receiver_counters(st.receiver)[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED];
    if (st.in_receiver_update) {
        /* A periodic ack: rate limited against every ack before it. */
        REQUIRE(!st.have_ack || st.now - st.last_ack_time >= st.ack_interval);
    } else {
        /* Sent while a datagram was processed: only the final ack of a
         * chunk that this very datagram completed. */
        REQUIRE(completed == st.completed_seen + 1);
        for (int i = 0; i < parsed.u.ack.num_slices; i++) REQUIRE(parsed.u.ack.acked[i] == 1);
    }
    st.completed_seen = completed;
    st.have_ack = 1;
    st.last_ack_time = st.now;
    st.acks_sent++;
    st.work++;
    st.ack_bytes += (uint64_t)bytes;
    push(&st.b, packet, bytes);
}

static void to_receiver(const uint8_t *packet, int bytes, int injected)
{
    if (injected && chunk_read_packet(&st.wire, packet, bytes, &parsed) == CHUNK_READ_OK &&
        parsed.type == CHUNK_PACKET_SLICE)
        st.tainted = 1;
    /* Copied: the receiver must not depend on the queue slot staying put. */
    memcpy(scratch, packet, (size_t)bytes);
    st.work++;
    st.bytes_to_receiver += (uint64_t)bytes;
    uint64_t completed = chunk_receiver_counters(st.receiver)[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED];
    chunk_receiver_receive_packet(st.receiver, st.now, scratch, bytes);
    uint64_t after = chunk_receiver_counters(st.receiver)[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED];
    REQUIRE(after == completed || after == completed + 1);
    st.completed_seen = after;
    check_receiver_counters();
}

static void to_sender(const uint8_t *packet, int bytes)
{
    memcpy(scratch, packet, (size_t)bytes);
    st.work++;
    chunk_sender_receive_packet(st.sender, st.now, scratch, bytes);
}

static void update_both(void)
{
    chunk_sender_update(st.sender, st.now);
    st.in_receiver_update = 1;
    chunk_receiver_update(st.receiver, st.now);
    st.in_receiver_update = 0;
    check_receiver_counters();
}

/* Chunk k's bytes are pattern[offset(k) ...]: a copy and a memcmp instead
 * of per-byte loops, which the coverage instrumentation makes slow. */
static uint8_t pattern[MAX_CHUNK_BYTES + 256];
static int offset(int k) { return (k * 7 + st.seeds[k]) & 255; }

static void pop_all(void)
{
    uint16_t id;
    int size;
    int capacity = st.wire.slice_size * st.wire.max_slices;
    while ((size = chunk_receiver_pop_chunk(st.receiver, chunk_buffer, (int)sizeof chunk_buffer, &id)) > 0) {
        REQUIRE(size <= capacity);
        if (!st.tainted) {
            int k = st.popped;
            REQUIRE(k < st.queued);
            REQUIRE(id == (uint16_t)(st.first_id + k));
            REQUIRE(size == st.sizes[k]);
            REQUIRE(memcmp(chunk_buffer, pattern + offset(k), (size_t)size) == 0);
        }
        st.popped++;
    }
}

/* Flips one bit of a copy of queue entry index, optionally fixes the CRC. */
static int mutate(const queue_t *q, int index, int bit, int fix_crc)
{
    int slot = (q->head + index % q->count) % QUEUE_CAPACITY;
    int bytes = q->bytes[slot];
    memcpy(scratch, q->data[slot], (size_t)bytes);
    scratch[(bit / 8) % bytes] ^= (uint8_t)(1u << (bit & 7));
    if (fix_crc && bytes >= 4) {
        uint32_t crc = p2_packet_crc(st.wire.protocol_id, scratch, bytes);
        for (int i = 0; i < 4; i++) scratch[i] = (uint8_t)(crc >> (8 * i));
    }
    return bytes;
}

static uint8_t injected[64 * 1024];

/* Resets the state by hand: the queues are big and only their counts matter. */
static void reset_state(void)
{
    if (!pattern[1])
        for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (uint8_t)(i * 31 + (i >> 8) + 1);
    st.a.head = st.a.count = st.b.head = st.b.count = 0;
    st.now = 0;
    st.in_receiver_update = 0;
    st.acks_sent = st.have_ack = 0;
    st.completed_seen = 0;
    st.bytes_to_receiver = st.ack_bytes = 0;
    st.tainted = 0;
    st.work = 0;
    st.queued = st.popped = 0;
}

/* The wire, sender and receiver configurations the input's first two bytes
 * choose, and the endpoints made from them. Returns the largest chunk. */
static int create_endpoints(input_t *in)
{
    int config = next_byte(in);
    chunk_wire_default_config(&st.wire);
    if ((config & 3) == 1) st.wire.max_slices = 32;
    if ((config & 3) == 2) {
        st.wire.slice_size = 1 + next_byte(in) % 64;
        st.wire.max_slices = 1 + next_byte(in) % 64;
    }
    st.check_amplification = (config & 3) != 2;
    static const double intervals[4] = {0.1, 0.05, 0, 0.3};
    st.ack_interval = intervals[(config >> 5) & 3];
    int id_byte = next_byte(in);
    st.first_id = (uint16_t)((id_byte & 0x80) ? 65532 + (id_byte & 3) : (id_byte & 3) * 100);
    int capacity = st.wire.slice_size * st.wire.max_slices;

    chunk_sender_config_t sc;
    chunk_sender_default_config(&sc);
    sc.wire = st.wire;
    static const double rtts[4] = {0, 0.03, 0.2, 1.5};
    sc.queue_capacity = (id_byte & 0x40) ? 0 : 4;
    sc.rtt = rtts[(id_byte >> 2) & 3];
    sc.fault_ignore_acks = (id_byte & 0x30) == 0x30;
    sc.first_chunk_id = st.first_id;
    if (config & 4) sc.initial_burst_bytes = capacity;
    if (config & 16) sc.fault_no_resend_delay = 1;
    if (config & 128) sc.rate_bytes_per_second = 0;
    sc.send = on_sender_send;
    chunk_receiver_config_t rc;
    chunk_receiver_default_config(&rc);
    rc.wire = st.wire;
    rc.ack_interval = st.ack_interval;
    rc.first_chunk_id = st.first_id;
    rc.ready_queue_length = (config & 8) ? 2 : 1;
    rc.send = on_receiver_send;
    st.sender = chunk_sender_create(&sc);
    st.receiver = chunk_receiver_create(&rc);
    REQUIRE(st.sender && st.receiver);
    return capacity;
}

/* Delivers queue entry b (modulo its length) of A to the receiver or of B
 * to the sender, leaving it queued: a duplicate. */
static void deliver_copy(queue_t *q, int b)
{
    if (!q->count) return;
    int slot = (q->head + b % q->count) % QUEUE_CAPACITY;
    if (q == &st.a) to_receiver(q->data[slot], q->bytes[slot], 0);
    else to_sender(q->data[slot], q->bytes[slot]);
}

/* A datagram of the input's own bytes, to the sender or the receiver. */
static void inject(input_t *in)
{
    int flags = next_byte(in);
    int length = next_le16(in);
    int n = 0;
    while (n < length && in->at < in->size) injected[n++] = in->data[in->at++];
    if ((flags & 1) && n >= 4) {
        uint32_t crc = p2_packet_crc(st.wire.protocol_id, injected, n);
        for (int i = 0; i < 4; i++) injected[i] = (uint8_t)(crc >> (8 * i));
    }
    /* Exactly n bytes on the heap, so ASan sees a read past the end. */
    uint8_t *copy = malloc(n ? (size_t)n : 1);
    REQUIRE(copy);
    memcpy(copy, injected, (size_t)n);
    if (flags & 2) {
        chunk_sender_receive_packet(st.sender, st.now, copy, n);
    } else {
        if (chunk_read_packet(&st.wire, copy, n, &parsed) == CHUNK_READ_OK && parsed.type == CHUNK_PACKET_SLICE)
            st.tainted = 1;
        st.bytes_to_receiver += (uint64_t)n;
        chunk_receiver_receive_packet(st.receiver, st.now, copy, n);
        st.completed_seen = chunk_receiver_counters(st.receiver)[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED];
        check_receiver_counters();
    }
    free(copy);
}

/* A queued datagram with one bit flipped, to the receiver (A's) or the sender (B's). */
static void deliver_mutated(input_t *in, queue_t *q)
{
    int index = next_byte(in), bit = next_le16(in), flags = next_byte(in);
    if (!q->count) return;
    int bytes = mutate(q, index, bit, flags & 1);
    static uint8_t copy[CHUNK_MAX_PACKET_BYTES];
    memcpy(copy, scratch, (size_t)bytes);
    if (q == &st.a) to_receiver(copy, bytes, 1);
    else to_sender(copy, bytes);
}

/* Queues a chunk of the pattern, of the size the input says. */
static void queue_chunk(input_t *in, int capacity)
{
    /* Mostly up to 64 KiB: chunks of 256 KiB cost 1000 times more
     * executions per second and find little that 64 slices do not. */
    int lo = next_le16(in), hi = next_byte(in);
    int chunk_size = 1 + (lo | ((hi & 0xf0) == 0xf0 ? (hi & 3) << 16 : 0)) % capacity;
    int seed = next_byte(in);
    if (st.queued == MAX_CHUNKS) return;
    st.seeds[st.queued] = (uint8_t)seed;
    if (chunk_sender_queue_chunk(st.sender, pattern + offset(st.queued), chunk_size) == 0) {
        st.sizes[st.queued] = chunk_size;
        st.queued++;
    }
}

/* Rounds of a perfect network: everything queued delivered, 10 ms apart. */
static void run_rounds(input_t *in)
{
    int rounds = next_byte(in);
    for (int r = 0; r < rounds && st.work < WORK_LIMIT; r++) {
        while (st.a.count) {
            /* Copy first: delivering may make the receiver ack, which
             * does not touch A, but keep the rule simple. */
            to_receiver(st.a.data[st.a.head], st.a.bytes[st.a.head], 0);
            pop_front(&st.a);
        }
        update_both();
        while (st.b.count) {
            to_sender(st.b.data[st.b.head], st.b.bytes[st.b.head]);
            pop_front(&st.b);
        }
        st.now += 0.01;
        update_both();
        pop_all();
    }
}

/* One operation the input chooses. */
static void step(input_t *in, int op, int capacity)
{
    switch (op) {
    case 0: {
        int b = next_byte(in);
        st.now += b == 255 ? 5.0 : b * 0.001;
        update_both();
        break;
    }
    case 1:
        if (st.a.count) {
            to_receiver(st.a.data[st.a.head], st.a.bytes[st.a.head], 0);
            pop_front(&st.a);
        }
        break;
    case 2: pop_front(&st.a); break;
    case 3: deliver_copy(&st.a, next_byte(in)); break;
    case 4:
        if (st.b.count) {
            to_sender(st.b.data[st.b.head], st.b.bytes[st.b.head]);
            pop_front(&st.b);
        }
        break;
    case 5: pop_front(&st.b); break;
    case 6: deliver_copy(&st.b, next_byte(in)); break;
    case 7: inject(in); break;
    case 8: deliver_mutated(in, &st.a); break;
    case 9: deliver_mutated(in, &st.b); break;
    case 10: queue_chunk(in, capacity); break;
    case 11: pop_all(); break;
    case 12: run_rounds(in); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t in = {data, size, 0};
    reset_state();
    int capacity = create_endpoints(&in);
    while (in.at < in.size && st.work < WORK_LIMIT) step(&in, next_byte(&in) % 13, capacity);
    pop_all();
    chunk_sender_destroy(st.sender);
    chunk_receiver_destroy(st.receiver);
    return 0;
}
