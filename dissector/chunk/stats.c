/* chunk/stats.c
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

#include "chunk-int.h"
#include "common/stats-util.h"
#include "common/ws-compat.h"

/* ---- Export Objects ------------------------------------------------------ */

static tap_packet_status eo_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                   const void *data, tap_flags_t flags _U_)
{
    const chunk_eo_t *eo = (const chunk_eo_t *)data;
    const chunk_transfer_t *t = eo->t;

    su_export_object_add(tapdata, pinfo->num, address_to_str(pinfo->pool, &t->flow->src), "application/octet-stream",
                         wmem_strdup_printf(pinfo->pool, "stream%u-chunk%u-transfer%u.bin", t->flow->stream,
                                            t->chunk_id, t->index), eo->data, eo->len);
    return TAP_PACKET_REDRAW;
}

/* ---- Row values shared by the text and GUI tables ------------------------ */

static gint64 transfer_duration_ns(const chunk_transfer_t *t)
{
    return (t->complete_frame ? t->complete_ns : t->last_ns) - t->first_ns;
}

static char *direction_str(wmem_allocator_t *scope, const chunk_flow_t *fl)
{
    return su_direction_str(scope, &fl->src, fl->sport, &fl->dst, fl->dport);
}

/* "all acked in frame X" (the receiver's all-ones ack: not the frame the
 * chunk is reassembled in, where the capture first holds every slice),
 * "stalled since frame X, missing 3-5,17" or "incomplete, missing ...". */
static char *status_str(wmem_allocator_t *scope, const chunk_transfer_t *t)
{
    if (t->complete_frame)
        return wmem_strdup_printf(scope, "all acked in frame %u", t->complete_frame);
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

static void text_collect(su_seen_t *seen, const void *data)
{
    su_seen_add(seen, ((const chunk_tap_info_t *)data)->t);
}

static void text_head(void)
{
    printf("Chunk transfers\n");
    printf("%-6s %-8s %-45s %5s %7s %6s %6s %7s %6s %5s %8s %8s %9s %12s %5s  %s\n",
           "Stream", "Transfer", "Direction", "Chunk", "Size", "Slices", "Pkts", "Resends", "Wasted",
           "Acks", "First", "Last", "Duration", "Goodput b/s", "Eff%", "Status");
}

static void text_rows(wmem_allocator_t *scope, const void *obj)
{
    const chunk_transfer_t *t = (const chunk_transfer_t *)obj;
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
}

static guint text_diagnosis(wmem_allocator_t *scope, const void *obj, gboolean print)
{
    const chunk_transfer_t *t = (const chunk_transfer_t *)obj;
    char *d = chunk_analysis_diagnosis(scope, t);

    if (d && print)
        printf("Stream %u transfer %u (chunk %u): %s\n", t->flow->stream, t->index, t->chunk_id, d);
    return d != NULL;
}

static const su_text_table_t text_table = {
    .title = "Chunk transfers", .cli = "chunk,transfers", .tap = "chunk_transfers", .rule = 130,
    .collect = text_collect, .head = text_head, .rows = text_rows, .diagnosis = text_diagnosis
};

/* ---- The same table in the GUI (Statistics > Chunk Transfers) ------------ */

enum {
    COL_STREAM, COL_TRANSFER, COL_DIRECTION, COL_STATUS, COL_DIAGNOSIS, COL_CHUNK, COL_SIZE, COL_SLICES,
    COL_PKTS, COL_RESENDS, COL_WASTED, COL_ACKS, COL_FIRST, COL_LAST, COL_DURATION, COL_GOODPUT,
    COL_EFFICIENCY, COL_N
};

static stat_tap_table_item table_fields[] = {
    SU_FIRST_UINT_FIELD("Stream"), SU_COL_UINT("Transfer"), SU_COL_TEXT("Direction"),
    /* What matters first: a dialog opens about 600 pixels wide. */
    SU_COL_TEXT("Status"), SU_COL_TEXT("Diagnosis"), SU_COL_UINT("Chunk"), SU_COL_UINT("Size"), SU_COL_UINT("Slices"),
    SU_COL_UINT("Slice packets"), SU_COL_UINT("Resends"), SU_COL_UINT("Wasted resends"), SU_COL_UINT("Acks"),
    SU_COL_UINT("First frame"), SU_COL_UINT("Last frame"),
    /* The GUI prints a TABLE_ITEM_FLOAT with six decimals whatever the
     * format: the duration (seconds, three decimals) and the efficiency
     * (one decimal) as text, padded so that sorting the text sorts the
     * numbers; whole bit/s. */
    SU_COL_FIGURE("Duration (s)"), SU_COL_UINT("Goodput (bit/s)"), SU_COL_FIGURE("Efficiency (%)"),
};

static tap_packet_status table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data)
{
    const chunk_tap_info_t *ti = (const chunk_tap_info_t *)data;
    const chunk_transfer_t *t = ti->t;
    guint row;

    if (!t)
        return TAP_PACKET_DONT_REDRAW;
    row = su_table_dir_row(tapdata, t->index + 1, COL_DIRECTION, &t->flow->src, t->flow->sport, &t->flow->dst,
                           t->flow->dport);
    su_set_uint(table, row, COL_STREAM, t->flow->stream);
    su_set_uint(table, row, COL_TRANSFER, t->index);
    su_set_uint(table, row, COL_CHUNK, t->chunk_id);
    su_set_uint(table, row, COL_SIZE, t->size);
    su_set_uint(table, row, COL_SLICES, t->num_slices);
    su_set_uint(table, row, COL_PKTS, t->slice_pkts);
    su_set_uint(table, row, COL_RESENDS, t->resends);
    su_set_uint(table, row, COL_WASTED, t->wasted);
    su_set_uint(table, row, COL_ACKS, t->acks);
    su_set_uint(table, row, COL_FIRST, t->first_frame);
    su_set_uint(table, row, COL_LAST, t->last_frame);
    /* Seconds, as the text table and the other tables. */
    su_set_decimal(table, row, COL_DURATION, (double)transfer_duration_ns(t) / 1e9, 3);
    double g = goodput_bps(t) + 0.5;
    su_set_uint(table, row, COL_GOODPUT, g < (double)G_MAXUINT32 ? (guint)g : G_MAXUINT32);
    char eff[16];
    snprintf(eff, sizeof eff, "%5.1f", 100.0 * efficiency(t));
    su_set_string(table, row, COL_EFFICIENCY, eff);
    /* Strings only where the packet can change them, to keep the cost low. */
    if (ti->is_ack || pinfo->num == t->last_frame) {
        su_set_string(table, row, COL_STATUS, status_str(pinfo->pool, t));
        su_set_string(table, row, COL_DIAGNOSIS, chunk_analysis_diagnosis(pinfo->pool, t));
    }
    return TAP_PACKET_REDRAW;
}

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

static tap_packet_status tree_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt _U_,
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
    /* The end-of-capture diagnosis: the warning that the last frame of an
     * unfinished transfer carries once the whole capture is read (the
     * second pass, the GUI), so that the problems here are the warnings of
     * Expert Information, one for one. */
    gboolean unfinished = ti->t && PINFO_FD_VISITED(pinfo) && ti->t->last_frame == pinfo->num &&
                          !ti->t->complete_frame && chunk_analysis_diagnosis(pinfo->pool, ti->t);
    if (ti->flags || unfinished) {
        tick_stat_node(st, "With problems", st_node_packets, TRUE);
        for (guint i = 0; i < CHUNK_F_COUNT; i++)
            if (ti->flags & (1u << i))
                tick_stat_node(st, chunk_analysis_flag_name(1u << i), st_node_problems, FALSE);
        if (unfinished)
            tick_stat_node(st, "unfinished at the end of the capture", st_node_problems, FALSE);
    }
    return TAP_PACKET_REDRAW;
}

int chunk_stats_register(int proto_chunk)
{
    static stat_tap_table_ui table_ui;

    su_register_text_table(&text_table);
    /* One row per transfer (keyed by transfer index). */
    su_register_table_ui(&table_ui, "Chunk Transfers", "Chunk transfers",
                         "chunk_transfers", "chunk,transfers_table", table_fill, table_fields, array_length(table_fields));
    stats_tree_register_plugin("chunk_transfers", "chunk", "Chunk/Packets and outcomes", 0,
                               tree_packet, tree_init, NULL);
    return register_export_object(proto_chunk, eo_packet, NULL);
}
