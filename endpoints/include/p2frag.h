/*
 * p2frag.h: the reference implementation of packet fragmentation and
 * reassembly (Glenn Fiedler, "Packet Fragmentation and Reassembly"), on the
 * protocol2 framing; the wire format and the receive rules are in
 * docs/p2frag-endpoints.md.
 *
 * Pure protocol code, like chunk.h: nothing here touches a socket or a
 * clock. Time is passed in, datagrams go out through a callback, reassembled
 * packets come out through another. Caller mistakes are asserts; wire data
 * is always checked, and a datagram the rules reject is dropped and counted
 * by reason.
 */
#ifndef P2FRAG_H
#define P2FRAG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants ---- */

#define P2FRAG_DEFAULT_PROTOCOL_ID 0x55667788u
#define P2FRAG_FRAGMENT_SIZE 1024     /* data bytes of every fragment but the last */
#define P2FRAG_MAX_FRAGMENTS 255      /* numFragments is 8 bits and 0 is malformed */
#define P2FRAG_MAX_PACKET_BYTES (P2FRAG_MAX_FRAGMENTS * P2FRAG_FRAGMENT_SIZE) /* 261 120 */
#define P2FRAG_MAX_REGULAR_BYTES 1024 /* a regular packet sent whole is at most this */
#define P2FRAG_HEADER_BYTES 9         /* crc, sequence, type + ids + padding */
#define P2FRAG_MAX_DATAGRAM_BYTES (P2FRAG_HEADER_BYTES + P2FRAG_FRAGMENT_SIZE) /* 1033 */
#define P2FRAG_SLOTS 256              /* packets in progress, one per sequence % 256 */
#define P2FRAG_WINDOW 256             /* a sequence more than this behind the newest is too old */

/* Packet types: 0 is a fragment; 1..3 are the example's test packets. */
#define P2FRAG_PACKET_FRAGMENT 0
#define P2FRAG_PACKET_A 1
#define P2FRAG_PACKET_B 2
#define P2FRAG_PACKET_C 3
#define P2FRAG_DEFAULT_NUM_PACKET_TYPES 4
#define P2FRAG_MAX_B_ITEMS 16384      /* TestPacketB's int(0, 16384) numItems */

/* ---- wire codec ---- */

typedef struct p2frag_wire_config_t {
    uint32_t protocol_id; /* seeds the CRC; never sent */
    int num_packet_types; /* type field is bits_required(0, n-1) wide; 4..256 */
} p2frag_wire_config_t;

/* Fills in 0x55667788 and 4 packet types (a 2-bit type). */
void p2frag_wire_default_config(p2frag_wire_config_t *config);

typedef struct p2frag_fragment_t {
    uint16_t sequence;
    int fragment_id;     /* 0..num_fragments-1 */
    int num_fragments;   /* 1..255 */
    int fragment_bytes;  /* 1024 unless last, then 1..1024 */
    const uint8_t *data; /* on read, points into the datagram */
} p2frag_fragment_t;

/* The example's test packets. Floats travel as their raw IEEE-754 bits. */
typedef struct p2frag_test_packet_t {
    uint16_t sequence;
    int type; /* P2FRAG_PACKET_A, _B or _C */
    int a, b, c;           /* A: -10..10, -20..20, -30..30 */
    int num_items;         /* B: 0..16384 */
    int8_t items[P2FRAG_MAX_B_ITEMS]; /* B: -100..100 each */
    uint32_t position[3];  /* C: x, y, z float bits */
    int at_rest;           /* C: 0 or 1 */
    uint32_t velocity[3];  /* C: only on the wire when !at_rest (else 0 on read) */
} p2frag_test_packet_t;

/* Why a datagram was rejected. P2FRAG_READ_OK (0) means accepted. */
typedef enum p2frag_read_result_t {
    P2FRAG_READ_OK = 0,
    P2FRAG_READ_TRUNCATED,          /* fewer bytes than the fields need */
    P2FRAG_READ_BAD_CRC,            /* CRC does not match the protocol id */
    P2FRAG_READ_BAD_PADDING,        /* non-zero alignment bits */
    P2FRAG_READ_NUM_FRAGMENTS_ZERO, /* numFragments 0 (256 cannot be represented) */
    P2FRAG_READ_FRAGMENT_ID_RANGE,  /* fragmentId >= numFragments */
    P2FRAG_READ_FRAGMENT_SIZE,      /* fragment data not 1..1024 bytes */
    P2FRAG_READ_SHORT_FRAGMENT,     /* a fragment but the last without 1024 bytes */
    P2FRAG_READ_REGULAR_TOO_LARGE,  /* a regular datagram over 1024 bytes */
    P2FRAG_READ_UNKNOWN_TYPE,       /* a type with no body reader (not A, B or C) */
    P2FRAG_READ_BAD_VALUE,          /* an int() field outside [min, max] */
    P2FRAG_READ_BAD_END_CHECK,      /* end check not 0x9908ACE2 at its position */
    P2FRAG_READ_TRAILING_BYTES,     /* bytes after the end check */
    P2FRAG_READ_RESULT_COUNT
} p2frag_read_result_t;

/* Short name, e.g. "num fragments zero". Never NULL. */
const char *p2frag_read_result_name(p2frag_read_result_t result);

/* What one datagram is. */
typedef struct p2frag_packet_t {
    uint16_t sequence;
    int type;                  /* P2FRAG_PACKET_FRAGMENT or a regular type */
    p2frag_fragment_t fragment;  /* type == P2FRAG_PACKET_FRAGMENT */
    p2frag_test_packet_t *regular; /* regular types: filled in when not NULL */
} p2frag_packet_t;

/* Datagram length of a fragment with fragment_bytes of data (9 + bytes
 * with 4 packet types). */
int p2frag_fragment_packet_size(const p2frag_wire_config_t *config, int fragment_bytes);

/* Length of a test packet as written (13 for A, 13 + num_items for B,
 * 23 or 35 for C). */
int p2frag_test_packet_size(const p2frag_wire_config_t *config, const p2frag_test_packet_t *packet);

/* Writes one fragment datagram. Returns its length, or -1 when buffer_size
 * is too small. Fields must be valid (asserted). */
int p2frag_write_fragment(const p2frag_wire_config_t *config, const p2frag_fragment_t *fragment, uint8_t *buffer,
                        int buffer_size);

/* Writes a test packet (any size: the caller decides whether it is sent
 * whole or fragmented). Returns its length, or -1 when buffer_size is too
 * small. Fields must be in range (asserted). */
int p2frag_write_test_packet(const p2frag_wire_config_t *config, const p2frag_test_packet_t *packet, uint8_t *buffer,
                           int buffer_size);

/* Reads one datagram with every rule of the spec that needs no receiver
 * state: CRC, padding, truncation, the fragment checks, the 1024-byte limit
 * of a regular datagram, and for test packets the value ranges, end check
 * and trailing bytes. Fills *packet (packet->regular, when not NULL, gets
 * a regular packet's fields). A fragment's data points into buffer. On a
 * fragment-check failure the header fields are filled in, for log lines. */
p2frag_read_result_t p2frag_read_packet(const p2frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                    p2frag_packet_t *packet);

/* Reads the bytes fragments reassembled to as a test packet: as
 * p2frag_read_packet for a regular datagram, without the 1024-byte limit.
 * A fragment type here is P2FRAG_READ_UNKNOWN_TYPE. */
p2frag_read_result_t p2frag_read_reassembled(const p2frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                         p2frag_test_packet_t *packet);

/* Wrap-aware 16-bit "a is more recent than b" (the chunk ids' rule). */
int p2frag_sequence_newer(uint16_t a, uint16_t b);

/* Number of fragments a packet of bytes bytes is split into (1..255). */
int p2frag_fragment_count(int bytes);

/* ---- sender ---- */

typedef void (*p2frag_send_fn)(void *context, const uint8_t *datagram, int bytes);

typedef struct p2frag_sender_config_t {
    p2frag_wire_config_t wire;
    double rate_bytes_per_second; /* datagram bytes per second; <= 0 unlimited */
    double max_burst_bytes;       /* budget banked at most; <= 0 (default): one full datagram,
                                   * 1033 bytes. A program whose updates come further apart than
                                   * one datagram's time at the rate raises it. */
    int interleave;               /* fragments of up to this many packets alternate, default 1 */
    int queue_capacity;           /* packets waiting in the sender, default 64 */
    uint16_t first_sequence;      /* default 0 */
    p2frag_send_fn send;
    void *context;
} p2frag_sender_config_t;

void p2frag_sender_default_config(p2frag_sender_config_t *config);

typedef struct p2frag_sender_t p2frag_sender_t;

/* NULL only when out of memory. */
p2frag_sender_t *p2frag_sender_create(const p2frag_sender_config_t *config);
void p2frag_sender_destroy(p2frag_sender_t *sender);

/* Queues a test packet under the next sequence (packet->sequence is
 * ignored): sent whole when it is at most 1024 bytes written, as fragments
 * otherwise (then at most 261 120 bytes, asserted). Returns the sequence,
 * or -1 when the queue is full. */
int p2frag_sender_queue_test_packet(p2frag_sender_t *sender, const p2frag_test_packet_t *packet);

/* Queues bytes (1..261 120, copied) as fragments whatever their size, under
 * the next sequence. Returns the sequence, or -1 when the queue is full. */
int p2frag_sender_queue_raw(p2frag_sender_t *sender, const uint8_t *data, int bytes);

/* As p2frag_sender_queue_raw, under the given sequence, leaving the next
 * sequence alone (to send a packet from outside the receive window). */
int p2frag_sender_queue_raw_at(p2frag_sender_t *sender, uint16_t sequence, const uint8_t *data, int bytes);

/* The sequence the next queued packet gets. */
uint16_t p2frag_sender_next_sequence(const p2frag_sender_t *sender);

/* Sends what the budget allows at time (seconds, never decreasing):
 * datagrams of the first `interleave` queued packets in turn. */
void p2frag_sender_update(p2frag_sender_t *sender, double time);

/* Packets in the queue, the ones being sent included. */
int p2frag_sender_queued(const p2frag_sender_t *sender);

/* 1 while a queued packet has datagrams left to send. */
int p2frag_sender_busy(const p2frag_sender_t *sender);

enum {
    P2FRAG_SENDER_COUNTER_PACKETS_QUEUED,
    P2FRAG_SENDER_COUNTER_PACKETS_SENT,       /* every datagram of the packet sent */
    P2FRAG_SENDER_COUNTER_PACKETS_FRAGMENTED, /* of those, sent as fragments */
    P2FRAG_SENDER_COUNTER_DATAGRAMS_SENT,
    P2FRAG_SENDER_COUNTER_FRAGMENTS_SENT,
    P2FRAG_SENDER_COUNTER_BYTES_SENT,         /* datagram bytes */
    P2FRAG_SENDER_COUNTER_QUEUE_FULL,         /* packets refused */
    P2FRAG_SENDER_COUNTER_COUNT
};
const uint64_t *p2frag_sender_counters(const p2frag_sender_t *sender);
const char *p2frag_sender_counter_name(int counter);

/* ---- receiver ---- */

/* Called once per packet delivered: a regular datagram, or the bytes its
 * fragments reassembled to (fragmented = 1). */
typedef void (*p2frag_deliver_fn)(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes,
                                int fragmented);

typedef struct p2frag_receiver_config_t {
    p2frag_wire_config_t wire;
    int max_fragments; /* fragments claiming a larger count are dropped; 1..255, default 255 */
    p2frag_deliver_fn deliver;
    void *context;
} p2frag_receiver_config_t;

void p2frag_receiver_default_config(p2frag_receiver_config_t *config);

typedef struct p2frag_receiver_t p2frag_receiver_t;

p2frag_receiver_t *p2frag_receiver_create(const p2frag_receiver_config_t *config);
void p2frag_receiver_destroy(p2frag_receiver_t *receiver);

/* What the receiver did with one datagram (also counted). */
typedef enum p2frag_verdict_t {
    P2FRAG_VERDICT_INVALID = 0,   /* rejected by the codec: see p2frag_receiver_invalid_counters */
    P2FRAG_VERDICT_TOO_OLD,       /* more than 256 behind the newest sequence seen */
    P2FRAG_VERDICT_SUPERSEDED,    /* its slot holds a newer sequence (exactly 256 ahead) */
    P2FRAG_VERDICT_TOO_MANY,      /* numFragments above max_fragments */
    P2FRAG_VERDICT_COUNT_CONFLICT,/* numFragments differs from earlier fragments of the sequence */
    P2FRAG_VERDICT_DUPLICATE,     /* fragment already held, or packet already delivered */
    P2FRAG_VERDICT_ACCEPTED,      /* fragment stored, packet not complete yet */
    P2FRAG_VERDICT_DELIVERED,     /* this datagram completed (or was) a packet, delivered */
    P2FRAG_VERDICT_NO_MEMORY,     /* a reassembly buffer could not be allocated */
    P2FRAG_VERDICT_COUNT
} p2frag_verdict_t;

const char *p2frag_verdict_name(p2frag_verdict_t verdict);

/* Processes one received datagram at time; delivers through the callback
 * (before returning) when it completes a packet. */
p2frag_verdict_t p2frag_receiver_receive_packet(p2frag_receiver_t *receiver, double time, const uint8_t *datagram,
                                            int bytes);

enum {
    P2FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED,
    P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID,    /* by reason: p2frag_receiver_invalid_counters */
    P2FRAG_RECEIVER_COUNTER_TOO_OLD,
    P2FRAG_RECEIVER_COUNTER_SUPERSEDED,
    P2FRAG_RECEIVER_COUNTER_FRAGMENTS_TOO_MANY,
    P2FRAG_RECEIVER_COUNTER_FRAGMENTS_COUNT_CONFLICT,
    P2FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE,  /* already held */
    P2FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE,       /* packet already delivered */
    P2FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED,
    P2FRAG_RECEIVER_COUNTER_REGULAR_DUPLICATE,    /* regular datagram of a sequence already delivered */
    P2FRAG_RECEIVER_COUNTER_NO_MEMORY,
    P2FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED,    /* regular and reassembled */
    P2FRAG_RECEIVER_COUNTER_PACKETS_REASSEMBLED,  /* of those, from fragments */
    P2FRAG_RECEIVER_COUNTER_PACKETS_EVICTED,      /* unfinished, pushed out of their slot by a newer sequence: lost */
    P2FRAG_RECEIVER_COUNTER_COUNT
};
const uint64_t *p2frag_receiver_counters(const p2frag_receiver_t *receiver);
const char *p2frag_receiver_counter_name(int counter);
/* Per-reason counts of invalid datagrams, indexed by p2frag_read_result_t. */
const uint64_t *p2frag_receiver_invalid_counters(const p2frag_receiver_t *receiver);

/* Packets in progress (slots holding an unfinished packet). */
int p2frag_receiver_in_progress(const p2frag_receiver_t *receiver);

#ifdef __cplusplus
}
#endif

#endif /* P2FRAG_H */
