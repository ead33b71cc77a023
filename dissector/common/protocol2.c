/* common/protocol2.c
 * protocol2 framing: CRC-32 / protocol id, LSB-first bit reader, padding and
 * end check; the protocol id per datagram and per conversation, and the one
 * UDP entry point that dispatches on it. See common/protocol2.h and
 * docs/protocol.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"

#include <epan/conversation.h>
#include <epan/prefs.h>
#include <wsutil/str_util.h>

#include "cs-crc32.h"

void p2_reader_init(p2_reader_t *r, tvbuff_t *tvb)
{
    memset(r, 0, sizeof *r);
    r->tvb = tvb;
    r->bit = P2_BODY_BIT;
    r->limit = tvb_captured_length(tvb) * 8;
    if (r->limit)
        r->data = tvb_get_ptr(tvb, 0, r->limit / 8);
    if (r->limit < P2_BODY_BIT) {
        r->errors |= P2_ERR_TRUNCATED;
        r->need_bytes = P2_CRC_LEN;
    }
}

guint p2_bits_required(guint32 min, guint32 max)
{
    guint32 range = max - min;
    guint n = 0;

    while (range) {
        n++;
        range >>= 1;
    }
    return n;
}

/* Marks the reader truncated: the fields need at least `need` bytes. */
static void p2_truncate(p2_reader_t *r, guint need)
{
    if (!(r->errors & P2_ERR_TRUNCATED)) {
        r->errors |= P2_ERR_TRUNCATED;
        r->need_bytes = need;
    }
}

gboolean p2_skip_bits(p2_reader_t *r, guint nbits)
{
    if (r->errors & P2_ERR_TRUNCATED)
        return FALSE;
    if ((guint64)r->bit + nbits > r->limit) {
        p2_truncate(r, (guint)(((guint64)r->bit + nbits + 7) / 8));
        return FALSE;
    }
    r->bit += nbits;
    return TRUE;
}

guint32 p2_read_bits(p2_reader_t *r, guint nbits)
{
    guint start = r->bit, sh = start & 7, nbytes;
    const guint8 *p;
    guint64 w = 0;

    if (nbits == 0 || !p2_skip_bits(r, nbits))
        return 0;
    /* Least significant bit first, across at most five bytes (what
     * tvb_get_bits32(..., ENC_LITTLE_ENDIAN) returns, without its checks:
     * p2_skip_bits has checked the bits are there). */
    p = r->data + start / 8;
    nbytes = (sh + nbits + 7) / 8;
    for (guint i = 0; i < nbytes; i++)
        w |= (guint64)p[i] << (8 * i);
    return (guint32)((w >> sh) & ((G_GUINT64_CONSTANT(1) << nbits) - 1));
}

guint32 p2_read_int(p2_reader_t *r, guint32 min, guint32 max)
{
    guint32 v = p2_read_bits(r, p2_bits_required(min, max)) + min;

    if (!(r->errors & P2_ERR_TRUNCATED) && v > max)
        r->errors |= P2_ERR_RANGE;
    return v;
}

gboolean p2_read_align(p2_reader_t *r)
{
    guint n;
    guint32 v;

    if (r->errors & P2_ERR_TRUNCATED)
        return FALSE;
    n = (8 - (r->bit & 7)) & 7;
    if (n == 0)
        return TRUE;
    /* The padding lies in a byte whose first bits were read, so it is there. */
    v = tvb_get_bits32(r->tvb, r->bit, n, ENC_LITTLE_ENDIAN);
    if (r->n_pads < P2_MAX_PADS) {
        r->pads[r->n_pads].bit = r->bit;
        r->pads[r->n_pads].nbits = (guint8)n;
        r->pads[r->n_pads].value = (guint8)v;
        r->n_pads++;
    }
    r->bit += n;
    if (v != 0) {
        r->errors |= P2_ERR_PADDING;
        return FALSE;
    }
    return TRUE;
}

gint p2_read_bytes(p2_reader_t *r, guint n)
{
    guint off;

    p2_read_align(r);
    if (r->errors & P2_ERR_TRUNCATED)
        return -1;
    off = r->bit / 8;
    if ((guint64)off + n > r->limit / 8) {
        p2_truncate(r, off + n);
        return -1;
    }
    r->bit += n * 8;
    return (gint)off;
}

void p2_read_check(p2_reader_t *r)
{
    guint off;

    p2_read_align(r);
    if (r->errors & P2_ERR_TRUNCATED)
        return;
    off = r->bit / 8;
    if (off + P2_END_CHECK_LEN > r->limit / 8) {
        p2_truncate(r, off + P2_END_CHECK_LEN);
        return;
    }
    r->check_read = TRUE;
    r->check_offset = off;
    r->check_value = tvb_get_letohl(r->tvb, off);
    r->bit += P2_END_CHECK_LEN * 8;
    if (r->check_value != P2_END_CHECK)
        r->errors |= P2_ERR_END_CHECK;
    else if (tvb_reported_length(r->tvb) > off + P2_END_CHECK_LEN)
        r->errors |= P2_ERR_TRAILING;
}

gboolean p2_ends_with_check(tvbuff_t *tvb)
{
    guint len = tvb_captured_length(tvb);

    if (len < P2_CRC_LEN + P2_END_CHECK_LEN || len != tvb_reported_length(tvb))
        return FALSE;
    return tvb_get_letohl(tvb, len - P2_END_CHECK_LEN) == P2_END_CHECK;
}

/* ---- CRC-32 and the protocol id --------------------------------------- */

/* The reflected CRC-32 table (polynomial 0xEDB88320) and, because the top
 * bytes of its 256 entries are all different, the entry index for each top
 * byte: together they run the CRC register backwards one zero byte. */
static guint32 p2_crc_table[256];
static guint8 p2_crc_index_of_top[256];

/* Running the register backwards is linear, so 2^k zero bytes back is a
 * 32x32 bit matrix, kept as four byte tables: p2_crc_back[k][b][v] is the
 * register 2^k bytes back from v in byte b (the other bytes zero), and a
 * register's image is the XOR of its four bytes' images. 2^16 bytes and
 * more are done with the top power repeatedly. */
#define P2_CRC_BACK_POWERS 17
static guint32 p2_crc_back[P2_CRC_BACK_POWERS][4][256];

static guint32 p2_crc_back_one(guint32 d)
{
    guint8 j = p2_crc_index_of_top[d >> 24];
    return ((d ^ p2_crc_table[j]) << 8) | j;
}

static guint32 p2_crc_back_pow(guint k, guint32 d)
{
    return p2_crc_back[k][0][d & 0xff] ^ p2_crc_back[k][1][(d >> 8) & 0xff] ^
           p2_crc_back[k][2][(d >> 16) & 0xff] ^ p2_crc_back[k][3][d >> 24];
}

void p2_crc_init(void)
{
    for (guint i = 0; i < 256; i++) {
        guint32 c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        p2_crc_table[i] = c;
        p2_crc_index_of_top[c >> 24] = (guint8)i;
    }
    for (guint b = 0; b < 4; b++)
        for (guint32 v = 0; v < 256; v++)
            p2_crc_back[0][b][v] = p2_crc_back_one(v << (8 * b));
    for (guint k = 1; k < P2_CRC_BACK_POWERS; k++)
        for (guint b = 0; b < 4; b++)
            for (guint32 v = 0; v < 256; v++)
                p2_crc_back[k][b][v] = p2_crc_back_pow(k - 1, p2_crc_back_pow(k - 1, v << (8 * b)));
}

guint32 p2_crc_prefix(guint32 protocol_id)
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

guint32 p2_crc_datagram(tvbuff_t *tvb, guint32 prefix_crc)
{
    guint len = tvb_captured_length(tvb);

    if (len < P2_CRC_LEN)
        return 0;
    /* It runs over every datagram: common/cs-crc32.c folds with PCLMULQDQ where
     * the processor has it, else zlib (the spec's CRC-32 either way). */
    if (len == P2_CRC_LEN)
        return prefix_crc;
    return cs_crc32(prefix_crc, tvb_get_ptr(tvb, P2_CRC_LEN, len - P2_CRC_LEN), len - P2_CRC_LEN);
}

guint32 p2_implied_protocol_id(guint32 stored, guint32 computed, guint32 id,
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

    const guint top = P2_CRC_BACK_POWERS - 1;

    if (d == 0)
        return id;
    /* n zero bytes back: one table step per set bit of n. */
    for (; n >> top; n -= 1u << top)
        d = p2_crc_back_pow(top, d);
    for (guint k = 0; n; k++, n >>= 1)
        if (n & 1)
            d = p2_crc_back_pow(k, d);
    return id ^ d;
}

/* ---- Display ------------------------------------------------------------ */

proto_item *p2_add_bits(proto_tree *tree, int hf, tvbuff_t *tvb, guint bit,
                        guint nbits, guint32 value_if_empty)
{
    proto_item *ti;

    if (!tree)
        return NULL;
    if (nbits == 0) {
        ti = proto_tree_add_uint(tree, hf, tvb, bit / 8, 0, value_if_empty);
        proto_item_append_text(ti, " (0 bits: not sent)");
        proto_item_set_generated(ti);
        return ti;
    }
    ti = proto_tree_add_bits_item(tree, hf, tvb, bit, nbits, ENC_LITTLE_ENDIAN);
    if (nbits < 64)
        proto_item_set_bits_offset_len(ti, bit & 7, nbits);
    return ti;
}

void p2_add_padding(proto_tree *tree, packet_info *pinfo, const p2_display_t *d,
                    const p2_reader_t *r, guint *next_pad, gboolean experts)
{
    for (; *next_pad < r->n_pads; (*next_pad)++) {
        const p2_pad_t *p = &r->pads[*next_pad];
        proto_item *ti = p2_add_bits(tree, d->hf_padding, r->tvb, p->bit, p->nbits, 0);

        if (p->value != 0 && experts)
            expert_add_info_format(pinfo, ti, d->ei_padding,
                                   "Padding bits %u-%u are 0x%02x, not zero (a strict reader drops the packet)",
                                   p->bit, p->bit + p->nbits - 1, p->value);
    }
}

void p2_add_end_check(proto_tree *tree, packet_info *pinfo, const p2_display_t *d,
                      const p2_reader_t *r, gboolean experts)
{
    proto_item *ti, *st;
    gboolean good;

    if (!r->check_read)
        return;
    good = r->check_value == P2_END_CHECK;
    ti = proto_tree_add_item(tree, d->hf_end_check, r->tvb, r->check_offset,
                             P2_END_CHECK_LEN, ENC_LITTLE_ENDIAN);
    if (!good)
        proto_item_append_text(ti, " [incorrect, should be 0x%08x]", P2_END_CHECK);
    st = proto_tree_add_uint(tree, d->hf_end_check_status, r->tvb, r->check_offset,
                             P2_END_CHECK_LEN,
                             good ? PROTO_CHECKSUM_E_GOOD : PROTO_CHECKSUM_E_BAD);
    proto_item_set_generated(st);
    if (!good && experts)
        expert_add_info_format(pinfo, ti, d->ei_end_check,
                               "End check at byte %u is 0x%08x, not 0x%08x",
                               r->check_offset, r->check_value, P2_END_CHECK);
    if (good && (r->errors & P2_ERR_TRAILING)) {
        guint off = r->check_offset + P2_END_CHECK_LEN;
        gint n = tvb_captured_length_remaining(r->tvb, off);
        guint extra = tvb_reported_length(r->tvb) - off;

        ti = proto_tree_add_item(tree, d->hf_trailing, r->tvb, off, n > 0 ? n : 0, ENC_NA);
        if (experts)
            expert_add_info_format(pinfo, ti, d->ei_trailing,
                                   "%u byte%s after the end check (the original program ignored them; a strict reader drops the packet)",
                                   extra, plurality(extra, "", "s"));
    }
}

/* ---- The protocol id, per datagram and per conversation ------------------ */

typedef struct p2_conv {
    p2_id_state_t ids[P2_MAX_PROTOCOLS];
    void *data[P2_MAX_PROTOCOLS];
} p2_conv_t;

/* Conversation -> p2_conv_t. Not conversation_add_proto_data(): the
 * protocols keep their analysis state there. */
static wmem_map_t *p2_convs;

static p2_protocol_t *p2_protocols[P2_MAX_PROTOCOLS];
static guint p2_n_protocols;

static void p2_conv_hits_clear(void);

void p2_register_protocol(p2_protocol_t *p)
{
    DISSECTOR_ASSERT(p2_n_protocols < P2_MAX_PROTOCOLS);
    if (!p2_convs)
        p2_convs = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(),
                                          g_direct_hash, g_direct_equal);
    if (!p2_n_protocols) {
        p2_crc_init();
        register_init_routine(p2_conv_hits_clear);
        register_cleanup_routine(p2_conv_hits_clear);
    }
    p->index = p2_n_protocols;
    p2_protocols[p2_n_protocols++] = p;
}

/* The last datagram's result: a datagram is looked at by the entry point
 * and, when no port claims it, by each protocol's heuristic in turn. */
static struct {
    gboolean valid;
    guint32 num;
    const guint8 *data;
    guint len;
    p2_frame_t f;
} p2_frame_cache;

static guint32 p2_last_known_id = P2_DEFAULT_PROTOCOL_ID;

void p2_frame_get(tvbuff_t *tvb, packet_info *pinfo, p2_frame_t *f)
{
    guint len = tvb_captured_length(tvb);
    const guint8 *data;
    guint32 ref_id, computed;

    memset(f, 0, sizeof *f);
    f->crc_known = len >= P2_CRC_LEN && len == tvb_reported_length(tvb);
    if (!f->crc_known)
        return;
    data = tvb_get_ptr(tvb, 0, len);
    f->stored_crc = tvb_get_letohl(tvb, 0);
    if (p2_frame_cache.valid && p2_frame_cache.num == pinfo->num && p2_frame_cache.data == data &&
        p2_frame_cache.len == len && p2_frame_cache.f.stored_crc == f->stored_crc) {
        *f = p2_frame_cache.f;
        return;
    }
    /* Any id will do as the starting point. The id the last recognised
     * datagram implied makes a run of one protocol's packets (the common
     * case) cost one CRC each, with no id to work back. */
    ref_id = p2_last_known_id;
    computed = p2_crc_datagram(tvb, p2_crc_prefix(ref_id));
    f->implied_id = p2_implied_protocol_id(f->stored_crc, computed, ref_id, len);
    if (f->implied_id != ref_id && p2_protocol_for(f))
        p2_last_known_id = f->implied_id;
    p2_frame_cache.valid = TRUE;
    p2_frame_cache.num = pinfo->num;
    p2_frame_cache.data = data;
    p2_frame_cache.len = len;
    p2_frame_cache.f = *f;
}

p2_protocol_t *p2_protocol_for(const p2_frame_t *f)
{
    if (!f->crc_known)
        return NULL;
    for (guint i = 0; i < p2_n_protocols; i++)
        if (*p2_protocols[i]->cfg_id == f->implied_id)
            return p2_protocols[i];
    return NULL;
}

/* Handed as `data` from the entry point to the protocol it dispatches to,
 * so that the target neither computes the id again nor dispatches again. */
static struct {
    p2_frame_t f;
} p2_dispatched;

/* TRUE when UDP called owner's handle for a port the user gave it with
 * Decode As: the port UDP matched is not in owner's port preference. (The
 * udp.port table cannot tell: Wireshark 4.0 applies -o <proto>.udp.port with
 * dissector_change_uint, as Decode As does, so both leave the port's initial
 * handle alone.) A conversation pinned by a heuristic is not Decode As. */
static gboolean p2_is_decode_as(packet_info *pinfo, const p2_protocol_t *owner)
{
    static dissector_table_t udp;
    guint32 port = pinfo->match_uint;

    if (pinfo->ptype != PT_UDP || (port != pinfo->srcport && port != pinfo->destport))
        return FALSE;
    if (!udp)
        udp = find_dissector_table("udp.port");
    if (!udp || dissector_get_uint_handle(udp, port) != owner->handle)
        return FALSE;
    /* ports_applied: the preference as last applied (p2_ports_apply), not
     * looked up by name for every datagram. */
    return !owner->ports_applied || !value_is_in_range(owner->ports_applied, port);
}

/* Wireshark put `proto` in the frame's layers when it called its handle; a
 * datagram handed on to another protocol is not `proto`'s, so take it out
 * (frame.protocols then reads "udp:p2frag", as for a datagram found by the
 * heuristic, and reassembly keys that include the layer number agree). */
static void p2_leave_layer(packet_info *pinfo, int proto)
{
    wmem_list_frame_t *tail = wmem_list_tail(pinfo->layers);

    if (tail && GPOINTER_TO_INT(wmem_list_frame_data(tail)) == proto) {
        wmem_list_remove_frame(pinfo->layers, tail);
        pinfo->curr_layer_num--;
    }
}

int p2_dissect_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data,
                   p2_protocol_t *owner)
{
    p2_frame_t f;
    p2_protocol_t *target;

    if (data == &p2_dispatched)
        return owner->dissect(tvb, pinfo, tree, &p2_dispatched.f);
    p2_frame_get(tvb, pinfo, &f);
    f.forced = p2_is_decode_as(pinfo, owner);
    if (!f.forced) {
        target = p2_protocol_for(&f);
        if (target && target != owner) {
            p2_leave_layer(pinfo, owner->proto);
            p2_dispatched.f = f;
            return call_dissector_with_data(target->handle, tvb, pinfo, tree, &p2_dispatched);
        }
    }
    return owner->dissect(tvb, pinfo, tree, &f);
}

gboolean p2_heur_frame(tvbuff_t *tvb, packet_info *pinfo, const p2_protocol_t *p, p2_frame_t *f)
{
    const p2_protocol_t *target;

    p2_frame_get(tvb, pinfo, f);
    target = p2_protocol_for(f);
    return !target || target == p;
}


/* The conversations of the last two address and port pairs looked up (a
 * transfer's two directions): find_or_create_conversation() hashes the
 * addresses and searches its tables, about 1 000 instructions a datagram
 * (bench/RESULTS.md). Only for plain address and port conversations (no
 * endpoint override by a lower layer); the addresses are copies; emptied
 * when a file is opened or closed, as the conversations are. */
typedef struct p2_conv_hit {
    conversation_t *conv;   /* NULL: empty */
    p2_conv_t *pc;
    port_type ptype;
    guint32 srcport, destport;
    address src, dst;
} p2_conv_hit_t;

static p2_conv_hit_t p2_conv_hits[2];
static guint p2_conv_hit_next;

static void p2_conv_hits_clear(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(p2_conv_hits); i++) {
        free_address(&p2_conv_hits[i].src);
        free_address(&p2_conv_hits[i].dst);
        memset(&p2_conv_hits[i], 0, sizeof p2_conv_hits[i]);
    }
    p2_conv_hit_next = 0;
}

static p2_conv_t *p2_conv_find(packet_info *pinfo, conversation_t **conv_out)
{
    gboolean plain = !pinfo->use_conv_addr_port_endpoints && !pinfo->conv_elements;
    p2_conv_hit_t *h;
    conversation_t *conv;
    p2_conv_t *pc;

    if (plain) {
        for (guint i = 0; i < G_N_ELEMENTS(p2_conv_hits); i++) {
            h = &p2_conv_hits[i];
            if (h->conv && h->ptype == pinfo->ptype && h->srcport == pinfo->srcport &&
                h->destport == pinfo->destport && addresses_equal(&h->src, &pinfo->src) &&
                addresses_equal(&h->dst, &pinfo->dst)) {
                *conv_out = h->conv;
                return h->pc;
            }
        }
    }
    conv = find_or_create_conversation(pinfo);
    pc = (p2_conv_t *)wmem_map_lookup(p2_convs, conv);
    if (!pc) {
        pc = wmem_new0(wmem_file_scope(), p2_conv_t);
        wmem_map_insert(p2_convs, conv, pc);
    }
    if (plain) {
        h = &p2_conv_hits[p2_conv_hit_next];
        p2_conv_hit_next = (p2_conv_hit_next + 1) % G_N_ELEMENTS(p2_conv_hits);
        free_address(&h->src);
        free_address(&h->dst);
        copy_address(&h->src, &pinfo->src);
        copy_address(&h->dst, &pinfo->dst);
        h->ptype = pinfo->ptype;
        h->srcport = pinfo->srcport;
        h->destport = pinfo->destport;
        h->conv = conv;
        h->pc = pc;
    }
    *conv_out = conv;
    return pc;
}

p2_id_state_t *p2_conv_state(packet_info *pinfo, const p2_protocol_t *p, void ***data,
                             conversation_t **conv_out)
{
    conversation_t *conv;
    p2_conv_t *pc = p2_conv_find(pinfo, &conv);
    if (data)
        *data = &pc->data[p->index];
    if (conv_out)
        *conv_out = conv;
    return &pc->ids[p->index];
}

void p2_id_decide(p2_id_state_t *st, const p2_protocol_t *p, const p2_frame_t *f, guint32 frame,
                  gboolean plausible, gboolean update, p2_id_t *id)
{
    guint32 implied = f->implied_id;

    memset(id, 0, sizeof *id);
    id->crc_known = f->crc_known;
    id->implied_id = implied;
    id->cfg_id = *p->cfg_id;
    if (!f->crc_known) {
        id->status = P2_ID_UNKNOWN;
        return;
    }
    if (implied == *p->cfg_id) {
        if (update && !st->id_frame) {
            st->id_frame = frame;
            st->id = implied;
        }
        id->status = P2_ID_GOOD;
        return;
    }
    if (st->id_frame && frame >= st->id_frame) {
        id->status = implied == st->id ? P2_ID_OTHER : P2_ID_BAD;
        if (id->status == P2_ID_BAD)
            id->conv_id = st->id;
        return;
    }
    /* Nothing established yet at this frame. A second well-formed packet
     * implying the same id establishes it: a corrupt packet implies a random
     * id, so two agreeing by chance is a 1 in 2^32 event. */
    if (update && plausible) {
        for (guint i = 0; i < st->n_candidates; i++) {
            if (st->candidates[i] == implied) {
                st->id_frame = frame;
                st->id = implied;
                id->status = P2_ID_OTHER;
                return;
            }
        }
        if (st->n_candidates < array_length(st->candidates))
            st->candidates[st->n_candidates++] = implied;
    }
    id->status = P2_ID_UNCONFIRMED;
}

void p2_id_check(const p2_protocol_t *p, const p2_frame_t *f, p2_id_t *id)
{
    memset(id, 0, sizeof *id);
    id->crc_known = f->crc_known;
    id->implied_id = f->implied_id;
    id->cfg_id = *p->cfg_id;
    if (!f->crc_known)
        id->status = P2_ID_UNKNOWN;
    else
        id->status = f->implied_id == *p->cfg_id ? P2_ID_GOOD : P2_ID_WRONG;
}

void p2_add_crc(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const p2_display_t *d,
                const p2_protocol_t *p, const p2_id_t *id)
{
    proto_item *ti, *st, *idi;
    guint status;

    if (tvb_captured_length(tvb) < P2_CRC_LEN)
        return;
    /* Without a tree proto_tree_add_item still checks the bytes: skipped. */
    ti = tree ? proto_tree_add_item(tree, d->hf_crc, tvb, 0, P2_CRC_LEN, ENC_LITTLE_ENDIAN) : NULL;
    switch (id->status) {
    case P2_ID_GOOD:
        status = PROTO_CHECKSUM_E_GOOD;
        proto_item_append_text(ti, " [correct]");
        break;
    case P2_ID_OTHER:
        status = PROTO_CHECKSUM_E_GOOD;
        proto_item_append_text(ti, " [correct for protocol id 0x%08x]", id->implied_id);
        break;
    case P2_ID_BAD:
        status = PROTO_CHECKSUM_E_BAD;
        proto_item_append_text(ti, " [incorrect for protocol id 0x%08x]", id->conv_id);
        break;
    case P2_ID_WRONG:
        status = PROTO_CHECKSUM_E_BAD;
        proto_item_append_text(ti, " [incorrect for protocol id 0x%08x]", id->cfg_id);
        break;
    default:
        status = PROTO_CHECKSUM_E_UNVERIFIED;
        break;
    }
    st = proto_tree_add_uint(tree, d->hf_crc_status, tvb, 0, P2_CRC_LEN, status);
    proto_item_set_generated(st);
    if (!id->crc_known)
        return;
    idi = proto_tree_add_uint(tree, d->hf_protocol_id, tvb, 0, P2_CRC_LEN, id->implied_id);
    proto_item_set_generated(idi);
    switch (id->status) {
    case P2_ID_OTHER:
        expert_add_info_format(pinfo, idi, d->ei_id_other,
                               "Protocol id 0x%08x, not the configured 0x%08x: the id this conversation uses",
                               id->implied_id, id->cfg_id);
        break;
    case P2_ID_BAD:
        expert_add_info_format(pinfo, ti, d->ei_crc_bad,
                               "Bad CRC: implies protocol id 0x%08x, the conversation uses 0x%08x (corrupt packet)",
                               id->implied_id, id->conv_id);
        break;
    case P2_ID_UNCONFIRMED:
        expert_add_info_format(pinfo, ti, d->ei_id_unconfirmed,
                               "CRC implies protocol id 0x%08x, not the configured 0x%08x, and no earlier packet "
                               "of this conversation confirms it: a corrupt packet, or a game with its own id "
                               "(set %s.protocol_id)", id->implied_id, id->cfg_id, p->filter_name);
        break;
    case P2_ID_WRONG: {
        const p2_protocol_t *other = p2_protocol_for(&(p2_frame_t){ TRUE, 0, id->implied_id, FALSE });
        if (other)
            expert_add_info_format(pinfo, ti, d->ei_crc_bad,
                                   "Bad CRC for protocol id 0x%08x: it implies 0x%08x, the id of %s packets",
                                   id->cfg_id, id->implied_id, other->filter_name);
        else
            expert_add_info_format(pinfo, ti, d->ei_crc_bad,
                                   "Bad CRC: implies protocol id 0x%08x, not the configured 0x%08x "
                                   "(a corrupt packet, or a game with its own id: set %s.protocol_id)",
                                   id->implied_id, id->cfg_id, p->filter_name);
        break;
    }
    default:
        break;
    }
}

/* ---- Ports -------------------------------------------------------------- */

void p2_ports_register(p2_protocol_t *p, const char *ports)
{
    dissector_add_uint_range_with_preference("udp.port", ports, p->handle);
    p->ports_applied = range_copy(wmem_epan_scope(), prefs_get_range_value(p->filter_name, "udp.port"));
    dissector_add_for_decode_as("udp.port", p->handle);
}

/* Wireshark 4.0 applies a changed port range from -o or the preferences
 * file in prefs.c's set_pref, which adds the new range but then deletes the
 * new range again instead of the old one, so the old ports (chunk's default
 * 40000) stayed the protocol's. The GUI's preference dialog deletes the old
 * ones itself; then there is nothing left to do here. A Decode As of a port
 * the new range drops cannot be told from a left-over and is dropped too. */
void p2_ports_apply(p2_protocol_t *p)
{
    dissector_table_t udp = find_dissector_table("udp.port");
    range_t *old = p->ports_applied, *now;

    if (!old || !udp)
        return;
    now = prefs_get_range_value(p->filter_name, "udp.port");
    if (!now || ranges_are_equal(old, now))
        return;
    for (guint i = 0; i < old->nranges; i++) {
        /* 64-bit counter: a range may end at the type's maximum. */
        for (guint64 port = old->ranges[i].low; port <= old->ranges[i].high; port++) {
            if (!value_is_in_range(now, (guint32)port) &&
                dissector_get_uint_handle(udp, (guint32)port) == p->handle)
                dissector_delete_uint("udp.port", (guint32)port, p->handle);
        }
    }
    wmem_free(wmem_epan_scope(), old);
    p->ports_applied = range_copy(wmem_epan_scope(), now);
}
