/* chunk-app.c: the chunk protocol's part of the programs. See chunk-app.h. */
#include "chunk-app.h"

#include <assert.h>
#include <stdio.h>

#include "app.h"
#include "platform.h"

int chunk_app_wire_option(const char *program, int opt, const char *text, chunk_wire_config_t *wire,
                           uint16_t *first_chunk_id)
{
    switch (opt) {
    case CHUNK_OPT_SLICE_SIZE:
        wire->slice_size = (int)app_int_arg(program, "slice-size", text, 1, CHUNK_SLICE_SIZE_LIMIT, "1..8192");
        break;
    case CHUNK_OPT_MAX_SLICES:
        wire->max_slices = (int)app_int_arg(program, "max-slices", text, 1, CHUNK_MAX_SLICES_LIMIT, "1..1024");
        break;
    case CHUNK_OPT_PROTOCOL_ID:
        wire->protocol_id =
            (uint32_t)app_int_arg(program, "protocol-id", text, 0, 0xffffffffLL, "a 32-bit number, e.g. 0x11223344");
        break;
    case CHUNK_OPT_FIRST_CHUNK_ID:
        assert(first_chunk_id);
        *first_chunk_id = (uint16_t)app_int_arg(program, "first-chunk-id", text, 0, 65535, "0..65535");
        break;
    default: return 0;
    }
    return 1;
}

void chunk_app_fault_option(const char *program, int opt, const char *text, chunk_faults_t *faults)
{
    long long value;
    if (opt == CHUNK_OPT_DROP_ACKS) {
        faults->drop_acks[0] = faults->drop_acks[1] = 1;
        return;
    }
    assert(opt == CHUNK_OPT_DROP_SLICE);
    if (platform_parse_int(text, 0, CHUNK_MAX_SLICES_LIMIT - 1, &value) != 0)
        app_bad_argument(program, "bad --drop-slice '%s': expected a slice id, 0..%d", text,
                         CHUNK_MAX_SLICES_LIMIT - 1);
    faults->drop_slice_id[0] = faults->drop_slice_id[1] = (int)value;
}

void chunk_app_check_faults(const char *program, const chunk_faults_t *faults)
{
    for (int d = 0; d < 2; d++)
        if (faults->drop_slice_id[d] >= faults->wire.max_slices)
            app_bad_argument(program, "--drop-slice %d is not a slice id below --max-slices %d",
                             faults->drop_slice_id[d], faults->wire.max_slices);
}

void chunk_app_print_invalid(const uint64_t *invalid)
{
    for (int i = 1; i < CHUNK_READ_RESULT_COUNT; i++)
        if (invalid[i])
            fprintf(stderr, "  dropped as invalid: %s %llu\n", chunk_read_result_name((chunk_read_result_t)i),
                    (unsigned long long)invalid[i]);
}
