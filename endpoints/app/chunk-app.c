/* chunk-app.c: the chunk protocol's part of the programs. See chunk-app.h. */
#include "chunk-app.h"

#include <assert.h>
#include <stdio.h>

#include "app.h"
#include "platform.h"

void chunk_app_wire_option(const char *program, int opt, const char *text, chunk_wire_config_t *wire,
                           uint16_t *first_chunk_id)
{
    long long value;
    switch (opt) {
    case CHUNK_OPT_SLICE_SIZE:
        if (platform_parse_int(text, 1, CHUNK_SLICE_SIZE_LIMIT, &value) != 0)
            app_bad_argument(program, "bad --slice-size '%s': expected 1..8192", text);
        wire->slice_size = (int)value;
        break;
    case CHUNK_OPT_MAX_SLICES:
        if (platform_parse_int(text, 1, CHUNK_MAX_SLICES_LIMIT, &value) != 0)
            app_bad_argument(program, "bad --max-slices '%s': expected 1..1024", text);
        wire->max_slices = (int)value;
        break;
    case CHUNK_OPT_PROTOCOL_ID:
        if (platform_parse_int(text, 0, 0xffffffffLL, &value) != 0)
            app_bad_argument(program, "bad --protocol-id '%s': expected a 32-bit number, e.g. 0x11223344",
                                   text);
        wire->protocol_id = (uint32_t)value;
        break;
    default:
        assert(opt == CHUNK_OPT_FIRST_CHUNK_ID && first_chunk_id);
        if (platform_parse_int(text, 0, 65535, &value) != 0)
            app_bad_argument(program, "bad --first-chunk-id '%s': expected 0..65535", text);
        *first_chunk_id = (uint16_t)value;
        break;
    }
}

void chunk_app_print_invalid(const uint64_t *invalid)
{
    for (int i = 1; i < CHUNK_READ_RESULT_COUNT; i++)
        if (invalid[i])
            fprintf(stderr, "  dropped as invalid: %s %llu\n", chunk_read_result_name((chunk_read_result_t)i),
                    (unsigned long long)invalid[i]);
}
