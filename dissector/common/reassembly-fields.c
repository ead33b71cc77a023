/* common/reassembly-fields.c
 * The reassembly fields of a protocol, registered under its abbreviation
 * (common/reassembly-fields.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "reassembly-fields.h"

/* Appends one field to r->hf: id, label, <prefix><suffix>, type and display.
 * The abbreviation is allocated once and lives as long as the registration. */
static void add_field(cs_reassembly_fields_t *r, int *n, int *id, const char *label, const char *prefix,
                      const char *suffix, enum ftenum type, int display)
{
    hf_register_info field = { id, { label, g_strconcat(prefix, suffix, NULL), type, display, NULL, 0x0, NULL,
                                     HFILL } };

    *id = -1;
    r->hf[(*n)++] = field;
}

void cs_reassembly_fields_register(int proto, cs_reassembly_fields_t *r, const cs_reassembly_names_t *names)
{
    const char *p = names->prefix;
    gint *ett[] = { &r->ett_fragment, &r->ett_fragments };
    int n = 0;

    add_field(r, &n, &r->hf_fragments, names->fragments, p, ".fragments", FT_NONE, BASE_NONE);
    add_field(r, &n, &r->hf_fragment, names->fragment, p, ".fragment", FT_FRAMENUM, BASE_NONE);
    add_field(r, &n, &r->hf_overlap, "Fragment overlap", p, ".fragment.overlap", FT_BOOLEAN, BASE_NONE);
    add_field(r, &n, &r->hf_overlap_conflicts,
              names->overlap_conflicts ? names->overlap_conflicts : "Conflicting data in fragment overlap",
              p, ".fragment.overlap.conflicts", FT_BOOLEAN, BASE_NONE);
    add_field(r, &n, &r->hf_multiple_tails,
              names->multiple_tails ? names->multiple_tails : "Multiple tail fragments found",
              p, ".fragment.multiple_tails", FT_BOOLEAN, BASE_NONE);
    add_field(r, &n, &r->hf_too_long, "Fragment too long", p, ".fragment.too_long_fragment", FT_BOOLEAN,
              BASE_NONE);
    add_field(r, &n, &r->hf_error, "Defragmentation error", p, ".fragment.error", FT_FRAMENUM, BASE_NONE);
    add_field(r, &n, &r->hf_count, "Fragment count", p, ".fragment.count", FT_UINT32, BASE_DEC);
    add_field(r, &n, &r->hf_reassembled_in, "Reassembled in", p, ".reassembled_in", FT_FRAMENUM, BASE_NONE);
    add_field(r, &n, &r->hf_reassembled_length, "Reassembled length", p, ".reassembled.length", FT_UINT32,
              BASE_DEC);
    if (names->with_data)
        add_field(r, &n, &r->hf_reassembled_data, "Reassembled data", p, ".reassembled.data", FT_BYTES,
                  BASE_NONE);
    else
        r->hf_reassembled_data = -1;

    r->ett_fragment = -1;
    r->ett_fragments = -1;
    proto_register_field_array(proto, r->hf, n);
    proto_register_subtree_array(ett, array_length(ett));

    r->items = (fragment_items){
        &r->ett_fragment, &r->ett_fragments, &r->hf_fragments, &r->hf_fragment, &r->hf_overlap,
        &r->hf_overlap_conflicts, &r->hf_multiple_tails, &r->hf_too_long, &r->hf_error, &r->hf_count,
        &r->hf_reassembled_in, &r->hf_reassembled_length, names->with_data ? &r->hf_reassembled_data : NULL,
        names->tag
    };
}
