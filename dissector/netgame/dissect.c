/* netgame/dissect.c
 * Routines for netgame: the 16-byte reliability header of Glenn Fiedler's
 * 2008 "Networking for Game Programmers" (protocol id, sequence, ack, ack
 * bits). The wire format and the sequence rules are in docs/netgame.md; this
 * is an independent implementation of them (no code shared with endpoints/).
 * The connection analysis is netgame/analysis.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/expert.h>
#include <epan/conversation.h>
#include <epan/decode_as.h>
#include <epan/proto_data.h>
#include <wsutil/utf8_entities.h>

#include "netgame.h"
#include "netgame-int.h"
#include "common/analysis-util.h"
#include "common/conv-cache.h"
#include "common/ws-compat.h"

#define NETGAME_DEFAULT_PORTS "30000"    /* the example programs' server port */
#define NETGAME_DEFAULT_IDS  "0x11223344" /* the example programs' protocol id */
#define NETGAME_MAX_IDS      64

static int proto_netgame = -1;
static dissector_handle_t netgame_handle;
static dissector_table_t payload_table;

static int hf_netgame_protocol_id = -1;
static int hf_netgame_sequence = -1;
static int hf_netgame_ack = -1;
static int hf_netgame_ack_bits = -1;
static int hf_netgame_ack_bit = -1;
static int hf_netgame_acked = -1;
static int hf_netgame_payload = -1;
static int hf_netgame_payload_len = -1;

static gint ett_netgame = -1;
static gint ett_netgame_ack_bits = -1;

static expert_field ei_netgame_short = EI_INIT;
static expert_field ei_netgame_header_only = EI_INIT;
static expert_field ei_netgame_id_unexpected = EI_INIT;
static expert_field ei_netgame_id_changed = EI_INIT;

/* Preferences as set, and as used. */
static const char *pref_ids = NETGAME_DEFAULT_IDS;
static guint pref_max_sequence = 0xFFFFFFFFu;
static guint32 cfg_ids[NETGAME_MAX_IDS];
static guint cfg_n_ids;
static guint32 cfg_max_sequence = 0xFFFFFFFFu;

static gboolean id_configured(guint32 id)
{
    for (guint i = 0; i < cfg_n_ids; i++)
        if (cfg_ids[i] == id)
            return TRUE;
    return FALSE;
}

/* Per conversation: the protocol id of its first packet, and that frame. */
typedef struct netgame_conv {
    guint32 id_frame;
    guint32 id;
} netgame_conv_t;

/* conversation -> netgame_conv_t, behind the cache of the last two address
 * and port pairs (common/conv-cache.h). */
static cs_conv_cache_t netgame_convs;

static netgame_conv_t *netgame_get_conv(packet_info *pinfo, conversation_t **conv_out)
{
    return (netgame_conv_t *)cs_conv_cache_get(&netgame_convs, pinfo, conv_out);
}

/* ---- Decode As for the payload: keyed by protocol id ------------------- */

static void payload_da_prompt(packet_info *pinfo, gchar *result)
{
    guint32 id = GPOINTER_TO_UINT(p_get_proto_data(pinfo->pool, pinfo, proto_netgame, 0));
    snprintf(result, MAX_DECODE_AS_PROMPT_LEN, "Netgame payload of protocol id 0x%08x as", id);
}

static gpointer payload_da_value(packet_info *pinfo)
{
    return p_get_proto_data(pinfo->pool, pinfo, proto_netgame, 0);
}

/* ---- Ack bits ---------------------------------------------------------- */

/* Sequence that ack bit i stands for: ack - 1 - i modulo MaxSequence + 1. */
static guint32 bit_sequence(guint32 ack, guint i)
{
    return netgame_seq_sub(ack, i + 1, cfg_max_sequence);
}

/* Whether the original applies bit i: its sequence must be older than the
 * ack (at most half the space back) and not the ack itself. */
static gboolean bit_applies(guint32 ack, guint i)
{
    guint32 s = bit_sequence(ack, i);
    return s != ack && !netgame_more_recent(s, ack, cfg_max_sequence);
}

static void add_ack_bits(proto_tree *tree, tvbuff_t *tvb, const netgame_pkt_t *p, const ng_frame_t *rec)
{
    proto_item *ti;
    proto_tree *bt;
    guint n = 0;

    if (!tree)
        return;   /* items only: nothing to add without a tree */
    ti = proto_tree_add_item(tree, hf_netgame_ack_bits, tvb, 12, 4, ENC_BIG_ENDIAN);
    for (guint i = 0; i < 32; i++)
        if (p->ack_bits & (1u << i))
            n++;
    proto_item_append_text(ti, " (%u set)", n);
    bt = proto_item_add_subtree(ti, ett_netgame_ack_bits);
    for (guint i = 0; i < 32; i++) {
        guint32 s = bit_sequence(p->ack, i);
        gboolean set = (p->ack_bits >> i) & 1;
        const char *seen;
        if (!rec)
            seen = "";
        else if (!(rec->known_mask & (1u << i)))
            seen = ", not known whether seen (before the peer's first packet here, or older than the analysis window)";
        else if (rec->seen_mask & (1u << i))
            seen = ", seen in the capture";
        else
            seen = ", not seen in the capture";
        proto_tree_add_uint_format(bt, hf_netgame_ack_bit, tvb, 12 + (3 - i / 8), 1, s,
                                   "Bit %2u (ack - %2u): sequence %u %s%s%s", i, i + 1, s,
                                   set ? "acked" : "not acked", seen,
                                   set && !bit_applies(p->ack, i) ?
                                       " (beyond half the sequence space: ignored)" : "");
    }
}

/* The generated netgame.acked items: ack, and every set bit the original
 * applies (each sequence once). Decoded from the header alone: whether the
 * ack of 0 is real is the analysis' business (netgame.analysis.false_ack0). */
static void add_acked(proto_tree *tree, tvbuff_t *tvb, const netgame_pkt_t *p)
{
    guint32 seen[33];
    guint n = 0;
    /* 33 sequences can repeat only in a sequence space of at most 33. */
    gboolean may_repeat = cfg_max_sequence < 33;

    if (!tree)
        return;   /* items only (filters build a tree): nothing to add without one */
    proto_item_set_generated(proto_tree_add_uint(tree, hf_netgame_acked, tvb, 8, 4, p->ack));
    seen[n++] = p->ack;
    for (guint i = 0; i < 32; i++) {
        if (!((p->ack_bits >> i) & 1) || !bit_applies(p->ack, i))
            continue;
        guint32 s = bit_sequence(p->ack, i);
        gboolean dup = FALSE;
        for (guint k = 0; may_repeat && k < n; k++)
            dup = dup || seen[k] == s;
        if (dup)
            continue;
        seen[n++] = s;
        proto_item_set_generated(proto_tree_add_uint(tree, hf_netgame_acked, tvb, 12 + (3 - i / 8), 1, s));
    }
}

/* ---- Dissection ---------------------------------------------------------- */

/* Which datagrams are netgame's (docs/netgame.md, "Finding the traffic").
 * Through Decode As (the udp.port table) and in a conversation the
 * heuristic pinned, every one: the user chose netgame, so a packet with an
 * id not in netgame.protocol_ids is decoded and flagged. On the ports of
 * the netgame.udp.port preference only a datagram with a configured
 * protocol id, or one in a conversation that already is netgame's (so that
 * a changed id is shown as such): anything else goes on to the other
 * heuristics (the protocol2 games' chunk and fragment packets use ports like
 * these) and to data.
 *
 * The preference is netgame's own range, not a udp.port table entry: an
 * entry for the default port would hold the same handle as a Decode As of
 * that port, and the two could not be told apart. Its ports are claimed by
 * the netgame_udp_port heuristic instead, so that the table's netgame
 * entries are exactly the user's Decode As choices. */
static range_t *pref_ports;       /* netgame.udp.port, as Wireshark keeps it */
static range_t *ports_applied;    /* a copy, refreshed when preferences are applied */

/* Wireshark frees the preference's own range when it changes: copy it. */
static void cache_ports(void)
{
    if (ports_applied)
        wmem_free(wmem_epan_scope(), ports_applied);
    ports_applied = pref_ports ? range_copy(wmem_epan_scope(), pref_ports) : NULL;
}

static gboolean on_netgame_port(packet_info *pinfo)
{
    const range_t *ports = ports_applied;
    return ports && (value_is_in_range(ports, pinfo->srcport) || value_is_in_range(ports, pinfo->destport));
}

/* On a netgame port: a configured id, or the conversation's later packets. */
static gboolean port_takes_datagram(tvbuff_t *tvb, packet_info *pinfo)
{
    conversation_t *conv;
    netgame_conv_t *nc;

    if (tvb_captured_length(tvb) >= 4 && id_configured(tvb_get_ntohl(tvb, 0)))
        return TRUE;
    conv = find_conversation_pinfo(pinfo, 0);
    nc = conv ? (netgame_conv_t *)cs_conv_cache_lookup(&netgame_convs, conv) : NULL;
    return nc && nc->id_frame && nc->id_frame < pinfo->num;
}

/* A datagram shorter than the header, or cut short: what there is of the
 * header, flagged. */
static int dissect_short(tvbuff_t *tvb, packet_info *pinfo, proto_tree *nt, proto_item *ti, guint len, guint cap)
{
    if (cap >= 4)
        proto_tree_add_item(nt, hf_netgame_protocol_id, tvb, 0, 4, ENC_BIG_ENDIAN);
    if (cap >= 8)
        proto_tree_add_item(nt, hf_netgame_sequence, tvb, 4, 4, ENC_BIG_ENDIAN);
    if (cap >= 12)
        proto_tree_add_item(nt, hf_netgame_ack, tvb, 8, 4, ENC_BIG_ENDIAN);
    if (len < NETGAME_HEADER_LEN)
        AU_EXPERT(pinfo, ti, &ei_netgame_short,
                  "Datagram of %u bytes, under the 16-byte header: the original receiver drops it", len);
    else
        AU_EXPERT(pinfo, ti, &ei_netgame_short, "Only %u bytes of the 16-byte header were captured", cap);
    col_add_fstr(pinfo->cinfo, COL_INFO, "Short datagram (%u bytes)", len);
    return cap;
}

/* Reads the whole header into p and finds the conversation; its protocol
 * id is that of its first packet. */
static netgame_conv_t *read_header(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, netgame_pkt_t *p, guint len)
{
    netgame_conv_t *nc;

    memset(p, 0, sizeof *p);
    p->protocol_id = tvb_get_ntohl(tvb, 0);
    p->seq = tvb_get_ntohl(tvb, 4);
    p->ack = tvb_get_ntohl(tvb, 8);
    p->ack_bits = tvb_get_ntohl(tvb, 12);
    p->payload_len = len - NETGAME_HEADER_LEN;
    p->header_only = len == NETGAME_HEADER_LEN;
    p->max_seq = cfg_max_sequence;

    nc = netgame_get_conv(pinfo, &p->conv);
    if (!PINFO_FD_VISITED(pinfo) && !nc->id_frame) {
        nc->id_frame = pinfo->num;
        nc->id = p->protocol_id;
    }
    p->foreign_id = nc->id_frame && pinfo->num > nc->id_frame && p->protocol_id != nc->id;
    /* For Decode As of the payload (payload_da_value): the GUI's dialog
     * reads the selected packet, which is dissected with a tree. */
    if (tree)
        p_add_proto_data(pinfo->pool, pinfo, proto_netgame, 0, GUINT_TO_POINTER(p->protocol_id));
    return nc;
}

/* The header's items (the header is all there, so they cannot throw;
 * without a tree they are not made at all) and the id's expert infos. */
static void show_header(tvbuff_t *tvb, packet_info *pinfo, proto_tree *nt, proto_item *ti, const netgame_pkt_t *p,
                        const netgame_conv_t *nc, const ng_frame_t *rec)
{
    proto_item *idi = nt ? proto_tree_add_item(nt, hf_netgame_protocol_id, tvb, 0, 4, ENC_BIG_ENDIAN) : NULL;

    if (p->foreign_id)
        AU_EXPERT(pinfo, idi, &ei_netgame_id_changed,
                  "Protocol id 0x%08x differs from the conversation's 0x%08x (frame %u): "
                  "the original receiver drops it", p->protocol_id, nc->id, nc->id_frame);
    else if (!id_configured(p->protocol_id))
        AU_EXPERT(pinfo, idi, &ei_netgame_id_unexpected,
                  "Protocol id 0x%08x is not in the netgame.protocol_ids preference: add 0x%08x there "
                  "if it is this game's", p->protocol_id, p->protocol_id);
    if (nt) {
        proto_tree_add_item(nt, hf_netgame_sequence, tvb, 4, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(nt, hf_netgame_ack, tvb, 8, 4, ENC_BIG_ENDIAN);
        add_ack_bits(nt, tvb, p, rec);
        add_acked(nt, tvb, p);
        proto_item_set_generated(proto_tree_add_uint(nt, hf_netgame_payload_len, tvb, NETGAME_HEADER_LEN, 0,
                                                     p->payload_len));
        proto_item_append_text(ti, ", Seq: %u, Ack: %u, Ack bits: 0x%08x", p->seq, p->ack, p->ack_bits);
    }
    if (p->header_only)
        au_expert_add_info(pinfo, ti, &ei_netgame_header_only);
}

/* The Info column's start, ports first as UDP's and TCP's (which side sent
 * it): "50000 → 30000 Seq=7 Ack=5 AckBits=0x0000001f Len=32", written
 * without printf (it runs for every datagram). Returns the end. */
static char *info_header(char *o, const packet_info *pinfo, const netgame_pkt_t *p)
{
    o = au_put_uint(o, pinfo->srcport);
    o = au_put_str(o, " " UTF8_RIGHTWARDS_ARROW " ");
    o = au_put_uint(o, pinfo->destport);
    o = au_put_str(o, " Seq=");
    o = au_put_uint(o, p->seq);
    o = au_put_acks(o, p->ack, p->ack_bits);
    o = au_put_str(o, " Len=");
    return au_put_uint(o, p->payload_len);
}

/* The payload: to the dissector Decode As chose for the protocol id, else
 * to data, which shows nothing without a tree (so then it is not called,
 * nor its tvb made). */
static void dissect_payload(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree *nt,
                            const netgame_pkt_t *p)
{
    tvbuff_t *next;

    if (nt)
        proto_tree_add_item(nt, hf_netgame_payload, tvb, NETGAME_HEADER_LEN, -1, ENC_NA);
    if (!tree && !dissector_get_uint_handle(payload_table, p->protocol_id))
        return;
    next = tvb_new_subset_remaining(tvb, NETGAME_HEADER_LEN);
#if CS_WS_AT_LEAST(4, 6)
    if (!dissector_try_uint_with_data(payload_table, p->protocol_id, next, pinfo, tree, TRUE, NULL))
#else
    if (!dissector_try_uint_new(payload_table, p->protocol_id, next, pinfo, tree, TRUE, NULL))
#endif
        call_data_dissector(next, pinfo, tree);
}

static int dissect_netgame(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    guint len = tvb_reported_length(tvb);
    guint cap = tvb_captured_length(tvb);
    proto_item *ti;
    proto_tree *nt;
    netgame_pkt_t p;
    netgame_conv_t *nc;
    ng_frame_t *rec = NULL;
    char *info = NULL, *end = NULL;

    /* The protocol's short name, as Chunk and P2frag (filters stay "netgame"). */
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "Netgame");
    ti = proto_tree_add_item(tree, proto_netgame, tvb, 0, -1, ENC_NA);
    nt = proto_item_add_subtree(ti, ett_netgame);
    if (len < NETGAME_HEADER_LEN || cap < NETGAME_HEADER_LEN)
        return dissect_short(tvb, pinfo, nt, ti, len, cap);

    nc = read_header(tvb, pinfo, tree, &p, len);
    if (!pinfo->flags.in_error_pkt)
        rec = netgame_analysis_packet(pinfo, &p);
    show_header(tvb, pinfo, nt, ti, &p, nc, rec);
    if (pinfo->cinfo) {
        info = au_info_begin(pinfo, 128);
        end = info_header(info, pinfo, &p);
    }
    if (rec) {
        end = netgame_analysis_show(tvb, pinfo, nt, ti, &p, rec, end);
        if (nt)
            netgame_flow_end_fields(nt, tvb, pinfo);
    }
    if (info)
        au_info_set(pinfo, end);
    if (p.payload_len && cap > NETGAME_HEADER_LEN)
        dissect_payload(tvb, pinfo, tree, nt, &p);
    return cap;
}

/* The ports of netgame.udp.port (see port_takes_datagram). */
static ws_cb_bool dissect_netgame_port_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    if (!on_netgame_port(pinfo) || !port_takes_datagram(tvb, pinfo))
        return FALSE;
    dissect_netgame(tvb, pinfo, tree, data);
    return TRUE;
}

/* Heuristic: at least the 16-byte header and a configured protocol id;
 * then the whole UDP conversation is netgame's. */
static ws_cb_bool dissect_netgame_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    conversation_t *conv;

    if (tvb_captured_length(tvb) < NETGAME_HEADER_LEN || !id_configured(tvb_get_ntohl(tvb, 0)))
        return FALSE;
    conv = find_or_create_conversation(pinfo);
    conversation_set_dissector(conv, netgame_handle);
    dissect_netgame(tvb, pinfo, tree, data);
    return TRUE;
}

/* ---- Registration ------------------------------------------------------- */

static void parse_ids(void)
{
    const char *s = pref_ids ? pref_ids : "";
    cfg_n_ids = 0;
    while (*s && cfg_n_ids < NETGAME_MAX_IDS) {
        char *end;
        unsigned long v;
        while (*s == ',' || *s == ' ' || *s == ';' || *s == '\t')
            s++;
        if (!*s)
            break;
        v = strtoul(s, &end, 16);
        if (end == s) {
            s++;   /* skip a character that is not hex */
            continue;
        }
        cfg_ids[cfg_n_ids++] = (guint32)v;
        s = end;
    }
}

static void netgame_prefs_apply(void)
{
    parse_ids();
    cache_ports();
    cfg_max_sequence = pref_max_sequence ? (guint32)pref_max_sequence : 0xFFFFFFFFu;
}

static build_valid_func payload_da_build_value[1] = { payload_da_value };
static decode_as_value_t payload_da_values = { payload_da_prompt, 1, payload_da_build_value };
static decode_as_t payload_da = { "netgame", "netgame.protocol_id", 1, 0, &payload_da_values, NULL, NULL,
                                  decode_as_default_populate_list, decode_as_default_reset,
                                  decode_as_default_change, NULL };

void proto_register_netgame(void)
{
    module_t *module;

    static hf_register_info hf[] = {
        { &hf_netgame_protocol_id, { "Protocol id", "netgame.protocol_id", FT_UINT32, BASE_HEX, NULL, 0x0,
            "The game's 32-bit protocol id, sent in clear (the examples use 0x11223344)", HFILL } },
        { &hf_netgame_sequence, { "Sequence", "netgame.sequence", FT_UINT32, BASE_DEC, NULL, 0x0,
            "The sender's packet number", HFILL } },
        { &hf_netgame_ack, { "Ack", "netgame.ack", FT_UINT32, BASE_DEC, NULL, 0x0,
            "The most recent sequence the sender received from its peer (0 before any)", HFILL } },
        { &hf_netgame_ack_bits, { "Ack bits", "netgame.ack_bits", FT_UINT32, BASE_HEX, NULL, 0x0,
            "Bit i set: sequence ack - 1 - i was received", HFILL } },
        { &hf_netgame_ack_bit, { "Ack bit", "netgame.ack_bit.sequence", FT_UINT32, BASE_DEC, NULL, 0x0,
            "The sequence one ack bit stands for", HFILL } },
        { &hf_netgame_acked, { "Acked sequence", "netgame.acked", FT_UINT32, BASE_DEC, NULL, 0x0,
            "A sequence this packet acknowledges: ack, and ack - 1 - i for each set bit i", HFILL } },
        { &hf_netgame_payload, { "Payload", "netgame.payload", FT_BYTES, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_netgame_payload_len, { "Payload length", "netgame.payload_len", FT_UINT32, BASE_DEC, NULL, 0x0,
            "Bytes after the 16-byte header", HFILL } },
    };
    static gint *ett[] = { &ett_netgame, &ett_netgame_ack_bits };
    static ei_register_info ei[] = {
        { &ei_netgame_short, { "netgame.short", PI_MALFORMED, PI_ERROR,
            "Datagram shorter than the 16-byte header", EXPFILL } },
        { &ei_netgame_header_only, { "netgame.header_only", PI_PROTOCOL, PI_NOTE,
            "16-byte datagram, header only: valid, but the original receiver ignores it and its acks", EXPFILL } },
        { &ei_netgame_id_unexpected, { "netgame.protocol_id.unexpected", PI_PROTOCOL, PI_WARN,
            "Protocol id not in the netgame.protocol_ids preference", EXPFILL } },
        { &ei_netgame_id_changed, { "netgame.protocol_id.changed", PI_PROTOCOL, PI_WARN,
            "Protocol id changed within the conversation", EXPFILL } },
    };

    proto_netgame = proto_register_protocol("Netgame (2008 reliability header over UDP)", "Netgame", "netgame");
    CS_REGISTER_ARRAYS(proto_netgame, hf, ett, ei);

    module = prefs_register_protocol(proto_netgame, netgame_prefs_apply);
    prefs_register_string_preference(module, "protocol_ids", "Protocol ids (hex)",
        "The protocol ids the heuristic looks for in the first 4 bytes, big-endian, comma-separated "
        "hex (default 0x11223344, the examples'; the original unit tests use 0x11112222). Packets with "
        "another id on the port or by Decode As are decoded and flagged.", &pref_ids);
    prefs_register_uint_preference(module, "max_sequence", "MaxSequence",
        "Largest sequence number before wrapping to 0 (default 0xFFFFFFFF; the original wrap test "
        "uses 31). Decimal.", 10, &pref_max_sequence);

    range_convert_str(wmem_epan_scope(), &pref_ports, NETGAME_DEFAULT_PORTS, 65535);
    prefs_register_range_preference(module, "udp.port", "UDP port(s)",
        "Ports whose datagrams are netgame when they carry a configured protocol id (or belong to a "
        "conversation that does): default 30000, the examples' server. To decode a port's datagrams as "
        "netgame whatever their id, use Decode As.", &pref_ports, 65535);

    netgame_handle = register_dissector("netgame", dissect_netgame, proto_netgame);
    payload_table = register_dissector_table("netgame.protocol_id", "Netgame payload (by protocol id)",
                                             proto_netgame, FT_UINT32, BASE_HEX);
    register_decode_as(&payload_da);

    cs_conv_cache_register(&netgame_convs, sizeof(netgame_conv_t));
    netgame_prefs_apply();
    netgame_analysis_register(proto_netgame, module);
    netgame_stats_register();
    netgame_flow_register(proto_netgame);
}

/* Offers for the payload whatever Decode As offers for a UDP port. */
static void add_payload_choice(const gchar *table_name _U_, gpointer handle, gpointer user_data _U_)
{
    dissector_add_for_decode_as("netgame.protocol_id", (dissector_handle_t)handle);
}

void proto_reg_handoff_netgame(void)
{
    static gboolean choices_added;
    /* Decode As only: the ports are the netgame_udp_port heuristic's. */
    dissector_add_for_decode_as("udp.port", netgame_handle);
    cache_ports();
    if (!choices_added) {
        choices_added = TRUE;
        dissector_add_for_decode_as("netgame.protocol_id", find_dissector("data"));
        dissector_table_foreach_handle("udp.port", add_payload_choice, NULL);
    }
    heur_dissector_add("udp", dissect_netgame_port_heur, "Netgame on its ports (netgame.udp.port)",
                       "netgame_udp_port", proto_netgame, HEURISTIC_ENABLE);
    heur_dissector_add("udp", dissect_netgame_heur, "Netgame over UDP", "netgame_udp", proto_netgame,
                       HEURISTIC_ENABLE);
    netgame_analysis_handoff();
}
