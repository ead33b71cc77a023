/* chunk-app.h: the chunk protocol's part of the programs: the wire options
 * every chunk program takes, and the summary lines of the datagrams the wire
 * format rejected. */
#ifndef CHUNK_APP_H
#define CHUNK_APP_H

#include <stdint.h>

#include "chunk.h"

/* getopt_long values of the chunk options, above every program's own (256..)
 * and below the simulator's (800.., simprog.h and linkopt.h). */
enum {
    CHUNK_OPT_SLICE_SIZE = 512,
    CHUNK_OPT_MAX_SLICES,
    CHUNK_OPT_PROTOCOL_ID,
    CHUNK_OPT_FIRST_CHUNK_ID,
    CHUNK_OPT_DROP_ACKS,
    CHUNK_OPT_DROP_SLICE,
};

/* The wire options as getopt_long table entries: --slice-size, --max-slices,
 * --protocol-id; and --first-chunk-id for the endpoints. */
#define CHUNK_APP_WIRE_LONG_OPTIONS                                                                          \
    {"slice-size", required_argument, NULL, CHUNK_OPT_SLICE_SIZE},                                           \
        {"max-slices", required_argument, NULL, CHUNK_OPT_MAX_SLICES},                                       \
        {"protocol-id", required_argument, NULL, CHUNK_OPT_PROTOCOL_ID}
#define CHUNK_APP_FIRST_CHUNK_ID_LONG_OPTION {"first-chunk-id", required_argument, NULL, CHUNK_OPT_FIRST_CHUNK_ID}

/* Applies --slice-size, --max-slices, --protocol-id (to wire) or
 * --first-chunk-id (to *first_chunk_id, which may be NULL when the program
 * has no such option) and returns 1 when opt is one of them; returns 0 for
 * any other opt. A value out of range is a usage error: message and exit 2. */
int chunk_app_wire_option(const char *program, int opt, const char *text, chunk_wire_config_t *wire,
                           uint16_t *first_chunk_id);

/* Applies the network's chunk faults of a relay: --drop-acks, or
 * --drop-slice ID (0..CHUNK_MAX_SLICES_LIMIT-1), in both directions of
 * faults, opt being CHUNK_OPT_DROP_ACKS or CHUNK_OPT_DROP_SLICE. A bad value
 * is a usage error. The caller checks the slice id against the wire's
 * max_slices once every option is read (chunk_app_check_faults). */
void chunk_app_fault_option(const char *program, int opt, const char *text, chunk_faults_t *faults);

/* Usage error (message, exit 2) when --drop-slice is not below --max-slices. */
void chunk_app_check_faults(const char *program, const chunk_faults_t *faults);

/* The summary's lines for datagrams the wire format rejected, one per
 * reason seen (invalid: CHUNK_READ_RESULT_COUNT counters). */
void chunk_app_print_invalid(const uint64_t *invalid);

/* ---- the real-UDP programs: chunk_app_main(role) ---- */

/* The chunk programs over real UDP, one role each: chunk-send
 * (chunk-app-send.c), chunk-recv (chunk-app-recv.c) and chunk-relay
 * (chunk-app-relay.c). */
typedef enum chunk_app_role_t { CHUNK_APP_SEND, CHUNK_APP_RECV, CHUNK_APP_RELAY } chunk_app_role_t;

/* Runs the program of that role with its command line; returns its exit code
 * (each program's --help says them). */
int chunk_app_main(int argc, char **argv, chunk_app_role_t role);
int chunk_app_send_main(int argc, char **argv);
int chunk_app_recv_main(int argc, char **argv);
int chunk_app_relay_main(int argc, char **argv);

#endif /* CHUNK_APP_H */
