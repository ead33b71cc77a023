/* dissect.c
 * Routines for netcode 1.02 (Glenn Fiedler's secure client/server
 * connections over UDP): the connection request and its connect token,
 * the six encrypted packet types, their decryption with the server's
 * private key or a connection's packet keys, the heuristics that find the
 * traffic, and the payload's hand-off. The wire format, keys and analysis
 * are described in docs/netcode.md; this is an independent implementation
 * of them. The connection analysis is analysis.c, the keys keys.c, the
 * AEADs crypto.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/expert.h>
#include <epan/conversation.h>
#include <epan/decode_as.h>
#include <epan/proto_data.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "netcode.h"
#include "netcode-int.h"
#include "common/ws-compat.h"
#include "common/single-pass.h"
#include "common/analysis-util.h"

#define NC_DEFAULT_PORTS "40000"      /* the netcode and yojimbo examples' server port */
#define NC_MAX_PROTOCOL_IDS 16
/* Before a conversation is known to be netcode's, a packet without keys is
 * taken only after an earlier one of the same direction whose sequence is
 * at most this far behind (the library counts up by one per packet). */
#define NC_CANDIDATE_SPAN 64
/* The key log is looked at again at most this often (microseconds). */
#define NC_KEYLOG_RECHECK_US 200000
/* A connection without keys (or whose keys fail) is searched for keys on
 * at most this many packets, then again only once a key, a token or a
 * protocol id is added. */
#define NC_SEARCH_PACKETS 4
/* Protocol ids tried on a connection whose request is not in the capture. */
#define NC_MAX_TRY_IDS 64

const guint8 nc_version_info[NC_VERSION_BYTES] = "NETCODE 1.02";

static int proto_netcode = -1;
static dissector_handle_t netcode_handle;        /* Decode As: every datagram */
static dissector_handle_t netcode_conv_handle;   /* a netcode conversation: netcode datagrams */
static dissector_table_t payload_table;
static heur_dissector_list_t payload_heur;
static int netcode_tap = -1;

static int hf_netcode_prefix = -1;
static int hf_netcode_type = -1;
static int hf_netcode_sequence_bytes = -1;
static int hf_netcode_sequence = -1;
static int hf_netcode_sequence_global = -1;
static int hf_netcode_version = -1;
static int hf_netcode_protocol_id = -1;
static int hf_netcode_expire_timestamp = -1;
static int hf_netcode_expire_time = -1;
static int hf_netcode_token_nonce = -1;
static int hf_netcode_token_data = -1;
static int hf_netcode_encrypted = -1;
static int hf_netcode_mac = -1;
static int hf_netcode_decrypted = -1;
static int hf_netcode_token_client_id = -1;
static int hf_netcode_token_timeout = -1;
static int hf_netcode_token_num_addresses = -1;
static int hf_netcode_token_server_address = -1;
static int hf_netcode_token_c2s_key = -1;
static int hf_netcode_token_s2c_key = -1;
static int hf_netcode_token_user_data = -1;
static int hf_netcode_challenge_sequence = -1;
static int hf_netcode_challenge_token = -1;
static int hf_netcode_keep_alive_client_index = -1;
static int hf_netcode_keep_alive_max_clients = -1;
static int hf_netcode_payload = -1;
static int hf_netcode_payload_len = -1;

static gint ett_netcode = -1;
static gint ett_netcode_prefix = -1;
static gint ett_netcode_token = -1;
static gint ett_netcode_decrypted = -1;

static expert_field ei_netcode_size = EI_INIT;
static expert_field ei_netcode_not_netcode = EI_INIT;
static expert_field ei_netcode_seq_encoding = EI_INIT;
static expert_field ei_netcode_no_key = EI_INIT;
static expert_field ei_netcode_no_protocol_id = EI_INIT;
static expert_field ei_netcode_token_file = EI_INIT;
static expert_field ei_netcode_decrypt_failed = EI_INIT;
static expert_field ei_netcode_token_failed = EI_INIT;
static expert_field ei_netcode_token_bad = EI_INIT;
static expert_field ei_netcode_server_not_in_token = EI_INIT;
static expert_field ei_netcode_keylog = EI_INIT;
static expert_field ei_netcode_private_key_pref = EI_INIT;

/* Preferences. */
static range_t *pref_ports;
static const char *pref_private_key = "";
static const char *pref_keylog_file = "";
static const char *pref_protocol_ids = "";
static const char *pref_connect_token_file = "";
static char *token_file_error;
static guint32 token_file_error_frame;
static ws_cb_bool pref_single_pass = TRUE;   /* netcode.single_pass (common/single-pass.h) */
static char *private_key_pref_error;
static guint64 cfg_protocol_ids[NC_MAX_PROTOCOL_IDS];
static guint cfg_n_protocol_ids;

/* Per file: the protocol ids of the requests seen, the conversations'
 * connections, and whether a problem of the preference was shown. */
static guint64 seen_protocol_ids[NC_MAX_PROTOCOL_IDS];
static guint n_seen_protocol_ids;
static wmem_map_t *conns;           /* conversation_t * -> nc_conn_t * */
static guint32 next_conn_index;
static guint32 pref_error_frame;
static guint32 keylog_shown_gen;    /* the key log generation whose problem was reported, + 1 */
static guint32 keylog_problem_frame;
static gint64 keylog_checked_us;
static gboolean keylog_checked_once;

static const value_string type_names[] = {
    { NC_REQUEST, "Connection request" },
    { NC_DENIED, "Connection denied" },
    { NC_CHALLENGE, "Connection challenge" },
    { NC_RESPONSE, "Connection response" },
    { NC_KEEP_ALIVE, "Keep-alive" },
    { NC_PAYLOAD, "Payload" },
    { NC_DISCONNECT, "Disconnect" },
    { 0, NULL }
};


/* Plaintext bytes each encrypted type carries; -1: payload (1 to 1200). */
static const int type_plain_len[NC_NUM_TYPES] = { -1, 0, 8 + NC_CHALLENGE_BYTES, 8 + NC_CHALLENGE_BYTES, 8, -1, 0 };

typedef enum { MODE_FORCED, MODE_CONV, MODE_HEUR } nc_mode_t;

/* ---- Small helpers -------------------------------------------------------- */

static void put_le64(guint8 *p, guint64 v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (guint8)(v >> (8 * i));
}

static gboolean port_in_prefs(guint32 port)
{
    return (pref_ports && value_is_in_range(pref_ports, port)) || nc_games_port(port);
}

static void parse_protocol_ids(void)
{
    char **parts = g_strsplit_set(pref_protocol_ids ? pref_protocol_ids : "", ",; \t", -1);

    cfg_n_protocol_ids = 0;
    for (guint i = 0; parts[i] && cfg_n_protocol_ids < NC_MAX_PROTOCOL_IDS; i++) {
        char *end;
        guint64 v;
        if (!*parts[i])
            continue;
        v = g_ascii_strtoull(parts[i], &end, 16);
        if (end != parts[i] && !*end)
            cfg_protocol_ids[cfg_n_protocol_ids++] = v;
    }
    g_strfreev(parts);
}

static void remember_protocol_id(guint64 id)
{
    for (guint i = 0; i < n_seen_protocol_ids; i++)
        if (seen_protocol_ids[i] == id)
            return;
    if (n_seen_protocol_ids < NC_MAX_PROTOCOL_IDS)
        seen_protocol_ids[n_seen_protocol_ids++] = id;
}

static guint add_id(guint64 *out, guint n, guint64 id)
{
    for (guint k = 0; k < n; k++)
        if (out[k] == id)
            return n;
    if (n < NC_MAX_TRY_IDS)
        out[n++] = id;
    return n;
}

/* The protocol ids to try for conn: its own when known, else the id of the
 * games table's row for its server port, every id seen in a request, in a
 * connect token, in netcode.protocol_ids and in the games table, and 0
 * (yojimbo's examples). Returns the count (at most NC_MAX_TRY_IDS). */
static guint protocol_ids_for(const nc_conn_t *conn, guint64 *out)
{
    guint n = 0;
    gint game;

    if (conn && conn->have_protocol_id) {
        out[n++] = conn->protocol_id;
        return n;
    }
    game = conn ? nc_games_match(FALSE, 0, conn->server_port) : -1;
    if (game >= 0)
        n = add_id(out, n, netcode_game((guint)game)->protocol_id);
    for (guint i = 0; i < n_seen_protocol_ids; i++)
        n = add_id(out, n, seen_protocol_ids[i]);
    for (guint i = 0; i < nc_keys_pair_count(); i++) {
        const nc_keypair_t *kp = nc_keys_pair(i);
        if (kp->have_protocol_id)
            n = add_id(out, n, kp->protocol_id);
    }
    for (guint i = 0; i < cfg_n_protocol_ids; i++)
        n = add_id(out, n, cfg_protocol_ids[i]);
    for (guint i = 0; i < netcode_games_count(); i++)
        n = add_id(out, n, netcode_game(i)->protocol_id);
    return add_id(out, n, 0);
}

static void keylog_maybe_read(gboolean force)
{
    gint64 now = g_get_monotonic_time();

    if (!force && keylog_checked_once && now - keylog_checked_us < NC_KEYLOG_RECHECK_US)
        return;
    keylog_checked_once = TRUE;
    keylog_checked_us = now;
    nc_keys_keylog_read(pref_keylog_file);
}

/* ---- Structure ---------------------------------------------------------------- */

typedef struct nc_shape {
    gboolean request;       /* a well-formed connection request */
    gboolean plausible;     /* request, or an encrypted packet: type 1-6, 1-8 sequence bytes, room for the MAC */
    guint8 prefix, type, seq_bytes;
    guint64 seq;
    gboolean canonical;     /* the sequence in the fewest bytes (as the library writes it) */
    gboolean size_ok;
    guint32 len, enc_len;   /* datagram bytes; encrypted bytes with the MAC */
} nc_shape_t;

static void read_shape(tvbuff_t *tvb, nc_shape_t *s)
{
    guint32 len = tvb_reported_length(tvb);
    const guint8 *d;

    memset(s, 0, sizeof *s);
    s->len = len;
    if (len < 1 || tvb_captured_length(tvb) < len)
        return;
    d = tvb_get_ptr(tvb, 0, len);
    s->prefix = d[0];
    if (s->prefix == 0) {
        s->request = len == NC_REQUEST_BYTES &&
                     tvb_memeql(tvb, 1, nc_version_info, NC_VERSION_BYTES) == 0;
        s->plausible = s->size_ok = s->request;
        return;
    }
    s->type = s->prefix & 0x0F;
    s->seq_bytes = s->prefix >> 4;
    if (s->type < 1 || s->type > 6 || s->seq_bytes < 1 || s->seq_bytes > 8 ||
        len < 1u + s->seq_bytes + NC_MAC_BYTES)
        return;
    s->plausible = TRUE;
    for (guint i = 0; i < s->seq_bytes; i++)
        s->seq |= (guint64)d[1 + i] << (8 * i);
    s->canonical = s->seq_bytes == 1 || d[s->seq_bytes] != 0;
    s->enc_len = len - 1 - s->seq_bytes;
    {
        guint32 plain = s->enc_len - NC_MAC_BYTES;
        int want = type_plain_len[s->type];
        s->size_ok = want >= 0 ? plain == (guint32)want : plain >= 1 && plain <= NC_MAX_PAYLOAD;
    }
}

/* "<Type> seq=<n>[ len=<n>]": the Info column of an encrypted packet; a
 * decrypted keep-alive's 8 bytes (keep_alive, else NULL) add
 * " client_index=<n> max_clients=<n>". Written without printf (the Info
 * column is written for every packet). */
static void info_packet(packet_info *pinfo, const nc_shape_t *s, gboolean with_len, guint32 len,
                        gboolean encrypted, const guint8 *keep_alive)
{
    char *buf, *p;

    if (!pinfo->cinfo)
        return;
    buf = p = (char *)wmem_alloc(pinfo->pool, 128);
    p = au_put_str(p, nc_type_short_name(s->type));
    if (s->seq >= NC_GLOBAL_SEQ_BASE && (s->type == NC_CHALLENGE || s->type == NC_DENIED)) {
        p = au_put_str(p, " seq=2^63+");
        p = au_put_uint64(p, s->seq - NC_GLOBAL_SEQ_BASE);
    } else {
        p = au_put_str(p, " seq=");
        p = au_put_uint64(p, s->seq);
    }
    if (with_len) {
        p = au_put_str(p, " len=");
        p = au_put_uint64(p, len);
    }
    if (encrypted)
        p = au_put_str(p, " [encrypted]");
    if (keep_alive) {
        p = au_put_str(p, " client_index=");
        p = au_put_uint64(p, nc_le32(keep_alive));
        p = au_put_str(p, " max_clients=");
        p = au_put_uint64(p, nc_le32(keep_alive + 4));
    }
    *p = 0;
    col_set_str(pinfo->cinfo, COL_INFO, buf);
}

/* ---- Decryption ----------------------------------------------------------- */

static void packet_ad(guint8 *ad, guint64 protocol_id, guint8 prefix)
{
    memcpy(ad, nc_version_info, NC_VERSION_BYTES);
    put_le64(ad + NC_VERSION_BYTES, protocol_id);
    ad[NC_VERSION_BYTES + 8] = prefix;
}

static gboolean try_packet(tvbuff_t *tvb, const nc_shape_t *s, nc_keypair_t *kp, guint dir, guint64 pid,
                           guint8 *out)
{
    guint8 ad[NC_VERSION_BYTES + 9], nonce[12];

    if (!kp || !kp->aead[dir])
        return FALSE;
    packet_ad(ad, pid, s->prefix);
    memset(nonce, 0, 4);
    put_le64(nonce + 4, s->seq);
    return nc_aead_decrypt(kp->aead[dir], nonce, ad, sizeof ad, tvb_get_ptr(tvb, 1 + s->seq_bytes, s->enc_len),
                           s->enc_len, out) != 0;
}

/* A pair on a packet: a connect token's with its own protocol id (unless
 * the connection has another), other pairs with each id of pids. */
static gboolean try_pair(tvbuff_t *tvb, const nc_shape_t *s, const nc_conn_t *conn, nc_keypair_t *kp, guint dir,
                         const guint64 *pids, guint npids, guint8 *out, guint64 *pid_out)
{
    if (kp->have_protocol_id) {
        if (conn->have_protocol_id && conn->protocol_id != kp->protocol_id)
            return FALSE;
        if (!try_packet(tvb, s, kp, dir, kp->protocol_id, out))
            return FALSE;
        *pid_out = kp->protocol_id;
        return TRUE;
    }
    for (guint p = 0; p < npids; p++)
        if (try_packet(tvb, s, kp, dir, pids[p], out)) {
            *pid_out = pids[p];
            return TRUE;
        }
    return FALSE;
}

/* The connection seen from the other side: its first packet did not say
 * which side is the server, and the guess was wrong (a key verified the
 * packet as sent the other way). */
static void conn_swap(nc_conn_t *c)
{
    address a = c->client;
    guint32 port = c->client_port;
    nc_dir_t dir = c->dir[0];
    gboolean have = c->cand_have[0];
    guint64 seq = c->cand_seq[0];
    guint32 n = c->n_disconnect[0];

    c->client = c->server;
    c->server = a;
    c->client_port = c->server_port;
    c->server_port = port;
    c->dir[0] = c->dir[1];
    c->dir[1] = dir;
    c->cand_have[0] = c->cand_have[1];
    c->cand_have[1] = have;
    c->cand_seq[0] = c->cand_seq[1];
    c->cand_seq[1] = seq;
    c->n_disconnect[0] = c->n_disconnect[1];
    c->n_disconnect[1] = n;
}

/* What a failed search is remembered against: it changes when a key pair,
 * a private key, a request's protocol id or the games table is added. */
static guint search_generation(void)
{
    return nc_keys_generation() + n_seen_protocol_ids + netcode_games_generation();
}

/* First pass: finds the keys of an encrypted packet of conn in direction
 * dir. The connection's own pair first; then, on at most
 * NC_SEARCH_PACKETS packets until something is added, every pair: the
 * connect tokens that name the connection's server, then the others. A
 * connection whose server side was guessed is also tried the other way
 * round, and turned round when that verifies. */
static nc_keypair_t *find_packet_keys(tvbuff_t *tvb, const nc_shape_t *s, nc_conn_t *conn, guint dir,
                                      guint8 *out, guint64 *pid_out)
{
    guint64 pids[NC_MAX_TRY_IDS];
    guint npids, gen;

    if (conn->keys) {
        npids = protocol_ids_for(conn, pids);
        if (try_pair(tvb, s, conn, conn->keys, dir, pids, npids, out, pid_out))
            return conn->keys;
    }
    /* maybe the key log has grown since */
    if (pref_keylog_file && *pref_keylog_file)
        keylog_maybe_read(FALSE);
    gen = search_generation();
    if (conn->search_gen != gen) {
        conn->search_gen = gen;
        conn->search_tries = 0;
    }
    if (conn->search_tries >= NC_SEARCH_PACKETS)
        return NULL;
    conn->search_tries++;
    npids = protocol_ids_for(conn, pids);
    for (int round = 0; round < 2; round++) {
        for (guint i = 0; i < nc_keys_pair_count(); i++) {
            nc_keypair_t *kp = nc_keys_pair(i);
            gboolean named = kp->naddr && nc_keys_token_has_server(kp, &conn->server, conn->server_port);
            if (kp == conn->keys || named != (round == 0))
                continue;
            if (try_pair(tvb, s, conn, kp, dir, pids, npids, out, pid_out)) {
                conn->search_tries = 0;
                conn->dir_guessed = FALSE;
                return kp;
            }
            if (conn->dir_guessed && try_pair(tvb, s, conn, kp, dir ^ 1, pids, npids, out, pid_out)) {
                conn_swap(conn);
                conn->search_tries = 0;
                conn->dir_guessed = FALSE;
                return kp;
            }
        }
    }
    return NULL;
}

static gboolean try_token(tvbuff_t *tvb, const guint8 *key, guint64 pid, guint64 expire, guint8 *out)
{
    guint8 ad[NC_VERSION_BYTES + 16];

    memcpy(ad, nc_version_info, NC_VERSION_BYTES);
    put_le64(ad + NC_VERSION_BYTES, pid);
    put_le64(ad + NC_VERSION_BYTES + 8, expire);
    return nc_xchacha20poly1305_decrypt(key, tvb_get_ptr(tvb, 30, NC_TOKEN_NONCE_BYTES), ad, sizeof ad,
                                        tvb_get_ptr(tvb, 54, NC_TOKEN_BYTES), NC_TOKEN_BYTES, out) != 0;
}

/* The private token's layout, checked: the offset of the keys, or -1 when
 * the address count or an address type is out of range. */
static int token_keys_offset(const guint8 *t, guint32 *naddr)
{
    guint32 n = nc_le32(t + 12);
    int off = 16;

    *naddr = n;
    if (n < 1 || n > 32)
        return -1;
    for (guint32 i = 0; i < n; i++) {
        guint8 at = t[off];
        if (at == 1)
            off += 1 + 4 + 2;
        else if (at == 2)
            off += 1 + 16 + 2;
        else
            return -1;
    }
    return off;
}

/* Whether the request's destination is one of the token's addresses. */
static gboolean server_in_token(packet_info *pinfo, const guint8 *t, guint32 naddr)
{
    int off = 16;

    for (guint32 i = 0; i < naddr; i++) {
        if (t[off] == 1) {
            if (pinfo->dst.type == AT_IPv4 && !memcmp(pinfo->dst.data, t + off + 1, 4) &&
                nc_le16(t + off + 5) == pinfo->destport)
                return TRUE;
            off += 7;
        } else {
            if (pinfo->dst.type == AT_IPv6) {
                guint8 a[16];
                for (int w = 0; w < 8; w++) {
                    guint16 v = nc_le16(t + off + 1 + 2 * w);
                    a[2 * w] = (guint8)(v >> 8);
                    a[2 * w + 1] = (guint8)v;
                }
                if (!memcmp(pinfo->dst.data, a, 16) && nc_le16(t + off + 17) == pinfo->destport)
                    return TRUE;
            }
            off += 19;
        }
    }
    return FALSE;
}

/* ---- Connections ----------------------------------------------------------- */

static nc_conn_t *conn_new(packet_info *pinfo, const nc_shape_t *s)
{
    nc_conn_t *c = wmem_new0(wmem_file_scope(), nc_conn_t);
    gboolean src_is_client;

    if (s->request || s->type == NC_RESPONSE) {
        src_is_client = TRUE;
    } else if (s->type == NC_CHALLENGE || s->type == NC_DENIED) {
        src_is_client = FALSE;
    } else if (port_in_prefs(pinfo->destport) != port_in_prefs(pinfo->srcport)) {
        src_is_client = port_in_prefs(pinfo->destport);
    } else {
        src_is_client = TRUE;
        c->dir_guessed = TRUE;
    }
    au_copy_endpoints(pinfo, !src_is_client, &c->client, &c->client_port, &c->server, &c->server_port);
    return c;
}

/* The conversation and connection of the last datagram's address pair:
 * consecutive datagrams of one connection skip the conversation lookup. */
static struct {
    gboolean valid;
    address a, b;
    guint32 pa, pb;
    port_type ptype;
    conversation_t *conv;
    nc_conn_t *conn;
} conv_cache;

static void conv_cache_clear(void)
{
    if (conv_cache.valid) {
        free_address(&conv_cache.a);
        free_address(&conv_cache.b);
    }
    memset(&conv_cache, 0, sizeof conv_cache);
}

/* First pass: the datagram's conversation (made when there is none) and
 * its connection (NULL when there is none yet). */
static nc_conn_t *lookup_conn(packet_info *pinfo, conversation_t **conv_out)
{
    gboolean plain = !pinfo->use_conv_addr_port_endpoints && !pinfo->conv_elements;

    if (plain && conv_cache.valid && conv_cache.ptype == pinfo->ptype &&
        ((pinfo->srcport == conv_cache.pa && pinfo->destport == conv_cache.pb &&
          addresses_equal(&pinfo->src, &conv_cache.a) && addresses_equal(&pinfo->dst, &conv_cache.b)) ||
         (pinfo->srcport == conv_cache.pb && pinfo->destport == conv_cache.pa &&
          addresses_equal(&pinfo->src, &conv_cache.b) && addresses_equal(&pinfo->dst, &conv_cache.a)))) {
        *conv_out = conv_cache.conv;
        return conv_cache.conn;
    }
    *conv_out = find_or_create_conversation(pinfo);
    conv_cache_clear();
    if (plain) {
        conv_cache.valid = TRUE;
        copy_address(&conv_cache.a, &pinfo->src);
        copy_address(&conv_cache.b, &pinfo->dst);
        conv_cache.pa = pinfo->srcport;
        conv_cache.pb = pinfo->destport;
        conv_cache.ptype = pinfo->ptype;
        conv_cache.conv = *conv_out;
        conv_cache.conn = (nc_conn_t *)wmem_map_lookup(conns, *conv_out);
        return conv_cache.conn;
    }
    return (nc_conn_t *)wmem_map_lookup(conns, *conv_out);
}

static guint conn_dir(const nc_conn_t *c, packet_info *pinfo)
{
    return addresses_equal(&pinfo->src, &c->client) && pinfo->srcport == c->client_port ? NC_C2S : NC_S2C;
}

static void conn_confirm(nc_conn_t *c, packet_info *pinfo, conversation_t *conv)
{
    if (c->confirmed_frame)
        return;
    c->confirmed_frame = pinfo->num;
    c->index = next_conn_index++;
    if (conv)
        conversation_set_dissector(conv, netcode_conv_handle);
}

/* ---- Display --------------------------------------------------------------- */

static void add_token_tree(packet_info *pinfo, proto_tree *tree, tvbuff_t *ptvb, const guint8 *t, guint32 naddr,
                           int keys_off)
{
    proto_tree_add_item(tree, hf_netcode_token_client_id, ptvb, 0, 8, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(tree, hf_netcode_token_timeout, ptvb, 8, 4, ENC_LITTLE_ENDIAN);
    proto_tree_add_item(tree, hf_netcode_token_num_addresses, ptvb, 12, 4, ENC_LITTLE_ENDIAN);
    if (keys_off < 0)
        return;
    {
        int off = 16;
        for (guint32 i = 0; i < naddr; i++) {
            char *a;
            if (t[off] == 1) {
                a = wmem_strdup_printf(pinfo->pool, "%u.%u.%u.%u:%u", t[off + 1], t[off + 2], t[off + 3],
                                       t[off + 4], nc_le16(t + off + 5));
                proto_tree_add_string_format_value(tree, hf_netcode_token_server_address, ptvb, off, 7, a,
                                                   "%s (IPv4)", a);
                off += 7;
            } else {
                wmem_strbuf_t *sb = wmem_strbuf_new(pinfo->pool, "[");
                for (int w = 0; w < 8; w++)
                    wmem_strbuf_append_printf(sb, w ? ":%x" : "%x", nc_le16(t + off + 1 + 2 * w));
                wmem_strbuf_append_printf(sb, "]:%u", nc_le16(t + off + 17));
                a = (char *)wmem_strbuf_get_str(sb);
                proto_tree_add_string_format_value(tree, hf_netcode_token_server_address, ptvb, off, 19, a,
                                                   "%s (IPv6)", a);
                off += 19;
            }
        }
    }
    proto_tree_add_item(tree, hf_netcode_token_c2s_key, ptvb, keys_off, NC_KEY_BYTES, ENC_NA);
    proto_tree_add_item(tree, hf_netcode_token_s2c_key, ptvb, keys_off + NC_KEY_BYTES, NC_KEY_BYTES, ENC_NA);
    proto_tree_add_item(tree, hf_netcode_token_user_data, ptvb, keys_off + 2 * NC_KEY_BYTES, NC_USER_DATA_BYTES,
                        ENC_NA);
}

/* ---- The dissector ---------------------------------------------------------- */

/* One datagram's dissection, handed between the steps of dissect_common. */
typedef struct nc_dissection {
    tvbuff_t *tvb;
    packet_info *pinfo;
    proto_tree *tree;           /* the tree netcode's item goes in (and the payload's) */
    gboolean first;             /* the first pass over the frame */
    nc_shape_t s;
    wmem_allocator_t *scope;    /* the frame record's (cs_sp_record_scope) */
    nc_frame_t *rec;
    nc_conn_t *conn;
    guint dir;
    nc_pkt_t pkt;               /* what the analysis is given */
    guint8 *plain;              /* the decrypted bytes (packet scope) */
    guint32 plain_len;
    gboolean decrypted;
    proto_item *ti;             /* netcode's item and subtree */
    proto_tree *nt;
} nc_dissection_t;

/* The heuristic's check of a packet of a connection not confirmed yet, in
 * the middle of it: well-formed, and then verified with a key, or following
 * an earlier packet of the same direction. */
static gboolean heur_mid_connection(nc_dissection_t *d, nc_conn_t *conn)
{
    guint dir = conn_dir(conn, d->pinfo);
    guint8 scratch[1300];
    guint64 pid = 0;
    nc_keypair_t *kp = NULL;
    gboolean follows;

    if (!d->s.size_ok)
        return FALSE;
    if (d->s.enc_len <= sizeof scratch)
        kp = find_packet_keys(d->tvb, &d->s, conn, dir, scratch, &pid);
    if (kp)
        return TRUE;
    follows = conn->cand_have[dir] && d->s.seq > conn->cand_seq[dir] &&
              d->s.seq - conn->cand_seq[dir] <= NC_CANDIDATE_SPAN;
    conn->cand_have[dir] = TRUE;
    conn->cand_seq[dir] = d->s.seq;
    return follows;
}

/* ---- Frame records kept for the passes that revisit ----------------------- */

/* With two passes (and in the GUI) every netcode frame's record is kept for
 * the file. Most frames of a connection have the same record (a payload or
 * keep-alive with nothing to note), so a record is stored once: a frame is
 * a 4-byte index (by frame number) into the distinct records (in the file's
 * scope), instead of a record and a proto data entry of its own, about
 * 150 bytes a frame. A record is compared once it is complete (after the
 * first pass's analysis) with its connection's last few kept, and a revisit never
 * changes a shared one (packet_start, analyse). In tshark's single pass
 * a record lives with the packet (single-pass.h), and only the frame being
 * dissected has one. */
static GArray *kept_index;         /* guint32 by frame number: 1 + index in kept, 0 none */
static GPtrArray *kept;            /* nc_frame_t * (file scope) */
/* 1 + index in kept of the last distinct records of frames without a
 * connection (a connection's are in its nc_conn_t) */
static guint32 kept_recent_none[NC_KEPT_RECENT];
static guint kept_recent_none_next;
/* The single pass: the record of the frame being dissected (packet scope),
 * as a proto data entry would hold it, without the entry's cost. */
static nc_frame_t *packet_rec;
static guint32 packet_rec_num;

static void kept_clear(void)
{
    g_array_set_size(kept_index, 0);
    g_ptr_array_set_size(kept, 0);
    memset(kept_recent_none, 0, sizeof kept_recent_none);
    kept_recent_none_next = 0;
    packet_rec = NULL;
    packet_rec_num = 0;
}

/* The frame's record in scope (the file's: the kept ones), NULL when none. */
static nc_frame_t *frame_record(packet_info *pinfo, wmem_allocator_t *scope)
{
    guint32 idx;

    if (scope != wmem_file_scope())
        return packet_rec && packet_rec_num == pinfo->num ? packet_rec : NULL;
    idx = kept_index->len > pinfo->num ? g_array_index(kept_index, guint32, pinfo->num) : 0;
    return idx ? (nc_frame_t *)g_ptr_array_index(kept, idx - 1) : NULL;
}

/* Ties rec, new in scope, to the frame. */
static void frame_record_add(packet_info *pinfo, wmem_allocator_t *scope, nc_frame_t *rec)
{
    if (scope != wmem_file_scope()) {
        packet_rec = rec;
        packet_rec_num = pinfo->num;
        return;
    }
    g_ptr_array_add(kept, rec);
    if (kept_index->len <= pinfo->num)
        g_array_set_size(kept_index, pinfo->num + 1);
    g_array_index(kept_index, guint32, pinfo->num) = kept->len;
}

/* First pass, once the frame's record is complete: when a record kept
 * lately is the same, the frame takes that one, and its own is freed.
 * Returns the frame's record. */
static nc_frame_t *frame_record_share(packet_info *pinfo, wmem_allocator_t *scope, nc_frame_t *rec)
{
    guint32 *slot;
    guint32 *kept_recent = rec->conn ? rec->conn->kept_recent : kept_recent_none;
    guint *kept_recent_next = rec->conn ? &rec->conn->kept_recent_next : &kept_recent_none_next;

    if (scope != wmem_file_scope() || kept_index->len <= pinfo->num)
        return rec;
    slot = &g_array_index(kept_index, guint32, pinfo->num);
    if (*slot != kept->len || g_ptr_array_index(kept, *slot - 1) != rec)
        return rec;
    for (guint i = 0; i < NC_KEPT_RECENT; i++) {
        nc_frame_t *other;
        if (!kept_recent[i] || kept_recent[i] == *slot)
            continue;
        other = (nc_frame_t *)g_ptr_array_index(kept, kept_recent[i] - 1);
        /* records are allocated zeroed, so the padding compares too */
        if (memcmp(other, rec, sizeof *rec) == 0) {
            /* a second datagram of the frame may find its record among
             * the recent ones (frame_record_own): it goes from there too */
            for (guint j = 0; j < NC_KEPT_RECENT; j++)
                if (kept_recent[j] == *slot)
                    kept_recent[j] = 0;
            g_ptr_array_set_size(kept, kept->len - 1);
            wmem_free(scope, rec);
            *slot = kept_recent[i];
            return other;
        }
    }
    for (guint i = 0; i < NC_KEPT_RECENT; i++)
        if (kept_recent[i] == *slot)
            return rec;
    kept_recent[*kept_recent_next] = *slot;
    *kept_recent_next = (*kept_recent_next + 1) % NC_KEPT_RECENT;
    return rec;
}

/* First pass, a second netcode datagram in the frame (its record made by
 * the first): the frame's record as its own, to be changed, copied when it
 * shares one. */
static nc_frame_t *frame_record_own(packet_info *pinfo, wmem_allocator_t *scope, nc_frame_t *rec)
{
    guint32 *slot;

    if (scope != wmem_file_scope() || kept_index->len <= pinfo->num)
        return rec;
    slot = &g_array_index(kept_index, guint32, pinfo->num);
    if (*slot == kept->len && g_ptr_array_index(kept, *slot - 1) == rec)
        return rec;
    rec = (nc_frame_t *)wmem_memdup(scope, rec, sizeof *rec);
    g_ptr_array_add(kept, rec);
    *slot = kept->len;
    return rec;
}

/* The first pass's decision on a datagram: its new frame record (with its
 * connection, made if new), or NULL when netcode does not take it. */
static nc_frame_t *first_pass_record(nc_dissection_t *d, nc_mode_t mode)
{
    nc_conn_t *conn = NULL;
    conversation_t *conv = NULL;
    nc_frame_t *rec;

    if (!d->s.plausible && mode != MODE_FORCED)
        return NULL;
    if (d->s.plausible) {
        conn = lookup_conn(d->pinfo, &conv);
        if (!conn) {
            if (mode != MODE_FORCED && !d->s.request && !d->s.size_ok)
                return NULL;
            conn = conn_new(d->pinfo, &d->s);
            wmem_map_insert(conns, conv, conn);
            conv_cache.conn = conn;
        }
    }
    if (mode == MODE_HEUR && conn && !conn->confirmed_frame && !d->s.request && !heur_mid_connection(d, conn))
        return NULL;
    if (conn)
        conn_confirm(conn, d->pinfo, mode == MODE_FORCED ? NULL : conv);
    rec = wmem_new0(d->scope, nc_frame_t);
    rec->conn = conn;
    rec->private_key = -1;
    frame_record_add(d->pinfo, d->scope, rec);
    return rec;
}

/* Reads the datagram's shape and finds its frame record: the first pass
 * decides, and every later pass follows. FALSE: not netcode's. */
static gboolean find_record(nc_dissection_t *d, nc_mode_t mode)
{
    gboolean transient = FALSE;

    read_shape(d->tvb, &d->s);
    /* In tshark's single pass no frame is seen again: its record lives with
     * the packet (single-pass.h), elsewhere with the file. */
    if (d->first && d->s.plausible)
        transient = cs_sp_begin_packet(d->pinfo, pref_single_pass);
    d->scope = cs_sp_record_scope(d->pinfo, transient);
    d->rec = frame_record(d->pinfo, d->scope);

    if (!d->first) {
        if (!d->rec) {
            /* Decode As chosen after the first pass: shown, not analysed. */
            if (mode != MODE_FORCED)
                return FALSE;
            d->rec = wmem_new0(d->pinfo->pool, nc_frame_t);
            d->rec->private_key = -1;
        }
    } else if (!d->rec) {
        d->rec = first_pass_record(d, mode);
        if (!d->rec)
            return FALSE;
    } else {
        d->rec = frame_record_own(d->pinfo, d->scope, d->rec);
    }
    d->conn = d->rec->conn;
    return TRUE;
}

/* A datagram that is no netcode packet, shown through Decode As. */
static void show_not_netcode(nc_dissection_t *d)
{
    const nc_shape_t *s = &d->s;

    if (s->len)
        proto_tree_add_item(d->nt, hf_netcode_prefix, d->tvb, 0, 1, ENC_NA);
    AU_EXPERT(d->pinfo, d->ti, &ei_netcode_not_netcode,
              "Not a netcode packet (%u bytes, prefix byte 0x%02x): %s", s->len, s->prefix,
              s->len == 0 ? "empty" :
              s->prefix == 0 ? "a request is 1078 bytes with \"NETCODE 1.02\"" :
              "type must be 1-6, sequence bytes 1-8, and room for the 16-byte MAC");
    col_add_fstr(d->pinfo->cinfo, COL_INFO, "Not netcode (%u bytes)", s->len);
}

/* The analysis' packet from the shape, and the packet's direction. */
static void packet_start(nc_dissection_t *d)
{
    nc_pkt_t *pkt = &d->pkt;

    memset(pkt, 0, sizeof *pkt);
    pkt->type = d->s.request ? NC_REQUEST : d->s.type;
    pkt->seq_bytes = d->s.seq_bytes;
    pkt->seq = d->s.seq;
    pkt->len = d->s.len;
    pkt->size_ok = d->s.size_ok;
    pkt->encrypted = !d->s.request;
    d->dir = d->conn ? conn_dir(d->conn, d->pinfo) : NC_C2S;
    pkt->dir = (guint8)d->dir;
    if (d->rec->dir != d->dir) {
        /* a revisit may find the connection turned round since: the
         * frame's record may be shared (frame_record_share) */
        if (!d->first)
            d->rec = (nc_frame_t *)wmem_memdup(d->pinfo->pool, d->rec, sizeof *d->rec);
        d->rec->dir = (guint8)d->dir;
    }
}

/* First pass: reads the key log the first time, and ties a problem with it,
 * or with the private key preference, to this frame when none is yet. */
static void note_key_problems(nc_dissection_t *d)
{
    const char *problem;

    if (!keylog_checked_once)
        keylog_maybe_read(TRUE);
    problem = nc_keys_keylog_problem();
    if (problem && keylog_shown_gen != nc_keys_keylog_generation() + 1) {
        keylog_shown_gen = nc_keys_keylog_generation() + 1;
        keylog_problem_frame = d->pinfo->num;
        d->rec->keylog_gen = keylog_shown_gen;
        ws_warning("netcode key log %s: %s", pref_keylog_file, problem);
    }
    if (private_key_pref_error && !pref_error_frame)
        pref_error_frame = d->pinfo->num;
    if (token_file_error && !token_file_error_frame)
        token_file_error_frame = d->pinfo->num;
}

/* A request's connect token, decrypted with the private key that opens it
 * (found on the first pass, the same one later): its fields, and on the
 * first pass the connection's keys. */
static void decrypt_request(nc_dissection_t *d)
{
    nc_pkt_t *pkt = &d->pkt;
    nc_frame_t *rec = d->rec;
    guint64 pid = tvb_get_letoh64(d->tvb, 14), expire = tvb_get_letoh64(d->tvb, 22);

    pkt->protocol_id = pid;
    pkt->expire_ts = expire;
    d->plain = (guint8 *)wmem_alloc(d->pinfo->pool, NC_TOKEN_BYTES - NC_MAC_BYTES);
    if (d->first) {
        remember_protocol_id(pid);
        keylog_maybe_read(FALSE);
        for (guint i = 0; i < nc_keys_private_count(); i++) {
            if (try_token(d->tvb, nc_keys_private(i), pid, expire, d->plain)) {
                rec->token_key = (const guint8 *)wmem_memdup(d->scope, nc_keys_private(i), NC_KEY_BYTES);
                rec->private_key = (gint16)i;
                break;
            }
        }
        pkt->token_tried = nc_keys_private_count() > 0;
    }
    if (rec->private_key >= 0) {
        d->decrypted = d->first || try_token(d->tvb, rec->token_key, pid, expire, d->plain);
        d->plain_len = NC_TOKEN_BYTES - NC_MAC_BYTES;
    }
    if (d->decrypted) {
        guint32 naddr;
        int koff = token_keys_offset(d->plain, &naddr);
        pkt->token_decrypted = TRUE;
        pkt->client_id = nc_le64(d->plain);
        pkt->token_timeout = (gint32)nc_le32(d->plain + 8);
        if (koff < 0 || koff + 2 * NC_KEY_BYTES + NC_USER_DATA_BYTES > (int)d->plain_len) {
            pkt->token_bad = TRUE;
        } else {
            pkt->server_in_token = server_in_token(d->pinfo, d->plain, naddr);
            if (d->first && d->conn) {
                d->conn->keys = nc_keys_learn_pair(d->plain + koff, d->plain + koff + NC_KEY_BYTES);
                d->conn->keys_frame = d->pinfo->num;
            }
        }
    }
}

/* An encrypted packet, decrypted with the connection's keys or a key log's
 * (found on the first pass, the same ones later). */
static void decrypt_packet(nc_dissection_t *d)
{
    nc_conn_t *conn = d->conn;
    nc_frame_t *rec = d->rec;
    gboolean any_keys;

    d->plain_len = d->s.enc_len - NC_MAC_BYTES;
    if (d->first && conn && !conn->keys && !nc_keys_pair_count() && pref_keylog_file && *pref_keylog_file)
        keylog_maybe_read(FALSE);
    /* Without any key to try, no buffer and no trial. */
    any_keys = d->first ? conn && (conn->keys || nc_keys_pair_count()) : rec->keys != NULL;
    if (any_keys)
        d->plain = (guint8 *)wmem_alloc(d->pinfo->pool, d->plain_len ? d->plain_len : 1);
    if (d->first && conn && any_keys) {
        guint64 pid = 0;
        nc_keypair_t *kp = NULL;
        if (d->s.enc_len <= 1300 + NC_MAC_BYTES)
            kp = find_packet_keys(d->tvb, &d->s, conn, d->dir, d->plain, &pid);
        d->pkt.keys_known = conn->keys != NULL;
        if (kp) {
            /* the connection may have been turned round */
            d->dir = conn_dir(conn, d->pinfo);
            d->pkt.dir = (guint8)d->dir;
            rec->dir = (guint8)d->dir;
            rec->keys = kp;
            rec->protocol_id = pid;
            d->decrypted = TRUE;
            if (conn->keys != kp) {
                conn->keys = kp;
                conn->keys_frame = d->pinfo->num;
            }
            if (!kp->bound)
                kp->bound = conn->index + 1;
            if (!conn->have_protocol_id) {
                conn->have_protocol_id = TRUE;
                conn->protocol_id = pid;
            }
        }
    } else if (rec->keys) {
        d->decrypted = try_packet(d->tvb, &d->s, rec->keys, d->dir, rec->protocol_id, d->plain);
    }
    d->pkt.decrypted = d->decrypted;
}

/* The key log's connection keys (without a protocol id of their own) that
 * have not decrypted another connection: given, and maybe this
 * connection's if its protocol id were known. */
static guint free_log_pairs(const nc_conn_t *conn)
{
    guint n = 0;

    for (guint i = 0; i < nc_keys_pair_count(); i++) {
        const nc_keypair_t *kp = nc_keys_pair(i);
        if (!kp->have_protocol_id && (!kp->bound || kp->bound == conn->index + 1))
            n++;
    }
    return n;
}

/* First pass: the analysis, from authenticated packets or from any when the
 * connection has no keys, and why a packet stayed encrypted. */
static void analyse(nc_dissection_t *d)
{
    nc_pkt_t *pkt = &d->pkt;
    nc_conn_t *conn = d->conn;
    nc_frame_t *rec = d->rec;

    if (d->first && conn && !d->pinfo->flags.in_error_pkt && (d->s.request || d->decrypted || !pkt->keys_known)) {
        if (pkt->type == NC_CHALLENGE || pkt->type == NC_RESPONSE) {
            if (d->decrypted && d->plain_len >= 8)
                pkt->challenge_seq = nc_le64(d->plain);
        } else if (pkt->type == NC_KEEP_ALIVE && d->decrypted && d->plain_len == 8) {
            pkt->client_index = nc_le32(d->plain);
            pkt->max_clients = nc_le32(d->plain + 4);
        }
        nc_analysis_packet(d->pinfo, conn, rec, pkt);
        rec->analysed = 1;
    }
    if (d->first && conn && !d->decrypted) {
        if (!d->s.request && pkt->keys_known) {
            conn->decrypt_failed++;
            conn->dir[d->dir].decrypt_failed++;
            rec->undecrypted = NC_UNDEC_FAILED;
        } else if (!conn->no_key_noted && (!d->s.request || !nc_keys_private_count())) {
            conn->no_key_noted = TRUE;
            rec->undecrypted = !d->s.request && !conn->have_protocol_id && free_log_pairs(conn) ?
                               NC_UNDEC_NO_ID_NOTE : NC_UNDEC_NO_KEY_NOTE;
        } else if (!d->s.request) {
            rec->undecrypted = NC_UNDEC_NO_KEY;
        }
    }
    if (rec->type != pkt->type) {
        if (!d->first)
            d->rec = rec = (nc_frame_t *)wmem_memdup(d->pinfo->pool, rec, sizeof *rec);
        rec->type = pkt->type;
    }
    if (d->first && conn && netcode_games_count())
        rec->game = (gint16)(nc_games_match(conn->have_protocol_id, conn->protocol_id, conn->server_port) + 1);
    if (d->first)
        d->rec = frame_record_share(d->pinfo, d->scope, rec);
}

/* The request's expire timestamp, with the time it names and how far from
 * this frame. */
static void show_expire(nc_dissection_t *d)
{
    guint64 expire = d->pkt.expire_ts, now = (guint64)d->pinfo->abs_ts.secs;
    proto_item *ei = proto_tree_add_item(d->nt, hf_netcode_expire_timestamp, d->tvb, 22, 8, ENC_LITTLE_ENDIAN);
    nstime_t t;

    t.secs = (time_t)MIN(expire, (guint64)G_MAXINT64 / 2);
    t.nsecs = 0;
    proto_item_set_generated(proto_tree_add_time(d->nt, hf_netcode_expire_time, d->tvb, 22, 8, &t));
    if (expire <= now)
        proto_item_append_text(ei, " (expired %" G_GUINT64_FORMAT " s before this frame)", now - expire);
    else
        proto_item_append_text(ei, " (expires %" G_GUINT64_FORMAT " s after this frame)", expire - now);
}

/* The private connect token: decrypted (pi is its decrypted flag), or why
 * it is not. */
static void show_token(nc_dissection_t *d, proto_tree *tt, proto_item *pi)
{
    packet_info *pinfo = d->pinfo;

    if (d->decrypted) {
        tvbuff_t *ptvb = tvb_new_child_real_data(d->tvb, d->plain, d->plain_len, d->plain_len);
        proto_tree *dt;
        guint32 naddr;
        int koff = token_keys_offset(d->plain, &naddr);
        add_new_data_source(pinfo, ptvb, "Decrypted netcode payload");
        proto_item_append_text(pi, " (private key %d)", d->rec->private_key + 1);
        dt = proto_tree_add_subtree(tt, ptvb, 0, d->plain_len, ett_netcode_decrypted, NULL,
                                    "Private connect token (decrypted)");
        add_token_tree(pinfo, dt, ptvb, d->plain, naddr, koff);
        if (d->pkt.token_bad)
            AU_EXPERT(pinfo, pi, &ei_netcode_token_bad,
                      "The private connect token decrypts but is malformed (%u server addresses, "
                      "or an address type other than 1 or 2): the server ignores the request", naddr);
        else if (!d->pkt.server_in_token && (pinfo->dst.type == AT_IPv4 || pinfo->dst.type == AT_IPv6))
            expert_add_info(pinfo, pi, &ei_netcode_server_not_in_token);
    } else if (d->rec->private_key < 0 && nc_keys_private_count() > 0) {
        AU_EXPERT(pinfo, pi, &ei_netcode_token_failed,
                  "The private connect token does not decrypt with any of the %u private key(s) "
                  "configured: the server has another key (or the protocol id or expire "
                  "timestamp were altered), and ignores the request", nc_keys_private_count());
    } else if (d->rec->undecrypted == NC_UNDEC_NO_KEY_NOTE) {
        AU_EXPERT(pinfo, pi, &ei_netcode_no_key,
                  "Connect token not decrypted: no private key (netcode.private_key, or a "
                  "NETCODE_PRIVATE_KEY line in netcode.keylog_file)");
    }
}

/* A connection request's tree and columns. */
static void show_request(nc_dissection_t *d)
{
    tvbuff_t *tvb = d->tvb;
    proto_item *pi = proto_tree_add_item(d->nt, hf_netcode_prefix, tvb, 0, 1, ENC_NA);
    proto_tree *tt;

    proto_tree_add_item(proto_item_add_subtree(pi, ett_netcode_prefix), hf_netcode_type, tvb, 0, 1, ENC_NA);
    proto_tree_add_item(d->nt, hf_netcode_version, tvb, 1, NC_VERSION_BYTES, ENC_ASCII);
    proto_tree_add_item(d->nt, hf_netcode_protocol_id, tvb, 14, 8, ENC_LITTLE_ENDIAN);
    show_expire(d);
    proto_tree_add_item(d->nt, hf_netcode_token_nonce, tvb, 30, NC_TOKEN_NONCE_BYTES, ENC_NA);
    pi = proto_tree_add_item(d->nt, hf_netcode_token_data, tvb, 54, NC_TOKEN_BYTES, ENC_NA);
    tt = proto_item_add_subtree(pi, ett_netcode_token);
    proto_tree_add_item(tt, hf_netcode_encrypted, tvb, 54, NC_TOKEN_BYTES - NC_MAC_BYTES, ENC_NA);
    proto_tree_add_item(tt, hf_netcode_mac, tvb, 54 + NC_TOKEN_BYTES - NC_MAC_BYTES, NC_MAC_BYTES, ENC_NA);
    pi = proto_tree_add_boolean(tt, hf_netcode_decrypted, tvb, 54, NC_TOKEN_BYTES, d->decrypted);
    proto_item_set_generated(pi);
    show_token(d, tt, pi);
    col_add_fstr(d->pinfo->cinfo, COL_INFO, "Request protocol_id=0x%016" G_GINT64_MODIFIER "x", d->pkt.protocol_id);
    proto_item_append_text(d->ti, ", Connection request");
}

/* An encrypted packet of a size its type does not have. */
static void show_size_problem(nc_dissection_t *d)
{
    const nc_shape_t *s = &d->s;
    int want;

    if (s->size_ok)
        return;
    want = type_plain_len[s->type];
    if (want >= 0)
        AU_EXPERT(d->pinfo, d->ti, &ei_netcode_size,
                  "%s of %u bytes: %u encrypted bytes where the type has %d (and a 16-byte MAC): "
                  "the receiver ignores it", nc_type_short_name(s->type), s->len, s->enc_len - NC_MAC_BYTES,
                  want);
    else
        AU_EXPERT(d->pinfo, d->ti, &ei_netcode_size,
                  "Payload of %u bytes: the payload must be 1 to 1200 bytes; the receiver ignores it",
                  s->enc_len - NC_MAC_BYTES);
}

/* An encrypted packet's header fields: prefix, sequence, encrypted bytes,
 * MAC; returns the decrypted flag's item. */
static proto_item *show_packet_header(nc_dissection_t *d)
{
    const nc_shape_t *s = &d->s;
    proto_item *pi, *di;
    proto_tree *pt;

    if (!d->nt) {
        /* No tree: the expert infos alone (the items could not throw:
         * read_shape checked the length). */
        if (!s->canonical)
            expert_add_info(d->pinfo, NULL, &ei_netcode_seq_encoding);
        show_size_problem(d);
        return NULL;
    }
    pi = proto_tree_add_item(d->nt, hf_netcode_prefix, d->tvb, 0, 1, ENC_NA);
    pt = proto_item_add_subtree(pi, ett_netcode_prefix);
    proto_tree_add_item(pt, hf_netcode_type, d->tvb, 0, 1, ENC_NA);
    proto_tree_add_item(pt, hf_netcode_sequence_bytes, d->tvb, 0, 1, ENC_NA);
    pi = proto_tree_add_uint64(d->nt, hf_netcode_sequence, d->tvb, 1, s->seq_bytes, s->seq);
    if (s->seq >= NC_GLOBAL_SEQ_BASE && (s->type == NC_CHALLENGE || s->type == NC_DENIED)) {
        proto_item_append_text(pi, " (2^63 + %" G_GUINT64_FORMAT ": the server's global sequence)",
                               s->seq - NC_GLOBAL_SEQ_BASE);
        proto_item_set_generated(proto_tree_add_uint64(d->nt, hf_netcode_sequence_global, d->tvb, 1, s->seq_bytes,
                                                       s->seq - NC_GLOBAL_SEQ_BASE));
    }
    if (!s->canonical)
        expert_add_info(d->pinfo, pi, &ei_netcode_seq_encoding);
    if (s->enc_len > NC_MAC_BYTES)   /* a disconnect encrypts nothing: its MAC alone */
        proto_tree_add_item(d->nt, hf_netcode_encrypted, d->tvb, 1 + s->seq_bytes, s->enc_len - NC_MAC_BYTES,
                            ENC_NA);
    proto_tree_add_item(d->nt, hf_netcode_mac, d->tvb, s->len - NC_MAC_BYTES, NC_MAC_BYTES, ENC_NA);
    di = proto_tree_add_boolean(d->nt, hf_netcode_decrypted, d->tvb, 1 + s->seq_bytes, s->enc_len, d->decrypted);
    proto_item_set_generated(di);
    show_size_problem(d);
    return di;
}

/* A decrypted packet's fields, columns and analysis; a payload is handed on
 * (then TRUE: the analysis is shown already). */
static gboolean show_decrypted(nc_dissection_t *d, proto_item *di)
{
    const nc_shape_t *s = &d->s;
    const nc_frame_t *rec = d->rec;
    guint32 plain_len = d->plain_len;
    tvbuff_t *ptvb = NULL;
    netcode_payload_info_t info;

    switch (rec->keys ? rec->keys->source : NC_KEYS_FROM_REQUEST) {
    case NC_KEYS_FROM_LOG:
        proto_item_append_text(di, " (key log line %u)", rec->keys->line);
        break;
    case NC_KEYS_FROM_LOG_TOKEN:
        proto_item_append_text(di, " (connect token of key log line %u)", rec->keys->line);
        break;
    case NC_KEYS_FROM_TOKEN_FILE:
        proto_item_append_text(di, " (connect token %u of netcode.connect_token_file)", rec->keys->line);
        break;
    default:
        proto_item_append_text(di, " (keys from the connect token)");
        break;
    }
    if (plain_len) {
        ptvb = tvb_new_child_real_data(d->tvb, d->plain, plain_len, plain_len);
        add_new_data_source(d->pinfo, ptvb, "Decrypted netcode payload");
    }
    if (!d->nt) {
        /* no tree: no items */
    } else if ((s->type == NC_CHALLENGE || s->type == NC_RESPONSE) && ptvb && plain_len == 8 + NC_CHALLENGE_BYTES) {
        proto_tree_add_item(d->nt, hf_netcode_challenge_sequence, ptvb, 0, 8, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(d->nt, hf_netcode_challenge_token, ptvb, 8, NC_CHALLENGE_BYTES, ENC_NA);
    } else if (s->type == NC_KEEP_ALIVE && ptvb && plain_len == 8) {
        proto_tree_add_item(d->nt, hf_netcode_keep_alive_client_index, ptvb, 0, 4, ENC_LITTLE_ENDIAN);
        proto_tree_add_item(d->nt, hf_netcode_keep_alive_max_clients, ptvb, 4, 4, ENC_LITTLE_ENDIAN);
    } else if (s->type == NC_PAYLOAD && ptvb) {
        proto_tree_add_item(d->nt, hf_netcode_payload, ptvb, 0, -1, ENC_NA);
        proto_item_set_generated(proto_tree_add_uint(d->nt, hf_netcode_payload_len, ptvb, 0, 0, plain_len));
    }
    info_packet(d->pinfo, s, s->type == NC_PAYLOAD, plain_len, FALSE,
                s->type == NC_KEEP_ALIVE && plain_len == 8 ? d->plain : NULL);
    proto_item_append_text(d->ti, ", %s, Seq: %" G_GUINT64_FORMAT, nc_type_short_name(s->type), s->seq);
    nc_analysis_info(d->pinfo, rec);
    if (s->type != NC_PAYLOAD || !ptvb)
        return FALSE;
    nc_analysis_show(d->tvb, d->pinfo, d->nt, d->ti, rec);
    /* What the payload's protocols get in their data argument (netcode.h). */
    info.conn = rec->conn;
    info.conn_index = rec->conn ? rec->conn->index : 0;
    info.dir = rec->dir;
    info.seq = s->seq;
    info.game = rec->game > 0 ? netcode_game((guint)(rec->game - 1)) : NULL;
    cs_call_payload(payload_table, payload_heur, ptvb, d->pinfo, d->tree, &info);
    return TRUE;
}

/* What is missing to decrypt a connection, on its first packet left
 * encrypted: the expert's summary is fixed per case, the item says what
 * was tried and what to set. */
static void show_missing(nc_dissection_t *d, proto_item *di)
{
    guint pairs = nc_keys_pair_count(), privs = nc_keys_private_count();
    const nc_conn_t *conn = d->conn;

    if (d->rec->undecrypted == NC_UNDEC_NO_ID_NOTE) {
        guint64 pids[NC_MAX_TRY_IDS];
        guint npids = protocol_ids_for(NULL, pids);
        proto_item_append_text(di, " (keys given but the protocol id is unknown: the connection's request is not "
                               "in the capture, and none of the %u protocol id(s) tried, 0 and those of the "
                               "requests, connect tokens, netcode.protocol_ids and games table, verifies with the "
                               "%u connection key pair(s) given: set netcode.protocol_ids or a chunkshark_games "
                               "row, or give the client's connect token)", npids, pairs);
        expert_add_info(d->pinfo, di, &ei_netcode_no_protocol_id);
        return;
    }
    if (!pairs && !privs)
        proto_item_append_text(di, " (no key for this connection: no key is set; set netcode.private_key (with "
                               "the connection's request in the capture), netcode.keylog_file, "
                               "netcode.connect_token_file or a chunkshark_games row)");
    else if (!pairs)
        proto_item_append_text(di, " (no key for this connection: a private key decrypts only a connection "
                               "request's token, and %s; give this connection's keys: a NETCODE_CONNECTION_KEYS "
                               "or NETCODE_CONNECT_TOKEN line in netcode.keylog_file, or netcode.connect_token_file)",
                               conn && conn->have_token ? "this connection's token does not decrypt with them" :
                               "this connection's request is not in the capture");
    else
        proto_item_append_text(di, " (no key for this connection: none of the %u connection key pair(s) given "
                               "verifies%s)", pairs, conn && conn->have_protocol_id ?
                               " with its protocol id" : "");
    expert_add_info(d->pinfo, di, &ei_netcode_no_key);
}

/* An encrypted packet's tree and columns; TRUE when its payload was handed
 * on with the analysis shown. */
static gboolean show_packet(nc_dissection_t *d)
{
    proto_item *di = show_packet_header(d);

    if (d->decrypted)
        return show_decrypted(d, di);
    if (d->rec->undecrypted == NC_UNDEC_FAILED)
        AU_EXPERT(d->pinfo, di, &ei_netcode_decrypt_failed,
                  "Does not decrypt with the connection's keys: forged, corrupted, or sent with "
                  "other keys; the receiver drops it (the analysis ignores it)");
    else if (d->rec->undecrypted == NC_UNDEC_NO_KEY_NOTE || d->rec->undecrypted == NC_UNDEC_NO_ID_NOTE)
        show_missing(d, di);
    info_packet(d->pinfo, &d->s, TRUE, d->s.enc_len - NC_MAC_BYTES, TRUE, NULL);
    proto_item_append_text(d->ti, ", %s, Seq: %" G_GUINT64_FORMAT, nc_type_short_name(d->s.type), d->s.seq);
    nc_analysis_info(d->pinfo, d->rec);
    return FALSE;
}

/* After the tree: the key problems tied to this frame, the tap, and on the
 * first pass the end of the packet and the capture's time span. */
static void finish_packet(nc_dissection_t *d)
{
    packet_info *pinfo = d->pinfo;

    if (d->rec->keylog_gen && nc_keys_keylog_problem())
        AU_EXPERT(pinfo, d->ti, &ei_netcode_keylog, "Key log file %s: %s", pref_keylog_file,
                  nc_keys_keylog_problem());
    if (pref_error_frame == pinfo->num && private_key_pref_error)
        AU_EXPERT(pinfo, d->ti, &ei_netcode_private_key_pref, "%s", private_key_pref_error);
    if (token_file_error_frame == pinfo->num && token_file_error) {
        proto_item *ti = proto_tree_add_expert(d->nt, pinfo, &ei_netcode_token_file, d->tvb, 0, 0);
        proto_item_append_text(ti, ": %s", token_file_error);
    }
    if (d->conn && d->conn->confirmed_frame && d->nt)
        nc_flow_end_fields(d->nt, d->tvb, pinfo, d->conn, d->dir);
    if (d->conn && d->conn->confirmed_frame && !pinfo->flags.in_error_pkt && have_tap_listener(netcode_tap)) {
        nc_tap_info_t *tap = wmem_new(pinfo->pool, nc_tap_info_t);
        tap->conn = d->conn;
        tap->rec = d->rec;
        tap->seq = d->s.seq;
        tap->data_len = d->s.enc_len >= NC_MAC_BYTES ? d->s.enc_len - NC_MAC_BYTES : 0;
        tap->type = d->s.type;
        tap->decrypted = d->decrypted;
        tap_queue_packet(netcode_tap, pinfo, tap);
    }
    if (!d->first)
        return;
    cs_sp_end_packet(pinfo);
    if (!nc_have_first_time) {
        /* a flag, not a zero time: a capture may start at time 0 */
        nc_first_time = pinfo->abs_ts;
        nc_have_first_time = TRUE;
    }
    if (pinfo->abs_ts.secs > nc_last_time.secs ||
        (pinfo->abs_ts.secs == nc_last_time.secs && pinfo->abs_ts.nsecs > nc_last_time.nsecs))
        nc_last_time = pinfo->abs_ts;
}

static int dissect_common(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, nc_mode_t mode)
{
    nc_dissection_t d;

    /* Set by the steps as they come: the shape by find_record, the packet
     * by packet_start. */
    d.tvb = tvb;
    d.pinfo = pinfo;
    d.tree = tree;
    d.first = !PINFO_FD_VISITED(pinfo);
    d.conn = NULL;
    d.plain = NULL;
    d.plain_len = 0;
    d.decrypted = FALSE;
    if (!find_record(&d, mode))
        return 0;

    col_set_str(pinfo->cinfo, COL_PROTOCOL, "netcode");
    col_clear(pinfo->cinfo, COL_INFO);
    /* No item without a tree (it cannot throw with a byte captured). */
    d.ti = tree || !tvb_captured_length(tvb) ? proto_tree_add_item(tree, proto_netcode, tvb, 0, -1, ENC_NA) : NULL;
    d.nt = proto_item_add_subtree(d.ti, ett_netcode);
    if (!d.s.plausible) {
        /* Only through Decode As. */
        show_not_netcode(&d);
        return tvb_captured_length(tvb);
    }

    packet_start(&d);
    /* Keys: on the first pass found and stored; later passes reuse them. */
    if (d.first)
        note_key_problems(&d);
    if (d.s.request)
        decrypt_request(&d);
    else
        decrypt_packet(&d);
    analyse(&d);

    if (d.s.request) {
        show_request(&d);
        nc_analysis_info(pinfo, d.rec);
        nc_analysis_show(tvb, pinfo, d.nt, d.ti, d.rec);
    } else if (!show_packet(&d)) {
        nc_analysis_show(tvb, pinfo, d.nt, d.ti, d.rec);
    }
    finish_packet(&d);
    return tvb_captured_length(tvb);
}

static int dissect_netcode(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    return dissect_common(tvb, pinfo, tree, MODE_FORCED);
}

static int dissect_netcode_conv(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    return dissect_common(tvb, pinfo, tree, MODE_CONV);
}

/* Heuristic: a connection request anywhere (1078 bytes, a zero byte,
 * "NETCODE 1.02"), or, on a port of netcode.udp.port, an encrypted packet
 * of the right shape that a key verifies or that follows an earlier one. */
static ws_cb_bool dissect_netcode_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    guint32 len = tvb_reported_length(tvb);
    guint8 b0;

    if (len < 1 + 1 + NC_MAC_BYTES || tvb_captured_length(tvb) < len)
        return FALSE;
    b0 = *tvb_get_ptr(tvb, 0, 1);
    if (b0 == 0) {
        if (len != NC_REQUEST_BYTES || tvb_memeql(tvb, 1, nc_version_info, NC_VERSION_BYTES) != 0)
            return FALSE;
    } else if (!port_in_prefs(pinfo->srcport) && !port_in_prefs(pinfo->destport)) {
        return FALSE;
    } else {
        guint type = b0 & 0x0F, sb = b0 >> 4;
        if (type < 1 || type > 6 || sb < 1 || sb > 8)
            return FALSE;
    }
    return dissect_common(tvb, pinfo, tree, MODE_HEUR) > 0;
}

/* ---- Registration ------------------------------------------------------------ */

static void netcode_init(void)
{
    cs_sp_init();
    conv_cache_clear();
    kept_clear();
    n_seen_protocol_ids = 0;
    next_conn_index = 0;
    /* the token file again: it may have changed since */
    g_free(token_file_error);
    token_file_error = NULL;
    nc_keys_token_file_read(pref_connect_token_file, &token_file_error);
    pref_error_frame = 0;
    token_file_error_frame = 0;
    keylog_shown_gen = 0;
    keylog_problem_frame = 0;
    keylog_checked_once = FALSE;
    nstime_set_zero(&nc_last_time);
    nstime_set_zero(&nc_first_time);
    nc_have_first_time = FALSE;
}

static void netcode_cleanup(void)
{
    conv_cache_clear();
    kept_clear();
    nc_keys_file_cleanup();
}

static void netcode_shutdown(void)
{
    nc_keys_shutdown();
    nc_games_shutdown();
    g_free(private_key_pref_error);
    private_key_pref_error = NULL;
    g_free(token_file_error);
    token_file_error = NULL;
}

static void netcode_prefs_apply(void)
{
    g_free(private_key_pref_error);
    private_key_pref_error = NULL;
    nc_keys_set_private_pref(pref_private_key, &private_key_pref_error);
    if (private_key_pref_error)
        ws_warning("%s", private_key_pref_error);
    parse_protocol_ids();
    keylog_checked_once = FALSE;
    g_free(token_file_error);
    token_file_error = NULL;
    nc_keys_token_file_read(pref_connect_token_file, &token_file_error);
    if (token_file_error)
        ws_warning("%s", token_file_error);
}

void proto_register_netcode(void)
{
    module_t *module;

    static hf_register_info hf[] = {
        { &hf_netcode_prefix, { "Prefix byte", "netcode.prefix", FT_UINT8, BASE_HEX, NULL, 0x0,
            "0 for a connection request; else sequence bytes (high 4 bits) and type (low 4 bits)", HFILL } },
        { &hf_netcode_type, { "Type", "netcode.type", FT_UINT8, BASE_DEC, VALS(type_names), 0x0F,
            NULL, HFILL } },
        { &hf_netcode_sequence_bytes, { "Sequence bytes", "netcode.sequence_bytes", FT_UINT8, BASE_DEC, NULL, 0xF0,
            "Bytes of the sequence number that follow (1-8)", HFILL } },
        { &hf_netcode_sequence, { "Sequence", "netcode.sequence", FT_UINT64, BASE_DEC, NULL, 0x0,
            "The sender's packet sequence number (little-endian, high zero bytes left out); the nonce", HFILL } },
        { &hf_netcode_sequence_global, { "Server global sequence", "netcode.sequence.global", FT_UINT64, BASE_DEC,
            NULL, 0x0, "Challenge and denied packets use the server's global sequence, which starts at 2^63: "
            "this is the number of such packets it sent before", HFILL } },
        { &hf_netcode_version, { "Version", "netcode.version", FT_STRING, BASE_NONE, NULL, 0x0,
            "\"NETCODE 1.02\" and a NUL", HFILL } },
        { &hf_netcode_protocol_id, { "Protocol id", "netcode.protocol_id", FT_UINT64, BASE_HEX, NULL, 0x0,
            "The game's 64-bit protocol id", HFILL } },
        { &hf_netcode_expire_timestamp, { "Expire timestamp", "netcode.expire_timestamp", FT_UINT64, BASE_DEC, NULL,
            0x0, "Unix time (seconds) when the connect token expires", HFILL } },
        { &hf_netcode_expire_time, { "Expire time", "netcode.expire_time", FT_ABSOLUTE_TIME, ABSOLUTE_TIME_UTC, NULL,
            0x0, NULL, HFILL } },
        { &hf_netcode_token_nonce, { "Connect token nonce", "netcode.token.nonce", FT_BYTES, BASE_NONE, NULL, 0x0,
            "The 24-byte XChaCha20 nonce of the private connect token", HFILL } },
        { &hf_netcode_token_data, { "Encrypted private connect token", "netcode.token.data", FT_BYTES, BASE_NONE,
            NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_encrypted, { "Encrypted data", "netcode.encrypted", FT_BYTES, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_netcode_mac, { "MAC", "netcode.mac", FT_BYTES, BASE_NONE, NULL, 0x0,
            "Poly1305 tag", HFILL } },
        { &hf_netcode_decrypted, { "Decrypted", "netcode.decrypted", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
            "Whether the AEAD verified with a known key", HFILL } },
        { &hf_netcode_token_client_id, { "Client id", "netcode.token.client_id", FT_UINT64, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
        { &hf_netcode_token_timeout, { "Timeout (s)", "netcode.token.timeout", FT_INT32, BASE_DEC, NULL, 0x0,
            "Seconds of silence after which either side drops the connection (negative: never)", HFILL } },
        { &hf_netcode_token_num_addresses, { "Server addresses", "netcode.token.num_server_addresses", FT_UINT32,
            BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_token_server_address, { "Server address", "netcode.token.server_address", FT_STRING,
            BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_token_c2s_key, { "Client-to-server key", "netcode.token.client_to_server_key", FT_BYTES,
            BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_token_s2c_key, { "Server-to-client key", "netcode.token.server_to_client_key", FT_BYTES,
            BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_token_user_data, { "User data", "netcode.token.user_data", FT_BYTES, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_netcode_challenge_sequence, { "Challenge token sequence", "netcode.challenge.sequence", FT_UINT64,
            BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_challenge_token, { "Encrypted challenge token", "netcode.challenge.token", FT_BYTES,
            BASE_NONE, NULL, 0x0, "Encrypted with the server's own challenge key: only the server reads it", HFILL } },
        { &hf_netcode_keep_alive_client_index, { "Client index", "netcode.keep_alive.client_index", FT_UINT32,
            BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_keep_alive_max_clients, { "Max clients", "netcode.keep_alive.max_clients", FT_UINT32,
            BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_netcode_payload, { "Payload", "netcode.payload", FT_BYTES, BASE_NONE, NULL, 0x0,
            "The decrypted payload", HFILL } },
        { &hf_netcode_payload_len, { "Payload length", "netcode.payload_len", FT_UINT32, BASE_DEC, NULL, 0x0,
            NULL, HFILL } },
    };
    static gint *ett[] = { &ett_netcode, &ett_netcode_prefix, &ett_netcode_token, &ett_netcode_decrypted };
    static ei_register_info ei[] = {
        { &ei_netcode_size, { "netcode.size", PI_MALFORMED, PI_ERROR,
            "The packet's size does not fit its type", EXPFILL } },
        { &ei_netcode_not_netcode, { "netcode.not_netcode", PI_MALFORMED, PI_ERROR,
            "Not a netcode packet", EXPFILL } },
        { &ei_netcode_seq_encoding, { "netcode.sequence.not_minimal", PI_PROTOCOL, PI_NOTE,
            "Sequence written with a high zero byte (the library writes the fewest bytes; it reads either)", EXPFILL } },
        { &ei_netcode_no_key, { "netcode.no_key", PI_UNDECODED, PI_NOTE,
            "No key for this connection", EXPFILL } },
        { &ei_netcode_no_protocol_id, { "netcode.protocol_id_unknown", PI_UNDECODED, PI_NOTE,
            "Keys given but the protocol id is unknown: set netcode.protocol_ids", EXPFILL } },
        { &ei_netcode_token_file, { "netcode.connect_token_file.malformed", PI_MALFORMED, PI_WARN,
            "The connect token file does not read or holds something that is not a connect token", EXPFILL } },
        { &ei_netcode_decrypt_failed, { "netcode.decrypt_failed", PI_SECURITY, PI_WARN,
            "Does not decrypt with the connection's keys", EXPFILL } },
        { &ei_netcode_token_failed, { "netcode.token.decrypt_failed", PI_SECURITY, PI_WARN,
            "The private connect token does not decrypt with any private key configured", EXPFILL } },
        { &ei_netcode_token_bad, { "netcode.token.malformed", PI_MALFORMED, PI_ERROR,
            "The private connect token is malformed", EXPFILL } },
        { &ei_netcode_server_not_in_token, { "netcode.token.server_not_listed", PI_PROTOCOL, PI_WARN,
            "The request's destination is not among the token's server addresses: the server ignores it "
            "(or an address translation is in between)", EXPFILL } },
        { &ei_netcode_keylog, { "netcode.keylog.malformed", PI_MALFORMED, PI_WARN,
            "Malformed lines in the key log file", EXPFILL } },
        { &ei_netcode_private_key_pref, { "netcode.private_key.malformed", PI_MALFORMED, PI_WARN,
            "The netcode.private_key preference holds an entry that is not a key", EXPFILL } },
    };

    proto_netcode = proto_register_protocol("netcode 1.02 (secure client/server connections over UDP)", "netcode",
                                            "netcode");
    CS_REGISTER_ARRAYS(proto_netcode, hf, ett, ei);

    module = prefs_register_protocol(proto_netcode, netcode_prefs_apply);
    range_convert_str(wmem_epan_scope(), &pref_ports, NC_DEFAULT_PORTS, 65535);
    prefs_register_range_preference(module, "udp.port", "UDP ports",
        "Server ports of netcode traffic (default 40000, the examples'). A connection request is found on any "
        "port; packets of a connection whose request is not in the capture are recognised on these ports. "
        "Decode As (UDP port) forces netcode on a port.", &pref_ports, 65535);
    prefs_register_string_preference(module, "private_key", "Server private keys",
        "The servers' private keys, 64 hex digits (32 bytes) each, comma-separated. Each connection request's "
        "private connect token is decrypted with them, which gives the connection's two packet keys.",
        &pref_private_key);
    prefs_register_filename_preference(module, "keylog_file", "Key log file",
        "A text file of lines NETCODE_PRIVATE_KEY <64 hex>, NETCODE_CONNECTION_KEYS <64 hex client-to-server "
        "key> <64 hex server-to-client key> and NETCODE_CONNECT_TOKEN <4096 hex: a public connect token> "
        "('#' comments). Read again whenever it changes.",
        &pref_keylog_file, FALSE);
    prefs_register_string_preference(module, "protocol_ids", "Protocol ids (hex)",
        "Protocol ids to try when a connection's request is not in the capture (the packets' associated data "
        "holds the id): comma-separated hex. 0 and the ids of every request and connect token seen and of the "
        "games table are tried too.", &pref_protocol_ids);
    prefs_register_filename_preference(module, "connect_token_file", "Connect token file",
        "A file of public connect tokens, the 2048 bytes a client is given to connect: binary tokens one after "
        "the other, or one token a line in hex. Each gives its connection's packet keys and protocol id (no "
        "private key needed). Read when the preferences change and when a capture is opened.",
        &pref_connect_token_file, FALSE);
    nc_games_register(module);
    cs_sp_register_pref(module, &pref_single_pass);

    netcode_handle = register_dissector("netcode", dissect_netcode, proto_netcode);
    netcode_conv_handle = create_dissector_handle(dissect_netcode_conv, proto_netcode);
    payload_table = register_decode_as_next_proto(proto_netcode, "netcode.payload", "netcode payload", NULL);
    payload_heur = CS_REGISTER_HEUR_LIST("netcode.payload", "netcode payload", proto_netcode);
    netcode_tap = register_tap("netcode");

    conns = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    kept_index = g_array_new(FALSE, TRUE, sizeof(guint32));
    kept = g_ptr_array_new();
    register_init_routine(netcode_init);
    register_cleanup_routine(netcode_cleanup);
    register_shutdown_routine(netcode_shutdown);
    nc_analysis_register(proto_netcode);
    nc_stats_register();
    nc_flow_register(proto_netcode);
    cs_sp_register();
}

void proto_reg_handoff_netcode(void)
{
    dissector_add_for_decode_as("udp.port", netcode_handle);
    dissector_add_for_decode_as("netcode.payload", find_dissector("data"));
    cs_sp_handoff();
    heur_dissector_add("udp", dissect_netcode_heur, "netcode over UDP", "netcode_udp", proto_netcode,
                       HEURISTIC_ENABLE);
    netcode_prefs_apply();
}
