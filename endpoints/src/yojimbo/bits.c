/*
 * Bit packing in serialize's order (docs/yojimbo-endpoints.md, "Bit
 * packing"): bit n of the stream is bit n % 8 of byte n / 8, so a value
 * written in b bits puts its low bits first; bytes are aligned to a byte
 * boundary with zero bits, and the reader refuses padding that is not zero.
 */
#include <string.h>

#include "util.h"
#include "yojimbo.h"

void yojimbo_writer_init(yojimbo_writer_t *w, uint8_t *data, int capacity)
{
    w->data = data;
    w->capacity = capacity;
    w->bits = 0;
    w->overflow = 0;
    memset(data, 0, (size_t)capacity);
}

void yojimbo_write_bits(yojimbo_writer_t *w, uint32_t value, int bits)
{
    if (w->overflow || bits <= 0) return;
    if ((long long)w->bits + bits > (long long)w->capacity * 8) {
        w->overflow = 1;
        return;
    }
    for (int i = 0; i < bits; i++, w->bits++)
        if ((value >> i) & 1u) w->data[w->bits >> 3] |= (uint8_t)(1u << (w->bits & 7));
}

void yojimbo_write_int(yojimbo_writer_t *w, int32_t value, int32_t min, int32_t max)
{
    yojimbo_write_bits(w, (uint32_t)value - (uint32_t)min, cs_bits_required((uint32_t)min, (uint32_t)max));
}

static void write_align(yojimbo_writer_t *w)
{
    int pad = (8 - (w->bits & 7)) & 7;
    yojimbo_write_bits(w, 0, pad);
}

void yojimbo_write_bytes(yojimbo_writer_t *w, const uint8_t *data, int bytes)
{
    write_align(w);
    if (w->overflow || bytes <= 0) return;
    if (w->bits / 8 + bytes > w->capacity) {
        w->overflow = 1;
        return;
    }
    memcpy(w->data + w->bits / 8, data, (size_t)bytes);
    w->bits += bytes * 8;
}

/* The ladder of serialize_int_relative: 1 bit for a difference of 1, then
 * ranges 2-6, 7-23, 24-280, 281-4377, 4378-69914, each behind one more
 * flag bit, else 32 bits of the value itself. */
static const uint32_t ladder[][2] = {{2, 6}, {7, 23}, {24, 280}, {281, 4377}, {4378, 69914}};

void yojimbo_write_int_relative(yojimbo_writer_t *w, uint32_t previous, uint32_t current)
{
    if (current <= previous) { /* not encodable: the writer fails */
        w->overflow = 1;
        return;
    }
    uint32_t difference = current - previous;
    yojimbo_write_bits(w, difference == 1, 1);
    if (difference == 1) return;
    for (int i = 0; i < 5; i++) {
        int fits = difference <= ladder[i][1];
        yojimbo_write_bits(w, (uint32_t)fits, 1);
        if (fits) {
            yojimbo_write_int(w, (int32_t)difference, (int32_t)ladder[i][0], (int32_t)ladder[i][1]);
            return;
        }
    }
    yojimbo_write_bits(w, current, 32);
}

void yojimbo_write_sequence_relative(yojimbo_writer_t *w, uint16_t previous, uint16_t current)
{
    uint32_t b = (uint32_t)current + (previous > current ? 65536u : 0u);
    yojimbo_write_int_relative(w, previous, b);
}

int yojimbo_writer_bytes(const yojimbo_writer_t *w) { return (w->bits + 7) / 8; }

void yojimbo_reader_init(yojimbo_reader_t *r, const uint8_t *data, int bytes)
{
    r->data = data;
    r->bytes = bytes;
    r->bits = 0;
    r->error = 0;
}

uint32_t yojimbo_read_bits(yojimbo_reader_t *r, int bits)
{
    if (r->error || bits <= 0) return 0;
    if ((long long)r->bits + bits > (long long)r->bytes * 8) {
        r->error = 1;
        return 0;
    }
    uint32_t value = 0;
    for (int i = 0; i < bits; i++, r->bits++)
        value |= (uint32_t)((r->data[r->bits >> 3] >> (r->bits & 7)) & 1u) << i;
    return value;
}

int32_t yojimbo_read_int(yojimbo_reader_t *r, int32_t min, int32_t max)
{
    uint32_t v = yojimbo_read_bits(r, cs_bits_required((uint32_t)min, (uint32_t)max));
    if (v > (uint32_t)max - (uint32_t)min) {
        r->error = 1;
        return min;
    }
    return (int32_t)(v + (uint32_t)min);
}

void yojimbo_read_align(yojimbo_reader_t *r)
{
    int pad = (8 - (r->bits & 7)) & 7;
    if (yojimbo_read_bits(r, pad) != 0) r->error = 1;
}

void yojimbo_read_bytes(yojimbo_reader_t *r, uint8_t *out, int bytes)
{
    yojimbo_read_align(r);
    if (r->error || bytes < 0 || r->bits / 8 + bytes > r->bytes) {
        r->error = 1;
        return;
    }
    if (out) memcpy(out, r->data + r->bits / 8, (size_t)bytes);
    r->bits += bytes * 8;
}

uint32_t yojimbo_read_int_relative(yojimbo_reader_t *r, uint32_t previous)
{
    if (yojimbo_read_bits(r, 1)) return previous + 1;
    for (int i = 0; i < 5; i++) {
        if (yojimbo_read_bits(r, 1))
            return previous + (uint32_t)yojimbo_read_int(r, (int32_t)ladder[i][0], (int32_t)ladder[i][1]);
    }
    uint32_t value = yojimbo_read_bits(r, 32);
    if (value <= previous) r->error = 1;
    return value;
}

uint16_t yojimbo_read_sequence_relative(yojimbo_reader_t *r, uint16_t previous)
{
    uint32_t b = yojimbo_read_int_relative(r, previous);
    if (b >= 65536) b -= 65536;
    return (uint16_t)b;
}
