/* Runs the named tests of every test_*.c file. Each file defines a table
 * `const chunk_test_t <group>_tests[]` ending with {NULL, NULL}, listed in
 * tests/groups.h. Usage: test_chunk [--spec DIR] [--list] [group|group/test ...] */
#include <stdlib.h>
#include <string.h>

#include "chunk.h"
#include "protocol2.h"
#include "test.h"

int chunk_test_failures = 0;
const char *chunk_test_spec_dir = NULL;
unsigned long long chunk_test_seed = 1;

#define CHUNK_TEST_GROUP(g) extern const chunk_test_t g##_tests[];
#include "groups.h"
#undef CHUNK_TEST_GROUP

static const struct { const char *name; const chunk_test_t *tests; } groups[] = {
#define CHUNK_TEST_GROUP(g) {#g, g##_tests},
#include "groups.h"
#undef CHUNK_TEST_GROUP
};

void *chunk_test_require(void *object, const char *what)
{
    CHECK(object != NULL);
    if (!object) {
        fprintf(stderr, "cannot create the %s under test\n", what);
        abort();
    }
    return object;
}

void chunk_test_fix_crc(uint32_t protocol_id, uint8_t *packet, int bytes)
{
    if (bytes < P2_CRC_BYTES) return;   /* no CRC to fix */
    uint32_t crc = p2_packet_crc(protocol_id, packet, bytes);
    for (int i = 0; i < P2_CRC_BYTES; i++) packet[i] = (uint8_t)(crc >> (8 * i));
}

int chunk_test_write_ack(const chunk_wire_config_t *wire, uint16_t chunk_id, int num_slices, const char *bits,
                         uint8_t *out, int out_size)
{
    static chunk_ack_packet_t ack;
    memset(&ack, 0, sizeof ack);
    ack.chunk_id = chunk_id;
    ack.num_slices = num_slices;
    int given = bits ? (int)strlen(bits) : num_slices;
    for (int i = 0; i < num_slices; i++) ack.acked[i] = (uint8_t)(bits ? i < given && bits[i] == '1' : 1);
    return chunk_write_ack_packet(wire, &ack, out, out_size);
}

FILE *chunk_test_open_vectors(const char *name, char *path, size_t path_size)
{
    CHECK(chunk_test_spec_dir != NULL);
    if (!chunk_test_spec_dir) {
        fprintf(stderr, "no spec directory: pass --spec DIR or set CHUNK_SPEC_DIR\n");
        return NULL;
    }
    snprintf(path, path_size, "%s/%s", chunk_test_spec_dir, name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) fprintf(stderr, "cannot open test vectors %s\n", path);
    return f;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int chunk_test_parse_hex(const char *hex, unsigned char *out, int capacity)
{
    int n = 0;
    while (*hex) {
        if (*hex == ' ') {
            hex++;
            continue;
        }
        int hi = hex_value(hex[0]), lo = hi < 0 ? -1 : hex_value(hex[1]);
        if (hi < 0 || lo < 0 || n >= capacity) return -1;
        out[n++] = (unsigned char)(hi << 4 | lo);
        hex += 2;
    }
    return n;
}

static int selected(const char *group, const char *test, int argc, char **argv, int first)
{
    if (first >= argc) return 1;
    for (int i = first; i < argc; i++) {
        char full[256];
        snprintf(full, sizeof full, "%s/%s", group, test);
        if (strcmp(argv[i], group) == 0 || strcmp(argv[i], full) == 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int first = 1, list = 0;
    chunk_test_spec_dir = getenv("CHUNK_SPEC_DIR");
    if (getenv("CHUNK_TEST_SEED")) chunk_test_seed = strtoull(getenv("CHUNK_TEST_SEED"), NULL, 0);
    while (first < argc && strncmp(argv[first], "--", 2) == 0) {
        if (strcmp(argv[first], "--list") == 0) {
            list = 1;
            first++;
        } else if (strcmp(argv[first], "--spec") == 0 && first + 1 < argc) {
            chunk_test_spec_dir = argv[first + 1];
            first += 2;
        } else if (strcmp(argv[first], "--help") == 0) {
            printf("usage: %s [--spec DIR] [--list] [group | group/test ...]\n", argv[0]);
            return 0;
        } else {
            fprintf(stderr, "%s: unknown option %s (try --help)\n", argv[0], argv[first]);
            return 2;
        }
    }
    int run = 0, failed = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        for (const chunk_test_t *t = groups[g].tests; t->name; t++) {
            if (!selected(groups[g].name, t->name, argc, argv, first)) continue;
            if (list) {
                printf("%s/%s\n", groups[g].name, t->name);
                continue;
            }
            int before = chunk_test_failures;
            t->fn();
            run++;
            if (chunk_test_failures != before) {
                failed++;
                printf("FAIL %s/%s\n", groups[g].name, t->name);
            } else {
                printf("ok   %s/%s\n", groups[g].name, t->name);
            }
        }
    }
    if (list) return 0;
    if (run == 0) {
        fprintf(stderr, "no test matched\n");
        return 2;
    }
    printf("%d passed, %d failed\n", run - failed, failed);
    if (failed) printf("CHUNK_TEST_SEED=%llu\n", chunk_test_seed);
    return failed ? 1 : 0;
}
