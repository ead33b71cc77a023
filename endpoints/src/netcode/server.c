/* netcode/server.c: the netcode 1.02 server: connection requests, challenge
 * and response, client slots, keep-alives, payloads, timeouts, disconnects.
 * docs/netcode-endpoints.md "Server". */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcode.h"

#define MAX_MAPPINGS (NETCODE_MAX_CLIENTS * 4)
#define MAX_TOKEN_ENTRIES (NETCODE_MAX_CLIENTS * 8)

/* An encryption mapping: the keys of an address that sent a valid request. */
typedef struct mapping_t {
    int used;
    netcode_address_t address;
    uint8_t send_key[NETCODE_KEY_BYTES], receive_key[NETCODE_KEY_BYTES];
    int timeout;          /* seconds of silence; <= 0 none */
    double expire_time;   /* < 0 none: a connected client's mapping */
    double last_access;
    int client_index;     /* -1 while not connected */
} mapping_t;

typedef struct token_entry_t {
    double time;
    uint8_t mac[NETCODE_MAC_BYTES];
    netcode_address_t address;
} token_entry_t;

typedef struct slot_t {
    int connected, confirmed;
    int mapping;
    uint64_t client_id;
    int timeout;
    uint64_t sequence;
    double last_send_time, last_receive_time;
    netcode_address_t address;
    netcode_replay_t replay;
    uint8_t user_data[NETCODE_USER_DATA_BYTES];
} slot_t;

struct netcode_server_t {
    netcode_server_config_t config;
    double time;
    int connected_clients;
    uint64_t global_sequence;
    uint64_t challenge_sequence;
    uint8_t challenge_key[NETCODE_KEY_BYTES];
    slot_t slots[NETCODE_MAX_CLIENTS];
    mapping_t mappings[MAX_MAPPINGS];
    token_entry_t token_entries[MAX_TOKEN_ENTRIES];
    uint64_t counters[NETCODE_SERVER_COUNTER_COUNT];
};

const char *netcode_end_reason_name(int reason)
{
    switch (reason) {
    case NETCODE_END_NONE: return "none";
    case NETCODE_END_TIMED_OUT: return "timed out";
    case NETCODE_END_CLIENT_DISCONNECT: return "client disconnected";
    case NETCODE_END_SERVER_DISCONNECT: return "server disconnected";
    default: return "?";
    }
}

const char *netcode_server_counter_name(int counter)
{
    static const char *const names[NETCODE_SERVER_COUNTER_DROP_READ] = {
        "sent", "challenges sent", "denied sent", "keep-alives sent", "payloads sent", "disconnects sent",
        "received", "decrypted", "requests received", "responses received", "keep-alives received",
        "payloads received", "disconnects received", "connects", "timeouts", "drop not in token",
        "drop address connected", "drop id connected", "drop token reused", "drop no mapping room",
        "drop challenge decrypt", "drop unexpected"};
    if (counter < 0 || counter >= NETCODE_SERVER_COUNTER_COUNT) return "?";
    if (counter < NETCODE_SERVER_COUNTER_DROP_READ) return names[counter];
    return netcode_read_drop_name((netcode_read_result_t)(counter - NETCODE_SERVER_COUNTER_DROP_READ + 1));
}

void netcode_server_default_config(netcode_server_config_t *config)
{
    memset(config, 0, sizeof *config);
    config->protocol_id = NETCODE_DEFAULT_PROTOCOL_ID;
    config->max_clients = 64;
    netcode_address_ipv4(&config->public_address, 127, 0, 0, 1, NETCODE_DEFAULT_SERVER_PORT);
}

netcode_server_t *netcode_server_create(const netcode_server_config_t *config, double time)
{
    assert(config && config->send);
    assert(config->max_clients >= 1 && config->max_clients <= NETCODE_MAX_CLIENTS);
    if (netcode_crypto_init() != 0) return NULL;
    netcode_server_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->config = *config;
    if (!s->config.random) s->config.random = netcode_random_system;
    s->time = time;
    s->global_sequence = NETCODE_GLOBAL_SEQUENCE_START;
    s->config.random(s->config.random_context, s->challenge_key, NETCODE_KEY_BYTES);
    for (int i = 0; i < MAX_TOKEN_ENTRIES; i++) s->token_entries[i].time = -1e9;
    for (int i = 0; i < NETCODE_MAX_CLIENTS; i++) s->slots[i].mapping = -1;
    return s;
}

void netcode_server_destroy(netcode_server_t *server) { free(server); }

static uint64_t unix_now(const netcode_server_t *s)
{
    double t = s->config.unix_epoch + s->time;
    return t <= 0 ? 0 : (uint64_t)floor(t);
}

/* ---- encryption mappings ---- */

static int mapping_expired(const mapping_t *m, double time)
{
    return (m->timeout > 0 && m->last_access + m->timeout < time) || (m->expire_time >= 0 && m->expire_time < time);
}

static int mapping_find(netcode_server_t *s, const netcode_address_t *address)
{
    for (int i = 0; i < MAX_MAPPINGS; i++) {
        mapping_t *m = &s->mappings[i];
        if (m->used && netcode_address_equal(&m->address, address) && !mapping_expired(m, s->time)) {
            m->last_access = s->time;
            return i;
        }
    }
    return -1;
}

static int mapping_add(netcode_server_t *s, const netcode_address_t *address, const netcode_private_token_t *token)
{
    int slot = -1;
    for (int i = 0; i < MAX_MAPPINGS && slot < 0; i++) {
        mapping_t *m = &s->mappings[i];
        if (m->used && netcode_address_equal(&m->address, address) && !mapping_expired(m, s->time)) slot = i;
    }
    for (int i = 0; i < MAX_MAPPINGS && slot < 0; i++) {
        mapping_t *m = &s->mappings[i];
        if (!m->used || (mapping_expired(m, s->time) && m->client_index < 0)) slot = i;
    }
    if (slot < 0) return -1;
    mapping_t *m = &s->mappings[slot];
    m->used = 1;
    m->address = *address;
    memcpy(m->send_key, token->server_to_client_key, NETCODE_KEY_BYTES);
    memcpy(m->receive_key, token->client_to_server_key, NETCODE_KEY_BYTES);
    m->timeout = token->timeout_seconds;
    m->expire_time = token->timeout_seconds >= 0 ? s->time + token->timeout_seconds : -1.0;
    m->last_access = s->time;
    m->client_index = -1;
    return slot;
}

static void mapping_remove(netcode_server_t *s, int index)
{
    memset(&s->mappings[index], 0, sizeof s->mappings[index]);
    s->mappings[index].client_index = -1;
}

/* ---- sending ---- */

static void send_global(netcode_server_t *s, const netcode_address_t *to, int type, const uint8_t *body,
                        int body_bytes, const uint8_t *key)
{
    uint8_t packet[NETCODE_MAX_PACKET_BYTES];
    int bytes = netcode_write_encrypted_packet(type, s->global_sequence++, body, body_bytes, s->config.protocol_id,
                                               key, packet, sizeof packet);
    assert(bytes > 0);
    s->counters[NETCODE_SERVER_COUNTER_SENT]++;
    s->config.send(s->config.context, to, packet, bytes);
}

static void send_to_client(netcode_server_t *s, int index, int type, const uint8_t *body, int body_bytes)
{
    slot_t *slot = &s->slots[index];
    mapping_t *m = &s->mappings[slot->mapping];
    uint8_t packet[NETCODE_MAX_PACKET_BYTES];
    int bytes = netcode_write_encrypted_packet(type, slot->sequence++, body, body_bytes, s->config.protocol_id,
                                               m->send_key, packet, sizeof packet);
    assert(bytes > 0);
    m->last_access = s->time;
    slot->last_send_time = s->time;
    s->counters[NETCODE_SERVER_COUNTER_SENT]++;
    s->config.send(s->config.context, &slot->address, packet, bytes);
}

static void send_keep_alive(netcode_server_t *s, int index)
{
    uint8_t body[8];
    uint32_t values[2] = {(uint32_t)index, (uint32_t)s->config.max_clients};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) body[4 * k + i] = (uint8_t)(values[k] >> (8 * i));
    s->counters[NETCODE_SERVER_COUNTER_KEEP_ALIVES_SENT]++;
    send_to_client(s, index, NETCODE_KEEP_ALIVE, body, sizeof body);
}

static void reset_slot(netcode_server_t *s, int index, int send_disconnects, int reason)
{
    slot_t *slot = &s->slots[index];
    assert(slot->connected);
    if (send_disconnects)
        for (int i = 0; i < NETCODE_DISCONNECT_PACKETS; i++) {
            s->counters[NETCODE_SERVER_COUNTER_DISCONNECTS_SENT]++;
            send_to_client(s, index, NETCODE_DISCONNECT, NULL, 0);
        }
    /* The event first, while the slot still says who it was. */
    if (s->config.client_event) s->config.client_event(s->config.context, index, 0, reason);
    mapping_remove(s, slot->mapping);
    memset(slot, 0, sizeof *slot);
    slot->mapping = -1;
    s->connected_clients--;
}

static int find_by_address(const netcode_server_t *s, const netcode_address_t *address)
{
    for (int i = 0; i < s->config.max_clients; i++)
        if (s->slots[i].connected && netcode_address_equal(&s->slots[i].address, address)) return i;
    return -1;
}

static int find_by_id(const netcode_server_t *s, uint64_t client_id)
{
    for (int i = 0; i < s->config.max_clients; i++)
        if (s->slots[i].connected && s->slots[i].client_id == client_id) return i;
    return -1;
}

/* 1 when this token (by its MAC) is new, or was seen from this address
 * before; 0 when another address used it. New tokens replace the oldest entry. */
static int token_entry_find_or_add(netcode_server_t *s, const netcode_address_t *address, const uint8_t *mac)
{
    int match = -1, oldest = 0;
    for (int i = 0; i < MAX_TOKEN_ENTRIES; i++) {
        if (s->token_entries[i].time > -1e9 && memcmp(s->token_entries[i].mac, mac, NETCODE_MAC_BYTES) == 0) match = i;
        if (s->token_entries[i].time < s->token_entries[oldest].time) oldest = i;
    }
    if (match < 0) {
        token_entry_t *e = &s->token_entries[oldest];
        e->time = s->time;
        e->address = *address;
        memcpy(e->mac, mac, NETCODE_MAC_BYTES);
        return 1;
    }
    return netcode_address_equal(&s->token_entries[match].address, address);
}

/* ---- receiving ---- */

static int process_request(netcode_server_t *s, const netcode_address_t *from, const netcode_packet_t *packet)
{
    const netcode_private_token_t *token = &packet->token;
    int listed = 0;
    for (int i = 0; i < token->num_servers; i++)
        if (netcode_address_equal(&token->servers[i], &s->config.public_address)) listed = 1;
    if (!listed) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_NOT_IN_TOKEN]++;
        return 0;
    }
    if (find_by_address(s, from) >= 0) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_ADDRESS_CONNECTED]++;
        return 0;
    }
    if (find_by_id(s, token->client_id) >= 0) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_ID_CONNECTED]++;
        return 0;
    }
    const uint8_t *mac = packet->private_data + NETCODE_PRIVATE_TOKEN_BYTES - NETCODE_MAC_BYTES;
    if (!token_entry_find_or_add(s, from, mac)) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_TOKEN_REUSED]++;
        return 0;
    }
    s->counters[NETCODE_SERVER_COUNTER_REQUESTS_RECEIVED]++;
    if (s->connected_clients == s->config.max_clients) {
        s->counters[NETCODE_SERVER_COUNTER_DENIED_SENT]++;
        send_global(s, from, NETCODE_DENIED, NULL, 0, token->server_to_client_key);
        return 1;
    }
    if (mapping_add(s, from, token) < 0) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_NO_MAPPING_ROOM]++;
        return 0;
    }
    uint8_t body[8 + NETCODE_CHALLENGE_TOKEN_BYTES];
    uint64_t sequence = s->challenge_sequence++;
    for (int i = 0; i < 8; i++) body[i] = (uint8_t)(sequence >> (8 * i));
    netcode_write_challenge_token(token->client_id, token->user_data, body + 8);
    if (netcode_encrypt_challenge_token(body + 8, sequence, s->challenge_key) != 0) return 0;
    s->counters[NETCODE_SERVER_COUNTER_CHALLENGES_SENT]++;
    send_global(s, from, NETCODE_CHALLENGE, body, sizeof body, token->server_to_client_key);
    return 1;
}

static int process_response(netcode_server_t *s, const netcode_address_t *from, const netcode_packet_t *packet,
                            int mapping)
{
    uint8_t challenge[NETCODE_CHALLENGE_TOKEN_BYTES];
    memcpy(challenge, packet->challenge_data, sizeof challenge);
    if (netcode_decrypt_challenge_token(challenge, packet->challenge_sequence, s->challenge_key) != 0) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_CHALLENGE_DECRYPT]++;
        return 0;
    }
    uint64_t client_id = 0;
    for (int i = 7; i >= 0; i--) client_id = client_id << 8 | challenge[i];
    if (find_by_address(s, from) >= 0) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_ADDRESS_CONNECTED]++;
        return 0;
    }
    if (find_by_id(s, client_id) >= 0) {
        s->counters[NETCODE_SERVER_COUNTER_DROP_ID_CONNECTED]++;
        return 0;
    }
    s->counters[NETCODE_SERVER_COUNTER_RESPONSES_RECEIVED]++;
    mapping_t *m = &s->mappings[mapping];
    if (s->connected_clients == s->config.max_clients) {
        s->counters[NETCODE_SERVER_COUNTER_DENIED_SENT]++;
        send_global(s, from, NETCODE_DENIED, NULL, 0, m->send_key);
        return 1;
    }
    int index = 0;
    while (s->slots[index].connected) index++;
    slot_t *slot = &s->slots[index];
    memset(slot, 0, sizeof *slot);
    slot->connected = 1;
    slot->mapping = mapping;
    slot->client_id = client_id;
    slot->timeout = m->timeout;
    slot->address = *from;
    slot->last_send_time = slot->last_receive_time = s->time;
    memcpy(slot->user_data, challenge + 8, NETCODE_USER_DATA_BYTES);
    netcode_replay_reset(&slot->replay);
    m->expire_time = -1.0;
    m->client_index = index;
    s->connected_clients++;
    s->counters[NETCODE_SERVER_COUNTER_CONNECTS]++;
    send_keep_alive(s, index);
    if (s->config.client_event) s->config.client_event(s->config.context, index, 1, NETCODE_END_NONE);
    return 1;
}

int netcode_server_receive_packet(netcode_server_t *s, double time, const netcode_address_t *from,
                                  const uint8_t *data, int bytes)
{
    s->time = time;
    s->counters[NETCODE_SERVER_COUNTER_RECEIVED]++;
    static netcode_packet_t packet; /* large: not on the stack; the endpoints are single-threaded */
    netcode_read_result_t r;
    if (bytes >= 1 && data[0] == NETCODE_REQUEST) {
        r = netcode_read_request_packet(data, bytes, s->config.protocol_id, unix_now(s), s->config.private_key,
                                        &packet);
        if (r == NETCODE_READ_OK) {
            s->counters[NETCODE_SERVER_COUNTER_DECRYPTED]++;
            return process_request(s, from, &packet);
        }
    } else {
        int index = find_by_address(s, from);
        int mapping = index >= 0 ? s->slots[index].mapping : mapping_find(s, from);
        const uint8_t *key = mapping >= 0 ? s->mappings[mapping].receive_key : NULL;
        r = netcode_read_encrypted_packet(data, bytes, s->config.protocol_id, key, NETCODE_SERVER_ALLOWED,
                                          index >= 0 ? &s->slots[index].replay : NULL, &packet);
        if (r == NETCODE_READ_OK) {
            s->counters[NETCODE_SERVER_COUNTER_DECRYPTED]++;
            if (packet.type == NETCODE_RESPONSE) return process_response(s, from, &packet, mapping);
            if (index < 0) {
                s->counters[NETCODE_SERVER_COUNTER_DROP_UNEXPECTED]++;
                return 0;
            }
            slot_t *slot = &s->slots[index];
            switch (packet.type) {
            case NETCODE_KEEP_ALIVE:
                s->counters[NETCODE_SERVER_COUNTER_KEEP_ALIVES_RECEIVED]++;
                slot->last_receive_time = time;
                slot->confirmed = 1;
                return 1;
            case NETCODE_PAYLOAD:
                s->counters[NETCODE_SERVER_COUNTER_PAYLOADS_RECEIVED]++;
                slot->last_receive_time = time;
                slot->confirmed = 1;
                if (s->config.receive)
                    s->config.receive(s->config.context, index, packet.sequence, packet.payload, packet.payload_bytes);
                return 1;
            case NETCODE_DISCONNECT:
                s->counters[NETCODE_SERVER_COUNTER_DISCONNECTS_RECEIVED]++;
                reset_slot(s, index, 0, NETCODE_END_CLIENT_DISCONNECT);
                return 1;
            default: break;
            }
            s->counters[NETCODE_SERVER_COUNTER_DROP_UNEXPECTED]++;
            return 0;
        }
    }
    s->counters[NETCODE_SERVER_COUNTER_DROP_READ + r - 1]++;
    return 0;
}

void netcode_server_update(netcode_server_t *s, double time)
{
    s->time = time;
    for (int i = 0; i < s->config.max_clients; i++) {
        slot_t *slot = &s->slots[i];
        if (slot->connected && slot->last_send_time + 1.0 / NETCODE_PACKET_SEND_RATE <= time) send_keep_alive(s, i);
    }
    for (int i = 0; i < s->config.max_clients; i++) {
        slot_t *slot = &s->slots[i];
        if (slot->connected && slot->timeout > 0 && slot->last_receive_time + slot->timeout <= time) {
            s->counters[NETCODE_SERVER_COUNTER_TIMEOUTS]++;
            reset_slot(s, i, 0, NETCODE_END_TIMED_OUT);
        }
    }
}

int netcode_server_send_payload(netcode_server_t *s, double time, int index, const uint8_t *payload, int bytes)
{
    assert(bytes >= 1 && bytes <= NETCODE_MAX_PAYLOAD_BYTES);
    if (index < 0 || index >= s->config.max_clients || !s->slots[index].connected) return -1;
    s->time = time;
    if (!s->slots[index].confirmed) send_keep_alive(s, index);
    s->counters[NETCODE_SERVER_COUNTER_PAYLOADS_SENT]++;
    send_to_client(s, index, NETCODE_PAYLOAD, payload, bytes);
    return 0;
}

void netcode_server_disconnect_client(netcode_server_t *s, double time, int index)
{
    if (index < 0 || index >= s->config.max_clients || !s->slots[index].connected) return;
    s->time = time;
    reset_slot(s, index, 1, NETCODE_END_SERVER_DISCONNECT);
}

int netcode_server_client_connected(const netcode_server_t *s, int index)
{
    return index >= 0 && index < s->config.max_clients && s->slots[index].connected;
}
int netcode_server_connected_clients(const netcode_server_t *s) { return s->connected_clients; }
int netcode_server_max_clients(const netcode_server_t *s) { return s->config.max_clients; }
uint64_t netcode_server_client_id(const netcode_server_t *s, int index) { return s->slots[index].client_id; }
const netcode_address_t *netcode_server_client_address(const netcode_server_t *s, int index)
{
    return &s->slots[index].address;
}
void netcode_server_client_keys(const netcode_server_t *s, int index, uint8_t client_to_server[NETCODE_KEY_BYTES],
                                uint8_t server_to_client[NETCODE_KEY_BYTES])
{
    const mapping_t *m = &s->mappings[s->slots[index].mapping];
    memcpy(client_to_server, m->receive_key, NETCODE_KEY_BYTES);
    memcpy(server_to_client, m->send_key, NETCODE_KEY_BYTES);
}
const uint64_t *netcode_server_counters(const netcode_server_t *s) { return s->counters; }
