/* crypto.c
 * netcode's AEADs on libgcrypt (see crypto.h). HChaCha20 follows the
 * description in draft-irtf-cfrg-xchacha (section 2.2): the ChaCha20 state
 * of the constants, the key and the 16-byte nonce, 20 rounds, and no final
 * addition of the input; the subkey is state words 0-3 and 12-15.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <wsutil/wsgcrypt.h>

#include "crypto.h"

struct nc_aead {
    gcry_cipher_hd_t hd;
};

nc_aead_t *nc_aead_new(const uint8_t key[NC_KEY_BYTES])
{
    nc_aead_t *a = g_new0(nc_aead_t, 1);

    if (!a)
        return NULL;
    if (gcry_cipher_open(&a->hd, GCRY_CIPHER_CHACHA20, GCRY_CIPHER_MODE_POLY1305, 0) ||
        gcry_cipher_setkey(a->hd, key, NC_KEY_BYTES)) {
        if (a->hd)
            gcry_cipher_close(a->hd);
        g_free(a);
        return NULL;
    }
    return a;
}

void nc_aead_free(nc_aead_t *a)
{
    if (!a)
        return;
    gcry_cipher_close(a->hd);
    g_free(a);
}

int nc_aead_decrypt(nc_aead_t *a, const uint8_t nonce[12], const uint8_t *ad, size_t ad_len,
                    const uint8_t *ct, size_t ct_len, uint8_t *out)
{
    size_t n;

    if (!a || ct_len < NC_MAC_BYTES)
        return 0;
    n = ct_len - NC_MAC_BYTES;
    if (gcry_cipher_setiv(a->hd, nonce, 12))
        return 0;
    if (ad_len && gcry_cipher_authenticate(a->hd, ad, ad_len))
        return 0;
    if (gcry_cipher_final(a->hd))
        return 0;
    if (n && gcry_cipher_decrypt(a->hd, out, n, ct, n))
        return 0;
    return gcry_cipher_checktag(a->hd, ct + n, NC_MAC_BYTES) == 0;
}

int nc_chacha20poly1305_decrypt(const uint8_t key[NC_KEY_BYTES], const uint8_t nonce[12],
                                const uint8_t *ad, size_t ad_len, const uint8_t *ct, size_t ct_len,
                                uint8_t *out)
{
    nc_aead_t *a = nc_aead_new(key);
    int ok = nc_aead_decrypt(a, nonce, ad, ad_len, ct, ct_len, out);

    nc_aead_free(a);
    return ok;
}

static inline uint32_t rotl32(uint32_t v, int c)
{
    return (v << c) | (v >> (32 - c));
}

static inline uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#define QUARTER_ROUND(x, a, b, c, d) do { \
        x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl32(x[d], 16); \
        x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl32(x[b], 12); \
        x[a] += x[b]; x[d] ^= x[a]; x[d] = rotl32(x[d], 8); \
        x[c] += x[d]; x[b] ^= x[c]; x[b] = rotl32(x[b], 7); \
    } while (0)

void nc_hchacha20(uint8_t out[32], const uint8_t key[32], const uint8_t nonce[16])
{
    uint32_t x[16];

    /* "expand 32-byte k" */
    x[0] = 0x61707865u;
    x[1] = 0x3320646eu;
    x[2] = 0x79622d32u;
    x[3] = 0x6b206574u;
    for (int i = 0; i < 8; i++)
        x[4 + i] = load32_le(key + 4 * i);
    for (int i = 0; i < 4; i++)
        x[12 + i] = load32_le(nonce + 4 * i);
    for (int i = 0; i < 10; i++) {
        /* a column round, then a diagonal round */
        QUARTER_ROUND(x, 0, 4, 8, 12);
        QUARTER_ROUND(x, 1, 5, 9, 13);
        QUARTER_ROUND(x, 2, 6, 10, 14);
        QUARTER_ROUND(x, 3, 7, 11, 15);
        QUARTER_ROUND(x, 0, 5, 10, 15);
        QUARTER_ROUND(x, 1, 6, 11, 12);
        QUARTER_ROUND(x, 2, 7, 8, 13);
        QUARTER_ROUND(x, 3, 4, 9, 14);
    }
    for (int i = 0; i < 4; i++) {
        store32_le(out + 4 * i, x[i]);
        store32_le(out + 16 + 4 * i, x[12 + i]);
    }
}

int nc_xchacha20poly1305_decrypt(const uint8_t key[NC_KEY_BYTES], const uint8_t nonce[24],
                                 const uint8_t *ad, size_t ad_len, const uint8_t *ct, size_t ct_len,
                                 uint8_t *out)
{
    uint8_t subkey[32];
    uint8_t nonce12[12];
    int ok;

    nc_hchacha20(subkey, key, nonce);
    memset(nonce12, 0, 4);
    memcpy(nonce12 + 4, nonce + 16, 8);
    ok = nc_chacha20poly1305_decrypt(subkey, nonce12, ad, ad_len, ct, ct_len, out);
    memset(subkey, 0, sizeof subkey);
    return ok;
}
