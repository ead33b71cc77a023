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

static void text_collect(su_seen_t *seen, const void *data)
{
    su_seen_add(seen, ((const ng_tap_info_t *)data)->conn);
}

static void text_head(void)
{
    printf("Netgame connections (one row per direction; RTT in ms at this capture point)\n");
    printf("%-4s %-45s %7s %7s %6s %6s %8s %8s %8s %8s %10s %8s %8s %4s %8s %8s\n",
           "Conn", "Direction", "Packets", "Acked", "Lost", "Loss%", "RTTmin", "RTTmean", "RTTmax",
           "sRTT", "Payload/s", "Good s", "Bad s", "Sw", "First", "Last");
}

static void text_rows(wmem_allocator_t *scope, const void *obj)
{
    const ng_conn_t *c = (const ng_conn_t *)obj;

    for (guint d = 0; d < 2; d++) {
        row_vals_t v;
        if (!c->dir[d].active)
            continue;
        row_values(&c->dir[d], &v);
        printf("%-4u %-45s %7u %7u %6u %6.1f %8.1f %8.1f %8.1f %8.1f %10.0f %8.2f %8.2f %4u %8u %8u\n",
               c->index, direction_str(scope, &c->dir[d]), v.packets, v.acked, v.lost, v.loss_pct,
               v.rtt_min_ms, v.rtt_mean_ms, v.rtt_max_ms, v.srtt_ms, v.payload_bps, v.good_s, v.bad_s,
               v.switches, v.first, v.last);
    }
}

static guint text_diagnosis(wmem_allocator_t *scope, const void *obj, gboolean print)
{
    const ng_conn_t *c = (const ng_conn_t *)obj;
    guint n = 0;

    for (guint d = 0; d < 2; d++) {
        char *diag = netgame_dir_diagnosis(scope, c, d);
        if (!diag)
            continue;
        n++;
        if (print)
            printf("Conn %u %s: %s\n", c->index, direction_str(scope, &c->dir[d]), diag);
    }
    return n;
}

static const su_text_table_t text_table = {
    .title = "Netgame connections", .cli = "netgame,conns", .tap = "netgame", .rule = 149,
    .collect = text_collect, .head = text_head, .rows = text_rows, .diagnosis = text_diagnosis
};

/* ---- The same table in the GUI -------------------------------------------- */

enum {
    COL_CONN, COL_DIRECTION, COL_DIAGNOSIS, COL_PACKETS, COL_ACKED, COL_LOST, COL_LOSS, COL_RTT_MIN,
    COL_RTT_MEAN, COL_RTT_MAX, COL_SRTT, COL_PAYLOAD, COL_GOOD, COL_BAD, COL_SWITCHES, COL_FIRST, COL_LAST,
    COL_N
};

static stat_tap_table_item table_fields[] = {
    SU_FIRST_UINT_FIELD("Connection"), SU_COL_TEXT("Direction"),
    /* What matters first: a dialog opens about 600 pixels wide. */
    SU_COL_TEXT("Diagnosis"), SU_COL_UINT("Packets"), SU_COL_UINT("Acked"), SU_COL_UINT("Lost"),
    SU_COL_FIGURE("Loss (%)"), SU_COL_FIGURE("RTT min (ms)"), SU_COL_FIGURE("RTT mean (ms)"),
    SU_COL_FIGURE("RTT max (ms)"), SU_COL_FIGURE("Smoothed RTT (ms)"), SU_COL_FIGURE("Payload (bytes/s)"),
    SU_COL_FIGURE("Good (s)"), SU_COL_FIGURE("Bad (s)"), SU_COL_UINT("Switches"), SU_COL_UINT("First frame"),
    SU_COL_UINT("Last frame"),
};

/* Fills the row of direction d of connection c. */
static void fill_row(stat_tap_table *table, guint row, const ng_conn_t *c, guint d, packet_info *pinfo)
{
    row_vals_t v;

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

static tap_packet_status table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data)
{
    const ng_conn_t *c = ((const ng_tap_info_t *)data)->conn;

    /* Both directions: an ack in one changes the other's counts. */
    for (guint d = 0; d < 2; d++) {
        const ng_dir_t *dir = &c->dir[d];
        if (dir->active)
            fill_row(table, su_table_dir_row(tapdata, c->index * 2 + d + 1, COL_DIRECTION, &dir->src, dir->sport,
                                             &dir->dst, dir->dport), c, d, pinfo);
    }
    return TAP_PACKET_REDRAW;
}

void netgame_stats_register(void)
{
    static stat_tap_table_ui table_ui;

    su_register_text_table(&text_table);
    su_register_table_ui(&table_ui, "Netgame Connections", "Netgame connections",
                         "netgame", "netgame,conns_table", table_fill, table_fields, array_length(table_fields));
}
