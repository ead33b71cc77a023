/* common/reassembly-fields.h
 * The fields and subtrees of a reassembly that Wireshark's fragment_items
 * names (the fragment list, each fragment, the overlap, tail, length and
 * error flags, the count, "reassembled in", the reassembled length and data),
 * registered in one call under a protocol's abbreviation, with the
 * fragment_items that process_reassembled_data() and show_fragment_tree()
 * take. Every reassembling protocol of the plugin but chunk registers them
 * this way (chunk's slices have their own names and order, in
 * chunk/analysis.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef REASSEMBLY_FIELDS_H
#define REASSEMBLY_FIELDS_H

#include <epan/packet.h>
#include <epan/reassemble.h>

/* What differs between protocols. The labels a protocol leaves NULL are the
 * common ones: "Conflicting data in fragment overlap", "Multiple tail
 * fragments found". */
typedef struct cs_reassembly_names {
    const char *prefix;            /* abbreviations <prefix>.fragments, <prefix>.fragment.overlap, ... */
    const char *fragments;         /* label of the fragment list ("Fragments") */
    const char *fragment;          /* label of one fragment ("Fragment") */
    const char *tag;               /* fragment_items' tag: the list's text in the tree */
    const char *overlap_conflicts; /* NULL: the common label */
    const char *multiple_tails;    /* NULL: the common label */
    gboolean with_data;            /* also <prefix>.reassembled.data (FT_BYTES) */
} cs_reassembly_names_t;

/* A protocol's reassembly fields: static in the protocol (the field
 * registrations live in it), filled by cs_reassembly_fields_register(). */
typedef struct cs_reassembly_fields {
    int hf_fragments;
    int hf_fragment;
    int hf_overlap;
    int hf_overlap_conflicts;
    int hf_multiple_tails;
    int hf_too_long;
    int hf_error;
    int hf_count;
    int hf_reassembled_in;
    int hf_reassembled_length;
    int hf_reassembled_data;
    gint ett_fragment;
    gint ett_fragments;
    fragment_items items;          /* for process_reassembled_data() and show_fragment_tree() */
    hf_register_info hf[11];
} cs_reassembly_fields_t;

/* Registers the fields under protocol proto, in fragment_items' order (the
 * data field last, when names->with_data), and the two subtrees, and fills
 * r->items. Call it from the protocol's proto_register_ function, where the
 * fields are to stand among the protocol's own: tshark -G fields lists the
 * fields, and the expert infos with them, in the order they were
 * registered. */
void cs_reassembly_fields_register(int proto, cs_reassembly_fields_t *r, const cs_reassembly_names_t *names);

#endif /* REASSEMBLY_FIELDS_H */
