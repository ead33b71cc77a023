/* plugin.c
 * Wireshark plugin entry points for the chunk dissector (4.0, 4.4, 4.6).
 * plugin_describe() exists from 4.2 on: without it `tshark -G plugins` calls
 * the plugin's type "unknown".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/proto.h>

#include "packet-chunk-plugin.h"
#include "ws-compat.h"

#if CS_WS_AT_LEAST(4, 2)
#include <wsutil/plugins.h>
#endif

#ifndef CHUNK_PLUGIN_VERSION
#define CHUNK_PLUGIN_VERSION "0.1.0"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = CHUNK_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

#if CS_WS_AT_LEAST(4, 2)
WS_DLL_PUBLIC uint32_t plugin_describe(void);

/* What the plugin provides: a dissector. */
uint32_t plugin_describe(void)
{
    return WS_PLUGIN_DESC_DISSECTOR;
}
#endif

/* Called once by Wireshark when it loads chunk.so. */
void plugin_register(void)
{
    static proto_plugin plug_chunk;

    plug_chunk.register_protoinfo = proto_register_chunk;
    plug_chunk.register_handoff = proto_reg_handoff_chunk;
    proto_register_plugin(&plug_chunk);
}
