/*
 * p2frag-sim: a fragmenting sender and a reassembling receiver (p2frag.h)
 * talking through the network simulator in virtual time, optionally with a
 * chunk sender and receiver sharing the same hosts and ports (--mixed).
 * Writes a pcap of what a capture on one host would see, checks every
 * delivered packet against what was sent, prints a summary, and can write a
 * JSON account of every packet and datagram (the truth file, docs/truth.md).
 *
 * Host A is 10.0.0.1:50000 and sends; host B is 10.0.0.2:40000 and
 * receives. Link 0 carries A -> B, link 1 B -> A (only chunk acks use it).
 * The same options give the same pcap and truth file byte for byte.
 *
 * Exit codes: 0 every packet whose datagrams all arrived was delivered
 * intact (and, with --mixed, every chunk); 1 such a packet (or a chunk) was
 * not delivered; 2 bad arguments; 3 a delivered packet differs from what
 * was sent, or was delivered twice; 4 a file could not be written.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "chunk.h"
#include "p2frag.h"
#include "netsim.h"
#include "platform.h"
#include "sha256.h"
#include "simprog.h"
#include "util.h"

enum { EXIT_DELIVERED = 0, EXIT_INCOMPLETE = 1, EXIT_USAGE = SIMPROG_EXIT_USAGE, EXIT_CORRUPT = 3,
       EXIT_IO = SIMPROG_EXIT_IO };

#define SIDE_A SIMPROG_SIDE_A
#define SIDE_B SIMPROG_SIDE_B
static const char *const program = "p2frag-sim";
#define OUT_OF_WINDOW_DISTANCE 300 /* an out-of-window packet goes this far behind the newest sent */
#define MAX_ARRIVALS 4             /* the simulator delivers a datagram at most twice */

typedef struct options_t {
    simprog_t sp; /* the simulator, the capture, the common options */
    p2frag_sender_config_t sender;
    p2frag_receiver_config_t receiver;
    long long packets;
    long long size_min, size_max;
    int raw;             /* --content raw */
    double packet_rate;  /* packets queued per second */
    long long out_of_window; /* every Nth packet; 0 = off */
    int mixed;
    long long chunks, chunk_size;
    double drain;
} options_t;

/* One datagram of a packet: a fragment, or the whole regular packet. */
typedef struct datagram_t {
    int bytes;
    double time_sent;
    uint64_t send_index;
    int sent;
    int arrivals, reordered;
    uint8_t verdicts[MAX_ARRIVALS];
    uint32_t frames[MAX_ARRIVALS];
    int frame_count;
} datagram_t;

typedef struct packet_t {
    uint16_t sequence;
    int size;
    int fragmented; /* sent as fragments (else one regular datagram) */
    int raw;        /* random bytes (else a TestPacketB) */
    int out_of_window;
    int num_datagrams;
    datagram_t *datagrams;
    char sha_sent[65];
    int delivered, intact;
    double time_delivered;
    char sha_delivered[65];
} packet_t;

typedef struct chunk_rec_t {
    uint16_t chunk_id;
    int size, num_slices;
    uint8_t *data;
    char sha[65];
    int popped, intact;
    double time_popped;
    uint32_t *frames;
    int frame_count, frame_capacity;
} chunk_rec_t;

typedef struct run_t {
    options_t *opt;
    simprog_t *sp; /* &opt->sp */
    p2frag_sender_t *sender;
    p2frag_receiver_t *receiver;
    chunk_sender_t *chunk_sender;
    chunk_receiver_t *chunk_receiver;
    chunk_wire_config_t chunk_wire;
    cs_rng_t plan; /* packet sizes and contents */
    packet_t *packets;
    int queued; /* packets handed to the sender */
    int packet_of_sequence[65536]; /* the latest queued packet with this sequence, or -1 */
    uint64_t sends, max_send_index_arrived;
    int any_arrived;
    chunk_rec_t *chunks;
    int chunks_queued, chunks_popped;
    uint8_t *pop_buffer;
    double now;
    uint32_t fragment_frames, regular_frames, chunk_frames, other_frames;
    int corrupt;
    p2frag_test_packet_t test_packet;
    uint8_t scratch[P2FRAG_MAX_PACKET_BYTES];
} run_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: p2frag-sim [options]\n"
"Runs a fragmenting sender (host A, 10.0.0.1:50000) and a reassembling\n"
"receiver (host B, 10.0.0.2:40000) over a seeded network simulator in\n"
"virtual time (packet fragmentation and reassembly, protocol id 0x55667788).\n"
"\n");
    simprog_print_help_output(out, "receiver|b (default: datagrams after the network)\n"
                                   "                           or sender|a (datagrams as sent)",
                              "per-packet");
    fprintf(out,
"Packets:\n"
"      --packets N          packets to send (default 20)\n"
"      --packet-size B[-B]  bytes per packet, or a range drawn uniformly\n"
"                           (default 1200-6000; at most 261120 = 255 fragments)\n"
"      --content KIND       test: the example's TestPacketB of that size (13..16397\n"
"                           bytes; sent whole up to 1024 bytes), raw bytes beyond;\n"
"                           raw: random bytes, always fragmented (default test)\n"
"      --packet-rate N      packets queued per second (default 60)\n"
"      --rate RATE          sender budget, e.g. 200kB (default unlimited)\n"
"      --interleave N       fragments of up to N packets alternate (default 1)\n"
"      --first-sequence N   first sequence, 0..65535 (default 0), e.g. 65530 to\n"
"                           cross the wrap\n"
"      --out-of-window N    every Nth packet is sent %d sequences behind the\n"
"                           newest (raw bytes): a receiver drops it as too old\n"
"      --protocol-id N      protocol id seeding the CRC (default 0x55667788)\n"
"      (--seed N also seeds the packets)\n"
"Mixed traffic (chunks and fragments from one socket to one port):\n"
"      --mixed              host A also sends chunks (protocol id 0x11223344)\n"
"      --chunks N           chunks in mixed mode (default 2)\n"
"      --chunk-size BYTES   bytes per chunk (default 16K)\n"
"Run:\n", OUT_OF_WINDOW_DISTANCE);
    simprog_print_help_run(out);
    fprintf(out,
"      --drain SEC          after the last send, keep delivering this long (default 1)\n");
    simprog_print_help_link(out);
    fprintf(out,
"  -h, --help               this help\n"
"\n"
"Exit status: 0 every packet whose datagrams all arrived was delivered intact,\n"
"1 one was not (or, mixed, a chunk was not delivered), 2 bad arguments,\n"
"3 a delivered packet differs from what was sent, 4 file error.\n");
}

static void *xcalloc(size_t n, size_t size)
{
    return app_calloc(program, n, size, EXIT_IO);
}

/* ---- options ---- */

enum {
    OPT_PACKETS = 256, OPT_PACKET_SIZE, OPT_CONTENT, OPT_PACKET_RATE, OPT_RATE, OPT_INTERLEAVE,
    OPT_FIRST_SEQUENCE, OPT_OUT_OF_WINDOW, OPT_PROTOCOL_ID, OPT_MIXED, OPT_CHUNKS, OPT_CHUNK_SIZE, OPT_DRAIN,
};

/* "B" or "B-B". */
static void parse_size_range(options_t *opt, const char *text)
{
    char first[64];
    const char *dash = strchr(text, '-');
    size_t n = dash ? (size_t)(dash - text) : strlen(text);
    if (n == 0 || n >= sizeof first) app_bad_argument(program, "--packet-size wants BYTES or MIN-MAX, not '%s'", text);
    memcpy(first, text, n);
    first[n] = 0;
    opt->size_min = app_bytes_option(program, "packet-size", first, P2FRAG_MAX_PACKET_BYTES);
    opt->size_max = dash ? app_bytes_option(program, "packet-size", dash + 1, P2FRAG_MAX_PACKET_BYTES) : opt->size_min;
    if (opt->size_min < 1 || opt->size_max < opt->size_min)
        app_bad_argument(program, "--packet-size wants 1 <= MIN <= MAX <= 261120, not '%s'", text);
}

static void own_option(void *context, int c, const char *name, const char *text)
{
    options_t *opt = context;
    double rate;
    switch (c) {
    case OPT_PACKETS: opt->packets = app_int_option(program, name, text, 1, 10000000); break;
    case OPT_PACKET_SIZE: parse_size_range(opt, text); break;
    case OPT_CONTENT:
        if (strcmp(text, "test") == 0) opt->raw = 0;
        else if (strcmp(text, "raw") == 0) opt->raw = 1;
        else app_bad_argument(program, "--content wants test or raw, not '%s'", text);
        break;
    case OPT_PACKET_RATE: opt->packet_rate = (double)app_int_option(program, name, text, 1, 1000000); break;
    case OPT_RATE:
        if (platform_parse_rate(text, &rate) != 0) app_bad_argument(program, "bad value for --rate: '%s'", text);
        opt->sender.rate_bytes_per_second = rate;
        break;
    case OPT_INTERLEAVE: opt->sender.interleave = (int)app_int_option(program, name, text, 1, 64); break;
    case OPT_FIRST_SEQUENCE: opt->sender.first_sequence = (uint16_t)app_int_option(program, name, text, 0, 65535); break;
    case OPT_OUT_OF_WINDOW: opt->out_of_window = app_int_option(program, name, text, 2, 10000000); break;
    case OPT_PROTOCOL_ID: opt->sender.wire.protocol_id = (uint32_t)app_int_option(program, name, text, 0, 0xffffffffLL); break;
    case OPT_MIXED: opt->mixed = 1; break;
    case OPT_CHUNKS: opt->chunks = app_int_option(program, name, text, 1, 10000); break;
    case OPT_CHUNK_SIZE:
        opt->chunk_size = app_bytes_option(program, name, text, (long long)CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES);
        if (opt->chunk_size < 1) app_bad_argument(program, "--chunk-size must be at least 1 byte, not '%s'", text);
        break;
    case OPT_DRAIN: opt->drain = app_seconds_option(program, name, text, 3600); break;
    default: app_bad_argument(program, "unhandled option %s", name);
    }
}

/* p2frag-sim's own options (simprog_parse_options adds the common ones). */
static const struct option own_options[] = {
    {"packets", required_argument, 0, OPT_PACKETS},
    {"packet-size", required_argument, 0, OPT_PACKET_SIZE},
    {"content", required_argument, 0, OPT_CONTENT},
    {"packet-rate", required_argument, 0, OPT_PACKET_RATE},
    {"rate", required_argument, 0, OPT_RATE},
    {"interleave", required_argument, 0, OPT_INTERLEAVE},
    {"first-sequence", required_argument, 0, OPT_FIRST_SEQUENCE},
    {"out-of-window", required_argument, 0, OPT_OUT_OF_WINDOW},
    {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
    {"mixed", no_argument, 0, OPT_MIXED},
    {"chunks", required_argument, 0, OPT_CHUNKS},
    {"chunk-size", required_argument, 0, OPT_CHUNK_SIZE},
    {"drain", required_argument, 0, OPT_DRAIN},
    {"help", no_argument, 0, 'h'},
};

static void parse_options(options_t *opt, int argc, char **argv)
{
    simprog_init(&opt->sp, program, "sender", "receiver", 50000, CHUNK_DEFAULT_PORT);
    opt->sp.capture_side = SIDE_B; /* no feedback: loss shows only after the network */
    p2frag_sender_default_config(&opt->sender);
    p2frag_receiver_default_config(&opt->receiver);
    opt->packets = 20;
    opt->size_min = 1200;
    opt->size_max = 6000;
    opt->packet_rate = 60;
    opt->chunks = 2;
    opt->chunk_size = 16 * 1024;
    opt->drain = 1;

    simprog_parse_options(&opt->sp, argc, argv, own_options, (int)(sizeof own_options / sizeof own_options[0]), usage,
                          own_option, opt);
    if (opt->out_of_window && opt->packets < 2) app_bad_argument(program, "--out-of-window needs at least 2 --packets%s", "");
    opt->receiver.wire = opt->sender.wire;
}

/* ---- the packet plan: sizes and contents drawn from the seed ---- */

static uint64_t plan_seed(uint64_t seed) { return seed * 0x100000001b3ull + 0xf4a90000u; }

/* Builds the next packet (sizes and contents from one stream, in order) and
 * queues it; the sender's queue has room. */
static void queue_next_packet(run_t *run)
{
    const options_t *opt = run->opt;
    int i = run->queued;
    packet_t *p = &run->packets[i];
    uint64_t span = (uint64_t)(opt->size_max - opt->size_min + 1);
    p->size = (int)(opt->size_min + (long long)(cs_rng_next(&run->plan) % span));
    p->out_of_window = opt->out_of_window && i % opt->out_of_window == opt->out_of_window - 1;
    int test_size_ok = p->size >= 13 && p->size <= 13 + P2FRAG_MAX_B_ITEMS;
    p->raw = opt->raw || p->out_of_window || !test_size_ok;
    int sequence;
    if (p->raw) {
        cs_rng_bytes(&run->plan, run->scratch, (size_t)p->size);
        if (p->out_of_window) {
            uint16_t behind = (uint16_t)(p2frag_sender_next_sequence(run->sender) - 1 - OUT_OF_WINDOW_DISTANCE);
            sequence = p2frag_sender_queue_raw_at(run->sender, behind, run->scratch, p->size);
        } else {
            sequence = p2frag_sender_queue_raw(run->sender, run->scratch, p->size);
        }
        p->fragmented = 1;
    } else {
        p2frag_test_packet_t *t = &run->test_packet;
        t->type = P2FRAG_PACKET_B;
        t->num_items = p->size - 13;
        for (int k = 0; k < t->num_items; k++) t->items[k] = (int8_t)((int)(cs_rng_next(&run->plan) % 201) - 100);
        t->sequence = p2frag_sender_next_sequence(run->sender);
        int written = p2frag_write_test_packet(&opt->sender.wire, t, run->scratch, (int)sizeof run->scratch);
        if (written != p->size) {
            fprintf(stderr, "p2frag-sim: internal error: test packet of %d bytes, wanted %d\n", written, p->size);
            exit(EXIT_IO);
        }
        sequence = p2frag_sender_queue_test_packet(run->sender, t);
        p->fragmented = p->size > P2FRAG_MAX_REGULAR_BYTES;
    }
    if (sequence < 0) exit(app_out_of_memory(program, EXIT_IO));
    p->sequence = (uint16_t)sequence;
    cs_sha256_hex(run->scratch, (size_t)p->size, p->sha_sent);
    p->num_datagrams = p->fragmented ? p2frag_fragment_count(p->size) : 1;
    p->datagrams = xcalloc((size_t)p->num_datagrams, sizeof *p->datagrams);
    run->packet_of_sequence[p->sequence] = i;
    run->queued++;
}

/* ---- mixed mode: chunks ---- */

static void setup_chunks(run_t *run)
{
    const options_t *opt = run->opt;
    cs_rng_t rng;
    cs_rng_seed(&rng, opt->sp.sim.seed * 0x100000001b3ull + 0xda7a0000u);
    run->chunks = xcalloc((size_t)opt->chunks, sizeof *run->chunks);
    for (int k = 0; k < opt->chunks; k++) {
        chunk_rec_t *c = &run->chunks[k];
        c->chunk_id = (uint16_t)k;
        c->size = (int)opt->chunk_size;
        c->num_slices = (c->size + CHUNK_DEFAULT_SLICE_SIZE - 1) / CHUNK_DEFAULT_SLICE_SIZE;
        c->data = xcalloc((size_t)c->size, 1);
        cs_rng_bytes(&rng, c->data, (size_t)c->size);
        cs_sha256_hex(c->data, (size_t)c->size, c->sha);
    }
}

static void record_chunk_frame(run_t *run, uint16_t chunk_id, uint32_t frame)
{
    if (chunk_id >= run->opt->chunks) return;
    chunk_rec_t *c = &run->chunks[chunk_id];
    c->frames = simprog_grow(run->sp, c->frames, c->frame_count, &c->frame_capacity, sizeof *c->frames);
    c->frames[c->frame_count++] = frame;
}

/* ---- what happens to datagrams ---- */

/* The packet and datagram record of a fragment-protocol datagram, or NULL
 * for anything else (chunk packets). */
static datagram_t *find_datagram(run_t *run, const uint8_t *datagram, int bytes, packet_t **packet)
{
    p2frag_packet_t parsed;
    parsed.regular = NULL;
    if (p2frag_read_packet(&run->opt->sender.wire, datagram, bytes, &parsed) != P2FRAG_READ_OK) return NULL;
    int index = run->packet_of_sequence[parsed.sequence];
    if (index < 0) return NULL;
    packet_t *p = &run->packets[index];
    int id = parsed.type == P2FRAG_PACKET_FRAGMENT ? parsed.fragment.fragment_id : 0;
    if (id >= p->num_datagrams || (parsed.type == P2FRAG_PACKET_FRAGMENT) != p->fragmented) return NULL;
    if (packet) *packet = p;
    return &p->datagrams[id];
}

/* A datagram sent by side `side` or arriving at it: recorded when that side
 * is the capture point. */
static void observe(run_t *run, int side, int arriving, const uint8_t *datagram, int bytes)
{
    /* arriving at A or sent by B travels B -> A: link 1 */
    int link = arriving ? 1 - side : side;
    uint32_t frame = simprog_record(run->sp, side, link, run->now, datagram, bytes);
    if (frame == 0) return;
    packet_t *p;
    datagram_t *d = find_datagram(run, datagram, bytes, &p);
    if (d) {
        if (d->frame_count < MAX_ARRIVALS) d->frames[d->frame_count++] = frame;
        if (p->fragmented) run->fragment_frames++;
        else run->regular_frames++;
        return;
    }
    chunk_packet_t parsed;
    if (run->opt->mixed && chunk_read_packet(&run->chunk_wire, datagram, bytes, &parsed) == CHUNK_READ_OK) {
        run->chunk_frames++;
        record_chunk_frame(run, parsed.type == CHUNK_PACKET_SLICE ? parsed.u.slice.chunk_id : parsed.u.ack.chunk_id,
                           frame);
        return;
    }
    run->other_frames++;
}

static void on_frag_send(void *context, const uint8_t *datagram, int bytes)
{
    run_t *run = context;
    datagram_t *d = find_datagram(run, datagram, bytes, NULL);
    if (d) {
        d->sent = 1;
        d->bytes = bytes;
        d->time_sent = run->now;
        d->send_index = run->sends;
    }
    run->sends++;
    observe(run, SIDE_A, 0, datagram, bytes);
    netsim_send(run->sp->netsim, 0, run->now, datagram, bytes);
}

static void on_chunk_send_a(void *context, const uint8_t *datagram, int bytes)
{
    run_t *run = context;
    run->sends++; /* chunk slices take part in the send order too (reordering) */
    observe(run, SIDE_A, 0, datagram, bytes);
    netsim_send(run->sp->netsim, 0, run->now, datagram, bytes);
}

static void on_chunk_send_b(void *context, const uint8_t *datagram, int bytes)
{
    run_t *run = context;
    observe(run, SIDE_B, 0, datagram, bytes);
    netsim_send(run->sp->netsim, 1, run->now, datagram, bytes);
}

static void on_deliver(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes, int fragmented)
{
    run_t *run = context;
    int index = run->packet_of_sequence[sequence];
    if (index < 0) {
        fprintf(stderr, "p2frag-sim: delivered sequence %u that was never sent\n", sequence);
        run->corrupt = 1;
        return;
    }
    packet_t *p = &run->packets[index];
    if (p->delivered) {
        fprintf(stderr, "p2frag-sim: packet %d (sequence %u) delivered twice\n", index, sequence);
        run->corrupt = 1;
        return;
    }
    p->delivered = 1;
    p->time_delivered = time;
    cs_sha256_hex(packet, (size_t)bytes, p->sha_delivered);
    p->intact = bytes == p->size && fragmented == p->fragmented && strcmp(p->sha_delivered, p->sha_sent) == 0;
    if (!p->intact) {
        fprintf(stderr, "p2frag-sim: packet %d (sequence %u) delivered with %d bytes that differ from what was sent\n",
                index, sequence, bytes);
        run->corrupt = 1;
    }
}

/* A datagram the network delivers to side `side`. */
static void arrive(run_t *run, int side, const uint8_t *datagram, int bytes)
{
    observe(run, side, 1, datagram, bytes);
    if (side == SIDE_A) {
        if (run->chunk_sender) chunk_sender_receive_packet(run->chunk_sender, run->now, datagram, bytes);
        return;
    }
    /* One port, two protocols: the CRC's implied protocol id decides. */
    uint32_t sent_crc = bytes >= 4 ? (uint32_t)datagram[0] | (uint32_t)datagram[1] << 8 |
                                         (uint32_t)datagram[2] << 16 | (uint32_t)datagram[3] << 24
                                   : 0;
    int is_frag = bytes >= 4 && sent_crc == p2_packet_crc(run->opt->receiver.wire.protocol_id, datagram, bytes);
    if (!is_frag && run->chunk_receiver) {
        chunk_receiver_receive_packet(run->chunk_receiver, run->now, datagram, bytes);
        return;
    }
    datagram_t *d = find_datagram(run, datagram, bytes, NULL);
    if (d) {
        if (run->any_arrived && d->send_index < run->max_send_index_arrived) d->reordered = 1;
        if (!run->any_arrived || d->send_index > run->max_send_index_arrived) run->max_send_index_arrived = d->send_index;
        run->any_arrived = 1;
    }
    p2frag_verdict_t verdict = p2frag_receiver_receive_packet(run->receiver, run->now, datagram, bytes);
    if (d) {
        if (d->arrivals < MAX_ARRIVALS) d->verdicts[d->arrivals] = (uint8_t)verdict;
        d->arrivals++;
    }
}

static void pop_chunks(run_t *run)
{
    if (!run->chunk_receiver) return;
    uint16_t id;
    int size;
    while ((size = chunk_receiver_pop_chunk(run->chunk_receiver, run->pop_buffer,
                                            CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES, &id)) > 0) {
        int k = run->chunks_popped++;
        if (k >= run->opt->chunks) {
            run->corrupt = 1;
            continue;
        }
        chunk_rec_t *c = &run->chunks[k];
        c->popped = 1;
        c->time_popped = run->now;
        c->intact = id == c->chunk_id && size == c->size && memcmp(run->pop_buffer, c->data, (size_t)size) == 0;
        if (!c->intact) {
            fprintf(stderr, "p2frag-sim: chunk %d delivered corrupt or out of order\n", k);
            run->corrupt = 1;
        }
    }
}

/* ---- the truth file ---- */

/* "  \"KEY\": {counters},\n" */
static void json_counters(FILE *out, const char *key, const uint64_t *c, int count, const char *(*name)(int))
{
    fprintf(out, "  \"%s\": ", key);
    truth_counters(out, c, count, name);
    fprintf(out, ",\n");
}

static const char *read_result_name(int i) { return p2frag_read_result_name((p2frag_read_result_t)i); }

/* Loss figures from the endpoints' view: a datagram is lost when it never
 * arrived at B. */
typedef struct loss_t {
    uint64_t fragments_sent, fragments_lost, fragmented, fragmented_delivered, fragmented_all_arrived;
    double fragment_loss, packet_loss, predicted;
} loss_t;

static void compute_loss(const run_t *run, loss_t *l)
{
    memset(l, 0, sizeof *l);
    double predicted_sum = 0;
    for (int i = 0; i < run->queued; i++) {
        const packet_t *p = &run->packets[i];
        if (!p->fragmented || p->out_of_window) continue;
        l->fragmented++;
        l->fragmented_delivered += p->delivered;
        int all = 1;
        for (int k = 0; k < p->num_datagrams; k++) {
            if (!p->datagrams[k].sent) continue;
            l->fragments_sent++;
            if (p->datagrams[k].arrivals == 0) {
                l->fragments_lost++;
                all = 0;
            }
        }
        l->fragmented_all_arrived += all;
    }
    l->fragment_loss = l->fragments_sent ? (double)l->fragments_lost / (double)l->fragments_sent : 0;
    l->packet_loss = l->fragmented ? 1.0 - (double)l->fragmented_delivered / (double)l->fragmented : 0;
    for (int i = 0; i < run->queued; i++) {
        const packet_t *p = &run->packets[i];
        if (!p->fragmented || p->out_of_window) continue;
        double keep = 1;
        for (int k = 0; k < p->num_datagrams; k++) keep *= 1 - l->fragment_loss;
        predicted_sum += 1 - keep;
    }
    l->predicted = l->fragmented ? predicted_sum / (double)l->fragmented : 0;
}

static int write_truth(const run_t *run, double end_time, int exit_code)
{
    const options_t *opt = run->opt;
    FILE *out = simprog_truth_begin(run->sp);
    if (!out) return -1;
    fprintf(out, "  \"config\": {\"seed\": %llu, \"packets\": %lld, \"packet_size_min\": %lld, \"packet_size_max\": %lld, "
                 "\"content\": \"%s\", \"packet_rate\": %.3f, \"rate\": %.3f, \"interleave\": %d, \"first_sequence\": %u, "
                 "\"out_of_window\": %lld, \"protocol_id\": %u, \"num_packet_types\": %d, \"mixed\": %s, \"chunks\": %lld, "
                 "\"chunk_size\": %lld, \"chunk_protocol_id\": %u, \"tick\": %.6f, \"time_limit\": %.6f,\n",
            (unsigned long long)opt->sp.sim.seed, opt->packets, opt->size_min, opt->size_max, opt->raw ? "raw" : "test",
            opt->packet_rate, opt->sender.rate_bytes_per_second, opt->sender.interleave, opt->sender.first_sequence,
            opt->out_of_window, opt->sender.wire.protocol_id, opt->sender.wire.num_packet_types, truth_bool(opt->mixed),
            opt->mixed ? opt->chunks : 0, opt->mixed ? opt->chunk_size : 0, CHUNK_DEFAULT_PROTOCOL_ID, opt->sp.tick,
            opt->sp.time_limit);
    simprog_truth_config_links(out, run->sp);
    simprog_truth_capture(out, run->sp, 1);
    fprintf(out, ", \"fragment_frames\": %u, \"regular_frames\": %u, \"chunk_frames\": %u},\n", run->fragment_frames,
            run->regular_frames, run->chunk_frames);
    int delivered = 0;
    for (int i = 0; i < run->queued; i++) delivered += run->packets[i].delivered && run->packets[i].intact;
    loss_t l;
    compute_loss(run, &l);
    fprintf(out, "  \"result\": {\"packets\": %d, \"delivered\": %d, \"corrupt\": %s, \"end_time\": %.6f, \"exit_code\": %d},\n",
            run->queued, delivered, truth_bool(run->corrupt), end_time, exit_code);
    fprintf(out, "  \"loss\": {\"fragmented_packets\": %llu, \"fragmented_delivered\": %llu, \"fragmented_all_arrived\": %llu, "
                 "\"fragments_sent\": %llu, \"fragments_lost\": %llu, \"fragment_loss_rate\": %.6f, "
                 "\"packet_loss_rate\": %.6f, \"predicted_packet_loss_rate\": %.6f},\n",
            (unsigned long long)l.fragmented, (unsigned long long)l.fragmented_delivered,
            (unsigned long long)l.fragmented_all_arrived, (unsigned long long)l.fragments_sent,
            (unsigned long long)l.fragments_lost, l.fragment_loss, l.packet_loss, l.predicted);
    json_counters(out, "sender_counters", p2frag_sender_counters(run->sender), P2FRAG_SENDER_COUNTER_COUNT,
                  p2frag_sender_counter_name);
    json_counters(out, "receiver_counters", p2frag_receiver_counters(run->receiver), P2FRAG_RECEIVER_COUNTER_COUNT,
                  p2frag_receiver_counter_name);
    json_counters(out, "receiver_invalid", p2frag_receiver_invalid_counters(run->receiver), P2FRAG_READ_RESULT_COUNT,
                  read_result_name);
    fprintf(out, "  \"links\": ");
    simprog_truth_link_counters(out, run->sp);
    fprintf(out, ",\n  \"packets\": [");
    for (int i = 0; i < run->queued; i++) {
        const packet_t *p = &run->packets[i];
        fprintf(out, "%s\n    {\"index\": %d, \"sequence\": %u, \"size\": %d, \"fragmented\": %s, \"num_fragments\": %d, "
                     "\"content\": \"%s\", \"out_of_window\": %s,\n     \"sha256_sent\": \"%s\", \"delivered\": %s, "
                     "\"intact\": %s, ",
                i ? "," : "", i, p->sequence, p->size, truth_bool(p->fragmented), p->fragmented ? p->num_datagrams : 0,
                p->raw ? "raw" : "test-b", truth_bool(p->out_of_window), p->sha_sent, truth_bool(p->delivered),
                truth_bool(p->delivered && p->intact));
        if (p->delivered)
            fprintf(out, "\"time_delivered\": %.6f, \"sha256_delivered\": \"%s\",\n", p->time_delivered, p->sha_delivered);
        else
            fprintf(out, "\"time_delivered\": null, \"sha256_delivered\": null,\n");
        fprintf(out, "     \"missing_fragments\": [");
        int first = 1;
        for (int k = 0; k < p->num_datagrams; k++)
            if (p->fragmented && p->datagrams[k].arrivals == 0) {
                fprintf(out, "%s%d", first ? "" : ", ", k);
                first = 0;
            }
        fprintf(out, "],\n     \"datagrams\": [");
        for (int k = 0; k < p->num_datagrams; k++) {
            const datagram_t *d = &p->datagrams[k];
            fprintf(out, "%s\n       {\"fragment_id\": ", k ? "," : "");
            if (p->fragmented) fprintf(out, "%d", k);
            else fprintf(out, "null");
            fprintf(out, ", \"bytes\": %d, \"time_sent\": ", d->bytes);
            if (d->sent) fprintf(out, "%.6f", d->time_sent);
            else fprintf(out, "null");
            fprintf(out, ", \"fate\": \"%s\", \"arrivals\": %d, \"reordered\": %s, \"verdicts\": [",
                    !d->sent ? "unsent" : d->arrivals == 0 ? "lost" : d->arrivals == 1 ? "arrived" : "duplicated",
                    d->arrivals, truth_bool(d->reordered));
            for (int a = 0; a < d->arrivals && a < MAX_ARRIVALS; a++)
                fprintf(out, "%s\"%s\"", a ? ", " : "", p2frag_verdict_name((p2frag_verdict_t)d->verdicts[a]));
            fprintf(out, "], \"frames\": [");
            for (int f = 0; f < d->frame_count; f++) fprintf(out, "%s%u", f ? ", " : "", d->frames[f]);
            fprintf(out, "]}");
        }
        fprintf(out, "]}");
    }
    fprintf(out, "\n  ],\n  \"chunks\": [");
    for (int k = 0; opt->mixed && k < opt->chunks; k++) {
        const chunk_rec_t *c = &run->chunks[k];
        fprintf(out, "%s\n    {\"chunk_id\": %u, \"size\": %d, \"num_slices\": %d, \"sha256\": \"%s\", \"delivered\": %s, "
                     "\"intact\": %s, \"frames\": [",
                k ? "," : "", c->chunk_id, c->size, c->num_slices, c->sha, truth_bool(c->popped),
                truth_bool(c->popped && c->intact));
        for (int f = 0; f < c->frame_count; f++) fprintf(out, "%s%u", f ? ", " : "", c->frames[f]);
        fprintf(out, "]}");
    }
    fprintf(out, "\n  ]\n}\n");
    return simprog_truth_close(run->sp, out);
}

/* ---- summary ---- */

static void print_summary(const run_t *run, double end_time, int exit_code, int expected_missing)
{
    const options_t *opt = run->opt;
    int delivered = 0, fragmented = 0, stale = 0;
    for (int i = 0; i < run->queued; i++) {
        delivered += run->packets[i].delivered && run->packets[i].intact;
        fragmented += run->packets[i].fragmented;
        stale += run->packets[i].out_of_window;
    }
    loss_t l;
    compute_loss(run, &l);
    printf("p2frag-sim: %d/%d packets delivered intact (%d fragmented, %d out of window) in %.3f s of virtual time\n",
           delivered, run->queued, fragmented, stale, end_time);
    printf("  fragments: %llu sent, %llu lost (%.2f%%); fragmented packets: %llu of %llu delivered "
           "(loss %.2f%%, 1-(1-p)^n predicts %.2f%%)\n",
           (unsigned long long)l.fragments_sent, (unsigned long long)l.fragments_lost, 100 * l.fragment_loss,
           (unsigned long long)l.fragmented_delivered, (unsigned long long)l.fragmented, 100 * l.packet_loss,
           100 * l.predicted);
    const uint64_t *rc = p2frag_receiver_counters(run->receiver);
    printf("  receiver:");
    for (int i = 0; i < P2FRAG_RECEIVER_COUNTER_COUNT; i++)
        if (rc[i]) printf(" %s %llu,", p2frag_receiver_counter_name(i), (unsigned long long)rc[i]);
    printf("\n");
    if (opt->mixed) printf("  chunks: %d/%lld delivered intact\n", run->chunks_popped, opt->chunks);
    printf("  capture at %s: %u frames (%u fragments, %u regular, %u chunk)%s%s\n", opt->sp.capture_side ? "B" : "A",
           run->sp->frames, run->fragment_frames, run->regular_frames, run->chunk_frames, opt->sp.pcap_path ? " in " : "",
           opt->sp.pcap_path ? opt->sp.pcap_path : "");
    simprog_print_links(run->sp);
    if (exit_code == EXIT_INCOMPLETE)
        printf("  NOT DELIVERED: %d packet(s) whose every datagram arrived%s\n", expected_missing,
               opt->mixed && run->chunks_popped < opt->chunks ? ", or chunks" : "");
    if (exit_code == EXIT_CORRUPT) printf("  CORRUPT: a delivered packet differs from what was sent\n");
}

/* ---- main ---- */

static void free_run(run_t *run)
{
    for (int i = 0; i < run->queued; i++) free(run->packets[i].datagrams);
    free(run->packets);
    if (run->chunks)
        for (int k = 0; k < run->opt->chunks; k++) {
            free(run->chunks[k].data);
            free(run->chunks[k].frames);
        }
    free(run->chunks);
    free(run->pop_buffer);
    p2frag_sender_destroy(run->sender);
    p2frag_receiver_destroy(run->receiver);
    chunk_sender_destroy(run->chunk_sender);
    chunk_receiver_destroy(run->chunk_receiver);
    simprog_free(run->sp);
}

/* 1 when every packet is queued and sent and (mixed) every chunk popped. */
static int all_sent(const run_t *run)
{
    if (run->queued < run->opt->packets || p2frag_sender_busy(run->sender)) return 0;
    if (run->opt->mixed && run->chunks_popped < run->opt->chunks) return 0;
    return 1;
}

/* simprog_run's tick: queues the packets due (a packet waits while the
 * sender's queue is full, a slow --rate) and updates the endpoints. */
static int tick(void *context)
{
    run_t *run = context;
    const options_t *opt = run->opt;
    while (run->queued < opt->packets && (double)run->queued / opt->packet_rate <= run->now + 1e-9 &&
           p2frag_sender_queued(run->sender) < opt->sender.queue_capacity)
        queue_next_packet(run);
    p2frag_sender_update(run->sender, run->now);
    if (opt->mixed) {
        while (run->chunks_queued < opt->chunks) {
            chunk_rec_t *c = &run->chunks[run->chunks_queued];
            if (chunk_sender_queue_chunk(run->chunk_sender, c->data, c->size) != 0) break;
            run->chunks_queued++;
        }
        chunk_sender_update(run->chunk_sender, run->now);
        chunk_receiver_update(run->chunk_receiver, run->now);
        pop_chunks(run);
    }
    return 0;
}

/* simprog_run's arrival: a datagram of link reaches the other side. */
static void deliver(void *context, int link, const uint8_t *datagram, int bytes)
{
    run_t *run = context;
    arrive(run, 1 - link, datagram, bytes);
    pop_chunks(run);
}

static void describe(void *context, char *text, size_t size)
{
    const run_t *run = context;
    snprintf(text, size, "%d/%lld packets queued, %u frames", run->queued, run->opt->packets, run->sp->frames);
}

static int done(void *context) { return all_sent(context); }

/* Runs ticks until every packet is sent and the network is quiet (or the
 * drain time passed), or the time limit. Returns the virtual end time. */
static double run_until_done(run_t *run)
{
    double end_time;
    simprog_loop_t loop = {&run->now, run, tick, deliver, describe, done, run->opt->drain};
    simprog_run(run->sp, run->opt->sp.time_limit, &loop, &end_time);
    return end_time;
}

/* Creates the endpoints (and, mixed, the chunk ones). Returns 0, or EXIT_IO. */
static int create_endpoints(run_t *run)
{
    options_t *opt = run->opt;
    opt->sender.send = on_frag_send;
    opt->sender.context = run;
    opt->sender.queue_capacity = 256;
    opt->receiver.deliver = on_deliver;
    opt->receiver.context = run;
    run->sender = p2frag_sender_create(&opt->sender);
    run->receiver = p2frag_receiver_create(&opt->receiver);
    if (!run->sender || !run->receiver) return app_out_of_memory(program, EXIT_IO);
    if (!opt->mixed) return 0;
    setup_chunks(run);
    chunk_sender_config_t sc;
    chunk_sender_default_config(&sc);
    sc.send = on_chunk_send_a;
    sc.context = run;
    chunk_receiver_config_t rc;
    chunk_receiver_default_config(&rc);
    rc.send = on_chunk_send_b;
    rc.context = run;
    run->chunk_sender = chunk_sender_create(&sc);
    run->chunk_receiver = chunk_receiver_create(&rc);
    run->pop_buffer = xcalloc(CHUNK_DEFAULT_SLICE_SIZE * CHUNK_DEFAULT_MAX_SLICES, 1);
    if (!run->chunk_sender || !run->chunk_receiver) return app_out_of_memory(program, EXIT_IO);
    return 0;
}

int main(int argc, char **argv)
{
    static options_t opt;
    parse_options(&opt, argc, argv);
    cs_log_set_name("p2frag");

    static run_t run;
    run.opt = &opt;
    run.sp = &opt.sp;
    cs_rng_seed(&run.plan, plan_seed(opt.sp.sim.seed));
    for (int s = 0; s < 65536; s++) run.packet_of_sequence[s] = -1;
    run.packets = xcalloc((size_t)opt.packets, sizeof *run.packets);
    chunk_wire_default_config(&run.chunk_wire);
    /* No filter: the simulator carries both protocols alike. */
    if (simprog_start(&opt.sp) != 0 || create_endpoints(&run) != 0) {
        free_run(&run);
        return EXIT_IO;
    }

    double end_time = run_until_done(&run);

    /* Every packet whose datagrams all arrived must have been delivered,
     * unless it was sent from outside the window on purpose. */
    int expected_missing = 0;
    for (int i = 0; i < run.queued; i++) {
        const packet_t *p = &run.packets[i];
        if (p->out_of_window || p->delivered) continue;
        int all = 1;
        for (int k = 0; k < p->num_datagrams; k++) all &= p->datagrams[k].arrivals > 0;
        expected_missing += all;
    }
    int exit_code = run.corrupt ? EXIT_CORRUPT
                    : expected_missing || run.queued < opt.packets || (opt.mixed && run.chunks_popped < opt.chunks)
                        ? EXIT_INCOMPLETE
                        : EXIT_DELIVERED;
    if (simprog_close_pcap(&opt.sp) != 0 && exit_code == EXIT_DELIVERED) exit_code = EXIT_IO;
    if (opt.sp.truth_path && write_truth(&run, end_time, exit_code) != 0 && exit_code == EXIT_DELIVERED)
        exit_code = EXIT_IO;
    if (!opt.sp.quiet) print_summary(&run, end_time, exit_code, expected_missing);
    free_run(&run);
    return exit_code;
}
