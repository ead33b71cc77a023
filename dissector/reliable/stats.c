/* stats.c
 * The reliable connections table: tshark -z reliable,conns and the same
 * table in the GUI (Statistics > Reliable Connections). One row per
 * conversation and direction.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

#include "common/ws-compat.h"
#include "reliable-int.h"
#include "common/stats-util.h"

typedef struct row_vals {
    guint32 packets, fragments, reassembled, incomplete, acked, lost, dups, reordered, gap_seqs, bad;
    double loss_pct, rtt_min_ms, rtt_mean_ms, rtt_max_ms;
} row_vals_t;

static void row_values(const rl_dir_t *d, row_vals_t *v)
{
    memset(v, 0, sizeof *v);
    v->packets = d->packets;
    v->fragments = d->fragments;
    v->reassembled = d->reassembled;
    v->incomplete = d->incomplete;
    v->acked = d->acked;
    v->lost = d->lost;
    v->dups = d->dups;
    v->reordered = d->reordered;
    v->gap_seqs = d->gap_seqs;
    v->bad = d->bad;
    v->loss_pct = d->acked + d->lost ? 100.0 * d->lost / (d->acked + d->lost) : 0.0;
    if (d->acked) {
        v->rtt_min_ms = (double)d->rtt_min_ns / 1e6;
        v->rtt_mean_ms = (double)d->rtt_sum_ns / d->acked / 1e6;
        v->rtt_max_ms = (double)d->rtt_max_ns / 1e6;
    }
}

static char *direction_str(wmem_allocator_t *scope, const rl_dir_t *d)
{
    return su_direction_str(scope, &d->src, d->sport, &d->dst, d->dport);
}

/* ---- tshark -z reliable,conns -------------------------------------------- */

static void text_collect(su_seen_t *seen, const void *data)
{
    su_seen_add(seen, ((const rl_tap_info_t *)data)->conn);
}

static void text_head(void)
{
    printf("Reliable connections (one row per direction; RTT in ms at this capture point; loss of the decided packets)\n");
    printf("%-4s %-45s %7s %6s %6s %6s %7s %6s %6s %5s %5s %5s %5s %8s %8s %8s\n", "Conn", "Direction", "Packets",
           "Frags", "Reasm", "Incmpl", "Acked", "Lost", "Loss%", "Dups", "Reord", "Gaps", "Bad", "RTTmin", "RTTmean",
           "RTTmax");
}

static void text_rows(wmem_allocator_t *scope, const void *obj)
{
    const rl_conn_t *c = (const rl_conn_t *)obj;

    for (guint d = 0; d < 2; d++) {
        row_vals_t v;
        if (!c->dir[d].active)
            continue;
        row_values(&c->dir[d], &v);
        printf("%-4u %-45s %7u %6u %6u %6u %7u %6u %6.1f %5u %5u %5u %5u %8.1f %8.1f %8.1f\n", c->index,
               direction_str(scope, &c->dir[d]), v.packets, v.fragments, v.reassembled, v.incomplete, v.acked,
               v.lost, v.loss_pct, v.dups, v.reordered, v.gap_seqs, v.bad, v.rtt_min_ms, v.rtt_mean_ms,
               v.rtt_max_ms);
    }
}

static const su_text_table_t text_table = {
    .title = "Reliable connections", .cli = "reliable,conns", .tap = "reliable", .rule = 132,
    .collect = text_collect, .head = text_head, .rows = text_rows, .diagnosis = NULL
};

/* ---- The same table in the GUI -------------------------------------------- */

enum {
    COL_CONN, COL_DIRECTION, COL_PACKETS, COL_FRAGS, COL_REASM, COL_INCOMPLETE, COL_ACKED, COL_LOST, COL_LOSS,
    COL_DUPS, COL_REORD, COL_GAPS, COL_BAD, COL_RTT_MIN, COL_RTT_MEAN, COL_RTT_MAX, COL_N
};

static stat_tap_table_item table_fields[] = {
    SU_FIRST_UINT_FIELD("Connection"), SU_COL_TEXT("Direction"), SU_COL_UINT("Packets"), SU_COL_UINT("Fragments"),
    SU_COL_UINT("Reassembled"), SU_COL_UINT("Never completed"), SU_COL_UINT("Acked"), SU_COL_UINT("Lost"),
    SU_COL_FIGURE("Loss (%)"), SU_COL_UINT("Duplicates"), SU_COL_UINT("Reordered"), SU_COL_UINT("Sequences skipped"),
    SU_COL_UINT("Dropped by the receiver's checks"), SU_COL_FIGURE("RTT min (ms)"), SU_COL_FIGURE("RTT mean (ms)"),
    SU_COL_FIGURE("RTT max (ms)"),
};

/* Fills the row of direction d of connection c. */
static void fill_row(stat_tap_table *table, guint row, const rl_conn_t *c, guint d)
{
    row_vals_t v;

    row_values(&c->dir[d], &v);
    su_set_uint(table, row, COL_CONN, c->index);
    su_set_uint(table, row, COL_PACKETS, v.packets);
    su_set_uint(table, row, COL_FRAGS, v.fragments);
    su_set_uint(table, row, COL_REASM, v.reassembled);
    su_set_uint(table, row, COL_INCOMPLETE, v.incomplete);
    su_set_uint(table, row, COL_ACKED, v.acked);
    su_set_uint(table, row, COL_LOST, v.lost);
    su_set_decimal(table, row, COL_LOSS, v.loss_pct, 1);
    su_set_uint(table, row, COL_DUPS, v.dups);
    su_set_uint(table, row, COL_REORD, v.reordered);
    su_set_uint(table, row, COL_GAPS, v.gap_seqs);
    su_set_uint(table, row, COL_BAD, v.bad);
    su_set_decimal(table, row, COL_RTT_MIN, v.rtt_min_ms, 1);
    su_set_decimal(table, row, COL_RTT_MEAN, v.rtt_mean_ms, 1);
    su_set_decimal(table, row, COL_RTT_MAX, v.rtt_max_ms, 1);
}

static tap_packet_status table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo _U_, const void *data)
{
    const rl_conn_t *c = ((const rl_tap_info_t *)data)->conn;

    if (!c)
        return TAP_PACKET_DONT_REDRAW;
    for (guint d = 0; d < 2; d++) {
        const rl_dir_t *dir = &c->dir[d];
        if (dir->active)
            fill_row(table, su_table_dir_row(tapdata, c->index * 2 + d + 1, COL_DIRECTION, &dir->src, dir->sport,
                                             &dir->dst, dir->dport), c, d);
    }
    return TAP_PACKET_REDRAW;
}

void reliable_stats_register(void)
{
    static stat_tap_table_ui table_ui;

    su_register_text_table(&text_table);
    su_register_table_ui(&table_ui, "Reliable Connections", "Reliable connections", "reliable",
                         "reliable,conns_table", table_fill, table_fields, array_length(table_fields));
}
