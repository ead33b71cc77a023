/* games.c
 * The chunkshark_games table (docs/netcode.md, "Several games"): one row a
 * game, as WireGuard's keys table: protocol id, server UDP port, private
 * key, and the yojimbo configuration of its connections (channels,
 * message types, schema file). A row applies to the connections whose
 * protocol id matches (the row that also names their server port first),
 * or, while a connection's protocol id is not known (a capture that starts
 * after the handshake), whose server port does.
 * The preferences stay the default for every other connection.
 *
 * The row of the connection a payload belongs to is kept with the packet
 * while netcode hands the payload on, for yojimbo (netcode.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/uat.h>

#include "netcode.h"
#include "netcode-int.h"
#include "common/ws-compat.h"

/* A row as the table holds it: the text of each column. */
typedef struct game_row {
    char *protocol_id;
    char *port;
    char *key;
    char *channels;
    char *message_types;
    char *schema_file;
} game_row_t;

static game_row_t *rows;
static guint n_rows;
static netcode_game_t *games;      /* the rows, parsed */
static guint n_games;
static guint games_gen;
static netcode_game_check_t game_check;

UAT_CSTRING_CB_DEF(games, protocol_id, game_row_t)
UAT_CSTRING_CB_DEF(games, port, game_row_t)
UAT_CSTRING_CB_DEF(games, key, game_row_t)
UAT_CSTRING_CB_DEF(games, channels, game_row_t)
UAT_CSTRING_CB_DEF(games, message_types, game_row_t)
UAT_FILENAME_CB_DEF(games, schema_file, game_row_t)

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* The columns' values; FALSE with *err (g_free it) naming the column. */
static gboolean parse_row(const game_row_t *r, netcode_game_t *g, char **err)
{
    const char *s = nz(r->protocol_id);
    char *end;
    guint64 v;

    memset(g, 0, sizeof *g);
    if (g_str_has_prefix(s, "0x") || g_str_has_prefix(s, "0X"))
        s += 2;
    if (!*s || strlen(s) > 16 || !g_ascii_isxdigit(*s) || (v = g_ascii_strtoull(s, &end, 16), *end)) {
        *err = g_strdup_printf("Protocol id \"%s\": not a hex number of 1 to 16 digits (the game's 64-bit "
                               "protocol id, e.g. 1122334455667788 or 0)", nz(r->protocol_id));
        return FALSE;
    }
    g->protocol_id = v;
    s = nz(r->port);
    if (*s) {
        if (!g_ascii_isdigit(*s) || (v = g_ascii_strtoull(s, &end, 10), *end) || v < 1 || v > 65535) {
            *err = g_strdup_printf("Server UDP port \"%s\": not a port from 1 to 65535 (or empty: any port)", s);
            return FALSE;
        }
        g->server_port = (guint32)v;
    }
    s = nz(r->key);
    if (g_str_has_prefix(s, "0x") || g_str_has_prefix(s, "0X"))
        s += 2;
    if (*s) {
        if (!nc_hex32(s, strlen(s), g->private_key)) {
            *err = g_strdup_printf("Private key \"%s\": not 64 hex digits (the server's 32-byte private key; "
                                   "or empty: none)", nz(r->key));
            return FALSE;
        }
        g->have_key = TRUE;
    }
    s = nz(r->message_types);
    if (*s) {
        if (!g_ascii_isdigit(*s) || (v = g_ascii_strtoull(s, &end, 10), *end) || v < 1 || v > 65536) {
            *err = g_strdup_printf("Message types \"%s\": not a number from 1 to 65536 (the message factory's "
                                   "types; or empty: yojimbo.message_types)", s);
            return FALSE;
        }
        g->message_types = (guint)v;
    }
    g->channels = nz(r->channels);
    g->schema_file = nz(r->schema_file);
    if (game_check && !game_check(g->channels, g->schema_file, err))
        return FALSE;
    return TRUE;
}

static ws_cb_bool games_update_cb(void *rec, char **err)
{
    netcode_game_t g;

    *err = NULL;
    return parse_row((const game_row_t *)rec, &g, err);
}

static void *games_copy_cb(void *dest, const void *src, size_t len _U_)
{
    const game_row_t *s = (const game_row_t *)src;
    game_row_t *d = (game_row_t *)dest;

    d->protocol_id = g_strdup(s->protocol_id);
    d->port = g_strdup(s->port);
    d->key = g_strdup(s->key);
    d->channels = g_strdup(s->channels);
    d->message_types = g_strdup(s->message_types);
    d->schema_file = g_strdup(s->schema_file);
    return d;
}

static void games_free_cb(void *rec)
{
    game_row_t *r = (game_row_t *)rec;

    g_free(r->protocol_id);
    g_free(r->port);
    g_free(r->key);
    g_free(r->channels);
    g_free(r->message_types);
    g_free(r->schema_file);
}

/* After every change: the rows parsed again (the table keeps only rows
 * that passed the update callback, so each parses), their private keys
 * given to keys.c. */
static void games_post_update_cb(void)
{
    guint8 (*keys)[NC_KEY_BYTES];
    guint nkeys = 0;

    g_free(games);
    games = n_rows ? g_new0(netcode_game_t, n_rows) : NULL;
    keys = n_rows ? (guint8 (*)[NC_KEY_BYTES])g_malloc0(n_rows * NC_KEY_BYTES) : NULL;
    n_games = 0;
    for (guint i = 0; i < n_rows; i++) {
        char *err = NULL;
        netcode_game_t *g = &games[n_games];
        if (!parse_row(&rows[i], g, &err)) {
            g_free(err);
            continue;
        }
        g->row = i + 1;
        if (g->have_key)
            memcpy(keys[nkeys++], g->private_key, NC_KEY_BYTES);
        n_games++;
    }
    nc_keys_set_game_keys((const guint8 (*)[NC_KEY_BYTES])keys, nkeys);
    g_free(keys);
    games_gen++;
}

static void games_reset_cb(void)
{
    g_free(games);
    games = NULL;
    n_games = 0;
    nc_keys_set_game_keys(NULL, 0);
    games_gen++;
}

void nc_games_register(module_t *module)
{
    static uat_field_t fields[] = {
        UAT_FLD_CSTRING(games, protocol_id, "Protocol id (hex)",
            "The game's 64-bit protocol id in hex (0 for yojimbo's examples)"),
        UAT_FLD_CSTRING(games, port, "Server UDP port",
            "The game server's UDP port: connections to it whose protocol id is not known yet (a capture "
            "without their request) use this row; empty: any port"),
        UAT_FLD_CSTRING(games, key, "Private key (64 hex digits)",
            "The server's private key, which decrypts every connection request's token (empty: none)"),
        UAT_FLD_CSTRING(games, channels, "Channels",
            "yojimbo's channel list in the syntax of yojimbo.channels, e.g. uu:8192,ro:10240:1024 "
            "(empty: yojimbo.channels)"),
        UAT_FLD_CSTRING(games, message_types, "Message types",
            "The number of message types of the game's message factory (empty: yojimbo.message_types)"),
        UAT_FLD_FILENAME_OTHER(games, schema_file, "Schema file", uat_fld_chk_str,
            "The game's message schema file (docs/yojimbo.md; empty: yojimbo.schema_file)"),
        UAT_END_FIELDS
    };
    uat_t *uat;

    uat = uat_new("chunkshark games", sizeof(game_row_t), "chunkshark_games", TRUE, &rows, &n_rows,
                  UAT_AFFECTS_DISSECTION, NULL, games_copy_cb, games_update_cb, games_free_cb,
                  games_post_update_cb, games_reset_cb, fields);
    prefs_register_uat_preference(module, "games", "Games",
        "One row a game: protocol id, server UDP port, private key, and yojimbo's channels, message types and "
        "schema file for its connections (docs/netcode.md, \"Several games\"). Connections no row matches use "
        "the preferences.", uat);
}

void nc_games_shutdown(void)
{
    g_free(games);
    games = NULL;
    n_games = 0;
}

guint netcode_games_count(void)
{
    return n_games;
}

const netcode_game_t *netcode_game(guint i)
{
    return i < n_games ? &games[i] : NULL;
}

guint netcode_games_generation(void)
{
    return games_gen;
}

void netcode_games_set_check(netcode_game_check_t check)
{
    game_check = check;
}

gint nc_games_match(gboolean have_protocol_id, guint64 protocol_id, guint32 server_port)
{
    gint by_id = -1;

    /* By the protocol id when known, the row that also names the server
     * port first (two games may share an id: yojimbo's examples all use
     * 0); else by the server port. */
    for (guint i = 0; i < n_games; i++) {
        const netcode_game_t *g = &games[i];
        if (have_protocol_id && g->protocol_id != protocol_id)
            continue;
        if (g->server_port && g->server_port == server_port)
            return (gint)i;
        if (have_protocol_id && by_id < 0)
            by_id = (gint)i;
    }
    return by_id;
}

gboolean nc_games_port(guint32 port)
{
    for (guint i = 0; i < n_games; i++)
        if (games[i].server_port == port)
            return TRUE;
    return FALSE;
}
