/*
 * chunk.h: the reference implementation of the chunk protocol (Glenn
 * Fiedler, "Sending Large Blocks of Data"): the wire codec (on protocol2.h's
 * framing; docs/protocol.md), the sender and the receiver.
 *
 * Pure protocol code: nothing here touches a socket or a clock. Time is passed
 * in (seconds, double), packets go out through a callback. Sockets, clocks and
 * pcap files live in the programs around it.
 *
 * Conventions: caller mistakes are asserts; wire data is always checked, and a
 * bad datagram is dropped and counted, never trusted.
 */
#ifndef CHUNK_H
#define CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "protocol2.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants (docs/protocol.md, "Constants") ---- */

#define CHUNK_DEFAULT_SLICE_SIZE 1024
#define CHUNK_DEFAULT_MAX_SLICES 256
#define CHUNK_DEFAULT_PROTOCOL_ID 0x11223344u
#define CHUNK_PACKET_SLICE 0
#define CHUNK_PACKET_ACK 1
#define CHUNK_DEFAULT_PORT 40000

/* Hard limits on the run-time configurable constants. Memory is sized from
 * the configuration, never from what a packet claims. */
#define CHUNK_MAX_SLICES_LIMIT 1024 /* MaxSlicesPerChunk may be 1..this */
#define CHUNK_SLICE_SIZE_LIMIT 8192 /* SliceSize may be 1..this */
/* Largest datagram any packet can be: header, widest fields, padding, data,
 * end check. Buffers of this size always suffice. */
#define CHUNK_MAX_PACKET_BYTES (CHUNK_SLICE_SIZE_LIMIT + 64)

/* ---- wire codec ---- */

typedef struct chunk_wire_config_t {
    int slice_size;       /* SliceSize, 1..CHUNK_SLICE_SIZE_LIMIT */
    int max_slices;       /* MaxSlicesPerChunk, 1..CHUNK_MAX_SLICES_LIMIT */
    uint32_t protocol_id; /* seeds the CRC; never sent */
} chunk_wire_config_t;

/* Fills in 1024 / 256 / 0x11223344. */
void chunk_wire_default_config(chunk_wire_config_t *config);

/* Wrap-aware 16-bit comparison: 1 when a is more recent than b. */
int chunk_id_newer(uint16_t a, uint16_t b);

typedef struct chunk_slice_packet_t {
    uint16_t chunk_id;
    int slice_id;       /* 0..num_slices-1 */
    int num_slices;     /* 1..max_slices */
    int slice_bytes;    /* slice_size unless last slice, then 1..slice_size */
    const uint8_t *data; /* slice_bytes bytes; on read, points into the datagram */
} chunk_slice_packet_t;

typedef struct chunk_ack_packet_t {
    uint16_t chunk_id;
    int num_slices;                       /* 1..max_slices */
    uint8_t acked[CHUNK_MAX_SLICES_LIMIT]; /* 0 or 1 per slice, slice 0 first */
} chunk_ack_packet_t;

typedef struct chunk_packet_t {
    int type; /* CHUNK_PACKET_SLICE or CHUNK_PACKET_ACK */
    union {
        chunk_slice_packet_t slice;
        chunk_ack_packet_t ack;
    } u;
} chunk_packet_t;

/* Datagram length of a slice packet with these fields (slice_bytes of data;
 * the size field is present only when slice_id == num_slices-1), and of an
 * ack of num_slices slices. Never fail; the fields are not checked. */
int chunk_slice_packet_size(const chunk_wire_config_t *config, int slice_id, int num_slices, int slice_bytes);
int chunk_ack_packet_size(const chunk_wire_config_t *config, int num_slices);

/* Writes a slice packet into buffer. Returns the datagram length in bytes,
 * or -1 when buffer_size is too small. The packet's fields must be valid for
 * the config (asserted: they come from our own code). */
int chunk_write_slice_packet(const chunk_wire_config_t *config, const chunk_slice_packet_t *slice,
                             uint8_t *buffer, int buffer_size);

/* Writes an ack packet. Returns the length, or -1 when buffer_size is too small. */
int chunk_write_ack_packet(const chunk_wire_config_t *config, const chunk_ack_packet_t *ack,
                           uint8_t *buffer, int buffer_size);

/* Why a datagram was rejected. CHUNK_READ_OK (0) means accepted. */
typedef enum chunk_read_result_t {
    CHUNK_READ_OK = 0,
    CHUNK_READ_TRUNCATED,       /* fewer bytes than the fields need */
    CHUNK_READ_BAD_CRC,         /* CRC does not match */
    CHUNK_READ_BAD_PADDING,     /* non-zero alignment bits */
    CHUNK_READ_BAD_END_CHECK,   /* end check not 0x9908ACE2 at its position */
    CHUNK_READ_BAD_VALUE,       /* an int() field outside [min, max] */
    CHUNK_READ_SLICE_ID_RANGE,  /* sliceId >= numSlices */
    CHUNK_READ_TRAILING_BYTES,  /* bytes after the end check */
    CHUNK_READ_RESULT_COUNT
} chunk_read_result_t;

/* Short name for a result, e.g. "bad crc". Never NULL. */
const char *chunk_read_result_name(chunk_read_result_t result);

/* Reads one datagram with every rule of docs/protocol.md, "What a strict reader rejects".
 * Returns CHUNK_READ_OK and fills *packet, or the reason it was rejected
 * (packet contents are then unspecified, except that CHUNK_READ_SLICE_ID_RANGE
 * sets type, slice_id and num_slices, for log lines). A slice's data points
 * into buffer. */
chunk_read_result_t chunk_read_packet(const chunk_wire_config_t *config, const uint8_t *buffer,
                                      int bytes, chunk_packet_t *packet);

/* ---- sender (docs/protocol.md, "Sender") ---- */

/* Called for every datagram an endpoint sends. */
typedef void (*chunk_send_fn)(void *context, const uint8_t *packet, int bytes);

typedef struct chunk_sender_config_t {
    chunk_wire_config_t wire;
    double rate_bytes_per_second; /* bandwidth budget; <= 0 means unlimited */
    double resend_delay;          /* minimum resend delay without RTT, default 0.1 s */
    double rtt;                   /* RTT estimate in seconds; > 0 makes resend delay 1.25*rtt */
    int initial_burst_bytes;      /* chunks up to this size get the initial burst; 0 = off */
    uint16_t first_chunk_id;      /* default 0 */
    int queue_capacity;           /* chunks that may wait in front of the sender, default 16 */
    /* faults, for reproducing broken implementations */
    int fault_ignore_acks;        /* never processes acks: resends acked slices forever */
    int fault_no_resend_delay;    /* the article's program: resend as soon as the cursor comes back */
    chunk_send_fn send;
    void *context;
} chunk_sender_config_t;

void chunk_sender_default_config(chunk_sender_config_t *config);

typedef struct chunk_sender_t chunk_sender_t;

/* Returns NULL only when out of memory. Allocates everything up front, sized
 * from the config. */
chunk_sender_t *chunk_sender_create(const chunk_sender_config_t *config);
void chunk_sender_destroy(chunk_sender_t *sender);

/* Queues a chunk (copied). size must be 1..slice_size*max_slices (asserted).
 * Returns 0, or -1 when the queue is full. */
int chunk_sender_queue_chunk(chunk_sender_t *sender, const uint8_t *data, int size);

/* Sends what the budget allows at time (seconds, never decreasing). */
void chunk_sender_update(chunk_sender_t *sender, double time);

/* Processes one received datagram (an ack, or anything else: dropped and counted). */
void chunk_sender_receive_packet(chunk_sender_t *sender, double time, const uint8_t *packet, int bytes);

/* Sets the RTT estimate (seconds; <= 0 clears it). */
void chunk_sender_set_rtt(chunk_sender_t *sender, double rtt);

/* 1 while a chunk is in flight or queued. */
int chunk_sender_busy(const chunk_sender_t *sender);

/* Chunk id of the chunk in flight, or of the next one when idle. */
uint16_t chunk_sender_chunk_id(const chunk_sender_t *sender);

enum {
    CHUNK_SENDER_COUNTER_CHUNKS_QUEUED,
    CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED,     /* every slice acked */
    CHUNK_SENDER_COUNTER_SLICES_SENT,          /* every slice packet, first sends and resends */
    CHUNK_SENDER_COUNTER_SLICES_RESENT,        /* slice packets that were not a slice's first send */
    CHUNK_SENDER_COUNTER_SLICE_BYTES_SENT,     /* datagram bytes of slice packets */
    CHUNK_SENDER_COUNTER_ACKS_RECEIVED,        /* valid acks for the chunk in flight */
    CHUNK_SENDER_COUNTER_ACKS_IGNORED,         /* valid acks for another chunk id or slice count */
    CHUNK_SENDER_COUNTER_SLICES_ACKED,         /* slices newly marked acked */
    CHUNK_SENDER_COUNTER_PACKETS_INVALID,      /* rejected by the wire format (any reason) */
    CHUNK_SENDER_COUNTER_PACKETS_WRONG_TYPE,   /* valid slice packets sent to a sender */
    CHUNK_SENDER_COUNTER_COUNT
};

/* Array of CHUNK_SENDER_COUNTER_COUNT counters. */
const uint64_t *chunk_sender_counters(const chunk_sender_t *sender);
const char *chunk_sender_counter_name(int counter);

/* ---- receiver (docs/protocol.md, "Receiver") ---- */

typedef struct chunk_receiver_config_t {
    chunk_wire_config_t wire;
    double ack_interval;     /* at most one ack per interval, default 0.1 s */
    uint16_t first_chunk_id; /* default 0 */
    int ready_queue_length;  /* completed chunks held until popped, default 1 */
    chunk_send_fn send;
    void *context;
} chunk_receiver_config_t;

void chunk_receiver_default_config(chunk_receiver_config_t *config);

typedef struct chunk_receiver_t chunk_receiver_t;

chunk_receiver_t *chunk_receiver_create(const chunk_receiver_config_t *config);
void chunk_receiver_destroy(chunk_receiver_t *receiver);

/* Processes one received datagram (a slice, or anything else: dropped and
 * counted). May send the immediate final ack. */
void chunk_receiver_receive_packet(chunk_receiver_t *receiver, double time, const uint8_t *packet, int bytes);

/* Sends the periodic ack when due. */
void chunk_receiver_update(chunk_receiver_t *receiver, double time);

/* Pops the oldest completed chunk into out (out_size must be at least
 * slice_size*max_slices or the chunk's size). Returns its size and sets
 * *chunk_id, or 0 when no chunk is ready. */
int chunk_receiver_pop_chunk(chunk_receiver_t *receiver, uint8_t *out, int out_size, uint16_t *chunk_id);

enum {
    CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED,     /* valid slice packets */
    CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED,     /* new slices copied into the chunk */
    CHUNK_RECEIVER_COUNTER_SLICES_DUPLICATE,    /* already held */
    CHUNK_RECEIVER_COUNTER_SLICES_STALE,        /* chunk already completed */
    CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK,  /* another chunk id (not stale) */
    CHUNK_RECEIVER_COUNTER_SLICES_NUM_MISMATCH, /* numSlices disagrees with the chunk in progress */
    CHUNK_RECEIVER_COUNTER_SLICES_BAD_SIZE,     /* non-last slice not slice_size */
    CHUNK_RECEIVER_COUNTER_SLICES_NOT_READY,    /* discarded while the ready queue is full */
    CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED,
    CHUNK_RECEIVER_COUNTER_CHUNKS_POPPED,
    CHUNK_RECEIVER_COUNTER_ACKS_SENT,
    CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT,
    CHUNK_RECEIVER_COUNTER_PACKETS_INVALID,     /* rejected by the wire format (any reason) */
    CHUNK_RECEIVER_COUNTER_PACKETS_WRONG_TYPE,  /* valid acks sent to a receiver */
    CHUNK_RECEIVER_COUNTER_COUNT
};

const uint64_t *chunk_receiver_counters(const chunk_receiver_t *receiver);
const char *chunk_receiver_counter_name(int counter);

/* Per-reason counts of rejected datagrams, indexed by chunk_read_result_t
 * (CHUNK_READ_RESULT_COUNT entries; [CHUNK_READ_OK] stays 0). */
const uint64_t *chunk_sender_invalid_counters(const chunk_sender_t *sender);
const uint64_t *chunk_receiver_invalid_counters(const chunk_receiver_t *receiver);

/* ---- faults, for the network simulator (netsim.h) ---- */

/* The chunk faults a network can have, per direction (0 "A to B", 1 "B to
 * A"), for reproducing broken paths: they recognise packets with the codec,
 * so a datagram the wire format rejects is never dropped by a fault. */
typedef struct chunk_faults_t {
    chunk_wire_config_t wire; /* to recognise packets */
    int drop_acks[2];         /* drop every ack packet in this direction */
    int drop_slice_id[2];     /* drop every slice packet with this slice id; -1 = off */
} chunk_faults_t;

/* Default wire config, no fault. */
void chunk_faults_default(chunk_faults_t *faults);

/* 1 when any fault is on (the simulator then needs the filter). */
int chunk_faults_any(const chunk_faults_t *faults);

/* The simulator's filter (netsim_filter_fn; context: a chunk_faults_t):
 * returns 1 when a fault in direction dir drops the datagram, else 0. */
int chunk_faults_filter(void *context, int dir, const uint8_t *packet, int bytes);

#ifdef __cplusplus
}
#endif

#endif /* CHUNK_H */
