/*
 * p2frag_wire.c: the wire codec of packet fragmentation and reassembly
 * (docs/p2frag-endpoints.md): fragment packets and the example's regular
 * test packets A, B and C, on the protocol2 framing.
 *
 * Every packet starts with the CRC (4 bytes), the sequence (16 bits) and the
 * type (bits_required(0, num_packet_types - 1) bits). A fragment (type 0)
 * then has fragmentId and numFragments (8 bits each), padding, and its data
 * to the end of the datagram, with no end check. A regular packet has its
 * body, padding and the end check.
 */
#include <assert.h>
#include <string.h>

#include "p2frag.h"
#include "protocol2.h"

void p2frag_wire_default_config(p2frag_wire_config_t *config)
{
    assert(config);
    config->protocol_id = P2FRAG_DEFAULT_PROTOCOL_ID;
    config->num_packet_types = P2FRAG_DEFAULT_NUM_PACKET_TYPES;
}

static void check_config(const p2frag_wire_config_t *config)
{
    assert(config);
    assert(config->num_packet_types >= P2FRAG_DEFAULT_NUM_PACKET_TYPES && config->num_packet_types <= 256);
    (void)config;
}

static int type_bits(const p2frag_wire_config_t *config)
{
    return p2_bits_required(0, (uint32_t)config->num_packet_types - 1);
}

/* Bytes before a fragment's data: CRC, sequence, type, two ids, padding. */
static int fragment_header_bytes(const p2frag_wire_config_t *config)
{
    return (32 + 16 + type_bits(config) + 8 + 8 + 7) / 8;
}

int p2frag_sequence_newer(uint16_t a, uint16_t b)
{
    return (a > b && a - b <= 32768) || (a < b && b - a > 32768);
}

int p2frag_fragment_count(int bytes)
{
    assert(bytes >= 1 && bytes <= P2FRAG_MAX_PACKET_BYTES);
    return (bytes + P2FRAG_FRAGMENT_SIZE - 1) / P2FRAG_FRAGMENT_SIZE;
}

int p2frag_fragment_packet_size(const p2frag_wire_config_t *config, int fragment_bytes)
{
    check_config(config);
    return fragment_header_bytes(config) + fragment_bytes;
}

int p2frag_write_fragment(const p2frag_wire_config_t *config, const p2frag_fragment_t *fragment, uint8_t *buffer,
                        int buffer_size)
{
    check_config(config);
    assert(fragment && buffer && fragment->data);
    assert(fragment->num_fragments >= 1 && fragment->num_fragments <= P2FRAG_MAX_FRAGMENTS);
    assert(fragment->fragment_id >= 0 && fragment->fragment_id < fragment->num_fragments);
    int last = fragment->fragment_id == fragment->num_fragments - 1;
    (void)last;
    assert(last ? fragment->fragment_bytes >= 1 && fragment->fragment_bytes <= P2FRAG_FRAGMENT_SIZE
                : fragment->fragment_bytes == P2FRAG_FRAGMENT_SIZE);
    int header = fragment_header_bytes(config);
    int bytes = header + fragment->fragment_bytes;
    if (bytes > buffer_size) return -1;
    p2_writer_t w;
    p2_writer_begin(&w, buffer, bytes);
    p2_write_bits(&w, fragment->sequence, 16);
    p2_write_int(&w, P2FRAG_PACKET_FRAGMENT, 0, (uint32_t)config->num_packet_types - 1);
    p2_write_bits(&w, (uint32_t)fragment->fragment_id, 8);
    p2_write_bits(&w, (uint32_t)fragment->num_fragments, 8); /* the raw count, as the original */
    p2_write_bytes(&w, fragment->data, fragment->fragment_bytes);
    int written = p2_write_finish(&w, config->protocol_id); /* no end check on fragments */
    assert(written == bytes);
    return written;
}

/* int(min, max) with a negative min: value - min in the field's bits. */
static void write_sint(p2_writer_t *w, int value, int min, int max)
{
    assert(value >= min && value <= max);
    p2_write_int(w, (uint32_t)(value - min), 0, (uint32_t)(max - min));
}

/* A TestPacketB item, int(-100, 100): 8 bits written a byte at a time
 * rather than bit by bit (a 16 KiB packet has 16 384 of them). The bytes
 * are the same as write_sint's; the vector tests hold it to that. */
static void write_item(p2_writer_t *w, int value)
{
    assert(value >= -100 && value <= 100);
    assert(w->bit + 8 <= 8 * w->bytes);
    uint32_t v = (uint32_t)(value + 100);
    int shift = w->bit & 7;
    w->buffer[w->bit >> 3] |= (uint8_t)(v << shift);
    if (shift) w->buffer[(w->bit >> 3) + 1] |= (uint8_t)(v >> (8 - shift));
    w->bit += 8;
}

static int test_body_bits(const p2frag_test_packet_t *packet)
{
    switch (packet->type) {
    case P2FRAG_PACKET_A: return 5 + 6 + 6;
    case P2FRAG_PACKET_B: return 15 + 8 * packet->num_items;
    case P2FRAG_PACKET_C: return 3 * 32 + 1 + (packet->at_rest ? 0 : 3 * 32);
    }
    assert(0 && "not a test packet type");
    return 0;
}

int p2frag_test_packet_size(const p2frag_wire_config_t *config, const p2frag_test_packet_t *packet)
{
    check_config(config);
    assert(packet);
    int bits = 32 + 16 + type_bits(config) + test_body_bits(packet);
    return (bits + 7) / 8 + 4;
}

int p2frag_write_test_packet(const p2frag_wire_config_t *config, const p2frag_test_packet_t *packet, uint8_t *buffer,
                           int buffer_size)
{
    check_config(config);
    assert(packet && buffer);
    int bytes = p2frag_test_packet_size(config, packet);
    if (bytes > buffer_size) return -1;
    p2_writer_t w;
    p2_writer_begin(&w, buffer, bytes);
    p2_write_bits(&w, packet->sequence, 16);
    p2_write_int(&w, (uint32_t)packet->type, 0, (uint32_t)config->num_packet_types - 1);
    switch (packet->type) {
    case P2FRAG_PACKET_A:
        write_sint(&w, packet->a, -10, 10);
        write_sint(&w, packet->b, -20, 20);
        write_sint(&w, packet->c, -30, 30);
        break;
    case P2FRAG_PACKET_B:
        assert(packet->num_items >= 0 && packet->num_items <= P2FRAG_MAX_B_ITEMS);
        p2_write_int(&w, (uint32_t)packet->num_items, 0, P2FRAG_MAX_B_ITEMS);
        for (int i = 0; i < packet->num_items; i++) write_item(&w, packet->items[i]);
        break;
    case P2FRAG_PACKET_C:
        assert(packet->at_rest == 0 || packet->at_rest == 1);
        for (int i = 0; i < 3; i++) p2_write_bits(&w, packet->position[i], 32);
        p2_write_bits(&w, (uint32_t)packet->at_rest, 1);
        if (!packet->at_rest)
            for (int i = 0; i < 3; i++) p2_write_bits(&w, packet->velocity[i], 32);
        break;
    }
    p2_write_check(&w);
    int written = p2_write_finish(&w, config->protocol_id);
    assert(written == bytes);
    return written;
}

/* ---- reading ---- */

static p2frag_read_result_t from_p2(p2_read_result_t r)
{
    switch (r) {
    case P2_READ_OK: return P2FRAG_READ_OK;
    case P2_READ_TRUNCATED: return P2FRAG_READ_TRUNCATED;
    case P2_READ_BAD_CRC: return P2FRAG_READ_BAD_CRC;
    case P2_READ_BAD_PADDING: return P2FRAG_READ_BAD_PADDING;
    case P2_READ_BAD_VALUE: return P2FRAG_READ_BAD_VALUE;
    case P2_READ_BAD_END_CHECK: return P2FRAG_READ_BAD_END_CHECK;
    case P2_READ_TRAILING_BYTES: return P2FRAG_READ_TRAILING_BYTES;
    }
    return P2FRAG_READ_BAD_VALUE;
}

#define TRY(expr)                                                   \
    do {                                                            \
        p2frag_read_result_t try_result_ = from_p2(expr);             \
        if (try_result_ != P2FRAG_READ_OK) return try_result_;        \
    } while (0)

static p2frag_read_result_t read_sint(p2_reader_t *r, int min, int max, int *value)
{
    uint32_t raw;
    TRY(p2_read_int(r, 0, (uint32_t)(max - min), &raw));
    *value = (int)raw + min;
    return P2FRAG_READ_OK;
}

/* The body of a test packet, its padding, end check and nothing after. */
static p2frag_read_result_t read_test_body(p2_reader_t *r, int type, p2frag_test_packet_t *out)
{
    p2frag_test_packet_t *p = out;
    switch (type) {
    case P2FRAG_PACKET_A: {
        int a, b, c;
        p2frag_read_result_t res;
        if ((res = read_sint(r, -10, 10, &a)) != P2FRAG_READ_OK) return res;
        if ((res = read_sint(r, -20, 20, &b)) != P2FRAG_READ_OK) return res;
        if ((res = read_sint(r, -30, 30, &c)) != P2FRAG_READ_OK) return res;
        if (p) p->a = a, p->b = b, p->c = c;
        break;
    }
    case P2FRAG_PACKET_B: {
        uint32_t n;
        TRY(p2_read_int(r, 0, P2FRAG_MAX_B_ITEMS, &n));
        for (uint32_t i = 0; i < n; i++) {
            int item;
            p2frag_read_result_t res = read_sint(r, -100, 100, &item);
            if (res != P2FRAG_READ_OK) return res;
            if (p) p->items[i] = (int8_t)item;
        }
        if (p) p->num_items = (int)n;
        break;
    }
    case P2FRAG_PACKET_C: {
        uint32_t pos[3], vel[3] = {0, 0, 0}, rest;
        for (int i = 0; i < 3; i++) TRY(p2_read_bits(r, 32, &pos[i]));
        TRY(p2_read_bits(r, 1, &rest));
        if (!rest)
            for (int i = 0; i < 3; i++) TRY(p2_read_bits(r, 32, &vel[i]));
        if (p) {
            memcpy(p->position, pos, sizeof pos);
            memcpy(p->velocity, vel, sizeof vel);
            p->at_rest = (int)rest;
        }
        break;
    }
    default:
        return P2FRAG_READ_UNKNOWN_TYPE;
    }
    TRY(p2_read_check(r));
    TRY(p2_read_end(r));
    if (p) p->type = type;
    return P2FRAG_READ_OK;
}

/* CRC, sequence and type: what every packet starts with. */
static p2frag_read_result_t read_start(const p2frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                     p2_reader_t *r, uint16_t *sequence, int *type)
{
    check_config(config);
    assert(bytes >= 0 && (buffer || bytes == 0));
    TRY(p2_reader_begin(r, config->protocol_id, buffer, bytes));
    uint32_t seq, t;
    TRY(p2_read_bits(r, 16, &seq));
    TRY(p2_read_int(r, 0, (uint32_t)config->num_packet_types - 1, &t));
    *sequence = (uint16_t)seq;
    *type = (int)t;
    return P2FRAG_READ_OK;
}

p2frag_read_result_t p2frag_read_packet(const p2frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                    p2frag_packet_t *packet)
{
    assert(packet);
    p2_reader_t r;
    uint16_t sequence;
    int type;
    p2frag_read_result_t res = read_start(config, buffer, bytes, &r, &sequence, &type);
    if (res != P2FRAG_READ_OK) return res;
    packet->sequence = sequence;
    packet->type = type;
    if (type != P2FRAG_PACKET_FRAGMENT) {
        if (bytes > P2FRAG_MAX_REGULAR_BYTES) return P2FRAG_READ_REGULAR_TOO_LARGE;
        if (packet->regular) packet->regular->sequence = sequence;
        return read_test_body(&r, type, packet->regular);
    }
    p2frag_fragment_t *f = &packet->fragment;
    uint32_t id, count;
    TRY(p2_read_bits(&r, 8, &id));
    TRY(p2_read_bits(&r, 8, &count));
    /* The header is filled in before the padding is checked, for log lines. */
    int header = (int)((r.bit + 7) / 8);
    f->sequence = sequence;
    f->fragment_id = (int)id;
    f->num_fragments = (int)count;
    f->fragment_bytes = bytes - header;
    f->data = buffer + header;
    TRY(p2_read_align(&r));
    if (count == 0) return P2FRAG_READ_NUM_FRAGMENTS_ZERO;
    if (id >= count) return P2FRAG_READ_FRAGMENT_ID_RANGE;
    if (f->fragment_bytes < 1 || f->fragment_bytes > P2FRAG_FRAGMENT_SIZE) return P2FRAG_READ_FRAGMENT_SIZE;
    if (id != count - 1 && f->fragment_bytes != P2FRAG_FRAGMENT_SIZE) return P2FRAG_READ_SHORT_FRAGMENT;
    return P2FRAG_READ_OK;
}

p2frag_read_result_t p2frag_read_reassembled(const p2frag_wire_config_t *config, const uint8_t *buffer, int bytes,
                                         p2frag_test_packet_t *packet)
{
    p2_reader_t r;
    uint16_t sequence;
    int type;
    p2frag_read_result_t res = read_start(config, buffer, bytes, &r, &sequence, &type);
    if (res != P2FRAG_READ_OK) return res;
    if (type == P2FRAG_PACKET_FRAGMENT) return P2FRAG_READ_UNKNOWN_TYPE;
    if (packet) packet->sequence = sequence;
    return read_test_body(&r, type, packet);
}

const char *p2frag_read_result_name(p2frag_read_result_t result)
{
    switch (result) {
    case P2FRAG_READ_OK: return "ok";
    case P2FRAG_READ_TRUNCATED: return "truncated";
    case P2FRAG_READ_BAD_CRC: return "bad crc";
    case P2FRAG_READ_BAD_PADDING: return "bad padding";
    case P2FRAG_READ_NUM_FRAGMENTS_ZERO: return "num fragments zero";
    case P2FRAG_READ_FRAGMENT_ID_RANGE: return "fragment id >= num fragments";
    case P2FRAG_READ_FRAGMENT_SIZE: return "fragment size out of range";
    case P2FRAG_READ_SHORT_FRAGMENT: return "short non-last fragment";
    case P2FRAG_READ_REGULAR_TOO_LARGE: return "regular packet over 1024 bytes";
    case P2FRAG_READ_UNKNOWN_TYPE: return "unknown packet type";
    case P2FRAG_READ_BAD_VALUE: return "value out of range";
    case P2FRAG_READ_BAD_END_CHECK: return "bad end check";
    case P2FRAG_READ_TRAILING_BYTES: return "trailing bytes";
    case P2FRAG_READ_RESULT_COUNT: break;
    }
    return "unknown";
}
