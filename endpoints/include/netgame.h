/*
 * netgame.h: the reference implementation of the 2008 reliability header
 * ("Reliability, Ordering and Congestion Avoidance over UDP", the code known as
 * netgame), as described in docs/netgame-endpoints.md.
 *
 * Pure protocol code: nothing here touches a socket or a clock. Time is passed
 * in (seconds, double, never decreasing), datagrams go out through a callback
 * with the peer's address as opaque bytes. Sockets, clocks and pcap files live
 * in the programs around it.
 *
 * Conventions: caller mistakes are asserts; wire data is always checked, and a
 * datagram we do not take is dropped and counted by reason, never trusted.
 */
#ifndef NETGAME_H
#define NETGAME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants (docs/netgame-endpoints.md, "Wire format" and "Rules") ---- */

#define NETGAME_HEADER_BYTES 16
#define NETGAME_DEFAULT_PROTOCOL_ID 0x11223344u
#define NETGAME_DEFAULT_MAX_SEQUENCE 0xFFFFFFFFu
#define NETGAME_DEFAULT_SERVER_PORT 30000
#define NETGAME_DEFAULT_CLIENT_PORT 30001
/* The largest datagram our endpoint sends (the original's buffer is the
 * application's choice; the example uses 256 + 16 bytes). */
#define NETGAME_MAX_PACKET_BYTES 8192
#define NETGAME_MAX_PAYLOAD_BYTES (NETGAME_MAX_PACKET_BYTES - NETGAME_HEADER_BYTES)
/* Opaque peer addresses up to this many bytes (a sockaddr_in6 is 28). */
#define NETGAME_MAX_ADDRESS_BYTES 32
#define NETGAME_RTT_MAXIMUM 1.0     /* a packet unacked this long is lost (s) */
#define NETGAME_RTT_THRESHOLD 0.250 /* flow control: above this RTT is bad (s) */
#define NETGAME_GOOD_RATE 30.0      /* packets per second in Good mode */
#define NETGAME_BAD_RATE 10.0       /* packets per second in Bad mode */
#define NETGAME_DEFAULT_TIMEOUT 10.0

/* ---- wire format and sequence arithmetic ---- */

typedef struct netgame_header_t {
    uint32_t protocol_id;
    uint32_t sequence;
    uint32_t ack;
    uint32_t ack_bits; /* bit i set: sequence ack-1-i received */
} netgame_header_t;

/* Writes the 16-byte big-endian header and then payload_bytes of payload
 * (payload may be NULL when payload_bytes is 0). Returns the datagram length,
 * or -1 when buffer_size is too small. */
int netgame_write_packet(const netgame_header_t *header, const uint8_t *payload, int payload_bytes,
                         uint8_t *buffer, int buffer_size);

/* Reads the header of a datagram. Returns 0, or -1 when it is shorter than
 * 16 bytes (the header is then untouched). The payload is bytes 16.. of it. */
int netgame_read_header(const uint8_t *packet, int bytes, netgame_header_t *header);

/* 1 when s1 is more recent than s2 in a sequence space 0..max_sequence: the
 * 2008 rule, (s1 > s2 && s1 - s2 <= max/2) || (s2 > s1 && s2 - s1 > max/2),
 * so that at exactly half the range the numerically smaller one wins. */
int netgame_sequence_more_recent(uint32_t s1, uint32_t s2, uint32_t max_sequence);

/* (a - b) modulo max_sequence + 1. a is a sequence (asserted <= max_sequence);
 * b may be any count (it is reduced modulo the space first). */
uint32_t netgame_sequence_distance(uint32_t a, uint32_t b, uint32_t max_sequence);

/* The ack bit that stands for sequence against ack: 0..31, or -1 when
 * sequence is ack itself, more recent than ack, or more than 32 behind. */
int netgame_bit_index(uint32_t sequence, uint32_t ack, uint32_t max_sequence);

/* 1 when a packet with this ack and ack_bits acknowledges sequence: it is
 * ack itself, or older with its bit set. (The false ack of sequence 0 is the
 * connection's business, not this function's: ack 0 acks sequence 0 here.) */
int netgame_sequence_acked(uint32_t sequence, uint32_t ack, uint32_t ack_bits, uint32_t max_sequence);

/* Ack bits of the article's definition: bit i set when ack-1-i is among the
 * count sequences of received (any order), older than ack. */
uint32_t netgame_ack_bits_from_set(uint32_t ack, const uint32_t *received, int count, uint32_t max_sequence);

/* ---- the connection ---- */

typedef enum netgame_role_t { NETGAME_CLIENT, NETGAME_SERVER } netgame_role_t;

typedef enum netgame_state_t {
    NETGAME_STATE_DISCONNECTED, /* not started, or a client that timed out after connecting */
    NETGAME_STATE_LISTENING,    /* server waiting for its first valid packet */
    NETGAME_STATE_CONNECTING,   /* client sending, nothing valid heard yet */
    NETGAME_STATE_CONNECT_FAIL, /* client that heard nothing within the timeout */
    NETGAME_STATE_CONNECTED,
    NETGAME_STATE_COUNT
} netgame_state_t;

typedef enum netgame_mode_t { NETGAME_MODE_BAD = 0, NETGAME_MODE_GOOD = 1 } netgame_mode_t;

/* Sends one datagram to the peer whose address bytes the connection holds. */
typedef void (*netgame_send_fn)(void *context, const uint8_t *address, int address_bytes, const uint8_t *packet,
                                int bytes);
/* Fills the payload of a packet the connection is about to send at its own
 * rate (up to max_bytes; returns the length, 0..max_bytes). */
typedef int (*netgame_payload_fn)(void *context, uint32_t sequence, uint8_t *payload, int max_bytes);
/* Reports one of our packets acked (rtt: this packet's own sample, seconds)
 * or lost (pending for more than NETGAME_RTT_MAXIMUM). */
typedef void (*netgame_acked_fn)(void *context, uint32_t sequence, double rtt);
typedef void (*netgame_lost_fn)(void *context, uint32_t sequence);
/* Hands a received payload to the application (points into the datagram). */
typedef void (*netgame_receive_fn)(void *context, uint32_t sequence, const uint8_t *payload, int bytes);

typedef struct netgame_config_t {
    netgame_role_t role;        /* default NETGAME_CLIENT */
    uint32_t protocol_id;       /* default 0x11223344 */
    uint32_t max_sequence;      /* default 0xFFFFFFFF; at least 33 is advised (the wrap test uses 31) */
    uint32_t first_sequence;    /* our first sequence, default 0 (near 2^32 to test the wrap) */
    double timeout;             /* seconds without a valid packet, default 10 */
    double rtt_maximum;         /* a packet unacked this long is lost, default 1 */
    int flow_control;           /* update() sends at 30/10 pps by mode; default 1 */
    int payload_bytes;          /* payload of update()'s packets without payload_fn, default 256 zero bytes */
    int pending_capacity;       /* packets awaiting an ack at most; default 1024 (beyond: the oldest is lost) */
    /* faults, for reproducing broken peers */
    double fault_stop_acking_at; /* >= 0: from this time received packets no longer move ack or ack bits */
    netgame_send_fn send;        /* required */
    netgame_payload_fn payload;  /* optional */
    netgame_acked_fn acked;      /* optional */
    netgame_lost_fn lost;        /* optional */
    netgame_receive_fn receive;  /* optional */
    void *context;
} netgame_config_t;

/* Fills in the defaults above (client, no callbacks). */
void netgame_default_config(netgame_config_t *config);

typedef struct netgame_connection_t netgame_connection_t;

/* Returns NULL only when out of memory. */
netgame_connection_t *netgame_connection_create(const netgame_config_t *config);
void netgame_connection_destroy(netgame_connection_t *connection);

/* Client: starts connecting to the peer at address (opaque bytes, 1..
 * NETGAME_MAX_ADDRESS_BYTES). Server: starts listening (address NULL). Resets
 * the reliability state, our sequence (to first_sequence), the flow control
 * and the timeout clock to time. (A server's later connections, after a
 * timeout, keep our sequence going.) */
void netgame_connection_start(netgame_connection_t *connection, double time, const uint8_t *address,
                              int address_bytes);

/* Advances to time: timeout, lost packets, flow control, and (flow_control
 * set) the packets due at the mode's rate. */
void netgame_connection_update(netgame_connection_t *connection, double time);

/* Sends one packet now with this payload (0..NETGAME_MAX_PAYLOAD_BYTES; an
 * empty payload makes a 16-byte datagram, which the original receiver
 * ignores). Returns the sequence it was sent with, or -1 when there is no peer
 * to send to (listening, disconnected, failed). */
int64_t netgame_connection_send_packet(netgame_connection_t *connection, double time, const uint8_t *payload,
                                       int bytes);

/* Processes one received datagram from address. Returns 1 when it was taken
 * (connection, acks, payload), 0 when dropped (counted by reason). */
int netgame_connection_receive_packet(netgame_connection_t *connection, double time, const uint8_t *address,
                                      int address_bytes, const uint8_t *packet, int bytes);

netgame_state_t netgame_connection_state(const netgame_connection_t *connection);
const char *netgame_state_name(netgame_state_t state);
int netgame_connection_connected(const netgame_connection_t *connection);
/* The peer's address bytes (a client's target, a server's first valid
 * sender), or NULL when there is none; *address_bytes set. */
const uint8_t *netgame_connection_peer(const netgame_connection_t *connection, int *address_bytes);

/* Header values the next packet would carry. */
uint32_t netgame_connection_local_sequence(const netgame_connection_t *connection);
uint32_t netgame_connection_remote_sequence(const netgame_connection_t *connection);
uint32_t netgame_connection_ack_bits(const netgame_connection_t *connection);

/* Smoothed RTT in seconds (starts at 0, moves 10% toward each sample). */
double netgame_connection_rtt(const netgame_connection_t *connection);
netgame_mode_t netgame_connection_mode(const netgame_connection_t *connection);
const char *netgame_mode_name(netgame_mode_t mode);
double netgame_connection_penalty_time(const netgame_connection_t *connection);

enum {
    NETGAME_COUNTER_PACKETS_SENT,
    NETGAME_COUNTER_BYTES_SENT,          /* datagram bytes */
    NETGAME_COUNTER_PACKETS_RECEIVED,    /* datagrams taken */
    NETGAME_COUNTER_BYTES_RECEIVED,      /* datagram bytes of those */
    NETGAME_COUNTER_PACKETS_ACKED,       /* ours, acknowledged by the peer */
    NETGAME_COUNTER_PACKETS_LOST,        /* ours, unacked after rtt_maximum (or pushed out of a full queue, or pending at a timeout) */
    NETGAME_COUNTER_DROP_SHORT,          /* datagram under 16 bytes */
    NETGAME_COUNTER_DROP_PROTOCOL_ID,    /* another protocol id */
    NETGAME_COUNTER_DROP_FOREIGN,        /* from an address other than the peer's */
    NETGAME_COUNTER_DROP_NOT_STARTED,    /* disconnected or failed: nobody to talk to */
    NETGAME_COUNTER_DROP_DUPLICATE,      /* a sequence already received */
    NETGAME_COUNTER_DROP_OUT_OF_RANGE,   /* sequence or ack above max_sequence */
    NETGAME_COUNTER_RECEIVED_OLD,        /* taken, but too far behind to ack or to check for duplicates */
    NETGAME_COUNTER_RECEIVED_HEADER_ONLY,/* taken 16-byte datagrams (the original ignores them) */
    NETGAME_COUNTER_FALSE_ACK_ZERO,      /* ack 0 with no bits before the peer showed it received anything: not an ack */
    NETGAME_COUNTER_CONNECTS,            /* became connected */
    NETGAME_COUNTER_TIMEOUTS,            /* connection dropped (or connect failed) after the timeout */
    NETGAME_COUNTER_MODE_TO_GOOD,
    NETGAME_COUNTER_MODE_TO_BAD,
    NETGAME_COUNTER_PENALTY_DOUBLED,
    NETGAME_COUNTER_PENALTY_HALVED,
    NETGAME_COUNTER_COUNT
};

/* Array of NETGAME_COUNTER_COUNT counters since create. */
const uint64_t *netgame_connection_counters(const netgame_connection_t *connection);
const char *netgame_counter_name(int counter);

#ifdef __cplusplus
}
#endif

#endif /* NETGAME_H */
