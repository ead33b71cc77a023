/* chunk-send: the chunk sender over real UDP (endpoints/app/chunk-app-send.c). */
#include "chunk-app.h"

int main(int argc, char **argv)
{
    return chunk_app_main(argc, argv, CHUNK_APP_SEND);
}
