/* yojimbo-int.h
 * The yojimbo connection packet dissector: the payload that yojimbo's
 * channels put after reliable's packet header (docs/yojimbo.md); what its
 * files share:
 *
 *  dissect.c   registration, preferences, the bit reader, the framing of
 *              the connection packet, block reassembly, Export Objects
 *  schema.c    the message schema file: parse and run it on a body
 *  analysis.c  per direction: which packets carried each message id and
 *              block fragment, their resends, the packet whose ack
 *              confirmed them, stalls and the diagnosis of what never
 *              completes
 *  stats.c     -z yojimbo,messages and -z yojimbo,blocks, and the same
 *              tables under Statistics
 *
 * Prefix yj_ for what the files share.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef YOJIMBO_INT_H
#define YOJIMBO_INT_H

#include <epan/packet.h>
#include <epan/prefs.h>

#include "yojimbo.h"
#include "reliable/reliable.h"

/* One byte (tvb_get_guint8 is deprecated from 4.4 on, tvb_get_uint8 absent
 * in 4.0); throws like it past the end. */
static inline guint8 yj_u8(tvbuff_t *tvb, gint offset)
{
    return *tvb_get_ptr(tvb, offset, 1);
}

/* ---- Configuration (the yojimbo.channels preference) ------------------- */

#define YJ_MAX_CHANNELS 64          /* yojimbo's MaxChannels */
#define YJ_CHANNEL_RO 0             /* reliable-ordered */
#define YJ_CHANNEL_UU 1             /* unreliable-unordered */

typedef struct yj_channel_cfg {
    int type;                       /* YJ_CHANNEL_RO or YJ_CHANNEL_UU */
    gboolean disable_blocks;
    guint32 max_block_size;
    guint32 fragment_size;
    guint32 max_messages;
} yj_channel_cfg_t;

/* Parses a channel list ("ro,ro", "uu:8192,ro:10240:1024"): TRUE and the
 * channels in out[] (*n of them), or FALSE with a message in *err (g_free
 * it). */
gboolean yj_parse_channels(const char *text, yj_channel_cfg_t *out, int *n, char **err);

/* ---- Bit reader (serialize's bit order: least significant bit first) --- */

typedef struct yj_bits {
    tvbuff_t *tvb;
    guint64 pos;                    /* bits read */
    guint64 end;                    /* bits in the buffer */
    const guint8 *data;             /* the captured bytes (NULL: none), read without the tvb */
    guint avail;                    /* their count */
} yj_bits_t;

/* A reader of tvb's bits from its start. */
void yj_bits_init(yj_bits_t *b, tvbuff_t *tvb);

/* Reads n (0..32) bits: FALSE when they would go past the end. Here
 * rather than in bits.c because yj_read_bits below falls back on it. */
static inline gboolean yj_read_bits_any(yj_bits_t *b, int n, guint32 *v)
{
    guint64 w = 0;
    guint first, last;

    *v = 0;
    if (n == 0)
        return TRUE;
    if (n < 0 || n > 32 || b->pos + (guint64)n > b->end)
        return FALSE;
    first = (guint)(b->pos >> 3);
    last = (guint)((b->pos + (guint64)n - 1) >> 3);
    if (b->data && last < b->avail) {
        for (guint k = first; k <= last; k++)
            w |= (guint64)b->data[k] << (8 * (k - first));
    } else {
        /* past the captured bytes: the tvb throws as it would */
        for (guint k = first; k <= last; k++)
            w |= (guint64)yj_u8(b->tvb, k) << (8 * (k - first));
    }
    w >>= (b->pos & 7);
    *v = (guint32)(w & ((n == 32) ? 0xFFFFFFFFu : ((1u << n) - 1)));
    b->pos += (guint64)n;
    return TRUE;
}

/* The same, the usual case (1..25 bits within the captured bytes: at most
 * four bytes) inline: it runs for every field. */
static inline gboolean yj_read_bits(yj_bits_t *b, int n, guint32 *v)
{
    if (n > 0 && n <= 25 && b->pos + (guint64)n <= (guint64)b->avail * 8) {
        guint first = (guint)(b->pos >> 3), shift = (guint)(b->pos & 7);
        guint nbytes = (shift + (guint)n + 7) >> 3;
        guint32 w = 0;
        for (guint k = 0; k < nbytes; k++)
            w |= (guint32)b->data[first + k] << (8 * k);
        *v = (w >> shift) & ((1u << n) - 1);
        b->pos += (guint64)n;
        return TRUE;
    }
    return yj_read_bits_any(b, n, v);
}
/* serialize_int_relative: the value after previous; FALSE with *why. */
gboolean yj_read_relative(yj_bits_t *b, guint32 previous, guint32 *current, const char **why);
/* Bits that serialize_int spends on [min, max]. */
int yj_bits_required(guint32 min, guint32 max);
/* The tvb range of the bits [from, to): offset and length in bytes. */
static inline void yj_bit_range(guint64 from, guint64 to, gint *offset, gint *length)
{
    *offset = (gint)(from >> 3);
    *length = to > from ? (gint)(((to - 1) >> 3) - (from >> 3) + 1) : 0;
}

/* ---- Schema (schema.c) -------------------------------------------------- */

typedef struct yj_schema yj_schema_t;

/* Reads a schema file: the schema, or NULL with a message in *err naming
 * the file, line and what is wrong (g_free it). */
yj_schema_t *yj_schema_load(const char *path, char **err);
/* Parses schema text (name: for messages). */
yj_schema_t *yj_schema_parse(const char *text, const char *name, char **err);
void yj_schema_free(yj_schema_t *s);
/* The message type's name, or NULL when the schema does not know it. */
const char *yj_schema_type_name(const yj_schema_t *s, guint32 type);
/* Whether the schema declares the type, and whether it is a block message. */
gboolean yj_schema_has_type(const yj_schema_t *s, guint32 type);
gboolean yj_schema_is_block(const yj_schema_t *s, guint32 type);

typedef enum {
    YJ_BODY_OK,                     /* read to its end */
    YJ_BODY_UNKNOWN,                /* no schema for this type */
    YJ_BODY_FAILED                  /* *err says why (packet scope) */
} yj_body_result_t;

/* Fields shown for each value the schema reads. */
typedef struct yj_body_hf {
    int field;                      /* FT_INT64 value */
    int bytes;                      /* FT_BYTES value */
    int fvalue;                     /* FT_DOUBLE value */
    gint ett;
} yj_body_hf_t;

/* Runs the type's schema on the bits at b->pos, adding its values to tree
 * (may be NULL). */
yj_body_result_t yj_schema_run(const yj_schema_t *s, guint32 type, yj_bits_t *b, tvbuff_t *tvb,
                               proto_tree *tree, const yj_body_hf_t *hf, wmem_allocator_t *scope,
                               char **err);

/* ---- Analysis (analysis.c) --------------------------------------------- */

/* A message id of a reliable-ordered channel in one direction, or a block
 * (a message sent as fragments). Lives for the file. */
typedef struct yj_frag {
    guint32 first_frame, last_frame, acked_frame;
    guint32 sends, sends_after_ack;
    guint32 size;
} yj_frag_t;

typedef struct yj_msg {
    guint index;                    /* 1.. in order of first sight (table rows) */
    guint8 dir, channel;
    guint8 is_block;
    guint16 id;
    gint32 type;                    /* -1: not seen yet (a block's fragment 0 not seen) */
    guint32 first_frame, last_frame, acked_frame;
    guint32 sends, sends_after_ack;
    guint32 first_ext_seq;          /* the reliable sequence of the first send, unwrapped; 0: none */
    struct yj_conv *conv;
    nstime_t first_time, acked_time;
    /* Blocks only: a message's record ends here (YJ_MSG_SIZE). */
    guint16 num_fragments;
    guint32 frags_acked;
    guint32 frags_seen;
    guint32 block_bytes;            /* sum of the fragment sizes seen */
    guint32 reassembled_frame;
    yj_frag_t *frags;
    nstime_t last_progress;         /* first send, then each newly acked fragment */
    guint64 max_stall_ns;
} yj_msg_t;

/* The bytes of a record: a message's has no block fields. */
#define YJ_MSG_SIZE(is_block) ((is_block) ? sizeof(yj_msg_t) : G_STRUCT_OFFSET(yj_msg_t, num_fragments))

typedef struct yj_dir {
    gboolean active;
    address src, dst;
    guint32 sport, dport;
    guint32 packets;                /* with a readable reliable header */
    guint32 last_frame;
    nstime_t last_time;
    gboolean have_seq;
    guint32 last_ext_seq;           /* the newest sequence, unwrapped */
    GHashTable *sent;               /* unwrapped sequence -> yj_sent_t, the last YJ_SENT_WINDOW */
    guint32 sent_pruned_at;         /* last_ext_seq when older ones were last forgotten */
    GHashTable *msgs[YJ_MAX_CHANNELS]; /* unwrapped message id -> yj_msg_t (per channel) */
    guint32 last_ext_id[YJ_MAX_CHANNELS];
    gboolean have_id[YJ_MAX_CHANNELS];
    guint32 acks_sent;              /* packets of this direction that acked something new */
    guint32 last_ack_frame;         /* last packet of this direction that acked something new */
    nstime_t last_ack_time;         /* and its time */
    guint32 max_acked_ext;          /* the newest sequence of this direction the peer acked, unwrapped; 0: none */
    gboolean have_header_seq;
    guint16 header_seq;             /* the newest sequence of a header of this direction */
    guint32 gap_frame;              /* the last packet after sequences the capture does not hold; 0: none */
    guint32 gap_peer_acked_ext;     /* the peer's max_acked_ext then */
    guint64 sent_gen;               /* insertions into sent so far */
    /* The last acks of this direction taken (analysis.c, take_acks): the
     * sequences looked up in the peer's sent (bit i: acks_ext - i) and the
     * peer's sent_gen then. */
    gboolean have_acks;
    guint32 acks_ext, acks_looked;
    guint64 acks_gen;
} yj_dir_t;

typedef struct yj_conv {
    guint index;
    yj_dir_t dir[2];
} yj_conv_t;

/* One message or fragment in a packet, as the first pass saw it. */
typedef struct yj_item {
    yj_msg_t *msg;
    gint32 frag;                    /* -1: a message; else the fragment id */
    guint32 send_no;                /* 1: first send */
    guint32 prev_frame;             /* the previous send, 0 if none */
    guint32 acked_before;           /* the ack frame seen before this send, 0 if none */
    guint32 progress;               /* a block's fragments acked before this packet */
} yj_item_t;

/* The analysis follows at most this many message ids and blocks, and block
 * fragments, a file (docs/yojimbo.md, "Limits"). */
#define YJ_MAX_TRACKED_MSGS 1000000u
#define YJ_MAX_TRACKED_FRAGMENTS 4000000u

typedef struct yj_frame {
    yj_item_t *items;
    guint32 n_items;
    guint32 n_confirmed;            /* messages/fragments of the peer this packet's ack confirmed */
    guint16 seq;                    /* its reliable sequence, when have_header */
    guint8 have_header;
    guint8 limited;                 /* an item not followed: a limit was reached */
} yj_frame_t;

/* What dissect.c collects for one packet while decoding it. */
typedef struct yj_pending_item {
    guint8 channel;
    gboolean is_block;
    guint16 id;
    gint32 type;
    gint32 frag;                    /* -1 for a message */
    guint16 num_fragments;
    guint32 size;
} yj_pending_item_t;

/* proto: the protocol (its proto data key). */
void yj_analysis_init(int proto);
/* The yojimbo.single_pass preference, in the protocol's module; from the
 * handoff: yj_analysis_handoff(). */
void yj_analysis_register_prefs(module_t *m);
void yj_analysis_handoff(void);
/* First for every connection packet: TRUE in tshark's single pass (the
 * frame is never dissected again; common/single-pass.h). Last: end. */
gboolean yj_analysis_begin(packet_info *pinfo);
void yj_analysis_end(packet_info *pinfo);
/* The stall threshold (yojimbo.stall_ms), from the preferences. */
void yj_analysis_set_stall(double seconds);
void yj_analysis_cleanup(void);
/* First pass: records the packet (rl: what reliable passed up with it,
 * NULL: no reliable header; items: what it carried), returns its frame
 * record (also kept for later passes). Later passes: the record. */
yj_frame_t *yj_analysis_packet(packet_info *pinfo, const reliable_payload_info_t *rl,
                               const yj_pending_item_t *items, guint n_items);
/* First pass: the frame where the block (this packet's direction, channel
 * ch, message id) was reassembled, 0 if not yet; and recording it. A
 * fragment resent after that is not reassembled again. */
guint32 yj_block_reassembled_in(packet_info *pinfo, guint ch, guint16 id);
void yj_block_set_reassembled(packet_info *pinfo, guint ch, guint16 id);

/* Plain-language diagnosis of a message or block that never completed
 * (NULL when it did). */
char *yj_diagnosis(wmem_allocator_t *scope, const yj_msg_t *m);
/* The newest packet time of the capture seen by the analysis. */
nstime_t yj_capture_end(void);
/* Every message/block record in order of first sight. */
GPtrArray *yj_all_msgs(void);

/* Tap data queued to "yojimbo_stats" per packet. */
typedef struct yj_tap {
    const yj_frame_t *frame;
} yj_tap_t;

void yj_stats_register(void);
/* The Flow Graph of blocks (flow.c). */
void yj_flow_register(int proto);

#endif /* YOJIMBO_INT_H */
