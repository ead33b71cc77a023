/*
 * wire.c: the chunk protocol's wire codec (docs/protocol.md).
 *
 * The bit packing, CRC and end check are protocol2's (protocol2.h). The
 * writer computes a packet's exact length before writing anything, so it
 * never writes past the buffer; the reader checks every field against the
 * datagram's length before reading it, so no input makes it read outside the
 * buffer.
 */
#include <assert.h>
#include <string.h>

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

int chunk_id_newer(uint16_t a, uint16_t b)
{
    return (a > b && a - b <= 32768) || (a < b && b - a > 32768);
}

static int bytes_for_bits(int bits) { return (bits + 7) / 8; }

int chunk_slice_packet_size(const chunk_wire_config_t *config, int slice_id, int num_slices, int slice_bytes)
{
    check_config(config);
    int id_bits = p2_bits_required(0, (uint32_t)config->max_slices - 1);
    int bits = 32 + 1 + 16 + 2 * id_bits;
    if (slice_id == num_slices - 1) bits += p2_bits_required(1, (uint32_t)config->slice_size);
    return bytes_for_bits(bits) + slice_bytes + 4;
}

int chunk_ack_packet_size(const chunk_wire_config_t *config, int num_slices)
{
    check_config(config);
    int bits = 32 + 1 + 16 + p2_bits_required(1, (uint32_t)config->max_slices) + num_slices;
    return bytes_for_bits(bits) + 4;
}

/* Starts a packet of bytes bytes: clears it, writes the type and chunk id. */
static void begin_packet(p2_writer_t *w, uint8_t *buffer, int bytes, int type, uint16_t chunk_id)
{
    p2_writer_begin(w, buffer, bytes);
    p2_write_int(w, (uint32_t)type, 0, 1);
    p2_write_bits(w, chunk_id, 16);
}

/* Ends it with the end check and the CRC; returns its length. */
static int end_packet(const chunk_wire_config_t *config, p2_writer_t *w)
{
    p2_write_check(w);
    return p2_write_finish(w, config->protocol_id);
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
    p2_writer_t w;
    begin_packet(&w, buffer, bytes, CHUNK_PACKET_SLICE, slice->chunk_id);
    p2_write_int(&w, (uint32_t)slice->slice_id, 0, (uint32_t)config->max_slices - 1);
    p2_write_int(&w, (uint32_t)slice->num_slices, 1, (uint32_t)config->max_slices);
    if (last) p2_write_int(&w, (uint32_t)slice->slice_bytes, 1, (uint32_t)config->slice_size);
    p2_write_bytes(&w, slice->data, slice->slice_bytes);
    return end_packet(config, &w);
}

int chunk_write_ack_packet(const chunk_wire_config_t *config, const chunk_ack_packet_t *ack,
                           uint8_t *buffer, int buffer_size)
{
    check_config(config);
    assert(ack && buffer);
    assert(ack->num_slices >= 1 && ack->num_slices <= config->max_slices);

    int bytes = chunk_ack_packet_size(config, ack->num_slices);
    if (bytes > buffer_size) return -1;
    p2_writer_t w;
    begin_packet(&w, buffer, bytes, CHUNK_PACKET_ACK, ack->chunk_id);
    p2_write_int(&w, (uint32_t)ack->num_slices, 1, (uint32_t)config->max_slices);
    for (int i = 0; i < ack->num_slices; i++) {
        assert(ack->acked[i] <= 1);
        p2_write_bits(&w, ack->acked[i], 1);
    }
    return end_packet(config, &w);
}

/* ---- reader ---- */

/* The chunk reason for a protocol2 reader's reason. */
static chunk_read_result_t from_p2(p2_read_result_t result)
{
    switch (result) {
    case P2_READ_OK: return CHUNK_READ_OK;
    case P2_READ_TRUNCATED: return CHUNK_READ_TRUNCATED;
    case P2_READ_BAD_CRC: return CHUNK_READ_BAD_CRC;
    case P2_READ_BAD_PADDING: return CHUNK_READ_BAD_PADDING;
    case P2_READ_BAD_END_CHECK: return CHUNK_READ_BAD_END_CHECK;
    case P2_READ_BAD_VALUE: return CHUNK_READ_BAD_VALUE;
    case P2_READ_TRAILING_BYTES: return CHUNK_READ_TRAILING_BYTES;
    }
    assert(0);
    return CHUNK_READ_TRUNCATED;
}

#define TRY(expr)                                     \
    do {                                              \
        p2_read_result_t try_result_ = (expr);        \
        if (try_result_ != P2_READ_OK) return from_p2(try_result_); \
    } while (0)

static chunk_read_result_t read_slice(const chunk_wire_config_t *config, p2_reader_t *r,
                                      chunk_slice_packet_t *slice)
{
    uint32_t chunk_id, slice_id, num_slices, slice_bytes;
    TRY(p2_read_bits(r, 16, &chunk_id));
    TRY(p2_read_int(r, 0, (uint32_t)config->max_slices - 1, &slice_id));
    TRY(p2_read_int(r, 1, (uint32_t)config->max_slices, &num_slices));
    /* Checked at once, before the slice id decides whether a size follows:
     * nothing after it would be read the way its writer meant. */
    if (slice_id >= num_slices) {
        /* Kept for the caller's log line ("slice id 40 >= num slices 32"). */
        slice->slice_id = (int)slice_id;
        slice->num_slices = (int)num_slices;
        return CHUNK_READ_SLICE_ID_RANGE;
    }
    if (slice_id == num_slices - 1)
        TRY(p2_read_int(r, 1, (uint32_t)config->slice_size, &slice_bytes));
    else
        slice_bytes = (uint32_t)config->slice_size;
    const uint8_t *data;
    TRY(p2_read_bytes(r, (int)slice_bytes, &data));
    TRY(p2_read_check(r));
    TRY(p2_read_end(r));
    slice->chunk_id = (uint16_t)chunk_id;
    slice->slice_id = (int)slice_id;
    slice->num_slices = (int)num_slices;
    slice->slice_bytes = (int)slice_bytes;
    slice->data = data;
    return CHUNK_READ_OK;
}

static chunk_read_result_t read_ack(const chunk_wire_config_t *config, p2_reader_t *r,
                                    chunk_ack_packet_t *ack)
{
    uint32_t chunk_id, num_slices;
    TRY(p2_read_bits(r, 16, &chunk_id));
    TRY(p2_read_int(r, 1, (uint32_t)config->max_slices, &num_slices));
    for (uint32_t i = 0; i < num_slices; i++) {
        uint32_t bit;
        TRY(p2_read_bits(r, 1, &bit));
        ack->acked[i] = (uint8_t)bit;
    }
    TRY(p2_read_check(r));
    TRY(p2_read_end(r));
    ack->chunk_id = (uint16_t)chunk_id;
    ack->num_slices = (int)num_slices;
    return CHUNK_READ_OK;
}

chunk_read_result_t chunk_read_packet(const chunk_wire_config_t *config, const uint8_t *buffer,
                                      int bytes, chunk_packet_t *packet)
{
    check_config(config);
    assert(packet && bytes >= 0 && (buffer || bytes == 0));
    p2_reader_t r;
    TRY(p2_reader_begin(&r, config->protocol_id, buffer, bytes));
    uint32_t type;
    TRY(p2_read_int(&r, 0, 1, &type));
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
