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
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef WS_COMPAT_H
#define WS_COMPAT_H

#include <stdbool.h>
#include <stdlib.h>
#include <ws_version.h>
#include <epan/packet.h>

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

#endif /* WS_COMPAT_H */
