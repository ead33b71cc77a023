/* netcode/client.c: the netcode 1.02 client state machine.
 * docs/netcode-endpoints.md "Client". */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "netcode.h"

struct netcode_client_t {
    netcode_client_config_t config;
    int state;
    double connect_start_time;
    double last_send_time, last_receive_time;
    int pending_state;        /* a denied packet's outcome, applied at the next update; 0 none */
    uint64_t sequence;
    int client_index, max_clients;
    int server_index;
    netcode_address_t server;
    netcode_connect_token_t token;
    netcode_replay_t replay;
    uint64_t challenge_sequence;
    uint8_t challenge_data[NETCODE_CHALLENGE_TOKEN_BYTES];
    uint64_t counters[NETCODE_CLIENT_COUNTER_COUNT];
};

const char *netcode_client_state_name(int state)
{
    switch (state) {
    case NETCODE_CLIENT_CONNECT_TOKEN_EXPIRED: return "connect token expired";
    case NETCODE_CLIENT_INVALID_CONNECT_TOKEN: return "invalid connect token";
    case NETCODE_CLIENT_CONNECTION_TIMED_OUT: return "connection timed out";
    case NETCODE_CLIENT_RESPONSE_TIMED_OUT: return "connection response timed out";
    case NETCODE_CLIENT_REQUEST_TIMED_OUT: return "connection request timed out";
    case NETCODE_CLIENT_CONNECTION_DENIED: return "connection denied";
    case NETCODE_CLIENT_DISCONNECTED: return "disconnected";
    case NETCODE_CLIENT_SENDING_REQUEST: return "sending connection request";
    case NETCODE_CLIENT_SENDING_RESPONSE: return "sending connection response";
    case NETCODE_CLIENT_CONNECTED: return "connected";
    default: return "?";
    }
}

const char *netcode_client_counter_name(int counter)
{
    static const char *const names[NETCODE_CLIENT_COUNTER_DROP_READ] = {
        "sent", "requests sent", "responses sent", "keep-alives sent", "payloads sent", "disconnects sent",
        "received", "decrypted", "denied received", "challenges received", "keep-alives received",
        "payloads received", "disconnects received", "drop not connecting", "drop foreign"};
    if (counter < 0 || counter >= NETCODE_CLIENT_COUNTER_COUNT) return "?";
    if (counter < NETCODE_CLIENT_COUNTER_DROP_READ) return names[counter];
    if (counter == NETCODE_CLIENT_COUNTER_DROP_UNEXPECTED) return "drop unexpected";
    return netcode_read_drop_name((netcode_read_result_t)(counter - NETCODE_CLIENT_COUNTER_DROP_READ + 1));
}

netcode_client_t *netcode_client_create(const netcode_client_config_t *config)
{
    assert(config && config->send);
    netcode_client_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->config = *config;
    c->state = NETCODE_CLIENT_DISCONNECTED;
    netcode_replay_reset(&c->replay);
    return c;
}

void netcode_client_destroy(netcode_client_t *client) { free(client); }

static void set_state(netcode_client_t *c, int state)
{
    if (state == c->state) return;
    int from = c->state;
    c->state = state;
    if (c->config.state_changed) c->config.state_changed(c->config.context, from, state);
}

static void send_encrypted(netcode_client_t *c, double time, int type, const uint8_t *body, int body_bytes)
{
    uint8_t packet[NETCODE_MAX_PACKET_BYTES];
    int bytes = netcode_write_encrypted_packet(type, c->sequence++, body, body_bytes, c->token.protocol_id,
                                               c->token.client_to_server_key, packet, sizeof packet);
    assert(bytes > 0);
    c->last_send_time = time;
    c->counters[NETCODE_CLIENT_COUNTER_SENT]++;
    c->config.send(c->config.context, &c->server, packet, bytes);
}

static void reset_for_server(netcode_client_t *c, double time)
{
    c->last_send_time = time - 1.0;
    c->last_receive_time = time;
    c->pending_state = 0;
    c->challenge_sequence = 0;
    memset(c->challenge_data, 0, sizeof c->challenge_data);
    netcode_replay_reset(&c->replay);
}

/* Ends the attempt: the next server of the token, or the state given. */
static void fail(netcode_client_t *c, double time, int state)
{
    if (state != NETCODE_CLIENT_CONNECT_TOKEN_EXPIRED && state != NETCODE_CLIENT_CONNECTION_TIMED_OUT &&
        c->server_index + 1 < c->token.num_servers) {
        c->server_index++;
        c->server = c->token.servers[c->server_index];
        reset_for_server(c, time);
        set_state(c, NETCODE_CLIENT_SENDING_REQUEST);
        return;
    }
    set_state(c, state);
}

void netcode_client_connect(netcode_client_t *c, double time, const uint8_t *token, int token_bytes)
{
    if (c->state > NETCODE_CLIENT_DISCONNECTED) netcode_client_disconnect(c, time);
    c->client_index = c->max_clients = 0;
    if (netcode_read_connect_token(token, token_bytes, &c->token) != NETCODE_TOKEN_OK) {
        set_state(c, NETCODE_CLIENT_INVALID_CONNECT_TOKEN);
        return;
    }
    c->server_index = 0;
    c->server = c->token.servers[0];
    c->connect_start_time = time;
    reset_for_server(c, time);
    set_state(c, NETCODE_CLIENT_SENDING_REQUEST);
}

void netcode_client_update(netcode_client_t *c, double time)
{
    if (c->state <= NETCODE_CLIENT_DISCONNECTED) return;
    /* The whole connection process must end before the token expires. */
    if (c->state < NETCODE_CLIENT_CONNECTED &&
        time - c->connect_start_time >= (double)(c->token.expire_timestamp - c->token.create_timestamp)) {
        set_state(c, NETCODE_CLIENT_CONNECT_TOKEN_EXPIRED);
        return;
    }
    if (c->pending_state) {
        int state = c->pending_state;
        c->pending_state = 0;
        fail(c, time, state);
        return;
    }
    int timeout = c->token.timeout_seconds;
    if (timeout > 0 && c->last_receive_time + timeout < time) {
        if (c->state == NETCODE_CLIENT_SENDING_REQUEST) fail(c, time, NETCODE_CLIENT_REQUEST_TIMED_OUT);
        else if (c->state == NETCODE_CLIENT_SENDING_RESPONSE) fail(c, time, NETCODE_CLIENT_RESPONSE_TIMED_OUT);
        else fail(c, time, NETCODE_CLIENT_CONNECTION_TIMED_OUT);
        return;
    }
    if (c->last_send_time + 1.0 / NETCODE_PACKET_SEND_RATE >= time) return;
    switch (c->state) {
    case NETCODE_CLIENT_SENDING_REQUEST: {
        uint8_t packet[NETCODE_REQUEST_PACKET_BYTES];
        int bytes = netcode_write_request_packet(c->token.protocol_id, c->token.expire_timestamp, c->token.nonce,
                                                 c->token.private_data, packet, sizeof packet);
        /* A request takes a sequence number too, as in the reference library. */
        c->sequence++;
        c->last_send_time = time;
        c->counters[NETCODE_CLIENT_COUNTER_SENT]++;
        c->counters[NETCODE_CLIENT_COUNTER_REQUESTS_SENT]++;
        c->config.send(c->config.context, &c->server, packet, bytes);
        break;
    }
    case NETCODE_CLIENT_SENDING_RESPONSE: {
        uint8_t body[8 + NETCODE_CHALLENGE_TOKEN_BYTES];
        for (int i = 0; i < 8; i++) body[i] = (uint8_t)(c->challenge_sequence >> (8 * i));
        memcpy(body + 8, c->challenge_data, NETCODE_CHALLENGE_TOKEN_BYTES);
        c->counters[NETCODE_CLIENT_COUNTER_RESPONSES_SENT]++;
        send_encrypted(c, time, NETCODE_RESPONSE, body, sizeof body);
        break;
    }
    case NETCODE_CLIENT_CONNECTED: {
        uint8_t body[8] = {0}; /* client index and max clients: zero from a client */
        c->counters[NETCODE_CLIENT_COUNTER_KEEP_ALIVES_SENT]++;
        send_encrypted(c, time, NETCODE_KEEP_ALIVE, body, sizeof body);
        break;
    }
    default: break;
    }
}

/* Whether the client takes a packet of this type in this state: an answer to
 * what it sends in that state. */
static int expected(int state, int type)
{
    switch (type) {
    case NETCODE_DENIED: return state == NETCODE_CLIENT_SENDING_REQUEST || state == NETCODE_CLIENT_SENDING_RESPONSE;
    case NETCODE_CHALLENGE: return state == NETCODE_CLIENT_SENDING_REQUEST;
    case NETCODE_KEEP_ALIVE: return state == NETCODE_CLIENT_SENDING_RESPONSE || state == NETCODE_CLIENT_CONNECTED;
    case NETCODE_PAYLOAD:
    case NETCODE_DISCONNECT: return state == NETCODE_CLIENT_CONNECTED;
    default: return 0;
    }
}

int netcode_client_receive_packet(netcode_client_t *c, double time, const netcode_address_t *from,
                                  const uint8_t *data, int bytes)
{
    c->counters[NETCODE_CLIENT_COUNTER_RECEIVED]++;
    if (c->state <= NETCODE_CLIENT_DISCONNECTED) {
        c->counters[NETCODE_CLIENT_COUNTER_DROP_NOT_CONNECTING]++;
        return 0;
    }
    if (!netcode_address_equal(from, &c->server)) {
        c->counters[NETCODE_CLIENT_COUNTER_DROP_FOREIGN]++;
        return 0;
    }
    static netcode_packet_t packet; /* large: not on the stack; the endpoints are single-threaded */
    netcode_read_result_t r = bytes >= 1 && data[0] == 0
                                  ? NETCODE_READ_TYPE_NOT_ALLOWED
                                  : netcode_read_encrypted_packet(data, bytes, c->token.protocol_id,
                                                                  c->token.server_to_client_key, NETCODE_CLIENT_ALLOWED,
                                                                  &c->replay, &packet);
    if (r != NETCODE_READ_OK) {
        c->counters[NETCODE_CLIENT_COUNTER_DROP_READ + r - 1]++;
        return 0;
    }
    c->counters[NETCODE_CLIENT_COUNTER_DECRYPTED]++;
    switch (packet.type) { /* counted taken or not; a payload only when taken */
    case NETCODE_DENIED: c->counters[NETCODE_CLIENT_COUNTER_DENIED_RECEIVED]++; break;
    case NETCODE_CHALLENGE: c->counters[NETCODE_CLIENT_COUNTER_CHALLENGES_RECEIVED]++; break;
    case NETCODE_KEEP_ALIVE: c->counters[NETCODE_CLIENT_COUNTER_KEEP_ALIVES_RECEIVED]++; break;
    case NETCODE_DISCONNECT: c->counters[NETCODE_CLIENT_COUNTER_DISCONNECTS_RECEIVED]++; break;
    default: break;
    }
    if (!expected(c->state, packet.type)) {
        c->counters[NETCODE_CLIENT_COUNTER_DROP_UNEXPECTED]++;
        return 0;
    }
    c->last_receive_time = time;
    switch (packet.type) {
    case NETCODE_DENIED: c->pending_state = NETCODE_CLIENT_CONNECTION_DENIED; break;
    case NETCODE_CHALLENGE:
        c->challenge_sequence = packet.challenge_sequence;
        memcpy(c->challenge_data, packet.challenge_data, NETCODE_CHALLENGE_TOKEN_BYTES);
        set_state(c, NETCODE_CLIENT_SENDING_RESPONSE);
        break;
    case NETCODE_KEEP_ALIVE:
        if (c->state == NETCODE_CLIENT_SENDING_RESPONSE) {
            c->client_index = (int)packet.client_index;
            c->max_clients = (int)packet.max_clients;
            set_state(c, NETCODE_CLIENT_CONNECTED);
        }
        break;
    case NETCODE_PAYLOAD:
        c->counters[NETCODE_CLIENT_COUNTER_PAYLOADS_RECEIVED]++;
        if (c->config.receive) c->config.receive(c->config.context, packet.sequence, packet.payload, packet.payload_bytes);
        break;
    case NETCODE_DISCONNECT: set_state(c, NETCODE_CLIENT_DISCONNECTED); break;
    default: break;
    }
    return 1;
}

int netcode_client_send_payload(netcode_client_t *c, double time, const uint8_t *payload, int bytes)
{
    assert(bytes >= 1 && bytes <= NETCODE_MAX_PAYLOAD_BYTES);
    if (c->state != NETCODE_CLIENT_CONNECTED) return -1;
    c->counters[NETCODE_CLIENT_COUNTER_PAYLOADS_SENT]++;
    send_encrypted(c, time, NETCODE_PAYLOAD, payload, bytes);
    return 0;
}

void netcode_client_disconnect(netcode_client_t *c, double time)
{
    if (c->state <= NETCODE_CLIENT_DISCONNECTED) return;
    /* Connected or connecting: the server may hold an encryption mapping for us. */
    for (int i = 0; i < NETCODE_DISCONNECT_PACKETS; i++) {
        c->counters[NETCODE_CLIENT_COUNTER_DISCONNECTS_SENT]++;
        send_encrypted(c, time, NETCODE_DISCONNECT, NULL, 0);
    }
    set_state(c, NETCODE_CLIENT_DISCONNECTED);
}

int netcode_client_state(const netcode_client_t *c) { return c->state; }
int netcode_client_index(const netcode_client_t *c) { return c->client_index; }
int netcode_client_max_clients(const netcode_client_t *c) { return c->max_clients; }
const netcode_address_t *netcode_client_server_address(const netcode_client_t *c) { return &c->server; }
const uint64_t *netcode_client_counters(const netcode_client_t *c) { return c->counters; }
