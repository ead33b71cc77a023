/* protocol2.h
 * The packet framing shared by the protocols of Glenn Fiedler's "Building a
 * Game Network Protocol" series ("protocol2"): a CRC-32 seeded with a
 * protocol id that is never sent, a least-significant-bit-first bit stream,
 * zero padding to byte boundaries and a 32-bit end check.
 * (../shared/spec/wire-format.md, "The bit stream" and "Framing".)
 *
 * Kept apart from the chunk packet bodies so that another packet layout
 * (the fragmentation example's) can be decoded on the same framing.
 * This is an independent implementation; it shares no code with endpoints/.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PROTOCOL2_H
#define PROTOCOL2_H

#include <epan/packet.h>
#include <epan/expert.h>

/* wire-format.md, "Framing": bytes 0..3 CRC-32 little-endian, then the bit
 * stream, then align and the end check e2 ac 08 99. */
#define P2_CRC_LEN        4
#define P2_BODY_BIT       32
#define P2_END_CHECK      0x9908ACE2u
#define P2_END_CHECK_LEN  4
/* wire-format.md, "Constants": ProtocolId default. */
#define P2_DEFAULT_PROTOCOL_ID 0x11223344u

/* What a strict reader rejects (wire-format.md, "What a strict reader
 * rejects"). Bits from P2_ERR_BODY_BASE on are free for the body. */
#define P2_ERR_TRUNCATED  (1u << 0)   /* fewer bytes than the fields need */
#define P2_ERR_PADDING    (1u << 1)   /* non-zero padding bits */
#define P2_ERR_END_CHECK  (1u << 2)   /* no end check at the computed position */
#define P2_ERR_TRAILING   (1u << 3)   /* bytes after the end check */
#define P2_ERR_RANGE      (1u << 4)   /* int(min, max) value outside [min, max] */
#define P2_ERR_BODY_BASE  (1u << 8)

#define P2_MAX_PADS 4

typedef struct p2_pad {
    guint bit;      /* stream bit of the first padding bit */
    guint8 nbits;   /* 1..7 */
    guint8 value;   /* the padding bits as read (0 when clean) */
} p2_pad_t;

/* A reader over one datagram. It never reads past the captured bytes: once a
 * read would, P2_ERR_TRUNCATED is set and every later read returns 0 without
 * moving, so a hostile packet cannot make a caller loop or throw. */
typedef struct p2_reader {
    tvbuff_t *tvb;
    guint bit;           /* next stream bit */
    guint limit;         /* captured bits */
    guint32 errors;      /* P2_ERR_* */
    guint need_bytes;    /* when truncated: bytes the fields need at least */
    guint8 n_pads;
    p2_pad_t pads[P2_MAX_PADS];
    gboolean check_read; /* the end check's position was reached */
    guint check_offset;  /* byte offset of the end check (when check_read) */
    guint32 check_value; /* the 32 bits found there */
} p2_reader_t;

/* Starts a reader at the packet body (bit 32, after the CRC). */
void p2_reader_init(p2_reader_t *r, tvbuff_t *tvb);

/* Returns the bit length of max - min (0 when min == max): the width of
 * int(min, max) on the wire. */
guint p2_bits_required(guint32 min, guint32 max);

/* Reads nbits (0..32) raw bits, least significant first. Returns 0 and sets
 * P2_ERR_TRUNCATED when the datagram is too short. */
guint32 p2_read_bits(p2_reader_t *r, guint nbits);

/* Moves past nbits (any number) bits without reading them. Returns FALSE and
 * sets P2_ERR_TRUNCATED when the datagram is too short (or was already). */
gboolean p2_skip_bits(p2_reader_t *r, guint nbits);

/* Reads int(min, max): returns the raw field plus min. Sets P2_ERR_RANGE when
 * the value exceeds max (possible when max - min + 1 is not a power of 2). */
guint32 p2_read_int(p2_reader_t *r, guint32 min, guint32 max);

/* Skips to the next byte boundary, recording the padding. Returns FALSE (and
 * sets P2_ERR_PADDING) when a padding bit is set or P2_ERR_TRUNCATED. */
gboolean p2_read_align(p2_reader_t *r);

/* align, then n bytes verbatim. Returns their byte offset, or -1 (with
 * P2_ERR_TRUNCATED) when fewer than n bytes remain. */
gint p2_read_bytes(p2_reader_t *r, guint n);

/* align, then the end check; sets P2_ERR_END_CHECK, P2_ERR_TRUNCATED or
 * P2_ERR_TRAILING as they apply. Ends the packet. */
void p2_read_check(p2_reader_t *r);

/* TRUE when the datagram's last four bytes are the end check. */
gboolean p2_ends_with_check(tvbuff_t *tvb);

/* ---- CRC-32 and the protocol id --------------------------------------- */

/* Builds the tables p2_implied_protocol_id() needs. Call once. */
void p2_crc_init(void);

/* Returns the CRC-32 of LE32(protocol_id) || 00 00 00 00, the state the
 * packet CRC continues from; compute it once per configured id. */
guint32 p2_crc_prefix(guint32 protocol_id);

/* Returns the CRC the sender would have written for this datagram with the
 * protocol id whose p2_crc_prefix() is prefix_crc. Needs at least 4 captured
 * bytes (returns 0 otherwise). */
guint32 p2_crc_datagram(tvbuff_t *tvb, guint32 prefix_crc);

/* The CRC is linear, so the protocol id that makes a datagram's CRC right can
 * be computed back from the stored CRC: given the CRC `computed` for `id`
 * and the datagram's length, returns the implied id (== id when stored ==
 * computed). Cost: O(length), only when they differ. */
guint32 p2_implied_protocol_id(guint32 stored, guint32 computed, guint32 id,
                               guint datagram_length);

/* ---- Display ------------------------------------------------------------ */

/* Adds an nbits field read least-significant-bit first at stream bit `bit`
 * (its bits shown in the label, its bytes highlighted). A 0-bit field (e.g.
 * int(0, 0)) is shown as generated with value `value_if_empty`. */
proto_item *p2_add_bits(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit,
                        guint nbits, guint32 value_if_empty);

/* The fields and expert infos of one protocol built on this framing. */
typedef struct p2_display {
    int hf_padding;              /* FT_UINT8, bits */
    int hf_end_check;            /* FT_UINT32, BASE_HEX */
    int hf_end_check_status;     /* FT_UINT8 with proto_checksum_vals */
    int hf_trailing;             /* FT_BYTES */
    expert_field *ei_padding;
    expert_field *ei_end_check;
    expert_field *ei_trailing;
} p2_display_t;

/* Adds the padding fields recorded since the last call (from pad index
 * *next_pad on), with expert info on non-zero padding when `experts`. */
void p2_add_padding(proto_tree *tree, packet_info *pinfo, const p2_display_t *d,
                    const p2_reader_t *r, guint *next_pad, gboolean experts);

/* Adds the end check (and any trailing bytes), with status and, when
 * `experts`, expert info. Does nothing if the end check was never reached. */
void p2_add_end_check(proto_tree *tree, packet_info *pinfo, const p2_display_t *d,
                      const p2_reader_t *r, gboolean experts);

#endif /* PROTOCOL2_H */
