/* common/register-util.h
 * What every registration of the plugin does with its arrays: the fields,
 * subtrees and expert infos of a protocol (its decoder's, and its
 * analysis' under the same protocol), and its reassembly fields if it
 * reassembles, in one call.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef REGISTER_UTIL_H
#define REGISTER_UTIL_H

#include <epan/packet.h>
#include <epan/expert.h>

#include "analysis-util.h"
#include "reassembly-fields.h"

/* Registers the fields hf, the subtrees ett and the expert infos ei (arrays:
 * their lengths are taken from them) of protocol proto, as
 * proto_register_field_array, proto_register_subtree_array,
 * expert_register_protocol and expert_register_field_array do, and returns
 * the expert module. */
#define CS_REGISTER_ARRAYS(proto, hf, ett, ei) \
    cs_register_arrays((proto), (hf), array_length(hf), NULL, NULL, (ett), array_length(ett), (ei), \
                       array_length(ei))

/* As CS_REGISTER_ARRAYS, with the reassembly fields reasm named by names
 * (common/reassembly-fields.h) right after the fields hf: tshark -G fields
 * lists fields and expert infos in the order they were registered. */
#define CS_REGISTER_ARRAYS_REASSEMBLY(proto, hf, reasm, names, ett, ei) \
    cs_register_arrays((proto), (hf), array_length(hf), (reasm), (names), (ett), array_length(ett), (ei), \
                       array_length(ei))

static inline expert_module_t *cs_register_arrays(int proto, hf_register_info *hf, int n_hf,
                                                  cs_reassembly_fields_t *reasm, const cs_reassembly_names_t *names,
                                                  gint *const *ett, int n_ett, ei_register_info *ei, int n_ei)
{
    expert_module_t *em;

    proto_register_field_array(proto, hf, n_hf);
    if (reasm)
        cs_reassembly_fields_register(proto, reasm, names);
    proto_register_subtree_array(ett, n_ett);
    au_expert_detail_register(proto);
    em = expert_register_protocol(proto);
    expert_register_field_array(em, ei, n_ei);
    return em;
}

#endif /* REGISTER_UTIL_H */
