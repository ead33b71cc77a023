/*
 * sender.c: the sending end of the chunk protocol (docs/protocol.md,
 * "Sender"). Pure: time comes in as an argument, packets leave through the
 * config's send callback.
 *
 * Decisions the spec leaves open, taken here:
 * - The chunk in flight stays in its queue slot; the queue holds it plus up
 *   to queue_capacity chunks waiting behind it. All slots are allocated at
 *   create.
 * - One update visits each slice at most once (one lap of the round robin),
 *   so a zero resend delay with an unlimited rate cannot loop forever.
 * - A slice still inside its resend delay stops the walk: the cursor only
 *   moves past a slice that is sent or skipped as acked. Slices go out in
 *   cyclic order, so the slice at the cursor is the one sent longest ago and
 *   no other slice could be resent earlier anyway.
 * - The bandwidth accumulator keeps at most one packet's cost after an
 *   update. Leftover smaller than the next slice carries over as the spec
 *   says; budget that went unused because nothing was due (every slice
 *   waiting on its resend delay) is not banked, or it would come out later
 *   as a burst that a router queue drops. While idle it stays at 0.
 * - The initial burst ignores the budget (that is its point) and does not
 *   charge the accumulator.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "util.h"

struct chunk_sender_t {
    chunk_sender_config_t config;
    int max_chunk_bytes;
    double max_slice_cost; /* the largest slice packet plus IP/UDP overhead */

    /* queue: slots[(head + i) % slot_count], i < queued; the head is the
     * chunk in flight while sending */
    int slot_count;
    int head, queued;
    uint8_t *slot_data; /* slot_count * max_chunk_bytes */
    int *slot_size;

    /* the chunk in flight */
    int sending;
    uint16_t chunk_id; /* in flight, or next when idle */
    int chunk_size;
    int num_slices;
    int num_acked_slices;
    int current_slice_id;
    uint8_t *acked;          /* max_slices */
    double *time_last_sent;  /* max_slices; < 0 means never sent */

    double rtt;
    double accumulator;
    double last_update_time; /* < 0 before the first update */
    double burst_wait_until; /* no paced sending before this time */

    uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    chunk_packet_t parsed; /* the last datagram read; too big for comfort on the stack */
    uint64_t counters[CHUNK_SENDER_COUNTER_COUNT];
    uint64_t invalid[CHUNK_READ_RESULT_COUNT];
};

void chunk_sender_default_config(chunk_sender_config_t *config)
{
    assert(config);
    memset(config, 0, sizeof *config);
    chunk_wire_default_config(&config->wire);
    config->rate_bytes_per_second = 125000; /* 1 Mbit/s, the article's fastest example */
    config->resend_delay = 0.1;
    config->rtt = 0;
    config->initial_burst_bytes = 0;
    config->first_chunk_id = 0;
    config->queue_capacity = 16;
}

chunk_sender_t *chunk_sender_create(const chunk_sender_config_t *config)
{
    assert(config);
    assert(config->wire.slice_size >= 1 && config->wire.slice_size <= CHUNK_SLICE_SIZE_LIMIT);
    assert(config->wire.max_slices >= 1 && config->wire.max_slices <= CHUNK_MAX_SLICES_LIMIT);
    assert(config->queue_capacity >= 0);
    assert(config->resend_delay >= 0);
    assert(config->initial_burst_bytes >= 0);
    assert(config->send);

    chunk_sender_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->config = *config;
    s->max_chunk_bytes = config->wire.slice_size * config->wire.max_slices;
    int last = chunk_slice_packet_size(&config->wire, 0, 1, config->wire.slice_size);
    int middle = chunk_slice_packet_size(&config->wire, 0, 2, config->wire.slice_size);
    s->max_slice_cost = (last > middle ? last : middle) + CS_IP_UDP_OVERHEAD;
    s->slot_count = config->queue_capacity + 1;
    s->slot_data = malloc((size_t)s->slot_count * (size_t)s->max_chunk_bytes);
    s->slot_size = calloc((size_t)s->slot_count, sizeof *s->slot_size);
    s->acked = calloc((size_t)config->wire.max_slices, 1);
    s->time_last_sent = calloc((size_t)config->wire.max_slices, sizeof *s->time_last_sent);
    if (!s->slot_data || !s->slot_size || !s->acked || !s->time_last_sent) {
        chunk_sender_destroy(s);
        return NULL;
    }
    s->chunk_id = config->first_chunk_id;
    s->rtt = config->rtt;
    s->last_update_time = -1;
    return s;
}

void chunk_sender_destroy(chunk_sender_t *sender)
{
    if (!sender) return;
    free(sender->slot_data);
    free(sender->slot_size);
    free(sender->acked);
    free(sender->time_last_sent);
    free(sender);
}

int chunk_sender_queue_chunk(chunk_sender_t *sender, const uint8_t *data, int size)
{
    assert(sender && data);
    assert(size >= 1 && size <= sender->max_chunk_bytes);
    if (sender->queued == sender->slot_count) return -1;
    int slot = (sender->head + sender->queued) % sender->slot_count;
    memcpy(sender->slot_data + (size_t)slot * (size_t)sender->max_chunk_bytes, data, (size_t)size);
    sender->slot_size[slot] = size;
    sender->queued++;
    sender->counters[CHUNK_SENDER_COUNTER_CHUNKS_QUEUED]++;
    return 0;
}

static double resend_delay(const chunk_sender_t *s)
{
    if (s->config.fault_no_resend_delay) return 0;
    return s->rtt > 0 ? 1.25 * s->rtt : s->config.resend_delay;
}

static int slice_bytes(const chunk_sender_t *s, int slice_id)
{
    if (slice_id < s->num_slices - 1) return s->config.wire.slice_size;
    return s->chunk_size - (s->num_slices - 1) * s->config.wire.slice_size;
}

/* Writes slice slice_id of the chunk in flight into s->packet; returns its length. */
static int write_slice(chunk_sender_t *s, int slice_id)
{
    const uint8_t *chunk = s->slot_data + (size_t)s->head * (size_t)s->max_chunk_bytes;
    chunk_slice_packet_t slice = {s->chunk_id, slice_id, s->num_slices, slice_bytes(s, slice_id),
                                  chunk + (size_t)slice_id * (size_t)s->config.wire.slice_size};
    int bytes = chunk_write_slice_packet(&s->config.wire, &slice, s->packet, sizeof s->packet);
    assert(bytes > 0);
    return bytes;
}

static void send_slice(chunk_sender_t *s, double time, int slice_id, int bytes)
{
    s->config.send(s->config.context, s->packet, bytes);
    if (s->time_last_sent[slice_id] >= 0) s->counters[CHUNK_SENDER_COUNTER_SLICES_RESENT]++;
    s->time_last_sent[slice_id] = time;
    s->counters[CHUNK_SENDER_COUNTER_SLICES_SENT]++;
    s->counters[CHUNK_SENDER_COUNTER_SLICE_BYTES_SENT] += (uint64_t)bytes;
}

static void start_next_chunk(chunk_sender_t *s, double time)
{
    s->sending = 1;
    s->chunk_size = s->slot_size[s->head];
    s->num_slices = (s->chunk_size + s->config.wire.slice_size - 1) / s->config.wire.slice_size;
    s->num_acked_slices = 0;
    s->current_slice_id = 0;
    memset(s->acked, 0, (size_t)s->config.wire.max_slices);
    for (int i = 0; i < s->config.wire.max_slices; i++) s->time_last_sent[i] = -1;
    s->burst_wait_until = time;
    cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: chunk %u started, %d bytes in %d slices", s->chunk_id,
              s->chunk_size, s->num_slices);
    if (s->config.initial_burst_bytes > 0 && s->chunk_size <= s->config.initial_burst_bytes) {
        for (int i = 0; i < s->num_slices && s->sending; i++) send_slice(s, time, i, write_slice(s, i));
        s->burst_wait_until = time + 0.1;
    }
}

void chunk_sender_update(chunk_sender_t *sender, double time)
{
    chunk_sender_t *s = sender;
    assert(s);
    assert(s->last_update_time < 0 || time >= s->last_update_time);
    double dt = s->last_update_time < 0 ? 0 : time - s->last_update_time;
    s->last_update_time = time;

    if (!s->sending && s->queued > 0) start_next_chunk(s, time);
    if (!s->sending) {
        s->accumulator = 0;
        return;
    }
    int limited = s->config.rate_bytes_per_second > 0;
    if (limited) s->accumulator += s->config.rate_bytes_per_second * dt;

    if (time >= s->burst_wait_until) {
        double delay = resend_delay(s);
        for (int visited = 0; visited < s->num_slices; visited++) {
            int id = s->current_slice_id;
            if (!s->acked[id]) {
                if (s->time_last_sent[id] >= 0 && time - s->time_last_sent[id] < delay) break;
                int bytes = chunk_slice_packet_size(&s->config.wire, id, s->num_slices, slice_bytes(s, id));
                double cost = bytes + CS_IP_UDP_OVERHEAD;
                if (limited && s->accumulator < cost) break;
                send_slice(s, time, id, write_slice(s, id));
                if (limited) s->accumulator -= cost;
                /* The send callback may have delivered the final ack (a
                 * sender wired straight to a receiver): the chunk is gone. */
                if (!s->sending) break;
            }
            s->current_slice_id = (id + 1) % s->num_slices;
        }
    }
    if (s->accumulator > s->max_slice_cost) s->accumulator = s->max_slice_cost;
}

static void complete_chunk(chunk_sender_t *s)
{
    cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: chunk %u completed", s->chunk_id);
    s->counters[CHUNK_SENDER_COUNTER_CHUNKS_COMPLETED]++;
    s->sending = 0;
    s->chunk_id++;
    s->head = (s->head + 1) % s->slot_count;
    s->queued--;
}

void chunk_sender_receive_packet(chunk_sender_t *sender, double time, const uint8_t *packet, int bytes)
{
    chunk_sender_t *s = sender;
    assert(s && packet && bytes >= 0);
    (void)time;
    chunk_packet_t *p = &s->parsed;
    chunk_read_result_t result = chunk_read_packet(&s->config.wire, packet, bytes, p);
    if (result != CHUNK_READ_OK) {
        s->counters[CHUNK_SENDER_COUNTER_PACKETS_INVALID]++;
        s->invalid[result]++;
        if (result == CHUNK_READ_SLICE_ID_RANGE)
            cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: ignored slice packet: slice id %d >= num slices %d",
                      p->u.slice.slice_id, p->u.slice.num_slices);
        else
            cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: dropped %d-byte packet: %s", bytes, chunk_read_result_name(result));
        return;
    }
    if (p->type != CHUNK_PACKET_ACK) {
        s->counters[CHUNK_SENDER_COUNTER_PACKETS_WRONG_TYPE]++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: ignored slice packet (chunk %u): a sender takes only acks",
                  p->u.slice.chunk_id);
        return;
    }
    const chunk_ack_packet_t *ack = &p->u.ack;
    if (s->config.fault_ignore_acks) {
        s->counters[CHUNK_SENDER_COUNTER_ACKS_IGNORED]++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: ignored ack for chunk %u: fault_ignore_acks", ack->chunk_id);
        return;
    }
    if (!s->sending || ack->chunk_id != s->chunk_id || ack->num_slices != s->num_slices) {
        s->counters[CHUNK_SENDER_COUNTER_ACKS_IGNORED]++;
        if (!s->sending)
            cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: ignored ack for chunk %u: no chunk in flight", ack->chunk_id);
        else
            cs_log_message(CS_LOG_LEVEL_DEBUG, "sender: ignored ack for chunk %u with %d slices: sending chunk %u with %d",
                      ack->chunk_id, ack->num_slices, s->chunk_id, s->num_slices);
        return;
    }
    s->counters[CHUNK_SENDER_COUNTER_ACKS_RECEIVED]++;
    /* Fuse: bits only ever go from 0 to 1, so a stale or reordered ack
     * cannot undo a later one. */
    for (int i = 0; i < s->num_slices; i++) {
        if (ack->acked[i] && !s->acked[i]) {
            s->acked[i] = 1;
            s->num_acked_slices++;
            s->counters[CHUNK_SENDER_COUNTER_SLICES_ACKED]++;
        }
    }
    if (s->num_acked_slices == s->num_slices) complete_chunk(s);
}

void chunk_sender_set_rtt(chunk_sender_t *sender, double rtt)
{
    assert(sender);
    sender->rtt = rtt > 0 ? rtt : 0;
}

int chunk_sender_busy(const chunk_sender_t *sender)
{
    assert(sender);
    return sender->sending || sender->queued > 0;
}

uint16_t chunk_sender_chunk_id(const chunk_sender_t *sender)
{
    assert(sender);
    return sender->chunk_id;
}

const uint64_t *chunk_sender_counters(const chunk_sender_t *sender)
{
    assert(sender);
    return sender->counters;
}

const uint64_t *chunk_sender_invalid_counters(const chunk_sender_t *sender)
{
    assert(sender);
    return sender->invalid;
}

const char *chunk_sender_counter_name(int counter)
{
    static const char *const names[CHUNK_SENDER_COUNTER_COUNT] = {
        "chunks queued",  "chunks completed", "slices sent",   "slices resent",   "slice bytes sent",
        "acks received",  "acks ignored",     "slices acked",  "packets invalid", "packets wrong type",
    };
    if (counter < 0 || counter >= CHUNK_SENDER_COUNTER_COUNT) return "unknown";
    return names[counter];
}
