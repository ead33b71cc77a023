/*
 * wire.c: the chunk protocol's wire codec (shared/spec/wire-format.md).
 *
 * Packets are bit-packed least significant bit first: stream bit k is bit
 * (k mod 8) of byte k/8. The writer computes a packet's exact length before
 * writing anything, so it never writes past the buffer; the reader checks
 * every field against the datagram's length before reading it, so no input
 * makes it read outside the buffer.
 */
#include <assert.h>
#include <string.h>
#include <zlib.h>

#include "chunk.h"

void chunk_wire_default_config(chunk_wire_config_t *config)
{
    assert(config);
    config->slice_size = CHUNK_DEFAULT_SLICE_SIZE;
    config->max_slices = CHUNK_DEFAULT_MAX_SLICES;
    config->protocol_id = CHUNK_DEFAULT_PROTOCOL_ID;
}

static void check_config(const chunk_wire_config_t *config)
{
    assert(config);
    assert(config->slice_size >= 1 && config->slice_size <= CHUNK_SLICE_SIZE_LIMIT);
    assert(config->max_slices >= 1 && config->max_slices <= CHUNK_MAX_SLICES_LIMIT);
    (void)config;
}

int chunk_bits_required(uint32_t min, uint32_t max)
{
    assert(min <= max);
    uint32_t range = max - min;
    int bits = 0;
    while (range) {
        bits++;
        range >>= 1;
    }
    return bits;
}

int chunk_id_newer(uint16_t a, uint16_t b)
{
    return (a > b && a - b <= 32768) || (a < b && b - a > 32768);
}

uint32_t chunk_crc32(uint32_t crc, const uint8_t *data, size_t bytes)
{
    assert(data || bytes == 0);
    /* zlib's uInt length is 32 bits; no datagram comes near that. */
    assert(bytes <= 0xffffffffu);
    /* zlib returns its initial value, not crc, for a NULL buffer. */
    if (bytes == 0) return crc;
    return (uint32_t)crc32(crc, data, (uInt)bytes);
}

uint32_t chunk_packet_crc(uint32_t protocol_id, const uint8_t *packet, int bytes)
{
    assert(packet && bytes >= 4);
    const uint8_t prefix[8] = {(uint8_t)protocol_id, (uint8_t)(protocol_id >> 8),
                               (uint8_t)(protocol_id >> 16), (uint8_t)(protocol_id >> 24),
                               0, 0, 0, 0};
    uint32_t crc = chunk_crc32(0, prefix, sizeof prefix);
    return chunk_crc32(crc, packet + 4, (size_t)(bytes - 4));
}

/* ---- bit writer: the caller has checked that the whole packet fits ---- */

typedef struct bit_writer_t {
    uint8_t *buffer;
    int bit; /* next stream bit to write */
} bit_writer_t;

static void write_bits(bit_writer_t *w, uint32_t value, int n)
{
    assert(n >= 0 && n <= 32);
    for (int i = 0; i < n; i++, w->bit++)
        if ((value >> i) & 1u) w->buffer[w->bit >> 3] |= (uint8_t)(1u << (w->bit & 7));
}

static void write_int(bit_writer_t *w, uint32_t value, uint32_t min, uint32_t max)
{
    assert(value >= min && value <= max);
    write_bits(w, value - min, chunk_bits_required(min, max));
}

/* Padding bits are already zero: the writer clears the packet first. */
static void write_align(bit_writer_t *w) { w->bit = (w->bit + 7) & ~7; }

static void write_bytes(bit_writer_t *w, const uint8_t *data, int n)
{
    write_align(w);
    memcpy(w->buffer + (w->bit >> 3), data, (size_t)n);
    w->bit += 8 * n;
}

/* Pads, appends the end check and fills in the CRC; returns the length. */
static int finish_packet(const chunk_wire_config_t *config, bit_writer_t *w)
{
    write_align(w);
    write_bits(w, CHUNK_END_CHECK, 32);
    int bytes = w->bit >> 3;
    uint32_t crc = chunk_packet_crc(config->protocol_id, w->buffer, bytes);
    for (int i = 0; i < 4; i++) w->buffer[i] = (uint8_t)(crc >> (8 * i));
    return bytes;
}

static int bytes_for_bits(int bits) { return (bits + 7) / 8; }

int chunk_slice_packet_size(const chunk_wire_config_t *config, int slice_id, int num_slices, int slice_bytes)
{
    check_config(config);
    int id_bits = chunk_bits_required(0, (uint32_t)config->max_slices - 1);
    int bits = 32 + 1 + 16 + 2 * id_bits;
    if (slice_id == num_slices - 1) bits += chunk_bits_required(1, (uint32_t)config->slice_size);
    return bytes_for_bits(bits) + slice_bytes + 4;
}

int chunk_ack_packet_size(const chunk_wire_config_t *config, int num_slices)
{
    check_config(config);
    int bits = 32 + 1 + 16 + chunk_bits_required(1, (uint32_t)config->max_slices) + num_slices;
    return bytes_for_bits(bits) + 4;
}

int chunk_write_slice_packet(const chunk_wire_config_t *config, const chunk_slice_packet_t *slice,
                             uint8_t *buffer, int buffer_size)
{
    check_config(config);
    assert(slice && buffer);
    assert(slice->num_slices >= 1 && slice->num_slices <= config->max_slices);
    assert(slice->slice_id >= 0 && slice->slice_id < slice->num_slices);
    int last = slice->slice_id == slice->num_slices - 1;
    assert(last ? (slice->slice_bytes >= 1 && slice->slice_bytes <= config->slice_size)
                : slice->slice_bytes == config->slice_size);
    assert(slice->data);

    int bytes = chunk_slice_packet_size(config, slice->slice_id, slice->num_slices, slice->slice_bytes);
    if (bytes > buffer_size) return -1;
    memset(buffer, 0, (size_t)bytes);
    bit_writer_t w = {buffer, 32};
    write_int(&w, CHUNK_PACKET_SLICE, 0, 1);
    write_bits(&w, slice->chunk_id, 16);
    write_int(&w, (uint32_t)slice->slice_id, 0, (uint32_t)config->max_slices - 1);
    write_int(&w, (uint32_t)slice->num_slices, 1, (uint32_t)config->max_slices);
    if (last) write_int(&w, (uint32_t)slice->slice_bytes, 1, (uint32_t)config->slice_size);
    write_bytes(&w, slice->data, slice->slice_bytes);
    int written = finish_packet(config, &w);
    assert(written == bytes);
    return written;
}

int chunk_write_ack_packet(const chunk_wire_config_t *config, const chunk_ack_packet_t *ack,
                           uint8_t *buffer, int buffer_size)
{
    check_config(config);
    assert(ack && buffer);
    assert(ack->num_slices >= 1 && ack->num_slices <= config->max_slices);

    int bytes = chunk_ack_packet_size(config, ack->num_slices);
    if (bytes > buffer_size) return -1;
    memset(buffer, 0, (size_t)bytes);
    bit_writer_t w = {buffer, 32};
    write_int(&w, CHUNK_PACKET_ACK, 0, 1);
    write_bits(&w, ack->chunk_id, 16);
    write_int(&w, (uint32_t)ack->num_slices, 1, (uint32_t)config->max_slices);
    for (int i = 0; i < ack->num_slices; i++) {
        assert(ack->acked[i] <= 1);
        write_bits(&w, ack->acked[i], 1);
    }
    int written = finish_packet(config, &w);
    assert(written == bytes);
    return written;
}

/* ---- bit reader: every read is checked against the datagram's length ---- */

typedef struct bit_reader_t {
    const uint8_t *buffer;
    long bit;        /* next stream bit to read */
    long total_bits; /* 8 * datagram bytes */
} bit_reader_t;

static chunk_read_result_t read_bits(bit_reader_t *r, int n, uint32_t *value)
{
    assert(n >= 0 && n <= 32);
    if (r->total_bits - r->bit < n) return CHUNK_READ_TRUNCATED;
    uint32_t v = 0;
    for (int i = 0; i < n; i++, r->bit++)
        v |= (uint32_t)((r->buffer[r->bit >> 3] >> (r->bit & 7)) & 1u) << i;
    *value = v;
    return CHUNK_READ_OK;
}

static chunk_read_result_t read_int(bit_reader_t *r, uint32_t min, uint32_t max, uint32_t *value)
{
    uint32_t raw;
    chunk_read_result_t result = read_bits(r, chunk_bits_required(min, max), &raw);
    if (result != CHUNK_READ_OK) return result;
    /* raw <= max - min cannot overflow and catches the values a field's
     * width can hold beyond the range (when max - min + 1 is not a power of 2). */
    if (raw > max - min) return CHUNK_READ_BAD_VALUE;
    *value = raw + min;
    return CHUNK_READ_OK;
}

/* The padding bits of the current byte, if any, must all be zero. The byte
 * exists: a reader is only mid-byte after reading part of it. */
static chunk_read_result_t read_align(bit_reader_t *r)
{
    int pad = (int)((8 - (r->bit & 7)) & 7);
    uint32_t bits;
    chunk_read_result_t result = read_bits(r, pad, &bits);
    if (result != CHUNK_READ_OK) return result;
    return bits ? CHUNK_READ_BAD_PADDING : CHUNK_READ_OK;
}

/* Aligns, then returns a pointer to n bytes inside the datagram. */
static chunk_read_result_t read_bytes(bit_reader_t *r, int n, const uint8_t **data)
{
    chunk_read_result_t result = read_align(r);
    if (result != CHUNK_READ_OK) return result;
    if ((r->total_bits - r->bit) / 8 < n) return CHUNK_READ_TRUNCATED;
    *data = r->buffer + (r->bit >> 3);
    r->bit += 8L * n;
    return CHUNK_READ_OK;
}

/* The end check, then nothing: every valid packet ends there. */
static chunk_read_result_t read_end(bit_reader_t *r)
{
    chunk_read_result_t result = read_align(r);
    if (result != CHUNK_READ_OK) return result;
    uint32_t check;
    result = read_bits(r, 32, &check);
    if (result != CHUNK_READ_OK) return result;
    if (check != CHUNK_END_CHECK) return CHUNK_READ_BAD_END_CHECK;
    if (r->bit != r->total_bits) return CHUNK_READ_TRAILING_BYTES;
    return CHUNK_READ_OK;
}

#define TRY(expr)                                     \
    do {                                              \
        chunk_read_result_t try_result_ = (expr);     \
        if (try_result_ != CHUNK_READ_OK) return try_result_; \
    } while (0)

static chunk_read_result_t read_slice(const chunk_wire_config_t *config, bit_reader_t *r,
                                      chunk_slice_packet_t *slice)
{
    uint32_t chunk_id, slice_id, num_slices, slice_bytes;
    TRY(read_bits(r, 16, &chunk_id));
    TRY(read_int(r, 0, (uint32_t)config->max_slices - 1, &slice_id));
    TRY(read_int(r, 1, (uint32_t)config->max_slices, &num_slices));
    /* Checked at once, before the slice id decides whether a size follows:
     * nothing after it would be read the way its writer meant. */
    if (slice_id >= num_slices) {
        /* Kept for the caller's log line ("slice id 40 >= num slices 32"). */
        slice->slice_id = (int)slice_id;
        slice->num_slices = (int)num_slices;
        return CHUNK_READ_SLICE_ID_RANGE;
    }
    if (slice_id == num_slices - 1)
        TRY(read_int(r, 1, (uint32_t)config->slice_size, &slice_bytes));
    else
        slice_bytes = (uint32_t)config->slice_size;
    const uint8_t *data;
    TRY(read_bytes(r, (int)slice_bytes, &data));
    TRY(read_end(r));
    slice->chunk_id = (uint16_t)chunk_id;
    slice->slice_id = (int)slice_id;
    slice->num_slices = (int)num_slices;
    slice->slice_bytes = (int)slice_bytes;
    slice->data = data;
    return CHUNK_READ_OK;
}

static chunk_read_result_t read_ack(const chunk_wire_config_t *config, bit_reader_t *r,
                                    chunk_ack_packet_t *ack)
{
    uint32_t chunk_id, num_slices;
    TRY(read_bits(r, 16, &chunk_id));
    TRY(read_int(r, 1, (uint32_t)config->max_slices, &num_slices));
    for (uint32_t i = 0; i < num_slices; i++) {
        uint32_t bit;
        TRY(read_bits(r, 1, &bit));
        ack->acked[i] = (uint8_t)bit;
    }
    TRY(read_end(r));
    ack->chunk_id = (uint16_t)chunk_id;
    ack->num_slices = (int)num_slices;
    return CHUNK_READ_OK;
}

chunk_read_result_t chunk_read_packet(const chunk_wire_config_t *config, const uint8_t *buffer,
                                      int bytes, chunk_packet_t *packet)
{
    check_config(config);
    assert(packet && bytes >= 0 && (buffer || bytes == 0));
    /* The CRC comes first, as in the original: a packet it rejects is noise,
     * and nothing in it is worth parsing. */
    if (bytes < 4) return CHUNK_READ_TRUNCATED;
    uint32_t sent_crc = (uint32_t)buffer[0] | (uint32_t)buffer[1] << 8 | (uint32_t)buffer[2] << 16 |
                        (uint32_t)buffer[3] << 24;
    if (sent_crc != chunk_packet_crc(config->protocol_id, buffer, bytes)) return CHUNK_READ_BAD_CRC;

    bit_reader_t r = {buffer, 32, 8L * bytes};
    uint32_t type;
    TRY(read_int(&r, 0, 1, &type));
    packet->type = (int)type;
    if (type == CHUNK_PACKET_SLICE) return read_slice(config, &r, &packet->u.slice);
    return read_ack(config, &r, &packet->u.ack);
}

const char *chunk_read_result_name(chunk_read_result_t result)
{
    switch (result) {
    case CHUNK_READ_OK: return "ok";
    case CHUNK_READ_TRUNCATED: return "truncated";
    case CHUNK_READ_BAD_CRC: return "bad crc";
    case CHUNK_READ_BAD_PADDING: return "bad padding";
    case CHUNK_READ_BAD_END_CHECK: return "bad end check";
    case CHUNK_READ_BAD_VALUE: return "value out of range";
    case CHUNK_READ_SLICE_ID_RANGE: return "slice id >= num slices";
    case CHUNK_READ_TRAILING_BYTES: return "trailing bytes";
    case CHUNK_READ_RESULT_COUNT: break;
    }
    return "unknown";
}
