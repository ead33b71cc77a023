/* crc32_test.c: dissector/common/cs-crc32.c against zlib's crc32().
 *
 * Every length from 0 to 4 KiB + 100 at every alignment 0..15, from 0 and
 * from a random previous CRC; chained calls split at every point of a
 * 300-byte message; the check value of "123456789"; a 1 MiB message; for
 * each path cs_crc32() has on this processor (VPCLMULQDQ, PCLMULQDQ, zlib).
 * On a processor with PCLMULQDQ (or VPCLMULQDQ) the fast path must be the
 * one taken by default (else this would compare zlib with itself). Exit 0
 * when all agree, 1 otherwise.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "common/cs-crc32.h"

static unsigned failures;

static void expect(uint32_t got, uint32_t want, const char *what, size_t a, size_t b)
{
    if (got != want && failures++ < 10)
        fprintf(stderr, "crc32_test: %s (%zu, %zu): 0x%08x, zlib 0x%08x\n", what, a, b, got, want);
}

static const char *const path_names[] = { "zlib", "PCLMULQDQ", "VPCLMULQDQ (AVX-512)" };

/* Every check, on the path cs_crc32() is limited to now (cs_crc32_limit()). */
static void run_checks(const uint8_t *buf, size_t max_len, const uint8_t *big, size_t big_len, uint32_t *x)
{
    expect(cs_crc32(0, (const uint8_t *)"123456789", 9), 0xcbf43926u, "check value", 9, 0);
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= max_len; n++) {
            uint32_t seed = (*x = *x * 1103515245u + 12345u);
            expect(cs_crc32(0, buf + off, n), (uint32_t)crc32(0, buf + off, (uInt)n), "from 0", off, n);
            expect(cs_crc32(seed, buf + off, n), (uint32_t)crc32(seed, buf + off, (uInt)n), "from a seed", off, n);
        }
    for (size_t cut = 0; cut <= 300; cut++)
        expect(cs_crc32(cs_crc32(0, buf, cut), buf + cut, 300 - cut), (uint32_t)crc32(0, buf, 300),
               "chained", cut, 300);
    expect(cs_crc32(0, big, big_len), (uint32_t)crc32(0, big, (uInt)big_len), "1 MiB", big_len, 0);
}

int main(void)
{
    enum { MAX_LEN = 4096 + 100 };
    static uint8_t buf[MAX_LEN + 16], big[1 << 20];
    uint32_t x = 12345;
    int best;

    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);

    /* Each path the processor has, the fastest first, then each slower one. */
    best = cs_crc32_limit(CS_CRC32_VPCLMUL512);
    for (int level = best; level >= CS_CRC32_ZLIB; level--) {
        unsigned before = failures;
        if (cs_crc32_limit(level) != level) {
            fprintf(stderr, "crc32_test: cannot limit cs_crc32 to the %s path\n", path_names[level]);
            failures++;
            continue;
        }
        run_checks(buf, MAX_LEN, big, sizeof big, &x);
        printf("crc32_test: %s path, %u mismatches\n", path_names[level], failures - before);
    }
    cs_crc32_limit(CS_CRC32_VPCLMUL512);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") && best == CS_CRC32_ZLIB) {
        fprintf(stderr, "crc32_test: this processor has PCLMULQDQ but cs_crc32 does not use it\n");
        failures++;
    }
    if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") &&
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("vpclmulqdq") && best != CS_CRC32_VPCLMUL512) {
        fprintf(stderr, "crc32_test: this processor has VPCLMULQDQ and AVX-512 but cs_crc32 does not use them\n");
        failures++;
    }
#endif
    return failures ? 1 : 0;
}
