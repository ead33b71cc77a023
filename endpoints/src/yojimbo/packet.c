/*
 * yojimbo's connection packet (docs/yojimbo-endpoints.md, "Wire format"):
 * the channel configuration, the test message set and the packet's writer
 * and reader. Nothing on the wire says how it was configured: both ends pass
 * the same yojimbo_config_t.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yojimbo.h"

static void default_channel(yojimbo_channel_config_t *channel, int type)
{
    channel->type = type;
    channel->max_messages_per_packet = 256;
    channel->max_block_size = 256 * 1024;
    channel->block_fragment_size = 1024;
    channel->message_resend_time = (double)0.1f;
    channel->fragment_resend_time = (double)0.25f;
}

void yojimbo_default_config(yojimbo_config_t *config)
{
    memset(config, 0, sizeof *config);
    config->num_channels = 2;
    config->max_packet_size = YOJIMBO_MAX_PACKET_SIZE;
    config->num_message_types = YOJIMBO_TEST_MESSAGE_TYPES;
    default_channel(&config->channel[0], YOJIMBO_RELIABLE_ORDERED);
    default_channel(&config->channel[1], YOJIMBO_RELIABLE_ORDERED);
}

int yojimbo_max_fragments(const yojimbo_channel_config_t *channel)
{
    return (channel->max_block_size + channel->block_fragment_size - 1) / channel->block_fragment_size;
}

/* One number of a channel's spec, 1..limit; advances *p past it. */
static int parse_field(const char **p, long limit, long *out)
{
    char *end;
    if (**p < '0' || **p > '9') return -1;
    long v = strtol(*p, &end, 10);
    if (v < 1 || v > limit) return -1;
    *out = v;
    *p = end;
    return 0;
}

static int parse_channel(const char **p, yojimbo_channel_config_t *ch)
{
    int type;
    if (strncmp(*p, "ro", 2) == 0) type = YOJIMBO_RELIABLE_ORDERED;
    else if (strncmp(*p, "uu", 2) == 0) type = YOJIMBO_UNRELIABLE_UNORDERED;
    else return -1;
    *p += 2;
    default_channel(ch, type);
    long v;
    if (**p == ':') {
        (*p)++;
        if (parse_field(p, 16 * 1024 * 1024, &v) != 0) return -1;
        ch->max_block_size = (int)v;
    }
    if (**p == ':') {
        (*p)++;
        if (parse_field(p, 1024 * 1024, &v) != 0) return -1;
        ch->block_fragment_size = (int)v;
    }
    if (**p == ':') {
        (*p)++;
        if (parse_field(p, YOJIMBO_MAX_MESSAGES_LIMIT, &v) != 0) return -1;
        ch->max_messages_per_packet = (int)v;
    }
    return yojimbo_max_fragments(ch) > 65536 ? -1 : 0;
}

int yojimbo_parse_channels(const char *text, yojimbo_config_t *config, char *error, int error_size)
{
    yojimbo_config_t c;
    yojimbo_default_config(&c);
    c.num_channels = 0;
    const char *p = text;
    while (1) {
        const char *start = p;
        if (c.num_channels == YOJIMBO_MAX_CHANNELS) {
            snprintf(error, (size_t)error_size, "more than %d channels", YOJIMBO_MAX_CHANNELS);
            return -1;
        }
        if (parse_channel(&p, &c.channel[c.num_channels]) != 0 || (*p != ',' && *p != '\0')) {
            int len = (int)strcspn(start, ",");
            snprintf(error, (size_t)error_size,
                     "bad channel '%.*s': expected ro or uu, then :MAXBLOCK:FRAGMENT:MAXMESSAGES (numbers above 0, "
                     "at most 65536 fragments a block, 1024 messages a packet)", len, start);
            return -1;
        }
        c.num_channels++;
        if (*p == '\0') break;
        p++;
    }
    *config = c;
    return 0;
}

/* ---- the test message set ---- */

const char *yojimbo_message_type_name(int type)
{
    static const char *const names[] = {"TestMessage", "TestBlockMessage", "TestSerializeFailOnReadMessage",
                                        "TestExhaustStreamAllocatorOnReadMessage"};
    return type >= 0 && type < YOJIMBO_TEST_MESSAGE_TYPES ? names[type] : "unknown";
}

int yojimbo_test_message_bits(uint16_t sequence)
{
    static const int bits[] = {1, 320, 120, 4, 256, 45, 11, 13, 101, 100, 84, 95, 203, 2, 3, 8, 512, 5, 3, 7, 50};
    return bits[sequence % (sizeof bits / sizeof bits[0])];
}

int yojimbo_is_block_message(int type) { return type == YOJIMBO_TEST_BLOCK_MESSAGE; }

int yojimbo_message_body_bits(const yojimbo_message_t *m)
{
    switch (m->type) {
    case YOJIMBO_TEST_MESSAGE: return 16 + yojimbo_test_message_bits(m->sequence);
    case YOJIMBO_TEST_BLOCK_MESSAGE: return 16;
    default: return 0;
    }
}

static void write_body(yojimbo_writer_t *w, const yojimbo_message_t *m)
{
    if (m->type != YOJIMBO_TEST_MESSAGE && m->type != YOJIMBO_TEST_BLOCK_MESSAGE) return;
    yojimbo_write_bits(w, m->sequence, 16);
    if (m->type != YOJIMBO_TEST_MESSAGE) return;
    int bits = yojimbo_test_message_bits(m->sequence);
    for (; bits >= 32; bits -= 32) yojimbo_write_bits(w, 0, 32);
    yojimbo_write_bits(w, 0, bits);
}

/* Returns 0, or -1 when the body does not read (the message's own rule). */
static int read_body(yojimbo_reader_t *r, yojimbo_message_t *m)
{
    if (m->type == YOJIMBO_TEST_FAIL_ON_READ) return -1;
    if (m->type != YOJIMBO_TEST_MESSAGE && m->type != YOJIMBO_TEST_BLOCK_MESSAGE) return 0;
    m->sequence = (uint16_t)yojimbo_read_bits(r, 16);
    if (m->type != YOJIMBO_TEST_MESSAGE) return 0;
    int bits = yojimbo_test_message_bits(m->sequence);
    for (; bits >= 32; bits -= 32) yojimbo_read_bits(r, 32);
    yojimbo_read_bits(r, bits);
    return 0;
}

/* ---- writing ---- */

static void write_type(yojimbo_writer_t *w, const yojimbo_config_t *config, int type)
{
    if (config->num_message_types > 1) yojimbo_write_int(w, type, 0, config->num_message_types - 1);
}

static void write_messages(yojimbo_writer_t *w, const yojimbo_config_t *config, const yojimbo_entry_t *e)
{
    const yojimbo_channel_config_t *ch = &config->channel[e->channel];
    yojimbo_write_bits(w, e->num_messages > 0, 1);
    if (e->num_messages == 0) return;
    yojimbo_write_int(w, e->num_messages, 1, ch->max_messages_per_packet);
    if (ch->type == YOJIMBO_RELIABLE_ORDERED) {
        yojimbo_write_bits(w, e->messages[0].id, 16);
        for (int i = 1; i < e->num_messages; i++)
            yojimbo_write_sequence_relative(w, e->messages[i - 1].id, e->messages[i].id);
    }
    for (int i = 0; i < e->num_messages; i++) {
        const yojimbo_message_t *m = &e->messages[i];
        write_type(w, config, m->type);
        write_body(w, m);
        if (ch->type == YOJIMBO_UNRELIABLE_UNORDERED && yojimbo_is_block_message(m->type)) {
            yojimbo_write_int(w, m->block_size, 1, ch->max_block_size);
            yojimbo_write_bytes(w, m->block, m->block_size);
        }
    }
}

static void write_fragment(yojimbo_writer_t *w, const yojimbo_config_t *config, const yojimbo_entry_t *e)
{
    const yojimbo_channel_config_t *ch = &config->channel[e->channel];
    const yojimbo_fragment_t *f = &e->fragment;
    int max_fragments = yojimbo_max_fragments(ch);
    yojimbo_write_bits(w, f->message_id, 16);
    if (max_fragments > 1) yojimbo_write_int(w, f->num_fragments, 1, max_fragments);
    if (f->num_fragments > 1) yojimbo_write_int(w, f->fragment_id, 0, f->num_fragments - 1);
    yojimbo_write_int(w, f->fragment_size, 1, ch->block_fragment_size);
    yojimbo_write_bytes(w, f->data, f->fragment_size);
    if (f->fragment_id == 0) {
        write_type(w, config, f->message.type);
        write_body(w, &f->message);
    }
}

int yojimbo_write_packet(const yojimbo_config_t *config, const yojimbo_packet_t *packet, uint8_t *out, int capacity)
{
    yojimbo_writer_t w;
    yojimbo_writer_init(&w, out, capacity);
    yojimbo_write_int(&w, packet->num_entries, 0, config->num_channels);
    for (int i = 0; i < packet->num_entries; i++) {
        const yojimbo_entry_t *e = &packet->entry[i];
        if (config->num_channels > 1) yojimbo_write_int(&w, e->channel, 0, config->num_channels - 1);
        yojimbo_write_bits(&w, (uint32_t)e->block, 1);
        if (e->block) write_fragment(&w, config, e);
        else write_messages(&w, config, e);
    }
    return w.overflow ? -1 : yojimbo_writer_bytes(&w);
}

/* ---- reading ---- */

static int read_type(yojimbo_reader_t *r, const yojimbo_config_t *config)
{
    return config->num_message_types > 1 ? yojimbo_read_int(r, 0, config->num_message_types - 1) : 0;
}

static int read_messages(yojimbo_reader_t *r, const yojimbo_config_t *config, yojimbo_entry_t *e)
{
    const yojimbo_channel_config_t *ch = &config->channel[e->channel];
    if (!yojimbo_read_bits(r, 1)) return r->error ? YOJIMBO_READ_TRUNCATED : YOJIMBO_READ_OK;
    int n = yojimbo_read_int(r, 1, ch->max_messages_per_packet);
    if (r->error) return YOJIMBO_READ_TRUNCATED;
    e->messages = calloc((size_t)n, sizeof *e->messages);
    if (!e->messages) return YOJIMBO_READ_MESSAGE_FAILED;
    e->num_messages = n;
    if (ch->type == YOJIMBO_RELIABLE_ORDERED) {
        e->messages[0].id = (uint16_t)yojimbo_read_bits(r, 16);
        for (int i = 1; i < n; i++) e->messages[i].id = yojimbo_read_sequence_relative(r, e->messages[i - 1].id);
    }
    for (int i = 0; i < n && !r->error; i++) {
        yojimbo_message_t *m = &e->messages[i];
        m->type = read_type(r, config);
        if (read_body(r, m) != 0) return YOJIMBO_READ_MESSAGE_FAILED;
        if (ch->type == YOJIMBO_UNRELIABLE_UNORDERED && yojimbo_is_block_message(m->type)) {
            int size = yojimbo_read_int(r, 1, ch->max_block_size);
            if (r->error) break;
            m->block = malloc((size_t)size);
            if (!m->block) return YOJIMBO_READ_MESSAGE_FAILED;
            m->block_size = size;
            yojimbo_read_bytes(r, m->block, size);
        }
    }
    return r->error ? YOJIMBO_READ_TRUNCATED : YOJIMBO_READ_OK;
}

static int read_fragment(yojimbo_reader_t *r, const yojimbo_config_t *config, yojimbo_entry_t *e)
{
    const yojimbo_channel_config_t *ch = &config->channel[e->channel];
    yojimbo_fragment_t *f = &e->fragment;
    int max_fragments = yojimbo_max_fragments(ch);
    f->message_id = (uint16_t)yojimbo_read_bits(r, 16);
    f->num_fragments = max_fragments > 1 ? yojimbo_read_int(r, 1, max_fragments) : 1;
    f->fragment_id = f->num_fragments > 1 ? yojimbo_read_int(r, 0, f->num_fragments - 1) : 0;
    f->fragment_size = yojimbo_read_int(r, 1, ch->block_fragment_size);
    yojimbo_read_align(r);
    if (r->error || r->bits / 8 + f->fragment_size > r->bytes) return YOJIMBO_READ_TRUNCATED;
    f->data = r->data + r->bits / 8;
    r->bits += f->fragment_size * 8;
    if (f->fragment_id == 0) {
        f->message.type = read_type(r, config);
        if (r->error) return YOJIMBO_READ_TRUNCATED;
        if (!yojimbo_is_block_message(f->message.type)) return YOJIMBO_READ_NOT_BLOCK;
        read_body(r, &f->message);
    }
    return r->error ? YOJIMBO_READ_TRUNCATED : YOJIMBO_READ_OK;
}

int yojimbo_read_packet(const yojimbo_config_t *config, const uint8_t *data, int bytes, yojimbo_packet_t *packet)
{
    memset(packet, 0, sizeof *packet);
    if (bytes <= 0) return YOJIMBO_READ_EMPTY;
    yojimbo_reader_t r;
    yojimbo_reader_init(&r, data, bytes);
    int n = yojimbo_read_int(&r, 0, config->num_channels);
    if (r.error) return YOJIMBO_READ_TRUNCATED;
    for (int i = 0; i < n; i++) {
        yojimbo_entry_t *e = &packet->entry[i];
        packet->num_entries = i + 1;
        e->channel = config->num_channels > 1 ? yojimbo_read_int(&r, 0, config->num_channels - 1) : 0;
        if (r.error) return YOJIMBO_READ_CHANNEL;
        e->block = (int)yojimbo_read_bits(&r, 1);
        int result = e->block ? read_fragment(&r, config, e) : read_messages(&r, config, e);
        if (result != YOJIMBO_READ_OK) return result;
    }
    return YOJIMBO_READ_OK;
}

void yojimbo_packet_free(yojimbo_packet_t *packet)
{
    for (int i = 0; i < packet->num_entries; i++) {
        yojimbo_entry_t *e = &packet->entry[i];
        if (e->block || !e->messages) continue;
        for (int k = 0; k < e->num_messages; k++) free(e->messages[k].block);
        free(e->messages);
        e->messages = NULL;
    }
    packet->num_entries = 0;
}

const char *yojimbo_read_result_name(int result)
{
    static const char *const names[] = {"ok", "truncated or out of range", "bad channel index",
                                        "blocks disabled", "fragment 0 not a block message", "message failed to read",
                                        "empty"};
    return result >= 0 && result < YOJIMBO_READ_RESULT_COUNT ? names[result] : "unknown";
}
