/* p2frag-recv: the reassembling receiver over real UDP (endpoints/app/p2frag-app-recv.c). */
#include "p2frag-app.h"

int main(int argc, char **argv)
{
    return p2frag_app_main(argc, argv, P2FRAG_APP_RECV);
}
