/*
 * util.c: logging and deterministic random numbers for the endpoints, the
 * simulator and the tests.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

#include "chunk.h"

static int log_level = CHUNK_LOG_ERROR;

void chunk_set_log_level(int level)
{
    assert(level >= CHUNK_LOG_NONE && level <= CHUNK_LOG_DEBUG);
    log_level = level;
}

void chunk_log(int level, const char *format, ...)
{
    assert(level > CHUNK_LOG_NONE && level <= CHUNK_LOG_DEBUG);
    if (level > log_level) return;
    static const char *const prefix[] = {"", "error", "info", "debug"};
    fprintf(stderr, "chunk %s: ", prefix[level]);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

/* splitmix64 (Steele, Lea, Flood): one 64-bit word of state, every seed
 * (0 included) gives a good sequence, and the same seed the same numbers on
 * every platform, which is what the seeded simulator needs. */
void chunk_rng_seed(chunk_rng_t *rng, uint64_t seed)
{
    assert(rng);
    rng->state = seed;
}

uint64_t chunk_rng_next(chunk_rng_t *rng)
{
    assert(rng);
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double chunk_rng_uniform(chunk_rng_t *rng)
{
    /* The top 53 bits fill a double's mantissa exactly: [0, 1), never 1. */
    return (double)(chunk_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}
