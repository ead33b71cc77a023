/* keys.c
 * netcode's keys: the servers' private keys (netcode.private_key,
 * NETCODE_PRIVATE_KEY lines of the key log and the chunkshark_games
 * table), connection key pairs (NETCODE_CONNECTION_KEYS lines, and the
 * public connect tokens of NETCODE_CONNECT_TOKEN lines and of
 * netcode.connect_token_file), and pairs learnt from decrypted private
 * connect tokens. The key log file is kept open and read as it grows, and read
 * again from its start when it was replaced or truncated, as Wireshark's
 * TLS and WireGuard key logs are (docs/netcode.md, "Key log file").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <wireshark.h>
#include <wsutil/filesystem.h>

#include "netcode-int.h"
#include "common/ws-compat.h"

#define KEYLOG_MAX_PROBLEMS 8
/* The longest line kept: a NETCODE_CONNECT_TOKEN line is 4118 characters. */
#define KEYLOG_MAX_LINE 4200
/* docs/netcode.md, "Connect tokens": the public connect token. */
#define NC_CONNECT_TOKEN_BYTES 2048
#define NC_TOKEN_ADDRESSES_OFFSET (NC_VERSION_BYTES + 8 + 8 + 8 + NC_TOKEN_NONCE_BYTES + NC_TOKEN_BYTES + 4 + 4)

typedef struct private_key {
    guint8 key[NC_KEY_BYTES];
} private_key_t;

static GArray *pref_private;      /* private_key_t, from the preference */
static GArray *log_private;       /* private_key_t, from the key log */
static GArray *game_private;      /* private_key_t, from the games table */
static GPtrArray *log_pairs;      /* nc_keypair_t *, from the key log */
static GPtrArray *file_pairs;     /* nc_keypair_t *, from netcode.connect_token_file */
static GPtrArray *learnt_pairs;   /* nc_keypair_t *, from tokens (per file) */

static FILE *keylog;
static char *keylog_path;
static guint32 keylog_line;       /* lines read so far */
static GString *keylog_partial;   /* a last line without its newline yet */
static GString *keylog_problems;
static guint keylog_problem_count;
static guint keylog_gen;
static guint keys_gen;

gboolean nc_hex32(const char *s, size_t len, guint8 *out)
{
    if (len != 2 * NC_KEY_BYTES)
        return FALSE;
    for (size_t i = 0; i < NC_KEY_BYTES; i++) {
        int hi = g_ascii_xdigit_value(s[2 * i]), lo = g_ascii_xdigit_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return FALSE;
        out[i] = (guint8)(hi << 4 | lo);
    }
    return TRUE;
}

static void pair_free(gpointer p)
{
    nc_keypair_t *kp = (nc_keypair_t *)p;

    nc_aead_free(kp->aead[0]);
    nc_aead_free(kp->aead[1]);
    g_free(kp->addrs);
    g_free(kp);
}

static nc_keypair_t *pair_new(const guint8 *c2s, const guint8 *s2c, guint32 line)
{
    nc_keypair_t *kp = g_new0(nc_keypair_t, 1);

    memcpy(kp->key[NC_C2S], c2s, NC_KEY_BYTES);
    memcpy(kp->key[NC_S2C], s2c, NC_KEY_BYTES);
    kp->aead[NC_C2S] = nc_aead_new(c2s);
    kp->aead[NC_S2C] = nc_aead_new(s2c);
    kp->line = line;
    return kp;
}

/* The layout of a public connect token (docs/netcode.md, "Connect
 * tokens"), checked: NULL and its keys' pair, or why it is not one. */
static const char *token_check(const guint8 *t, gsize len, guint32 *naddr, gsize *keys_off)
{
    gsize off = NC_TOKEN_ADDRESSES_OFFSET;
    guint32 n;

    if (len != NC_CONNECT_TOKEN_BYTES)
        return "a connect token is 2048 bytes (4096 hex digits)";
    if (memcmp(t, nc_version_info, NC_VERSION_BYTES))
        return "does not start with \"NETCODE 1.02\" and a NUL (not a netcode 1.02 connect token)";
    n = nc_le32(t + off - 4);
    if (n < 1 || n > 32)
        return "the number of server addresses is not 1 to 32";
    for (guint32 i = 0; i < n; i++) {
        if (t[off] == 1)
            off += 1 + 4 + 2;
        else if (t[off] == 2)
            off += 1 + 16 + 2;
        else
            return "a server address type is neither 1 (IPv4) nor 2 (IPv6)";
    }
    *naddr = n;
    *keys_off = off;
    return NULL;
}

/* A pair from a checked public connect token. */
static nc_keypair_t *token_pair(const guint8 *t, guint32 naddr, gsize keys_off, guint8 source, guint32 line)
{
    nc_keypair_t *kp = pair_new(t + keys_off, t + keys_off + NC_KEY_BYTES, line);

    kp->source = source;
    kp->have_protocol_id = TRUE;
    kp->protocol_id = nc_le64(t + NC_VERSION_BYTES);
    kp->naddr = naddr;
    kp->addrs = (guint8 *)g_memdup2(t + NC_TOKEN_ADDRESSES_OFFSET, keys_off - NC_TOKEN_ADDRESSES_OFFSET);
    return kp;
}

static gboolean pair_in(GPtrArray *a, const guint8 *c2s, const guint8 *s2c)
{
    for (guint i = 0; i < a->len; i++) {
        nc_keypair_t *kp = (nc_keypair_t *)g_ptr_array_index(a, i);
        if (!memcmp(kp->key[NC_C2S], c2s, NC_KEY_BYTES) && !memcmp(kp->key[NC_S2C], s2c, NC_KEY_BYTES))
            return TRUE;
    }
    return FALSE;
}

gboolean nc_keys_token_has_server(const nc_keypair_t *kp, const address *addr, guint32 port)
{
    const guint8 *a = kp->addrs;

    for (guint32 i = 0; a && i < kp->naddr; i++) {
        if (a[0] == 1) {
            if (addr->type == AT_IPv4 && !memcmp(addr->data, a + 1, 4) && nc_le16(a + 5) == port)
                return TRUE;
            a += 7;
        } else {
            if (addr->type == AT_IPv6) {
                guint8 v6[16];
                for (int w = 0; w < 8; w++) {
                    guint16 v = nc_le16(a + 1 + 2 * w);
                    v6[2 * w] = (guint8)(v >> 8);
                    v6[2 * w + 1] = (guint8)v;
                }
                if (!memcmp(addr->data, v6, 16) && nc_le16(a + 17) == port)
                    return TRUE;
            }
            a += 19;
        }
    }
    return FALSE;
}

static void add_private(GArray *a, const guint8 *k)
{
    private_key_t pk;

    for (guint i = 0; i < a->len; i++)
        if (!memcmp(g_array_index(a, private_key_t, i).key, k, NC_KEY_BYTES))
            return;
    memcpy(pk.key, k, NC_KEY_BYTES);
    g_array_append_val(a, pk);
}

static void ensure(void)
{
    if (!pref_private) {
        pref_private = g_array_new(FALSE, FALSE, sizeof(private_key_t));
        log_private = g_array_new(FALSE, FALSE, sizeof(private_key_t));
        game_private = g_array_new(FALSE, FALSE, sizeof(private_key_t));
        log_pairs = g_ptr_array_new_with_free_func(pair_free);
        file_pairs = g_ptr_array_new_with_free_func(pair_free);
        learnt_pairs = g_ptr_array_new_with_free_func(pair_free);
        keylog_partial = g_string_new(NULL);
        keylog_problems = g_string_new(NULL);
    }
}

gboolean nc_keys_set_private_pref(const char *text, char **err)
{
    gboolean ok = TRUE;
    char **parts;

    ensure();
    g_array_set_size(pref_private, 0);
    keys_gen++;
    if (err)
        *err = NULL;
    if (!text)
        return TRUE;
    parts = g_strsplit_set(text, ",; \t\n", -1);
    for (guint i = 0; parts[i]; i++) {
        guint8 k[NC_KEY_BYTES];
        const char *s = parts[i];
        if (!*s)
            continue;
        if (g_str_has_prefix(s, "0x") || g_str_has_prefix(s, "0X"))
            s += 2;
        if (nc_hex32(s, strlen(s), k)) {
            add_private(pref_private, k);
        } else {
            if (ok && err)
                *err = g_strdup_printf("netcode.private_key: \"%s\" is not a key of 64 hex digits "
                                       "(32 bytes); it is ignored", parts[i]);
            ok = FALSE;
        }
    }
    g_strfreev(parts);
    return ok;
}

static void keylog_problem(guint32 line, const char *what, const char *text)
{
    keylog_problem_count++;
    if (keylog_problem_count > KEYLOG_MAX_PROBLEMS)
        return;
    if (keylog_problems->len)
        g_string_append(keylog_problems, "; ");
    g_string_append_printf(keylog_problems, "line %u: %s (\"", line, what);
    /* The line's first 40 bytes, a byte that is not printable ASCII as \xNN:
     * a binary or mangled file must not put control bytes into the Expert
     * Info dialog, a terminal or the log. */
    for (size_t i = 0; text[i] && i < 40; i++) {
        guchar ch = (guchar)text[i];
        if (g_ascii_isprint(ch) && ch != '\\')
            g_string_append_c(keylog_problems, (gchar)ch);
        else
            g_string_append_printf(keylog_problems, "\\x%02x", ch);
    }
    g_string_append(keylog_problems, strlen(text) > 40 ? "...\")" : "\")");
}

/* len bytes from exactly 2 * len hex digits (g_free it), or NULL. */
static guint8 *hex_bytes(const char *s, gsize len)
{
    guint8 *out;

    if (strlen(s) != 2 * len)
        return NULL;
    out = (guint8 *)g_malloc(len);
    for (gsize i = 0; i < len; i++) {
        int hi = g_ascii_xdigit_value(s[2 * i]), lo = g_ascii_xdigit_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            g_free(out);
            return NULL;
        }
        out[i] = (guint8)(hi << 4 | lo);
    }
    return out;
}

/* One line of the key log (without its newline). */
static void keylog_process_line(char *s, guint32 line)
{
    char **tok;
    guint n;

    g_strstrip(s);
    if (!*s || *s == '#')
        return;
    tok = g_strsplit_set(s, " \t", -1);
    n = 0;
    for (guint i = 0; tok[i]; i++)
        if (*tok[i])
            tok[n++] = tok[i];
        else
            g_free(tok[i]);
    tok[n] = NULL;
    if (!strcmp(tok[0], "NETCODE_PRIVATE_KEY")) {
        guint8 k[NC_KEY_BYTES];
        if (n != 2 || !nc_hex32(tok[1], strlen(tok[1]), k))
            keylog_problem(line, "NETCODE_PRIVATE_KEY wants one key of 64 hex digits", s);
        else
            add_private(log_private, k);
    } else if (!strcmp(tok[0], "NETCODE_CONNECTION_KEYS")) {
        guint8 c2s[NC_KEY_BYTES], s2c[NC_KEY_BYTES];
        if (n != 3 || !nc_hex32(tok[1], strlen(tok[1]), c2s) || !nc_hex32(tok[2], strlen(tok[2]), s2c)) {
            keylog_problem(line, "NETCODE_CONNECTION_KEYS wants two keys of 64 hex digits "
                           "(client-to-server, server-to-client)", s);
        } else {
            if (!pair_in(log_pairs, c2s, s2c)) {
                nc_keypair_t *kp = pair_new(c2s, s2c, line);
                kp->source = NC_KEYS_FROM_LOG;
                g_ptr_array_add(log_pairs, kp);
                keys_gen++;
            }
        }
    } else if (!strcmp(tok[0], "NETCODE_CONNECT_TOKEN")) {
        guint8 *t = n == 2 ? hex_bytes(tok[1], NC_CONNECT_TOKEN_BYTES) : NULL;
        guint32 naddr = 0;
        gsize koff = 0;
        const char *why = t ? token_check(t, NC_CONNECT_TOKEN_BYTES, &naddr, &koff) : NULL;
        if (!t) {
            keylog_problem(line, "NETCODE_CONNECT_TOKEN wants one public connect token of 4096 hex digits "
                           "(2048 bytes)", s);
        } else if (why) {
            keylog_problem(line, why, s);
        } else if (!pair_in(log_pairs, t + koff, t + koff + NC_KEY_BYTES)) {
            g_ptr_array_add(log_pairs, token_pair(t, naddr, koff, NC_KEYS_FROM_LOG_TOKEN, line));
            keys_gen++;
        }
        g_free(t);
    } else {
        keylog_problem(line, "unknown label (NETCODE_PRIVATE_KEY, _CONNECTION_KEYS, _CONNECT_TOKEN)", s);
    }
    for (guint i = 0; i < n; i++)
        g_free(tok[i]);
    g_free(tok);
}

static void keylog_close(void)
{
    if (keylog)
        fclose(keylog);
    keylog = NULL;
}

/* Forgets what the file gave (it is read again from its start). */
static void keylog_reset(void)
{
    keylog_close();
    g_array_set_size(log_private, 0);
    keys_gen++;
    /* Frame records of this file may point at these pairs: they live on
     * with the learnt ones, until the file is closed. */
    while (log_pairs->len)
        g_ptr_array_add(learnt_pairs, g_ptr_array_steal_index(log_pairs, log_pairs->len - 1));
    g_string_truncate(keylog_partial, 0);
    g_string_truncate(keylog_problems, 0);
    keylog_problem_count = 0;
    keylog_line = 0;
    keylog_gen++;
}

void nc_keys_keylog_read(const char *path)
{
    char buf[512];

    ensure();
    if (!path || !*path) {
        if (keylog_path) {
            keylog_reset();
            g_free(keylog_path);
            keylog_path = NULL;
        }
        return;
    }
    if (!keylog_path || strcmp(keylog_path, path)) {
        keylog_reset();
        g_free(keylog_path);
        keylog_path = g_strdup(path);
    } else if (keylog && file_needs_reopen(ws_fileno(keylog), keylog_path)) {
        keylog_reset();
    }
    if (!keylog) {
        keylog = ws_fopen(keylog_path, "r");
        if (!keylog)
            return;   /* not there (yet): tried again at the next packet */
    }
    for (;;) {
        size_t len;
        if (!fgets(buf, sizeof buf, keylog)) {
            clearerr(keylog);   /* at the end: more may be written later */
            break;
        }
        len = strlen(buf);
        /* past KEYLOG_MAX_LINE characters the line is only counted as
         * too long: the rest of it is not kept */
        if (keylog_partial->len <= KEYLOG_MAX_LINE)
            g_string_append_len(keylog_partial, buf, (gssize)len);
        else if (len && buf[len - 1] == '\n')
            g_string_append_c(keylog_partial, '\n');
        if (len && buf[len - 1] == '\n') {
            keylog_line++;
            g_strchomp(keylog_partial->str);
            g_string_set_size(keylog_partial, strlen(keylog_partial->str));
            if (keylog_partial->len > KEYLOG_MAX_LINE)
                keylog_problem(keylog_line, "line too long", keylog_partial->str);
            else
                keylog_process_line(keylog_partial->str, keylog_line);
            g_string_truncate(keylog_partial, 0);
        }
    }
    /* A last line without a newline counts once the file has stopped
     * growing: it is kept for the next read, and processed if the reader
     * is at the end for good (a tshark run). Processing it now and again
     * later would be harmless (keys are deduplicated) but would count a
     * problem twice, so it is processed and dropped only when complete. */
    if (keylog_partial->len && keylog_partial->len <= KEYLOG_MAX_LINE) {
        char *copy = g_strdup(keylog_partial->str);
        /* a complete key line has a fixed length: try it as it is */
        gsize before = keylog_problems->len;
        guint count_before = keylog_problem_count;
        keylog_process_line(copy, keylog_line + 1);
        if (keylog_problems->len != before) {
            /* maybe still being written: not a problem yet */
            g_string_truncate(keylog_problems, before);
            keylog_problem_count = count_before;
        } else {
            keylog_line++;
            g_string_truncate(keylog_partial, 0);
        }
        g_free(copy);
    }
}

guint nc_keys_private_count(void)
{
    ensure();
    return pref_private->len + log_private->len + game_private->len;
}

const guint8 *nc_keys_private(guint i)
{
    ensure();
    if (i < pref_private->len)
        return g_array_index(pref_private, private_key_t, i).key;
    i -= pref_private->len;
    if (i < log_private->len)
        return g_array_index(log_private, private_key_t, i).key;
    i -= log_private->len;
    return i < game_private->len ? g_array_index(game_private, private_key_t, i).key : NULL;
}

void nc_keys_set_game_keys(const guint8 (*keys)[NC_KEY_BYTES], guint n)
{
    ensure();
    g_array_set_size(game_private, 0);
    for (guint i = 0; i < n; i++)
        add_private(game_private, keys[i]);
    keys_gen++;
}

guint nc_keys_pair_count(void)
{
    ensure();
    return log_pairs->len + file_pairs->len;
}

nc_keypair_t *nc_keys_pair(guint i)
{
    ensure();
    if (i < log_pairs->len)
        return (nc_keypair_t *)g_ptr_array_index(log_pairs, i);
    i -= log_pairs->len;
    return i < file_pairs->len ? (nc_keypair_t *)g_ptr_array_index(file_pairs, i) : NULL;
}

guint nc_keys_generation(void)
{
    return keys_gen;
}

/* One token of the token file (number no), or why not. */
static void token_file_add(const guint8 *t, gsize len, guint no, GString *problems)
{
    guint32 naddr = 0;
    gsize koff = 0;
    const char *why = token_check(t, len, &naddr, &koff);

    if (why) {
        if (problems->len)
            g_string_append(problems, "; ");
        g_string_append_printf(problems, "token %u: %s", no, why);
    } else if (!pair_in(file_pairs, t + koff, t + koff + NC_KEY_BYTES)) {
        g_ptr_array_add(file_pairs, token_pair(t, naddr, koff, NC_KEYS_FROM_TOKEN_FILE, no));
        keys_gen++;
    }
}

gboolean nc_keys_token_file_read(const char *path, char **err)
{
    gchar *data = NULL;
    gsize len = 0;
    GError *gerr = NULL;
    GString *problems;
    guint no = 0;

    ensure();
    *err = NULL;
    /* Frame records of the file being read may point at these pairs: they
     * live on with the learnt ones, until the file is closed. */
    while (file_pairs->len)
        g_ptr_array_add(learnt_pairs, g_ptr_array_steal_index(file_pairs, file_pairs->len - 1));
    keys_gen++;
    if (!path || !*path)
        return TRUE;
    if (!g_file_get_contents(path, &data, &len, &gerr)) {
        *err = g_strdup_printf("netcode.connect_token_file: %s", gerr->message);
        g_error_free(gerr);
        return FALSE;
    }
    problems = g_string_new(NULL);
    if (len >= NC_VERSION_BYTES && !memcmp(data, nc_version_info, NC_VERSION_BYTES)) {
        /* binary: tokens of 2048 bytes one after the other */
        for (gsize off = 0; off < len; off += NC_CONNECT_TOKEN_BYTES)
            token_file_add((const guint8 *)data + off, MIN(len - off, NC_CONNECT_TOKEN_BYTES), ++no, problems);
    } else {
        /* text: one token a line in hex, optionally after the key log's
         * label; blanks inside a line and '#' comment lines are ignored */
        char **lines = g_strsplit(data, "\n", -1);
        for (guint i = 0; lines[i]; i++) {
            GString *hex = g_string_new(NULL);
            const char *l = g_strstrip(lines[i]);
            if (g_str_has_prefix(l, "NETCODE_CONNECT_TOKEN"))
                l += strlen("NETCODE_CONNECT_TOKEN");
            for (; *l; l++)
                if (!g_ascii_isspace(*l))
                    g_string_append_c(hex, *l);
            if (*lines[i] && *lines[i] != '#') {
                guint8 *t = hex_bytes(hex->str, NC_CONNECT_TOKEN_BYTES);
                no++;
                if (t)
                    token_file_add(t, NC_CONNECT_TOKEN_BYTES, no, problems);
                else
                    g_string_append_printf(problems, "%sline %u: not 4096 hex digits (a 2048-byte connect "
                                           "token)", problems->len ? "; " : "", i + 1);
                g_free(t);
            }
            g_string_free(hex, TRUE);
        }
        g_strfreev(lines);
        if (!no)
            g_string_append(problems, "no connect token in the file (2048-byte binary tokens, or 4096 hex "
                            "digits a line)");
    }
    g_free(data);
    if (problems->len)
        *err = g_strdup_printf("netcode.connect_token_file %s: %s", path, problems->str);
    g_string_free(problems, TRUE);
    return *err == NULL;
}

nc_keypair_t *nc_keys_learn_pair(const guint8 *c2s, const guint8 *s2c)
{
    nc_keypair_t *kp;

    ensure();
    for (guint i = 0; i < learnt_pairs->len; i++) {
        kp = (nc_keypair_t *)g_ptr_array_index(learnt_pairs, i);
        if (!memcmp(kp->key[NC_C2S], c2s, NC_KEY_BYTES) && !memcmp(kp->key[NC_S2C], s2c, NC_KEY_BYTES))
            return kp;
    }
    kp = pair_new(c2s, s2c, 0);
    kp->source = NC_KEYS_FROM_REQUEST;
    g_ptr_array_add(learnt_pairs, kp);
    return kp;
}

const char *nc_keys_keylog_problem(void)
{
    ensure();
    return keylog_problems->len ? keylog_problems->str : NULL;
}

guint nc_keys_keylog_generation(void)
{
    return keylog_gen;
}

void nc_keys_file_cleanup(void)
{
    if (!learnt_pairs)
        return;
    g_ptr_array_set_size(learnt_pairs, 0);
    for (guint i = 0; i < nc_keys_pair_count(); i++)
        nc_keys_pair(i)->bound = 0;
}

void nc_keys_shutdown(void)
{
    if (!pref_private)
        return;
    keylog_close();
    g_array_free(pref_private, TRUE);
    g_array_free(log_private, TRUE);
    g_array_free(game_private, TRUE);
    g_ptr_array_free(log_pairs, TRUE);
    g_ptr_array_free(file_pairs, TRUE);
    g_ptr_array_free(learnt_pairs, TRUE);
    g_string_free(keylog_partial, TRUE);
    g_string_free(keylog_problems, TRUE);
    g_free(keylog_path);
    pref_private = NULL;
}
