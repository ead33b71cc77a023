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

#endif /* CS_BYTES_H */
