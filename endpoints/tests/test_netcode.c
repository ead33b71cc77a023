/* Tests of the netcode 1.02 endpoints (include/netcode.h): wire vectors from
 * the standard, a connect token made by the reference library, every packet
 * of the reference library's captures decrypted, the replay window, the read
 * checks in their order, and the client and server against each other on an
 * in-memory network for each fault's outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "netcode.h"
#include "test.h"
#include "util.h"

#ifndef CHUNK_TEST_REPO_DIR
#define CHUNK_TEST_REPO_DIR "."
#endif

static const uint8_t example_key[32] = {0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62,
                                        0xf6, 0x6f, 0x2b, 0x30, 0xe4, 0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99,
                                        0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1};
#define PROTOCOL 0x1122334455667788ull

static void seeded_random(void *context, uint8_t *out, size_t bytes)
{
    cs_rng_t *rng = context;
    for (size_t i = 0; i < bytes; i++) out[i] = (uint8_t)cs_rng_next(rng);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int read_file(const char *path, uint8_t *buffer, int size)
{
    FILE *in = fopen(path, "rb");
    if (!in) return -1;
    int n = (int)fread(buffer, 1, (size_t)size, in);
    fclose(in);
    return n;
}

/* ---- wire ---- */

/* Every read result has a name, and the drop counters are named after it. */
static void test_read_result_names(void)
{
    for (int r = 0; r < NETCODE_READ_RESULT_COUNT; r++) {
        char want[64];
        const char *name = netcode_read_result_name((netcode_read_result_t)r);
        CHECK(strcmp(name, "?") != 0);
        snprintf(want, sizeof want, "drop %s", name);
        CHECK(strcmp(netcode_read_drop_name((netcode_read_result_t)r), want) == 0);
    }
    CHECK(strcmp(netcode_read_result_name(NETCODE_READ_RESULT_COUNT), "?") == 0);
    CHECK(strcmp(netcode_read_drop_name(NETCODE_READ_RESULT_COUNT), "?") == 0);
    CHECK(strcmp(netcode_client_counter_name(NETCODE_CLIENT_COUNTER_DROP_READ + NETCODE_READ_REPLAYED - 1),
                 "drop replayed") == 0);
    CHECK(strcmp(netcode_server_counter_name(NETCODE_SERVER_COUNTER_DROP_READ + NETCODE_READ_NO_KEY - 1),
                 "drop no key") == 0);
}

static void test_sequence_bytes(void)
{
    CHECK_EQ(netcode_sequence_bytes(0), 1);
    CHECK_EQ(netcode_sequence_bytes(0xff), 1);
    CHECK_EQ(netcode_sequence_bytes(0x100), 2);
    CHECK_EQ(netcode_sequence_bytes(1000), 2);
    CHECK_EQ(netcode_sequence_bytes(0xffffff), 3);
    CHECK_EQ(netcode_sequence_bytes(1ull << 63), 8);
    uint8_t nonce[12];
    netcode_packet_nonce(0x0102030405060708ull, nonce);
    static const uint8_t want[12] = {0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1};
    CHECK(memcmp(nonce, want, 12) == 0);
}

/* The standard's example: sequence 1000 takes two bytes, E8 03, and the
 * prefix's high nibble says 2. The ciphertext is libsodium's
 * ChaCha20-Poly1305 IETF over the body with AD version + protocol id + prefix. */
static void test_encrypted_packet_bytes(void)
{
    uint8_t key[32], packet[64], body[8] = {3, 0, 0, 0, 64, 0, 0, 0};
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i + 1);
    int n = netcode_write_encrypted_packet(NETCODE_KEEP_ALIVE, 1000, body, 8, PROTOCOL, key, packet, sizeof packet);
    CHECK_EQ(n, 1 + 2 + 8 + 16);
    CHECK_EQ(packet[0], 0x24);
    CHECK_EQ(packet[1], 0xe8);
    CHECK_EQ(packet[2], 0x03);
    /* The same encryption by hand. */
    uint8_t ad[22] = "NETCODE 1.02";
    for (int i = 0; i < 8; i++) ad[13 + i] = (uint8_t)(PROTOCOL >> (8 * i));
    ad[21] = 0x24;
    uint8_t nonce[12] = {0, 0, 0, 0, 0xe8, 0x03, 0, 0, 0, 0, 0, 0}, want[24];
    unsigned long long len;
    crypto_aead_chacha20poly1305_ietf_encrypt(want, &len, body, 8, ad, sizeof ad, NULL, nonce, key);
    CHECK(memcmp(packet + 3, want, 24) == 0);
    netcode_packet_t p;
    CHECK_EQ(netcode_read_encrypted_packet(packet, n, PROTOCOL, key, NETCODE_CLIENT_ALLOWED, NULL, &p), NETCODE_READ_OK);
    CHECK_EQ(p.type, NETCODE_KEEP_ALIVE);
    CHECK_EQ(p.sequence, 1000);
    CHECK_EQ(p.client_index, 3);
    CHECK_EQ(p.max_clients, 64);
    /* Sizes of every type: denied and disconnect 18 bytes with sequence 0. */
    CHECK_EQ(netcode_write_encrypted_packet(NETCODE_DENIED, 0, NULL, 0, PROTOCOL, key, packet, sizeof packet), 18);
    CHECK_EQ(packet[0], 0x11);
    CHECK_EQ(netcode_write_encrypted_packet(NETCODE_DISCONNECT, 1ull << 63, NULL, 0, PROTOCOL, key, packet, sizeof packet), 25);
    CHECK_EQ(packet[0], 0x86);
    CHECK_EQ(packet[8], 0x80);
    /* Wrong body sizes are refused. */
    CHECK_EQ(netcode_write_encrypted_packet(NETCODE_KEEP_ALIVE, 0, body, 7, PROTOCOL, key, packet, sizeof packet), -1);
    CHECK_EQ(netcode_write_encrypted_packet(NETCODE_PAYLOAD, 0, body, 0, PROTOCOL, key, packet, sizeof packet), -1);
    CHECK_EQ(netcode_write_encrypted_packet(NETCODE_REQUEST, 0, body, 0, PROTOCOL, key, packet, sizeof packet), -1);
}

static void test_request_packet_layout(void)
{
    uint8_t nonce[24], data[1024], packet[1100];
    for (int i = 0; i < 24; i++) nonce[i] = (uint8_t)(0xa0 + i);
    for (int i = 0; i < 1024; i++) data[i] = (uint8_t)(i * 7);
    CHECK_EQ(netcode_write_request_packet(PROTOCOL, 0x0000000065000000ull, nonce, data, packet, 1077), -1);
    int n = netcode_write_request_packet(PROTOCOL, 0x0000000065000000ull, nonce, data, packet, sizeof packet);
    CHECK_EQ(n, 1078);
    CHECK_EQ(packet[0], 0);
    CHECK(memcmp(packet + 1, "NETCODE 1.02", 13) == 0);
    CHECK_EQ(le64(packet + 14), PROTOCOL);
    CHECK_EQ(packet[14], 0x88);
    CHECK_EQ(le64(packet + 22), 0x65000000ull);
    CHECK(memcmp(packet + 30, nonce, 24) == 0);
    CHECK(memcmp(packet + 54, data, 1024) == 0);
}

/* A token the reference library wrote (tests/data/netcode-library-token.bin:
 * netcode_generate_connect_token with servers 127.0.0.1:40000 and
 * [::1]:40001, expiry 3600, timeout 7, client id 0x0123456789abcdef,
 * protocol id 0x1122334455667788, user data 255, 254, ..., the examples' key). */
static void test_library_token(void)
{
    uint8_t buffer[4096];
    int n = read_file(CHUNK_TEST_REPO_DIR "/endpoints/tests/data/netcode-library-token.bin", buffer, sizeof buffer);
    CHECK_EQ(n, 2048);
    if (n != 2048) return;
    netcode_connect_token_t t;
    CHECK_EQ(netcode_read_connect_token(buffer, n, &t), NETCODE_TOKEN_OK);
    CHECK_EQ(t.protocol_id, PROTOCOL);
    CHECK_EQ(t.expire_timestamp - t.create_timestamp, 3600);
    CHECK_EQ(t.timeout_seconds, 7);
    CHECK_EQ(t.num_servers, 2);
    char text[64];
    CHECK(strcmp(netcode_address_format(&t.servers[0], text, sizeof text), "127.0.0.1:40000") == 0);
    CHECK(strcmp(netcode_address_format(&t.servers[1], text, sizeof text), "[0:0:0:0:0:0:0:1]:40001") == 0);
    uint8_t plain[1024];
    memcpy(plain, t.private_data, sizeof plain);
    CHECK_EQ(netcode_decrypt_private_token(plain, t.protocol_id, t.expire_timestamp, t.nonce, example_key), 0);
    netcode_private_token_t p;
    CHECK_EQ(netcode_read_private_token(plain, &p), NETCODE_TOKEN_OK);
    CHECK_EQ(p.client_id, 0x0123456789abcdefull);
    CHECK_EQ(p.timeout_seconds, 7);
    CHECK_EQ(p.num_servers, 2);
    CHECK(netcode_address_equal(&p.servers[1], &t.servers[1]));
    CHECK(memcmp(p.client_to_server_key, t.client_to_server_key, 32) == 0);
    CHECK(memcmp(p.server_to_client_key, t.server_to_client_key, 32) == 0);
    CHECK_EQ(p.user_data[0], 255);
    CHECK_EQ(p.user_data[255], 0);
    /* Our writer gives the same 2048 bytes back. */
    uint8_t again[2048];
    netcode_write_connect_token(&t, again);
    CHECK(memcmp(again, buffer, 2048) == 0);
    /* The associated data binds the expire timestamp and protocol id. */
    memcpy(plain, t.private_data, sizeof plain);
    CHECK_EQ(netcode_decrypt_private_token(plain, t.protocol_id, t.expire_timestamp + 1, t.nonce, example_key), -1);
    memcpy(plain, t.private_data, sizeof plain);
    CHECK_EQ(netcode_decrypt_private_token(plain, t.protocol_id + 1, t.expire_timestamp, t.nonce, example_key), -1);
}

static void test_token_round_trip(void)
{
    cs_rng_t rng;
    cs_rng_seed(&rng, 7);
    netcode_token_params_t params;
    memset(&params, 0, sizeof params);
    params.protocol_id = 42;
    params.client_id = 99;
    params.create_timestamp = 1000;
    params.expire_seconds = 30;
    params.timeout_seconds = -1;
    params.num_servers = NETCODE_MAX_SERVERS;
    for (int i = 0; i < NETCODE_MAX_SERVERS; i++) {
        netcode_address_t *a = &params.public_servers[i];
        memset(a, 0, sizeof *a);
        a->type = NETCODE_ADDRESS_IPV6; /* the largest private part */
        for (int k = 0; k < 16; k++) a->ip[k] = (uint8_t)(i * 16 + k);
        a->port = (uint16_t)(50000 + i);
        params.internal_servers[i] = *a;
    }
    uint8_t token[2048];
    netcode_connect_token_t fields, back;
    CHECK_EQ(netcode_generate_connect_token(&params, example_key, seeded_random, &rng, token, &fields), 0);
    CHECK_EQ(netcode_read_connect_token(token, 2048, &back), NETCODE_TOKEN_OK);
    CHECK_EQ(back.expire_timestamp, 1030);
    CHECK_EQ(back.timeout_seconds, -1);
    CHECK_EQ(back.num_servers, 32);
    CHECK(netcode_address_equal(&back.servers[31], &params.public_servers[31]));
    uint8_t plain[1024];
    memcpy(plain, back.private_data, sizeof plain);
    CHECK_EQ(netcode_decrypt_private_token(plain, 42, 1030, back.nonce, example_key), 0);
    netcode_private_token_t p;
    CHECK_EQ(netcode_read_private_token(plain, &p), NETCODE_TOKEN_OK);
    CHECK_EQ(p.client_id, 99);
    CHECK(memcmp(p.client_to_server_key, back.client_to_server_key, 32) == 0);
    /* The same seed gives the same token. */
    cs_rng_seed(&rng, 7);
    uint8_t token2[2048];
    netcode_generate_connect_token(&params, example_key, seeded_random, &rng, token2, NULL);
    CHECK(memcmp(token, token2, 2048) == 0);
    /* Hostile public parts. */
    uint8_t bad[2048];
    memcpy(bad, token, 2048);
    bad[12] = 'x';
    CHECK_EQ(netcode_read_connect_token(bad, 2048, &back), NETCODE_TOKEN_BAD_VERSION);
    CHECK_EQ(netcode_read_connect_token(token, 2047, &back), NETCODE_TOKEN_BAD_LENGTH);
    memcpy(bad, token, 2048);
    bad[1089] = 33; /* server count (after the timeout at 1085) */
    CHECK_EQ(netcode_read_connect_token(bad, 2048, &back), NETCODE_TOKEN_BAD_SERVER_COUNT);
    memcpy(bad, token, 2048);
    bad[1093] = 3; /* first address type */
    CHECK_EQ(netcode_read_connect_token(bad, 2048, &back), NETCODE_TOKEN_BAD_ADDRESS_TYPE);
    memcpy(bad, token, 2048);
    bad[28] = 0x01; /* create timestamp (bytes 21-28) after expire */
    CHECK_EQ(netcode_read_connect_token(bad, 2048, &back), NETCODE_TOKEN_BAD_TIMESTAMPS);
}

static void test_challenge_token(void)
{
    uint8_t key[32] = {9}, user[256], token[300];
    for (int i = 0; i < 256; i++) user[i] = (uint8_t)i;
    netcode_write_challenge_token(0x55, user, token);
    CHECK_EQ(token[0], 0x55);
    CHECK_EQ(token[8 + 255], 255);
    CHECK_EQ(token[299], 0);
    CHECK_EQ(netcode_encrypt_challenge_token(token, 3, key), 0);
    uint8_t copy[300];
    memcpy(copy, token, 300);
    CHECK_EQ(netcode_decrypt_challenge_token(copy, 4, key), -1);
    memcpy(copy, token, 300);
    CHECK_EQ(netcode_decrypt_challenge_token(copy, 3, key), 0);
    CHECK_EQ(copy[0], 0x55);
}

static void test_replay_window(void)
{
    netcode_replay_t r;
    netcode_replay_reset(&r);
    CHECK(!netcode_replay_already_received(&r, 0));
    netcode_replay_advance(&r, 0);
    CHECK(netcode_replay_already_received(&r, 0));
    CHECK(!netcode_replay_already_received(&r, 1));
    netcode_replay_advance(&r, 300);
    CHECK(netcode_replay_already_received(&r, 300));
    CHECK(netcode_replay_already_received(&r, 44));  /* 300 - 256: too old */
    CHECK(netcode_replay_already_received(&r, 40));  /* too old, its entry empty */
    CHECK(!netcode_replay_already_received(&r, 45)); /* inside the window, never received */
    netcode_replay_advance(&r, 45);
    CHECK(netcode_replay_already_received(&r, 45));
    CHECK(!netcode_replay_already_received(&r, 301));
    /* The top of the sequence space: no wrap. */
    netcode_replay_reset(&r);
    netcode_replay_advance(&r, UINT64_MAX - 10);
    CHECK(!netcode_replay_already_received(&r, UINT64_MAX - 5));
    CHECK(netcode_replay_already_received(&r, UINT64_MAX - 10));
    CHECK(netcode_replay_already_received(&r, UINT64_MAX - 10 - 256));
}

static void test_read_checks_in_order(void)
{
    uint8_t key[32] = {1}, packet[64], body[8] = {0};
    netcode_packet_t p;
    int n = netcode_write_encrypted_packet(NETCODE_KEEP_ALIVE, 5, body, 8, PROTOCOL, key, packet, sizeof packet);
    CHECK_EQ(netcode_read_encrypted_packet(packet, 0, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_EMPTY);
    CHECK_EQ(netcode_read_encrypted_packet(packet, 17, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_TOO_SMALL);
    uint8_t copy[64];
    memcpy(copy, packet, (size_t)n);
    copy[0] = 0x17;
    CHECK_EQ(netcode_read_encrypted_packet(copy, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_BAD_TYPE);
    copy[0] = 0x12; /* a challenge to the server */
    CHECK_EQ(netcode_read_encrypted_packet(copy, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_TYPE_NOT_ALLOWED);
    copy[0] = 0x04;
    CHECK_EQ(netcode_read_encrypted_packet(copy, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_BAD_SEQUENCE_BYTES);
    copy[0] = 0x94;
    CHECK_EQ(netcode_read_encrypted_packet(copy, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_BAD_SEQUENCE_BYTES);
    copy[0] = 0x84;
    CHECK_EQ(netcode_read_encrypted_packet(copy, 24, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_SHORT_FOR_SEQUENCE);
    CHECK_EQ(netcode_read_encrypted_packet(packet, n, PROTOCOL, NULL, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_NO_KEY);
    netcode_replay_t r;
    netcode_replay_reset(&r);
    CHECK_EQ(netcode_read_encrypted_packet(packet, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, &r, &p), NETCODE_READ_OK);
    CHECK_EQ(netcode_read_encrypted_packet(packet, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, &r, &p), NETCODE_READ_REPLAYED);
    memcpy(copy, packet, (size_t)n);
    copy[n - 1] ^= 1;
    CHECK_EQ(netcode_read_encrypted_packet(copy, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_DECRYPT_FAILED);
    /* The prefix is authenticated: another type with the same bytes fails. */
    memcpy(copy, packet, (size_t)n);
    copy[0] = 0x15;
    CHECK_EQ(netcode_read_encrypted_packet(copy, n, PROTOCOL, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_DECRYPT_FAILED);
    CHECK_EQ(netcode_read_encrypted_packet(packet, n, PROTOCOL + 1, key, NETCODE_SERVER_ALLOWED, NULL, &p), NETCODE_READ_DECRYPT_FAILED);
    /* A keep-alive whose body is 7 bytes: decrypts, then fails the size check
     * (and, decrypted, advanced the replay window). */
    uint8_t ad[22] = "NETCODE 1.02", nonce[12];
    for (int i = 0; i < 8; i++) ad[13 + i] = (uint8_t)(PROTOCOL >> (8 * i));
    ad[21] = 0x14;
    netcode_packet_nonce(9, nonce);
    copy[0] = 0x14;
    copy[1] = 9;
    unsigned long long len;
    crypto_aead_chacha20poly1305_ietf_encrypt(copy + 2, &len, body, 7, ad, sizeof ad, NULL, nonce, key);
    CHECK_EQ(netcode_read_encrypted_packet(copy, 2 + (int)len, PROTOCOL, key, NETCODE_SERVER_ALLOWED, &r, &p), NETCODE_READ_BAD_BODY_SIZE);
    CHECK(netcode_replay_already_received(&r, 9));
}

/* ---- the reference library's captures (captures/netcode-interop-*) ---- */

typedef struct keylog_t {
    uint8_t private_key[32];
    uint8_t c2s[8][32], s2c[8][32];
    int connections, have_private;
} keylog_t;

static int hex_key(const char *text, uint8_t *key)
{
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(text + 2 * i, "%2x", &v) != 1) return -1;
        key[i] = (uint8_t)v;
    }
    return 0;
}

static int read_keylog(const char *path, keylog_t *log)
{
    memset(log, 0, sizeof *log);
    FILE *in = fopen(path, "r");
    if (!in) return -1;
    char line[512];
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "NETCODE_PRIVATE_KEY ", 20) == 0 && hex_key(line + 20, log->private_key) == 0)
            log->have_private = 1;
        if (strncmp(line, "NETCODE_CONNECTION_KEYS ", 24) == 0 && log->connections < 8 &&
            hex_key(line + 24, log->c2s[log->connections]) == 0 && hex_key(line + 24 + 65, log->s2c[log->connections]) == 0)
            log->connections++;
    }
    fclose(in);
    return 0;
}

/* Decrypts every datagram of a pcap (Ethernet, IPv4, UDP) with the key log:
 * requests with the private key, the rest with the connection's key of its
 * direction (server port 40000). counts[type] of decrypted packets; returns
 * the number that failed. */
static int decrypt_capture(const char *name, int counts[7], uint64_t *expire)
{
    char path[512];
    snprintf(path, sizeof path, "%s/captures/%s.keys", CHUNK_TEST_REPO_DIR, name);
    keylog_t log;
    if (read_keylog(path, &log) != 0 || !log.have_private || log.connections != 1) return -1;
    snprintf(path, sizeof path, "%s/captures/%s.pcap", CHUNK_TEST_REPO_DIR, name);
    static uint8_t file[1 << 20];
    int n = read_file(path, file, sizeof file);
    if (n < 24) return -1;
    int failures = 0, offset = 24;
    static netcode_packet_t p;
    while (offset + 16 <= n) {
        uint32_t caplen = (uint32_t)(file[offset + 8] | file[offset + 9] << 8 | file[offset + 10] << 16 | (uint32_t)file[offset + 11] << 24);
        const uint8_t *frame = file + offset + 16;
        offset += 16 + (int)caplen;
        if (offset > n || caplen < 42) return -1;
        const uint8_t *udp = frame + 14 + 20;
        int dst_port = udp[2] << 8 | udp[3];
        const uint8_t *data = udp + 8;
        int bytes = (int)caplen - 42;
        netcode_read_result_t r;
        if (data[0] == 0) {
            r = netcode_read_request_packet(data, bytes, PROTOCOL, 0, log.private_key, &p);
            if (r == NETCODE_READ_OK) *expire = p.expire_timestamp;
            if (r == NETCODE_READ_OK && (memcmp(p.token.client_to_server_key, log.c2s[0], 32) || memcmp(p.token.server_to_client_key, log.s2c[0], 32)))
                r = NETCODE_READ_REQUEST_BAD_TOKEN;
        } else {
            int to_server = dst_port == 40000;
            r = netcode_read_encrypted_packet(data, bytes, PROTOCOL, to_server ? log.c2s[0] : log.s2c[0],
                                              to_server ? NETCODE_SERVER_ALLOWED : NETCODE_CLIENT_ALLOWED, NULL, &p);
        }
        if (r == NETCODE_READ_OK) counts[p.type]++;
        else failures++;
    }
    return failures;
}

static void test_library_captures(void)
{
    int counts[7] = {0};
    uint64_t expire = 0;
    /* Our client and the library's server: its challenge from the global sequence 2^63. */
    CHECK_EQ(decrypt_capture("netcode-interop-ours-to-library", counts, &expire), 0);
    CHECK_EQ(counts[NETCODE_REQUEST], 1);
    CHECK_EQ(counts[NETCODE_CHALLENGE], 1);
    CHECK_EQ(counts[NETCODE_RESPONSE], 1);
    CHECK_EQ(counts[NETCODE_DISCONNECT], 10);
    CHECK(counts[NETCODE_PAYLOAD] > 100);
    CHECK(counts[NETCODE_KEEP_ALIVE] >= 2);
    memset(counts, 0, sizeof counts);
    CHECK_EQ(decrypt_capture("netcode-interop-library-to-ours", counts, &expire), 0);
    CHECK_EQ(counts[NETCODE_REQUEST], 1);
    CHECK_EQ(counts[NETCODE_CHALLENGE], 1);
    CHECK_EQ(counts[NETCODE_DISCONNECT], 10);
    CHECK(counts[NETCODE_PAYLOAD] > 100);
}

/* ---- client and server on an in-memory network ---- */

#define MAX_QUEUE 4096
typedef struct datagram_t {
    int to_server;
    netcode_address_t from;
    uint8_t data[NETCODE_MAX_PACKET_BYTES];
    int bytes;
} datagram_t;

typedef struct net_t {
    datagram_t queue[MAX_QUEUE];
    int count;
    int drop_to_server, drop_to_client; /* drop everything that way */
    int drop_challenges;
    netcode_address_t client_address[2], server_address;
    int sender; /* which client is sending (callbacks) */
    uint64_t payloads_at_client, payloads_at_server;
    int last_end_reason;
} net_t;

typedef struct endpoint_ctx_t {
    net_t *net;
    int client; /* -1 server */
} endpoint_ctx_t;

static void net_send(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    endpoint_ctx_t *e = context;
    net_t *net = e->net;
    int to_server = e->client >= 0;
    if ((to_server && net->drop_to_server) || (!to_server && net->drop_to_client)) return;
    if (to_server && !netcode_address_equal(to, &net->server_address)) return; /* nobody there */
    if (!to_server && (packet[0] & 15) == NETCODE_CHALLENGE && packet[0] && net->drop_challenges) return;
    if (net->count == MAX_QUEUE) return;
    datagram_t *d = &net->queue[net->count++];
    d->to_server = to_server;
    d->from = to_server ? net->client_address[e->client] : net->server_address;
    (void)to;
    if (!to_server) d->from = net->server_address, d->from.port = to->port; /* remember the client by its port */
    memcpy(d->data, packet, (size_t)bytes);
    d->bytes = bytes;
}

static void on_client_payload(void *context, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)sequence;
    (void)payload;
    (void)bytes;
    ((endpoint_ctx_t *)context)->net->payloads_at_client++;
}

static void on_server_payload(void *context, int index, uint64_t sequence, const uint8_t *payload, int bytes)
{
    (void)index;
    (void)sequence;
    (void)payload;
    (void)bytes;
    ((endpoint_ctx_t *)context)->net->payloads_at_server++;
}

static void on_server_event(void *context, int index, int connected, int reason)
{
    (void)index;
    if (!connected) ((endpoint_ctx_t *)context)->net->last_end_reason = reason;
}

typedef struct world_t {
    net_t net;
    endpoint_ctx_t server_ctx, client_ctx[2];
    netcode_server_t *server;
    netcode_client_t *client[2];
    uint8_t token[2][2048];
    double now;
} world_t;

static void world_init(world_t *w, int max_clients, uint64_t server_protocol, const uint8_t *token_key, int expire,
                       int timeout, int64_t created_offset)
{
    memset(w, 0, sizeof *w);
    static cs_rng_t rng;
    cs_rng_seed(&rng, 11);
    netcode_address_ipv4(&w->net.server_address, 10, 0, 0, 2, 40000);
    for (int i = 0; i < 2; i++) netcode_address_ipv4(&w->net.client_address[i], 10, 0, 0, 1, (uint16_t)(50000 + i));
    w->server_ctx = (endpoint_ctx_t){&w->net, -1};
    netcode_server_config_t sc;
    netcode_server_default_config(&sc);
    sc.protocol_id = server_protocol;
    memcpy(sc.private_key, example_key, 32);
    sc.public_address = w->net.server_address;
    sc.max_clients = max_clients;
    sc.unix_epoch = 1000000;
    sc.random = seeded_random;
    sc.random_context = &rng;
    sc.send = net_send;
    sc.receive = on_server_payload;
    sc.client_event = on_server_event;
    sc.context = &w->server_ctx;
    w->server = netcode_server_create(&sc, 0);
    for (int i = 0; i < 2; i++) {
        w->client_ctx[i] = (endpoint_ctx_t){&w->net, i};
        netcode_client_config_t cc = {1000000, net_send, on_client_payload, NULL, &w->client_ctx[i]};
        w->client[i] = netcode_client_create(&cc);
        netcode_token_params_t p;
        netcode_token_params_init(&p, PROTOCOL, 100 + (uint64_t)i, (uint64_t)(1000000 + created_offset),
                                  &w->net.server_address);
        p.expire_seconds = expire;
        p.timeout_seconds = timeout;
        netcode_generate_connect_token(&p, token_key, seeded_random, &rng, w->token[i], NULL);
    }
}

static void world_free(world_t *w)
{
    netcode_server_destroy(w->server);
    for (int i = 0; i < 2; i++) netcode_client_destroy(w->client[i]);
}

/* Runs until `until` in 10 ms steps, delivering what was sent in a step at the next. */
static void world_run(world_t *w, double until, int clients, int payloads)
{
    static datagram_t pending[MAX_QUEUE];
    uint8_t payload[100];
    memset(payload, 7, sizeof payload);
    while (w->now < until - 1e-9) {
        w->now += 0.01;
        int n = w->net.count;
        memcpy(pending, w->net.queue, (size_t)n * sizeof *pending);
        w->net.count = 0;
        for (int i = 0; i < n; i++) {
            datagram_t *d = &pending[i];
            if (d->to_server) {
                netcode_server_receive_packet(w->server, w->now, &d->from, d->data, d->bytes);
            } else {
                int c = d->from.port - 50000;
                if (c >= 0 && c < clients) {
                    netcode_address_t from = w->net.server_address;
                    netcode_client_receive_packet(w->client[c], w->now, &from, d->data, d->bytes);
                }
            }
        }
        for (int c = 0; c < clients; c++) {
            netcode_client_update(w->client[c], w->now);
            if (payloads) netcode_client_send_payload(w->client[c], w->now, payload, sizeof payload);
        }
        netcode_server_update(w->server, w->now);
        if (payloads)
            for (int s = 0; s < netcode_server_max_clients(w->server); s++)
                netcode_server_send_payload(w->server, w->now, s, payload, sizeof payload);
    }
}

static void connect_clients(world_t *w, int clients)
{
    for (int c = 0; c < clients; c++) netcode_client_connect(w->client[c], w->now, w->token[c], 2048);
}

/* A world (four slots, tokens timing out after timeout seconds) whose client
 * 0 has connected by 0.5 s, payloads flowing both ways. */
static void world_connected(world_t *w, int timeout)
{
    world_init(w, 4, PROTOCOL, example_key, 30, timeout, 0);
    connect_clients(w, 1);
    world_run(w, 0.5, 1, 1);
    CHECK_EQ(netcode_client_state(w->client[0]), NETCODE_CLIENT_CONNECTED);
}

/* A world of the default token whose client 0 has sent its first request
 * (at 0.01 s): returned, and the network queue emptied. */
static datagram_t first_request(world_t *w)
{
    world_init(w, 4, PROTOCOL, example_key, 30, 5, 0);
    connect_clients(w, 1);
    netcode_client_update(w->client[0], 0.01);
    CHECK_EQ(w->net.count, 1);
    datagram_t request = w->net.queue[0];
    w->net.count = 0;
    return request;
}

/* Replaces client 0's token with one of these parameters (its random parts
 * drawn from seed). */
static void retoken(world_t *w, const netcode_token_params_t *p, uint64_t seed)
{
    cs_rng_t rng;
    cs_rng_seed(&rng, seed);
    netcode_generate_connect_token(p, example_key, seeded_random, &rng, w->token[0], NULL);
}

/* The world of the test that runs (large, so not on the stack); world_init
 * starts it afresh. */
static world_t w;

static void test_handshake_and_payloads(void)
{
    world_init(&w, 4, PROTOCOL, example_key, 30, 5, 0);
    connect_clients(&w, 1);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_SENDING_REQUEST);
    world_run(&w, 0.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTED);
    CHECK_EQ(netcode_client_index(w.client[0]), 0);
    CHECK_EQ(netcode_client_max_clients(w.client[0]), 4);
    CHECK_EQ(netcode_server_connected_clients(w.server), 1);
    CHECK_EQ(netcode_server_client_id(w.server, 0), 100);
    world_run(&w, 1.5, 1, 1);
    CHECK(w.net.payloads_at_client > 90);
    CHECK(w.net.payloads_at_server > 90);
    const uint64_t *k = netcode_server_counters(w.server);
    CHECK_EQ(k[NETCODE_SERVER_COUNTER_CHALLENGES_SENT], 1);
    CHECK_EQ(k[NETCODE_SERVER_COUNTER_CONNECTS], 1);
    /* The client disconnects: ten packets, the first resets the slot. */
    netcode_client_disconnect(w.client[0], w.now);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_DISCONNECTED);
    CHECK_EQ(netcode_client_counters(w.client[0])[NETCODE_CLIENT_COUNTER_DISCONNECTS_SENT], 10);
    world_run(&w, 1.6, 1, 0);
    CHECK_EQ(netcode_server_connected_clients(w.server), 0);
    CHECK_EQ(w.net.last_end_reason, NETCODE_END_CLIENT_DISCONNECT);
    CHECK_EQ(k[NETCODE_SERVER_COUNTER_DISCONNECTS_RECEIVED], 1);
    CHECK_EQ(k[NETCODE_SERVER_COUNTER_DROP_READ + NETCODE_READ_NO_KEY - 1], 9);
    world_free(&w);
}

static void test_challenge_uses_global_sequence(void)
{
    datagram_t request = first_request(&w);
    CHECK_EQ(request.bytes, NETCODE_REQUEST_PACKET_BYTES);
    netcode_server_receive_packet(w.server, 0.02, &request.from, request.data, request.bytes);
    CHECK_EQ(w.net.count, 1);
    const uint8_t *c = w.net.queue[0].data;
    CHECK_EQ(w.net.queue[0].bytes, 1 + 8 + 308 + 16);
    CHECK_EQ(c[0], 0x82);
    CHECK_EQ(le64(c + 1), 1ull << 63);
    /* The same request again (the client resends): a second challenge, sequence + 1. */
    netcode_server_receive_packet(w.server, 0.03, &request.from, request.data, request.bytes);
    CHECK_EQ(le64(w.net.queue[1].data + 1), (1ull << 63) + 1);
    /* The same token from another address: ignored. */
    netcode_address_t other = request.from;
    other.port = 1;
    CHECK_EQ(netcode_server_receive_packet(w.server, 0.04, &other, request.data, request.bytes), 0);
    CHECK_EQ(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DROP_TOKEN_REUSED], 1);
    world_free(&w);
}

static void test_server_full_denies(void)
{
    world_init(&w, 1, PROTOCOL, example_key, 30, 5, 0);
    connect_clients(&w, 1);
    world_run(&w, 0.5, 1, 0);
    netcode_client_connect(w.client[1], w.now, w.token[1], 2048);
    world_run(&w, 1.0, 2, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTED);
    CHECK_EQ(netcode_client_state(w.client[1]), NETCODE_CLIENT_CONNECTION_DENIED);
    CHECK_EQ(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DENIED_SENT], 1);
    CHECK_EQ(netcode_client_counters(w.client[1])[NETCODE_CLIENT_COUNTER_DENIED_RECEIVED], 1);
    world_free(&w);
}

static void test_request_faults(void)
{
    /* Another protocol id at the server: requests ignored, the client times out. */
    world_init(&w, 4, PROTOCOL + 1, example_key, 30, 2, 0);
    connect_clients(&w, 1);
    world_run(&w, 2.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_REQUEST_TIMED_OUT);
    CHECK(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DROP_READ + NETCODE_READ_REQUEST_BAD_PROTOCOL_ID - 1] >= 19);
    world_free(&w);
    /* Another private key. */
    uint8_t other_key[32] = {1, 2, 3};
    world_init(&w, 4, PROTOCOL, other_key, 30, 2, 0);
    connect_clients(&w, 1);
    world_run(&w, 2.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_REQUEST_TIMED_OUT);
    CHECK(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DROP_READ + NETCODE_READ_REQUEST_DECRYPT_FAILED - 1] >= 19);
    world_free(&w);
    /* A token that expired before it was used. */
    world_init(&w, 4, PROTOCOL, example_key, 30, 2, -40);
    connect_clients(&w, 1);
    world_run(&w, 1.0, 1, 0);
    CHECK(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DROP_READ + NETCODE_READ_REQUEST_EXPIRED - 1] >= 9);
    world_free(&w);
    /* A token whose life ends before any answer: connect token expired. */
    world_init(&w, 4, PROTOCOL, example_key, 1, 10, 0);
    w.net.drop_to_client = 1;
    connect_clients(&w, 1);
    world_run(&w, 1.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECT_TOKEN_EXPIRED);
    world_free(&w);
    /* An invalid token. */
    world_init(&w, 4, PROTOCOL, example_key, 30, 5, 0);
    w.token[0][1089] = 0; /* server count 0 */
    connect_clients(&w, 1);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_INVALID_CONNECT_TOKEN);
    world_free(&w);
}

static void test_lost_challenges_and_timeouts(void)
{
    /* Every challenge lost: request timed out after the token's timeout. */
    world_init(&w, 4, PROTOCOL, example_key, 30, 2, 0);
    w.net.drop_challenges = 1;
    connect_clients(&w, 1);
    world_run(&w, 1.9, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_SENDING_REQUEST);
    world_run(&w, 2.2, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_REQUEST_TIMED_OUT);
    world_free(&w);
    /* Every response lost: response timed out. */
    world_init(&w, 4, PROTOCOL, example_key, 30, 2, 0);
    connect_clients(&w, 1);
    world_run(&w, 0.05, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_SENDING_RESPONSE);
    w.net.drop_to_server = 1;
    world_run(&w, 2.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_RESPONSE_TIMED_OUT);
    world_free(&w);
    /* Connected, then the server goes silent: connection timed out; the
     * server, still hearing the client, keeps it. */
    world_connected(&w, 2);
    w.net.drop_to_client = 1;
    world_run(&w, 2.45, 1, 1);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTED);
    world_run(&w, 2.6, 1, 1);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTION_TIMED_OUT);
    world_free(&w);
    /* Connected, then the client goes silent: the server times it out. */
    world_connected(&w, 2);
    w.net.drop_to_server = 1;
    world_run(&w, 2.6, 1, 1);
    CHECK_EQ(netcode_server_connected_clients(w.server), 0);
    CHECK_EQ(w.net.last_end_reason, NETCODE_END_TIMED_OUT);
    CHECK_EQ(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_TIMEOUTS], 1);
    world_free(&w);
    /* The server disconnects the client. */
    world_connected(&w, 2);
    netcode_server_disconnect_client(w.server, w.now, 0);
    CHECK_EQ(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DISCONNECTS_SENT], 10);
    world_run(&w, 0.6, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_DISCONNECTED);
    CHECK_EQ(netcode_client_counters(w.client[0])[NETCODE_CLIENT_COUNTER_DISCONNECTS_RECEIVED], 1);
    world_free(&w);
}

/* A token naming a server that does not answer, then ours: after the first's
 * timeout the client tries the second and connects. */
static void test_next_server(void)
{
    world_init(&w, 4, PROTOCOL, example_key, 30, 1, 0);
    netcode_address_t silent;
    netcode_address_ipv4(&silent, 10, 0, 0, 9, 40000);
    netcode_token_params_t p;
    netcode_token_params_init(&p, PROTOCOL, 7, 1000000, &silent);
    p.timeout_seconds = 1;
    p.num_servers = 2;
    p.public_servers[1] = p.internal_servers[1] = w.net.server_address;
    retoken(&w, &p, 3);
    connect_clients(&w, 1);
    world_run(&w, 0.9, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_SENDING_REQUEST);
    CHECK_EQ(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_RECEIVED], 0);
    world_run(&w, 1.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTED);
    CHECK(netcode_address_equal(netcode_client_server_address(w.client[0]), &w.net.server_address));
    world_free(&w);
}

/* Two clients challenged while one slot is free: the first response takes
 * it, the second is denied at the response. */
static void test_full_at_response(void)
{
    world_init(&w, 1, PROTOCOL, example_key, 30, 5, 0);
    connect_clients(&w, 2);
    world_run(&w, 0.5, 2, 0);
    const uint64_t *k = netcode_server_counters(w.server);
    CHECK_EQ(k[NETCODE_SERVER_COUNTER_CHALLENGES_SENT], 2);
    CHECK_EQ(k[NETCODE_SERVER_COUNTER_DENIED_SENT], 1);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTED);
    CHECK_EQ(netcode_client_state(w.client[1]), NETCODE_CLIENT_CONNECTION_DENIED);
    world_free(&w);
}

/* A payload to a client that has not yet sent a keep-alive or payload goes
 * after a keep-alive; once the client is heard, payloads go alone. */
static void test_unconfirmed_slot(void)
{
    datagram_t request = first_request(&w);
    netcode_server_receive_packet(w.server, 0.02, &request.from, request.data, request.bytes);
    netcode_client_receive_packet(w.client[0], 0.03, &w.net.server_address, w.net.queue[0].data, w.net.queue[0].bytes);
    w.net.count = 0;
    netcode_client_update(w.client[0], 0.2); /* the response */
    datagram_t response = w.net.queue[0];
    w.net.count = 0;
    netcode_server_receive_packet(w.server, 0.21, &response.from, response.data, response.bytes);
    CHECK_EQ(w.net.count, 1); /* the keep-alive that connects */
    w.net.count = 0;
    uint8_t payload[10] = {0};
    netcode_server_send_payload(w.server, 0.22, 0, payload, sizeof payload);
    CHECK_EQ(w.net.count, 2);
    CHECK_EQ(w.net.queue[0].data[0] & 15, NETCODE_KEEP_ALIVE);
    CHECK_EQ(w.net.queue[1].data[0] & 15, NETCODE_PAYLOAD);
    netcode_client_receive_packet(w.client[0], 0.23, &w.net.server_address, w.net.queue[0].data, w.net.queue[0].bytes);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_CONNECTED);
    w.net.count = 0;
    netcode_client_send_payload(w.client[0], 0.24, payload, sizeof payload);
    netcode_server_receive_packet(w.server, 0.25, &w.net.queue[0].from, w.net.queue[0].data, w.net.queue[0].bytes);
    w.net.count = 0;
    netcode_server_send_payload(w.server, 0.26, 0, payload, sizeof payload);
    CHECK_EQ(w.net.count, 1);
    CHECK_EQ(w.net.queue[0].data[0] & 15, NETCODE_PAYLOAD);
    world_free(&w);
}

/* A packet the client's state does not expect is counted and dropped: here
 * a second challenge (a new sequence, so not a replay) once the client
 * already sends responses. */
static void test_client_drops_unexpected(void)
{
    datagram_t request = first_request(&w);
    netcode_server_receive_packet(w.server, 0.02, &request.from, request.data, request.bytes);
    netcode_server_receive_packet(w.server, 0.03, &request.from, request.data, request.bytes);
    CHECK_EQ(w.net.count, 2);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(netcode_client_receive_packet(w.client[0], 0.04, &w.net.server_address, w.net.queue[i].data,
                                               w.net.queue[i].bytes),
                 i == 0);
    const uint64_t *k = netcode_client_counters(w.client[0]);
    CHECK_EQ(k[NETCODE_CLIENT_COUNTER_CHALLENGES_RECEIVED], 2);
    CHECK_EQ(k[NETCODE_CLIENT_COUNTER_DROP_UNEXPECTED], 1);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_SENDING_RESPONSE);
    world_free(&w);
}

/* A token for another server: ignored. */
static void test_not_in_token(void)
{
    world_init(&w, 4, PROTOCOL, example_key, 30, 5, 0);
    netcode_token_params_t p;
    netcode_token_params_init(&p, PROTOCOL, 0, 1000000, &w.net.server_address); /* where the client sends */
    netcode_address_ipv4(&p.internal_servers[0], 10, 0, 0, 9, 1);               /* what the server checks */
    retoken(&w, &p, 4);
    connect_clients(&w, 1);
    world_run(&w, 0.5, 1, 0);
    CHECK_EQ(netcode_client_state(w.client[0]), NETCODE_CLIENT_SENDING_REQUEST);
    CHECK(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_DROP_NOT_IN_TOKEN] >= 4);
    CHECK_EQ(netcode_server_counters(w.server)[NETCODE_SERVER_COUNTER_CHALLENGES_SENT], 0);
    world_free(&w);
}

const chunk_test_t netcode_tests[] = {
    {"full_at_response", test_full_at_response},
    {"unconfirmed_slot", test_unconfirmed_slot},
    {"not_in_token", test_not_in_token},
    {"client_drops_unexpected", test_client_drops_unexpected},
    {"next_server", test_next_server},
    {"read_result_names", test_read_result_names},
    {"sequence_bytes", test_sequence_bytes},
    {"encrypted_packet_bytes", test_encrypted_packet_bytes},
    {"request_packet_layout", test_request_packet_layout},
    {"library_token", test_library_token},
    {"token_round_trip", test_token_round_trip},
    {"challenge_token", test_challenge_token},
    {"replay_window", test_replay_window},
    {"read_checks_in_order", test_read_checks_in_order},
    {"library_captures", test_library_captures},
    {"handshake_and_payloads", test_handshake_and_payloads},
    {"challenge_uses_global_sequence", test_challenge_uses_global_sequence},
    {"server_full_denies", test_server_full_denies},
    {"request_faults", test_request_faults},
    {"lost_challenges_and_timeouts", test_lost_challenges_and_timeouts},
    {NULL, NULL},
};
