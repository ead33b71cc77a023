/*
 * endpoint.c: the reliable endpoint (docs/reliable-endpoints.md): sends
 * packets with the acknowledgement header, fragments those above the
 * threshold, reassembles the peer's, acknowledges, measures RTT and decides
 * loss. Time comes in, datagrams go out through the config's callback.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "reliable.h"

#define EMPTY 0xFFFFFFFFu

static const char *const counter_names[RL_COUNTER_COUNT] = {
    "packets sent", "packets received", "packets acked", "packets stale", "packets invalid",
    "packets too large to send", "packets too large to receive", "fragments sent", "fragments received",
    "fragments invalid", "packets duplicate", "packets lost", "fragments duplicate", "reassemblies abandoned",
};

const char *rl_counter_name(int counter)
{
    return counter >= 0 && counter < RL_COUNTER_COUNT ? counter_names[counter] : "?";
}

void rl_default_config(rl_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->max_packet_size = 16 * 1024;
    c->fragment_above = 1024;
    c->fragment_size = 1024;
    c->max_fragments = 16;
    c->sent_window = 256;
    c->received_window = 256;
    c->reassembly_window = 64;
    c->rtt_smoothing = 0.0025;
    c->stop_acking_at = -1;
}

/* A window of the most recent sequences: slot s % size holds s or EMPTY.
 * `next` is one past the most recent sequence entered. */
typedef struct window_t {
    uint32_t *seq;
    int size;
    uint16_t next;
} window_t;

typedef struct sent_t {
    double time;
    uint8_t acked, lost;
} sent_t;

typedef struct reassembly_t {
    int num_fragments, received;
    int header_bytes;          /* canonical header of the whole packet, once fragment 0 is in */
    rl_header_t header;
    int last_bytes;            /* data bytes of the last fragment, once in */
    uint8_t have[RL_MAX_FRAGMENTS];
    uint8_t *data;             /* RL_MAX_HEADER_BYTES + num_fragments * fragment_size */
} reassembly_t;

struct rl_endpoint_t {
    rl_config_t config;
    double now;
    uint16_t sequence;         /* next to send */
    uint16_t unresolved;       /* oldest sent sequence whose loss is not decided */
    window_t sent, received, reassembly;
    sent_t *sent_data;
    reassembly_t *reassembly_data;
    uint8_t *buffer;           /* one datagram being sent */
    int frozen;                /* fault: ack state frozen */
    uint16_t frozen_ack;
    uint32_t frozen_bits;
    double rtt, last_rtt;
    uint64_t counters[RL_COUNTER_COUNT];
};

static int window_init(window_t *w, int size)
{
    w->seq = malloc((size_t)size * sizeof *w->seq);
    if (!w->seq) return -1;
    for (int i = 0; i < size; i++) w->seq[i] = EMPTY;
    w->size = size;
    w->next = 0;
    return 0;
}

static int window_has(const window_t *w, uint16_t s) { return w->seq[s % w->size] == s; }

/* Older than the window can hold: too old to enter. */
static int window_stale(const window_t *w, uint16_t s)
{
    return rl_sequence_greater((uint16_t)(w->next - w->size), s);
}

/* Moves `next` past s when s is newer, emptying the slots it passes over;
 * on_clear(slot) is told of each slot that held a sequence. */
static void window_advance(window_t *w, uint16_t s, void (*on_clear)(void *, int), void *ctx)
{
    if (!rl_sequence_greater((uint16_t)(s + 1), w->next)) return;
    uint16_t count = (uint16_t)(s + 1 - w->next);
    int all = count >= w->size;
    for (int i = 0; i < (all ? w->size : count); i++) {
        int slot = all ? i : (uint16_t)(w->next + i) % w->size;
        if (w->seq[slot] != EMPTY && on_clear) on_clear(ctx, slot);
        w->seq[slot] = EMPTY;
    }
    w->next = (uint16_t)(s + 1);
}

static void reassembly_clear(void *ctx, int slot)
{
    rl_endpoint_t *e = ctx;
    reassembly_t *r = &e->reassembly_data[slot];
    if (r->data) {
        e->counters[RL_COUNTER_REASSEMBLIES_ABANDONED]++;
        free(r->data);
        r->data = NULL;
    }
}

rl_endpoint_t *rl_endpoint_create(const rl_config_t *config, double now)
{
    assert(config && config->send);
    const rl_config_t *c = config;
    if (c->max_packet_size < 1 || c->fragment_size < 1 || c->fragment_above < 0 || c->max_fragments < 1 ||
        c->max_fragments > RL_MAX_FRAGMENTS || c->sent_window < 1 || c->received_window < 1 ||
        c->reassembly_window < 1 || c->sent_window > 32768 || c->received_window > 32768 ||
        c->reassembly_window > 32768)
        return NULL;
    rl_endpoint_t *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->config = *c;
    e->now = now;
    e->sequence = e->unresolved = c->first_sequence;
    int fail = window_init(&e->sent, c->sent_window) | window_init(&e->received, c->received_window) |
               window_init(&e->reassembly, c->reassembly_window);
    e->sent.next = c->first_sequence;
    e->sent_data = calloc((size_t)c->sent_window, sizeof *e->sent_data);
    e->reassembly_data = calloc((size_t)c->reassembly_window, sizeof *e->reassembly_data);
    e->buffer = malloc((size_t)c->max_packet_size + RL_MAX_HEADER_BYTES + RL_FRAGMENT_HEADER_BYTES);
    if (fail || !e->sent_data || !e->reassembly_data || !e->buffer) {
        rl_endpoint_destroy(e);
        return NULL;
    }
    return e;
}

void rl_endpoint_destroy(rl_endpoint_t *e)
{
    if (!e) return;
    if (e->reassembly_data)
        for (int i = 0; i < e->config.reassembly_window; i++) free(e->reassembly_data[i].data);
    free(e->reassembly_data);
    free(e->sent_data);
    free(e->sent.seq);
    free(e->received.seq);
    free(e->reassembly.seq);
    free(e->buffer);
    free(e);
}

void rl_endpoint_update(rl_endpoint_t *e, double now)
{
    assert(now >= e->now);
    e->now = now;
}

uint16_t rl_endpoint_next_sequence(const rl_endpoint_t *e) { return e->sequence; }
double rl_endpoint_rtt(const rl_endpoint_t *e) { return e->rtt; }
double rl_endpoint_last_rtt(const rl_endpoint_t *e) { return e->last_rtt; }
const uint64_t *rl_endpoint_counters(const rl_endpoint_t *e) { return e->counters; }

static void live_ack_state(const rl_endpoint_t *e, uint16_t *ack, uint32_t *bits)
{
    *ack = (uint16_t)(e->received.next - 1);
    *bits = 0;
    for (int i = 0; i < 32; i++)
        if (window_has(&e->received, (uint16_t)(*ack - i))) *bits |= 1u << i;
}

void rl_endpoint_ack_state(const rl_endpoint_t *e, uint16_t *ack, uint32_t *bits)
{
    if (e->frozen) {
        *ack = e->frozen_ack;
        *bits = e->frozen_bits;
    } else {
        live_ack_state(e, ack, bits);
    }
}

int rl_endpoint_send(rl_endpoint_t *e, const uint8_t *payload, int bytes)
{
    const rl_config_t *c = &e->config;
    assert(bytes >= 0 && (payload || bytes == 0));
    int num_fragments = bytes > c->fragment_above ? (bytes + c->fragment_size - 1) / c->fragment_size : 0;
    if (bytes > c->max_packet_size || num_fragments > c->max_fragments) {
        e->counters[RL_COUNTER_PACKETS_TOO_LARGE_TO_SEND]++;
        return -1;
    }
    if (!e->frozen && c->stop_acking_at >= 0 && e->now >= c->stop_acking_at) {
        live_ack_state(e, &e->frozen_ack, &e->frozen_bits);
        e->frozen = 1;
    }
    rl_header_t h;
    h.sequence = e->sequence++;
    rl_endpoint_ack_state(e, &h.ack, &h.ack_bits);

    /* The packet falls out of the sent window after sent_window newer ones. */
    window_advance(&e->sent, h.sequence, NULL, NULL);
    int slot = h.sequence % e->sent.size;
    e->sent.seq[slot] = h.sequence;
    e->sent_data[slot] = (sent_t){e->now, 0, 0};

    uint8_t header[RL_MAX_HEADER_BYTES];
    int header_bytes = rl_header_write(header, &h);
    if (!num_fragments) {
        memcpy(e->buffer, header, (size_t)header_bytes);
        if (bytes) memcpy(e->buffer + header_bytes, payload, (size_t)bytes);
        c->send(c->context, h.sequence, e->buffer, header_bytes + bytes);
    } else {
        for (int id = 0; id < num_fragments; id++) {
            uint8_t *p = e->buffer;
            *p++ = 1;
            *p++ = (uint8_t)h.sequence;
            *p++ = (uint8_t)(h.sequence >> 8);
            *p++ = (uint8_t)id;
            *p++ = (uint8_t)(num_fragments - 1);
            if (id == 0) {
                memcpy(p, header, (size_t)header_bytes);
                p += header_bytes;
            }
            int offset = id * c->fragment_size;
            int n = bytes - offset < c->fragment_size ? bytes - offset : c->fragment_size;
            memcpy(p, payload + offset, (size_t)n);
            p += n;
            c->send(c->context, h.sequence, e->buffer, (int)(p - e->buffer));
            e->counters[RL_COUNTER_FRAGMENTS_SENT]++;
        }
    }
    e->counters[RL_COUNTER_PACKETS_SENT]++;
    return h.sequence;
}

/* The peer's ack state from a packet we took: acks, RTT, and the packets its
 * window has passed without acking (lost). */
static void process_acks(rl_endpoint_t *e, uint16_t ack, uint32_t bits)
{
    const rl_config_t *c = &e->config;
    for (int i = 0; i < 32; i++) {
        if (!((bits >> i) & 1)) continue;
        uint16_t s = (uint16_t)(ack - i);
        if (!window_has(&e->sent, s)) continue;
        sent_t *d = &e->sent_data[s % e->sent.size];
        if (d->acked) continue;
        if (d->lost) {
            /* Declared lost, then acknowledged by a header sent earlier and
             * taken later (reordered): it arrived after all. */
            d->lost = 0;
            e->counters[RL_COUNTER_PACKETS_LOST]--;
        }
        d->acked = 1;
        double rtt = e->now - d->time;
        e->last_rtt = rtt;
        if ((e->rtt == 0 && rtt > 0) || (e->rtt - rtt < 1e-8 && rtt - e->rtt < 1e-8)) e->rtt = rtt;
        else e->rtt += (rtt - e->rtt) * c->rtt_smoothing;
        e->counters[RL_COUNTER_PACKETS_ACKED]++;
        if (c->acked) c->acked(c->context, s, rtt);
    }
    /* Loss: ack - s of 32 or more (and ack not behind s). Only sequences we
     * sent, oldest first. A header with no bit set has received nothing in
     * its window (the initial ack of 65535): it says nothing about loss. */
    while (bits && e->unresolved != e->sequence) {
        uint16_t s = e->unresolved;
        uint16_t d = (uint16_t)(ack - s);
        if (d < 32 || d >= 32768) break;
        if (window_has(&e->sent, s)) {
            sent_t *x = &e->sent_data[s % e->sent.size];
            if (!x->acked && !x->lost) {
                x->lost = 1;
                e->counters[RL_COUNTER_PACKETS_LOST]++;
                if (c->lost) c->lost(c->context, s);
            }
        }
        e->unresolved++;
    }
}

static void receive_regular(rl_endpoint_t *e, const uint8_t *packet, int bytes)
{
    const rl_config_t *c = &e->config;
    rl_header_t h;
    e->counters[RL_COUNTER_PACKETS_RECEIVED]++;
    int n = rl_header_read(packet, bytes, &h, NULL);
    if (n < 0) {
        e->counters[RL_COUNTER_PACKETS_INVALID]++;
        return;
    }
    if (bytes - n > c->max_packet_size) {
        e->counters[RL_COUNTER_PACKETS_TOO_LARGE_TO_RECEIVE]++;
        return;
    }
    if (window_stale(&e->received, h.sequence)) {
        e->counters[RL_COUNTER_PACKETS_STALE]++;
        return;
    }
    if (window_has(&e->received, h.sequence)) {
        e->counters[RL_COUNTER_PACKETS_DUPLICATE]++;
        return;
    }
    if (c->process && !c->process(c->context, h.sequence, packet + n, bytes - n)) return;
    window_advance(&e->received, h.sequence, NULL, NULL);
    e->received.seq[h.sequence % e->received.size] = h.sequence;
    window_advance(&e->reassembly, h.sequence, reassembly_clear, e);
    process_acks(e, h.ack, h.ack_bits);
}

static void receive_fragment(rl_endpoint_t *e, const uint8_t *packet, int bytes, rl_read_result_t *result)
{
    const rl_config_t *c = &e->config;
    rl_fragment_t f;
    rl_read_result_t r = rl_fragment_read(packet, bytes, c->max_fragments, c->fragment_size, &f);
    if (r != RL_READ_OK) {
        e->counters[RL_COUNTER_FRAGMENTS_INVALID]++;
        *result = r;
        return;
    }
    if (window_has(&e->received, f.sequence)) return; /* the packet is in already */
    window_t *w = &e->reassembly;
    int slot = f.sequence % w->size;
    reassembly_t *ra = &e->reassembly_data[slot];
    if (!window_has(w, f.sequence)) {
        if (rl_sequence_greater((uint16_t)(f.sequence + 1), w->next)) {
            window_advance(w, f.sequence, reassembly_clear, e);
        } else if (window_stale(w, f.sequence)) {
            e->counters[RL_COUNTER_FRAGMENTS_INVALID]++;
            return;
        }
        if (w->seq[slot] != EMPTY) reassembly_clear(e, slot);
        free(ra->data);
        memset(ra, 0, sizeof *ra);
        ra->data = malloc(RL_MAX_HEADER_BYTES + (size_t)f.num_fragments * (size_t)c->fragment_size);
        if (!ra->data) return;
        ra->num_fragments = f.num_fragments;
        w->seq[slot] = f.sequence;
        /* The library's receiver counts the packet as newest from its first
         * fragment: its ack moves there before the packet is complete. */
        window_advance(&e->received, f.sequence, NULL, NULL);
    }
    if (f.num_fragments != ra->num_fragments) {
        e->counters[RL_COUNTER_FRAGMENTS_INVALID]++;
        return;
    }
    if (ra->have[f.fragment_id]) {
        e->counters[RL_COUNTER_FRAGMENTS_DUPLICATE]++;
        return;
    }
    ra->have[f.fragment_id] = 1;
    ra->received++;
    if (f.has_header) {
        ra->header = f.header;
        ra->header_bytes = f.header_bytes - RL_FRAGMENT_HEADER_BYTES;
    }
    if (f.fragment_id == f.num_fragments - 1) ra->last_bytes = f.data_bytes;
    memcpy(ra->data + RL_MAX_HEADER_BYTES + (size_t)f.fragment_id * (size_t)c->fragment_size,
           packet + f.header_bytes, (size_t)f.data_bytes);
    if (ra->received == ra->num_fragments) {
        int total = (ra->num_fragments - 1) * c->fragment_size + ra->last_bytes;
        uint8_t *start = ra->data + RL_MAX_HEADER_BYTES - ra->header_bytes;
        rl_header_write(start, &ra->header);
        uint8_t *data = ra->data;
        ra->data = NULL;
        w->seq[slot] = EMPTY;
        receive_regular(e, start, ra->header_bytes + total);
        free(data);
    }
    e->counters[RL_COUNTER_FRAGMENTS_RECEIVED]++;
}

rl_read_result_t rl_endpoint_receive(rl_endpoint_t *e, const uint8_t *packet, int bytes)
{
    assert(e && (packet || bytes == 0));
    rl_read_result_t result = RL_READ_OK;
    if (bytes < 1) return RL_READ_SHORT;
    if (bytes > e->config.max_packet_size + RL_MAX_HEADER_BYTES + RL_FRAGMENT_HEADER_BYTES) {
        e->counters[RL_COUNTER_PACKETS_TOO_LARGE_TO_RECEIVE]++;
        return RL_READ_OK;
    }
    if (packet[0] & 1) {
        receive_fragment(e, packet, bytes, &result);
    } else {
        uint64_t invalid = e->counters[RL_COUNTER_PACKETS_INVALID];
        receive_regular(e, packet, bytes);
        if (e->counters[RL_COUNTER_PACKETS_INVALID] != invalid) result = RL_READ_SHORT;
    }
    return result;
}
