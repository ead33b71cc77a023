/*
 * test_sender.c: the sender (docs/protocol.md, "Sender") in virtual time, asserting on the
 * exact packets it sends and on its counters. Time steps are powers of two
 * (1/64 s) where a test sits on a boundary, so that the times compared are
 * exact in binary floating point.
 */
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "test.h"

/* ---- a send callback that keeps every packet ---- */

typedef struct sent_t {
    int count, capacity;
    uint8_t **packets;
    int *sizes;
} sent_t;

static void capture(void *context, const uint8_t *packet, int bytes)
{
    sent_t *into = context;
    if (into->count == into->capacity) {
        into->capacity = into->capacity ? 2 * into->capacity : 64;
        into->packets = realloc(into->packets, (size_t)into->capacity * sizeof *into->packets);
        into->sizes = realloc(into->sizes, (size_t)into->capacity * sizeof *into->sizes);
        if (!into->packets || !into->sizes) abort();
    }
    into->packets[into->count] = malloc((size_t)bytes);
    if (!into->packets[into->count]) abort();
    memcpy(into->packets[into->count], packet, (size_t)bytes);
    into->sizes[into->count++] = bytes;
}

/* The packets of the test's sender: make_sender starts it empty, finish frees it. */
static sent_t sent;

static void sent_free(void)
{
    for (int i = 0; i < sent.count; i++) free(sent.packets[i]);
    free(sent.packets);
    free(sent.sizes);
    memset(&sent, 0, sizeof sent);
}

/* Decodes sent packet i as a slice (a CHECK fails if it is not one). */
static chunk_slice_packet_t sent_slice(int i)
{
    static chunk_packet_t packet;
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    chunk_slice_packet_t none = {0, -1, 0, 0, NULL};
    CHECK(i < sent.count);
    if (i >= sent.count) return none;
    CHECK_EQ(chunk_read_packet(&wire, sent.packets[i], sent.sizes[i], &packet), CHUNK_READ_OK);
    CHECK_EQ(packet.type, CHUNK_PACKET_SLICE);
    if (packet.type != CHUNK_PACKET_SLICE) return none;
    return packet.u.slice;
}

/* Checks that packets [from, sent.count) are exactly these slice ids of chunk_id. */
static void check_slice_ids(int from, uint16_t chunk_id, const int *ids, int n)
{
    CHECK_EQ(sent.count - from, n);
    for (int i = 0; i < n && from + i < sent.count; i++) {
        chunk_slice_packet_t slice = sent_slice(from + i);
        CHECK_EQ(slice.chunk_id, chunk_id);
        CHECK_EQ(slice.slice_id, ids[i]);
    }
}

/* ---- helpers ---- */

static uint8_t chunk_data[CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES];

static void fill_chunk(int seed)
{
    for (size_t i = 0; i < sizeof chunk_data; i++) chunk_data[i] = (uint8_t)(i * 31 + (size_t)seed * 17 + i / 1024);
}

/* The default configuration at this rate in bytes per second (0: unlimited). */
static chunk_sender_config_t config_at_rate(double rate)
{
    chunk_sender_config_t config;
    chunk_sender_default_config(&config);
    config.rate_bytes_per_second = rate;
    return config;
}

/* A sender of this configuration whose packets go to sent. */
static chunk_sender_t *make_sender(chunk_sender_config_t *config)
{
    sent_free();
    config->send = capture;
    config->context = &sent;
    return chunk_test_require(chunk_sender_create(config), "sender");
}

/* A sender of the default configuration at this rate. */
static chunk_sender_t *sender_at_rate(double rate)
{
    chunk_sender_config_t config = config_at_rate(rate);
    return make_sender(&config);
}

static void finish(chunk_sender_t *sender)
{
    chunk_sender_destroy(sender);
    sent_free();
}

static void give_ack(chunk_sender_t *sender, double time, uint16_t chunk_id, int num_slices, const char *bits)
{
    static uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    int bytes = chunk_test_write_ack(&wire, chunk_id, num_slices, bits, buffer, sizeof buffer);
    chunk_sender_receive_packet(sender, time, buffer, bytes);
}

#define COUNTER(s, c) (chunk_sender_counters(s)[CHUNK_SENDER_COUNTER_##c])
#define STEP (1.0 / 64)

/* ---- tests ---- */

/* Unlimited rate: each update is one lap over the unacked slices whose
 * resend delay has passed, and the packets carry the chunk's bytes. */
static void test_round_robin_unlimited(void)
{
    chunk_sender_t *s = sender_at_rate(0);
    fill_chunk(1);
    int size = 4 * 1024 + 100;
    CHECK_EQ(chunk_sender_queue_chunk(s, chunk_data, size), 0);
    CHECK(chunk_sender_busy(s));

    chunk_sender_update(s, 0);
    check_slice_ids(0, 0, (const int[]){0, 1, 2, 3, 4}, 5);
    for (int i = 0; i < 5; i++) {
        chunk_slice_packet_t slice = sent_slice(i);
        CHECK_EQ(slice.num_slices, 5);
        CHECK_EQ(slice.slice_bytes, i < 4 ? 1024 : 100);
        CHECK_EQ(sent.sizes[i], i < 4 ? 1037 : 114);
        CHECK(slice.data && memcmp(slice.data, chunk_data + i * 1024, (size_t)slice.slice_bytes) == 0);
    }
    /* Exact bytes of the last slice: the same fields through the codec. */
    static uint8_t expected[CHUNK_MAX_PACKET_BYTES];
    chunk_slice_packet_t last = {0, 4, 5, 100, chunk_data + 4096};
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    int bytes = chunk_write_slice_packet(&wire, &last, expected, sizeof expected);
    CHECK(bytes == sent.sizes[4] && memcmp(expected, sent.packets[4], (size_t)bytes) == 0);

    chunk_sender_update(s, 3 * STEP); /* within the 100 ms resend delay */
    CHECK_EQ(sent.count, 5);
    give_ack(s, 4 * STEP, 0, 5, "01010");
    chunk_sender_update(s, 7 * STEP); /* 109 ms */
    check_slice_ids(5, 0, (const int[]){0, 2, 4}, 3);
    CHECK_EQ(COUNTER(s, SLICES_SENT), 8);
    CHECK_EQ(COUNTER(s, SLICES_RESENT), 3);
    CHECK_EQ(COUNTER(s, SLICE_BYTES_SENT), 4 * 1037 + 114 + 2 * 1037 + 114);
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 2);
    finish(s);
}

/* With a budget the walk stops when the next slice costs more than the
 * accumulator holds, the leftover carries to the next update, and the next
 * update continues where the last one stopped. Costs: a full slice is
 * 1037 + 28 = 1065 bytes, the 100-byte last slice 114 + 28 = 142. */
static void test_round_robin_budget_and_leftover(void)
{
    chunk_sender_t *s = sender_at_rate(1600);
    fill_chunk(2);
    chunk_sender_queue_chunk(s, chunk_data, 4 * 1024 + 100);
    chunk_sender_update(s, 0); /* no time has passed: no budget */
    CHECK_EQ(sent.count, 0);
    chunk_sender_update(s, 1); /* 1600: slice 0, 535 left */
    check_slice_ids(0, 0, (const int[]){0}, 1);
    chunk_sender_update(s, 2); /* 2135: slices 1 and 2 (only thanks to the leftover), 5 left */
    check_slice_ids(1, 0, (const int[]){1, 2}, 2);
    chunk_sender_update(s, 3); /* 1605: slice 3, 540 left, and the cheap slice 4, 398 left */
    check_slice_ids(3, 0, (const int[]){3, 4}, 2);
    chunk_sender_update(s, 4); /* 1998: slice 0 again (its resend delay is long over), 933 left */
    check_slice_ids(5, 0, (const int[]){0}, 1);
    chunk_sender_update(s, 5); /* 2533: slices 1 and 2, 403 left */
    check_slice_ids(6, 0, (const int[]){1, 2}, 2);
    CHECK_EQ(COUNTER(s, SLICES_RESENT), 3);
    finish(s);
}

/* The article's rates over one second of 10 ms updates: 32 000 B/s pays for
 * floor(32000 / 1065) = 30 full slices, 125 000 B/s for 117. */
static void check_rate(double rate, int expected_slices)
{
    chunk_sender_t *s = sender_at_rate(rate);
    fill_chunk(3);
    chunk_sender_queue_chunk(s, chunk_data, 256 * 1024);
    for (int i = 0; i <= 100; i++) chunk_sender_update(s, i / 100.0);
    CHECK_EQ(sent.count, expected_slices);
    CHECK_EQ(COUNTER(s, SLICE_BYTES_SENT), 1037 * expected_slices);
    for (int i = 0; i < sent.count; i++) CHECK_EQ(sent_slice(i).slice_id, i);
    finish(s);
}

static void test_budget_rates(void)
{
    check_rate(32000, 30);
    check_rate(64000, 60);
    check_rate(125000, 117);
}

/* Unused budget is not banked: while every slice waits on its resend delay
 * the accumulator keeps at most one packet's cost, so when the slices fall
 * due they are paced (500 bytes per step: one slice per update at most), not
 * dumped at once from a second and a half of saved-up budget. */
static void test_budget_not_banked(void)
{
    chunk_sender_config_t config = config_at_rate(32000);
    config.resend_delay = 2.0;
    chunk_sender_t *s = make_sender(&config);
    fill_chunk(4);
    chunk_sender_queue_chunk(s, chunk_data, 10 * 1024);
    int most = 0;
    for (int step = 0; step <= 3 * 64; step++) {
        int before = sent.count;
        chunk_sender_update(s, step * STEP);
        if (sent.count - before > most) most = sent.count - before;
        if (step == 64) CHECK_EQ(sent.count, 10); /* the first lap is done well before 1 s */
    }
    CHECK_EQ(most, 1);
    CHECK(sent.count > 15); /* and resends did happen after 2 s */
    finish(s);
}

/* A slice is not resent before resend_delay (100 ms) has passed since it
 * was last sent; with an RTT estimate the delay is 1.25 * RTT. */
static void check_resend_times(double rtt, int fault_no_resend_delay, const int *expected_steps, int n)
{
    chunk_sender_config_t config = config_at_rate(0);
    config.rtt = rtt;
    config.fault_no_resend_delay = fault_no_resend_delay;
    chunk_sender_t *s = make_sender(&config);
    fill_chunk(5);
    chunk_sender_queue_chunk(s, chunk_data, 700); /* one slice */
    int found = 0;
    for (int step = 0; step <= 40; step++) {
        int before = sent.count;
        chunk_sender_update(s, step * STEP);
        CHECK(sent.count - before <= 1);
        if (sent.count > before) {
            CHECK(found < n);
            if (found < n) CHECK_EQ(step, expected_steps[found]);
            found++;
        }
    }
    CHECK_EQ(found, n);
    finish(s);
}

static void test_resend_delay(void)
{
    /* 100 ms = 6.4 steps: every 7th step. */
    check_resend_times(0, 0, (const int[]){0, 7, 14, 21, 28, 35}, 6);
    /* RTT 0.2 s: 1.25 * 0.2 = 0.25 s = exactly 16 steps (resent at >= delay). */
    check_resend_times(0.2, 0, (const int[]){0, 16, 32}, 3);
    /* The article's program: a resend every update. */
    int every[41];
    for (int i = 0; i <= 40; i++) every[i] = i;
    check_resend_times(0, 1, every, 41);
}

static void test_set_rtt(void)
{
    chunk_sender_t *s = sender_at_rate(0);
    chunk_sender_queue_chunk(s, chunk_data, 10);
    chunk_sender_set_rtt(s, 0.4); /* delay 0.5 s = 32 steps */
    chunk_sender_update(s, 0);
    chunk_sender_update(s, 31 * STEP);
    CHECK_EQ(sent.count, 1);
    chunk_sender_update(s, 32 * STEP);
    CHECK_EQ(sent.count, 2);
    chunk_sender_set_rtt(s, 0); /* cleared: back to 100 ms */
    chunk_sender_update(s, 38 * STEP);
    CHECK_EQ(sent.count, 2);
    chunk_sender_update(s, 39 * STEP);
    CHECK_EQ(sent.count, 3);
    finish(s);
}

/* Initial burst: a chunk up to initial_burst_bytes goes out whole at once,
 * whatever the budget; nothing more for 100 ms; then the paced round robin.
 * A larger chunk gets no burst. */
static void test_initial_burst(void)
{
    chunk_sender_config_t config = config_at_rate(32000); /* 500 bytes per step */
    config.initial_burst_bytes = 10 * 1024;
    chunk_sender_t *s = make_sender(&config);
    fill_chunk(6);
    chunk_sender_queue_chunk(s, chunk_data, 10 * 1024);
    chunk_sender_update(s, 0);
    check_slice_ids(0, 0, (const int[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10);
    CHECK_EQ(COUNTER(s, SLICES_RESENT), 0);
    for (int step = 1; step <= 6; step++) chunk_sender_update(s, step * STEP);
    CHECK_EQ(sent.count, 10);
    /* Step 7 (109 ms): wait and resend delay over; the accumulator holds at
     * most one packet's cost (1066) from the wait plus 500: one slice. */
    chunk_sender_update(s, 7 * STEP);
    check_slice_ids(10, 0, (const int[]){0}, 1);
    give_ack(s, 7 * STEP, 0, 10, NULL);
    CHECK(!chunk_sender_busy(s));

    /* 10 KiB + 1 byte: over the limit, so paced from the start. */
    chunk_sender_queue_chunk(s, chunk_data, 10 * 1024 + 1);
    chunk_sender_update(s, 8 * STEP);
    CHECK_EQ(sent.count, 11); /* 501 left over from chunk 0, + 500: < 1065 */
    chunk_sender_update(s, 10 * STEP);
    check_slice_ids(11, 1, (const int[]){0}, 1);
    finish(s);
}

/* No slice of chunk n+1 goes out before every slice of chunk n is acked. */
static void test_one_chunk_in_flight(void)
{
    chunk_sender_t *s = sender_at_rate(0);
    fill_chunk(7);
    chunk_sender_queue_chunk(s, chunk_data, 3 * 1024);
    chunk_sender_queue_chunk(s, chunk_data + 1, 2 * 1024);
    CHECK_EQ(COUNTER(s, CHUNKS_QUEUED), 2);
    CHECK_EQ(chunk_sender_chunk_id(s), 0);
    int step = 0;
    chunk_sender_update(s, step++ * STEP);
    give_ack(s, step * STEP, 0, 3, "110");
    for (; step < 30; step++) chunk_sender_update(s, step * STEP);
    for (int i = 0; i < sent.count; i++) {
        chunk_slice_packet_t slice = sent_slice(i);
        CHECK_EQ(slice.chunk_id, 0);
        CHECK(i < 3 || slice.slice_id == 2);
    }
    CHECK(sent.count > 4);
    CHECK_EQ(chunk_sender_chunk_id(s), 0);
    give_ack(s, step * STEP, 0, 3, "001"); /* the last slice: chunk 0 done */
    CHECK_EQ(COUNTER(s, CHUNKS_COMPLETED), 1);
    CHECK_EQ(chunk_sender_chunk_id(s), 1);
    CHECK(chunk_sender_busy(s));
    int before = sent.count;
    chunk_sender_update(s, ++step * STEP);
    check_slice_ids(before, 1, (const int[]){0, 1}, 2);
    CHECK(memcmp(sent_slice(before).data, chunk_data + 1, 1024) == 0);
    give_ack(s, step * STEP, 1, 2, "11");
    CHECK(!chunk_sender_busy(s));
    CHECK_EQ(chunk_sender_chunk_id(s), 2);
    before = sent.count;
    chunk_sender_update(s, 100);
    CHECK_EQ(sent.count, before);
    finish(s);
}

/* Acks are fuses: an ack with a bit cleared does not un-ack a slice, and
 * acks arriving out of order add up. */
static void test_ack_fuse(void)
{
    chunk_sender_t *s = sender_at_rate(0);
    chunk_sender_queue_chunk(s, chunk_data, 4 * 1024);
    chunk_sender_update(s, 0);
    give_ack(s, STEP, 0, 4, "1100");
    give_ack(s, STEP, 0, 4, "0000"); /* older, reordered */
    CHECK_EQ(COUNTER(s, ACKS_RECEIVED), 2);
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 2);
    chunk_sender_update(s, 7 * STEP);
    check_slice_ids(4, 0, (const int[]){2, 3}, 2);
    give_ack(s, 8 * STEP, 0, 4, "0010");
    give_ack(s, 8 * STEP, 0, 4, "1110"); /* nothing new */
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 3);
    chunk_sender_update(s, 14 * STEP);
    check_slice_ids(6, 0, (const int[]){3}, 1);
    give_ack(s, 15 * STEP, 0, 4, "0001");
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 4);
    CHECK_EQ(COUNTER(s, CHUNKS_COMPLETED), 1);
    CHECK(!chunk_sender_busy(s));
    finish(s);
}

/* Acks for another chunk id or slice count change nothing; so do invalid
 * datagrams and slice packets, each counted under its own name. */
static void test_ignored_packets(void)
{
    chunk_sender_config_t config = config_at_rate(0);
    config.first_chunk_id = 500;
    chunk_sender_t *s = make_sender(&config);
    give_ack(s, 0, 500, 3, NULL); /* nothing in flight yet */
    CHECK_EQ(COUNTER(s, ACKS_IGNORED), 1);
    chunk_sender_queue_chunk(s, chunk_data, 3 * 1024);
    chunk_sender_update(s, 0);
    give_ack(s, 0, 499, 3, NULL);
    give_ack(s, 0, 501, 3, NULL);
    give_ack(s, 0, 500, 4, NULL);
    give_ack(s, 0, 500, 2, NULL);
    CHECK_EQ(COUNTER(s, ACKS_IGNORED), 5);
    CHECK_EQ(COUNTER(s, ACKS_RECEIVED), 0);
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 0);

    /* A valid ack with its CRC broken, truncated, and one slice packet. */
    static uint8_t buffer[CHUNK_MAX_PACKET_BYTES];
    int bytes = chunk_test_write_ack(&config.wire, 500, 3, NULL, buffer, sizeof buffer);
    buffer[5] ^= 0x10;
    chunk_sender_receive_packet(s, 0, buffer, bytes);
    buffer[5] ^= 0x10;
    chunk_sender_receive_packet(s, 0, buffer, 3);
    chunk_sender_receive_packet(s, 0, sent.packets[0], sent.sizes[0]);
    CHECK_EQ(COUNTER(s, PACKETS_INVALID), 2);
    CHECK_EQ(chunk_sender_invalid_counters(s)[CHUNK_READ_BAD_CRC], 1);
    CHECK_EQ(chunk_sender_invalid_counters(s)[CHUNK_READ_TRUNCATED], 1);
    CHECK_EQ(chunk_sender_invalid_counters(s)[CHUNK_READ_OK], 0);
    CHECK_EQ(COUNTER(s, PACKETS_WRONG_TYPE), 1);
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 0);
    CHECK(chunk_sender_busy(s));
    chunk_sender_receive_packet(s, 0, buffer, bytes); /* the intact one completes it */
    CHECK_EQ(COUNTER(s, CHUNKS_COMPLETED), 1);
    finish(s);
}

/* fault_ignore_acks: acks are dropped, slices are resent forever. */
static void test_fault_ignore_acks(void)
{
    chunk_sender_config_t config = config_at_rate(0);
    config.fault_ignore_acks = 1;
    chunk_sender_t *s = make_sender(&config);
    chunk_sender_queue_chunk(s, chunk_data, 2 * 1024);
    for (int step = 0; step <= 64; step++) {
        chunk_sender_update(s, step * STEP);
        give_ack(s, step * STEP, 0, 2, NULL);
    }
    CHECK_EQ(COUNTER(s, CHUNKS_COMPLETED), 0);
    CHECK_EQ(COUNTER(s, SLICES_ACKED), 0);
    CHECK_EQ(COUNTER(s, ACKS_IGNORED), 65);
    CHECK_EQ(sent.count, 2 * 10); /* steps 0, 7, ..., 63 */
    CHECK(chunk_sender_busy(s));
    finish(s);
}

/* Chunk ids wrap from 65535 to 0. */
static void test_chunk_id_wrap(void)
{
    chunk_sender_config_t config = config_at_rate(0);
    config.first_chunk_id = 65535;
    chunk_sender_t *s = make_sender(&config);
    chunk_sender_queue_chunk(s, chunk_data, 5);
    chunk_sender_queue_chunk(s, chunk_data, 6);
    chunk_sender_update(s, 0);
    CHECK_EQ(sent_slice(0).chunk_id, 65535);
    give_ack(s, 0, 65535, 1, NULL);
    CHECK_EQ(chunk_sender_chunk_id(s), 0);
    chunk_sender_update(s, STEP);
    CHECK_EQ(sent_slice(1).chunk_id, 0);
    CHECK_EQ(sent_slice(1).slice_bytes, 6);
    finish(s);
}

/* The queue holds the chunk in flight plus queue_capacity waiting ones. */
static void test_queue_capacity(void)
{
    chunk_sender_config_t config = config_at_rate(0);
    config.queue_capacity = 2;
    chunk_sender_t *s = make_sender(&config);
    for (int i = 0; i < 3; i++) {
        chunk_data[0] = (uint8_t)i;
        CHECK_EQ(chunk_sender_queue_chunk(s, chunk_data, 1), 0);
    }
    CHECK_EQ(chunk_sender_queue_chunk(s, chunk_data, 1), -1);
    CHECK_EQ(COUNTER(s, CHUNKS_QUEUED), 3);
    for (int i = 0; i < 3; i++) {
        chunk_sender_update(s, i);
        chunk_slice_packet_t slice = sent_slice(sent.count - 1);
        CHECK_EQ(slice.chunk_id, i);
        CHECK(slice.data && slice.data[0] == i);
        give_ack(s, i, (uint16_t)i, 1, NULL);
        if (i == 0) CHECK_EQ(chunk_sender_queue_chunk(s, chunk_data, 1), 0); /* a slot is free again */
    }
    CHECK(chunk_sender_busy(s));
    CHECK_EQ(COUNTER(s, CHUNKS_COMPLETED), 3);
    finish(s);
}

/* The 32-slice variant: slices and acks in that format, largest chunk 32 KiB. */
static void test_variant_32(void)
{
    chunk_sender_config_t config = config_at_rate(0);
    config.wire.max_slices = 32;
    chunk_sender_t *s = make_sender(&config);
    chunk_sender_queue_chunk(s, chunk_data, 32 * 1024);
    chunk_sender_update(s, 0);
    CHECK_EQ(sent.count, 32);
    CHECK_EQ(sent.sizes[0], 1036);
    CHECK_EQ(sent.sizes[31], 1037); /* last slice: the 10-bit size pushes data to byte 9 */
    static uint8_t buffer[64];
    int bytes = chunk_test_write_ack(&config.wire, 0, 32, NULL, buffer, sizeof buffer);
    CHECK_EQ(bytes, 15);
    chunk_sender_receive_packet(s, 0, buffer, bytes);
    CHECK_EQ(COUNTER(s, CHUNKS_COMPLETED), 1);
    finish(s);
}

const chunk_test_t sender_tests[] = {
    {"round_robin_unlimited", test_round_robin_unlimited},
    {"round_robin_budget_and_leftover", test_round_robin_budget_and_leftover},
    {"budget_rates", test_budget_rates},
    {"budget_not_banked", test_budget_not_banked},
    {"resend_delay", test_resend_delay},
    {"set_rtt", test_set_rtt},
    {"initial_burst", test_initial_burst},
    {"one_chunk_in_flight", test_one_chunk_in_flight},
    {"ack_fuse", test_ack_fuse},
    {"ignored_packets", test_ignored_packets},
    {"fault_ignore_acks", test_fault_ignore_acks},
    {"chunk_id_wrap", test_chunk_id_wrap},
    {"queue_capacity", test_queue_capacity},
    {"variant_32", test_variant_32},
    {NULL, NULL},
};
