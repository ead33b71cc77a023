/*
 * protocol2.c: the protocol2 framing (protocol2.h): bit writer and reader,
 * CRC and end check.
 *
 * Packets are bit-packed least significant bit first: stream bit k is bit
 * (k mod 8) of byte k/8. The writer trusts the caller to have sized the
 * buffer (each codec computes a packet's exact length before writing); the
 * reader checks every field against the datagram's length before reading it.
 */
#include "protocol2.h"
#include "util.h"

#include <assert.h>
#include <string.h>
#include <zlib.h>

int p2_bits_required(uint32_t min, uint32_t max)
{
    assert(min <= max);
    return cs_bits_required(min, max);
}

uint32_t p2_crc32(uint32_t crc, const uint8_t *data, size_t bytes)
{
    assert(data || bytes == 0);
    /* zlib's uInt length is 32 bits; no datagram comes near that. */
    assert(bytes <= 0xffffffffu);
    /* zlib returns its initial value, not crc, for a NULL buffer. */
    if (bytes == 0) return crc;
    return (uint32_t)crc32(crc, data, (uInt)bytes);
}

uint32_t p2_packet_crc(uint32_t protocol_id, const uint8_t *packet, int bytes)
{
    assert(packet && bytes >= P2_CRC_BYTES);
    const uint8_t prefix[8] = {(uint8_t)protocol_id, (uint8_t)(protocol_id >> 8),
                               (uint8_t)(protocol_id >> 16), (uint8_t)(protocol_id >> 24),
                               0, 0, 0, 0};
    uint32_t crc = p2_crc32(0, prefix, sizeof prefix);
    return p2_crc32(crc, packet + P2_CRC_BYTES, (size_t)(bytes - P2_CRC_BYTES));
}

/* ---- writer ---- */

void p2_writer_begin(p2_writer_t *w, uint8_t *buffer, int bytes)
{
    assert(w && buffer && bytes >= P2_CRC_BYTES);
    memset(buffer, 0, (size_t)bytes);
    w->buffer = buffer;
    w->bit = 8 * P2_CRC_BYTES;
    w->bytes = bytes;
}

void p2_write_bits(p2_writer_t *w, uint32_t value, int n)
{
    assert(n >= 0 && n <= 32 && w->bit + n <= 8 * w->bytes);
    for (int i = 0; i < n; i++, w->bit++)
        if ((value >> i) & 1u) w->buffer[w->bit >> 3] |= (uint8_t)(1u << (w->bit & 7));
}

void p2_write_int(p2_writer_t *w, uint32_t value, uint32_t min, uint32_t max)
{
    assert(value >= min && value <= max);
    p2_write_bits(w, value - min, p2_bits_required(min, max));
}

/* Moves to the next byte boundary. Padding bits are already zero: the
 * caller clears the packet first. */
static void write_align(p2_writer_t *w) { w->bit = (w->bit + 7) & ~7; }

void p2_write_bytes(p2_writer_t *w, const uint8_t *data, int n)
{
    assert(n >= 0 && (data || n == 0));
    write_align(w);
    assert(w->bit / 8 + n <= w->bytes);
    if (n > 0) memcpy(w->buffer + (w->bit >> 3), data, (size_t)n);
    w->bit += 8 * n;
}

void p2_write_check(p2_writer_t *w)
{
    write_align(w);
    p2_write_bits(w, P2_END_CHECK, 32);
}

int p2_write_finish(p2_writer_t *w, uint32_t protocol_id)
{
    write_align(w);
    int bytes = w->bit >> 3;
    assert(bytes == w->bytes);
    uint32_t crc = p2_packet_crc(protocol_id, w->buffer, bytes);
    for (int i = 0; i < P2_CRC_BYTES; i++) w->buffer[i] = (uint8_t)(crc >> (8 * i));
    return bytes;
}

/* ---- reader ---- */

p2_read_result_t p2_reader_begin(p2_reader_t *r, uint32_t protocol_id, const uint8_t *buffer, int bytes)
{
    assert(r && bytes >= 0 && (buffer || bytes == 0));
    if (bytes < P2_CRC_BYTES) return P2_READ_TRUNCATED;
    uint32_t sent_crc = (uint32_t)buffer[0] | (uint32_t)buffer[1] << 8 | (uint32_t)buffer[2] << 16 |
                        (uint32_t)buffer[3] << 24;
    if (sent_crc != p2_packet_crc(protocol_id, buffer, bytes)) return P2_READ_BAD_CRC;
    r->buffer = buffer;
    r->bit = 8 * P2_CRC_BYTES;
    r->total_bits = 8L * bytes;
    return P2_READ_OK;
}

p2_read_result_t p2_read_bits(p2_reader_t *r, int n, uint32_t *value)
{
    assert(n >= 0 && n <= 32);
    if (r->total_bits - r->bit < n) return P2_READ_TRUNCATED;
    uint32_t v = 0;
    for (int i = 0; i < n; i++, r->bit++)
        v |= (uint32_t)((r->buffer[r->bit >> 3] >> (r->bit & 7)) & 1u) << i;
    *value = v;
    return P2_READ_OK;
}

p2_read_result_t p2_read_int(p2_reader_t *r, uint32_t min, uint32_t max, uint32_t *value)
{
    uint32_t raw;
    p2_read_result_t result = p2_read_bits(r, p2_bits_required(min, max), &raw);
    if (result != P2_READ_OK) return result;
    /* raw <= max - min cannot overflow and catches the values a field's
     * width can hold beyond the range (when max - min + 1 is not a power of 2). */
    if (raw > max - min) return P2_READ_BAD_VALUE;
    *value = raw + min;
    return P2_READ_OK;
}

/* The byte holding the padding exists: a reader is only mid-byte after
 * reading part of it. */
p2_read_result_t p2_read_align(p2_reader_t *r)
{
    int pad = (int)((8 - (r->bit & 7)) & 7);
    uint32_t bits;
    p2_read_result_t result = p2_read_bits(r, pad, &bits);
    if (result != P2_READ_OK) return result;
    return bits ? P2_READ_BAD_PADDING : P2_READ_OK;
}

p2_read_result_t p2_read_bytes(p2_reader_t *r, int n, const uint8_t **data)
{
    assert(n >= 0 && data);
    p2_read_result_t result = p2_read_align(r);
    if (result != P2_READ_OK) return result;
    if ((r->total_bits - r->bit) / 8 < n) return P2_READ_TRUNCATED;
    *data = r->buffer + (r->bit >> 3);
    r->bit += 8L * n;
    return P2_READ_OK;
}

p2_read_result_t p2_read_check(p2_reader_t *r)
{
    p2_read_result_t result = p2_read_align(r);
    if (result != P2_READ_OK) return result;
    uint32_t check;
    result = p2_read_bits(r, 32, &check);
    if (result != P2_READ_OK) return result;
    return check == P2_END_CHECK ? P2_READ_OK : P2_READ_BAD_END_CHECK;
}

p2_read_result_t p2_read_end(const p2_reader_t *r)
{
    return r->bit == r->total_bits ? P2_READ_OK : P2_READ_TRAILING_BYTES;
}
