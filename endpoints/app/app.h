/* app.h: what the endpoint programs do alike around the protocol code: usage
 * errors and verbosity, the listening socket and port file, recording
 * datagrams to a pcap with the wall clock, one turn of an event loop, and the
 * progress and summary lines they print the same way. Each program keeps
 * only what is its own. */
#ifndef APP_H
#define APP_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "pcapout.h"
#include "platform.h"

/* ---- usage errors and logging ---- */

/* Prints "PROGRAM: " format (printf-style) " (try --help)" to stderr and
 * exits 2. Never returns. */
_Noreturn void app_bad_argument(const char *program, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The value of option --NAME given as text, for PROGRAM: an integer in
 * min..max, a time in seconds up to max ("0.1", "100ms", "2s"), a byte
 * count up to max ("4096", "16K"). A value out of form or range is a usage
 * error: app_bad_argument() with the form wanted. */
long long app_int_option(const char *program, const char *name, const char *text, long long min, long long max);
double app_seconds_option(const char *program, const char *name, const char *text, double max);
long long app_bytes_option(const char *program, const char *name, const char *text, long long max);

/* The same for the socket programs, whose messages say what is wanted: the
 * value of option --NAME given as text, read by platform_parse_int,
 * platform_parse_bytes (and then at least min), platform_parse_seconds or
 * platform_parse_rate. A value out of form or range is a usage error "bad
 * --NAME 'TEXT': expected WHAT". */
long long app_int_arg(const char *program, const char *name, const char *text, long long min, long long max,
                      const char *what);
long long app_bytes_arg(const char *program, const char *name, const char *text, long long min, long long max,
                        const char *what);
double app_seconds_arg(const char *program, const char *name, const char *text, double max, const char *what);
/* As app_seconds_arg, and 0 is a usage error too (a duration or a timeout). */
double app_positive_seconds_arg(const char *program, const char *name, const char *text, double max,
                                const char *what);
double app_rate_arg(const char *program, const char *name, const char *text, const char *what);

/* calloc(n, size) (n = 0 gets one element), or "PROGRAM: out of memory" on
 * stderr and exit(exit_status). */
void *app_calloc(const char *program, size_t n, size_t size, int exit_status);

/* Prints "PROGRAM: out of memory" to stderr and returns exit_code. */
int app_out_of_memory(const char *program, int exit_code);

/* Sets the log level from the count of -v options: 0 errors, 1 info, 2+ debug. */
void app_set_verbosity(int verbosity);

/* The options every socket program takes: -w/--pcap FILE, -q/--quiet,
 * -v/--verbose (repeatable) and -h/--help, as getopt_long table entries
 * (-b/--bind, -4 and -6 are in each program's table: their help differs). */
#define APP_COMMON_LONG_OPTIONS                                                                              \
    {"pcap", required_argument, NULL, 'w'}, {"quiet", no_argument, NULL, 'q'},                              \
        {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}

typedef struct app_common_options_t {
    const char *pcap_path; /* -w, or NULL */
    int quiet;             /* -q */
    int verbosity;         /* count of -v */
    const char *bind_text; /* -b/--bind ADDR[:PORT], or NULL */
    int family;            /* -4 or -6: 4 or 6; 0 either */
} app_common_options_t;

/* Applies -w (text), -q, -v, -b (text), -4 or -6 to common and returns 1;
 * returns 0 for any other opt (-h included: its usage is the program's). */
int app_common_option(app_common_options_t *common, int opt, const char *text);

/* A socket program's own options, for app_parse_options: applies
 * getopt_long's opt with its value text (NULL for none) to context and
 * returns 1, or returns 0 when opt is none of them. */
typedef int app_own_option_fn(void *context, int opt, const char *text);

/* Parses argv's options with getopt_long (shortopts, which starts with ':',
 * and the long options): -h/--help prints usage(stdout) and exits 0; the
 * common options go to common (app_common_option); any other to
 * own(context, opt, value). An option neither takes, a missing value or an
 * unknown option is a usage error (app_option_error). Returns optind, the
 * index in argv of the first operand. */
int app_parse_options(const char *program, int argc, char **argv, const char *shortopts,
                      const struct option *options, void (*usage)(FILE *), app_common_options_t *common,
                      app_own_option_fn *own, void *context);

/* A receiving program's -p/--port PORT and --port-file FILE, as
 * getopt_long table entries, and where they go (for app_listen). */
enum { APP_OPT_PORT_FILE = 600 };
#define APP_LISTEN_LONG_OPTIONS                                                                              \
    {"port", required_argument, NULL, 'p'}, {"port-file", required_argument, NULL, APP_OPT_PORT_FILE}
typedef struct app_listen_options_t {
    uint16_t port;         /* -p, or the program's default */
    int port_given;        /* -p was given */
    const char *port_file; /* --port-file, or NULL */
} app_listen_options_t;

/* Applies -p (0..65535, else a usage error "bad --port") or --port-file to
 * options and returns 1; returns 0 for any other opt. */
int app_listen_option(const char *program, int opt, const char *text, app_listen_options_t *options);

/* -t/--timeout SEC and --idle-timeout SEC, as getopt_long table entries. */
enum { APP_OPT_IDLE_TIMEOUT = 601 };
#define APP_TIMEOUT_LONG_OPTIONS                                                                             \
    {"timeout", required_argument, NULL, 't'}, {"idle-timeout", required_argument, NULL, APP_OPT_IDLE_TIMEOUT}

/* Applies -t (to *timeout) or --idle-timeout (to *idle_timeout; NULL when
 * the program has none), seconds up to 1e9, and returns 1; returns 0 for any
 * other opt. A bad value is a usage error "bad --NAME 'TEXT': expected
 * seconds". */
int app_timeout_option(const char *program, int opt, const char *text, double *timeout, double *idle_timeout);

/* --timeout in an event loop: 1 when timeout (above 0) seconds have passed
 * since start, with *exit_code set to code and *outcome to "timeout";
 * otherwise 0. */
int app_timed_out(double timeout, double start, double now, int code, int *exit_code, const char **outcome);

/* The usage error of an option getopt_long did not take (opterr 0 and a
 * leading ':' in the option string): "option --NAME needs a value" for ':',
 * "unknown option '--NAME'" for anything else. Never returns. */
_Noreturn void app_option_error(const char *program, int opt, char **argv);

/* ---- sockets ---- */

/* Opens a listening socket on *address. When dual_stack is set and no IPv6
 * socket can be had (a machine without IPv6), listens on IPv4 alone on the
 * same port instead, and *address says so. Returns 0, or -1 after printing
 * "PROGRAM: why" (the caller exits 1). */
int app_open_listener(const char *program, platform_socket_t *socket, platform_address_t *address,
                      int dual_stack);

/* A sending program's addresses: the peer HOST[:PORT] (host_text, resolved
 * in family 4 or 6, or either when 0; default_port when it has none) and the
 * address to send from (bind_text, --bind ADDR[:PORT], of the peer's family;
 * the any address and a free port when NULL). Returns 0, or -1 after
 * printing "PROGRAM: why (try --help)" (a usage error); a peer port of 0 is
 * a usage error at once (app_bad_argument). */
int app_resolve_peer(const char *program, const char *host_text, int family, uint16_t default_port,
                     const char *bind_text, platform_address_t *peer, platform_address_t *bind_address);

/* What app_listen returns when it fails. */
enum { APP_LISTEN_OK = 0, APP_LISTEN_USAGE = -2, APP_LISTEN_IO = -1 };

/* Opens a server program's listening socket and writes its port file: on
 * bind_text (--bind: an address of family, 0 any, with `port` as its default
 * port, or `port` itself when port_given) or, without it, on the any
 * address at port (IPv6 and IPv4 at once when family is 0); then, when
 * port_file is set, writes the bound port there. Returns APP_LISTEN_OK;
 * APP_LISTEN_USAGE after "PROGRAM: --bind: why (try --help)"; APP_LISTEN_IO
 * after app_open_listener's or app_write_port_file's message. */
int app_listen(const char *program, platform_socket_t *socket, const char *bind_text, int family, uint16_t port,
               int port_given, const char *port_file);

/* Writes port to path (platform_write_port_file). Returns 0, or -1
 * after printing "PROGRAM: --port-file: why" (the caller exits 1). */
int app_write_port_file(const char *program, const char *path, uint16_t port);

/* ---- files ---- */

/* Opens a sending program's input: path, or stdin for "-". *size is its size
 * when it is a regular file, else -1. Returns 0, or -1 after printing
 * "PROGRAM: cannot open PATH: why" (*fd is then 0). */
int app_open_input(const char *program, const char *path, int *fd, long long *size);

/* Opens a receiving program's output: path, created or truncated, or stdout
 * for "-". Returns 0, or -1 after printing "PROGRAM: cannot create PATH:
 * why" (*fd is then 1). */
int app_open_output(const char *program, const char *path, int *fd);

/* ---- pcap recording ---- */

typedef struct app_capture_t {
    pcapout_t *pcap; /* NULL: not recording */
    const char *path;
    uint64_t records; /* datagrams written */
    int failed;       /* a record or the close failed */
} app_capture_t;

/* Starts recording to path, or sets capture up to record nothing when path
 * is NULL. Returns 0, or -1 after printing "PROGRAM: why" (the caller exits 1). */
int app_capture_open(app_capture_t *capture, const char *program, const char *path);

/* Writes one UDP datagram from src to dst, stamped with the wall clock. A
 * failure is remembered for app_capture_finish, not reported here. */
void app_capture_record(app_capture_t *capture, const platform_address_t *src, const platform_address_t *dst,
                        const uint8_t *data, int bytes);

/* Writes one UDP datagram between peer and this socket's address as peer
 * sees it (platform_socket_local_address): to peer, or from it when
 * `incoming`. Looks nothing up when capture records nothing. */
void app_capture_exchange(app_capture_t *capture, const platform_socket_t *socket, const platform_address_t *peer,
                          int incoming, const uint8_t *data, int bytes);

/* Sends packet to `to` on socket and records it in capture, from our
 * address as `to` sees it, counting it in *sent. A send the kernel refuses
 * is counted in *send_errors instead and logged at debug level as "send:
 * why": the protocols cope with a lost packet. */
void app_send_recorded(platform_socket_t *socket, app_capture_t *capture, const platform_address_t *to,
                       const uint8_t *packet, int bytes, uint64_t *sent, uint64_t *send_errors);

/* Closes the pcap. When any record or the close failed, prints "PROGRAM:
 * writing PATH failed" and returns 1 (I/O error) if exit_code was 0;
 * otherwise returns exit_code unchanged. */
int app_capture_finish(app_capture_t *capture, const char *program, int exit_code);

/* The summary's pcap line, when recording. */
void app_capture_print(const app_capture_t *capture);

/* ---- event loop and summaries ---- */

/* One turn of a program's event loop: waits up to seconds for one of fds to
 * become readable (readable[i] set as platform_wait does), then checks
 * for SIGINT/SIGTERM. Returns 0 to go on. Returns -1 to stop, with *exit_code
 * and *outcome set: 1 and "poll error" when poll failed (the error printed),
 * 128 + the signal and "interrupted" when a stop signal came. */
int app_wait(const char *program, const int *fds, int count, double seconds, int *readable,
             int *exit_code, const char **outcome);

/* The event loop of a program that ticks (netgame, netcode): waits
 * (app_wait) for fd to become readable, at the most until next_tick; times
 * are seconds since start. Returns app_wait's result, with *now the time
 * after the wait. */
int app_wait_for_tick(const char *program, int fd, double start, double next_tick, double *now, int *exit_code,
                      const char **outcome);

/* 1 when the tick at *next_tick is due at now, and *next_tick moved on by
 * period (app_advance_deadline); 0 when it is not due yet. */
int app_tick_due(double *next_tick, double period, double now);

/* Moves a periodic deadline *next on by period, or to now + period after a
 * stall left it behind now: no burst of catch-up events. */
void app_advance_deadline(double *next, double period, double now);

/* Formats a rate as "1.23 MB/s" (1 MB/s and up) or "12.3 kB/s". */
void app_format_rate(double bytes_per_second, char *buf, size_t size);

/* The end of a progress line: redrawn in place on a terminal, one line each
 * otherwise. */
const char *app_progress_end(void);

/* Ends a progress line left open on a terminal, before the summary. */
void app_progress_finish(int progress_shown);

/* Prints ", "-separated "NAME VALUE" pairs of count counters and a newline,
 * each pair after a space (the caller prints what goes before). */
void app_print_counters(const uint64_t *counters, int count, const char *(*name)(int));

/* The same on out for the non-zero counters alone. */
void app_print_nonzero_counters(FILE *out, const uint64_t *counters, int count, const char *(*name)(int));




#endif /* APP_H */
