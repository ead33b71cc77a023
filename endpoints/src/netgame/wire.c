/*
 * wire.c: the netgame header (16 bytes, big-endian) and the 2008 sequence
 * arithmetic, docs/netgame-endpoints.md "Wire format" and "Sequence numbers".
 */
#include <assert.h>
#include <string.h>

#include "netgame.h"

static void write_u32_be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t read_u32_be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

int netgame_write_packet(const netgame_header_t *header, const uint8_t *payload, int payload_bytes, uint8_t *buffer,
                         int buffer_size)
{
    assert(header && buffer && payload_bytes >= 0 && (payload || payload_bytes == 0));
    if (buffer_size < NETGAME_HEADER_BYTES || payload_bytes > buffer_size - NETGAME_HEADER_BYTES) return -1;
    write_u32_be(buffer, header->protocol_id);
    write_u32_be(buffer + 4, header->sequence);
    write_u32_be(buffer + 8, header->ack);
    write_u32_be(buffer + 12, header->ack_bits);
    if (payload_bytes > 0) memcpy(buffer + NETGAME_HEADER_BYTES, payload, (size_t)payload_bytes);
    return NETGAME_HEADER_BYTES + payload_bytes;
}

int netgame_read_header(const uint8_t *packet, int bytes, netgame_header_t *header)
{
    assert(header && (packet || bytes <= 0));
    if (bytes < NETGAME_HEADER_BYTES) return -1;
    header->protocol_id = read_u32_be(packet);
    header->sequence = read_u32_be(packet + 4);
    header->ack = read_u32_be(packet + 8);
    header->ack_bits = read_u32_be(packet + 12);
    return 0;
}

int netgame_sequence_more_recent(uint32_t s1, uint32_t s2, uint32_t max_sequence)
{
    uint32_t half = max_sequence / 2;
    return (s1 > s2 && s1 - s2 <= half) || (s2 > s1 && s2 - s1 > half);
}

uint32_t netgame_sequence_distance(uint32_t a, uint32_t b, uint32_t max_sequence)
{
    if (max_sequence == 0xFFFFFFFFu) return a - b;
    assert(a <= max_sequence);
    /* b may be a step count rather than a sequence: the ack bits look 32
     * back, more than a space of 32 (MaxSequence 31) holds. */
    b %= max_sequence + 1;
    return a >= b ? a - b : a + (max_sequence - b) + 1;
}

int netgame_bit_index(uint32_t sequence, uint32_t ack, uint32_t max_sequence)
{
    if (sequence == ack || netgame_sequence_more_recent(sequence, ack, max_sequence)) return -1;
    /* The original's bit_index_for_sequence: ack-1-sequence, across the wrap
     * ack + (max - sequence); the same number mod max_sequence + 1. */
    uint32_t distance = netgame_sequence_distance(ack, sequence, max_sequence);
    return distance >= 1 && distance <= 32 ? (int)distance - 1 : -1;
}

int netgame_sequence_acked(uint32_t sequence, uint32_t ack, uint32_t ack_bits, uint32_t max_sequence)
{
    if (sequence == ack) return 1;
    int bit = netgame_bit_index(sequence, ack, max_sequence);
    return bit >= 0 && ((ack_bits >> bit) & 1u);
}

uint32_t netgame_ack_bits_from_set(uint32_t ack, const uint32_t *received, int count, uint32_t max_sequence)
{
    assert(received || count == 0);
    uint32_t bits = 0;
    for (int i = 0; i < count; i++) {
        int bit = netgame_bit_index(received[i], ack, max_sequence);
        if (bit >= 0) bits |= 1u << bit;
    }
    return bits;
}
