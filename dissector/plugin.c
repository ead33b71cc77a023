/* plugin.c
 * Wireshark 4.0 plugin entry points for the chunk dissector.
 * (4.0 has no plugin_describe(); that came in 4.2.)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/proto.h>

#include "packet-chunk-plugin.h"
#include "netgame-int.h"

#ifndef CHUNK_PLUGIN_VERSION
#define CHUNK_PLUGIN_VERSION "0.1.0"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = CHUNK_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

/* Called once by Wireshark when it loads chunk.so. */
void plugin_register(void)
{
    static proto_plugin plug_chunk;

    plug_chunk.register_protoinfo = proto_register_chunk;
    plug_chunk.register_handoff = proto_reg_handoff_chunk;
    proto_register_plugin(&plug_chunk);

    static proto_plugin plug_netgame = { proto_register_netgame, proto_reg_handoff_netgame };
    proto_register_plugin(&plug_netgame);
}
