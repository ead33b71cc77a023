/*
 * p2frag_receiver.c: the reassembling receiver (docs/p2frag-endpoints.md,
 * "Receive rules"). Pure: time comes in as an argument, packets leave
 * through the config's deliver callback. It follows the rules the original
 * program meant, not its five bugs: fragments are stored from byte 9, every
 * sequence can be delivered, each fragment goes to its own place, a newer
 * sequence evicts only the packet in its own slot, and numFragments 0 is
 * malformed.
 *
 * A datagram goes through these steps, and the first that rejects it names
 * the counter:
 *   1. the codec (CRC, padding, truncation, fragment checks, a regular
 *      datagram over 1024 bytes, test packet values and end check), then a
 *      fragment claiming more than max_fragments (the receiver's own limit);
 *   2. too old: more than 256 behind the newest sequence accepted so far
 *      (wrap-aware); the newest moves only on datagrams that pass 1;
 *   3. the slot, sequence % 256: when it holds an older sequence, that packet
 *      is evicted (counted lost when unfinished) and the slot starts afresh;
 *      when it holds a newer one (exactly 256 ahead), the datagram is
 *      "superseded";
 *   4. a regular datagram is delivered unless its sequence was delivered
 *      already (or has fragments in progress); a fragment is checked against the count
 *      of earlier fragments of its sequence, dropped when already held or
 *      when its packet was delivered, and stored otherwise; the fragment that
 *      completes a packet delivers it.
 *
 * Memory: a slot's buffer is allocated for the count the first fragment
 * claims (at most max_fragments x 1024 bytes) and kept, grown when needed,
 * until the receiver is destroyed: at most 256 x 261 120 bytes (64 MiB) with
 * the default max_fragments, reached only by a peer that claims 255
 * fragments in 256 sequences; a game that sends smaller packets bounds it
 * with max_fragments.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "p2frag.h"

typedef struct p2frag_slot_t {
    int used;
    uint16_t sequence;
    int delivered;
    int num_fragments;
    int received;
    int last_bytes; /* bytes of the last fragment, once it is in */
    uint8_t have[(P2FRAG_MAX_FRAGMENTS + 7) / 8];
    uint8_t *data;
    int capacity; /* bytes allocated at data */
} p2frag_slot_t;

struct p2frag_receiver_t {
    p2frag_receiver_config_t config;
    p2frag_slot_t slots[P2FRAG_SLOTS];
    int have_newest;
    uint16_t newest;
    p2frag_test_packet_t regular; /* scratch for reading regular packets */
    uint64_t counters[P2FRAG_RECEIVER_COUNTER_COUNT];
    uint64_t invalid[P2FRAG_READ_RESULT_COUNT];
};

void p2frag_receiver_default_config(p2frag_receiver_config_t *config)
{
    assert(config);
    memset(config, 0, sizeof *config);
    p2frag_wire_default_config(&config->wire);
    config->max_fragments = P2FRAG_MAX_FRAGMENTS;
}

p2frag_receiver_t *p2frag_receiver_create(const p2frag_receiver_config_t *config)
{
    assert(config && config->deliver);
    assert(config->max_fragments >= 1 && config->max_fragments <= P2FRAG_MAX_FRAGMENTS);
    assert(config->wire.num_packet_types >= P2FRAG_DEFAULT_NUM_PACKET_TYPES && config->wire.num_packet_types <= 256);
    p2frag_receiver_t *receiver = calloc(1, sizeof *receiver);
    if (!receiver) return NULL;
    receiver->config = *config;
    return receiver;
}

void p2frag_receiver_destroy(p2frag_receiver_t *receiver)
{
    if (!receiver) return;
    for (int i = 0; i < P2FRAG_SLOTS; i++) free(receiver->slots[i].data);
    free(receiver);
}

static int has_fragment(const p2frag_slot_t *slot, int id) { return (slot->have[id >> 3] >> (id & 7)) & 1; }

static p2frag_verdict_t count(p2frag_receiver_t *receiver, int counter, p2frag_verdict_t verdict)
{
    receiver->counters[counter]++;
    return verdict;
}

/* Empties the slot for a new sequence, counting an unfinished packet lost. */
static void reset_slot(p2frag_receiver_t *receiver, p2frag_slot_t *slot, uint16_t sequence)
{
    if (slot->used && !slot->delivered) receiver->counters[P2FRAG_RECEIVER_COUNTER_PACKETS_EVICTED]++;
    slot->used = 1;
    slot->sequence = sequence;
    slot->delivered = 0;
    slot->num_fragments = 0;
    slot->received = 0;
    slot->last_bytes = 0;
    memset(slot->have, 0, sizeof slot->have);
}

static p2frag_verdict_t deliver(p2frag_receiver_t *receiver, p2frag_slot_t *slot, double time, const uint8_t *packet,
                              int bytes, int fragmented)
{
    slot->delivered = 1;
    receiver->counters[P2FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED]++;
    if (fragmented) receiver->counters[P2FRAG_RECEIVER_COUNTER_PACKETS_REASSEMBLED]++;
    receiver->config.deliver(receiver->config.context, time, slot->sequence, packet, bytes, fragmented);
    return P2FRAG_VERDICT_DELIVERED;
}

static p2frag_verdict_t receive_fragment(p2frag_receiver_t *receiver, p2frag_slot_t *slot, double time,
                                       const p2frag_fragment_t *f)
{
    if (slot->delivered) return count(receiver, P2FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE, P2FRAG_VERDICT_DUPLICATE);
    if (slot->num_fragments == 0) {
        int need = f->num_fragments * P2FRAG_FRAGMENT_SIZE;
        if (slot->capacity < need) {
            uint8_t *data = realloc(slot->data, (size_t)need);
            if (!data) return count(receiver, P2FRAG_RECEIVER_COUNTER_NO_MEMORY, P2FRAG_VERDICT_NO_MEMORY);
            slot->data = data;
            slot->capacity = need;
        }
        slot->num_fragments = f->num_fragments;
    } else if (slot->num_fragments != f->num_fragments) {
        return count(receiver, P2FRAG_RECEIVER_COUNTER_FRAGMENTS_COUNT_CONFLICT, P2FRAG_VERDICT_COUNT_CONFLICT);
    }
    if (has_fragment(slot, f->fragment_id))
        return count(receiver, P2FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE, P2FRAG_VERDICT_DUPLICATE);
    memcpy(slot->data + (size_t)f->fragment_id * P2FRAG_FRAGMENT_SIZE, f->data, (size_t)f->fragment_bytes);
    slot->have[f->fragment_id >> 3] |= (uint8_t)(1u << (f->fragment_id & 7));
    slot->received++;
    if (f->fragment_id == f->num_fragments - 1) slot->last_bytes = f->fragment_bytes;
    receiver->counters[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED]++;
    if (slot->received < slot->num_fragments) return P2FRAG_VERDICT_ACCEPTED;
    int bytes = (slot->num_fragments - 1) * P2FRAG_FRAGMENT_SIZE + slot->last_bytes;
    return deliver(receiver, slot, time, slot->data, bytes, 1);
}

p2frag_verdict_t p2frag_receiver_receive_packet(p2frag_receiver_t *receiver, double time, const uint8_t *datagram,
                                            int bytes)
{
    assert(receiver && bytes >= 0 && (datagram || bytes == 0));
    receiver->counters[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED]++;
    p2frag_packet_t packet;
    packet.regular = &receiver->regular;
    p2frag_read_result_t result = p2frag_read_packet(&receiver->config.wire, datagram, bytes, &packet);
    if (result != P2FRAG_READ_OK) {
        receiver->invalid[result]++;
        return count(receiver, P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID, P2FRAG_VERDICT_INVALID);
    }
    if (packet.type == P2FRAG_PACKET_FRAGMENT && packet.fragment.num_fragments > receiver->config.max_fragments)
        return count(receiver, P2FRAG_RECEIVER_COUNTER_FRAGMENTS_TOO_MANY, P2FRAG_VERDICT_TOO_MANY);
    uint16_t sequence = packet.sequence;
    if (receiver->have_newest && p2frag_sequence_newer(receiver->newest, sequence) &&
        (uint16_t)(receiver->newest - sequence) > P2FRAG_WINDOW)
        return count(receiver, P2FRAG_RECEIVER_COUNTER_TOO_OLD, P2FRAG_VERDICT_TOO_OLD);
    p2frag_slot_t *slot = &receiver->slots[sequence % P2FRAG_SLOTS];
    if (slot->used && slot->sequence != sequence) {
        if (p2frag_sequence_newer(slot->sequence, sequence))
            return count(receiver, P2FRAG_RECEIVER_COUNTER_SUPERSEDED, P2FRAG_VERDICT_SUPERSEDED);
        reset_slot(receiver, slot, sequence);
    } else if (!slot->used) {
        reset_slot(receiver, slot, sequence);
    }
    if (!receiver->have_newest || p2frag_sequence_newer(sequence, receiver->newest)) {
        receiver->newest = sequence;
        receiver->have_newest = 1;
    }
    if (packet.type != P2FRAG_PACKET_FRAGMENT) {
        if (slot->delivered || slot->received > 0)
            return count(receiver, P2FRAG_RECEIVER_COUNTER_REGULAR_DUPLICATE, P2FRAG_VERDICT_DUPLICATE);
        return deliver(receiver, slot, time, datagram, bytes, 0);
    }
    return receive_fragment(receiver, slot, time, &packet.fragment);
}

int p2frag_receiver_in_progress(const p2frag_receiver_t *receiver)
{
    assert(receiver);
    int n = 0;
    for (int i = 0; i < P2FRAG_SLOTS; i++) n += receiver->slots[i].used && !receiver->slots[i].delivered;
    return n;
}

const uint64_t *p2frag_receiver_counters(const p2frag_receiver_t *receiver)
{
    assert(receiver);
    return receiver->counters;
}

const uint64_t *p2frag_receiver_invalid_counters(const p2frag_receiver_t *receiver)
{
    assert(receiver);
    return receiver->invalid;
}

const char *p2frag_receiver_counter_name(int counter)
{
    static const char *const names[P2FRAG_RECEIVER_COUNTER_COUNT] = {
        "datagrams received", "datagrams invalid", "too old", "superseded",
        "fragments too many", "fragments count conflict", "fragments duplicate", "fragments late",
        "fragments accepted", "regular duplicate", "no memory", "packets delivered",
        "packets reassembled", "packets evicted",
    };
    if (counter < 0 || counter >= P2FRAG_RECEIVER_COUNTER_COUNT) return "unknown";
    return names[counter];
}

const char *p2frag_verdict_name(p2frag_verdict_t verdict)
{
    static const char *const names[P2FRAG_VERDICT_COUNT] = {
        "invalid", "too old", "superseded", "too many fragments", "count conflict",
        "duplicate", "accepted", "delivered", "no memory",
    };
    if ((int)verdict < 0 || verdict >= P2FRAG_VERDICT_COUNT) return "unknown";
    return names[verdict];
}
