/* linkopt.c: the simulator's command-line options. See linkopt.h. */
#include "linkopt.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "app.h"
#include "platform.h"

/* Kinds of option values. */
enum { VALUE_PROBABILITY, VALUE_SECONDS, VALUE_RATE, VALUE_BYTES };

/* Longest latency, jitter or reorder delay: an hour is already no network. */
#define LINKOPT_MAX_SECONDS 3600
/* Largest router buffer: 1 GiB (netsim_link_config_t.queue_bytes is an int). */
#define LINKOPT_MAX_QUEUE_BYTES (1LL << 30)

static const struct {
    const char *name;
    int kind;
    size_t offset; /* of the double or int in netsim_link_config_t */
} link_options[] = {
    {"loss", VALUE_PROBABILITY, offsetof(netsim_link_config_t, loss)},
    {"latency", VALUE_SECONDS, offsetof(netsim_link_config_t, latency)},
    {"jitter", VALUE_SECONDS, offsetof(netsim_link_config_t, jitter)},
    {"duplicate", VALUE_PROBABILITY, offsetof(netsim_link_config_t, duplicate)},
    {"reorder", VALUE_PROBABILITY, offsetof(netsim_link_config_t, reorder)},
    {"reorder-delay", VALUE_SECONDS, offsetof(netsim_link_config_t, reorder_delay)},
    {"bandwidth", VALUE_RATE, offsetof(netsim_link_config_t, bandwidth)},
    {"queue", VALUE_BYTES, offsetof(netsim_link_config_t, queue_bytes)},
};
enum { LINK_OPTIONS = sizeof link_options / sizeof link_options[0] };
_Static_assert(LINK_OPTIONS * 3 + 1 == LINKOPT_COUNT, "LINKOPT_COUNT counts every option");

#define OPT_SEED (LINKOPT_BASE + 3 * LINK_OPTIONS)

static const char *const value_help[] = {
    "a probability, 0.2 or 20%", "seconds, 0.05 or 50ms", "a rate, 125000, 125kB or 1Mbit",
    "bytes, 65536 or 64K (at most 1G)",
};

/* getopt_long keeps pointers to the names: they live here. */
static char option_names[3 * LINK_OPTIONS][32];

int linkopt_add(struct option *options, int count)
{
    for (int i = 0; i < 3 * LINK_OPTIONS; i++) {
        snprintf(option_names[i], sizeof option_names[i], "%s%s", link_options[i / 3].name,
                 i % 3 == 0 ? "" : i % 3 == 1 ? "-ab" : "-ba");
        options[count++] = (struct option){option_names[i], required_argument, NULL, LINKOPT_BASE + i};
    }
    options[count++] = (struct option){"seed", required_argument, NULL, OPT_SEED};
    options[count] = (struct option){NULL, 0, NULL, 0};
    return count;
}

/* Parses text as a value of kind. Returns 0, or -1 when it is not one. */
static int parse_value(int kind, const char *text, double *out)
{
    long long bytes;
    switch (kind) {
    case VALUE_PROBABILITY: return platform_parse_probability(text, out);
    case VALUE_SECONDS: return platform_parse_seconds(text, LINKOPT_MAX_SECONDS, out);
    case VALUE_RATE: return platform_parse_rate(text, out);
    default:
        if (platform_parse_bytes(text, LINKOPT_MAX_QUEUE_BYTES, &bytes) != 0) return -1;
        *out = (double)bytes;
        return 0;
    }
}

int linkopt_apply(const char *program, int opt, const char *text, netsim_config_t *config)
{
    if (opt == OPT_SEED) {
        long long seed;
        if (platform_parse_int(text, 0, INT64_MAX, &seed) != 0)
            app_bad_argument(program, "bad --seed '%s': expected a non-negative integer", text);
        config->seed = (uint64_t)seed;
        return 1;
    }
    if (opt < LINKOPT_BASE || opt >= LINKOPT_BASE + 3 * LINK_OPTIONS) return 0;
    int index = (opt - LINKOPT_BASE) / 3, variant = (opt - LINKOPT_BASE) % 3;
    double value;
    if (parse_value(link_options[index].kind, text, &value) != 0)
        app_bad_argument(program, "bad --%s '%s': expected %s", option_names[opt - LINKOPT_BASE], text,
                         value_help[link_options[index].kind]);
    for (int dir = 0; dir < 2; dir++) {
        if ((variant == 1 && dir != 0) || (variant == 2 && dir != 1)) continue;
        char *field = (char *)&config->link[dir] + link_options[index].offset;
        if (link_options[index].kind == VALUE_BYTES)
            *(int *)field = (int)value;
        else
            *(double *)field = value;
    }
    return 1;
}

void linkopt_print_help(FILE *out, const char *a_to_b, const char *b_to_a)
{
    fprintf(out,
            "Link (each also as --NAME-ab: %s only, --NAME-ba: %s only):\n"
            "      --loss P             drop probability, 0.1 or 10%% (default 0)\n"
            "      --latency SEC        one-way latency, 0.05 or 50ms (default 0); RTT is twice this\n"
            "      --jitter SEC         uniform +- jitter added to the latency (default 0)\n"
            "      --duplicate P        probability of delivering a second copy (default 0)\n"
            "      --reorder P          probability of holding a datagram back (default 0)\n"
            "      --reorder-delay SEC  how long it is held back (default 50ms)\n"
            "      --bandwidth RATE     link rate with IP/UDP overhead, e.g. 1Mbit or 125000 (default unlimited)\n"
            "      --queue BYTES        router buffer before the link; overflow drops (default 64K; 0 = no limit)\n"
            "      --seed N             simulator seed (default 1): the same seed draws the same\n"
            "                           fates for the same sequence of datagrams\n",
            a_to_b, b_to_a);
}
