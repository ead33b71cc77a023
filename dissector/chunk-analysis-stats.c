/* chunk-analysis-stats.c
 * Statistics of the chunk transfer analysis: the transfers table
 * (tshark -z chunk,transfers with diagnosis lines; the same table in the GUI
 * under Statistics), the stats tree (-z chunk,tree) and Export Objects.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/export_object.h>
#include <epan/stat_tap_ui.h>
#include <epan/stats_tree.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "packet-chunk.h"
#include "chunk-analysis-int.h"
#include "ws-compat.h"

/* ---- Export Objects ------------------------------------------------------ */

static tap_packet_status eo_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                   const void *data, tap_flags_t flags _U_)
{
    export_object_list_t *list = (export_object_list_t *)tapdata;
    const chunk_eo_t *eo = (const chunk_eo_t *)data;
    export_object_entry_t *e = g_new0(export_object_entry_t, 1);

    e->pkt_num = pinfo->num;
    e->hostname = address_to_str(NULL, &eo->t->flow->src);
    e->content_type = g_strdup("application/octet-stream");
    e->filename = g_strdup_printf("stream%u-chunk%u-transfer%u.bin", eo->t->flow->stream,
                                  eo->t->chunk_id, eo->t->index);
    e->payload_len = eo->len;
    e->payload_data = (guint8 *)g_memdup2(eo->data, eo->len);
    list->add_entry(list->gui_data, e);
    return TAP_PACKET_REDRAW;
}

/* ---- Row values shared by the text and GUI tables ------------------------ */

static gint64 transfer_duration_ns(const chunk_transfer_t *t)
{
    return (t->complete_frame ? t->complete_ns : t->last_ns) - t->first_ns;
}

static char *direction_str(wmem_allocator_t *scope, const chunk_flow_t *fl)
{
    char *s = address_to_str(scope, &fl->src);
    char *d = address_to_str(scope, &fl->dst);
    return wmem_strdup_printf(scope, "%s:%u -> %s:%u", s, fl->sport, d, fl->dport);
}

/* "complete in frame X", "stalled since frame X, missing 3-5,17" or
 * "incomplete, missing ...". */
static char *status_str(wmem_allocator_t *scope, const chunk_transfer_t *t)
{
    if (t->complete_frame)
        return wmem_strdup_printf(scope, "complete in frame %u", t->complete_frame);
    char *m = chunk_analysis_missing_ranges(scope, t);
    if (t->stall_frame)
        return wmem_strdup_printf(scope, "stalled since frame %u, missing %s", t->stall_since_frame, m);
    return wmem_strdup_printf(scope, "incomplete, missing %s", m);
}

/* Goodput in bit/s over the transfer time; 0 when not complete. */
static double goodput_bps(const chunk_transfer_t *t)
{
    gint64 d = transfer_duration_ns(t);
    if (!t->complete_frame || !t->size_known || d <= 0)
        return 0.0;
    return (double)t->size * 8e9 / (double)d;
}

/* Chunk bytes divided by the bytes of all its slice packets (UDP payload). */
static double efficiency(const chunk_transfer_t *t)
{
    if (!t->size_known || t->bytes_sent == 0)
        return 0.0;
    return (double)t->size / (double)t->bytes_sent;
}

/* ---- tshark -z chunk,transfers ------------------------------------------- */

typedef struct transfers_text {
    GPtrArray *seen;      /* transfers seen by the tap, in order */
    GHashTable *is_seen;
} transfers_text_t;

static void text_reset(void *p)
{
    transfers_text_t *tt = (transfers_text_t *)p;
    g_ptr_array_set_size(tt->seen, 0);
    g_hash_table_remove_all(tt->is_seen);
}

static tap_packet_status text_packet(void *p, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    transfers_text_t *tt = (transfers_text_t *)p;
    const chunk_tap_info_t *ti = (const chunk_tap_info_t *)data;
    if (ti->t && !g_hash_table_contains(tt->is_seen, ti->t)) {
        g_hash_table_add(tt->is_seen, ti->t);
        g_ptr_array_add(tt->seen, ti->t);
    }
    return TAP_PACKET_REDRAW;
}

static void text_draw(void *p)
{
    transfers_text_t *tt = (transfers_text_t *)p;
    wmem_allocator_t *scope = wmem_allocator_new(WMEM_ALLOCATOR_SIMPLE);
    guint i, bad = 0;

    printf("\n==================================================================================================================================\n");
    printf("Chunk transfers\n");
    printf("%-6s %-8s %-45s %5s %7s %6s %6s %7s %6s %5s %8s %8s %9s %12s %5s  %s\n",
           "Stream", "Transfer", "Direction", "Chunk", "Size", "Slices", "Pkts", "Resends", "Wasted",
           "Acks", "First", "Last", "Duration", "Goodput b/s", "Eff%", "Status");
    for (i = 0; i < tt->seen->len; i++) {
        const chunk_transfer_t *t = (const chunk_transfer_t *)g_ptr_array_index(tt->seen, i);
        char size[16];
        if (t->size_known)
            snprintf(size, sizeof size, "%u", t->size);
        else
            snprintf(size, sizeof size, "?");
        printf("%-6u %-8u %-45s %5u %7s %6u %6u %7u %6u %5u %8u %8u %9.3f %12.0f %5.1f  %s\n",
               t->flow->stream, t->index, direction_str(scope, t->flow), t->chunk_id, size,
               t->num_slices, t->slice_pkts, t->resends, t->wasted, t->acks, t->first_frame,
               t->last_frame, (double)transfer_duration_ns(t) / 1e9, goodput_bps(t),
               100.0 * efficiency(t), status_str(scope, t));
        if (chunk_analysis_diagnosis(scope, t))
            bad++;
    }
    if (bad) {
        printf("\nDiagnosis:\n");
        for (i = 0; i < tt->seen->len; i++) {
            const chunk_transfer_t *t = (const chunk_transfer_t *)g_ptr_array_index(tt->seen, i);
            char *d = chunk_analysis_diagnosis(scope, t);
            if (d)
                printf("Stream %u transfer %u (chunk %u): %s\n", t->flow->stream, t->index, t->chunk_id, d);
        }
    }
    printf("==================================================================================================================================\n");
    wmem_destroy_allocator(scope);
}

static void text_finish(void *p)
{
    transfers_text_t *tt = (transfers_text_t *)p;
    g_ptr_array_free(tt->seen, TRUE);
    g_hash_table_destroy(tt->is_seen);
    g_free(tt);
}

static CS_TAP_INIT_RET text_init(const char *opt_arg, void *userdata _U_)
{
    transfers_text_t *tt = g_new0(transfers_text_t, 1);
    const char *filter = NULL;
    GString *err;

    /* -z chunk,transfers[,filter] */
    if (strncmp(opt_arg, "chunk,transfers,", 16) == 0)
        filter = opt_arg + 16;
    tt->seen = g_ptr_array_new();
    tt->is_seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    err = register_tap_listener("chunk_transfers", tt, filter, 0, text_reset, text_packet,
                                text_draw, text_finish);
    if (err) {
        fprintf(stderr, "tshark: couldn't register chunk,transfers tap: %s\n", err->str);
        g_string_free(err, TRUE);
        text_finish(tt);
        CS_TAP_INIT_FAILED;
    }
    CS_TAP_INIT_OK;
}

static tap_param text_params[] = {
    { PARAM_FILTER, "filter", "Filter", NULL, TRUE }
};

static stat_tap_ui text_ui = {
    REGISTER_STAT_GROUP_GENERIC, NULL, "chunk,transfers", text_init,
    array_length(text_params), text_params
};

/* ---- The same table in the GUI (Statistics > Chunk Transfers) ------------ */

enum {
    COL_STREAM, COL_TRANSFER, COL_DIRECTION, COL_CHUNK, COL_SIZE, COL_SLICES, COL_PKTS,
    COL_RESENDS, COL_WASTED, COL_ACKS, COL_FIRST, COL_LAST, COL_DURATION, COL_GOODPUT,
    COL_EFFICIENCY, COL_STATUS, COL_DIAGNOSIS, COL_N
};

static stat_tap_table_item table_fields[] = {
    /* Wireshark sizes this first column before it shows the sort arrow in
     * its header, which then cut a right-aligned "Stream" to "tream": left
     * aligned, with room after it for the arrow. */
    { TABLE_ITEM_UINT, TAP_ALIGN_LEFT, "Stream    ", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Transfer", "%u" },
    { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Direction", "%s" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Chunk", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Size", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Slices", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Slice packets", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Resends", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Wasted resends", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Acks", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "First frame", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Last frame", "%u" },
    /* The GUI prints a TABLE_ITEM_FLOAT with six decimals whatever the
     * format: whole milliseconds and bit/s, and the efficiency as text with
     * one decimal, padded so that sorting the text sorts the numbers. */
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Duration (ms)", "%u" },
    { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Goodput (bit/s)", "%u" },
    { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Efficiency (%)", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Status", "%s" },
    { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Diagnosis", "%s" },
};

/* Row of each transfer in the GUI table (transfer index + 1 -> row + 1). */
static GHashTable *table_rows;

static void table_init(stat_tap_table_ui *ui)
{
    stat_tap_table *table = stat_tap_init_table("Chunk transfers", COL_N, 0, NULL);
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
    const chunk_tap_info_t *ti = (const chunk_tap_info_t *)data;
    stat_tap_table *table = g_array_index(sd->stat_tap_data->tables, stat_tap_table *, 0);
    const chunk_transfer_t *t = ti->t;
    guint row;

    if (!t)
        return TAP_PACKET_DONT_REDRAW;
    row = GPOINTER_TO_UINT(g_hash_table_lookup(table_rows, GUINT_TO_POINTER(t->index + 1)));
    if (!row) {
        stat_tap_table_item_type items[COL_N];
        memset(items, 0, sizeof items);
        for (guint c = 0; c < COL_N; c++)
            items[c].type = table_fields[c].type;
        items[COL_DIRECTION].value.string_value = direction_str(NULL, t->flow);
        items[COL_STATUS].value.string_value = g_strdup("");
        items[COL_EFFICIENCY].value.string_value = g_strdup("");
        items[COL_DIAGNOSIS].value.string_value = g_strdup("");
        row = table->num_elements + 1;
        stat_tap_init_table_row(table, row - 1, COL_N, items);
        g_hash_table_insert(table_rows, GUINT_TO_POINTER(t->index + 1), GUINT_TO_POINTER(row));
    }
    row--;
    set_uint(table, row, COL_STREAM, t->flow->stream);
    set_uint(table, row, COL_TRANSFER, t->index);
    set_uint(table, row, COL_CHUNK, t->chunk_id);
    set_uint(table, row, COL_SIZE, t->size);
    set_uint(table, row, COL_SLICES, t->num_slices);
    set_uint(table, row, COL_PKTS, t->slice_pkts);
    set_uint(table, row, COL_RESENDS, t->resends);
    set_uint(table, row, COL_WASTED, t->wasted);
    set_uint(table, row, COL_ACKS, t->acks);
    set_uint(table, row, COL_FIRST, t->first_frame);
    set_uint(table, row, COL_LAST, t->last_frame);
    set_uint(table, row, COL_DURATION, (guint)((transfer_duration_ns(t) + 500000) / 1000000));
    double g = goodput_bps(t) + 0.5;
    set_uint(table, row, COL_GOODPUT, g < (double)G_MAXUINT32 ? (guint)g : G_MAXUINT32);
    char eff[16];
    snprintf(eff, sizeof eff, "%5.1f", 100.0 * efficiency(t));
    set_string(table, row, COL_EFFICIENCY, eff);
    /* Strings only where the packet can change them, to keep the cost low. */
    if (ti->is_ack || pinfo->num == t->last_frame) {
        set_string(table, row, COL_STATUS, status_str(pinfo->pool, t));
        set_string(table, row, COL_DIAGNOSIS, chunk_analysis_diagnosis(pinfo->pool, t));
    }
    return TAP_PACKET_REDRAW;
}

/* Rows stay (keyed by transfer index) and are refilled by the retap. */
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
    if (column == COL_DIRECTION || column == COL_STATUS || column == COL_DIAGNOSIS ||
        column == COL_EFFICIENCY) {
        g_free((char *)field->value.string_value);
        field->value.string_value = NULL;
    }
}

static tap_param table_params[] = {
    { PARAM_FILTER, "filter", "Filter", NULL, TRUE }
};

static stat_tap_table_ui table_ui = {
    REGISTER_PACKET_STAT_GROUP_UNSORTED, "Chunk Transfers", "chunk_transfers", "chunk,transfers_table",
    table_init, table_packet, table_reset, table_free_item, NULL,
    array_length(table_fields), table_fields, array_length(table_params), table_params, NULL, 0
};

/* ---- -z chunk,tree -------------------------------------------------------- */

static int st_node_packets = -1;
static int st_node_slices = -1;
static int st_node_acks = -1;
static int st_node_problems = -1;

static void tree_init(stats_tree *st)
{
    st_node_packets = stats_tree_create_node(st, "Chunk packets", 0, STAT_DT_INT, TRUE);
    st_node_slices = stats_tree_create_node(st, "Slices", st_node_packets, STAT_DT_INT, TRUE);
    st_node_acks = stats_tree_create_node(st, "Acks", st_node_packets, STAT_DT_INT, TRUE);
    /* Under "Chunk packets", after slices and acks: its percentage is the
     * share of chunk packets with a problem (a node of its own at the top
     * level showed a meaningless 100%). Below it, per problem, the share of
     * those packets (a packet can have several). */
    st_node_problems = stats_tree_create_node(st, "With problems", st_node_packets, STAT_DT_INT, TRUE);
}

static tap_packet_status tree_packet(stats_tree *st, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    const chunk_tap_info_t *ti = (const chunk_tap_info_t *)data;

    tick_stat_node(st, "Chunk packets", 0, FALSE);
    if (!ti->is_ack) {
        tick_stat_node(st, "Slices", st_node_packets, TRUE);
        if (ti->resend) {
            int n = tick_stat_node(st, "Resends", st_node_slices, TRUE);
            if (ti->already_acked)
                tick_stat_node(st, "of slices already acked (wasted)", n, FALSE);
        } else {
            tick_stat_node(st, "First sends", st_node_slices, FALSE);
        }
        if (ti->stale)
            tick_stat_node(st, "Stale (chunk already complete)", st_node_slices, FALSE);
    } else {
        tick_stat_node(st, "Acks", st_node_packets, TRUE);
        if (!ti->t)
            tick_stat_node(st, "For a chunk not being sent", st_node_acks, FALSE);
        else if (ti->flags & CHUNK_F_COUNT_MISMATCH)
            tick_stat_node(st, "Slice count mismatch", st_node_acks, FALSE);
        else if (ti->complete)
            tick_stat_node(st, "Completing the chunk", st_node_acks, FALSE);
        else if (ti->stale_ack)
            tick_stat_node(st, "Repeated all-ones (stale)", st_node_acks, FALSE);
        else if (ti->dup)
            tick_stat_node(st, "Duplicate (nothing new)", st_node_acks, FALSE);
        else
            tick_stat_node(st, "With newly acked slices", st_node_acks, FALSE);
    }
    if (ti->flags) {
        tick_stat_node(st, "With problems", st_node_packets, TRUE);
        for (guint i = 0; i < CHUNK_F_COUNT; i++)
            if (ti->flags & (1u << i))
                tick_stat_node(st, chunk_analysis_flag_name(1u << i), st_node_problems, FALSE);
    }
    return TAP_PACKET_REDRAW;
}

int chunk_analysis_register_stats(int proto_chunk)
{
    text_ui.title = "Chunk transfers";
    register_stat_tap_ui(&text_ui, NULL);
    register_stat_tap_table_ui(&table_ui);
    stats_tree_register_plugin("chunk_transfers", "chunk", "Chunk/Packets and outcomes", 0,
                               tree_packet, tree_init, NULL);
    return register_export_object(proto_chunk, eo_packet, NULL);
}
