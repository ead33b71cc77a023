/*
 * p2frag_sender.c: the fragmenting sender (docs/p2frag-endpoints.md). Pure:
 * time comes in as an argument, datagrams leave through the config's send
 * callback. Nothing is resent: the protocol has no acks.
 *
 * Decisions the article leaves open, taken here:
 * - A packet is split into ceil(n / 1024) fragments in fragment id order,
 *   each a datagram of its own; a test packet of at most 1024 bytes goes as
 *   one regular datagram.
 * - Packets wait in a queue (queue_capacity). The first `interleave` of
 *   them are in progress at once and send one datagram each in turn, so
 *   with interleave > 1 the fragments of several packets alternate on the
 *   wire, as a game sending more than one large packet per tick would.
 * - The budget: rate_bytes_per_second of datagram bytes accrues with time,
 *   and a datagram is sent while the accrued budget is positive (it may go
 *   negative by at most one datagram, repaid before the next). Budget unused
 *   while idle is not banked beyond one full datagram (or max_burst_bytes),
 *   so an idle sender does not come back with a burst.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "p2frag.h"

typedef struct p2frag_pending_t {
    uint16_t sequence;
    uint8_t *data;
    int bytes;
    int whole;         /* one regular datagram, not fragments */
    int num_datagrams; /* 1 when whole, else the fragment count */
    int next;          /* next datagram (fragment id) to send */
} p2frag_pending_t;

struct p2frag_sender_t {
    p2frag_sender_config_t config;
    p2frag_pending_t *queue; /* queue_capacity entries, queue[0..count) in order */
    int count;
    int cursor; /* the in-progress packet that sends next, 0..interleave-1 */
    uint16_t next_sequence;
    double budget;
    double last_time; /* < 0 before the first update */
    uint8_t datagram[P2FRAG_MAX_DATAGRAM_BYTES + 64];
    uint64_t counters[P2FRAG_SENDER_COUNTER_COUNT];
};

void p2frag_sender_default_config(p2frag_sender_config_t *config)
{
    assert(config);
    memset(config, 0, sizeof *config);
    p2frag_wire_default_config(&config->wire);
    config->interleave = 1;
    config->queue_capacity = 64;
}

p2frag_sender_t *p2frag_sender_create(const p2frag_sender_config_t *config)
{
    assert(config && config->send);
    assert(config->interleave >= 1 && config->queue_capacity >= 1);
    assert(config->wire.num_packet_types >= P2FRAG_DEFAULT_NUM_PACKET_TYPES && config->wire.num_packet_types <= 256);
    p2frag_sender_t *sender = calloc(1, sizeof *sender);
    if (!sender) return NULL;
    sender->queue = calloc((size_t)config->queue_capacity, sizeof *sender->queue);
    if (!sender->queue) {
        free(sender);
        return NULL;
    }
    sender->config = *config;
    sender->next_sequence = config->first_sequence;
    sender->last_time = -1;
    return sender;
}

void p2frag_sender_destroy(p2frag_sender_t *sender)
{
    if (!sender) return;
    for (int i = 0; i < sender->count; i++) free(sender->queue[i].data);
    free(sender->queue);
    free(sender);
}

/* Takes ownership of data (malloc'd). Returns the sequence, or -1 when full. */
static int enqueue(p2frag_sender_t *sender, uint16_t sequence, uint8_t *data, int bytes, int whole)
{
    if (sender->count == sender->config.queue_capacity) {
        free(data);
        sender->counters[P2FRAG_SENDER_COUNTER_QUEUE_FULL]++;
        return -1;
    }
    p2frag_pending_t *p = &sender->queue[sender->count++];
    p->sequence = sequence;
    p->data = data;
    p->bytes = bytes;
    p->whole = whole;
    p->num_datagrams = whole ? 1 : p2frag_fragment_count(bytes);
    p->next = 0;
    sender->counters[P2FRAG_SENDER_COUNTER_PACKETS_QUEUED]++;
    return sequence;
}

int p2frag_sender_queue_test_packet(p2frag_sender_t *sender, const p2frag_test_packet_t *packet)
{
    assert(sender && packet);
    if (sender->count == sender->config.queue_capacity) {
        sender->counters[P2FRAG_SENDER_COUNTER_QUEUE_FULL]++;
        return -1;
    }
    int bytes = p2frag_test_packet_size(&sender->config.wire, packet);
    assert(bytes <= P2FRAG_MAX_PACKET_BYTES);
    uint8_t *data = malloc((size_t)bytes);
    if (!data) return -1;
    uint16_t sequence = sender->next_sequence;
    /* Written under the sender's sequence: the caller's packet as it is when
     * its sequence already is that, else a copy (16 KiB) with it. */
    const p2frag_test_packet_t *source = packet;
    p2frag_test_packet_t *copy = NULL;
    if (packet->sequence != sequence) {
        copy = malloc(sizeof *copy);
        if (!copy) {
            free(data);
            return -1;
        }
        memcpy(copy, packet, sizeof *copy);
        copy->sequence = sequence;
        source = copy;
    }
    int written = p2frag_write_test_packet(&sender->config.wire, source, data, bytes);
    assert(written == bytes);
    (void)written;
    free(copy);
    int result = enqueue(sender, sequence, data, bytes, bytes <= P2FRAG_MAX_REGULAR_BYTES);
    if (result >= 0) sender->next_sequence++;
    return result;
}

int p2frag_sender_queue_raw_at(p2frag_sender_t *sender, uint16_t sequence, const uint8_t *data, int bytes)
{
    assert(sender && data);
    assert(bytes >= 1 && bytes <= P2FRAG_MAX_PACKET_BYTES);
    if (sender->count == sender->config.queue_capacity) {
        sender->counters[P2FRAG_SENDER_COUNTER_QUEUE_FULL]++;
        return -1;
    }
    uint8_t *copy = malloc((size_t)bytes);
    if (!copy) return -1;
    memcpy(copy, data, (size_t)bytes);
    return enqueue(sender, sequence, copy, bytes, 0);
}

int p2frag_sender_queue_raw(p2frag_sender_t *sender, const uint8_t *data, int bytes)
{
    assert(sender);
    int result = p2frag_sender_queue_raw_at(sender, sender->next_sequence, data, bytes);
    if (result >= 0) sender->next_sequence++;
    return result;
}

uint16_t p2frag_sender_next_sequence(const p2frag_sender_t *sender)
{
    assert(sender);
    return sender->next_sequence;
}

int p2frag_sender_queued(const p2frag_sender_t *sender)
{
    assert(sender);
    return sender->count;
}

int p2frag_sender_busy(const p2frag_sender_t *sender)
{
    assert(sender);
    return sender->count > 0;
}

/* Sends the next datagram of queue[index]; returns its length. */
static int send_next(p2frag_sender_t *sender, int index)
{
    p2frag_pending_t *p = &sender->queue[index];
    int bytes;
    if (p->whole) {
        sender->config.send(sender->config.context, p->data, p->bytes);
        bytes = p->bytes;
    } else {
        p2frag_fragment_t f;
        f.sequence = p->sequence;
        f.fragment_id = p->next;
        f.num_fragments = p->num_datagrams;
        f.data = p->data + (size_t)p->next * P2FRAG_FRAGMENT_SIZE;
        f.fragment_bytes = p->next == p->num_datagrams - 1 ? p->bytes - p->next * P2FRAG_FRAGMENT_SIZE
                                                          : P2FRAG_FRAGMENT_SIZE;
        bytes = p2frag_write_fragment(&sender->config.wire, &f, sender->datagram, (int)sizeof sender->datagram);
        assert(bytes > 0);
        sender->config.send(sender->config.context, sender->datagram, bytes);
        sender->counters[P2FRAG_SENDER_COUNTER_FRAGMENTS_SENT]++;
    }
    p->next++;
    sender->counters[P2FRAG_SENDER_COUNTER_DATAGRAMS_SENT]++;
    sender->counters[P2FRAG_SENDER_COUNTER_BYTES_SENT] += (uint64_t)bytes;
    return bytes;
}

void p2frag_sender_update(p2frag_sender_t *sender, double time)
{
    assert(sender);
    assert(sender->last_time < 0 || time >= sender->last_time);
    double rate = sender->config.rate_bytes_per_second;
    if (rate > 0) {
        double cap = sender->config.max_burst_bytes > 0 ? sender->config.max_burst_bytes : P2FRAG_MAX_DATAGRAM_BYTES;
        if (sender->last_time >= 0) sender->budget += (time - sender->last_time) * rate;
        else sender->budget = cap;
        if (sender->budget > cap) sender->budget = cap;
    }
    sender->last_time = time;
    while (sender->count > 0 && (rate <= 0 || sender->budget > 0)) {
        int active = sender->count < sender->config.interleave ? sender->count : sender->config.interleave;
        if (sender->cursor >= active) sender->cursor = 0;
        int index = sender->cursor;
        int bytes = send_next(sender, index);
        if (rate > 0) sender->budget -= bytes;
        p2frag_pending_t *p = &sender->queue[index];
        if (p->next == p->num_datagrams) {
            sender->counters[P2FRAG_SENDER_COUNTER_PACKETS_SENT]++;
            if (!p->whole) sender->counters[P2FRAG_SENDER_COUNTER_PACKETS_FRAGMENTED]++;
            free(p->data);
            memmove(&sender->queue[index], &sender->queue[index + 1],
                    (size_t)(sender->count - index - 1) * sizeof *sender->queue);
            sender->count--;
            /* The cursor now points at the packet after the finished one. */
        } else {
            sender->cursor++;
        }
    }
    if (sender->count == 0) sender->cursor = 0;
}

const uint64_t *p2frag_sender_counters(const p2frag_sender_t *sender)
{
    assert(sender);
    return sender->counters;
}

const char *p2frag_sender_counter_name(int counter)
{
    static const char *const names[P2FRAG_SENDER_COUNTER_COUNT] = {
        "packets queued", "packets sent", "packets fragmented", "datagrams sent",
        "fragments sent", "bytes sent", "queue full",
    };
    if (counter < 0 || counter >= P2FRAG_SENDER_COUNTER_COUNT) return "unknown";
    return names[counter];
}
