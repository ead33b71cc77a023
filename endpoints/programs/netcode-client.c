/* netcode-client: a netcode 1.02 client over real UDP (endpoints/app/netcode-app-client.c). */
#include "netcode-app.h"

int main(int argc, char **argv)
{
    return netcode_app_main(argc, argv, NETCODE_APP_CLIENT);
}
