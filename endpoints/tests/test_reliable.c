/* Tests of the reliable codec and endpoint (src/reliable/): header bytes
 * worked out by hand from the wire format (docs/reliable.md), the canonical
 * rule, the fragment rules, and two endpoints wired back to back. */
#include <stdlib.h>
#include <string.h>

#include "reliable.h"
#include "test.h"

/* ---- the codec ---- */

typedef struct known_t {
    uint16_t sequence, ack;
    uint32_t ack_bits;
    const char *hex;
} known_t;

/* Worked out by hand: prefix bit 1-4 per ack-bits byte that is not 0xFF,
 * bit 5 when sequence - ack (mod 65536) fits a byte; little-endian. */
static const known_t known[] = {
    {0, 65535, 0x00000000u, "3e00000100000000"}, /* the first packet: nothing received yet */
    {100, 99, 0xFFFFFFFFu, "20640001"},          /* steady state: 4 bytes */
    {1000, 100, 0xFFFFFFFFu, "00e8036400"},      /* difference 900: 16-bit ack */
    {5, 65530, 0xFFFF00FFu, "2405000b00"},       /* difference 11 across the wrap, byte 1 only */
    {0x1234, 0x0034, 0x12345678u, "1e3412340078563412"}, /* the 9-byte maximum */
    {300, 45, 0xFFFFFFFFu, "202c01ff"},          /* difference exactly 255 */
    {301, 45, 0x7FFFFFFEu, "122d012d00fe7f"},     /* difference 256: 16-bit; bytes 0 and 3 sent */
};

static void test_header_bytes(void)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const known_t *k = &known[i];
        uint8_t want[16], got[RL_MAX_HEADER_BYTES];
        int n = chunk_test_parse_hex(k->hex, want, sizeof want);
        CHECK(n > 0);
        rl_header_t h = {k->sequence, k->ack, k->ack_bits}, r;
        CHECK_EQ(rl_header_write(got, &h), n);
        CHECK(memcmp(got, want, (size_t)n) == 0);
        CHECK_EQ(rl_header_size(&h), n);
        CHECK_EQ(rl_header_read(want, n, &r, NULL), n);
        CHECK_EQ(r.sequence, k->sequence);
        CHECK_EQ(r.ack, k->ack);
        CHECK_EQ(r.ack_bits, k->ack_bits);
        CHECK(rl_header_is_canonical(want, n));
        /* Every shorter datagram is too short. */
        for (int len = 0; len < n; len++) {
            rl_read_result_t why;
            CHECK_EQ(rl_header_read(want, len, &r, &why), -1);
            CHECK_EQ(why, RL_READ_SHORT);
        }
    }
}

static void test_not_canonical(void)
{
    static const char *const cases[] = {
        "0064006300", /* 16-bit ack 99 where the difference 1 fits */
        "2264000" "1ff", /* ack-bits byte 0 sent as 0xFF */
        "60640001",   /* bits 6-7 set */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t p[16];
        int n = chunk_test_parse_hex(cases[i], p, sizeof p);
        CHECK(n > 0);
        rl_header_t h;
        CHECK_EQ(rl_header_read(p, n, &h, NULL), n); /* read as the library reads it */
        CHECK_EQ(h.sequence, 100);
        CHECK_EQ(h.ack, 99);
        CHECK(!rl_header_is_canonical(p, n));
    }
    uint8_t fragment[]= {1, 0, 0, 0, 0};
    rl_read_result_t why;
    rl_header_t h;
    CHECK_EQ(rl_header_read(fragment, 5, &h, &why), -1);
    CHECK_EQ(why, RL_READ_NOT_REGULAR);
}

/* Every read result has a name of its own (the programs log why a packet is
 * refused); an unknown value names itself "?". */
static void test_read_result_names(void)
{
    for (int r = 0; r < RL_READ_RESULT_COUNT; r++) {
        const char *name = rl_read_result_name((rl_read_result_t)r);
        CHECK(name != NULL && name[0] != '\0' && strcmp(name, "?") != 0);
        for (int q = 0; q < r; q++) CHECK(strcmp(name, rl_read_result_name((rl_read_result_t)q)) != 0);
    }
    CHECK(strcmp(rl_read_result_name(RL_READ_NOT_CANONICAL), "not canonical") == 0);
    CHECK(strcmp(rl_read_result_name(RL_READ_RESULT_COUNT), "?") == 0);
}

static void test_fragment_rules(void)
{
    static uint8_t p[1100];
    rl_fragment_t f;
    memset(p, 0x55, sizeof p);
    /* fragment 0 of 2, sequence 7, header (7, 6, all bits), 1024 data bytes */
    uint8_t head[] = {1, 7, 0, 0, 1, 0x20, 7, 0, 1};
    memcpy(p, head, sizeof head);
    CHECK_EQ(rl_fragment_read(p, 9 + 1024, 16, 1024, &f), RL_READ_OK);
    CHECK_EQ(f.header_bytes, 9);
    CHECK_EQ(f.data_bytes, 1024);
    CHECK(f.has_header && f.header.ack == 6 && f.header.ack_bits == 0xFFFFFFFFu);
    CHECK_EQ(rl_fragment_read(p, 9 + 1000, 16, 1024, &f), RL_READ_FRAGMENT_SIZE);
    CHECK_EQ(rl_fragment_read(p, 9 + 1025, 16, 1024, &f), RL_READ_FRAGMENT_TOO_BIG);
    CHECK_EQ(rl_fragment_read(p, 4, 16, 1024, &f), RL_READ_SHORT);
    CHECK_EQ(rl_fragment_read(p, 7, 16, 1024, &f), RL_READ_SHORT);  /* embedded header cut */
    p[6] = 8;
    CHECK_EQ(rl_fragment_read(p, 9 + 1024, 16, 1024, &f), RL_READ_SEQUENCE_MISMATCH);
    p[6] = 7;
    uint8_t longack[] = {1, 7, 0, 0, 1, 0x00, 7, 0, 6, 0};   /* 16-bit ack: not canonical */
    memcpy(p, longack, sizeof longack);
    CHECK_EQ(rl_fragment_read(p, 10 + 1024, 16, 1024, &f), RL_READ_NOT_CANONICAL);
    uint8_t last[] = {1, 7, 0, 1, 1};   /* fragment 1 of 2: the last, any size up to 1024 */
    memcpy(p, last, sizeof last);
    CHECK_EQ(rl_fragment_read(p, 5 + 10, 16, 1024, &f), RL_READ_OK);
    CHECK(!f.has_header);
    p[3] = 2;
    CHECK_EQ(rl_fragment_read(p, 15, 16, 1024, &f), RL_READ_FRAGMENT_ID_RANGE);
    p[3] = 0;
    p[4] = 16;   /* 17 fragments */
    CHECK_EQ(rl_fragment_read(p, 15, 16, 1024, &f), RL_READ_TOO_MANY_FRAGMENTS);
    p[0] = 3;
    CHECK_EQ(rl_fragment_read(p, 15, 16, 1024, &f), RL_READ_NOT_FRAGMENT);
}

/* ---- two endpoints back to back ---- */

#define MAX_QUEUE 4096
typedef struct pair_t {
    rl_endpoint_t *e[2];
    uint8_t *queue[2][MAX_QUEUE];
    int bytes[2][MAX_QUEUE];
    int count[2];
    int drop_next[2];          /* drop the next n datagrams sent by side i */
    int drop_fragment;         /* drop fragments with this id, -1 off */
    uint16_t acked[2][1024];
    double rtt[2][1024];
    int n_acked[2];
    uint16_t lost[2][1024];
    int n_lost[2];
    uint8_t last_payload[8192];
    int last_payload_bytes;
} pair_t;

typedef struct side_ctx_t {
    pair_t *pair;
    int side;
} side_ctx_t;

static void t_send(void *context, uint16_t sequence, const uint8_t *packet, int bytes)
{
    (void)sequence;
    side_ctx_t *c = context;
    pair_t *p = c->pair;
    if (p->drop_next[c->side] > 0) {
        p->drop_next[c->side]--;
        return;
    }
    if (p->drop_fragment >= 0 && packet[0] == 1 && packet[3] == p->drop_fragment) return;
    if (p->count[c->side] == MAX_QUEUE) return;
    uint8_t *copy = malloc((size_t)bytes);
    memcpy(copy, packet, (size_t)bytes);
    p->queue[c->side][p->count[c->side]] = copy;
    p->bytes[c->side][p->count[c->side]++] = bytes;
}

static int t_process(void *context, uint16_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    side_ctx_t *c = context;
    if (bytes <= (int)sizeof c->pair->last_payload) {
        memcpy(c->pair->last_payload, payload, (size_t)bytes);
        c->pair->last_payload_bytes = bytes;
    }
    return 1;
}

static void t_acked(void *context, uint16_t sequence, double rtt)
{
    side_ctx_t *c = context;
    pair_t *p = c->pair;
    if (p->n_acked[c->side] < 1024) {
        p->rtt[c->side][p->n_acked[c->side]] = rtt;
        p->acked[c->side][p->n_acked[c->side]++] = sequence;
    }
}

static void t_lost(void *context, uint16_t sequence)
{
    side_ctx_t *c = context;
    pair_t *p = c->pair;
    if (p->n_lost[c->side] < 1024) p->lost[c->side][p->n_lost[c->side]++] = sequence;
}

static side_ctx_t ctx[2];

static void pair_init(pair_t *p, uint16_t first_sequence, double stop_acking_b)
{
    memset(p, 0, sizeof *p);
    p->drop_fragment = -1;
    for (int s = 0; s < 2; s++) {
        rl_config_t c;
        rl_default_config(&c);
        c.first_sequence = first_sequence;
        c.send = t_send;
        c.process = t_process;
        c.acked = t_acked;
        c.lost = t_lost;
        c.stop_acking_at = s == 1 ? stop_acking_b : -1;
        ctx[s] = (side_ctx_t){p, s};
        c.context = &ctx[s];
        p->e[s] = rl_endpoint_create(&c, 0);
        CHECK(p->e[s] != NULL);
    }
}

/* Delivers what side `from` sent to the other side, in order, at time now. */
static void pair_deliver(pair_t *p, int from, double now)
{
    rl_endpoint_update(p->e[1 - from], now);
    for (int i = 0; i < p->count[from]; i++) {
        rl_endpoint_receive(p->e[1 - from], p->queue[from][i], p->bytes[from][i]);
        free(p->queue[from][i]);
    }
    p->count[from] = 0;
}

static void pair_free(pair_t *p)
{
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < p->count[s]; i++) free(p->queue[s][i]);
        rl_endpoint_destroy(p->e[s]);
    }
}

/* One round: each side sends `bytes`, A's arrive at B 25 ms later, B's at A 50 ms later. */
static void round_trip(pair_t *p, double t, int bytes)
{
    static uint8_t payload[8192];
    for (int i = 0; i < bytes; i++) payload[i] = (uint8_t)(i * 7 + (int)(t * 1000));
    rl_endpoint_update(p->e[0], t);
    rl_endpoint_send(p->e[0], payload, bytes);
    pair_deliver(p, 0, t + 0.025);
    rl_endpoint_send(p->e[1], payload, 10);
    pair_deliver(p, 1, t + 0.050);
}

static void test_acks_and_rtt(void)
{
    pair_t p;
    pair_init(&p, 0, -1);
    for (int i = 0; i < 10; i++) round_trip(&p, i * 0.1, 100);
    CHECK_EQ(p.n_acked[0], 10);
    for (int i = 0; i < p.n_acked[0]; i++) {
        CHECK_EQ(p.acked[0][i], i);
        CHECK(p.rtt[0][i] > 0.0499 && p.rtt[0][i] < 0.0501);
    }
    CHECK(rl_endpoint_rtt(p.e[0]) > 0.0499 && rl_endpoint_rtt(p.e[0]) < 0.0501);
    CHECK(rl_endpoint_last_rtt(p.e[0]) > 0.0499 && rl_endpoint_last_rtt(p.e[0]) < 0.0501);
    const uint64_t *k = rl_endpoint_counters(p.e[1]);
    CHECK_EQ(k[RL_COUNTER_PACKETS_RECEIVED], 10);
    uint16_t ack;
    uint32_t bits;
    rl_endpoint_ack_state(p.e[1], &ack, &bits);
    CHECK_EQ(ack, 9);
    CHECK_EQ(bits, 0x3FFu);
    pair_free(&p);
}

static void test_loss(void)
{
    pair_t p;
    pair_init(&p, 0, -1);
    for (int i = 0; i < 3; i++) round_trip(&p, i * 0.1, 100);
    p.drop_next[0] = 1; /* A's sequence 3 never arrives */
    for (int i = 3; i < 40; i++) round_trip(&p, i * 0.1, 100);
    /* Decided once B's ack reaches 3 + 32 = 35. */
    CHECK_EQ(p.n_lost[0], 1);
    CHECK_EQ(p.lost[0][0], 3);
    CHECK_EQ(rl_endpoint_counters(p.e[0])[RL_COUNTER_PACKETS_LOST], 1);
    CHECK_EQ(rl_endpoint_counters(p.e[0])[RL_COUNTER_PACKETS_ACKED], 39);
    pair_free(&p);
}

static void test_fragments(void)
{
    pair_t p;
    pair_init(&p, 0, -1);
    round_trip(&p, 0, 5000);   /* 5 fragments of 1024, the last 904 */
    const uint64_t *b = rl_endpoint_counters(p.e[1]);
    CHECK_EQ(rl_endpoint_counters(p.e[0])[RL_COUNTER_FRAGMENTS_SENT], 5);
    CHECK_EQ(b[RL_COUNTER_FRAGMENTS_RECEIVED], 5);
    CHECK_EQ(b[RL_COUNTER_PACKETS_RECEIVED], 1);
    CHECK_EQ(p.last_payload_bytes, 10);  /* A took B's reply last */
    CHECK_EQ(p.n_acked[0], 1);
    /* Fragments in reverse order, one twice: reassembled once. */
    static uint8_t payload[3000];
    for (int i = 0; i < 3000; i++) payload[i] = (uint8_t)(i * 3);
    rl_endpoint_send(p.e[0], payload, 3000);
    CHECK_EQ(p.count[0], 3);
    rl_endpoint_update(p.e[1], 1);
    for (int i = 2; i >= 0; i--) rl_endpoint_receive(p.e[1], p.queue[0][i], p.bytes[0][i]);
    rl_endpoint_receive(p.e[1], p.queue[0][1], p.bytes[0][1]);
    CHECK_EQ(p.last_payload_bytes, 3000);
    CHECK(memcmp(p.last_payload, payload, 3000) == 0);
    CHECK_EQ(b[RL_COUNTER_PACKETS_RECEIVED], 2);
    for (int i = 0; i < 3; i++) free(p.queue[0][i]);
    p.count[0] = 0;
    /* A fragment always lost: the packet is never taken, and leaves the
     * reassembly window after 64 newer packets. */
    p.drop_fragment = 1;
    round_trip(&p, 2, 3000);
    p.drop_fragment = -1;
    CHECK_EQ(b[RL_COUNTER_PACKETS_RECEIVED], 2);
    for (int i = 0; i < 70; i++) round_trip(&p, 3 + i * 0.1, 100);
    CHECK_EQ(b[RL_COUNTER_REASSEMBLIES_ABANDONED], 1);
    CHECK_EQ(rl_endpoint_counters(p.e[0])[RL_COUNTER_PACKETS_LOST], 1);
    pair_free(&p);
}

static void test_duplicate_and_stale(void)
{
    pair_t p;
    pair_init(&p, 0, -1);
    uint8_t payload[10] = {0};
    rl_endpoint_send(p.e[0], payload, 10);
    uint8_t first[64];
    int first_bytes = p.bytes[0][0];
    memcpy(first, p.queue[0][0], (size_t)first_bytes);
    pair_deliver(&p, 0, 0.01);
    rl_endpoint_receive(p.e[1], first, first_bytes);
    CHECK_EQ(rl_endpoint_counters(p.e[1])[RL_COUNTER_PACKETS_DUPLICATE], 1);
    for (int i = 0; i < 300; i++) {
        rl_endpoint_send(p.e[0], payload, 10);
        pair_deliver(&p, 0, 0.02 + i * 0.001);
    }
    rl_endpoint_receive(p.e[1], first, first_bytes);   /* 300 behind: older than the 256 window */
    CHECK_EQ(rl_endpoint_counters(p.e[1])[RL_COUNTER_PACKETS_STALE], 1);
    uint8_t junk[2] = {0x3e, 0};
    CHECK_EQ(rl_endpoint_receive(p.e[1], junk, 2), RL_READ_SHORT);
    CHECK_EQ(rl_endpoint_counters(p.e[1])[RL_COUNTER_PACKETS_INVALID], 1);
    pair_free(&p);
}

static void test_wrap(void)
{
    pair_t p;
    pair_init(&p, 65530, -1);
    /* Both start at 65530, within 32 of the receivers' first ack (65535):
     * every packet, fragmented or not, is acked across the wrap. */
    for (int i = 0; i < 40; i++) round_trip(&p, i * 0.1, i % 4 == 0 ? 2500 : 100);
    CHECK_EQ(p.n_acked[0], 40);
    CHECK_EQ(p.acked[0][0], 65530);
    CHECK_EQ(p.acked[0][6], 0);
    CHECK_EQ(p.n_lost[0], 0);
    CHECK_EQ(rl_endpoint_next_sequence(p.e[0]), 34);
    pair_free(&p);
    /* Starting 40 behind it (65496), the first packets never enter B's ack
     * window (65535 - 31 = 65504 is its oldest): 65496..65503 are never
     * acked, and lost once B's ack moves 32 past them. */
    pair_init(&p, 65496, -1);
    for (int i = 0; i < 60; i++) round_trip(&p, i * 0.1, 100);
    CHECK_EQ(p.acked[0][0], 65504);
    CHECK_EQ(p.n_acked[0], 52);
    CHECK_EQ(p.n_lost[0], 8);
    CHECK_EQ(p.lost[0][0], 65496);
    pair_free(&p);
}

static void test_stop_acking(void)
{
    pair_t p;
    pair_init(&p, 0, 1.0);
    for (int i = 0; i < 30; i++) round_trip(&p, i * 0.1, 100);
    uint16_t ack;
    uint32_t bits;
    rl_endpoint_ack_state(p.e[1], &ack, &bits);
    /* B froze its state at its first send from 1.0 s (at 1.025 s, after
     * A's 10 arrived): A's 0..10 are acked, nothing after. */
    CHECK_EQ(ack, 10);
    CHECK_EQ(bits, 0x7FFu);
    CHECK_EQ(p.n_acked[0], 11);
    CHECK_EQ(p.n_lost[0], 0);
    CHECK_EQ(rl_endpoint_counters(p.e[1])[RL_COUNTER_PACKETS_RECEIVED], 30);
    pair_free(&p);
}

static void test_too_large(void)
{
    pair_t p;
    pair_init(&p, 0, -1);
    static uint8_t big[20000];
    CHECK_EQ(rl_endpoint_send(p.e[0], big, 16385), -1);
    CHECK_EQ(rl_endpoint_counters(p.e[0])[RL_COUNTER_PACKETS_TOO_LARGE_TO_SEND], 1);
    CHECK_EQ(rl_endpoint_next_sequence(p.e[0]), 0);
    CHECK_EQ(rl_endpoint_send(p.e[0], big, 16384), 0);   /* 16 fragments: the maximum */
    CHECK_EQ(p.count[0], 16);
    rl_endpoint_receive(p.e[1], big, 16384 + 15);
    CHECK_EQ(rl_endpoint_counters(p.e[1])[RL_COUNTER_PACKETS_TOO_LARGE_TO_RECEIVE], 1);
    pair_free(&p);
}

const chunk_test_t reliable_tests[] = {
    {"header_bytes", test_header_bytes},
    {"not_canonical", test_not_canonical},
    {"read_result_names", test_read_result_names},
    {"fragment_rules", test_fragment_rules},
    {"acks_and_rtt", test_acks_and_rtt},
    {"loss", test_loss},
    {"fragments", test_fragments},
    {"duplicate_and_stale", test_duplicate_and_stale},
    {"wrap", test_wrap},
    {"stop_acking", test_stop_acking},
    {"too_large", test_too_large},
    {NULL, NULL},
};
