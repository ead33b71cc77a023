/* netgame-app.h: netgame-client and netgame-server, one program in two roles:
 * a netgame connection (include/netgame.h) over one real UDP socket, sending
 * at its flow control's rate, with progress, a summary and a pcap. */
#ifndef NETGAME_APP_H
#define NETGAME_APP_H

#include "netgame.h"

/* Runs the program of that role with its command line; returns its exit code
 * (0 ran its course connected, 1 never connected or lost the connection,
 * 2 bad arguments, 3 socket or file error, 128 + signal when stopped). */
int netgame_app_main(int argc, char **argv, netgame_role_t role);

#endif
