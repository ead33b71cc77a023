/*
 * The yojimbo connection layer: serialize's bit order and relative integers,
 * connection packets worked out by hand from the wire format
 * (docs/yojimbo-endpoints.md), the reader's refusals, the channel spec, and
 * two connections over reliable endpoints and the seeded simulator with loss
 * and duplicates: messages and a block arrive whole and in order.
 */
#include <stdlib.h>
#include <string.h>

#include "netsim.h"
#include "reliable.h"
#include "test.h"
#include "util.h"
#include "yojimbo.h"

static int bytes_equal(const uint8_t *a, const uint8_t *b, int n) { return memcmp(a, b, (size_t)n) == 0; }

static void test_bit_order(void)
{
    uint8_t buf[8];
    yojimbo_writer_t w;
    yojimbo_writer_init(&w, buf, sizeof buf);
    /* Low bits first: 5 in 3 bits is bits 0-2 = 1,0,1; then 1 at bit 3; then
     * 0xABC in 12 bits at bits 4-15. */
    yojimbo_write_bits(&w, 5, 3);
    yojimbo_write_bits(&w, 1, 1);
    yojimbo_write_bits(&w, 0xABC, 12);
    CHECK_EQ(yojimbo_writer_bytes(&w), 2);
    CHECK_EQ(buf[0], 0xCD); /* 1101 (5 | 1 << 3) and 0xC in the high nibble */
    CHECK_EQ(buf[1], 0xAB);
    yojimbo_reader_t r;
    yojimbo_reader_init(&r, buf, 2);
    CHECK_EQ(yojimbo_read_bits(&r, 3), 5);
    CHECK_EQ(yojimbo_read_bits(&r, 1), 1);
    CHECK_EQ(yojimbo_read_bits(&r, 12), 0xABC);
    CHECK_EQ(r.error, 0);
    yojimbo_read_bits(&r, 1);
    CHECK_EQ(r.error, 1); /* past the end */
    CHECK_EQ(cs_bits_required(0, 3), 2);
    CHECK_EQ(cs_bits_required(1, 256), 8);
    CHECK_EQ(cs_bits_required(1, 1024), 10);
    CHECK_EQ(cs_bits_required(5, 5), 0);
    /* Alignment pads with zero bits; the reader refuses other padding. */
    static const uint8_t dirty[] = {0x08, 0xFF};
    yojimbo_reader_init(&r, dirty, 2);
    yojimbo_read_bits(&r, 3);
    yojimbo_read_align(&r);
    CHECK_EQ(r.error, 1);
    yojimbo_writer_init(&w, buf, sizeof buf);
    yojimbo_write_bits(&w, 7, 3);
    static const uint8_t byte[] = {0x5A};
    yojimbo_write_bytes(&w, byte, 1);
    CHECK_EQ(w.bits, 16);
    CHECK_EQ(buf[0], 0x07);
    CHECK_EQ(buf[1], 0x5A);
}

/* Relative integers and sequences worked bit by bit; read_from > 0: a reader
 * of that many bytes gets the value back. */
typedef struct relative_case_t {
    const char *what;
    int sequence; /* the 16-bit sequence form, else the 32-bit integer form */
    uint32_t previous, value;
    int bits;
    int bytes; /* how many of want are checked */
    uint8_t want[5];
    int read_back; /* the reader gets value back from those bytes */
} relative_case_t;

static const relative_case_t relative_cases[] = {
    /* Difference 5: flag 0 (not 1), flag 1 (2..6), then 5 - 2 = 3 in 3 bits:
     * bits 0,1,1,1,0 = 0x0E. */
    {"difference 5", 0, 10, 15, 5, 1, {0x0E}, 1},
    /* Sequence 65535 then 1: lifted to 65537, difference 2: bits 0,1,0,0,0. */
    {"sequence wrap", 1, 65535, 1, 5, 1, {0x02}, 1},
    /* Difference 1 is one bit. */
    {"difference 1", 1, 7, 8, 1, 1, {0x01}, 0},
    /* The edges of the 7-23 rung: 23 is 0,0,1 then 16 in 5 bits (0x84, 8
     * bits); 24 is 0,0,0,1 then 0 in 9 bits (24..280 spans 257 values):
     * 0x08 0x00, 13 bits. */
    {"23", 0, 0, 23, 8, 1, {0x84}, 0},
    {"24", 0, 0, 24, 13, 2, {0x08, 0x00}, 1},
    /* Past 69914: six zero flags, then the value itself in 32 bits:
     * 100000 = 0x186A0 << 6 = 0x61A800 -> 00 A8 61 00 00. */
    {"100000", 0, 0, 100000, 38, 5, {0x00, 0xA8, 0x61, 0x00, 0x00}, 1},
};

static void test_int_relative(void)
{
    uint8_t buf[8];
    yojimbo_writer_t w;
    yojimbo_reader_t r;
    for (size_t i = 0; i < sizeof relative_cases / sizeof relative_cases[0]; i++) {
        const relative_case_t *c = &relative_cases[i];
        int failures = chunk_test_failures;
        yojimbo_writer_init(&w, buf, sizeof buf);
        if (c->sequence) yojimbo_write_sequence_relative(&w, (uint16_t)c->previous, (uint16_t)c->value);
        else yojimbo_write_int_relative(&w, c->previous, c->value);
        CHECK_EQ(w.bits, c->bits);
        for (int k = 0; k < c->bytes; k++) CHECK_EQ(buf[k], c->want[k]);
        if (c->read_back) {
            yojimbo_reader_init(&r, buf, c->bytes);
            uint32_t got = c->sequence ? yojimbo_read_sequence_relative(&r, (uint16_t)c->previous)
                                       : yojimbo_read_int_relative(&r, c->previous);
            CHECK_EQ(got, c->value);
        }
        if (chunk_test_failures != failures) fprintf(stderr, "  ... relative case %s\n", c->what);
    }
    /* Equal values cannot be written: the writer fails (a reader can still
     * meet them as 16-bit ids through the 32-bit form). */
    yojimbo_writer_init(&w, buf, sizeof buf);
    yojimbo_write_sequence_relative(&w, 9, 9);
    CHECK_EQ(w.overflow, 1);
    /* The 32-bit form must be above previous. */
    yojimbo_reader_init(&r, buf, 5);
    yojimbo_read_int_relative(&r, 200000);
    CHECK_EQ(r.error, 1);
}

/* Empty: numChannelEntries 0 in 2 bits (0..2 with two channels). */
static void test_packet_empty(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    yojimbo_packet_t p;
    memset(&p, 0, sizeof p);
    uint8_t out[16];
    CHECK_EQ(yojimbo_write_packet(&config, &p, out, sizeof out), 1);
    CHECK_EQ(out[0], 0x00);
    CHECK_EQ(yojimbo_read_packet(&config, out, 1, &p), YOJIMBO_READ_OK);
    CHECK_EQ(p.num_entries, 0);
    yojimbo_packet_free(&p);
    CHECK_EQ(yojimbo_read_packet(&config, out, 0, &p), YOJIMBO_READ_EMPTY);
}

/* Two TestMessages on channel 1 of the default config, ids 0x1234 and 0x1235,
 * sequences 3 (4 dummy bits) and 13 (2 dummy bits). Bit by bit: entries 1
 * (2 bits: 1,0), channel 1 (1 bit), block 0, hasMessages 1, numMessages 2
 * (8 bits of 2 - 1 = 1), id 0x1234 (16 bits from bit 13), id 0x1235 relative
 * (1 bit: 1, bit 29), type 0 (2 bits), sequence 3 (16 bits from bit 32), 4
 * zero bits, type 0, sequence 13 (from bit 54), 2 zero bits: 72 bits.
 *   byte 0 = bits 0,2,4,5 = 0x35; byte 1 = id bits 0-2 in bits 13-15 = 0x80;
 *   byte 2 = id bits 3-10 = 0x46; byte 3 = id bits 11-15 (0x02) | bit 29
 *   (0x20) = 0x22; bytes 4-5 = 03 00; byte 6 = sequence 13's bit 0 at bit 54
 *   = 0x40; byte 7 = 13 >> 2 = 0x03; byte 8 = 0x00. */
static void test_packet_messages(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    yojimbo_message_t m[2] = {{YOJIMBO_TEST_MESSAGE, 0x1234, 3, NULL, 0}, {YOJIMBO_TEST_MESSAGE, 0x1235, 13, NULL, 0}};
    yojimbo_packet_t p;
    memset(&p, 0, sizeof p);
    p.num_entries = 1;
    p.entry[0].channel = 1;
    p.entry[0].num_messages = 2;
    p.entry[0].messages = m;
    uint8_t out[32];
    static const uint8_t expected[] = {0x35, 0x80, 0x46, 0x22, 0x03, 0x00, 0x40, 0x03, 0x00};
    CHECK_EQ(yojimbo_write_packet(&config, &p, out, sizeof out), 9);
    CHECK(bytes_equal(out, expected, 9));
    yojimbo_packet_t q;
    CHECK_EQ(yojimbo_read_packet(&config, expected, 9, &q), YOJIMBO_READ_OK);
    CHECK_EQ(q.num_entries, 1);
    CHECK_EQ(q.entry[0].channel, 1);
    CHECK_EQ(q.entry[0].num_messages, 2);
    if (q.entry[0].num_messages == 2) {
        CHECK_EQ(q.entry[0].messages[0].id, 0x1234);
        CHECK_EQ(q.entry[0].messages[1].id, 0x1235);
        CHECK_EQ(q.entry[0].messages[1].sequence, 13);
    }
    yojimbo_packet_free(&q);
    /* One message short: the reader runs out. */
    CHECK_EQ(yojimbo_read_packet(&config, expected, 8, &q), YOJIMBO_READ_TRUNCATED);
    yojimbo_packet_free(&q);
    /* The smallest: one TestMessage, id 0, sequence 0 (1 dummy bit) on
     * channel 0: bits 0 and 4 set, 48 bits. */
    m[0].id = 0, m[0].sequence = 0;
    p.entry[0].channel = 0;
    p.entry[0].num_messages = 1;
    static const uint8_t one[] = {0x11, 0, 0, 0, 0, 0};
    CHECK_EQ(yojimbo_write_packet(&config, &p, out, sizeof out), 6);
    CHECK(bytes_equal(out, one, 6));
}

/* Fragment 0 of 3 of block message 7 on channel 1, 4 bytes DE AD BE EF:
 * entries 1, channel 1, block 1 (bits 0,2,3), message id 7 (bits 4-19),
 * numFragments 3 (8 bits of 2 from bit 20), fragmentId 0 (2 bits), size 4
 * (10 bits of 3 from bit 30), aligned at bit 40: the 4 bytes, then type 1 (2
 * bits at 72) and the block message's sequence 7 (16 bits at 74): 90 bits.
 *   7D 00 20 C0 00 DE AD BE EF 1D 00 00 */
static void test_packet_fragment(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    static const uint8_t data[] = {0xDE, 0xAD, 0xBE, 0xEF};
    yojimbo_packet_t p;
    memset(&p, 0, sizeof p);
    p.num_entries = 1;
    p.entry[0].channel = 1;
    p.entry[0].block = 1;
    p.entry[0].fragment = (yojimbo_fragment_t){7, 3, 0, 4, data, {YOJIMBO_TEST_BLOCK_MESSAGE, 7, 7, NULL, 0}};
    uint8_t out[32];
    static const uint8_t expected[] = {0x7D, 0x00, 0x20, 0xC0, 0x00, 0xDE, 0xAD, 0xBE, 0xEF, 0x1D, 0x00, 0x00};
    CHECK_EQ(yojimbo_write_packet(&config, &p, out, sizeof out), 12);
    CHECK(bytes_equal(out, expected, 12));
    yojimbo_packet_t q;
    CHECK_EQ(yojimbo_read_packet(&config, expected, 12, &q), YOJIMBO_READ_OK);
    CHECK_EQ(q.entry[0].block, 1);
    CHECK_EQ(q.entry[0].fragment.message_id, 7);
    CHECK_EQ(q.entry[0].fragment.num_fragments, 3);
    CHECK_EQ(q.entry[0].fragment.fragment_size, 4);
    CHECK(q.entry[0].fragment.data && bytes_equal(q.entry[0].fragment.data, data, 4));
    CHECK_EQ(q.entry[0].fragment.message.sequence, 7);
    yojimbo_packet_free(&q);
    /* Fragment 0 naming a TestMessage (type 0: byte 9 = 0x1C) is refused. */
    uint8_t bad[12];
    memcpy(bad, expected, sizeof bad);
    bad[9] = 0x1C;
    CHECK_EQ(yojimbo_read_packet(&config, bad, 12, &q), YOJIMBO_READ_NOT_BLOCK);
    yojimbo_packet_free(&q);
    /* Bit 28 set: fragment 1 of 3. Later fragments carry no type or body,
     * so the packet ends after the 4 bytes (72 bits). */
    memcpy(bad, expected, sizeof bad);
    bad[3] |= 0x10; /* fragment id 1: a later fragment, no type or body after the bytes */
    CHECK_EQ(yojimbo_read_packet(&config, bad, 9, &q), YOJIMBO_READ_OK);
    CHECK_EQ(q.entry[0].fragment.fragment_id, 1);
    yojimbo_packet_free(&q);
}

static void test_read_refusals(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    yojimbo_packet_t q;
    /* numChannelEntries 3 with two channels (2 bits: 1,1). */
    uint8_t three[] = {0x03};
    CHECK_EQ(yojimbo_read_packet(&config, three, 1, &q), YOJIMBO_READ_TRUNCATED);
    yojimbo_packet_free(&q);
    /* A TestSerializeFailOnReadMessage (type 2) fails the packet: the
     * smallest message packet with type bits 29-30 = 0,1 (bit 30). */
    uint8_t fail[] = {0x11, 0, 0, 0x40, 0, 0};
    CHECK_EQ(yojimbo_read_packet(&config, fail, 6, &q), YOJIMBO_READ_MESSAGE_FAILED);
    yojimbo_packet_free(&q);
    /* Three channels: channel index 3 in 2 bits is out of range. */
    char error[200];
    CHECK_EQ(yojimbo_parse_channels("ro,ro,uu", &config, error, sizeof error), 0);
    uint8_t channel3[] = {0x0D, 0, 0}; /* entries 1 (2 bits), channel 3 (bits 2-3) */
    CHECK_EQ(yojimbo_read_packet(&config, channel3, 3, &q), YOJIMBO_READ_CHANNEL);
    yojimbo_packet_free(&q);
    CHECK(strcmp(yojimbo_read_result_name(YOJIMBO_READ_NOT_BLOCK), "fragment 0 not a block message") == 0);
    /* One channel: no index on the wire. A message packet on channel 0 is
     * then 1 bit shorter: entries (1 bit: 0..1) = 1, block 0, has 1. */
    CHECK_EQ(yojimbo_parse_channels("ro", &config, error, sizeof error), 0);
    yojimbo_message_t m = {YOJIMBO_TEST_MESSAGE, 0, 0, NULL, 0};
    yojimbo_packet_t p;
    memset(&p, 0, sizeof p);
    p.num_entries = 1;
    p.entry[0].num_messages = 1;
    p.entry[0].messages = &m;
    uint8_t out[16];
    CHECK_EQ(yojimbo_write_packet(&config, &p, out, sizeof out), 6);
    CHECK_EQ(out[0], 0x05); /* bits 0 and 2 */
}

static void test_channels_spec(void)
{
    yojimbo_config_t c;
    char error[200];
    CHECK_EQ(yojimbo_parse_channels("ro,uu:1024:256:8", &c, error, sizeof error), 0);
    CHECK_EQ(c.num_channels, 2);
    CHECK_EQ(c.channel[0].type, YOJIMBO_RELIABLE_ORDERED);
    CHECK_EQ(c.channel[0].max_block_size, 256 * 1024);
    CHECK_EQ(c.channel[1].type, YOJIMBO_UNRELIABLE_UNORDERED);
    CHECK_EQ(c.channel[1].max_block_size, 1024);
    CHECK_EQ(c.channel[1].block_fragment_size, 256);
    CHECK_EQ(c.channel[1].max_messages_per_packet, 8);
    CHECK_EQ(yojimbo_max_fragments(&c.channel[0]), 256);
    CHECK_EQ(yojimbo_parse_channels("xx", &c, error, sizeof error), -1);
    CHECK_EQ(yojimbo_parse_channels("ro,", &c, error, sizeof error), -1);
    CHECK_EQ(yojimbo_parse_channels("ro:0", &c, error, sizeof error), -1);
    CHECK_EQ(yojimbo_parse_channels("ro:100000:1", &c, error, sizeof error), -1); /* 100000 fragments */
    CHECK_EQ(yojimbo_parse_channels("uu:10:10:2000", &c, error, sizeof error), -1);
    CHECK(strstr(error, "uu:10:10:2000") != NULL);
    yojimbo_default_config(&c);
    CHECK_EQ(c.num_channels, 2);
    CHECK_EQ(c.channel[1].type, YOJIMBO_RELIABLE_ORDERED);
    CHECK_EQ(c.channel[1].max_messages_per_packet, 256);
    CHECK_EQ(c.channel[1].block_fragment_size, 1024);
    CHECK_EQ(yojimbo_test_message_bits(0), 1);
    CHECK_EQ(yojimbo_test_message_bits(16), 512);
    CHECK_EQ(yojimbo_test_message_bits(21), 1);
}

/* ---- two connections over reliable endpoints and the simulator ---- */

typedef struct pair_t {
    netsim_t *sim;
    rl_endpoint_t *rl[2];
    yojimbo_connection_t *yj[2];
    double now;
    int events[2][6];
    int drop_fragment;    /* -1 off: drop packets holding this block fragment */
    uint16_t drop_sequence[2];
    int drop_armed[2], dropping;
} pair_t;

typedef struct side_ref_t {
    pair_t *pair;
    int side;
} side_ref_t;

static side_ref_t refs[2];

static void pair_event(void *context, const yojimbo_event_t *e)
{
    side_ref_t *ref = context;
    ref->pair->events[ref->side][e->kind]++;
    if (e->kind == YOJIMBO_EVENT_FRAGMENT_SENT && e->fragment == ref->pair->drop_fragment) {
        ref->pair->drop_sequence[ref->side] = e->sequence;
        ref->pair->drop_armed[ref->side] = 1;
    }
}

static int pair_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    (void)dir, (void)packet, (void)bytes;
    return ((pair_t *)context)->dropping;
}

static void pair_send(void *context, uint16_t sequence, const uint8_t *packet, int bytes)
{
    side_ref_t *ref = context;
    pair_t *p = ref->pair;
    p->dropping = p->drop_armed[ref->side] && p->drop_sequence[ref->side] == sequence;
    netsim_send(p->sim, ref->side, p->now, packet, bytes);
    p->dropping = 0;
}

static int pair_process(void *context, uint16_t sequence, const uint8_t *payload, int bytes)
{
    side_ref_t *ref = context;
    return yojimbo_connection_process(ref->pair->yj[ref->side], sequence, payload, bytes);
}

static void pair_acked(void *context, uint16_t sequence, double rtt)
{
    (void)rtt;
    side_ref_t *ref = context;
    yojimbo_connection_ack(ref->pair->yj[ref->side], sequence);
}

static double stop_acking_at = -1; /* side 1's reliable endpoint */

static void pair_init(pair_t *p, double loss, double duplicate, uint64_t seed, const yojimbo_config_t *config)
{
    memset(p, 0, sizeof *p);
    p->drop_fragment = -1;
    netsim_config_t sc;
    netsim_default_config(&sc);
    sc.seed = seed;
    sc.filter = pair_filter;
    sc.filter_context = p;
    for (int d = 0; d < 2; d++) {
        sc.link[d].loss = loss;
        sc.link[d].duplicate = duplicate;
        sc.link[d].latency = 0.02;
    }
    p->sim = netsim_create(&sc);
    for (int s = 0; s < 2; s++) {
        refs[s] = (side_ref_t){p, s};
        rl_config_t rc;
        rl_default_config(&rc);
        rc.max_packet_size = YOJIMBO_MAX_PACKET_SIZE;
        rc.max_fragments = 8;
        rc.send = pair_send;
        rc.process = pair_process;
        rc.acked = pair_acked;
        rc.context = &refs[s];
        rc.stop_acking_at = s == 1 ? stop_acking_at : -1;
        p->rl[s] = rl_endpoint_create(&rc, 0);
        p->yj[s] = yojimbo_connection_create(config, 0, pair_event, &refs[s]);
    }
}

/* One 10-ms tick: both sides send a packet, then what arrives is taken. */
static void pair_step(pair_t *p, int step)
{
    static uint8_t packet[YOJIMBO_MAX_PACKET_SIZE], datagram[NETSIM_MAX_DATAGRAM];
    p->now = step * 0.01;
    for (int s = 0; s < 2; s++) {
        rl_endpoint_update(p->rl[s], p->now);
        yojimbo_connection_advance_time(p->yj[s], p->now);
        int bytes = yojimbo_connection_generate(p->yj[s], rl_endpoint_next_sequence(p->rl[s]), packet, sizeof packet);
        if (bytes > 0) rl_endpoint_send(p->rl[s], packet, bytes);
    }
    double at;
    for (int d = 0; d < 2; d++) {
        int n;
        while ((n = netsim_receive(p->sim, d, p->now + 0.0099, datagram, &at)) > 0) {
            p->now = at;
            rl_endpoint_receive(p->rl[1 - d], datagram, n);
        }
    }
}

static void pair_free(pair_t *p)
{
    for (int s = 0; s < 2; s++) {
        rl_endpoint_destroy(p->rl[s]);
        yojimbo_connection_destroy(p->yj[s]);
    }
    netsim_destroy(p->sim);
}

static uint8_t pattern(int i) { return (uint8_t)(i * 31 + 7); }

/* Sends 40 messages and a 5000-byte block from side 0, runs `steps` ticks
 * from `first`; returns how many messages side 1 took in order. */
static int exchange(pair_t *p, int first, int steps, int *block_ok)
{
    static uint8_t block[5000];
    for (int i = 0; i < (int)sizeof block; i++) block[i] = pattern(i);
    for (int i = 0; i < 40; i++) {
        yojimbo_message_t m = {YOJIMBO_TEST_MESSAGE, 0, (uint16_t)i, NULL, 0};
        CHECK_EQ(yojimbo_connection_send(p->yj[0], 0, &m), i);
    }
    yojimbo_message_t b = {YOJIMBO_TEST_BLOCK_MESSAGE, 0, 77, block, (int)sizeof block};
    CHECK_EQ(yojimbo_connection_send(p->yj[0], 1, &b), 0);
    int in_order = 0;
    *block_ok = 0;
    for (int step = first; step < first + steps; step++) {
        pair_step(p, step);
        yojimbo_message_t m;
        while (yojimbo_connection_receive(p->yj[1], 0, &m)) {
            if (m.id == in_order && m.sequence == in_order && m.type == YOJIMBO_TEST_MESSAGE) in_order++;
            free(m.block);
        }
        while (yojimbo_connection_receive(p->yj[1], 1, &m)) {
            int ok = m.type == YOJIMBO_TEST_BLOCK_MESSAGE && m.sequence == 77 && m.block_size == (int)sizeof block;
            for (int i = 0; ok && i < m.block_size; i++) ok = m.block[i] == pattern(i);
            *block_ok = ok;
            free(m.block);
        }
    }
    return in_order;
}

static void test_round_trip_with_loss(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    pair_t p;
    pair_init(&p, 0.2, 0.1, 7, &config);
    int block_ok;
    CHECK_EQ(exchange(&p, 0, 300, &block_ok), 40);
    CHECK_EQ(block_ok, 1);
    CHECK_EQ(yojimbo_connection_pending(p.yj[0], 0), 0); /* all acked */
    CHECK_EQ(yojimbo_connection_pending(p.yj[0], 1), 0);
    CHECK_EQ(p.events[0][YOJIMBO_EVENT_FRAGMENT_ACKED], 5);
    CHECK(yojimbo_connection_counters(p.yj[0])[YOJIMBO_COUNTER_MESSAGES_RESENT] +
          yojimbo_connection_counters(p.yj[0])[YOJIMBO_COUNTER_FRAGMENTS_RESENT] > 0); /* loss made resends */
    CHECK_EQ(yojimbo_connection_counters(p.yj[1])[YOJIMBO_COUNTER_BLOCKS_RECEIVED], 1);
    /* Resends of messages already taken are dropped, not queued again. */
    CHECK_EQ(p.events[1][YOJIMBO_EVENT_RECEIVED], 41);
    CHECK_EQ(p.events[1][YOJIMBO_EVENT_DELIVERED], 41);
    CHECK_EQ(yojimbo_connection_error(p.yj[0]) + yojimbo_connection_error(p.yj[1]), 0);
    pair_free(&p);
}

/* A fragment that is always lost: the block never completes, fragment 2 is
 * resent every 0.25 s, and the channel holds everything queued after it. */
static void test_lost_fragment(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    pair_t p;
    pair_init(&p, 0, 0, 1, &config);
    p.drop_fragment = 2;
    int block_ok;
    CHECK_EQ(exchange(&p, 0, 300, &block_ok), 40); /* channel 0 is not held up */
    CHECK_EQ(block_ok, 0);
    CHECK_EQ(p.events[0][YOJIMBO_EVENT_FRAGMENT_ACKED], 4);
    /* 3 s: fragment 2 sent at about 0, then every 0.26 s (the first tick past 0.25). */
    uint64_t resent = yojimbo_connection_counters(p.yj[0])[YOJIMBO_COUNTER_FRAGMENTS_RESENT];
    CHECK(resent >= 10 && resent <= 12);
    CHECK_EQ(yojimbo_connection_pending(p.yj[0], 1), 1);
    yojimbo_message_t after = {YOJIMBO_TEST_MESSAGE, 0, 1, NULL, 0};
    CHECK_EQ(yojimbo_connection_send(p.yj[0], 1, &after), 1);
    for (int step = 300; step < 350; step++) pair_step(&p, step);
    yojimbo_message_t m;
    CHECK_EQ(yojimbo_connection_receive(p.yj[1], 1, &m), 0); /* held behind the block */
    pair_free(&p);
}

/* A receiver whose reliable endpoint stops acking at 0.5 s: messages sent
 * after it are resent every 0.1 s (the first tick at or past it) and taken
 * once; nothing is acked after, and the block never completes at the sender
 * though the receiver has it. */
static void test_stops_acking(void)
{
    yojimbo_config_t config;
    yojimbo_default_config(&config);
    pair_t p;
    stop_acking_at = 0.5;
    pair_init(&p, 0, 0, 1, &config);
    stop_acking_at = -1;
    for (int step = 0; step < 60; step++) pair_step(&p, step);
    int block_ok;
    CHECK_EQ(exchange(&p, 60, 100, &block_ok), 40);
    CHECK_EQ(block_ok, 1);
    CHECK_EQ(p.events[0][YOJIMBO_EVENT_MESSAGE_ACKED], 0);
    CHECK_EQ(yojimbo_connection_pending(p.yj[0], 0), 1);
    /* 40 messages, 1 s: each sent at 0.0 then about every 0.1 s: 10 times. */
    CHECK_EQ(p.events[0][YOJIMBO_EVENT_MESSAGE_SENT], 400);
    CHECK_EQ(p.events[1][YOJIMBO_EVENT_RECEIVED], 41);
    pair_free(&p);
}

/* An unreliable-unordered channel: each message goes out once, no ids. */
static void test_unreliable_channel(void)
{
    yojimbo_config_t config;
    char error[200];
    CHECK_EQ(yojimbo_parse_channels("uu", &config, error, sizeof error), 0);
    pair_t p;
    pair_init(&p, 0, 0, 1, &config);
    static uint8_t block[300];
    for (int i = 0; i < 10; i++) {
        yojimbo_message_t m = {i == 5 ? YOJIMBO_TEST_BLOCK_MESSAGE : YOJIMBO_TEST_MESSAGE, 0, (uint16_t)i, block, 300};
        CHECK_EQ(yojimbo_connection_send(p.yj[0], 0, &m), i);
    }
    for (int step = 0; step < 20; step++) pair_step(&p, step);
    yojimbo_message_t m;
    int n = 0;
    while (yojimbo_connection_receive(p.yj[1], 0, &m)) {
        CHECK_EQ(m.sequence, n);
        if (n == 5) CHECK_EQ(m.block_size, 300);
        free(m.block);
        n++;
    }
    CHECK_EQ(n, 10);
    CHECK_EQ(p.events[0][YOJIMBO_EVENT_MESSAGE_SENT], 10); /* once each */
    CHECK_EQ(p.events[0][YOJIMBO_EVENT_MESSAGE_ACKED], 0);
    pair_free(&p);
}

/* Hostile bytes: random packets, and valid ones with bits flipped, read and
 * fed to a connection of each channel layout: nothing crashes (the sanitizer
 * builds check memory), a refused packet leaves the connection in error and
 * it takes nothing after. */
static void test_hostile_packets(void)
{
    static const char *const layouts[] = {"ro,ro", "uu", "ro:100:10:3,uu:50:7:2,ro"};
    uint64_t x = chunk_test_seed * 0x9E3779B97F4A7C15ull + 1;
    int refused = 0, taken = 0;
    for (int l = 0; l < 3; l++) {
        yojimbo_config_t config;
        char error[200];
        CHECK_EQ(yojimbo_parse_channels(layouts[l], &config, error, sizeof error), 0);
        for (int round = 0; round < 1500; round++) {
            uint8_t packet[64];
            int bytes = 1 + (int)(x % 63);
            for (int i = 0; i < bytes; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                packet[i] = (uint8_t)x;
            }
            if (round % 2) { /* a valid empty or one-message packet, one bit flipped */
                memset(packet, 0, sizeof packet);
                packet[0] = round % 4 == 1 ? 0x11 : 0x00;
                packet[(x >> 8) % 8] ^= (uint8_t)(1u << (x % 8));
                bytes = 8;
            }
            yojimbo_packet_t q;
            int result = yojimbo_read_packet(&config, packet, bytes, &q);
            CHECK(result >= 0 && result < YOJIMBO_READ_RESULT_COUNT);
            yojimbo_packet_free(&q);
            yojimbo_connection_t *c = yojimbo_connection_create(&config, 0, NULL, NULL);
            int ok = yojimbo_connection_process(c, 0, packet, bytes);
            CHECK_EQ(ok, result == YOJIMBO_READ_OK && !yojimbo_connection_error(c));
            if (!ok) {
                refused++;
                CHECK_EQ(yojimbo_connection_process(c, 1, (const uint8_t *)"\0", 1), 0);
            } else {
                taken++;
            }
            yojimbo_message_t m;
            for (int ch = 0; ch < config.num_channels; ch++)
                while (yojimbo_connection_receive(c, ch, &m)) free(m.block);
            yojimbo_connection_destroy(c);
        }
    }
    CHECK(refused > 500);
    CHECK(taken > 500);
    if (chunk_test_failures) fprintf(stderr, "refused %d, taken %d\n", refused, taken);
}

const chunk_test_t yojimbo_tests[] = {
    {"bit_order", test_bit_order},
    {"int_relative", test_int_relative},
    {"packet_empty", test_packet_empty},
    {"packet_messages", test_packet_messages},
    {"packet_fragment", test_packet_fragment},
    {"read_refusals", test_read_refusals},
    {"channels_spec", test_channels_spec},
    {"round_trip_with_loss", test_round_trip_with_loss},
    {"lost_fragment", test_lost_fragment},
    {"stops_acking", test_stops_acking},
    {"unreliable_channel", test_unreliable_channel},
    {"hostile_packets", test_hostile_packets},
    {NULL, NULL},
};
