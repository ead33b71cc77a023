/* keys.c
 * netcode's keys: the servers' private keys (netcode.private_key and
 * NETCODE_PRIVATE_KEY lines of the key log), connection key pairs
 * (NETCODE_CONNECTION_KEYS lines), and pairs learnt from decrypted connect
 * tokens. The key log file is kept open and read as it grows, and read
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

typedef struct private_key {
    guint8 key[NC_KEY_BYTES];
} private_key_t;

static GArray *pref_private;      /* private_key_t, from the preference */
static GArray *log_private;       /* private_key_t, from the key log */
static GPtrArray *log_pairs;      /* nc_keypair_t *, from the key log */
static GPtrArray *learnt_pairs;   /* nc_keypair_t *, from tokens (per file) */

static FILE *keylog;
static char *keylog_path;
static guint32 keylog_line;       /* lines read so far */
static GString *keylog_partial;   /* a last line without its newline yet */
static GString *keylog_problems;
static guint keylog_problem_count;
static guint keylog_gen;

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
        log_pairs = g_ptr_array_new_with_free_func(pair_free);
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
            gboolean dup = FALSE;
            for (guint i = 0; i < log_pairs->len && !dup; i++) {
                nc_keypair_t *kp = (nc_keypair_t *)g_ptr_array_index(log_pairs, i);
                dup = !memcmp(kp->key[NC_C2S], c2s, NC_KEY_BYTES) && !memcmp(kp->key[NC_S2C], s2c, NC_KEY_BYTES);
            }
            if (!dup)
                g_ptr_array_add(log_pairs, pair_new(c2s, s2c, line));
        }
    } else {
        keylog_problem(line, "unknown label (NETCODE_PRIVATE_KEY or NETCODE_CONNECTION_KEYS expected)", s);
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
        /* past 400 characters the line is only counted as too long: the
         * rest of it is not kept */
        if (keylog_partial->len <= 400)
            g_string_append_len(keylog_partial, buf, (gssize)len);
        else if (len && buf[len - 1] == '\n')
            g_string_append_c(keylog_partial, '\n');
        if (len && buf[len - 1] == '\n') {
            keylog_line++;
            g_strchomp(keylog_partial->str);
            g_string_set_size(keylog_partial, strlen(keylog_partial->str));
            if (keylog_partial->len > 400)
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
    if (keylog_partial->len && keylog_partial->len <= 400) {
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
    return pref_private->len + log_private->len;
}

const guint8 *nc_keys_private(guint i)
{
    ensure();
    if (i < pref_private->len)
        return g_array_index(pref_private, private_key_t, i).key;
    i -= pref_private->len;
    return i < log_private->len ? g_array_index(log_private, private_key_t, i).key : NULL;
}

guint nc_keys_pair_count(void)
{
    ensure();
    return log_pairs->len;
}

nc_keypair_t *nc_keys_pair(guint i)
{
    ensure();
    return i < log_pairs->len ? (nc_keypair_t *)g_ptr_array_index(log_pairs, i) : NULL;
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
    if (learnt_pairs)
        g_ptr_array_set_size(learnt_pairs, 0);
}

void nc_keys_shutdown(void)
{
    if (!pref_private)
        return;
    keylog_close();
    g_array_free(pref_private, TRUE);
    g_array_free(log_private, TRUE);
    g_ptr_array_free(log_pairs, TRUE);
    g_ptr_array_free(learnt_pairs, TRUE);
    g_string_free(keylog_partial, TRUE);
    g_string_free(keylog_problems, TRUE);
    g_free(keylog_path);
    pref_private = NULL;
}
