/*
 * fuzz_reliable: libFuzzer harness that drives two reliable endpoints
 * (endpoints/src/reliable/) with arbitrary sequences of datagrams and time
 * steps, and the codec with the raw input.
 *
 * Input: a config byte, then operations (one byte, then its arguments; a
 * missing byte reads as 0):
 *   config bits 0-1  fragment size 1024, 16, 100, 1
 *          bits 2-3  max fragments 16, 1, 4, 256
 *          bit 4     first sequence 65500 (else 0)
 *          bit 5     B stops acking at 1 s
 *   op % 8:  0 advance time by b ms, update both
 *            1 side b & 1 sends a payload of b * 37 bytes
 *            2 deliver the oldest datagram of queue b & 1 to the other side
 *            3 drop it
 *            4 deliver queue[b & 1][c] again (duplicate, reorder)
 *            5 mutate a copy of queue[b & 1][c]: flip bit LE16, deliver it
 *            6 inject LE16 length (at most 1100) bytes to side b & 1
 *            7 deliver everything queued both ways
 *
 * What it checks (abort on failure): the header codec reads back what it
 * writes and rejects nothing it wrote; acks and losses are reported only for
 * sequences sent, each once (a loss can be withdrawn by a later ack, never
 * the reverse); acked + lost never exceeds sent; RTT samples are not
 * negative; the counters agree. ASan and UBSan check the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reliable.h"
#include "harness.h"

#define QUEUE_MAX 64

typedef struct dgram_t {
    uint8_t *data;
    int bytes;
} dgram_t;

typedef struct state_t {
    rl_endpoint_t *e[2];
    dgram_t queue[2][QUEUE_MAX];
    int count[2];
    uint8_t status[2][65536]; /* per sequence: 1 sent, 2 acked, 3 lost */
    uint64_t sent[2], acked[2], lost[2];
} state_t;

typedef struct ctx_t {
    state_t *s;
    int side;
} ctx_t;

static void on_send(void *context, uint16_t sequence, const uint8_t *packet, int bytes)
{
    ctx_t *c = context;
    state_t *s = c->s;
    if (s->status[c->side][sequence] != 1) {
        s->status[c->side][sequence] = 1;
        s->sent[c->side]++;
    }
    if (s->count[c->side] == QUEUE_MAX) return;
    dgram_t *d = &s->queue[c->side][s->count[c->side]++];
    d->data = malloc((size_t)bytes);
    memcpy(d->data, packet, (size_t)bytes);
    d->bytes = bytes;
}

static void on_acked(void *context, uint16_t sequence, double rtt)
{
    ctx_t *c = context;
    uint8_t *st = &c->s->status[c->side][sequence];
    REQUIRE(*st == 1 || *st == 3);   /* lost, then acked by a reordered or forged header */
    REQUIRE(rtt >= 0);
    if (*st == 3) c->s->lost[c->side]--;
    *st = 2;
    c->s->acked[c->side]++;
}

static void on_lost(void *context, uint16_t sequence)
{
    ctx_t *c = context;
    REQUIRE(c->s->status[c->side][sequence] == 1);
    c->s->status[c->side][sequence] = 3;
    c->s->lost[c->side]++;
}

static void pop(state_t *s, int q, int index)
{
    free(s->queue[q][index].data);
    memmove(&s->queue[q][index], &s->queue[q][index + 1], (size_t)(s->count[q] - index - 1) * sizeof(dgram_t));
    s->count[q]--;
}

static void check_codec(const uint8_t *data, size_t size)
{
    rl_header_t h, r;
    uint8_t out[RL_MAX_HEADER_BYTES];
    if (size < 8) return;
    h.sequence = (uint16_t)(data[0] | data[1] << 8);
    h.ack = (uint16_t)(data[2] | data[3] << 8);
    memcpy(&h.ack_bits, data + 4, 4);
    int n = rl_header_write(out, &h);
    REQUIRE(n >= RL_MIN_HEADER_BYTES && n <= RL_MAX_HEADER_BYTES && n == rl_header_size(&h));
    REQUIRE(rl_header_read(out, n, &r, NULL) == n);
    REQUIRE(r.sequence == h.sequence && r.ack == h.ack && r.ack_bits == h.ack_bits);
    REQUIRE(rl_header_is_canonical(out, n));
    rl_fragment_t f;
    rl_fragment_read(data, (int)size, 256, 64, &f);
    if (rl_header_read(data, (int)size, &r, NULL) > 0) (void)rl_header_is_canonical(data, (int)size);
}


/* Both endpoints, configured by the config byte (see the top). */
static void create_endpoints(state_t *s, uint8_t config)
{
    static ctx_t ctx[2];
    static const int sizes[4] = {1024, 16, 100, 1}, counts[4] = {16, 1, 4, 256};
    for (int i = 0; i < 2; i++) {
        rl_config_t c;
        rl_default_config(&c);
        c.fragment_size = sizes[config & 3];
        c.fragment_above = c.fragment_size;
        c.max_fragments = counts[(config >> 2) & 3];
        c.max_packet_size = 9000;
        c.first_sequence = config & 16 ? 65500 : 0;
        c.stop_acking_at = i == 1 && (config & 32) ? 1.0 : -1;
        c.send = on_send;
        c.acked = on_acked;
        c.lost = on_lost;
        ctx[i] = (ctx_t){s, i};
        c.context = &ctx[i];
        s->e[i] = rl_endpoint_create(&c, 0);
        REQUIRE(s->e[i]);
    }
}

/* Hands the endpoint on side `to` a copy of bytes of exactly that length (so that ASan sees a read past it). */
static void receive_copy(state_t *s, int to, const uint8_t *bytes, int n)
{
    uint8_t *copy = malloc((size_t)n);
    memcpy(copy, bytes, (size_t)n);
    rl_endpoint_receive(s->e[to], copy, n);
    free(copy);
}

/* Op 5: a copy of queue[q][c] with one bit flipped, to the other side. */
static void deliver_mutated(state_t *s, input_t *in, int q)
{
    uint8_t c = next_byte(in), lo = next_byte(in), hi = next_byte(in);
    if (!s->count[q]) return;
    dgram_t *d = &s->queue[q][c % s->count[q]];
    uint8_t *copy = malloc((size_t)d->bytes);
    memcpy(copy, d->data, (size_t)d->bytes);
    int bit = (lo | hi << 8) % (d->bytes * 8);
    copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    rl_endpoint_receive(s->e[1 - q], copy, d->bytes);
    free(copy);
}

/* Op 6: up to 1100 bytes of the input to side q. */
static void inject(state_t *s, input_t *in, int q)
{
    uint8_t lo = next_byte(in), hi = next_byte(in);
    int n = (lo | hi << 8) % 1101;
    if (n > (int)(in->size - in->at)) n = (int)(in->size - in->at);
    if (n <= 0) return;
    receive_copy(s, q, in->data + in->at, n);
    in->at += (size_t)n;
}

/* One operation (see the top) at *now. */
static void step(state_t *s, input_t *in, double *now)
{
    static uint8_t payload[256 * 37 + 1];
    uint8_t op = next_byte(in), b = next_byte(in);
    int q = b & 1;
    switch (op % 8) {
    case 0:
        *now += b * 0.001;
        rl_endpoint_update(s->e[0], *now);
        rl_endpoint_update(s->e[1], *now);
        break;
    case 1:
        for (int i = 0; i < b * 37; i++) payload[i] = (uint8_t)(i + b);
        rl_endpoint_send(s->e[q], payload, b * 37);
        break;
    case 2:
        if (s->count[q]) {
            rl_endpoint_receive(s->e[1 - q], s->queue[q][0].data, s->queue[q][0].bytes);
            pop(s, q, 0);
        }
        break;
    case 3:
        if (s->count[q]) pop(s, q, 0);
        break;
    case 4: {
        uint8_t c = next_byte(in);
        if (s->count[q]) {
            dgram_t *d = &s->queue[q][c % s->count[q]];
            rl_endpoint_receive(s->e[1 - q], d->data, d->bytes);
        }
        break;
    }
    case 5: deliver_mutated(s, in, q); break;
    case 6: inject(s, in, q); break;
    default:
        for (int side = 0; side < 2; side++)
            while (s->count[side]) {
                rl_endpoint_receive(s->e[1 - side], s->queue[side][0].data, s->queue[side][0].bytes);
                pop(s, side, 0);
            }
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static state_t s;
    input_t in = {data, size, 0};
    check_codec(data, size);
    memset(&s, 0, sizeof s);
    create_endpoints(&s, next_byte(&in));
    double now = 0;
    for (int ops = 0; in.at < in.size && ops++ < 4000;) {
        step(&s, &in, &now);
        for (int i = 0; i < 2; i++) REQUIRE(s.acked[i] + s.lost[i] <= s.sent[i]);
    }
    for (int i = 0; i < 2; i++) {
        const uint64_t *k = rl_endpoint_counters(s.e[i]);
        REQUIRE(k[RL_COUNTER_PACKETS_ACKED] == s.acked[i]);
        REQUIRE(k[RL_COUNTER_PACKETS_LOST] == s.lost[i]);
        while (s.count[i]) pop(&s, i, 0);
        rl_endpoint_destroy(s.e[i]);
    }
    return 0;
}
