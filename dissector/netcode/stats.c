/* stats.c
 * The netcode connections table: tshark -z netcode,conns (with a diagnosis
 * for every connection that did not come up or ended badly) and the same
 * table in the GUI (Statistics > netcode Connections). One row per
 * connection.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "common/ws-compat.h"
#include "netcode-int.h"
#include "common/stats-util.h"

static double rel_secs(const nstime_t *t)
{
    if (nstime_is_zero(t))
        return 0.0;
    return (double)((gint64)t->secs - (gint64)nc_first_time.secs) +
           (double)(t->nsecs - nc_first_time.nsecs) / 1e9;
}

/* When the connection reached its state (seconds from the first netcode frame). */
static double state_secs(const nc_conn_t *c)
{
    switch (c->state) {
    case NC_ST_CONNECTED: return rel_secs(&c->connected_time);
    case NC_ST_RESPONDED: return rel_secs(&c->response_time);
    case NC_ST_CHALLENGED: return rel_secs(&c->challenge_time);
    case NC_ST_REQUESTED: return rel_secs(&c->request_time);
    default: return 0.0;
    }
}

static char *endpoint_str(wmem_allocator_t *scope, const address *a, guint32 port)
{
    char *s = address_to_str(scope, a);
    return a->type == AT_IPv6 ? wmem_strdup_printf(scope, "[%s]:%u", s, port) : wmem_strdup_printf(scope, "%s:%u", s, port);
}

static char *client_id_str(wmem_allocator_t *scope, const nc_conn_t *c)
{
    return c->have_token ? wmem_strdup_printf(scope, "%" G_GUINT64_FORMAT, c->client_id) : wmem_strdup(scope, "-");
}

static double keep_alive_rate(const nc_dir_t *d)
{
    /* keep-alives per second over the direction's whole span (payloads
     * stand in for keep-alives while there are any) */
    double span = (double)(d->last_time.secs - d->first_time.secs) +
                  (double)(d->last_time.nsecs - d->first_time.nsecs) / 1e9;
    return span > 0 ? (double)d->by_type[NC_KEEP_ALIVE] / span : 0.0;
}

/* ---- tshark -z netcode,conns ---------------------------------------------- */

static void text_collect(su_seen_t *seen, const void *data)
{
    su_seen_add(seen, ((const nc_tap_info_t *)data)->conn);
}

static void text_head(void)
{
    printf("netcode connections (times in seconds from the first netcode packet; c>s client to server, s>c server to client)\n");
    printf("%-4s %-22s %-22s %-20s %-10s %8s %7s %9s %7s %9s %6s %5s %6s %6s %7s %7s  %s\n",
           "Conn", "Client", "Server", "Client id", "State", "When", "Pkt c>s", "Bytes c>s", "Pkt s>c", "Bytes s>c",
           "Lost", "Dup", "Replay", "Undec", "KA/s c", "KA/s s", "Ended");
}

static void text_rows(wmem_allocator_t *scope, const void *obj)
{
    const nc_conn_t *c = (const nc_conn_t *)obj;

    printf("%-4u %-22s %-22s %-20s %-10s %8.3f %7u %9" G_GUINT64_FORMAT " %7u %9" G_GUINT64_FORMAT
           " %6" G_GUINT64_FORMAT " %5u %6u %6u %7.1f %7.1f  %s\n",
           c->index, endpoint_str(scope, &c->client, c->client_port),
           endpoint_str(scope, &c->server, c->server_port), client_id_str(scope, c), nc_state_name(c->state),
           state_secs(c), c->dir[0].packets, c->dir[0].bytes, c->dir[1].packets, c->dir[1].bytes,
           c->dir[0].lost + c->dir[1].lost, c->dir[0].dups + c->dir[1].dups,
           c->dir[0].replays + c->dir[1].replays, c->decrypt_failed, keep_alive_rate(&c->dir[0]),
           keep_alive_rate(&c->dir[1]), nc_end_name(c));
}

static guint text_diagnosis(wmem_allocator_t *scope, const void *obj, gboolean print)
{
    const nc_conn_t *c = (const nc_conn_t *)obj;
    char *diag = nc_conn_diagnosis(scope, c);

    if (diag && print)
        printf("Conn %u %s -> %s: %s\n", c->index, endpoint_str(scope, &c->client, c->client_port),
               endpoint_str(scope, &c->server, c->server_port), diag);
    return diag != NULL;
}

static const su_text_table_t text_table = {
    .title = "netcode connections", .cli = "netcode,conns", .tap = "netcode", .rule = 162,
    .collect = text_collect, .head = text_head, .rows = text_rows, .diagnosis = text_diagnosis
};

/* ---- The same table in the GUI ---------------------------------------------- */

enum {
    COL_CONN, COL_CLIENT, COL_SERVER, COL_CLIENT_ID, COL_STATE, COL_WHEN, COL_PKT_C2S, COL_BYTES_C2S,
    COL_PKT_S2C, COL_BYTES_S2C, COL_LOST, COL_DUP, COL_REPLAY, COL_UNDEC, COL_ENDED, COL_DIAGNOSIS
};

static stat_tap_table_item table_fields[] = {
    SU_FIRST_UINT_FIELD("Connection"), SU_COL_TEXT("Client"), SU_COL_TEXT("Server"), SU_COL_FIGURE("Client id"),
    SU_COL_TEXT("State"), SU_COL_FIGURE("When (s)"), SU_COL_UINT("Packets c>s"), SU_COL_UINT("Bytes c>s"),
    SU_COL_UINT("Packets s>c"), SU_COL_UINT("Bytes s>c"), SU_COL_UINT("Lost"), SU_COL_UINT("Duplicates"),
    SU_COL_UINT("Replays"), SU_COL_UINT("Undecryptable"), SU_COL_TEXT("Ended"), SU_COL_TEXT("Diagnosis"),
};

static tap_packet_status table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data)
{
    const nc_conn_t *c = ((const nc_tap_info_t *)data)->conn;
    gboolean created;
    guint row = su_table_row(tapdata, c->index + 1, &created);

    if (created) {
        su_set_string(table, row, COL_CLIENT, endpoint_str(pinfo->pool, &c->client, c->client_port));
        su_set_string(table, row, COL_SERVER, endpoint_str(pinfo->pool, &c->server, c->server_port));
    }
    su_set_uint(table, row, COL_CONN, c->index);
    su_set_string(table, row, COL_CLIENT_ID, client_id_str(pinfo->pool, c));
    su_set_string(table, row, COL_STATE, nc_state_name(c->state));
    su_set_decimal(table, row, COL_WHEN, state_secs(c), 3);
    su_set_uint(table, row, COL_PKT_C2S, c->dir[0].packets);
    su_set_uint(table, row, COL_BYTES_C2S, (guint)c->dir[0].bytes);
    su_set_uint(table, row, COL_PKT_S2C, c->dir[1].packets);
    su_set_uint(table, row, COL_BYTES_S2C, (guint)c->dir[1].bytes);
    su_set_uint(table, row, COL_LOST, (guint)(c->dir[0].lost + c->dir[1].lost));
    su_set_uint(table, row, COL_DUP, c->dir[0].dups + c->dir[1].dups);
    su_set_uint(table, row, COL_REPLAY, c->dir[0].replays + c->dir[1].replays);
    su_set_uint(table, row, COL_UNDEC, c->decrypt_failed);
    su_set_string(table, row, COL_ENDED, nc_end_name(c));
    su_set_string(table, row, COL_DIAGNOSIS, nc_conn_diagnosis(pinfo->pool, c));
    return TAP_PACKET_REDRAW;
}

void nc_stats_register(void)
{
    static stat_tap_table_ui table_ui;

    su_register_text_table(&text_table);
    su_register_table_ui(&table_ui, "Netcode Connections", "Netcode connections", "netcode",
                         "netcode,conns_table", table_fill, table_fields, array_length(table_fields));
}
