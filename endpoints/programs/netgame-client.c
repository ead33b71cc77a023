/* netgame-client: a netgame client over real UDP (endpoints/app/netgame-app.c). */
#include "netgame-app.h"

int main(int argc, char **argv)
{
    return netgame_app_main(argc, argv, NETGAME_CLIENT);
}
