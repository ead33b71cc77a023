/*
 * test_receiver.c: the receiver (docs/protocol.md, "Receiver") in virtual time, asserting on
 * the exact acks it sends and on its counters; and a sender wired straight to
 * a receiver, without the simulator.
 */
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "test.h"
#include "util.h"

/* ---- acks the receiver sent ---- */

#define MAX_ACKS 4096

typedef struct acks_t {
    int count;
    int sizes[MAX_ACKS];
    uint8_t packets[MAX_ACKS][64];
} acks_t;

/* The acks of the test's receiver: make_receiver starts it empty. */
static acks_t acks;

static void capture_ack(void *context, const uint8_t *packet, int bytes)
{
    acks_t *into = context;
    CHECK(bytes <= 64);
    CHECK(into->count < MAX_ACKS);
    if (bytes > 64 || into->count >= MAX_ACKS) return;
    memcpy(into->packets[into->count], packet, (size_t)bytes);
    into->sizes[into->count++] = bytes;
}

/* Checks that ack i is exactly the ack of chunk_id with these bits ("1" per
 * acked slice; NULL for all ones), comparing bytes with the codec's. */
static void check_ack(int i, uint16_t chunk_id, int num_slices, const char *bits)
{
    uint8_t expected[64];
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    int bytes = chunk_test_write_ack(&wire, chunk_id, num_slices, bits, expected, sizeof expected);
    CHECK(i < acks.count);
    if (i >= acks.count) return;
    CHECK_EQ(acks.sizes[i], bytes);
    CHECK(acks.sizes[i] == bytes && memcmp(acks.packets[i], expected, (size_t)bytes) == 0);
}

/* ---- slices to feed it ---- */

static uint8_t chunk_data[CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES];
static uint8_t popped[CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES];

static void fill_chunk(int seed)
{
    for (size_t i = 0; i < sizeof chunk_data; i++) chunk_data[i] = (uint8_t)(i * 13 + (size_t)seed * 101 + i / 977);
}

/* Delivers slice slice_id of a chunk of size bytes (data from chunk_data),
 * claiming num_slices (0: the true count). */
static void give_slice(chunk_receiver_t *r, double time, uint16_t chunk_id, int size, int slice_id, int num_slices)
{
    static uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    int true_count = (size + 1023) / 1024;
    if (num_slices == 0) num_slices = true_count;
    int bytes_in_slice = slice_id == num_slices - 1 ? size - slice_id * 1024 : 1024;
    if (bytes_in_slice < 1 || bytes_in_slice > 1024) bytes_in_slice = 1024; /* a lie about the count */
    chunk_slice_packet_t slice = {chunk_id, slice_id, num_slices, bytes_in_slice, chunk_data + slice_id * 1024};
    int bytes = chunk_write_slice_packet(&wire, &slice, buffer, sizeof buffer);
    chunk_receiver_receive_packet(r, time, buffer, bytes);
}

static void give_chunk(chunk_receiver_t *r, double time, uint16_t chunk_id, int size)
{
    for (int i = 0; i < (size + 1023) / 1024; i++) give_slice(r, time, chunk_id, size, i, 0);
}

/* A receiver of this configuration whose acks go to acks. */
static chunk_receiver_t *make_receiver(chunk_receiver_config_t *config)
{
    memset(&acks, 0, sizeof acks);
    config->send = capture_ack;
    config->context = &acks;
    return chunk_test_require(chunk_receiver_create(config), "receiver");
}

/* A receiver of the default configuration that expects first_chunk_id first. */
static chunk_receiver_t *receiver_from(uint16_t first_chunk_id)
{
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    config.first_chunk_id = first_chunk_id;
    return make_receiver(&config);
}

#define COUNTER(r, c) (chunk_receiver_counters(r)[CHUNK_RECEIVER_COUNTER_##c])
#define STEP (1.0 / 1024)

/* ---- tests ---- */

/* A chunk in order: periodic acks carry the bitfield, the final ack is
 * immediate and all ones, the popped chunk equals what was sent, and the
 * expected chunk id advances. */
static void test_receive_chunk(void)
{
    chunk_receiver_t *r = receiver_from(0);
    fill_chunk(1);
    int size = 3 * 1024 + 10;
    chunk_receiver_update(r, 0);
    CHECK_EQ(acks.count, 0); /* nothing arrived: no ack */
    give_slice(r, 0, 0, size, 1, 0);
    chunk_receiver_update(r, 0);
    check_ack(0, 0, 4, "0100");
    give_slice(r, 0.05, 0, size, 3, 0);
    chunk_receiver_update(r, 0.05); /* interval not over */
    CHECK_EQ(acks.count, 1);
    chunk_receiver_update(r, 0.1);
    check_ack(1, 0, 4, "0101");
    give_slice(r, 0.12, 0, size, 0, 0);
    CHECK_EQ(acks.count, 2);
    give_slice(r, 0.13, 0, size, 2, 0); /* completes: final ack at once, inside the interval */
    CHECK_EQ(acks.count, 3);
    check_ack(2, 0, 4, NULL);
    chunk_receiver_update(r, 0.5);
    CHECK_EQ(acks.count, 3); /* no ack is due after the final one */

    uint16_t id = 99;
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), size);
    CHECK_EQ(id, 0);
    CHECK(memcmp(popped, chunk_data, (size_t)size) == 0);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 0);
    CHECK_EQ(COUNTER(r, SLICES_RECEIVED), 4);
    CHECK_EQ(COUNTER(r, SLICES_ACCEPTED), 4);
    CHECK_EQ(COUNTER(r, CHUNKS_COMPLETED), 1);
    CHECK_EQ(COUNTER(r, CHUNKS_POPPED), 1);
    CHECK_EQ(COUNTER(r, ACKS_SENT), 3);
    CHECK_EQ(COUNTER(r, ACK_BYTES_SENT), 3 * 12);

    give_chunk(r, 1, 1, 700);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 700);
    CHECK_EQ(id, 1);
    chunk_receiver_destroy(r);
}

/* A flood of duplicates for 1 s (one every 1/1024 s, update after each)
 * gets one ack per 100 ms: at steps 0, 103, 206, ..., 927 = 10 acks, and
 * far fewer bytes back than came in. */
static void test_ack_rate_limit_under_flood(void)
{
    chunk_receiver_t *r = receiver_from(0);
    fill_chunk(2);
    uint64_t bytes_in = 0;
    for (int step = 0; step < 1024; step++) {
        give_slice(r, step * STEP, 0, 8 * 1024, step % 2, 0);
        bytes_in += 1037;
        chunk_receiver_update(r, step * STEP);
        if (acks.count > 0 && step == 0) check_ack(0, 0, 8, "10000000");
    }
    CHECK_EQ(acks.count, 10);
    check_ack(9, 0, 8, "11000000");
    CHECK_EQ(COUNTER(r, SLICES_DUPLICATE), 1022);
    CHECK(COUNTER(r, ACK_BYTES_SENT) * 100 < bytes_in);
    chunk_receiver_destroy(r);
}

/* No amplification: 15-byte slices (the 1-byte last slice of a chunk that
 * claims 256 slices) arriving every 1/8 s, slower than the ack interval,
 * earn a 44-byte ack only once three of them have paid for it: acks after
 * slices 3, 6, 9, 12 and 15 of 16, never more bytes out than in. */
static void test_no_amplification(void)
{
    chunk_receiver_t *r = receiver_from(0);
    int size = 255 * 1024 + 1;
    for (int k = 0; k < 16; k++) {
        give_slice(r, k / 8.0, 0, size, 255, 0);
        int before = acks.count;
        chunk_receiver_update(r, k / 8.0);
        CHECK_EQ(acks.count - before, k % 3 == 2);
    }
    CHECK_EQ(acks.count, 5);
    static char bits[257];
    memset(bits, '0', 255);
    bits[255] = '1';
    check_ack(0, 0, 256, bits);
    CHECK_EQ(acks.sizes[0], 44);
    CHECK_EQ(COUNTER(r, ACK_BYTES_SENT), 5 * 44);
    CHECK(COUNTER(r, ACK_BYTES_SENT) <= 16 * 15);
    chunk_receiver_destroy(r);
}

/* Slices that are ignored never make an ack due: a flood of garbage, of
 * slices for other chunks or with the wrong count gets nothing back. */
static void test_no_ack_for_ignored_slices(void)
{
    chunk_receiver_t *r = receiver_from(10);
    uint8_t junk[64];
    for (int step = 0; step < 1024; step++) {
        double t = step * STEP;
        give_slice(r, t, 11, 4096, 0, 0); /* a future chunk */
        give_slice(r, t, 9, 4096, 0, 0);  /* an old one, never completed here */
        memset(junk, step & 0xff, sizeof junk);
        chunk_receiver_receive_packet(r, t, junk, step % 64);
        chunk_receiver_update(r, t);
    }
    CHECK_EQ(acks.count, 0);
    CHECK_EQ(COUNTER(r, SLICES_WRONG_CHUNK), 1024);
    CHECK_EQ(COUNTER(r, SLICES_STALE), 1024);
    CHECK_EQ(COUNTER(r, PACKETS_INVALID), 1024);
    /* then the widening attack: chunk 10 announced with 2 slices, then
     * slices claiming 256 */
    give_slice(r, 1, 10, 2048, 0, 0);
    for (int i = 1; i < 256; i++) give_slice(r, 1, 10, 256 * 1024, i, 256);
    CHECK_EQ(COUNTER(r, SLICES_NUM_MISMATCH), 255);
    CHECK_EQ(COUNTER(r, SLICES_ACCEPTED), 1);
    chunk_receiver_update(r, 1);
    check_ack(0, 10, 2, "10");
    chunk_receiver_destroy(r);
}

/* The sender missed the final ack and keeps resending slices of the chunk
 * just completed: the receiver answers with the all-ones ack, once per
 * interval however many arrive. */
static void test_lost_final_ack(void)
{
    chunk_receiver_t *r = receiver_from(0);
    fill_chunk(3);
    give_chunk(r, 0, 0, 2000);
    CHECK_EQ(acks.count, 1); /* the final ack */
    for (int step = 0; step < 512; step++) {
        give_slice(r, step * STEP, 0, 2000, step % 2, 0);
        chunk_receiver_update(r, step * STEP);
    }
    /* Final ack at 0; then at steps 103, 206, 309, 412. */
    CHECK_EQ(acks.count, 5);
    for (int i = 0; i < acks.count; i++) check_ack(i, 0, 2, NULL);
    CHECK_EQ(COUNTER(r, SLICES_STALE), 512);
    chunk_receiver_update(r, 1); /* answers the slices since step 412 */
    CHECK_EQ(acks.count, 6);
    /* Slices of chunk 0 with another count are stale too, but unanswered. */
    int before = acks.count;
    give_slice(r, 2, 0, 3000, 0, 0);
    chunk_receiver_update(r, 2);
    CHECK_EQ(acks.count, before);
    /* Once the next chunk is under way its bitfield wins over the all-ones. */
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, NULL), 2000);
    give_slice(r, 3, 0, 2000, 0, 0);
    give_slice(r, 3, 1, 4096, 2, 0);
    chunk_receiver_update(r, 3);
    check_ack(before, 1, 4, "0010");
    chunk_receiver_destroy(r);
}

/* The ready queue (length 1): while a completed chunk waits to be popped,
 * slices of the next chunk are discarded and unanswered; after the pop they
 * are taken. With length 2 two chunks complete before a pop. */
static void test_ready_queue(void)
{
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    chunk_receiver_t *r = make_receiver(&config);
    fill_chunk(4);
    give_chunk(r, 0, 0, 1500);
    CHECK_EQ(acks.count, 1);
    give_chunk(r, 0.2, 1, 1500);
    chunk_receiver_update(r, 0.3);
    CHECK_EQ(COUNTER(r, SLICES_NOT_READY), 2);
    CHECK_EQ(COUNTER(r, CHUNKS_COMPLETED), 1);
    CHECK_EQ(acks.count, 1);
    uint16_t id;
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 1500);
    CHECK_EQ(id, 0);
    give_chunk(r, 0.4, 1, 1500);
    CHECK_EQ(COUNTER(r, CHUNKS_COMPLETED), 2);
    check_ack(1, 1, 2, NULL);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 1500);
    CHECK_EQ(id, 1);
    chunk_receiver_destroy(r);

    config.ready_queue_length = 2;
    r = make_receiver(&config);
    give_chunk(r, 0, 0, 100);
    fill_chunk(5);
    give_chunk(r, 0, 1, 200);
    give_chunk(r, 0, 2, 300);
    CHECK_EQ(COUNTER(r, CHUNKS_COMPLETED), 2);
    CHECK_EQ(COUNTER(r, SLICES_NOT_READY), 1);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 100);
    CHECK_EQ(id, 0);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 200);
    CHECK_EQ(id, 1);
    CHECK(memcmp(popped, chunk_data, 200) == 0);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 0);
    chunk_receiver_destroy(r);
}

/* A slice whose size is wrong cannot pass the codec (a non-last slice has
 * no size field, a last one is 1..SliceSize): oversize and short slices
 * are dropped as invalid, and the chunk still completes intact. */
static void test_bad_size_slices(void)
{
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    chunk_receiver_t *r = make_receiver(&config);
    fill_chunk(6);
    static uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    chunk_slice_packet_t slice = {0, 0, 2, 1024, chunk_data};
    int bytes = chunk_write_slice_packet(&config.wire, &slice, buffer, sizeof buffer);
    /* Non-last slice 100 bytes short (end check moved up): truncated. */
    memmove(buffer + 9 + 924, buffer + 9 + 1024, 4);
    chunk_test_fix_crc(config.wire.protocol_id, buffer, bytes - 100);
    chunk_receiver_receive_packet(r, 0, buffer, bytes - 100);
    CHECK_EQ(chunk_receiver_invalid_counters(r)[CHUNK_READ_TRUNCATED], 1);
    /* Last slice with 1100 bytes of data behind a 1024-byte size field. */
    chunk_slice_packet_t last = {0, 1, 2, 1024, chunk_data + 1024};
    bytes = chunk_write_slice_packet(&config.wire, &last, buffer, sizeof buffer);
    memset(buffer + bytes - 4, 0xab, 80);
    memcpy(buffer + bytes + 76, (const uint8_t[]){0xe2, 0xac, 0x08, 0x99}, 4);
    chunk_test_fix_crc(config.wire.protocol_id, buffer, bytes + 80);
    chunk_receiver_receive_packet(r, 0, buffer, bytes + 80);
    CHECK_EQ(chunk_receiver_invalid_counters(r)[CHUNK_READ_BAD_END_CHECK], 1);
    CHECK_EQ(COUNTER(r, PACKETS_INVALID), 2);
    CHECK_EQ(COUNTER(r, SLICES_RECEIVED), 0);
    CHECK_EQ(COUNTER(r, SLICES_BAD_SIZE), 0);
    /* An ack sent to a receiver. */
    bytes = chunk_test_write_ack(&config.wire, 0, 2, "00", buffer, sizeof buffer);
    chunk_receiver_receive_packet(r, 0, buffer, bytes);
    CHECK_EQ(COUNTER(r, PACKETS_WRONG_TYPE), 1);
    give_chunk(r, 0, 0, 2048);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, NULL), 2048);
    CHECK(memcmp(popped, chunk_data, 2048) == 0);
    chunk_receiver_destroy(r);
}

/* Chunk ids wrap: 65535 then 0; a slice of 65535 after that is stale and
 * gets the all-ones ack, one of 1 is the next chunk's, not stale. */
static void test_chunk_id_wrap(void)
{
    chunk_receiver_t *r = receiver_from(65535);
    fill_chunk(7);
    uint16_t id;
    give_chunk(r, 0, 65535, 10);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 10);
    CHECK_EQ(id, 65535);
    give_slice(r, 1, 1, 10, 0, 0);
    CHECK_EQ(COUNTER(r, SLICES_WRONG_CHUNK), 1);
    give_slice(r, 1, 65535, 10, 0, 0);
    CHECK_EQ(COUNTER(r, SLICES_STALE), 1);
    chunk_receiver_update(r, 1);
    check_ack(1, 65535, 1, NULL);
    give_chunk(r, 2, 0, 20);
    CHECK_EQ(chunk_receiver_pop_chunk(r, popped, sizeof popped, &id), 20);
    CHECK_EQ(id, 0);
    chunk_receiver_destroy(r);
}

/* ---- a sender wired straight to a receiver ---- */

typedef struct wire_t {
    chunk_sender_t *sender;
    chunk_receiver_t *receiver;
    cs_rng_t rng;
    double loss, time;
    uint64_t slices_dropped, acks_dropped;
} wire_t;

/* Whether a datagram gets through the loss; one lost is counted in *dropped. */
static int survives(wire_t *w, uint64_t *dropped)
{
    if (cs_rng_uniform(&w->rng) >= w->loss) return 1;
    (*dropped)++;
    return 0;
}

static void slice_to_receiver(void *context, const uint8_t *packet, int bytes)
{
    wire_t *w = context;
    if (survives(w, &w->slices_dropped)) chunk_receiver_receive_packet(w->receiver, w->time, packet, bytes);
}

static void ack_to_sender(void *context, const uint8_t *packet, int bytes)
{
    wire_t *w = context;
    if (survives(w, &w->acks_dropped)) chunk_sender_receive_packet(w->sender, w->time, packet, bytes);
}

/* Sends `chunks` chunks (256 KiB, 1 byte, then random sizes) with loss in
 * both directions; checks each arrives intact, in order. Returns the
 * virtual time taken. */
static double run_direct(uint64_t seed, double loss, int chunks)
{
    static uint8_t sent[8][256 * 1024];
    static wire_t w;
    memset(&w, 0, sizeof w);
    cs_rng_seed(&w.rng, seed);
    w.loss = loss;
    chunk_sender_config_t sc;
    chunk_sender_default_config(&sc);
    sc.rate_bytes_per_second = 1000000;
    sc.first_chunk_id = 65533; /* crosses the wrap */
    sc.queue_capacity = 7;
    sc.send = slice_to_receiver;
    sc.context = &w;
    chunk_receiver_config_t rc;
    chunk_receiver_default_config(&rc);
    rc.first_chunk_id = 65533;
    rc.send = ack_to_sender;
    rc.context = &w;
    w.sender = chunk_test_require(chunk_sender_create(&sc), "sender");
    w.receiver = chunk_test_require(chunk_receiver_create(&rc), "receiver");

    int sizes[8], queued = 0, received = 0;
    /* Until the sender too is done: its final ack may have been lost, and
     * then only the all-ones answer to its resends finishes it. */
    while ((received < chunks || chunk_sender_busy(w.sender)) && w.time < 600) {
        while (queued < chunks && queued - received < 8) {
            int size;
            uint64_t pick = cs_rng_next(&w.rng) % 4;
            if (queued == 0) size = 256 * 1024; /* the largest chunk and the smallest first */
            else if (queued == 1) size = 1;
            else if (pick == 0) size = 1 + (int)(cs_rng_next(&w.rng) % 1024);
            else if (pick == 1) size = 1024 * (1 + (int)(cs_rng_next(&w.rng) % 4));
            else size = 1 + (int)(cs_rng_next(&w.rng) % (256 * 1024));
            uint8_t *slot = sent[queued % 8];
            for (int i = 0; i < size; i++) slot[i] = (uint8_t)cs_rng_next(&w.rng);
            if (chunk_sender_queue_chunk(w.sender, slot, size) != 0) break;
            sizes[queued % 8] = size;
            queued++;
        }
        chunk_sender_update(w.sender, w.time);
        chunk_receiver_update(w.receiver, w.time);
        uint16_t id;
        int size;
        while ((size = chunk_receiver_pop_chunk(w.receiver, popped, sizeof popped, &id)) > 0) {
            CHECK_EQ(id, (uint16_t)(65533 + received));
            CHECK_EQ(size, sizes[received % 8]);
            CHECK(size == sizes[received % 8] && memcmp(popped, sent[received % 8], (size_t)size) == 0);
            received++;
        }
        w.time += 1.0 / 128;
    }
    CHECK_EQ(received, chunks);
    const uint64_t *sender = chunk_sender_counters(w.sender), *receiver = chunk_receiver_counters(w.receiver);
    CHECK_EQ(sender[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED], (uint64_t)chunks);
    CHECK_EQ(receiver[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED], (uint64_t)chunks);
    CHECK_EQ(sender[CHUNK_SENDER_COUNTER_PACKETS_INVALID], 0);
    CHECK_EQ(receiver[CHUNK_RECEIVER_COUNTER_PACKETS_INVALID], 0);
    CHECK_EQ(sender[CHUNK_SENDER_COUNTER_SLICES_SENT], w.slices_dropped + receiver[CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED]);
    if (loss > 0) CHECK(sender[CHUNK_SENDER_COUNTER_SLICES_RESENT] > 0);
    CHECK(!chunk_sender_busy(w.sender));
    chunk_sender_destroy(w.sender);
    chunk_receiver_destroy(w.receiver);
    return w.time;
}

static void test_direct_sender_to_receiver(void)
{
    /* Lossless at 1 MB/s: the bytes on the wire over the rate, plus a little. */
    double t = run_direct(1, 0, 30);
    CHECK(t < 5);
    run_direct(2, 0.2, 20);
    run_direct(3, 0.5, 10);
}

const chunk_test_t receiver_tests[] = {
    {"receive_chunk", test_receive_chunk},
    {"ack_rate_limit_under_flood", test_ack_rate_limit_under_flood},
    {"no_ack_for_ignored_slices", test_no_ack_for_ignored_slices},
    {"no_amplification", test_no_amplification},
    {"lost_final_ack", test_lost_final_ack},
    {"ready_queue", test_ready_queue},
    {"bad_size_slices", test_bad_size_slices},
    {"chunk_id_wrap", test_chunk_id_wrap},
    {"direct_sender_to_receiver", test_direct_sender_to_receiver},
    {NULL, NULL},
};
