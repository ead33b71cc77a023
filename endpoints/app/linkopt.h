/* linkopt.h: the simulator's command-line options, one parser for every
 * program that puts traffic through netsim (chunk-sim, p2frag-sim,
 * netgame-sim, chunk-relay):
 *
 *   --loss P  --latency SEC  --jitter SEC  --duplicate P  --reorder P
 *   --reorder-delay SEC  --bandwidth RATE  --queue BYTES
 *
 * each also as NAME-ab (direction 0, A to B only) and NAME-ba (direction 1,
 * B to A only), and --seed N. Values: probabilities 0..1 ("0.2" or "20%"),
 * seconds up to 3600 ("0.05" or "50ms"), rates as platform_parse_rate
 * ("1Mbit", "0" for none), queue bytes up to 1 GiB ("64K", 0 for no limit),
 * seeds 0..2^63-1. */
#ifndef LINKOPT_H
#define LINKOPT_H

#include <getopt.h>
#include <stdio.h>

#include "netsim.h"

/* getopt_long values of the link options: LINKOPT_BASE and up, above every
 * program's own options (256..) and the chunk options (512..). */
#define LINKOPT_BASE 1000
/* Entries linkopt_add appends to a getopt_long table. */
#define LINKOPT_COUNT (8 * 3 + 1)

/* Appends the link options and --seed to options, which holds count entries
 * and has room for LINKOPT_COUNT more and the terminating zero entry (which
 * this writes). Returns the new count. */
int linkopt_add(struct option *options, int count);

/* Applies getopt_long's result opt with value text to config when opt is a
 * link option or --seed, and returns 1; returns 0 when opt is not one of
 * them. A bad value is a usage error: "PROGRAM: bad --NAME 'TEXT': expected
 * ... (try --help)" and exit 2. */
int linkopt_apply(const char *program, int opt, const char *text, netsim_config_t *config);

/* Prints the help lines of the link options and --seed; a_to_b and b_to_a
 * say what the directions are (e.g. "A->B", "sender to receiver"). */
void linkopt_print_help(FILE *out, const char *a_to_b, const char *b_to_a);

#endif /* LINKOPT_H */
