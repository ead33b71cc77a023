/* chunk-recv: the chunk receiver over real UDP (endpoints/app/chunk-app-recv.c). */
#include "chunk-app.h"

int main(int argc, char **argv)
{
    return chunk_app_main(argc, argv, CHUNK_APP_RECV);
}
