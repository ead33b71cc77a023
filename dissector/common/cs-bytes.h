/* common/cs-bytes.h
 * Byte-run helpers of the decoders that run over every byte of a packet.
 * Plain C, no Wireshark headers, so that dissector/tests/bytes_test.c can
 * check them against the obvious loop.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_BYTES_H
#define CS_BYTES_H

#include <stdint.h>

/* How many of n 8-bit values are above max (128 <= max < 255), value k
 * being bits shift.. of p[k] and p[k + 1] (least significant first: the
 * protocol2 bit order of docs/protocol.md, "Bits"), shift 0..7. Reads p[0..n)
 * when shift is 0, p[0..n] otherwise. Sixteen at a time with SSE2, then
 * eight at a time in a 64-bit word (a byte is above max when its top bit is
 * set and its low seven bits exceed max - 128): a reassembled p2frag B
 * packet holds up to 16384 items. */
uint32_t cs_count_above(const uint8_t *p, uint32_t n, unsigned shift, unsigned max);

/* A variable-length number, 7 bits a byte, least significant first, the
 * top bit set on every byte but the last: the packed records that reliable
 * and yojimbo keep for the revisit. cs_put_varint writes v at p and returns
 * the byte after it (at most 10 bytes); cs_get_varint reads one into *v. */
static inline uint8_t *cs_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline const uint8_t *cs_get_varint(const uint8_t *p, uint64_t *v)
{
    uint64_t r = 0;
    int shift = 0;

    while (*p & 0x80) {
        r |= (uint64_t)(*p++ & 0x7F) << shift;
        shift += 7;
    }
    *v = r | (uint64_t)*p++ << shift;
    return p;
}

#endif /* CS_BYTES_H */
