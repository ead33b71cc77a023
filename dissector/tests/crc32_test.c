/* crc32_test.c: dissector/common/cs-crc32.c against zlib's crc32().
 *
 * Every length from 0 to 4 KiB + 100 at every alignment 0..15, from 0 and
 * from a random previous CRC; chained calls split at every point of a
 * 300-byte message; the check value of "123456789"; a 1 MiB message. On a
 * processor with PCLMULQDQ the fast path must be the one tested (else this
 * would compare zlib with itself). Exit 0 when all agree, 1 otherwise.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "cs-crc32.h"

static unsigned failures;

static void expect(uint32_t got, uint32_t want, const char *what, size_t a, size_t b)
{
    if (got != want && failures++ < 10)
        fprintf(stderr, "crc32_test: %s (%zu, %zu): 0x%08x, zlib 0x%08x\n", what, a, b, got, want);
}

int main(void)
{
    enum { MAX_LEN = 4096 + 100 };
    static uint8_t buf[MAX_LEN + 16], big[1 << 20];
    uint32_t x = 12345;

    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);

    expect(cs_crc32(0, (const uint8_t *)"123456789", 9), 0xcbf43926u, "check value", 9, 0);
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= MAX_LEN; n++) {
            uint32_t seed = (x = x * 1103515245u + 12345u);
            expect(cs_crc32(0, buf + off, n), (uint32_t)crc32(0, buf + off, (uInt)n), "from 0", off, n);
            expect(cs_crc32(seed, buf + off, n), (uint32_t)crc32(seed, buf + off, (uInt)n), "from a seed", off, n);
        }
    for (size_t cut = 0; cut <= 300; cut++)
        expect(cs_crc32(cs_crc32(0, buf, cut), buf + cut, 300 - cut), (uint32_t)crc32(0, buf, 300),
               "chained", cut, 300);
    expect(cs_crc32(0, big, sizeof big), (uint32_t)crc32(0, big, sizeof big), "1 MiB", sizeof big, 0);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") && !cs_crc32_is_fast()) {
        fprintf(stderr, "crc32_test: this processor has PCLMULQDQ but cs_crc32 does not use it\n");
        failures++;
    }
#endif
    printf("crc32_test: %s path, %u mismatches\n", cs_crc32_is_fast() ? "PCLMULQDQ" : "zlib", failures);
    return failures ? 1 : 0;
}
