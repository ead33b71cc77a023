/*
 * wire.c: the reliable header and fragment header (docs/reliable.md "Wire
 * format"), and 16-bit sequence arithmetic.
 */
#include <assert.h>
#include <string.h>

#include "reliable.h"

static const char *const read_names[RL_READ_RESULT_COUNT] = {
    "ok", "short", "not regular", "not a fragment", "too many fragments", "fragment id out of range",
    "sequence mismatch", "not canonical", "fragment too big", "fragment size",
};

const char *rl_read_result_name(rl_read_result_t r)
{
    return (unsigned)r < RL_READ_RESULT_COUNT ? read_names[r] : "?";
}

int rl_sequence_greater(uint16_t s1, uint16_t s2)
{
    uint16_t d = (uint16_t)(s1 - s2);
    return d != 0 && d <= 32768 && !(d == 32768 && s1 < s2);
}

/* Which ack-bits bytes are sent: those that are not 0xFF (bit k: byte k). */
static unsigned present_bytes(uint32_t ack_bits)
{
    unsigned mask = 0;
    for (int k = 0; k < 4; k++)
        if (((ack_bits >> (8 * k)) & 0xFFu) != 0xFFu) mask |= 1u << k;
    return mask;
}

int rl_header_size(const rl_header_t *h)
{
    int n = 3 + ((uint16_t)(h->sequence - h->ack) <= 255 ? 1 : 2);
    unsigned mask = present_bytes(h->ack_bits);
    for (int k = 0; k < 4; k++) n += (mask >> k) & 1;
    return n;
}

int rl_header_write(uint8_t out[RL_MAX_HEADER_BYTES], const rl_header_t *h)
{
    assert(out && h);
    uint16_t diff = (uint16_t)(h->sequence - h->ack);
    unsigned mask = present_bytes(h->ack_bits);
    int n = 0;
    out[n++] = (uint8_t)(mask << 1 | (diff <= 255 ? 0x20u : 0));
    out[n++] = (uint8_t)h->sequence;
    out[n++] = (uint8_t)(h->sequence >> 8);
    if (diff <= 255) {
        out[n++] = (uint8_t)diff;
    } else {
        out[n++] = (uint8_t)h->ack;
        out[n++] = (uint8_t)(h->ack >> 8);
    }
    for (int k = 0; k < 4; k++)
        if (mask >> k & 1) out[n++] = (uint8_t)(h->ack_bits >> (8 * k));
    return n;
}

int rl_header_read(const uint8_t *p, int bytes, rl_header_t *h, rl_read_result_t *why)
{
    rl_read_result_t dummy;
    if (!why) why = &dummy;
    if (bytes < 3) {
        *why = RL_READ_SHORT;
        return -1;
    }
    uint8_t prefix = p[0];
    if (prefix & 1) {
        *why = RL_READ_NOT_REGULAR;
        return -1;
    }
    int n = 3;
    int need = (prefix & 0x20 ? 1 : 2);
    for (int k = 0; k < 4; k++) need += (prefix >> (k + 1)) & 1;
    if (bytes < n + need) {
        *why = RL_READ_SHORT;
        return -1;
    }
    h->sequence = (uint16_t)(p[1] | p[2] << 8);
    if (prefix & 0x20) {
        h->ack = (uint16_t)(h->sequence - p[n]);
        n += 1;
    } else {
        h->ack = (uint16_t)(p[n] | p[n + 1] << 8);
        n += 2;
    }
    h->ack_bits = 0xFFFFFFFFu;
    for (int k = 0; k < 4; k++) {
        if (!((prefix >> (k + 1)) & 1)) continue;
        h->ack_bits &= ~(0xFFu << (8 * k));
        h->ack_bits |= (uint32_t)p[n++] << (8 * k);
    }
    *why = RL_READ_OK;
    return n;
}

int rl_header_is_canonical(const uint8_t *p, int len)
{
    rl_header_t h;
    uint8_t again[RL_MAX_HEADER_BYTES];
    if (rl_header_read(p, len, &h, NULL) != len) return 0;
    return rl_header_write(again, &h) == len && memcmp(again, p, (size_t)len) == 0;
}

rl_read_result_t rl_fragment_read(const uint8_t *p, int bytes, int max_fragments, int fragment_size,
                                  rl_fragment_t *f)
{
    memset(f, 0, sizeof *f);
    if (bytes < RL_FRAGMENT_HEADER_BYTES) return RL_READ_SHORT;
    if (p[0] != 1) return RL_READ_NOT_FRAGMENT;
    f->sequence = (uint16_t)(p[1] | p[2] << 8);
    f->fragment_id = p[3];
    f->num_fragments = p[4] + 1;
    if (f->num_fragments > max_fragments) return RL_READ_TOO_MANY_FRAGMENTS;
    if (f->fragment_id >= f->num_fragments) return RL_READ_FRAGMENT_ID_RANGE;
    f->header_bytes = RL_FRAGMENT_HEADER_BYTES;
    if (f->fragment_id == 0) {
        rl_read_result_t why;
        int n = rl_header_read(p + RL_FRAGMENT_HEADER_BYTES, bytes - RL_FRAGMENT_HEADER_BYTES, &f->header, &why);
        if (n < 0) return why;
        if (f->header.sequence != f->sequence) return RL_READ_SEQUENCE_MISMATCH;
        if (!rl_header_is_canonical(p + RL_FRAGMENT_HEADER_BYTES, n)) return RL_READ_NOT_CANONICAL;
        f->has_header = 1;
        f->header_bytes += n;
    }
    f->data_bytes = bytes - f->header_bytes;
    if (f->data_bytes > fragment_size) return RL_READ_FRAGMENT_TOO_BIG;
    if (f->fragment_id != f->num_fragments - 1 && f->data_bytes != fragment_size) return RL_READ_FRAGMENT_SIZE;
    return RL_READ_OK;
}

int rl_faults_filter(void *context, int dir, const uint8_t *packet, int bytes)
{
    const rl_faults_t *faults = context;
    if (!faults || faults->drop_fragment < 0) return 0;
    if (faults->drop_dir >= 0 && faults->drop_dir != dir) return 0;
    return bytes >= RL_FRAGMENT_HEADER_BYTES && packet[0] == 1 && packet[3] == faults->drop_fragment;
}
