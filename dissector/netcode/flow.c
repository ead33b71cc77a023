/* flow.c
 * netcode's Flow Graph (Statistics > Flow Graph, "Netcode Flows"; tshark
 * -z flow,netcode,network): an arrow per packet between client and
 * server, the handshake's steps, keep-alives, payloads and disconnects
 * named, with their sequence and the analysis' marks; and its
 * Conversations and Endpoints tabs (tshark -z conv,netcode and
 * -z endpoints,netcode): one row per connection, the client named with
 * its client id when the request's token was decrypted. Both read the
 * "netcode" tap's records (dissect.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/tap.h>

#include "common/ws-compat.h"
#include "netcode-int.h"
#include "common/flow-conv.h"

static int proto_netcode_flow = -1;   /* netcode's, for its Conversations rows */
static fc_end_fields_t end_fields;

/* The sequence as the Info column shows it: a server's challenge and
 * denial count from 2^63. */
static char *seq_str(wmem_allocator_t *scope, guint8 type, guint64 seq)
{
    if (seq >= NC_GLOBAL_SEQ_BASE && (type == NC_CHALLENGE || type == NC_DENIED))
        return wmem_strdup_printf(scope, "seq 2^63+%" G_GUINT64_FORMAT, seq - NC_GLOBAL_SEQ_BASE);
    return wmem_strdup_printf(scope, "seq %" G_GUINT64_FORMAT, seq);
}

/* What the packet is, in words. */
static char *comment(wmem_allocator_t *scope, const nc_tap_info_t *t)
{
    const nc_conn_t *c = t->conn;
    const char *enc = t->type != NC_REQUEST && !t->decrypted ? ", encrypted" : "";

    switch (t->type) {
    case NC_REQUEST:
        if (c->have_token)
            return wmem_strdup_printf(scope, "Connection request, client id %" G_GUINT64_FORMAT, c->client_id);
        return wmem_strdup(scope, "Connection request");
    case NC_DENIED:
        return wmem_strdup_printf(scope, "Connection denied, %s%s", seq_str(scope, t->type, t->seq), enc);
    case NC_CHALLENGE:
        return wmem_strdup_printf(scope, "Connection challenge, %s%s", seq_str(scope, t->type, t->seq), enc);
    case NC_RESPONSE:
        return wmem_strdup_printf(scope, "Challenge response, %s%s", seq_str(scope, t->type, t->seq), enc);
    case NC_KEEP_ALIVE:
        if (t->rec->dir == NC_S2C && c->have_client_index)
            return wmem_strdup_printf(scope, "Keep-alive, %s, client index %u of %u%s",
                                      seq_str(scope, t->type, t->seq), c->client_index, c->max_clients, enc);
        return wmem_strdup_printf(scope, "Keep-alive, %s%s", seq_str(scope, t->type, t->seq), enc);
    case NC_PAYLOAD:
        return wmem_strdup_printf(scope, "Payload, %s, %u bytes%s", seq_str(scope, t->type, t->seq), t->data_len,
                                  enc);
    case NC_DISCONNECT:
        return wmem_strdup_printf(scope, "Disconnect, %s%s", seq_str(scope, t->type, t->seq), enc);
    default:
        return wmem_strdup(scope, "?");
    }
}

static tap_packet_status flow_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    const nc_tap_info_t *t = (const nc_tap_info_t *)data;
    const char *label = nc_type_short_name(t->type);

    if (t->type == NC_PAYLOAD)
        label = wmem_strdup_printf(pinfo->pool, "Payload (%u bytes)", t->data_len);
    return fc_flow_add(tapdata, pinfo, t->conn->index, label,
                       wmem_strdup_printf(pinfo->pool, "%s%s", comment(pinfo->pool, t),
                                          nc_analysis_marks(pinfo->pool, t->rec)));
}

/* The connection's client: "10.0.0.1:50000 client id 42" when the token
 * told the client id. */
static char *client_name(wmem_allocator_t *scope, const nc_conn_t *c)
{
    char *s = fc_end_name(scope, &c->client, c->client_port);

    if (!c->have_token)
        return s;
    return wmem_strdup_printf(scope, "%s client id %" G_GUINT64_FORMAT, s, c->client_id);
}

/* The packet's two ends, its sender first. */
static void packet_ends(packet_info *pinfo, const nc_tap_info_t *t, char **src, char **dst)
{
    const nc_conn_t *c = t->conn;
    char *client = client_name(pinfo->pool, c);
    char *server = fc_end_name(pinfo->pool, &c->server, c->server_port);

    *src = t->rec->dir == NC_C2S ? client : server;
    *dst = t->rec->dir == NC_C2S ? server : client;
}

static tap_packet_status conv_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags)
{
    const nc_tap_info_t *t = (const nc_tap_info_t *)data;
    char *src, *dst;

    packet_ends(pinfo, t, &src, &dst);
    return fc_conv_add(tapdata, pinfo, flags, proto_netcode_flow, src, dst, t->conn->index);
}

static tap_packet_status endpoint_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                         const void *data, tap_flags_t flags)
{
    char *src, *dst;

    packet_ends(pinfo, (const nc_tap_info_t *)data, &src, &dst);
    return fc_endpoint_add(tapdata, pinfo, flags, proto_netcode_flow, src, dst);
}

void nc_flow_end_fields(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const nc_conn_t *c, guint dir)
{
    char *client, *server;

    if (!fc_end_fields_wanted(tree, &end_fields))
        return;
    client = client_name(pinfo->pool, c);
    server = fc_end_name(pinfo->pool, &c->server, c->server_port);
    if (dir == NC_C2S)
        fc_add_end_fields(tree, tvb, &end_fields, client, server);
    else
        fc_add_end_fields(tree, tvb, &end_fields, server, client);
}

void nc_flow_register(int proto)
{
    proto_netcode_flow = proto;
    fc_flow_register("netcode", "Netcode Flows", proto, "netcode", flow_packet);
    fc_conv_register(proto, conv_packet, endpoint_packet, &end_fields);
}
