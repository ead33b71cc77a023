/*
 * util.c: logging and deterministic random numbers for the endpoints, the
 * simulator and the tests.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

static int log_level = CS_LOG_LEVEL_ERROR;
static const char *log_name = "chunk";

void cs_log_set_level(int level)
{
    assert(level >= CS_LOG_LEVEL_NONE && level <= CS_LOG_LEVEL_DEBUG);
    log_level = level;
}

void cs_log_set_name(const char *name)
{
    assert(name);
    log_name = name;
}

void cs_log_message(int level, const char *format, ...)
{
    assert(level > CS_LOG_LEVEL_NONE && level <= CS_LOG_LEVEL_DEBUG);
    if (level > log_level) return;
    static const char *const prefix[] = {"", "error", "info", "debug"};
    fprintf(stderr, "%s %s: ", log_name, prefix[level]);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

/* splitmix64 (Steele, Lea, Flood): one 64-bit word of state, every seed
 * (0 included) gives a good sequence, and the same seed the same numbers on
 * every platform, which is what the seeded simulator needs. */
void cs_rng_seed(cs_rng_t *rng, uint64_t seed)
{
    assert(rng);
    rng->state = seed;
}

uint64_t cs_rng_next(cs_rng_t *rng)
{
    assert(rng);
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double cs_rng_uniform(cs_rng_t *rng)
{
    /* The top 53 bits fill a double's mantissa exactly: [0, 1), never 1. */
    return (double)(cs_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

void cs_rng_bytes(void *rng, uint8_t *out, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = cs_rng_next(rng);
        for (size_t k = 0; k < 8 && i + k < bytes; k++) out[i + k] = (uint8_t)(v >> (8 * k));
    }
}

int cs_bits_required(uint32_t min, uint32_t max)
{
    uint32_t range = max - min;
    int bits = 0;
    while (range) {
        bits++;
        range >>= 1;
    }
    return bits;
}
