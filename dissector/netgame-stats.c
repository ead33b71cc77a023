/* netgame-stats.c
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

#include "ws-compat.h"
#include "netgame-int.h"

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
    char *s = address_to_str(scope, &d->src);
    char *t = address_to_str(scope, &d->dst);
    return wmem_strdup_printf(scope, "%s:%u -> %s:%u", s, d->sport, t, d->dport);
}

/* ---- tshark -z netgame,conns --------------------------------------------- */

typedef struct conns_text {
    GPtrArray *seen;      /* connections seen by the tap, in order */
    GHashTable *is_seen;
} conns_text_t;

static void text_reset(void *p)
{
    conns_text_t *ct = (conns_text_t *)p;
    g_ptr_array_set_size(ct->seen, 0);
    g_hash_table_remove_all(ct->is_seen);
}

static tap_packet_status text_packet(void *p, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    conns_text_t *ct = (conns_text_t *)p;
    const ng_tap_info_t *ti = (const ng_tap_info_t *)data;
    if (!g_hash_table_contains(ct->is_seen, ti->conn)) {
        g_hash_table_add(ct->is_seen, ti->conn);
        g_ptr_array_add(ct->seen, ti->conn);
    }
    return TAP_PACKET_REDRAW;
}

static void text_draw(void *p)
{
    conns_text_t *ct = (conns_text_t *)p;
    wmem_allocator_t *scope = wmem_allocator_new(WMEM_ALLOCATOR_SIMPLE);
    guint bad = 0;

    printf("\n=====================================================================================================================================================\n");
    printf("Netgame connections (one row per direction; RTT in ms at this capture point)\n");
    printf("%-4s %-45s %7s %7s %6s %6s %8s %8s %8s %8s %10s %8s %8s %4s %8s %8s\n",
           "Conn", "Direction", "Packets", "Acked", "Lost", "Loss%", "RTTmin", "RTTmean", "RTTmax",
           "sRTT", "Payload/s", "Good s", "Bad s", "Sw", "First", "Last");
    for (guint i = 0; i < ct->seen->len; i++) {
        const ng_conn_t *c = (const ng_conn_t *)g_ptr_array_index(ct->seen, i);
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
        for (guint i = 0; i < ct->seen->len; i++) {
            const ng_conn_t *c = (const ng_conn_t *)g_ptr_array_index(ct->seen, i);
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

static void text_finish(void *p)
{
    conns_text_t *ct = (conns_text_t *)p;
    g_ptr_array_free(ct->seen, TRUE);
    g_hash_table_destroy(ct->is_seen);
    g_free(ct);
}

static CS_TAP_INIT_RET text_init(const char *opt_arg, void *userdata _U_)
{
    conns_text_t *ct = g_new0(conns_text_t, 1);
    const char *filter = NULL;
    GString *err;

    /* -z netgame,conns[,filter] */
    if (strncmp(opt_arg, "netgame,conns,", 14) == 0)
        filter = opt_arg + 14;
    ct->seen = g_ptr_array_new();
    ct->is_seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    err = register_tap_listener("netgame", ct, filter, 0, text_reset, text_packet, text_draw, text_finish);
    if (err) {
        fprintf(stderr, "tshark: couldn't register netgame,conns tap: %s\n", err->str);
        g_string_free(err, TRUE);
        text_finish(ct);
        CS_TAP_INIT_FAILED;
    }
    CS_TAP_INIT_OK;
}

static tap_param text_params[] = {
    { PARAM_FILTER, "filter", "Filter", NULL, TRUE }
};

static stat_tap_ui text_ui = {
    REGISTER_STAT_GROUP_GENERIC, NULL, "netgame,conns", text_init,
    array_length(text_params), text_params
};

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
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Loss (%)", "%.1f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "RTT min (ms)", "%.1f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "RTT mean (ms)", "%.1f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "RTT max (ms)", "%.1f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Smoothed RTT (ms)", "%.1f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Payload (bytes/s)", "%.0f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Good (s)", "%.2f" },
    { TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Bad (s)", "%.2f" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Switches", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "First frame", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Last frame", "%u" },
    { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Diagnosis", "%s" },
};

/* Row of each direction (2 x connection + direction + 1 -> row + 1). */
static GHashTable *table_rows;

static void table_init(stat_tap_table_ui *ui)
{
    stat_tap_table *table = stat_tap_init_table("Netgame connections", COL_N, 0, NULL);
    stat_tap_add_table(ui, table);
    if (!table_rows)
        table_rows = g_hash_table_new(g_direct_hash, g_direct_equal);
}

static void set_uint(stat_tap_table *table, guint row, guint col, guint v)
{
    stat_tap_table_item_type *it = stat_tap_get_field_data(table, row, col);
    it->value.uint_value = v;
    stat_tap_set_field_data(table, row, col, it);
}

static void set_float(stat_tap_table *table, guint row, guint col, double v)
{
    stat_tap_table_item_type *it = stat_tap_get_field_data(table, row, col);
    it->value.float_value = v;
    stat_tap_set_field_data(table, row, col, it);
}

static void set_string(stat_tap_table *table, guint row, guint col, const char *v)
{
    stat_tap_table_item_type *it = stat_tap_get_field_data(table, row, col);
    if (it->value.string_value && v && strcmp(it->value.string_value, v) == 0)
        return;
    g_free((char *)it->value.string_value);
    it->value.string_value = g_strdup(v ? v : "");
    stat_tap_set_field_data(table, row, col, it);
}

static tap_packet_status table_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data, tap_flags_t flags _U_)
{
    stat_data_t *sd = (stat_data_t *)tapdata;
    const ng_tap_info_t *ti = (const ng_tap_info_t *)data;
    stat_tap_table *table = g_array_index(sd->stat_tap_data->tables, stat_tap_table *, 0);
    const ng_conn_t *c = ti->conn;
    guint key = c->index * 2 + ti->dir + 1;
    guint row;
    row_vals_t v;

    /* Both directions: an ack in one changes the other's counts. */
    for (guint d = 0; d < 2; d++) {
        if (!c->dir[d].active)
            continue;
        key = c->index * 2 + d + 1;
        row = GPOINTER_TO_UINT(g_hash_table_lookup(table_rows, GUINT_TO_POINTER(key)));
        if (!row) {
            stat_tap_table_item_type items[COL_N];
            memset(items, 0, sizeof items);
            for (guint k = 0; k < COL_N; k++)
                items[k].type = table_fields[k].type;
            items[COL_DIRECTION].value.string_value = direction_str(NULL, &c->dir[d]);
            items[COL_DIAGNOSIS].value.string_value = g_strdup("");
            row = table->num_elements + 1;
            stat_tap_init_table_row(table, row - 1, COL_N, items);
            g_hash_table_insert(table_rows, GUINT_TO_POINTER(key), GUINT_TO_POINTER(row));
        }
        row--;
        row_values(&c->dir[d], &v);
        set_uint(table, row, COL_CONN, c->index);
        set_uint(table, row, COL_PACKETS, v.packets);
        set_uint(table, row, COL_ACKED, v.acked);
        set_uint(table, row, COL_LOST, v.lost);
        set_float(table, row, COL_LOSS, v.loss_pct);
        set_float(table, row, COL_RTT_MIN, v.rtt_min_ms);
        set_float(table, row, COL_RTT_MEAN, v.rtt_mean_ms);
        set_float(table, row, COL_RTT_MAX, v.rtt_max_ms);
        set_float(table, row, COL_SRTT, v.srtt_ms);
        set_float(table, row, COL_PAYLOAD, v.payload_bps);
        set_float(table, row, COL_GOOD, v.good_s);
        set_float(table, row, COL_BAD, v.bad_s);
        set_uint(table, row, COL_SWITCHES, v.switches);
        set_uint(table, row, COL_FIRST, v.first);
        set_uint(table, row, COL_LAST, v.last);
        set_string(table, row, COL_DIAGNOSIS, netgame_dir_diagnosis(pinfo->pool, c, d));
    }
    return TAP_PACKET_REDRAW;
}

static void table_reset(stat_tap_table *table)
{
    for (guint r = 0; r < table->num_elements; r++)
        for (guint c = 0; c < COL_N; c++) {
            stat_tap_table_item_type *it = stat_tap_get_field_data(table, r, c);
            if (it->type == TABLE_ITEM_UINT)
                it->value.uint_value = 0;
            else if (it->type == TABLE_ITEM_FLOAT)
                it->value.float_value = 0.0;
        }
}

static void table_free_item(stat_tap_table *table _U_, guint row _U_, guint column,
                            stat_tap_table_item_type *field)
{
    if (column == COL_DIRECTION || column == COL_DIAGNOSIS) {
        g_free((char *)field->value.string_value);
        field->value.string_value = NULL;
    }
}

static tap_param table_params[] = {
    { PARAM_FILTER, "filter", "Filter", NULL, TRUE }
};

/* REGISTER_PACKET_STAT_GROUP_UNSORTED: the Qt GUI puts this group's tables
 * straight into the Statistics menu (GENERIC ones get no menu entry). */
static stat_tap_table_ui table_ui = {
    REGISTER_PACKET_STAT_GROUP_UNSORTED, "Netgame Connections", "netgame", "netgame,conns_table",
    table_init, table_packet, table_reset, table_free_item, NULL,
    array_length(table_fields), table_fields, array_length(table_params), table_params, NULL, 0
};

void netgame_stats_register(void)
{
    text_ui.title = "Netgame connections";
    register_stat_tap_ui(&text_ui, NULL);
    register_stat_tap_table_ui(&table_ui);
}
