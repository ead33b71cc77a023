/*
 * test_attacks.c: every attack of docs/protocol.md, "Hostile input", as a named test.
 *
 * The receiver's state is private, so "nothing else changes" is checked by
 * comparison: two receivers with the same config get the same legitimate
 * traffic at the same virtual times, and only one of them gets the attack.
 * The attack must move only the counters it names (the drop and its reason);
 * afterwards the two must send byte-identical acks, deliver identical chunks,
 * and end with identical counters apart from those deltas.
 *
 * Memory: the library's malloc, calloc and realloc go through a counting
 * wrapper (the linker's --wrap, set up in tests/CMakeLists.txt), and floods
 * of hostile traffic must make no allocation at all.
 *
 * Datagrams from a third party: chunk-recv and chunk-send drop them at the
 * socket (the library has no notion of addresses), so those tests run the
 * programs on 127.0.0.1 with the test process as the peer and the attacker.
 *
 * Random choices come from CHUNK_TEST_SEED (test.h), printed on failure.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunk.h"
#include "platform.h"
#include "test.h"
#include "util.h"
#include "netsim.h"

/* ---- allocation counting (the linker sends malloc & co. here) ---- */

static unsigned long allocations;

#ifdef CHUNK_TEST_WRAP_MALLOC
void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *pointer, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *pointer, size_t size);
void *__wrap_malloc(size_t size)
{
    allocations++;
    return __real_malloc(size);
}
void *__wrap_calloc(size_t count, size_t size)
{
    allocations++;
    return __real_calloc(count, size);
}
void *__wrap_realloc(void *pointer, size_t size)
{
    allocations++;
    return __real_realloc(pointer, size);
}
#endif

/* Checks that the wrapper really counts: a test that relies on it must not
 * pass because nothing was counted. */
static void check_counting_works(void)
{
#ifdef CHUNK_TEST_WRAP_MALLOC
    unsigned long before = allocations;
    netsim_config_t sim;
    netsim_default_config(&sim);
    netsim_t *s = netsim_create(&sim);
    CHECK(allocations > before);
    netsim_destroy(s);
#else
    fprintf(stderr, "test_attacks: built without CHUNK_TEST_WRAP_MALLOC: allocations cannot be counted\n");
    CHECK(0);
#endif
}

/* ---- data ---- */

#define MAX_CHUNK (CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES)

static uint8_t legit_data[4][MAX_CHUNK];
static uint8_t popped[MAX_CHUNK];

/* Fills the legitimate chunks from the seed, once; every test calls it, so
 * that each can run alone. */
static void fill_legit(void)
{
    static int filled;
    if (filled) return;
    filled = 1;
    cs_rng_t rng;
    cs_rng_seed(&rng, chunk_test_seed);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < MAX_CHUNK; i++) legit_data[k][i] = (uint8_t)cs_rng_next(&rng);
}

/* Writes slice slice_id of a chunk of size bytes with the codec. */
static int write_slice(const chunk_wire_config_t *wire, uint8_t *out, uint16_t chunk_id, const uint8_t *data,
                       int size, int slice_id)
{
    int num = (size + wire->slice_size - 1) / wire->slice_size;
    int bytes = slice_id == num - 1 ? size - slice_id * wire->slice_size : wire->slice_size;
    chunk_slice_packet_t slice = {chunk_id, slice_id, num, bytes, data + (size_t)slice_id * (size_t)wire->slice_size};
    int n = chunk_write_slice_packet(wire, &slice, out, CHUNK_MAX_PACKET_BYTES);
    CHECK(n > 0);
    return n;
}

/* ---- forging: any field value, in the config's field widths ---- */

#define FORGE_BYTES 70000

typedef struct forge_t {
    uint8_t buffer[FORGE_BYTES];
    int bit;
} forge_t;

static void forge_bits(forge_t *f, uint32_t value, int n)
{
    for (int i = 0; i < n; i++, f->bit++)
        if ((value >> i) & 1u) f->buffer[f->bit >> 3] |= (uint8_t)(1u << (f->bit & 7));
}

/* Pads to a byte boundary with the bits of pad (0 for a valid packet). */
static void forge_align(forge_t *f, uint32_t pad)
{
    int n = (8 - (f->bit & 7)) & 7;
    forge_bits(f, pad, n);
}

static void fix_crc(const chunk_wire_config_t *wire, uint8_t *packet, int bytes)
{
    chunk_test_fix_crc(wire->protocol_id, packet, bytes);
}

/* A slice packet with raw field values: slice_raw and count_raw (numSlices-1)
 * in the slice id width, a size field (raw, sliceBytes-1) when has_size,
 * data_bytes of data (0x5a when data is NULL), padding bits pad, and a
 * correct end check and CRC. Returns the length. */
static int forge_slice(const chunk_wire_config_t *wire, forge_t *f, uint16_t chunk_id, uint32_t slice_raw,
                       uint32_t count_raw, int has_size, uint32_t size_raw, const uint8_t *data, int data_bytes,
                       uint32_t pad)
{
    memset(f->buffer, 0, sizeof f->buffer);
    f->bit = 32;
    int id_bits = p2_bits_required(0, (uint32_t)wire->max_slices - 1);
    forge_bits(f, CHUNK_PACKET_SLICE, 1);
    forge_bits(f, chunk_id, 16);
    forge_bits(f, slice_raw, id_bits);
    forge_bits(f, count_raw, id_bits);
    if (has_size) forge_bits(f, size_raw, p2_bits_required(1, (uint32_t)wire->slice_size));
    forge_align(f, pad);
    int at = f->bit >> 3;
    CHECK(at + data_bytes + 4 <= FORGE_BYTES);
    if (data)
        memcpy(f->buffer + at, data, (size_t)data_bytes);
    else
        memset(f->buffer + at, 0x5a, (size_t)data_bytes);
    f->bit += 8 * data_bytes;
    forge_bits(f, P2_END_CHECK, 32);
    int bytes = f->bit >> 3;
    fix_crc(wire, f->buffer, bytes);
    return bytes;
}

/* ---- twin receivers ---- */

#define ACK_LOG_BYTES (1 << 20)

typedef struct ack_log_t {
    int count;
    long bytes;
    uint8_t data[ACK_LOG_BYTES]; /* each ack: 2-byte length, then the datagram */
} ack_log_t;

static void log_ack(void *context, const uint8_t *packet, int bytes)
{
    ack_log_t *log = context;
    log->count++;
    if (log->bytes + 2 + bytes > ACK_LOG_BYTES) return; /* count only; compared by count and prefix */
    log->data[log->bytes] = (uint8_t)bytes;
    log->data[log->bytes + 1] = (uint8_t)(bytes >> 8);
    memcpy(log->data + log->bytes + 2, packet, (size_t)bytes);
    log->bytes += 2 + bytes;
}

typedef struct twin_t {
    chunk_receiver_config_t config;
    chunk_receiver_t *r[2]; /* 0: control, 1: attacked */
    ack_log_t log[2];
    double now;
    uint64_t snapshot[2][CHUNK_RECEIVER_COUNTER_COUNT]; /* both, when an attack began */
    uint64_t snapshot_invalid[2][CHUNK_READ_RESULT_COUNT];
    int64_t delta[CHUNK_RECEIVER_COUNTER_COUNT];       /* what the attacks moved, in all */
    int64_t delta_invalid[CHUNK_READ_RESULT_COUNT];
    uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    forge_t forge;
} twin_t;

static twin_t *twin_create(int max_slices, int slice_size, uint16_t first_chunk_id)
{
    fill_legit();
    twin_t *t = chunk_test_require(calloc(1, sizeof *t), "twin");
    chunk_receiver_default_config(&t->config);
    t->config.wire.max_slices = max_slices;
    t->config.wire.slice_size = slice_size;
    t->config.first_chunk_id = first_chunk_id;
    t->config.send = log_ack;
    for (int i = 0; i < 2; i++) {
        t->config.context = &t->log[i];
        t->r[i] = chunk_receiver_create(&t->config);
        CHECK(t->r[i] != NULL);
    }
    return t;
}

static void twin_destroy(twin_t *t)
{
    chunk_receiver_destroy(t->r[0]);
    chunk_receiver_destroy(t->r[1]);
    free(t);
}

/* Advances virtual time and updates both (acks fall due here). */
static void twin_tick(twin_t *t, double dt)
{
    t->now += dt;
    chunk_receiver_update(t->r[0], t->now);
    chunk_receiver_update(t->r[1], t->now);
}

static void twin_both(twin_t *t, const uint8_t *packet, int bytes)
{
    chunk_receiver_receive_packet(t->r[0], t->now, packet, bytes);
    chunk_receiver_receive_packet(t->r[1], t->now, packet, bytes);
}

/* Legitimate slices [from, to) of a chunk to both, 1 ms apart. */
static void twin_slices(twin_t *t, uint16_t chunk_id, const uint8_t *data, int size, int from, int to)
{
    for (int s = from; s < to; s++) {
        int n = write_slice(&t->config.wire, t->packet, chunk_id, data, size, s);
        twin_both(t, t->packet, n);
        twin_tick(t, 0.001);
    }
}

/* Pops from both: each must give the chunk expected. */
static void twin_pop(twin_t *t, uint16_t chunk_id, const uint8_t *data, int size)
{
    for (int i = 0; i < 2; i++) {
        uint16_t id = 0;
        int n = chunk_receiver_pop_chunk(t->r[i], popped, (int)sizeof popped, &id);
        CHECK_EQ(n, size);
        CHECK_EQ(id, chunk_id);
        CHECK(n == size && memcmp(popped, data, (size_t)size) == 0);
    }
}

/* Before an attack: remembers both receivers' counters. What the attack
 * moved is then the attacked receiver's change minus the control's (time
 * passes during an attack, and legitimate acks may fall due in both). */
static void attack_begin(twin_t *t)
{
    for (int i = 0; i < 2; i++) {
        memcpy(t->snapshot[i], chunk_receiver_counters(t->r[i]), sizeof t->snapshot[i]);
        memcpy(t->snapshot_invalid[i], chunk_receiver_invalid_counters(t->r[i]), sizeof t->snapshot_invalid[i]);
    }
}

/* A twin of the wire max_slices x slice_size whose receivers, expecting chunk_id first, have
 * slice 0 of that chunk (size bytes of data, so its slice count is
 * announced); then the attack begins. */
static twin_t *twin_attacked_after_slice_0(int max_slices, int slice_size, uint16_t chunk_id, const uint8_t *data,
                                          int size)
{
    twin_t *t = twin_create(max_slices, slice_size, chunk_id);
    twin_slices(t, chunk_id, data, size, 0, 1);
    attack_begin(t);
    return t;
}

/* What the attack has moved counter i (or invalid reason i) by so far. */
static int64_t moved(const twin_t *t, int i)
{
    return (int64_t)(chunk_receiver_counters(t->r[1])[i] - t->snapshot[1][i]) -
           (int64_t)(chunk_receiver_counters(t->r[0])[i] - t->snapshot[0][i]);
}

static int64_t moved_invalid(const twin_t *t, int i)
{
    return (int64_t)(chunk_receiver_invalid_counters(t->r[1])[i] - t->snapshot_invalid[1][i]) -
           (int64_t)(chunk_receiver_invalid_counters(t->r[0])[i] - t->snapshot_invalid[0][i]);
}

static void attack(twin_t *t, const uint8_t *packet, int bytes)
{
    chunk_receiver_receive_packet(t->r[1], t->now, packet, bytes);
}

typedef struct expect_t {
    int counter; /* CHUNK_RECEIVER_COUNTER_*, or -1 - reason for an invalid reason */
    int64_t delta;
} expect_t;

#define INVALID(reason) (-1 - (reason))

/* After an attack: exactly the expected counters moved, by exactly that much;
 * every other counter is where it was. */
static void attack_end(twin_t *t, const expect_t *expect, int count, const char *what)
{
    int64_t want[CHUNK_RECEIVER_COUNTER_COUNT] = {0}, want_invalid[CHUNK_READ_RESULT_COUNT] = {0};
    for (int i = 0; i < count; i++) {
        if (expect[i].counter >= 0)
            want[expect[i].counter] += expect[i].delta;
        else
            want_invalid[-1 - expect[i].counter] += expect[i].delta;
    }
    for (int i = 0; i < CHUNK_RECEIVER_COUNTER_COUNT; i++) {
        int64_t got = moved(t, i);
        if (got != want[i]) {
            fprintf(stderr, "  %s: counter '%s' moved by %lld, expected %lld\n", what, chunk_receiver_counter_name(i),
                    (long long)got, (long long)want[i]);
            CHECK_EQ(got, want[i]);
        }
        t->delta[i] += got;
    }
    for (int i = 0; i < CHUNK_READ_RESULT_COUNT; i++) {
        int64_t got = moved_invalid(t, i);
        if (got != want_invalid[i]) {
            fprintf(stderr, "  %s: invalid '%s' moved by %lld, expected %lld\n", what,
                    chunk_read_result_name((chunk_read_result_t)i), (long long)got, (long long)want_invalid[i]);
            CHECK_EQ(got, want_invalid[i]);
        }
        t->delta_invalid[i] += got;
    }
}

/* At the end: the two sent the same acks and differ only by the attacks'
 * counter deltas. */
static void twin_compare(twin_t *t, int acks_may_differ)
{
    const uint64_t *c0 = chunk_receiver_counters(t->r[0]), *c1 = chunk_receiver_counters(t->r[1]);
    for (int i = 0; i < CHUNK_RECEIVER_COUNTER_COUNT; i++) {
        if (acks_may_differ && (i == CHUNK_RECEIVER_COUNTER_ACKS_SENT || i == CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT))
            continue;
        if ((int64_t)(c1[i] - c0[i]) != t->delta[i])
            fprintf(stderr, "  counter '%s': attacked %llu, control %llu, attacks accounted for %lld\n",
                    chunk_receiver_counter_name(i), (unsigned long long)c1[i], (unsigned long long)c0[i],
                    (long long)t->delta[i]);
        CHECK_EQ((int64_t)(c1[i] - c0[i]), t->delta[i]);
    }
    const uint64_t *i0 = chunk_receiver_invalid_counters(t->r[0]), *i1 = chunk_receiver_invalid_counters(t->r[1]);
    for (int i = 0; i < CHUNK_READ_RESULT_COUNT; i++) CHECK_EQ((int64_t)(i1[i] - i0[i]), t->delta_invalid[i]);
    CHECK(t->log[0].count > 0); /* the legitimate transfer was answered */
    if (acks_may_differ) {
        /* the same last ack (the final one), byte for byte */
        long at[2];
        for (int i = 0; i < 2; i++) {
            long p = 0, last = 0;
            while (p < t->log[i].bytes) {
                last = p;
                p += 2 + (t->log[i].data[p] | t->log[i].data[p + 1] << 8);
            }
            at[i] = last;
        }
        long n0 = t->log[0].bytes - at[0], n1 = t->log[1].bytes - at[1];
        CHECK_EQ(n0, n1);
        CHECK(n0 == n1 && memcmp(t->log[0].data + at[0], t->log[1].data + at[1], (size_t)n0) == 0);
        return;
    }
    CHECK_EQ(t->log[1].count, t->log[0].count);
    CHECK_EQ(t->log[1].bytes, t->log[0].bytes);
    CHECK(memcmp(t->log[0].data, t->log[1].data, (size_t)t->log[0].bytes) == 0);
}

/* The end of an attack test: the rest of the legitimate chunk (slices from
 * to to - 1) to both receivers, which must both deliver it intact and
 * count alike; then frees the twin. */
static void twin_finish(twin_t *t, uint16_t chunk_id, const uint8_t *data, int size, int from, int to)
{
    twin_slices(t, chunk_id, data, size, from, to);
    twin_pop(t, chunk_id, data, size);
    twin_compare(t, 0);
    twin_destroy(t);
}

/* ---- the attacks on a receiver ---- */

/* Hostile input 1: slice ids past the chunk's slice count, hoping for a write
 * outside the buffer. The wire format rejects sliceId >= numSlices; in a
 * config whose id field is wider than its range, ids past MaxSlicesPerChunk
 * are out of range too. */
static void test_slice_id_out_of_range(void)
{
    const uint8_t *data = legit_data[0];
    int size = 2 * 1024 - 100; /* announced with 2 slices */
    twin_t *t = twin_attacked_after_slice_0(256, 1024, 0, data, size);
    int n = 0;
    for (uint32_t id = 2; id < 256; id++, n++) {
        int bytes = forge_slice(&t->config.wire, &t->forge, 0, id, 1, id == 1, 0, NULL, 1024, 0);
        attack(t, t->forge.buffer, bytes);
    }
    /* ... and as the last slice, with a size field */
    int bytes = forge_slice(&t->config.wire, &t->forge, 0, 200, 1, 1, 1023, NULL, 1024, 0);
    attack(t, t->forge.buffer, bytes);
    n++;
    expect_t e[] = {{CHUNK_RECEIVER_COUNTER_PACKETS_INVALID, n}, {INVALID(CHUNK_READ_SLICE_ID_RANGE), n}};
    attack_end(t, e, 2, "slice id >= num slices");
    twin_tick(t, 0.2);
    twin_finish(t, 0, data, size, 1, 2);

    /* MaxSlicesPerChunk 100: a 7-bit id field holds 100..127 */
    t = twin_attacked_after_slice_0(100, 1024, 0, data, size);
    n = 0;
    for (uint32_t id = 100; id < 128; id++, n++) {
        bytes = forge_slice(&t->config.wire, &t->forge, 0, id, 127, 0, 0, NULL, 1024, 0);
        attack(t, t->forge.buffer, bytes);
    }
    expect_t e2[] = {{CHUNK_RECEIVER_COUNTER_PACKETS_INVALID, n}, {INVALID(CHUNK_READ_BAD_VALUE), n}};
    attack_end(t, e2, 2, "slice id >= MaxSlicesPerChunk");
    twin_finish(t, 0, data, size, 1, 2);
}

/* Hostile input 2: the first slice announces 2 slices, later ones of the same
 * chunk claim 256 (or 1, or 3): valid packets, ignored and counted. */
static void test_slice_count_widened(void)
{
    const uint8_t *data = legit_data[1];
    int size = 2 * 1024 - 1;
    twin_t *t = twin_attacked_after_slice_0(256, 1024, 7, data, size);
    int n = 0;
    for (int id = 0; id < 256; id++, n++) {
        chunk_slice_packet_t s = {7, id, 256, id == 255 ? 1 : 1024, legit_data[2]};
        int bytes = chunk_write_slice_packet(&t->config.wire, &s, t->packet, CHUNK_MAX_PACKET_BYTES);
        attack(t, t->packet, bytes);
        if (id % 16 == 0) twin_tick(t, 0.02); /* acks would fall due now, if these counted */
    }
    for (int count = 1; count <= 3; count += 2, n++) { /* narrowed to 1, widened to 3 */
        chunk_slice_packet_t s = {7, count - 1, count, 10, legit_data[2]};
        int bytes = chunk_write_slice_packet(&t->config.wire, &s, t->packet, CHUNK_MAX_PACKET_BYTES);
        attack(t, t->packet, bytes);
    }
    expect_t e[] = {{CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED, n}, {CHUNK_RECEIVER_COUNTER_SLICES_NUM_MISMATCH, n}};
    attack_end(t, e, 2, "slice count changed");
    twin_tick(t, 0.2);
    twin_finish(t, 7, data, size, 1, 2);
}

/* Hostile input 3: slices with more data than SliceSize, and non-last slices
 * with less, hoping for an overflow while copying. */
static void test_oversize_undersize_data(void)
{
    const uint8_t *data = legit_data[3];
    int size = 3 * 1024;
    twin_t *t = twin_attacked_after_slice_0(256, 1024, 0, data, size);
    int n = 0, end_check = 0, truncated = 0;
    /* non-last slices carrying 1025, 2048, 8192 and 65000 bytes: the end
     * check is not where the fixed size puts it */
    static const int over[] = {1025, 2048, 8192, 65000};
    for (int i = 0; i < 4; i++, n++, end_check++) {
        int bytes = forge_slice(&t->config.wire, &t->forge, 0, 1, 2, 0, 0, NULL, over[i], 0);
        attack(t, t->forge.buffer, bytes);
    }
    /* a last slice claiming 1024 bytes (the most its field holds) and carrying 2000 */
    int bytes = forge_slice(&t->config.wire, &t->forge, 0, 2, 2, 1, 1023, NULL, 2000, 0);
    attack(t, t->forge.buffer, bytes);
    n++, end_check++;
    /* non-last slices carrying 1, 1000 and 1023 bytes */
    static const int under[] = {1, 1000, 1023};
    for (int i = 0; i < 3; i++, n++, truncated++) {
        bytes = forge_slice(&t->config.wire, &t->forge, 0, 1, 2, 0, 0, NULL, under[i], 0);
        attack(t, t->forge.buffer, bytes);
    }
    /* a last slice claiming 500 bytes and carrying 100 */
    bytes = forge_slice(&t->config.wire, &t->forge, 0, 2, 2, 1, 499, NULL, 100, 0);
    attack(t, t->forge.buffer, bytes);
    n++, truncated++;
    expect_t e[] = {{CHUNK_RECEIVER_COUNTER_PACKETS_INVALID, n},
                    {INVALID(CHUNK_READ_BAD_END_CHECK), end_check},
                    {INVALID(CHUNK_READ_TRUNCATED), truncated}};
    attack_end(t, e, 3, "oversize / undersize data");
    twin_finish(t, 0, data, size, 1, 3);

    /* SliceSize 1000: the 10-bit size field holds 1001..1024 too */
    t = twin_attacked_after_slice_0(256, 1000, 0, data, 1500);
    n = 0;
    for (uint32_t raw = 1000; raw < 1024; raw++, n++) {
        bytes = forge_slice(&t->config.wire, &t->forge, 0, 1, 1, 1, raw, NULL, (int)raw + 1, 0);
        attack(t, t->forge.buffer, bytes);
    }
    expect_t e2[] = {{CHUNK_RECEIVER_COUNTER_PACKETS_INVALID, n}, {INVALID(CHUNK_READ_BAD_VALUE), n}};
    attack_end(t, e2, 2, "last slice larger than SliceSize");
    twin_finish(t, 0, data, 1500, 1, 2);
}

/* Sends valid slices (slice 0 of 4, 1024 bytes) for each id in ids to the
 * attacked receiver. */
static int attack_ids(twin_t *t, const uint16_t *ids, int count)
{
    for (int i = 0; i < count; i++) {
        chunk_slice_packet_t s = {ids[i], 0, 4, 1024, legit_data[2]};
        int bytes = chunk_write_slice_packet(&t->config.wire, &s, t->packet, CHUNK_MAX_PACKET_BYTES);
        attack(t, t->packet, bytes);
        twin_tick(t, 0.03);
    }
    return count;
}

/* Chunk ids far ahead of the expected one: ignored ("wrong chunk"), the
 * chunk in progress goes on. */
static void test_chunk_id_far_ahead(void)
{
    const uint8_t *data = legit_data[0];
    int size = 2 * 1024;
    twin_t *t = twin_attacked_after_slice_0(256, 1024, 0, data, size);
    /* 32768 ahead of 0 is ahead too: chunk_id_newer(0, 32768) is false */
    static const uint16_t ids[] = {1, 2, 3, 100, 1000, 32767, 32768};
    int n = attack_ids(t, ids, 7);
    expect_t e[] = {{CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED, n}, {CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK, n}};
    attack_end(t, e, 2, "chunk ids ahead");
    twin_finish(t, 0, data, size, 1, 2);
}

/* Chunk ids far behind: stale; only the chunk completed last, with its slice
 * count, is answered (the lost-final-ack case), never any other. */
static void test_chunk_id_far_behind(void)
{
    twin_t *t = twin_create(256, 1024, 40000);
    int size = 3 * 1024 - 5;
    twin_slices(t, 40000, legit_data[0], size, 0, 3);
    twin_pop(t, 40000, legit_data[0], size);
    twin_tick(t, 0.2);
    twin_slices(t, 40001, legit_data[1], size, 0, 1);
    attack_begin(t);
    /* older ids, down to 32768 behind the expected 40001 (7233: the formula
     * calls 40001 newer than 7233, and 7232 newer than 40001) */
    static const uint16_t ids[] = {39999, 39000, 20000, 7234, 7233};
    int n = attack_ids(t, ids, 5); /* slice 0 of 4: the completed chunk had 3 */
    n += attack_ids(t, (const uint16_t[]){40000}, 1); /* the completed chunk, with 4 slices, not its 3 */
    expect_t e[] = {{CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED, n}, {CHUNK_RECEIVER_COUNTER_SLICES_STALE, n}};
    attack_end(t, e, 2, "chunk ids behind");
    twin_finish(t, 40001, legit_data[1], size, 1, 3);
}

/* Across the 65535 -> 0 wrap: ahead and behind are judged wrap-aware, and
 * the legitimate chunks 65535, 0 and 1 arrive intact around the attacks. */
static void test_chunk_id_across_wrap(void)
{
    twin_t *t = twin_create(256, 1024, 65534);
    int size = 2 * 1024 + 17;
    twin_slices(t, 65534, legit_data[0], size, 0, 3);
    twin_pop(t, 65534, legit_data[0], size);
    twin_slices(t, 65535, legit_data[1], size, 0, 1);
    attack_begin(t);
    static const uint16_t ahead[] = {0, 1, 2, 100, 32766};
    int n_ahead = attack_ids(t, ahead, 5);
    static const uint16_t behind[] = {65533, 65000, 40000, 32768};
    int n_behind = attack_ids(t, behind, 4);
    expect_t e[] = {{CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED, n_ahead + n_behind},
                    {CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK, n_ahead},
                    {CHUNK_RECEIVER_COUNTER_SLICES_STALE, n_behind}};
    attack_end(t, e, 3, "chunk ids across the wrap (expecting 65535)");
    twin_slices(t, 65535, legit_data[1], size, 1, 3);
    twin_pop(t, 65535, legit_data[1], size);
    twin_slices(t, 0, legit_data[2], size, 0, 3);
    twin_pop(t, 0, legit_data[2], size);
    twin_slices(t, 1, legit_data[3], size, 0, 1);
    attack_begin(t);
    static const uint16_t behind2[] = {65535, 65534, 32770};
    static const uint16_t ahead2[] = {2, 32768};
    n_behind = attack_ids(t, behind2, 3);
    n_ahead = attack_ids(t, ahead2, 2);
    expect_t e2[] = {{CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED, n_ahead + n_behind},
                     {CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK, n_ahead},
                     {CHUNK_RECEIVER_COUNTER_SLICES_STALE, n_behind}};
    attack_end(t, e2, 3, "chunk ids across the wrap (expecting 1)");
    twin_finish(t, 1, legit_data[3], size, 1, 3);
}

/* The everyday ones (docs/protocol.md, "Hostile input"): bad CRC, truncation at
 * every length, non-zero padding, a wrong end check, trailing bytes, and an
 * ack sent to a receiver. */
static void test_malformed_datagrams(void)
{
    const uint8_t *data = legit_data[1];
    int size = 2 * 1024 - 1000;
    twin_t *t = twin_attacked_after_slice_0(256, 1024, 0, data, size);
    static uint8_t p[CHUNK_MAX_PACKET_BYTES + 1];
    int len = write_slice(&t->config.wire, p, 0, data, size, 1); /* the last slice: 24 bytes of data, 38 in all */
    int bad_crc = 0, padding = 0, end_check = 0, trailing = 0;
    /* Expected reasons. A prefix with its CRC recomputed fails wherever its
     * fields run out (truncated, or an end check or padding read from the
     * data): its reason is taken from the reader, which test_wire checks
     * rule by rule; what counts here is that it is dropped and counted. */
    int64_t reasons[CHUNK_READ_RESULT_COUNT] = {0};
    static chunk_packet_t scratch_packet;
    /* a CRC off by one bit anywhere */
    for (int bit = 0; bit < 8 * len; bit += 37, bad_crc++, reasons[CHUNK_READ_BAD_CRC]++) {
        p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        attack(t, p, len);
        p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    /* every shorter length, CRC recomputed so the reader gets past it */
    static uint8_t q[CHUNK_MAX_PACKET_BYTES + 1];
    for (int n = 0; n < len; n++) {
        memcpy(q, p, (size_t)n);
        fix_crc(&t->config.wire, q, n);
        chunk_read_result_t r = chunk_read_packet(&t->config.wire, q, n, &scratch_packet);
        CHECK(r != CHUNK_READ_OK && r != CHUNK_READ_BAD_CRC);
        reasons[r]++;
        attack(t, q, n);
    }
    /* non-zero padding: the last slice has 5 padding bits after the size field */
    for (uint32_t pad = 1; pad < 32; pad++, padding++, reasons[CHUNK_READ_BAD_PADDING]++) {
        int n = forge_slice(&t->config.wire, &t->forge, 0, 1, 1, 1, (uint32_t)(size - 1024 - 1), data + 1024,
                            size - 1024, pad);
        attack(t, t->forge.buffer, n);
    }
    /* the end check off by one bit */
    for (int bit = 0; bit < 32; bit++, end_check++, reasons[CHUNK_READ_BAD_END_CHECK]++) {
        memcpy(q, p, (size_t)len);
        q[len - 4 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
        fix_crc(&t->config.wire, q, len);
        attack(t, q, len);
    }
    /* 1..8 bytes after the end check */
    for (int extra = 1; extra <= 8; extra++, trailing++, reasons[CHUNK_READ_TRAILING_BYTES]++) {
        memcpy(q, p, (size_t)len);
        memset(q + len, 0, (size_t)extra);
        fix_crc(&t->config.wire, q, len + extra);
        attack(t, q, len + extra);
    }
    /* a valid ack, sent to a receiver */
    int n = chunk_test_write_ack(&t->config.wire, 0, 2, NULL, q, CHUNK_MAX_PACKET_BYTES);
    attack(t, q, n);

    expect_t e[CHUNK_READ_RESULT_COUNT + 2];
    int ne = 0;
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_PACKETS_INVALID, bad_crc + len + padding + end_check + trailing};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_PACKETS_WRONG_TYPE, 1};
    for (int i = 1; i < CHUNK_READ_RESULT_COUNT; i++)
        if (reasons[i]) e[ne++] = (expect_t){INVALID(i), reasons[i]};
    attack_end(t, e, ne, "malformed datagrams");
    twin_finish(t, 0, data, size, 1, 2);
}

/* Hostile input 4 and 5: a steady stream of maximum-size slices (every chunk id,
 * every slice id, 256 slices each, duplicates of the chunk in progress), and
 * datagrams of every odd size: no allocation at all while they are
 * processed, so memory cannot grow and the heap cannot fragment. */
static void test_flood_no_allocation(void)
{
    check_counting_works();
    twin_t *t = twin_create(256, 1024, 0);
    int size = 256 * 1024;
    const uint8_t *data = legit_data[0];
    twin_slices(t, 0, data, size, 0, 128);
    cs_rng_t rng;
    cs_rng_seed(&rng, chunk_test_seed ^ 0xf100d);
    static uint8_t junk[PLATFORM_SOCKET_MAX_DATAGRAM];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)cs_rng_next(&rng);
    attack_begin(t);
    unsigned long before = allocations;
    int valid = 0, invalid = 0, current = 0;
    for (int i = 0; i < 100000; i++) {
        int kind = (int)(cs_rng_next(&rng) % 4), bytes;
        if (kind == 0) {
            /* a maximum-size slice of some other chunk, claiming 256 slices */
            uint16_t id = (uint16_t)(1 + cs_rng_next(&rng) % 65535);
            chunk_slice_packet_t s = {id, (int)(cs_rng_next(&rng) % 255), 256, 1024, junk};
            bytes = chunk_write_slice_packet(&t->config.wire, &s, t->packet, CHUNK_MAX_PACKET_BYTES);
            attack(t, t->packet, bytes);
            valid++;
        } else if (kind == 1) {
            /* a duplicate of a slice the receiver holds (the chunk in progress) */
            bytes = write_slice(&t->config.wire, t->packet, 0, data, size, (int)(cs_rng_next(&rng) % 128));
            attack(t, t->packet, bytes);
            current++;
        } else {
            /* junk of any size up to a whole UDP datagram */
            bytes = (int)(cs_rng_next(&rng) % sizeof junk);
            attack(t, junk + cs_rng_next(&rng) % (sizeof junk - (size_t)bytes + 1), bytes);
            invalid++;
        }
        if (i % 100 == 0) {
            t->now += 0.001;
            chunk_receiver_update(t->r[1], t->now);
            chunk_receiver_update(t->r[0], t->now);
        }
    }
    unsigned long made = allocations - before;
    CHECK_EQ(made, 0);
    int64_t wrong = moved(t, CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK);
    int64_t stale = moved(t, CHUNK_RECEIVER_COUNTER_SLICES_STALE);
    CHECK_EQ(wrong + stale, valid);
    /* Duplicates of the chunk in progress are the one part that is not a
     * drop: they look like the sender's resends, and they make the periodic
     * ack due, so the attacked receiver acks at times the control does not.
     * Everything else must be the same: the counters, the chunk, and the
     * final ack. Reasons of the junk: whatever the reader said (test_wire
     * checks its rules), as long as each was counted once. */
    expect_t e[8 + CHUNK_READ_RESULT_COUNT];
    int ne = 0;
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_SLICES_RECEIVED, valid + current};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_SLICES_WRONG_CHUNK, wrong};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_SLICES_STALE, stale};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_SLICES_DUPLICATE, current};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_PACKETS_INVALID, invalid};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_ACKS_SENT, moved(t, CHUNK_RECEIVER_COUNTER_ACKS_SENT)};
    e[ne++] = (expect_t){CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT, moved(t, CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT)};
    int64_t reasons = 0;
    for (int i = 1; i < CHUNK_READ_RESULT_COUNT; i++) {
        int64_t r = moved_invalid(t, i);
        reasons += r;
        if (r) e[ne++] = (expect_t){INVALID(i), r};
    }
    CHECK_EQ(reasons, invalid);
    attack_end(t, e, ne, "flood");
    CHECK(t->log[1].count > t->log[0].count); /* the duplicates did make acks due */
    twin_slices(t, 0, data, size, 128, 256);
    twin_pop(t, 0, data, size);
    twin_compare(t, 1);
    twin_destroy(t);
}

/* ---- amplification ---- */

typedef struct amp_t {
    double now;
    int in_update;
    long acks, periodic, finals, bytes_out;
    double last_ack;
    int have_last;
    int windows[11][2]; /* per 100 ms window: periodic, final */
    int spacing_violations;
    chunk_receiver_t *receiver;
} amp_t;

static void amp_send(void *context, const uint8_t *packet, int bytes)
{
    (void)packet;
    amp_t *a = context;
    int w = (int)(a->now * 10);
    if (w > 10) w = 10;
    if (a->in_update) {
        /* a periodic ack: at least one interval after the previous ack */
        if (a->have_last && a->now - a->last_ack < 0.1) a->spacing_violations++;
        a->periodic++;
        a->windows[w][0]++;
    } else {
        a->finals++;
        a->windows[w][1]++;
    }
    a->acks++;
    a->bytes_out += bytes;
    a->last_ack = a->now;
    a->have_last = 1;
}

/* 10 000 datagrams in one second of virtual time, a mix of every kind the
 * attacker has: valid slices of the chunk being received (so acks do fall
 * due), stale slices of the chunk just completed, other chunk ids, changed
 * slice counts, and invalid datagrams. The application pops what completes.
 * Acks: at most one per 100 ms window apart from final acks (one per chunk
 * completed), and fewer bytes back than came in. Then the same without the
 * valid slices: nothing at all comes back. */
enum { AMP_MIXED, AMP_NO_VALID, AMP_CHEAPEST };

static void amplification_run(int mode, long *bytes_in, amp_t *a)
{
    memset(a, 0, sizeof *a);
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    config.send = amp_send;
    config.context = a;
    a->receiver = chunk_receiver_create(&config);
    cs_rng_t rng;
    cs_rng_seed(&rng, chunk_test_seed ^ 0xa3b);
    static uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    static uint8_t junk[2048];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)cs_rng_next(&rng);
    chunk_wire_config_t wire = config.wire;
    uint16_t expected = 0;
    *bytes_in = 0;
    for (int i = 0; i < 10000; i++) {
        a->now = i * 1e-4;
        int kind = (int)(cs_rng_next(&rng) % 10), bytes;
        if (i == 0) kind = 0; /* the chunk starts with 256 slices */
        if (mode == AMP_NO_VALID && (kind < 3 || kind == 6)) kind = 3;
        if (mode == AMP_CHEAPEST) {
            /* the smallest valid slice there is: 1 byte, the last of 256 */
            chunk_slice_packet_t s = {expected, 255, 256, 1, junk};
            bytes = chunk_write_slice_packet(&wire, &s, packet, CHUNK_MAX_PACKET_BYTES);
        } else if (kind < 3) {
            /* a valid slice of the chunk in progress: random slice of 256 */
            int id = (int)(cs_rng_next(&rng) % 256);
            chunk_slice_packet_t s = {expected, id, 256, id == 255 ? 1 : 1024, junk};
            bytes = chunk_write_slice_packet(&wire, &s, packet, CHUNK_MAX_PACKET_BYTES);
        } else if (kind < 5) {
            /* the chunk before: stale (the completed one, or older) */
            uint16_t id = (uint16_t)(expected - 1 - (uint16_t)(cs_rng_next(&rng) % 2));
            chunk_slice_packet_t s = {id, 0, 256, 1024, junk};
            bytes = chunk_write_slice_packet(&wire, &s, packet, CHUNK_MAX_PACKET_BYTES);
        } else if (kind < 6) {
            /* ahead of the expected chunk */
            chunk_slice_packet_t s = {(uint16_t)(expected + 1 + cs_rng_next(&rng) % 1000), 0, 1, 1, junk};
            bytes = chunk_write_slice_packet(&wire, &s, packet, CHUNK_MAX_PACKET_BYTES);
        } else if (kind < 7) {
            /* the chunk in progress with another slice count */
            chunk_slice_packet_t s = {expected, 0, 1 + (int)(cs_rng_next(&rng) % 255), 1024, junk};
            bytes = chunk_write_slice_packet(&wire, &s, packet, CHUNK_MAX_PACKET_BYTES);
        } else {
            bytes = (int)(cs_rng_next(&rng) % 1100);
            memcpy(packet, junk + cs_rng_next(&rng) % 900, (size_t)bytes);
        }
        *bytes_in += bytes;
        chunk_receiver_receive_packet(a->receiver, a->now, packet, bytes);
        a->in_update = 1;
        chunk_receiver_update(a->receiver, a->now);
        a->in_update = 0;
        uint16_t id;
        while (chunk_receiver_pop_chunk(a->receiver, popped, (int)sizeof popped, &id) > 0) expected = (uint16_t)(id + 1);
    }
    const uint64_t *c = chunk_receiver_counters(a->receiver);
    CHECK_EQ(a->acks, (long)c[CHUNK_RECEIVER_COUNTER_ACKS_SENT]);
    CHECK_EQ(a->bytes_out, (long)c[CHUNK_RECEIVER_COUNTER_ACK_BYTES_SENT]);
    CHECK_EQ(a->finals, (long)c[CHUNK_RECEIVER_COUNTER_CHUNKS_COMPLETED]);
    chunk_receiver_destroy(a->receiver);
}

static void test_amplification_flood(void)
{
    amp_t a;
    long in = 0;
    amplification_run(AMP_MIXED, &in, &a);
    printf("  amplification, mixed flood: 10000 datagrams, %ld bytes in; %ld acks (%ld periodic, %ld final), %ld bytes out\n",
           in, a.acks, a.periodic, a.finals, a.bytes_out);
    CHECK(a.periodic > 0); /* the valid slices were answered... */
    CHECK_EQ(a.spacing_violations, 0);
    for (int w = 0; w < 11; w++) CHECK(a.windows[w][0] <= 1); /* ...at most once per 100 ms */
    CHECK(a.periodic <= 10);
    CHECK(a.bytes_out < in);
    CHECK(a.bytes_out * 100 < in); /* by far: a 44-byte ack per 100 ms */

    amplification_run(AMP_CHEAPEST, &in, &a);
    printf("  amplification, 10000 one-byte slices of the chunk in progress: %ld bytes in; %ld acks, %ld bytes out\n",
           in, a.acks, a.bytes_out);
    CHECK(a.periodic > 0);
    CHECK_EQ(a.spacing_violations, 0);
    for (int w = 0; w < 11; w++) CHECK(a.windows[w][0] <= 1);
    CHECK(a.periodic <= 10);
    CHECK(a.bytes_out < in);

    amplification_run(AMP_NO_VALID, &in, &a);
    printf("  amplification, no valid slice of the chunk in progress: %ld bytes in; %ld acks\n", in, a.acks);
    CHECK_EQ(a.acks, 0);
    CHECK_EQ(a.bytes_out, 0);
}

/* The receiver's rules (docs/protocol.md, "Receiver") make the final ack
 * the one exception to the interval: an attacker who sends valid one-slice chunks with consecutive ids to an
 * application that pops them at once gets one final ack per chunk. What
 * still holds: each ack is smaller than the slice that earned it, so no
 * bytes are amplified, and no ack goes out without a completed chunk. */
static void test_amplification_tiny_chunks(void)
{
    amp_t a;
    memset(&a, 0, sizeof a);
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    config.send = amp_send;
    config.context = &a;
    a.receiver = chunk_receiver_create(&config);
    uint8_t packet[64], byte = 0x42;
    long in = 0;
    for (int i = 0; i < 10000; i++) {
        a.now = i * 1e-4;
        chunk_slice_packet_t s = {(uint16_t)i, 0, 1, 1, &byte};
        int bytes = chunk_write_slice_packet(&config.wire, &s, packet, sizeof packet);
        in += bytes;
        chunk_receiver_receive_packet(a.receiver, a.now, packet, bytes);
        a.in_update = 1;
        chunk_receiver_update(a.receiver, a.now);
        a.in_update = 0;
        while (chunk_receiver_pop_chunk(a.receiver, popped, (int)sizeof popped, NULL) > 0) {
        }
    }
    printf("  amplification, 10000 one-slice chunks: %ld bytes in; %ld acks (%ld periodic, %ld final), %ld bytes out\n",
           in, a.acks, a.periodic, a.finals, a.bytes_out);
    CHECK_EQ(a.finals, 10000);
    CHECK_EQ(a.spacing_violations, 0);
    CHECK(a.periodic <= 10);
    CHECK(a.bytes_out < in);
    chunk_receiver_destroy(a.receiver);
}

/* ---- a sender under forged acks ---- */

typedef struct slice_log_t {
    int count;
    long bytes;
    uint32_t hash;
} slice_log_t;

static void log_slice(void *context, const uint8_t *packet, int bytes)
{
    slice_log_t *log = context;
    log->count++;
    log->bytes += bytes;
    log->hash = p2_crc32(log->hash, packet, (size_t)bytes);
}

/* Acks that claim another slice count, other chunk ids, or arrive mangled are
 * ignored and counted; the sender goes on exactly as one that never saw them. */
static void test_sender_forged_acks(void)
{
    fill_legit();
    chunk_sender_config_t config;
    chunk_sender_default_config(&config);
    config.send = log_slice;
    slice_log_t logs[2];
    memset(logs, 0, sizeof logs);
    chunk_sender_t *s[2];
    for (int i = 0; i < 2; i++) {
        config.context = &logs[i];
        s[i] = chunk_sender_create(&config);
        CHECK(chunk_sender_queue_chunk(s[i], legit_data[0], 3000) == 0);
        chunk_sender_update(s[i], 0.0);
    }
    uint64_t before[CHUNK_SENDER_COUNTER_COUNT];
    memcpy(before, chunk_sender_counters(s[1]), sizeof before);
    static chunk_ack_packet_t ack;
    static uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    int ignored = 0, invalid = 0, wrong_type = 0;
    /* widened and narrowed counts for the chunk in flight */
    for (int count = 1; count <= 256; count++) {
        if (count == 3) continue;
        ack.chunk_id = 0;
        ack.num_slices = count;
        memset(ack.acked, 1, sizeof ack.acked);
        int n = chunk_write_ack_packet(&config.wire, &ack, packet, sizeof packet);
        chunk_sender_receive_packet(s[1], 0.01, packet, n);
        ignored++;
    }
    /* other chunk ids, right count */
    static const uint16_t ids[] = {1, 2, 65535, 32768, 32767, 40000};
    for (int i = 0; i < 6; i++) {
        ack.chunk_id = ids[i];
        ack.num_slices = 3;
        int n = chunk_write_ack_packet(&config.wire, &ack, packet, sizeof packet);
        chunk_sender_receive_packet(s[1], 0.01, packet, n);
        ignored++;
    }
    /* the right ack, mangled: bad CRC, truncated, trailing byte */
    ack.chunk_id = 0;
    ack.num_slices = 3;
    int n = chunk_write_ack_packet(&config.wire, &ack, packet, sizeof packet);
    packet[5] ^= 1;
    chunk_sender_receive_packet(s[1], 0.01, packet, n);
    packet[5] ^= 1;
    chunk_sender_receive_packet(s[1], 0.01, packet, n - 1);
    packet[n] = 0;
    fix_crc(&config.wire, packet, n + 1);
    chunk_sender_receive_packet(s[1], 0.01, packet, n + 1);
    invalid += 3;
    /* a slice sent to a sender */
    n = write_slice(&config.wire, packet, 0, legit_data[0], 3000, 0);
    chunk_sender_receive_packet(s[1], 0.01, packet, n);
    wrong_type++;

    const uint64_t *c = chunk_sender_counters(s[1]);
    for (int i = 0; i < CHUNK_SENDER_COUNTER_COUNT; i++) {
        int64_t want = i == CHUNK_SENDER_COUNTER_ACKS_IGNORED ? ignored
                     : i == CHUNK_SENDER_COUNTER_PACKETS_INVALID ? invalid
                     : i == CHUNK_SENDER_COUNTER_PACKETS_WRONG_TYPE ? wrong_type : 0;
        CHECK_EQ((int64_t)(c[i] - before[i]), want);
    }
    CHECK(chunk_sender_busy(s[1]));
    /* Both go on identically: resends, then the real ack ends the chunk. */
    for (int step = 1; step <= 30; step++) {
        chunk_sender_update(s[0], step * 0.01);
        chunk_sender_update(s[1], step * 0.01);
    }
    ack.chunk_id = 0;
    ack.num_slices = 3;
    memset(ack.acked, 1, 3);
    n = chunk_write_ack_packet(&config.wire, &ack, packet, sizeof packet);
    for (int i = 0; i < 2; i++) {
        chunk_sender_receive_packet(s[i], 0.31, packet, n);
        CHECK(!chunk_sender_busy(s[i]));
    }
    CHECK_EQ(logs[1].count, logs[0].count);
    CHECK_EQ(logs[1].bytes, logs[0].bytes);
    CHECK_EQ(logs[1].hash, logs[0].hash);
    CHECK(logs[0].count > 3); /* there were resends to compare */
    chunk_sender_destroy(s[0]);
    chunk_sender_destroy(s[1]);
}

/* ---- datagrams from a third party, through the programs on 127.0.0.1 ---- */

#ifndef CHUNK_TEST_BIN_DIR
#define CHUNK_TEST_BIN_DIR ""
#endif

typedef struct program_t {
    char dir[64];
    char out[128], err[128], port[128], in[128];
    pid_t pid;   /* 0 once reaped */
    int status;  /* exit status once reaped (128+N: killed by signal N) */
} program_t;

static int program_setup(program_t *p)
{
    memset(p, 0, sizeof *p);
    const char *tmp = getenv("TMPDIR");
    snprintf(p->dir, sizeof p->dir, "%s/chunk-attacks.XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(p->dir)) {
        fprintf(stderr, "  mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(p->out, sizeof p->out, "%s/out", p->dir);
    snprintf(p->err, sizeof p->err, "%s/err", p->dir);
    snprintf(p->port, sizeof p->port, "%s/port", p->dir);
    snprintf(p->in, sizeof p->in, "%s/in", p->dir);
    return 0;
}

static void program_cleanup(program_t *p, int keep)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
    }
    if (keep) {
        fprintf(stderr, "  files kept in %s\n", p->dir);
        return;
    }
    unlink(p->out);
    unlink(p->err);
    unlink(p->port);
    unlink(p->in);
    rmdir(p->dir);
}

/* Starts bin_dir/argv[0] with stdout and stderr to files. Returns 0 or -1. */
static int program_start(program_t *p, char **argv)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CHUNK_TEST_BIN_DIR, argv[0]);
    if (access(path, X_OK) != 0) {
        fprintf(stderr, "  %s is not there: build it (the attacks group needs it)\n", path);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    p->pid = fork();
    if (p->pid < 0) return -1;
    if (p->pid == 0) {
        int out = open(p->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(p->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0) _exit(126);
        dup2(out, 1);
        dup2(err, 2);
        argv[0] = path;
        execv(path, argv);
        _exit(127);
    }
    return 0;
}

/* Waits for the program to exit, at most timeout seconds. Returns its exit
 * status, or -1 if it had to be killed. */
static int program_running(program_t *p)
{
    int status;
    if (p->pid <= 0) return 0;
    if (waitpid(p->pid, &status, WNOHANG) != p->pid) return 1;
    p->pid = 0;
    p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
}

static int program_wait(program_t *p, double timeout)
{
    double end = platform_time() + timeout;
    for (;;) {
        if (!program_running(p)) return p->status;
        if (platform_time() > end) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, NULL, 0);
            p->pid = 0;
            return -1;
        }
        platform_sleep(0.01);
    }
}

/* The number before " from other addresses dropped" in the program's summary, or -1. */
static long foreign_dropped(const program_t *p)
{
    static char text[8192];
    FILE *f = fopen(p->err, "r");
    if (!f) return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, " from other addresses dropped");
    if (!at) return -1;
    char *start = at;
    while (start > text && start[-1] >= '0' && start[-1] <= '9') start--;
    return start == at ? -1 : strtol(start, NULL, 10);
}

static int open_loopback(platform_socket_t *s)
{
    platform_address_t any;
    char err[256];
    if (platform_address_parse("127.0.0.1:0", 4, 0, &any, err, sizeof err) != 0 ||
        platform_socket_open(s, &any, 0, err, sizeof err) != 0) {
        fprintf(stderr, "  socket on 127.0.0.1: %s\n", err);
        return -1;
    }
    return 0;
}

/* Datagrams the socket has waiting (drained). */
static int drain(platform_socket_t *s)
{
    static uint8_t buffer[PLATFORM_SOCKET_MAX_DATAGRAM];
    platform_address_t from;
    int n = 0;
    while (platform_socket_receive(s, &from, buffer) >= 0) n++;
    return n;
}

typedef struct udp_peer_t {
    platform_socket_t *socket;
    platform_address_t to;
} udp_peer_t;

static void udp_send(void *context, const uint8_t *packet, int bytes)
{
    udp_peer_t *peer = context;
    platform_socket_send(peer->socket, &peer->to, packet, bytes);
}

/* Fills the legitimate data and sets up the program's files. Returns 0, or
 * -1 (a failed check) when they cannot be set up. */
static int third_party_begin(program_t *p)
{
    fill_legit();
    if (program_setup(p) == 0) return 0;
    CHECK(0);
    return -1;
}

/* chunk-recv locks onto the first sender whose datagram is valid; then a
 * third party's valid slices of the same chunk (forged data), of the next
 * chunk, and of the completed one (which would earn all-ones acks) are
 * dropped and counted, and the third party gets nothing back. */
static void test_third_party_to_chunk_recv(void)
{
    program_t p;
    if (third_party_begin(&p) != 0) return;
    int failures = chunk_test_failures;
    platform_socket_t legit = {.fd = -1}, third = {.fd = -1};
    char *argv[] = {"chunk-recv", "-b", "127.0.0.1", "-p", "0", "--port-file", p.port, "-n", "1", "--linger", "1",
                    "-t", "20", p.out, NULL};
    CHECK(open_loopback(&legit) == 0 && open_loopback(&third) == 0);
    CHECK(program_start(&p, argv) == 0);
    uint16_t port = 0;
    for (int i = 0; i < 500 && port == 0; i++) {
        FILE *f = fopen(p.port, "r");
        unsigned value = 0;
        if (f && fscanf(f, "%u", &value) == 1) port = (uint16_t)value;
        if (f) fclose(f);
        if (!port) platform_sleep(0.01);
    }
    CHECK(port != 0);
    if (chunk_test_failures != failures) {
        program_cleanup(&p, 0);
        platform_socket_close(&legit);
        platform_socket_close(&third);
        return;
    }
    platform_address_t recv_address;
    char err[256];
    char text[64];
    snprintf(text, sizeof text, "127.0.0.1:%u", port);
    platform_address_parse(text, 4, 0, &recv_address, err, sizeof err);
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    static uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    const uint8_t *data = legit_data[0];
    int size = 2500;
    long third_sent = 0;

    /* before the lock: junk from the third party does not capture it */
    for (int i = 0; i < 3; i++, third_sent++) platform_socket_send(&third, &recv_address, legit_data[3] + i, 100);
    /* the sender's first slice: chunk-recv locks onto it */
    int n = write_slice(&wire, packet, 0, data, size, 0);
    platform_socket_send(&legit, &recv_address, packet, n);
    /* the third party's forged slices of chunk 0 (all of it) and chunk 1 */
    for (int s = 0; s < 3; s++, third_sent++) {
        n = write_slice(&wire, packet, 0, legit_data[2], size, s);
        platform_socket_send(&third, &recv_address, packet, n);
    }
    for (int s = 0; s < 2; s++, third_sent++) {
        n = write_slice(&wire, packet, 1, legit_data[2], size, s);
        platform_socket_send(&third, &recv_address, packet, n);
    }
    /* the real transfer */
    chunk_sender_config_t config;
    chunk_sender_default_config(&config);
    config.rate_bytes_per_second = 0;
    udp_peer_t peer = {&legit, recv_address};
    config.send = udp_send;
    config.context = &peer;
    chunk_sender_t *sender = chunk_sender_create(&config);
    CHECK(chunk_sender_queue_chunk(sender, data, size) == 0);
    double start = platform_time();
    static uint8_t buffer[PLATFORM_SOCKET_MAX_DATAGRAM];
    while (chunk_sender_busy(sender) && platform_time() - start < 10) {
        double now = platform_time();
        chunk_sender_update(sender, now);
        platform_address_t from;
        int got;
        while ((got = platform_socket_receive(&legit, &from, buffer)) >= 0)
            chunk_sender_receive_packet(sender, now, buffer, got);
        platform_sleep(0.002);
    }
    CHECK(!chunk_sender_busy(sender));
    /* after completion: stale slices of chunk 0 would draw all-ones acks */
    for (int s = 0; s < 3; s++, third_sent++) {
        n = write_slice(&wire, packet, 0, data, size, s);
        platform_socket_send(&third, &recv_address, packet, n);
    }
    int status = program_wait(&p, 20);
    CHECK_EQ(status, 0);
    CHECK_EQ(drain(&third), 0); /* nothing ever went to the third party */
    CHECK_EQ(foreign_dropped(&p), third_sent);
    FILE *f = fopen(p.out, "rb");
    static uint8_t got[4096];
    size_t got_bytes = f ? fread(got, 1, sizeof got, f) : 0;
    if (f) fclose(f);
    CHECK_EQ(got_bytes, size);
    CHECK(got_bytes == (size_t)size && memcmp(got, data, (size_t)size) == 0);
    chunk_sender_destroy(sender);
    platform_socket_close(&legit);
    platform_socket_close(&third);
    program_cleanup(&p, chunk_test_failures != failures);
}

/* chunk-send takes acks only from the receiver it sends to: a third party's
 * all-ones ack for the chunk in flight does not end it (the sender keeps
 * resending), and gets nothing back. */
static void test_third_party_to_chunk_send(void)
{
    program_t p;
    if (third_party_begin(&p) != 0) return;
    int failures = chunk_test_failures;
    platform_socket_t recv_socket = {.fd = -1}, third = {.fd = -1};
    CHECK(open_loopback(&recv_socket) == 0 && open_loopback(&third) == 0);
    const uint8_t *data = legit_data[1];
    int size = 5000;
    FILE *in = fopen(p.in, "wb");
    CHECK(in && fwrite(data, 1, (size_t)size, in) == (size_t)size);
    if (in) fclose(in);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%u", recv_socket.bound.port);
    char *argv[] = {"chunk-send", "--resend-delay", "0.05", "-t", "20", target, p.in, NULL};
    CHECK(program_start(&p, argv) == 0);
    if (chunk_test_failures != failures) {
        program_cleanup(&p, 0);
        platform_socket_close(&recv_socket);
        platform_socket_close(&third);
        return;
    }
    static uint8_t buffer[PLATFORM_SOCKET_MAX_DATAGRAM];
    platform_address_t sender_address, from;
    int have_sender = 0;
    double start = platform_time();
    while (!have_sender && platform_time() - start < 5) {
        if (platform_socket_receive(&recv_socket, &sender_address, buffer) >= 0)
            have_sender = 1;
        else
            platform_sleep(0.002);
    }
    CHECK(have_sender);
    chunk_wire_config_t wire;
    chunk_wire_default_config(&wire);
    long third_sent = 0;
    static uint8_t packet[CHUNK_MAX_PACKET_BYTES];
    if (have_sender) {
        /* forged acks: all ones for chunk 0 of 5 slices, repeated, and junk */
        int n = chunk_test_write_ack(&wire, 0, 5, NULL, packet, sizeof packet);
        for (int i = 0; i < 8; i++, third_sent++) platform_socket_send(&third, &sender_address, packet, n);
        for (int i = 0; i < 2; i++, third_sent++) platform_socket_send(&third, &sender_address, legit_data[0], 40);
        /* no real ack for 0.3 s: the sender must keep resending */
        drain(&recv_socket);
        platform_sleep(0.3);
        CHECK(drain(&recv_socket) > 0);
        CHECK(program_running(&p));
    }
    /* now the real receiver */
    chunk_receiver_config_t config;
    chunk_receiver_default_config(&config);
    udp_peer_t peer = {&recv_socket, sender_address};
    config.send = udp_send;
    config.context = &peer;
    chunk_receiver_t *receiver = chunk_receiver_create(&config);
    int got = 0;
    start = platform_time();
    while (have_sender && got == 0 && platform_time() - start < 10) {
        double now = platform_time();
        int n;
        while ((n = platform_socket_receive(&recv_socket, &from, buffer)) >= 0)
            if (platform_address_equal(&from, &sender_address)) chunk_receiver_receive_packet(receiver, now, buffer, n);
        chunk_receiver_update(receiver, now);
        got = chunk_receiver_pop_chunk(receiver, popped, (int)sizeof popped, NULL);
        platform_sleep(0.002);
    }
    CHECK_EQ(got, size);
    CHECK(got == size && memcmp(popped, data, (size_t)size) == 0);
    /* keep answering its resends until it sees the final ack and exits */
    int status = -1;
    start = platform_time();
    while (have_sender && platform_time() - start < 10) {
        double now = platform_time();
        int n;
        while ((n = platform_socket_receive(&recv_socket, &from, buffer)) >= 0)
            chunk_receiver_receive_packet(receiver, now, buffer, n);
        chunk_receiver_update(receiver, now);
        if (!program_running(&p)) break;
        platform_sleep(0.002);
    }
    status = program_wait(&p, 5);
    CHECK_EQ(status, 0);
    CHECK_EQ(drain(&third), 0);
    CHECK_EQ(foreign_dropped(&p), third_sent);
    chunk_receiver_destroy(receiver);
    platform_socket_close(&recv_socket);
    platform_socket_close(&third);
    program_cleanup(&p, chunk_test_failures != failures);
}

const chunk_test_t attacks_tests[] = {
    {"slice_id_out_of_range", test_slice_id_out_of_range},
    {"slice_count_widened", test_slice_count_widened},
    {"oversize_undersize_data", test_oversize_undersize_data},
    {"chunk_id_far_ahead", test_chunk_id_far_ahead},
    {"chunk_id_far_behind", test_chunk_id_far_behind},
    {"chunk_id_across_wrap", test_chunk_id_across_wrap},
    {"malformed_datagrams", test_malformed_datagrams},
    {"flood_no_allocation", test_flood_no_allocation},
    {"amplification_flood", test_amplification_flood},
    {"amplification_tiny_chunks", test_amplification_tiny_chunks},
    {"sender_forged_acks", test_sender_forged_acks},
    {"third_party_to_chunk_recv", test_third_party_to_chunk_recv},
    {"third_party_to_chunk_send", test_third_party_to_chunk_send},
    {NULL, NULL},
};
