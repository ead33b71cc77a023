/* common/ws-compat.h
 * The few places where Wireshark's plugin API differs between the versions
 * this plugin supports (4.0, 4.4, 4.6), named once so that every protocol of
 * the plugin builds from one source tree against any of them.
 *
 * From 4.2 on, Wireshark's callbacks and preference variables use C99 bool
 * where 4.0 used gboolean: heuristic dissectors, wmem user callbacks and
 * bool preferences. gcc 14 makes the mismatch an error, so each such callback
 * and preference variable is declared with ws_cb_bool.
 * From 4.6 on, a stat_tap_ui's tap_init_cb returns bool (true: the tap is
 * set up) where it returned void: CS_TAP_INIT_RET and CS_TAP_INIT_OK.
 * plugin_describe() (4.2 on) is in plugin.c, under CS_WS_AT_LEAST(4, 2).
 * A heuristic list has a description from 4.2 on, and the payload table's
 * call is renamed in 4.6: CS_REGISTER_HEUR_LIST and cs_call_payload.
 * The Flow Graph's (sequence analysis') API is exported by libwireshark but
 * its header is not installed by libwireshark-dev (4.0, 4.4, 4.6): declared
 * here, its items' truth values gboolean in 4.0 and bool from 4.4 on.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef WS_COMPAT_H
#define WS_COMPAT_H

#include <stdbool.h>
#include <stdlib.h>
#include <ws_version.h>
#include <epan/packet.h>
#include <epan/tap.h>

/* ws_fopen() and ws_fileno() (wsutil/file_util.h): the C library's on
 * Linux and macOS, UTF-8 file names on Windows, as Wireshark asks of its
 * code. Every Wireshark source tree (the Windows and macOS builds) has the
 * header, but Debian's libwireshark-dev installs it only from 4.6 on:
 * without it, the C library's, which is what the header gives there. */
#if defined(__has_include)
#if __has_include(<wsutil/file_util.h>)
#include <wsutil/file_util.h>
#define CS_HAVE_WS_FILE_UTIL 1
#endif
#endif
#ifndef CS_HAVE_WS_FILE_UTIL
#ifdef _WIN32
#error "wsutil/file_util.h not found: on Windows, build the plugin in Wireshark's source tree (docs/install.md)"
#endif
#define ws_fopen fopen
#define ws_fileno fileno
#endif

#define CS_WS_AT_LEAST(maj, min) \
    (WIRESHARK_VERSION_MAJOR > (maj) || \
     (WIRESHARK_VERSION_MAJOR == (maj) && WIRESHARK_VERSION_MINOR >= (min)))

#if CS_WS_AT_LEAST(4, 2)
/* Return type of heuristic dissectors and wmem callbacks; type of the
 * variable behind prefs_register_bool_preference(). */
typedef bool ws_cb_bool;
/* mark_frame_as_depended_upon() takes the frame_data from 4.2 on. */
#define CS_MARK_DEPENDED_UPON(pinfo, frame) mark_frame_as_depended_upon((pinfo)->fd, (frame))
#else
typedef gboolean ws_cb_bool;
#define CS_MARK_DEPENDED_UPON(pinfo, frame) mark_frame_as_depended_upon((pinfo), (frame))
#endif

#if CS_WS_AT_LEAST(4, 6)
/* Return type of a stat_tap_ui's tap_init_cb, its successful return, and its
 * failure (the tap could not start: 4.6 reports it; before, the callback
 * returned nothing and a failure had to exit). */
typedef bool CS_TAP_INIT_RET;
#define CS_TAP_INIT_OK return true
#define CS_TAP_INIT_FAILED return false
#else
typedef void CS_TAP_INIT_RET;
#define CS_TAP_INIT_OK return
#define CS_TAP_INIT_FAILED exit(1)
#endif

/* A list of heuristic dissectors: from 4.2 on registered with a
 * description (shown in Enabled Protocols). */
#if CS_WS_AT_LEAST(4, 2)
#define CS_REGISTER_HEUR_LIST(name, description, proto) \
    register_heur_dissector_list_with_description((name), (description), (proto))
#else
#define CS_REGISTER_HEUR_LIST(name, description, proto) register_heur_dissector_list((name), (proto))
#endif

/* Hands a payload on, for a protocol that carries other protocols (netcode,
 * reliable): to the protocol chosen in its Decode As table of next
 * protocols (dissector_try_payload_with_data from 4.6 on,
 * dissector_try_payload_new before), else to the first of its heuristic
 * list that takes it, else as data. data: what the layer passes up to
 * either (docs/architecture.md, "Stacked layers"). */
static inline void cs_call_payload(dissector_table_t table, heur_dissector_list_t heur, tvbuff_t *tvb,
                                   packet_info *pinfo, proto_tree *tree, void *data)
{
    heur_dtbl_entry_t *hdtbl_entry;

#if CS_WS_AT_LEAST(4, 6)
    if (dissector_try_payload_with_data(table, tvb, pinfo, tree, TRUE, data))
#else
    if (dissector_try_payload_new(table, tvb, pinfo, tree, TRUE, data))
#endif
        return;
    if (dissector_try_heuristic(heur, tvb, pinfo, tree, &hdtbl_entry, data))
        return;
    call_data_dissector(tvb, pinfo, tree);
}

/* The Flow Graph (Statistics > Flow Graph, tshark -z flow,<name>): what
 * Wireshark's epan/sequence_analysis.h declares, which libwireshark exports
 * and libwireshark-dev does not install, in 4.0, 4.4 and 4.6 alike. The
 * layout is the library's: in 4.0 the truth values are gboolean, from 4.4
 * on bool (checked against each version's libwireshark: the offsets
 * sequence_analysis_use_color_filter() writes). Only the fields up to
 * items of cs_seq_info_t are read; the rest of it is Wireshark's. */
#if CS_WS_AT_LEAST(4, 4)
typedef bool cs_seq_bool;
#else
typedef gboolean cs_seq_bool;
#endif

/* One arrow of the graph (Wireshark's seq_analysis_item_t), allocated by
 * sequence_analysis_create_sai_with_addresses() and freed by Wireshark
 * (frame_label and comment with g_free). */
typedef struct cs_seq_item {
    guint32 frame_number;
    address src_addr;
    guint16 port_src;
    address dst_addr;
    guint16 port_dst;
    gchar *frame_label;        /* above the arrow */
    gchar *time_str;
    gchar *comment;            /* right of the graph */
    guint16 conv_num;          /* colours the arrows of one conversation alike */
    unsigned fg_color, bg_color;
    cs_seq_bool has_color_filter;
    cs_seq_bool display;
    guint src_node, dst_node;
    guint16 line_style;
    guint32 info_type;
    void *info_ptr;
} cs_seq_item_t;

/* The graph being built (Wireshark's seq_analysis_info_t), its head only. */
typedef struct cs_seq_info {
    const char *name;
    cs_seq_bool any_addr;
    int nconv;
    GQueue *items;             /* of cs_seq_item_t */
} cs_seq_info_t;

WS_DLL_PUBLIC void register_seq_analysis(const char *name, const char *ui_name, const int proto_id,
                                         const char *tap_listener, guint tap_flags, tap_packet_cb tap_func);
WS_DLL_PUBLIC cs_seq_item_t *sequence_analysis_create_sai_with_addresses(packet_info *pinfo,
                                                                         cs_seq_info_t *sainfo);

#endif /* WS_COMPAT_H */
