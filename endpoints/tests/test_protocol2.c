/* Tests of the protocol2 framing (src/protocol2.c) on its own: exact bytes of
 * a hand-written packet, and every reason a reader gives. The chunk codec's
 * vector tests (test_wire.c) exercise it again through real packets. */
#include <string.h>

#include "protocol2.h"
#include "test.h"

/* A packet of 2 + 16 + 3 bits, 2 bytes, and the end check:
 * int(2, 0..3), bits(0xBEEF, 16), int(5, 1..8), bytes "hi", check. */
static int write_sample(uint8_t *buffer, uint32_t protocol_id)
{
    p2_writer_t w;
    /* 4 CRC + 3 bytes of 21 bits (padded) + 2 data + 4 check */
    p2_writer_begin(&w, buffer, 13);
    p2_write_int(&w, 2, 0, 3);
    p2_write_bits(&w, 0xBEEF, 16);
    p2_write_int(&w, 5, 1, 8);
    p2_write_bytes(&w, (const uint8_t *)"hi", 2);
    p2_write_check(&w);
    return p2_write_finish(&w, protocol_id);
}

static void test_exact_bytes(void)
{
    uint8_t buffer[13];
    memset(buffer, 0xff, sizeof buffer); /* begin clears it */
    CHECK_EQ(write_sample(buffer, 0x11223344u), 13);
    /* LSB first: 2 -> bits 10, then 0xBEEF from bit 2, then 4 (5 - 1) in 3 bits from bit 18. */
    const uint8_t body[] = {0xBE, 0xFB, 0x12, 'h', 'i', 0xE2, 0xAC, 0x08, 0x99};
    CHECK(memcmp(buffer + 4, body, sizeof body) == 0);
    uint32_t crc = (uint32_t)buffer[0] | (uint32_t)buffer[1] << 8 | (uint32_t)buffer[2] << 16 |
                   (uint32_t)buffer[3] << 24;
    CHECK_EQ(crc, p2_packet_crc(0x11223344u, buffer, 13));
    CHECK(crc != p2_packet_crc(0x55667788u, buffer, 13));
}

static void test_read_back(void)
{
    uint8_t buffer[13];
    write_sample(buffer, 0x55667788u);
    p2_reader_t r;
    uint32_t a, b, c;
    const uint8_t *data;
    CHECK_EQ(p2_reader_begin(&r, 0x55667788u, buffer, 13), P2_READ_OK);
    CHECK_EQ(p2_read_int(&r, 0, 3, &a), P2_READ_OK);
    CHECK_EQ(p2_read_bits(&r, 16, &b), P2_READ_OK);
    CHECK_EQ(p2_read_int(&r, 1, 8, &c), P2_READ_OK);
    CHECK_EQ(p2_read_bytes(&r, 2, &data), P2_READ_OK);
    CHECK_EQ(p2_read_check(&r), P2_READ_OK);
    CHECK_EQ(p2_read_end(&r), P2_READ_OK);
    CHECK_EQ(a, 2);
    CHECK_EQ(b, 0xBEEF);
    CHECK_EQ(c, 5);
    CHECK(data == buffer + 7 && memcmp(data, "hi", 2) == 0);
}

/* Every reason, each from the smallest datagram that gives it. */
static void test_reasons(void)
{
    uint8_t buffer[16];
    p2_reader_t r;
    uint32_t v;
    const uint8_t *data;
    write_sample(buffer, 1);
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 3), P2_READ_TRUNCATED);
    CHECK_EQ(p2_reader_begin(&r, 2, buffer, 13), P2_READ_BAD_CRC);

    /* A 5-byte packet: one byte of fields after the CRC. */
    p2_writer_t w;
    p2_writer_begin(&w, buffer, 5);
    p2_write_bits(&w, 0x07, 3); /* a 3-bit field holding 7 */
    CHECK_EQ(p2_write_finish(&w, 1), 5);
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 5), P2_READ_OK);
    CHECK_EQ(p2_read_int(&r, 0, 5, &v), P2_READ_BAD_VALUE); /* 0..5 takes 3 bits; 7 is out of range */
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 5), P2_READ_OK);
    CHECK_EQ(p2_read_bits(&r, 9, &v), P2_READ_TRUNCATED);
    CHECK_EQ(p2_read_bits(&r, 1, &v), P2_READ_OK);
    CHECK_EQ(p2_read_align(&r), P2_READ_BAD_PADDING); /* bits 1 and 2 are set */
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 5), P2_READ_OK);
    CHECK_EQ(p2_read_bits(&r, 3, &v), P2_READ_OK);
    CHECK_EQ(p2_read_align(&r), P2_READ_OK);
    CHECK_EQ(p2_read_end(&r), P2_READ_OK);
    CHECK_EQ(p2_read_check(&r), P2_READ_TRUNCATED);
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 5), P2_READ_OK);
    CHECK_EQ(p2_read_bytes(&r, 2, &data), P2_READ_TRUNCATED);

    /* A wrong end check, and bytes after a right one. */
    write_sample(buffer, 1);
    buffer[12] ^= 0x01;
    chunk_test_fix_crc(1, buffer, 13);
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 13), P2_READ_OK);
    CHECK_EQ(p2_read_bytes(&r, 5, &data), P2_READ_OK);
    CHECK_EQ(p2_read_check(&r), P2_READ_BAD_END_CHECK);
    write_sample(buffer, 1);
    buffer[13] = 0;
    chunk_test_fix_crc(1, buffer, 14);
    CHECK_EQ(p2_reader_begin(&r, 1, buffer, 14), P2_READ_OK);
    CHECK_EQ(p2_read_bytes(&r, 5, &data), P2_READ_OK);
    CHECK_EQ(p2_read_check(&r), P2_READ_OK);
    CHECK_EQ(p2_read_end(&r), P2_READ_TRAILING_BYTES);
}

static void test_bits_required(void)
{
    CHECK_EQ(p2_bits_required(0, 0), 0);
    CHECK_EQ(p2_bits_required(0, 3), 2);
    CHECK_EQ(p2_bits_required(1, 8), 3);
    CHECK_EQ(p2_bits_required(0, 255), 8);
    CHECK_EQ(p2_bits_required(0, 0xffffffffu), 32);
}

const chunk_test_t protocol2_tests[] = {
    {"exact_bytes", test_exact_bytes},
    {"read_back", test_read_back},
    {"reasons", test_reasons},
    {"bits_required", test_bits_required},
    {NULL, NULL},
};
