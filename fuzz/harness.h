/* harness.h: what the endpoint libFuzzer harnesses (fuzz_*.c here) share:
 * REQUIRE, which aborts with the broken condition, and the input read a
 * byte at a time. Each harness is its own program: the names are short. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Aborts with "FILE:LINE: broken: COND" when cond is false. */
#define REQUIRE(cond)                                                                  \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: broken: %s\n", __FILE__, __LINE__, #cond);        \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* The fuzzer's input and how much of it has been read. */
typedef struct input_t {
    const uint8_t *data;
    size_t size, at;
} input_t;

/* The next byte, or 0 past the end. */
static inline int next_byte(input_t *in) { return in->at < in->size ? in->data[in->at++] : 0; }

/* The next two bytes, little-endian. */
static inline int next_le16(input_t *in)
{
    int lo = next_byte(in);
    return lo | next_byte(in) << 8;
}

#endif /* HARNESS_H */
