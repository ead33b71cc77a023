/* p2frag-app.c: the fragment protocol's part of the socket programs. See p2frag-app.h. */
#define _POSIX_C_SOURCE 200809L

#include "p2frag-app.h"

#include <errno.h>
#include <string.h>

#include "app.h"
#include "platform.h"
#include "sha256.h"

uint32_t p2frag_app_protocol_id_option(const char *program, const char *text)
{
    return (uint32_t)app_int_arg(program, "protocol-id", text, 0, 0xffffffffLL, "0..0xffffffff");
}

int p2frag_app_manifest_open(const char *program, const char *path, FILE **file)
{
    *file = NULL;
    if (!path) return 0;
    *file = fopen(path, "w");
    if (*file) return 0;
    fprintf(stderr, "%s: cannot write %s: %s\n", program, path, strerror(errno));
    return -1;
}

void p2frag_app_manifest_write(FILE *file, unsigned sequence, const uint8_t *packet, int bytes)
{
    if (!file) return;
    char digest[65];
    cs_sha256_hex(packet, (size_t)bytes, digest);
    fprintf(file, "%u %d %s\n", sequence, bytes, digest);
}

int p2frag_app_manifest_close(const char *program, const char *path, FILE *file, int exit_code, int io_exit_code)
{
    if (file && fclose(file) != 0) {
        fprintf(stderr, "%s: error writing %s\n", program, path);
        if (exit_code == 0) exit_code = io_exit_code;
    }
    return exit_code;
}

void p2frag_app_print_invalid(const uint64_t *invalid)
{
    int any = 0;
    for (int i = 1; i < P2FRAG_READ_RESULT_COUNT; i++)
        if (invalid[i]) {
            fprintf(stderr, "%s %s %llu", any ? "," : "  invalid:", p2frag_read_result_name((p2frag_read_result_t)i),
                    (unsigned long long)invalid[i]);
            any = 1;
        }
    if (any) fprintf(stderr, "\n");
}
