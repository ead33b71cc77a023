/* crypto_test.c
 * dissector/netcode/crypto.c against the HChaCha20 test vector of
 * draft-irtf-cfrg-xchacha (section 2.2.1) and, when libsodium is there
 * (HAVE_SODIUM), against libsodium's ChaCha20-Poly1305 IETF and
 * XChaCha20-Poly1305 IETF on random keys, nonces, associated data and
 * lengths: every decryption must give the plaintext, and every single-bit
 * change of the ciphertext, tag, nonce or associated data must fail.
 * Exit 0 when all pass. ctest netcode.crypto.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gcrypt.h>
#ifdef HAVE_SODIUM
#include <sodium.h>
#endif

#include "netcode/crypto.h"

static int failures;

static void check(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

static void hex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void test_hchacha20_vector(void)
{
    uint8_t key[32], nonce[16], want[32], got[32];

    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    hex("000000090000004a0000000031415927", nonce, 16);
    hex("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc", want, 32);
    nc_hchacha20(got, key, nonce);
    check(memcmp(got, want, 32) == 0, "HChaCha20 test vector of draft-irtf-cfrg-xchacha 2.2.1");
    /* and a changed nonce gives another subkey */
    nonce[15] ^= 1;
    nc_hchacha20(got, key, nonce);
    check(memcmp(got, want, 32) != 0, "HChaCha20 depends on the nonce");
}

#ifdef HAVE_SODIUM
static void test_against_sodium(int rounds)
{
    uint8_t key[32], nonce[24], ad[64], pt[1300], ct[1300 + 16], out[1300];

    for (int r = 0; r < rounds; r++) {
        size_t len = (size_t)randombytes_uniform(1300);
        size_t ad_len = (size_t)randombytes_uniform(sizeof ad);
        unsigned long long ct_len;
        int x = r & 1;   /* 0: ChaCha20-Poly1305 IETF, 1: XChaCha20 */
        char what[128];

        randombytes_buf(key, sizeof key);
        randombytes_buf(nonce, sizeof nonce);
        randombytes_buf(ad, sizeof ad);
        randombytes_buf(pt, len);
        if (x)
            crypto_aead_xchacha20poly1305_ietf_encrypt(ct, &ct_len, pt, len, ad, ad_len, NULL, nonce, key);
        else
            crypto_aead_chacha20poly1305_ietf_encrypt(ct, &ct_len, pt, len, ad, ad_len, NULL, nonce, key);
#define DEC() (x ? nc_xchacha20poly1305_decrypt(key, nonce, ad, ad_len, ct, (size_t)ct_len, out) \
                 : nc_chacha20poly1305_decrypt(key, nonce, ad, ad_len, ct, (size_t)ct_len, out))
        snprintf(what, sizeof what, "%s round %d (%zu bytes, %zu of ad): decrypts",
                 x ? "XChaCha20" : "ChaCha20", r, len, ad_len);
        check(DEC() && memcmp(out, pt, len) == 0, what);
        {
            size_t bit = (size_t)randombytes_uniform((uint32_t)ct_len * 8);
            ct[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            snprintf(what, sizeof what, "round %d: a flipped ciphertext/tag bit fails", r);
            check(!DEC(), what);
            ct[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        {
            size_t nb = x ? 24 : 12;
            size_t bit = (size_t)randombytes_uniform((uint32_t)nb * 8);
            nonce[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            snprintf(what, sizeof what, "round %d: a flipped nonce bit (%zu) fails", r, bit);
            check(!DEC(), what);
            nonce[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        if (ad_len) {
            ad[0] ^= 0x80;
            snprintf(what, sizeof what, "round %d: changed associated data fails", r);
            check(!DEC(), what);
            ad[0] ^= 0x80;
        }
        {
            nc_aead_t *a = nc_aead_new(key);
            if (!x) {
                snprintf(what, sizeof what, "round %d: the prepared key decrypts twice", r);
                check(nc_aead_decrypt(a, nonce, ad, ad_len, ct, (size_t)ct_len, out) &&
                      nc_aead_decrypt(a, nonce, ad, ad_len, ct, (size_t)ct_len, out) &&
                      memcmp(out, pt, len) == 0, what);
            }
            nc_aead_free(a);
        }
#undef DEC
    }
}
#endif

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        printf("usage: crypto_test   (no arguments; exit 0 when every check passes)\n");
        return 2;
    }
    if (!gcry_check_version(NULL)) {
        printf("libgcrypt failed to initialise\n");
        return 1;
    }
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    test_hchacha20_vector();
#ifdef HAVE_SODIUM
    if (sodium_init() < 0) {
        printf("libsodium failed to initialise\n");
        return 1;
    }
    test_against_sodium(2000);
#else
    printf("libsodium not found: only the HChaCha20 vector checked\n");
#endif
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
