/* stats.c
 * The yojimbo tables: tshark -z yojimbo,messages (every message id of a
 * reliable-ordered channel) and -z yojimbo,blocks (every block), with the
 * diagnosis of what never completed; the same tables under Statistics >
 * Yojimbo Messages / Yojimbo Blocks (tshark -z yojimbo,messages_table and
 * yojimbo,blocks_table).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

#include "yojimbo-int.h"
#include "common/ws-compat.h"
#include "common/stats-util.h"

static char *dir_str(wmem_allocator_t *scope, const yj_msg_t *m)
{
    const yj_dir_t *d = &m->conv->dir[m->dir];
    return su_direction_str(scope, &d->src, d->sport, &d->dst, d->dport);
}

/* Seconds from the first send to the ack (a block's: of its last
 * fragment); the GUI tables' figure. */
static double ack_s(const yj_msg_t *m)
{
    nstime_t d;
    nstime_delta(&d, &m->acked_time, &m->first_time);
    return nstime_to_sec(&d);
}

/* A block's longest time without a new fragment acknowledged: between two
 * acks, and for a block never completed also from its last ack (or first
 * send) to the end of the capture, the wait its diagnosis words as "no
 * fragment acknowledged in its last N s". */
static double longest_stall_s(const yj_msg_t *m)
{
    double stall = (double)m->max_stall_ns / 1e9;

    if (m->frags_acked < m->num_fragments) {
        nstime_t end = yj_capture_end(), idle;
        nstime_delta(&idle, &end, &m->last_progress);
        if (nstime_to_sec(&idle) > stall)
            stall = nstime_to_sec(&idle);
    }
    return stall;
}

/* The text tables' "AckedIn" and "Ack (s)": "-" for what was never
 * acknowledged, where the GUI tables leave the cell blank (a frame number 0
 * or a time 0.000 read as a real ack). */
static const char *acked_in_text(wmem_allocator_t *scope, guint32 frame)
{
    return frame ? wmem_strdup_printf(scope, "%u", frame) : "-";
}

static const char *ack_s_text(wmem_allocator_t *scope, const yj_msg_t *m, gboolean acked)
{
    return acked ? wmem_strdup_printf(scope, "%.3f", ack_s(m)) : "-";
}

static guint32 frag_sends(const yj_msg_t *m, guint32 *resends, guint32 *wasted)
{
    guint32 s = 0;
    *resends = *wasted = 0;
    for (guint i = 0; i < m->num_fragments; i++) {
        s += m->frags[i].sends;
        if (m->frags[i].sends > 1)
            *resends += m->frags[i].sends - 1;
        *wasted += m->frags[i].sends_after_ack;
    }
    return s;
}

/* The message type, "?" when no packet showed it (a body before it was not
 * decoded, or a block's fragment 0 not seen). */
static const char *type_text(wmem_allocator_t *scope, const yj_msg_t *m)
{
    return m->type < 0 ? "?" : wmem_strdup_printf(scope, "%d", m->type);
}

/* ---- tshark -z yojimbo,messages and yojimbo,blocks ------------------------- */

/* Both tables see the messages and blocks the packets carried, and each
 * shows its own kind. */
static void text_collect(su_seen_t *seen, const void *data)
{
    const yj_tap_t *t = (const yj_tap_t *)data;
    for (guint32 i = 0; i < t->frame->n_items; i++)
        su_seen_add(seen, t->frame->items[i].msg);
}

static guint diagnosis(wmem_allocator_t *scope, const yj_msg_t *m, gboolean print)
{
    char *diag = yj_diagnosis(scope, m);

    if (diag && print)
        printf("Connection %u %s: %s\n", m->conv->index - 1, dir_str(scope, m), diag);
    return diag != NULL;
}

static void msg_head(void)
{
    printf("yojimbo messages (reliable-ordered channels; frames at this capture point)\n");
    printf("%-4s %-45s %3s %6s %5s %6s %8s %8s %8s %9s %6s\n", "Conn", "Direction", "Ch", "Id", "Type",
           "Sends", "First", "Last", "AckedIn", "Ack (s)", "Wasted");
}

static void msg_rows(wmem_allocator_t *scope, const void *obj)
{
    const yj_msg_t *m = (const yj_msg_t *)obj;

    if (m->is_block)
        return;
    printf("%-4u %-45s %3u %6u %5s %6u %8u %8u %8s %9s %6u\n", m->conv->index - 1, dir_str(scope, m), m->channel,
           m->id, type_text(scope, m), m->sends, m->first_frame, m->last_frame, acked_in_text(scope, m->acked_frame),
           ack_s_text(scope, m, m->acked_frame != 0), m->sends_after_ack);
}

static guint msg_diagnosis(wmem_allocator_t *scope, const void *obj, gboolean print)
{
    const yj_msg_t *m = (const yj_msg_t *)obj;
    return m->is_block ? 0 : diagnosis(scope, m, print);
}

static void block_head(void)
{
    printf("yojimbo blocks (frames at this capture point)\n");
    printf("%-4s %-45s %3s %6s %5s %6s %7s %7s %7s %7s %8s %8s %8s %9s %9s\n", "Conn", "Direction", "Ch", "Id",
           "Type", "Frags", "Bytes", "Sends", "Resend", "Wasted", "Acked", "First", "AckedIn", "Ack (s)", "Stall (s)");
}

static void block_rows(wmem_allocator_t *scope, const void *obj)
{
    const yj_msg_t *m = (const yj_msg_t *)obj;
    guint32 resends, wasted, sends;
    gboolean complete;

    if (!m->is_block)
        return;
    sends = frag_sends(m, &resends, &wasted);
    complete = m->frags_acked == m->num_fragments && m->acked_frame;
    printf("%-4u %-45s %3u %6u %5s %6u %7u %7u %7u %7u %4u/%-3u %8u %8s %9s %9.2f\n", m->conv->index - 1,
           dir_str(scope, m), m->channel, m->id, type_text(scope, m), m->num_fragments, m->block_bytes, sends, resends,
           wasted, m->frags_acked, m->num_fragments, m->first_frame, acked_in_text(scope, complete ? m->acked_frame : 0),
           ack_s_text(scope, m, complete), longest_stall_s(m));
}

static guint block_diagnosis(wmem_allocator_t *scope, const void *obj, gboolean print)
{
    const yj_msg_t *m = (const yj_msg_t *)obj;
    return m->is_block ? diagnosis(scope, m, print) : 0;
}

static const su_text_table_t msg_text = {
    .title = "yojimbo messages", .cli = "yojimbo,messages", .tap = "yojimbo_stats", .rule = 131,
    .collect = text_collect, .head = msg_head, .rows = msg_rows, .diagnosis = msg_diagnosis
};

static const su_text_table_t block_text = {
    .title = "yojimbo blocks", .cli = "yojimbo,blocks", .tap = "yojimbo_stats", .rule = 131,
    .collect = text_collect, .head = block_head, .rows = block_rows, .diagnosis = block_diagnosis
};

/* ---- GUI tables ------------------------------------------------------------ */

/* Both tables start with the columns that name the message or block (ID_*),
 * filled alike, its diagnosis right after the direction, where a dialog
 * opened about 600 pixels wide shows it (as Chunk Transfers and Netgame
 * Connections have theirs). The link is "Connection N",
 * numbered from 0 in order of first sight as netcode's and reliable's
 * tables number theirs. Times are in seconds, as every other table's;
 * what never happened (no ack) is blank, not 0. */
enum { ID_CONV, ID_DIR, ID_DIAG, ID_CH, ID_ID, ID_TYPE, ID_N };
#define ID_FIELDS \
    SU_FIRST_UINT_FIELD("Connection"), SU_COL_TEXT("Direction"), SU_COL_TEXT("Diagnosis"), SU_COL_UINT("Channel"), \
    SU_COL_UINT("Message id"), SU_COL_FIGURE("Type")

enum { M_SENDS = ID_N, M_FIRST, M_LAST, M_ACKED, M_ACKMS, M_WASTED };

static stat_tap_table_item msg_fields[] = {
    ID_FIELDS, SU_COL_UINT("Sends"), SU_COL_UINT("First frame"), SU_COL_UINT("Last frame"), SU_COL_FIGURE("Acked in"),
    SU_COL_FIGURE("Time to ack (s)"), SU_COL_UINT("Sent after ack"),
};

enum { B_FRAGS = ID_N, B_BYTES, B_SENDS, B_RESENDS, B_WASTED, B_ACKED, B_FIRST, B_DONE, B_ACKMS, B_STALL };

static stat_tap_table_item block_fields[] = {
    ID_FIELDS, SU_COL_UINT("Fragments"), SU_COL_UINT("Bytes seen"), SU_COL_UINT("Fragment sends"),
    SU_COL_UINT("Resends"), SU_COL_UINT("Sent after ack"), SU_COL_UINT("Fragments acked"), SU_COL_UINT("First frame"),
    SU_COL_FIGURE("Fully acked in"), SU_COL_FIGURE("Time to ack (s)"), SU_COL_FIGURE("Longest stall (s)"),
};

/* A frame number in a figure column: blank for none. */
static void set_frame(stat_tap_table *table, guint row, guint col, guint32 frame)
{
    char text[16] = "";

    if (frame)
        snprintf(text, sizeof text, "%*u", SU_DECIMAL_WIDTH, frame);
    su_set_string(table, row, col, text);
}

static tap_packet_status table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data,
                                    gboolean blocks)
{
    const yj_tap_t *t = (const yj_tap_t *)data;

    for (guint32 i = 0; i < t->frame->n_items; i++) {
        const yj_msg_t *m = t->frame->items[i].msg;
        const yj_dir_t *d = &m->conv->dir[m->dir];
        guint row;
        if (m->is_block != blocks)
            continue;
        row = su_table_dir_row(tapdata, m->index, ID_DIR, &d->src, d->sport, &d->dst, d->dport);
        su_set_uint(table, row, ID_CONV, m->conv->index - 1);
        su_set_uint(table, row, ID_CH, m->channel);
        su_set_uint(table, row, ID_ID, m->id);
        su_set_string(table, row, ID_TYPE, type_text(pinfo->pool, m));
        if (!blocks) {
            su_set_uint(table, row, M_SENDS, m->sends);
            su_set_uint(table, row, M_FIRST, m->first_frame);
            su_set_uint(table, row, M_LAST, m->last_frame);
            set_frame(table, row, M_ACKED, m->acked_frame);
            if (m->acked_frame)
                su_set_decimal(table, row, M_ACKMS, ack_s(m), 3);
            else
                su_set_string(table, row, M_ACKMS, "");
            su_set_uint(table, row, M_WASTED, m->sends_after_ack);
        } else {
            guint32 resends, wasted, sends = frag_sends(m, &resends, &wasted);
            su_set_uint(table, row, B_FRAGS, m->num_fragments);
            su_set_uint(table, row, B_BYTES, m->block_bytes);
            su_set_uint(table, row, B_SENDS, sends);
            su_set_uint(table, row, B_RESENDS, resends);
            su_set_uint(table, row, B_WASTED, wasted);
            su_set_uint(table, row, B_ACKED, m->frags_acked);
            su_set_uint(table, row, B_FIRST, m->first_frame);
            gboolean done = m->frags_acked == m->num_fragments && m->acked_frame;
            set_frame(table, row, B_DONE, done ? m->acked_frame : 0);
            if (done)
                su_set_decimal(table, row, B_ACKMS, ack_s(m), 3);
            else
                su_set_string(table, row, B_ACKMS, "");
            su_set_decimal(table, row, B_STALL, longest_stall_s(m), 2);
        }
        su_set_string(table, row, ID_DIAG, yj_diagnosis(pinfo->pool, m));
    }
    return TAP_PACKET_REDRAW;
}

static tap_packet_status msg_table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data)
{
    return table_fill(table, tapdata, pinfo, data, FALSE);
}

static tap_packet_status block_table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data)
{
    return table_fill(table, tapdata, pinfo, data, TRUE);
}

void yj_stats_register(void)
{
    static stat_tap_table_ui msg_table, block_table;

    su_register_text_table(&msg_text);
    su_register_text_table(&block_text);
    su_register_table_ui(&msg_table, "Yojimbo Messages", "Yojimbo messages", "yojimbo_stats",
                         "yojimbo,messages_table", msg_table_fill, msg_fields, array_length(msg_fields));
    su_register_table_ui(&block_table, "Yojimbo Blocks", "Yojimbo blocks", "yojimbo_stats", "yojimbo,blocks_table",
                         block_table_fill, block_fields, array_length(block_fields));
}
