/*
 * util.h: what every endpoint, the simulator and the tests use alike: a
 * leveled log on stderr, a seeded random number generator, the bits a range
 * of integers takes and the size of the IPv4 and UDP headers. Pure code apart from the log's writes to stderr.
 */
#ifndef CS_UTIL_H
#define CS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The IPv4 header (20 bytes, no options) and the UDP header (8 bytes) in
 * front of every datagram: what a sender's budget and the simulator's
 * bandwidth cap count on top of the payload. */
#define CS_IP_UDP_OVERHEAD 28

/* ---- logging ---- */

enum { CS_LOG_LEVEL_NONE = 0, CS_LOG_LEVEL_ERROR, CS_LOG_LEVEL_INFO, CS_LOG_LEVEL_DEBUG };
/* Global log level (default CS_LOG_LEVEL_ERROR). */
void cs_log_set_level(int level);

/* Sets the word that starts every log line (default "chunk"; a string that
 * lives as long as the program). */
void cs_log_set_name(const char *name);

/* Writes "NAME LEVEL: " format "\n" to stderr when level is at or below the
 * log level. level is one of CS_LOG_LEVEL_ERROR..CS_LOG_LEVEL_DEBUG (asserted). */
void cs_log_message(int level, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- deterministic random numbers (for the simulator and tests) ---- */

/* splitmix64: the same seed gives the same numbers on every platform. */
typedef struct cs_rng_t { uint64_t state; } cs_rng_t;

/* Starts the sequence for seed (every seed, 0 included, is good). */
void cs_rng_seed(cs_rng_t *rng, uint64_t seed);

/* The next 64 random bits. */
uint64_t cs_rng_next(cs_rng_t *rng);

/* The next number in [0, 1), never 1 (one cs_rng_next draw). */
double cs_rng_uniform(cs_rng_t *rng);

/* Fills out with bytes random bytes: each cs_rng_next draw gives eight,
 * lowest first. rng is a cs_rng_t * (void * so that this is also a
 * random-bytes callback, as netcode_random_fn). */
void cs_rng_bytes(void *rng, uint8_t *out, size_t bytes);

/* ---- bit packing ---- */

/* Number of bits an integer in [min, max] takes: the bit length of max - min
 * (0 when min == max; max - min wraps when min > max). */
int cs_bits_required(uint32_t min, uint32_t max);


#ifdef __cplusplus
}
#endif

#endif /* CS_UTIL_H */
