/*
 * fuzz_netcode: libFuzzer harness that drives a netcode 1.02 client and server
 * (endpoints/src/netcode/) with arbitrary sequences of datagrams and time
 * steps, and reads arbitrary bytes as tokens and packets.
 *
 * The two are wired through two queues the input controls: A holds the
 * client's datagrams on their way to the server, B the server's on their way
 * back. Keys come from a fixed seed, so the client connects when the input
 * lets the handshake through.
 *
 * Input: a config byte (bit 0: one server slot, else 4; bit 1: token timeout
 * 1 s, else 5; bit 2: the server's protocol id differs), then operations (one
 * byte, then its arguments; a missing byte reads as 0):
 *   op % 10:  0 advance time by b ms, update both
 *             1 deliver the oldest of A   2 drop it   3 deliver A[b] again
 *             4 deliver the oldest of B   5 drop it   6 deliver B[b] again
 *             7 inject: flags f (bit 0 to the client, else the server; bit 1
 *               from a stranger), LE16 length (at most 1400), that many bytes
 *             8 mutate a copy of A[b] or B[b] (bit 7 of b): flip bit LE16, deliver it
 *             9 the client sends a payload of b + 1 bytes, the server one to slot b & 3
 * Before the operations, the input's first 2048 bytes after the config are
 * also read as a connect token and, at 1078, as a request (nothing may crash).
 *
 * What it checks (abort on failure, so libFuzzer keeps the input): every
 * datagram sent is a request of 1078 bytes or an encrypted packet of 18 to
 * 1225 bytes with a valid prefix; each endpoint's received count equals what
 * it decrypted plus what it dropped before decrypting; the server never holds
 * more clients than its slots; the client's state is one of the standard's.
 * ASan and UBSan check the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netcode.h"
#include "util.h"
#include "harness.h"

#define QUEUE 64
#define PROTOCOL 0x1122334455667788ull

typedef struct datagram_t {
    uint8_t data[NETCODE_MAX_PACKET_BYTES];
    int bytes;
} datagram_t;

typedef struct queue_t {
    datagram_t items[QUEUE];
    int count;
} queue_t;

static queue_t queue_a, queue_b;
static netcode_address_t client_address, server_address, stranger;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_netcode: %s\n", what);
        abort();
    }
}

static void check_datagram(const uint8_t *packet, int bytes)
{
    if (packet[0] == 0) {
        check(bytes == NETCODE_REQUEST_PACKET_BYTES, "request of another size");
        return;
    }
    int type = packet[0] & 15, n = packet[0] >> 4;
    check(type >= 1 && type <= 6 && n >= 1 && n <= 8, "bad prefix sent");
    check(bytes >= 1 + n + 16 && bytes <= 1 + 8 + NETCODE_MAX_PAYLOAD_BYTES + 16, "bad length sent");
}

static void on_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    (void)to;
    queue_t *q = context;
    check_datagram(packet, bytes);
    if (q->count == QUEUE) return; /* a full link loses it */
    memcpy(q->items[q->count].data, packet, (size_t)bytes);
    q->items[q->count].bytes = bytes;
    q->count++;
}

static void seeded(void *context, uint8_t *out, size_t bytes)
{
    cs_rng_t *rng = context;
    for (size_t i = 0; i < bytes; i++) out[i] = (uint8_t)cs_rng_next(rng);
}

static void check_counters(netcode_client_t *c, netcode_server_t *s)
{
    const uint64_t *k = netcode_client_counters(c);
    uint64_t before = k[NETCODE_CLIENT_COUNTER_DECRYPTED] + k[NETCODE_CLIENT_COUNTER_DROP_NOT_CONNECTING] +
                      k[NETCODE_CLIENT_COUNTER_DROP_FOREIGN];
    for (int r = 1; r < NETCODE_READ_RESULT_COUNT; r++) before += k[NETCODE_CLIENT_COUNTER_DROP_READ + r - 1];
    check(before == k[NETCODE_CLIENT_COUNTER_RECEIVED], "client counters do not add up");
    const uint64_t *m = netcode_server_counters(s);
    uint64_t total = m[NETCODE_SERVER_COUNTER_DECRYPTED];
    for (int r = 1; r < NETCODE_READ_RESULT_COUNT; r++) total += m[NETCODE_SERVER_COUNTER_DROP_READ + r - 1];
    check(total == m[NETCODE_SERVER_COUNTER_RECEIVED], "server counters do not add up");
    check(netcode_server_connected_clients(s) <= netcode_server_max_clients(s), "more clients than slots");
    int state = netcode_client_state(c);
    check(state >= -6 && state <= 3, "client state out of range");
}

static void pop(queue_t *q, int index)
{
    memmove(&q->items[index], &q->items[index + 1], (size_t)(q->count - index - 1) * sizeof q->items[0]);
    q->count--;
}


/* A client and a server joined by queue_a (client to server) and queue_b. */
typedef struct session_t {
    netcode_client_t *client;
    netcode_server_t *server;
    cs_rng_t rng; /* the key's, the token's and the server's */
    double now;
} session_t;

/* Arbitrary bytes as a token and as a request. */
static void read_raw(const input_t *in)
{
    static netcode_packet_t packet;
    const uint8_t *at = in->data + in->at;
    if (in->size - in->at >= NETCODE_CONNECT_TOKEN_BYTES) {
        netcode_connect_token_t t;
        netcode_read_connect_token(at, NETCODE_CONNECT_TOKEN_BYTES, &t);
        netcode_private_token_t p;
        netcode_read_private_token(at, &p);
    }
    if (in->size - in->at >= NETCODE_REQUEST_PACKET_BYTES)
        netcode_read_request_packet(at, NETCODE_REQUEST_PACKET_BYTES, PROTOCOL, 0, at, &packet);
}

/* The server (config: bit 0 one slot, bit 2 another protocol id) and a
 * client connecting with a token (bit 1: a 1 s timeout). */
static void create_session(session_t *s, uint8_t config)
{
    queue_a.count = queue_b.count = 0;
    netcode_address_ipv4(&client_address, 10, 0, 0, 1, 50000);
    netcode_address_ipv4(&server_address, 10, 0, 0, 2, 40000);
    netcode_address_ipv4(&stranger, 10, 0, 0, 3, 1);
    cs_rng_seed(&s->rng, 5);
    uint8_t key[32];
    seeded(&s->rng, key, sizeof key);

    netcode_server_config_t sc;
    netcode_server_default_config(&sc);
    sc.protocol_id = config & 4 ? PROTOCOL + 1 : PROTOCOL;
    memcpy(sc.private_key, key, 32);
    sc.public_address = server_address;
    sc.max_clients = config & 1 ? 1 : 4;
    sc.unix_epoch = 1e9;
    sc.random = seeded;
    sc.random_context = &s->rng;
    sc.send = on_send;
    sc.context = &queue_b;
    s->server = netcode_server_create(&sc, 0);
    netcode_client_config_t cc = {1e9, on_send, NULL, NULL, &queue_a};
    s->client = netcode_client_create(&cc);
    if (!s->server || !s->client) abort();

    netcode_token_params_t p;
    netcode_token_params_init(&p, PROTOCOL, 1, 1000000000, &server_address);
    p.timeout_seconds = config & 2 ? 1 : 5;
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    netcode_generate_connect_token(&p, key, seeded, &s->rng, token, NULL);
    s->now = 0;
    netcode_client_connect(s->client, s->now, token, sizeof token);
}

/* A datagram of queue q reaches the other end: queue_a's the server, queue_b's the client. */
static void receive(session_t *s, const queue_t *q, const uint8_t *data, int bytes)
{
    if (q == &queue_b) netcode_client_receive_packet(s->client, s->now, &server_address, data, bytes);
    else netcode_server_receive_packet(s->server, s->now, &client_address, data, bytes);
}

/* Ops 1-3 (queue_a) and 4-6 (queue_b): deliver the first datagram, lose it,
 * or deliver a copy of one the input picks. */
static void take(session_t *s, input_t *in, queue_t *q, int kind)
{
    int index = kind == 2 ? next_byte(in) % (q->count ? q->count : 1) : 0;
    if (!q->count) return;
    if (kind != 1) receive(s, q, q->items[index].data, q->items[index].bytes);
    if (kind != 2) pop(q, 0);
}

/* Op 7: bytes of the input as a datagram from the server, the client or a stranger. */
static void inject(session_t *s, input_t *in)
{
    static uint8_t buffer[2048];
    uint8_t flags = next_byte(in);
    int length = next_byte(in);
    length |= next_byte(in) << 8;
    if (length > 1400) length = 1400;
    for (int i = 0; i < length; i++) buffer[i] = next_byte(in);
    const netcode_address_t *from = flags & 2 ? &stranger : flags & 1 ? &server_address : &client_address;
    if (flags & 1) netcode_client_receive_packet(s->client, s->now, from, buffer, length);
    else netcode_server_receive_packet(s->server, s->now, from, buffer, length);
}

/* Op 8: a queued datagram with one bit flipped. */
static void flip(session_t *s, input_t *in)
{
    uint8_t b = next_byte(in);
    int bit = next_byte(in);
    bit |= next_byte(in) << 8;
    queue_t *q = b & 0x80 ? &queue_b : &queue_a;
    if (!q->count) return;
    datagram_t d = q->items[(b & 0x7f) % q->count];
    bit %= d.bytes * 8;
    d.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    receive(s, q, d.data, d.bytes);
}

static void step(session_t *s, input_t *in)
{
    uint8_t op = next_byte(in) % 10;
    switch (op) {
    case 0:
        s->now += next_byte(in) / 1000.0;
        netcode_client_update(s->client, s->now);
        netcode_server_update(s->server, s->now);
        break;
    case 1:
    case 2:
    case 3: take(s, in, &queue_a, op - 1); break;
    case 4:
    case 5:
    case 6: take(s, in, &queue_b, op - 4); break;
    case 7: inject(s, in); break;
    case 8: flip(s, in); break;
    case 9: {
        uint8_t b = next_byte(in);
        uint8_t payload[256];
        memset(payload, b, sizeof payload);
        netcode_client_send_payload(s->client, s->now, payload, b + 1);
        netcode_server_send_payload(s->server, s->now, b & 3, payload, b + 1);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t in = {data, size, 0};
    uint8_t config = next_byte(&in);
    read_raw(&in);
    static session_t s;
    create_session(&s, config);
    for (int ops = 0; in.at < in.size && ops++ < 4000;) {
        step(&s, &in);
        check_counters(s.client, s.server);
    }
    netcode_client_destroy(s.client);
    netcode_server_destroy(s.server);
    return 0;
}
