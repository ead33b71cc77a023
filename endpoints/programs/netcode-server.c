/* netcode-server: a netcode 1.02 server over real UDP (endpoints/app/netcode-app-server.c). */
#include "netcode-app.h"

int main(int argc, char **argv)
{
    return netcode_app_main(argc, argv, NETCODE_APP_SERVER);
}
