/* chunk-relay: a UDP relay through the network simulator in real time (endpoints/app/chunk-app-relay.c). */
#include "chunk-app.h"

int main(int argc, char **argv)
{
    return chunk_app_main(argc, argv, CHUNK_APP_RELAY);
}
