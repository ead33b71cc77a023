/* common/protocol2.h
 * The packet framing shared by the protocols of Glenn Fiedler's "Building a
 * Game Network Protocol" series ("protocol2"): a CRC-32 seeded with a
 * protocol id that is never sent, a least-significant-bit-first bit stream,
 * zero padding to byte boundaries and a 32-bit end check.
 * (docs/protocol.md, "Bits" and "Every packet".)
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
#include <epan/conversation.h>
#include <epan/range.h>

/* docs/protocol.md, "Every packet": bytes 0..3 CRC-32 little-endian, then
 * the bit stream, then align and the end check e2 ac 08 99. */
#define DP2_CRC_LEN        4
#define DP2_BODY_BIT       32
#define DP2_END_CHECK      0x9908ACE2u
#define DP2_END_CHECK_LEN  4
/* docs/protocol.md, "Every packet": the default protocol id. */
#define DP2_DEFAULT_PROTOCOL_ID 0x11223344u

/* What a strict reader rejects (docs/protocol.md, "What a strict reader
 * rejects"). Bits from DP2_ERR_BODY_BASE on are free for the body. */
#define DP2_ERR_TRUNCATED  (1u << 0)   /* fewer bytes than the fields need */
#define DP2_ERR_PADDING    (1u << 1)   /* non-zero padding bits */
#define DP2_ERR_END_CHECK  (1u << 2)   /* no end check at the computed position */
#define DP2_ERR_TRAILING   (1u << 3)   /* bytes after the end check */
#define DP2_ERR_RANGE      (1u << 4)   /* int(min, max) value outside [min, max] */
#define DP2_ERR_BODY_BASE  (1u << 8)

#define DP2_MAX_PADS 4

typedef struct dp2_pad {
    guint bit;      /* stream bit of the first padding bit */
    guint8 nbits;   /* 1..7 */
    guint8 value;   /* the padding bits as read (0 when clean) */
} dp2_pad_t;

/* A reader over one datagram. It never reads past the captured bytes: once a
 * read would, DP2_ERR_TRUNCATED is set and every later read returns 0 without
 * moving, so a hostile packet cannot make a caller loop or throw. */
typedef struct dp2_reader {
    tvbuff_t *tvb;
    const guint8 *data;  /* the tvb's captured bytes (NULL when none) */
    guint bit;           /* next stream bit */
    guint limit;         /* captured bits */
    guint32 errors;      /* DP2_ERR_* */
    guint need_bytes;    /* when truncated: bytes the fields need at least */
    guint8 n_pads;
    dp2_pad_t pads[DP2_MAX_PADS];
    gboolean check_read; /* the end check's position was reached */
    guint check_offset;  /* byte offset of the end check (when check_read) */
    guint32 check_value; /* the 32 bits found there */
} dp2_reader_t;

/* Starts a reader at the packet body (bit 32, after the CRC). */
void dp2_reader_init(dp2_reader_t *r, tvbuff_t *tvb);

/* Returns the bit length of max - min (0 when min == max): the width of
 * int(min, max) on the wire. */
guint dp2_bits_required(guint32 min, guint32 max);

/* Reads nbits (0..32) raw bits, least significant first. Returns 0 and sets
 * DP2_ERR_TRUNCATED when the datagram is too short. */
guint32 dp2_read_bits(dp2_reader_t *r, guint nbits);

/* Moves past nbits (any number) bits without reading them. Returns FALSE and
 * sets DP2_ERR_TRUNCATED when the datagram is too short (or was already). */
gboolean dp2_skip_bits(dp2_reader_t *r, guint nbits);

/* Reads int(min, max): returns the raw field plus min. Sets DP2_ERR_RANGE when
 * the value exceeds max (possible when max - min + 1 is not a power of 2). */
guint32 dp2_read_int(dp2_reader_t *r, guint32 min, guint32 max);

/* Skips to the next byte boundary, recording the padding. Returns FALSE (and
 * sets DP2_ERR_PADDING) when a padding bit is set or DP2_ERR_TRUNCATED. */
gboolean dp2_read_align(dp2_reader_t *r);

/* align, then n bytes verbatim. Returns their byte offset, or -1 (with
 * DP2_ERR_TRUNCATED) when fewer than n bytes remain. */
gint dp2_read_bytes(dp2_reader_t *r, guint n);

/* align, then the end check; sets DP2_ERR_END_CHECK, DP2_ERR_TRUNCATED or
 * DP2_ERR_TRAILING as they apply. Ends the packet. */
void dp2_read_check(dp2_reader_t *r);

/* TRUE when the datagram's last four bytes are the end check. */
gboolean dp2_ends_with_check(tvbuff_t *tvb);

/* ---- CRC-32 and the protocol id --------------------------------------- */

/* Builds the tables dp2_implied_protocol_id() needs (dp2_register_protocol
 * calls it). */
void dp2_crc_init(void);

/* Returns the CRC-32 of LE32(protocol_id) || 00 00 00 00, the state the
 * packet CRC continues from; compute it once per configured id. */
guint32 dp2_crc_prefix(guint32 protocol_id);

/* Returns the CRC the sender would have written for this datagram with the
 * protocol id whose dp2_crc_prefix() is prefix_crc. Needs at least 4 captured
 * bytes (returns 0 otherwise). */
guint32 dp2_crc_datagram(tvbuff_t *tvb, guint32 prefix_crc);

/* The CRC is linear, so the protocol id that makes a datagram's CRC right can
 * be computed back from the stored CRC: given the CRC `computed` for `id`
 * and the datagram's length, returns the implied id (== id when stored ==
 * computed). Cost: a table step per set bit of the length, only when they
 * differ. */
guint32 dp2_implied_protocol_id(guint32 stored, guint32 computed, guint32 id,
                               guint datagram_length);

/* ---- Display ------------------------------------------------------------ */

/* Adds an nbits field read least-significant-bit first at stream bit `bit`
 * (its bits shown in the label, its bytes highlighted). A 0-bit field (e.g.
 * int(0, 0)) is shown as generated with value `value_if_empty`. */
proto_item *dp2_add_bits(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit,
                        guint nbits, guint32 value_if_empty);

/* The framing's fields and expert infos of one protocol built on it, filled
 * by dp2_display_register(): <name>.crc32, .crc32.status, .protocol_id,
 * .padding, .end_check, .end_check.status, .trailing, and the expert infos
 * <name>.crc32.bad, .protocol_id.other, .protocol_id.unconfirmed,
 * .padding.nonzero, .end_check.bad, .trailing_bytes. Static in the
 * protocol (the registrations live in it). */
typedef struct dp2_display {
    int hf_crc;                  /* FT_UINT32, BASE_HEX */
    int hf_crc_status;           /* FT_UINT8 with proto_checksum_vals */
    int hf_protocol_id;          /* FT_UINT32, BASE_HEX, generated */
    int hf_padding;              /* FT_UINT8, bits */
    int hf_end_check;            /* FT_UINT32, BASE_HEX */
    int hf_end_check_status;     /* FT_UINT8 with proto_checksum_vals */
    int hf_trailing;             /* FT_BYTES */
    expert_field ei_crc_bad;         /* another id than the conversation's */
    expert_field ei_id_other;        /* the conversation's own unconfigured id */
    expert_field ei_id_unconfirmed;  /* an unconfigured id, nothing to compare */
    expert_field ei_padding;
    expert_field ei_end_check;
    expert_field ei_trailing;
    hf_register_info hf[7];
    ei_register_info ei[6];
} dp2_display_t;

/* What the framing's fields of one protocol say differently. */
typedef struct dp2_display_names {
    const char *name;             /* the protocol's abbreviation: "chunk" */
    const char *end_check_blurb;  /* NULL: the end check's value alone */
    const char *crc_bad;          /* summary of <name>.crc32.bad */
    /* The conversation may settle on another id (dp2_id_decide): registers
     * <name>.protocol_id.other and .unconfirmed. A protocol of
     * dp2_id_check() meets neither. */
    gboolean learns_ids;
} dp2_display_names_t;

/* Registers d's fields and expert infos under protocol proto. Call it from
 * the protocol's proto_register_ function, before the protocol's own
 * arrays: tshark -G fields lists fields in the order they were
 * registered. */
void dp2_display_register(int proto, dp2_display_t *d, const dp2_display_names_t *names);

/* Adds the padding fields recorded since the last call (from pad index
 * *next_pad on), with expert info on non-zero padding when `experts`. */
void dp2_add_padding(proto_tree *tree, packet_info *pinfo, dp2_display_t *d,
                    const dp2_reader_t *r, guint *next_pad, gboolean experts);

/* Adds the end check (and any trailing bytes), with status and, when
 * `experts`, expert info. Does nothing if the end check was never reached. */
void dp2_add_end_check(proto_tree *tree, packet_info *pinfo, dp2_display_t *d,
                      const dp2_reader_t *r, gboolean experts);

/* ---- The protocol id, per datagram and per conversation ------------------ */

/* What the UDP entry point computes once per datagram. */
typedef struct dp2_frame {
    gboolean crc_known;   /* the whole datagram was captured (>= 4 bytes) */
    guint32 stored_crc;   /* bytes 0..3 */
    guint32 implied_id;   /* the protocol id that makes the stored CRC right */
    /* Set by dp2_dissect_udp: the user chose the protocol (Decode As, or a
     * conversation a heuristic pinned), so it shows the datagram whatever
     * it is. Otherwise (the protocol's port) it claims only a datagram that
     * is well-formed for it and returns 0 for any other, which UDP then
     * offers to the heuristics and to data. Left FALSE for a datagram
     * implying the owner's own id, which is the owner's either way. */
    gboolean forced;
} dp2_frame_t;

/* How a packet's implied id relates to its protocol's configuration and to
 * its conversation (docs/dissector.md, "Protocol id"). */
typedef enum {
    DP2_ID_GOOD,         /* the configured id */
    DP2_ID_OTHER,        /* another id, the one its conversation uses */
    DP2_ID_BAD,          /* disagrees with its conversation's id */
    DP2_ID_UNCONFIRMED,  /* another id, nothing earlier in the conversation to compare */
    DP2_ID_UNKNOWN,      /* CRC not computable (datagram cut by the capture) */
    DP2_ID_WRONG         /* not the configured id, for a protocol that learns none */
} dp2_id_status_t;

/* A packet's protocol id as shown by dp2_add_crc(). */
typedef struct dp2_id {
    gboolean crc_known;
    guint32 implied_id;
    guint32 cfg_id;        /* the protocol's configured id */
    guint32 conv_id;       /* DP2_ID_BAD: the id its conversation uses */
    dp2_id_status_t status;
} dp2_id_t;

/* One protocol of the family, registered with dp2_register_protocol(). The
 * registry is what the UDP entry point dispatches on: every datagram goes to
 * the protocol whose configured id its CRC implies. */
typedef struct dp2_protocol {
    const char *filter_name;    /* "chunk": names its preferences in messages */
    int proto;                  /* set before registering */
    const guint32 *cfg_id;      /* the protocol id preference, as applied */
    dissector_handle_t handle;  /* port, Decode As and pinned conversations */
    /* Decodes the datagram as this protocol whatever id it implies; data is
     * the datagram's dp2_frame_t. Returns the bytes consumed. */
    dissector_t dissect;
    guint index;                /* set by dp2_register_protocol() */
    dissector_handle_t id_handle; /* dissect, in the protocol2.id table (dp2_register_protocol) */
    gboolean owns_id;           /* its configured id is filed with id_handle (dp2_prefs_apply) */
    range_t *ports_applied;     /* dp2_ports_apply()'s copy of <filter_name>.udp.port */
} dp2_protocol_t;

#define DP2_MAX_PROTOCOLS 4

/* Adds p to the registry (at registration time, once per protocol; p->proto
 * and p->handle set) and, the first time, builds the CRC tables and the
 * dissector table "protocol2.id": each registered protocol's dissect,
 * keyed by its configured id (the first registered wins a shared id). */
void dp2_register_protocol(dp2_protocol_t *p);

/* Computes the datagram's CRC and implied protocol id (once per datagram:
 * a second call for the same datagram returns the stored result). */
void dp2_frame_get(tvbuff_t *tvb, packet_info *pinfo, dp2_frame_t *f);

/* The registered protocol whose configured id the datagram implies, or NULL
 * (CRC unknown, or an id no protocol is configured with). */
dp2_protocol_t *dp2_protocol_for(const dp2_frame_t *f);

/* The one UDP entry point: the body of every registered protocol's handle
 * (port preference, Decode As, conversations pinned by a heuristic). A
 * datagram whose id is another registered protocol's goes to that protocol
 * (through the protocol2.id table); any other goes to `owner`, as does
 * everything under Decode As (the user chose the protocol, whatever its id:
 * f->forced). Returns the bytes consumed: 0 when owner, on its port, finds
 * the datagram is not its. */
int dp2_dissect_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data,
                   dp2_protocol_t *owner);

/* For a heuristic of protocol p: fills f and returns FALSE when the
 * datagram's id is another registered protocol's (its heuristic, not p's,
 * may claim it). */
gboolean dp2_heur_frame(tvbuff_t *tvb, packet_info *pinfo, const dp2_protocol_t *p, dp2_frame_t *f);

/* Protocol p's id state in one conversation. */
typedef struct dp2_id_state {
    guint32 id_frame;       /* frame that established the protocol id; 0: none yet */
    guint32 id;
    guint8 n_candidates;    /* ids implied once, waiting for a second packet */
    guint32 candidates[4];
} dp2_id_state_t;

/* Protocol p's state in the datagram's UDP conversation (created zeroed on
 * first use; file scope). *data is p's own per-conversation pointer, NULL
 * until p sets it. */
dp2_id_state_t *dp2_conv_state(packet_info *pinfo, const dp2_protocol_t *p, void ***data,
                             conversation_t **conv_out);

/* Sets id->status for a packet implying f->implied_id, and on the first pass
 * (update) advances the conversation's decision: the configured id is good;
 * another id becomes the conversation's once a second well-formed
 * (`plausible`) packet implies it. */
void dp2_id_decide(dp2_id_state_t *st, const dp2_protocol_t *p, const dp2_frame_t *f, guint32 frame,
                  gboolean plausible, gboolean update, dp2_id_t *id);

/* Sets id->status for a protocol that accepts only its configured id:
 * DP2_ID_GOOD, DP2_ID_WRONG or DP2_ID_UNKNOWN. */
void dp2_id_check(const dp2_protocol_t *p, const dp2_frame_t *f, dp2_id_t *id);

/* Adds the CRC, its status and the implied protocol id, with their expert
 * infos; adds nothing for a datagram shorter than the CRC. */
void dp2_add_crc(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, dp2_display_t *d,
                const dp2_protocol_t *p, const dp2_id_t *id);

/* ---- Ports -------------------------------------------------------------- */

/* Registers p->handle on udp.port with the preference <filter_name>.udp.port
 * (default `ports`, may be empty) and for Decode As. Call from the handoff. */
void dp2_ports_register(dp2_protocol_t *p, const char *ports);

/* Call last in p's preferences callback (p->cfg_id as applied): drops from
 * udp.port the ports the <filter_name>.udp.port preference no longer holds
 * (see common/protocol2-id.c), and files the configured ids in the
 * protocol2.id table again. */
void dp2_prefs_apply(dp2_protocol_t *p);

#endif /* PROTOCOL2_H */
