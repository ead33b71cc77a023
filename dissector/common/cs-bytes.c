/* common/cs-bytes.c
 * Byte-run helpers of the decoders that run over every byte of a packet
 * (common/cs-bytes.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <glib.h>
#include <wsutil/bits_count_ones.h>

#include "cs-bytes.h"

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

uint32_t cs_count_above(const uint8_t *p, uint32_t n, unsigned shift, unsigned max)
{
    const uint64_t lo7 = UINT64_C(0x7f7f7f7f7f7f7f7f);
    const uint64_t top = UINT64_C(0x8080808080808080);
    const uint64_t add = UINT64_C(0x0101010101010101) * (uint64_t)(0x7f - (max - 128));
    uint32_t bad = 0, i = 0;

#if defined(__SSE2__) || defined(_M_X64)
    /* Sixteen at a time: a 16-bit lane of the bytes from p + i, shifted
     * right, holds item i + 2j in its low byte; the same from p + i + 1
     * gives item i + 2j + 1. */
    {
        const __m128i low = _mm_set1_epi16(0x00ff);
        const __m128i min_bad = _mm_set1_epi8((char)(max + 1));
        const __m128i count = _mm_cvtsi32_si128((int)shift);
        /* The load from p + i + 1 reads p[i + 16]: there when shift is not 0
         * (the items straddle n + 1 bytes), not always otherwise. */
        uint32_t lim = shift ? n : (n ? n - 1 : 0);
        for (; i + 16 <= lim; i += 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(p + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(p + i + 1));
            __m128i v = _mm_or_si128(_mm_and_si128(_mm_srl_epi16(a, count), low),
                                     _mm_slli_epi16(_mm_srl_epi16(b, count), 8));
            int m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, min_bad), v));
            if (m)
                bad += (uint32_t)ws_count_ones((guint64)(unsigned)m);
        }
    }
#endif
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
#if G_BYTE_ORDER == G_BIG_ENDIAN
        w = GUINT64_SWAP_LE_BE(w);
#endif
        if (shift)
            w = (w >> shift) | ((uint64_t)p[i + 8] << (64 - shift));
        uint64_t hit = w & top & ((w & lo7) + add);
        if (hit)
            bad += (uint32_t)ws_count_ones(hit);
    }
    for (; i < n; i++) {
        unsigned v = shift ? ((unsigned)(p[i] >> shift) | ((unsigned)p[i + 1] << (8 - shift))) & 0xFF : p[i];
        if (v > max)
            bad++;
    }
    return bad;
}
