/* netgame-server: a netgame server over real UDP (endpoints/app/netgame-app.c). */
#include "netgame-app.h"

int main(int argc, char **argv)
{
    return netgame_app_main(argc, argv, NETGAME_SERVER);
}
