/*
 * One end of a yojimbo connection: its channels (docs/yojimbo-endpoints.md,
 * "Channels"). A reliable-ordered channel keeps every message until a packet
 * holding it is acked, resending it at most every message_resend_time; a
 * block message waits at the head of its channel and goes out one fragment a
 * packet, each fragment resent after fragment_resend_time until acked; the
 * receiver hands messages over in id order. An unreliable-unordered channel
 * sends each message once, in the next packet it fits.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "yojimbo.h"

#define PACKET_HEADER_BITS 16   /* budgets as the library reckons them */
#define CHANNEL_HEADER_BITS 32
#define MESSAGE_HEADER_BITS 32
#define FRAGMENT_HEADER_BITS 64
#define GIVE_UP_BITS 32

typedef struct send_entry_t {
    int used;
    yojimbo_message_t message;
    int measured_bits;
    double time_last_sent;
} send_entry_t;

typedef struct sent_packet_t {
    int used;
    uint16_t sequence;
    int block, fragment;
    uint16_t block_id;
    int num_ids;
    uint16_t *ids;
} sent_packet_t;

typedef struct channel_t {
    const yojimbo_channel_config_t *config;
    int index, error;
    send_entry_t *send;    /* ro: by id % size; uu: a ring */
    yojimbo_message_t *recv;
    int *recv_used;
    sent_packet_t *sent;
    uint16_t *sent_ids;
    uint16_t send_id, oldest_unacked, receive_id, receive_sequence;
    int uu_head, uu_count, uu_recv_head, uu_recv_count;
    uint16_t uu_sent_count;
    /* the block being sent */
    int send_active, send_fragments, send_acked;
    uint16_t send_block_id;
    uint8_t *acked_fragment;
    double *fragment_time;
    /* the block being received */
    int recv_active, recv_fragments, recv_count, recv_type, recv_size;
    uint16_t recv_block_id, recv_block_sequence;
    uint8_t *received_fragment, *recv_data;
} channel_t;

struct yojimbo_connection_t {
    yojimbo_config_t config;
    channel_t channel[YOJIMBO_MAX_CHANNELS];
    double now;
    int error;
    yojimbo_event_fn *event;
    void *context;
    uint64_t counters[YOJIMBO_COUNTER_COUNT];
};

const char *yojimbo_counter_name(int counter)
{
    static const char *const names[] = {"messages sent", "messages received", "packets written", "packets read",
                                        "packets invalid", "messages resent", "fragments sent", "fragments resent",
                                        "fragments received", "blocks received", "acks"};
    return counter >= 0 && counter < YOJIMBO_COUNTER_COUNT ? names[counter] : "unknown";
}

static int sequence_greater(uint16_t a, uint16_t b)
{
    return ((a > b) && (a - b <= 32768)) || ((a < b) && (b - a > 32768));
}

static void emit(yojimbo_connection_t *c, yojimbo_event_kind_t kind, int channel, uint16_t id, int type, int fragment,
                 int num_fragments, uint16_t sequence, int size)
{
    if (!c->event) return;
    yojimbo_event_t e = {kind, channel, id, type, fragment, num_fragments, sequence, size};
    c->event(c->context, &e);
}

static int channel_init(channel_t *ch, const yojimbo_channel_config_t *config, int index)
{
    ch->config = config;
    ch->index = index;
    ch->send = calloc(YOJIMBO_QUEUE_SIZE, sizeof *ch->send);
    ch->recv = calloc(YOJIMBO_QUEUE_SIZE, sizeof *ch->recv);
    ch->recv_used = calloc(YOJIMBO_QUEUE_SIZE, sizeof *ch->recv_used);
    if (!ch->send || !ch->recv || !ch->recv_used) return -1;
    if (config->type != YOJIMBO_RELIABLE_ORDERED) return 0;
    int fragments = yojimbo_max_fragments(config);
    ch->sent = calloc(YOJIMBO_QUEUE_SIZE, sizeof *ch->sent);
    ch->sent_ids = calloc((size_t)YOJIMBO_QUEUE_SIZE * (size_t)config->max_messages_per_packet, sizeof *ch->sent_ids);
    ch->acked_fragment = calloc((size_t)fragments, 1);
    ch->received_fragment = calloc((size_t)fragments, 1);
    ch->fragment_time = calloc((size_t)fragments, sizeof *ch->fragment_time);
    ch->recv_data = malloc((size_t)config->max_block_size);
    if (!ch->sent || !ch->sent_ids || !ch->acked_fragment || !ch->received_fragment || !ch->fragment_time ||
        !ch->recv_data)
        return -1;
    for (int i = 0; i < YOJIMBO_QUEUE_SIZE; i++)
        ch->sent[i].ids = &ch->sent_ids[(size_t)i * (size_t)config->max_messages_per_packet];
    return 0;
}

static void channel_free(channel_t *ch)
{
    if (ch->send)
        for (int i = 0; i < YOJIMBO_QUEUE_SIZE; i++) free(ch->send[i].message.block);
    if (ch->recv)
        for (int i = 0; i < YOJIMBO_QUEUE_SIZE; i++) free(ch->recv[i].block);
    free(ch->send);
    free(ch->recv);
    free(ch->recv_used);
    free(ch->sent);
    free(ch->sent_ids);
    free(ch->acked_fragment);
    free(ch->received_fragment);
    free(ch->fragment_time);
    free(ch->recv_data);
}

yojimbo_connection_t *yojimbo_connection_create(const yojimbo_config_t *config, double now, yojimbo_event_fn *event,
                                                void *context)
{
    if (config->num_channels < 1 || config->num_channels > YOJIMBO_MAX_CHANNELS || config->num_message_types < 1 ||
        config->max_packet_size < 64)
        return NULL;
    yojimbo_connection_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->config = *config;
    c->now = now;
    c->event = event;
    c->context = context;
    for (int i = 0; i < config->num_channels; i++) {
        const yojimbo_channel_config_t *cc = &c->config.channel[i];
        if (cc->max_messages_per_packet < 1 || cc->block_fragment_size < 1 || cc->max_block_size < 1 ||
            channel_init(&c->channel[i], cc, i) != 0) {
            yojimbo_connection_destroy(c);
            return NULL;
        }
    }
    return c;
}

void yojimbo_connection_destroy(yojimbo_connection_t *c)
{
    if (!c) return;
    for (int i = 0; i < c->config.num_channels; i++) channel_free(&c->channel[i]);
    free(c);
}

void yojimbo_connection_advance_time(yojimbo_connection_t *c, double now) { c->now = now; }

int yojimbo_connection_error(const yojimbo_connection_t *c) { return c->error; }

const uint64_t *yojimbo_connection_counters(const yojimbo_connection_t *c) { return c->counters; }

int yojimbo_connection_pending(const yojimbo_connection_t *c, int channel)
{
    const channel_t *ch = &c->channel[channel];
    if (ch->config->type == YOJIMBO_RELIABLE_ORDERED) return ch->oldest_unacked != ch->send_id;
    return ch->uu_count > 0;
}

static int copy_message(yojimbo_message_t *to, const yojimbo_message_t *from)
{
    *to = *from;
    to->block = NULL;
    if (!yojimbo_is_block_message(from->type)) {
        to->block_size = 0;
        return 0;
    }
    to->block = malloc((size_t)from->block_size);
    if (!to->block) return -1;
    memcpy(to->block, from->block, (size_t)from->block_size);
    return 0;
}

int yojimbo_connection_send(yojimbo_connection_t *c, int channel, const yojimbo_message_t *message)
{
    if (c->error || channel < 0 || channel >= c->config.num_channels) return -1;
    channel_t *ch = &c->channel[channel];
    int block = yojimbo_is_block_message(message->type);
    int bits = yojimbo_message_body_bits(message);
    if (message->type < 0 || message->type >= c->config.num_message_types ||
        (block && (message->block_size < 1 || message->block_size > ch->config->max_block_size)) ||
        (!block && bits > c->config.max_packet_size * 8)) {
        c->error = 1;
        return -1;
    }
    send_entry_t *e;
    int id;
    if (ch->config->type == YOJIMBO_RELIABLE_ORDERED) {
        e = &ch->send[ch->send_id % YOJIMBO_QUEUE_SIZE];
        id = ch->send_id;
    } else {
        e = ch->uu_count < YOJIMBO_QUEUE_SIZE ? &ch->send[(ch->uu_head + ch->uu_count) % YOJIMBO_QUEUE_SIZE] : NULL;
        id = ch->uu_sent_count;
    }
    if (!e || e->used || copy_message(&e->message, message) != 0) {
        c->error = 1;
        return -1;
    }
    e->used = 1;
    e->message.id = (uint16_t)id;
    e->measured_bits = bits;
    e->time_last_sent = -1.0;
    if (ch->config->type == YOJIMBO_RELIABLE_ORDERED) ch->send_id++;
    else ch->uu_count++, ch->uu_sent_count++;
    c->counters[YOJIMBO_COUNTER_MESSAGES_SENT]++;
    return id;
}

/* ---- building a packet ---- */

/* Bits serialize_sequence_relative takes for current after previous. */
static int relative_bits(uint16_t previous, uint16_t current)
{
    uint8_t scratch[8];
    yojimbo_writer_t w;
    yojimbo_writer_init(&w, scratch, sizeof scratch);
    yojimbo_write_sequence_relative(&w, previous, current);
    return w.bits;
}

/* The messages of a reliable-ordered channel that go into this packet, as
 * the library picks them: from the oldest unacked on, those due for a
 * (re)send that fit, stopping at a block message. Returns the bits used. */
static int pick_messages(yojimbo_connection_t *c, channel_t *ch, int available, yojimbo_entry_t *entry,
                         yojimbo_message_t *out)
{
    int type_bits = cs_bits_required(0, (uint32_t)c->config.num_message_types - 1);
    int used = MESSAGE_HEADER_BITS, give_up = 0, n = 0;
    uint16_t previous = 0;
    for (int i = 0; i < YOJIMBO_QUEUE_SIZE; i++) {
        if (available - used < GIVE_UP_BITS || give_up > YOJIMBO_QUEUE_SIZE) break;
        uint16_t id = (uint16_t)(ch->oldest_unacked + i);
        send_entry_t *e = &ch->send[id % YOJIMBO_QUEUE_SIZE];
        if (!e->used || e->message.id != id) continue;
        if (yojimbo_is_block_message(e->message.type)) break;
        if (e->time_last_sent + ch->config->message_resend_time <= c->now && available >= e->measured_bits) {
            int bits = e->measured_bits + type_bits + (n == 0 ? 16 : relative_bits(previous, id));
            if (used + bits > available) {
                give_up++;
                continue;
            }
            used += bits;
            out[n++] = e->message;
            previous = id;
            if (e->time_last_sent >= 0) c->counters[YOJIMBO_COUNTER_MESSAGES_RESENT]++;
            e->time_last_sent = c->now;
        }
        if (n == ch->config->max_messages_per_packet) break;
    }
    entry->num_messages = n;
    entry->messages = out;
    return n ? used : 0;
}

/* The next fragment of the block at the head of the channel that is due. */
static int pick_fragment(yojimbo_connection_t *c, channel_t *ch, int available, yojimbo_entry_t *entry)
{
    const yojimbo_channel_config_t *cc = ch->config;
    if (cc->block_fragment_size * 8 > available) return 0;
    send_entry_t *e = &ch->send[ch->oldest_unacked % YOJIMBO_QUEUE_SIZE];
    const yojimbo_message_t *m = &e->message;
    if (!ch->send_active) {
        ch->send_active = 1;
        ch->send_block_id = m->id;
        ch->send_fragments = (m->block_size + cc->block_fragment_size - 1) / cc->block_fragment_size;
        ch->send_acked = 0;
        memset(ch->acked_fragment, 0, (size_t)yojimbo_max_fragments(cc));
        for (int i = 0; i < yojimbo_max_fragments(cc); i++) ch->fragment_time[i] = -1.0;
    }
    int id = -1;
    for (int i = 0; i < ch->send_fragments && id < 0; i++)
        if (!ch->acked_fragment[i] && ch->fragment_time[i] + cc->fragment_resend_time < c->now) id = i;
    if (id < 0) return 0;
    int bytes = cc->block_fragment_size;
    if (id == ch->send_fragments - 1 && m->block_size % cc->block_fragment_size) bytes = m->block_size % cc->block_fragment_size;
    if (ch->fragment_time[id] >= 0) c->counters[YOJIMBO_COUNTER_FRAGMENTS_RESENT]++;
    c->counters[YOJIMBO_COUNTER_FRAGMENTS_SENT]++;
    ch->fragment_time[id] = c->now;
    entry->block = 1;
    yojimbo_fragment_t *f = &entry->fragment;
    f->message_id = m->id;
    f->num_fragments = ch->send_fragments;
    f->fragment_id = id;
    f->fragment_size = bytes;
    f->data = m->block + (size_t)id * (size_t)cc->block_fragment_size;
    f->message = *m;
    int bits = FRAGMENT_HEADER_BITS + bytes * 8;
    if (id == 0) bits += e->measured_bits + cs_bits_required(0, (uint32_t)c->config.num_message_types - 1);
    return bits;
}

/* An unreliable-unordered channel: messages off the queue while they fit;
 * one that does not fit this packet is dropped, as the library does. */
static int pick_unreliable(yojimbo_connection_t *c, channel_t *ch, int available, yojimbo_entry_t *entry,
                           yojimbo_message_t *out)
{
    int type_bits = cs_bits_required(0, (uint32_t)c->config.num_message_types - 1);
    int used = MESSAGE_HEADER_BITS, n = 0;
    while (ch->uu_count > 0 && available - used >= GIVE_UP_BITS && n < ch->config->max_messages_per_packet) {
        send_entry_t *e = &ch->send[ch->uu_head];
        ch->uu_head = (ch->uu_head + 1) % YOJIMBO_QUEUE_SIZE;
        ch->uu_count--;
        e->used = 0;
        int bits = type_bits + e->measured_bits;
        if (yojimbo_is_block_message(e->message.type))
            bits += cs_bits_required(1, (uint32_t)ch->config->max_block_size) + 7 + e->message.block_size * 8;
        if (used + bits > available) {
            free(e->message.block);
            e->message.block = NULL;
            continue;
        }
        used += bits;
        out[n++] = e->message; /* the block is freed after the packet is written */
        e->message.block = NULL;
    }
    entry->num_messages = n;
    entry->messages = out;
    return n ? used : 0;
}

static void record_sent(channel_t *ch, uint16_t sequence, const yojimbo_entry_t *entry)
{
    sent_packet_t *p = &ch->sent[sequence % YOJIMBO_QUEUE_SIZE];
    p->used = 1;
    p->sequence = sequence;
    p->block = entry->block;
    p->num_ids = 0;
    if (entry->block) {
        p->block_id = entry->fragment.message_id;
        p->fragment = entry->fragment.fragment_id;
        return;
    }
    for (int i = 0; i < entry->num_messages; i++) p->ids[p->num_ids++] = entry->messages[i].id;
}

static void emit_sent(yojimbo_connection_t *c, const yojimbo_entry_t *e, uint16_t sequence)
{
    if (e->block) {
        const yojimbo_fragment_t *f = &e->fragment;
        emit(c, YOJIMBO_EVENT_FRAGMENT_SENT, e->channel, f->message_id, f->message.type, f->fragment_id,
             f->num_fragments, sequence, f->message.block_size);
        return;
    }
    for (int i = 0; i < e->num_messages; i++) {
        const yojimbo_message_t *m = &e->messages[i];
        int uu = c->config.channel[e->channel].type == YOJIMBO_UNRELIABLE_UNORDERED;
        emit(c, YOJIMBO_EVENT_MESSAGE_SENT, e->channel, m->id, m->type, 0, 0, sequence,
             uu && m->block ? m->block_size : yojimbo_message_body_bits(m));
    }
}

int yojimbo_connection_generate(yojimbo_connection_t *c, uint16_t sequence, uint8_t *out, int max)
{
    static yojimbo_packet_t packet;
    static yojimbo_message_t picked[YOJIMBO_MAX_CHANNELS][YOJIMBO_MAX_MESSAGES_LIMIT];
    memset(&packet, 0, sizeof packet);
    int budget = (max < c->config.max_packet_size ? max : c->config.max_packet_size) & ~7;
    int available = budget * 8 - PACKET_HEADER_BITS;
    for (int i = 0; i < c->config.num_channels && !c->error; i++) {
        channel_t *ch = &c->channel[i];
        yojimbo_entry_t *e = &packet.entry[packet.num_entries];
        memset(e, 0, sizeof *e);
        e->channel = i;
        int bits = 0;
        if (ch->config->type == YOJIMBO_UNRELIABLE_UNORDERED) bits = pick_unreliable(c, ch, available, e, picked[i]);
        else if (ch->oldest_unacked == ch->send_id) bits = 0;
        else if (yojimbo_is_block_message(ch->send[ch->oldest_unacked % YOJIMBO_QUEUE_SIZE].message.type) &&
                 ch->send[ch->oldest_unacked % YOJIMBO_QUEUE_SIZE].used)
            bits = pick_fragment(c, ch, available, e);
        else bits = pick_messages(c, ch, available, e, picked[i]);
        if (bits <= 0) continue;
        available -= CHANNEL_HEADER_BITS + bits;
        if (ch->config->type == YOJIMBO_RELIABLE_ORDERED) record_sent(ch, sequence, e);
        packet.num_entries++;
    }
    int bytes = yojimbo_write_packet(&c->config, &packet, out, budget);
    for (int i = 0; i < packet.num_entries; i++) {
        yojimbo_entry_t *e = &packet.entry[i];
        if (bytes > 0) emit_sent(c, e, sequence);
        if (c->config.channel[e->channel].type == YOJIMBO_UNRELIABLE_UNORDERED)
            for (int k = 0; k < e->num_messages; k++) free(e->messages[k].block);
    }
    if (bytes <= 0) {
        c->error = 1;
        return -1;
    }
    c->counters[YOJIMBO_COUNTER_PACKETS_WRITTEN]++;
    return bytes;
}

/* ---- acks ---- */

static void remove_sent_message(yojimbo_connection_t *c, channel_t *ch, uint16_t id)
{
    send_entry_t *e = &ch->send[id % YOJIMBO_QUEUE_SIZE];
    if (!e->used || e->message.id != id) return;
    e->used = 0;
    int size = e->message.block ? e->message.block_size : yojimbo_message_body_bits(&e->message);
    emit(c, YOJIMBO_EVENT_MESSAGE_ACKED, ch->index, id, e->message.type, 0, 0, 0, size);
    free(e->message.block);
    e->message.block = NULL;
    while (ch->oldest_unacked != ch->send_id) {
        send_entry_t *o = &ch->send[ch->oldest_unacked % YOJIMBO_QUEUE_SIZE];
        if (o->used && o->message.id == ch->oldest_unacked) break;
        ch->oldest_unacked++;
    }
}

void yojimbo_connection_ack(yojimbo_connection_t *c, uint16_t sequence)
{
    c->counters[YOJIMBO_COUNTER_ACKS]++;
    for (int i = 0; i < c->config.num_channels; i++) {
        channel_t *ch = &c->channel[i];
        if (ch->config->type != YOJIMBO_RELIABLE_ORDERED) continue;
        sent_packet_t *p = &ch->sent[sequence % YOJIMBO_QUEUE_SIZE];
        if (!p->used || p->sequence != sequence) continue;
        for (int k = 0; k < p->num_ids; k++) remove_sent_message(c, ch, p->ids[k]);
        if (!p->block || !ch->send_active || ch->send_block_id != p->block_id || ch->acked_fragment[p->fragment])
            continue;
        ch->acked_fragment[p->fragment] = 1;
        ch->send_acked++;
        emit(c, YOJIMBO_EVENT_FRAGMENT_ACKED, i, p->block_id, YOJIMBO_TEST_BLOCK_MESSAGE, p->fragment,
             ch->send_fragments, sequence, 0);
        if (ch->send_acked == ch->send_fragments) {
            ch->send_active = 0;
            remove_sent_message(c, ch, p->block_id);
        }
    }
}

/* ---- receiving ---- */

static void take_message(yojimbo_connection_t *c, channel_t *ch, yojimbo_message_t *m, uint16_t sequence)
{
    if (ch->config->type == YOJIMBO_UNRELIABLE_UNORDERED) {
        if (ch->uu_recv_count == YOJIMBO_QUEUE_SIZE) return;
        int slot = (ch->uu_recv_head + ch->uu_recv_count++) % YOJIMBO_QUEUE_SIZE;
        free(ch->recv[slot].block);
        ch->recv[slot] = *m;
        m->block = NULL;
        emit(c, YOJIMBO_EVENT_RECEIVED, ch->index, m->sequence, m->type, 0, 0, sequence,
             ch->recv[slot].block ? ch->recv[slot].block_size : yojimbo_message_body_bits(m));
        return;
    }
    uint16_t id = m->id;
    if (sequence_greater(ch->receive_id, id)) return; /* already delivered */
    if (sequence_greater(id, (uint16_t)(ch->receive_id + YOJIMBO_QUEUE_SIZE - 1))) {
        ch->error = c->error = 1; /* desync: past the receive window */
        return;
    }
    int slot = id % YOJIMBO_QUEUE_SIZE;
    if (ch->recv_used[slot]) return; /* a resend of one we hold */
    ch->recv_used[slot] = 1;
    ch->recv[slot] = *m;
    m->block = NULL;
    if (!sequence_greater(ch->receive_sequence, id)) ch->receive_sequence = (uint16_t)(id + 1);
    emit(c, YOJIMBO_EVENT_RECEIVED, ch->index, id, m->type, 0, 0, sequence,
         ch->recv[slot].block ? ch->recv[slot].block_size : yojimbo_message_body_bits(m));
}

/* Completes the block being received: it joins the receive queue. */
static void complete_block(yojimbo_connection_t *c, channel_t *ch, uint16_t sequence)
{
    yojimbo_message_t m = {ch->recv_type, ch->recv_block_id, ch->recv_block_sequence, NULL, ch->recv_size};
    ch->recv_active = 0;
    if (ch->recv_used[m.id % YOJIMBO_QUEUE_SIZE]) {
        ch->error = c->error = 1;
        return;
    }
    m.block = malloc((size_t)m.block_size);
    if (!m.block) {
        ch->error = c->error = 1;
        return;
    }
    memcpy(m.block, ch->recv_data, (size_t)m.block_size);
    c->counters[YOJIMBO_COUNTER_BLOCKS_RECEIVED]++;
    take_message(c, ch, &m, sequence);
    free(m.block);
}

static void take_fragment(yojimbo_connection_t *c, channel_t *ch, const yojimbo_fragment_t *f, uint16_t sequence)
{
    const yojimbo_channel_config_t *cc = ch->config;
    if (f->message_id != ch->receive_sequence) return; /* not the block the channel waits for */
    if (!ch->recv_active) {
        ch->recv_active = 1;
        ch->recv_fragments = f->num_fragments;
        ch->recv_count = 0;
        ch->recv_block_id = f->message_id;
        ch->recv_size = 0;
        memset(ch->received_fragment, 0, (size_t)yojimbo_max_fragments(cc));
    }
    if (f->fragment_id >= ch->recv_fragments || f->num_fragments != ch->recv_fragments ||
        f->fragment_id * cc->block_fragment_size + f->fragment_size > cc->max_block_size) {
        ch->error = c->error = 1;
        return;
    }
    if (ch->received_fragment[f->fragment_id]) return;
    ch->received_fragment[f->fragment_id] = 1;
    c->counters[YOJIMBO_COUNTER_FRAGMENTS_RECEIVED]++;
    memcpy(ch->recv_data + (size_t)f->fragment_id * (size_t)cc->block_fragment_size, f->data, (size_t)f->fragment_size);
    if (f->fragment_id == 0) {
        ch->recv_type = f->message.type;
        ch->recv_block_sequence = f->message.sequence;
    }
    if (f->fragment_id == ch->recv_fragments - 1)
        ch->recv_size = (ch->recv_fragments - 1) * cc->block_fragment_size + f->fragment_size;
    if (++ch->recv_count == ch->recv_fragments) complete_block(c, ch, sequence);
}

int yojimbo_connection_process(yojimbo_connection_t *c, uint16_t sequence, const uint8_t *data, int bytes)
{
    if (c->error) return 0;
    static yojimbo_packet_t packet;
    int result = yojimbo_read_packet(&c->config, data, bytes, &packet);
    if (result != YOJIMBO_READ_OK) {
        yojimbo_packet_free(&packet);
        c->counters[YOJIMBO_COUNTER_PACKETS_INVALID]++;
        c->error = 1;
        return 0;
    }
    c->counters[YOJIMBO_COUNTER_PACKETS_READ]++;
    for (int i = 0; i < packet.num_entries && !c->error; i++) {
        yojimbo_entry_t *e = &packet.entry[i];
        channel_t *ch = &c->channel[e->channel];
        if (e->block) {
            if (ch->config->type == YOJIMBO_RELIABLE_ORDERED) take_fragment(c, ch, &e->fragment, sequence);
            continue;
        }
        for (int k = 0; k < e->num_messages && !c->error; k++) take_message(c, ch, &e->messages[k], sequence);
    }
    yojimbo_packet_free(&packet);
    return !c->error;
}

int yojimbo_connection_receive(yojimbo_connection_t *c, int channel, yojimbo_message_t *out)
{
    if (c->error || channel < 0 || channel >= c->config.num_channels) return 0;
    channel_t *ch = &c->channel[channel];
    if (ch->config->type == YOJIMBO_UNRELIABLE_UNORDERED) {
        if (!ch->uu_recv_count) return 0;
        *out = ch->recv[ch->uu_recv_head];
        ch->recv[ch->uu_recv_head].block = NULL;
        ch->uu_recv_head = (ch->uu_recv_head + 1) % YOJIMBO_QUEUE_SIZE;
        ch->uu_recv_count--;
    } else {
        int slot = ch->receive_id % YOJIMBO_QUEUE_SIZE;
        if (!ch->recv_used[slot]) return 0;
        *out = ch->recv[slot];
        ch->recv[slot].block = NULL;
        ch->recv_used[slot] = 0;
        ch->receive_id++;
    }
    c->counters[YOJIMBO_COUNTER_MESSAGES_RECEIVED]++;
    emit(c, YOJIMBO_EVENT_DELIVERED, channel, ch->config->type == YOJIMBO_RELIABLE_ORDERED ? out->id : out->sequence,
         out->type, 0, 0, 0, out->block ? out->block_size : yojimbo_message_body_bits(out));
    return 1;
}
