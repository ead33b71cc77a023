/*
 * frag.h: the reference implementation of packet fragmentation and
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
#ifndef FRAG_H
#define FRAG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants ---- */

#define FRAG_DEFAULT_PROTOCOL_ID 0x55667788u
#define FRAG_FRAGMENT_SIZE 1024     /* data bytes of every fragment but the last */
#define FRAG_MAX_FRAGMENTS 255      /* numFragments is 8 bits and 0 is malformed */
#define FRAG_MAX_PACKET_BYTES (FRAG_MAX_FRAGMENTS * FRAG_FRAGMENT_SIZE) /* 261 120 */
#define FRAG_MAX_REGULAR_BYTES 1024 /* a regular packet sent whole is at most this */
#define FRAG_HEADER_BYTES 9         /* crc, sequence, type + ids + padding */
#define FRAG_MAX_DATAGRAM_BYTES (FRAG_HEADER_BYTES + FRAG_FRAGMENT_SIZE) /* 1033 */
#define FRAG_SLOTS 256              /* packets in progress, one per sequence % 256 */
#define FRAG_WINDOW 256             /* a sequence more than this behind the newest is too old */

/* Packet types: 0 is a fragment; 1..3 are the example's test packets. */
#define FRAG_PACKET_FRAGMENT 0
#define FRAG_PACKET_A 1
#define FRAG_PACKET_B 2
#define FRAG_PACKET_C 3
#define FRAG_DEFAULT_NUM_PACKET_TYPES 4
#define FRAG_MAX_B_ITEMS 16384      /* TestPacketB's int(0, 16384) numItems */

/* ---- wire codec ---- */

typedef struct frag_wire_config_t {
    uint32_t protocol_id; /* seeds the CRC; never sent */
    int num_packet_types; /* type field is bits_required(0, n-1) wide; 4..256 */
} frag_wire_config_t;

/* Fills in 0x55667788 and 4 packet types (a 2-bit type). */
void frag_wire_default_config(frag_wire_config_t *config);

typedef struct frag_fragment_t {
    uint16_t sequence;
    int fragment_id;     /* 0..num_fragments-1 */
    int num_fragments;   /* 1..255 */
    int fragment_bytes;  /* 1024 unless last, then 1..1024 */
    const uint8_t *data; /* on read, points into the datagram */
} frag_fragment_t;

/* The example's test packets. Floats travel as their raw IEEE-754 bits. */
typedef struct frag_test_packet_t {
    uint16_t sequence;
    int type; /* FRAG_PACKET_A, _B or _C */
    int a, b, c;           /* A: -10..10, -20..20, -30..30 */
    int num_items;         /* B: 0..16384 */
    int8_t items[FRAG_MAX_B_ITEMS]; /* B: -100..100 each */
    uint32_t position[3];  /* C: x, y, z float bits */
    int at_rest;           /* C: 0 or 1 */
    uint32_t velocity[3];  /* C: only on the wire when !at_rest (else 0 on read) */
} frag_test_packet_t;

/* Why a datagram was rejected. FRAG_READ_OK (0) means accepted. */
typedef enum frag_read_result_t {
    FRAG_READ_OK = 0,
    FRAG_READ_TRUNCATED,          /* fewer bytes than the fields need */
    FRAG_READ_BAD_CRC,            /* CRC does not match the protocol id */
    FRAG_READ_BAD_PADDING,        /* non-zero alignment bits */
    FRAG_READ_NUM_FRAGMENTS_ZERO, /* numFragments 0 (256 cannot be represented) */
    FRAG_READ_FRAGMENT_ID_RANGE,  /* fragmentId >= numFragments */
    FRAG_READ_FRAGMENT_SIZE,      /* fragment data not 1..1024 bytes */
    FRAG_READ_SHORT_FRAGMENT,     /* a fragment but the last without 1024 bytes */
    FRAG_READ_REGULAR_TOO_LARGE,  /* a regular datagram over 1024 bytes */
    FRAG_READ_UNKNOWN_TYPE,       /* a type with no body reader (not A, B or C) */
    FRAG_READ_BAD_VALUE,          /* an int() field outside [min, max] */
    FRAG_READ_BAD_END_CHECK,      /* end check not 0x9908ACE2 at its position */
    FRAG_READ_TRAILING_BYTES,     /* bytes after the end check */
    FRAG_READ_RESULT_COUNT
} frag_read_result_t;

/* Short name, e.g. "num fragments zero". Never NULL. */
const char *frag_read_result_name(frag_read_result_t result);

/* What one datagram is. */
typedef struct frag_packet_t {
    uint16_t sequence;
    int type;                  /* FRAG_PACKET_FRAGMENT or a regular type */
    frag_fragment_t fragment;  /* type == FRAG_PACKET_FRAGMENT */
    frag_test_packet_t *regular; /* regular types: filled in when not NULL */
} frag_packet_t;

/* Datagram length of a fragment with fragment_bytes of data (9 + bytes
 * with 4 packet types). */
int frag_fragment_packet_size(const frag_wire_config_t *config, int fragment_bytes);

/* Length of a test packet as written (13 for A, 13 + num_items for B,
 * 23 or 35 for C). */
int frag_test_packet_size(const frag_wire_config_t *config, const frag_test_packet_t *packet);

/* Writes one fragment datagram. Returns its length, or -1 when buffer_size
 * is too small. Fields must be valid (asserted). */
int frag_write_fragment(const frag_wire_config_t *config, const frag_fragment_t *fragment, uint8_t *buffer,
                        int buffer_size);

/* Writes a test packet (any size: the caller decides whether it is sent
 * whole or fragmented). Returns its length, or -1 when buffer_size is too
 * small. Fields must be in range (asserted). */
int frag_write_test_packet(const frag_wire_config_t *config, const frag_test_packet_t *packet, uint8_t *buffer,
                           int buffer_size);

/* Reads one datagram with every rule of the spec that needs no receiver
 * state: CRC, padding, truncation, the fragment checks, the 1024-byte limit
 * of a regular datagram, and for test packets the value ranges, end check
 * and trailing bytes. Fills *packet (packet->regular, when not NULL, gets
 * a regular packet's fields). A fragment's data points into buffer. On a
 * fragment-check failure the header fields are filled in, for log lines. */
frag_read_result_t frag_read_packet(const frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                    frag_packet_t *packet);

/* Reads the bytes fragments reassembled to as a test packet: as
 * frag_read_packet for a regular datagram, without the 1024-byte limit.
 * A fragment type here is FRAG_READ_UNKNOWN_TYPE. */
frag_read_result_t frag_read_reassembled(const frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                         frag_test_packet_t *packet);

/* Wrap-aware 16-bit "a is more recent than b" (the chunk ids' rule). */
int frag_sequence_newer(uint16_t a, uint16_t b);

/* Number of fragments a packet of bytes bytes is split into (1..255). */
int frag_fragment_count(int bytes);

/* ---- sender ---- */

typedef void (*frag_send_fn)(void *context, const uint8_t *datagram, int bytes);

typedef struct frag_sender_config_t {
    frag_wire_config_t wire;
    double rate_bytes_per_second; /* datagram bytes per second; <= 0 unlimited */
    double max_burst_bytes;       /* budget banked at most; <= 0 (default): one full datagram,
                                   * 1033 bytes. A program whose updates come further apart than
                                   * one datagram's time at the rate raises it. */
    int interleave;               /* fragments of up to this many packets alternate, default 1 */
    int queue_capacity;           /* packets waiting in the sender, default 64 */
    uint16_t first_sequence;      /* default 0 */
    frag_send_fn send;
    void *context;
} frag_sender_config_t;

void frag_sender_default_config(frag_sender_config_t *config);

typedef struct frag_sender_t frag_sender_t;

/* NULL only when out of memory. */
frag_sender_t *frag_sender_create(const frag_sender_config_t *config);
void frag_sender_destroy(frag_sender_t *sender);

/* Queues a test packet under the next sequence (packet->sequence is
 * ignored): sent whole when it is at most 1024 bytes written, as fragments
 * otherwise (then at most 261 120 bytes, asserted). Returns the sequence,
 * or -1 when the queue is full. */
int frag_sender_queue_test_packet(frag_sender_t *sender, const frag_test_packet_t *packet);

/* Queues bytes (1..261 120, copied) as fragments whatever their size, under
 * the next sequence. Returns the sequence, or -1 when the queue is full. */
int frag_sender_queue_raw(frag_sender_t *sender, const uint8_t *data, int bytes);

/* As frag_sender_queue_raw, under the given sequence, leaving the next
 * sequence alone (to send a packet from outside the receive window). */
int frag_sender_queue_raw_at(frag_sender_t *sender, uint16_t sequence, const uint8_t *data, int bytes);

/* The sequence the next queued packet gets. */
uint16_t frag_sender_next_sequence(const frag_sender_t *sender);

/* Sends what the budget allows at time (seconds, never decreasing):
 * datagrams of the first `interleave` queued packets in turn. */
void frag_sender_update(frag_sender_t *sender, double time);

/* Packets in the queue, the ones being sent included. */
int frag_sender_queued(const frag_sender_t *sender);

/* 1 while a queued packet has datagrams left to send. */
int frag_sender_busy(const frag_sender_t *sender);

enum {
    FRAG_SENDER_COUNTER_PACKETS_QUEUED,
    FRAG_SENDER_COUNTER_PACKETS_SENT,       /* every datagram of the packet sent */
    FRAG_SENDER_COUNTER_PACKETS_FRAGMENTED, /* of those, sent as fragments */
    FRAG_SENDER_COUNTER_DATAGRAMS_SENT,
    FRAG_SENDER_COUNTER_FRAGMENTS_SENT,
    FRAG_SENDER_COUNTER_BYTES_SENT,         /* datagram bytes */
    FRAG_SENDER_COUNTER_QUEUE_FULL,         /* packets refused */
    FRAG_SENDER_COUNTER_COUNT
};
const uint64_t *frag_sender_counters(const frag_sender_t *sender);
const char *frag_sender_counter_name(int counter);

/* ---- receiver ---- */

/* Called once per packet delivered: a regular datagram, or the bytes its
 * fragments reassembled to (fragmented = 1). */
typedef void (*frag_deliver_fn)(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes,
                                int fragmented);

typedef struct frag_receiver_config_t {
    frag_wire_config_t wire;
    int max_fragments; /* fragments claiming a larger count are dropped; 1..255, default 255 */
    frag_deliver_fn deliver;
    void *context;
} frag_receiver_config_t;

void frag_receiver_default_config(frag_receiver_config_t *config);

typedef struct frag_receiver_t frag_receiver_t;

frag_receiver_t *frag_receiver_create(const frag_receiver_config_t *config);
void frag_receiver_destroy(frag_receiver_t *receiver);

/* What the receiver did with one datagram (also counted). */
typedef enum frag_verdict_t {
    FRAG_VERDICT_INVALID = 0,   /* rejected by the codec: see frag_receiver_invalid_counters */
    FRAG_VERDICT_TOO_OLD,       /* more than 256 behind the newest sequence seen */
    FRAG_VERDICT_SUPERSEDED,    /* its slot holds a newer sequence (exactly 256 ahead) */
    FRAG_VERDICT_TOO_MANY,      /* numFragments above max_fragments */
    FRAG_VERDICT_COUNT_CONFLICT,/* numFragments differs from earlier fragments of the sequence */
    FRAG_VERDICT_DUPLICATE,     /* fragment already held, or packet already delivered */
    FRAG_VERDICT_ACCEPTED,      /* fragment stored, packet not complete yet */
    FRAG_VERDICT_DELIVERED,     /* this datagram completed (or was) a packet, delivered */
    FRAG_VERDICT_NO_MEMORY,     /* a reassembly buffer could not be allocated */
    FRAG_VERDICT_COUNT
} frag_verdict_t;

const char *frag_verdict_name(frag_verdict_t verdict);

/* Processes one received datagram at time; delivers through the callback
 * (before returning) when it completes a packet. */
frag_verdict_t frag_receiver_receive_packet(frag_receiver_t *receiver, double time, const uint8_t *datagram,
                                            int bytes);

enum {
    FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED,
    FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID,    /* by reason: frag_receiver_invalid_counters */
    FRAG_RECEIVER_COUNTER_TOO_OLD,
    FRAG_RECEIVER_COUNTER_SUPERSEDED,
    FRAG_RECEIVER_COUNTER_FRAGMENTS_TOO_MANY,
    FRAG_RECEIVER_COUNTER_FRAGMENTS_COUNT_CONFLICT,
    FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE,  /* already held */
    FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE,       /* packet already delivered */
    FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED,
    FRAG_RECEIVER_COUNTER_REGULAR_DUPLICATE,    /* regular datagram of a sequence already delivered */
    FRAG_RECEIVER_COUNTER_NO_MEMORY,
    FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED,    /* regular and reassembled */
    FRAG_RECEIVER_COUNTER_PACKETS_REASSEMBLED,  /* of those, from fragments */
    FRAG_RECEIVER_COUNTER_PACKETS_EVICTED,      /* unfinished, pushed out of their slot by a newer sequence: lost */
    FRAG_RECEIVER_COUNTER_COUNT
};
const uint64_t *frag_receiver_counters(const frag_receiver_t *receiver);
const char *frag_receiver_counter_name(int counter);
/* Per-reason counts of invalid datagrams, indexed by frag_read_result_t. */
const uint64_t *frag_receiver_invalid_counters(const frag_receiver_t *receiver);

/* Packets in progress (slots holding an unfinished packet). */
int frag_receiver_in_progress(const frag_receiver_t *receiver);

#ifdef __cplusplus
}
#endif

#endif /* FRAG_H */
