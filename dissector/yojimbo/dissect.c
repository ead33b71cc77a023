/* dissect.c
 * Routines for yojimbo's connection packet: channel entries, message ids,
 * message types and bodies, block fragments (docs/yojimbo.md). The packet is
 * bit-packed and not self-describing: the channel configuration and the
 * number of message types are preferences, message bodies are decoded by a
 * schema file (schema.c). Blocks are reassembled and offered to File >
 * Export Objects. An independent implementation of the format.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/expert.h>
#include <epan/reassemble.h>
#include <epan/export_object.h>
#include <epan/tap.h>
#include <wsutil/report_message.h>
#include <epan/to_str.h>
#include <epan/proto_data.h>
#include <wsutil/str_util.h>

#include "yojimbo-int.h"
#include "netcode/netcode.h"
#include "common/analysis-util.h"
#include "common/single-pass.h"
#include "common/ws-compat.h"
#include "common/stats-util.h"
#include "common/reasm-store.h"
#include "common/register-util.h"

/* yojimbo's ClientServerConfig defaults: two reliable-ordered channels, 256
 * messages a packet, 256 KiB blocks in 1 KiB fragments; the examples'
 * TestMessageFactory registers 4 message types. */
#define YJ_DEFAULT_CHANNELS "ro,ro"
#define YJ_DEFAULT_MAX_BLOCK (256u * 1024u)
#define YJ_DEFAULT_FRAGMENT 1024u
#define YJ_DEFAULT_MAX_MESSAGES 256u
#define YJ_DEFAULT_TYPES 4

static int proto_yojimbo = -1;
static dissector_handle_t yojimbo_handle;
static dissector_handle_t yojimbo_udp_handle;
static int yj_eo_tap = -1;
static int yj_stats_tap = -1;

static int hf_channel_entries = -1;
static int hf_channel = -1;
static int hf_block_message = -1;
static int hf_has_messages = -1;
static int hf_message_count = -1;
static int hf_message_id = -1;
static int hf_message_type = -1;
static int hf_body_field = -1;
static int hf_body_bytes = -1;
static int hf_body_float = -1;
static int hf_message_block_size = -1;
static int hf_message_block = -1;
static int hf_undecoded = -1;
static int hf_block_message_id = -1;
static int hf_block_num_fragments = -1;
static int hf_block_fragment_id = -1;
static int hf_block_fragment_size = -1;
static int hf_block_fragment_data = -1;
static int hf_block_data = -1;
/* analysis */
static int hf_an_send_no = -1;
static int hf_an_first_sent = -1;
static int hf_an_prev_sent = -1;
static int hf_an_acked_in = -1;
static int hf_an_ack_delay = -1;
static int hf_an_after_ack = -1;
static int hf_an_progress = -1;
static int hf_an_block_acked_in = -1;
static int hf_an_confirms = -1;
static int hf_an_reliable_seq = -1;
static int hf_an_diagnosis = -1;
static int hf_an_diagnosis_line = -1;

static gint ett_yojimbo = -1;
static gint ett_entry = -1;
static gint ett_message = -1;
static gint ett_body = -1;
static gint ett_analysis = -1;
static gint ett_an_item = -1;
static gint ett_an_diagnosis = -1;

static expert_field ei_range = EI_INIT;
static expert_field ei_short = EI_INIT;
static expert_field ei_config = EI_INIT;
static expert_field ei_body_unknown = EI_INIT;
static expert_field ei_body_failed = EI_INIT;
static expert_field ei_trailing = EI_INIT;
static expert_field ei_not_block = EI_INIT;
static expert_field ei_resend = EI_INIT;
static expert_field ei_after_ack = EI_INIT;
static expert_field ei_never = EI_INIT;
static expert_field ei_limit = EI_INIT;

static cs_reasm_t *yj_store;     /* blocks (common/reasm-store.h) */

static cs_reassembly_fields_t yj_reasm;

/* Preferences as set, and as used. */
static const char *pref_channels = YJ_DEFAULT_CHANNELS;
static guint pref_types = YJ_DEFAULT_TYPES;
static const char *pref_schema = "";
static ws_cb_bool pref_reassemble = TRUE;
static ws_cb_bool pref_plain = FALSE;
static guint pref_stall_ms = 1000;

/* A configuration as used: the preferences', or a chunkshark_games row's
 * (netcode.h) for the connections it applies to. */
typedef struct yj_cfg {
    yj_channel_cfg_t ch[YJ_MAX_CHANNELS];
    int n_ch;
    guint types;
    char *error;                    /* the channel list is invalid: why */
    yj_schema_t *schema;
    char *schema_error;
    gboolean own_schema;            /* schema is this configuration's (not the preference's) */
} yj_cfg_t;

static yj_cfg_t pref_cfg = { .n_ch = 2, .types = YJ_DEFAULT_TYPES };
/* The games table's rows, as configurations (netcode_game(i) is games_cfg[i]),
 * made again when the table or the preferences change. */
static yj_cfg_t *games_cfg;
static guint n_games_cfg;
static guint games_cfg_gen;
static gboolean games_cfg_valid;

/* ---- Configuration ------------------------------------------------------ */

static gboolean parse_u32(const char *t, guint32 *v)
{
    char *end;
    guint64 x;
    if (!g_ascii_isdigit(*t))
        return FALSE;
    x = g_ascii_strtoull(t, &end, 10);
    if (*end || x > G_MAXINT32)
        return FALSE;
    *v = (guint32)x;
    return TRUE;
}

gboolean yj_parse_channels(const char *text, yj_channel_cfg_t *out, int *n, char **err)
{
    char **specs = g_strsplit(text ? text : "", ",", -1);
    int count = 0;
    gboolean ok = TRUE;

    for (char **sp = specs; *sp && ok; sp++) {
        char *spec = g_strstrip(*sp);
        char **parts;
        guint np;
        yj_channel_cfg_t c;

        if (count >= YJ_MAX_CHANNELS) {
            *err = g_strdup_printf("more than %d channels (yojimbo's limit)", YJ_MAX_CHANNELS);
            ok = FALSE;
            break;
        }
        parts = g_strsplit(spec, ":", -1);
        np = g_strv_length(parts);
        memset(&c, 0, sizeof c);
        c.max_block_size = YJ_DEFAULT_MAX_BLOCK;
        c.fragment_size = YJ_DEFAULT_FRAGMENT;
        c.max_messages = YJ_DEFAULT_MAX_MESSAGES;
        if (np == 0 || np > 4) {
            *err = g_strdup_printf("channel %d '%s': expected TYPE[:MAXBLOCK[:FRAGMENT[:MAXMESSAGES]]]", count, spec);
            ok = FALSE;
        } else {
            const char *t = g_strstrip(parts[0]);
            size_t tl = strlen(t);
            if (tl == 3 && t[2] == '!') {
                c.disable_blocks = TRUE;
                tl = 2;
            }
            if (tl == 2 && strncmp(t, "ro", 2) == 0)
                c.type = YJ_CHANNEL_RO;
            else if (tl == 2 && strncmp(t, "uu", 2) == 0)
                c.type = YJ_CHANNEL_UU;
            else {
                *err = g_strdup_printf("channel %d: type '%s' is neither ro (reliable-ordered) nor uu (unreliable-unordered), optionally followed by ! (blocks disabled)",
                                       count, t);
                ok = FALSE;
            }
            if (ok && np > 1 && (!parse_u32(g_strstrip(parts[1]), &c.max_block_size) || c.max_block_size < 1)) {
                *err = g_strdup_printf("channel %d: MAXBLOCK '%s' is not a number of bytes >= 1", count, parts[1]);
                ok = FALSE;
            }
            if (ok && np > 2 && (!parse_u32(g_strstrip(parts[2]), &c.fragment_size) || c.fragment_size < 1)) {
                *err = g_strdup_printf("channel %d: FRAGMENT '%s' is not a number of bytes >= 1", count, parts[2]);
                ok = FALSE;
            }
            if (ok && np > 3 && (!parse_u32(g_strstrip(parts[3]), &c.max_messages) || c.max_messages < 1 ||
                                 c.max_messages > 65536)) {
                *err = g_strdup_printf("channel %d: MAXMESSAGES '%s' is not a number in 1..65536", count, parts[3]);
                ok = FALSE;
            }
            if (ok && (c.max_block_size + (guint64)c.fragment_size - 1) / c.fragment_size > 65535) {
                *err = g_strdup_printf("channel %d: %u-byte blocks in %u-byte fragments is more than 65535 fragments",
                                       count, c.max_block_size, c.fragment_size);
                ok = FALSE;
            }
        }
        g_strfreev(parts);
        if (ok)
            out[count++] = c;
    }
    g_strfreev(specs);
    if (ok && count == 0) {
        *err = g_strdup("no channel given");
        ok = FALSE;
    }
    if (ok)
        *n = count;
    return ok;
}

static guint32 max_fragments(const yj_channel_cfg_t *c)
{
    return (c->max_block_size + c->fragment_size - 1) / c->fragment_size;
}

static void cfg_clear(yj_cfg_t *c)
{
    g_free(c->error);
    c->error = NULL;
    if (c->own_schema)
        yj_schema_free(c->schema);
    c->schema = NULL;
    c->own_schema = FALSE;
    g_free(c->schema_error);
    c->schema_error = NULL;
}

static void games_cfg_free(void)
{
    for (guint i = 0; i < n_games_cfg; i++)
        cfg_clear(&games_cfg[i]);
    g_free(games_cfg);
    games_cfg = NULL;
    n_games_cfg = 0;
    games_cfg_valid = FALSE;
}

static void apply_prefs(void)
{
    yj_channel_cfg_t ch[YJ_MAX_CHANNELS];
    int n = 0;
    char *err = NULL;

    cfg_clear(&pref_cfg);
    if (yj_parse_channels(pref_channels, ch, &n, &err)) {
        memcpy(pref_cfg.ch, ch, sizeof ch);
        pref_cfg.n_ch = n;
    } else {
        pref_cfg.error = g_strdup_printf("yojimbo.channels '%s': %s", pref_channels, err);
        g_free(err);
        report_failure("%s", pref_cfg.error);
    }
    if (pref_types < 1)
        pref_types = 1;
    pref_cfg.types = pref_types;
    if (pref_schema && *pref_schema) {
        pref_cfg.schema = yj_schema_load(pref_schema, &err);
        pref_cfg.own_schema = pref_cfg.schema != NULL;
        if (!pref_cfg.schema) {
            pref_cfg.schema_error = err;
            report_failure("yojimbo.schema_file: %s", err);
        }
    }
    yj_analysis_set_stall(pref_stall_ms / 1000.0);
    games_cfg_free();   /* a row's empty column is the preference's */
}

/* A chunkshark_games row's yojimbo columns: the channel list must parse and
 * the schema file load (netcode's table rejects the row otherwise). */
static gboolean games_check(const char *channels, const char *schema_file, char **err)
{
    yj_channel_cfg_t ch[YJ_MAX_CHANNELS];
    int n = 0;
    char *why = NULL;

    if (channels && *channels && !yj_parse_channels(channels, ch, &n, &why)) {
        *err = g_strdup_printf("Channels \"%s\": %s (the syntax of yojimbo.channels, e.g. ro,ro or "
                               "uu:8192,ro:10240:1024)", channels, why);
        g_free(why);
        return FALSE;
    }
    if (schema_file && *schema_file) {
        yj_schema_t *sc = yj_schema_load(schema_file, &why);
        if (!sc) {
            *err = g_strdup_printf("Schema file: %s", why);
            g_free(why);
            return FALSE;
        }
        yj_schema_free(sc);
    }
    return TRUE;
}

/* The configuration of the packet's connection: its games row's (netcode
 * passes it up, through reliable), or the preferences'. */
static const yj_cfg_t *packet_cfg(const reliable_payload_info_t *rl)
{
    const netcode_game_t *g = rl && rl->netcode ? rl->netcode->game : NULL;

    if (!g)
        return &pref_cfg;
    if (!games_cfg_valid || games_cfg_gen != netcode_games_generation()) {
        games_cfg_free();
        n_games_cfg = netcode_games_count();
        games_cfg = g_new0(yj_cfg_t, n_games_cfg ? n_games_cfg : 1);
        for (guint i = 0; i < n_games_cfg; i++) {
            const netcode_game_t *r = netcode_game(i);
            yj_cfg_t *c = &games_cfg[i];
            char *err = NULL;
            *c = pref_cfg;
            c->error = NULL;
            c->schema_error = NULL;
            c->own_schema = FALSE;
            if (pref_cfg.error)
                c->error = g_strdup(pref_cfg.error);
            if (pref_cfg.schema_error)
                c->schema_error = g_strdup(pref_cfg.schema_error);
            if (*r->channels) {
                g_free(c->error);
                c->error = NULL;
                if (!yj_parse_channels(r->channels, c->ch, &c->n_ch, &err)) {
                    c->error = g_strdup_printf("chunkshark_games row %u, channels '%s': %s", r->row, r->channels, err);
                    g_free(err);
                }
            }
            if (r->message_types)
                c->types = r->message_types;
            if (*r->schema_file) {
                g_free(c->schema_error);
                c->schema_error = NULL;
                c->schema = yj_schema_load(r->schema_file, &err);
                c->own_schema = c->schema != NULL;
                if (!c->schema)
                    c->schema_error = err;
            }
        }
        games_cfg_gen = netcode_games_generation();
        games_cfg_valid = TRUE;
    }
    return g->row && (guint)(g - netcode_game(0)) < n_games_cfg ? &games_cfg[g - netcode_game(0)] : &pref_cfg;
}

/* ---- Export Objects ----------------------------------------------------- */

typedef struct yj_eo {
    const char *hostname;
    const char *filename;
    const char *content_type;
    guint len;
    const guint8 *data;
} yj_eo_t;

static tap_packet_status eo_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                   const void *data, tap_flags_t flags _U_)
{
    const yj_eo_t *eo = (const yj_eo_t *)data;

    su_export_object_add(tapdata, pinfo->num, eo->hostname, eo->content_type, eo->filename, eo->data, eo->len);
    return TAP_PACKET_REDRAW;
}

/* ---- Decoding ----------------------------------------------------------- */

typedef struct ctx {
    tvbuff_t *tvb;
    packet_info *pinfo;
    proto_tree *tree;
    proto_item *top;
    yj_bits_t b;
    gboolean transient;             /* tshark's single pass: the frame is never dissected again */
    gboolean stopped;               /* a body the schema does not know, or an error */
    gboolean error;
    wmem_array_t *items;            /* yj_pending_item_t */
    wmem_strbuf_t *info;
    const yj_cfg_t *cfg;            /* the connection's configuration */
    guint n_done;                   /* blocks reassembled in this packet (first pass) */
    guint32 done[YJ_MAX_CHANNELS];  /* (channel << 16) | message id */
} ctx_t;

static const yj_body_hf_t body_hf = { 0, 0, 0, 0 };

/* Whether an item under tree at the reading position is skipped: no tree,
 * and no exception to throw (the position is within the captured bytes;
 * a subtree checks its start even without a tree). */
static gboolean no_items(const ctx_t *c, proto_tree *tree)
{
    return !tree && (c->b.pos >> 3) <= c->b.avail;
}

/* The Info text is written without printf (it is written for every
 * packet): lead then v. */
static void info_uint(ctx_t *c, const char *lead, guint32 v)
{
    char buf[16], *p;

    wmem_strbuf_append(c->info, lead);
    p = au_put_uint(buf, v);
    *p = 0;
    wmem_strbuf_append_len(c->info, buf, (gsize)(p - buf));
}

/* A hint naming a channel: lead, the channel, ")" (buf: room for lead and
 * 12 more). Written without printf, for every entry: it is only read when
 * a field does not read. */
static const char *channel_hint(char *buf, const char *lead, guint ch)
{
    char *p = au_put_str(buf, lead);

    p = au_put_uint(p, ch);
    *p++ = ')';
    *p = 0;
    return buf;
}

/* A field that did not read: expert info at the bits, the rest undecoded. */
static void stop_error(ctx_t *c, expert_field *ei, guint64 from, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static void stop_error(ctx_t *c, expert_field *ei, guint64 from, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    gint off, len;

    va_start(ap, fmt);
    msg = wmem_strdup_vprintf(c->pinfo->pool, fmt, ap);
    va_end(ap);
    off = (gint)(from >> 3);
    len = tvb_reported_length_remaining(c->tvb, off);
    if (len <= 0) {
        off = 0;
        len = 0;
    }
    AU_EXPERT(c->pinfo, c->top, ei, "%s", msg);
    if (len > 0)
        proto_tree_add_item(c->tree, hf_undecoded, c->tvb, off, len, ENC_NA);
    wmem_strbuf_append(c->info, " [error]");
    c->stopped = TRUE;
    c->error = TRUE;
}

/* serialize_int(min, max) as a tree item; FALSE (and stop_error) when it
 * does not read. what/hint name the field and the setting to check. */
static gboolean read_int(ctx_t *c, proto_tree *tree, int hf, guint32 min, guint32 max, guint32 *v,
                         const char *what, const char *hint)
{
    guint64 start = c->b.pos;
    int n = yj_bits_required(min, max);
    guint32 u;
    gint off, len;

    if (!yj_read_bits(&c->b, n, &u)) {
        stop_error(c, &ei_short, start, "The packet ends inside %s (%d bits at bit %" PRIu64 " of %" PRIu64 "): check %s",
                   what, n, start, c->b.end, hint);
        return FALSE;
    }
    if (u > max - min) {
        yj_bit_range(start, c->b.pos, &off, &len);
        proto_tree_add_uint(tree, hf, c->tvb, off, len, u + min);
        stop_error(c, &ei_range, start, "%s %u is out of its range %u..%u: check %s", what, u + min, min, max, hint);
        return FALSE;
    }
    *v = u + min;
    if (hf >= 0 && n > 0) {
        yj_bit_range(start, c->b.pos, &off, &len);
        proto_tree_add_uint(tree, hf, c->tvb, off, len, *v);
    } else if (hf >= 0) {
        proto_item *it = proto_tree_add_uint(tree, hf, c->tvb, (gint)(start >> 3), 0, *v);
        proto_item_append_text(it, " (not on the wire: the only possible value)");
        proto_item_set_generated(it);
    }
    return TRUE;
}

static gboolean read_flag(ctx_t *c, proto_tree *tree, int hf, gboolean *v, const char *what)
{
    guint64 start = c->b.pos;
    guint32 u;
    if (!yj_read_bits(&c->b, 1, &u)) {
        stop_error(c, &ei_short, start, "The packet ends before %s (bit %" PRIu64 "): check yojimbo.channels", what, start);
        return FALSE;
    }
    *v = u != 0;
    proto_tree_add_boolean(tree, hf, c->tvb, (gint)(start >> 3), 1, u);
    return TRUE;
}

static const char *type_str(ctx_t *c, guint32 type)
{
    const char *n = yj_schema_type_name(c->cfg->schema, type);
    return n ? n : wmem_strdup_printf(c->pinfo->pool, "type %u", type);
}

/* The message type (omitted on the wire with one registered type). */
static gboolean read_type(ctx_t *c, proto_tree *tree, guint32 *type)
{
    if (!read_int(c, tree, hf_message_type, 0, c->cfg->types - 1, type, "the message type", "yojimbo.message_types"))
        return FALSE;
    return TRUE;
}

/* A body by the schema; stops the decode when it cannot go on. */
static gboolean read_body(ctx_t *c, proto_tree *tree, guint32 type)
{
    guint64 start = c->b.pos;
    char *err = NULL;
    yj_body_hf_t hf = body_hf;
    yj_body_result_t r;
    proto_tree *bt = NULL;
    proto_item *bi = NULL;

    hf.field = hf_body_field;
    hf.bytes = hf_body_bytes;
    hf.fvalue = hf_body_float;
    if (tree)
        bt = proto_tree_add_subtree_format(tree, c->tvb, (gint)(start >> 3), 0, ett_body, &bi, "Body (%s)",
                                           type_str(c, type));
    r = yj_schema_run(c->cfg->schema, type, &c->b, c->tvb, bt, &hf, c->pinfo->pool, &err);
    if (r == YJ_BODY_OK) {
        gint off, len;
        yj_bit_range(start, c->b.pos, &off, &len);
        proto_item_set_len(bi, len);
        proto_item_append_text(bi, ", %" PRIu64 " bits", c->b.pos - start);
        return TRUE;
    }
    if (r == YJ_BODY_UNKNOWN) {
        gint off = (gint)(start >> 3);
        gint len = tvb_reported_length_remaining(c->tvb, off);
        if (c->cfg->schema_error)
            AU_EXPERT(c->pinfo, bi, &ei_body_unknown,
                      "The schema file did not load (%s): the rest of the packet is not decoded", c->cfg->schema_error);
        else if (!c->cfg->schema)
            AU_EXPERT(c->pinfo, bi, &ei_body_unknown,
                      "Message bodies are the application's own: set yojimbo.schema_file to decode past this %s body",
                      type_str(c, type));
        else
            AU_EXPERT(c->pinfo, bi, &ei_body_unknown,
                      "The schema has no message type %u: the rest of the packet is not decoded", type);
        if (len > 0)
            proto_tree_add_item(bt, hf_undecoded, c->tvb, off, len, ENC_NA);
        c->stopped = TRUE;
        return FALSE;
    }
    AU_EXPERT(c->pinfo, bi, &ei_body_failed, "Body does not read: %s: check yojimbo.schema_file", err);
    {
        gint off = (gint)(start >> 3);
        gint len = tvb_reported_length_remaining(c->tvb, off);
        if (len > 0)
            proto_tree_add_item(bt, hf_undecoded, c->tvb, off, len, ENC_NA);
    }
    wmem_strbuf_append(c->info, " [body error]");
    c->stopped = TRUE;
    c->error = TRUE;
    return FALSE;
}

static void add_item(ctx_t *c, guint8 ch, gboolean is_block, guint16 id, gint32 type, gint32 frag,
                     guint16 nfrag, guint32 size)
{
    yj_pending_item_t it = { .channel = ch, .is_block = is_block, .id = id, .type = type, .frag = frag,
                             .num_fragments = nfrag, .size = size };

    wmem_array_append_one(c->items, it);
}

static void ordered_messages(ctx_t *c, proto_tree *et, guint ch, guint32 count)
{
    guint16 *ids;
    guint64 start = c->b.pos;
    guint32 v;
    gint off, len;

    /* 16 bits for the first id, at least one for each next one */
    if (15 + (guint64)count > c->b.end - c->b.pos) {
        stop_error(c, &ei_short, start, "%u message ids cannot fit in the %" PRIu64 " bits left: check yojimbo.channels (MAXMESSAGES of channel %u)",
                   count, c->b.end - c->b.pos, ch);
        return;
    }
    ids = wmem_alloc_array(c->pinfo->pool, guint16, count);

    if (!yj_read_bits(&c->b, 16, &v)) {
        stop_error(c, &ei_short, start, "The packet ends inside the first message id (16 bits at bit %" PRIu64 "): check yojimbo.channels (MAXMESSAGES of channel %u)",
                   start, ch);
        return;
    }
    ids[0] = (guint16)v;
    yj_bit_range(start, c->b.pos, &off, &len);
    proto_tree_add_uint(et, hf_message_id, c->tvb, off, len, ids[0]);
    for (guint32 i = 1; i < count; i++) {
        const char *why;
        guint32 cur;
        start = c->b.pos;
        if (!yj_read_relative(&c->b, ids[i - 1], &cur, &why)) {
            stop_error(c, &ei_range, start, "Message id %u of %u (relative to id %u) does not read: %s: check yojimbo.channels (MAXMESSAGES of channel %u)",
                       i + 1, count, ids[i - 1], why, ch);
            return;
        }
        /* serialize_sequence_relative: a value past 65535 wraps */
        ids[i] = (guint16)(cur >= 65536 ? cur - 65536 : cur);
        yj_bit_range(start, c->b.pos, &off, &len);
        proto_tree_add_uint(et, hf_message_id, c->tvb, off, len, ids[i]);
    }
    info_uint(c, " ch", ch);
    info_uint(c, " msgs ", ids[0]);
    if (count > 1)
        info_uint(c, "-", ids[count - 1]);
    /* the analysis needs every id even when a body stops the decode */
    for (guint32 i = 0; i < count; i++)
        add_item(c, (guint8)ch, FALSE, ids[i], -1, -1, 0, 0);
    for (guint32 i = 0; i < count && !c->stopped; i++) {
        proto_item *mi = NULL;
        proto_tree *mt = no_items(c, et) ? NULL :
                         proto_tree_add_subtree_format(et, c->tvb, (gint)(c->b.pos >> 3), 0, ett_message, &mi,
                                                       "Message %u of %u: id %u", i + 1, count, ids[i]);
        guint64 ms = c->b.pos;
        guint32 type;
        if (!read_type(c, mt, &type))
            return;
        if (mi)
            proto_item_append_text(mi, ", %s", type_str(c, type));
        ((yj_pending_item_t *)wmem_array_index(c->items, wmem_array_get_count(c->items) - count + i))->type = (gint32)type;
        if (c->cfg->schema && yj_schema_has_type(c->cfg->schema, type) && yj_schema_is_block(c->cfg->schema, type))
            AU_EXPERT(c->pinfo, mi, &ei_not_block,
                      "%s is a block message: on a reliable-ordered channel it travels as block fragments, not in a message list (check yojimbo.schema_file)",
                      type_str(c, type));
        read_body(c, mt, type);
        yj_bit_range(ms, c->b.pos, &off, &len);
        proto_item_set_len(mi, len);
    }
}

static void unordered_messages(ctx_t *c, proto_tree *et, guint ch, const yj_channel_cfg_t *cc, guint32 count)
{
    gint off, len;
    info_uint(c, " ch", ch);
    info_uint(c, " ", count);
    wmem_strbuf_append(c->info, count == 1 ? " unreliable msg" : " unreliable msgs");
    for (guint32 i = 0; i < count && !c->stopped; i++) {
        proto_item *mi = NULL;
        proto_tree *mt = no_items(c, et) ? NULL :
                         proto_tree_add_subtree_format(et, c->tvb, (gint)(c->b.pos >> 3), 0, ett_message, &mi,
                                                       "Message %u of %u", i + 1, count);
        guint64 ms = c->b.pos;
        guint32 type;
        if (!read_type(c, mt, &type))
            return;
        if (mi)
            proto_item_append_text(mi, ": %s", type_str(c, type));
        if (!read_body(c, mt, type))
            return;
        if (yj_schema_is_block(c->cfg->schema, type)) {
            guint32 size, pad;
            guint64 s;
            if (!read_int(c, mt, hf_message_block_size, 1, cc->max_block_size, &size, "the message block size",
                          "yojimbo.channels (MAXBLOCK of this channel)"))
                return;
            s = c->b.pos;
            if (!yj_read_bits(&c->b, (int)((8 - (c->b.pos & 7)) & 7), &pad) || c->b.pos + (guint64)size * 8 > c->b.end) {
                stop_error(c, &ei_short, s, "The packet ends inside a %u-byte message block: check yojimbo.channels (MAXBLOCK of channel %u)",
                           size, ch);
                return;
            }
            if (pad) {
                stop_error(c, &ei_range, s, "The padding before the message block is not zero");
                return;
            }
            proto_tree_add_item(mt, hf_message_block, c->tvb, (gint)(c->b.pos >> 3), (gint)size, ENC_NA);
            c->b.pos += (guint64)size * 8;
        }
        yj_bit_range(ms, c->b.pos, &off, &len);
        proto_item_set_len(mi, len);
    }
}

/* A block fragment's data into the plugin's reassembly store
 * (common/reasm-store.h, as Wireshark's table: keyed by the addresses and
 * ports, the channel and the message id); a fragment resent
 * after its block was reassembled is not reassembled again (decided on the
 * first pass, kept for the others). */
static void block_reassemble(ctx_t *c, proto_tree *et, guint ch, guint32 id, guint32 fid, guint32 nfrag,
                             guint32 fsize, gint data_off)
{
    tvbuff_t *block;
    gboolean save_frag = c->pinfo->fragmented;
    guint32 done, blen;

    if (!pref_reassemble)
        return;
    if (!c->pinfo->fd->visited) {
        done = yj_block_reassembled_in(c->pinfo, ch, (guint16)id);
        if (done == c->pinfo->num)
            done = 0;
        if (done && !c->transient)
            p_add_proto_data(wmem_file_scope(), c->pinfo, proto_yojimbo, 100 + ch, GUINT_TO_POINTER(done));
    } else {
        done = GPOINTER_TO_UINT(p_get_proto_data(wmem_file_scope(), c->pinfo, proto_yojimbo, 100 + ch));
    }
    if (done) {
        proto_item_set_generated(proto_tree_add_uint_format(et, yj_reasm.hf_reassembled_in, c->tvb, data_off, 0,
            done, "Block already reassembled in frame %u (this fragment is a resend)", done));
        return;
    }
    c->pinfo->fragmented = TRUE;
    block = cs_reasm_add_seq(yj_store, c->tvb, (guint)data_off, fsize, c->pinfo, et, (ch << 16) | id, fid,
                             fid != nfrag - 1, c->transient, &yj_reasm.items);
    c->pinfo->fragmented = save_frag;
    if (!block)
        return;
    blen = tvb_reported_length(block);
    if (!c->pinfo->fd->visited && c->n_done < YJ_MAX_CHANNELS)
        c->done[c->n_done++] = (ch << 16) | id;
    proto_tree_add_item(et, hf_block_data, block, 0, -1, ENC_NA);
    info_uint(c, " (block of ", blen);
    wmem_strbuf_append(c->info, " bytes reassembled)");
    if (have_tap_listener(yj_eo_tap)) {
        yj_eo_t *eo = wmem_new0(c->pinfo->pool, yj_eo_t);
        eo->hostname = address_to_str(c->pinfo->pool, &c->pinfo->src);
        eo->filename = wmem_strdup_printf(c->pinfo->pool, "yojimbo-block-%s-%u-ch%u-msg%u.bin",
                                          address_to_str(c->pinfo->pool, &c->pinfo->src), c->pinfo->srcport, ch, id);
        eo->content_type = "application/octet-stream";
        eo->len = blen;
        eo->data = (const guint8 *)tvb_memdup(c->pinfo->pool, block, 0, blen);
        tap_queue_packet(yj_eo_tap, c->pinfo, eo);
    }
}

/* Fragment 0's block message: its type and body. */
static void block_message(ctx_t *c, proto_tree *et)
{
    gint off, len;
    guint32 type;
    proto_item *mi;
    proto_tree *mt = proto_tree_add_subtree(et, c->tvb, (gint)(c->b.pos >> 3), 0, ett_message, &mi,
                                            "Block message");
    guint64 ms = c->b.pos;

    if (!read_type(c, mt, &type))
        return;
    ((yj_pending_item_t *)wmem_array_index(c->items, wmem_array_get_count(c->items) - 1))->type = (gint32)type;
    if (mi)
        proto_item_append_text(mi, ": %s", type_str(c, type));
    if (c->cfg->schema && yj_schema_has_type(c->cfg->schema, type) && !yj_schema_is_block(c->cfg->schema, type)) {
        AU_EXPERT(c->pinfo, mi, &ei_not_block,
                  "Fragment 0 names %s, which yojimbo.schema_file does not mark as a block message: yojimbo rejects this packet",
                  type_str(c, type));
    }
    read_body(c, mt, type);
    yj_bit_range(ms, c->b.pos, &off, &len);
    proto_item_set_len(mi, len);
}

static void block_fragment(ctx_t *c, proto_tree *et, guint ch, const yj_channel_cfg_t *cc)
{
    guint32 id, nfrag = 1, fid = 0, fsize, pad;
    guint32 maxf = max_fragments(cc);
    guint64 start = c->b.pos, s;
    gint off, len, data_off;
    char hint[96];

    channel_hint(hint, "yojimbo.channels (MAXBLOCK and FRAGMENT of channel ", ch);
    if (!yj_read_bits(&c->b, 16, &id)) {
        stop_error(c, &ei_short, start, "The packet ends inside the block's message id: check %s", hint);
        return;
    }
    yj_bit_range(start, c->b.pos, &off, &len);
    proto_tree_add_uint(et, hf_block_message_id, c->tvb, off, len, id);
    if (maxf > 1) {
        if (!read_int(c, et, hf_block_num_fragments, 1, maxf, &nfrag, "the block's fragment count", hint))
            return;
    } else {
        proto_item_set_generated(proto_tree_add_uint(et, hf_block_num_fragments, c->tvb, off, 0, 1));
    }
    if (nfrag > 1) {
        if (!read_int(c, et, hf_block_fragment_id, 0, nfrag - 1, &fid, "the fragment id", hint))
            return;
    } else {
        proto_item_set_generated(proto_tree_add_uint(et, hf_block_fragment_id, c->tvb, off, 0, 0));
    }
    if (!read_int(c, et, hf_block_fragment_size, 1, cc->fragment_size, &fsize, "the fragment size", hint))
        return;
    s = c->b.pos;
    if (!yj_read_bits(&c->b, (int)((8 - (c->b.pos & 7)) & 7), &pad) || c->b.pos + (guint64)fsize * 8 > c->b.end) {
        stop_error(c, &ei_short, s, "The packet ends inside the %u-byte fragment data: check %s", fsize, hint);
        return;
    }
    if (pad) {
        stop_error(c, &ei_range, s, "The padding before the fragment data is not zero: check %s", hint);
        return;
    }
    data_off = (gint)(c->b.pos >> 3);
    proto_tree_add_item(et, hf_block_fragment_data, c->tvb, data_off, (gint)fsize, ENC_NA);
    c->b.pos += (guint64)fsize * 8;
    info_uint(c, " ch", ch);
    info_uint(c, " block ", id);
    info_uint(c, " fragment ", fid);
    info_uint(c, "/", nfrag);
    add_item(c, (guint8)ch, TRUE, (guint16)id, -1, (gint32)fid, (guint16)nfrag, fsize);

    block_reassemble(c, et, ch, id, fid, nfrag, fsize, data_off);
    if (fid == 0 && !c->stopped)
        block_message(c, et);
}

/* A diagnosis in full under its item (which Wireshark cuts at 240
 * characters): a line per clause, split after each "; " (the facts: "sent
 * but never acknowledged: fragment 2"), the last clause also after each
 * ": " (the fact, then the explanation). */
static void diagnosis_lines(ctx_t *c, proto_item *di, const char *diag)
{
    proto_tree *dt = proto_item_add_subtree(di, ett_an_diagnosis);
    const char *p = diag;

    if (!dt)
        return;
    while (*p) {
        const char *end = strstr(p, "; ");
        if (!end)
            end = strstr(p, ": ");
        if (!end)
            end = p + strlen(p);
        proto_item_set_generated(proto_tree_add_string(dt, hf_an_diagnosis_line, c->tvb, 0, 0,
                                                       wmem_strndup(c->pinfo->pool, p, (size_t)(end - p))));
        p = *end ? end + 2 : end;
    }
}

/* One item of the packet's analysis under at: its subtree. */
static proto_tree *analysis_item(ctx_t *c, proto_tree *at, const yj_item_t *it)
{
    const yj_msg_t *m = it->msg;
    proto_item *ii;
    proto_tree *t;
    guint32 acked = it->frag < 0 ? m->acked_frame : m->frags[it->frag].acked_frame;

    if (it->frag < 0)
        t = proto_tree_add_subtree_format(at, c->tvb, 0, 0, ett_an_item, &ii, "Message %u (channel %u): send %u",
                                          m->id, m->channel, it->send_no);
    else
        t = proto_tree_add_subtree_format(at, c->tvb, 0, 0, ett_an_item, &ii,
                                          "Block %u fragment %d of %u (channel %u): send %u", m->id, it->frag,
                                          m->num_fragments, m->channel, it->send_no);
    proto_item_set_generated(ii);
    proto_item_set_generated(proto_tree_add_uint(t, hf_an_send_no, c->tvb, 0, 0, it->send_no));
    if (it->send_no > 1) {
        guint32 first = it->frag < 0 ? m->first_frame : m->frags[it->frag].first_frame;
        proto_item_set_generated(proto_tree_add_uint(t, hf_an_first_sent, c->tvb, 0, 0, first));
        proto_item_set_generated(proto_tree_add_uint(t, hf_an_prev_sent, c->tvb, 0, 0, it->prev_frame));
    }
    if (it->acked_before)
        proto_item_set_generated(proto_tree_add_uint(t, hf_an_after_ack, c->tvb, 0, 0, it->acked_before));
    if (acked) {
        proto_item_set_generated(proto_tree_add_uint(t, hf_an_acked_in, c->tvb, 0, 0, acked));
        if (it->frag < 0 && acked > c->pinfo->num) {
            nstime_t d;
            nstime_delta(&d, &m->acked_time, &c->pinfo->abs_ts);
            proto_item_set_generated(proto_tree_add_time(t, hf_an_ack_delay, c->tvb, 0, 0, &d));
        }
    }
    if (it->frag >= 0) {
        proto_item_set_generated(proto_tree_add_uint(t, hf_an_progress, c->tvb, 0, 0, it->progress));
        proto_item_append_text(ii, " (%u of %u fragments acked before this packet)", it->progress, m->num_fragments);
        if (m->frags_acked == m->num_fragments && m->acked_frame)
            proto_item_set_generated(proto_tree_add_uint(t, hf_an_block_acked_in, c->tvb, 0, 0, m->acked_frame));
    }
    return t;
}

static void analysis_tree(ctx_t *c, const yj_frame_t *fr)
{
    proto_tree *at = NULL;
    proto_item *ai = NULL;

    if (!fr || (!fr->n_items && !fr->have_header && !fr->limited))
        return;
    guint32 n_resent = 0, n_after_ack = 0;

    /* Without a tree only the counts and the expert infos. */
    if (c->tree) {
        at = proto_tree_add_subtree(c->tree, c->tvb, 0, 0, ett_analysis, &ai, "Analysis");
        proto_item_set_generated(ai);
        if (fr->have_header)
            proto_item_set_generated(proto_tree_add_uint(at, hf_an_reliable_seq, c->tvb, 0, 0, fr->seq));
        if (fr->n_confirmed)
            proto_item_set_generated(proto_tree_add_uint(at, hf_an_confirms, c->tvb, 0, 0, fr->n_confirmed));
    }
    for (guint32 i = 0; i < fr->n_items; i++) {
        const yj_item_t *it = &fr->items[i];
        const yj_msg_t *m = it->msg;
        proto_tree *t = NULL;

        if (it->send_no > 1 && !it->acked_before)
            n_resent++;
        if (it->acked_before)
            n_after_ack++;
        if (at)
            t = analysis_item(c, at, it);
        /* The last send of what never completed says why (known after the first pass). */
        if (c->pinfo->fd->visited && m->last_frame == c->pinfo->num && (it->frag < 0 || i + 1 == fr->n_items ||
                                                                         fr->items[i + 1].msg != m)) {
            char *diag = yj_diagnosis(c->pinfo->pool, m);
            if (diag) {
                proto_item *di = proto_tree_add_string(t, hf_an_diagnosis, c->tvb, 0, 0, diag);
                proto_item_set_generated(di);
                diagnosis_lines(c, di, diag);
                expert_add_info(c->pinfo, di, &ei_never);   /* the diagnosis item shows it */
            }
        }
    }
    /* One expert info a packet (a summary per message would make thousands of
     * distinct lines in Expert Information). */
    if (fr->limited)
        AU_EXPERT(c->pinfo, ai, &ei_limit,
                  "Not followed: the analysis keeps at most %u message ids and %u block fragments a file",
                  YJ_MAX_TRACKED_MSGS, YJ_MAX_TRACKED_FRAGMENTS);
    if (n_resent)
        AU_EXPERT(c->pinfo, ai, &ei_resend, "Resends: %u message%s or fragment%s sent before", n_resent,
                  n_resent == 1 ? "" : "s", n_resent == 1 ? "" : "s");
    if (n_after_ack)
        AU_EXPERT(c->pinfo, ai, &ei_after_ack,
                  "Sent after their ack went by at this capture point: %u message%s or fragment%s (wasted, or the ack was lost after the capture point)",
                  n_after_ack, n_after_ack == 1 ? "" : "s", n_after_ack == 1 ? "" : "s");
}

/* Channel entry e (of entries): FALSE when the packet stops reading there. */
static gboolean channel_entry(ctx_t *c, guint32 e, guint32 entries, int *last_ch)
{
    guint32 ch = 0;
    gboolean block;
    proto_item *ei = NULL;
    proto_tree *et = no_items(c, c->tree) ? NULL :
                     proto_tree_add_subtree_format(c->tree, c->tvb, (gint)(c->b.pos >> 3), 0, ett_entry, &ei,
                                                   "Channel entry %u of %u", e + 1, entries);
    guint64 es = c->b.pos;
    gint off, len;
    const yj_channel_cfg_t *cc;

    if (!read_int(c, et, hf_channel, 0, (guint32)c->cfg->n_ch - 1, &ch, "the channel index",
                  "yojimbo.channels (the number of channels)"))
        return FALSE;
    if ((int)ch <= *last_ch)
        AU_EXPERT(c->pinfo, ei, &ei_range,
                  "Channel %u after channel %d: yojimbo writes entries in ascending channel order", ch,
                  *last_ch);
    *last_ch = (int)ch;
    cc = &c->cfg->ch[ch];
    proto_item_append_text(ei, ": channel %u (%s)", ch, cc->type == YJ_CHANNEL_RO ? "reliable-ordered" : "unreliable-unordered");
    if (!read_flag(c, et, hf_block_message, &block, "the block flag"))
        return FALSE;
    if (!block) {
        gboolean has;
        guint32 count;
        char hint[80];
        if (!read_flag(c, et, hf_has_messages, &has, "the has-messages flag"))
            return FALSE;
        if (has) {
            channel_hint(hint, "yojimbo.channels (MAXMESSAGES of channel ", ch);
            if (!read_int(c, et, hf_message_count, 1, cc->max_messages, &count, "the message count", hint))
                return FALSE;
            if (cc->type == YJ_CHANNEL_RO)
                ordered_messages(c, et, ch, count);
            else
                unordered_messages(c, et, ch, cc, count);
        } else {
            info_uint(c, " ch", ch);
            wmem_strbuf_append(c->info, " empty");
        }
    } else if (cc->disable_blocks) {
        stop_error(c, &ei_range, es, "A block fragment on channel %u, which yojimbo.channels configures with blocks disabled (!): check yojimbo.channels",
                   ch);
        return FALSE;
    } else if (cc->type != YJ_CHANNEL_RO) {
        /* yojimbo's unreliable channel never sends fragments; its
         * reader would still parse one. */
        AU_EXPERT(c->pinfo, ei, &ei_range,
                  "A block fragment on unreliable-unordered channel %u: yojimbo sends fragments only on reliable-ordered channels (check yojimbo.channels)",
                  ch);
        block_fragment(c, et, ch, cc);
    } else {
        block_fragment(c, et, ch, cc);
    }
    yj_bit_range(es, c->b.pos, &off, &len);
    proto_item_set_len(ei, len);
    return TRUE;
}

/* A connection packet; rl: what reliable passed up with it (reliable.h),
 * NULL without reliable's header. */
static int dissect_connection_packet(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                                     const reliable_payload_info_t *rl)
{
    ctx_t c;
    guint32 entries;
    int last_ch = -1;
    const yj_frame_t *fr;

    memset(&c, 0, sizeof c);
    c.transient = yj_analysis_begin(pinfo);
    c.tvb = tvb;
    c.pinfo = pinfo;
    yj_bits_init(&c.b, tvb);
    c.items = wmem_array_new(pinfo->pool, sizeof(yj_pending_item_t));
    c.info = wmem_strbuf_new(pinfo->pool, "yojimbo");
    c.cfg = packet_cfg(rl);

    col_set_str(pinfo->cinfo, COL_PROTOCOL, "yojimbo");
    /* No item without a tree (it cannot throw with a byte captured). */
    c.top = tree || !tvb_captured_length(tvb) ? proto_tree_add_item(tree, proto_yojimbo, tvb, 0, -1, ENC_NA) : NULL;
    c.tree = proto_item_add_subtree(c.top, ett_yojimbo);

    if (c.cfg->error) {
        AU_EXPERT(pinfo, c.top, &ei_config, "%s: not decoded", c.cfg->error);
        col_set_str(pinfo->cinfo, COL_INFO, "yojimbo (invalid yojimbo.channels)");
        return tvb_captured_length(tvb);
    }
    if (read_int(&c, c.tree, hf_channel_entries, 0, (guint32)c.cfg->n_ch, &entries, "the channel entry count",
                 "yojimbo.channels (the number of channels)")) {
        if (entries == 0)
            wmem_strbuf_append(c.info, " no messages");
        for (guint32 e = 0; e < entries && !c.stopped; e++)
            if (!channel_entry(&c, e, entries, &last_ch))
                break;
    }
    if (!c.stopped) {
        guint64 rest = c.b.end - c.b.pos;
        if (rest >= 8) {
            gint off = (gint)((c.b.pos + 7) >> 3);
            AU_EXPERT(pinfo, c.top, &ei_trailing,
                      "%u bytes after the connection packet's last entry: check yojimbo.channels, yojimbo.message_types and yojimbo.schema_file",
                      tvb_reported_length_remaining(tvb, off));
            proto_tree_add_item(c.tree, hf_undecoded, tvb, off, -1, ENC_NA);
        }
    }

    fr = yj_analysis_packet(pinfo, rl, (const yj_pending_item_t *)wmem_array_get_raw(c.items),
                            wmem_array_get_count(c.items));
    /* after the analysis made the blocks' records */
    for (guint i = 0; i < c.n_done; i++)
        yj_block_set_reassembled(pinfo, c.done[i] >> 16, (guint16)(c.done[i] & 0xFFFF));
    analysis_tree(&c, fr);
    if (fr && have_tap_listener(yj_stats_tap)) {
        yj_tap_t *t = wmem_new0(pinfo->pool, yj_tap_t);
        t->frame = fr;
        tap_queue_packet(yj_stats_tap, pinfo, t);
    }

    col_clear(pinfo->cinfo, COL_INFO);
    col_add_str(pinfo->cinfo, COL_INFO, wmem_strbuf_get_str(c.info));
    yj_analysis_end(pinfo);
    return tvb_captured_length(tvb);
}

/* In reliable's payload (Decode As; the handle registered by name): data is
 * reliable's (reliable.h). */
static int dissect_yojimbo(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    return dissect_connection_packet(tvb, pinfo, tree, (const reliable_payload_info_t *)data);
}

/* A reliable regular packet straight on UDP (no netcode: test data, or a
 * capture taken inside the application) carrying a connection packet: the
 * header is read (with reliable's reader) only to find the payload and for
 * the analysis; reliable's fragments are left alone. */
static int dissect_yojimbo_plain(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree)
{
    reliable_header_t h;
    reliable_payload_info_t rl;
    guint len = tvb_captured_length(tvb);
    tvbuff_t *payload;

    if (len != tvb_reported_length(tvb) || len < 3)
        return 0;
    if (yj_u8(tvb, 0) & 1) {
        col_set_str(pinfo->cinfo, COL_PROTOCOL, "yojimbo");
        col_set_str(pinfo->cinfo, COL_INFO, "reliable fragment (not reassembled without the reliable dissector)");
        proto_tree_add_item(tree, proto_yojimbo, tvb, 0, -1, ENC_NA);
        return (int)len;
    }
    if (!reliable_read_header(tvb, 0, &h))
        return 0;
    proto_tree_add_subtree_format(tree, tvb, 0, h.len, ett_entry, NULL,
                                  "reliable header: sequence %u, ack %u, ack bits 0x%08x", h.seq, h.ack,
                                  h.ack_bits);
    if (len == h.len)
        return (int)h.len;
    /* What reliable would pass up with the payload (no analysis of its own). */
    memset(&rl, 0, sizeof rl);
    rl.kind = RELIABLE_PAYLOAD_PACKET;
    rl.seq = h.seq;
    rl.has_header = rl.has_packet_acks = TRUE;
    rl.ack = rl.packet_ack = h.ack;
    rl.ack_bits = rl.packet_ack_bits = h.ack_bits;
    payload = tvb_new_subset_remaining(tvb, h.len);
    dissect_connection_packet(payload, pinfo, tree, &rl);
    return (int)len;
}

/* Decode As on a UDP port: a bare connection packet, or with
 * yojimbo.plain_reliable a plain reliable packet carrying one. UDP's data
 * is not reliable's. */
static int dissect_yojimbo_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    if (pref_plain)
        return dissect_yojimbo_plain(tvb, pinfo, tree);
    return dissect_connection_packet(tvb, pinfo, tree, NULL);
}

/* Claims a reliable payload inside netcode when its framing fits the
 * configuration as far as the first channel entry's channel index and flags
 * (an empty packet: exactly one byte). */
static ws_cb_bool dissect_yojimbo_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    const reliable_payload_info_t *rl = (const reliable_payload_info_t *)data;
    yj_bits_t b;
    guint32 entries, ch = 0, flag;
    guint len = tvb_captured_length(tvb);
    const yj_cfg_t *cfg;

    if (len == 0 || len != tvb_reported_length(tvb))
        return FALSE;
    /* yojimbo runs reliable over netcode: a reliable payload elsewhere (a
     * game using reliable alone) is not taken for a connection packet. */
    if (!rl || !rl->netcode)
        return FALSE;
    cfg = packet_cfg(rl);
    if (cfg->error)
        return FALSE;
    yj_bits_init(&b, tvb);
    if (!yj_read_bits(&b, yj_bits_required(0, (guint32)cfg->n_ch), &entries) || entries > (guint32)cfg->n_ch)
        return FALSE;
    if (entries == 0) {
        if (len != 1 || yj_u8(tvb, 0) >> b.pos)
            return FALSE;
    } else {
        if (!yj_read_bits(&b, yj_bits_required(0, (guint32)cfg->n_ch - 1), &ch) || ch >= (guint32)cfg->n_ch)
            return FALSE;
        if (!yj_read_bits(&b, 1, &flag))
            return FALSE;
        if (flag && cfg->ch[ch].disable_blocks)
            return FALSE;
        if (!flag && (!yj_read_bits(&b, 1, &flag) || !flag))
            return FALSE;   /* an entry is only written when it has something */
    }
    dissect_connection_packet(tvb, pinfo, tree, rl);
    return TRUE;
}

static void yj_init(void)
{
    yj_analysis_init(proto_yojimbo);
}

static void yj_cleanup(void)
{
    yj_analysis_cleanup();
}

void proto_register_yojimbo(void)
{
    static hf_register_info hf[] = {
        { &hf_channel_entries, { "Channel entries", "yojimbo.channel_entries", FT_UINT32, BASE_DEC, NULL, 0x0,
          "Number of channel entries (serialize_int 0..channels)", HFILL } },
        { &hf_channel, { "Channel", "yojimbo.channel", FT_UINT32, BASE_DEC, NULL, 0x0,
          "Channel index (absent on the wire with one channel)", HFILL } },
        { &hf_block_message, { "Block message", "yojimbo.block_message", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
          "The entry carries one fragment of a block", HFILL } },
        { &hf_has_messages, { "Has messages", "yojimbo.has_messages", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_message_count, { "Message count", "yojimbo.message_count", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_message_id, { "Message id", "yojimbo.message_id", FT_UINT16, BASE_DEC, NULL, 0x0,
          "Message id (the first 16 bits, the others relative to the previous)", HFILL } },
        { &hf_message_type, { "Message type", "yojimbo.message_type", FT_UINT32, BASE_DEC, NULL, 0x0,
          "Index into the message factory (absent with one type)", HFILL } },
        { &hf_body_field, { "Body value", "yojimbo.body.value", FT_INT64, BASE_DEC, NULL, 0x0,
          "A number read by the schema", HFILL } },
        { &hf_body_bytes, { "Body bytes", "yojimbo.body.bytes", FT_BYTES, BASE_NONE, NULL, 0x0,
          "Bytes read or bits skipped by the schema", HFILL } },
        { &hf_body_float, { "Body float", "yojimbo.body.float", FT_DOUBLE, BASE_NONE, NULL, 0x0,
          "A float or double read by the schema", HFILL } },
        { &hf_message_block_size, { "Message block size", "yojimbo.message_block_size", FT_UINT32, BASE_DEC, NULL, 0x0,
          "Size of the block attached to an unreliable block message", HFILL } },
        { &hf_message_block, { "Message block", "yojimbo.message_block", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_undecoded, { "Undecoded", "yojimbo.undecoded", FT_BYTES, BASE_NONE, NULL, 0x0,
          "Bits not decoded (an application body without schema, or an error)", HFILL } },
        { &hf_block_message_id, { "Block message id", "yojimbo.block.message_id", FT_UINT16, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_block_num_fragments, { "Fragments", "yojimbo.block.num_fragments", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_block_fragment_id, { "Fragment id", "yojimbo.block.fragment_id", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_block_fragment_size, { "Fragment size", "yojimbo.block.fragment_size", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_block_fragment_data, { "Fragment data", "yojimbo.block.fragment_data", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_block_data, { "Block data", "yojimbo.block.data", FT_BYTES, BASE_NONE, NULL, 0x0, "The reassembled block", HFILL } },
    };
    /* After the reassembly fields (cs_reassembly_fields_register). */
    static hf_register_info hf_analysis[] = {
        { &hf_an_send_no, { "Send number", "yojimbo.analysis.send", FT_UINT32, BASE_DEC, NULL, 0x0,
          "How many packets have carried this message or fragment so far (1: first send)", HFILL } },
        { &hf_an_first_sent, { "First sent in", "yojimbo.analysis.first_sent_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_an_prev_sent, { "Previously sent in", "yojimbo.analysis.previous_send", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_an_acked_in, { "Acknowledged in", "yojimbo.analysis.acked_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
          "The peer's packet whose reliable ack first covered a packet carrying this", HFILL } },
        { &hf_an_ack_delay, { "Time to ack", "yojimbo.analysis.ack_delay", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_an_after_ack, { "Sent after the ack in", "yojimbo.analysis.sent_after_ack", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
          "A resend after its ack had gone by at the capture point", HFILL } },
        { &hf_an_progress, { "Fragments acked before", "yojimbo.analysis.block_progress", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_an_block_acked_in, { "Block fully acked in", "yojimbo.analysis.block_acked_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_an_confirms, { "Confirms", "yojimbo.analysis.confirms", FT_UINT32, BASE_DEC, NULL, 0x0,
          "Messages and fragments of the peer first acknowledged by this packet's reliable ack", HFILL } },
        { &hf_an_reliable_seq, { "Reliable sequence", "yojimbo.analysis.reliable_sequence", FT_UINT16, BASE_DEC, NULL, 0x0,
          "The sequence of reliable's header in front of this payload", HFILL } },
        { &hf_an_diagnosis, { "Diagnosis", "yojimbo.analysis.diagnosis", FT_STRING, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_an_diagnosis_line, { "Line", "yojimbo.analysis.diagnosis.line", FT_STRING, BASE_NONE, NULL, 0x0,
            "One clause of the diagnosis, whole (the Diagnosis line is cut at 240 characters)", HFILL } },
    };
    static gint *ett[] = { &ett_yojimbo, &ett_entry, &ett_message, &ett_body, &ett_analysis, &ett_an_item,
                           &ett_an_diagnosis };
    static ei_register_info ei[] = {
        { &ei_range, { "yojimbo.range", PI_MALFORMED, PI_ERROR, "A field is out of the range the configuration allows", EXPFILL } },
        { &ei_short, { "yojimbo.short", PI_MALFORMED, PI_ERROR, "The packet ends inside a field", EXPFILL } },
        { &ei_config, { "yojimbo.config", PI_PROTOCOL, PI_ERROR, "The yojimbo preferences are invalid", EXPFILL } },
        { &ei_body_unknown, { "yojimbo.body.unknown", PI_UNDECODED, PI_NOTE, "Message body not decoded (no schema)", EXPFILL } },
        { &ei_body_failed, { "yojimbo.body.failed", PI_MALFORMED, PI_WARN, "Message body does not read by the schema", EXPFILL } },
        { &ei_trailing, { "yojimbo.trailing", PI_MALFORMED, PI_WARN, "Bytes after the connection packet", EXPFILL } },
        { &ei_not_block, { "yojimbo.not_block", PI_PROTOCOL, PI_WARN, "Block message mismatch", EXPFILL } },
        { &ei_resend, { "yojimbo.resend", PI_SEQUENCE, PI_NOTE, "Message or fragment resent", EXPFILL } },
        { &ei_after_ack, { "yojimbo.resend_after_ack", PI_SEQUENCE, PI_NOTE, "Resent after its ack", EXPFILL } },
        { &ei_never, { "yojimbo.never_completed", PI_SEQUENCE, PI_WARN, "Never acknowledged", EXPFILL } },
        { &ei_limit, { "yojimbo.analysis_limit", PI_SEQUENCE, PI_NOTE, "Analysis limit reached", EXPFILL } },
    };
    static const cs_reassembly_names_t reasm_names = {
        .prefix = "yojimbo.block", .fragments = "Block fragments", .fragment = "Block fragment",
        .tag = "Block fragments", .multiple_tails = "Multiple tail fragments", .with_data = TRUE,
    };
    module_t *m;

    proto_yojimbo = proto_register_protocol("yojimbo connection packet", "yojimbo", "yojimbo");
    proto_register_field_array(proto_yojimbo, hf, array_length(hf));
    cs_reassembly_fields_register(proto_yojimbo, &yj_reasm, &reasm_names);
    CS_REGISTER_ARRAYS(proto_yojimbo, hf_analysis, ett, ei);

    m = prefs_register_protocol(proto_yojimbo, apply_prefs);
    prefs_register_string_preference(m, "channels", "Channels",
        "The channel configuration both ends were built with, comma-separated, one spec a channel in index order: "
        "TYPE[:MAXBLOCK[:FRAGMENT[:MAXMESSAGES]]], TYPE ro (reliable-ordered) or uu (unreliable-unordered), "
        "followed by ! when the channel disables blocks; defaults 262144:1024:256 (yojimbo's ChannelConfig). "
        "Example: uu:8192,ro:10240:1024 (yojimbo's soak test). Default: ro,ro (yojimbo's ClientServerConfig).",
        &pref_channels);
    prefs_register_uint_preference(m, "message_types", "Message types",
        "The number of message types the message factory registers (4 in yojimbo's examples)", 10, &pref_types);
    prefs_register_filename_preference(m, "schema_file", "Message schema file",
        "A file describing each message type's body as serialize primitives (docs/yojimbo.md); "
        "without it decoding stops at the first message body",
        &pref_schema, FALSE);
    prefs_register_bool_preference(m, "reassemble", "Reassemble blocks",
        "Reassemble block fragments into blocks (shown, and offered by File > Export Objects > yojimbo)", &pref_reassemble);
    prefs_register_bool_preference(m, "plain_reliable", "Decode As: after a plain reliable header",
        "With Decode As yojimbo on a UDP port: each datagram is a plain (unencrypted, no netcode) reliable regular "
        "packet whose payload is a connection packet, as an application may log or capture inside netcode",
        &pref_plain);
    prefs_register_uint_preference(m, "stall_ms", "Block stall threshold (ms)",
        "A block whose acknowledged fragments do not grow for this long is reported as stalled", 10, &pref_stall_ms);
    /* Last, as in reliable's page: what to decode first, then how much memory to keep. */
    yj_analysis_register_prefs(m);

    yj_store = cs_reasm_new("Reassembled yojimbo block", NULL);
    yojimbo_handle = register_dissector("yojimbo", dissect_yojimbo, proto_yojimbo);
    yojimbo_udp_handle = register_dissector("yojimbo_udp", dissect_yojimbo_udp, proto_yojimbo);
    yj_eo_tap = register_export_object(proto_yojimbo, eo_packet, NULL);
    yj_stats_tap = register_tap("yojimbo_stats");
    register_init_routine(yj_init);
    register_cleanup_routine(yj_cleanup);
    yj_stats_register();
    netcode_games_set_check(games_check);
    yj_flow_register(proto_yojimbo);
    apply_prefs();
}

void proto_reg_handoff_yojimbo(void)
{
    yj_analysis_handoff();
    /* reliable's payload list and table, when the reliable dissector is
     * there; Decode As on a UDP port for connection packets without it. */
    if (has_heur_dissector_list("reliable.payload"))
        heur_dissector_add("reliable.payload", dissect_yojimbo_heur, "yojimbo over reliable", "yojimbo_reliable",
                           proto_yojimbo, HEURISTIC_ENABLE);
    if (find_dissector_table("reliable.payload"))
        dissector_add_for_decode_as("reliable.payload", yojimbo_handle);
    dissector_add_for_decode_as("udp.port", yojimbo_udp_handle);
}
