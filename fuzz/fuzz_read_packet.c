/*
 * fuzz_read_packet: libFuzzer harness for chunk_read_packet (wire.c).
 *
 * Input: one mode byte, then the datagram.
 *   mode bits 0-1  wire config of the third read: 0 or 3 the article's
 *                  256 x 1024, 1 the example program's 32 x 1024, 2 custom:
 *                  the next 4 bytes give slice_size = 1 + LE16 % 8192 and
 *                  max_slices = 1 + LE16 % 1024
 *   mode bit 2     overwrite bytes 0..3 of the datagram with its correct CRC,
 *                  so that mutations reach past the CRC check (nearly every
 *                  random datagram is otherwise dropped there)
 *
 * Every datagram is read with both variants in the wild (256 and 32 slices)
 * and with the chosen config. For each read it checks what the reader
 * promises: a result in range; for an accepted packet, fields inside the
 * config's limits, a slice's data inside the datagram, and that writing the
 * packet back with chunk_write_slice_packet / chunk_write_ack_packet gives
 * the same bytes and length (a strict reader accepts exactly what the writer
 * writes; anything else is a rule the two disagree on). A broken promise
 * aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "harness.h"

/* Fails the run loudly: libFuzzer saves the input that got here. */
static chunk_packet_t packet; /* static: an ack holds 1024 flags */
static uint8_t rewritten[CHUNK_MAX_PACKET_BYTES];

static void read_and_check(const chunk_wire_config_t *config, const uint8_t *buffer, int bytes)
{
    memset(&packet, 0xa5, sizeof packet); /* stale fields must not pass for read ones */
    chunk_read_result_t result = chunk_read_packet(config, buffer, bytes, &packet);
    REQUIRE(result >= CHUNK_READ_OK && result < CHUNK_READ_RESULT_COUNT);
    REQUIRE(chunk_read_result_name(result) != NULL);
    if (result != CHUNK_READ_OK) return;

    int written;
    if (packet.type == CHUNK_PACKET_SLICE) {
        const chunk_slice_packet_t *s = &packet.u.slice;
        REQUIRE(s->num_slices >= 1 && s->num_slices <= config->max_slices);
        REQUIRE(s->slice_id >= 0 && s->slice_id < s->num_slices);
        if (s->slice_id == s->num_slices - 1)
            REQUIRE(s->slice_bytes >= 1 && s->slice_bytes <= config->slice_size);
        else
            REQUIRE(s->slice_bytes == config->slice_size);
        REQUIRE(s->data >= buffer && s->data + s->slice_bytes <= buffer + bytes);
        REQUIRE(chunk_slice_packet_size(config, s->slice_id, s->num_slices, s->slice_bytes) == bytes);
        written = chunk_write_slice_packet(config, s, rewritten, (int)sizeof rewritten);
    } else {
        REQUIRE(packet.type == CHUNK_PACKET_ACK);
        const chunk_ack_packet_t *a = &packet.u.ack;
        REQUIRE(a->num_slices >= 1 && a->num_slices <= config->max_slices);
        for (int i = 0; i < a->num_slices; i++) REQUIRE(a->acked[i] <= 1);
        REQUIRE(chunk_ack_packet_size(config, a->num_slices) == bytes);
        written = chunk_write_ack_packet(config, a, rewritten, (int)sizeof rewritten);
    }
    REQUIRE(written == bytes);
    REQUIRE(memcmp(rewritten, buffer, (size_t)bytes) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    data++, size--;

    chunk_wire_config_t variants[3];
    chunk_wire_default_config(&variants[0]);
    chunk_wire_default_config(&variants[1]);
    variants[1].max_slices = 32;
    chunk_wire_default_config(&variants[2]);
    if ((mode & 3) == 1) variants[2].max_slices = 32;
    if ((mode & 3) == 2) {
        if (size < 4) return 0;
        variants[2].slice_size = 1 + (data[0] | data[1] << 8) % CHUNK_SLICE_SIZE_LIMIT;
        variants[2].max_slices = 1 + (data[2] | data[3] << 8) % CHUNK_MAX_SLICES_LIMIT;
        data += 4, size -= 4;
    }
    if (size > CHUNK_MAX_PACKET_BYTES * 2) return 0; /* longer only repeats the trailing-bytes case */

    /* A copy of exactly the datagram's length, so ASan sees any read past it. */
    uint8_t *buffer = malloc(size ? size : 1);
    REQUIRE(buffer);
    if (size) memcpy(buffer, data, size);
    if ((mode & 4) && size >= 4) {
        uint32_t crc = p2_packet_crc(CHUNK_DEFAULT_PROTOCOL_ID, buffer, (int)size);
        for (int i = 0; i < 4; i++) buffer[i] = (uint8_t)(crc >> (8 * i));
    }
    for (int v = 0; v < 3; v++) read_and_check(&variants[v], buffer, (int)size);
    free(buffer);
    return 0;
}
