/* common/single-pass.c
 * Memory in tshark's single pass: the one place where the analyses depend on
 * tshark's internals (docs/architecture.md, "Single pass").
 *
 * Why. Frames are never revisited in tshark's single pass (`tshark -r`
 * without -2), so keeping a record per frame and every reassembled packet
 * for the whole file only costs memory: the reassembled data alone is as
 * large as the capture's payload, and Wireshark's reassembly table keeps it
 * and its bookkeeping (a fragment_head and fragment_items, 135-215 bytes a
 * piece) until the file closes. On the benchmark captures this path takes
 * peak memory from 1.38x to 1.09x of tshark without the plugin for chunk,
 * and from 4.2x to about 1.1x for p2frag (bench/RESULTS.md).
 *
 * How the pass is recognised: tshark's single pass dissects every frame in
 * the same frame_data (a local of its packet loop) and runs the taps (a
 * probe listener of ours sees them) or fills columns. The first pass of its
 * -2 mode uses one frame_data too, but with neither taps nor columns;
 * Wireshark keeps a frame_data per frame. Both keep everything. A file's
 * first frame is never seen as the single pass.
 *
 * What the analyses do there (chunk/single-pass-buffer.c, p2frag/dissect.c):
 * per-frame records live in the packet scope; a reassembly begun in the
 * single pass goes to a buffer of the protocol's own, handed to a tvb freed
 * with the completing packet, whose frame shows the same tree
 * (cs_sp_show_pieces) and data source as the table gives; the data of a
 * packet the table reassembled is freed here once its frame has been
 * dissected and tapped.
 *
 * What guards it: each protocol's goldens compare the one-pass -V output
 * with the two-pass one (chunk: dissector.goldens; p2frag:
 * p2frag.truth), analysis.truth checks every exported chunk
 * byte for byte, and dissector.single_pass that the pass is recognised:
 * `tshark -q -z chunkshark,single_pass` counts the analysed frames taken as
 * the single pass. Each protocol can be kept off this path with its
 * <protocol>.single_pass preference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>

#include <epan/packet.h>
#include <epan/reassemble.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <wsutil/str_util.h>

#include "ws-compat.h"
#include "single-pass.h"
#include "stats-util.h"

static gboolean transient;          /* this frame is in tshark's single pass */
static gboolean taken;              /* what cs_sp_begin_packet() returned last (with `allowed`) */
static gboolean counted;            /* this frame is counted in n_single */
static const frame_data *prev_fd;
static guint32 prev_num;
/* Reassembled data to drop at the next frame (a few a frame: reliable's
 * packet and yojimbo's block in one frame), and the frame that left it. */
#define CS_SP_MAX_PENDING 8
static fragment_head *pending_free[CS_SP_MAX_PENDING];
static guint n_pending;
static guint32 pending_num;
static int probe_tap = -1;          /* taps run for this frame? */
static guint32 probe_seen_num;
/* For -z chunkshark,single_pass: first visits of analysed packets, and
 * those taken as the single pass. */
static guint32 n_analysed, n_single;

void cs_sp_init(void)
{
    transient = FALSE;
    taken = FALSE;
    counted = FALSE;
    prev_fd = NULL;
    prev_num = 0;
    n_pending = 0;
    pending_num = 0;
    probe_seen_num = 0;
    n_analysed = 0;
    n_single = 0;
}

static tap_packet_status probe_packet(void *tapdata _U_, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data _U_, tap_flags_t flags _U_)
{
    probe_seen_num = pinfo->num;
    return TAP_PACKET_DONT_REDRAW;
}

static void drop_pending(void)
{
    /* The reassembled tvbs of that frame are gone with its packet; the table
     * keeps the (small) heads, without the data. */
    for (guint i = 0; i < n_pending; i++) {
        if (pending_free[i]->tvb_data && !(pending_free[i]->flags & FD_SUBSET_TVB))
            tvb_free(pending_free[i]->tvb_data);
        pending_free[i]->tvb_data = NULL;
    }
    n_pending = 0;
}

gboolean cs_sp_begin_packet(packet_info *pinfo, gboolean allowed)
{
    /* A protocol layered on another that analyses too (reliable in netcode,
     * yojimbo in reliable) calls again for the same frame: same answer. */
    gboolean again = pinfo->fd == prev_fd && pinfo->num == prev_num;

    if (!PINFO_FD_VISITED(pinfo) && !again) {
        transient = pinfo->fd == prev_fd && pinfo->num != prev_num &&
                    (pinfo->cinfo != NULL || (prev_num && probe_seen_num == prev_num));
        counted = FALSE;
        prev_fd = pinfo->fd;
        prev_num = pinfo->num;
        n_analysed++;
    }
    if (n_pending && pending_num != pinfo->num)
        drop_pending();
    taken = !PINFO_FD_VISITED(pinfo) && transient && allowed;
    if (!taken)
        return FALSE;
    if (!counted) {
        n_single++;
        counted = TRUE;
    }
    return TRUE;
}

void cs_sp_end_packet(packet_info *pinfo)
{
    if (!PINFO_FD_VISITED(pinfo))
        tap_queue_packet(probe_tap, pinfo, NULL);
}

void cs_sp_free_later(fragment_head *fd)
{
    /* In the single pass, for the protocol that called cs_sp_begin_packet()
     * last (its preference on); the frame is the one that call saw. */
    if (!taken)
        return;
    if (n_pending && pending_num != prev_num)
        drop_pending();
    for (guint i = 0; i < n_pending; i++)
        if (pending_free[i] == fd)
            return;
    if (n_pending == CS_SP_MAX_PENDING)
        return;                     /* kept by the table, as in two passes */
    pending_num = prev_num;
    pending_free[n_pending++] = fd;
}

/* Item for item what show_fragment_seq_tree() in epan/reassemble.c shows:
 * the output must not depend on the number of passes. */
void cs_sp_show_pieces(packet_info *pinfo, proto_tree *tree, tvbuff_t *rtvb, guint32 count,
                       guint32 piece_size, guint32 last_len, const guint32 *frames,
                       const fragment_items *fit)
{
    guint32 total = tvb_captured_length(rtvb);
    pinfo->fragmented = FALSE;
    /* Without a tree neither the items nor the frames marked as depended
     * upon reach anyone: the marks are read only for frames that pass a
     * display filter (tshark's first of two passes, the GUI), which needs
     * a tree, and this runs only in tshark's single pass. */
    if (!tree)
        return;
    proto_item *fi = proto_tree_add_item(tree, *fit->hf_fragments, rtvb, 0, -1, ENC_NA);
    proto_item_set_generated(fi);
    proto_tree *ft = proto_item_add_subtree(fi, *fit->ett_fragments);
    for (guint32 i = 0; i < count; i++) {
        guint32 off = i * piece_size;
        guint32 len = i == count - 1 ? last_len : piece_size;
        guint32 frame = frames[i];
        if (i == 0)
            proto_item_set_text(fi, "%u %s (%u byte%s): ", count,
                                proto_registrar_get_name(count == 1 ? *fit->hf_fragment : *fit->hf_fragments),
                                total, plurality(total, "", "s"));
        else
            proto_item_append_text(fi, ", ");
        proto_item_append_text(fi, "#%u(%u)", frame, len);
        proto_item *fei;
        if (len == 0)
            fei = proto_tree_add_uint_format(ft, *fit->hf_fragment, rtvb, off, 0, frame,
                                             "Frame: %u (no data)", frame);
        else
            fei = proto_tree_add_uint_format(ft, *fit->hf_fragment, rtvb, off, len, frame,
                                             "Frame: %u, payload: %u-%u (%u byte%s)", frame, off,
                                             off + len - 1, len, plurality(len, "", "s"));
        proto_item_set_generated(fei);
        CS_MARK_DEPENDED_UPON(pinfo, frame);
    }
    proto_item_set_generated(proto_tree_add_uint(ft, *fit->hf_fragment_count, rtvb, 0, 0, count));
    proto_item_set_generated(proto_tree_add_uint(ft, *fit->hf_reassembled_length, rtvb, 0, 0, total));
    if (fit->hf_reassembled_data)
        proto_item_set_generated(proto_tree_add_item(ft, *fit->hf_reassembled_data, rtvb, 0, total, ENC_NA));
}

/* -z chunkshark,single_pass: how many analysed packets the protocols took as
 * tshark's single pass (the first frame of a file never is). */
static tap_packet_status count_packet(void *tapdata _U_, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                      const void *data _U_, tap_flags_t flags _U_)
{
    return TAP_PACKET_REDRAW;
}

static void count_draw(void *tapdata _U_)
{
    printf("chunkshark single pass: %u of %u analysed packets\n", n_single, n_analysed);
}

static void count_finish(void *tapdata _U_)
{
}

static CS_TAP_INIT_RET count_init(const char *opt_arg, void *userdata _U_)
{
    static int listener;   /* the listener's identity */

    if (!su_text_listen(opt_arg, "chunkshark,single_pass", "chunkshark_single_pass_probe", &listener, NULL,
                        count_packet, count_draw, count_finish))
        CS_TAP_INIT_FAILED;
    CS_TAP_INIT_OK;
}

void cs_sp_register(void)
{
    static stat_tap_ui count_ui;

    if (probe_tap != -1)
        return;
    probe_tap = register_tap("chunkshark_single_pass_probe");
    su_register_text_ui(&count_ui, "tshark single pass (packets)", "chunkshark,single_pass", count_init);
}

void cs_sp_register_pref(module_t *m, ws_cb_bool *var)
{
    /* Labelled as what it is in the GUI's preference page, where it does
     * nothing: Wireshark always keeps the records it reads back. */
    prefs_register_bool_preference(m, "single_pass", "tshark only: save memory in its single pass (no effect in Wireshark)",
        "tshark only, no effect in Wireshark: in tshark's single pass (tshark -r without -2) keep no "
        "analysis record per frame and reassemble in buffers freed as soon as a packet is complete; the "
        "output is the same either way. Off: keep everything for the whole file, as Wireshark and tshark -2 do",
        var);
}

void cs_sp_handoff(void)
{
    /* The probe that tells tshark's single pass (taps run) from the first
     * pass of -2 (no taps); it needs neither tree nor columns. Once: the
     * handoffs run again when preferences change. */
    static gboolean registered;
    if (registered)
        return;
    registered = TRUE;
    GString *err = register_tap_listener("chunkshark_single_pass_probe", &probe_tap, NULL,
                                         TL_IS_DISSECTOR_HELPER, NULL, probe_packet, NULL, NULL);
    if (err) {
        ws_warning("chunkshark: cannot register the single-pass probe tap: %s", err->str);
        g_string_free(err, TRUE);
    }
}
