/* simprog.h: what every simulator program (chunk-sim, frag-sim,
 * netgame-sim) needs around its endpoints: two hosts A (10.0.0.1) and
 * B (10.0.0.2) joined by netsim in virtual time; the common options (-w pcap,
 * --capture-at, --truth, --time-limit, --tick, -q, -v, and the link options
 * and --seed of linkopt.h); the pcap seen at one host; the progress line; the
 * truth file's opening, closing and shared parts; and the summary's link
 * lines. A program keeps its endpoints, its own options, its event loop and
 * what its truth file says about its packets. */
#ifndef SIMPROG_H
#define SIMPROG_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "linkopt.h"
#include "netsim.h"
#include "pcapout.h"

/* The simulator programs' exit codes for bad arguments and file errors. */
#define SIMPROG_EXIT_USAGE 2
#define SIMPROG_EXIT_IO 4

enum { SIMPROG_SIDE_A = 0, SIMPROG_SIDE_B = 1 };

typedef struct simprog_t {
    const char *program;       /* for messages: "PROGRAM: ..." */
    const char *side_names[2]; /* what --capture-at takes besides a and b, e.g. "sender", "receiver" */
    /* options */
    netsim_config_t sim;       /* link options and --seed */
    int capture_side;          /* SIMPROG_SIDE_A (default) or SIMPROG_SIDE_B */
    const char *pcap_path;     /* -w, or NULL */
    const char *truth_path;    /* --truth, or NULL */
    double time_limit;         /* --time-limit: virtual seconds, default 60 */
    double tick;               /* --tick: endpoint update interval, default 1 ms */
    int quiet;                 /* -q */
    /* run */
    netsim_t *netsim;
    pcapout_t *pcap;           /* NULL when not writing one */
    pcapout_addr_t addr[2];    /* host A and host B */
    uint32_t frames;           /* records written to the pcap */
    int io_error;              /* a pcap record or the close failed */
    double wall_start, wall_last;
    int tty, progress_shown;
} simprog_t;

/* Sets the defaults: hosts 10.0.0.1:port_a and 10.0.0.2:port_b, capture at
 * A, time limit 60 s, tick 1 ms, netsim's default links and seed 1. */
void simprog_init(simprog_t *sp, const char *program, const char *side_a, const char *side_b, uint16_t port_a,
                  uint16_t port_b);

/* A simulator program's own option (getopt_long's opt, its long name for
 * messages, its value or NULL); context is simprog_parse_options'. */
typedef void simprog_own_option_fn(void *context, int opt, const char *name, const char *text);

/* Parses argv with getopt_long over the program's own options own[0..count)
 * (--help among them) and the common ones: -h/--help prints usage(stdout)
 * and exits 0; a common option (see the top) goes to sp, any other to
 * own_option; getopt_long values 800 and up are the common options'. A missing value, an unknown option or a stray argument is a
 * usage error (message, exit 2). */
void simprog_parse_options(simprog_t *sp, int argc, char **argv, const struct option *own, int count,
                           void (*usage)(FILE *), simprog_own_option_fn *own_option, void *context);

/* Help lines of the common options: the "Output:" group (capture_help: what
 * --capture-at takes and means, truth_what: what the truth file accounts
 * for, e.g. "per-chunk"), the --time-limit and --tick lines of a "Run:"
 * group, and the "Link" group (linkopt_print_help with A->B and B->A). */
void simprog_print_help_output(FILE *out, const char *capture_help, const char *truth_what);
void simprog_print_help_run(FILE *out);
void simprog_print_help_link(FILE *out);

/* Creates the simulator and opens the pcap. Returns 0, or SIMPROG_EXIT_IO
 * after printing why. */
int simprog_start(simprog_t *sp);

/* Records a datagram travelling on link (0 A to B, 1 B to A) as seen at side
 * (it left or reached side) at virtual time now, when side is the capture
 * point. Returns its frame number (1, 2, ...), or 0 when not recorded. A
 * failed write sets io_error. */
uint32_t simprog_record(simprog_t *sp, int side, int link, double now, const uint8_t *packet, int bytes);

/* Takes the next datagram due at or before until, over both links in order
 * of delivery time (link 0 first on a tie) into buffer (NETSIM_MAX_DATAGRAM
 * bytes). Returns its length and sets *link and *at, or 0 when none is due. */
int simprog_next_arrival(simprog_t *sp, double until, int *link, uint8_t *buffer, double *at);

/* 1 when a progress line is due at this step (checked every 1024 steps: after
 * the first second of wall time, every 0.2 s on a terminal, 2 s otherwise). */
int simprog_progress_due(simprog_t *sp, long long step);

/* Prints "PROGRAM: virtual time T s of LIMIT, " then format, as a line that
 * redraws in place on a terminal. */
void simprog_progress(simprog_t *sp, double now, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Ends a progress line left open on a terminal. */
void simprog_progress_finish(simprog_t *sp);

/* Closes the pcap. Returns 0, or -1 after printing "PROGRAM: error writing
 * PATH" when a record or the close failed. */
int simprog_close_pcap(simprog_t *sp);

/* Frees the simulator (and closes a pcap still open). */
void simprog_free(simprog_t *sp);

/* The summary's lines per link: "link A->B: sent N, delivered N, ..." on stdout. */
void simprog_print_links(const simprog_t *sp);

/* ---- the truth file (docs/truth.md) ---- */

/* Opens --truth's file for writing. Returns it, or NULL after printing
 * "PROGRAM: cannot write PATH: why". */
FILE *simprog_truth_open(const simprog_t *sp);

/* Closes it. Returns 0, or -1 after printing "PROGRAM: error writing PATH"
 * when a write or the close failed. */
int simprog_truth_close(const simprog_t *sp, FILE *out);

/* The links' configuration as a JSON array after "links": the caller writes
 * the key; each link's name is simprog_link_name. */
void simprog_truth_link_config(FILE *out, const simprog_t *sp);

/* The links' counters as a JSON array, one object per link. */
void simprog_truth_link_counters(FILE *out, const simprog_t *sp);

/* "a_to_b" for link 0, "b_to_a" for link 1. */
const char *simprog_link_name(int link);

/* JSON pieces: true/false; a counter name as a key ("slices sent" becomes
 * "slices_sent"); an array of frame numbers; "NAME": frame or null (0);
 * "NAME": seconds or null (when !valid). */
const char *truth_bool(int value);
void truth_key(FILE *out, const char *name);
void truth_frames(FILE *out, const uint32_t *frames, int count);
void truth_frame_or_null(FILE *out, const char *name, uint32_t frame);
void truth_time_or_null(FILE *out, const char *name, int valid, double time);

/* count counters as a JSON object, keys from name(i) as truth_key writes them:
 * {"slices_sent": 12, ...}. */
void truth_counters(FILE *out, const uint64_t *counters, int count, const char *(*name)(int));

#endif /* SIMPROG_H */
