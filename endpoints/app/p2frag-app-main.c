/* p2frag-app-main.c: p2frag_app_main(role), the one entry of the p2frag socket
 * programs, runs the role asked for (p2frag-app-send.c and p2frag-app-recv.c);
 * in a file of its own so that the roles, which use p2frag-app.c, and
 * p2frag-app.c do not call each other. See p2frag-app.h. */
#include "p2frag-app.h"

int p2frag_app_main(int argc, char **argv, p2frag_app_role_t role)
{
    return role == P2FRAG_APP_SEND ? p2frag_app_send_main(argc, argv) : p2frag_app_recv_main(argc, argv);
}
