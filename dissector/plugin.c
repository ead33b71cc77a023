/* plugin.c
 * Wireshark plugin entry points (4.0, 4.4, 4.6): registers every protocol of
 * the plugin. chunk and p2frag are built on protocol2.c's framing and UDP
 * entry point; netgame sits on UDP by itself.
 * plugin_describe() exists from 4.2 on: without it `tshark -G plugins` calls
 * the plugin's type "unknown".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/proto.h>
#include <epan/packet.h>

#include "packet-chunk-plugin.h"
#include "packet-p2frag-plugin.h"
#include "netgame-int.h"
#include "reliable/reliable.h"
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

/* Every protocol of the plugin. The first one registered is the one whose
 * configured id protocol2 computes each datagram's CRC with. */
static proto_plugin plugin_protocols[] = {
    { proto_register_chunk, proto_reg_handoff_chunk },
    { proto_register_p2frag, proto_reg_handoff_p2frag },
    { proto_register_netgame, proto_reg_handoff_netgame },
    { proto_register_reliable, proto_reg_handoff_reliable },
};

/* Called once by Wireshark when it loads chunk.so. */
void plugin_register(void)
{
    for (size_t i = 0; i < array_length(plugin_protocols); i++)
        proto_register_plugin(&plugin_protocols[i]);
}
