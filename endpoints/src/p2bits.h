/*
 * p2bits.h: the protocol2 bit writer and reader the fragment codec uses,
 * until the shared protocol2 module replaces it (LSB-first bit stream,
 * int(min,max), align, bytes, end check, CRC seeded with the protocol id;
 * docs/protocol.md). The writer's caller has sized the buffer; every read
 * is checked against the datagram's length.
 */
#ifndef P2BITS_H
#define P2BITS_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "chunk.h"

typedef enum p2_read_result_t {
    P2_READ_OK = 0,
    P2_READ_TRUNCATED,
    P2_READ_BAD_PADDING,
    P2_READ_BAD_VALUE,
    P2_READ_BAD_END_CHECK,
    P2_READ_TRAILING_BYTES,
} p2_read_result_t;

static inline int p2_bits_required(uint32_t min, uint32_t max) { return chunk_bits_required(min, max); }

typedef struct p2_writer_t {
    uint8_t *buffer;
    int bytes;
    long bit;
} p2_writer_t;

static inline void p2_writer_init(p2_writer_t *w, uint8_t *buffer, int bytes)
{
    w->buffer = buffer;
    w->bytes = bytes;
    w->bit = 32; /* after the CRC */
}

/* Bits must land on zeroed bytes. */
static inline void p2_write_bits(p2_writer_t *w, uint32_t value, int n)
{
    assert(n >= 0 && n <= 32 && w->bit + n <= 8L * w->bytes);
    for (int i = 0; i < n; i++, w->bit++)
        if ((value >> i) & 1u) w->buffer[w->bit >> 3] |= (uint8_t)(1u << (w->bit & 7));
}

static inline void p2_write_int(p2_writer_t *w, uint32_t value, uint32_t min, uint32_t max)
{
    assert(value >= min && value <= max);
    p2_write_bits(w, value - min, p2_bits_required(min, max));
}

static inline void p2_write_sint(p2_writer_t *w, int value, int min, int max)
{
    assert(value >= min && value <= max);
    p2_write_int(w, (uint32_t)(value - min), 0, (uint32_t)(max - min));
}

static inline void p2_write_align(p2_writer_t *w) { w->bit = (w->bit + 7) & ~7L; }

static inline void p2_write_bytes(p2_writer_t *w, const uint8_t *data, int n)
{
    p2_write_align(w);
    assert(w->bit / 8 + n <= w->bytes);
    memcpy(w->buffer + w->bit / 8, data, (size_t)n);
    w->bit += 8L * n;
}

static inline void p2_write_crc(p2_writer_t *w, uint32_t protocol_id, int bytes)
{
    uint32_t crc = chunk_packet_crc(protocol_id, w->buffer, bytes);
    for (int i = 0; i < 4; i++) w->buffer[i] = (uint8_t)(crc >> (8 * i));
}

/* Pads, writes the end check and the CRC; returns the length. */
static inline int p2_finish(p2_writer_t *w, uint32_t protocol_id, uint32_t end_check)
{
    p2_write_align(w);
    p2_write_bits(w, end_check, 32);
    int bytes = (int)(w->bit / 8);
    p2_write_crc(w, protocol_id, bytes);
    return bytes;
}

/* Pads and writes the CRC, no end check (fragments). */
static inline int p2_finish_no_check(p2_writer_t *w, uint32_t protocol_id)
{
    p2_write_align(w);
    int bytes = (int)(w->bit / 8);
    p2_write_crc(w, protocol_id, bytes);
    return bytes;
}

typedef struct p2_reader_t {
    const uint8_t *buffer;
    long bit, total_bits;
} p2_reader_t;

static inline void p2_reader_init(p2_reader_t *r, const uint8_t *buffer, int bytes)
{
    r->buffer = buffer;
    r->bit = 32;
    r->total_bits = 8L * bytes;
}

static inline long p2_reader_bit(const p2_reader_t *r) { return r->bit; }

static inline int p2_crc_ok(uint32_t protocol_id, const uint8_t *buffer, int bytes)
{
    uint32_t sent = (uint32_t)buffer[0] | (uint32_t)buffer[1] << 8 | (uint32_t)buffer[2] << 16 |
                    (uint32_t)buffer[3] << 24;
    return sent == chunk_packet_crc(protocol_id, buffer, bytes);
}

static inline p2_read_result_t p2_read_bits(p2_reader_t *r, int n, uint32_t *value)
{
    assert(n >= 0 && n <= 32);
    if (r->total_bits - r->bit < n) return P2_READ_TRUNCATED;
    uint32_t v = 0;
    for (int i = 0; i < n; i++, r->bit++) v |= (uint32_t)((r->buffer[r->bit >> 3] >> (r->bit & 7)) & 1u) << i;
    *value = v;
    return P2_READ_OK;
}

static inline p2_read_result_t p2_read_int(p2_reader_t *r, uint32_t min, uint32_t max, uint32_t *value)
{
    uint32_t raw;
    p2_read_result_t res = p2_read_bits(r, p2_bits_required(min, max), &raw);
    if (res != P2_READ_OK) return res;
    if (raw > max - min) return P2_READ_BAD_VALUE;
    *value = raw + min;
    return P2_READ_OK;
}

static inline p2_read_result_t p2_read_align(p2_reader_t *r)
{
    int pad = (int)((8 - (r->bit & 7)) & 7);
    uint32_t bits;
    p2_read_result_t res = p2_read_bits(r, pad, &bits);
    if (res != P2_READ_OK) return res;
    return bits ? P2_READ_BAD_PADDING : P2_READ_OK;
}

static inline p2_read_result_t p2_read_end(p2_reader_t *r, uint32_t end_check)
{
    p2_read_result_t res = p2_read_align(r);
    if (res != P2_READ_OK) return res;
    uint32_t check;
    res = p2_read_bits(r, 32, &check);
    if (res != P2_READ_OK) return res;
    if (check != end_check) return P2_READ_BAD_END_CHECK;
    if (r->bit != r->total_bits) return P2_READ_TRAILING_BYTES;
    return P2_READ_OK;
}

#endif
