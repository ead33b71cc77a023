/* p2frag-send: the fragmenting sender over real UDP (endpoints/app/p2frag-app-send.c). */
#include "p2frag-app.h"

int main(int argc, char **argv)
{
    return p2frag_app_main(argc, argv, P2FRAG_APP_SEND);
}
