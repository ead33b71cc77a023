/* common/stats-util.h
 * The plumbing that every protocol's statistics share, kept out of the
 * protocol files so that the chunk transfers, fragmented packets and netgame
 * connections tables work the same way:
 *
 * - a text table printed at the end by tshark -z <proto>,<name>[,filter]:
 *   the objects the tap saw, once each, in order of first sight; the tap
 *   listener registered with the filter from the -z argument;
 * - the same rows as a GUI table (Statistics menu, and
 *   tshark -z <proto>,<name>_table): one row per object, found by a key;
 *   a retap starts the table empty (another file, a reload, a preference
 *   change), the strings are freed with the table;
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
#include <epan/export_object.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

/* Returns "src:sport -> dst:dport" in scope (NULL: g_free it). */
char *su_direction_str(wmem_allocator_t *scope, const address *src, guint32 sport,
                       const address *dst, guint32 dport);

/* ---- Export Objects ------------------------------------------------------ */

/* Adds an object to the Export Objects list of the export-object tap
 * listener tapdata (a register_export_object() packet callback's first
 * argument): found in frame, from hostname, data[0..len) saved under
 * filename. Copies every argument. */
void su_export_object_add(void *tapdata, guint32 frame, const char *hostname, const char *content_type,
                          const char *filename, const guint8 *data, guint len);

/* ---- Text tables (tshark -z) --------------------------------------------- */

/* Objects (transfers, packets, connections) seen by a tap, each once, in
 * order of first sight: su_seen_len() and su_seen_get(). */
typedef struct su_seen {
    GPtrArray *list;
    GHashTable *is_seen;
} su_seen_t;

void su_seen_init(su_seen_t *s);
/* Adds obj unless it is NULL (a tap record without an object) or already
 * there. */
void su_seen_add(su_seen_t *s, const void *obj);
/* Empties the set (a retap starts again). */
void su_seen_clear(su_seen_t *s);
/* Frees what su_seen_init() made (not s). */
void su_seen_destroy(su_seen_t *s);
#define su_seen_len(s) ((s)->list->len)
#define su_seen_get(s, i) g_ptr_array_index((s)->list, (i))

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

/* ---- Text tables of objects, with their diagnoses --------------------------- */

/* A text table of the objects a tap names (transfers, connections,
 * messages), printed at the end by tshark -z <cli>[,filter]: a line of '='
 * `rule` wide, the head (title and column names), the rows of every object
 * in order of first sight, and, when any object has a diagnosis, a
 * "Diagnosis:" section of their lines; the '=' line again. */
typedef struct su_text_table {
    const char *title;      /* the -z table's title: "Netgame connections" */
    const char *cli;        /* the -z argument: "netgame,conns" */
    const char *tap;        /* the tap it listens to */
    size_t rule;            /* width of the '=' lines */
    /* Adds the objects of one tap record to seen (su_seen_add). */
    void (*collect)(su_seen_t *seen, const void *tap_data);
    /* Prints the title and column header lines. */
    void (*head)(void);
    /* Prints the rows of obj. */
    void (*rows)(wmem_allocator_t *scope, const void *obj);
    /* Returns how many diagnosis lines obj has, and prints them when print
     * is TRUE. NULL: the table has no diagnoses. */
    guint (*diagnosis)(wmem_allocator_t *scope, const void *obj, gboolean print);
} su_text_table_t;

/* Registers the text table t (static storage: Wireshark keeps the pointer)
 * with an optional filter parameter. */
void su_register_text_table(const su_text_table_t *t);

/* ---- GUI tables ----------------------------------------------------------- */

/* The first field of a GUI table, a number (stat_tap_table_item): Wireshark
 * sizes the first column before it shows the sort arrow in its header, which
 * then cuts a right-aligned title ("Stream" read "tream"): left-aligned, with
 * room after the title for the arrow. */
#define SU_FIRST_UINT_FIELD(title) { TABLE_ITEM_UINT, TAP_ALIGN_LEFT, title "    ", "%u" }

/* The other fields of a GUI table: the kind of value fixes the alignment and
 * the format the text output prints it with. A number (right-aligned), a
 * text (left-aligned), and a figure: a number the table writes as text
 * (decimals, units, padding that makes the text sort as the number, or
 * empty in a summary row), right-aligned. */
#define SU_COL_UINT(title)   { TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, title, "%u" }
#define SU_COL_TEXT(title)   { TABLE_ITEM_STRING, TAP_ALIGN_LEFT, title, "%s" }
#define SU_COL_FIGURE(title) { TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, title, "%s" }

/* Fills the rows of a GUI table for one tap record: table is the table of
 * tapdata (never NULL), data the record. Returns what a tap_packet_cb
 * returns. */
typedef tap_packet_status (*su_table_fill_fn)(stat_tap_table *table, void *tapdata, packet_info *pinfo,
                                              const void *data);

/* Fills ui (static storage) for a GUI table under the Statistics menu
 * (REGISTER_PACKET_STAT_GROUP_UNSORTED: the Qt GUI gives the generic group
 * no menu entry), `menu_title` there, with one table `table_title`, an
 * optional filter parameter, su_table_reset and su_table_free_item, and
 * registers it. fill fills the table's rows (su_table_row, su_set_*); a
 * record that comes while the table is gone is passed over. */
void su_register_table_ui(stat_tap_table_ui *ui, const char *menu_title, const char *table_title,
                          const char *tap, const char *cli, su_table_fill_fn fill,
                          stat_tap_table_item *fields, size_t nfields);

/* The table that a table ui's packet callback fills, from its tapdata. */
stat_tap_table *su_table(void *tapdata);   /* NULL: no table now (see common/stats-util.c) */

/* The row of key (any number naming the object of the row) in the table of
 * tapdata: when the table has none, a new row at the end, every field of
 * the type of the ui's field (strings ""), and *created TRUE. A retap
 * empties the table first (su_table_reset): the rows are those of the
 * packets tapped since. */
guint su_table_row(void *tapdata, guint key, gboolean *created);

/* su_table_row for the row of one direction of a flow: a new row gets
 * "src:sport -> dst:dport" in column col. */
guint su_table_dir_row(void *tapdata, guint key, guint col, const address *src, guint32 sport,
                       const address *dst, guint32 dport);

void su_set_uint(stat_tap_table *table, guint row, guint col, guint v);
/* Copies v (NULL: ""); leaves the field alone when it holds v already. */
void su_set_string(stat_tap_table *table, guint row, guint col, const char *v);
/* A number shown with `decimals` decimals in a TABLE_ITEM_STRING column
 * (the GUI prints a TABLE_ITEM_FLOAT with six decimals whatever the
 * field's format), padded to SU_DECIMAL_WIDTH so that sorting sorts the
 * numbers. */
#define SU_DECIMAL_WIDTH 12
void su_set_decimal(stat_tap_table *table, guint row, guint col, double v, int decimals);

/* The reset and free callbacks su_register_table_ui sets: a retap takes
 * every row out of the table (kept, unseen, while a dialog may still point
 * at them: see common/stats-util.c); the strings are freed with the table. */
void su_table_reset(stat_tap_table *table);
void su_table_free_item(stat_tap_table *table, guint row, guint column, stat_tap_table_item_type *field);

#endif /* STATS_UTIL_H */
