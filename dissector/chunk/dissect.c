/* chunk/dissect.c
 * Routines for the chunk protocol of Glenn Fiedler's "Sending Large Blocks of
 * Data": slice and ack packets on protocol2 framing (common/protocol2.h).
 * The wire format is docs/protocol.md; this is an independent
 * implementation of it (no code shared with endpoints/).
 *
 * Decisions that depend on earlier packets (the conversation's protocol id
 * and, in Auto mode, its MaxSlicesPerChunk variant) are made on the first
 * pass, in frame order, and stored in the conversation together with the
 * frame that made them. A frame decoded again (GUI click, second pass)
 * compares its own number with those frames, so it shows exactly what it
 * showed the first time, at a few bytes per conversation instead of a cache
 * entry per frame.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/expert.h>
#include <epan/conversation.h>
#include <wsutil/str_util.h>

#include "common/analysis-util.h"
#include "chunk-int.h"
#include "chunk.h"
#include "common/protocol2.h"
#include "common/ws-compat.h"

/* docs/protocol.md, "Every packet" and "The two variants". */
#define CHUNK_TYPE_SLICE          0
#define CHUNK_TYPE_ACK            1
#define CHUNK_DEFAULT_PORT_RANGE  "40000"
#define CHUNK_DEFAULT_SLICE_SIZE  1024
#define CHUNK_VARIANT_ARTICLE     256   /* the article's MaxSlicesPerChunk */
#define CHUNK_VARIANT_EXAMPLE     32    /* its example program's */
/* Preference bounds: 16-bit slice ids at most; a slice fits a datagram. */
#define CHUNK_MAX_MAX_SLICES      65536
#define CHUNK_MAX_SLICE_SIZE      65535

/* Body errors, after protocol2's. */
#define CHUNK_ERR_SLICE_RANGE  (DP2_ERR_BODY_BASE << 0)  /* sliceId >= numSlices */
#define CHUNK_ERR_SLICE_SIZE   (DP2_ERR_BODY_BASE << 1)  /* non-last slice not SliceSize */
/* Errors that mean the layout does not fit the packet (used to tell variants
 * apart); trailing bytes and sliceId >= numSlices parse, the original
 * program even accepted them. */
#define CHUNK_ERR_STRUCTURE (DP2_ERR_TRUNCATED | DP2_ERR_PADDING | DP2_ERR_END_CHECK | \
                             DP2_ERR_RANGE | CHUNK_ERR_SLICE_SIZE)

void proto_register_chunk(void);
void proto_reg_handoff_chunk(void);

static int proto_chunk = -1;
static dissector_handle_t chunk_handle;

static int hf_chunk_variant = -1;
static int hf_chunk_variant_slice_size = -1;
static int hf_chunk_type = -1;
static int hf_chunk_chunk_id = -1;
static int hf_chunk_slice_id = -1;
static int hf_chunk_num_slices_m1 = -1;
static int hf_chunk_num_slices = -1;
static int hf_chunk_last_slice = -1;
static int hf_chunk_slice_bytes_m1 = -1;
static int hf_chunk_slice_bytes = -1;
static int hf_chunk_data = -1;
static int hf_chunk_ack_bitfield = -1;
static int hf_chunk_ack_acked_slice = -1;
static int hf_chunk_ack_missing_slice = -1;
static int hf_chunk_ack_acked_count = -1;
static int hf_chunk_ack_missing_count = -1;
static int hf_chunk_ack_missing = -1;

static gint ett_chunk = -1;
static gint ett_chunk_ack_bitfield = -1;

static expert_field ei_chunk_truncated = EI_INIT;
static expert_field ei_chunk_slice_range = EI_INIT;
static expert_field ei_chunk_slice_size = EI_INIT;
static expert_field ei_chunk_value_range = EI_INIT;
static expert_field ei_chunk_variant_unknown = EI_INIT;
static expert_field ei_chunk_variant_ambiguous = EI_INIT;
static expert_field ei_chunk_variant_mismatch = EI_INIT;

/* Preferences as set, and as used (bounded). */
static guint pref_protocol_id = DP2_DEFAULT_PROTOCOL_ID;
static guint pref_max_slices = 0;  /* 0: Auto */
static guint pref_slice_size = CHUNK_DEFAULT_SLICE_SIZE;
static guint32 cfg_protocol_id = DP2_DEFAULT_PROTOCOL_ID;
static guint32 cfg_max_slices;
static guint32 cfg_slice_size = CHUNK_DEFAULT_SLICE_SIZE;

static const value_string chunk_type_vals[] = {
    { CHUNK_TYPE_SLICE, "Slice" },
    { CHUNK_TYPE_ACK,   "Ack" },
    { 0, NULL }
};

static dp2_display_t chunk_p2d;     /* the framing's fields (dp2_display_register) */
static int chunk_dissect_forced(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data);

/* chunk in the protocol2 registry (common/protocol2.h): the UDP entry point sends
 * it the datagrams whose CRC implies cfg_protocol_id, and on its port, Decode
 * As or pinned conversations those that imply no registered protocol's id. */
static dp2_protocol_t chunk_p2 = {
    .filter_name = "chunk",
    .cfg_id = &cfg_protocol_id,
    .dissect = chunk_dissect_forced,
};

/* ---- Per-conversation decisions ---------------------------------------- */

/* The conversation's variant; its protocol id is protocol2's
 * (dp2_conv_state). Both in file scope, found through dp2_conv_state. */
typedef struct chunk_conv {
    dp2_id_state_t *ids;
    guint32 variant_frame;  /* frame that decided the variant (Auto); 0: none yet */
    guint32 variant;
} chunk_conv_t;

static chunk_conv_t *chunk_get_conv(packet_info *pinfo, conversation_t **conv_out)
{
    void **data;
    dp2_id_state_t *ids = dp2_conv_state(pinfo, &chunk_p2, &data, conv_out);
    chunk_conv_t *cc = (chunk_conv_t *)*data;

    if (!cc) {
        cc = wmem_new0(wmem_file_scope(), chunk_conv_t);
        cc->ids = ids;
        *data = cc;
    }
    return cc;
}

/* ---- Body parsing -------------------------------------------------------- */

/* One parse of a datagram with given constants. Positions are stream bits. */
typedef struct chunk_body {
    dp2_reader_t r;
    guint32 max_slices, slice_size;
    guint nfields;          /* leading fields read completely (see parse) */
    guint32 type;
    guint32 chunk_id;
    guint id_bits;          /* width of slice id and slice count - 1 */
    guint slice_id_bit;
    guint32 slice_id;
    guint num_bit;
    guint32 num_slices;     /* as meant */
    gboolean last;
    guint bytes_bit, bytes_bits;
    guint32 slice_bytes;    /* as meant */
    guint data_offset;      /* byte offset of the data */
    guint data_len;         /* data bytes present (slice_bytes unless broken) */
    guint ack_bit;          /* stream bit of slice 0's ack bit */
    guint32 errors;         /* DP2_ERR_* | CHUNK_ERR_* */
} chunk_body_t;

/* Fields in order; nfields counts those read. */
enum { F_TYPE = 1, F_CHUNK_ID, F_SLICE_ID, F_NUM_SLICES, F_SLICE_BYTES, F_DATA };
enum { FA_NUM_SLICES = 3, FA_BITS };

static void chunk_parse_slice(chunk_body_t *b)
{
    dp2_reader_t *r = &b->r;
    guint data_start;
    gint off;

    b->slice_id_bit = r->bit;
    b->slice_id = dp2_read_int(r, 0, b->max_slices - 1);
    if (r->errors & DP2_ERR_TRUNCATED)
        return;
    b->nfields = F_SLICE_ID;
    b->num_bit = r->bit;
    b->num_slices = dp2_read_int(r, 1, b->max_slices);
    if (r->errors & DP2_ERR_TRUNCATED)
        return;
    b->nfields = F_NUM_SLICES;
    b->last = b->slice_id == b->num_slices - 1;
    if (b->last) {
        b->bytes_bit = r->bit;
        b->bytes_bits = dp2_bits_required(1, b->slice_size);
        b->slice_bytes = dp2_read_int(r, 1, b->slice_size);
        if (r->errors & DP2_ERR_TRUNCATED)
            return;
    } else {
        b->slice_bytes = b->slice_size;
    }
    b->nfields = F_SLICE_BYTES;
    if (b->slice_id >= b->num_slices)
        b->errors |= CHUNK_ERR_SLICE_RANGE;

    dp2_read_align(r);
    data_start = r->bit / 8;
    b->data_offset = data_start;
    off = dp2_read_bytes(r, b->slice_bytes);
    if (off >= 0) {
        b->data_len = b->slice_bytes;
        b->nfields = F_DATA;
        dp2_read_check(r);
    } else {
        /* Show what there is of the data; the layout is known, so say how
         * long the datagram should be. */
        guint have = tvb_captured_length(r->tvb);
        b->data_len = have > data_start ? MIN(have - data_start, b->slice_bytes) : 0;
        r->need_bytes = data_start + b->slice_bytes + DP2_END_CHECK_LEN;
    }

    /* A non-last slice is always SliceSize bytes. If the datagram instead
     * ends in a clean end check after fewer or more bytes of data, say
     * that (attack: short or oversize slices) rather than "truncated" or
     * "wrong end check". */
    if (!b->last && !(r->errors & DP2_ERR_PADDING) &&
        (r->errors & (DP2_ERR_TRUNCATED | DP2_ERR_END_CHECK | DP2_ERR_TRAILING)) &&
        dp2_ends_with_check(r->tvb) &&
        tvb_captured_length(r->tvb) >= data_start + DP2_END_CHECK_LEN) {
        guint len = tvb_captured_length(r->tvb);

        r->errors &= ~(DP2_ERR_TRUNCATED | DP2_ERR_END_CHECK | DP2_ERR_TRAILING);
        b->errors |= CHUNK_ERR_SLICE_SIZE;
        b->data_len = len - DP2_END_CHECK_LEN - data_start;
        b->nfields = F_DATA;
        r->check_read = TRUE;
        r->check_offset = len - DP2_END_CHECK_LEN;
        r->check_value = DP2_END_CHECK;
        r->bit = len * 8;
    }
}

static void chunk_parse_ack(chunk_body_t *b)
{
    dp2_reader_t *r = &b->r;

    b->num_bit = r->bit;
    b->num_slices = dp2_read_int(r, 1, b->max_slices);
    if (r->errors & DP2_ERR_TRUNCATED)
        return;
    b->nfields = FA_NUM_SLICES;
    b->ack_bit = r->bit;
    /* The bits are read where they are shown (chunk_add_ack_bits); the
     * layout only needs to know they are there. */
    if (!dp2_skip_bits(r, b->num_slices)) {
        r->need_bytes = (b->ack_bit + b->num_slices + 7) / 8 + DP2_END_CHECK_LEN;
        return;
    }
    b->nfields = FA_BITS;
    dp2_read_check(r);
}

/* Parses the datagram with MaxSlicesPerChunk max_slices and SliceSize
 * slice_size. Never fails: problems are recorded in b->errors. */
static void chunk_parse(tvbuff_t *tvb, guint32 max_slices, guint32 slice_size, chunk_body_t *b)
{
    dp2_reader_t *r = &b->r;

    memset(b, 0, sizeof *b);
    dp2_reader_init(r, tvb);
    b->max_slices = max_slices;
    b->slice_size = slice_size;
    b->id_bits = dp2_bits_required(0, max_slices - 1);
    b->type = dp2_read_int(r, CHUNK_TYPE_SLICE, CHUNK_TYPE_ACK);
    if (!(r->errors & DP2_ERR_TRUNCATED)) {
        b->nfields = F_TYPE;
        b->chunk_id = dp2_read_bits(r, 16);
        if (!(r->errors & DP2_ERR_TRUNCATED)) {
            b->nfields = F_CHUNK_ID;
            if (b->type == CHUNK_TYPE_SLICE)
                chunk_parse_slice(b);
            else
                chunk_parse_ack(b);
        }
    }
    b->errors |= r->errors;
}

static gboolean chunk_fits(const chunk_body_t *b)
{
    return !(b->errors & CHUNK_ERR_STRUCTURE);
}

/* ---- Decoding decisions ------------------------------------------------- */

typedef enum {
    VAR_PREF,        /* set by preference */
    VAR_SINGLE,      /* Auto: only this variant parses the packet */
    VAR_DECIDED,     /* Auto: this packet decided the conversation's variant */
    VAR_CONV,        /* Auto: the conversation's variant, decided earlier */
    VAR_AMBIGUOUS,   /* Auto, undecided: both parse */
    VAR_UNKNOWN      /* Auto, undecided: neither parses */
} chunk_var_source_t;

typedef struct chunk_decode {
    dp2_id_t id;
    chunk_var_source_t vsrc;
    guint32 var_frame;           /* VAR_CONV: deciding frame */
    guint32 other_fit;           /* VAR_CONV: a variant that fits when the chosen does not */
    chunk_body_t b;
    gboolean clean;              /* strict reader accepts it; goes to analysis */
} chunk_decode_t;

/* Decodes one datagram: CRC and protocol id, variant, fields, and whether a
 * strict reader accepts it. Updates the conversation on the first pass. */
static void chunk_decode(tvbuff_t *tvb, packet_info *pinfo, chunk_conv_t *cc, const dp2_frame_t *f,
                         chunk_decode_t *d)
{
    gboolean update = !PINFO_FD_VISITED(pinfo) && !pinfo->flags.in_error_pkt;
    guint32 frame = pinfo->num;
    chunk_body_t alt;
    gboolean fit_a = FALSE, fit_e = FALSE;
    gboolean plausible;
    /* Auto, with the conversation's variant decided by this or an earlier
     * frame: that variant is parsed, the other only when it does not fit
     * (to say whether the other does). */
    gboolean conv_variant = !cfg_max_slices && cc->variant_frame && frame >= cc->variant_frame;

    memset(d, 0, sizeof *d);

    if (cfg_max_slices) {
        chunk_parse(tvb, cfg_max_slices, cfg_slice_size, &d->b);
        d->vsrc = VAR_PREF;
        plausible = chunk_fits(&d->b);
    } else if (conv_variant) {
        guint32 v = cc->variant;
        guint32 other = v == CHUNK_VARIANT_ARTICLE ? CHUNK_VARIANT_EXAMPLE : CHUNK_VARIANT_ARTICLE;
        gboolean fit_v, fit_other = FALSE;

        chunk_parse(tvb, v, cfg_slice_size, &d->b);
        fit_v = chunk_fits(&d->b);
        if (!fit_v) {
            chunk_parse(tvb, other, cfg_slice_size, &alt);
            fit_other = chunk_fits(&alt);
        }
        d->vsrc = frame == cc->variant_frame ? VAR_DECIDED : VAR_CONV;
        d->var_frame = cc->variant_frame;
        if (fit_other)
            d->other_fit = other;
        plausible = fit_v || fit_other;
    } else {
        chunk_parse(tvb, CHUNK_VARIANT_ARTICLE, cfg_slice_size, &d->b);
        chunk_parse(tvb, CHUNK_VARIANT_EXAMPLE, cfg_slice_size, &alt);
        fit_a = chunk_fits(&d->b);
        fit_e = chunk_fits(&alt);
        plausible = fit_a || fit_e;
    }

    dp2_id_decide(cc->ids, &chunk_p2, f, frame, plausible, update, &d->id);

    if (!cfg_max_slices && !conv_variant) {
        if (fit_a && fit_e) {
            d->vsrc = VAR_AMBIGUOUS;     /* shown as the article's, flagged */
        } else if (fit_e) {
            d->vsrc = VAR_SINGLE;
            d->b = alt;
        } else if (fit_a) {
            d->vsrc = VAR_SINGLE;
        } else {
            d->vsrc = VAR_UNKNOWN;       /* shown as the article's, flagged */
        }
    }

    d->clean = (d->id.status == DP2_ID_GOOD || d->id.status == DP2_ID_OTHER) &&
               d->b.errors == 0 && d->vsrc != VAR_AMBIGUOUS && d->vsrc != VAR_UNKNOWN;

    if (d->vsrc == VAR_SINGLE && d->clean && update && !cc->variant_frame) {
        cc->variant_frame = frame;
        cc->variant = d->b.max_slices;
        d->vsrc = VAR_DECIDED;
        d->var_frame = frame;
    }
}

/* ---- Display ---------------------------------------------------------- */

/* The Info column of a slice, "Slice %u[ (last)] of %u, chunk %u, %u bytes":
 * written here, not by col_add_fstr's printf, as it is for every datagram
 * (the same text, at a fraction of the cost). */
static void chunk_info_slice(packet_info *pinfo, guint32 slice_id, gboolean last, guint32 num_slices,
                             guint32 chunk_id, guint32 bytes)
{
    char *p;

    if (!pinfo->cinfo)
        return;
    p = au_info_begin(pinfo, 96);
    p = au_put_str(p, "Slice ");
    p = au_put_uint(p, slice_id);
    if (last)
        p = au_put_str(p, " (last)");
    p = au_put_str(p, " of ");
    p = au_put_uint(p, num_slices);
    p = au_put_str(p, ", chunk ");
    p = au_put_uint(p, chunk_id);
    p = au_put_str(p, ", ");
    p = au_put_uint(p, bytes);
    p = au_put_str(p, " bytes");
    /* Not copied: in the packet scope, which lives as long as the
     * packet_info (column-utils.h allows that), and plain ASCII; the marks
     * go after it in the same buffer (au_info_marks). */
    au_info_set(pinfo, p);
}

/* The Info column of an ack whose bits are all there, "Ack chunk %u: %u/%u
 * acked[, missing %s]", likewise. */
static void chunk_info_ack(packet_info *pinfo, guint32 chunk_id, guint32 acked_count, guint32 num_slices,
                           const char *missing)
{
    size_t mlen = strlen(missing);
    char *p;

    if (!pinfo->cinfo)
        return;
    p = au_info_begin(pinfo, 64 + mlen);
    p = au_put_str(p, "Ack chunk ");
    p = au_put_uint(p, chunk_id);
    p = au_put_str(p, ": ");
    p = au_put_uint(p, acked_count);
    p = au_put_str(p, "/");
    p = au_put_uint(p, num_slices);
    p = au_put_str(p, " acked");
    if (mlen) {
        p = au_put_str(p, ", missing ");
        memcpy(p, missing, mlen);
        p += mlen;
    }
    au_info_set(pinfo, p);
}

/* Display caps (docs/robustness.md, "Dissector"): with the
 * max_slices preference at 65536 an ack holds 65536 bits, and one line and
 * one range each made tshark spend 0.2 s per 8 KiB ack. The 256 variant never
 * reaches them (its longest ranges string is 456 characters). */
#define CHUNK_MAX_ACK_LINES   1024   /* per-slice lines in the bitfield subtree */
#define CHUNK_MAX_RANGES_LEN  1024   /* characters of chunk.ack.missing, then ",..." */

static void chunk_add_variant(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const chunk_decode_t *d)
{
    proto_item *ti, *si;

    /* Without a tree: the expert infos of the three cases that have one. */
    if (!tree && d->vsrc != VAR_AMBIGUOUS && d->vsrc != VAR_UNKNOWN && !(d->vsrc == VAR_CONV && d->other_fit))
        return;
    ti = proto_tree_add_uint(tree, hf_chunk_variant, tvb, 0, 0, d->b.max_slices);

    proto_item_set_generated(ti);
    switch (d->vsrc) {
    case VAR_PREF:
        proto_item_append_text(ti, " (preference)");
        break;
    case VAR_SINGLE:
        proto_item_append_text(ti, " (auto: only this variant parses the packet)");
        break;
    case VAR_DECIDED:
        proto_item_append_text(ti, " (auto: decided by this packet for its conversation)");
        break;
    case VAR_CONV:
        proto_item_append_text(ti, " (auto: decided for this conversation in frame %u)", d->var_frame);
        if (d->other_fit)
            AU_EXPERT(pinfo, ti, &ei_chunk_variant_mismatch,
                                   "The packet parses with MaxSlicesPerChunk %u, not with the %u its conversation uses",
                                   d->other_fit, d->b.max_slices);
        break;
    case VAR_AMBIGUOUS:
        proto_item_append_text(ti, " (auto: ambiguous)");
        AU_EXPERT(pinfo, ti, &ei_chunk_variant_ambiguous,
                               "Parses as MaxSlicesPerChunk %u and %u alike, and no earlier packet of this "
                               "conversation decided; shown as %u, which may be wrong (set chunk.max_slices)",
                               CHUNK_VARIANT_ARTICLE, CHUNK_VARIANT_EXAMPLE, CHUNK_VARIANT_ARTICLE);
        break;
    case VAR_UNKNOWN:
        proto_item_append_text(ti, " (auto: unknown)");
        AU_EXPERT(pinfo, ti, &ei_chunk_variant_unknown,
                               "Parses as neither MaxSlicesPerChunk %u nor %u (SliceSize %u); shown as %u "
                               "(set chunk.max_slices and chunk.slice_size for other games)",
                               CHUNK_VARIANT_ARTICLE, CHUNK_VARIANT_EXAMPLE, cfg_slice_size,
                               CHUNK_VARIANT_ARTICLE);
        break;
    }
    si = proto_tree_add_uint(tree, hf_chunk_variant_slice_size, tvb, 0, 0, d->b.slice_size);
    proto_item_set_generated(si);
}

/* Adds a count sent as n-1 in nbits at stream bit `bit` (hf_sent) and,
 * generated over the same bytes, the n it means (hf_meant). */
static void chunk_add_minus1(proto_tree *tree, int hf_sent, int hf_meant, tvbuff_t *tvb,
                             guint bit, guint nbits, guint32 meant)
{
    proto_item *ti;
    guint off = bit / 8;
    guint end = (bit + nbits + 7) / 8;

    if (!tree)
        return;
    dp2_add_bits(tree, hf_sent, tvb, bit, nbits, 0);
    ti = proto_tree_add_uint(tree, hf_meant, tvb, off, end > off ? end - off : 0, meant);
    proto_item_set_generated(ti);
}

/* Adds the ack bitfield, one line per slice, and the generated counts;
 * returns the acked array (pinfo->pool, num_slices entries) and, in
 * *acked_count_out and *missing_out, its set bits and its clear ones as
 * ranges. The parse has checked that the bits are there. */
static guint8 *chunk_add_ack_bits(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo,
                                  const chunk_body_t *b, guint32 *acked_count_out,
                                  const char **missing_out)
{
    guint32 n = b->num_slices;
    guint8 *acked = (guint8 *)wmem_alloc(pinfo->pool, n);
    guint32 acked_count = 0;
    const char *missing;
    proto_item *ti;

    /* Bounded by the max_slices preference, read 32 bits at a time. */
    for (guint32 i = 0; i < n; i += 32) {
        guint k = MIN(32, n - i);
        guint32 w = tvb_get_bits32(tvb, b->ack_bit + i, k, ENC_LITTLE_ENDIAN);
        acked_count += (guint32)__builtin_popcount(w);
        for (guint j = 0; j < k; j++)
            acked[i + j] = (w >> j) & 1;
    }
    *acked_count_out = acked_count;
    {
        au_idset_t clear = au_idset_zero_bytes(acked, n);
        missing = au_ranges(pinfo->pool, &clear, CHUNK_MAX_RANGES_LEN);
    }
    *missing_out = missing;

    if (tree) {
        guint first = b->ack_bit / 8, last = (b->ack_bit + n - 1) / 8;
        proto_tree *sub;

        ti = proto_tree_add_item(tree, hf_chunk_ack_bitfield, tvb, first, last - first + 1, ENC_NA);
        proto_item_set_text(ti, "Acked bitfield: %u of %u slices acked, slice 0 first (stream bits %u-%u)",
                             acked_count, n, b->ack_bit, b->ack_bit + n - 1);
        sub = proto_item_add_subtree(ti, ett_chunk_ack_bitfield);
        for (guint32 i = 0; i < n && i < CHUNK_MAX_ACK_LINES; i++) {
            guint bit = b->ack_bit + i;
            guint pos = bit & 7;
            char bits[10];
            proto_item *li;

            /* The byte's bits most significant first, as Wireshark draws
             * them: this slice's bit at its place, the rest dots. */
            for (guint c = 0, p = 0; c < 9; c++) {
                if (c == 4) {
                    bits[c] = ' ';
                    continue;
                }
                bits[c] = (7 - p == pos) ? (acked[i] ? '1' : '0') : '.';
                p++;
            }
            bits[9] = '\0';
            li = proto_tree_add_uint_format(sub, acked[i] ? hf_chunk_ack_acked_slice : hf_chunk_ack_missing_slice,
                                            tvb, bit / 8, 1, i, "%s = Slice %u: %s", bits, i,
                                            acked[i] ? "acked" : "missing");
            proto_item_set_bits_offset_len(li, pos, 1);
        }
        if (n > CHUNK_MAX_ACK_LINES)
            proto_tree_add_none_format(sub, hf_chunk_ack_bitfield, tvb, (b->ack_bit + CHUNK_MAX_ACK_LINES) / 8,
                                       last - (b->ack_bit + CHUNK_MAX_ACK_LINES) / 8 + 1,
                                       "Slices %u-%u: not listed one per line (at most %u lines per ack); "
                                       "the counts and ranges below cover them", CHUNK_MAX_ACK_LINES, n - 1,
                                       CHUNK_MAX_ACK_LINES);
    }
    ti = proto_tree_add_uint(tree, hf_chunk_ack_acked_count, tvb, 0, 0, acked_count);
    proto_item_set_generated(ti);
    ti = proto_tree_add_uint(tree, hf_chunk_ack_missing_count, tvb, 0, 0, n - acked_count);
    proto_item_set_generated(ti);
    if (*missing)
        ti = proto_tree_add_string(tree, hf_chunk_ack_missing, tvb, 0, 0, missing);
    else
        ti = proto_tree_add_string_format_value(tree, hf_chunk_ack_missing, tvb, 0, 0, missing, "none");
    proto_item_set_generated(ti);
    return acked;
}

/* Info column marks: the body errors (DP2_ERR_* | CHUNK_ERR_*, the low 32
 * bits) and, above them, the problems of the id and variant decisions. */
#define CHUNK_MARK_BAD_CRC           ((guint64)1 << 32)
#define CHUNK_MARK_UNCONFIRMED_ID    ((guint64)1 << 33)
#define CHUNK_MARK_UNKNOWN_VARIANT   ((guint64)1 << 34)
#define CHUNK_MARK_AMBIGUOUS_VARIANT ((guint64)1 << 35)
#define CHUNK_MARK_OTHER_VARIANT     ((guint64)1 << 36)

static const au_info_mark_t chunk_info_mark_table[] = {
    { CHUNK_MARK_BAD_CRC,           0, " [Bad CRC]" },
    { CHUNK_MARK_UNCONFIRMED_ID,    0, " [Unconfirmed protocol id]" },
    { CHUNK_MARK_UNKNOWN_VARIANT,   0, " [Unknown variant]" },
    { CHUNK_MARK_AMBIGUOUS_VARIANT, 0, " [Ambiguous variant]" },
    /* The layout does not fit the packet. */
    { DP2_ERR_TRUNCATED,             0, " [Truncated]" },
    { DP2_ERR_PADDING,               0, " [Non-zero padding]" },
    { DP2_ERR_END_CHECK,             0, " [Bad end check]" },
    { DP2_ERR_RANGE,                 0, " [Value out of range]" },
    { CHUNK_ERR_SLICE_SIZE,         0, " [Non-last slice not SliceSize]" },
    { CHUNK_MARK_OTHER_VARIANT,     0, " [Other variant]" },
    /* It fits, but a strict reader drops it. */
    { CHUNK_ERR_SLICE_RANGE,        0, " [Slice id >= slice count]" },
    { DP2_ERR_TRAILING,              0, " [Bytes after end check]" },
};

/* Appends the packet's problems to the Info column; body errors only when
 * `structural` (the layout is known). */
static void chunk_info_problems(packet_info *pinfo, const chunk_decode_t *d, gboolean structural)
{
    guint64 bits = structural ? d->b.errors : 0;

    if (d->id.status == DP2_ID_BAD)
        bits |= CHUNK_MARK_BAD_CRC;
    else if (d->id.status == DP2_ID_UNCONFIRMED)
        bits |= CHUNK_MARK_UNCONFIRMED_ID;
    if (d->vsrc == VAR_UNKNOWN)
        bits |= CHUNK_MARK_UNKNOWN_VARIANT;
    else if (d->vsrc == VAR_AMBIGUOUS)
        bits |= CHUNK_MARK_AMBIGUOUS_VARIANT;
    if (d->other_fit)
        bits |= CHUNK_MARK_OTHER_VARIANT;
    au_info_marks(pinfo, NULL, bits, chunk_info_mark_table, array_length(chunk_info_mark_table));
}

/* The slice fields that were read, the Info column, and the padding before
 * the data (*next_pad moves past it). */
static void chunk_show_slice(proto_tree *ct, tvbuff_t *tvb, packet_info *pinfo, const chunk_body_t *b,
                             guint *next_pad, gboolean experts)
{
    dp2_display_t *p2d = &chunk_p2d;
    proto_item *ti;

    if (b->nfields >= F_SLICE_ID) {
        ti = dp2_add_bits(ct, hf_chunk_slice_id, tvb, b->slice_id_bit, b->id_bits, 0);
        if ((b->errors & CHUNK_ERR_SLICE_RANGE) && experts)
            AU_EXPERT(pinfo, ti, &ei_chunk_slice_range,
                                   "Slice id %u >= slice count %u (the original program accepted this; "
                                   "a receiver that trusts it writes outside the chunk)",
                                   b->slice_id, b->num_slices);
    }
    if (b->nfields >= F_NUM_SLICES) {
        chunk_add_minus1(ct, hf_chunk_num_slices_m1, hf_chunk_num_slices, tvb, b->num_bit, b->id_bits,
                         b->num_slices);
        if (ct) {
            ti = proto_tree_add_boolean(ct, hf_chunk_last_slice, tvb, 0, 0, b->last);
            proto_item_set_generated(ti);
        }
    }
    if (b->nfields >= F_SLICE_BYTES) {
        if (b->last) {
            chunk_add_minus1(ct, hf_chunk_slice_bytes_m1, hf_chunk_slice_bytes, tvb, b->bytes_bit, b->bytes_bits,
                             b->slice_bytes);
        } else if (ct) {
            ti = proto_tree_add_uint(ct, hf_chunk_slice_bytes, tvb, 0, 0, b->slice_bytes);
            proto_item_append_text(ti, " (not sent: every slice but the last is SliceSize)");
            proto_item_set_generated(ti);
        }
        dp2_add_padding(ct, pinfo, p2d, &b->r, next_pad, experts);
        if (b->data_len || b->nfields >= F_DATA) {
            /* Without a tree proto_tree_add_item still checks the bytes
             * (the parse has): skipped. */
            ti = ct ? proto_tree_add_item(ct, hf_chunk_data, tvb, b->data_offset, b->data_len, ENC_NA) : NULL;
            if ((b->errors & CHUNK_ERR_SLICE_SIZE) && experts)
                AU_EXPERT(pinfo, ti, &ei_chunk_slice_size,
                                       "Slice %u of %u is not the last, so it must carry SliceSize %u bytes; "
                                       "it carries %u", b->slice_id, b->num_slices, b->slice_size,
                                       b->data_len);
            else if (b->nfields < F_DATA)
                proto_item_append_text(ti, " [truncated: %u of %u bytes]", b->data_len, b->slice_bytes);
        }
        /* Slice ids count from 0: "Slice 29/30" read as "29 of 30" on
         * the last slice. */
        chunk_info_slice(pinfo, b->slice_id, b->last, b->num_slices, b->chunk_id,
                         (b->errors & CHUNK_ERR_SLICE_SIZE) ? b->data_len : b->slice_bytes);
    } else {
        col_add_fstr(pinfo->cinfo, COL_INFO, "Slice of chunk %u", b->chunk_id);
    }
}

/* The ack fields that were read and the Info column; returns the acked
 * array (NULL when the bits are not all there), its set bits in
 * *acked_count. */
static guint8 *chunk_show_ack(proto_tree *ct, tvbuff_t *tvb, packet_info *pinfo, const chunk_body_t *b,
                              guint32 *acked_count)
{
    guint8 *acked = NULL;
    const char *missing = "";

    if (b->nfields >= FA_NUM_SLICES)
        chunk_add_minus1(ct, hf_chunk_num_slices_m1, hf_chunk_num_slices, tvb, b->num_bit, b->id_bits,
                         b->num_slices);
    if (b->nfields >= FA_BITS) {
        acked = chunk_add_ack_bits(ct, tvb, pinfo, b, acked_count, &missing);
        chunk_info_ack(pinfo, b->chunk_id, *acked_count, b->num_slices, missing);
    } else {
        col_add_fstr(pinfo->cinfo, COL_INFO, "Ack chunk %u", b->chunk_id);
    }
    return acked;
}

/* Hands a clean packet to the analysis. */
static void chunk_to_analysis(tvbuff_t *tvb, packet_info *pinfo, proto_tree *ct, const chunk_body_t *b,
                              const guint8 *acked, guint32 acked_count, conversation_t *conv)
{
    if (b->type == CHUNK_TYPE_SLICE) {
        chunk_slice_info_t si;
        si.chunk_id = (guint16)b->chunk_id;
        si.slice_id = b->slice_id;
        si.num_slices = b->num_slices;
        si.slice_bytes = b->slice_bytes;
        si.data_offset = (gint)b->data_offset;
        si.max_slices = b->max_slices;
        si.slice_size = b->slice_size;
        si.conv = conv;
        chunk_analysis_slice(tvb, pinfo, ct, &si);
    } else {
        chunk_ack_info_t ai;
        ai.chunk_id = (guint16)b->chunk_id;
        ai.num_slices = b->num_slices;
        ai.acked = acked;
        ai.acked_count = acked_count;
        ai.max_slices = b->max_slices;
        ai.slice_size = b->slice_size;
        ai.conv = conv;
        chunk_analysis_ack(tvb, pinfo, ct, &ai);
    }
}

/* Shows a decoded datagram and hands clean ones to the analysis. */
static void chunk_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, chunk_decode_t *d,
                       conversation_t *conv)
{
    const chunk_body_t *b = &d->b;
    dp2_display_t *p2d = &chunk_p2d;
    /* With an unknown variant the layout is a guess, and a packet that only
     * the other variant parses is not broken but misread: their errors are
     * shown in the fields but not raised as expert infos. */
    gboolean experts = d->vsrc != VAR_UNKNOWN && !d->other_fit;
    proto_item *pi;
    proto_tree *ct;
    guint next_pad = 0;
    guint8 *acked = NULL;
    guint32 acked_count = 0;

    /* Every path below sets the Info column (no col_clear first: nothing
     * here throws before it is set). */
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "Chunk");

    /* Without a tree (the first pass, tshark's single pass, the packet
     * list) a clean packet with the configured id's CRC has nothing to
     * show but its Info: every item below would be NULL, and the expert
     * infos and Info marks of the framing, the variant and the fields are
     * all about problems it does not have. */
    if (!tree && d->clean && d->id.status == DP2_ID_GOOD && !pinfo->flags.in_error_pkt) {
        if (b->type == CHUNK_TYPE_SLICE)
            chunk_info_slice(pinfo, b->slice_id, b->last, b->num_slices, b->chunk_id, b->slice_bytes);
        else
            acked = chunk_show_ack(NULL, tvb, pinfo, b, &acked_count);
        chunk_to_analysis(tvb, pinfo, NULL, b, acked, acked_count, conv);
        return;
    }

    pi = tree ? proto_tree_add_item(tree, proto_chunk, tvb, 0, -1, ENC_NA) : NULL;
    ct = proto_item_add_subtree(pi, ett_chunk);

    dp2_add_crc(ct, tvb, pinfo, p2d, &chunk_p2, &d->id);
    chunk_add_variant(ct, tvb, pinfo, d);

    if (b->nfields >= F_TYPE)
        dp2_add_bits(ct, hf_chunk_type, tvb, DP2_BODY_BIT, 1, 0);
    if (b->nfields >= F_CHUNK_ID)
        dp2_add_bits(ct, hf_chunk_chunk_id, tvb, DP2_BODY_BIT + 1, 16, 0);

    if (b->nfields < F_CHUNK_ID)
        col_set_str(pinfo->cinfo, COL_INFO, "Chunk packet");
    else if (b->type == CHUNK_TYPE_SLICE)
        chunk_show_slice(ct, tvb, pinfo, b, &next_pad, experts);
    else
        acked = chunk_show_ack(ct, tvb, pinfo, b, &acked_count);
    dp2_add_padding(ct, pinfo, p2d, &b->r, &next_pad, experts);
    dp2_add_end_check(ct, pinfo, p2d, &b->r, experts);

    if (experts && (b->errors & DP2_ERR_TRUNCATED))
        AU_EXPERT(pinfo, pi, &ei_chunk_truncated,
                               "Truncated: the fields need at least %u bytes, the datagram has %u",
                               b->r.need_bytes, tvb_captured_length(tvb));
    if (experts && (b->errors & DP2_ERR_RANGE))
        AU_EXPERT(pinfo, pi, &ei_chunk_value_range,
                               "A field's value exceeds its maximum (MaxSlicesPerChunk %u, SliceSize %u)",
                               b->max_slices, b->slice_size);
    chunk_info_problems(pinfo, d, experts);

    if (!d->clean || pinfo->flags.in_error_pkt)
        return;
    chunk_to_analysis(tvb, pinfo, ct, b, acked, acked_count, conv);
}

/* Whether a datagram on chunk's port is chunk's (docs/dissector.md, "Which
 * datagrams are chunk's"): its CRC implies the configured id or the id its
 * conversation established (a packet that disagrees with that id is a
 * corrupt one of the conversation), or, with an unconfirmed id, a layout
 * fits it exactly (end check at the end, zero padding, a known variant),
 * which other programs' datagrams (netcode's, DNS, random bytes) do not. */
static gboolean chunk_well_formed(const chunk_decode_t *d, const chunk_conv_t *cc, guint32 frame)
{
    switch (d->id.status) {
    case DP2_ID_GOOD:
    case DP2_ID_OTHER:
    case DP2_ID_BAD:
        return TRUE;
    case DP2_ID_UNCONFIRMED:
        return chunk_fits(&d->b) && !(d->b.errors & DP2_ERR_TRAILING) && d->vsrc != VAR_UNKNOWN;
    default:
        /* CRC not computable (cut by the capture): the conversation's. */
        return cc->ids->id_frame && frame > cc->ids->id_frame;
    }
}

/* data: the datagram's dp2_frame_t. Under Decode As (f->forced) everything
 * is shown, broken or not; on the port only a well-formed datagram: anything
 * else goes back to UDP. */
static int chunk_dissect_forced(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    const dp2_frame_t *f = (const dp2_frame_t *)data;
    chunk_decode_t d;
    conversation_t *conv;
    chunk_conv_t *cc = chunk_get_conv(pinfo, &conv);

    chunk_decode(tvb, pinfo, cc, f, &d);
    if (!f->forced && !chunk_well_formed(&d, cc, pinfo->num))
        return 0;
    chunk_show(tvb, pinfo, tree, &d, conv);
    return tvb_captured_length(tvb);
}

/* Port, Decode As and pinned conversations: protocol2's entry point, which
 * hands datagrams of another registered protocol's id to that protocol. */
static int dissect_chunk(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    return dp2_dissect_udp(tvb, pinfo, tree, data, &chunk_p2);
}

/* Heuristic: claim a datagram only when a layout puts the end check exactly
 * at its end with zero padding and the CRC agrees (the configured id, or the
 * conversation's); then pin the UDP conversation to this dissector. */
static ws_cb_bool dissect_chunk_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    chunk_decode_t d;
    conversation_t *conv;
    chunk_conv_t *cc;
    dp2_frame_t f;

    /* Cheap first test: almost no other datagram ends in e2 ac 08 99. Then
     * leave another protocol's packets (a fragment packet is never shown as
     * a chunk one) to that protocol's heuristic. */
    if (!dp2_ends_with_check(tvb) || !dp2_heur_frame(tvb, pinfo, &chunk_p2, &f))
        return FALSE;
    cc = chunk_get_conv(pinfo, &conv);
    chunk_decode(tvb, pinfo, cc, &f, &d);
    if (!(d.id.status == DP2_ID_GOOD || d.id.status == DP2_ID_OTHER) || !chunk_fits(&d.b) ||
        (d.b.errors & DP2_ERR_TRAILING) || d.vsrc == VAR_UNKNOWN)
        return FALSE;
    conversation_set_dissector(conv, chunk_handle);
    chunk_show(tvb, pinfo, tree, &d, conv);
    return TRUE;
}

/* ---- Registration ------------------------------------------------------- */

static void chunk_prefs_apply(void)
{
    cfg_protocol_id = pref_protocol_id;
    cfg_max_slices = MIN(pref_max_slices, CHUNK_MAX_MAX_SLICES);
    cfg_slice_size = pref_slice_size ? MIN(pref_slice_size, CHUNK_MAX_SLICE_SIZE) : CHUNK_DEFAULT_SLICE_SIZE;
    dp2_prefs_apply(&chunk_p2);
}

void proto_register_chunk(void)
{
    module_t *chunk_module;

    static hf_register_info hf[] = {
        { &hf_chunk_variant, { "MaxSlicesPerChunk (variant)", "chunk.variant", FT_UINT32, BASE_DEC, NULL, 0x0,
            "MaxSlicesPerChunk used to decode: 256 (the article) or 32 (its example program), or a preference", HFILL } },
        { &hf_chunk_variant_slice_size, { "SliceSize", "chunk.variant.slice_size", FT_UINT32, BASE_DEC, NULL, 0x0,
            "SliceSize used to decode", HFILL } },
        { &hf_chunk_type, { "Packet type", "chunk.type", FT_UINT8, BASE_DEC, VALS(chunk_type_vals), 0x0,
            NULL, HFILL } },
        { &hf_chunk_chunk_id, { "Chunk id", "chunk.chunk_id", FT_UINT16, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_slice_id, { "Slice id", "chunk.slice_id", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_num_slices_m1, { "Slice count - 1 (as sent)", "chunk.num_slices_minus1", FT_UINT32, BASE_DEC,
            NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_num_slices, { "Slice count", "chunk.num_slices", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_last_slice, { "Last slice", "chunk.last_slice", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Slice id == slice count - 1: the slice that carries its byte count", HFILL } },
        { &hf_chunk_slice_bytes_m1, { "Slice bytes - 1 (as sent)", "chunk.slice_bytes_minus1", FT_UINT32, BASE_DEC,
            NULL, 0x0, NULL, HFILL } },
        { &hf_chunk_slice_bytes, { "Slice bytes", "chunk.slice_bytes", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_data, { "Data", "chunk.data", FT_BYTES, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_ack_bitfield, { "Acked bitfield", "chunk.ack.bitfield", FT_NONE, BASE_NONE, NULL, 0x0,
            "One bit per slice, slice 0 first", HFILL } },
        { &hf_chunk_ack_acked_slice, { "Acked slice", "chunk.ack.acked_slice", FT_UINT32, BASE_DEC, NULL, 0x0,
            "A slice whose bit is set", HFILL } },
        { &hf_chunk_ack_missing_slice, { "Missing slice", "chunk.ack.missing_slice", FT_UINT32, BASE_DEC, NULL, 0x0,
            "A slice whose bit is clear", HFILL } },
        { &hf_chunk_ack_acked_count, { "Acked slices", "chunk.ack.acked_count", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_ack_missing_count, { "Missing slices", "chunk.ack.missing_count", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_chunk_ack_missing, { "Missing", "chunk.ack.missing", FT_STRING, BASE_NONE, NULL, 0x0,
            "Missing slices as ranges, e.g. 3-5,17,200-255", HFILL } },
    };

    static gint *ett[] = {
        &ett_chunk,
        &ett_chunk_ack_bitfield,
    };

    static ei_register_info ei[] = {
        { &ei_chunk_truncated, { "chunk.truncated", PI_MALFORMED, PI_ERROR,
            "Truncated packet", EXPFILL } },
        { &ei_chunk_slice_range, { "chunk.slice_id.out_of_range", PI_PROTOCOL, PI_ERROR,
            "Slice id >= slice count", EXPFILL } },
        { &ei_chunk_slice_size, { "chunk.slice_size.wrong", PI_PROTOCOL, PI_ERROR,
            "Non-last slice whose size is not SliceSize", EXPFILL } },
        { &ei_chunk_value_range, { "chunk.value.out_of_range", PI_MALFORMED, PI_ERROR,
            "Field value above its maximum", EXPFILL } },
        { &ei_chunk_variant_unknown, { "chunk.variant.unknown", PI_UNDECODED, PI_WARN,
            "Unknown variant: parses with no known MaxSlicesPerChunk", EXPFILL } },
        { &ei_chunk_variant_ambiguous, { "chunk.variant.ambiguous", PI_UNDECODED, PI_WARN,
            "Ambiguous variant: parses as 256 and 32 alike, no decision yet", EXPFILL } },
        { &ei_chunk_variant_mismatch, { "chunk.variant.mismatch", PI_PROTOCOL, PI_WARN,
            "Parses only with another variant than its conversation's", EXPFILL } },
    };

    proto_chunk = proto_register_protocol("Chunk Protocol (Sending Large Blocks of Data)", "Chunk", "chunk");
    static const dp2_display_names_t p2_names = {
        .name = "chunk", .crc_bad = "Bad CRC: disagrees with the conversation's protocol id", .learns_ids = TRUE,
    };
    dp2_display_register(proto_chunk, &chunk_p2d, &p2_names);
    CS_REGISTER_ARRAYS(proto_chunk, hf, ett, ei);

    chunk_module = prefs_register_protocol(proto_chunk, chunk_prefs_apply);
    prefs_register_uint_preference(chunk_module, "protocol_id", "Protocol id",
        "The 32-bit protocol id that seeds the CRC (never sent). A conversation whose packets all imply "
        "another id is decoded too, with a note.", 16, &pref_protocol_id);
    prefs_register_uint_preference(chunk_module, "max_slices", "MaxSlicesPerChunk (0 = Auto)",
        "Sets the width of slice ids and counts. 0 (Auto): tell the article's 256 from its example "
        "program's 32 per conversation. Other values: other games' constants (at most 65536).",
        10, &pref_max_slices);
    prefs_register_uint_preference(chunk_module, "slice_size", "SliceSize",
        "Bytes in every slice but the last (default 1024, at most 65535); sets the width of the last "
        "slice's byte count.", 10, &pref_slice_size);

    chunk_handle = register_dissector("chunk", dissect_chunk, proto_chunk);

    chunk_p2.proto = proto_chunk;
    chunk_p2.handle = chunk_handle;
    dp2_register_protocol(&chunk_p2);
    chunk_prefs_apply();
    /* Statistics and analysis side by side: the analysis queues reassembled
     * chunks on the export-object tap the statistics register. */
    int eo_tap = chunk_stats_register(proto_chunk);
    chunk_analysis_register(proto_chunk, chunk_module, eo_tap);
}

void proto_reg_handoff_chunk(void)
{
    dp2_ports_register(&chunk_p2, CHUNK_DEFAULT_PORT_RANGE);
    heur_dissector_add("udp", dissect_chunk_heur, "Chunk over UDP", "chunk_udp", proto_chunk,
                       HEURISTIC_ENABLE);
    chunk_analysis_handoff();
}
