/*
 * yojimbo.h: an independent implementation of yojimbo's connection layer
 * (channels, messages, blocks sent as fragments) as it rides in the payload of
 * a reliable packet inside a netcode connection; described in
 * docs/yojimbo-endpoints.md.
 *
 * Pure protocol code: time is passed in (seconds, never decreasing), packets
 * leave as bytes the caller sends. The bit packing follows serialize's order:
 * values go in least significant bit first, 64-bit words little-endian, so the
 * bytes come out in stream order.
 *
 * Prefix yojimbo_.
 */
#ifndef YOJIMBO_ENDPOINT_H
#define YOJIMBO_ENDPOINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bit packing ---- */

typedef struct yojimbo_writer_t {
    uint8_t *data;
    int capacity; /* bytes */
    int bits;     /* written so far */
    int overflow; /* a write did not fit: nothing after it was written */
} yojimbo_writer_t;

typedef struct yojimbo_reader_t {
    const uint8_t *data;
    int bytes;
    int bits;  /* read so far */
    int error; /* past the end, a value out of range, non-zero padding */
} yojimbo_reader_t;

void yojimbo_writer_init(yojimbo_writer_t *w, uint8_t *data, int capacity);
void yojimbo_write_bits(yojimbo_writer_t *w, uint32_t value, int bits);
void yojimbo_write_int(yojimbo_writer_t *w, int32_t value, int32_t min, int32_t max);
void yojimbo_write_bytes(yojimbo_writer_t *w, const uint8_t *data, int bytes);
/* serialize_int_relative: current > previous (else the writer fails). */
void yojimbo_write_int_relative(yojimbo_writer_t *w, uint32_t previous, uint32_t current);
/* serialize_sequence_relative: 16-bit sequences with the wrap lifted. */
void yojimbo_write_sequence_relative(yojimbo_writer_t *w, uint16_t previous, uint16_t current);
/* Bytes of the written stream (bits rounded up). */
int yojimbo_writer_bytes(const yojimbo_writer_t *w);

void yojimbo_reader_init(yojimbo_reader_t *r, const uint8_t *data, int bytes);
uint32_t yojimbo_read_bits(yojimbo_reader_t *r, int bits);
int32_t yojimbo_read_int(yojimbo_reader_t *r, int32_t min, int32_t max);
void yojimbo_read_align(yojimbo_reader_t *r);
void yojimbo_read_bytes(yojimbo_reader_t *r, uint8_t *out, int bytes);
uint32_t yojimbo_read_int_relative(yojimbo_reader_t *r, uint32_t previous);
uint16_t yojimbo_read_sequence_relative(yojimbo_reader_t *r, uint16_t previous);

/* ---- configuration (both ends must agree: it is not on the wire) ---- */

#define YOJIMBO_MAX_CHANNELS 64
#define YOJIMBO_QUEUE_SIZE 1024        /* send and receive queues, sent-packet buffer */
#define YOJIMBO_MAX_PACKET_SIZE 8192   /* ConnectionConfig's default */
#define YOJIMBO_MAX_MESSAGES_LIMIT 1024

enum { YOJIMBO_RELIABLE_ORDERED = 0, YOJIMBO_UNRELIABLE_UNORDERED = 1 };

typedef struct yojimbo_channel_config_t {
    int type;
    int max_messages_per_packet; /* default 256 */
    int max_block_size;          /* default 256 KiB */
    int block_fragment_size;     /* default 1 KiB */
    double message_resend_time;  /* 0.1 s, as a float: 0.100000001490116 */
    double fragment_resend_time; /* 0.25 s */
} yojimbo_channel_config_t;

typedef struct yojimbo_config_t {
    int num_channels;
    int max_packet_size;   /* the connection packet's budget in bytes (8192) */
    int num_message_types; /* the factory's count (the test set: 4) */
    yojimbo_channel_config_t channel[YOJIMBO_MAX_CHANNELS];
} yojimbo_config_t;

/* ClientServerConfig's defaults: two reliable-ordered channels. */
void yojimbo_default_config(yojimbo_config_t *config);
/* Comma-separated TYPE[:MAXBLOCK[:FRAGMENT[:MAXMESSAGES]]], TYPE ro or uu.
 * Returns 0, or -1 with a reason in error. */
int yojimbo_parse_channels(const char *text, yojimbo_config_t *config, char *error, int error_size);
int yojimbo_max_fragments(const yojimbo_channel_config_t *channel);

/* ---- the test message set (yojimbo's example TestMessageFactory) ---- */

enum {
    YOJIMBO_TEST_MESSAGE = 0,       /* sequence (16 bits), then dummy zero bits by sequence */
    YOJIMBO_TEST_BLOCK_MESSAGE = 1, /* sequence (16 bits), and a block */
    YOJIMBO_TEST_FAIL_ON_READ = 2,  /* nothing written; fails on read */
    YOJIMBO_TEST_EXHAUST_ALLOCATOR = 3, /* nothing on the wire */
    YOJIMBO_TEST_MESSAGE_TYPES = 4
};

typedef struct yojimbo_message_t {
    int type;
    uint16_t id;       /* reliable-ordered channels: the message id */
    uint16_t sequence; /* the test message's field */
    uint8_t *block;    /* block messages: owned by the message */
    int block_size;
} yojimbo_message_t;

const char *yojimbo_message_type_name(int type);
/* Dummy bits a TEST_MESSAGE carries after its sequence. */
int yojimbo_test_message_bits(uint16_t sequence);
/* Bits of the message's body (without type, id or block). */
int yojimbo_message_body_bits(const yojimbo_message_t *m);
int yojimbo_is_block_message(int type);

/* ---- the connection packet ---- */

typedef struct yojimbo_fragment_t {
    uint16_t message_id;
    int num_fragments, fragment_id, fragment_size;
    const uint8_t *data;   /* points into the packet bytes when read */
    yojimbo_message_t message; /* fragment 0: the block message's type and body */
} yojimbo_fragment_t;

typedef struct yojimbo_entry_t {
    int channel;
    int block; /* 1: a block fragment */
    int num_messages;
    yojimbo_message_t *messages; /* written: the caller's; read: allocated */
    yojimbo_fragment_t fragment;
} yojimbo_entry_t;

typedef struct yojimbo_packet_t {
    int num_entries;
    yojimbo_entry_t entry[YOJIMBO_MAX_CHANNELS];
} yojimbo_packet_t;

enum {
    YOJIMBO_READ_OK = 0,
    YOJIMBO_READ_TRUNCATED,      /* ran past the end, or a value outside its range */
    YOJIMBO_READ_CHANNEL,        /* a channel index out of range or out of order */
    YOJIMBO_READ_BLOCKS_DISABLED,
    YOJIMBO_READ_NOT_BLOCK,      /* fragment 0's type is not a block message */
    YOJIMBO_READ_MESSAGE_FAILED, /* a message body failed to read */
    YOJIMBO_READ_EMPTY,          /* zero bytes */
    YOJIMBO_READ_RESULT_COUNT
};
const char *yojimbo_read_result_name(int result);

/* Writes the packet; returns its bytes, or -1 when it does not fit (or two
 * consecutive message ids of a reliable-ordered entry are equal). */
int yojimbo_write_packet(const yojimbo_config_t *config, const yojimbo_packet_t *packet, uint8_t *out, int capacity);
/* Reads a packet; returns YOJIMBO_READ_OK or why not. Free it either way. */
int yojimbo_read_packet(const yojimbo_config_t *config, const uint8_t *data, int bytes, yojimbo_packet_t *packet);
void yojimbo_packet_free(yojimbo_packet_t *packet);

/* ---- the connection: one end's channels ---- */

typedef enum yojimbo_event_kind_t {
    YOJIMBO_EVENT_MESSAGE_SENT,   /* a message went into packet `sequence` (resends too) */
    YOJIMBO_EVENT_FRAGMENT_SENT,  /* block `id`'s fragment `fragment` went into packet `sequence` */
    YOJIMBO_EVENT_MESSAGE_ACKED,  /* the sender's message left its send queue (acked) */
    YOJIMBO_EVENT_FRAGMENT_ACKED, /* a fragment acked the first time */
    YOJIMBO_EVENT_RECEIVED,       /* a message or block reached the receive queue */
    YOJIMBO_EVENT_DELIVERED       /* the application took it, in order */
} yojimbo_event_kind_t;

typedef struct yojimbo_event_t {
    yojimbo_event_kind_t kind;
    int channel;
    uint16_t id;       /* message id (reliable-ordered), or the sender's count (unreliable) */
    int type;
    int fragment;      /* fragment events */
    int num_fragments;
    uint16_t sequence; /* the reliable packet's sequence */
    int size;          /* block size, or body bits for a message */
} yojimbo_event_t;

typedef void yojimbo_event_fn(void *context, const yojimbo_event_t *event);

enum {
    YOJIMBO_COUNTER_MESSAGES_SENT,     /* queued by the application */
    YOJIMBO_COUNTER_MESSAGES_RECEIVED, /* taken by the application */
    YOJIMBO_COUNTER_PACKETS_WRITTEN,
    YOJIMBO_COUNTER_PACKETS_READ,
    YOJIMBO_COUNTER_PACKETS_INVALID,
    YOJIMBO_COUNTER_MESSAGES_RESENT,
    YOJIMBO_COUNTER_FRAGMENTS_SENT,
    YOJIMBO_COUNTER_FRAGMENTS_RESENT,
    YOJIMBO_COUNTER_FRAGMENTS_RECEIVED,
    YOJIMBO_COUNTER_BLOCKS_RECEIVED,
    YOJIMBO_COUNTER_ACKS,
    YOJIMBO_COUNTER_COUNT
};
const char *yojimbo_counter_name(int counter);

typedef struct yojimbo_connection_t yojimbo_connection_t;

/* NULL when out of memory or the config is unusable. */
yojimbo_connection_t *yojimbo_connection_create(const yojimbo_config_t *config, double now, yojimbo_event_fn *event,
                                                void *context);
void yojimbo_connection_destroy(yojimbo_connection_t *c);
void yojimbo_connection_advance_time(yojimbo_connection_t *c, double now);
/* Queues a message (copied; a block's bytes too). Returns its id, or -1:
 * queue full, too large, blocks disabled; the connection is then in error. */
int yojimbo_connection_send(yojimbo_connection_t *c, int channel, const yojimbo_message_t *message);
/* The next connection packet for reliable sequence `sequence`: bytes in out,
 * 1..max (an empty packet is one byte). */
int yojimbo_connection_generate(yojimbo_connection_t *c, uint16_t sequence, uint8_t *out, int max);
/* A packet the reliable endpoint took: returns 1 read, 0 refused. */
int yojimbo_connection_process(yojimbo_connection_t *c, uint16_t sequence, const uint8_t *data, int bytes);
/* The reliable endpoint says our packet `sequence` arrived. */
void yojimbo_connection_ack(yojimbo_connection_t *c, uint16_t sequence);
/* The next message of the channel, in order: 1 and *out filled (the caller
 * frees out->block), or 0. */
int yojimbo_connection_receive(yojimbo_connection_t *c, int channel, yojimbo_message_t *out);
/* 1 while a channel has messages waiting for acks (reliable-ordered) or to go out. */
int yojimbo_connection_pending(const yojimbo_connection_t *c, int channel);
int yojimbo_connection_error(const yojimbo_connection_t *c);
const uint64_t *yojimbo_connection_counters(const yojimbo_connection_t *c);

#ifdef __cplusplus
}
#endif

#endif /* YOJIMBO_ENDPOINT_H */
