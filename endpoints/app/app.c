/* app.c: what the endpoint programs do alike. See app.h. */
#define _POSIX_C_SOURCE 200809L

#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

enum { EXIT_USAGE = 2 };

_Noreturn void app_bad_argument(const char *program, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: ", program);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, " (try --help)\n");
    exit(EXIT_USAGE);
}

long long app_int_option(const char *program, const char *name, const char *text, long long min, long long max)
{
    long long v;
    if (platform_parse_int(text, min, max, &v) != 0)
        app_bad_argument(program, "--%s wants an integer in %lld..%lld, not '%s'", name, min, max, text);
    return v;
}

double app_seconds_option(const char *program, const char *name, const char *text, double max)
{
    double v;
    if (platform_parse_seconds(text, max, &v) != 0)
        app_bad_argument(program, "--%s wants a time like 0.1, 100ms or 2s, not '%s'", name, text);
    return v;
}

long long app_bytes_option(const char *program, const char *name, const char *text, long long max)
{
    long long v;
    if (platform_parse_bytes(text, max, &v) != 0)
        app_bad_argument(program, "--%s wants a byte count like 4096 or 16K, not '%s'", name, text);
    return v;
}

long long app_int_arg(const char *program, const char *name, const char *text, long long min, long long max,
                      const char *what)
{
    long long v;
    if (platform_parse_int(text, min, max, &v) != 0)
        app_bad_argument(program, "bad --%s '%s': expected %s", name, text, what);
    return v;
}

long long app_bytes_arg(const char *program, const char *name, const char *text, long long min, long long max,
                        const char *what)
{
    long long v;
    if (platform_parse_bytes(text, max, &v) != 0 || v < min)
        app_bad_argument(program, "bad --%s '%s': expected %s", name, text, what);
    return v;
}

double app_seconds_arg(const char *program, const char *name, const char *text, double max, const char *what)
{
    double v;
    if (platform_parse_seconds(text, max, &v) != 0)
        app_bad_argument(program, "bad --%s '%s': expected %s", name, text, what);
    return v;
}

double app_positive_seconds_arg(const char *program, const char *name, const char *text, double max,
                                const char *what)
{
    double v = app_seconds_arg(program, name, text, max, what);
    if (v <= 0)
        app_bad_argument(program, "bad --%s '%s': expected %s", name, text, what);
    return v;
}

double app_rate_arg(const char *program, const char *name, const char *text, const char *what)
{
    double v;
    if (platform_parse_rate(text, &v) != 0)
        app_bad_argument(program, "bad --%s '%s': expected %s", name, text, what);
    return v;
}

int app_out_of_memory(const char *program, int exit_code)
{
    fprintf(stderr, "%s: out of memory\n", program);
    return exit_code;
}

void *app_calloc(const char *program, size_t n, size_t size, int exit_status)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) exit(app_out_of_memory(program, exit_status));
    return p;
}

int app_common_option(app_common_options_t *common, int opt, const char *text)
{
    switch (opt) {
    case 'w': common->pcap_path = text; return 1;
    case 'q': common->quiet = 1; return 1;
    case 'v': common->verbosity++; return 1;
    case 'b': common->bind_text = text; return 1;
    case '4': common->family = 4; return 1;
    case '6': common->family = 6; return 1;
    default: return 0;
    }
}

int app_parse_options(const char *program, int argc, char **argv, const char *shortopts,
                      const struct option *options, void (*usage)(FILE *), app_common_options_t *common,
                      app_own_option_fn *own, void *context)
{
    int opt;
    opterr = 0; /* our own messages, with exit code 2 */
    while ((opt = getopt_long(argc, argv, shortopts, options, NULL)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            exit(0);
        }
        if (!app_common_option(common, opt, optarg) && !own(context, opt, optarg))
            app_option_error(program, opt, argv);
    }
    return optind;
}

void app_set_verbosity(int verbosity)
{
    cs_log_set_level(verbosity >= 2 ? CS_LOG_LEVEL_DEBUG : verbosity == 1 ? CS_LOG_LEVEL_INFO : CS_LOG_LEVEL_ERROR);
}

int app_open_listener(const char *program, platform_socket_t *socket, platform_address_t *address,
                      int dual_stack)
{
    char err[256];
    if (platform_socket_open(socket, address, dual_stack, err, sizeof err) == 0) return 0;
    if (dual_stack && address->family == 6) {
        /* No IPv6 on this machine: listen on IPv4 alone. */
        platform_address_any(address, 4, address->port);
        if (platform_socket_open(socket, address, 0, err, sizeof err) == 0) return 0;
    }
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
}

int app_write_port_file(const char *program, const char *path, uint16_t port)
{
    char err[256];
    if (platform_write_port_file(path, port, err, sizeof err) == 0) return 0;
    fprintf(stderr, "%s: --port-file: %s\n", program, err);
    return -1;
}

int app_listen_option(const char *program, int opt, const char *text, app_listen_options_t *options)
{
    switch (opt) {
    case 'p':
        if (platform_parse_port(text, &options->port) != 0)
            app_bad_argument(program, "bad --port '%s': expected 0..65535", text);
        options->port_given = 1;
        return 1;
    case APP_OPT_PORT_FILE: options->port_file = text; return 1;
    default: return 0;
    }
}

int app_timeout_option(const char *program, int opt, const char *text, double *timeout, double *idle_timeout)
{
    double *value = opt == 't' ? timeout : opt == APP_OPT_IDLE_TIMEOUT ? idle_timeout : NULL;
    if (!value) return 0;
    *value = app_seconds_arg(program, opt == 't' ? "timeout" : "idle-timeout", text, 1e9, "seconds");
    return 1;
}

int app_timed_out(double timeout, double start, double now, int code, int *exit_code, const char **outcome)
{
    if (!(timeout > 0 && now - start >= timeout)) return 0;
    *exit_code = code;
    *outcome = "timeout";
    return 1;
}

_Noreturn void app_option_error(const char *program, int opt, char **argv)
{
    if (opt == ':') app_bad_argument(program, "option %s needs a value", argv[optind - 1]);
    app_bad_argument(program, "unknown option '%s'", argv[optind - 1]);
}

int app_resolve_peer(const char *program, const char *host_text, int family, uint16_t default_port,
                     const char *bind_text, platform_address_t *peer, platform_address_t *bind_address)
{
    char err[256];
    if (platform_address_parse(host_text, family, default_port, peer, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s (try --help)\n", program, err);
        return -1;
    }
    if (peer->port == 0) app_bad_argument(program, "receiver port 0 in '%s': give the port it listens on", host_text);
    platform_address_any(bind_address, peer->family, 0);
    if (bind_text && platform_address_parse(bind_text, peer->family, 0, bind_address, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --bind: %s (try --help)\n", program, err);
        return -1;
    }
    if (bind_address->family != peer->family) {
        fprintf(stderr, "%s: --bind %s is not the address family of %s (try --help)\n", program, bind_text,
                host_text);
        return -1;
    }
    return 0;
}

int app_open_input(const char *program, const char *path, int *fd, long long *size)
{
    *fd = 0;
    *size = -1;
    if (strcmp(path, "-") != 0) {
        *fd = open(path, O_RDONLY);
        if (*fd < 0) {
            fprintf(stderr, "%s: cannot open %s: %s\n", program, path, strerror(errno));
            *fd = 0;
            return -1;
        }
    }
    struct stat st;
    if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode)) *size = (long long)st.st_size;
    return 0;
}

int app_open_output(const char *program, const char *path, int *fd)
{
    *fd = 1;
    if (strcmp(path, "-") == 0) return 0;
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (*fd >= 0) return 0;
    fprintf(stderr, "%s: cannot create %s: %s\n", program, path, strerror(errno));
    *fd = 1;
    return -1;
}

int app_listen(const char *program, platform_socket_t *socket, const char *bind_text, int family, uint16_t port,
               int port_given, const char *port_file)
{
    char err[256];
    platform_address_t bind_address;
    int dual_stack = 0;
    if (bind_text) {
        if (platform_address_parse(bind_text, family, port, &bind_address, err, sizeof err) != 0) {
            fprintf(stderr, "%s: --bind: %s (try --help)\n", program, err);
            return APP_LISTEN_USAGE;
        }
        if (port_given) bind_address.port = port;
    } else {
        platform_address_any(&bind_address, family ? family : 6, port);
        dual_stack = family == 0;
    }
    if (app_open_listener(program, socket, &bind_address, dual_stack) != 0) return APP_LISTEN_IO;
    if (port_file && app_write_port_file(program, port_file, socket->bound.port) != 0) return APP_LISTEN_IO;
    return APP_LISTEN_OK;
}

int app_capture_open(app_capture_t *capture, const char *program, const char *path)
{
    memset(capture, 0, sizeof *capture);
    capture->path = path;
    if (!path) return 0;
    char err[256];
    capture->pcap = pcapout_open(path, err, sizeof err);
    if (capture->pcap) return 0;
    fprintf(stderr, "%s: %s\n", program, err);
    return -1;
}

void app_capture_record(app_capture_t *capture, const platform_address_t *src, const platform_address_t *dst,
                        const uint8_t *data, int bytes)
{
    if (!capture->pcap) return;
    pcapout_addr_t s, d;
    platform_address_to_pcap(src, &s);
    platform_address_to_pcap(dst, &d);
    if (pcapout_write_udp(capture->pcap, platform_wall_time(), &s, &d, data, bytes) == 0)
        capture->records++;
    else
        capture->failed = 1;
}

void app_capture_exchange(app_capture_t *capture, const platform_socket_t *socket, const platform_address_t *peer,
                          int incoming, const uint8_t *data, int bytes)
{
    if (!capture->pcap) return;
    platform_address_t local;
    platform_socket_local_address(socket, peer, &local);
    if (incoming)
        app_capture_record(capture, peer, &local, data, bytes);
    else
        app_capture_record(capture, &local, peer, data, bytes);
}

void app_send_recorded(platform_socket_t *socket, app_capture_t *capture, const platform_address_t *to,
                       const uint8_t *packet, int bytes, uint64_t *sent, uint64_t *send_errors)
{
    if (platform_socket_send(socket, to, packet, bytes) != 0) {
        (*send_errors)++;
        cs_log_message(CS_LOG_LEVEL_DEBUG, "send: %s", strerror(errno));
        return;
    }
    (*sent)++;
    app_capture_exchange(capture, socket, to, 0, packet, bytes);
}

int app_capture_finish(app_capture_t *capture, const char *program, int exit_code)
{
    if (capture->pcap && pcapout_close(capture->pcap) != 0) capture->failed = 1;
    capture->pcap = NULL;
    if (!capture->failed) return exit_code;
    fprintf(stderr, "%s: writing %s failed\n", program, capture->path);
    return exit_code == 0 ? 1 : exit_code;
}

int app_wait_for_tick(const char *program, int fd, double start, double next_tick, double *now, int *exit_code,
                      const char **outcome)
{
    double wait = next_tick - (platform_time() - start);
    int readable;
    int result = app_wait(program, &fd, 1, wait > 0 ? wait : 0, &readable, exit_code, outcome);
    *now = platform_time() - start;
    return result;
}

int app_tick_due(double *next_tick, double period, double now)
{
    if (now < *next_tick) return 0;
    app_advance_deadline(next_tick, period, now);
    return 1;
}

void app_advance_deadline(double *next, double period, double now)
{
    *next += period;
    if (*next < now) *next = now + period;
}

void app_format_rate(double bytes_per_second, char *buf, size_t size)
{
    if (bytes_per_second >= 1e6)
        snprintf(buf, size, "%.2f MB/s", bytes_per_second / 1e6);
    else
        snprintf(buf, size, "%.1f kB/s", bytes_per_second / 1e3);
}

const char *app_progress_end(void)
{
    return platform_stderr_is_tty() ? "   \r" : "\n";
}

void app_progress_finish(int progress_shown)
{
    if (progress_shown && platform_stderr_is_tty()) fputc('\n', stderr);
}

void app_print_counters(const uint64_t *counters, int count, const char *(*name)(int))
{
    for (int i = 0; i < count; i++)
        fprintf(stderr, "%s %s %llu", i ? "," : "", name(i), (unsigned long long)counters[i]);
    fputc('\n', stderr);
}

void app_print_nonzero_counters(FILE *out, const uint64_t *counters, int count, const char *(*name)(int))
{
    int shown = 0;
    for (int i = 0; i < count; i++)
        if (counters[i]) fprintf(out, "%s %s %llu", shown++ ? "," : "", name(i), (unsigned long long)counters[i]);
    fputc('\n', out);
}

void app_capture_print(const app_capture_t *capture)
{
    if (capture->path)
        fprintf(stderr, "  pcap: %llu datagrams in %s\n", (unsigned long long)capture->records, capture->path);
}

int app_wait(const char *program, const int *fds, int count, double seconds, int *readable,
             int *exit_code, const char **outcome)
{
    if (platform_wait(fds, count, seconds, readable) < 0) {
        fprintf(stderr, "%s: poll: %s\n", program, strerror(errno));
        *exit_code = 1; /* every socket program's I/O error code */
        *outcome = "poll error";
        return -1;
    }
    if (platform_stop_signal()) {
        *exit_code = 128 + platform_stop_signal();
        *outcome = "interrupted";
        return -1;
    }
    return 0;
}
