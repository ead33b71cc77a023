/* schema.c
 * Message schema files for the yojimbo dissector: per message type, the
 * serialize primitives its body reads, so that decoding goes on past a body
 * (bodies are the game's own and carry no length). The format is described
 * in docs/yojimbo.md; docs/yojimbo-example.schema is a worked example.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/proto.h>

#include "yojimbo-int.h"

#define YJ_SCHEMA_MAX_TYPES 65536
#define YJ_SCHEMA_MAX_STEPS 1024    /* per message type */
#define YJ_SCHEMA_MAX_TABLE 4096    /* entries of a skip_by table */
#define YJ_SCHEMA_MAX_BYTES (1u << 24)

typedef enum {
    OP_BITS, OP_INT, OP_BOOL, OP_FLOAT, OP_DOUBLE, OP_BYTES, OP_STRING, OP_ALIGN,
    OP_RELATIVE, OP_SKIP_BY, OP_FAIL
} op_t;

typedef struct step {
    op_t op;
    char *name;                     /* may be NULL (unnamed value) */
    gint64 a, b;                    /* bits N / int MIN MAX / bytes N / string SIZE */
    int ref;                        /* index of the step whose value is used, -1: none */
    guint32 *table;                 /* skip_by */
    guint n_table;
    char *reason;                   /* fail */
} step_t;

typedef struct msg_schema {
    guint32 type;
    char *name;
    gboolean block;
    GArray *steps;                  /* step_t */
} msg_schema_t;

/* The types below YJ_SCHEMA_DIRECT also by index (looked up for every
 * message: a table lookup costs more than the rest of a small body). */
#define YJ_SCHEMA_DIRECT 64

struct yj_schema {
    GHashTable *types;              /* type -> msg_schema_t */
    const msg_schema_t *direct[YJ_SCHEMA_DIRECT];
};

static void step_clear(gpointer p)
{
    step_t *s = (step_t *)p;
    g_free(s->name);
    g_free(s->table);
    g_free(s->reason);
}

static void msg_free(gpointer p)
{
    msg_schema_t *m = (msg_schema_t *)p;
    g_free(m->name);
    g_array_free(m->steps, TRUE);
    g_free(m);
}

void yj_schema_free(yj_schema_t *s)
{
    if (!s)
        return;
    g_hash_table_destroy(s->types);
    g_free(s);
}

static gboolean parse_int64(const char *t, gint64 *v)
{
    char *end;
    errno = 0;
    gint64 x = g_ascii_strtoll(t, &end, 0);
    if (errno || end == t || *end)
        return FALSE;
    *v = x;
    return TRUE;
}

static gboolean valid_name(const char *t)
{
    if (!g_ascii_isalpha(*t) && *t != '_')
        return FALSE;
    for (const char *p = t; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '_' && *p != '.')
            return FALSE;
    return TRUE;
}

/* The step named t among the steps so far that give a number. */
static int find_ref(const msg_schema_t *m, const char *t)
{
    for (int i = (int)m->steps->len - 1; i >= 0; i--) {
        const step_t *s = &g_array_index(m->steps, step_t, i);
        if (s->name && strcmp(s->name, t) == 0 &&
            (s->op == OP_BITS || s->op == OP_INT || s->op == OP_BOOL || s->op == OP_RELATIVE))
            return i;
    }
    return -1;
}

/* A parse error's text (g_free it): the line's mistake, without the file
 * and line the caller adds. */
#define FAIL(...) return g_strdup_printf(__VA_ARGS__)

/* The FIELD argument tok[1] of primitive tok[0] (bytes, relative, skip_by):
 * st->ref, the earlier number step of cur with that name. */
static char *parse_ref(const msg_schema_t *cur, char **tok, step_t *st)
{
    st->ref = find_ref(cur, tok[1]);
    if (st->ref < 0)
        FAIL("'%s %s': no earlier number named '%s' in message %s", tok[0], tok[1], tok[1], cur->name);
    return NULL;
}

/* 'message TYPE NAME [block]': a new type, made the current one. */
static char *parse_message(yj_schema_t *s, char **tok, guint nt, msg_schema_t **cur)
{
    gint64 type;

    if (nt < 3 || nt > 4)
        FAIL("expected 'message TYPE NAME [block]'");
    if (!parse_int64(tok[1], &type) || type < 0 || type >= YJ_SCHEMA_MAX_TYPES)
        FAIL("message type '%s' is not a number in 0..%u", tok[1], YJ_SCHEMA_MAX_TYPES - 1);
    if (!valid_name(tok[2]))
        FAIL("message name '%s' is not a name (letters, digits, _ and ., not starting with a digit)", tok[2]);
    if (nt == 4 && strcmp(tok[3], "block") != 0)
        FAIL("unexpected '%s' after the message name (only 'block' may follow)", tok[3]);
    if (g_hash_table_contains(s->types, GUINT_TO_POINTER((guint)type)))
        FAIL("message type %" PRId64 " is declared twice", type);
    *cur = g_new0(msg_schema_t, 1);
    (*cur)->type = (guint32)type;
    (*cur)->name = g_strdup(tok[2]);
    (*cur)->block = nt == 4;
    (*cur)->steps = g_array_new(FALSE, TRUE, sizeof(step_t));
    g_array_set_clear_func((*cur)->steps, step_clear);
    g_hash_table_insert(s->types, GUINT_TO_POINTER((guint)type), *cur);
    if ((guint)type < YJ_SCHEMA_DIRECT)
        s->direct[type] = *cur;
    return NULL;
}

/* 'bytes N|FIELD [name]' and 'string SIZE [name]'. */
static char *parse_sized(const msg_schema_t *cur, char **tok, guint nt, step_t *st)
{
    gboolean is_bytes = tok[0][0] == 'b';

    st->op = is_bytes ? OP_BYTES : OP_STRING;
    if (nt < 2)
        FAIL(is_bytes ? "'bytes N|FIELD [name]' needs a length" : "'string SIZE [name]' needs a buffer size");
    if (parse_int64(tok[1], &st->a)) {
        if (st->a < (is_bytes ? 0 : 2) || st->a > YJ_SCHEMA_MAX_BYTES)
            FAIL("'%s %s': the size must be in %d..%u", tok[0], tok[1], is_bytes ? 0 : 2, YJ_SCHEMA_MAX_BYTES);
    } else if (is_bytes) {
        return parse_ref(cur, tok, st);
    } else {
        FAIL("'string %s': the buffer size must be a number", tok[1]);
    }
    return NULL;
}

/* 'skip_by FIELD N0 N1 ...' (st->table is freed on an error). */
static char *parse_skip_by(const msg_schema_t *cur, char **tok, guint nt, step_t *st)
{
    char *err;

    st->op = OP_SKIP_BY;
    if (nt < 3)
        FAIL("'skip_by FIELD N0 N1 ...' needs a field and at least one bit count");
    if ((err = parse_ref(cur, tok, st)) != NULL)
        return err;
    if (nt - 2 > YJ_SCHEMA_MAX_TABLE)
        FAIL("'skip_by': more than %u bit counts", YJ_SCHEMA_MAX_TABLE);
    st->n_table = nt - 2;
    st->table = g_new(guint32, st->n_table);
    for (guint i = 0; i < st->n_table; i++) {
        gint64 v;
        if (!parse_int64(tok[2 + i], &v) || v < 0 || v > 8 * (gint64)YJ_SCHEMA_MAX_BYTES) {
            g_free(st->table);
            st->table = NULL;
            FAIL("'skip_by': '%s' is not a bit count in 0..%u", tok[2 + i], 8 * YJ_SCHEMA_MAX_BYTES);
        }
        st->table[i] = (guint32)v;
    }
    return NULL;
}

/* One step line of the current type into st; *name_at: the token that may
 * name its value. */
static char *parse_step(const msg_schema_t *cur, char **tok, guint nt, step_t *st, guint *name_at)
{
    *name_at = 1;
    if (strcmp(tok[0], "bits") == 0) {
        st->op = OP_BITS;
        if (nt < 2 || !parse_int64(tok[1], &st->a) || st->a < 1 || st->a > 64)
            FAIL("'bits N [name]' needs N in 1..64");
        *name_at = 2;
    } else if (strcmp(tok[0], "uint64") == 0) {
        st->op = OP_BITS;
        st->a = 64;
    } else if (strcmp(tok[0], "int") == 0) {
        st->op = OP_INT;
        if (nt < 3 || !parse_int64(tok[1], &st->a) || !parse_int64(tok[2], &st->b))
            FAIL("'int MIN MAX [name]' needs two numbers");
        if (st->a < G_MININT32 || st->b > G_MAXINT32 || st->a >= st->b)
            FAIL("'int %s %s': MIN must be below MAX, both 32-bit signed", tok[1], tok[2]);
        *name_at = 3;
    } else if (strcmp(tok[0], "bool") == 0) {
        st->op = OP_BOOL;
    } else if (strcmp(tok[0], "float") == 0) {
        st->op = OP_FLOAT;
    } else if (strcmp(tok[0], "double") == 0) {
        st->op = OP_DOUBLE;
    } else if (strcmp(tok[0], "bytes") == 0 || strcmp(tok[0], "string") == 0) {
        *name_at = 2;
        return parse_sized(cur, tok, nt, st);
    } else if (strcmp(tok[0], "align") == 0) {
        st->op = OP_ALIGN;
        if (nt > 1)
            FAIL("'align' takes nothing");
    } else if (strcmp(tok[0], "relative") == 0) {
        st->op = OP_RELATIVE;
        if (nt < 2)
            FAIL("'relative FIELD [name]' needs the earlier value it is relative to");
        *name_at = 2;
        return parse_ref(cur, tok, st);
    } else if (strcmp(tok[0], "skip_by") == 0) {
        *name_at = nt;
        return parse_skip_by(cur, tok, nt, st);
    } else if (strcmp(tok[0], "fail") == 0) {
        st->op = OP_FAIL;
        st->reason = nt > 1 ? g_strjoinv(" ", tok + 1) : g_strdup("the message's serialize fails on read");
        *name_at = nt;
    } else {
        FAIL("unknown primitive '%s' (bits, uint64, int, bool, float, double, bytes, string, align, relative, skip_by, fail)", tok[0]);
    }
    return NULL;
}

/* The optional value name at tok[name_at], the last token. */
static char *parse_value_name(char **tok, guint nt, guint name_at, step_t *st)
{
    if (name_at >= nt)
        return NULL;
    if (name_at + 1 < nt)
        FAIL("unexpected '%s' after '%s'", tok[name_at + 1], tok[name_at]);
    if (!valid_name(tok[name_at]))
        FAIL("'%s' is not a value name", tok[name_at]);
    st->name = g_strdup(tok[name_at]);
    return NULL;
}

#undef FAIL

/* One line's tokens (the comment cut, empty tokens dropped): their count. */
static guint tokens(char *line, char ***tok)
{
    char *hash;
    guint nt = 0;

    if ((hash = strchr(line, '#')) != NULL)
        *hash = '\0';
    g_strstrip(line);
    if (!*line)
        return 0;
    *tok = g_strsplit_set(line, " \t", -1);
    for (guint i = 0; (*tok)[i]; i++) {
        if (*(*tok)[i])
            (*tok)[nt++] = (*tok)[i];
        else
            g_free((*tok)[i]);
    }
    (*tok)[nt] = NULL;
    return nt;
}

/* One non-empty line of the schema: NULL, or what is wrong with it. */
static char *parse_line(yj_schema_t *s, char **tok, guint nt, msg_schema_t **cur)
{
    step_t st;
    guint name_at;
    char *msg;

    if (strcmp(tok[0], "message") == 0)
        return parse_message(s, tok, nt, cur);
    if (!*cur)
        return g_strdup_printf("'%s' before any 'message TYPE NAME' line", tok[0]);
    if ((*cur)->steps->len >= YJ_SCHEMA_MAX_STEPS)
        return g_strdup_printf("more than %u steps in message %s", YJ_SCHEMA_MAX_STEPS, (*cur)->name);
    memset(&st, 0, sizeof st);
    st.ref = -1;
    msg = parse_step(*cur, tok, nt, &st, &name_at);
    if (!msg)
        msg = parse_value_name(tok, nt, name_at, &st);
    if (msg) {
        g_free(st.table);
        g_free(st.reason);
        return msg;
    }
    g_array_append_val((*cur)->steps, st);
    return NULL;
}

yj_schema_t *yj_schema_parse(const char *text, const char *name, char **err)
{
    yj_schema_t *s = g_new0(yj_schema_t, 1);
    msg_schema_t *cur = NULL;
    char **lines = g_strsplit(text, "\n", -1);
    guint lineno = 0;

    s->types = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, msg_free);
    for (char **lp = lines; *lp; lp++) {
        char **tok = NULL;
        guint nt;
        char *msg;

        lineno++;
        nt = tokens(*lp, &tok);
        if (!nt) {
            g_strfreev(tok);
            continue;
        }
        msg = parse_line(s, tok, nt, &cur);
        g_strfreev(tok);
        if (msg) {
            *err = g_strdup_printf("schema %s line %u: %s", name, lineno, msg);
            g_free(msg);
            g_strfreev(lines);
            yj_schema_free(s);
            return NULL;
        }
    }
    g_strfreev(lines);
    return s;
}

yj_schema_t *yj_schema_load(const char *path, char **err)
{
    gchar *text = NULL;
    gsize len;
    GError *gerr = NULL;
    yj_schema_t *s;

    if (!g_file_get_contents(path, &text, &len, &gerr)) {
        *err = g_strdup_printf("schema %s: %s", path, gerr->message);
        g_error_free(gerr);
        return NULL;
    }
    if (strlen(text) != len) {
        *err = g_strdup_printf("schema %s: the file holds a NUL byte (not a text file)", path);
        g_free(text);
        return NULL;
    }
    s = yj_schema_parse(text, path, err);
    g_free(text);
    return s;
}

static const msg_schema_t *get_type(const yj_schema_t *s, guint32 type)
{
    if (!s)
        return NULL;
    if (type < YJ_SCHEMA_DIRECT)
        return s->direct[type];
    return (const msg_schema_t *)g_hash_table_lookup(s->types, GUINT_TO_POINTER(type));
}

const char *yj_schema_type_name(const yj_schema_t *s, guint32 type)
{
    const msg_schema_t *m = get_type(s, type);
    return m ? m->name : NULL;
}

gboolean yj_schema_has_type(const yj_schema_t *s, guint32 type)
{
    return get_type(s, type) != NULL;
}

gboolean yj_schema_is_block(const yj_schema_t *s, guint32 type)
{
    const msg_schema_t *m = get_type(s, type);
    return m && m->block;
}

/* Reads n (1..64) bits as serialize_bits does (the low 32 first). */
static gboolean read_wide(yj_bits_t *b, int n, guint64 *v)
{
    guint32 lo, hi = 0;
    if (b->pos + (guint64)n > b->end)
        return FALSE;
    if (n <= 32) {
        yj_read_bits(b, n, &lo);
        *v = lo;
        return TRUE;
    }
    yj_read_bits(b, 32, &lo);
    yj_read_bits(b, n - 32, &hi);
    *v = ((guint64)hi << 32) | lo;
    return TRUE;
}

static gboolean read_align(yj_bits_t *b, guint32 *pad)
{
    int n = (int)((8 - (b->pos & 7)) & 7);
    *pad = 0;
    return yj_read_bits(b, n, pad);
}

/* A body being run by its type's schema. */
typedef struct run {
    const msg_schema_t *m;
    yj_bits_t *b;
    tvbuff_t *tvb;
    proto_tree *tree;
    const yj_body_hf_t *hf;
    wmem_allocator_t *scope;
    char **err;
    gint64 *vals;                   /* each step's value */
} run_t;

typedef enum { STEP_OK, STEP_PAST_END, STEP_FAILED } step_result_t;

/* Whether a bytes item at [off, off + len) is skipped: no tree, and the
 * bytes are captured (the item reads them even without a tree, and would
 * throw past them). */
static gboolean no_bytes_item(const run_t *r, gint off, gint len)
{
    return !r->tree && (guint)off + (guint)len <= r->b->avail;
}

static const char *ref_name(const run_t *r, const step_t *st)
{
    return g_array_index(r->m->steps, step_t, st->ref).name;
}

/* A number step (bits, int, bool, relative): its value in vals[i]. */
static step_result_t run_number(run_t *r, guint i, const step_t *st, const char *nm)
{
    guint64 start = r->b->pos, u64;
    guint32 u, range;
    const char *why;
    gint off, len;

    switch (st->op) {
    case OP_BITS:
        if (!read_wide(r->b, (int)st->a, &u64))
            return STEP_PAST_END;
        r->vals[i] = (gint64)u64;
        yj_bit_range(start, r->b->pos, &off, &len);
        proto_tree_add_int64_format(r->tree, r->hf->field, r->tvb, off, len, r->vals[i],
                                    "%s: %" PRIu64 " (bits %" PRId64 ")", nm, u64, st->a);
        return STEP_OK;
    case OP_INT:
        range = (guint32)((guint64)(st->b - st->a));
        if (!yj_read_bits(r->b, yj_bits_required(0, range), &u))
            return STEP_PAST_END;
        if (u > range) {
            *r->err = wmem_strdup_printf(r->scope, "%s.%s: %u read, above the range %" PRId64 "..%" PRId64 " (%u values)",
                                         r->m->name, nm, u, st->a, st->b, range + 1);
            return STEP_FAILED;
        }
        r->vals[i] = st->a + (gint64)u;
        yj_bit_range(start, r->b->pos, &off, &len);
        proto_tree_add_int64_format(r->tree, r->hf->field, r->tvb, off, len, r->vals[i], "%s: %" PRId64, nm, r->vals[i]);
        return STEP_OK;
    case OP_BOOL:
        if (!yj_read_bits(r->b, 1, &u))
            return STEP_PAST_END;
        r->vals[i] = u;
        yj_bit_range(start, r->b->pos, &off, &len);
        proto_tree_add_int64_format(r->tree, r->hf->field, r->tvb, off, len, r->vals[i], "%s: %s", nm, u ? "true" : "false");
        return STEP_OK;
    default:    /* OP_RELATIVE */
        if (!yj_read_relative(r->b, (guint32)r->vals[st->ref], &u, &why)) {
            *r->err = wmem_strdup_printf(r->scope, "%s.%s (relative to %s): %s", r->m->name, nm, ref_name(r, st), why);
            return STEP_FAILED;
        }
        r->vals[i] = u;
        yj_bit_range(start, r->b->pos, &off, &len);
        proto_tree_add_int64_format(r->tree, r->hf->field, r->tvb, off, len, r->vals[i], "%s: %u (relative)", nm, u);
        return STEP_OK;
    }
}

/* A float or a double. */
static step_result_t run_real(run_t *r, const step_t *st, const char *nm)
{
    guint64 start = r->b->pos, u64;
    guint32 u;
    gint off, len;
    double d;

    if (st->op == OP_FLOAT) {
        float f;
        if (!yj_read_bits(r->b, 32, &u))
            return STEP_PAST_END;
        memcpy(&f, &u, 4);
        d = f;
    } else {
        if (!read_wide(r->b, 64, &u64))
            return STEP_PAST_END;
        memcpy(&d, &u64, 8);
    }
    yj_bit_range(start, r->b->pos, &off, &len);
    proto_tree_add_double_format(r->tree, r->hf->fvalue, r->tvb, off, len, d, "%s: %g", nm, d);
    return STEP_OK;
}

/* bytes (a fixed count or an earlier value's) and string. */
static step_result_t run_bytes(run_t *r, const step_t *st, const char *nm)
{
    guint64 n;
    guint32 u, pad;
    gint off;

    if (st->op == OP_STRING) {
        if (!yj_read_bits(r->b, yj_bits_required(0, (guint32)st->a - 1), &u))
            return STEP_PAST_END;
        if (u > st->a - 1) {
            *r->err = wmem_strdup_printf(r->scope, "%s.%s: string length %u read, above its buffer size %" PRId64 " - 1",
                                         r->m->name, nm, u, st->a);
            return STEP_FAILED;
        }
        n = u;
    } else if (st->ref >= 0) {
        if (r->vals[st->ref] < 0 || r->vals[st->ref] > YJ_SCHEMA_MAX_BYTES) {
            *r->err = wmem_strdup_printf(r->scope, "%s.%s: length %" PRId64 " from %s is not a byte count",
                                         r->m->name, nm, r->vals[st->ref], ref_name(r, st));
            return STEP_FAILED;
        }
        n = (guint64)r->vals[st->ref];
    } else {
        n = (guint64)st->a;
    }
    if (!read_align(r->b, &pad))
        return STEP_PAST_END;
    if (pad) {
        *r->err = wmem_strdup_printf(r->scope, "%s.%s: the padding before the bytes is not zero", r->m->name, nm);
        return STEP_FAILED;
    }
    if (r->b->pos + n * 8 > r->b->end)
        return STEP_PAST_END;
    off = (gint)(r->b->pos / 8);
    if (no_bytes_item(r, off, (gint)n)) {
        /* nothing to show */
    } else if (st->op == OP_STRING)
        proto_tree_add_bytes_format(r->tree, r->hf->bytes, r->tvb, off, (gint)n, NULL, "%s: \"%s\"", nm,
                                    tvb_format_text(r->scope, r->tvb, off, (gint)n));
    else
        proto_tree_add_bytes_format(r->tree, r->hf->bytes, r->tvb, off, (gint)n, NULL, "%s: %" PRIu64 " bytes", nm, n);
    r->b->pos += n * 8;
    return STEP_OK;
}

/* skip_by: the bits an earlier value's table entry says. */
static step_result_t run_skip(run_t *r, const step_t *st)
{
    guint64 start = r->b->pos;
    guint64 ix = (guint64)r->vals[st->ref] % st->n_table;
    guint32 n = st->table[ix];
    gint off, len;

    if (r->b->pos + n > r->b->end)
        return STEP_PAST_END;
    r->b->pos += n;
    if (n) {
        yj_bit_range(start, r->b->pos, &off, &len);
        if (!no_bytes_item(r, off, len))
            proto_tree_add_bytes_format(r->tree, r->hf->bytes, r->tvb, off, len, NULL,
                                        "%u bits skipped (%s %% %u = %" PRIu64 ")", n, ref_name(r, st), st->n_table,
                                        ix);
    }
    return STEP_OK;
}

static step_result_t run_step(run_t *r, guint i, const step_t *st, const char *nm)
{
    guint32 pad;

    switch (st->op) {
    case OP_BITS:
    case OP_INT:
    case OP_BOOL:
    case OP_RELATIVE:
        return run_number(r, i, st, nm);
    case OP_FLOAT:
    case OP_DOUBLE:
        return run_real(r, st, nm);
    case OP_STRING:
    case OP_BYTES:
        return run_bytes(r, st, nm);
    case OP_ALIGN:
        if (!read_align(r->b, &pad))
            return STEP_PAST_END;
        if (pad) {
            *r->err = wmem_strdup_printf(r->scope, "%s: align padding is not zero", r->m->name);
            return STEP_FAILED;
        }
        return STEP_OK;
    case OP_SKIP_BY:
        return run_skip(r, st);
    case OP_FAIL:
    default:
        *r->err = wmem_strdup_printf(r->scope, "%s: %s (schema says 'fail')", r->m->name, st->reason);
        return STEP_FAILED;
    }
}

yj_body_result_t yj_schema_run(const yj_schema_t *s, guint32 type, yj_bits_t *b, tvbuff_t *tvb,
                               proto_tree *tree, const yj_body_hf_t *hf, wmem_allocator_t *scope,
                               char **err)
{
    run_t r = { .m = get_type(s, type), .b = b, .tvb = tvb, .tree = tree, .hf = hf, .scope = scope, .err = err };

    if (!r.m)
        return YJ_BODY_UNKNOWN;
    r.vals = wmem_alloc0_array(scope, gint64, r.m->steps->len ? r.m->steps->len : 1);
    for (guint i = 0; i < r.m->steps->len; i++) {
        const step_t *st = &g_array_index(r.m->steps, step_t, i);
        const char *nm = st->name ? st->name : "(unnamed)";
        guint64 start = b->pos;

        switch (run_step(&r, i, st, nm)) {
        case STEP_OK:
            break;
        case STEP_PAST_END:
            *err = wmem_strdup_printf(scope, "%s.%s: the packet ends inside it (bit %" PRIu64 " of %" PRIu64 ")",
                                      r.m->name, nm, start, b->end);
            return YJ_BODY_FAILED;
        case STEP_FAILED:
            return YJ_BODY_FAILED;
        }
    }
    return YJ_BODY_OK;
}
