/* common/protocol2-crc.c
 * protocol2's CRC-32 seeded with the protocol id, and the id a datagram's
 * stored CRC implies, worked back through the CRC's linearity (interface:
 * protocol2.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"

#include "cs-crc32.h"

/* ---- CRC-32 and the protocol id --------------------------------------- */

/* The reflected CRC-32 table (polynomial 0xEDB88320) and, because the top
 * bytes of its 256 entries are all different, the entry index for each top
 * byte: together they run the CRC register backwards one zero byte. */
static guint32 dp2_crc_table[256];
static guint8 dp2_crc_index_of_top[256];

/* Running the register backwards is linear, so 2^k zero bytes back is a
 * 32x32 bit matrix, kept as four byte tables: dp2_crc_back[k][b][v] is the
 * register 2^k bytes back from v in byte b (the other bytes zero), and a
 * register's image is the XOR of its four bytes' images. 2^16 bytes and
 * more are done with the top power repeatedly. */
#define DP2_CRC_BACK_POWERS 17
static guint32 dp2_crc_back[DP2_CRC_BACK_POWERS][4][256];

static guint32 dp2_crc_back_one(guint32 d)
{
    guint8 j = dp2_crc_index_of_top[d >> 24];
    return ((d ^ dp2_crc_table[j]) << 8) | j;
}

static guint32 dp2_crc_back_pow(guint k, guint32 d)
{
    return dp2_crc_back[k][0][d & 0xff] ^ dp2_crc_back[k][1][(d >> 8) & 0xff] ^
           dp2_crc_back[k][2][(d >> 16) & 0xff] ^ dp2_crc_back[k][3][d >> 24];
}

void dp2_crc_init(void)
{
    for (guint i = 0; i < 256; i++) {
        guint32 c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        dp2_crc_table[i] = c;
        dp2_crc_index_of_top[c >> 24] = (guint8)i;
    }
    for (guint b = 0; b < 4; b++)
        for (guint32 v = 0; v < 256; v++)
            dp2_crc_back[0][b][v] = dp2_crc_back_one(v << (8 * b));
    for (guint k = 1; k < DP2_CRC_BACK_POWERS; k++)
        for (guint b = 0; b < 4; b++)
            for (guint32 v = 0; v < 256; v++)
                dp2_crc_back[k][b][v] = dp2_crc_back_pow(k - 1, dp2_crc_back_pow(k - 1, v << (8 * b)));
}

guint32 dp2_crc_prefix(guint32 protocol_id)
{
    /* The last id's result: it is asked for once per datagram. */
    static gboolean known;
    static guint32 known_id, known_crc;

    if (known && known_id == protocol_id)
        return known_crc;
    guint8 prefix[8] = {
        (guint8)protocol_id, (guint8)(protocol_id >> 8),
        (guint8)(protocol_id >> 16), (guint8)(protocol_id >> 24),
        0, 0, 0, 0
    };

    known_crc = cs_crc32(0, prefix, sizeof prefix);
    known_id = protocol_id;
    known = TRUE;
    return known_crc;
}

guint32 dp2_crc_datagram(tvbuff_t *tvb, guint32 prefix_crc)
{
    guint len = tvb_captured_length(tvb);

    if (len < DP2_CRC_LEN)
        return 0;
    /* It runs over every datagram: common/cs-crc32.c folds with PCLMULQDQ where
     * the processor has it, else zlib (the spec's CRC-32 either way). */
    if (len == DP2_CRC_LEN)
        return prefix_crc;
    return cs_crc32(prefix_crc, tvb_get_ptr(tvb, DP2_CRC_LEN, len - DP2_CRC_LEN), len - DP2_CRC_LEN);
}

guint32 dp2_implied_protocol_id(guint32 stored, guint32 computed, guint32 id,
                               guint datagram_length)
{
    /* For messages of equal length the CRC difference depends only on the
     * difference of the messages: CRC(a) ^ CRC(b) = Z^n(a ^ b as a register),
     * where Z feeds one zero byte through the raw register and n is the
     * message length (datagram_length + 4: the id replaces nothing, it is
     * prepended and the CRC field counts as zero). The ids differ in the
     * first four bytes only, so undo n zero bytes and the register holds
     * LE32(implied ^ id). */
    guint32 d = stored ^ computed;
    guint n = datagram_length + 4;

    const guint top = DP2_CRC_BACK_POWERS - 1;

    if (d == 0)
        return id;
    /* n zero bytes back: one table step per set bit of n. */
    for (; n >> top; n -= 1u << top)
        d = dp2_crc_back_pow(top, d);
    for (guint k = 0; n; k++, n >>= 1)
        if (n & 1)
            d = dp2_crc_back_pow(k, d);
    return id ^ d;
}
