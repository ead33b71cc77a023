/* netcode-app-main.c: netcode_app_main(role), the one entry of the netcode
 * socket programs, runs the role asked for (netcode-app-client.c and
 * netcode-app-server.c); in a file of its own so that the roles, which use
 * netcode-app.c, and netcode-app.c do not call each other. See netcode-app.h. */
#include "netcode-app.h"

int netcode_app_main(int argc, char **argv, netcode_app_role_t role)
{
    return role == NETCODE_APP_CLIENT ? netcode_app_client_main(argc, argv) : netcode_app_server_main(argc, argv);
}
