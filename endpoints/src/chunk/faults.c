/*
 * faults.c: the chunk faults of a network path (chunk.h, "faults"), as the
 * simulator's per-datagram filter.
 */
#include <assert.h>

#include "chunk.h"

void chunk_faults_default(chunk_faults_t *faults)
{
    assert(faults);
    chunk_wire_default_config(&faults->wire);
    for (int d = 0; d < 2; d++) {
        faults->drop_acks[d] = 0;
        faults->drop_slice_id[d] = -1;
    }
}

int chunk_faults_any(const chunk_faults_t *faults)
{
    assert(faults);
    for (int d = 0; d < 2; d++)
        if (faults->drop_acks[d] || faults->drop_slice_id[d] >= 0) return 1;
    return 0;
}

int chunk_faults_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    const chunk_faults_t *faults = context;
    assert(faults && (dir == 0 || dir == 1));
    if (!faults->drop_acks[dir] && faults->drop_slice_id[dir] < 0) return 0;
    chunk_packet_t parsed;
    if (chunk_read_packet(&faults->wire, packet, bytes, &parsed) != CHUNK_READ_OK) return 0;
    if (faults->drop_acks[dir] && parsed.type == CHUNK_PACKET_ACK) return 1;
    if (faults->drop_slice_id[dir] >= 0 && parsed.type == CHUNK_PACKET_SLICE &&
        parsed.u.slice.slice_id == faults->drop_slice_id[dir])
        return 1;
    return 0;
}
