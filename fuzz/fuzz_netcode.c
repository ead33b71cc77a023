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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 0;
#define BYTE() (pos < size ? data[pos++] : 0)
    uint8_t config = BYTE();
    static netcode_packet_t packet;
    /* Arbitrary bytes as a token and as a request. */
    if (size - pos >= NETCODE_CONNECT_TOKEN_BYTES) {
        netcode_connect_token_t t;
        netcode_read_connect_token(data + pos, NETCODE_CONNECT_TOKEN_BYTES, &t);
        netcode_private_token_t p;
        netcode_read_private_token(data + pos, &p);
    }
    if (size - pos >= NETCODE_REQUEST_PACKET_BYTES)
        netcode_read_request_packet(data + pos, NETCODE_REQUEST_PACKET_BYTES, PROTOCOL, 0, data + pos, &packet);

    queue_a.count = queue_b.count = 0;
    netcode_address_ipv4(&client_address, 10, 0, 0, 1, 50000);
    netcode_address_ipv4(&server_address, 10, 0, 0, 2, 40000);
    netcode_address_ipv4(&stranger, 10, 0, 0, 3, 1);
    cs_rng_t rng;
    cs_rng_seed(&rng, 5);
    uint8_t key[32];
    seeded(&rng, key, sizeof key);

    netcode_server_config_t sc;
    netcode_server_default_config(&sc);
    sc.protocol_id = config & 4 ? PROTOCOL + 1 : PROTOCOL;
    memcpy(sc.private_key, key, 32);
    sc.public_address = server_address;
    sc.max_clients = config & 1 ? 1 : 4;
    sc.unix_epoch = 1e9;
    sc.random = seeded;
    sc.random_context = &rng;
    sc.send = on_send;
    sc.context = &queue_b;
    netcode_server_t *server = netcode_server_create(&sc, 0);
    netcode_client_config_t cc = {1e9, on_send, NULL, NULL, &queue_a};
    netcode_client_t *client = netcode_client_create(&cc);
    if (!server || !client) abort();

    netcode_token_params_t p;
    memset(&p, 0, sizeof p);
    p.protocol_id = PROTOCOL;
    p.client_id = 1;
    p.create_timestamp = 1000000000;
    p.expire_seconds = 30;
    p.timeout_seconds = config & 2 ? 1 : 5;
    p.num_servers = 1;
    p.public_servers[0] = p.internal_servers[0] = server_address;
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    netcode_generate_connect_token(&p, key, seeded, &rng, token, NULL);
    double now = 0;
    netcode_client_connect(client, now, token, sizeof token);

    static uint8_t buffer[2048];
    int ops = 0;
    while (pos < size && ops++ < 4000) {
        uint8_t op = BYTE() % 10;
        switch (op) {
        case 0:
            now += BYTE() / 1000.0;
            netcode_client_update(client, now);
            netcode_server_update(server, now);
            break;
        case 1:
        case 2:
        case 3: {
            int index = op == 3 ? BYTE() % (queue_a.count ? queue_a.count : 1) : 0;
            if (!queue_a.count) break;
            if (op != 2) netcode_server_receive_packet(server, now, &client_address, queue_a.items[index].data, queue_a.items[index].bytes);
            if (op != 3) pop(&queue_a, 0);
            break;
        }
        case 4:
        case 5:
        case 6: {
            int index = op == 6 ? BYTE() % (queue_b.count ? queue_b.count : 1) : 0;
            if (!queue_b.count) break;
            if (op != 5) netcode_client_receive_packet(client, now, &server_address, queue_b.items[index].data, queue_b.items[index].bytes);
            if (op != 6) pop(&queue_b, 0);
            break;
        }
        case 7: {
            uint8_t flags = BYTE();
            int length = BYTE();
            length |= BYTE() << 8;
            if (length > 1400) length = 1400;
            for (int i = 0; i < length; i++) buffer[i] = BYTE();
            const netcode_address_t *from = flags & 2 ? &stranger : flags & 1 ? &server_address : &client_address;
            if (flags & 1) netcode_client_receive_packet(client, now, from, buffer, length);
            else netcode_server_receive_packet(server, now, from, buffer, length);
            break;
        }
        case 8: {
            uint8_t b = BYTE();
            int bit = BYTE();
            bit |= BYTE() << 8;
            queue_t *q = b & 0x80 ? &queue_b : &queue_a;
            if (!q->count) break;
            datagram_t d = q->items[(b & 0x7f) % q->count];
            bit %= d.bytes * 8;
            d.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            if (q == &queue_b) netcode_client_receive_packet(client, now, &server_address, d.data, d.bytes);
            else netcode_server_receive_packet(server, now, &client_address, d.data, d.bytes);
            break;
        }
        case 9: {
            uint8_t b = BYTE();
            uint8_t payload[256];
            memset(payload, b, sizeof payload);
            netcode_client_send_payload(client, now, payload, b + 1);
            netcode_server_send_payload(server, now, b & 3, payload, b + 1);
            break;
        }
        }
        check_counters(client, server);
    }
    netcode_client_destroy(client);
    netcode_server_destroy(server);
    return 0;
}
