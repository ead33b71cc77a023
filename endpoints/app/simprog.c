/* simprog.c: what every simulator program needs. See simprog.h. */
#define _POSIX_C_SOURCE 200809L

#include "simprog.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "platform.h"
#include "util.h"

/* Longest --tick and --time-limit, in virtual seconds. */
#define SIMPROG_MAX_TICK 10
#define SIMPROG_MAX_TIME_LIMIT 1e6

void simprog_init(simprog_t *sp, const char *program, const char *side_a, const char *side_b, uint16_t port_a,
                  uint16_t port_b)
{
    memset(sp, 0, sizeof *sp);
    sp->program = program;
    sp->side_names[SIMPROG_SIDE_A] = side_a;
    sp->side_names[SIMPROG_SIDE_B] = side_b;
    netsim_default_config(&sp->sim);
    sp->capture_side = SIMPROG_SIDE_A;
    sp->capture_from = 1;
    sp->time_limit = 60;
    sp->tick = 0.001;
    pcapout_addr_ipv4(&sp->addr[SIMPROG_SIDE_A], 10, 0, 0, 1, port_a);
    pcapout_addr_ipv4(&sp->addr[SIMPROG_SIDE_B], 10, 0, 0, 2, port_b);
    snprintf(sp->host[SIMPROG_SIDE_A], sizeof sp->host[0], "10.0.0.1:%u", (unsigned)port_a);
    snprintf(sp->host[SIMPROG_SIDE_B], sizeof sp->host[0], "10.0.0.2:%u", (unsigned)port_b);
}

/* getopt_long values of the common options. */
enum {
    SIMPROG_OPT_CAPTURE_AT = 800, SIMPROG_OPT_TRUTH, SIMPROG_OPT_TIME_LIMIT, SIMPROG_OPT_TICK, SIMPROG_OPT_CAPTURE_FROM,
    SIMPROG_OPT_CAPTURE_DROP
};
/* Their short options, for getopt_long's option string. */
#define SIMPROG_SHORT_OPTIONS "w:qv"
/* Entries add_common_options appends to a getopt_long table. */
#define SIMPROG_OPTION_COUNT (9 + LINKOPT_COUNT)

/* Appends the common options (see simprog.h) to a getopt_long table of count
 * entries with room for SIMPROG_OPTION_COUNT more and the terminating zero
 * entry. Returns the new count. */
static int add_common_options(struct option *options, int count)
{
    static const struct option common[] = {
        {"pcap", required_argument, 0, 'w'},
        {"capture-at", required_argument, 0, SIMPROG_OPT_CAPTURE_AT},
        {"truth", required_argument, 0, SIMPROG_OPT_TRUTH},
        {"quiet", no_argument, 0, 'q'},
        {"verbose", no_argument, 0, 'v'},
        {"time-limit", required_argument, 0, SIMPROG_OPT_TIME_LIMIT},
        {"tick", required_argument, 0, SIMPROG_OPT_TICK},
        {"capture-from", required_argument, 0, SIMPROG_OPT_CAPTURE_FROM},
        {"capture-drop", required_argument, 0, SIMPROG_OPT_CAPTURE_DROP},
    };
    _Static_assert(sizeof common / sizeof common[0] + LINKOPT_COUNT == SIMPROG_OPTION_COUNT,
                   "SIMPROG_OPTION_COUNT counts every option");
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) options[count++] = common[i];
    return linkopt_add(options, count);
}

/* Largest datagram number --capture-from and --capture-drop take. */
#define SIMPROG_MAX_DATAGRAM_NUMBER 1000000000000LL

/* --capture-drop START:COUNT[:DIR], DIR ab, ba or both (the default). */
static void capture_drop_option(simprog_t *sp, const char *text)
{
    char buf[96], *count, *dir;
    long long start, n;
    if (sp->drop_count == SIMPROG_MAX_CAPTURE_DROPS)
        app_bad_argument(sp->program, "at most %d --capture-drop options", SIMPROG_MAX_CAPTURE_DROPS);
    snprintf(buf, sizeof buf, "%s", text);
    count = strchr(buf, ':');
    if (count) *count++ = 0;
    dir = count ? strchr(count, ':') : NULL;
    if (dir) *dir++ = 0;
    if (!count || platform_parse_int(buf, 1, SIMPROG_MAX_DATAGRAM_NUMBER, &start) != 0 ||
        platform_parse_int(count, 1, SIMPROG_MAX_DATAGRAM_NUMBER, &n) != 0)
        app_bad_argument(sp->program, "bad --capture-drop '%s': expected START:COUNT[:DIR], START and COUNT from 1",
                         text);
    simprog_capture_drop_t *d = &sp->drops[sp->drop_count];
    memset(d, 0, sizeof *d);
    d->start = (uint64_t)start;
    d->count = (uint64_t)n;
    if (!dir || strcmp(dir, "both") == 0) d->link = -1;
    else if (strcmp(dir, "ab") == 0) d->link = 0;
    else if (strcmp(dir, "ba") == 0) d->link = 1;
    else app_bad_argument(sp->program, "bad --capture-drop '%s': DIR is ab, ba or both", text);
    sp->drop_count++;
}

/* Applies getopt_long's result opt (with optarg text) when it is a common
 * option, and returns 1; returns 0 when it is not. A bad value is a usage
 * error (message, exit 2). */
static int common_option(simprog_t *sp, int opt, const char *text)
{
    switch (opt) {
    case 'w': sp->pcap_path = text; return 1;
    case 'q': sp->quiet = 1; return 1;
    case 'v': cs_log_set_level(CS_LOG_LEVEL_DEBUG); return 1;
    case SIMPROG_OPT_TRUTH: sp->truth_path = text; return 1;
    case SIMPROG_OPT_TIME_LIMIT:
        sp->time_limit = app_seconds_option(sp->program, "time-limit", text, SIMPROG_MAX_TIME_LIMIT);
        return 1;
    case SIMPROG_OPT_TICK:
        sp->tick = app_seconds_option(sp->program, "tick", text, SIMPROG_MAX_TICK);
        if (sp->tick <= 0) app_bad_argument(sp->program, "--tick must be above 0");
        return 1;
    case SIMPROG_OPT_CAPTURE_FROM: {
        long long from;
        if (platform_parse_int(text, 1, SIMPROG_MAX_DATAGRAM_NUMBER, &from) != 0)
            app_bad_argument(sp->program, "bad --capture-from '%s': expected a datagram number from 1", text);
        sp->capture_from = (uint64_t)from;
        return 1;
    }
    case SIMPROG_OPT_CAPTURE_DROP: capture_drop_option(sp, text); return 1;
    case SIMPROG_OPT_CAPTURE_AT:
        for (int side = 0; side < 2; side++)
            if (strcmp(text, sp->side_names[side]) == 0 || strcmp(text, side == 0 ? "a" : "b") == 0) {
                sp->capture_side = side;
                return 1;
            }
        app_bad_argument(sp->program, "--capture-at wants %s, %s, a or b, not '%s'", sp->side_names[0],
                         sp->side_names[1], text);
    default: return linkopt_apply(sp->program, opt, text, &sp->sim);
    }
}

void simprog_parse_options(simprog_t *sp, int argc, char **argv, const struct option *own, int count,
                           void (*usage)(FILE *), simprog_own_option_fn *own_option, void *context)
{
    struct option *options = calloc((size_t)count + SIMPROG_OPTION_COUNT + 1, sizeof *options);
    if (!options) exit(app_out_of_memory(sp->program, SIMPROG_EXIT_IO));
    memcpy(options, own, (size_t)count * sizeof *own);
    add_common_options(options, count);

    int c, index;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":" SIMPROG_SHORT_OPTIONS "h", options, &index)) != -1) {
        if (c == 'h') {
            usage(stdout);
            exit(0);
        }
        if (c == ':') app_bad_argument(sp->program, "option %s needs a value", argv[optind - 1]);
        if (c == '?') {
            if (optopt) app_bad_argument(sp->program, "unknown option -%c", optopt);
            app_bad_argument(sp->program, "unknown option %s", argv[optind - 1]);
        }
        if (!common_option(sp, c, optarg)) own_option(context, c, options[index].name, optarg);
    }
    if (optind < argc) app_bad_argument(sp->program, "unexpected argument '%s'", argv[optind]);
    free(options);
}

void simprog_print_help_output(FILE *out, const char *capture_help, const char *truth_what)
{
    fprintf(out,
            "Output:\n"
            "  -w, --pcap FILE          write a pcap of the traffic seen at the capture point\n"
            "      --capture-at WHERE   %s\n"
            "      --capture-from N     leave the first N-1 datagrams at the capture point out of\n"
            "                           the pcap: a capture begun mid-session (datagrams count\n"
            "                           from 1 over both directions, written or not)\n"
            "      --capture-drop START:COUNT[:DIR]  leave COUNT consecutive datagrams out of\n"
            "                           the pcap from the START-th on, of DIR: ab (A->B), ba\n"
            "                           (B->A) or both (default), as a capture's kernel drops:\n"
            "                           the endpoints still get them (up to 8 times)\n"
            "      --truth FILE         write the %s JSON account (docs/truth.md)\n"
            "  -q, --quiet              no summary on stdout\n"
            "  -v, --verbose            endpoint debug log on stderr\n",
            capture_help, truth_what);
}

void simprog_print_help_run(FILE *out)
{
    fprintf(out,
            "      --time-limit SEC     stop after this much virtual time (default 60)\n"
            "      --tick SEC           endpoint update interval (default 1ms)\n");
}

void simprog_print_help_link(FILE *out) { linkopt_print_help(out, "A->B", "B->A"); }

int simprog_start(simprog_t *sp)
{
    sp->netsim = netsim_create(&sp->sim);
    if (!sp->netsim) return app_out_of_memory(sp->program, SIMPROG_EXIT_IO);
    if (sp->pcap_path) {
        char err[256];
        sp->pcap = pcapout_open(sp->pcap_path, err, sizeof err);
        if (!sp->pcap) {
            fprintf(stderr, "%s: cannot write %s: %s\n", sp->program, sp->pcap_path, err);
            return SIMPROG_EXIT_IO;
        }
    }
    sp->wall_start = sp->wall_last = platform_time();
    sp->tty = platform_stderr_is_tty();
    return 0;
}

/* 1 when the datagram numbered seen (from 1) on link is left out of the
 * pcap: before --capture-from, or in a --capture-drop. */
static int capture_leaves_out(simprog_t *sp, uint64_t seen, int link)
{
    int out = seen < sp->capture_from;
    for (int i = 0; i < sp->drop_count; i++) {
        simprog_capture_drop_t *d = &sp->drops[i];
        if (seen < d->start || d->dropped == d->count || (d->link >= 0 && d->link != link)) continue;
        if (d->dropped++ == 0) d->last_before = sp->frames;
        out = 1;
    }
    return out;
}

uint32_t simprog_record(simprog_t *sp, int side, int link, double now, const uint8_t *packet, int bytes)
{
    if (!sp->pcap || side != sp->capture_side) return 0;
    if (capture_leaves_out(sp, ++sp->seen, link)) {
        sp->not_captured++;
        return 0;
    }
    for (int i = 0; i < sp->drop_count; i++)
        if (sp->drops[i].dropped == sp->drops[i].count && !sp->drops[i].first_after) sp->drops[i].first_after = sp->frames + 1;
    if (pcapout_write_udp(sp->pcap, now, &sp->addr[link], &sp->addr[1 - link], packet, bytes) != 0)
        sp->io_error = 1;
    return ++sp->frames;
}

int simprog_send(simprog_t *sp, int link, double at, const uint8_t *packet, int bytes)
{
    const uint64_t *c = netsim_counters(sp->netsim, link);
    uint64_t before[NETSIM_COUNTER_COUNT];
    memcpy(before, c, sizeof before);
    netsim_send(sp->netsim, link, at, packet, bytes);
    static const struct {
        int counter, fate;
    } order[] = {
        {NETSIM_COUNTER_FAULT_DROPPED, SIMPROG_FATE_FAULT_DROPPED}, {NETSIM_COUNTER_LOST, SIMPROG_FATE_LOST},
        {NETSIM_COUNTER_QUEUE_DROPPED, SIMPROG_FATE_QUEUE_DROPPED}, {NETSIM_COUNTER_DUPLICATED, SIMPROG_FATE_DUPLICATED},
        {NETSIM_COUNTER_REORDERED, SIMPROG_FATE_REORDERED},
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (c[order[i].counter] > before[order[i].counter]) return order[i].fate;
    return SIMPROG_FATE_DELIVERED;
}

const char *simprog_fate_name(int fate)
{
    static const char *const names[] = {"delivered", "lost", "duplicated", "queue_dropped", "fault_dropped", "reordered"};
    return fate >= 0 && fate < (int)(sizeof names / sizeof names[0]) ? names[fate] : "unknown";
}

/* 1 when a progress line is due at this step (checked every 1024 steps: after
 * the first second of wall time, every 0.2 s on a terminal, 2 s otherwise). */
static int simprog_progress_due(simprog_t *sp, long long step);

/* Prints "PROGRAM: virtual time T s of LIMIT, " then format, as a line that
 * redraws in place on a terminal. */
static void simprog_progress(simprog_t *sp, double now, const char *format, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Ends a progress line left open on a terminal. */
static void simprog_progress_finish(simprog_t *sp);

/* Takes the next datagram due at or before until, over both links in order
 * of delivery time (link 0 first on a tie) into buffer (NETSIM_MAX_DATAGRAM
 * bytes). Returns its length and sets *link and *at, or 0 when none is due. */
static int simprog_next_arrival(simprog_t *sp, double until, int *link, uint8_t *buffer, double *at)
{
    double due = netsim_next_delivery(sp->netsim);
    if (due < 0 || due > until) return 0;
    for (int l = 0; l < 2; l++) {
        int bytes = netsim_receive(sp->netsim, l, due, buffer, at);
        if (bytes > 0) {
            *link = l;
            return bytes;
        }
    }
    return 0; /* not reached: something is due at `due` on one link */
}

/* 1 when a run with a done hook ends at this step, after its tick (see
 * simprog_loop_t); *done_at is when the work was first done, -1 before. */
static int run_ends_after_tick(simprog_t *sp, const simprog_loop_t *loop, double now, double end, double *done_at)
{
    if (*done_at < 0 && loop->done(loop->context)) *done_at = now;
    if (*done_at >= 0 && (netsim_next_delivery(sp->netsim) < 0 || now - *done_at >= loop->drain)) return 1;
    return now >= end;
}

int simprog_run(simprog_t *sp, double end, const simprog_loop_t *loop, double *end_time)
{
    static uint8_t buffer[NETSIM_MAX_DATAGRAM];
    int result = 0;
    double done_at = -1;
    *end_time = 0;
    for (long long step = 0;; step++) {
        double now = (double)step * sp->tick;
        if (!loop->done && now > end + 1e-9) break;
        *end_time = *loop->now = now;
        result = loop->tick(loop->context);
        if (result != 0) break;
        if (loop->done && run_ends_after_tick(sp, loop, now, end, &done_at)) break;
        double next = (double)(step + 1) * sp->tick;
        if (!loop->done) next = nextafter(next, 0);
        int link, bytes;
        while ((bytes = simprog_next_arrival(sp, next, &link, buffer, loop->now)) > 0)
            loop->arrive(loop->context, link, buffer, bytes);
        if (simprog_progress_due(sp, step)) {
            char text[200];
            loop->describe(loop->context, text, sizeof text);
            simprog_progress(sp, now, "%s", text);
        }
    }
    simprog_progress_finish(sp);
    return result;
}

static int simprog_progress_due(simprog_t *sp, long long step)
{
    if ((step & 1023) != 0) return 0;
    double wall = platform_time();
    if (wall - sp->wall_start <= 1.0 || wall - sp->wall_last <= (sp->tty ? 0.2 : 2.0)) return 0;
    sp->wall_last = wall;
    return 1;
}

static void simprog_progress(simprog_t *sp, double now, const char *format, ...)
{
    fprintf(stderr, "%s%s: virtual time %.1f s of %.0f, ", sp->tty ? "\r" : "", sp->program, now, sp->time_limit);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputs(sp->tty ? "   " : "\n", stderr);
    sp->progress_shown = 1;
}

static void simprog_progress_finish(simprog_t *sp)
{
    if (sp->progress_shown && sp->tty) fprintf(stderr, "\n");
}

int simprog_close_pcap(simprog_t *sp)
{
    if (sp->pcap && pcapout_close(sp->pcap) != 0) sp->io_error = 1;
    sp->pcap = NULL;
    if (!sp->io_error) return 0;
    fprintf(stderr, "%s: error writing %s\n", sp->program, sp->pcap_path);
    return -1;
}

void simprog_free(simprog_t *sp)
{
    if (sp->pcap) pcapout_close(sp->pcap);
    sp->pcap = NULL;
    netsim_destroy(sp->netsim);
    sp->netsim = NULL;
}

void *simprog_calloc(const simprog_t *sp, size_t n, size_t size)
{
    return app_calloc(sp->program, n, size, SIMPROG_EXIT_IO);
}

static void *grow_to(const simprog_t *sp, void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q) exit(app_out_of_memory(sp->program, SIMPROG_EXIT_IO));
    return q;
}

void *simprog_grow(const simprog_t *sp, void *array, int count, int *capacity, size_t size)
{
    if (count < *capacity) return array;
    *capacity = *capacity ? *capacity * 2 : 16;
    return grow_to(sp, array, (size_t)*capacity * size);
}

void simprog_print_links(const simprog_t *sp)
{
    for (int d = 0; d < 2; d++) {
        const uint64_t *c = netsim_counters(sp->netsim, d);
        printf("link %s:", d == 0 ? "A->B" : "B->A");
        for (int i = 0; i < NETSIM_COUNTER_COUNT; i++)
            printf(" %s %llu%s", netsim_counter_name(i), (unsigned long long)c[i],
                   i + 1 < NETSIM_COUNTER_COUNT ? "," : "");
        printf("\n");
    }
}

FILE *simprog_truth_begin(const simprog_t *sp)
{
    FILE *out = fopen(sp->truth_path, "w");
    if (!out) {
        fprintf(stderr, "%s: cannot write %s: %s\n", sp->program, sp->truth_path, strerror(errno));
        return NULL;
    }
    fprintf(out, "{\n  \"format\": \"chunkshark-truth\",\n  \"version\": 1,\n  \"generator\": \"%s\",\n", sp->program);
    fprintf(out, "  \"endpoints\": {\"a\": \"%s\", \"b\": \"%s\"},\n", sp->host[SIMPROG_SIDE_A],
            sp->host[SIMPROG_SIDE_B]);
    return out;
}

/* The links' configuration as a JSON array. */
static void truth_link_config(FILE *out, const simprog_t *sp)
{
    fprintf(out, "[");
    for (int d = 0; d < 2; d++) {
        const netsim_link_config_t *l = &sp->sim.link[d];
        fprintf(out,
                "%s\n      {\"link\": \"%s\", \"loss\": %.6f, \"latency\": %.6f, \"jitter\": %.6f, \"duplicate\": %.6f, "
                "\"reorder\": %.6f, \"reorder_delay\": %.6f, \"bandwidth\": %.3f, \"queue_bytes\": %d}",
                d ? "," : "", simprog_link_name(d), l->loss, l->latency, l->jitter, l->duplicate, l->reorder,
                l->reorder_delay, l->bandwidth, l->queue_bytes);
    }
    fprintf(out, "\n    ]");
}

void simprog_truth_config_links(FILE *out, const simprog_t *sp)
{
    fprintf(out, "    \"links\": ");
    truth_link_config(out, sp);
    fprintf(out, "},\n");
}

void simprog_truth_capture(FILE *out, const simprog_t *sp, int with_host)
{
    fprintf(out, "  \"capture\": {\"file\": %s, \"at\": \"%s\", ", truth_bool(sp->pcap_path != NULL),
            simprog_side_name(sp->capture_side));
    if (with_host) fprintf(out, "\"host\": \"%s\", ", sp->host[sp->capture_side]);
    fprintf(out, "\"frames\": %u", sp->frames);
    if (sp->capture_from <= 1 && sp->drop_count == 0) return;
    fprintf(out, ", \"datagrams\": %llu, \"not_captured\": %llu, \"capture_from\": %llu, \"capture_drops\": [",
            (unsigned long long)sp->seen, (unsigned long long)sp->not_captured,
            (unsigned long long)sp->capture_from);
    for (int i = 0; i < sp->drop_count; i++) {
        const simprog_capture_drop_t *d = &sp->drops[i];
        fprintf(out, "%s{\"start\": %llu, \"count\": %llu, \"link\": \"%s\", \"dropped\": %llu, ", i ? ", " : "",
                (unsigned long long)d->start, (unsigned long long)d->count,
                d->link < 0 ? "both" : simprog_link_name(d->link), (unsigned long long)d->dropped);
        truth_frame_or_null(out, "last_frame_before", d->last_before);
        fprintf(out, ", ");
        truth_frame_or_null(out, "first_frame_after", d->first_after);
        fprintf(out, "}");
    }
    fprintf(out, "]");
}

void simprog_truth_capture_result(FILE *out, const simprog_t *sp, int with_host, double end_time, int exit_code)
{
    simprog_truth_capture(out, sp, with_host);
    fprintf(out, "},\n  \"result\": {\"end_time\": %.6f, \"exit_code\": %d},\n", end_time, exit_code);
}

int simprog_truth_close(const simprog_t *sp, FILE *out)
{
    int bad = ferror(out);
    if (fclose(out) != 0) bad = 1;
    if (bad) fprintf(stderr, "%s: error writing %s\n", sp->program, sp->truth_path);
    return bad ? -1 : 0;
}

/* Record index of side's records in packets. */
static const void *packet_record(const simprog_packets_t *packets, int side, int index)
{
    return (const char *)packets->records[side] + (size_t)index * packets->size;
}

static double packet_time(const simprog_packets_t *packets, int side, int index)
{
    double time;
    memcpy(&time, (const char *)packet_record(packets, side, index) + packets->time_offset, sizeof time);
    return time;
}

int simprog_truth_finish(FILE *out, const simprog_t *sp, const simprog_packets_t *packets)
{
    fprintf(out, ",\n  \"links\": ");
    simprog_truth_link_counters(out, sp);
    fprintf(out, ",\n  \"packets\": [");
    int next[2] = {0, 0};
    for (int first = 1;; first = 0) {
        int side = -1;
        for (int k = 0; k < 2; k++) {
            if (next[k] >= packets->count[k]) continue;
            if (side < 0 || packet_time(packets, k, next[k]) < packet_time(packets, side, next[side])) side = k;
        }
        if (side < 0) break;
        fprintf(out, "%s\n    ", first ? "" : ",");
        int index = next[side]++;
        packets->write(out, side, index, packet_record(packets, side, index));
    }
    fprintf(out, "\n  ]\n}\n");
    return simprog_truth_close(sp, out);
}

const char *simprog_side_name(int side) { return side == SIMPROG_SIDE_A ? "a" : "b"; }

const char *simprog_link_name(int link) { return link == 0 ? "a_to_b" : "b_to_a"; }

void simprog_truth_link_counters(FILE *out, const simprog_t *sp)
{
    fprintf(out, "[");
    for (int d = 0; d < 2; d++) {
        const uint64_t *c = netsim_counters(sp->netsim, d);
        fprintf(out, "%s\n    {\"link\": \"%s\"", d ? "," : "", simprog_link_name(d));
        for (int i = 0; i < NETSIM_COUNTER_COUNT; i++) {
            fprintf(out, ", ");
            truth_key(out, netsim_counter_name(i));
            fprintf(out, ": %llu", (unsigned long long)c[i]);
        }
        fprintf(out, "}");
    }
    fprintf(out, "\n  ]");
}

const char *truth_bool(int value) { return value ? "true" : "false"; }

void truth_seconds(FILE *out, double seconds)
{
    if (seconds >= 0) fprintf(out, "%.6f", seconds);
    else fprintf(out, "null");
}

void truth_number(FILE *out, long long value)
{
    if (value >= 0) fprintf(out, "%lld", value);
    else fprintf(out, "null");
}

void truth_key(FILE *out, const char *name)
{
    fputc('"', out);
    for (; *name; name++) fputc(*name == ' ' || *name == '>' || *name == '=' ? '_' : *name, out);
    fputc('"', out);
}

void truth_frames(FILE *out, const uint32_t *frames, int count)
{
    fputc('[', out);
    for (int i = 0; i < count; i++) fprintf(out, "%s%u", i ? ", " : "", frames[i]);
    fputc(']', out);
}

void truth_frame_or_null(FILE *out, const char *name, uint32_t frame)
{
    if (frame) fprintf(out, "\"%s\": %u", name, frame);
    else fprintf(out, "\"%s\": null", name);
}

void truth_time_or_null(FILE *out, const char *name, int valid, double time)
{
    if (valid) fprintf(out, "\"%s\": %.6f", name, time);
    else fprintf(out, "\"%s\": null", name);
}

void truth_counters(FILE *out, const uint64_t *counters, int count, const char *(*name)(int))
{
    fputc('{', out);
    for (int i = 0; i < count; i++) {
        fprintf(out, "%s", i ? ", " : "");
        truth_key(out, name(i));
        fprintf(out, ": %llu", (unsigned long long)counters[i]);
    }
    fputc('}', out);
}
