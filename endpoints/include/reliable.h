/*
 * reliable.h: an independent implementation of the reliable protocol (packet
 * acknowledgement and fragmentation over datagrams; the wire format is in
 * docs/reliable.md, the endpoints in docs/reliable-endpoints.md).
 *
 * Pure protocol code: nothing here touches a socket, a clock or a file. Time
 * is passed in (seconds, never decreasing); datagrams leave through a
 * callback. Prefix rl_ (the reference library's own names start with
 * reliable_, so both can live in one test program).
 *
 * Conventions: caller mistakes are asserts; wire data is always checked, and
 * a datagram the endpoint does not take is counted by reason.
 */
#ifndef RL_RELIABLE_H
#define RL_RELIABLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RL_MAX_HEADER_BYTES 9      /* prefix, sequence, 16-bit ack, four ack-bits bytes */
#define RL_MIN_HEADER_BYTES 4      /* prefix, sequence, one-byte ack difference */
#define RL_FRAGMENT_HEADER_BYTES 5 /* prefix 1, sequence, fragment id, count - 1 */
#define RL_MAX_FRAGMENTS 256
#define RL_DEFAULT_PORT_A 50000
#define RL_DEFAULT_PORT_B 50001

/* ---- wire format ---- */

/* The acknowledgement state every regular packet carries. Bit i of ack_bits
 * set: sequence ack - i was received (bit 0 is ack itself). */
typedef struct rl_header_t {
    uint16_t sequence;
    uint16_t ack;
    uint32_t ack_bits;
} rl_header_t;

/* Why a datagram was not taken (rl_read_* results and the invalid counters). */
typedef enum rl_read_result_t {
    RL_READ_OK = 0,
    RL_READ_SHORT,              /* shorter than its header says */
    RL_READ_NOT_REGULAR,        /* bit 0 of the prefix set where a regular header was expected */
    RL_READ_NOT_FRAGMENT,       /* a fragment prefix other than exactly 1 */
    RL_READ_TOO_MANY_FRAGMENTS, /* count above the configured max_fragments */
    RL_READ_FRAGMENT_ID_RANGE,  /* fragment id >= count */
    RL_READ_SEQUENCE_MISMATCH,  /* fragment 0's embedded sequence differs */
    RL_READ_NOT_CANONICAL,      /* fragment 0's embedded header is not the canonical encoding */
    RL_READ_FRAGMENT_TOO_BIG,   /* more data than fragment_size */
    RL_READ_FRAGMENT_SIZE,      /* a fragment other than the last not exactly fragment_size */
    RL_READ_RESULT_COUNT
} rl_read_result_t;

const char *rl_read_result_name(rl_read_result_t r);

/* Writes the canonical header of h to out. Returns its length, 4..9. */
int rl_header_write(uint8_t out[RL_MAX_HEADER_BYTES], const rl_header_t *h);

/* The canonical length of h's header without writing it. */
int rl_header_size(const rl_header_t *h);

/* Reads a regular packet's header from the first bytes of p. Returns its
 * length (4..9), or -1 with *why set (RL_READ_SHORT, RL_READ_NOT_REGULAR).
 * Any encoding the reference library reads is accepted, canonical or not. */
int rl_header_read(const uint8_t *p, int bytes, rl_header_t *h, rl_read_result_t *why);

/* 1 when the header of length len at p is the canonical encoding of what it
 * says (bits 6-7 clear, no ack-bits byte of 0xFF sent, the one-byte
 * difference used whenever it fits). */
int rl_header_is_canonical(const uint8_t *p, int len);

typedef struct rl_fragment_t {
    uint16_t sequence;
    int fragment_id;
    int num_fragments;
    int has_header;        /* fragment 0: header is the embedded packet header */
    rl_header_t header;
    int header_bytes;      /* 5, plus the embedded header's length on fragment 0 */
    int data_bytes;        /* fragment data after header_bytes */
} rl_fragment_t;

/* Reads a fragment with the receiver's rules (max_fragments, fragment_size).
 * Returns RL_READ_OK or why it is rejected. */
rl_read_result_t rl_fragment_read(const uint8_t *p, int bytes, int max_fragments, int fragment_size,
                                  rl_fragment_t *f);

/* Sequence arithmetic modulo 65536: 1 when s1 is more recent than s2. */
int rl_sequence_greater(uint16_t s1, uint16_t s2);

/* ---- the endpoint ---- */

typedef enum rl_counter_t {
    RL_COUNTER_PACKETS_SENT,
    RL_COUNTER_PACKETS_RECEIVED,
    RL_COUNTER_PACKETS_ACKED,
    RL_COUNTER_PACKETS_STALE,
    RL_COUNTER_PACKETS_INVALID,
    RL_COUNTER_PACKETS_TOO_LARGE_TO_SEND,
    RL_COUNTER_PACKETS_TOO_LARGE_TO_RECEIVE,
    RL_COUNTER_FRAGMENTS_SENT,
    RL_COUNTER_FRAGMENTS_RECEIVED,
    RL_COUNTER_FRAGMENTS_INVALID,
    RL_COUNTER_PACKETS_DUPLICATE,
    /* The first eleven mean what the reference library's counters of the
     * same names mean; these are ours. */
    RL_COUNTER_PACKETS_LOST,          /* the peer's ack window moved past it unacked */
    RL_COUNTER_FRAGMENTS_DUPLICATE,   /* a fragment already held */
    RL_COUNTER_REASSEMBLIES_ABANDONED, /* pushed out of the reassembly window unfinished */
    RL_COUNTER_COUNT
} rl_counter_t;

const char *rl_counter_name(int counter);

/* Sends a datagram (a whole packet or one fragment of it). */
typedef void rl_send_fn(void *context, uint16_t sequence, const uint8_t *packet, int bytes);
/* A packet arrived (reassembled if it was fragmented): return 1 to take it
 * (it is then acked), 0 to refuse it. NULL: take everything. */
typedef int rl_process_fn(void *context, uint16_t sequence, const uint8_t *payload, int bytes);
/* The peer acknowledged one of our packets, rtt seconds after its send. */
typedef void rl_acked_fn(void *context, uint16_t sequence, double rtt);
/* One of our packets can no longer be acknowledged: the peer's ack moved 32
 * or more past it without acking it. (A header sent earlier and taken later
 * can still acknowledge it: then `acked` follows and the loss is withdrawn
 * from the counter.) */
typedef void rl_lost_fn(void *context, uint16_t sequence);

typedef struct rl_config_t {
    int max_packet_size;     /* payload bytes a packet may have (default 16384) */
    int fragment_above;      /* payloads above this are fragmented (default 1024) */
    int fragment_size;       /* data bytes per fragment (default 1024) */
    int max_fragments;       /* up to 256 (default 16) */
    int sent_window;         /* sent packets tracked for acks (default 256) */
    int received_window;     /* received packets tracked: stale and duplicate rule (default 256) */
    int reassembly_window;   /* packets under reassembly (default 64) */
    double rtt_smoothing;    /* default 0.0025, the reference library's */
    uint16_t first_sequence; /* the first packet's sequence (default 0) */
    double stop_acking_at;   /* fault: from this time the ack and ack bits stop moving (-1 off) */
    rl_send_fn *send;
    rl_process_fn *process;
    rl_acked_fn *acked;
    rl_lost_fn *lost;
    void *context;
} rl_config_t;

void rl_default_config(rl_config_t *config);

typedef struct rl_endpoint_t rl_endpoint_t;

/* NULL when out of memory or the config is unusable (sizes out of range). */
rl_endpoint_t *rl_endpoint_create(const rl_config_t *config, double now);
void rl_endpoint_destroy(rl_endpoint_t *e);

/* Moves the endpoint's clock (seconds, never backwards). */
void rl_endpoint_update(rl_endpoint_t *e, double now);

/* Sends payload[0..bytes) as one packet: whole, or as fragments when above
 * fragment_above. Returns its sequence, or -1 when too large (counted). */
int rl_endpoint_send(rl_endpoint_t *e, const uint8_t *payload, int bytes);

/* Takes a datagram from the peer. Returns RL_READ_OK when it was read (taken,
 * or dropped as stale or duplicate: see the counters), else why not. */
rl_read_result_t rl_endpoint_receive(rl_endpoint_t *e, const uint8_t *packet, int bytes);

/* The sequence the next packet gets. */
uint16_t rl_endpoint_next_sequence(const rl_endpoint_t *e);
/* What the next packet will carry as ack and ack bits. */
void rl_endpoint_ack_state(const rl_endpoint_t *e, uint16_t *ack, uint32_t *ack_bits);
/* Smoothed RTT in seconds (0 before the first ack), and the last sample. */
double rl_endpoint_rtt(const rl_endpoint_t *e);
double rl_endpoint_last_rtt(const rl_endpoint_t *e);
const uint64_t *rl_endpoint_counters(const rl_endpoint_t *e);

/* ---- faults for a simulated network (a netsim filter) ---- */

typedef struct rl_faults_t {
    int drop_fragment;  /* fragment id dropped every time, -1 off */
    int drop_dir;       /* on this link only (0 A->B, 1 B->A), -1 both */
} rl_faults_t;

/* netsim_filter_fn: 1 drops the datagram. context is an rl_faults_t. */
int rl_faults_filter(void *context, int dir, const uint8_t *packet, int bytes);

#ifdef __cplusplus
}
#endif

#endif /* RL_RELIABLE_H */
