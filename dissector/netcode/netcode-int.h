/* netcode-int.h
 * netcode 1.02 (docs/netcode.md): what the decoder (dissect.c), the keys
 * (keys.c), the connection analysis (analysis.c) and its statistics
 * (stats.c) share.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NETCODE_INT_H
#define NETCODE_INT_H

#include <epan/packet.h>
#include <epan/prefs.h>

#include "crypto.h"
#include "common/register-util.h"

/* docs/netcode.md, "Packets". */
#define NC_VERSION_BYTES     13          /* "NETCODE 1.02" and its NUL */
#define NC_REQUEST_BYTES     1078
#define NC_TOKEN_NONCE_BYTES 24
#define NC_TOKEN_BYTES       1024
#define NC_CHALLENGE_BYTES   300
#define NC_USER_DATA_BYTES   256
#define NC_MAX_PAYLOAD       1200
#define NC_REPLAY_WINDOW     256
#define NC_GLOBAL_SEQ_BASE   (G_GUINT64_CONSTANT(1) << 63)

extern const guint8 nc_version_info[NC_VERSION_BYTES];

/* Little-endian reads from a buffer (Wireshark's pletoh* changed names in 4.6). */
static inline guint16 nc_le16(const guint8 *p)
{
    return (guint16)(p[0] | p[1] << 8);
}

static inline guint32 nc_le32(const guint8 *p)
{
    return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

static inline guint64 nc_le64(const guint8 *p)
{
    return (guint64)nc_le32(p) | (guint64)nc_le32(p + 4) << 32;
}

enum {
    NC_REQUEST = 0, NC_DENIED, NC_CHALLENGE, NC_RESPONSE, NC_KEEP_ALIVE, NC_PAYLOAD, NC_DISCONNECT,
    NC_NUM_TYPES
};

/* Directions of a connection. */
enum { NC_C2S = 0, NC_S2C = 1 };

/* ---- Keys (keys.c) ---------------------------------------------------- */

/* Where a key pair came from. */
enum {
    NC_KEYS_FROM_REQUEST = 0,      /* a request's token, decrypted with a private key */
    NC_KEYS_FROM_LOG,              /* a NETCODE_CONNECTION_KEYS line */
    NC_KEYS_FROM_LOG_TOKEN,        /* a NETCODE_CONNECT_TOKEN line */
    NC_KEYS_FROM_TOKEN_FILE        /* a token of netcode.connect_token_file */
};

/* A connection's two packet keys, prepared for decryption. */
typedef struct nc_keypair {
    guint8 key[2][NC_KEY_BYTES];   /* [NC_C2S], [NC_S2C] */
    nc_aead_t *aead[2];
    guint32 line;                  /* key log line or token number in the token file; 0: from a request */
    guint8 source;                 /* NC_KEYS_FROM_* */
    /* A public connect token's (docs/netcode.md, "Connect tokens"): its
     * protocol id and server addresses (type byte, address, port, as in
     * the token: 7 or 19 bytes each). */
    gboolean have_protocol_id;
    guint64 protocol_id;
    guint32 naddr;
    guint8 *addrs;
    guint32 bound;                 /* the connection (index + 1) it decrypted, this file; 0: none yet */
} nc_keypair_t;

/* Parses the netcode.private_key preference; FALSE (with *err, g_free it)
 * when an entry is not 64 hex digits (the good ones are kept). */
gboolean nc_keys_set_private_pref(const char *text, char **err);
/* Reads what is new in the key log file (reopening it when it was replaced
 * or truncated); path NULL or "" forgets the file. */
void nc_keys_keylog_read(const char *path);
/* Private keys from the preference and the key log, in that order. */
guint nc_keys_private_count(void);
const guint8 *nc_keys_private(guint i);
/* Connection key pairs from the key log (its NETCODE_CONNECTION_KEYS and
 * NETCODE_CONNECT_TOKEN lines) and from netcode.connect_token_file. */
guint nc_keys_pair_count(void);
nc_keypair_t *nc_keys_pair(guint i);
/* Reads netcode.connect_token_file (path NULL or "": none); FALSE with
 * *err (g_free it) when the file does not read or holds something that is
 * not a connect token (the good tokens are kept). */
gboolean nc_keys_token_file_read(const char *path, char **err);
/* The games table's private keys (chunkshark_games). */
void nc_keys_set_game_keys(const guint8 (*keys)[NC_KEY_BYTES], guint n);
/* A counter that changes whenever a key pair or a private key is added or
 * forgotten: a connection's failed key search is tried again then. */
guint nc_keys_generation(void);
/* Whether the server address of a connection (addr, port) is one of the
 * token's. */
gboolean nc_keys_token_has_server(const nc_keypair_t *kp, const address *addr, guint32 port);
/* A key pair learnt from a decrypted connect token (freed with the file). */
nc_keypair_t *nc_keys_learn_pair(const guint8 *c2s, const guint8 *s2c);
/* The key log's malformed lines, as one message (NULL: none), and a counter
 * that changes whenever the file is read again from its start. */
const char *nc_keys_keylog_problem(void);
guint nc_keys_keylog_generation(void);
/* Frees the learnt pairs and forgets which connection each pair
 * decrypted (end of a file). */
void nc_keys_file_cleanup(void);
/* Frees everything (exit). */
void nc_keys_shutdown(void);
/* Parses 64 hex digits; FALSE when s is not that. */
gboolean nc_hex32(const char *s, size_t len, guint8 *out);

/* ---- The games table (games.c) ------------------------------------------ */

/* Registers the chunkshark_games table in netcode's preferences. */
void nc_games_register(module_t *module);
void nc_games_shutdown(void);
/* The row (index for netcode_game) of a connection: by its protocol id when
 * known, else by its server port; -1: none. */
gint nc_games_match(gboolean have_protocol_id, guint64 protocol_id, guint32 server_port);
/* Whether a row names port as a server port. */
gboolean nc_games_port(guint32 port);

/* ---- Packets and connections ------------------------------------------- */

/* What the decoder found in one datagram, handed to the analysis. */
typedef struct nc_pkt {
    guint8 type;
    guint8 seq_bytes;
    guint8 dir;                /* NC_C2S, NC_S2C */
    gboolean size_ok;          /* the size fits the type */
    gboolean encrypted;        /* type >= 1 */
    gboolean decrypted;        /* AEAD verified */
    gboolean keys_known;       /* the connection has keys (so unverified = forged) */
    guint64 seq;
    guint32 len;               /* datagram bytes */
    guint32 plain_len;         /* encrypted bytes - 16 */
    /* request */
    guint64 protocol_id, expire_ts;
    gboolean token_decrypted, token_tried, token_bad;
    gint32 token_timeout;
    guint64 client_id;
    gboolean server_in_token;  /* the request's destination is in the token */
    /* challenge / response (when decrypted) */
    guint64 challenge_seq;
    /* keep-alive */
    guint32 client_index, max_clients;
} nc_pkt_t;

/* Problems and events of a frame (analysis flags). */
enum {
    NC_F_REQUEST_REPEATED  = 1u << 0,
    NC_F_REQUEST_AFTER_CHALLENGE = 1u << 1,
    NC_F_TOKEN_EXPIRED     = 1u << 2,
    NC_F_CHALLENGE         = 1u << 3,
    NC_F_RESPONSE          = 1u << 4,
    NC_F_RESPONSE_REPEATED = 1u << 5,
    NC_F_CONNECTED         = 1u << 6,
    NC_F_DENIED            = 1u << 7,
    NC_F_DISCONNECT        = 1u << 8,
    NC_F_GAP               = 1u << 9,
    NC_F_DUPLICATE         = 1u << 10,
    NC_F_REPLAY            = 1u << 11,
    NC_F_OUT_OF_ORDER      = 1u << 12,
    NC_F_TIMED_OUT         = 1u << 13,
    NC_F_REQUEST           = 1u << 14,
    NC_F_AFTER_DISCONNECT  = 1u << 15,
    NC_F_PAYLOAD_EARLY     = 1u << 16,
    NC_F_NOT_CAPTURED      = 1u << 17,
};

/* Connection states, in the order a handshake reaches them. */
enum {
    NC_ST_NONE = 0, NC_ST_REQUESTED, NC_ST_CHALLENGED, NC_ST_RESPONDED, NC_ST_CONNECTED
};
/* How a connection ended (last seen). */
enum {
    NC_END_NONE = 0, NC_END_DENIED, NC_END_DISCONNECT_CLIENT, NC_END_DISCONNECT_SERVER, NC_END_TIMED_OUT
};

typedef struct nc_dir {
    guint32 packets, decrypt_failed;
    guint64 bytes;
    guint32 by_type[NC_NUM_TYPES];
    guint32 first_frame, last_frame;
    nstime_t first_time, last_time;
    /* the per-connection sequence (not the server's global one) */
    gboolean have_seq;
    guint64 most_recent;
    guint64 *window;                    /* NC_REPLAY_WINDOW slots: the sequence in each, G_MAXUINT64: none
                                         * (allocated at the first sequence: 3 KiB a direction) */
    guint32 *window_frame;              /* the frame of each slot's sequence */
    guint64 lost;                       /* numbers skipped (gaps not filled later) */
    guint32 gaps, dups, replays, out_of_order;
    nstime_t keep_alive_first, keep_alive_last;
} nc_dir_t;

#define NC_KEPT_RECENT 8      /* distinct frame records compared with a new one */

typedef struct nc_conn {
    guint32 index;
    address client, server;
    guint32 client_port, server_port;
    gboolean dir_guessed;          /* no packet said which side is the server */
    guint32 confirmed_frame;       /* from this frame on the conversation is netcode's */
    /* candidates before it is confirmed (heuristic without keys) */
    gboolean cand_have[2];
    guint64 cand_seq[2];
    /* handshake */
    guint8 state, end;
    guint32 n_requests, n_challenges, n_responses, n_denied;
    guint32 request_frame, last_request_frame, challenge_frame, response_frame, connected_frame;
    guint32 denied_frame, end_frame, timed_out_frame;
    nstime_t request_time, challenge_time, response_time, connected_time, end_time;
    /* the token */
    gboolean have_token, token_failed, token_expired, token_bad, server_not_in_token;
    guint64 client_id, expire_ts, protocol_id;
    gboolean have_protocol_id;
    gint32 timeout_s;
    guint32 n_token_failed;
    /* keys */
    nc_keypair_t *keys;            /* bound: decrypted a packet or came from the token */
    guint32 keys_frame;
    /* the search for keys (and protocol id) of a connection they are not
     * known for: packets tried since the keys and ids last changed */
    guint32 search_gen;
    guint32 search_tries;
    guint32 decrypt_failed;
    guint32 n_disconnect[2];
    gboolean no_key_noted;
    guint32 client_index, max_clients;
    gboolean have_client_index;
    nc_dir_t dir[2];
    /* two passes: the connection's last distinct frame records (1 + index
     * among the kept ones, 0: none; dissect.c, frame_record_share) */
    guint32 kept_recent[NC_KEPT_RECENT];
    guint kept_recent_next;
} nc_conn_t;

/* One frame's record, fixed on the first pass. */
typedef struct nc_frame {
    /* ordered by size, so that the record has no padding (it is kept for
     * every frame with two passes) */
    nc_conn_t *conn;
    nc_keypair_t *keys;            /* that decrypted it */
    guint64 protocol_id;           /* the associated data's id that verified */
    guint64 gap;                   /* numbers skipped before this one (not captured: how many) */
    nstime_t delta;                /* time since ref_frame */
    nstime_t silence;              /* timed out: silence before this packet */
    const guint8 *token_key;       /* request: the private key that decrypted its token */
    guint32 flags;
    guint32 ref_frame;             /* request repeated: first request; challenge: its request; ... */
    guint32 dup_frame;             /* duplicate of (0: not known) */
    guint32 nth;                   /* the nth request / response / disconnect */
    guint32 keylog_gen;            /* key log problem shown on this frame */
    gint16 private_key;            /* request: the private key index that decrypted its token, -1 none */
    gint16 game;                   /* the chunkshark_games row of its connection (index + 1), 0 none */
    guint8 dir;
    guint8 analysed;               /* analysis state changed (authenticated or no keys) */
    guint8 state_after;
    guint8 undecrypted;            /* NC_UNDEC_*: why an encrypted packet is shown encrypted */
    guint8 type;
} nc_frame_t;

enum { NC_UNDEC_NONE = 0, NC_UNDEC_NO_KEY_NOTE, NC_UNDEC_NO_KEY, NC_UNDEC_FAILED, NC_UNDEC_NO_ID_NOTE };

/* Queued on the "netcode" tap for every analysed packet (the statistics,
 * the Flow Graph and the Conversations tab read it). */
typedef struct nc_tap_info {
    nc_conn_t *conn;
    const nc_frame_t *rec;
    guint64 seq;                   /* the packet's sequence (not a request's) */
    guint32 data_len;              /* encrypted packet: its plaintext bytes */
    guint8 type;
    gboolean decrypted;
} nc_tap_info_t;

/* The analysis (analysis.c). */
void nc_analysis_register(int proto);
/* First pass: updates conn from pkt and fills rec. */
void nc_analysis_packet(packet_info *pinfo, nc_conn_t *conn, nc_frame_t *rec, const nc_pkt_t *pkt);
/* Every pass: analysis items and expert infos (tree may be NULL). */
void nc_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *top,
                      const nc_frame_t *rec);
/* Info column marks of rec. */
void nc_analysis_info(packet_info *pinfo, const nc_frame_t *rec);
/* What went wrong with a connection, in plain words; NULL when nothing. */
char *nc_conn_diagnosis(wmem_allocator_t *scope, const nc_conn_t *c);
const char *nc_state_name(guint state);
const char *nc_end_name(const nc_conn_t *c);
/* Time of the last frame dissected (capture end for the tables). */
extern nstime_t nc_last_time, nc_first_time;
extern gboolean nc_have_first_time;

/* Short name of a packet type ("Keep-alive"; analysis.c). */
const char *nc_type_short_name(guint type);
/* The analysis marks of rec, " [Connected] [Gap]" ("" when none). */
char *nc_analysis_marks(wmem_allocator_t *scope, const nc_frame_t *rec);

/* The statistics (stats.c). */
void nc_stats_register(void);
/* The Flow Graph and the Conversations and Endpoints tabs (flow.c). */
void nc_flow_register(int proto);
/* The hidden fields netcode.end, src_end and dst_end of a packet of
 * connection c in direction dir, when a filter or the tree wants them. */
void nc_flow_end_fields(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const nc_conn_t *c, guint dir);

#endif /* NETCODE_INT_H */
