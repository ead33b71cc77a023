/* netgame/stats.c
 * The netgame connections table: tshark -z netgame,conns (with diagnosis
 * lines) and the same table in the GUI (Statistics > Netgame Connections).
 * One row per connection and direction.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "common/ws-compat.h"
#include "netgame-int.h"
#include "common/stats-util.h"

/* ---- Row values shared by the text and GUI tables ------------------------ */

typedef struct row_vals {
    guint32 packets, acked, lost;
    double loss_pct;
    double rtt_min_ms, rtt_mean_ms, rtt_max_ms, srtt_ms;
    double payload_bps;   /* payload bytes per second */
    double good_s, bad_s;
    guint32 switches, first, last;
} row_vals_t;

static void row_values(const ng_dir_t *d, row_vals_t *v)
{
    gint64 good, bad, span;

    memset(v, 0, sizeof *v);
    v->packets = d->packets;
    v->acked = d->acked;
    v->lost = netgame_dir_lost_final(d);
    v->loss_pct = d->packets ? 100.0 * v->lost / d->packets : 0.0;
    if (d->acked) {
        v->rtt_min_ms = (double)d->rtt_min_ns / 1e6;
        v->rtt_mean_ms = (double)d->rtt_sum_ns / d->acked / 1e6;
        v->rtt_max_ms = (double)d->rtt_max_ns / 1e6;
    }
    v->srtt_ms = d->srtt * 1000.0;
    span = d->last_ns - d->first_ns;
    v->payload_bps = span > 0 ? (double)d->payload_bytes * 1e9 / (double)span : 0.0;
    netgame_dir_mode_times(d, &good, &bad);
    v->good_s = (double)good / 1e9;
    v->bad_s = (double)bad / 1e9;
    v->switches = d->switches;
    v->first = d->first_frame;
    v->last = d->last_frame;
}

static char *direction_str(wmem_allocator_t *scope, const ng_dir_t *d)
{
    return su_direction_str(scope, &d->src, d->sport, &d->dst, d->dport);
}

/* ---- tshark -z netgame,conns --------------------------------------------- */

/* The tap data is a su_seen_t of the connections, in order of first sight. */
static tap_packet_status text_packet(void *p, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    su_seen_add((su_seen_t *)p, ((const ng_tap_info_t *)data)->conn);
    return TAP_PACKET_REDRAW;
}

static void text_draw(void *p)
{
    su_seen_t *seen = (su_seen_t *)p;
    wmem_allocator_t *scope = wmem_allocator_new(WMEM_ALLOCATOR_SIMPLE);
    guint bad = 0;

    printf("\n=====================================================================================================================================================\n");
    printf("Netgame connections (one row per direction; RTT in ms at this capture point)\n");
    printf("%-4s %-45s %7s %7s %6s %6s %8s %8s %8s %8s %10s %8s %8s %4s %8s %8s\n",
           "Conn", "Direction", "Packets", "Acked", "Lost", "Loss%", "RTTmin", "RTTmean", "RTTmax",
           "sRTT", "Payload/s", "Good s", "Bad s", "Sw", "First", "Last");
    for (guint i = 0; i < su_seen_len(seen); i++) {
        const ng_conn_t *c = (const ng_conn_t *)su_seen_get(seen, i);
        for (guint d = 0; d < 2; d++) {
            row_vals_t v;
            if (!c->dir[d].active)
                continue;
            row_values(&c->dir[d], &v);
            printf("%-4u %-45s %7u %7u %6u %6.1f %8.1f %8.1f %8.1f %8.1f %10.0f %8.2f %8.2f %4u %8u %8u\n",
                   c->index, direction_str(scope, &c->dir[d]), v.packets, v.acked, v.lost, v.loss_pct,
                   v.rtt_min_ms, v.rtt_mean_ms, v.rtt_max_ms, v.srtt_ms, v.payload_bps, v.good_s, v.bad_s,
                   v.switches, v.first, v.last);
            if (netgame_dir_diagnosis(scope, c, d))
                bad++;
        }
    }
    if (bad) {
        printf("\nDiagnosis:\n");
        for (guint i = 0; i < su_seen_len(seen); i++) {
            const ng_conn_t *c = (const ng_conn_t *)su_seen_get(seen, i);
            for (guint d = 0; d < 2; d++) {
                char *diag = netgame_dir_diagnosis(scope, c, d);
                if (diag)
                    printf("Conn %u %s: %s\n", c->index, direction_str(scope, &c->dir[d]), diag);
            }
        }
    }
    printf("=====================================================================================================================================================\n");
    wmem_destroy_allocator(scope);
}

static CS_TAP_INIT_RET text_init(const char *opt_arg, void *userdata _U_)
{
    if (!su_text_listen(opt_arg, "netgame,conns", "netgame", su_seen_new(), su_seen_tap_reset, text_packet,
                        text_draw, su_seen_tap_finish))
        CS_TAP_INIT_FAILED;
    CS_TAP_INIT_OK;
}

/* ---- The same table in the GUI -------------------------------------------- */

enum {
    COL_CONN, COL_DIRECTION, COL_PACKETS, COL_ACKED, COL_LOST, COL_LOSS, COL_RTT_MIN, COL_RTT_MEAN,
    COL_RTT_MAX, COL_SRTT, COL_PAYLOAD, COL_GOOD, COL_BAD, COL_SWITCHES, COL_FIRST, COL_LAST,
    COL_DIAGNOSIS, COL_N
};

static stat_tap_table_item table_fields[] = {
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Connection", "%u" },
    { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Direction", "%s" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Packets", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Acked", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Lost", "%u" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Loss (%)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "RTT min (ms)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "RTT mean (ms)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "RTT max (ms)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Smoothed RTT (ms)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Payload (bytes/s)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Good (s)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Bad (s)", "%s" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Switches", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "First frame", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Last frame", "%u" },
    { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Diagnosis", "%s" },
};

static tap_packet_status table_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data, tap_flags_t flags _U_)
{
    const ng_tap_info_t *ti = (const ng_tap_info_t *)data;
    stat_tap_table *table = su_table(tapdata);
    const ng_conn_t *c = ti->conn;
    gboolean created;
    guint row;
    row_vals_t v;

    if (!table)
        return TAP_PACKET_DONT_REDRAW;
    /* Both directions: an ack in one changes the other's counts. */
    for (guint d = 0; d < 2; d++) {
        if (!c->dir[d].active)
            continue;
        row = su_table_row(tapdata, c->index * 2 + d + 1, &created);
        if (created)
            su_set_string(table, row, COL_DIRECTION, direction_str(pinfo->pool, &c->dir[d]));
        row_values(&c->dir[d], &v);
        su_set_uint(table, row, COL_CONN, c->index);
        su_set_uint(table, row, COL_PACKETS, v.packets);
        su_set_uint(table, row, COL_ACKED, v.acked);
        su_set_uint(table, row, COL_LOST, v.lost);
        su_set_decimal(table, row, COL_LOSS, v.loss_pct, 1);
        su_set_decimal(table, row, COL_RTT_MIN, v.rtt_min_ms, 1);
        su_set_decimal(table, row, COL_RTT_MEAN, v.rtt_mean_ms, 1);
        su_set_decimal(table, row, COL_RTT_MAX, v.rtt_max_ms, 1);
        su_set_decimal(table, row, COL_SRTT, v.srtt_ms, 1);
        su_set_decimal(table, row, COL_PAYLOAD, v.payload_bps, 0);
        su_set_decimal(table, row, COL_GOOD, v.good_s, 2);
        su_set_decimal(table, row, COL_BAD, v.bad_s, 2);
        su_set_uint(table, row, COL_SWITCHES, v.switches);
        su_set_uint(table, row, COL_FIRST, v.first);
        su_set_uint(table, row, COL_LAST, v.last);
        su_set_string(table, row, COL_DIAGNOSIS, netgame_dir_diagnosis(pinfo->pool, c, d));
    }
    return TAP_PACKET_REDRAW;
}

void netgame_stats_register(void)
{
    static stat_tap_ui text_ui;
    static stat_tap_table_ui table_ui;

    su_register_text_ui(&text_ui, "Netgame connections", "netgame,conns", text_init);
    su_register_table_ui(&table_ui, "Netgame Connections", "Netgame connections",
                         "netgame", "netgame,conns_table", table_packet, table_fields, array_length(table_fields));
}
