/*
 * test_wire.c: the wire codec against the spec's test vectors (exact bytes,
 * both writing and reading), its hand-worked examples, and one crafted packet
 * per strict-reader rule.
 */
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "test.h"
#include "util.h"

/* ---- helpers ---- */

static void config_for(chunk_wire_config_t *config, int max_slices)
{
    chunk_wire_default_config(config);
    config->max_slices = max_slices;
}

/* docs/protocol.md, "Three packets worked by hand" (default constants): the
 * ack of chunk 0x1234 with slices 0, 2 and 3 of 5 acked, the last slice
 * (2 of 3) of chunk 0x0102 carrying 11 22 33 44 55, and slice 0 of 1 of
 * chunk 0 carrying ff. */
#define EXAMPLE_ACK "a4 de fe 51 69 24 08 1a e2 ac 08 99"
#define EXAMPLE_SLICE "c9 44 a2 9b 04 02 04 04 08 00 11 22 33 44 55 e2 ac 08 99"
#define EXAMPLE_TINY_SLICE "0e 57 a1 72 00 00 00 00 00 00 ff e2 ac 08 99"

/* Rewrites a datagram's CRC so that only the rule a test breaks can fail. */
static void fix_crc(const chunk_wire_config_t *config, uint8_t *packet, int bytes)
{
    chunk_test_fix_crc(config->protocol_id, packet, bytes);
}

static int bytes_equal(const uint8_t *a, int a_bytes, const uint8_t *b, int b_bytes)
{
    return a_bytes == b_bytes && memcmp(a, b, (size_t)a_bytes) == 0;
}

/* ---- test vectors ---- */

/* The next whitespace-separated field of *cursor, NUL-terminated in place,
 * or NULL at the end of the line (strtok_r is not C11). */
static char *next_field(char **cursor)
{
    char *p = *cursor;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p) {
        *cursor = p;
        return NULL;
    }
    char *field = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
    if (*p) *p++ = '\0';
    *cursor = p;
    return field;
}

/* Checks one vector line both ways; returns 1 when it was a packet line. */
static int check_vector_line(const chunk_wire_config_t *config, const char *file, int line_no, char *line)
{
    static uint8_t expected[CHUNK_MAX_PACKET_BYTES], written[CHUNK_MAX_PACKET_BYTES];
    static uint8_t data[CHUNK_SLICE_SIZE_LIMIT];
    static chunk_ack_packet_t ack;
    char *save = line;
    char *kind = next_field(&save);
    if (!kind || kind[0] == '#') return 0;
    int failures_before = chunk_test_failures;
    if (strcmp(kind, "A") == 0) {
        char *f_chunk = next_field(&save), *f_num = next_field(&save);
        char *f_bits = next_field(&save), *f_hex = next_field(&save);
        CHECK(f_chunk && f_num && f_bits && f_hex);
        if (!f_hex) return 1;
        int expected_bytes = chunk_test_parse_hex(f_hex, expected, sizeof expected);
        CHECK(expected_bytes > 0);
        memset(&ack, 0, sizeof ack);
        ack.chunk_id = (uint16_t)atoi(f_chunk);
        ack.num_slices = atoi(f_num);
        CHECK_EQ((int)strlen(f_bits), ack.num_slices);
        for (int i = 0; i < ack.num_slices && f_bits[i]; i++) ack.acked[i] = (uint8_t)(f_bits[i] == '1');

        int bytes = chunk_write_ack_packet(config, &ack, written, sizeof written);
        CHECK(bytes_equal(written, bytes, expected, expected_bytes));
        CHECK_EQ(chunk_ack_packet_size(config, ack.num_slices), expected_bytes);

        chunk_packet_t packet;
        CHECK_EQ(chunk_read_packet(config, expected, expected_bytes, &packet), CHUNK_READ_OK);
        CHECK_EQ(packet.type, CHUNK_PACKET_ACK);
        CHECK_EQ(packet.u.ack.chunk_id, ack.chunk_id);
        CHECK_EQ(packet.u.ack.num_slices, ack.num_slices);
        CHECK(memcmp(packet.u.ack.acked, ack.acked, (size_t)ack.num_slices) == 0);
    } else if (strcmp(kind, "S") == 0) {
        char *f[6];
        for (int i = 0; i < 6; i++) f[i] = next_field(&save);
        CHECK(f[5] != NULL);
        if (!f[5]) return 1;
        int expected_bytes = chunk_test_parse_hex(f[5], expected, sizeof expected);
        CHECK(expected_bytes > 0);
        chunk_slice_packet_t slice = {(uint16_t)atoi(f[0]), atoi(f[1]), atoi(f[2]), atoi(f[3]), data};
        int dseed = atoi(f[4]);
        for (int i = 0; i < slice.slice_bytes; i++) data[i] = (uint8_t)((i * 7 + dseed) % 256);

        int bytes = chunk_write_slice_packet(config, &slice, written, sizeof written);
        CHECK(bytes_equal(written, bytes, expected, expected_bytes));
        CHECK_EQ(chunk_slice_packet_size(config, slice.slice_id, slice.num_slices, slice.slice_bytes),
                 expected_bytes);

        chunk_packet_t packet;
        CHECK_EQ(chunk_read_packet(config, expected, expected_bytes, &packet), CHUNK_READ_OK);
        CHECK_EQ(packet.type, CHUNK_PACKET_SLICE);
        CHECK_EQ(packet.u.slice.chunk_id, slice.chunk_id);
        CHECK_EQ(packet.u.slice.slice_id, slice.slice_id);
        CHECK_EQ(packet.u.slice.num_slices, slice.num_slices);
        CHECK_EQ(packet.u.slice.slice_bytes, slice.slice_bytes);
        CHECK(packet.u.slice.data >= expected && packet.u.slice.data + packet.u.slice.slice_bytes <= expected + expected_bytes);
        CHECK(memcmp(packet.u.slice.data, data, (size_t)slice.slice_bytes) == 0);
    } else {
        fprintf(stderr, "%s:%d: unknown vector line kind '%s'\n", file, line_no, kind);
        chunk_test_failures++;
    }
    if (chunk_test_failures != failures_before) fprintf(stderr, "  ... in %s line %d\n", file, line_no);
    return 1;
}

/* Checks every line of one vector file; returns the number of packets. */
static int check_vector_file(const char *name, int max_slices)
{
    char path[4096];
    FILE *f = chunk_test_open_vectors(name, path, sizeof path);
    if (!f) return 0;
    chunk_wire_config_t config;
    config_for(&config, max_slices);
    static char line[4 * CHUNK_MAX_PACKET_BYTES];
    int line_no = 0, packets = 0;
    while (fgets(line, sizeof line, f)) {
        line_no++;
        CHECK(strchr(line, '\n') != NULL || feof(f)); /* a line never exceeds the buffer */
        packets += check_vector_line(&config, path, line_no, line);
    }
    fclose(f);
    return packets;
}

static void test_vectors_256(void)
{
    /* 54 acks + 66 slices: a count that changes means lines were skipped. */
    CHECK_EQ(check_vector_file("vectors-256.txt", 256), 120);
}

static void test_vectors_32(void)
{
    CHECK_EQ(check_vector_file("vectors-32.txt", 32), 120);
}

/* ---- the packets worked by hand (docs/protocol.md, "Three packets worked by hand") ---- */

static void check_write_read_slice(const chunk_wire_config_t *config, const chunk_slice_packet_t *slice,
                                   const char *hex)
{
    uint8_t expected[64], written[CHUNK_MAX_PACKET_BYTES];
    int expected_bytes = chunk_test_parse_hex(hex, expected, sizeof expected);
    int bytes = chunk_write_slice_packet(config, slice, written, sizeof written);
    CHECK(bytes_equal(written, bytes, expected, expected_bytes));
    chunk_packet_t packet;
    CHECK_EQ(chunk_read_packet(config, expected, expected_bytes, &packet), CHUNK_READ_OK);
    CHECK_EQ(packet.type, CHUNK_PACKET_SLICE);
    CHECK_EQ(packet.u.slice.chunk_id, slice->chunk_id);
    CHECK_EQ(packet.u.slice.slice_id, slice->slice_id);
    CHECK_EQ(packet.u.slice.num_slices, slice->num_slices);
    CHECK_EQ(packet.u.slice.slice_bytes, slice->slice_bytes);
    CHECK(memcmp(packet.u.slice.data, slice->data, (size_t)slice->slice_bytes) == 0);
}

static void test_spec_examples(void)
{
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);

    static chunk_ack_packet_t ack;
    memset(&ack, 0, sizeof ack);
    ack.chunk_id = 0x1234;
    ack.num_slices = 5;
    const uint8_t bits[5] = {1, 0, 1, 1, 0};
    memcpy(ack.acked, bits, sizeof bits);
    uint8_t expected[64], written[64];
    int expected_bytes = chunk_test_parse_hex(EXAMPLE_ACK, expected, sizeof expected);
    CHECK_EQ(expected_bytes, 12);
    int bytes = chunk_write_ack_packet(&config, &ack, written, sizeof written);
    CHECK(bytes_equal(written, bytes, expected, expected_bytes));
    chunk_packet_t packet;
    CHECK_EQ(chunk_read_packet(&config, expected, expected_bytes, &packet), CHUNK_READ_OK);
    CHECK_EQ(packet.type, CHUNK_PACKET_ACK);
    CHECK_EQ(packet.u.ack.chunk_id, 0x1234);
    CHECK_EQ(packet.u.ack.num_slices, 5);
    CHECK(memcmp(packet.u.ack.acked, bits, sizeof bits) == 0);

    const uint8_t five[5] = {0x11, 0x22, 0x33, 0x44, 0x55};
    chunk_slice_packet_t slice = {0x0102, 2, 3, 5, five};
    check_write_read_slice(&config, &slice, EXAMPLE_SLICE);

    const uint8_t ff[1] = {0xff};
    chunk_slice_packet_t tiny = {0, 0, 1, 1, ff};
    check_write_read_slice(&config, &tiny, EXAMPLE_TINY_SLICE);
}

/* Sizes (docs/protocol.md, "Slice" and "Ack"): a non-last slice is 1037 / 1036 bytes, a last
 * one 14 + sliceBytes (256 variant), a full ack 44 / 15 bytes, an ack of N
 * slices 8 + ceil((25 + N) / 8) (256 variant). */
static void test_packet_sizes(void)
{
    chunk_wire_config_t c256, c32;
    config_for(&c256, 256);
    config_for(&c32, 32);
    CHECK_EQ(chunk_slice_packet_size(&c256, 0, 2, 1024), 1037);
    CHECK_EQ(chunk_slice_packet_size(&c32, 0, 2, 1024), 1036);
    CHECK_EQ(chunk_slice_packet_size(&c256, 1, 2, 1), 15);
    CHECK_EQ(chunk_slice_packet_size(&c256, 255, 256, 1024), 14 + 1024);
    CHECK_EQ(chunk_ack_packet_size(&c256, 256), 44);
    CHECK_EQ(chunk_ack_packet_size(&c32, 32), 15);
    for (int n = 1; n <= 256; n++) CHECK_EQ(chunk_ack_packet_size(&c256, n), 8 + (25 + n + 7) / 8);

    /* The writer refuses a buffer one byte short and fits an exact one. */
    static uint8_t data[1024], buffer[CHUNK_MAX_PACKET_BYTES];
    chunk_slice_packet_t slice = {7, 0, 2, 1024, data};
    CHECK_EQ(chunk_write_slice_packet(&c256, &slice, buffer, 1036), -1);
    CHECK_EQ(chunk_write_slice_packet(&c256, &slice, buffer, 1037), 1037);
    static chunk_ack_packet_t ack;
    memset(&ack, 0, sizeof ack);
    ack.num_slices = 256;
    CHECK_EQ(chunk_write_ack_packet(&c256, &ack, buffer, 43), -1);
    CHECK_EQ(chunk_write_ack_packet(&c256, &ack, buffer, 44), 44);
}

static void test_bits_required(void)
{
    /* The examples of docs/protocol.md, "Bits". */
    CHECK_EQ(p2_bits_required(0, 255), 8);
    CHECK_EQ(p2_bits_required(1, 256), 8);
    CHECK_EQ(p2_bits_required(0, 31), 5);
    CHECK_EQ(p2_bits_required(1, 32), 5);
    CHECK_EQ(p2_bits_required(1, 1024), 10);
    CHECK_EQ(p2_bits_required(0, 1), 1);
    /* Edges: an empty range needs no bits; one past a power of two needs one more. */
    CHECK_EQ(p2_bits_required(5, 5), 0);
    CHECK_EQ(p2_bits_required(0, 256), 9);
    CHECK_EQ(p2_bits_required(1, 1000), 10);
    CHECK_EQ(p2_bits_required(0, 0xffffffffu), 32);
}

static void test_crc(void)
{
    /* The plain CRC is the zlib / IEEE 802.3 one: its check value. */
    CHECK_EQ(p2_crc32(0, (const uint8_t *)"123456789", 9), 0xcbf43926u);
    /* Continuing a CRC over a second part is the CRC of the concatenation. */
    CHECK_EQ(p2_crc32(p2_crc32(0, (const uint8_t *)"1234", 4), (const uint8_t *)"56789", 5), 0xcbf43926u);

    /* The packet CRC is the plain CRC of LE32(ProtocolId) || 00 00 00 00 ||
     * datagram[4..]: build that input by hand and compare. */
    uint8_t ack[12];
    CHECK_EQ(chunk_test_parse_hex(EXAMPLE_ACK, ack, sizeof ack), 12);
    uint8_t input[16] = {0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0};
    memcpy(input + 8, ack + 4, 8);
    CHECK_EQ(p2_crc32(0, input, sizeof input), 0x51fedea4u);
    CHECK_EQ(p2_packet_crc(0x11223344u, ack, 12), 0x51fedea4u);
    /* The CRC field itself is taken as zero, whatever it holds. */
    ack[0] ^= 0xff;
    ack[3] ^= 0x5a;
    CHECK_EQ(p2_packet_crc(0x11223344u, ack, 12), 0x51fedea4u);
    /* Another protocol id gives another CRC. */
    CHECK(p2_packet_crc(0x11223345u, ack, 12) != 0x51fedea4u);
}

static void test_chunk_id_newer(void)
{
    CHECK(chunk_id_newer(1, 0));
    CHECK(!chunk_id_newer(0, 1));
    CHECK(!chunk_id_newer(5, 5));
    /* Across the wrap: 0 comes after 65535. */
    CHECK(chunk_id_newer(0, 65535));
    CHECK(!chunk_id_newer(65535, 0));
    CHECK(chunk_id_newer(10, 65530));
    /* The half-way edge: a - b == 32768 counts as newer from below only. */
    CHECK(chunk_id_newer(32768, 0));
    CHECK(!chunk_id_newer(0, 32768));
    CHECK(!chunk_id_newer(32769, 0));
    CHECK(chunk_id_newer(0, 32769));
    CHECK(chunk_id_newer(65535, 32767));
    CHECK(!chunk_id_newer(65535, 32766));
}

/* ---- one crafted packet per strict-reader rule ---- */

static chunk_read_result_t read_result(const chunk_wire_config_t *config, const uint8_t *buffer, int bytes)
{
    static chunk_packet_t packet;
    return chunk_read_packet(config, buffer, bytes, &packet);
}

/* A packet a test has changed gets its CRC fixed, so that the rule under
 * test, not the CRC, is what the reader finds: it must answer want. */
#define CHECK_FIXED_READ(config, packet, bytes, want)          \
    do {                                                       \
        fix_crc(config, packet, bytes);                        \
        CHECK_EQ(read_result(config, packet, bytes), want);    \
    } while (0)

static void test_reject_bad_crc(void)
{
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);
    uint8_t p[32];
    int n = chunk_test_parse_hex(EXAMPLE_SLICE, p, sizeof p);
    CHECK_EQ(read_result(&config, p, n), CHUNK_READ_OK);
    for (int byte = 0; byte < n; byte++) {
        for (int bit = 0; bit < 8; bit++) {
            p[byte] ^= (uint8_t)(1 << bit);
            CHECK_EQ(read_result(&config, p, n), CHUNK_READ_BAD_CRC);
            p[byte] ^= (uint8_t)(1 << bit);
        }
    }
    /* Another protocol id is another protocol. */
    config.protocol_id = 0x11223345u;
    CHECK_EQ(read_result(&config, p, n), CHUNK_READ_BAD_CRC);
}

/* Every shorter prefix of the packet hex, CRC fixed, is truncated: from the
 * header fields through the data to the end check. */
static void check_prefixes_truncated(const chunk_wire_config_t *config, const char *hex)
{
    uint8_t p[32], q[32];
    int n = chunk_test_parse_hex(hex, p, sizeof p);
    CHECK(n > 0);
    for (int len = 0; len < n; len++) {
        memcpy(q, p, (size_t)len);
        fix_crc(config, q, len);
        CHECK_EQ(read_result(config, q, len), CHUNK_READ_TRUNCATED);
    }
}

static void test_reject_truncated(void)
{
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);
    check_prefixes_truncated(&config, EXAMPLE_SLICE);
    check_prefixes_truncated(&config, EXAMPLE_ACK);
}

static void test_reject_bad_padding(void)
{
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);
    /* Ack of 5 slices: bits 32..61 used, bits 62..63 of byte 7 are padding. */
    uint8_t a[16];
    int m = chunk_test_parse_hex(EXAMPLE_ACK, a, sizeof a);
    a[7] |= 0x80;
    CHECK_FIXED_READ(&config, a, m, CHUNK_READ_BAD_PADDING);
    /* Last slice: size field ends at bit 74, bits 75..79 pad byte 9 before the data. */
    uint8_t p[32];
    int n = chunk_test_parse_hex(EXAMPLE_SLICE, p, sizeof p);
    p[9] |= 0x08;
    CHECK_FIXED_READ(&config, p, n, CHUNK_READ_BAD_PADDING);
    /* Non-last slice (256 variant): ids end at bit 64, bits 65..71 pad byte 8. */
    static uint8_t data[1024], big[CHUNK_MAX_PACKET_BYTES];
    chunk_slice_packet_t slice = {3, 0, 2, 1024, data};
    int b = chunk_write_slice_packet(&config, &slice, big, sizeof big);
    CHECK_EQ(read_result(&config, big, b), CHUNK_READ_OK);
    big[8] |= 0x40;
    CHECK_FIXED_READ(&config, big, b, CHUNK_READ_BAD_PADDING);
}

static void test_reject_bad_end_check(void)
{
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);
    uint8_t a[16];
    int m = chunk_test_parse_hex(EXAMPLE_ACK, a, sizeof a);
    for (int i = m - 4; i < m; i++) {
        a[i] ^= 0x01;
        CHECK_FIXED_READ(&config, a, m, CHUNK_READ_BAD_END_CHECK);
        a[i] ^= 0x01;
    }
    /* A last slice that claims 7 bytes where it carries 5 (two zero bytes
     * appended so the datagram is long enough) finds "08 99 00 00" where the
     * end check should be. */
    uint8_t p[32];
    int n = chunk_test_parse_hex(EXAMPLE_SLICE " 00 00", p, sizeof p);
    /* sliceBytes-1 is bits 65..74 (byte 8 bits 1..7, byte 9 bits 0..2): 4 -> 6. */
    p[8] = (uint8_t)((p[8] & 0x01) | (6 << 1));
    CHECK_FIXED_READ(&config, p, n, CHUNK_READ_BAD_END_CHECK);
}

static void test_reject_bad_value(void)
{
    /* With the default power-of-two constants every field value is in range;
     * a variant whose ranges do not fill their widths can carry out-of-range
     * values: 100 slices (7 bits for 0..99 and 1..100), slice size 1000
     * (10 bits for 1..1000). */
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);
    config.max_slices = 100;
    config.slice_size = 1000;
    static uint8_t data[1000];
    uint8_t buffer[64];

    /* numSlices 101 (written 100) in a 1-slice packet's numSlices field:
     * bits 56..62 after type (32), chunk id (33..48), slice id (49..55). */
    chunk_slice_packet_t slice = {9, 0, 1, 5, data};
    int n = chunk_write_slice_packet(&config, &slice, buffer, sizeof buffer);
    CHECK_EQ(read_result(&config, buffer, n), CHUNK_READ_OK);
    uint8_t q[64];
    memcpy(q, buffer, (size_t)n);
    q[7] = (uint8_t)((q[7] & 0x80) | 100); /* bits 56..62 = numSlices-1 */
    CHECK_FIXED_READ(&config, q, n, CHUNK_READ_BAD_VALUE);

    /* sliceId 110 (> 99): bits 49..55, byte 6 bits 1..7. */
    memcpy(q, buffer, (size_t)n);
    q[6] = (uint8_t)((q[6] & 0x01) | (110 << 1));
    CHECK_FIXED_READ(&config, q, n, CHUNK_READ_BAD_VALUE);

    /* sliceBytes 1001..1024 (written 1000..1023): bits 63..72. */
    memcpy(q, buffer, (size_t)n);
    uint32_t raw = 1010;
    q[7] = (uint8_t)((q[7] & 0x7f) | ((raw & 1) << 7));
    q[8] = (uint8_t)(raw >> 1);
    q[9] = (uint8_t)((q[9] & 0xfe) | ((raw >> 9) & 1));
    CHECK_FIXED_READ(&config, q, n, CHUNK_READ_BAD_VALUE);

    /* The same for an ack's numSlices: bits 49..55. */
    static chunk_ack_packet_t ack;
    memset(&ack, 0, sizeof ack);
    ack.chunk_id = 4;
    ack.num_slices = 3;
    n = chunk_write_ack_packet(&config, &ack, buffer, sizeof buffer);
    CHECK_EQ(read_result(&config, buffer, n), CHUNK_READ_OK);
    buffer[6] = (uint8_t)((buffer[6] & 0x01) | (127 << 1));
    CHECK_FIXED_READ(&config, buffer, n, CHUNK_READ_BAD_VALUE);
}

static void test_reject_slice_id_range(void)
{
    chunk_wire_config_t config;
    config_for(&config, 32);
    static uint8_t data[1024], buffer[CHUNK_MAX_PACKET_BYTES];
    /* A full (non-last) slice 2 of 8, then its id moved to 20 and to 8: the
     * layout stays that of a non-last slice, so only the range rule fails. */
    chunk_slice_packet_t slice = {77, 2, 8, 1024, data};
    int n = chunk_write_slice_packet(&config, &slice, buffer, sizeof buffer);
    CHECK_EQ(read_result(&config, buffer, n), CHUNK_READ_OK);
    /* 32 variant: type bit 32, chunk id 33..48, slice id 49..53 (byte 6 bits 1..5). */
    buffer[6] = (uint8_t)((buffer[6] & ~0x3e) | (20 << 1));
    fix_crc(&config, buffer, n);
    static chunk_packet_t packet;
    CHECK_EQ(chunk_read_packet(&config, buffer, n, &packet), CHUNK_READ_SLICE_ID_RANGE);
    /* The two ids are kept for the log line. */
    CHECK_EQ(packet.type, CHUNK_PACKET_SLICE);
    CHECK_EQ(packet.u.slice.slice_id, 20);
    CHECK_EQ(packet.u.slice.num_slices, 8);
    /* sliceId == numSlices is the smallest bad value: slice 8 of 8. */
    buffer[6] = (uint8_t)((buffer[6] & ~0x3e) | (8 << 1));
    CHECK_FIXED_READ(&config, buffer, n, CHUNK_READ_SLICE_ID_RANGE);
}

static void test_reject_trailing_bytes(void)
{
    chunk_wire_config_t config;
    chunk_wire_default_config(&config);
    uint8_t a[16];
    int m = chunk_test_parse_hex(EXAMPLE_ACK " 00", a, sizeof a);
    CHECK_FIXED_READ(&config, a, m, CHUNK_READ_TRAILING_BYTES);
    uint8_t p[32];
    int n = chunk_test_parse_hex(EXAMPLE_TINY_SLICE " e2 ac 08 99", p, sizeof p);
    CHECK_FIXED_READ(&config, p, n, CHUNK_READ_TRAILING_BYTES);
}

/* Random and mutated datagrams never crash the reader (ASan builds catch a
 * read outside the buffer: each datagram lives in an exact-size heap block),
 * and whatever it accepts, writing it again gives the same bytes. */
static void test_reader_survives_garbage(void)
{
    chunk_wire_config_t configs[3];
    config_for(&configs[0], 256);
    config_for(&configs[1], 32);
    chunk_wire_default_config(&configs[2]);
    configs[2].max_slices = 100;
    configs[2].slice_size = 1000;
    cs_rng_t rng;
    cs_rng_seed(&rng, 12345);
    static uint8_t data[1024], valid[CHUNK_MAX_PACKET_BYTES], rewritten[CHUNK_MAX_PACKET_BYTES];
    int accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        const chunk_wire_config_t *config = &configs[iter % 3];
        int bytes;
        if (iter % 2 == 0) {
            /* A valid packet with a few bits flipped and the CRC fixed. */
            int num = 1 + (int)(cs_rng_next(&rng) % (uint64_t)config->max_slices);
            if (cs_rng_next(&rng) & 1) {
                static chunk_ack_packet_t ack;
                ack.chunk_id = (uint16_t)cs_rng_next(&rng);
                ack.num_slices = num;
                for (int i = 0; i < num; i++) ack.acked[i] = (uint8_t)(cs_rng_next(&rng) & 1);
                bytes = chunk_write_ack_packet(config, &ack, valid, sizeof valid);
            } else {
                int id = (int)(cs_rng_next(&rng) % (uint64_t)num);
                int size = id == num - 1 ? 1 + (int)(cs_rng_next(&rng) % (uint64_t)config->slice_size)
                                         : config->slice_size;
                chunk_slice_packet_t slice = {(uint16_t)cs_rng_next(&rng), id, num, size, data};
                bytes = chunk_write_slice_packet(config, &slice, valid, sizeof valid);
            }
            int flips = (int)(cs_rng_next(&rng) % 4);
            for (int i = 0; i < flips; i++) {
                int bit = 32 + (int)(cs_rng_next(&rng) % (uint64_t)(8 * bytes - 32));
                valid[bit >> 3] ^= (uint8_t)(1 << (bit & 7));
            }
            if (cs_rng_next(&rng) % 4 == 0) bytes -= (int)(cs_rng_next(&rng) % (uint64_t)bytes);
            fix_crc(config, valid, bytes);
        } else {
            bytes = (int)(cs_rng_next(&rng) % 64);
            for (int i = 0; i < bytes; i++) valid[i] = (uint8_t)cs_rng_next(&rng);
            if (bytes >= 4 && (cs_rng_next(&rng) & 1)) fix_crc(config, valid, bytes);
        }
        uint8_t *exact = malloc(bytes > 0 ? (size_t)bytes : 1);
        CHECK(exact != NULL);
        if (!exact) return;
        memcpy(exact, valid, (size_t)bytes);
        chunk_packet_t packet;
        chunk_read_result_t result = chunk_read_packet(config, exact, bytes, &packet);
        CHECK(result >= CHUNK_READ_OK && result < CHUNK_READ_RESULT_COUNT);
        if (result == CHUNK_READ_OK) {
            accepted++;
            int again = packet.type == CHUNK_PACKET_ACK
                            ? chunk_write_ack_packet(config, &packet.u.ack, rewritten, sizeof rewritten)
                            : chunk_write_slice_packet(config, &packet.u.slice, rewritten, sizeof rewritten);
            CHECK(bytes_equal(rewritten, again, exact, bytes));
        }
        free(exact);
    }
    CHECK(accepted > 1000); /* the mutation mix does exercise the accept path */
}

static void test_result_names(void)
{
    CHECK(strcmp(chunk_read_result_name(CHUNK_READ_OK), "ok") == 0);
    CHECK(strcmp(chunk_read_result_name(CHUNK_READ_BAD_CRC), "bad crc") == 0);
    for (int r = 0; r < CHUNK_READ_RESULT_COUNT; r++) {
        const char *name = chunk_read_result_name((chunk_read_result_t)r);
        CHECK(name != NULL && strcmp(name, "unknown") != 0);
        for (int s = 0; s < r; s++) CHECK(strcmp(name, chunk_read_result_name((chunk_read_result_t)s)) != 0);
    }
    CHECK(strcmp(chunk_read_result_name(CHUNK_READ_RESULT_COUNT), "unknown") == 0);
}

static void test_rng(void)
{
    /* splitmix64's published first output for seed 0. */
    cs_rng_t rng;
    cs_rng_seed(&rng, 0);
    CHECK(cs_rng_next(&rng) == 0xe220a8397b1dcdafull);
    cs_rng_t a, b;
    cs_rng_seed(&a, 42);
    cs_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) {
        double u = cs_rng_uniform(&a);
        CHECK(u >= 0.0 && u < 1.0);
        CHECK(u == cs_rng_uniform(&b));
    }
}

const chunk_test_t wire_tests[] = {
    {"vectors_256", test_vectors_256},
    {"vectors_32", test_vectors_32},
    {"spec_examples", test_spec_examples},
    {"packet_sizes", test_packet_sizes},
    {"bits_required", test_bits_required},
    {"crc", test_crc},
    {"chunk_id_newer", test_chunk_id_newer},
    {"reject_bad_crc", test_reject_bad_crc},
    {"reject_truncated", test_reject_truncated},
    {"reject_bad_padding", test_reject_bad_padding},
    {"reject_bad_end_check", test_reject_bad_end_check},
    {"reject_bad_value", test_reject_bad_value},
    {"reject_slice_id_range", test_reject_slice_id_range},
    {"reject_trailing_bytes", test_reject_trailing_bytes},
    {"reader_survives_garbage", test_reader_survives_garbage},
    {"result_names", test_result_names},
    {"rng", test_rng},
    {NULL, NULL},
};
