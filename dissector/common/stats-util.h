/* common/stats-util.h
 * The plumbing that every protocol's statistics share, kept out of the
 * protocol files so that the chunk transfers, fragmented packets and netgame
 * connections tables work the same way:
 *
 * - a text table printed at the end by tshark -z <proto>,<name>[,filter]:
 *   the objects the tap saw, once each, in order of first sight; the tap
 *   listener registered with the filter from the -z argument;
 * - the same rows as a GUI table (Statistics menu, and
 *   tshark -z <proto>,<name>_table): one row per object, found by a key,
 *   numbers zeroed and strings kept on a retap, strings freed with the table;
 * - a flow's direction as text, "10.0.0.1:40000 -> 10.0.0.2:30000".
 *
 * What the rows hold, and how the text table is printed, stays with each
 * protocol. Prefix su_ (statistics utilities).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef STATS_UTIL_H
#define STATS_UTIL_H

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

/* Returns "src:sport -> dst:dport" in scope (NULL: g_free it). */
char *su_direction_str(wmem_allocator_t *scope, const address *src, guint32 sport,
                       const address *dst, guint32 dport);

/* ---- Text tables (tshark -z) --------------------------------------------- */

/* Objects (transfers, packets, connections) seen by a tap, each once, in
 * order of first sight: su_seen_len() and su_seen_get(). */
typedef struct su_seen {
    GPtrArray *list;
    GHashTable *is_seen;
} su_seen_t;

void su_seen_init(su_seen_t *s);
/* Adds obj unless it is already there. */
void su_seen_add(su_seen_t *s, const void *obj);
/* Empties the set (a retap starts again). */
void su_seen_clear(su_seen_t *s);
/* Frees what su_seen_init() made (not s). */
void su_seen_destroy(su_seen_t *s);
#define su_seen_len(s) ((s)->list->len)
#define su_seen_get(s, i) g_ptr_array_index((s)->list, (i))

/* For a text table whose tap data is only a su_seen_t: a new one (freed by
 * su_seen_tap_finish), and the tap's reset and finish callbacks. */
su_seen_t *su_seen_new(void);
void su_seen_tap_reset(void *tapdata);
void su_seen_tap_finish(void *tapdata);

/* Registers the tap listener of the text table `cli` ("chunk,transfers") on
 * tap `tap` with data, for the -z argument opt_arg: "<cli>" or
 * "<cli>,<filter>". Returns TRUE when listening; FALSE when tshark refused
 * (an invalid filter), after printing why on stderr and calling
 * finish(data): the caller's tap init callback then fails
 * (CS_TAP_INIT_FAILED). */
gboolean su_text_listen(const char *opt_arg, const char *cli, const char *tap, void *data,
                        tap_reset_cb reset, tap_packet_cb packet, tap_draw_cb draw,
                        tap_finish_cb finish);

/* Fills ui (static storage: Wireshark keeps the pointer) for the text table
 * `cli` with its title and init callback, with an optional filter
 * parameter, and registers it. */
void su_register_text_ui(stat_tap_ui *ui, const char *title, const char *cli, stat_tap_init_cb init);

/* ---- GUI tables ----------------------------------------------------------- */

/* Fills ui (static storage) for a GUI table under the Statistics menu
 * (REGISTER_PACKET_STAT_GROUP_UNSORTED: the Qt GUI gives the generic group
 * no menu entry), `menu_title` there, with one table `table_title`, an
 * optional filter parameter, su_table_reset and su_table_free_item, and
 * registers it. packet fills the table's rows (su_table_row, su_set_*). */
void su_register_table_ui(stat_tap_table_ui *ui, const char *menu_title, const char *table_title,
                          const char *tap, const char *cli, tap_packet_cb packet,
                          stat_tap_table_item *fields, size_t nfields);

/* The table that a table ui's packet callback fills, from its tapdata. */
stat_tap_table *su_table(void *tapdata);   /* NULL: no table now (see common/stats-util.c) */

/* The row of key (any number naming the object of the row) in the table of
 * tapdata: when the table has none, a new row at the end, every field of
 * the type of the ui's field (strings ""), and *created TRUE. Rows stay
 * (keyed) across retaps, which refill them. */
guint su_table_row(void *tapdata, guint key, gboolean *created);

void su_set_uint(stat_tap_table *table, guint row, guint col, guint v);
/* Copies v (NULL: ""); leaves the field alone when it holds v already. */
void su_set_string(stat_tap_table *table, guint row, guint col, const char *v);
/* A number shown with `decimals` decimals in a TABLE_ITEM_STRING column
 * (the GUI prints a TABLE_ITEM_FLOAT with six decimals whatever the
 * field's format), padded to SU_DECIMAL_WIDTH so that sorting sorts the
 * numbers. */
#define SU_DECIMAL_WIDTH 12
void su_set_decimal(stat_tap_table *table, guint row, guint col, double v, int decimals);

/* The reset and free callbacks su_register_table_ui sets: a retap zeroes
 * every number (the strings stay until the packets set them again); the
 * strings are freed with the table. */
void su_table_reset(stat_tap_table *table);
void su_table_free_item(stat_tap_table *table, guint row, guint column, stat_tap_table_item_type *field);

#endif /* STATS_UTIL_H */
