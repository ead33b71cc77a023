/* crypto.h
 * The two AEADs of netcode (docs/netcode.md, "Encryption"): ChaCha20-Poly1305
 * IETF (12-byte nonce) for packets and challenge tokens, XChaCha20-Poly1305
 * IETF (24-byte nonce) for the private connect token. ChaCha20-Poly1305 is
 * libgcrypt's; XChaCha20 is built here from HChaCha20 (a subkey from the
 * key and the nonce's first 16 bytes) and ChaCha20-Poly1305 with the
 * nonce's last 8 bytes. No Wireshark types: the crypto test links this file
 * alone.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NETCODE_CRYPTO_H
#define NETCODE_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#define NC_KEY_BYTES 32
#define NC_MAC_BYTES 16

/* A key made ready once for many ChaCha20-Poly1305 decryptions. */
typedef struct nc_aead nc_aead_t;

/* NULL when libgcrypt cannot make the cipher. */
nc_aead_t *nc_aead_new(const uint8_t key[NC_KEY_BYTES]);
void nc_aead_free(nc_aead_t *a);

/* ChaCha20-Poly1305 IETF: ct is ct_len bytes, the last 16 the tag. Writes
 * ct_len - 16 bytes to out (may be NULL: verify only; out may not overlap
 * ct) and returns 1 when the tag verifies, 0 otherwise (out is then
 * garbage). */
int nc_aead_decrypt(nc_aead_t *a, const uint8_t nonce[12], const uint8_t *ad, size_t ad_len,
                    const uint8_t *ct, size_t ct_len, uint8_t *out);

/* The same with a key used once. */
int nc_chacha20poly1305_decrypt(const uint8_t key[NC_KEY_BYTES], const uint8_t nonce[12],
                                const uint8_t *ad, size_t ad_len, const uint8_t *ct, size_t ct_len,
                                uint8_t *out);

/* HChaCha20 (draft-irtf-cfrg-xchacha, section 2.2): 32-byte subkey from a
 * 32-byte key and a 16-byte nonce. */
void nc_hchacha20(uint8_t out[32], const uint8_t key[32], const uint8_t nonce[16]);

/* XChaCha20-Poly1305 IETF decryption (24-byte nonce); as
 * nc_aead_decrypt. */
int nc_xchacha20poly1305_decrypt(const uint8_t key[NC_KEY_BYTES], const uint8_t nonce[24],
                                 const uint8_t *ad, size_t ad_len, const uint8_t *ct, size_t ct_len,
                                 uint8_t *out);

#endif /* NETCODE_CRYPTO_H */
