/* common/stats-util.c
 * Text and GUI table plumbing for every protocol's statistics. See
 * common/stats-util.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <epan/to_str.h>
#include <wsutil/wslog.h>

#include "stats-util.h"
#include "ws-compat.h"

/* Every table's one parameter: an optional display filter. Wireshark only
 * reads it. */
static tap_param filter_param[] = {
    { PARAM_FILTER, "filter", "Filter", NULL, TRUE }
};

char *su_direction_str(wmem_allocator_t *scope, const address *src, guint32 sport,
                       const address *dst, guint32 dport)
{
    char *s = address_to_str(scope, src);
    char *d = address_to_str(scope, dst);
    char *dir = wmem_strdup_printf(scope, "%s:%u -> %s:%u", s, sport, d, dport);

    wmem_free(scope, s);
    wmem_free(scope, d);
    return dir;
}

/* ---- Export Objects ---------------------------------------------------------- */

void su_export_object_add(void *tapdata, guint32 frame, const char *hostname, const char *content_type,
                          const char *filename, const guint8 *data, guint len)
{
    export_object_list_t *list = (export_object_list_t *)tapdata;
    export_object_entry_t *e = g_new0(export_object_entry_t, 1);

    e->pkt_num = frame;
    e->hostname = g_strdup(hostname);
    e->content_type = g_strdup(content_type);
    e->filename = g_strdup(filename);
    e->payload_len = len;
    e->payload_data = (guint8 *)g_memdup2(data, len);
    list->add_entry(list->gui_data, e);
}

/* ---- Text tables ----------------------------------------------------------- */

void su_seen_init(su_seen_t *s)
{
    s->list = g_ptr_array_new();
    s->is_seen = g_hash_table_new(g_direct_hash, g_direct_equal);
}

void su_seen_add(su_seen_t *s, const void *obj)
{
    if (obj && !g_hash_table_contains(s->is_seen, obj)) {
        g_hash_table_add(s->is_seen, (gpointer)obj);
        g_ptr_array_add(s->list, (gpointer)obj);
    }
}

void su_seen_clear(su_seen_t *s)
{
    g_ptr_array_set_size(s->list, 0);
    g_hash_table_remove_all(s->is_seen);
}

void su_seen_destroy(su_seen_t *s)
{
    g_ptr_array_free(s->list, TRUE);
    g_hash_table_destroy(s->is_seen);
}

gboolean su_text_listen(const char *opt_arg, const char *cli, const char *tap, void *data,
                        tap_reset_cb reset, tap_packet_cb packet, tap_draw_cb draw,
                        tap_finish_cb finish)
{
    size_t n = strlen(cli);
    const char *filter = NULL;
    GString *err;

    if (strncmp(opt_arg, cli, n) == 0 && opt_arg[n] == ',')
        filter = opt_arg + n + 1;
    err = register_tap_listener(tap, data, filter, 0, reset, packet, draw, finish);
    if (err) {
        fprintf(stderr, "tshark: couldn't register %s tap: %s\n", cli, err->str);
        g_string_free(err, TRUE);
        finish(data);
        return FALSE;
    }
    return TRUE;
}

void su_register_text_ui(stat_tap_ui *ui, const char *title, const char *cli, stat_tap_init_cb init)
{
    stat_tap_ui u = { REGISTER_STAT_GROUP_GENERIC, title, cli, init, array_length(filter_param), filter_param };

    *ui = u;
    register_stat_tap_ui(ui, NULL);
}

/* ---- Text tables of objects ------------------------------------------------ */

/* A text table's tap data: the objects seen, and the table. */
typedef struct text_table_data {
    su_seen_t seen;
    const su_text_table_t *table;
} text_table_data_t;

static void text_table_reset(void *tapdata)
{
    su_seen_clear(&((text_table_data_t *)tapdata)->seen);
}

static tap_packet_status text_table_packet(void *tapdata, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                           const void *data, tap_flags_t flags _U_)
{
    text_table_data_t *td = (text_table_data_t *)tapdata;

    td->table->collect(&td->seen, data);
    return TAP_PACKET_REDRAW;
}

static guint text_table_diagnoses(wmem_allocator_t *scope, const text_table_data_t *td, gboolean print)
{
    guint n = 0;

    if (!td->table->diagnosis)
        return 0;
    for (guint i = 0; i < su_seen_len(&td->seen); i++)
        n += td->table->diagnosis(scope, su_seen_get(&td->seen, i), print);
    return n;
}

static void text_table_draw(void *tapdata)
{
    const text_table_data_t *td = (const text_table_data_t *)tapdata;
    const su_text_table_t *t = td->table;
    wmem_allocator_t *scope = wmem_allocator_new(WMEM_ALLOCATOR_SIMPLE);
    char *rule = g_strnfill(t->rule, '=');

    printf("\n%s\n", rule);
    t->head();
    for (guint i = 0; i < su_seen_len(&td->seen); i++)
        t->rows(scope, su_seen_get(&td->seen, i));
    if (text_table_diagnoses(scope, td, FALSE)) {
        printf("\nDiagnosis:\n");
        text_table_diagnoses(scope, td, TRUE);
    }
    printf("%s\n", rule);
    g_free(rule);
    wmem_destroy_allocator(scope);
}

static void text_table_finish(void *tapdata)
{
    su_seen_destroy(&((text_table_data_t *)tapdata)->seen);
    g_free(tapdata);
}

/* The init callback of every su_text_table_t: userdata is the table. */
static CS_TAP_INIT_RET text_table_init(const char *opt_arg, void *userdata)
{
    text_table_data_t *td = g_new0(text_table_data_t, 1);

    su_seen_init(&td->seen);
    td->table = (const su_text_table_t *)userdata;
    if (!su_text_listen(opt_arg, td->table->cli, td->table->tap, td, text_table_reset, text_table_packet,
                        text_table_draw, text_table_finish))
        CS_TAP_INIT_FAILED;
    CS_TAP_INIT_OK;
}

/* The registered text tables' uis, in static storage as Wireshark's own
 * registrations keep them (a heap copy would be a leak at exit). */
#define SU_MAX_TEXT_TABLES 16
static stat_tap_ui text_table_uis[SU_MAX_TEXT_TABLES];
static guint n_text_table_uis;

void su_register_text_table(const su_text_table_t *t)
{
    stat_tap_ui u = { REGISTER_STAT_GROUP_GENERIC, t->title, t->cli, text_table_init, array_length(filter_param),
                      filter_param };
    stat_tap_ui *ui;

    if (n_text_table_uis >= SU_MAX_TEXT_TABLES)
        ws_error("more than %d text tables: raise SU_MAX_TEXT_TABLES", SU_MAX_TEXT_TABLES);
    ui = &text_table_uis[n_text_table_uis++];
    *ui = u;
    register_stat_tap_ui(ui, (void *)t);
}

/* ---- GUI tables ------------------------------------------------------------ */

/* What a GUI table ui needs beyond Wireshark's struct: the table's title. */
typedef struct table_state {
    const char *title;
    su_table_fill_fn fill;
} table_state_t;

/* stat_tap_table_ui -> table_state_t, one per registered GUI table. */
static GHashTable *table_states;

/* What a GUI table holds beyond Wireshark's struct: its rows by key (key ->
 * row + 1), and the rows a retap took out of it.
 *
 * A retap (another file opened, the file reloaded, a preference changed,
 * Apply) starts the table empty: su_table_reset takes every row out, and
 * the packets of the file open now add theirs again. Rows that only had
 * their numbers zeroed would keep another file's objects (their addresses,
 * their texts) in the table.
 *
 * Wireshark keeps the tables in the ui, not in the dialog, and a dialog
 * left open holds pointers into the rows it drew (for sorting and Copy):
 * a second dialog of the same table, opened while the first is still there
 * (behind the main window after File > Open), retaps the one table both
 * share. So the rows taken out are kept, whole, until Wireshark frees the
 * table, which it does once no dialog of it is left; the next table_init of
 * the ui then frees them. */
typedef struct table_rows {
    const stat_tap_table_ui *ui;
    GHashTable *by_key;
    GPtrArray *retired;     /* stat_tap_table_item_type[num_fields] */
    guint num_fields;
} table_rows_t;

/* stat_tap_table -> table_rows_t. */
static GHashTable *table_rows;

static void table_rows_free(table_rows_t *tr)
{
    for (guint i = 0; i < tr->retired->len; i++) {
        stat_tap_table_item_type *items = (stat_tap_table_item_type *)g_ptr_array_index(tr->retired, i);
        for (guint c = 0; c < tr->num_fields; c++)
            if (items[c].type == TABLE_ITEM_STRING)
                g_free((char *)items[c].value.string_value);
        g_free(items);
    }
    g_ptr_array_free(tr->retired, TRUE);
    g_hash_table_destroy(tr->by_key);
    g_free(tr);
}

static table_rows_t *rows_of(stat_tap_table *table)
{
    return (table_rows_t *)g_hash_table_lookup(table_rows, table);
}

static table_state_t *table_state(const stat_tap_table_ui *ui)
{
    return (table_state_t *)g_hash_table_lookup(table_states, ui);
}

static gboolean is_of_ui(gpointer key _U_, gpointer value, gpointer ui)
{
    return ((table_rows_t *)value)->ui == ui;
}

/* Wireshark keeps the tables in the ui, not in the dialog: a second dialog
 * open at the same time calls this again with the first one's table still
 * there. Both then show that one table (its values are set from the
 * analysis, not added up, so two listeners filling it agree); a second
 * table would show up in both dialogs, empty. When the ui has no table,
 * Wireshark freed the last one (free_stat_tables, its last dialog
 * closed): what was kept of it goes too. */
static void table_init(stat_tap_table_ui *ui)
{
    table_state_t *ts = table_state(ui);
    stat_tap_table *table = stat_tap_find_table(ui, ts->title);
    table_rows_t *tr;

    if (!table_rows)
        table_rows = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)table_rows_free);
    if (table)
        return;
    g_hash_table_foreach_remove(table_rows, is_of_ui, ui);
    table = stat_tap_init_table(ts->title, (int)ui->nfields, 0, NULL);
    stat_tap_add_table(ui, table);
    tr = g_new0(table_rows_t, 1);
    tr->ui = ui;
    tr->by_key = g_hash_table_new(g_direct_hash, g_direct_equal);
    tr->retired = g_ptr_array_new();
    tr->num_fields = (guint)ui->nfields;
    g_hash_table_insert(table_rows, table, tr);
}

/* Every GUI table's packet callback: the protocol's fill, when there is a
 * table to fill. */
static tap_packet_status table_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data, tap_flags_t flags _U_)
{
    stat_tap_table *table = su_table(tapdata);

    if (!table)
        return TAP_PACKET_DONT_REDRAW;
    return table_state(((stat_data_t *)tapdata)->stat_tap_data)->fill(table, tapdata, pinfo, data);
}

void su_register_table_ui(stat_tap_table_ui *ui, const char *menu_title, const char *table_title,
                          const char *tap, const char *cli, su_table_fill_fn fill,
                          stat_tap_table_item *fields, size_t nfields)
{
    stat_tap_table_ui u = {
        REGISTER_PACKET_STAT_GROUP_UNSORTED, menu_title, tap, cli, table_init, table_packet, su_table_reset,
        su_table_free_item, NULL, nfields, fields, array_length(filter_param), filter_param, NULL, 0
    };
    table_state_t *ts = g_new0(table_state_t, 1);

    ts->title = table_title;
    ts->fill = fill;
    if (!table_states)
        table_states = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_insert(table_states, ui, ts);
    *ui = u;
    register_stat_tap_table_ui(ui);
}

stat_tap_table *su_table(void *tapdata)
{
    stat_data_t *sd = (stat_data_t *)tapdata;
    GArray *tables = sd->stat_tap_data->tables;

    /* None while another dialog of the same ui has just freed the tables
     * they share, until this dialog's init makes one again. */
    return tables && tables->len ? g_array_index(tables, stat_tap_table *, 0) : NULL;
}

guint su_table_row(void *tapdata, guint key, gboolean *created)
{
    const stat_tap_table_ui *ui = ((stat_data_t *)tapdata)->stat_tap_data;
    stat_tap_table *table = su_table(tapdata);
    table_rows_t *tr = rows_of(table);
    guint row;

    /* Every table is made by table_init, which gives it its rows. */
    if (!tr)
        ws_error("a statistics table without its rows: not made by table_init");
    row = GPOINTER_TO_UINT(g_hash_table_lookup(tr->by_key, GUINT_TO_POINTER(key)));

    *created = !row;
    if (!row) {
        stat_tap_table_item_type *items = g_new0(stat_tap_table_item_type, ui->nfields);
        for (guint c = 0; c < ui->nfields; c++) {
            items[c].type = ui->fields[c].type;
            if (items[c].type == TABLE_ITEM_STRING)
                items[c].value.string_value = g_strdup("");
        }
        row = table->num_elements + 1;
        stat_tap_init_table_row(table, row - 1, (guint)ui->nfields, items);
        g_free(items);
        g_hash_table_insert(tr->by_key, GUINT_TO_POINTER(key), GUINT_TO_POINTER(row));
    }
    return row - 1;
}

guint su_table_dir_row(void *tapdata, guint key, guint col, const address *src, guint32 sport,
                       const address *dst, guint32 dport)
{
    gboolean created;
    guint row = su_table_row(tapdata, key, &created);

    if (created) {
        char *dir = su_direction_str(NULL, src, sport, dst, dport);
        su_set_string(su_table(tapdata), row, col, dir);
        g_free(dir);
    }
    return row;
}

void su_set_uint(stat_tap_table *table, guint row, guint col, guint v)
{
    stat_tap_table_item_type *it = stat_tap_get_field_data(table, row, col);
    it->value.uint_value = v;
    stat_tap_set_field_data(table, row, col, it);
}

void su_set_string(stat_tap_table *table, guint row, guint col, const char *v)
{
    stat_tap_table_item_type *it = stat_tap_get_field_data(table, row, col);
    if (it->value.string_value && v && strcmp(it->value.string_value, v) == 0)
        return;
    g_free((char *)it->value.string_value);
    it->value.string_value = g_strdup(v ? v : "");
    stat_tap_set_field_data(table, row, col, it);
}

void su_set_decimal(stat_tap_table *table, guint row, guint col, double v, int decimals)
{
    char text[32];

    /* Right-aligned in a fixed width: the GUI sorts the column as text. */
    snprintf(text, sizeof text, "%*.*f", SU_DECIMAL_WIDTH, decimals, v);
    su_set_string(table, row, col, text);
}

void su_table_reset(stat_tap_table *table)
{
    table_rows_t *tr = table_rows ? rows_of(table) : NULL;

    if (!tr)
        return;
    /* The rows go to the kept ones (see table_rows_t); the table keeps its
     * array of row pointers, which stat_tap_init_table_row reallocates. */
    for (guint r = 0; r < table->num_elements; r++) {
        g_ptr_array_add(tr->retired, table->elements[r]);
        table->elements[r] = NULL;
    }
    table->num_elements = 0;
    g_hash_table_remove_all(tr->by_key);
}

void su_table_free_item(stat_tap_table *table _U_, guint row _U_, guint column _U_,
                        stat_tap_table_item_type *field)
{
    if (field->type == TABLE_ITEM_STRING) {
        g_free((char *)field->value.string_value);
        field->value.string_value = NULL;
    }
}
