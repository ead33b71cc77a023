/* netcode.h
 * The netcode protocol's registration, for plugin.c; for the protocols in
 * netcode's payload (reliable, yojimbo): what netcode passes up with a
 * decrypted payload (netcode_payload_info_t) and the chunkshark_games table.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NETCODE_H
#define NETCODE_H

void proto_register_netcode(void);
void proto_reg_handoff_netcode(void);

#include <epan/packet.h>

/* A row of the chunkshark_games table (docs/netcode.md, "Several games"),
 * parsed. */
typedef struct netcode_game {
    guint row;                     /* from 1, as the table shows it */
    guint64 protocol_id;
    guint32 server_port;           /* 0: any */
    gboolean have_key;
    guint8 private_key[32];
    const char *channels;          /* yojimbo's channel list; "": yojimbo.channels */
    guint message_types;           /* 0: yojimbo.message_types */
    const char *schema_file;       /* "": yojimbo.schema_file */
} netcode_game_t;

/* The rows that passed the table's checks, and a counter that changes
 * whenever they change. */
guint netcode_games_count(void);
const netcode_game_t *netcode_game(guint i);
guint netcode_games_generation(void);
/* A check of a row's columns for the protocol in the payload, run by the
 * table's update callback: FALSE with *err (g_free it) rejects the row. */
typedef gboolean (*netcode_game_check_t)(const char *channels, const char *schema_file, char **err);
void netcode_games_set_check(netcode_game_check_t check);

/* What netcode passes up (docs/architecture.md, "Stacked layers"): the
 * data argument of every dissector netcode hands a decrypted payload to,
 * through its netcode.payload heuristic list or Decode As table (as TCP
 * passes a struct tcpinfo). Valid during that call only; on every pass, with
 * or without a tree. A dissector that is also called from elsewhere (on
 * UDP, say) takes it from its netcode.payload entry point only. */
typedef struct netcode_payload_info {
    const void *conn;              /* the netcode connection: one address for the file, a key for
                                    * a layer's state per connection */
    guint32 conn_index;            /* its number, as -z netcode,conns shows it */
    guint8 dir;                    /* NETCODE_CLIENT_TO_SERVER or NETCODE_SERVER_TO_CLIENT */
    guint64 seq;                   /* the packet's sequence number */
    const netcode_game_t *game;    /* the connection's chunkshark_games row; NULL: none (the
                                    * payload's protocols use their preferences) */
} netcode_payload_info_t;

#define NETCODE_CLIENT_TO_SERVER 0
#define NETCODE_SERVER_TO_CLIENT 1

#endif /* NETCODE_H */
