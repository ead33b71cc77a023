/*
 * receiver.c: the receiving end of the chunk protocol (docs/protocol.md,
 * "Receiver"). Pure: time comes in as an argument, acks leave
 * through the config's send callback.
 *
 * Decisions the spec leaves open, taken here:
 * - A completed chunk moves into the ready queue at once and the expected
 *   chunk id advances then; while the ready queue is full, slices of the
 *   expected chunk are discarded (counted "not ready"). With the default
 *   queue of 1 this is exactly "pop, then the expected id advances".
 * - When an ack is due: at an update, when (a) since the last ack was sent a
 *   slice arrived that belongs to the chunk being received (new or
 *   duplicate) or is a stale slice of the chunk completed last, and (b) at
 *   least ack_interval has passed since the last ack, and (c) the datagram
 *   bytes of the slices in (a) add up to at least the ack's size, so that no
 *   peer gets more bytes back than it sent (docs/protocol.md, "Hostile input", 6:
 *   15-byte slices claiming 256 slices do not earn a 44-byte ack each; real
 *   slices are 1 KiB, so in practice only an attacker waits on it). Case (a) with a slice
 *   of the chunk being received sends its bitfield; otherwise the all-ones
 *   ack of the completed chunk (if both, the chunk being received wins: its
 *   slices prove the sender saw the final ack). Slices that are ignored
 *   (wrong chunk, mismatched count, not ready, invalid) never make an ack
 *   due, so a flood of them gets nothing back.
 * - The final all-ones ack goes out at once from receive_packet and counts
 *   as the last ack for the interval.
 * - "Stale" is any chunk id older than the expected one (wrap-aware); only the
 *   chunk completed last, with its slice count, is answered.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "util.h"

struct chunk_receiver_t {
    chunk_receiver_config_t config;
    int max_chunk_bytes;

    /* the chunk being received */
    uint16_t chunk_id; /* expected */
    int receiving;
    int num_slices;
    int num_received_slices;
    int chunk_size; /* known once the last slice is in */
    uint8_t *received; /* max_slices */
    uint8_t *data;     /* max_chunk_bytes */

    /* the chunk completed last, answered with all-ones acks */
    int have_completed;
    uint16_t completed_chunk_id;
    int completed_num_slices;

    /* ready queue: ready[(ready_head + i) % length], i < ready_count */
    uint8_t *ready_data; /* ready_queue_length * max_chunk_bytes */
    int *ready_size;
    uint16_t *ready_id;
    int ready_head, ready_count;

    /* acks */
    int current_slice_since_ack; /* a slice of the chunk being received arrived */
    int stale_slice_since_ack;   /* a slice of the completed chunk arrived */
    long bytes_since_ack;        /* datagram bytes of those slices */
    int acked_once;
    double last_ack_time;

    uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    chunk_packet_t parsed; /* too big for comfort on the stack */
    chunk_ack_packet_t ack;
    uint64_t counters[CHUNK_RECEIVER_COUNTER_COUNT];
    uint64_t invalid[CHUNK_READ_RESULT_COUNT];
};

void chunk_receiver_default_config(chunk_receiver_config_t *config)
{
    assert(config);
    memset(config, 0, sizeof *config);
    chunk_wire_default_config(&config->wire);
    config->ack_interval = 0.1;
    config->first_chunk_id = 0;
    config->ready_queue_length = 1;
}

chunk_receiver_t *chunk_receiver_create(const chunk_receiver_config_t *config)
{
    assert(config);
    assert(config->wire.slice_size >= 1 && config->wire.slice_size <= CHUNK_SLICE_SIZE_LIMIT);
    assert(config->wire.max_slices >= 1 && config->wire.max_slices <= CHUNK_MAX_SLICES_LIMIT);
    assert(config->ack_interval >= 0);
    assert(config->ready_queue_length >= 1);
    assert(config->send);

    chunk_receiver_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->config = *config;
    r->max_chunk_bytes = config->wire.slice_size * config->wire.max_slices;
    size_t length = (size_t)config->ready_queue_length;
    r->received = calloc((size_t)config->wire.max_slices, 1);
    r->data = malloc((size_t)r->max_chunk_bytes);
    r->ready_data = malloc(length * (size_t)r->max_chunk_bytes);
    r->ready_size = calloc(length, sizeof *r->ready_size);
    r->ready_id = calloc(length, sizeof *r->ready_id);
    if (!r->received || !r->data || !r->ready_data || !r->ready_size || !r->ready_id) {
        chunk_receiver_destroy(r);
        return NULL;
    }
    r->chunk_id = config->first_chunk_id;
    return r;
}

void chunk_receiver_destroy(chunk_receiver_t *receiver)
{
    if (!receiver) return;
    free(receiver->received);
    free(receiver->data);
    free(receiver->ready_data);
    free(receiver->ready_size);
    free(receiver->ready_id);
    free(receiver);
}

static void send_ack(chunk_receiver_t *r, double time, uint16_t chunk_id, int num_slices, const uint8_t *bits)
{
    chunk_ack_packet_t *ack = &r->ack;
    ack->chunk_id = chunk_id;
    ack->num_slices = num_slices;
    if (bits)
        memcpy(ack->acked, bits, (size_t)num_slices);
    else
        memset(ack->acked, 1, (size_t)num_slices);
    int bytes = chunk_write_ack_packet(&r->config.wire, ack, r->packet, sizeof r->packet);
    assert(bytes > 0);
    r->config.send(r->config.context, r->packet, bytes);
    r->counters[CHUNK_RECEIVER_COUNTER_ACKS_SENT]++;
    r->counters[CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT] += (uint64_t)bytes;
    r->acked_once = 1;
    r->last_ack_time = time;
    r->current_slice_since_ack = 0;
    r->stale_slice_since_ack = 0;
    r->bytes_since_ack = 0;
}

static void complete_chunk(chunk_receiver_t *r, double time)
{
    int length = r->config.ready_queue_length;
    assert(r->ready_count < length); /* slices are not accepted while it is full */
    int slot = (r->ready_head + r->ready_count) % length;
    memcpy(r->ready_data + (size_t)slot * (size_t)r->max_chunk_bytes, r->data, (size_t)r->chunk_size);
    r->ready_size[slot] = r->chunk_size;
    r->ready_id[slot] = r->chunk_id;
    r->ready_count++;
    r->counters[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED]++;
    cs_log_message(CS_LOG_LEVEL_DEBUG, "receiver: chunk %u completed, %d bytes", r->chunk_id, r->chunk_size);

    r->have_completed = 1;
    r->completed_chunk_id = r->chunk_id;
    r->completed_num_slices = r->num_slices;
    r->receiving = 0;
    r->chunk_id++;
    /* The final ack, at once: the sender can stop without waiting. */
    send_ack(r, time, r->completed_chunk_id, r->completed_num_slices, NULL);
}

static void process_slice(chunk_receiver_t *r, double time, const chunk_slice_packet_t *slice, int bytes)
{
    int slice_size = r->config.wire.slice_size;
    r->counters[CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED]++;
    if (slice->chunk_id != r->chunk_id) {
        if (chunk_id_newer(r->chunk_id, slice->chunk_id)) {
            r->counters[CHUNK_RECEIVER_COUNTER_SLICES_STALE]++;
            if (r->have_completed && slice->chunk_id == r->completed_chunk_id &&
                slice->num_slices == r->completed_num_slices) {
                r->stale_slice_since_ack = 1;
                r->bytes_since_ack += bytes;
                cs_log_message(CS_LOG_LEVEL_DEBUG, "receiver: slice %d of completed chunk %u: all-ones ack due",
                          slice->slice_id, slice->chunk_id);
            } else {
                cs_log_message(CS_LOG_LEVEL_DEBUG, "ignored slice packet: chunk %u is older than expected chunk %u",
                          slice->chunk_id, r->chunk_id);
            }
        } else {
            r->counters[CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK]++;
            cs_log_message(CS_LOG_LEVEL_DEBUG, "ignored slice packet: chunk %u, expected chunk %u", slice->chunk_id,
                      r->chunk_id);
        }
        return;
    }
    if (r->ready_count == r->config.ready_queue_length) {
        r->counters[CHUNK_RECEIVER_COUNTER_SLICES_NOT_READY]++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "ignored slice packet: chunk %u, ready queue full (%d chunks not popped)",
                  slice->chunk_id, r->ready_count);
        return;
    }
    if (r->receiving && slice->num_slices != r->num_slices) {
        r->counters[CHUNK_RECEIVER_COUNTER_SLICES_NUM_MISMATCH]++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "ignored slice packet: num slices %d, chunk %u has %d", slice->num_slices,
                  slice->chunk_id, r->num_slices);
        return;
    }
    /* The codec already guarantees both, but this is the line that copies
     * wire data into the buffer, so it checks for itself. */
    int last = slice->slice_id == slice->num_slices - 1;
    if (slice->num_slices > r->config.wire.max_slices || slice->slice_id >= slice->num_slices ||
        (last ? slice->slice_bytes < 1 || slice->slice_bytes > slice_size : slice->slice_bytes != slice_size)) {
        r->counters[CHUNK_RECEIVER_COUNTER_SLICES_BAD_SIZE]++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "ignored slice packet: slice %d of %d carries %d bytes", slice->slice_id,
                  slice->num_slices, slice->slice_bytes);
        return;
    }
    if (!r->receiving) {
        r->receiving = 1;
        r->num_slices = slice->num_slices;
        r->num_received_slices = 0;
        r->chunk_size = 0;
        memset(r->received, 0, (size_t)r->config.wire.max_slices);
        cs_log_message(CS_LOG_LEVEL_DEBUG, "receiver: chunk %u started, %d slices", r->chunk_id, r->num_slices);
    }
    r->current_slice_since_ack = 1;
    r->bytes_since_ack += bytes;
    if (r->received[slice->slice_id]) {
        r->counters[CHUNK_RECEIVER_COUNTER_SLICES_DUPLICATE]++;
        return;
    }
    memcpy(r->data + (size_t)slice->slice_id * (size_t)slice_size, slice->data, (size_t)slice->slice_bytes);
    r->received[slice->slice_id] = 1;
    r->num_received_slices++;
    r->counters[CHUNK_RECEIVER_COUNTER_SLICES_ACCEPTED]++;
    if (last) r->chunk_size = (r->num_slices - 1) * slice_size + slice->slice_bytes;
    if (r->num_received_slices == r->num_slices) complete_chunk(r, time);
}

void chunk_receiver_receive_packet(chunk_receiver_t *receiver, double time, const uint8_t *packet, int bytes)
{
    chunk_receiver_t *r = receiver;
    assert(r && packet && bytes >= 0);
    chunk_packet_t *p = &r->parsed;
    chunk_read_result_t result = chunk_read_packet(&r->config.wire, packet, bytes, p);
    if (result != CHUNK_READ_OK) {
        r->counters[CHUNK_RECEIVER_COUNTER_PACKETS_INVALID]++;
        r->invalid[result]++;
        if (result == CHUNK_READ_SLICE_ID_RANGE)
            cs_log_message(CS_LOG_LEVEL_DEBUG, "receiver: ignored slice packet: slice id %d >= num slices %d",
                      p->u.slice.slice_id, p->u.slice.num_slices);
        else
            cs_log_message(CS_LOG_LEVEL_DEBUG, "receiver: dropped %d-byte packet: %s", bytes, chunk_read_result_name(result));
        return;
    }
    if (p->type != CHUNK_PACKET_SLICE) {
        r->counters[CHUNK_RECEIVER_COUNTER_PACKETS_WRONG_TYPE]++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "receiver: ignored ack packet (chunk %u): a receiver takes only slices",
                  p->u.ack.chunk_id);
        return;
    }
    process_slice(r, time, &p->u.slice, bytes);
}

void chunk_receiver_update(chunk_receiver_t *receiver, double time)
{
    chunk_receiver_t *r = receiver;
    assert(r);
    if (!r->current_slice_since_ack && !r->stale_slice_since_ack) return;
    if (r->acked_once && time - r->last_ack_time < r->config.ack_interval) return;
    if (r->current_slice_since_ack && r->receiving) {
        if (r->bytes_since_ack >= chunk_ack_packet_size(&r->config.wire, r->num_slices))
            send_ack(r, time, r->chunk_id, r->num_slices, r->received);
    } else if (r->stale_slice_since_ack) {
        if (r->bytes_since_ack >= chunk_ack_packet_size(&r->config.wire, r->completed_num_slices))
            send_ack(r, time, r->completed_chunk_id, r->completed_num_slices, NULL);
    } else {
        r->current_slice_since_ack = 0;
    }
}

int chunk_receiver_pop_chunk(chunk_receiver_t *receiver, uint8_t *out, int out_size, uint16_t *chunk_id)
{
    chunk_receiver_t *r = receiver;
    assert(r && out);
    if (r->ready_count == 0) return 0;
    int slot = r->ready_head;
    int size = r->ready_size[slot];
    assert(out_size >= size);
    (void)out_size;
    memcpy(out, r->ready_data + (size_t)slot * (size_t)r->max_chunk_bytes, (size_t)size);
    if (chunk_id) *chunk_id = r->ready_id[slot];
    r->ready_head = (r->ready_head + 1) % r->config.ready_queue_length;
    r->ready_count--;
    r->counters[CHUNK_RECEIVER_COUNTER_CHUNKS_POPPED]++;
    return size;
}

const uint64_t *chunk_receiver_counters(const chunk_receiver_t *receiver)
{
    assert(receiver);
    return receiver->counters;
}

const uint64_t *chunk_receiver_invalid_counters(const chunk_receiver_t *receiver)
{
    assert(receiver);
    return receiver->invalid;
}

const char *chunk_receiver_counter_name(int counter)
{
    static const char *const names[CHUNK_RECEIVER_COUNTER_COUNT] = {
        "slices received", "slices accepted", "slices duplicate", "slices stale",  "slices wrong chunk",
        "slices num mismatch", "slices bad size", "slices not ready", "chunks completed", "chunks popped",
        "acks sent", "ack bytes sent", "packets invalid", "packets wrong type",
    };
    if (counter < 0 || counter >= CHUNK_RECEIVER_COUNTER_COUNT) return "unknown";
    return names[counter];
}
