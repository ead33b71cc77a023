/* netcode/wire.c: netcode 1.02's codec: connect tokens (public and private
 * parts), challenge tokens, the request packet and the encrypted packets,
 * and replay protection. docs/netcode-endpoints.md "Wire format". */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "netcode.h"

static const uint8_t version_info[NETCODE_VERSION_INFO_BYTES] = NETCODE_VERSION_INFO;

const char *netcode_packet_type_name(int type)
{
    static const char *const names[] = {"request", "denied", "challenge", "response", "keep-alive", "payload",
                                        "disconnect"};
    return type >= 0 && type < NETCODE_PACKET_TYPES ? names[type] : "invalid";
}

/* ---- little-endian helpers ---- */

static void put_u16(uint8_t **p, uint16_t v)
{
    (*p)[0] = (uint8_t)v;
    (*p)[1] = (uint8_t)(v >> 8);
    *p += 2;
}

static void put_u32(uint8_t **p, uint32_t v)
{
    for (int i = 0; i < 4; i++) (*p)[i] = (uint8_t)(v >> (8 * i));
    *p += 4;
}

static void put_u64(uint8_t **p, uint64_t v)
{
    for (int i = 0; i < 8; i++) (*p)[i] = (uint8_t)(v >> (8 * i));
    *p += 8;
}

static void put_bytes(uint8_t **p, const uint8_t *data, size_t n)
{
    memcpy(*p, data, n);
    *p += n;
}

static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* ---- addresses ---- */

void netcode_address_ipv4(netcode_address_t *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3, uint16_t port)
{
    memset(a, 0, sizeof *a);
    a->type = NETCODE_ADDRESS_IPV4;
    a->ip[0] = b0;
    a->ip[1] = b1;
    a->ip[2] = b2;
    a->ip[3] = b3;
    a->port = port;
}

int netcode_address_equal(const netcode_address_t *a, const netcode_address_t *b)
{
    if (a->type != b->type || a->port != b->port) return 0;
    if (a->type == NETCODE_ADDRESS_IPV4) return memcmp(a->ip, b->ip, 4) == 0;
    if (a->type == NETCODE_ADDRESS_IPV6) return memcmp(a->ip, b->ip, 16) == 0;
    return 1;
}

const char *netcode_address_format(const netcode_address_t *a, char *buffer, size_t size)
{
    if (a->type == NETCODE_ADDRESS_IPV4) {
        snprintf(buffer, size, "%u.%u.%u.%u:%u", a->ip[0], a->ip[1], a->ip[2], a->ip[3], a->port);
    } else if (a->type == NETCODE_ADDRESS_IPV6) {
        char text[48];
        size_t n = 0;
        for (int i = 0; i < 8; i++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%x", i ? ":" : "", a->ip[2 * i] << 8 | a->ip[2 * i + 1]);
        snprintf(buffer, size, "[%s]:%u", text, a->port);
    } else {
        snprintf(buffer, size, "none");
    }
    return buffer;
}

/* An address of a token: type byte, IPv4 bytes or eight 16-bit groups
 * little-endian, port little-endian. */
static void put_address(uint8_t **p, const netcode_address_t *a)
{
    **p = a->type;
    (*p)++;
    if (a->type == NETCODE_ADDRESS_IPV4) {
        put_bytes(p, a->ip, 4);
    } else {
        for (int i = 0; i < 8; i++) put_u16(p, (uint16_t)(a->ip[2 * i] << 8 | a->ip[2 * i + 1]));
    }
    put_u16(p, a->port);
}

/* Reads an address from p (end: one past the last byte that may be read). */
static netcode_token_result_t get_address(const uint8_t **p, const uint8_t *end, netcode_address_t *a)
{
    memset(a, 0, sizeof *a);
    if (*p >= end) return NETCODE_TOKEN_TRUNCATED;
    uint8_t type = *(*p)++;
    if (type == NETCODE_ADDRESS_IPV4) {
        if (end - *p < 6) return NETCODE_TOKEN_TRUNCATED;
        memcpy(a->ip, *p, 4);
        *p += 4;
    } else if (type == NETCODE_ADDRESS_IPV6) {
        if (end - *p < 18) return NETCODE_TOKEN_TRUNCATED;
        for (int i = 0; i < 8; i++) {
            uint16_t group = get_u16(*p);
            a->ip[2 * i] = (uint8_t)(group >> 8);
            a->ip[2 * i + 1] = (uint8_t)group;
            *p += 2;
        }
    } else {
        return NETCODE_TOKEN_BAD_ADDRESS_TYPE;
    }
    a->type = type;
    a->port = get_u16(*p);
    *p += 2;
    return NETCODE_TOKEN_OK;
}

/* ---- random bytes ---- */

int netcode_crypto_init(void) { return sodium_init() < 0 ? -1 : 0; }

void netcode_random_system(void *context, uint8_t *out, size_t bytes)
{
    (void)context;
    if (netcode_crypto_init() != 0) {
        /* libsodium refuses only when it has no entropy source at all. */
        fprintf(stderr, "netcode: libsodium cannot start: no random numbers\n");
        assert(0);
    }
    randombytes_buf(out, bytes);
}

/* ---- connect tokens ---- */

const char *netcode_token_result_name(netcode_token_result_t result)
{
    static const char *const names[] = {"ok",
                                        "not 2048 bytes",
                                        "bad version info",
                                        "create timestamp after expire timestamp",
                                        "server count outside 1..32",
                                        "address type not 1 or 2",
                                        "addresses run past the end",
                                        "private part does not decrypt"};
    _Static_assert(sizeof names / sizeof names[0] == NETCODE_TOKEN_RESULT_COUNT, "a name per result");
    return (unsigned)result < NETCODE_TOKEN_RESULT_COUNT ? names[result] : "?";
}

/* What both tokens hold alike after their timeout: the server count and
 * addresses, then the client-to-server and server-to-client keys. */
static void put_servers_and_keys(uint8_t **p, int num_servers, const netcode_address_t *servers,
                                 const uint8_t *client_to_server_key, const uint8_t *server_to_client_key)
{
    put_u32(p, (uint32_t)num_servers);
    for (int i = 0; i < num_servers; i++) put_address(p, &servers[i]);
    put_bytes(p, client_to_server_key, NETCODE_KEY_BYTES);
    put_bytes(p, server_to_client_key, NETCODE_KEY_BYTES);
}

/* Reads what put_servers_and_keys writes from *p (before end), and checks
 * that extra more bytes follow the keys. */
static netcode_token_result_t get_servers_and_keys(const uint8_t **p, const uint8_t *end, int extra, int *num_servers,
                                                   netcode_address_t *servers, uint8_t *client_to_server_key,
                                                   uint8_t *server_to_client_key)
{
    uint32_t count = get_u32(*p);
    *p += 4;
    if (count < 1 || count > NETCODE_MAX_SERVERS) return NETCODE_TOKEN_BAD_SERVER_COUNT;
    *num_servers = (int)count;
    for (uint32_t i = 0; i < count; i++) {
        netcode_token_result_t r = get_address(p, end, &servers[i]);
        if (r != NETCODE_TOKEN_OK) return r;
    }
    if (end - *p < 2 * NETCODE_KEY_BYTES + extra) return NETCODE_TOKEN_TRUNCATED;
    memcpy(client_to_server_key, *p, NETCODE_KEY_BYTES);
    memcpy(server_to_client_key, *p + NETCODE_KEY_BYTES, NETCODE_KEY_BYTES);
    *p += 2 * NETCODE_KEY_BYTES;
    return NETCODE_TOKEN_OK;
}

/* The private part's 1024 plaintext bytes (the last 16 zero, room for the MAC). */
static void netcode_write_private_token(const netcode_private_token_t *token, uint8_t out[NETCODE_PRIVATE_TOKEN_BYTES])
{
    assert(token->num_servers >= 1 && token->num_servers <= NETCODE_MAX_SERVERS);
    memset(out, 0, NETCODE_PRIVATE_TOKEN_BYTES);
    uint8_t *p = out;
    put_u64(&p, token->client_id);
    put_u32(&p, (uint32_t)token->timeout_seconds);
    put_servers_and_keys(&p, token->num_servers, token->servers, token->client_to_server_key,
                         token->server_to_client_key);
    put_bytes(&p, token->user_data, NETCODE_USER_DATA_BYTES);
    /* 32 IPv6 addresses: 16 + 32 * 19 + 64 + 256 = 944, within 1008. */
    assert(p - out <= NETCODE_PRIVATE_TOKEN_BYTES - NETCODE_MAC_BYTES);
}

netcode_token_result_t netcode_read_private_token(const uint8_t in[NETCODE_PRIVATE_TOKEN_BYTES],
                                                  netcode_private_token_t *token)
{
    memset(token, 0, sizeof *token);
    const uint8_t *p = in, *end = in + NETCODE_PRIVATE_TOKEN_BYTES - NETCODE_MAC_BYTES;
    token->client_id = get_u64(p);
    token->timeout_seconds = (int32_t)get_u32(p + 8);
    p += 12;
    netcode_token_result_t r = get_servers_and_keys(&p, end, NETCODE_USER_DATA_BYTES, &token->num_servers,
                                                    token->servers, token->client_to_server_key,
                                                    token->server_to_client_key);
    if (r != NETCODE_TOKEN_OK) return r;
    memcpy(token->user_data, p, NETCODE_USER_DATA_BYTES);
    return NETCODE_TOKEN_OK;
}

/* Encrypts (encrypt set: its first 1008 bytes, the MAC after them) or
 * decrypts the private part in place, with the version, protocol id and
 * expire timestamp as associated data. Returns 0, or -1 when it does not
 * decrypt (or libsodium cannot start). */
static int crypt_private_token(uint8_t buffer[NETCODE_PRIVATE_TOKEN_BYTES], uint64_t protocol_id,
                               uint64_t expire_timestamp, const uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES],
                               const uint8_t key[NETCODE_KEY_BYTES], int encrypt)
{
    if (netcode_crypto_init() != 0) return -1;
    uint8_t ad[NETCODE_VERSION_INFO_BYTES + 16], *p = ad;
    put_bytes(&p, version_info, NETCODE_VERSION_INFO_BYTES);
    put_u64(&p, protocol_id);
    put_u64(&p, expire_timestamp);
    unsigned long long length = 0;
    if (!encrypt)
        return crypto_aead_xchacha20poly1305_ietf_decrypt(buffer, &length, NULL, buffer, NETCODE_PRIVATE_TOKEN_BYTES,
                                                          ad, sizeof ad, nonce, key) == 0 ? 0 : -1;
    if (crypto_aead_xchacha20poly1305_ietf_encrypt(buffer, &length, buffer,
                                                   NETCODE_PRIVATE_TOKEN_BYTES - NETCODE_MAC_BYTES, ad, sizeof ad,
                                                   NULL, nonce, key) != 0)
        return -1;
    return length == NETCODE_PRIVATE_TOKEN_BYTES ? 0 : -1;
}

int netcode_decrypt_private_token(uint8_t buffer[NETCODE_PRIVATE_TOKEN_BYTES], uint64_t protocol_id,
                                  uint64_t expire_timestamp, const uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES],
                                  const uint8_t key[NETCODE_KEY_BYTES])
{
    return crypt_private_token(buffer, protocol_id, expire_timestamp, nonce, key, 0);
}

void netcode_write_connect_token(const netcode_connect_token_t *token, uint8_t out[NETCODE_CONNECT_TOKEN_BYTES])
{
    assert(token->num_servers >= 1 && token->num_servers <= NETCODE_MAX_SERVERS);
    memset(out, 0, NETCODE_CONNECT_TOKEN_BYTES);
    uint8_t *p = out;
    put_bytes(&p, version_info, NETCODE_VERSION_INFO_BYTES);
    put_u64(&p, token->protocol_id);
    put_u64(&p, token->create_timestamp);
    put_u64(&p, token->expire_timestamp);
    put_bytes(&p, token->nonce, NETCODE_TOKEN_NONCE_BYTES);
    put_bytes(&p, token->private_data, NETCODE_PRIVATE_TOKEN_BYTES);
    put_u32(&p, (uint32_t)token->timeout_seconds);
    put_servers_and_keys(&p, token->num_servers, token->servers, token->client_to_server_key,
                         token->server_to_client_key);
    assert(p - out <= NETCODE_CONNECT_TOKEN_BYTES);
}

netcode_token_result_t netcode_read_connect_token(const uint8_t *in, int bytes, netcode_connect_token_t *token)
{
    memset(token, 0, sizeof *token);
    if (bytes != NETCODE_CONNECT_TOKEN_BYTES) return NETCODE_TOKEN_BAD_LENGTH;
    if (memcmp(in, version_info, NETCODE_VERSION_INFO_BYTES) != 0) return NETCODE_TOKEN_BAD_VERSION;
    const uint8_t *p = in + NETCODE_VERSION_INFO_BYTES, *end = in + NETCODE_CONNECT_TOKEN_BYTES;
    token->protocol_id = get_u64(p);
    token->create_timestamp = get_u64(p + 8);
    token->expire_timestamp = get_u64(p + 16);
    p += 24;
    if (token->create_timestamp > token->expire_timestamp) return NETCODE_TOKEN_BAD_TIMESTAMPS;
    memcpy(token->nonce, p, NETCODE_TOKEN_NONCE_BYTES);
    p += NETCODE_TOKEN_NONCE_BYTES;
    memcpy(token->private_data, p, NETCODE_PRIVATE_TOKEN_BYTES);
    p += NETCODE_PRIVATE_TOKEN_BYTES;
    token->timeout_seconds = (int32_t)get_u32(p);
    p += 4;
    return get_servers_and_keys(&p, end, 0, &token->num_servers, token->servers, token->client_to_server_key,
                                token->server_to_client_key);
}

void netcode_token_params_init(netcode_token_params_t *params, uint64_t protocol_id, uint64_t client_id,
                               uint64_t create_timestamp, const netcode_address_t *server)
{
    memset(params, 0, sizeof *params);
    params->protocol_id = protocol_id;
    params->client_id = client_id;
    params->create_timestamp = create_timestamp;
    params->expire_seconds = 30;
    params->timeout_seconds = 5;
    params->num_servers = 1;
    params->public_servers[0] = params->internal_servers[0] = *server;
}

int netcode_generate_connect_token(const netcode_token_params_t *params, const uint8_t private_key[NETCODE_KEY_BYTES],
                                   netcode_random_fn random, void *random_context,
                                   uint8_t out[NETCODE_CONNECT_TOKEN_BYTES], netcode_connect_token_t *out_token)
{
    if (params->num_servers < 1 || params->num_servers > NETCODE_MAX_SERVERS) return -1;
    for (int i = 0; i < params->num_servers; i++)
        if ((params->public_servers[i].type != NETCODE_ADDRESS_IPV4 && params->public_servers[i].type != NETCODE_ADDRESS_IPV6) ||
            (params->internal_servers[i].type != NETCODE_ADDRESS_IPV4 &&
             params->internal_servers[i].type != NETCODE_ADDRESS_IPV6))
            return -1;
    if (!random) random = netcode_random_system;
    netcode_connect_token_t token;
    netcode_private_token_t private_token;
    memset(&token, 0, sizeof token);
    memset(&private_token, 0, sizeof private_token);
    /* The order of the draws is part of the simulator's determinism:
     * client to server key, server to client key, nonce. */
    random(random_context, private_token.client_to_server_key, NETCODE_KEY_BYTES);
    random(random_context, private_token.server_to_client_key, NETCODE_KEY_BYTES);
    random(random_context, token.nonce, NETCODE_TOKEN_NONCE_BYTES);
    private_token.client_id = params->client_id;
    private_token.timeout_seconds = params->timeout_seconds;
    private_token.num_servers = params->num_servers;
    memcpy(private_token.servers, params->internal_servers, sizeof private_token.servers);
    if (params->user_data) memcpy(private_token.user_data, params->user_data, NETCODE_USER_DATA_BYTES);

    token.protocol_id = params->protocol_id;
    token.create_timestamp = params->create_timestamp;
    token.expire_timestamp = params->expire_seconds >= 0 ? params->create_timestamp + (uint64_t)params->expire_seconds
                                                         : UINT64_MAX;
    token.timeout_seconds = params->timeout_seconds;
    token.num_servers = params->num_servers;
    memcpy(token.servers, params->public_servers, sizeof token.servers);
    memcpy(token.client_to_server_key, private_token.client_to_server_key, NETCODE_KEY_BYTES);
    memcpy(token.server_to_client_key, private_token.server_to_client_key, NETCODE_KEY_BYTES);
    netcode_write_private_token(&private_token, token.private_data);
    int encrypt = 1;
    if (crypt_private_token(token.private_data, token.protocol_id, token.expire_timestamp, token.nonce, private_key,
                            encrypt) != 0)
        return -1;
    netcode_write_connect_token(&token, out);
    if (out_token) *out_token = token;
    return 0;
}

/* ---- challenge tokens ---- */

void netcode_packet_nonce(uint64_t sequence, uint8_t nonce[12])
{
    uint8_t *p = nonce;
    put_u32(&p, 0);
    put_u64(&p, sequence);
}

void netcode_write_challenge_token(uint64_t client_id, const uint8_t user_data[NETCODE_USER_DATA_BYTES],
                                   uint8_t out[NETCODE_CHALLENGE_TOKEN_BYTES])
{
    memset(out, 0, NETCODE_CHALLENGE_TOKEN_BYTES);
    uint8_t *p = out;
    put_u64(&p, client_id);
    put_bytes(&p, user_data, NETCODE_USER_DATA_BYTES);
}

/* The challenge token's AEAD, in place: ChaCha20-Poly1305 (IETF) under key,
 * the nonce made from sequence, no associated data. */
static int crypt_challenge_token(uint8_t buffer[NETCODE_CHALLENGE_TOKEN_BYTES], uint64_t sequence,
                                 const uint8_t key[NETCODE_KEY_BYTES], int encrypt)
{
    if (netcode_crypto_init() != 0) return -1;
    uint8_t nonce[12];
    netcode_packet_nonce(sequence, nonce);
    unsigned long long length = 0;
    int r = encrypt ? crypto_aead_chacha20poly1305_ietf_encrypt(buffer, &length, buffer,
                                                                NETCODE_CHALLENGE_TOKEN_BYTES - NETCODE_MAC_BYTES, NULL,
                                                                0, NULL, nonce, key)
                    : crypto_aead_chacha20poly1305_ietf_decrypt(buffer, &length, NULL, buffer,
                                                                NETCODE_CHALLENGE_TOKEN_BYTES, NULL, 0, nonce, key);
    return r == 0 ? 0 : -1;
}

int netcode_encrypt_challenge_token(uint8_t buffer[NETCODE_CHALLENGE_TOKEN_BYTES], uint64_t sequence,
                                    const uint8_t key[NETCODE_KEY_BYTES])
{
    return crypt_challenge_token(buffer, sequence, key, 1);
}

int netcode_decrypt_challenge_token(uint8_t buffer[NETCODE_CHALLENGE_TOKEN_BYTES], uint64_t sequence,
                                    const uint8_t key[NETCODE_KEY_BYTES])
{
    return crypt_challenge_token(buffer, sequence, key, 0);
}

/* ---- packets ---- */

int netcode_sequence_bytes(uint64_t sequence)
{
    int n = 1;
    while (n < 8 && (sequence >> (8 * n)) != 0) n++;
    return n;
}

int netcode_write_request_packet(uint64_t protocol_id, uint64_t expire_timestamp,
                                 const uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES],
                                 const uint8_t private_data[NETCODE_PRIVATE_TOKEN_BYTES], uint8_t *out, int size)
{
    if (size < NETCODE_REQUEST_PACKET_BYTES) return -1;
    uint8_t *p = out;
    *p++ = NETCODE_REQUEST;
    put_bytes(&p, version_info, NETCODE_VERSION_INFO_BYTES);
    put_u64(&p, protocol_id);
    put_u64(&p, expire_timestamp);
    put_bytes(&p, nonce, NETCODE_TOKEN_NONCE_BYTES);
    put_bytes(&p, private_data, NETCODE_PRIVATE_TOKEN_BYTES);
    return (int)(p - out);
}

/* The plaintext size a type must have: exact, or for payloads 1..1200. */
static int body_size_ok(int type, int bytes)
{
    switch (type) {
    case NETCODE_DENIED:
    case NETCODE_DISCONNECT: return bytes == 0;
    case NETCODE_CHALLENGE:
    case NETCODE_RESPONSE: return bytes == 8 + NETCODE_CHALLENGE_TOKEN_BYTES;
    case NETCODE_KEEP_ALIVE: return bytes == 8;
    case NETCODE_PAYLOAD: return bytes >= 1 && bytes <= NETCODE_MAX_PAYLOAD_BYTES;
    default: return 0;
    }
}

static void packet_associated_data(uint8_t ad[NETCODE_VERSION_INFO_BYTES + 9], uint64_t protocol_id, uint8_t prefix)
{
    uint8_t *p = ad;
    put_bytes(&p, version_info, NETCODE_VERSION_INFO_BYTES);
    put_u64(&p, protocol_id);
    *p = prefix;
}

int netcode_write_encrypted_packet(int type, uint64_t sequence, const uint8_t *body, int body_bytes,
                                   uint64_t protocol_id, const uint8_t key[NETCODE_KEY_BYTES], uint8_t *out, int size)
{
    if (type < NETCODE_DENIED || type >= NETCODE_PACKET_TYPES || !body_size_ok(type, body_bytes)) return -1;
    int sequence_bytes = netcode_sequence_bytes(sequence);
    int total = 1 + sequence_bytes + body_bytes + NETCODE_MAC_BYTES;
    if (size < total || netcode_crypto_init() != 0) return -1;
    uint8_t prefix = (uint8_t)(type | sequence_bytes << 4);
    out[0] = prefix;
    for (int i = 0; i < sequence_bytes; i++) out[1 + i] = (uint8_t)(sequence >> (8 * i));
    uint8_t *cipher = out + 1 + sequence_bytes;
    if (body_bytes) memmove(cipher, body, (size_t)body_bytes);
    uint8_t ad[NETCODE_VERSION_INFO_BYTES + 9], nonce[12];
    packet_associated_data(ad, protocol_id, prefix);
    netcode_packet_nonce(sequence, nonce);
    unsigned long long length = 0;
    if (crypto_aead_chacha20poly1305_ietf_encrypt(cipher, &length, cipher, (unsigned long long)body_bytes, ad,
                                                  sizeof ad, NULL, nonce, key) != 0)
        return -1;
    return total;
}

void netcode_replay_reset(netcode_replay_t *replay)
{
    replay->most_recent = 0;
    memset(replay->received, 0xff, sizeof replay->received);
}

int netcode_replay_already_received(const netcode_replay_t *replay, uint64_t sequence)
{
    /* Subtraction side, so that sequences near 2^64 cannot wrap. */
    if (replay->most_recent >= NETCODE_REPLAY_WINDOW && sequence <= replay->most_recent - NETCODE_REPLAY_WINDOW)
        return 1;
    uint64_t entry = replay->received[sequence % NETCODE_REPLAY_WINDOW];
    if (entry == UINT64_MAX) return 0;
    return entry >= sequence;
}

void netcode_replay_advance(netcode_replay_t *replay, uint64_t sequence)
{
    if (sequence > replay->most_recent) replay->most_recent = sequence;
    replay->received[sequence % NETCODE_REPLAY_WINDOW] = sequence;
}

/* The read results' names, in netcode_read_result_t's order: each table
 * below is made from this one list at compile time. */
#define NETCODE_READ_RESULT_NAMES(X)                                                                    \
    X("ok") X("empty") X("too small") X("bad type") X("type not allowed") X("bad sequence bytes")        \
    X("short for sequence") X("no key") X("replayed") X("decrypt failed") X("bad body size")            \
    X("request bad length") X("request bad version") X("request bad protocol id") X("request expired") \
    X("request decrypt failed") X("request bad token")
#define NETCODE_NAME(text) text,
#define NETCODE_DROP_NAME(text) "drop " text,

static const char *const read_result_names[] = {NETCODE_READ_RESULT_NAMES(NETCODE_NAME)};
static const char *const read_drop_names[] = {NETCODE_READ_RESULT_NAMES(NETCODE_DROP_NAME)};
_Static_assert(sizeof read_result_names / sizeof read_result_names[0] == NETCODE_READ_RESULT_COUNT,
               "a name per result");

const char *netcode_read_result_name(netcode_read_result_t result)
{
    return (unsigned)result < NETCODE_READ_RESULT_COUNT ? read_result_names[result] : "?";
}

const char *netcode_read_drop_name(netcode_read_result_t result)
{
    return (unsigned)result < NETCODE_READ_RESULT_COUNT ? read_drop_names[result] : "?";
}

netcode_read_result_t netcode_read_request_packet(const uint8_t *data, int bytes, uint64_t protocol_id,
                                                  uint64_t now_unix, const uint8_t private_key[NETCODE_KEY_BYTES],
                                                  netcode_packet_t *packet)
{
    if (bytes < 1) return NETCODE_READ_EMPTY;
    if (bytes != NETCODE_REQUEST_PACKET_BYTES) return NETCODE_READ_REQUEST_BAD_LENGTH;
    if (data[0] != NETCODE_REQUEST) return NETCODE_READ_BAD_TYPE;
    const uint8_t *p = data + 1;
    if (memcmp(p, version_info, NETCODE_VERSION_INFO_BYTES) != 0) return NETCODE_READ_REQUEST_BAD_VERSION;
    p += NETCODE_VERSION_INFO_BYTES;
    packet->type = NETCODE_REQUEST;
    packet->prefix = 0;
    packet->sequence = 0;
    packet->protocol_id = get_u64(p);
    if (packet->protocol_id != protocol_id) return NETCODE_READ_REQUEST_BAD_PROTOCOL_ID;
    packet->expire_timestamp = get_u64(p + 8);
    if (packet->expire_timestamp <= now_unix) return NETCODE_READ_REQUEST_EXPIRED;
    p += 16;
    memcpy(packet->nonce, p, NETCODE_TOKEN_NONCE_BYTES);
    p += NETCODE_TOKEN_NONCE_BYTES;
    packet->private_data = p;
    uint8_t plain[NETCODE_PRIVATE_TOKEN_BYTES];
    memcpy(plain, p, sizeof plain);
    if (netcode_decrypt_private_token(plain, protocol_id, packet->expire_timestamp, packet->nonce, private_key) != 0)
        return NETCODE_READ_REQUEST_DECRYPT_FAILED;
    if (netcode_read_private_token(plain, &packet->token) != NETCODE_TOKEN_OK) return NETCODE_READ_REQUEST_BAD_TOKEN;
    return NETCODE_READ_OK;
}

netcode_read_result_t netcode_read_encrypted_packet(const uint8_t *data, int bytes, uint64_t protocol_id,
                                                    const uint8_t *key, unsigned allowed, netcode_replay_t *replay,
                                                    netcode_packet_t *packet)
{
    if (bytes < 1) return NETCODE_READ_EMPTY;
    if (bytes < NETCODE_MIN_ENCRYPTED_PACKET_BYTES) return NETCODE_READ_TOO_SMALL;
    uint8_t prefix = data[0];
    int type = prefix & 0x0f;
    if (type >= NETCODE_PACKET_TYPES) return NETCODE_READ_BAD_TYPE;
    if (type == NETCODE_REQUEST || !(allowed & (1u << type))) return NETCODE_READ_TYPE_NOT_ALLOWED;
    int sequence_bytes = prefix >> 4;
    if (sequence_bytes < 1 || sequence_bytes > 8) return NETCODE_READ_BAD_SEQUENCE_BYTES;
    if (bytes < 1 + sequence_bytes + NETCODE_MAC_BYTES) return NETCODE_READ_SHORT_FOR_SEQUENCE;
    uint64_t sequence = 0;
    for (int i = 0; i < sequence_bytes; i++) sequence |= (uint64_t)data[1 + i] << (8 * i);
    packet->type = type;
    packet->prefix = prefix;
    packet->sequence = sequence;
    if (!key) return NETCODE_READ_NO_KEY;
    int replay_checked = replay && type >= NETCODE_KEEP_ALIVE;
    if (replay_checked && netcode_replay_already_received(replay, sequence)) return NETCODE_READ_REPLAYED;
    int cipher_bytes = bytes - 1 - sequence_bytes;
    int body_bytes = cipher_bytes - NETCODE_MAC_BYTES;
    /* Longer than any datagram a conforming peer sends: not worth decrypting. */
    if (body_bytes > NETCODE_MAX_PACKET_BYTES) return NETCODE_READ_BAD_BODY_SIZE;
    uint8_t plain[NETCODE_MAX_PACKET_BYTES];
    uint8_t ad[NETCODE_VERSION_INFO_BYTES + 9], nonce[12];
    packet_associated_data(ad, protocol_id, prefix);
    netcode_packet_nonce(sequence, nonce);
    unsigned long long length = 0;
    if (netcode_crypto_init() != 0 ||
        crypto_aead_chacha20poly1305_ietf_decrypt(plain, &length, NULL, data + 1 + sequence_bytes,
                                                  (unsigned long long)cipher_bytes, ad, sizeof ad, nonce, key) != 0)
        return NETCODE_READ_DECRYPT_FAILED;
    if (replay_checked) netcode_replay_advance(replay, sequence);
    if (!body_size_ok(type, body_bytes)) return NETCODE_READ_BAD_BODY_SIZE;
    switch (type) {
    case NETCODE_CHALLENGE:
    case NETCODE_RESPONSE:
        packet->challenge_sequence = get_u64(plain);
        memcpy(packet->challenge_data, plain + 8, NETCODE_CHALLENGE_TOKEN_BYTES);
        break;
    case NETCODE_KEEP_ALIVE:
        packet->client_index = get_u32(plain);
        packet->max_clients = get_u32(plain + 4);
        break;
    case NETCODE_PAYLOAD:
        memcpy(packet->payload, plain, (size_t)body_bytes);
        packet->payload_bytes = body_bytes;
        break;
    default: break;
    }
    return NETCODE_READ_OK;
}
