/* Minimal test harness: one binary, a table of named tests per file. */
#ifndef CHUNK_TEST_H
#define CHUNK_TEST_H

#include <stdint.h>
#include <stdio.h>

typedef struct chunk_test_t {
    const char *name;
    void (*fn)(void);
} chunk_test_t;

extern int chunk_test_failures;

/* Checks a condition; on failure prints where and counts it, and the test goes on. */
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            chunk_test_failures++;                                                    \
        }                                                                             \
    } while (0)

/* Like CHECK for two integers, printing both values. */
#define CHECK_EQ(a, b)                                                                          \
    do {                                                                                        \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                         \
        if (check_a_ != check_b_) {                                                             \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__,      \
                    __LINE__, #a, check_a_, #b, check_b_);                                      \
            chunk_test_failures++;                                                              \
        }                                                                                       \
    } while (0)

/* Returns object, something a test cannot go on without; when it is NULL
 * (out of memory, a configuration refused) a failed CHECK and the end of
 * the run. */
void *chunk_test_require(void *object, const char *what);

/* Writes the CRC of a protocol2 packet (chunk, fragment) into its first four
 * bytes, after a test has changed the packet on purpose; a packet shorter
 * than the CRC is left as it is. */
void chunk_test_fix_crc(uint32_t protocol_id, uint8_t *packet, int bytes);

/* Writes the chunk protocol's ack of chunk_id with num_slices slices into
 * out: slice i acked when bits[i] is '1' (bits NULL: every slice; a shorter
 * bits leaves the slices past its end unacked). Returns
 * the packet's size (chunk_write_ack_packet's answer). */
struct chunk_wire_config_t;
int chunk_test_write_ack(const struct chunk_wire_config_t *wire, uint16_t chunk_id, int num_slices, const char *bits,
                         uint8_t *out, int out_size);

/* Directory of the test vectors, docs/vectors (set by the runner from CHUNK_SPEC_DIR or --spec). */
extern const char *chunk_test_spec_dir;

/* Opens the vector file name in chunk_test_spec_dir for reading, its path in
 * path; NULL, with a failed CHECK and the reason on stderr, when the folder
 * is not set or the file cannot be opened. */
FILE *chunk_test_open_vectors(const char *name, char *path, size_t path_size);

/* Parses hex digit pairs (spaces between bytes allowed) into out; returns
 * the byte count, or -1 for a character that is not a hex digit, an odd
 * digit at the end, or more than capacity bytes. */
int chunk_test_parse_hex(const char *hex, unsigned char *out, int capacity);

/* Seed for tests that draw random traffic: CHUNK_TEST_SEED from the
 * environment (decimal or 0x hex), default 1. Printed when a test fails, so
 * scripts/loop-tests.sh can loop with fresh seeds and a failure replays. */
extern unsigned long long chunk_test_seed;

#endif
