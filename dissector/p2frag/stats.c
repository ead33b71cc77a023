/* p2frag/stats.c
 * Statistics of the fragment analysis: one row per fragmented packet, then
 * per direction the measured fragment and packet loss and what
 * 1 - (1 - p)^n predicts (tshark -z p2frag,packets); the rows as a table in
 * the GUI (Statistics > P2frag Packets).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <epan/to_str.h>
#include <wsutil/str_util.h>

#include "p2frag-int.h"
#include "common/stats-util.h"
#include "common/ws-compat.h"

static double pkt_duration(const p2frag_pkt_t *pkt)
{
    nstime_t d;
    nstime_delta(&d, pkt->complete_frame ? &pkt->complete_ts : &pkt->last_ts, &pkt->first_ts);
    return nstime_to_sec(&d);
}

static char *direction_str(wmem_allocator_t *scope, const p2frag_dir_t *dir)
{
    return su_direction_str(scope, &dir->src, dir->sport, &dir->dst, dir->dport);
}

/* Per direction, over the packets the tap saw. */
typedef struct dir_sum {
    const p2frag_dir_t *dir;
    guint32 regular;
    guint32 pkts, complete;
    guint64 expected, seen;
    double predicted_sum;   /* sum over packets of 1 - (1 - p)^n, filled in at the end */
} dir_sum_t;

typedef struct packets_text {
    su_seen_t pkts;         /* fragmented packets, in order of first sight */
    GPtrArray *dirs;        /* dir_sum_t, in order of first sight */
    GHashTable *dir_of;
} packets_text_t;

static dir_sum_t *get_sum(packets_text_t *pt, const p2frag_dir_t *dir)
{
    dir_sum_t *s = (dir_sum_t *)g_hash_table_lookup(pt->dir_of, dir);
    if (!s) {
        s = g_new0(dir_sum_t, 1);
        s->dir = dir;
        g_hash_table_insert(pt->dir_of, (gpointer)dir, s);
        g_ptr_array_add(pt->dirs, s);
    }
    return s;
}

static void text_reset(void *p)
{
    packets_text_t *pt = (packets_text_t *)p;
    su_seen_clear(&pt->pkts);
    g_ptr_array_set_size(pt->dirs, 0);
    g_hash_table_remove_all(pt->dir_of);
}

static tap_packet_status text_packet(void *p, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                     const void *data, tap_flags_t flags _U_)
{
    packets_text_t *pt = (packets_text_t *)p;
    const p2frag_tap_t *td = (const p2frag_tap_t *)data;
    dir_sum_t *s = get_sum(pt, td->dir);

    if (!td->pkt) {
        s->regular++;
    } else {
        su_seen_add(&pt->pkts, td->pkt);
    }
    return TAP_PACKET_REDRAW;
}

static void text_draw(void *p)
{
    packets_text_t *pt = (packets_text_t *)p;
    wmem_allocator_t *scope = wmem_allocator_new(WMEM_ALLOCATOR_SIMPLE);
    guint i;

    for (i = 0; i < pt->dirs->len; i++) {
        dir_sum_t *s = (dir_sum_t *)g_ptr_array_index(pt->dirs, i);
        s->pkts = s->complete = 0;
        s->expected = s->seen = 0;
        s->predicted_sum = 0.0;
    }
    printf("\n=====================================================================================================================\n");
    printf("P2frag fragmented packets\n");
    printf("%-6s %-45s %5s %7s %9s %8s %8s %9s  %s\n", "Stream", "Direction", "Seq", "Bytes", "Fragments",
           "First", "Last", "Duration", "Status");
    for (i = 0; i < su_seen_len(&pt->pkts); i++) {
        const p2frag_pkt_t *pkt = (const p2frag_pkt_t *)su_seen_get(&pt->pkts, i);
        dir_sum_t *s = get_sum(pt, pkt->dir);
        guint32 bytes = p2frag_pkt_bytes(pkt);
        char size[16], frags[16];

        if (bytes)
            snprintf(size, sizeof size, "%u", bytes);
        else
            snprintf(size, sizeof size, "?");
        snprintf(frags, sizeof frags, "%u/%u", pkt->seen, pkt->num_fragments);
        printf("%-6u %-45s %5u %7s %9s %8u %8u %9.3f  %s\n", pkt->dir->stream, direction_str(scope, pkt->dir),
               pkt->seq, size, frags, pkt->first_frame, pkt->last_frame, pkt_duration(pkt),
               p2frag_status_str(scope, pkt));
        s->pkts++;
        s->complete += pkt->complete_frame ? 1 : 0;
        s->expected += pkt->num_fragments;
        s->seen += pkt->seen;
    }
    printf("\nPer direction (fragment loss p = fragments never seen / fragments of the packets seen;\n"
           "a packet is lost when one fragment is: predicted packet loss = mean of 1 - (1 - p)^n over the packets)\n");
    for (i = 0; i < pt->dirs->len; i++) {
        dir_sum_t *s = (dir_sum_t *)g_ptr_array_index(pt->dirs, i);
        double pf, pl, pred = 0.0;
        guint j;

        printf("Stream %u, %s: %u regular packet%s, %u fragmented packet%s", s->dir->stream,
               direction_str(scope, s->dir), s->regular, s->regular == 1 ? "" : "s", s->pkts,
               s->pkts == 1 ? "" : "s");
        if (!s->pkts) {
            printf("\n");
            continue;
        }
        pf = 1.0 - (double)s->seen / (double)s->expected;
        pl = 1.0 - (double)s->complete / (double)s->pkts;
        for (j = 0; j < su_seen_len(&pt->pkts); j++) {
            const p2frag_pkt_t *pkt = (const p2frag_pkt_t *)su_seen_get(&pt->pkts, j);
            if (pkt->dir == s->dir)
                pred += 1.0 - pow(1.0 - pf, (double)pkt->num_fragments);
        }
        pred /= (double)s->pkts;
        printf(" (%u complete)\n", s->complete);
        printf("  fragment loss %.2f%% (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " fragments missing), "
               "packet loss %.2f%% (%u of %u), predicted %.2f%% (mean %.1f fragments per packet)\n",
               100.0 * pf, s->expected - s->seen, s->expected, 100.0 * pl, s->pkts - s->complete, s->pkts,
               100.0 * pred, (double)s->expected / (double)s->pkts);
    }
    printf("=====================================================================================================================\n");
    wmem_destroy_allocator(scope);
}

static void text_finish(void *p)
{
    packets_text_t *pt = (packets_text_t *)p;
    su_seen_destroy(&pt->pkts);
    g_ptr_array_free(pt->dirs, TRUE);
    g_hash_table_destroy(pt->dir_of);
    g_free(pt);
}

static CS_TAP_INIT_RET text_init(const char *opt_arg, void *userdata _U_)
{
    packets_text_t *pt = g_new0(packets_text_t, 1);

    su_seen_init(&pt->pkts);
    pt->dirs = g_ptr_array_new_with_free_func(g_free);
    pt->dir_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (!su_text_listen(opt_arg, "p2frag,packets", "p2frag", pt, text_reset, text_packet, text_draw, text_finish))
        CS_TAP_INIT_FAILED;
    CS_TAP_INIT_OK;
}

/* ---- The same rows in the GUI (Statistics > P2frag Packets) ---------------- */

/* Status right after Direction: a dialog opens about 600 pixels wide, so
 * what matters comes first. Times in seconds, as the text table and the
 * other tables. After the packet rows, one summary row per direction: the
 * loss figures the text table prints below its rows. */
enum { COL_STREAM, COL_DIRECTION, COL_STATUS, COL_SEQ, COL_BYTES, COL_FRAGMENTS, COL_FIRST, COL_LAST,
       COL_DURATION, COL_N };

static stat_tap_table_item table_fields[] = {
    SU_FIRST_UINT_FIELD("Stream"), SU_COL_TEXT("Direction"), SU_COL_TEXT("Status"), SU_COL_FIGURE("Sequence"),
    SU_COL_FIGURE("Bytes"), SU_COL_FIGURE("Fragments seen"),
    /* Text, padded to sort as numbers: a summary row leaves them empty. */
    SU_COL_FIGURE("First frame"), SU_COL_FIGURE("Last frame"), SU_COL_FIGURE("Duration (s)"),
};

/* The summary row's key: after every packet's (packet indices stay below
 * 2^31), one per direction of a stream. */
static guint summary_key(const p2frag_dir_t *dir)
{
    int c = cmp_address(&dir->src, &dir->dst);
    guint second = c > 0 || (c == 0 && dir->sport > dir->dport);
    return 0x80000000u | (dir->stream << 1) | second;
}

/* The direction's loss line, from its running totals (final on the GUI's
 * retap, which runs after the file is read). */
static void table_summary(stat_tap_table *table, void *tapdata, packet_info *pinfo, const p2frag_dir_t *dir)
{
    guint row = su_table_dir_row(tapdata, summary_key(dir), COL_DIRECTION, &dir->src, dir->sport, &dir->dst,
                                 dir->dport);
    char *text;

    su_set_uint(table, row, COL_STREAM, dir->stream);
    if (!dir->frag_pkts) {
        text = wmem_strdup_printf(pinfo->pool, "Direction: %u regular packet%s, no fragmented one",
                                  dir->regular, plurality(dir->regular, "", "s"));
    } else {
        double pf = dir->frags_expected ? 1.0 - (double)dir->frags_seen / (double)dir->frags_expected : 0.0;
        double pl = 1.0 - (double)dir->frag_pkts_complete / (double)dir->frag_pkts;
        double pred = 0.0;
        for (guint32 k = 0; k < dir->n_counts; k++)
            pred += dir->count_pkts[k] * (1.0 - pow(1.0 - pf, (double)dir->count_n[k]));
        pred /= (double)dir->frag_pkts;
        text = wmem_strdup_printf(pinfo->pool,
                                  "Direction: %u fragmented packet%s (%u complete), %u regular; fragment loss "
                                  "%.2f%% (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT "), packet loss %.2f%%, "
                                  "predicted %.2f%%", dir->frag_pkts, plurality(dir->frag_pkts, "", "s"),
                                  dir->frag_pkts_complete, dir->regular, 100.0 * pf,
                                  dir->frags_expected - dir->frags_seen, dir->frags_expected, 100.0 * pl,
                                  100.0 * pred);
    }
    su_set_string(table, row, COL_STATUS, text);
    su_set_string(table, row, COL_FRAGMENTS, wmem_strdup_printf(pinfo->pool, "%" G_GUINT64_FORMAT "/%"
                                                                G_GUINT64_FORMAT, dir->frags_seen,
                                                                dir->frags_expected));
}

static tap_packet_status table_fill(stat_tap_table *table, void *tapdata, packet_info *pinfo, const void *data)
{
    const p2frag_tap_t *td = (const p2frag_tap_t *)data;
    const p2frag_pkt_t *pkt = td->pkt;

    if (pkt) {
        const p2frag_dir_t *dir = pkt->dir;
        guint row = su_table_dir_row(tapdata, pkt->index, COL_DIRECTION, &dir->src, dir->sport, &dir->dst,
                                     dir->dport);
        guint32 bytes = p2frag_pkt_bytes(pkt);

        su_set_uint(table, row, COL_STREAM, dir->stream);
        su_set_decimal(table, row, COL_SEQ, pkt->seq, 0);
        su_set_string(table, row, COL_BYTES, bytes ? wmem_strdup_printf(pinfo->pool, "%u", bytes) : "?");
        su_set_string(table, row, COL_FRAGMENTS, wmem_strdup_printf(pinfo->pool, "%u/%u", pkt->seen,
                                                                    pkt->num_fragments));
        su_set_decimal(table, row, COL_FIRST, pkt->first_frame, 0);
        su_set_decimal(table, row, COL_LAST, pkt->last_frame, 0);
        su_set_decimal(table, row, COL_DURATION, pkt_duration(pkt), 6);
        su_set_string(table, row, COL_STATUS, p2frag_status_str(pinfo->pool, pkt));
    }
    if (td->dir)
        table_summary(table, tapdata, pinfo, td->dir);
    return TAP_PACKET_REDRAW;
}

void p2frag_stats_register(void)
{
    static stat_tap_ui text_ui;
    static stat_tap_table_ui table_ui;

    su_register_text_ui(&text_ui, "P2frag fragmented packets", "p2frag,packets", text_init);
    /* One row per fragmented packet (keyed by packet index). */
    su_register_table_ui(&table_ui, "P2frag Packets", "P2frag fragmented packets",
                         "p2frag", "p2frag,packets_table", table_fill, table_fields, array_length(table_fields));
}
