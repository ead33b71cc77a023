/* Tests of the fragment codec (p2frag_wire.c) against every line of the spec's
 * vectors-fragments.txt, the receive rules (p2frag_receiver.c) and the sender
 * (p2frag_sender.c). */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "p2frag.h"
#include "chunk.h"
#include "sha256.h"
#include "test.h"

/* ---- the vector file, read once ---- */

typedef struct vector_file_t {
    char **lines;
    int count;
} vector_file_t;

static const vector_file_t *vectors(void)
{
    static vector_file_t file;
    static int loaded;
    if (loaded) return &file;
    loaded = 1;
    char path[4096];
    FILE *f = chunk_test_open_vectors("vectors-fragments.txt", path, sizeof path);
    if (!f) return &file;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int capacity = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (file.count == capacity) {
            capacity = capacity ? capacity * 2 : 256;
            file.lines = realloc(file.lines, (size_t)capacity * sizeof *file.lines);
        }
        file.lines[file.count++] = strdup(line);
    }
    free(line);
    fclose(f);
    return &file;
}

/* Splits a copy of line at spaces; returns the number of words. */
static int split(const char *line, char **copy, char **words, int max)
{
    *copy = strdup(line);
    int n = 0;
    for (char *save = NULL, *w = strtok_r(*copy, " ", &save); w && n < max; w = strtok_r(NULL, " ", &save))
        words[n++] = w;
    return n;
}

/* "name=value" words after the fixed ones. */
static const char *field(char **words, int n, int first, const char *name)
{
    size_t len = strlen(name);
    for (int i = first; i < n; i++)
        if (strncmp(words[i], name, len) == 0 && words[i][len] == '=') return words[i] + len + 1;
    return NULL;
}

static long field_int(char **words, int n, int first, const char *name)
{
    const char *v = field(words, n, first, name);
    CHECK(v != NULL);
    return v ? strtol(v, NULL, 10) : 0;
}

static uint32_t field_bits(char **words, int n, int first, const char *name)
{
    const char *v = field(words, n, first, name);
    CHECK(v != NULL);
    return v ? (uint32_t)strtoul(v, NULL, 16) : 0;
}

/* Fills a test packet from the decoded-field words of a P or W line. */
static void fields_to_packet(char **w, int n, int first, int type, p2frag_test_packet_t *p)
{
    p->type = type;
    if (type == P2FRAG_PACKET_A) {
        p->a = (int)field_int(w, n, first, "a");
        p->b = (int)field_int(w, n, first, "b");
        p->c = (int)field_int(w, n, first, "c");
    } else if (type == P2FRAG_PACKET_B) {
        p->num_items = (int)field_int(w, n, first, "numItems");
        const char *items = field(w, n, first, "items");
        CHECK(items != NULL);
        int count = 0;
        for (const char *s = items; s && *s; count++) {
            char *end;
            long v = strtol(s, &end, 10);
            if (count < P2FRAG_MAX_B_ITEMS) p->items[count] = (int8_t)v;
            s = *end == ',' ? end + 1 : end;
        }
        CHECK_EQ(count, p->num_items);
    } else {
        static const char *const pos[3] = {"px", "py", "pz"}, *const vel[3] = {"vx", "vy", "vz"};
        for (int i = 0; i < 3; i++) p->position[i] = field_bits(w, n, first, pos[i]);
        p->at_rest = (int)field_int(w, n, first, "atRest");
        for (int i = 0; i < 3; i++) p->velocity[i] = field_bits(w, n, first, vel[i]);
    }
}

static void check_same_test_packet(const p2frag_test_packet_t *got, const p2frag_test_packet_t *want)
{
    CHECK_EQ(got->sequence, want->sequence);
    CHECK_EQ(got->type, want->type);
    if (want->type == P2FRAG_PACKET_A) {
        CHECK_EQ(got->a, want->a);
        CHECK_EQ(got->b, want->b);
        CHECK_EQ(got->c, want->c);
    } else if (want->type == P2FRAG_PACKET_B) {
        CHECK_EQ(got->num_items, want->num_items);
        CHECK(memcmp(got->items, want->items, (size_t)want->num_items) == 0);
    } else {
        for (int i = 0; i < 3; i++) CHECK_EQ(got->position[i], want->position[i]);
        CHECK_EQ(got->at_rest, want->at_rest);
        for (int i = 0; i < 3; i++) CHECK_EQ(got->velocity[i], want->velocity[i]);
    }
}

static p2frag_wire_config_t default_wire(void)
{
    p2frag_wire_config_t c;
    p2frag_wire_default_config(&c);
    return c;
}

static p2frag_test_packet_t packet_a, packet_b; /* 16 KiB each: not on the stack */
static uint8_t big[P2FRAG_MAX_PACKET_BYTES + 64];

/* Every P line: written from its fields gives exactly its bytes; read back
 * gives exactly its fields. */
static void test_vectors_regular(void)
{
    const vector_file_t *file = vectors();
    p2frag_wire_config_t wire = default_wire();
    int seen = 0, types[4] = {0};
    for (int i = 0; i < file->count; i++) {
        if (file->lines[i][0] != 'P') continue;
        int before = chunk_test_failures;
        char *copy, *w[16];
        int n = split(file->lines[i], &copy, w, 16);
        CHECK(n >= 4);
        uint8_t want[2048], got[2048];
        int want_bytes = chunk_test_parse_hex(w[3], want, sizeof want);
        memset(&packet_a, 0, sizeof packet_a);
        packet_a.sequence = (uint16_t)atoi(w[1]);
        fields_to_packet(w, n, 4, atoi(w[2]), &packet_a);
        types[packet_a.type & 3]++;
        int bytes = p2frag_write_test_packet(&wire, &packet_a, got, sizeof got);
        CHECK_EQ(bytes, want_bytes);
        CHECK_EQ(bytes, p2frag_test_packet_size(&wire, &packet_a));
        CHECK(bytes == want_bytes && memcmp(got, want, (size_t)bytes) == 0);
        p2frag_packet_t parsed;
        parsed.regular = &packet_b;
        memset(&packet_b, 0, sizeof packet_b);
        CHECK_EQ(p2frag_read_packet(&wire, want, want_bytes, &parsed), P2FRAG_READ_OK);
        CHECK_EQ(parsed.sequence, packet_a.sequence);
        CHECK_EQ(parsed.type, packet_a.type);
        check_same_test_packet(&packet_b, &packet_a);
        if (chunk_test_failures != before) fprintf(stderr, "  ... at vectors-fragments.txt line %d\n", i + 1);
        free(copy);
        seen++;
    }
    CHECK_EQ(seen, 100);
    CHECK(types[1] > 0 && types[2] > 0 && types[3] > 0);
}

/* Every F line: read gives its header and data; written from them gives
 * exactly its bytes. */
static void test_vectors_fragments(void)
{
    const vector_file_t *file = vectors();
    p2frag_wire_config_t wire = default_wire();
    int seen = 0;
    for (int i = 0; i < file->count; i++) {
        if (file->lines[i][0] != 'F') continue;
        int before = chunk_test_failures;
        char *copy, *w[8];
        int n = split(file->lines[i], &copy, w, 8);
        CHECK_EQ(n, 6);
        uint8_t want[2048], got[2048];
        int want_bytes = chunk_test_parse_hex(w[5], want, sizeof want);
        p2frag_packet_t parsed;
        parsed.regular = NULL;
        CHECK_EQ(p2frag_read_packet(&wire, want, want_bytes, &parsed), P2FRAG_READ_OK);
        CHECK_EQ(parsed.type, P2FRAG_PACKET_FRAGMENT);
        CHECK_EQ(parsed.sequence, atoi(w[1]));
        CHECK_EQ(parsed.fragment.sequence, atoi(w[1]));
        CHECK_EQ(parsed.fragment.fragment_id, atoi(w[2]));
        CHECK_EQ(parsed.fragment.num_fragments, atoi(w[3]));
        CHECK_EQ(parsed.fragment.fragment_bytes, atoi(w[4]));
        CHECK(parsed.fragment.data == want + P2FRAG_HEADER_BYTES);
        CHECK_EQ(p2frag_fragment_packet_size(&wire, atoi(w[4])), want_bytes);
        int bytes = p2frag_write_fragment(&wire, &parsed.fragment, got, sizeof got);
        CHECK(bytes == want_bytes && memcmp(got, want, (size_t)bytes) == 0);
        if (chunk_test_failures != before) fprintf(stderr, "  ... at vectors-fragments.txt line %d\n", i + 1);
        free(copy);
        seen++;
    }
    CHECK_EQ(seen, 109);
}

/* ---- a receiver that records what it delivers ---- */

typedef struct delivered_t {
    int count;
    uint16_t sequence[64];
    int bytes[64];
    int fragmented[64];
    uint8_t *last; /* copy of the last delivered packet */
    int last_bytes;
} delivered_t;

/* What the test's receiver delivered: make_receiver starts it empty. */
static delivered_t delivered;

static void on_deliver(void *context, double time, uint16_t sequence, const uint8_t *packet, int bytes,
                       int fragmented)
{
    (void)time;
    delivered_t *into = context;
    if (into->count < 64) {
        into->sequence[into->count] = sequence;
        into->bytes[into->count] = bytes;
        into->fragmented[into->count] = fragmented;
    }
    into->count++;
    free(into->last);
    into->last = malloc((size_t)bytes);
    memcpy(into->last, packet, (size_t)bytes);
    into->last_bytes = bytes;
}

/* A receiver of this configuration delivering into delivered. */
static p2frag_receiver_t *make_receiver_of(p2frag_receiver_config_t *config)
{
    memset(&delivered, 0, sizeof delivered);
    config->deliver = on_deliver;
    config->context = &delivered;
    return chunk_test_require(p2frag_receiver_create(config), "receiver");
}

static p2frag_receiver_t *make_receiver(void)
{
    p2frag_receiver_config_t config;
    p2frag_receiver_default_config(&config);
    return make_receiver_of(&config);
}

/* Every verdict a datagram can get is exactly one counter. */
static void check_counters_add_up(const p2frag_receiver_t *r)
{
    const uint64_t *c = p2frag_receiver_counters(r);
    uint64_t regular_delivered = c[P2FRAG_RECEIVER_COUNTER_PACKETS_DELIVERED] - c[P2FRAG_RECEIVER_COUNTER_PACKETS_REASSEMBLED];
    uint64_t sum = c[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID] + c[P2FRAG_RECEIVER_COUNTER_TOO_OLD] +
                   c[P2FRAG_RECEIVER_COUNTER_SUPERSEDED] + c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_TOO_MANY] +
                   c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_COUNT_CONFLICT] + c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE] +
                   c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE] + c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_ACCEPTED] +
                   c[P2FRAG_RECEIVER_COUNTER_REGULAR_DUPLICATE] + c[P2FRAG_RECEIVER_COUNTER_NO_MEMORY] + regular_delivered;
    CHECK_EQ(sum, c[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_RECEIVED]);
    uint64_t invalid = 0;
    for (int i = 0; i < P2FRAG_READ_RESULT_COUNT; i++) invalid += p2frag_receiver_invalid_counters(r)[i];
    CHECK_EQ(invalid, c[P2FRAG_RECEIVER_COUNTER_DATAGRAMS_INVALID]);
}

/* Checks that the counters add up, then frees what make_receiver made. */
static void free_receiver(p2frag_receiver_t *r)
{
    check_counters_add_up(r);
    p2frag_receiver_destroy(r);
    free(delivered.last);
    delivered.last = NULL;
}


/* Every group of F lines fed to a receiver: the complete ones (protocol2-B)
 * deliver exactly their W line's bytes, which decode to its fields; the
 * partial ones (raw) deliver nothing and stay in progress. Fed forwards and
 * backwards. */
static void test_vectors_reassembly(void)
{
    const vector_file_t *file = vectors();
    p2frag_wire_config_t wire = default_wire();
    int groups = 0, complete = 0;
    for (int reverse = 0; reverse < 2; reverse++) {
        for (int i = 0; i < file->count; i++) {
            const char *line = file->lines[i];
            if (strncmp(line, "# G ", 4) != 0) continue;
            int before = chunk_test_failures;
            int sequence, num_fragments, whole_bytes, lines;
            char source[32];
            CHECK_EQ(sscanf(line, "# G %d %d %d %31s %d", &sequence, &num_fragments, &whole_bytes, source, &lines), 5);
            p2frag_receiver_t *r = make_receiver();
            for (int k = 0; k < lines; k++) {
                int at = reverse ? i + lines - k : i + 1 + k;
                CHECK(file->lines[at][0] == 'F');
                char *copy, *w[8];
                split(file->lines[at], &copy, w, 8);
                uint8_t datagram[2048];
                int bytes = chunk_test_parse_hex(w[5], datagram, sizeof datagram);
                p2frag_verdict_t v = p2frag_receiver_receive_packet(r, 0, datagram, bytes);
                int last = k == lines - 1;
                CHECK_EQ(v, last && lines == num_fragments ? P2FRAG_VERDICT_DELIVERED : P2FRAG_VERDICT_ACCEPTED);
                free(copy);
            }
            if (strcmp(source, "protocol2-B") == 0) {
                CHECK_EQ(lines, num_fragments);
                CHECK_EQ(delivered.count, 1);
                CHECK_EQ(delivered.sequence[0], sequence);
                CHECK_EQ(delivered.bytes[0], whole_bytes);
                CHECK_EQ(delivered.fragmented[0], 1);
                /* the W line of this sequence */
                int found = 0;
                for (int j = 0; j < file->count; j++) {
                    if (file->lines[j][0] != 'W') continue;
                    char *copy, *w[8];
                    int n = split(file->lines[j], &copy, w, 8);
                    if (atoi(w[1]) == sequence) {
                        found = 1;
                        CHECK_EQ(atoi(w[2]), num_fragments);
                        CHECK_EQ(atoi(w[3]), whole_bytes);
                        int want_bytes = (int)strlen(w[5]) / 2;
                        CHECK(chunk_test_parse_hex(w[5], big, sizeof big) == whole_bytes && want_bytes == whole_bytes);
                        CHECK(delivered.last && delivered.last_bytes == whole_bytes && memcmp(delivered.last, big, (size_t)whole_bytes) == 0);
                        /* The inner packet: a TestPacketB with the group's sequence. */
                        memset(&packet_a, 0, sizeof packet_a);
                        packet_a.sequence = (uint16_t)sequence;
                        fields_to_packet(w, n, 6, P2FRAG_PACKET_B, &packet_a);
                        CHECK_EQ(p2frag_read_reassembled(&wire, big, whole_bytes, &packet_b), P2FRAG_READ_OK);
                        check_same_test_packet(&packet_b, &packet_a);
                        /* and the codec writes the same whole packet */
                        static uint8_t written[P2FRAG_MAX_PACKET_BYTES];
                        CHECK_EQ(p2frag_write_test_packet(&wire, &packet_a, written, sizeof written), whole_bytes);
                        CHECK(memcmp(written, big, (size_t)whole_bytes) == 0);
                    }
                    free(copy);
                }
                CHECK(found);
                complete++;
            } else {
                CHECK(lines < num_fragments);
                CHECK_EQ(delivered.count, 0);
                CHECK_EQ(p2frag_receiver_in_progress(r), 1);
            }
            free_receiver(r);
            if (chunk_test_failures != before) fprintf(stderr, "  ... group at vectors-fragments.txt line %d\n", i + 1);
            groups++;
        }
    }
    CHECK_EQ(groups, 2 * 15);
    CHECK_EQ(complete, 2 * 10);
}

/* Every E line, with what the rules (not the original receiver) do with it,
 * fed alone to a fresh receiver. */
static const struct {
    const char *tag;
    p2frag_read_result_t read;
    p2frag_verdict_t verdict;
    const char *why;
} edge_cases[] = {
    {"nf256_field0", P2FRAG_READ_NUM_FRAGMENTS_ZERO, P2FRAG_VERDICT_INVALID,
     "256 fragments written as a raw 8-bit count is 0: malformed (the original rejects it too)"},
    {"single_fragment", P2FRAG_READ_OK, P2FRAG_VERDICT_DELIVERED, "1 of 1: a complete packet"},
    {"ok_mid_fragment", P2FRAG_READ_OK, P2FRAG_VERDICT_ACCEPTED, "a full middle fragment"},
    {"ok_last_fragment", P2FRAG_READ_OK, P2FRAG_VERDICT_ACCEPTED, "a short last fragment"},
    {"nonlast_short_fragment", P2FRAG_READ_SHORT_FRAGMENT, P2FRAG_VERDICT_INVALID,
     "every fragment but the last carries 1024 bytes"},
    {"fragment_id_ge_num", P2FRAG_READ_FRAGMENT_ID_RANGE, P2FRAG_VERDICT_INVALID, "fragmentId >= numFragments"},
    {"num_fragments_zero", P2FRAG_READ_NUM_FRAGMENTS_ZERO, P2FRAG_VERDICT_INVALID, "numFragments 0"},
    {"nonzero_pad_bits", P2FRAG_READ_BAD_PADDING, P2FRAG_VERDICT_INVALID, "padding bits must be zero"},
    {"empty_fragment_data", P2FRAG_READ_FRAGMENT_SIZE, P2FRAG_VERDICT_INVALID, "a fragment carries 1..1024 bytes"},
    {"fragment_data_1025", P2FRAG_READ_FRAGMENT_SIZE, P2FRAG_VERDICT_INVALID, "a fragment carries 1..1024 bytes"},
    {"bad_crc", P2FRAG_READ_BAD_CRC, P2FRAG_VERDICT_INVALID, "CRC does not match protocol id 0x55667788"},
    {"seq_5000_vs_fresh_receiver_current0", P2FRAG_READ_OK, P2FRAG_VERDICT_ACCEPTED,
     "the original's one-sided window rejects it; a fresh receiver has no newest sequence yet, so the rules accept it"},
    {"regular_packet_1025_bytes_unfragmented", P2FRAG_READ_REGULAR_TOO_LARGE, P2FRAG_VERDICT_INVALID,
     "a regular datagram is at most 1024 bytes"},
};

static void test_vectors_edge_cases(void)
{
    const vector_file_t *file = vectors();
    p2frag_wire_config_t wire = default_wire();
    int seen = 0, differs_from_original = 0;
    for (int i = 0; i < file->count; i++) {
        if (file->lines[i][0] != 'E') continue;
        int before = chunk_test_failures;
        char *copy, *w[10];
        int n = split(file->lines[i], &copy, w, 10);
        CHECK_EQ(n, 8);
        int k = -1;
        for (size_t j = 0; j < sizeof edge_cases / sizeof edge_cases[0]; j++)
            if (strcmp(w[1], edge_cases[j].tag) == 0) k = (int)j;
        if (k < 0) {
            fprintf(stderr, "unknown E tag '%s': add it to edge_cases with what the rules say\n", w[1]);
            chunk_test_failures++;
            free(copy);
            continue;
        }
        uint8_t datagram[2048];
        int bytes = chunk_test_parse_hex(w[7], datagram, sizeof datagram);
        CHECK(bytes > 0);
        p2frag_packet_t parsed;
        parsed.regular = &packet_b;
        p2frag_read_result_t result = p2frag_read_packet(&wire, datagram, bytes, &parsed);
        CHECK_EQ(result, edge_cases[k].read);
        if (result != P2FRAG_READ_BAD_CRC && result != P2FRAG_READ_OK)
            CHECK_EQ(parsed.sequence, atoi(w[2])); /* the header was read before the rule failed */
        if (strcmp(w[3], "-") != 0 && result != P2FRAG_READ_BAD_CRC) {
            CHECK_EQ(parsed.fragment.fragment_id, atoi(w[3]));
            CHECK_EQ(parsed.fragment.num_fragments, atoi(w[4]));
            CHECK_EQ(parsed.fragment.fragment_bytes, atoi(w[5]));
        }
        p2frag_receiver_t *r = make_receiver();
        CHECK_EQ(p2frag_receiver_receive_packet(r, 0, datagram, bytes), edge_cases[k].verdict);
        CHECK_EQ(p2frag_receiver_invalid_counters(r)[edge_cases[k].read], edge_cases[k].read == P2FRAG_READ_OK ? 0 : 1);
        int accepted = edge_cases[k].verdict == P2FRAG_VERDICT_ACCEPTED || edge_cases[k].verdict == P2FRAG_VERDICT_DELIVERED;
        differs_from_original += accepted != atoi(w[6]);
        free_receiver(r);
        if (chunk_test_failures != before)
            fprintf(stderr, "  ... E line %d (%s: %s)\n", i + 1, edge_cases[k].tag, edge_cases[k].why);
        free(copy);
        seen++;
    }
    CHECK_EQ(seen, 18);
    /* Only the fresh-receiver window case: the original's one-sided check. */
    CHECK_EQ(differs_from_original, 1);
}

/* ---- receive rules on hand-made traffic ---- */

static int make_fragment(uint16_t sequence, int id, int count, int bytes, uint8_t fill, uint8_t *out)
{
    static uint8_t data[P2FRAG_FRAGMENT_SIZE];
    memset(data, fill, sizeof data);
    p2frag_wire_config_t wire = default_wire();
    p2frag_fragment_t f = {sequence, id, count, bytes, data};
    return p2frag_write_fragment(&wire, &f, out, P2FRAG_MAX_DATAGRAM_BYTES);
}

static p2frag_verdict_t feed(p2frag_receiver_t *r, uint16_t sequence, int id, int count, int bytes)
{
    uint8_t datagram[P2FRAG_MAX_DATAGRAM_BYTES];
    int n = make_fragment(sequence, id, count, bytes, (uint8_t)(id + sequence), datagram);
    return p2frag_receiver_receive_packet(r, 0, datagram, n);
}

static void test_receiver_out_of_order_and_duplicates(void)
{
    p2frag_receiver_t *r = make_receiver();
    CHECK_EQ(feed(r, 7, 2, 3, 10), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 7, 2, 3, 10), P2FRAG_VERDICT_DUPLICATE);
    CHECK_EQ(feed(r, 7, 0, 3, 1024), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 7, 1, 3, 1024), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(delivered.count, 1);
    CHECK_EQ(delivered.bytes[0], 2058);
    /* the bytes in fragment id order (bug 3 of the original copies the wrong one) */
    CHECK(delivered.last[0] == 7 && delivered.last[1024] == 8 && delivered.last[2048] == 9 && delivered.last[2057] == 9);
    /* delivered once: late copies of any fragment are dropped */
    CHECK_EQ(feed(r, 7, 1, 3, 1024), P2FRAG_VERDICT_DUPLICATE);
    CHECK_EQ(feed(r, 7, 0, 3, 1024), P2FRAG_VERDICT_DUPLICATE);
    CHECK_EQ(delivered.count, 1);
    const uint64_t *c = p2frag_receiver_counters(r);
    CHECK_EQ(c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_DUPLICATE], 1);
    CHECK_EQ(c[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_LATE], 2);
    free_receiver(r);
}

/* Bug 4 of the original: interleaved packets must both complete. */
static void test_receiver_interleaved(void)
{
    p2frag_receiver_t *r = make_receiver();
    for (int id = 0; id < 4; id++) {
        for (int seq = 300; seq < 303; seq++) /* also past 256: bug 2 */
            CHECK_EQ(feed(r, (uint16_t)seq, id, 4, id == 3 ? 5 : 1024),
                     id == 3 ? P2FRAG_VERDICT_DELIVERED : P2FRAG_VERDICT_ACCEPTED);
    }
    CHECK_EQ(delivered.count, 3);
    CHECK(delivered.sequence[0] == 300 && delivered.sequence[1] == 301 && delivered.sequence[2] == 302);
    CHECK_EQ(p2frag_receiver_counters(r)[P2FRAG_RECEIVER_COUNTER_PACKETS_EVICTED], 0);
    CHECK_EQ(p2frag_receiver_in_progress(r), 0);
    free_receiver(r);
}

static void test_receiver_count_conflict(void)
{
    p2frag_receiver_t *r = make_receiver();
    CHECK_EQ(feed(r, 1, 0, 3, 1024), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 1, 1, 2, 1024), P2FRAG_VERDICT_COUNT_CONFLICT);
    CHECK_EQ(feed(r, 1, 1, 3, 1024), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 1, 2, 3, 1), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(delivered.bytes[0], 2049);
    CHECK_EQ(p2frag_receiver_counters(r)[P2FRAG_RECEIVER_COUNTER_FRAGMENTS_COUNT_CONFLICT], 1);
    free_receiver(r);
}

/* A newer sequence in the slot of an unfinished older one evicts it (lost);
 * the older one's late fragments are then too old or superseded. */
static void test_receiver_eviction_and_window(void)
{
    p2frag_receiver_t *r = make_receiver();
    CHECK_EQ(feed(r, 10, 0, 2, 1024), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 266, 0, 2, 1024), P2FRAG_VERDICT_ACCEPTED); /* 266 % 256 == 10 */
    CHECK_EQ(p2frag_receiver_counters(r)[P2FRAG_RECEIVER_COUNTER_PACKETS_EVICTED], 1);
    /* 10 is exactly 256 behind 266: inside the window, but its slot is taken */
    CHECK_EQ(feed(r, 10, 1, 2, 7), P2FRAG_VERDICT_SUPERSEDED);
    /* 9 is 257 behind: too old */
    CHECK_EQ(feed(r, 9, 0, 1, 7), P2FRAG_VERDICT_TOO_OLD);
    /* 11 is 255 behind: fine, and completes */
    CHECK_EQ(feed(r, 11, 0, 1, 7), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(feed(r, 266, 1, 2, 3), P2FRAG_VERDICT_DELIVERED);
    /* a delivered packet's slot taken by a newer sequence is not a loss */
    CHECK_EQ(feed(r, 266 + 256, 0, 1, 3), P2FRAG_VERDICT_DELIVERED);
    const uint64_t *c = p2frag_receiver_counters(r);
    CHECK_EQ(c[P2FRAG_RECEIVER_COUNTER_PACKETS_EVICTED], 1);
    CHECK_EQ(c[P2FRAG_RECEIVER_COUNTER_TOO_OLD], 1);
    CHECK_EQ(c[P2FRAG_RECEIVER_COUNTER_SUPERSEDED], 1);
    /* the newest only moves on accepted datagrams: an invalid one far ahead changes nothing */
    uint8_t junk[P2FRAG_MAX_DATAGRAM_BYTES];
    int n = make_fragment(40000, 0, 1, 5, 0, junk);
    junk[0] ^= 1;
    CHECK_EQ(p2frag_receiver_receive_packet(r, 0, junk, n), P2FRAG_VERDICT_INVALID);
    CHECK_EQ(feed(r, 300, 0, 1, 3), P2FRAG_VERDICT_DELIVERED);
    free_receiver(r);
}

/* Across 65535 -> 0 nothing is too old, and 65535 - 200 still is not. */
static void test_receiver_wrap(void)
{
    p2frag_receiver_t *r = make_receiver();
    CHECK_EQ(feed(r, 65534, 0, 2, 1024), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 65535, 0, 1, 9), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(feed(r, 0, 0, 1, 9), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(feed(r, 1, 0, 2, 1024), P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(feed(r, 65534, 1, 2, 9), P2FRAG_VERDICT_DELIVERED); /* 3 behind the newest, across the wrap */
    CHECK_EQ(feed(r, 65535 - 200, 0, 1, 9), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(feed(r, 65535 - 300, 0, 1, 9), P2FRAG_VERDICT_TOO_OLD);
    CHECK_EQ(feed(r, 1, 1, 2, 9), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(delivered.count, 5);
    free_receiver(r);
}

/* The largest packet: 255 fragments, 261 120 bytes; and max_fragments. */
static void test_receiver_largest_packet(void)
{
    p2frag_receiver_t *r = make_receiver();
    for (int id = 254; id >= 0; id--)
        CHECK_EQ(feed(r, 42, id, 255, 1024), id == 0 ? P2FRAG_VERDICT_DELIVERED : P2FRAG_VERDICT_ACCEPTED);
    CHECK_EQ(delivered.count, 1);
    CHECK_EQ(delivered.bytes[0], P2FRAG_MAX_PACKET_BYTES);
    CHECK(delivered.last[254 * 1024] == (uint8_t)(254 + 42));
    free_receiver(r);

    p2frag_receiver_config_t config;
    p2frag_receiver_default_config(&config);
    config.max_fragments = 16;
    r = make_receiver_of(&config);
    CHECK_EQ(feed(r, 1, 0, 17, 1024), P2FRAG_VERDICT_TOO_MANY);
    CHECK_EQ(feed(r, 1, 0, 16, 1024), P2FRAG_VERDICT_ACCEPTED);
    free_receiver(r);
}

/* Regular datagrams: delivered once, subject to the window. */
static void test_receiver_regular(void)
{
    p2frag_receiver_t *r = make_receiver();
    p2frag_wire_config_t wire = default_wire();
    memset(&packet_a, 0, sizeof packet_a);
    packet_a.type = P2FRAG_PACKET_A;
    packet_a.sequence = 500;
    packet_a.a = 3;
    uint8_t datagram[64];
    int n = p2frag_write_test_packet(&wire, &packet_a, datagram, sizeof datagram);
    CHECK_EQ(n, 13);
    CHECK_EQ(p2frag_receiver_receive_packet(r, 0, datagram, n), P2FRAG_VERDICT_DELIVERED);
    CHECK_EQ(p2frag_receiver_receive_packet(r, 0, datagram, n), P2FRAG_VERDICT_DUPLICATE);
    CHECK_EQ(delivered.count, 1);
    CHECK_EQ(delivered.fragmented[0], 0);
    CHECK(delivered.last_bytes == 13 && memcmp(delivered.last, datagram, 13) == 0);
    /* fragments of a sequence delivered as a regular packet are late */
    CHECK_EQ(feed(r, 500, 0, 1, 4), P2FRAG_VERDICT_DUPLICATE);
    packet_a.sequence = 100; /* 400 behind */
    n = p2frag_write_test_packet(&wire, &packet_a, datagram, sizeof datagram);
    CHECK_EQ(p2frag_receiver_receive_packet(r, 0, datagram, n), P2FRAG_VERDICT_TOO_OLD);
    /* a value out of range in a regular body is invalid */
    packet_a.sequence = 501;
    n = p2frag_write_test_packet(&wire, &packet_a, datagram, sizeof datagram);
    datagram[6] |= 0x7c; /* a = 31 - 10 */
    p2frag_packet_t parsed;
    parsed.regular = &packet_b;
    CHECK_EQ(p2frag_read_packet(&wire, datagram, n, &parsed), P2FRAG_READ_BAD_CRC);
    chunk_test_fix_crc(P2FRAG_DEFAULT_PROTOCOL_ID, datagram, n);
    CHECK_EQ(p2frag_read_packet(&wire, datagram, n, &parsed), P2FRAG_READ_BAD_VALUE);
    CHECK_EQ(p2frag_receiver_receive_packet(r, 0, datagram, n), P2FRAG_VERDICT_INVALID);
    CHECK_EQ(p2frag_receiver_invalid_counters(r)[P2FRAG_READ_BAD_VALUE], 1);
    free_receiver(r);
}

/* Truncated datagrams of every length are rejected, never read past. */
static void test_read_truncated(void)
{
    p2frag_wire_config_t wire = default_wire();
    uint8_t datagram[P2FRAG_MAX_DATAGRAM_BYTES];
    int n = make_fragment(5, 0, 2, 1024, 1, datagram);
    for (int len = 0; len < 9; len++) {
        uint8_t *copy = malloc((size_t)len + 1); /* exact size for ASan */
        memcpy(copy, datagram, (size_t)len);
        chunk_test_fix_crc(P2FRAG_DEFAULT_PROTOCOL_ID, copy, len);
        p2frag_packet_t parsed;
        parsed.regular = NULL;
        p2frag_read_result_t res = p2frag_read_packet(&wire, copy, len, &parsed);
        CHECK(res == P2FRAG_READ_TRUNCATED);
        free(copy);
    }
    (void)n;
}

/* ---- the sender ---- */

typedef struct sent_t {
    int count;
    uint8_t datagrams[600][P2FRAG_MAX_DATAGRAM_BYTES];
    int bytes[600];
} sent_t;

static sent_t sent;

static void on_send(void *context, const uint8_t *datagram, int bytes)
{
    (void)context;
    if (sent.count < 600) {
        memcpy(sent.datagrams[sent.count], datagram, (size_t)bytes);
        sent.bytes[sent.count] = bytes;
    }
    sent.count++;
}

static p2frag_sender_t *make_sender(int interleave, double rate, uint16_t first)
{
    sent.count = 0;
    p2frag_sender_config_t config;
    p2frag_sender_default_config(&config);
    config.send = on_send;
    config.interleave = interleave;
    config.rate_bytes_per_second = rate;
    config.first_sequence = first;
    p2frag_sender_t *s = p2frag_sender_create(&config);
    CHECK(s != NULL);
    return s;
}

static void parse_sent(int index, p2frag_packet_t *parsed)
{
    p2frag_wire_config_t wire = default_wire();
    parsed->regular = &packet_b;
    CHECK_EQ(p2frag_read_packet(&wire, sent.datagrams[index], sent.bytes[index], parsed), P2FRAG_READ_OK);
}

static void test_sender_splits(void)
{
    p2frag_sender_t *s = make_sender(1, 0, 65535);
    for (int i = 0; i < 3000; i++) big[i] = (uint8_t)i;
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 3000), 65535);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 1), 0);
    CHECK_EQ(p2frag_sender_next_sequence(s), 1);
    p2frag_sender_update(s, 0);
    CHECK(!p2frag_sender_busy(s));
    CHECK_EQ(sent.count, 4);
    p2frag_packet_t p;
    int want_bytes[4] = {1024, 1024, 952, 1};
    for (int i = 0; i < 4; i++) {
        parse_sent(i, &p);
        CHECK_EQ(p.type, P2FRAG_PACKET_FRAGMENT);
        CHECK_EQ(p.sequence, i < 3 ? 65535 : 0);
        CHECK_EQ(p.fragment.fragment_id, i < 3 ? i : 0);
        CHECK_EQ(p.fragment.num_fragments, i < 3 ? 3 : 1);
        CHECK_EQ(p.fragment.fragment_bytes, want_bytes[i]);
        CHECK(memcmp(p.fragment.data, big + (i < 3 ? i * 1024 : 0), (size_t)want_bytes[i]) == 0);
    }
    /* a packet from outside the window leaves the next sequence alone */
    CHECK_EQ(p2frag_sender_queue_raw_at(s, 60000, big, 10), 60000);
    CHECK_EQ(p2frag_sender_next_sequence(s), 1);
    const uint64_t *c = p2frag_sender_counters(s);
    CHECK_EQ(c[P2FRAG_SENDER_COUNTER_PACKETS_SENT], 2);
    CHECK_EQ(c[P2FRAG_SENDER_COUNTER_FRAGMENTS_SENT], 4);
    CHECK_EQ(c[P2FRAG_SENDER_COUNTER_BYTES_SENT], 3001 + 4 * 9);
    p2frag_sender_destroy(s);
}

/* Test packets: whole up to 1024 bytes, fragments beyond, the sequence the
 * sender's own. */
static void test_sender_test_packets(void)
{
    p2frag_sender_t *s = make_sender(1, 0, 7);
    p2frag_wire_config_t wire = default_wire();
    memset(&packet_a, 0, sizeof packet_a);
    packet_a.type = P2FRAG_PACKET_B;
    packet_a.num_items = 1011; /* 1024 bytes */
    packet_a.sequence = 999;   /* ignored */
    CHECK_EQ(p2frag_sender_queue_test_packet(s, &packet_a), 7);
    packet_a.num_items = 1012; /* 1025 bytes: two fragments */
    CHECK_EQ(p2frag_sender_queue_test_packet(s, &packet_a), 8);
    p2frag_sender_update(s, 0);
    CHECK_EQ(sent.count, 3);
    CHECK_EQ(sent.bytes[0], 1024);
    p2frag_packet_t p;
    parse_sent(0, &p);
    CHECK_EQ(p.type, P2FRAG_PACKET_B);
    CHECK_EQ(p.sequence, 7);
    CHECK_EQ(packet_b.num_items, 1011);
    p2frag_receiver_t *r = make_receiver();
    for (int i = 0; i < 3; i++) p2frag_receiver_receive_packet(r, 0, sent.datagrams[i], sent.bytes[i]);
    CHECK_EQ(delivered.count, 2);
    CHECK_EQ(delivered.fragmented[1], 1);
    CHECK_EQ(delivered.bytes[1], 1025);
    CHECK_EQ(p2frag_read_reassembled(&wire, delivered.last, delivered.last_bytes, &packet_b), P2FRAG_READ_OK);
    CHECK_EQ(packet_b.sequence, 8);
    CHECK_EQ(packet_b.num_items, 1012);
    free_receiver(r);
    p2frag_sender_destroy(s);
}

/* interleave 3: fragments of three packets alternate. */
static void test_sender_interleave(void)
{
    p2frag_sender_t *s = make_sender(3, 0, 0);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 3 * 1024), 0);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 2 * 1024), 1);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 3 * 1024), 2);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 1 * 1024), 3);
    p2frag_sender_update(s, 0);
    /* seq/id as sent; packet 3 joins as soon as packet 1 is done:
     * 0/0 1/0 2/0 0/1 1/1 (1 done) 2/1 3/0 (3 done) 0/2 (0 done) 2/2 */
    static const int want[][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 0}, {0, 2}, {2, 2}};
    CHECK_EQ(sent.count, 9);
    for (int i = 0; i < 9 && i < sent.count; i++) {
        p2frag_packet_t p;
        parse_sent(i, &p);
        CHECK_EQ(p.sequence, want[i][0]);
        CHECK_EQ(p.fragment.fragment_id, want[i][1]);
    }
    p2frag_sender_destroy(s);
}

/* The budget: 10 240 B/s of 1033-byte datagrams is about 10 per second. */
static void test_sender_rate(void)
{
    p2frag_sender_t *s = make_sender(1, 10240, 0);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 50 * 1024), 0);
    for (int ms = 0; ms <= 2000; ms++) p2frag_sender_update(s, ms / 1000.0);
    CHECK(sent.count >= 20 && sent.count <= 22);
    p2frag_sender_destroy(s);
    /* queue full */
    p2frag_sender_config_t config;
    p2frag_sender_default_config(&config);
    config.send = on_send;
    config.queue_capacity = 2;
    s = p2frag_sender_create(&config);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 5), 0);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 5), 1);
    CHECK_EQ(p2frag_sender_queue_raw(s, big, 5), -1);
    CHECK_EQ(p2frag_sender_next_sequence(s), 2);
    CHECK_EQ(p2frag_sender_counters(s)[P2FRAG_SENDER_COUNTER_QUEUE_FULL], 1);
    p2frag_sender_destroy(s);
}

/* The truth files' digest, on the FIPS 180-4 examples and a 1 MB message. */
static void test_sha256(void)
{
    char hex[65];
    cs_sha256_hex((const uint8_t *)"", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    cs_sha256_hex((const uint8_t *)"abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    cs_sha256_hex((const uint8_t *)two, strlen(two), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    static uint8_t million[1000000];
    memset(million, 'a', sizeof million);
    cs_sha256_hex(million, sizeof million, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
}

const chunk_test_t p2frag_tests[] = {
    {"sha256", test_sha256},
    {"vectors_regular", test_vectors_regular},
    {"vectors_fragments", test_vectors_fragments},
    {"vectors_reassembly", test_vectors_reassembly},
    {"vectors_edge_cases", test_vectors_edge_cases},
    {"receiver_out_of_order_and_duplicates", test_receiver_out_of_order_and_duplicates},
    {"receiver_interleaved", test_receiver_interleaved},
    {"receiver_count_conflict", test_receiver_count_conflict},
    {"receiver_eviction_and_window", test_receiver_eviction_and_window},
    {"receiver_wrap", test_receiver_wrap},
    {"receiver_largest_packet", test_receiver_largest_packet},
    {"receiver_regular", test_receiver_regular},
    {"read_truncated", test_read_truncated},
    {"sender_splits", test_sender_splits},
    {"sender_test_packets", test_sender_test_packets},
    {"sender_interleave", test_sender_interleave},
    {"sender_rate", test_sender_rate},
    {NULL, NULL},
};
