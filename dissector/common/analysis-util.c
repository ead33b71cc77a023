/* common/analysis-util.c
 * Id sets as ranges and Info column marks, for every protocol of the
 * plugin. See common/analysis-util.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "analysis-util.h"

#include <epan/tap.h>

/* ---- Id sets as ranges -------------------------------------------------- */

static gboolean zero_byte(const void *data, guint32 id)
{
    return ((const guint8 *)data)[id] == 0;
}

static gboolean set_bit(const void *data, guint32 id)
{
    return (((const guint8 *)data)[id >> 3] >> (id & 7)) & 1;
}

au_idset_t au_idset_zero_bytes(const guint8 *v, guint32 n)
{
    au_idset_t s = { n, zero_byte, NULL, v };
    return s;
}

au_idset_t au_idset_set_bits(const guint8 *bitmap, guint32 n)
{
    au_idset_t s = { n, set_bit, NULL, bitmap };
    return s;
}

gboolean au_idset_next_run(const au_idset_t *s, guint32 *next, guint32 *first, guint32 *last)
{
    guint32 i = *next, j;

    if (s->has == zero_byte && !s->joins) {
        /* The zero bytes of an array (an ack's missing slices, for every
         * ack): scanned directly, not through the callback per id. */
        const guint8 *v = (const guint8 *)s->data;
        while (i < s->n && v[i])
            i++;
        if (i >= s->n) {
            *next = i;
            return FALSE;
        }
        for (j = i; j + 1 < s->n && !v[j + 1]; j++)
            ;
        *first = i;
        *last = j;
        *next = j + 1;
        return TRUE;
    }
    while (i < s->n && !s->has(s->data, i))
        i++;
    if (i >= s->n) {
        *next = i;
        return FALSE;
    }
    j = i;
    while (j + 1 < s->n && s->has(s->data, j + 1) && (!s->joins || s->joins(s->data, i, j + 1)))
        j++;
    *first = i;
    *last = j;
    *next = j + 1;
    return TRUE;
}

void au_append_range(wmem_strbuf_t *sb, guint32 first, guint32 last)
{
    char buf[24], *p = au_put_uint(buf, first);   /* "%u-%u" without printf */

    if (last > first) {
        *p++ = '-';
        p = au_put_uint(p, last);
    }
    wmem_strbuf_append_len(sb, buf, (gsize)(p - buf));
}

char *au_ranges(wmem_allocator_t *scope, const au_idset_t *s, gsize max_len)
{
    wmem_strbuf_t *sb = wmem_strbuf_new(scope, "");
    guint32 next = 0, first, last;

    while (au_idset_next_run(s, &next, &first, &last)) {
        if (max_len && wmem_strbuf_get_len(sb) >= max_len) {
            wmem_strbuf_append(sb, ",...");
            break;
        }
        if (wmem_strbuf_get_len(sb))
            wmem_strbuf_append_c(sb, ',');
        au_append_range(sb, first, last);
    }
    return wmem_strbuf_finalize(sb);
}

char *au_ranges_cut(wmem_allocator_t *scope, char *ranges, gsize max_len)
{
    gsize cut;

    if (strlen(ranges) <= max_len)
        return ranges;
    /* Keep the ranges that end before max_len - 4 (room for ",..."). */
    cut = max_len - 4;
    while (cut > 0 && ranges[cut] != ',')
        cut--;
    ranges[cut] = '\0';
    return wmem_strdup_printf(scope, "%s,...", ranges);
}

/* ---- Info column marks -------------------------------------------------- */

/* The Info text au_info_set set last: its buffer, length and room, and the
 * packet. */
static struct {
    char *buf;
    size_t len, cap;
    guint32 num;
} au_info;

char *au_info_begin(packet_info *pinfo, size_t len)
{
    size_t cap = len + AU_INFO_MARKS_ROOM;

    au_info.buf = (char *)wmem_alloc(pinfo->pool, cap + 1);
    au_info.cap = cap;
    au_info.len = 0;
    au_info.num = 0;
    return au_info.buf;
}

void au_info_set(packet_info *pinfo, char *end)
{
    *end = '\0';
    au_info.len = (size_t)(end - au_info.buf);
    au_info.num = pinfo->num;
    col_set_str(pinfo->cinfo, COL_INFO, au_info.buf);
}

/* Appends s (sl characters) to the Info column: into the protocol's own
 * buffer while the column shows it (and it has room), else col_append_str. */
static void au_info_append(packet_info *pinfo, const char *s, size_t sl)
{
    if (au_info.buf && au_info.num == pinfo->num && au_info.len + sl <= au_info.cap &&
        col_get_text(pinfo->cinfo, COL_INFO) == au_info.buf) {
        memcpy(au_info.buf + au_info.len, s, sl + 1);
        au_info.len += sl;
        return;
    }
    col_append_str(pinfo->cinfo, COL_INFO, s);
}

void au_info_marks(packet_info *pinfo, const char *lead, guint64 bits, const au_info_mark_t *table, size_t n)
{
    char buf[512];
    size_t len = 0;

    if (!pinfo->cinfo || (!lead && !bits))   /* most packets: nothing to mark */
        return;
    if (!bits) {   /* the lead alone (a resend's number) */
        au_info_append(pinfo, lead, strlen(lead));
        return;
    }
    for (size_t i = 0; i <= n; i++) {
        const char *s;
        size_t sl;

        if (i == 0) {
            if (!lead)
                continue;
            s = lead;
        } else if ((bits & table[i - 1].when) && !(bits & table[i - 1].unless)) {
            s = table[i - 1].mark;
        } else {
            continue;
        }
        sl = strlen(s);
        if (len + sl >= sizeof buf) {
            /* Longer than any table has: append what is gathered so far. */
            buf[len] = '\0';
            if (len)
                au_info_append(pinfo, buf, len);
            len = 0;
            if (sl >= sizeof buf) {
                au_info_append(pinfo, s, sl);
                continue;
            }
        }
        memcpy(buf + len, s, sl);
        len += sl;
    }
    if (len) {
        buf[len] = '\0';
        au_info_append(pinfo, buf, len);
    }
}

/* ---- Endpoints ------------------------------------------------------------ */

void au_copy_endpoints(packet_info *pinfo, gboolean reverse, address *src, guint32 *sport, address *dst,
                       guint32 *dport)
{
    copy_address_wmem(wmem_file_scope(), src, reverse ? &pinfo->dst : &pinfo->src);
    copy_address_wmem(wmem_file_scope(), dst, reverse ? &pinfo->src : &pinfo->dst);
    *sport = reverse ? pinfo->destport : pinfo->srcport;
    *dport = reverse ? pinfo->srcport : pinfo->destport;
}

/* ---- Expert infos ------------------------------------------------------- */

gboolean au_expert_tapped(void)
{
    /* Taps are registered before any packet is dissected; the id is looked
     * up once, the listener test is a flag. */
    static int tap_id = -1;

    if (tap_id < 0)
        tap_id = find_tap_id("expert");
    return tap_id > 0 && have_tap_listener(tap_id);
}

/* The highest severity each expert info left after its last call made
 * (au_expert_add), in slots by its index; emptied when dissection is
 * initialised (a new file, changed preferences or severities). A slot taken
 * by another expert info only costs a call. */
#define AU_RAISED_SLOTS 64
static struct {
    int ei;         /* -1: empty */
    int highest;
} au_raised[AU_RAISED_SLOTS];
static gboolean au_raised_ready;

static void au_raised_clear(void)
{
    for (guint i = 0; i < AU_RAISED_SLOTS; i++)
        au_raised[i].ei = -1;
}

gboolean au_expert_unseen(packet_info *pinfo, const expert_field *ei)
{
    guint slot = (guint)ei->ei % AU_RAISED_SLOTS;

    return au_raised_ready && au_raised[slot].ei == ei->ei &&
           expert_get_highest_severity() >= au_raised[slot].highest && !au_expert_tapped() &&
           !col_get_text(pinfo->cinfo, COL_EXPERT);
}

void au_expert_add(packet_info *pinfo, expert_field *ei)
{
    guint slot = (guint)ei->ei % AU_RAISED_SLOTS;

    if (au_expert_unseen(pinfo, ei))
        return;
    expert_add_info(pinfo, NULL, ei);
    if (!au_raised_ready) {
        /* Registered on first use: every later initialisation empties it. */
        au_raised_clear();
        register_init_routine(au_raised_clear);
        au_raised_ready = TRUE;
    }
    if (pinfo->num) {   /* Wireshark ignores an expert info of frame 0 */
        au_raised[slot].ei = ei->ei;
        au_raised[slot].highest = expert_get_highest_severity();
    }
}

/* Each protocol's detail field, <proto>.expert.detail, by protocol id; and
 * the subtree of an item that had none before its detail. */
#define AU_DETAIL_PROTOCOLS 16
static struct {
    int proto;
    int hf;
} au_detail[AU_DETAIL_PROTOCOLS];
static guint au_n_detail;
static gint au_ett_detail = -1;

void au_expert_detail_register(int proto)
{
    static hf_register_info hf[AU_DETAIL_PROTOCOLS];
    static gint *ett[] = { &au_ett_detail };
    guint i;

    for (i = 0; i < au_n_detail; i++)
        if (au_detail[i].proto == proto)
            return;
    DISSECTOR_ASSERT(au_n_detail < AU_DETAIL_PROTOCOLS);
    if (au_ett_detail < 0)
        proto_register_subtree_array(ett, array_length(ett));
    i = au_n_detail++;
    au_detail[i].proto = proto;
    au_detail[i].hf = -1;
    hf[i].p_id = &au_detail[i].hf;
    hf[i].hfinfo.name = "Expert detail";
    hf[i].hfinfo.abbrev = g_strdup_printf("%s.expert.detail", proto_get_protocol_filter_name(proto));
    hf[i].hfinfo.type = FT_STRING;
    hf[i].hfinfo.display = BASE_NONE;
    hf[i].hfinfo.strings = NULL;
    hf[i].hfinfo.bitmask = 0;
    hf[i].hfinfo.blurb = "What this packet's expert info is about, with its numbers (the expert info's summary "
                         "is one text per kind)";
    HFILL_INIT(hf[i]);
    proto_register_field_array(proto, &hf[i], 1);
}

/* The detail field of the protocol that registered ei, -1 if none. */
static int au_detail_hf(const expert_field *ei)
{
    int proto = proto_registrar_get_parent(ei->hf);

    for (guint i = 0; i < au_n_detail; i++)
        if (au_detail[i].proto == proto)
            return au_detail[i].hf;
    return -1;
}

void au_expert_detail(packet_info *pinfo, proto_item *ti, expert_field *ei, const char *format, ...)
{
    proto_tree *tree;
    proto_item *di;
    int hf;
    char *detail;
    va_list ap;

    if (!ti) {
        au_expert_add(pinfo, ei);
        return;
    }
    hf = au_detail_hf(ei);
    if (hf < 0 || !proto_field_is_referenced((proto_tree *)ti, hf)) {
        expert_add_info(pinfo, ti, ei);
        return;
    }
    va_start(ap, format);
    detail = wmem_strdup_vprintf(pinfo->pool, format, ap);
    va_end(ap);
    tree = proto_item_get_subtree(ti);
    if (!tree)
        tree = proto_item_add_subtree(ti, au_ett_detail);
    di = proto_tree_add_string_format(tree, hf, NULL, 0, 0, detail, "%s", detail);
    proto_item_set_generated(di);
    expert_add_info(pinfo, di, ei);
}
