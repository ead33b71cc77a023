/* chunk-app-main.c: chunk_app_main(role), the one entry of the chunk socket
 * programs, runs the role asked for (chunk-app-send.c, chunk-app-recv.c and
 * chunk-app-relay.c); in a file of its own so that the roles, which use
 * chunk-app.c, and chunk-app.c do not call each other. See chunk-app.h. */
#include "chunk-app.h"

int chunk_app_main(int argc, char **argv, chunk_app_role_t role)
{
    switch (role) {
    case CHUNK_APP_SEND: return chunk_app_send_main(argc, argv);
    case CHUNK_APP_RECV: return chunk_app_recv_main(argc, argv);
    case CHUNK_APP_RELAY: break;
    }
    return chunk_app_relay_main(argc, argv);
}
