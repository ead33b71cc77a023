/*
 * util.h: what every endpoint, the simulator and the tests use alike: a
 * leveled log on stderr and a seeded random number generator. Pure code
 * apart from the log's writes to stderr.
 */
#ifndef UTIL_H
#define UTIL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- logging ---- */

enum { LOG_LEVEL_NONE = 0, LOG_LEVEL_ERROR, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };
/* Global log level (default LOG_LEVEL_ERROR). */
void log_set_level(int level);

/* Sets the word that starts every log line (default "chunk"; a string that
 * lives as long as the program). */
void log_set_name(const char *name);

/* Writes "NAME LEVEL: " format "\n" to stderr when level is at or below the
 * log level. level is one of LOG_LEVEL_ERROR..LOG_LEVEL_DEBUG (asserted). */
void log_message(int level, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- deterministic random numbers (for the simulator and tests) ---- */

/* splitmix64: the same seed gives the same numbers on every platform. */
typedef struct rng_t { uint64_t state; } rng_t;

/* Starts the sequence for seed (every seed, 0 included, is good). */
void rng_seed(rng_t *rng, uint64_t seed);

/* The next 64 random bits. */
uint64_t rng_next(rng_t *rng);

/* The next number in [0, 1), never 1 (one rng_next draw). */
double rng_uniform(rng_t *rng);


#ifdef __cplusplus
}
#endif

#endif /* UTIL_H */
