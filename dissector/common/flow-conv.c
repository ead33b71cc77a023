/* common/flow-conv.c
 * The Flow Graph and Conversations/Endpoints plumbing of every protocol
 * (common/flow-conv.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/conversation_table.h>
#include <epan/to_str.h>

#include "ws-compat.h"
#include "flow-conv.h"

void fc_flow_register(const char *name, const char *ui_name, int proto, const char *tap,
                      tap_packet_cb packet_func)
{
    /* flags 0: the packet functions read the tap records, not the columns */
    register_seq_analysis(name, ui_name, proto, tap, 0, packet_func);
}

tap_packet_status fc_flow_add(void *tapdata, packet_info *pinfo, guint conv, const char *label,
                              const char *comment)
{
    cs_seq_info_t *sainfo = (cs_seq_info_t *)tapdata;
    cs_seq_item_t *sai = sequence_analysis_create_sai_with_addresses(pinfo, sainfo);

    if (!sai)
        return TAP_PACKET_DONT_REDRAW;
    sai->frame_number = pinfo->num;
    sai->port_src = (guint16)pinfo->srcport;
    sai->port_dst = (guint16)pinfo->destport;
    sai->frame_label = g_strdup(label);
    sai->comment = g_strdup(comment);
    sai->conv_num = (guint16)conv;
    sai->line_style = 1;
    sai->display = TRUE;
    g_queue_push_tail(sainfo->items, sai);
    return TAP_PACKET_REDRAW;
}

char *fc_marks(wmem_allocator_t *scope, guint64 bits, const au_info_mark_t *table, size_t n)
{
    wmem_strbuf_t *b = wmem_strbuf_new(scope, "");

    for (size_t i = 0; i < n; i++)
        if ((bits & table[i].when) && !(bits & table[i].unless))
            wmem_strbuf_append(b, table[i].mark);
    return wmem_strbuf_finalize(b);
}

/* A protocol's conversation and endpoint filters: Wireshark hands the
 * callbacks the row, whose dissector_info is the first member of this. */
typedef struct fc_filters {
    ct_dissector_info_t conv;
    et_dissector_info_t endpoint;
    char *end, *src_end, *dst_end;   /* the field names */
} fc_filters_t;

static const char *filter_name(const fc_filters_t *f, conv_filter_type_e filter)
{
    switch (filter) {
    case CONV_FT_SRC_ADDRESS: return f->src_end;
    case CONV_FT_DST_ADDRESS: return f->dst_end;
    case CONV_FT_ANY_ADDRESS: return f->end;
    default: return CONV_FILTER_INVALID;   /* no ports: they are in the names */
    }
}

static const char *conv_filter_type(conv_item_t *item, conv_filter_type_e filter)
{
    return filter_name((const fc_filters_t *)item->dissector_info, filter);
}

static const char *endpoint_filter_type(endpoint_item_t *item, conv_filter_type_e filter)
{
    const fc_filters_t *f = (const fc_filters_t *)((const char *)item->dissector_info -
                                                   G_STRUCT_OFFSET(fc_filters_t, endpoint));
    return filter_name(f, filter);
}

/* A protocol's filters, by protocol id (registration time only). */
static GHashTable *filters_by_proto;

static const fc_filters_t *proto_filters(int proto)
{
    return (const fc_filters_t *)g_hash_table_lookup(filters_by_proto, GINT_TO_POINTER(proto));
}

void fc_conv_register(int proto, tap_packet_cb conv_func, tap_packet_cb endpoint_func, fc_end_fields_t *fields)
{
    const char *abbrev = proto_get_protocol_filter_name(proto);
    fc_filters_t *f = g_new0(fc_filters_t, 1);
    hf_register_info *hf = g_new0(hf_register_info, 3);

    /* Lives as long as the registration (the rows point at it). */
    f->conv.get_filter_type = conv_filter_type;
    f->endpoint.get_filter_type = endpoint_filter_type;
    f->end = g_strdup_printf("%s.end", abbrev);
    f->src_end = g_strdup_printf("%s.src_end", abbrev);
    f->dst_end = g_strdup_printf("%s.dst_end", abbrev);
    if (!filters_by_proto)
        filters_by_proto = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_insert(filters_by_proto, GINT_TO_POINTER(proto), f);

    fields->end = fields->src_end = fields->dst_end = -1;
    hf[0] = (hf_register_info){ &fields->end, { "Either end", f->end, FT_STRING, BASE_NONE, NULL, 0x0,
        "Source or destination as the Conversations and Endpoints tabs name it", HFILL } };
    hf[1] = (hf_register_info){ &fields->src_end, { "Source end", f->src_end, FT_STRING, BASE_NONE, NULL, 0x0,
        "The source as the Conversations and Endpoints tabs name it", HFILL } };
    hf[2] = (hf_register_info){ &fields->dst_end, { "Destination end", f->dst_end, FT_STRING, BASE_NONE, NULL,
        0x0, "The destination as the Conversations and Endpoints tabs name it", HFILL } };
    proto_register_field_array(proto, hf, 3);
    /* the ports are in the names: no port columns */
    register_conversation_table(proto, TRUE, conv_func, endpoint_func);
}

gboolean fc_end_fields_wanted(proto_tree *tree, const fc_end_fields_t *fields)
{
    return tree && (proto_field_is_referenced(tree, fields->end) || proto_field_is_referenced(tree, fields->src_end) ||
                    proto_field_is_referenced(tree, fields->dst_end));
}

void fc_add_end_fields(proto_tree *tree, tvbuff_t *tvb, const fc_end_fields_t *fields, const char *src,
                       const char *dst)
{
    proto_item *ti;

    ti = proto_tree_add_string(tree, fields->src_end, tvb, 0, 0, src);
    proto_item_set_hidden(ti);
    proto_item_set_generated(ti);
    ti = proto_tree_add_string(tree, fields->dst_end, tvb, 0, 0, dst);
    proto_item_set_hidden(ti);
    proto_item_set_generated(ti);
    ti = proto_tree_add_string(tree, fields->end, tvb, 0, 0, src);
    proto_item_set_hidden(ti);
    proto_item_set_generated(ti);
    ti = proto_tree_add_string(tree, fields->end, tvb, 0, 0, dst);
    proto_item_set_hidden(ti);
    proto_item_set_generated(ti);
}

char *fc_end_name(wmem_allocator_t *scope, const address *addr, guint32 port)
{
    char *a = address_to_str(scope, addr);
    char *s = addr->type == AT_IPv6 ? wmem_strdup_printf(scope, "[%s]:%u", a, port)
                                    : wmem_strdup_printf(scope, "%s:%u", a, port);

    wmem_free(scope, a);
    return s;
}

char *fc_src_name(packet_info *pinfo)
{
    return fc_end_name(pinfo->pool, &pinfo->src, pinfo->srcport);
}

char *fc_dst_name(packet_info *pinfo)
{
    return fc_end_name(pinfo->pool, &pinfo->dst, pinfo->destport);
}

/* A name as an address of the table (copied by the table). */
static void name_address(address *a, const char *name)
{
    set_address(a, AT_STRINGZ, (int)strlen(name) + 1, name);
}

/* The table a conversation or endpoint tap adds to, its flags set, and the
 * packet's two ends as addresses of the table. */
static conv_hash_t *ends_of(void *tapdata, tap_flags_t flags, const char *src, const char *dst, address *a,
                            address *b)
{
    conv_hash_t *hash = (conv_hash_t *)tapdata;

    hash->flags = flags;
    name_address(a, src);
    name_address(b, dst);
    return hash;
}

tap_packet_status fc_conv_add(void *tapdata, packet_info *pinfo, tap_flags_t flags, int proto, const char *src,
                              const char *dst, guint32 id)
{
    address a, b;
    conv_hash_t *hash = ends_of(tapdata, flags, src, dst, &a, &b);
    const fc_filters_t *f = proto_filters(proto);

    add_conversation_table_data_with_conv_id(hash, &a, &b, 0, 0, (conv_id_t)id, 1, pinfo->fd->pkt_len,
                                             &pinfo->rel_ts, &pinfo->abs_ts, (ct_dissector_info_t *)&f->conv, CONVERSATION_NONE);
    return TAP_PACKET_REDRAW;
}

tap_packet_status fc_endpoint_add(void *tapdata, packet_info *pinfo, tap_flags_t flags, int proto, const char *src,
                                  const char *dst)
{
    address a, b;
    conv_hash_t *hash = ends_of(tapdata, flags, src, dst, &a, &b);
    const fc_filters_t *f = proto_filters(proto);

    add_endpoint_table_data(hash, &a, 0, TRUE, 1, pinfo->fd->pkt_len, (et_dissector_info_t *)&f->endpoint, ENDPOINT_NONE);
    add_endpoint_table_data(hash, &b, 0, FALSE, 1, pinfo->fd->pkt_len, (et_dissector_info_t *)&f->endpoint, ENDPOINT_NONE);
    return TAP_PACKET_REDRAW;
}
