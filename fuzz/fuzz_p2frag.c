/*
 * fuzz_p2frag: libFuzzer harness that drives the reassembling receiver
 * (p2frag_receiver.c, and through it the codec p2frag_wire.c) with arbitrary
 * sequences of fragments, regular packets and junk.
 *
 * Input: a config byte, then operations (one byte, then its arguments; a
 * missing byte reads as 0). Sequences are `base + (int8_t)d`, so that
 * operations land near each other, in the same slots and across the window.
 *   config     bit 7 set: max_fragments = 1 + (bits 0-6) (else 255)
 *   op % 5:  0 fragment: d, fragmentId, numFragments (raw 8 bits), LE16 data
 *              bytes % 1100, flags (bit 0 break the CRC, bit 1 non-zero
 *              padding); data is the pattern below
 *            1 inject: flags (bit 0 fix the CRC), LE16 length % 1100, bytes
 *            2 regular: d, kind (A with the next three bytes as a, b, c
 *              folded into range, or B with kind bytes of items)
 *            3 base: LE16 becomes the base sequence
 *            4 packet: d, LE16 s, order: size 1 + s, or with bit 7 of order
 *              1 + 4 s % 261 120; order % 4: 0 in order, 1 reversed, 2
 *              without fragment order % n, 3 every fragment twice: all its
 *              fragments, pattern data
 *
 * Pattern data: byte o of the packet of sequence s is table[o + s % 1024]
 * of a fixed pseudo-random table, whatever fragment carries it, so fragments
 * made by different operations for one sequence agree (and memcpy/memcmp keep
 * the harness cheap under coverage instrumentation).
 *
 * What it checks (abort on failure, so libFuzzer keeps the input):
 * - the receiver's counters add up (each datagram counted exactly once, the
 *   invalid ones once per reason), and at most 256 packets are in progress;
 * - a delivered packet is 1..261 120 bytes; a regular one reads back as a
 *   valid regular packet; a reassembled one, unless an injected datagram
 *   with a good CRC carried its sequence, is exactly the pattern;
 * - the verdict returned matches the counter that moved.
 * ASan and UBSan check the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2frag.h"
#include "protocol2.h"
#include "harness.h"

/* Datagrams per input, at most: a 255-fragment packet sent twice is 510. */
enum { WORK_LIMIT = 20000 };

static struct {
    p2frag_wire_config_t wire;
    p2frag_receiver_t *receiver;
    uint16_t base;
    uint8_t tainted[65536];
    long work;
} st;

static uint8_t datagram[2048];
static uint8_t packet_data[P2FRAG_MAX_PACKET_BYTES];
static p2frag_test_packet_t test_packet;


static uint8_t pattern_table[256 * P2FRAG_FRAGMENT_SIZE + 1100 + 1024]; /* fragment id 255, 1099 bytes, sequence % 1024 */

static const uint8_t *pattern(uint16_t sequence, int offset)
{
    return pattern_table + offset + sequence % 1024;
}

static void make_pattern_table(void)
{
    uint32_t x = 0x9e3779b9u;
    for (size_t i = 0; i < sizeof pattern_table; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
        pattern_table[i] = (uint8_t)x;
    }
}

static void on_deliver(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes, int fragmented)
{
    (void)context, (void)time;
    REQUIRE(bytes >= 1 && bytes <= P2FRAG_MAX_PACKET_BYTES);
    if (!fragmented) {
        REQUIRE(bytes <= P2FRAG_MAX_REGULAR_BYTES);
        REQUIRE(p2frag_read_reassembled(&st.wire, packet, bytes, NULL) == P2FRAG_READ_OK);
        return;
    }
    if (st.tainted[sequence]) return;
    REQUIRE(memcmp(packet, pattern(sequence, 0), (size_t)bytes) == 0);
}

static void check_counters(void)
{
    const uint64_t *c = p2frag_receiver_counters(st.receiver);
    uint64_t regular = c[P2FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED] - c[P2FRAG_RECEIVER_COUNTER_PACKETS_REASSEMBLED];
    uint64_t sum = regular;
    for (int k = P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID; k <= P2FRAG_RECEIVER_COUNTER_NO_MEMORY; k++) sum += c[k];
    REQUIRE(sum == c[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED]);
    uint64_t invalid = 0;
    for (int k = 0; k < P2FRAG_READ_RESULT_COUNT; k++) invalid += p2frag_receiver_invalid_counters(st.receiver)[k];
    REQUIRE(invalid == c[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID]);
    REQUIRE(p2frag_receiver_invalid_counters(st.receiver)[P2FRAG_READ_OK] == 0);
}

/* Hands a datagram to the receiver; checks that the verdict names the
 * counter that moved. */
static void feed(const uint8_t *bytes, int length)
{
    static const int counter_of[P2FRAG_VERDICT_COUNT] = {
        [P2FRAG_VERDICT_INVALID] = P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID,
        [P2FRAG_VERDICT_TOO_OLD] = P2FRAG_RECEIVER_COUNTER_TOO_OLD,
        [P2FRAG_VERDICT_SUPERSEDED] = P2FRAG_RECEIVER_COUNTER_SUPERSEDED,
        [P2FRAG_VERDICT_TOO_MANY] = P2FRAG_RECEIVER_COUNTER_FRAGMENTS_TOO_MANY,
        [P2FRAG_VERDICT_COUNT_CONFLICT] = P2FRAG_RECEIVER_COUNTER_FRAGMENTS_COUNT_CONFLICT,
        [P2FRAG_VERDICT_DUPLICATE] = -1, /* duplicate, late or regular duplicate */
        [P2FRAG_VERDICT_ACCEPTED] = P2FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED,
        [P2FRAG_VERDICT_DELIVERED] = P2FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED,
        [P2FRAG_VERDICT_NO_MEMORY] = P2FRAG_RECEIVER_COUNTER_NO_MEMORY,
    };
    uint64_t before[P2FRAG_RECEIVER_COUNTER_COUNT];
    memcpy(before, p2frag_receiver_counters(st.receiver), sizeof before);
    /* An exact-size copy, so that ASan sees any read past the datagram. */
    uint8_t *copy = malloc((size_t)length + 1);
    REQUIRE(copy);
    memcpy(copy, bytes, (size_t)length);
    p2frag_verdict_t verdict = p2frag_receiver_receive_packet(st.receiver, 0, copy, length);
    free(copy);
    REQUIRE(verdict >= 0 && verdict < P2FRAG_VERDICT_COUNT);
    const uint64_t *after = p2frag_receiver_counters(st.receiver);
    if (counter_of[verdict] >= 0) REQUIRE(after[counter_of[verdict]] == before[counter_of[verdict]] + 1);
    else
        REQUIRE(after[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE] + after[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE] +
                    after[P2FRAG_RECEIVER_COUNTER_REGULAR_DUPLICATE] ==
                before[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE] + before[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE] +
                    before[P2FRAG_RECEIVER_COUNTER_REGULAR_DUPLICATE] + 1);
    st.work++;
    check_counters();
}

static void set_crc(uint8_t *bytes, int length)
{
    uint32_t crc = p2_packet_crc(st.wire.protocol_id, bytes, length);
    for (int i = 0; i < 4; i++) bytes[i] = (uint8_t)(crc >> (8 * i));
}

/* A fragment datagram with any header values; pattern data at its offset. */
static int build_fragment(uint16_t sequence, int id, int count, int data_bytes, int flags)
{
    memset(datagram, 0, 9);
    datagram[4] = (uint8_t)sequence;
    datagram[5] = (uint8_t)(sequence >> 8);
    uint32_t header = (uint32_t)(id & 0xff) << 2 | (uint32_t)(count & 0xff) << 10 | (flags & 2 ? 1u << 19 : 0);
    datagram[6] = (uint8_t)header;
    datagram[7] = (uint8_t)(header >> 8);
    datagram[8] = (uint8_t)(header >> 16);
    memcpy(datagram + 9, pattern(sequence, (id & 0xff) * P2FRAG_FRAGMENT_SIZE), (size_t)data_bytes);
    set_crc(datagram, 9 + data_bytes);
    if (flags & 1) datagram[0] ^= 0x5a;
    return 9 + data_bytes;
}

static void op_packet(input_t *in)
{
    uint16_t sequence = (uint16_t)(st.base + (int8_t)next_byte(in));
    int size = next_le16(in);
    int order = next_byte(in);
    /* Up to 64 fragments, or up to 255 with bit 7 of order (slower). */
    size = 1 + (order & 0x80 ? size * 4 % P2FRAG_MAX_PACKET_BYTES : size);
    int n = p2frag_fragment_count(size);
    int skip = order % 4 == 2 ? order % n : -1;
    for (int k = 0; k < n && st.work < WORK_LIMIT; k++) {
        int id = order % 4 == 1 ? n - 1 - k : k;
        if (id == skip) continue;
        int bytes = id == n - 1 ? size - id * P2FRAG_FRAGMENT_SIZE : P2FRAG_FRAGMENT_SIZE;
        int length = build_fragment(sequence, id, n, bytes, 0);
        feed(datagram, length);
        if (order % 4 == 3) feed(datagram, length);
    }
}

static void op_regular(input_t *in)
{
    memset(&test_packet, 0, sizeof test_packet);
    test_packet.sequence = (uint16_t)(st.base + (int8_t)next_byte(in));
    int kind = next_byte(in);
    if (kind & 1) {
        test_packet.type = P2FRAG_PACKET_A;
        test_packet.a = next_byte(in) % 21 - 10;
        test_packet.b = next_byte(in) % 41 - 20;
        test_packet.c = next_byte(in) % 61 - 30;
    } else {
        test_packet.type = P2FRAG_PACKET_B;
        test_packet.num_items = kind;
        for (int i = 0; i < kind; i++) test_packet.items[i] = (int8_t)(next_byte(in) % 201 - 100);
    }
    int length = p2frag_write_test_packet(&st.wire, &test_packet, packet_data, P2FRAG_MAX_REGULAR_BYTES);
    REQUIRE(length > 0);
    feed(packet_data, length);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t in = {data, size, 0};
    if (!pattern_table[0] && !pattern_table[1]) make_pattern_table();
    memset(&st, 0, sizeof st);
    p2frag_wire_default_config(&st.wire);
    p2frag_receiver_config_t config;
    p2frag_receiver_default_config(&config);
    int c = next_byte(&in);
    if (c & 0x80) config.max_fragments = 1 + (c & 0x7f);
    config.deliver = on_deliver;
    st.receiver = p2frag_receiver_create(&config);
    REQUIRE(st.receiver);
    while (in.at < in.size && st.work < WORK_LIMIT) {
        switch (next_byte(&in) % 5) {
        case 0: {
            uint16_t sequence = (uint16_t)(st.base + (int8_t)next_byte(&in));
            int id = next_byte(&in), count = next_byte(&in);
            int bytes = next_le16(&in) % 1100;
            int flags = next_byte(&in);
            feed(datagram, build_fragment(sequence, id, count, bytes, flags));
            break;
        }
        case 1: {
            int flags = next_byte(&in);
            int length = next_le16(&in) % 1100;
            for (int i = 0; i < length; i++) datagram[i] = (uint8_t)next_byte(&in);
            if ((flags & 1) && length >= 4) set_crc(datagram, length);
            /* Injected bytes may carry any data under a good CRC (the
             * vector seeds do): their sequence no longer has pattern data. */
            if (length >= 6) st.tainted[datagram[4] | datagram[5] << 8] = 1;
            feed(datagram, length);
            break;
        }
        case 2: op_regular(&in); break;
        case 3: st.base = (uint16_t)next_le16(&in); break;
        case 4: op_packet(&in); break;
        }
    }
    REQUIRE(p2frag_receiver_in_progress(st.receiver) <= P2FRAG_SLOTS);
    p2frag_receiver_destroy(st.receiver);
    return 0;
}
