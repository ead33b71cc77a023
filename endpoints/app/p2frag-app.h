/* p2frag-app.h: the fragment protocol's part of the socket programs (p2frag-send,
 * p2frag-recv): the --protocol-id value, the manifest of packets, and the
 * summary line of the datagrams the wire format rejected. */
#ifndef P2FRAG_APP_H
#define P2FRAG_APP_H

#include <stdint.h>
#include <stdio.h>

#include "p2frag.h"

/* --protocol-id's value (0..0xffffffff); anything else is a usage error
 * (message, exit 2). */
uint32_t p2frag_app_protocol_id_option(const char *program, const char *text);

/* The manifest (--manifest FILE): one line "sequence bytes sha256" per
 * packet. p2frag_app_manifest_open returns 0 (*file NULL when path is NULL),
 * or -1 after printing "PROGRAM: cannot write PATH: why". */
int p2frag_app_manifest_open(const char *program, const char *path, FILE **file);
void p2frag_app_manifest_write(FILE *file, unsigned sequence, const uint8_t *packet, int bytes);
/* Closes the manifest when open; a failed write or close prints "PROGRAM:
 * error writing PATH" and turns an exit_code of 0 into io_exit_code.
 * Returns the exit code. */
int p2frag_app_manifest_close(const char *program, const char *path, FILE *file, int exit_code, int io_exit_code);

/* The summary's line for datagrams the wire format rejected, "  invalid:
 * REASON N, ..." (invalid: P2FRAG_READ_RESULT_COUNT counters), when any was. */
void p2frag_app_print_invalid(const uint64_t *invalid);

/* ---- the real-UDP programs: p2frag_app_main(role) ---- */

/* p2frag-send (p2frag-app-send.c) and p2frag-recv (p2frag-app-recv.c). */
typedef enum p2frag_app_role_t { P2FRAG_APP_SEND, P2FRAG_APP_RECV } p2frag_app_role_t;

/* Runs the program of that role with its command line; returns its exit code
 * (each program's --help says them). */
int p2frag_app_main(int argc, char **argv, p2frag_app_role_t role);
int p2frag_app_send_main(int argc, char **argv);
int p2frag_app_recv_main(int argc, char **argv);

#endif /* P2FRAG_APP_H */
