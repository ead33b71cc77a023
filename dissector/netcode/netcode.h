/* netcode.h
 * The netcode protocol's registration, for plugin.c, and the
 * chunkshark_games table, for the protocols in netcode's payload (yojimbo).
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
/* The row of the connection whose payload is being dissected (set while
 * netcode hands a decrypted payload on); NULL: no row, the preferences. */
const netcode_game_t *netcode_game_of_packet(packet_info *pinfo);
/* A check of a row's columns for the protocol in the payload, run by the
 * table's update callback: FALSE with *err (g_free it) rejects the row. */
typedef gboolean (*netcode_game_check_t)(const char *channels, const char *schema_file, char **err);
void netcode_games_set_check(netcode_game_check_t check);

#endif /* NETCODE_H */
