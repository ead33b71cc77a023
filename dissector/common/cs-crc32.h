/* common/cs-crc32.h
 * CRC-32 as zlib's crc32() computes it (IEEE 802.3, reflected, check value
 * 0xcbf43926; the protocol2 CRC of docs/protocol.md, "Every packet"), several times faster
 * on x86-64 processors with carry-less multiplication. Plain C, no Wireshark
 * headers, so that dissector/tests/crc32_test.c can check it against zlib.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CS_CRC32_H
#define CS_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* crc32(crc, data, len) exactly as zlib: start with 0, chain by passing the
 * previous result. */
uint32_t cs_crc32(uint32_t crc, const uint8_t *data, size_t len);

/* The paths, slowest first. */
#define CS_CRC32_ZLIB       0
#define CS_CRC32_PCLMUL     1   /* four 128-bit lanes */
#define CS_CRC32_VPCLMUL512 2   /* the four lanes in one AVX-512 register (F, BW, VPCLMULQDQ) */

/* For tests: cs_crc32() takes at most path `level` from now on (the fastest
 * by default); returns the one it takes on this processor. */
int cs_crc32_limit(int level);

#endif /* CS_CRC32_H */
