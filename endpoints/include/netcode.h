/*
 * netcode.h: reference endpoints of netcode 1.02 (connect tokens, the
 * challenge/response handshake, encrypted packets with replay protection),
 * as described in docs/netcode-endpoints.md. AEADs and random bytes come
 * from libsodium.
 *
 * Pure protocol code: nothing here touches a socket, a clock or a file. Time
 * is passed in (seconds, double, never decreasing) with the unix time it
 * stands for (config unix_epoch: the unix time at time 0), datagrams go out
 * through a callback with the peer's address, and random bytes come through
 * a callback so that a simulator can make every key and nonce from a seed.
 *
 * Conventions: caller mistakes are asserts; wire data is always checked, and
 * a datagram we do not take is dropped and counted by reason.
 */
#ifndef NETCODE_H
#define NETCODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants (docs/netcode-endpoints.md "Wire format") ---- */

#define NETCODE_VERSION_INFO "NETCODE 1.02"
#define NETCODE_VERSION_INFO_BYTES 13 /* with its terminating zero */
#define NETCODE_KEY_BYTES 32
#define NETCODE_MAC_BYTES 16
#define NETCODE_TOKEN_NONCE_BYTES 24
#define NETCODE_USER_DATA_BYTES 256
#define NETCODE_CONNECT_TOKEN_BYTES 2048
#define NETCODE_PRIVATE_TOKEN_BYTES 1024
#define NETCODE_CHALLENGE_TOKEN_BYTES 300
#define NETCODE_REQUEST_PACKET_BYTES 1078 /* 1 + 13 + 8 + 8 + 24 + 1024 */
#define NETCODE_MAX_PAYLOAD_BYTES 1200
#define NETCODE_MAX_PACKET_BYTES 1300   /* any datagram we send or take */
#define NETCODE_MIN_ENCRYPTED_PACKET_BYTES 18
#define NETCODE_MAX_SERVERS 32
#define NETCODE_MAX_CLIENTS 256
#define NETCODE_REPLAY_WINDOW 256
#define NETCODE_PACKET_SEND_RATE 10.0    /* requests, responses, keep-alives per second */
#define NETCODE_DISCONNECT_PACKETS 10    /* redundant disconnect packets */
#define NETCODE_GLOBAL_SEQUENCE_START 0x8000000000000000ull /* challenge and denied packets */
#define NETCODE_DEFAULT_PROTOCOL_ID 0x1122334455667788ull
#define NETCODE_DEFAULT_SERVER_PORT 40000

typedef enum netcode_packet_type_t {
    NETCODE_REQUEST = 0,
    NETCODE_DENIED = 1,
    NETCODE_CHALLENGE = 2,
    NETCODE_RESPONSE = 3,
    NETCODE_KEEP_ALIVE = 4,
    NETCODE_PAYLOAD = 5,
    NETCODE_DISCONNECT = 6,
    NETCODE_PACKET_TYPES = 7
} netcode_packet_type_t;

const char *netcode_packet_type_name(int type);

/* ---- addresses ---- */

enum { NETCODE_ADDRESS_NONE = 0, NETCODE_ADDRESS_IPV4 = 1, NETCODE_ADDRESS_IPV6 = 2 };

typedef struct netcode_address_t {
    uint8_t type;     /* NETCODE_ADDRESS_* */
    uint8_t ip[16];   /* network order; IPv4 in the first 4 bytes, the rest zero */
    uint16_t port;
} netcode_address_t;

void netcode_address_ipv4(netcode_address_t *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3, uint16_t port);
int netcode_address_equal(const netcode_address_t *a, const netcode_address_t *b);
/* "a.b.c.d:port" or "[v6]:port"; buffer of at least 64 bytes. */
const char *netcode_address_format(const netcode_address_t *a, char *buffer, size_t size);

/* ---- random bytes ---- */

/* Fills bytes random bytes. */
typedef void (*netcode_random_fn)(void *context, uint8_t *out, size_t bytes);
/* libsodium's randombytes_buf (context unused). */
void netcode_random_system(void *context, uint8_t *out, size_t bytes);
/* Initialises libsodium; returns 0, or -1 when it cannot. Every entry point
 * that encrypts calls it, so callers need not. */
int netcode_crypto_init(void);

/* ---- connect tokens ---- */

typedef struct netcode_private_token_t {
    uint64_t client_id;
    int32_t timeout_seconds; /* negative: no timeout */
    int num_servers;         /* 1..32 */
    netcode_address_t servers[NETCODE_MAX_SERVERS];
    uint8_t client_to_server_key[NETCODE_KEY_BYTES];
    uint8_t server_to_client_key[NETCODE_KEY_BYTES];
    uint8_t user_data[NETCODE_USER_DATA_BYTES];
} netcode_private_token_t;

typedef struct netcode_connect_token_t {
    uint64_t protocol_id;
    uint64_t create_timestamp;
    uint64_t expire_timestamp;
    uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES];
    uint8_t private_data[NETCODE_PRIVATE_TOKEN_BYTES]; /* encrypted, with its MAC last */
    int32_t timeout_seconds;
    int num_servers;
    netcode_address_t servers[NETCODE_MAX_SERVERS];
    uint8_t client_to_server_key[NETCODE_KEY_BYTES];
    uint8_t server_to_client_key[NETCODE_KEY_BYTES];
} netcode_connect_token_t;

typedef enum netcode_token_result_t {
    NETCODE_TOKEN_OK = 0,
    NETCODE_TOKEN_BAD_LENGTH,
    NETCODE_TOKEN_BAD_VERSION,
    NETCODE_TOKEN_BAD_TIMESTAMPS,   /* created after it expires */
    NETCODE_TOKEN_BAD_SERVER_COUNT, /* outside 1..32 */
    NETCODE_TOKEN_BAD_ADDRESS_TYPE, /* not 1 or 2 */
    NETCODE_TOKEN_TRUNCATED,        /* addresses run past the buffer */
    NETCODE_TOKEN_DECRYPT_FAILED,
    NETCODE_TOKEN_RESULT_COUNT
} netcode_token_result_t;
const char *netcode_token_result_name(netcode_token_result_t result);

netcode_token_result_t netcode_read_private_token(const uint8_t in[NETCODE_PRIVATE_TOKEN_BYTES],
                                                  netcode_private_token_t *token);
/* The private part is encrypted with XChaCha20-Poly1305 in place over its
 * first 1008 bytes, MAC in the last 16, associated data version + protocol id
 * + expire timestamp. Decrypt returns 0 or -1 (buffer then unchanged in
 * meaning: not to be trusted). */
int netcode_decrypt_private_token(uint8_t buffer[NETCODE_PRIVATE_TOKEN_BYTES], uint64_t protocol_id,
                                  uint64_t expire_timestamp, const uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES],
                                  const uint8_t key[NETCODE_KEY_BYTES]);

void netcode_write_connect_token(const netcode_connect_token_t *token, uint8_t out[NETCODE_CONNECT_TOKEN_BYTES]);
netcode_token_result_t netcode_read_connect_token(const uint8_t *in, int bytes, netcode_connect_token_t *token);

typedef struct netcode_token_params_t {
    uint64_t protocol_id;
    uint64_t client_id;
    uint64_t create_timestamp;   /* unix seconds */
    int64_t expire_seconds;      /* negative: never (expire timestamp all ones) */
    int32_t timeout_seconds;     /* negative: no timeout */
    int num_servers;
    netcode_address_t public_servers[NETCODE_MAX_SERVERS];   /* in the public part */
    netcode_address_t internal_servers[NETCODE_MAX_SERVERS]; /* in the private part (usually the same) */
    const uint8_t *user_data;    /* 256 bytes, or NULL for zeros */
} netcode_token_params_t;

/* Token parameters for one server (public and internal address the same),
 * expiring 30 s after create_timestamp with a 5 s timeout and zero user
 * data: what the programs and tests start from before changing a field. */
void netcode_token_params_init(netcode_token_params_t *params, uint64_t protocol_id, uint64_t client_id,
                               uint64_t create_timestamp, const netcode_address_t *server);

/* Draws both keys and the nonce from random, encrypts the private part with
 * private_key and writes the 2048-byte token. Returns 0, or -1 on bad
 * parameters (server count). *out_token, when given, gets the token's fields. */
int netcode_generate_connect_token(const netcode_token_params_t *params, const uint8_t private_key[NETCODE_KEY_BYTES],
                                   netcode_random_fn random, void *random_context,
                                   uint8_t out[NETCODE_CONNECT_TOKEN_BYTES], netcode_connect_token_t *out_token);

/* ---- challenge tokens ---- */

/* client id + user data, zero padded to 300; ChaCha20-Poly1305 IETF in place
 * with no associated data, nonce 4 zero bytes + sequence little-endian. */
void netcode_write_challenge_token(uint64_t client_id, const uint8_t user_data[NETCODE_USER_DATA_BYTES],
                                   uint8_t out[NETCODE_CHALLENGE_TOKEN_BYTES]);
int netcode_encrypt_challenge_token(uint8_t buffer[NETCODE_CHALLENGE_TOKEN_BYTES], uint64_t sequence,
                                    const uint8_t key[NETCODE_KEY_BYTES]);
int netcode_decrypt_challenge_token(uint8_t buffer[NETCODE_CHALLENGE_TOKEN_BYTES], uint64_t sequence,
                                    const uint8_t key[NETCODE_KEY_BYTES]);

/* ---- packets ---- */

/* The 12-byte nonce of a packet or challenge token. */
void netcode_packet_nonce(uint64_t sequence, uint8_t nonce[12]);
/* Bytes the sequence takes on the wire: 1..8, high zero bytes left out. */
int netcode_sequence_bytes(uint64_t sequence);

/* Writes the 1078-byte connection request. Returns 1078, or -1 when size is short. */
int netcode_write_request_packet(uint64_t protocol_id, uint64_t expire_timestamp,
                                 const uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES],
                                 const uint8_t private_data[NETCODE_PRIVATE_TOKEN_BYTES], uint8_t *out, int size);

/* Writes an encrypted packet of type 1..6 with this plaintext body (checked
 * against the type's size), sequence and key. Returns its length, or -1 when
 * the type or the body size is wrong or size is too small. */
int netcode_write_encrypted_packet(int type, uint64_t sequence, const uint8_t *body, int body_bytes,
                                   uint64_t protocol_id, const uint8_t key[NETCODE_KEY_BYTES], uint8_t *out, int size);

/* The replay protection of one receiving direction (256 entries). */
typedef struct netcode_replay_t {
    uint64_t most_recent;
    uint64_t received[NETCODE_REPLAY_WINDOW]; /* UINT64_MAX: empty */
} netcode_replay_t;
void netcode_replay_reset(netcode_replay_t *replay);
/* 1 when sequence is too old (at or below most_recent - 256) or already received. */
int netcode_replay_already_received(const netcode_replay_t *replay, uint64_t sequence);
void netcode_replay_advance(netcode_replay_t *replay, uint64_t sequence);

/* Why a datagram was not taken, in the order the checks run. */
typedef enum netcode_read_result_t {
    NETCODE_READ_OK = 0,
    NETCODE_READ_EMPTY,              /* no bytes */
    NETCODE_READ_TOO_SMALL,          /* encrypted: under 18 bytes */
    NETCODE_READ_BAD_TYPE,           /* type 7..15 */
    NETCODE_READ_TYPE_NOT_ALLOWED,   /* a type this side ignores */
    NETCODE_READ_BAD_SEQUENCE_BYTES, /* outside 1..8 */
    NETCODE_READ_SHORT_FOR_SEQUENCE, /* under 1 + sequence bytes + 16 */
    NETCODE_READ_NO_KEY,             /* nobody to decrypt it for */
    NETCODE_READ_REPLAYED,           /* replay protection */
    NETCODE_READ_DECRYPT_FAILED,
    NETCODE_READ_BAD_BODY_SIZE,      /* decrypted, but not the type's size */
    NETCODE_READ_REQUEST_BAD_LENGTH, /* a request that is not 1078 bytes */
    NETCODE_READ_REQUEST_BAD_VERSION,
    NETCODE_READ_REQUEST_BAD_PROTOCOL_ID,
    NETCODE_READ_REQUEST_EXPIRED,
    NETCODE_READ_REQUEST_DECRYPT_FAILED,
    NETCODE_READ_REQUEST_BAD_TOKEN,  /* decrypted private token unreadable */
    NETCODE_READ_RESULT_COUNT
} netcode_read_result_t;
const char *netcode_read_result_name(netcode_read_result_t result);
/* "drop " and the result's name: the name of the client's and the server's
 * counter of packets dropped for that read result ("?" out of range). */
const char *netcode_read_drop_name(netcode_read_result_t result);

typedef struct netcode_packet_t {
    int type;
    uint64_t sequence;  /* encrypted packets */
    uint8_t prefix;
    /* request */
    uint64_t protocol_id, expire_timestamp;
    uint8_t nonce[NETCODE_TOKEN_NONCE_BYTES];
    const uint8_t *private_data;  /* points into the datagram (still encrypted) */
    netcode_private_token_t token; /* decrypted */
    /* challenge, response */
    uint64_t challenge_sequence;
    uint8_t challenge_data[NETCODE_CHALLENGE_TOKEN_BYTES];
    /* keep-alive */
    uint32_t client_index, max_clients;
    /* payload: decrypted bytes */
    uint8_t payload[NETCODE_MAX_PAYLOAD_BYTES];
    int payload_bytes;
} netcode_packet_t;

/* Allowed types as bits (1 << type). */
#define NETCODE_CLIENT_ALLOWED ((1u << NETCODE_DENIED) | (1u << NETCODE_CHALLENGE) | (1u << NETCODE_KEEP_ALIVE) | \
                                (1u << NETCODE_PAYLOAD) | (1u << NETCODE_DISCONNECT))
#define NETCODE_SERVER_ALLOWED ((1u << NETCODE_REQUEST) | (1u << NETCODE_RESPONSE) | (1u << NETCODE_KEEP_ALIVE) | \
                                (1u << NETCODE_PAYLOAD) | (1u << NETCODE_DISCONNECT))

/* Reads a connection request: length, version, protocol id, expiry against
 * now_unix, private token decrypted with private_key and read. */
netcode_read_result_t netcode_read_request_packet(const uint8_t *data, int bytes, uint64_t protocol_id,
                                                  uint64_t now_unix, const uint8_t private_key[NETCODE_KEY_BYTES],
                                                  netcode_packet_t *packet);

/* Reads an encrypted packet in the standard's order. key NULL: NO_KEY after
 * the header checks. replay (NULL: none) is checked and advanced for
 * keep-alive, payload and disconnect packets. */
netcode_read_result_t netcode_read_encrypted_packet(const uint8_t *data, int bytes, uint64_t protocol_id,
                                                    const uint8_t *key, unsigned allowed, netcode_replay_t *replay,
                                                    netcode_packet_t *packet);

/* ---- endpoints ---- */

typedef void (*netcode_send_fn)(void *context, const netcode_address_t *to, const uint8_t *packet, int bytes);

typedef enum netcode_client_state_t {
    NETCODE_CLIENT_CONNECT_TOKEN_EXPIRED = -6,
    NETCODE_CLIENT_INVALID_CONNECT_TOKEN = -5,
    NETCODE_CLIENT_CONNECTION_TIMED_OUT = -4,
    NETCODE_CLIENT_RESPONSE_TIMED_OUT = -3,
    NETCODE_CLIENT_REQUEST_TIMED_OUT = -2,
    NETCODE_CLIENT_CONNECTION_DENIED = -1,
    NETCODE_CLIENT_DISCONNECTED = 0,
    NETCODE_CLIENT_SENDING_REQUEST = 1,
    NETCODE_CLIENT_SENDING_RESPONSE = 2,
    NETCODE_CLIENT_CONNECTED = 3
} netcode_client_state_t;
const char *netcode_client_state_name(int state);

enum {
    NETCODE_CLIENT_COUNTER_SENT,           /* datagrams */
    NETCODE_CLIENT_COUNTER_REQUESTS_SENT,
    NETCODE_CLIENT_COUNTER_RESPONSES_SENT,
    NETCODE_CLIENT_COUNTER_KEEP_ALIVES_SENT,
    NETCODE_CLIENT_COUNTER_PAYLOADS_SENT,
    NETCODE_CLIENT_COUNTER_DISCONNECTS_SENT,
    NETCODE_CLIENT_COUNTER_RECEIVED,       /* datagrams handed in */
    NETCODE_CLIENT_COUNTER_DECRYPTED,      /* read and decrypted */
    NETCODE_CLIENT_COUNTER_DENIED_RECEIVED,
    NETCODE_CLIENT_COUNTER_CHALLENGES_RECEIVED,
    NETCODE_CLIENT_COUNTER_KEEP_ALIVES_RECEIVED,
    NETCODE_CLIENT_COUNTER_PAYLOADS_RECEIVED, /* delivered to the application */
    NETCODE_CLIENT_COUNTER_DISCONNECTS_RECEIVED,
    NETCODE_CLIENT_COUNTER_DROP_NOT_CONNECTING, /* nothing to do with packets now */
    NETCODE_CLIENT_COUNTER_DROP_FOREIGN,     /* not from the server being connected to */
    NETCODE_CLIENT_COUNTER_DROP_READ,        /* first of NETCODE_READ_RESULT_COUNT - 1 read reasons */
    NETCODE_CLIENT_COUNTER_DROP_UNEXPECTED = NETCODE_CLIENT_COUNTER_DROP_READ + NETCODE_READ_RESULT_COUNT - 1,
                                             /* valid, but not for this state (a payload before connected...) */
    NETCODE_CLIENT_COUNTER_COUNT
};
const char *netcode_client_counter_name(int counter);

typedef struct netcode_client_config_t {
    double unix_epoch;                 /* unix time at time 0 */
    netcode_send_fn send;              /* required */
    /* A payload arrived (connected). */
    void (*receive)(void *context, uint64_t sequence, const uint8_t *payload, int bytes);
    /* The state changed. */
    void (*state_changed)(void *context, int from, int to);
    void *context;
} netcode_client_config_t;

typedef struct netcode_client_t netcode_client_t;

netcode_client_t *netcode_client_create(const netcode_client_config_t *config);
void netcode_client_destroy(netcode_client_t *client);

/* Reads the 2048-byte token and starts sending requests to its first server
 * (SENDING_REQUEST), or goes to INVALID_CONNECT_TOKEN. */
void netcode_client_connect(netcode_client_t *client, double time, const uint8_t *token, int token_bytes);
/* Sends what is due (requests, responses, keep-alives at 10 per second) and
 * applies the timeouts and the token's expiry. */
void netcode_client_update(netcode_client_t *client, double time);
/* One datagram from `from`. Returns 1 when taken, 0 when dropped (counted). */
int netcode_client_receive_packet(netcode_client_t *client, double time, const netcode_address_t *from,
                                  const uint8_t *packet, int bytes);
/* Sends a payload (1..1200 bytes) when connected. Returns 0, or -1 when not connected. */
int netcode_client_send_payload(netcode_client_t *client, double time, const uint8_t *payload, int bytes);
/* Sends the redundant disconnect packets (when connected or connecting) and
 * goes to DISCONNECTED. */
void netcode_client_disconnect(netcode_client_t *client, double time);

int netcode_client_state(const netcode_client_t *client);
int netcode_client_index(const netcode_client_t *client);
int netcode_client_max_clients(const netcode_client_t *client);
const netcode_address_t *netcode_client_server_address(const netcode_client_t *client);
const uint64_t *netcode_client_counters(const netcode_client_t *client);

enum {
    NETCODE_END_NONE = 0,
    NETCODE_END_TIMED_OUT,          /* nothing heard for the token's timeout */
    NETCODE_END_CLIENT_DISCONNECT,  /* the client sent a disconnect packet */
    NETCODE_END_SERVER_DISCONNECT,  /* we disconnected it */
};
const char *netcode_end_reason_name(int reason);

enum {
    NETCODE_SERVER_COUNTER_SENT,
    NETCODE_SERVER_COUNTER_CHALLENGES_SENT,
    NETCODE_SERVER_COUNTER_DENIED_SENT,
    NETCODE_SERVER_COUNTER_KEEP_ALIVES_SENT,
    NETCODE_SERVER_COUNTER_PAYLOADS_SENT,
    NETCODE_SERVER_COUNTER_DISCONNECTS_SENT,
    NETCODE_SERVER_COUNTER_RECEIVED,
    NETCODE_SERVER_COUNTER_DECRYPTED,
    NETCODE_SERVER_COUNTER_REQUESTS_RECEIVED,   /* valid requests */
    NETCODE_SERVER_COUNTER_RESPONSES_RECEIVED,  /* valid responses */
    NETCODE_SERVER_COUNTER_KEEP_ALIVES_RECEIVED,
    NETCODE_SERVER_COUNTER_PAYLOADS_RECEIVED,
    NETCODE_SERVER_COUNTER_DISCONNECTS_RECEIVED,
    NETCODE_SERVER_COUNTER_CONNECTS,
    NETCODE_SERVER_COUNTER_TIMEOUTS,
    NETCODE_SERVER_COUNTER_DROP_NOT_IN_TOKEN,      /* our address is not among the token's servers */
    NETCODE_SERVER_COUNTER_DROP_ADDRESS_CONNECTED, /* a request or response from a connected address */
    NETCODE_SERVER_COUNTER_DROP_ID_CONNECTED,      /* its client id is connected */
    NETCODE_SERVER_COUNTER_DROP_TOKEN_REUSED,      /* the token came from another address */
    NETCODE_SERVER_COUNTER_DROP_NO_MAPPING_ROOM,
    NETCODE_SERVER_COUNTER_DROP_CHALLENGE_DECRYPT, /* a response whose challenge token does not decrypt */
    NETCODE_SERVER_COUNTER_DROP_UNEXPECTED,        /* keep-alive, payload or disconnect from no client */
    NETCODE_SERVER_COUNTER_DROP_READ,              /* first of the read reasons */
    NETCODE_SERVER_COUNTER_COUNT = NETCODE_SERVER_COUNTER_DROP_READ + NETCODE_READ_RESULT_COUNT - 1
};
const char *netcode_server_counter_name(int counter);

typedef struct netcode_server_config_t {
    uint64_t protocol_id;
    uint8_t private_key[NETCODE_KEY_BYTES];
    netcode_address_t public_address; /* must be in the token's server list */
    int max_clients;                  /* 1..256 */
    double unix_epoch;
    netcode_random_fn random;         /* the challenge key; NULL: netcode_random_system */
    void *random_context;
    netcode_send_fn send;             /* required */
    void (*receive)(void *context, int client_index, uint64_t sequence, const uint8_t *payload, int bytes);
    /* A client connected (connected 1), or its slot is being reset (0, with
     * reason NETCODE_END_*; called before the reset: the slot's address and
     * id can still be asked for). */
    void (*client_event)(void *context, int client_index, int connected, int reason);
    void *context;
} netcode_server_config_t;

void netcode_server_default_config(netcode_server_config_t *config);

typedef struct netcode_server_t netcode_server_t;

/* Returns NULL when out of memory or libsodium cannot start. */
netcode_server_t *netcode_server_create(const netcode_server_config_t *config, double time);
void netcode_server_destroy(netcode_server_t *server);

/* Keep-alives to clients not sent to for 0.1 s, and timeouts. */
void netcode_server_update(netcode_server_t *server, double time);
int netcode_server_receive_packet(netcode_server_t *server, double time, const netcode_address_t *from,
                                  const uint8_t *packet, int bytes);
/* A payload to a connected client (a keep-alive first while it is unconfirmed).
 * Returns 0, or -1 when that slot is not connected. */
int netcode_server_send_payload(netcode_server_t *server, double time, int client_index, const uint8_t *payload,
                                int bytes);
/* Sends the redundant disconnect packets and resets the slot. */
void netcode_server_disconnect_client(netcode_server_t *server, double time, int client_index);

int netcode_server_client_connected(const netcode_server_t *server, int client_index);
int netcode_server_connected_clients(const netcode_server_t *server);
int netcode_server_max_clients(const netcode_server_t *server);
uint64_t netcode_server_client_id(const netcode_server_t *server, int client_index);
const netcode_address_t *netcode_server_client_address(const netcode_server_t *server, int client_index);
/* A connected client's keys (from its private connect token). */
void netcode_server_client_keys(const netcode_server_t *server, int client_index,
                                uint8_t client_to_server[NETCODE_KEY_BYTES], uint8_t server_to_client[NETCODE_KEY_BYTES]);
const uint64_t *netcode_server_counters(const netcode_server_t *server);

/* ---- faults for the simulator (a netsim filter) ---- */

typedef struct netcode_faults_t {
    int drop_challenges;    /* drop the first N challenge packets (-1: all) */
    int drop_responses;     /* drop the first N response packets (-1: all) */
    double silent_at[2];    /* >= 0: from this time drop everything in that direction (0 client to server) */
    double now;             /* set by the program before each send */
    uint64_t dropped;
} netcode_faults_t;

void netcode_faults_init(netcode_faults_t *faults);
/* netsim_filter_fn: context is a netcode_faults_t; reads only the prefix byte. */
int netcode_faults_filter(void *context, int dir, const uint8_t *packet, int bytes);

#ifdef __cplusplus
}
#endif

#endif /* NETCODE_H */
