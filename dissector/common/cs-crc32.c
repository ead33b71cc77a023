/* common/cs-crc32.c
 * CRC-32 over every protocol2 datagram (bench/RESULTS.md: zlib's byte-wise
 * CRC was the largest single cost of the plugin, about 3 instructions a
 * byte). On x86-64 with PCLMULQDQ the message is folded 64 bytes at a time
 * with carry-less multiplication (the folding method of Gopal et al., "Fast
 * CRC Computation for Generic Polynomials Using PCLMULQDQ", Intel 2009),
 * down to 16 bytes, reduced to the 32-bit register by two more folds and
 * Barrett's reduction (the same paper); with VPCLMULQDQ (AVX-512) the four
 * 16-byte lanes fold as one 512-bit register, two of them 128 bytes apart.
 * Zero bytes put in front make the length a multiple of 16, so nothing is
 * left for a byte-wise tail.
 *
 * Why it is correct: CRC-32 is linear. Feeding a message M to the raw
 * register r (no inversions) gives the same register as feeding, from
 * r = 0, M with r XORed into its first four bytes. Folding replaces the
 * first 16 + 16k bytes by 16 bytes congruent to them modulo the polynomial
 * at the same distance from the end, which leaves the register unchanged;
 * the reduction gives the raw register of those 16 bytes, whose complement
 * is the CRC. Zero bytes fed to a raw register of 0 leave it 0, so the
 * message may be preceded by any number of them.
 *
 * dissector/tests/crc32_test.c compares it with zlib for every length up
 * to 4 KiB at every alignment, chained and unchained.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "cs-crc32.h"

/* Which compilers build the fast paths (docs/install.md, "Windows"):
 *   GCC and clang on x86-64 (Linux, macOS, MinGW-w64): both, each function
 *     compiled for its instructions with a target attribute (CS_CLMUL,
 *     CS_CLMUL512), the processor asked with __builtin_cpu_supports (which
 *     also checks that the system saves AVX-512 state).
 *   MSVC on x64: the PCLMULQDQ path. MSVC compiles any intrinsic without a
 *     target attribute or /arch switch, so CS_CLMUL is empty; the processor
 *     is asked with Wireshark's ws_cpuid() (wsutil/ws_cpuid.h), as
 *     Wireshark's own SSE 4.2 code does. The AVX-512 path is left out there:
 *     it would also need the system's ZMM state (xgetbv).
 *   Anything else: zlib. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CS_CRC32_CLMUL 1
#define CS_CRC32_CLMUL512 1
#define CS_CLMUL __attribute__((target("pclmul,sse4.1")))
#define CS_CLMUL512 __attribute__((target("avx512f,avx512bw,vpclmulqdq,pclmul,sse4.1")))
#elif defined(_MSC_VER) && defined(_M_X64)
#include <intrin.h>
#include <glib.h>
#include <wsutil/ws_cpuid.h>
#define CS_CRC32_CLMUL 1
#define CS_CLMUL
#endif

#ifdef CS_CRC32_CLMUL
/* x^n mod P(x), P = 0x104C11DB7, bit-reflected and shifted left by one (the
 * product of two reflected 64-bit values lands one bit low): for folding
 * 64 bytes ahead n = 512 + 32 (low half) and 512 - 32 (high half), for
 * folding 16 bytes ahead 128 + 32 and 128 - 32. */
#define CS_K_512_LO 0x154442bd4ULL
#define CS_K_512_HI 0x1c6e41596ULL
#define CS_K_128_LO 0x1751997d0ULL
#define CS_K_128_HI 0x0ccaa009eULL
/* For the last 128 bits: x^64 mod P likewise (64 bits to 32), and Barrett's
 * constants, the reflected P and floor(x^64 / P) reflected. */
#define CS_K_64     0x163cd6124ULL
#define CS_POLY     0x1db710641ULL
#define CS_MU       0x1f7011641ULL

/* x moved `k`'s distance ahead (either half multiplied by its constant). */
CS_CLMUL static inline __m128i cs_fold(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

CS_CLMUL static inline __m128i cs_load(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* The first 64 bytes to fold (len >= 64): z = -len mod 16 zero bytes and
 * the message's first 64 - z, the register ~crc XORed into those. Zero
 * bytes in front of a raw register of 0 leave it 0, and the rest of the
 * message is whole 16-byte blocks: no byte is left over at the end.
 * Returns 64 - z, the message bytes used. */
static size_t cs_head(uint8_t head[64], uint32_t crc, const uint8_t *p, size_t len)
{
    size_t z = (16 - len % 16) % 16;
    uint32_t r = ~crc;

    memset(head, 0, z);
    memcpy(head + z, p, 64 - z);
    for (int i = 0; i < 4; i++)
        head[z + (size_t)i] ^= (uint8_t)(r >> (8 * i));
    return 64 - z;
}

/* From four 16-byte lanes 64 bytes from the end of what was folded so far
 * (x0 first) and the len (a multiple of 16) bytes at p still to fold, the
 * CRC. */
CS_CLMUL static inline uint32_t cs_finish(__m128i x0, __m128i x1, __m128i x2, __m128i x3,
                                          const uint8_t *p, size_t len)
{
    const __m128i k128 = _mm_set_epi64x((long long)CS_K_128_HI, (long long)CS_K_128_LO);

    x1 = _mm_xor_si128(cs_fold(x0, k128), x1);
    x2 = _mm_xor_si128(cs_fold(x1, k128), x2);
    x3 = _mm_xor_si128(cs_fold(x2, k128), x3);
    for (; len >= 16; p += 16, len -= 16)
        x3 = _mm_xor_si128(cs_fold(x3, k128), cs_load(p));
    /* 128 bits to 64, 64 to 32, then Barrett's reduction to the register. */
    const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
    const __m128i k64 = _mm_set_epi64x(0, (long long)CS_K_64);
    const __m128i poly = _mm_set_epi64x((long long)CS_MU, (long long)CS_POLY);
    __m128i t = _mm_clmulepi64_si128(x3, k128, 0x10);
    x3 = _mm_xor_si128(_mm_srli_si128(x3, 8), t);
    t = _mm_srli_si128(x3, 4);
    x3 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x3, mask32), k64, 0x00), t);
    t = _mm_clmulepi64_si128(_mm_and_si128(x3, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    return ~(uint32_t)_mm_extract_epi32(_mm_xor_si128(x3, t), 1);
}

/* len >= 64 */
CS_CLMUL static uint32_t cs_crc32_clmul(uint32_t crc, const uint8_t *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x((long long)CS_K_512_HI, (long long)CS_K_512_LO);
    uint8_t head[64];
    size_t used = cs_head(head, crc, p, len);
    __m128i x0 = cs_load(head), x1 = cs_load(head + 16), x2 = cs_load(head + 32), x3 = cs_load(head + 48);

    for (p += used, len -= used; len >= 64; p += 64, len -= 64) {
        x0 = _mm_xor_si128(cs_fold(x0, k512), cs_load(p));
        x1 = _mm_xor_si128(cs_fold(x1, k512), cs_load(p + 16));
        x2 = _mm_xor_si128(cs_fold(x2, k512), cs_load(p + 32));
        x3 = _mm_xor_si128(cs_fold(x3, k512), cs_load(p + 48));
    }
    return cs_finish(x0, x1, x2, x3, p, len);
}

#ifdef CS_CRC32_CLMUL512
/* The same with the four lanes in one 512-bit register (VPCLMULQDQ): one
 * load, two multiplications and one three-way XOR per 64 bytes instead of
 * four, eight and eight; two such registers 128 bytes apart, each folded
 * 128 bytes ahead, so that one's multiplications need not wait for the
 * other's. The head is one masked load (AVX-512BW), not a copy. */
#define CS_K_1024_LO 0x1e88ef372ULL   /* x^(1024+32) mod P, as the others */
#define CS_K_1024_HI 0x14a7fe880ULL   /* x^(1024-32) mod P */

CS_CLMUL512 static inline __m512i cs_fold512(__m512i x, __m512i k, __m512i next)
{
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11),
                                     next, 0x96);
}

CS_CLMUL512 static uint32_t cs_crc32_clmul512(uint32_t crc, const uint8_t *p, size_t len)
{
    const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)CS_K_512_HI, (long long)CS_K_512_LO));
    const __m512i k1024 = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)CS_K_1024_HI, (long long)CS_K_1024_LO));
    /* As cs_head(): byte j of the head is p[j - z] for j >= z, else 0 (the
     * masked-off bytes before p are not read), and ~crc XORed in at z. */
    size_t z = (16 - len % 16) % 16;
    /* ~crc at bit 8z: in each 64-bit word w (bits 64w..64w+63) it is ~crc
     * shifted left by 8z - 64w or right by 64w - 8z; a count out of 0..63
     * (negative ones wrap to huge) gives 0. In registers, not through a
     * word stored and loaded back. */
    const __m512i word_bits = _mm512_set_epi64(448, 384, 320, 256, 192, 128, 64, 0);
    const __m512i at = _mm512_set1_epi64((long long)(8 * z));
    const __m512i r = _mm512_set1_epi64((long long)(uint32_t)~crc);
    const __m512i rx = _mm512_or_si512(_mm512_sllv_epi64(r, _mm512_sub_epi64(at, word_bits)),
                                       _mm512_srlv_epi64(r, _mm512_sub_epi64(word_bits, at)));
    __m512i x0 = _mm512_xor_si512(
        _mm512_maskz_loadu_epi8(~(__mmask64)0 << z, (const void *)((uintptr_t)p - z)), rx);

    p += 64 - z;
    len -= 64 - z;
    if (len >= 128) {
        __m512i x1 = _mm512_loadu_si512((const void *)p);
        for (p += 64, len -= 64; len >= 128; p += 128, len -= 128) {
            x0 = cs_fold512(x0, k1024, _mm512_loadu_si512((const void *)p));
            x1 = cs_fold512(x1, k1024, _mm512_loadu_si512((const void *)(p + 64)));
        }
        x0 = cs_fold512(x0, k512, x1);
    }
    for (; len >= 64; p += 64, len -= 64)
        x0 = cs_fold512(x0, k512, _mm512_loadu_si512((const void *)p));
    return cs_finish(_mm512_extracti32x4_epi32(x0, 0), _mm512_extracti32x4_epi32(x0, 1),
                     _mm512_extracti32x4_epi32(x0, 2), _mm512_extracti32x4_epi32(x0, 3), p, len);
}
#endif

static int cs_fast = -1;     /* the path this processor has: CS_CRC32_* */
static int cs_limit = CS_CRC32_VPCLMUL512;

static int cs_level(void)
{
    if (cs_fast < 0) {
#ifdef CS_CRC32_CLMUL512
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1"))
            cs_fast = CS_CRC32_ZLIB;
        else if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("vpclmulqdq"))
            cs_fast = CS_CRC32_VPCLMUL512;
        else
            cs_fast = CS_CRC32_PCLMUL;
#else
        /* CPUID leaf 1, ECX: bit 1 PCLMULQDQ, bit 19 SSE4.1. */
        uint32_t info[4];
        if (ws_cpuid(info, 1) && (info[2] & (1u << 1)) && (info[2] & (1u << 19)))
            cs_fast = CS_CRC32_PCLMUL;
        else
            cs_fast = CS_CRC32_ZLIB;
#endif
    }
    return cs_fast < cs_limit ? cs_fast : cs_limit;
}

int cs_crc32_limit(int level)
{
    cs_limit = level;
    return cs_level();
}
#else
int cs_crc32_limit(int level)
{
    (void)level;
    return CS_CRC32_ZLIB;
}
#endif

uint32_t cs_crc32(uint32_t crc, const uint8_t *data, size_t len)
{
#ifdef CS_CRC32_CLMUL
    if (len >= 64) {
        int level = cs_level();
#ifdef CS_CRC32_CLMUL512
        if (level == CS_CRC32_VPCLMUL512)
            return cs_crc32_clmul512(crc, data, len);
#endif
        if (level == CS_CRC32_PCLMUL)
            return cs_crc32_clmul(crc, data, len);
    }
#endif
    /* zlib takes an unsigned int length: datagrams and reassembled packets
     * are far below 4 GiB, but do not truncate silently. */
    while (len > 0x40000000u) {
        crc = (uint32_t)crc32(crc, data, 0x40000000u);
        data += 0x40000000u;
        len -= 0x40000000u;
    }
    return (uint32_t)crc32(crc, data, (uInt)len);
}
