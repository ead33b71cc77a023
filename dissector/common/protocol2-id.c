/* common/protocol2-id.c
 * protocol2's protocol id decisions (the configured id, the one a
 * conversation learns) and its port preferences (interface: protocol2.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "protocol2.h"
#include "protocol2-int.h"

#include <epan/prefs.h>

void dp2_id_decide(dp2_id_state_t *st, const dp2_protocol_t *p, const dp2_frame_t *f, guint32 frame,
                  gboolean plausible, gboolean update, dp2_id_t *id)
{
    guint32 implied = f->implied_id;

    memset(id, 0, sizeof *id);
    id->crc_known = f->crc_known;
    id->implied_id = implied;
    id->cfg_id = *p->cfg_id;
    if (!f->crc_known) {
        id->status = DP2_ID_UNKNOWN;
        return;
    }
    if (implied == *p->cfg_id) {
        if (update && !st->id_frame) {
            st->id_frame = frame;
            st->id = implied;
        }
        id->status = DP2_ID_GOOD;
        return;
    }
    if (st->id_frame && frame >= st->id_frame) {
        id->status = implied == st->id ? DP2_ID_OTHER : DP2_ID_BAD;
        if (id->status == DP2_ID_BAD)
            id->conv_id = st->id;
        return;
    }
    /* Nothing established yet at this frame. A second well-formed packet
     * implying the same id establishes it: a corrupt packet implies a random
     * id, so two agreeing by chance is a 1 in 2^32 event. */
    if (update && plausible) {
        for (guint i = 0; i < st->n_candidates; i++) {
            if (st->candidates[i] == implied) {
                st->id_frame = frame;
                st->id = implied;
                id->status = DP2_ID_OTHER;
                return;
            }
        }
        if (st->n_candidates < array_length(st->candidates))
            st->candidates[st->n_candidates++] = implied;
    }
    id->status = DP2_ID_UNCONFIRMED;
}

void dp2_id_check(const dp2_protocol_t *p, const dp2_frame_t *f, dp2_id_t *id)
{
    memset(id, 0, sizeof *id);
    id->crc_known = f->crc_known;
    id->implied_id = f->implied_id;
    id->cfg_id = *p->cfg_id;
    if (!f->crc_known)
        id->status = DP2_ID_UNKNOWN;
    else
        id->status = f->implied_id == *p->cfg_id ? DP2_ID_GOOD : DP2_ID_WRONG;
}


/* ---- Ports -------------------------------------------------------------- */

void dp2_ports_register(dp2_protocol_t *p, const char *ports)
{
    dissector_add_uint_range_with_preference("udp.port", ports, p->handle);
    p->ports_applied = range_copy(wmem_epan_scope(), prefs_get_range_value(p->filter_name, "udp.port"));
    dissector_add_for_decode_as("udp.port", p->handle);
}

/* Wireshark 4.0 applies a changed port range from -o or the preferences
 * file in prefs.c's set_pref, which adds the new range but then deletes the
 * new range again instead of the old one, so the old ports (chunk's default
 * 40000) stayed the protocol's. The GUI's preference dialog deletes the old
 * ones itself; then there is nothing left to do here. A Decode As of a port
 * the new range drops cannot be told from a left-over and is dropped too. */
void dp2_ports_apply(dp2_protocol_t *p)
{
    dissector_table_t udp = find_dissector_table("udp.port");
    range_t *old = p->ports_applied, *now;

    if (!old || !udp)
        return;
    now = prefs_get_range_value(p->filter_name, "udp.port");
    if (!now || ranges_are_equal(old, now))
        return;
    for (guint i = 0; i < old->nranges; i++) {
        /* 64-bit counter: a range may end at the type's maximum. */
        for (guint64 port = old->ranges[i].low; port <= old->ranges[i].high; port++) {
            if (!value_is_in_range(now, (guint32)port) &&
                dissector_get_uint_handle(udp, (guint32)port) == p->handle)
                dissector_delete_uint("udp.port", (guint32)port, p->handle);
        }
    }
    wmem_free(wmem_epan_scope(), old);
    p->ports_applied = range_copy(wmem_epan_scope(), now);
}
