/* plugin.c
 * Wireshark plugin entry points (4.0, 4.4, 4.6): registers every protocol of
 * the plugin, from the table generated from dissector/protocols.txt
 * (plugin-protocols.h, in the build tree).
 * plugin_describe() exists from 4.2 on: without it `tshark -G plugins` calls
 * the plugin's type "unknown".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/proto.h>
#include <epan/packet.h>

#include "plugin-protocols.h"
#include "common/ws-compat.h"

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
    for (size_t i = 0; i < array_length(chunk_plugin_protocols); i++)
        proto_register_plugin(&chunk_plugin_protocols[i]);
}
