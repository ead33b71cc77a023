/*
 * protocol2.h: the framing that the chunk protocol and the fragment protocol
 * share (docs/protocol.md, "Bit packing"): a CRC-32 in the first four bytes
 * that hides the protocol id, then a bit stream written least significant bit
 * first (stream bit k is bit k mod 8 of byte k/8), with integers in a range,
 * alignment to a byte, raw bytes and an end check.
 *
 * A protocol's codec writes and reads its own fields with these functions and
 * maps the reader's reasons (p2_read_result_t) to its own counters. Pure code:
 * no allocation, no I/O. It shares no code with the dissector, which decodes
 * the same framing on its own.
 *
 * Conventions: a caller's mistake (a value outside its range, a write past
 * what the caller sized) is an assert; anything read from a datagram is
 * checked against the datagram's length, so no input makes a reader look
 * outside its buffer.
 */
#ifndef CS_PROTOCOL2_H
#define CS_PROTOCOL2_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the CRC at the front of every packet. */
#define P2_CRC_BYTES 4
/* The end check's value, written as the bytes e2 ac 08 99. */
#define P2_END_CHECK 0x9908ACE2u
/* Bytes of the end check. */
#define P2_END_CHECK_BYTES 4

/* Number of bits an integer in [min, max] takes: the bit length of max - min
 * (0 when min == max). min > max is a caller's mistake (asserted). */
int p2_bits_required(uint32_t min, uint32_t max);

/* The plain zlib / IEEE 802.3 CRC-32 (check value 0xcbf43926), continuing
 * from crc (0 to start) over bytes more bytes. Never fails. */
uint32_t p2_crc32(uint32_t crc, const uint8_t *data, size_t bytes);

/* The CRC a packet carries in its first four bytes: CRC-32 of
 * LE32(protocol_id) || 00 00 00 00 || packet[4..bytes). bytes must be at
 * least 4 (asserted). Never fails. */
uint32_t p2_packet_crc(uint32_t protocol_id, const uint8_t *packet, int bytes);

/* ---- writer: the caller has computed the packet's exact size ---- */

typedef struct p2_writer_t {
    uint8_t *buffer;
    int bit;   /* next stream bit to write */
    int bytes; /* the packet's size: writing past it is a caller's mistake (asserted) */
} p2_writer_t;

/* Starts a packet of bytes bytes (at least 4) in buffer: clears them (padding
 * bits are never written, so they stay zero) and puts the first field after
 * the CRC. */
void p2_writer_begin(p2_writer_t *w, uint8_t *buffer, int bytes);

/* Writes the low n bits of value (n in 0..32). */
void p2_write_bits(p2_writer_t *w, uint32_t value, int n);

/* Writes value - min in p2_bits_required(min, max) bits; value outside
 * [min, max] is a caller's mistake (asserted). */
void p2_write_int(p2_writer_t *w, uint32_t value, uint32_t min, uint32_t max);

/* Moves to the next byte boundary (zero padding bits), then copies n bytes
 * of data. */
void p2_write_bytes(p2_writer_t *w, const uint8_t *data, int n);

/* Aligns, then writes the end check. */
void p2_write_check(p2_writer_t *w);

/* Aligns, fills in the CRC for protocol_id over everything written, and
 * returns the packet's length in bytes (the size given to p2_writer_begin,
 * asserted). */
int p2_write_finish(p2_writer_t *w, uint32_t protocol_id);

/* ---- reader: every read is checked against the datagram's length ---- */

/* Why a read failed. P2_READ_OK (0) means it succeeded. A protocol maps
 * these to its own reasons and counters. */
typedef enum p2_read_result_t {
    P2_READ_OK = 0,
    P2_READ_TRUNCATED,     /* fewer bytes left than the field needs */
    P2_READ_BAD_CRC,       /* the CRC does not match the protocol id */
    P2_READ_BAD_PADDING,   /* non-zero alignment bits */
    P2_READ_BAD_END_CHECK, /* the end check is not e2 ac 08 99 */
    P2_READ_BAD_VALUE,     /* an int field outside [min, max] */
    P2_READ_TRAILING_BYTES /* bytes after where the packet ends */
} p2_read_result_t;

typedef struct p2_reader_t {
    const uint8_t *buffer;
    long bit;        /* next stream bit to read */
    long total_bits; /* 8 * datagram bytes */
} p2_reader_t;

/* Checks the CRC of a datagram of bytes bytes for protocol_id and, when it
 * matches, sets r up to read the first field after it. Returns P2_READ_OK,
 * P2_READ_TRUNCATED when there are fewer than 4 bytes, or P2_READ_BAD_CRC.
 * The CRC comes first, as in the original: nothing in a packet it rejects is
 * worth parsing. */
p2_read_result_t p2_reader_begin(p2_reader_t *r, uint32_t protocol_id, const uint8_t *buffer, int bytes);

/* Reads n bits (0..32) into *value. Returns P2_READ_OK, or
 * P2_READ_TRUNCATED when fewer than n bits are left (*value untouched). */
p2_read_result_t p2_read_bits(p2_reader_t *r, int n, uint32_t *value);

/* Reads an integer written by p2_write_int(min, max) into *value. Returns
 * P2_READ_OK, P2_READ_TRUNCATED, or P2_READ_BAD_VALUE when the field holds
 * more than max - min (possible when max - min + 1 is not a power of 2). */
p2_read_result_t p2_read_int(p2_reader_t *r, uint32_t min, uint32_t max, uint32_t *value);

/* Skips to the next byte boundary. Returns P2_READ_OK, or
 * P2_READ_BAD_PADDING when a skipped bit is not zero. */
p2_read_result_t p2_read_align(p2_reader_t *r);

/* Aligns, then sets *data to the next n bytes inside the datagram (no copy).
 * Returns P2_READ_OK, P2_READ_BAD_PADDING or P2_READ_TRUNCATED. */
p2_read_result_t p2_read_bytes(p2_reader_t *r, int n, const uint8_t **data);

/* Aligns and reads the end check. Returns P2_READ_OK, P2_READ_BAD_PADDING,
 * P2_READ_TRUNCATED or P2_READ_BAD_END_CHECK. */
p2_read_result_t p2_read_check(p2_reader_t *r);

/* The packet ends here. Returns P2_READ_OK when every byte of the datagram
 * has been read, else P2_READ_TRAILING_BYTES. */
p2_read_result_t p2_read_end(const p2_reader_t *r);

#ifdef __cplusplus
}
#endif

#endif /* CS_PROTOCOL2_H */
