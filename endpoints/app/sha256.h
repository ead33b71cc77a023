/* sha256.h: SHA-256 (FIPS 180-4) for the truth files, which name what a
 * receiver delivered by its digest. Small and dependency-free; tested
 * against the FIPS examples (tests/test_p2frag.c). */
#ifndef CS_SHA256_H
#define CS_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Writes the digest of data as 64 lowercase hex digits and a NUL into hex. */
void cs_sha256_hex(const uint8_t *data, size_t bytes, char hex[65]);

#endif
