/* p2frag/dissect.c
 * Routines for the fragment protocol of Glenn Fiedler's "Packet
 * Fragmentation and Reassembly" (protocol `p2frag`): regular packets and the
 * fragments of packets larger than 1024 bytes, on protocol2 framing
 * (common/protocol2.h). The wire format and receive rules are in docs/p2frag.md;
 * this is an independent implementation (no code shared with endpoints/).
 *
 * Chunk and fragment packets share the framing and, in the original
 * examples, the UDP ports: protocol2's entry point tells them apart by the
 * protocol id the CRC implies and hands this file the fragment ones.
 *
 * Decoding follows the spec's intended receive rules: what a receiver
 * following them would drop is decoded anyway and raised as an expert info;
 * fragments are reassembled (Wireshark's reassembly, keyed by conversation,
 * direction and unwrapped sequence) whatever the sequence order. The
 * analysis (per packet: fragments seen, complete or lost; per direction:
 * loss rates) is p2frag/analysis.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/expert.h>
#include <epan/conversation.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/tap.h>
#include <epan/to_str.h>
#include <wsutil/str_util.h>

#include "p2frag.h"
#include "p2frag-int.h"
#include "common/analysis-util.h"
#include "common/protocol2.h"
#include "common/single-pass.h"
#include "common/ws-compat.h"
#include "common/cs-bytes.h"

/* docs/p2frag.md, "Constants". */
#define P2FRAG_DEFAULT_PROTOCOL_ID  0x55667788u
#define P2FRAG_TYPE_A               1
#define P2FRAG_TYPE_B               2
#define P2FRAG_TYPE_C               3
#define P2FRAG_DEFAULT_TYPES        4       /* FRAGMENT, A, B, C: a 2-bit type */
#define P2FRAG_MAX_TYPES            65536   /* preference bound: at most a 16-bit type */
#define P2FRAG_MAX_REGULAR          1024    /* largest unfragmented packet */
/* The example's bodies (docs/p2frag.md, "Regular packet"). */
#define P2FRAG_A_MIN  (-10)
#define P2FRAG_A_MAX  10
#define P2FRAG_B_MIN  (-20)
#define P2FRAG_B_MAX  20
#define P2FRAG_C_MIN  (-30)
#define P2FRAG_C_MAX  30
#define P2FRAG_MAX_ITEMS  16384
#define P2FRAG_ITEM_MIN   (-100)
#define P2FRAG_ITEM_MAX   100
/* A B packet's items past the first P2FRAG_ITEMS_SHOWN are added hidden:
 * p2frag.item and -T fields still have every one, the tree (and -V) one
 * line for the rest instead of up to 16384. */
#define P2FRAG_ITEMS_SHOWN 100

/* Body errors, after protocol2's. */
#define P2FRAG_ERR_COUNT_ZERO  (DP2_ERR_BODY_BASE << 0)  /* numFragments 0 */
#define P2FRAG_ERR_ID_RANGE    (DP2_ERR_BODY_BASE << 1)  /* fragmentId >= numFragments */
#define P2FRAG_ERR_SIZE_RANGE  (DP2_ERR_BODY_BASE << 2)  /* fragment data not 1..1024 bytes */
#define P2FRAG_ERR_SIZE_SHORT  (DP2_ERR_BODY_BASE << 3)  /* non-last fragment not 1024 bytes */
#define P2FRAG_ERR_TOO_LONG    (DP2_ERR_BODY_BASE << 4)  /* regular packet over 1024 bytes */

enum { P2FRAG_BODIES_EXAMPLE, P2FRAG_BODIES_OPAQUE };

void proto_register_p2frag(void);
void proto_reg_handoff_p2frag(void);

static int proto_p2frag = -1;
static dissector_handle_t p2frag_handle;
static int p2frag_tap = -1;

static int hf_p2frag_sequence = -1;
static int hf_p2frag_type = -1;
static int hf_p2frag_fragment_id = -1;
static int hf_p2frag_num_fragments = -1;
static int hf_p2frag_last_fragment = -1;
static int hf_p2frag_fragment_bytes = -1;
static int hf_p2frag_fragment_data = -1;
static int hf_p2frag_body = -1;
static int hf_p2frag_a = -1;
static int hf_p2frag_b = -1;
static int hf_p2frag_c = -1;
static int hf_p2frag_num_items = -1;
static int hf_p2frag_item = -1;
static int hf_p2frag_position_x = -1;
static int hf_p2frag_position_y = -1;
static int hf_p2frag_position_z = -1;
static int hf_p2frag_at_rest = -1;
static int hf_p2frag_velocity_x = -1;
static int hf_p2frag_velocity_y = -1;
static int hf_p2frag_velocity_z = -1;
static int hf_p2frag_reassembled = -1;

static gint ett_p2frag = -1;
static gint ett_p2frag_items = -1;
static gint ett_p2frag_reassembled = -1;

static expert_field ei_p2frag_truncated = EI_INIT;
static expert_field ei_p2frag_count_zero = EI_INIT;
static expert_field ei_p2frag_id_range = EI_INIT;
static expert_field ei_p2frag_size_range = EI_INIT;
static expert_field ei_p2frag_size_short = EI_INIT;
static expert_field ei_p2frag_too_long = EI_INIT;
static expert_field ei_p2frag_value_range = EI_INIT;
static expert_field ei_p2frag_inner_seq = EI_INIT;
static expert_field ei_p2frag_inner_crc = EI_INIT;

/* Preferences as set, and as used. */
static guint pref_protocol_id = P2FRAG_DEFAULT_PROTOCOL_ID;
static guint pref_num_types = P2FRAG_DEFAULT_TYPES;
static gint pref_bodies = P2FRAG_BODIES_EXAMPLE;
static ws_cb_bool pref_reassemble = TRUE;
static ws_cb_bool pref_original_notes = TRUE;
static guint32 cfg_protocol_id = P2FRAG_DEFAULT_PROTOCOL_ID;
static guint32 cfg_num_types = P2FRAG_DEFAULT_TYPES;

static const enum_val_t p2frag_bodies_vals[] = {
    { "example", "The example's test packets A, B and C", P2FRAG_BODIES_EXAMPLE },
    { "opaque", "Opaque bodies, handed to the data dissector", P2FRAG_BODIES_OPAQUE },
    { NULL, NULL, 0 }
};

static reassembly_table p2frag_reassembly_table;

static cs_reassembly_fields_t p2frag_reasm;

static int p2frag_dissect_forced(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data);

/* p2frag in the protocol2 registry: the entry point sends it the datagrams
 * whose CRC implies cfg_protocol_id. */
static dp2_protocol_t p2frag_p2 = {
    .filter_name = "p2frag",
    .cfg_id = &cfg_protocol_id,
    .dissect = p2frag_dissect_forced,
};

static dp2_display_t p2frag_p2d;

/* ---- Parsing --------------------------------------------------------------- */



static void p2frag_parse_fragment(p2frag_body_t *b)
{
    dp2_reader_t *r = &b->r;
    guint len = tvb_reported_length(r->tvb);

    b->fragment_id = dp2_read_bits(r, 8);
    b->num_fragments = dp2_read_bits(r, 8);
    dp2_read_align(r);
    if (r->errors & DP2_ERR_TRUNCATED)
        return;
    b->nfields = PF_FRAG_HEADER;
    b->data_offset = r->bit / 8;
    b->data_len = len > b->data_offset ? len - b->data_offset : 0;
    /* The data runs to the end of the datagram: its size is not sent. */
    r->bit = r->limit;
    if (b->num_fragments == 0)
        b->errors |= P2FRAG_ERR_COUNT_ZERO;
    else if (b->fragment_id >= b->num_fragments)
        b->errors |= P2FRAG_ERR_ID_RANGE;
    if (b->data_len == 0 || b->data_len > P2FRAG_FRAGMENT_SIZE)
        b->errors |= P2FRAG_ERR_SIZE_RANGE;
    else if (b->num_fragments && b->fragment_id < b->num_fragments - 1 &&
             b->data_len != P2FRAG_FRAGMENT_SIZE)
        b->errors |= P2FRAG_ERR_SIZE_SHORT;
}

/* int(min, max) for a signed range: the raw field plus min. */
static gint32 p2frag_read_sint(dp2_reader_t *r, gint32 min, gint32 max)
{
    guint32 raw = dp2_read_int(r, 0, (guint32)(max - min));
    return (gint32)raw + min;
}

/* Reads the items of a B packet (8 bits each) from the bytes directly, many
 * at a time (cs_count_above): a reassembled B packet holds up to 16384 of
 * them, and reading them one bit field at a time was most of the
 * dissector's time. Counts those above the maximum (DP2_ERR_RANGE) and stops
 * where the datagram does. */
static void p2frag_read_items(p2frag_body_t *b)
{
    dp2_reader_t *r = &b->r;
    guint ib = dp2_bits_required(0, P2FRAG_ITEM_MAX - P2FRAG_ITEM_MIN);
    guint avail = r->limit > r->bit ? (r->limit - r->bit) / ib : 0;
    guint32 n = MIN(b->num_items, avail);
    guint shift = r->bit & 7;

    G_STATIC_ASSERT(P2FRAG_ITEM_MAX - P2FRAG_ITEM_MIN >= 128 && P2FRAG_ITEM_MAX - P2FRAG_ITEM_MIN < 256);
    DISSECTOR_ASSERT(ib == 8);
    b->items_read = n;
    if (n) {
        /* The bytes the items touch: n, or n + 1 when they straddle bytes. */
        guint nbytes = (shift + n * 8 + 7) / 8;
        b->items_bad = cs_count_above(tvb_get_ptr(r->tvb, r->bit / 8, nbytes), n, shift,
                                      P2FRAG_ITEM_MAX - P2FRAG_ITEM_MIN);
        r->bit += n * 8;
    }
    if (b->items_bad)
        r->errors |= DP2_ERR_RANGE;
    if (n < b->num_items)
        dp2_skip_bits(r, (b->num_items - n) * ib);   /* sets DP2_ERR_TRUNCATED */
}

static void p2frag_parse_example(p2frag_body_t *b)
{
    dp2_reader_t *r = &b->r;

    switch (b->type) {
    case P2FRAG_TYPE_A:
        b->a = p2frag_read_sint(r, P2FRAG_A_MIN, P2FRAG_A_MAX);
        b->b = p2frag_read_sint(r, P2FRAG_B_MIN, P2FRAG_B_MAX);
        b->c = p2frag_read_sint(r, P2FRAG_C_MIN, P2FRAG_C_MAX);
        break;
    case P2FRAG_TYPE_B:
        b->num_items = dp2_read_int(r, 0, P2FRAG_MAX_ITEMS);
        if (r->errors & (DP2_ERR_TRUNCATED | DP2_ERR_RANGE))
            return;   /* a reader stops at a bad count */
        b->items_bit = r->bit;
        p2frag_read_items(b);
        break;
    case P2FRAG_TYPE_C:
        b->float_bit = r->bit;
        for (int i = 0; i < 3; i++)
            b->pos[i] = dp2_read_bits(r, 32);
        b->at_rest = dp2_read_bits(r, 1) != 0;
        if (!b->at_rest)
            for (int i = 0; i < 3; i++)
                b->vel[i] = dp2_read_bits(r, 32);
        break;
    default:
        break;
    }
}

static void p2frag_parse_regular(p2frag_body_t *b, int bodies)
{
    dp2_reader_t *r = &b->r;
    guint len = tvb_reported_length(r->tvb);

    b->body_bit = r->bit;
    if (bodies == P2FRAG_BODIES_EXAMPLE && b->type <= P2FRAG_TYPE_C) {
        p2frag_parse_example(b);
        /* A value out of range leaves the layout known, except a B count. */
        if (!(r->errors & DP2_ERR_TRUNCATED) &&
            !(b->type == P2FRAG_TYPE_B && b->num_items > P2FRAG_MAX_ITEMS)) {
            b->nfields = PF_BODY;
            dp2_read_check(r);
        }
    } else {
        /* Opaque: everything up to the last four bytes, which must be the
         * end check; the body's padding cannot be told from its bits. */
        guint start = b->body_bit / 8;
        if (len >= start + DP2_END_CHECK_LEN && tvb_captured_length(r->tvb) == len) {
            b->opaque_offset = start;
            b->opaque_len = len - DP2_END_CHECK_LEN - start;
            b->nfields = PF_BODY;
            r->bit = (len - DP2_END_CHECK_LEN) * 8;
            dp2_read_check(r);
        } else {
            r->errors |= DP2_ERR_TRUNCATED;
            r->need_bytes = start + DP2_END_CHECK_LEN;
        }
    }
    if (len > P2FRAG_MAX_REGULAR)
        b->errors |= P2FRAG_ERR_TOO_LONG;
}

/* Parses a datagram or reassembled packet. Never fails: problems are
 * recorded in b->errors. */
static void p2frag_parse(tvbuff_t *tvb, int bodies, p2frag_body_t *b)
{
    dp2_reader_t *r = &b->r;

    memset(b, 0, sizeof *b);
    dp2_reader_init(r, tvb);
    b->seq = (guint16)dp2_read_bits(r, 16);
    if (!(r->errors & DP2_ERR_TRUNCATED)) {
        b->nfields = PF_SEQ;
        b->type_bits = dp2_bits_required(0, cfg_num_types - 1);
        b->type = dp2_read_int(r, 0, cfg_num_types - 1);
        if (!(r->errors & DP2_ERR_TRUNCATED)) {
            b->nfields = PF_TYPE;
            if (b->type == P2FRAG_TYPE_FRAGMENT)
                p2frag_parse_fragment(b);
            else if (!(r->errors & DP2_ERR_RANGE))
                p2frag_parse_regular(b, bodies);
        }
    }
    b->errors |= r->errors;
}

/* Errors a receiver following the rules drops a datagram for, on their own
 * (the sequence rules need the analysis). */
#define P2FRAG_ERR_DROP (DP2_ERR_TRUNCATED | DP2_ERR_PADDING | DP2_ERR_END_CHECK | DP2_ERR_TRAILING | \
                         DP2_ERR_RANGE | P2FRAG_ERR_COUNT_ZERO | P2FRAG_ERR_ID_RANGE | \
                         P2FRAG_ERR_SIZE_RANGE | P2FRAG_ERR_SIZE_SHORT | P2FRAG_ERR_TOO_LONG)

/* ---- Display ------------------------------------------------------------------- */

static const char *p2frag_type_name(guint32 type)
{
    if (type == P2FRAG_TYPE_FRAGMENT)
        return "Fragment";
    if (pref_bodies == P2FRAG_BODIES_EXAMPLE) {
        switch (type) {
        case P2FRAG_TYPE_A: return "A";
        case P2FRAG_TYPE_B: return "B";
        case P2FRAG_TYPE_C: return "C";
        default: break;
        }
    }
    return "Regular";
}

static proto_item *p2frag_add_sint(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit, guint nbits,
                                   gint32 min)
{
    guint32 raw = tvb_get_bits32(tvb, bit, nbits, ENC_LITTLE_ENDIAN);
    guint off = bit / 8, end = (bit + nbits + 7) / 8;
    proto_item *ti = proto_tree_add_int(tree, hf, tvb, off, end - off, (gint32)raw + min);

    proto_item_append_text(ti, " (sent as %u in %u bits)", raw, nbits);
    return ti;
}

static proto_item *p2frag_add_float(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit)
{
    guint32 raw = tvb_get_bits32(tvb, bit, 32, ENC_LITTLE_ENDIAN);
    union { guint32 u; gfloat f; } v;
    guint off = bit / 8, end = (bit + 32 + 7) / 8;
    proto_item *ti;

    v.u = raw;
    ti = proto_tree_add_float(tree, hf, tvb, off, end - off, v.f);
    proto_item_append_text(ti, " (0x%08x)", raw);
    return ti;
}

/* Adds the regular packet's body; returns the Info text for it. */
static const char *p2frag_show_body(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo,
                                    const p2frag_body_t *b, gboolean experts)
{
    const dp2_reader_t *r = &b->r;
    proto_item *ti;

    if (b->opaque_len || (b->nfields >= PF_BODY && !(pref_bodies == P2FRAG_BODIES_EXAMPLE &&
                                                     b->type <= P2FRAG_TYPE_C))) {
        tvbuff_t *sub = tvb_new_subset_length(tvb, b->opaque_offset, b->opaque_len);
        proto_tree_add_item(tree, hf_p2frag_body, tvb, b->opaque_offset, b->opaque_len, ENC_NA);
        if (b->opaque_len)
            call_data_dissector(sub, pinfo, tree);
        return wmem_strdup_printf(pinfo->pool, "%u-byte body", b->opaque_len);
    }
    switch (b->type) {
    case P2FRAG_TYPE_A: {
        guint bit = b->body_bit;
        static const struct { int *hf; gint32 min, max; } f[3] = {
            { &hf_p2frag_a, P2FRAG_A_MIN, P2FRAG_A_MAX },
            { &hf_p2frag_b, P2FRAG_B_MIN, P2FRAG_B_MAX },
            { &hf_p2frag_c, P2FRAG_C_MIN, P2FRAG_C_MAX },
        };
        for (int i = 0; i < 3; i++) {
            guint nbits = dp2_bits_required(0, (guint32)(f[i].max - f[i].min));
            if (bit + nbits > r->limit)
                break;
            ti = p2frag_add_sint(tree, *f[i].hf, tvb, bit, nbits, f[i].min);
            if (experts && tvb_get_bits32(tvb, bit, nbits, ENC_LITTLE_ENDIAN) > (guint32)(f[i].max - f[i].min))
                AU_EXPERT(pinfo, ti, &ei_p2frag_value_range,
                          "Value above its maximum %d (int(%d, %d)): a reader drops the packet",
                          f[i].max, f[i].min, f[i].max);
            bit += nbits;
        }
        if (b->nfields >= PF_BODY)
            return wmem_strdup_printf(pinfo->pool, "a=%d b=%d c=%d", b->a, b->b, b->c);
        return "";
    }
    case P2FRAG_TYPE_B: {
        guint nb = dp2_bits_required(0, P2FRAG_MAX_ITEMS);
        guint ib = dp2_bits_required(0, P2FRAG_ITEM_MAX - P2FRAG_ITEM_MIN);
        proto_tree *it;
        guint32 bad = 0;

        if (b->body_bit + nb > r->limit)
            return "";
        ti = dp2_add_bits(tree, hf_p2frag_num_items, tvb, b->body_bit, nb, 0);
        if (b->num_items > P2FRAG_MAX_ITEMS) {
            if (experts)
                AU_EXPERT(pinfo, ti, &ei_p2frag_value_range,
                          "Item count %u above its maximum %u: a reader drops the packet",
                          b->num_items, P2FRAG_MAX_ITEMS);
            return "";
        }
        it = proto_tree_add_subtree_format(tree, tvb, b->items_bit / 8,
                                           b->items_read ? (b->items_bit + b->items_read * ib + 7) / 8 -
                                                           b->items_bit / 8 : 0,
                                           ett_p2frag_items, NULL, "Items (%u)", b->items_read);
        for (guint32 i = 0; tree && i < b->items_read; i++) {
            proto_item *ii = p2frag_add_sint(it, hf_p2frag_item, tvb, b->items_bit + i * ib, ib,
                                             P2FRAG_ITEM_MIN);
            if (i >= P2FRAG_ITEMS_SHOWN)
                proto_item_set_hidden(ii);
        }
        bad = b->items_bad;
        if (b->items_read > P2FRAG_ITEMS_SHOWN)
            proto_tree_add_subtree_format(it, tvb, (b->items_bit + P2FRAG_ITEMS_SHOWN * ib) / 8,
                                          (b->items_bit + b->items_read * ib + 7) / 8 -
                                          (b->items_bit + P2FRAG_ITEMS_SHOWN * ib) / 8,
                                          ett_p2frag_items, NULL,
                                          "Items %u-%u: not listed one per line (p2frag.item has them)",
                                          P2FRAG_ITEMS_SHOWN, b->items_read - 1);
        if (bad && experts)
            AU_EXPERT(pinfo, ti, &ei_p2frag_value_range,
                      "%u item%s above the maximum %d: a reader drops the packet", bad,
                      plurality(bad, "", "s"), P2FRAG_ITEM_MAX);
        {
            char *buf = (char *)wmem_alloc(pinfo->pool, 24), *p = au_put_uint(buf, b->num_items);
            p = au_put_str(p, b->num_items == 1 ? " item" : " items");
            *p = '\0';
            return buf;
        }
    }
    case P2FRAG_TYPE_C: {
        static int *pos[3] = { &hf_p2frag_position_x, &hf_p2frag_position_y, &hf_p2frag_position_z };
        static int *vel[3] = { &hf_p2frag_velocity_x, &hf_p2frag_velocity_y, &hf_p2frag_velocity_z };
        guint bit = b->float_bit;
        for (int i = 0; i < 3 && bit + 32 <= r->limit; i++, bit += 32)
            p2frag_add_float(tree, *pos[i], tvb, bit);
        if (bit + 1 > r->limit)
            return "";
        dp2_add_bits(tree, hf_p2frag_at_rest, tvb, bit, 1, 0);
        bit++;
        if (!b->at_rest)
            for (int i = 0; i < 3 && bit + 32 <= r->limit; i++, bit += 32)
                p2frag_add_float(tree, *vel[i], tvb, bit);
        return b->at_rest ? "at rest" : "moving";
    }
    default:
        return "";
    }
}

/* Raises the structural problems of a parse that no field shows. */
static void p2frag_show_problems(proto_item *pi, packet_info *pinfo, tvbuff_t *tvb, const p2frag_body_t *b)
{
    if (b->errors & DP2_ERR_TRUNCATED)
        AU_EXPERT(pinfo, pi, &ei_p2frag_truncated,
                  "Truncated: the fields need at least %u bytes, the packet has %u",
                  b->r.need_bytes, tvb_captured_length(tvb));
}

/* "Fragment %u/%u of packet %u, %u byte%s", written here rather than by
 * printf: it is the Info text of every fragment. */
static const char *p2frag_fragment_info(wmem_allocator_t *scope, const p2frag_body_t *b)
{
    char *buf = (char *)wmem_alloc(scope, 80), *p = buf;

    p = au_put_str(p, "Fragment ");
    p = au_put_uint(p, b->fragment_id);
    *p++ = '/';
    p = au_put_uint(p, b->num_fragments);
    p = au_put_str(p, " of packet ");
    p = au_put_uint(p, b->seq);
    p = au_put_str(p, ", ");
    p = au_put_uint(p, b->data_len);
    p = au_put_str(p, b->data_len == 1 ? " byte" : " bytes");
    *p = '\0';
    return buf;
}

/* Adds the fields of a parse, from the sequence on, under `tree`; raises
 * the structural expert infos when `experts`; returns the Info text. */
static const char *p2frag_show_fields(proto_tree *tree, proto_item *pi, tvbuff_t *tvb, packet_info *pinfo,
                                      const p2frag_body_t *b, gboolean experts)
{
    guint next_pad = 0;
    proto_item *ti;
    const char *info;

    if (b->nfields >= PF_SEQ)
        dp2_add_bits(tree, hf_p2frag_sequence, tvb, DP2_BODY_BIT, 16, 0);
    if (b->nfields < PF_TYPE) {
        if (experts)
            p2frag_show_problems(pi, pinfo, tvb, b);
        return "Packet";
    }
    ti = dp2_add_bits(tree, hf_p2frag_type, tvb, DP2_BODY_BIT + 16, b->type_bits, 0);
    proto_item_append_text(ti, " (%s)", p2frag_type_name(b->type));
    if (b->type >= cfg_num_types) {
        if (experts)
            AU_EXPERT(pinfo, ti, &ei_p2frag_value_range,
                      "Packet type %u above its maximum %u (p2frag.num_types is %u)",
                      b->type, cfg_num_types - 1, cfg_num_types);
        return wmem_strdup_printf(pinfo->pool, "Packet %u, type %u", b->seq, b->type);
    }
    if (b->type == P2FRAG_TYPE_FRAGMENT) {
        guint bit = DP2_BODY_BIT + 16 + b->type_bits;
        if (b->nfields < PF_FRAG_HEADER) {
            if (experts)
                p2frag_show_problems(pi, pinfo, tvb, b);
            return wmem_strdup_printf(pinfo->pool, "Fragment of packet %u", b->seq);
        }
        ti = dp2_add_bits(tree, hf_p2frag_fragment_id, tvb, bit, 8, 0);
        if (experts && (b->errors & P2FRAG_ERR_ID_RANGE))
            AU_EXPERT(pinfo, ti, &ei_p2frag_id_range,
                      "Fragment id %u >= fragment count %u: a receiver drops it",
                      b->fragment_id, b->num_fragments);
        ti = dp2_add_bits(tree, hf_p2frag_num_fragments, tvb, bit + 8, 8, 0);
        if (b->num_fragments == 0) {
            proto_item_append_text(ti, " (invalid: 256 fragments would be written as 0)");
            if (experts) {
                if (pref_original_notes)
                    AU_EXPERT(pinfo, ti, &ei_p2frag_count_zero,
                              "Fragment count 0: the original program writes the raw count in "
                              "8 bits, so a 256-fragment packet is sent as 0 and no receiver "
                              "can take it (original bug 5: 256 fragments cannot be sent)");
                else
                    AU_EXPERT(pinfo, ti, &ei_p2frag_count_zero,
                              "Fragment count 0 (256 fragments cannot be represented): a receiver drops it");
            }
        }
        if (b->num_fragments) {
            ti = proto_tree_add_boolean(tree, hf_p2frag_last_fragment, tvb, 0, 0,
                                        b->fragment_id == b->num_fragments - 1);
            proto_item_set_generated(ti);
        }
        dp2_add_padding(tree, pinfo, &p2frag_p2d, &b->r, &next_pad, experts);
        ti = proto_tree_add_uint(tree, hf_p2frag_fragment_bytes, tvb, b->data_offset, b->data_len, b->data_len);
        proto_item_append_text(ti, " (not sent: the datagram's length - %u)", b->data_offset);
        proto_item_set_generated(ti);
        if (experts && (b->errors & P2FRAG_ERR_SIZE_RANGE))
            AU_EXPERT(pinfo, ti, &ei_p2frag_size_range,
                      "Fragment carries %u bytes, not 1..%u: a receiver drops it",
                      b->data_len, P2FRAG_FRAGMENT_SIZE);
        if (experts && (b->errors & P2FRAG_ERR_SIZE_SHORT))
            AU_EXPERT(pinfo, ti, &ei_p2frag_size_short,
                      "Fragment %u of %u is not the last, so it must carry %u bytes; it carries %u",
                      b->fragment_id, b->num_fragments, P2FRAG_FRAGMENT_SIZE, b->data_len);
        if (tree) {
            gint have = tvb_captured_length_remaining(tvb, b->data_offset);
            proto_tree_add_item(tree, hf_p2frag_fragment_data, tvb, b->data_offset,
                                have > 0 ? MIN(b->data_len, (guint)have) : 0, ENC_NA);
        }
        info = p2frag_fragment_info(pinfo->pool, b);
    } else {
        const char *body = p2frag_show_body(tree, tvb, pinfo, b, experts);
        dp2_add_padding(tree, pinfo, &p2frag_p2d, &b->r, &next_pad, experts);
        dp2_add_end_check(tree, pinfo, &p2frag_p2d, &b->r, experts);
        if (experts && (b->errors & P2FRAG_ERR_TOO_LONG))
            AU_EXPERT(pinfo, pi, &ei_p2frag_too_long,
                      "Regular packet of %u bytes: one larger than %u bytes must be sent as "
                      "fragments, a receiver drops it", tvb_reported_length(tvb), P2FRAG_MAX_REGULAR);
        /* "Packet %u, type %s[: %s]" (every regular and reassembled packet). */
        char *buf = (char *)wmem_alloc(pinfo->pool, 40 + strlen(body)), *p = buf;
        p = au_put_str(p, "Packet ");
        p = au_put_uint(p, b->seq);
        p = au_put_str(p, ", type ");
        p = au_put_str(p, p2frag_type_name(b->type));
        if (*body) {
            p = au_put_str(p, ": ");
            p = au_put_str(p, body);
        }
        *p = '\0';
        info = buf;
    }
    if (experts)
        p2frag_show_problems(pi, pinfo, tvb, b);
    return info;
}

/* The reassembled packet: a complete regular packet (its own CRC, sequence,
 * type, body and end check), decoded under `tree`. */
static void p2frag_show_inner(tvbuff_t *inner, packet_info *pinfo, proto_tree *tree, guint16 outer_seq,
                              guint32 id)
{
    p2frag_body_t b;
    proto_item *ri, *ti;
    proto_tree *rt;
    guint len = tvb_reported_length(inner);
    gboolean crc_good = FALSE;
    guint32 stored = 0, computed = 0;
    const char *info;

    p2frag_parse(inner, pref_bodies, &b);
    /* A reassembled packet may be over 1024 bytes: that is why it was sent
     * as fragments. */
    b.errors &= ~P2FRAG_ERR_TOO_LONG;
    ri = proto_tree_add_item(tree, hf_p2frag_reassembled, inner, 0, -1, ENC_NA);
    rt = proto_item_add_subtree(ri, ett_p2frag_reassembled);
    if (len >= DP2_CRC_LEN) {
        stored = tvb_get_letohl(inner, 0);
        computed = dp2_crc_datagram(inner, dp2_crc_prefix(id));
        crc_good = stored == computed;
        ti = proto_tree_add_item(rt, p2frag_p2d.hf_crc, inner, 0, DP2_CRC_LEN, ENC_LITTLE_ENDIAN);
        proto_item_append_text(ti, crc_good ? " [correct]" : " [incorrect, should be 0x%08x]", computed);
        ti = proto_tree_add_uint(rt, p2frag_p2d.hf_crc_status, inner, 0, DP2_CRC_LEN,
                                 crc_good ? PROTO_CHECKSUM_E_GOOD : PROTO_CHECKSUM_E_BAD);
        proto_item_set_generated(ti);
    }
    if (!crc_good) {
        /* Not a packet written whole (e.g. a game fragmenting raw data):
         * its fields are shown, its problems are not raised one by one. */
        AU_EXPERT(pinfo, ri, &ei_p2frag_inner_crc,
                  "The reassembled %u bytes fail their own CRC for protocol id 0x%08x "
                  "(stored 0x%08x, computed 0x%08x): not a packet written whole", len, id,
                  stored, computed);
    }
    info = p2frag_show_fields(rt, ri, inner, pinfo, &b, crc_good);
    proto_item_append_text(ri, ": %u bytes, %s", len, info);
    if (b.nfields >= PF_SEQ && b.seq != outer_seq && crc_good) {
        AU_EXPERT(pinfo, ri, &ei_p2frag_inner_seq,
                  "The reassembled packet's own sequence %u differs from its fragments' %u",
                  b.seq, outer_seq);
    }
    if (pinfo->cinfo) {
        /* " [Reassembled %u bytes: %s]" */
        char *buf = (char *)wmem_alloc(pinfo->pool, 40 + strlen(info)), *p = buf;
        p = au_put_str(p, " [Reassembled ");
        p = au_put_uint(p, len);
        p = au_put_str(p, " bytes: ");
        p = au_put_str(p, info);
        p = au_put_str(p, "]");
        *p = '\0';
        col_append_str(pinfo->cinfo, COL_INFO, buf);
    }
}

/* Info column marks for the problems of a datagram. */
static void p2frag_info_marks(packet_info *pinfo, const dp2_id_t *id, const p2frag_body_t *b,
                              const p2frag_frame_t *ff)
{
    static const struct { guint32 err; const char *mark; } marks[] = {
        { DP2_ERR_TRUNCATED,       " [Truncated]" },
        { DP2_ERR_PADDING,         " [Non-zero padding]" },
        { DP2_ERR_END_CHECK,       " [Bad end check]" },
        { DP2_ERR_RANGE,           " [Value out of range]" },
        { DP2_ERR_TRAILING,        " [Bytes after end check]" },
        { P2FRAG_ERR_COUNT_ZERO,  " [Fragment count 0]" },
        { P2FRAG_ERR_ID_RANGE,    " [Fragment id >= count]" },
        { P2FRAG_ERR_SIZE_RANGE,  " [Fragment size out of range]" },
        { P2FRAG_ERR_SIZE_SHORT,  " [Short non-last fragment]" },
        { P2FRAG_ERR_TOO_LONG,    " [Over 1024 bytes unfragmented]" },
    };

    if (id->status == DP2_ID_WRONG)
        col_append_str(pinfo->cinfo, COL_INFO, " [Bad CRC]");
    for (size_t i = 0; i < array_length(marks); i++)
        if (b->errors & marks[i].err)
            col_append_str(pinfo->cinfo, COL_INFO, marks[i].mark);
    if (ff) {
        if (ff->flags & P2FRAG_FF_CONFLICT)
            col_append_str(pinfo->cinfo, COL_INFO, " [Fragment count conflict]");
        if (ff->flags & P2FRAG_FF_DUP)
            col_append_str(pinfo->cinfo, COL_INFO, " [Duplicate]");
        if (ff->flags & P2FRAG_FF_TOO_OLD)
            col_append_str(pinfo->cinfo, COL_INFO, " [Too old]");
        if (ff->n_lost)
            col_append_fstr(pinfo->cinfo, COL_INFO, " [%u packet%s lost]", ff->n_lost,
                            plurality(ff->n_lost, "", "s"));
    }
}

/* Everything the entry point hands over is shown, broken or not. data: the
 * datagram's dp2_frame_t. */
static int p2frag_dissect_forced(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    const dp2_frame_t *f = (const dp2_frame_t *)data;
    p2frag_body_t b;
    dp2_id_t id;
    proto_item *pi;
    proto_tree *pt;
    p2frag_frame_t *ff = NULL;
    const char *info;
    gboolean analyse, transient = FALSE;

    /* Under Decode As (f->forced) everything is shown, broken or not. On
     * the port only a datagram whose CRC implies the configured id (p2frag
     * learns no other): anything else goes back to UDP, for the heuristics
     * and data. */
    dp2_id_check(&p2frag_p2, f, &id);
    if (!f->forced && id.status != DP2_ID_GOOD)
        return 0;

    col_set_str(pinfo->cinfo, COL_PROTOCOL, "P2frag");
    col_clear(pinfo->cinfo, COL_INFO);

    p2frag_parse(tvb, pref_bodies, &b);

    /* Without a tree proto_tree_add_item still checks the bytes: skipped. */
    pi = tree ? proto_tree_add_item(tree, proto_p2frag, tvb, 0, -1, ENC_NA) : NULL;
    pt = proto_item_add_subtree(pi, ett_p2frag);
    dp2_add_crc(pt, tvb, pinfo, &p2frag_p2d, &p2frag_p2, &id);
    info = p2frag_show_fields(pt, pi, tvb, pinfo, &b, TRUE);
    /* Not copied: info is a literal or in the packet scope, which lives as
     * long as the packet_info (column-utils.h allows that), and plain
     * ASCII; copying it (col_add_str) was the largest cost on 4.6. */
    col_set_str(pinfo->cinfo, COL_INFO, info);

    analyse = id.status == DP2_ID_GOOD && !(b.errors & P2FRAG_ERR_DROP) && b.nfields >= PF_TYPE &&
              !pinfo->flags.in_error_pkt;
    if (analyse)
        ff = p2frag_analysis_packet(pinfo, &b, &transient);
    if (ff && ff->pkt && p2frag_is_fragment(&b) && !(ff->flags & (P2FRAG_FF_CONFLICT | P2FRAG_FF_DUP))) {
        if (pref_reassemble && tvb_captured_length(tvb) == tvb_reported_length(tvb) && !ff->pkt->sp_dropped) {
            p2frag_pkt_t *pkt = ff->pkt;
            tvbuff_t *inner;
            gboolean save_fragmented = pinfo->fragmented;

            pinfo->fragmented = TRUE;
            if (pkt->sp_buf || (transient && !pkt->in_table && p2frag_sp_start(pkt))) {
                inner = p2frag_sp_add(tvb, pinfo, pt, b.fragment_id, b.data_offset, b.data_len, pkt,
                                      &p2frag_reasm.items);
            } else {
                fragment_head *fh;
                pkt->in_table = TRUE;
                fh = fragment_add_seq_check(&p2frag_reassembly_table, tvb, b.data_offset, pinfo,
                                            (guint32)ff->ext, NULL, b.fragment_id, b.data_len,
                                            b.fragment_id != b.num_fragments - 1);
                inner = process_reassembled_data(tvb, b.data_offset, pinfo, "Reassembled packet", fh,
                                                 &p2frag_reasm.items, NULL, pt);
                if (inner)
                    cs_sp_free_later(fh);
            }
            if (inner)
                p2frag_show_inner(inner, pinfo, pt, b.seq, id.implied_id);
            pinfo->fragmented = save_fragmented;
        }
    } else if (ff && ff->pkt && ff->pkt->complete_frame && (ff->flags & P2FRAG_FF_DUP)) {
        proto_item *ti = proto_tree_add_uint(pt, p2frag_reasm.hf_reassembled_in, tvb, 0, 0,
                                             ff->pkt->complete_frame);
        proto_item_set_generated(ti);
    }
    if (ff) {
        p2frag_tap_t *td = wmem_new0(pinfo->pool, p2frag_tap_t);
        p2frag_analysis_show(pt, tvb, pinfo, &b, ff, pref_original_notes);
        td->dir = ff->dir;
        td->pkt = ff->pkt;
        td->flags = ff->flags;
        tap_queue_packet(p2frag_tap, pinfo, td);
    }
    p2frag_info_marks(pinfo, &id, &b, ff);
    if (analyse)
        cs_sp_end_packet(pinfo);
    return tvb_captured_length(tvb);
}

/* Port, Decode As and pinned conversations: protocol2's entry point. */
static int dissect_p2frag(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    return dp2_dissect_udp(tvb, pinfo, tree, data, &p2frag_p2);
}

/* Heuristic: a CRC that implies the configured id (1 in 2^32 by chance);
 * then pin the UDP conversation (protocol2's entry point still hands the
 * chunk packets of a mixed conversation to chunk). */
static ws_cb_bool dissect_p2frag_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    dp2_frame_t f;
    conversation_t *conv;

    /* Shortest packet: CRC, sequence and a type with a one-byte fragment. */
    if (tvb_captured_length(tvb) < DP2_CRC_LEN + 3 || !dp2_heur_frame(tvb, pinfo, &p2frag_p2, &f) ||
        !f.crc_known || f.implied_id != cfg_protocol_id)
        return FALSE;
    conv = find_or_create_conversation(pinfo);
    conversation_set_dissector(conv, p2frag_handle);
    p2frag_dissect_forced(tvb, pinfo, tree, &f);
    return TRUE;
}

/* ---- Registration ------------------------------------------------------------ */

static void p2frag_prefs_apply(void)
{
    cfg_protocol_id = pref_protocol_id;
    cfg_num_types = MIN(MAX(pref_num_types, 2), P2FRAG_MAX_TYPES);
    dp2_prefs_apply(&p2frag_p2);
}

void proto_register_p2frag(void)
{
    module_t *m;

    static hf_register_info hf[] = {
        { &hf_p2frag_sequence, { "Sequence", "p2frag.sequence", FT_UINT16, BASE_DEC, NULL, 0x0,
            "The packet's sequence; a fragment carries the sequence of the packet it is a piece of", HFILL } },
        { &hf_p2frag_type, { "Packet type", "p2frag.type", FT_UINT32, BASE_DEC, NULL, 0x0,
            "0: a fragment; other values: the game's packet types", HFILL } },
        { &hf_p2frag_fragment_id, { "Fragment id", "p2frag.fragment_id", FT_UINT8, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_num_fragments, { "Fragment count (as sent)", "p2frag.num_fragments", FT_UINT8, BASE_DEC,
            NULL, 0x0, "The raw count: 256 fragments would be written as 0", HFILL } },
        { &hf_p2frag_last_fragment, { "Last fragment", "p2frag.last_fragment", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Fragment id == fragment count - 1: the one that may carry fewer than 1024 bytes", HFILL } },
        { &hf_p2frag_fragment_bytes, { "Fragment bytes", "p2frag.fragment_bytes", FT_UINT32, BASE_DEC, NULL, 0x0,
            "Bytes of data in this fragment (not sent: the rest of the datagram)", HFILL } },
        { &hf_p2frag_fragment_data, { "Fragment data", "p2frag.fragment_data", FT_BYTES, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_body, { "Body", "p2frag.body", FT_BYTES, BASE_NONE, NULL, 0x0,
            "An opaque body (p2frag.bodies: opaque), from the byte holding the type's last bit", HFILL } },
        { &hf_p2frag_a, { "a", "p2frag.a", FT_INT32, BASE_DEC, NULL, 0x0, "Test packet A: int(-10, 10)", HFILL } },
        { &hf_p2frag_b, { "b", "p2frag.b", FT_INT32, BASE_DEC, NULL, 0x0, "Test packet A: int(-20, 20)", HFILL } },
        { &hf_p2frag_c, { "c", "p2frag.c", FT_INT32, BASE_DEC, NULL, 0x0, "Test packet A: int(-30, 30)", HFILL } },
        { &hf_p2frag_num_items, { "Item count", "p2frag.num_items", FT_UINT32, BASE_DEC, NULL, 0x0,
            "Test packet B: int(0, 16384)", HFILL } },
        { &hf_p2frag_item, { "Item", "p2frag.item", FT_INT32, BASE_DEC, NULL, 0x0,
            "Test packet B: int(-100, 100)", HFILL } },
        { &hf_p2frag_position_x, { "Position x", "p2frag.position_x", FT_FLOAT, BASE_NONE, NULL, 0x0,
            "Test packet C: 32 raw IEEE-754 bits", HFILL } },
        { &hf_p2frag_position_y, { "Position y", "p2frag.position_y", FT_FLOAT, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_position_z, { "Position z", "p2frag.position_z", FT_FLOAT, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_at_rest, { "At rest", "p2frag.at_rest", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Test packet C: no velocity follows when set", HFILL } },
        { &hf_p2frag_velocity_x, { "Velocity x", "p2frag.velocity_x", FT_FLOAT, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_velocity_y, { "Velocity y", "p2frag.velocity_y", FT_FLOAT, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_velocity_z, { "Velocity z", "p2frag.velocity_z", FT_FLOAT, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_p2frag_reassembled, { "Reassembled packet", "p2frag.reassembled", FT_NONE, BASE_NONE, NULL, 0x0,
            "The fragments' data: a complete regular packet", HFILL } },
    };

    static gint *ett[] = {
        &ett_p2frag, &ett_p2frag_items, &ett_p2frag_reassembled,
    };

    static ei_register_info ei[] = {
        { &ei_p2frag_truncated, { "p2frag.truncated", PI_MALFORMED, PI_ERROR,
            "Truncated packet", EXPFILL } },
        { &ei_p2frag_count_zero, { "p2frag.num_fragments.zero", PI_PROTOCOL, PI_ERROR,
            "Fragment count 0", EXPFILL } },
        { &ei_p2frag_id_range, { "p2frag.fragment_id.out_of_range", PI_PROTOCOL, PI_ERROR,
            "Fragment id >= fragment count", EXPFILL } },
        { &ei_p2frag_size_range, { "p2frag.fragment_bytes.out_of_range", PI_PROTOCOL, PI_ERROR,
            "Fragment data not 1..1024 bytes", EXPFILL } },
        { &ei_p2frag_size_short, { "p2frag.fragment_bytes.short", PI_PROTOCOL, PI_ERROR,
            "Non-last fragment not 1024 bytes", EXPFILL } },
        { &ei_p2frag_too_long, { "p2frag.regular.too_long", PI_PROTOCOL, PI_ERROR,
            "Regular packet over 1024 bytes", EXPFILL } },
        { &ei_p2frag_value_range, { "p2frag.value.out_of_range", PI_MALFORMED, PI_ERROR,
            "Field value above its maximum", EXPFILL } },
        { &ei_p2frag_inner_seq, { "p2frag.reassembled.sequence_mismatch", PI_PROTOCOL, PI_ERROR,
            "Reassembled packet's sequence differs from its fragments'", EXPFILL } },
        { &ei_p2frag_inner_crc, { "p2frag.reassembled.crc_bad", PI_CHECKSUM, PI_ERROR,
            "Reassembled packet fails its own CRC", EXPFILL } },
    };
    static const cs_reassembly_names_t reasm_names = {
        .prefix = "p2frag", .fragments = "Fragments", .fragment = "Fragment", .tag = "P2frag fragments",
        .with_data = TRUE,
    };

    proto_p2frag = proto_register_protocol("Packet Fragmentation and Reassembly (protocol2)", "P2frag", "p2frag");
    /* dp2_id_check() never yields the statuses of a learnt id. */
    static const dp2_display_names_t p2_names = {
        .name = "p2frag", .end_check_blurb = "0x9908ace2 (e2 ac 08 99); regular packets only",
        .crc_bad = "Bad CRC: does not imply the configured protocol id",
    };
    dp2_display_register(proto_p2frag, &p2frag_p2d, &p2_names);
    CS_REGISTER_ARRAYS_REASSEMBLY(proto_p2frag, hf, &p2frag_reasm, &reasm_names, ett, ei);

    m = prefs_register_protocol(proto_p2frag, p2frag_prefs_apply);
    prefs_register_uint_preference(m, "protocol_id", "Protocol id",
        "The 32-bit protocol id that seeds the CRC (never sent). Datagrams whose CRC implies it are "
        "fragment-protocol packets, wherever they are.", 16, &pref_protocol_id);
    prefs_register_uint_preference(m, "num_types", "Number of packet types",
        "NumPacketTypes, fragments included (default 4: FRAGMENT, A, B, C, a 2-bit type field). "
        "A game with more types has a wider field (2..65536).", 10, &pref_num_types);
    prefs_register_enum_preference(m, "bodies", "Regular packet bodies",
        "The example's test packets A/B/C, or opaque bodies handed to the data dissector",
        &pref_bodies, p2frag_bodies_vals, FALSE);
    prefs_register_bool_preference(m, "reassemble", "Reassemble fragmented packets",
        "Reassemble the fragments of a packet and decode it as a regular packet in the frame of the "
        "fragment that completes it", &pref_reassemble);
    prefs_register_bool_preference(m, "original_notes", "Notes for games built on the original example",
        "Note where the original example's receiver would have lost a packet that the intended rules "
        "deliver (interleaved packets, sequences of 256 and more, 256-fragment packets)",
        &pref_original_notes);

    p2frag_handle = register_dissector("p2frag", dissect_p2frag, proto_p2frag);
    reassembly_table_register(&p2frag_reassembly_table, &addresses_ports_reassembly_table_functions);
    p2frag_tap = register_tap("p2frag");


    p2frag_p2.proto = proto_p2frag;
    p2frag_p2.handle = p2frag_handle;
    dp2_register_protocol(&p2frag_p2);
    p2frag_prefs_apply();
    /* Analysis and statistics side by side. */
    p2frag_analysis_register(proto_p2frag, m, &p2frag_p2);
    p2frag_stats_register();
}

void proto_reg_handoff_p2frag(void)
{
    dp2_ports_register(&p2frag_p2, "");
    heur_dissector_add("udp", dissect_p2frag_heur, "P2frag over UDP", "p2frag_udp", proto_p2frag,
                       HEURISTIC_ENABLE);
    p2frag_analysis_handoff();
}
