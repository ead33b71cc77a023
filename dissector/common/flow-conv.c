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

/* The rows' ends are names, not addresses with a field to filter on:
 * Apply as Filter offers nothing for them (filter on the protocol's own
 * fields instead, netcode.client_id, chunk.stream...). */
static const char *conv_filter_type(conv_item_t *item _U_, conv_filter_type_e filter _U_)
{
    return CONV_FILTER_INVALID;
}

static const char *endpoint_filter_type(endpoint_item_t *item _U_, conv_filter_type_e filter _U_)
{
    return CONV_FILTER_INVALID;
}

static ct_dissector_info_t conv_info = { &conv_filter_type };
static et_dissector_info_t endpoint_info = { &endpoint_filter_type };

void fc_conv_register(int proto, tap_packet_cb conv_func, tap_packet_cb endpoint_func)
{
    /* the ports are in the names: no port columns */
    register_conversation_table(proto, TRUE, conv_func, endpoint_func);
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

tap_packet_status fc_conv_add(void *tapdata, packet_info *pinfo, tap_flags_t flags, const char *src,
                              const char *dst, guint32 id)
{
    conv_hash_t *hash = (conv_hash_t *)tapdata;
    address a, b;

    hash->flags = flags;
    name_address(&a, src);
    name_address(&b, dst);
    add_conversation_table_data_with_conv_id(hash, &a, &b, 0, 0, (conv_id_t)id, 1, pinfo->fd->pkt_len,
                                             &pinfo->rel_ts, &pinfo->abs_ts, &conv_info, CONVERSATION_NONE);
    return TAP_PACKET_REDRAW;
}

tap_packet_status fc_endpoint_add(void *tapdata, packet_info *pinfo, tap_flags_t flags, const char *src,
                                  const char *dst)
{
    conv_hash_t *hash = (conv_hash_t *)tapdata;
    address a, b;

    hash->flags = flags;
    name_address(&a, src);
    name_address(&b, dst);
    add_endpoint_table_data(hash, &a, 0, TRUE, 1, pinfo->fd->pkt_len, &endpoint_info, ENDPOINT_NONE);
    add_endpoint_table_data(hash, &b, 0, FALSE, 1, pinfo->fd->pkt_len, &endpoint_info, ENDPOINT_NONE);
    return TAP_PACKET_REDRAW;
}
