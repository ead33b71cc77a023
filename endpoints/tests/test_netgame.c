/*
 * test_netgame.c: the netgame connection (include/netgame.h) against the
 * vectors of the original 2008 code (exact bytes of every R line, the ack bits
 * of every A line, the acks of every K line in order, the C conversation
 * replayed through two of our endpoints) and the rules of
 * docs/netgame-endpoints.md, in virtual time.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netgame.h"
#include "test.h"

/* ---- helpers ---- */

static const uint8_t ADDRESS_A[] = {'A'}; /* the client */
static const uint8_t ADDRESS_B[] = {'B'}; /* the server */
static const uint8_t ADDRESS_X[] = {'X'}; /* a stranger */
static const uint8_t zeros[64];

/* Parses a comma list of decimal sequences ('-': none) into out; returns the count. */
static int parse_list(const char *text, uint32_t *out, int capacity)
{
    if (strcmp(text, "-") == 0) return 0;
    int n = 0;
    while (*text && n < capacity) {
        char *end;
        out[n++] = (uint32_t)strtoul(text, &end, 10);
        text = *end == ',' ? end + 1 : end;
        if (end == text && *end != ',') break;
    }
    return n;
}

typedef void (*line_fn)(int line_no, char **fields, int count);

/* Calls fn for every line of vectors-netgame.txt whose kind (first field) is
 * kind, with the fields split on spaces. Returns the number of such lines. */
static int for_each_vector(const char *kind, line_fn fn)
{
    char path[4096];
    FILE *f = chunk_test_open_vectors("vectors-netgame.txt", path, sizeof path);
    if (!f) return 0;
    char *line = NULL;
    size_t capacity = 0;
    int line_no = 0, lines = 0;
    while (getline(&line, &capacity, f) > 0) {
        line_no++;
        if (line[0] == '#' || strncmp(line, kind, strlen(kind)) != 0 || line[strlen(kind)] != ' ') continue;
        char *fields[16];
        int count = 0;
        for (char *save = NULL, *tok = strtok_r(line, " \n", &save); tok && count < 16; tok = strtok_r(NULL, " \n", &save))
            fields[count++] = tok;
        fn(line_no, fields, count);
        lines++;
    }
    free(line);
    fclose(f);
    return lines;
}

/* A connection whose sends land in a list the test reads. */
#define MAX_SENT 4096
typedef struct endpoint_t {
    netgame_connection_t *c;
    uint32_t protocol_id;    /* its connection's, for the packets a test writes to it */
    uint8_t last[NETGAME_MAX_PACKET_BYTES];
    int last_bytes;
    int sends;
    uint32_t acked[MAX_SENT];
    double acked_rtt[MAX_SENT];
    int acked_count;
    uint32_t lost[MAX_SENT];
    int lost_count;
    int received_count;
} endpoint_t;

static void on_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    (void)address;
    (void)address_bytes;
    endpoint_t *e = context;
    memcpy(e->last, packet, (size_t)bytes);
    e->last_bytes = bytes;
    e->sends++;
}

static void on_acked(void *context, uint32_t sequence, double rtt)
{
    endpoint_t *e = context;
    if (e->acked_count < MAX_SENT) {
        e->acked_rtt[e->acked_count] = rtt;
        e->acked[e->acked_count++] = sequence;
    }
}

static void on_lost(void *context, uint32_t sequence)
{
    endpoint_t *e = context;
    if (e->lost_count < MAX_SENT) e->lost[e->lost_count++] = sequence;
}

static void on_receive(void *context, uint32_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    (void)payload;
    (void)bytes;
    ((endpoint_t *)context)->received_count++;
}

/* Sets up e with config (send and callbacks filled in) and starts it: a
 * client towards B, a server listening. */
static void endpoint_init(endpoint_t *e, netgame_config_t *config, double time)
{
    memset(e, 0, sizeof *e);
    config->send = on_send;
    config->acked = on_acked;
    config->lost = on_lost;
    config->receive = on_receive;
    config->context = e;
    e->protocol_id = config->protocol_id;
    e->c = chunk_test_require(netgame_connection_create(config), "netgame connection");
    if (config->role == NETGAME_CLIENT) netgame_connection_start(e->c, time, ADDRESS_B, 1);
    else netgame_connection_start(e->c, time, NULL, 0);
}

static void manual_config(netgame_config_t *config, netgame_role_t role)
{
    netgame_default_config(config);
    config->role = role;
    config->flow_control = 0;
}

/* Sets up e with manual_config of role and starts it at time 0. */
static void manual_endpoint(endpoint_t *e, netgame_role_t role)
{
    netgame_config_t config;
    manual_config(&config, role);
    endpoint_init(e, &config, 0);
}

/* Writes a datagram with this header and a few payload bytes. */
static int make_packet(uint8_t *buffer, uint32_t protocol_id, uint32_t sequence, uint32_t ack, uint32_t ack_bits,
                       int payload_bytes)
{
    netgame_header_t h = {protocol_id, sequence, ack, ack_bits};
    uint8_t payload[64] = {0};
    return netgame_write_packet(&h, payload, payload_bytes, buffer, NETGAME_MAX_PACKET_BYTES);
}

static const uint64_t *counters(const endpoint_t *e) { return netgame_connection_counters(e->c); }

/* ---- wire ---- */

static void test_header_bytes(void)
{
    /* The spec's example: sequence 5 acking 3, 2 and 0. */
    netgame_header_t h = {0x11223344u, 5, 3, 0x5};
    uint8_t payload[2] = {0xAB, 0xCD};
    uint8_t buffer[32];
    static const uint8_t want[] = {0x11, 0x22, 0x33, 0x44, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 5, 0xAB, 0xCD};
    CHECK_EQ(netgame_write_packet(&h, payload, 2, buffer, sizeof buffer), 18);
    CHECK(memcmp(buffer, want, sizeof want) == 0);
    CHECK_EQ(netgame_write_packet(&h, payload, 2, buffer, 17), -1);
    CHECK_EQ(netgame_write_packet(&h, NULL, 0, buffer, 16), 16);
    CHECK_EQ(netgame_write_packet(&h, NULL, 0, buffer, 15), -1);
    netgame_header_t r;
    CHECK_EQ(netgame_read_header(want, 15, &r), -1);
    CHECK_EQ(netgame_read_header(want, 16, &r), 0);
    CHECK_EQ(r.protocol_id, 0x11223344u);
    CHECK_EQ(r.sequence, 5);
    CHECK_EQ(r.ack, 3);
    CHECK_EQ(r.ack_bits, 5);
    uint32_t acked[33];
    int n = 0;
    for (uint32_t s = 0; s < 10; s++)
        if (netgame_sequence_acked(s, r.ack, r.ack_bits, 0xFFFFFFFFu)) acked[n++] = s;
    CHECK_EQ(n, 3);
    CHECK(n == 3 && acked[0] == 0 && acked[1] == 2 && acked[2] == 3);
}

static void test_more_recent(void)
{
    const uint32_t M = 0xFFFFFFFFu;
    CHECK(netgame_sequence_more_recent(1, 0, M));
    CHECK(!netgame_sequence_more_recent(0, 1, M));
    CHECK(!netgame_sequence_more_recent(7, 7, M));
    CHECK(netgame_sequence_more_recent(0, 0xFFFFFFFFu, M));
    CHECK(netgame_sequence_more_recent(5, 0xFFFFFFF0u, M));
    CHECK(netgame_sequence_more_recent(0x7FFFFFFFu, 0, M)); /* just under half: the larger */
    /* Exactly half the range: the numerically smaller one is more recent. */
    CHECK(netgame_sequence_more_recent(0, 0x80000000u, M));
    CHECK(!netgame_sequence_more_recent(0x80000000u, 0, M));
    CHECK(netgame_sequence_more_recent(10, 0x8000000Au, M));
    /* MaxSequence 31: half is 15. */
    CHECK(netgame_sequence_more_recent(15, 0, 31));
    CHECK(!netgame_sequence_more_recent(16, 0, 31));
    CHECK(netgame_sequence_more_recent(0, 16, 31));
    CHECK(netgame_sequence_more_recent(0, 31, 31));
    CHECK(netgame_sequence_more_recent(3, 20, 31));
    CHECK_EQ(netgame_sequence_distance(2, 30, 31), 4);
    CHECK_EQ(netgame_sequence_distance(2, 0xFFFFFFFEu, M), 4);
    /* Bit indices, across the wrap, and what a tiny space allows. */
    CHECK_EQ(netgame_bit_index(0xFFFFFFFFu, 1, M), 1);
    CHECK_EQ(netgame_bit_index(1, 1, M), -1);
    CHECK_EQ(netgame_bit_index(2, 1, M), -1);
    CHECK_EQ(netgame_bit_index(101, 133, M), 31); /* 32 behind: bit 31 */
    CHECK_EQ(netgame_bit_index(100, 133, M), -1);
    CHECK_EQ(netgame_bit_index(30, 2, 31), 3);
    CHECK_EQ(netgame_bit_index(18, 2, 31), 15); /* 16 behind, numerically larger: older (the tie) */
    CHECK_EQ(netgame_bit_index(0, 16, 31), -1); /* 16 behind, numerically smaller: 0 is more recent */
    CHECK(netgame_sequence_more_recent(0, 16, 31));
}

static void check_r_line(int line_no, char **f, int count)
{
    CHECK_EQ(count, 7);
    if (count != 7) return;
    static uint8_t want[NETGAME_MAX_PACKET_BYTES];
    int bytes = chunk_test_parse_hex(f[6], want, sizeof want);
    int payload_len = atoi(f[5]);
    CHECK_EQ(bytes, NETGAME_HEADER_BYTES + payload_len);
    if (bytes != NETGAME_HEADER_BYTES + payload_len) return;
    netgame_header_t h = {(uint32_t)strtoul(f[1], NULL, 16), (uint32_t)strtoul(f[2], NULL, 10),
                          (uint32_t)strtoul(f[3], NULL, 10), (uint32_t)strtoul(f[4], NULL, 16)};
    static uint8_t got[NETGAME_MAX_PACKET_BYTES];
    CHECK_EQ(netgame_write_packet(&h, want + 16, payload_len, got, sizeof got), bytes);
    if (memcmp(got, want, (size_t)bytes) != 0) {
        fprintf(stderr, "vectors-netgame.txt:%d: written bytes differ\n", line_no);
        CHECK(0);
    }
    netgame_header_t r;
    CHECK_EQ(netgame_read_header(want, bytes, &r), 0);
    CHECK(r.protocol_id == h.protocol_id && r.sequence == h.sequence && r.ack == h.ack && r.ack_bits == h.ack_bits);
    /* A fresh server with that protocol id takes it (the 16-byte one too:
     * our endpoint's choice, docs/netgame-endpoints.md). */
    netgame_config_t config;
    manual_config(&config, NETGAME_SERVER);
    config.protocol_id = h.protocol_id;
    endpoint_t e;
    endpoint_init(&e, &config, 0);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.1, ADDRESS_A, 1, want, bytes), 1);
    CHECK(netgame_connection_connected(e.c));
    CHECK_EQ(netgame_connection_remote_sequence(e.c), h.sequence);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_RECEIVED_HEADER_ONLY], payload_len == 0);
    /* Another id is dropped. */
    want[0] ^= 0x80;
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.2, ADDRESS_A, 1, want, bytes), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_DROP_PROTOCOL_ID], 1);
    netgame_connection_destroy(e.c);
}

static void test_vectors_r(void)
{
    CHECK_EQ(for_each_vector("R", check_r_line), 100);
}

static uint64_t shuffle_state = 1;
static uint32_t shuffle_next(void)
{
    shuffle_state = shuffle_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(shuffle_state >> 33);
}

static void check_a_line(int line_no, char **f, int count)
{
    CHECK_EQ(count, 5);
    if (count != 5) return;
    uint32_t ack = (uint32_t)strtoul(f[1], NULL, 10), max = (uint32_t)strtoul(f[2], NULL, 16);
    uint32_t want = (uint32_t)strtoul(f[4], NULL, 16);
    static uint32_t received[4096];
    int n = parse_list(f[3], received, 4096);
    uint32_t bits = netgame_ack_bits_from_set(ack, received, n, max);
    if (bits != want) fprintf(stderr, "vectors-netgame.txt:%d: ack bits %08x, want %08x\n", line_no, bits, want);
    CHECK_EQ(bits, want);
    /* The set, in any arrival order: our connection's ack bits. */
    for (int round = 0; round < 3; round++) {
        for (int i = n - 1; round > 0 && i > 0; i--) {
            int j = (int)(shuffle_next() % (uint32_t)(i + 1));
            uint32_t t = received[i];
            received[i] = received[j];
            received[j] = t;
        }
        netgame_config_t config;
        manual_config(&config, NETGAME_SERVER);
        config.max_sequence = max;
        endpoint_t e;
        endpoint_init(&e, &config, 0);
        uint8_t packet[64];
        for (int i = 0; i < n; i++) {
            int bytes = make_packet(packet, config.protocol_id, received[i], 0, 0, 4);
            netgame_connection_receive_packet(e.c, 0.01 * i, ADDRESS_A, 1, packet, bytes);
        }
        CHECK_EQ(netgame_connection_remote_sequence(e.c), ack);
        uint32_t got = netgame_connection_ack_bits(e.c);
        if (got != want)
            fprintf(stderr, "vectors-netgame.txt:%d (order %d): connection's ack bits %08x, want %08x\n", line_no, round,
                    got, want);
        CHECK_EQ(got, want);
        netgame_connection_destroy(e.c);
    }
}

static void test_vectors_a(void)
{
    CHECK_EQ(for_each_vector("A", check_a_line), 100);
}

static void check_k_line(int line_no, char **f, int count)
{
    CHECK_EQ(count, 6);
    if (count != 6) return;
    uint32_t ack = (uint32_t)strtoul(f[1], NULL, 10), bits = (uint32_t)strtoul(f[2], NULL, 16);
    uint32_t max = (uint32_t)strtoul(f[3], NULL, 16);
    static uint32_t pending[256], want[256], got[256];
    int np = parse_list(f[4], pending, 256), nw = parse_list(f[5], want, 256), ng = 0;
    for (int i = 0; i < np; i++)
        if (netgame_sequence_acked(pending[i], ack, bits, max)) got[ng++] = pending[i];
    CHECK_EQ(ng, nw);
    if (ng != nw || memcmp(got, want, (size_t)nw * sizeof want[0]) != 0) {
        fprintf(stderr, "vectors-netgame.txt:%d: acked sequences differ\n", line_no);
        CHECK(0);
    }
    /* The same through a connection that sent the pending packets in order
     * (every K line's pending list is consecutive). */
    for (int i = 1; i < np; i++) CHECK_EQ(pending[i], pending[i - 1] == max ? 0 : pending[i - 1] + 1);
    netgame_config_t config;
    manual_config(&config, NETGAME_CLIENT);
    config.max_sequence = max;
    config.first_sequence = pending[0];
    endpoint_t e;
    endpoint_init(&e, &config, 0);
    for (int i = 0; i < np; i++) CHECK_EQ(netgame_connection_send_packet(e.c, 0.001 * i, NULL, 0), pending[i]);
    uint8_t packet[64];
    int bytes = make_packet(packet, config.protocol_id, 0, ack, bits, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.5, ADDRESS_B, 1, packet, bytes), 1);
    CHECK_EQ(e.acked_count, nw);
    if (e.acked_count != nw || memcmp(e.acked, want, (size_t)nw * sizeof want[0]) != 0) {
        fprintf(stderr, "vectors-netgame.txt:%d: the connection's acks differ\n", line_no);
        CHECK(0);
    }
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_PACKETS_ACKED], nw);
    netgame_connection_destroy(e.c);
}

static void test_vectors_k(void)
{
    CHECK_EQ(for_each_vector("K", check_k_line), 20);
}

/* The C conversation: datagrams sent at step n reach the other side (unless
 * dropped) before it sends at step n+1. */
#define C_MAX 512
static struct {
    endpoint_t side[2]; /* 0 client, 1 server */
    int step;
    uint8_t *queued[C_MAX];
    int queued_bytes[C_MAX], queued_to[C_MAX], queued_step[C_MAX];
    int queued_count;
    int lines, matched;
} conv;

static void check_c_line(int line_no, char **f, int count)
{
    CHECK_EQ(count, 10);
    if (count != 10) return;
    int step = atoi(f[1]), from = strcmp(f[2], "server") == 0, dropped = atoi(f[3]);
    double now = step * 0.05;
    /* Deliver what earlier steps sent. */
    int kept = 0;
    for (int i = 0; i < conv.queued_count; i++) {
        if (conv.queued_step[i] < step) {
            endpoint_t *to = &conv.side[conv.queued_to[i]];
            CHECK_EQ(netgame_connection_receive_packet(to->c, now, conv.queued_to[i] ? ADDRESS_A : ADDRESS_B, 1,
                                                      conv.queued[i], conv.queued_bytes[i]), 1);
            free(conv.queued[i]);
        } else {
            conv.queued[kept] = conv.queued[i];
            conv.queued_bytes[kept] = conv.queued_bytes[i];
            conv.queued_to[kept] = conv.queued_to[i];
            conv.queued_step[kept++] = conv.queued_step[i];
        }
    }
    conv.queued_count = kept;
    for (endpoint_t *e = &conv.side[0]; e <= &conv.side[1]; e++) netgame_connection_update(e->c, now);

    static uint8_t want[NETGAME_MAX_PACKET_BYTES];
    int bytes = chunk_test_parse_hex(f[9], want, sizeof want);
    CHECK_EQ(bytes, 16 + atoi(f[8]));
    endpoint_t *e = &conv.side[from];
    int64_t sequence = netgame_connection_send_packet(e->c, now, want + 16, bytes - 16);
    CHECK_EQ(sequence, strtoul(f[5], NULL, 10));
    conv.lines++;
    if (e->last_bytes == bytes && memcmp(e->last, want, (size_t)bytes) == 0) {
        conv.matched++;
    } else {
        netgame_header_t h;
        netgame_read_header(e->last, e->last_bytes, &h);
        fprintf(stderr, "vectors-netgame.txt:%d: %s sent seq %u ack %u bits %08x, the original seq %s ack %s bits %s\n",
                line_no, f[2], h.sequence, h.ack, h.ack_bits, f[5], f[6], f[7]);
    }
    if (!dropped && conv.queued_count < C_MAX) {
        int i = conv.queued_count++;
        conv.queued[i] = malloc((size_t)bytes);
        memcpy(conv.queued[i], e->last, (size_t)bytes);
        conv.queued_bytes[i] = bytes;
        conv.queued_to[i] = 1 - from;
        conv.queued_step[i] = step;
    }
}

static void test_vectors_c(void)
{
    memset(&conv, 0, sizeof conv);
    manual_endpoint(&conv.side[0], NETGAME_CLIENT);
    manual_endpoint(&conv.side[1], NETGAME_SERVER);
    CHECK_EQ(for_each_vector("C", check_c_line), 110);
    /* Every header of the original conversation, byte for byte (only drops,
     * no reordering: the original's arrival-order ack bits equal the set's). */
    CHECK_EQ(conv.matched, 110);
    CHECK(netgame_connection_connected(conv.side[0].c) && netgame_connection_connected(conv.side[1].c));
    for (int i = 0; i < conv.queued_count; i++) free(conv.queued[i]);
    netgame_connection_destroy(conv.side[0].c);
    netgame_connection_destroy(conv.side[1].c);
}

/* ---- receiving ---- */

static void test_receive_drops(void)
{
    netgame_config_t config;
    manual_config(&config, NETGAME_SERVER);
    endpoint_t e;
    memset(&e, 0, sizeof e);
    config.send = on_send;
    config.context = &e;
    e.c = netgame_connection_create(&config);
    uint8_t p[64];
    int n = make_packet(p, config.protocol_id, 0, 0, 0, 4);
    /* Not started yet. */
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0, ADDRESS_A, 1, p, n), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_DROP_NOT_STARTED], 1);
    netgame_connection_start(e.c, 0, NULL, 0);
    CHECK_EQ(netgame_connection_state(e.c), NETGAME_STATE_LISTENING);
    /* Nothing to send to while listening. */
    CHECK_EQ(netgame_connection_send_packet(e.c, 0, NULL, 0), -1);
    /* Short datagrams and other ids do not connect. */
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.1, ADDRESS_A, 1, p, 15), 0);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.1, ADDRESS_A, 1, p, 0), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_DROP_SHORT], 2);
    int other = make_packet(p, 0x11112222u, 0, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.1, ADDRESS_A, 1, p, other), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_DROP_PROTOCOL_ID], 1);
    CHECK_EQ(netgame_connection_state(e.c), NETGAME_STATE_LISTENING);
    /* The first valid packet makes its sender the peer. */
    n = make_packet(p, config.protocol_id, 0, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.2, ADDRESS_A, 1, p, n), 1);
    CHECK_EQ(netgame_connection_state(e.c), NETGAME_STATE_CONNECTED);
    int peer_bytes;
    const uint8_t *peer = netgame_connection_peer(e.c, &peer_bytes);
    CHECK(peer && peer_bytes == 1 && peer[0] == 'A');
    /* Others are ignored from then on. */
    n = make_packet(p, config.protocol_id, 1, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.3, ADDRESS_X, 1, p, n), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_DROP_FOREIGN], 1);
    /* Duplicates of the newest and of an older one. */
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.3, ADDRESS_A, 1, p, n), 1);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.3, ADDRESS_A, 1, p, n), 0);
    n = make_packet(p, config.protocol_id, 0, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.3, ADDRESS_A, 1, p, n), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_DROP_DUPLICATE], 2);
    /* A 16-byte datagram is taken (the original would ignore it). */
    n = make_packet(p, config.protocol_id, 2, 0, 0, 0);
    CHECK_EQ(n, 16);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.4, ADDRESS_A, 1, p, n), 1);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_RECEIVED_HEADER_ONLY], 1);
    /* Far ahead, then one 40 behind it: taken, too old to ack. */
    n = make_packet(p, config.protocol_id, 100, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.5, ADDRESS_A, 1, p, n), 1);
    n = make_packet(p, config.protocol_id, 60, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.5, ADDRESS_A, 1, p, n), 1);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_RECEIVED_OLD], 1);
    CHECK_EQ(netgame_connection_remote_sequence(e.c), 100);
    CHECK_EQ(netgame_connection_ack_bits(e.c), 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_PACKETS_RECEIVED], 5);
    /* Outside a MaxSequence of 31 (a fresh server: nothing connects). */
    netgame_config_t small;
    manual_config(&small, NETGAME_SERVER);
    small.max_sequence = 31;
    endpoint_t w;
    endpoint_init(&w, &small, 0);
    n = make_packet(p, config.protocol_id, 32, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(w.c, 0.1, ADDRESS_A, 1, p, n), 0);
    n = make_packet(p, config.protocol_id, 3, 40, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(w.c, 0.1, ADDRESS_A, 1, p, n), 0);
    CHECK_EQ(netgame_connection_counters(w.c)[NETGAME_COUNTER_DROP_OUT_OF_RANGE], 2);
    CHECK_EQ(netgame_connection_state(w.c), NETGAME_STATE_LISTENING);
    netgame_connection_destroy(w.c);
    /* The header we send now. */
    CHECK_EQ(netgame_connection_send_packet(e.c, 0.6, (const uint8_t *)"hi", 2), 0);
    netgame_header_t h;
    CHECK_EQ(netgame_read_header(e.last, e.last_bytes, &h), 0);
    CHECK(h.sequence == 0 && h.ack == 100 && h.ack_bits == 0 && e.last_bytes == 18);
    netgame_connection_destroy(e.c);
}

static void test_false_ack_zero(void)
{
    endpoint_t e;
    manual_endpoint(&e, NETGAME_CLIENT);
    CHECK_EQ(netgame_connection_send_packet(e.c, 0, zeros, 4), 0);
    CHECK_EQ(netgame_connection_send_packet(e.c, 0.1, zeros, 4), 1);
    uint8_t p[64];
    /* The peer's first packets, sent before ours arrived: ack 0, no bits. */
    int n = make_packet(p, e.protocol_id, 0, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.15, ADDRESS_B, 1, p, n), 1);
    CHECK_EQ(e.acked_count, 0);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_FALSE_ACK_ZERO], 1);
    /* Once it acks something, ack bits name sequence 0 as usual. */
    n = make_packet(p, e.protocol_id, 1, 1, 1, 4);
    CHECK_EQ(netgame_connection_receive_packet(e.c, 0.25, ADDRESS_B, 1, p, n), 1);
    CHECK_EQ(e.acked_count, 2);
    CHECK(e.acked[0] == 0 && e.acked[1] == 1);
    CHECK(fabs(e.acked_rtt[0] - 0.25) < 1e-9 && fabs(e.acked_rtt[1] - 0.15) < 1e-9);
    /* RTT: 0 -> 0.025 -> 0.025 + (0.15 - 0.025) * 0.1. */
    CHECK(fabs(netgame_connection_rtt(e.c) - (0.025 + 0.0125)) < 1e-9);
    /* A packet the peer sent before it received anything, held back by the
     * network, arriving after one that acked: still not an ack of 0. */
    endpoint_t r;
    manual_endpoint(&r, NETGAME_CLIENT);
    netgame_connection_send_packet(r.c, 0, zeros, 4); /* 0 */
    netgame_connection_send_packet(r.c, 0.1, zeros, 4); /* 1 */
    n = make_packet(p, r.protocol_id, 5, 1, 0, 4); /* acks 1 only */
    netgame_connection_receive_packet(r.c, 0.2, ADDRESS_B, 1, p, n);
    n = make_packet(p, r.protocol_id, 3, 0, 0, 4); /* older, sent before */
    netgame_connection_receive_packet(r.c, 0.2, ADDRESS_B, 1, p, n);
    CHECK_EQ(r.acked_count, 1);
    CHECK_EQ(r.acked[0], 1);
    CHECK_EQ(counters(&r)[NETGAME_COUNTER_FALSE_ACK_ZERO], 1);
    n = make_packet(p, r.protocol_id, 6, 0, 0, 4); /* newer: a real (if odd) ack of 0 */
    netgame_connection_receive_packet(r.c, 0.3, ADDRESS_B, 1, p, n);
    CHECK_EQ(r.acked_count, 2);
    netgame_connection_destroy(r.c);
    /* After the peer has shown it receives, ack 0 is an ack of 0 (after a wrap). */
    netgame_config_t config2;
    manual_config(&config2, NETGAME_CLIENT);
    config2.max_sequence = 31;
    config2.first_sequence = 30;
    endpoint_t w;
    endpoint_init(&w, &config2, 0);
    for (int i = 0; i < 3; i++) netgame_connection_send_packet(w.c, 0.01 * i, zeros, 4); /* 30, 31, 0 */
    n = make_packet(p, config2.protocol_id, 0, 31, 0, 4);
    netgame_connection_receive_packet(w.c, 0.1, ADDRESS_B, 1, p, n);
    n = make_packet(p, config2.protocol_id, 1, 0, 0, 4);
    netgame_connection_receive_packet(w.c, 0.1, ADDRESS_B, 1, p, n);
    CHECK_EQ(w.acked_count, 2);
    CHECK(w.acked[0] == 31 && w.acked[1] == 0);
    netgame_connection_destroy(w.c);
    netgame_connection_destroy(e.c);
}

static void test_loss_after_rtt_maximum(void)
{
    endpoint_t e;
    manual_endpoint(&e, NETGAME_CLIENT);
    netgame_connection_send_packet(e.c, 0, zeros, 4);
    netgame_connection_send_packet(e.c, 0.5, zeros, 4);
    netgame_connection_update(e.c, 1.0);
    CHECK_EQ(e.lost_count, 0); /* exactly 1 s: not yet */
    netgame_connection_update(e.c, 1.01);
    CHECK_EQ(e.lost_count, 1);
    CHECK_EQ(e.lost[0], 0);
    /* An ack for a forgotten packet acks nothing; the other is acked. */
    uint8_t p[64];
    int n = make_packet(p, e.protocol_id, 0, 1, 1, 4);
    netgame_connection_receive_packet(e.c, 1.2, ADDRESS_B, 1, p, n);
    CHECK_EQ(e.acked_count, 1);
    CHECK_EQ(e.acked[0], 1);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_PACKETS_LOST], 1);
    CHECK_EQ(counters(&e)[NETGAME_COUNTER_PACKETS_ACKED], 1);
    /* A full pending queue forgets its oldest as lost. */
    netgame_config_t small;
    manual_config(&small, NETGAME_CLIENT);
    small.pending_capacity = 4;
    endpoint_t s;
    endpoint_init(&s, &small, 0);
    for (int i = 0; i < 6; i++) netgame_connection_send_packet(s.c, 0, zeros, 1);
    CHECK_EQ(s.lost_count, 2);
    CHECK(s.lost[0] == 0 && s.lost[1] == 1);
    netgame_connection_destroy(s.c);
    netgame_connection_destroy(e.c);
}

static void test_timeouts(void)
{
    endpoint_t client;
    manual_endpoint(&client, NETGAME_CLIENT);
    netgame_connection_update(client.c, 10.0);
    CHECK_EQ(netgame_connection_state(client.c), NETGAME_STATE_CONNECTING);
    netgame_connection_update(client.c, 10.01);
    CHECK_EQ(netgame_connection_state(client.c), NETGAME_STATE_CONNECT_FAIL);
    CHECK_EQ(netgame_connection_send_packet(client.c, 10.02, zeros, 1), -1);
    CHECK_EQ(counters(&client)[NETGAME_COUNTER_TIMEOUTS], 1);
    CHECK_EQ(counters(&client)[NETGAME_COUNTER_PACKETS_LOST], 0);

    endpoint_t server;
    manual_endpoint(&server, NETGAME_SERVER);
    uint8_t p[64];
    int n = make_packet(p, server.protocol_id, 0, 0, 0, 4);
    netgame_connection_receive_packet(server.c, 1, ADDRESS_A, 1, p, n);
    CHECK(netgame_connection_connected(server.c));
    /* Short datagrams and strangers do not keep it alive. */
    netgame_connection_receive_packet(server.c, 8, ADDRESS_A, 1, p, 10);
    netgame_connection_receive_packet(server.c, 8, ADDRESS_X, 1, p, n);
    netgame_connection_update(server.c, 11.0);
    CHECK(netgame_connection_connected(server.c));
    CHECK_EQ(netgame_connection_send_packet(server.c, 11.0, zeros, 1), 0);
    netgame_connection_update(server.c, 11.01);
    CHECK_EQ(netgame_connection_state(server.c), NETGAME_STATE_LISTENING);
    /* Its unacked packet is lost with the connection. */
    CHECK_EQ(counters(&server)[NETGAME_COUNTER_PACKETS_LOST], 1);
    /* It takes the next peer, with nothing received, and goes on with its own
     * sequence (1: sequence 0 went to the old connection). */
    n = make_packet(p, server.protocol_id, 7, 0, 0, 4);
    CHECK_EQ(netgame_connection_receive_packet(server.c, 12, ADDRESS_X, 1, p, n), 1);
    int peer_bytes;
    CHECK(netgame_connection_peer(server.c, &peer_bytes)[0] == 'X');
    CHECK_EQ(netgame_connection_send_packet(server.c, 12, zeros, 1), 1);
    netgame_header_t h;
    CHECK_EQ(netgame_read_header(server.last, server.last_bytes, &h), 0);
    CHECK(h.ack == 7 && h.ack_bits == 0);
    CHECK_EQ(counters(&server)[NETGAME_COUNTER_CONNECTS], 2);
    netgame_connection_destroy(client.c);
    netgame_connection_destroy(server.c);
}

/* A server that timed out takes the same client again while the client never
 * noticed: the client must take the server's new packets (not drop them as
 * duplicates of the old connection's) and ack only what it got. */
static void test_server_reconnects(void)
{
    endpoint_t client, server;
    manual_endpoint(&client, NETGAME_CLIENT);
    manual_endpoint(&server, NETGAME_SERVER);
    for (int i = 0; i < 3; i++) {
        netgame_connection_send_packet(client.c, 0.1 * i, zeros, 4);
        netgame_connection_receive_packet(server.c, 0.1 * i + 0.01, ADDRESS_A, 1, client.last, client.last_bytes);
    }
    for (int i = 0; i < 5; i++) {
        netgame_connection_send_packet(server.c, 0.3 + 0.1 * i, zeros, 4);
        netgame_connection_receive_packet(client.c, 0.31 + 0.1 * i, ADDRESS_B, 1, server.last, server.last_bytes);
    }
    CHECK_EQ(netgame_connection_remote_sequence(client.c), 4);
    netgame_connection_update(server.c, 11.0); /* the client's packets stopped reaching it */
    CHECK_EQ(netgame_connection_state(server.c), NETGAME_STATE_LISTENING);
    netgame_connection_send_packet(client.c, 11.1, zeros, 4);
    CHECK_EQ(netgame_connection_receive_packet(server.c, 11.11, ADDRESS_A, 1, client.last, client.last_bytes), 1);
    CHECK(netgame_connection_connected(server.c));
    CHECK_EQ(netgame_connection_send_packet(server.c, 11.2, zeros, 4), 5);
    CHECK_EQ(netgame_connection_receive_packet(client.c, 11.21, ADDRESS_B, 1, server.last, server.last_bytes), 1);
    CHECK_EQ(counters(&client)[NETGAME_COUNTER_DROP_DUPLICATE], 0);
    int acked_before = server.acked_count;
    netgame_connection_send_packet(client.c, 11.3, zeros, 4);
    netgame_connection_receive_packet(server.c, 11.31, ADDRESS_A, 1, client.last, client.last_bytes);
    CHECK_EQ(server.acked_count, acked_before + 1);
    CHECK_EQ(server.acked[server.acked_count - 1], 5);
    netgame_connection_destroy(client.c);
    netgame_connection_destroy(server.c);
}

/* ---- two endpoints over a simple link in virtual time ---- */

typedef struct flight_t {
    double due;
    int to;
    int bytes;
    uint8_t data[NETGAME_MAX_PACKET_BYTES];
} flight_t;

#define FLIGHT_MAX 4096
typedef struct pair_t {
    endpoint_t side[2]; /* 0 client (A), 1 server (B) */
    double latency[2];  /* one-way, per direction from side d */
    double loss_every[2]; /* drop every n-th datagram from side d (0 none) */
    double stop_link_at[2]; /* >= 0: drop everything from side d after */
    flight_t *flights;
    int count;
    int sent_from[2];
} pair_t;

static pair_t *pair_current; /* the send callback finds its pair here */

static void pair_send(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet, int bytes)
{
    (void)address;
    (void)address_bytes;
    endpoint_t *e = context;
    pair_t *p = pair_current;
    int from = e == &p->side[1];
    on_send(context, address, address_bytes, packet, bytes);
    p->sent_from[from]++;
    if (p->loss_every[from] > 0 && p->sent_from[from] % (int)p->loss_every[from] == 0) return;
    if (p->count == FLIGHT_MAX) return;
    flight_t *f = &p->flights[p->count++];
    f->due = -1; /* set by pair_run, which knows the time */
    f->to = 1 - from;
    f->bytes = bytes;
    memcpy(f->data, packet, (size_t)bytes);
}

static void pair_init(pair_t *p, netgame_config_t *client, netgame_config_t *server)
{
    memset(p, 0, sizeof *p);
    p->flights = calloc(FLIGHT_MAX, sizeof *p->flights);
    p->stop_link_at[0] = p->stop_link_at[1] = -1;
    pair_current = p;
    endpoint_init(&p->side[0], client, 0);
    endpoint_init(&p->side[1], server, 0);
    for (int s = 0; s < 2; s++) {
        /* Re-create with the pair's send callback. */
        netgame_connection_destroy(p->side[s].c);
        netgame_config_t *config = s ? server : client;
        config->send = pair_send;
        p->side[s].c = netgame_connection_create(config);
        if (s == 0) netgame_connection_start(p->side[s].c, 0, ADDRESS_B, 1);
        else netgame_connection_start(p->side[s].c, 0, NULL, 0);
    }
}

/* A client and a server of the default config with 8-byte payloads. */
static void pair_configs(netgame_config_t *client, netgame_config_t *server)
{
    netgame_default_config(client);
    netgame_default_config(server);
    server->role = NETGAME_SERVER;
    client->payload_bytes = server->payload_bytes = 8;
}

/* pair_init with 25 ms each way. */
static void pair_start(pair_t *p, netgame_config_t *client, netgame_config_t *server)
{
    pair_init(p, client, server);
    p->latency[0] = p->latency[1] = 0.025;
}

/* Runs both endpoints from `from` to `until` with a tick of 1/30 s (the
 * example's DeltaTime); calls observe after each tick. */
static void pair_run(pair_t *p, double from, double until, void (*observe)(pair_t *, double))
{
    pair_current = p;
    const double tick = 1.0 / 30.0;
    for (long step = (long)llround(from / tick); step * tick <= until + 1e-9; step++) {
        double now = step * tick;
        for (int s = 0; s < 2; s++) {
            int before = p->count;
            netgame_connection_update(p->side[s].c, now);
            for (int i = before; i < p->count; i++) {
                p->flights[i].due = now + p->latency[s];
                if (p->stop_link_at[s] >= 0 && now >= p->stop_link_at[s]) p->flights[i].due = -2;
            }
        }
        /* Deliver what is due by the next tick (in order of sending). */
        int kept = 0;
        for (int i = 0; i < p->count; i++) {
            flight_t *f = &p->flights[i];
            if (f->due == -2) continue;
            if (f->due <= now + tick) {
                netgame_connection_receive_packet(p->side[f->to].c, f->due, f->to ? ADDRESS_A : ADDRESS_B, 1, f->data,
                                                  f->bytes);
            } else {
                if (kept != i) p->flights[kept] = *f;
                kept++;
            }
        }
        p->count = kept;
        if (observe) observe(p, now);
    }
}

static void pair_free(pair_t *p)
{
    netgame_connection_destroy(p->side[0].c);
    netgame_connection_destroy(p->side[1].c);
    free(p->flights);
}

static double good_at[2];
static void note_good(pair_t *p, double now)
{
    for (int s = 0; s < 2; s++)
        if (good_at[s] < 0 && netgame_connection_mode(p->side[s].c) == NETGAME_MODE_GOOD) good_at[s] = now;
}

static void test_flow_control_quiet_link(void)
{
    netgame_config_t client, server;
    pair_configs(&client, &server);
    pair_t p;
    pair_start(&p, &client, &server);
    good_at[0] = good_at[1] = -1;
    pair_run(&p, 0, 3.0, note_good);
    /* Bad mode: 10 packets a second from the client. */
    int sent_3s = p.side[0].sends;
    CHECK(sent_3s >= 29 && sent_3s <= 31);
    pair_run(&p, 3.0 + 1.0 / 30, 10.0, note_good);
    /* Good about 4 s after connecting (client connects at ~0.15 s). */
    CHECK(good_at[0] > 4.0 && good_at[0] < 4.5);
    CHECK(good_at[1] > 4.0 && good_at[1] < 4.5);
    int before = p.side[0].sends;
    pair_run(&p, 10.0 + 1.0 / 30, 12.0, NULL);
    int in_2s = p.side[0].sends - before;
    CHECK(in_2s >= 58 && in_2s <= 62);
    /* Nothing lost, RTT near 50 ms plus up to a tick of waiting. */
    CHECK_EQ(counters(&p.side[0])[NETGAME_COUNTER_PACKETS_LOST], 0);
    CHECK_EQ(counters(&p.side[1])[NETGAME_COUNTER_PACKETS_LOST], 0);
    double rtt = netgame_connection_rtt(p.side[0].c);
    CHECK(rtt > 0.04 && rtt < 0.09);
    CHECK_EQ(counters(&p.side[0])[NETGAME_COUNTER_MODE_TO_GOOD], 1);
    CHECK_EQ(counters(&p.side[0])[NETGAME_COUNTER_MODE_TO_BAD], 0);
    pair_free(&p);
}

static void test_flow_control_penalty(void)
{
    netgame_config_t client, server;
    pair_configs(&client, &server);
    pair_t p;
    pair_start(&p, &client, &server);
    pair_run(&p, 0, 6.0, NULL);
    CHECK_EQ(netgame_connection_mode(p.side[0].c), NETGAME_MODE_GOOD);
    CHECK(netgame_connection_penalty_time(p.side[0].c) == 4.0);
    /* RTT 400 ms: Bad within a few seconds, after less than 10 s of Good: penalty 8. */
    p.latency[0] = p.latency[1] = 0.2;
    pair_run(&p, 6.0 + 1.0 / 30, 9.0, NULL);
    CHECK_EQ(netgame_connection_mode(p.side[0].c), NETGAME_MODE_BAD);
    CHECK(netgame_connection_penalty_time(p.side[0].c) == 8.0);
    /* Quiet again: Good only after 8 s of RTT <= 250 ms. */
    p.latency[0] = p.latency[1] = 0.025;
    good_at[0] = good_at[1] = -1;
    pair_run(&p, 9.0 + 1.0 / 30, 25.0, note_good);
    CHECK(good_at[0] > 17.0 && good_at[0] < 19.5);
    /* Bad again within 10 s: 16. */
    p.latency[0] = p.latency[1] = 0.2;
    pair_run(&p, 25.0 + 1.0 / 30, 28.0, NULL);
    CHECK(netgame_connection_penalty_time(p.side[0].c) == 16.0);
    CHECK_EQ(counters(&p.side[0])[NETGAME_COUNTER_PENALTY_DOUBLED], 2);
    /* Good after 16 s, then every 10 s of Good halves it: 8, 4. */
    p.latency[0] = p.latency[1] = 0.025;
    pair_run(&p, 28.0 + 1.0 / 30, 70.0, NULL);
    CHECK_EQ(netgame_connection_mode(p.side[0].c), NETGAME_MODE_GOOD);
    CHECK_EQ(counters(&p.side[0])[NETGAME_COUNTER_PENALTY_HALVED], 2);
    CHECK(netgame_connection_penalty_time(p.side[0].c) == 4.0);
    CHECK_EQ(counters(&p.side[0])[NETGAME_COUNTER_PACKETS_LOST], 0);
    pair_free(&p);
}

static void test_one_way_loss_and_stop(void)
{
    netgame_config_t client, server;
    pair_configs(&client, &server);
    /* The server stops acking after 5 s: it still sends and receives. */
    server.fault_stop_acking_at = 5.0;
    pair_t p;
    pair_start(&p, &client, &server);
    p.loss_every[0] = 5; /* every 5th client datagram lost */
    pair_run(&p, 0, 12.0, NULL);
    const uint64_t *cc = counters(&p.side[0]), *sc = counters(&p.side[1]);
    CHECK(netgame_connection_connected(p.side[0].c) && netgame_connection_connected(p.side[1].c));
    /* Server's packets all arrive and are acked (the client acks). */
    CHECK_EQ(sc[NETGAME_COUNTER_PACKETS_LOST], 0);
    /* The client's: every 5th lost until 5 s, then all of them. */
    CHECK(cc[NETGAME_COUNTER_PACKETS_LOST] > cc[NETGAME_COUNTER_PACKETS_SENT] / 2);
    CHECK(cc[NETGAME_COUNTER_PACKETS_ACKED] > 10);
    uint32_t frozen = netgame_connection_remote_sequence(p.side[1].c);
    pair_run(&p, 12.0 + 1.0 / 30, 13.0, NULL);
    CHECK_EQ(netgame_connection_remote_sequence(p.side[1].c), frozen);
    pair_free(&p);
}

static void test_wrap(void)
{
    const uint32_t maxes[2] = {31, 0xFFFFFFFFu};
    const uint32_t firsts[2] = {0, 0xFFFFFFC0u};
    for (int k = 0; k < 2; k++) {
        netgame_config_t client, server;
        pair_configs(&client, &server);
        client.max_sequence = server.max_sequence = maxes[k];
        client.first_sequence = server.first_sequence = firsts[k];
        pair_t p;
        pair_start(&p, &client, &server);
        pair_run(&p, 0, 10.0, NULL);
        for (int s = 0; s < 2; s++) {
            const uint64_t *c = counters(&p.side[s]);
            /* Past the wrap with nothing lost and nothing mistaken for a duplicate. */
            CHECK(c[NETGAME_COUNTER_PACKETS_SENT] > 64);
            CHECK_EQ(c[NETGAME_COUNTER_PACKETS_LOST], 0);
            CHECK_EQ(c[NETGAME_COUNTER_DROP_DUPLICATE], 0);
            CHECK_EQ(c[NETGAME_COUNTER_PACKETS_RECEIVED], counters(&p.side[1 - s])[NETGAME_COUNTER_PACKETS_SENT]);
            CHECK(c[NETGAME_COUNTER_PACKETS_ACKED] + 3 >= c[NETGAME_COUNTER_PACKETS_SENT]);
            CHECK_EQ(netgame_connection_mode(p.side[s].c), NETGAME_MODE_GOOD);
        }
        pair_free(&p);
    }
}

const chunk_test_t netgame_tests[] = {
    {"header_bytes", test_header_bytes},
    {"more_recent", test_more_recent},
    {"vectors_r", test_vectors_r},
    {"vectors_a", test_vectors_a},
    {"vectors_k", test_vectors_k},
    {"vectors_c", test_vectors_c},
    {"receive_drops", test_receive_drops},
    {"false_ack_zero", test_false_ack_zero},
    {"loss_after_rtt_maximum", test_loss_after_rtt_maximum},
    {"timeouts", test_timeouts},
    {"server_reconnects", test_server_reconnects},
    {"flow_control_quiet_link", test_flow_control_quiet_link},
    {"flow_control_penalty", test_flow_control_penalty},
    {"one_way_loss_and_stop", test_one_way_loss_and_stop},
    {"wrap", test_wrap},
    {NULL, NULL},
};
