/* simprog.h: what every simulator program (chunk-sim, p2frag-sim,
 * netgame-sim, netcode-sim, reliable-sim, yojimbo-sim) needs around its
 * endpoints: two hosts A (10.0.0.1) and B (10.0.0.2) joined by netsim in
 * virtual time; the common options (-w pcap, --capture-at, --capture-from,
 * --capture-drop, --truth, --time-limit, --tick, -q, -v, and the link
 * options and --seed of linkopt.h); the pcap seen at one host; a datagram's fate; the step loop;
 * the progress line; the truth file's opening, closing and shared parts;
 * and the summary's link lines. A program keeps its endpoints, its own
 * options, what a step does and what its truth file says about its
 * packets. */
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

/* Most --capture-drop options a run takes. */
#define SIMPROG_MAX_CAPTURE_DROPS 8

/* A --capture-drop START:COUNT[:DIR]: from the START-th datagram at the
 * capture point on (counted from 1 over both links, whether written or not),
 * the next COUNT datagrams of link (0 A to B, 1 B to A, -1 either) are left
 * out of the pcap, as a capture's kernel drops would: the endpoints still
 * get them. */
typedef struct simprog_capture_drop_t {
    uint64_t start, count;
    int link;
    uint64_t dropped;          /* left out so far */
    uint32_t last_before;      /* the last frame written before the first left out, 0: none */
    uint32_t first_after;      /* the first frame written after all COUNT were left out, 0: none */
} simprog_capture_drop_t;

typedef struct simprog_t {
    const char *program;       /* for messages: "PROGRAM: ..." */
    const char *side_names[2]; /* what --capture-at takes besides a and b, e.g. "sender", "receiver" */
    /* options */
    netsim_config_t sim;       /* link options and --seed */
    int capture_side;          /* SIMPROG_SIDE_A (default) or SIMPROG_SIDE_B */
    uint64_t capture_from;     /* --capture-from: the first datagram written (1, the default: all) */
    simprog_capture_drop_t drops[SIMPROG_MAX_CAPTURE_DROPS]; /* --capture-drop */
    int drop_count;
    const char *pcap_path;     /* -w, or NULL */
    const char *truth_path;    /* --truth, or NULL */
    double time_limit;         /* --time-limit: virtual seconds, default 60 */
    double tick;               /* --tick: endpoint update interval, default 1 ms */
    int quiet;                 /* -q */
    /* run */
    netsim_t *netsim;
    pcapout_t *pcap;           /* NULL when not writing one */
    pcapout_addr_t addr[2];    /* host A and host B */
    char host[2][24];          /* the same as text: "10.0.0.1:50000" */
    uint32_t frames;           /* records written to the pcap */
    uint64_t seen;             /* datagrams at the capture point, written or not */
    uint64_t not_captured;     /* of them left out by --capture-from and --capture-drop */
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
 * point and neither --capture-from nor a --capture-drop leaves it out.
 * Returns its frame number (1, 2, ...), or 0 when not recorded. A failed
 * write sets io_error. */
uint32_t simprog_record(simprog_t *sp, int side, int link, double now, const uint8_t *packet, int bytes);

/* What became of a datagram handed to the simulator. */
enum {
    SIMPROG_FATE_DELIVERED, SIMPROG_FATE_LOST, SIMPROG_FATE_DUPLICATED, SIMPROG_FATE_QUEUE_DROPPED,
    SIMPROG_FATE_FAULT_DROPPED, SIMPROG_FATE_REORDERED
};

/* Hands a datagram to the simulator on link at virtual time at
 * (netsim_send) and returns its fate, read from what the link's counters
 * say of it: fault dropped, lost, queue dropped, duplicated, reordered
 * (the first that applies), else delivered. */
int simprog_send(simprog_t *sp, int link, double at, const uint8_t *packet, int bytes);

/* A fate as the truth files write it: "delivered", "lost", "duplicated",
 * "queue_dropped", "fault_dropped", "reordered". */
const char *simprog_fate_name(int fate);

/* A program's endpoints as simprog_run drives them: *now is the program's
 * clock, set to each step's and each arrival's virtual time before the
 * call; tick(context) updates them at a step (a non-zero return stops the
 * run); arrive(context, link, packet, bytes) hands them a datagram of link
 * reaching the other side; describe(context, text, size) writes what a
 * progress line says after the time ("12 packets sent").
 *
 * A run that ends when its work is done (chunk-sim, p2frag-sim) also sets
 * done and drain: done(context) says after each step's tick whether the
 * work is done; from the first step it is, the run ends after the tick of
 * the first step at which the network holds nothing more or drain seconds
 * have passed. Such a run also ends after the tick of the first step at or
 * past end, and takes a datagram due exactly at the next step's time before
 * that step's tick (the order their committed captures were made in).
 * done NULL: the run ends after the last step at or before end and its
 * arrivals, and a datagram due exactly at the next step waits for its
 * tick. */
typedef struct simprog_loop_t {
    double *now;
    void *context;
    int (*tick)(void *context);
    void (*arrive)(void *context, int link, const uint8_t *packet, int bytes);
    void (*describe)(void *context, char *text, size_t size);
    int (*done)(void *context); /* NULL: none */
    double drain;
} simprog_loop_t;

/* Steps virtual time by --tick from 0 up to end: at each step the tick,
 * then every datagram due before the next step, at its own time, both links
 * merged in time order, and a progress line when one is due; the progress
 * line is ended at the end (see simprog_loop_t for a run with a done hook).
 * *end_time is the last step's time. Returns 0, or the tick's non-zero
 * result. */
int simprog_run(simprog_t *sp, double end, const simprog_loop_t *loop, double *end_time);

/* Closes the pcap. Returns 0, or -1 after printing "PROGRAM: error writing
 * PATH" when a record or the close failed. */
int simprog_close_pcap(simprog_t *sp);

/* Frees the simulator (and closes a pcap still open). */
void simprog_free(simprog_t *sp);

/* ---- memory ---- */

/* calloc(n, size) (n 0 gets one element), or "PROGRAM: out of memory" on
 * stderr and exit SIMPROG_EXIT_IO. */
void *simprog_calloc(const simprog_t *sp, size_t n, size_t size);

/* Room for one more element in a growing array of *capacity elements of
 * size bytes holding count: when it is full, the array doubles (16 at
 * first) and *capacity says so. Returns the array (moved or not); out of
 * memory as simprog_calloc. */
void *simprog_grow(const simprog_t *sp, void *array, int count, int *capacity, size_t size);

/* The summary's lines per link: "link A->B: sent N, delivered N, ..." on stdout. */
void simprog_print_links(const simprog_t *sp);

/* ---- the truth file (docs/truth.md) ---- */

/* Opens --truth's file for writing and writes its opening: "format",
 * "version", "generator" (the program) and the two hosts as "endpoints".
 * Returns it, or NULL after printing "PROGRAM: cannot write PATH: why". */
FILE *simprog_truth_begin(const simprog_t *sp);

/* The end of the "config" object: its "links", an array of each link's
 * configuration (named by simprog_link_name), then "},\n". */
void simprog_truth_config_links(FILE *out, const simprog_t *sp);

/* The opening of the "capture" object: "file", "at" (a or b), "host" (only
 * when with_host) and "frames"; with --capture-from or --capture-drop also
 * "datagrams" (seen at the capture point), "not_captured", "capture_from"
 * and "capture_drops"; the caller adds its own counts and "},\n". */
void simprog_truth_capture(FILE *out, const simprog_t *sp, int with_host);

/* The whole "capture" object (simprog_truth_capture) and a "result" object
 * of end_time and exit_code alone. */
void simprog_truth_capture_result(FILE *out, const simprog_t *sp, int with_host, double end_time, int exit_code);

/* Closes it. Returns 0, or -1 after printing "PROGRAM: error writing PATH"
 * when a write or the close failed. */
int simprog_truth_close(const simprog_t *sp, FILE *out);

/* The links' counters as a JSON array, one object per link. */
void simprog_truth_link_counters(FILE *out, const simprog_t *sp);

/* Both sides' packet records for the truth file's "packets" array:
 * records[side] holds count[side] records of size bytes in the order sent,
 * each with its send time (a double) at time_offset; write(out, side, index,
 * record) writes one record's JSON object. */
typedef struct simprog_packets_t {
    const void *records[2];
    int count[2];
    size_t size, time_offset;
    void (*write)(FILE *out, int side, int index, const void *record);
} simprog_packets_t;

/* Ends the truth file after the caller's last array: ",\n  \"links\": "
 * and the links' counters, then the "packets" array of both sides' records
 * in time order (side A first at equal times), then the closing brace; and
 * closes it as simprog_truth_close does. Returns 0 or -1. */
int simprog_truth_finish(FILE *out, const simprog_t *sp, const simprog_packets_t *packets);

/* "a" for side A, "b" for side B: a side in the truth files and summaries. */
const char *simprog_side_name(int side);

/* "a_to_b" for link 0, "b_to_a" for link 1. */
const char *simprog_link_name(int link);

/* JSON pieces: true/false; seconds, or null when below 0; a number, or
 * null when below 0; a counter name as a key ("slices sent" becomes
 * "slices_sent", "id >= count" "id____count"); an array of frame numbers; "NAME": frame or null (0);
 * "NAME": seconds or null (when !valid). */
const char *truth_bool(int value);
void truth_seconds(FILE *out, double seconds);
void truth_number(FILE *out, long long value);
void truth_key(FILE *out, const char *name);
void truth_frames(FILE *out, const uint32_t *frames, int count);
void truth_frame_or_null(FILE *out, const char *name, uint32_t frame);
void truth_time_or_null(FILE *out, const char *name, int valid, double time);

/* count counters as a JSON object, keys from name(i) as truth_key writes them:
 * {"slices_sent": 12, ...}. */
void truth_counters(FILE *out, const uint64_t *counters, int count, const char *(*name)(int));

#endif /* SIMPROG_H */
