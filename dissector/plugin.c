/* plugin.c
 * Wireshark plugin entry points: registers every protocol of the plugin
 * (each built on protocol2.c's framing and UDP entry point).
 * (4.0 has no plugin_describe(); that came in 4.2.)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/proto.h>
#include <epan/packet.h>

#include "packet-chunk-plugin.h"

#ifndef CHUNK_PLUGIN_VERSION
#define CHUNK_PLUGIN_VERSION "0.1.0"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = CHUNK_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

/* Every protocol of the plugin. The first one registered is the one whose
 * configured id protocol2 computes each datagram's CRC with. */
static proto_plugin plugin_protocols[] = {
    { proto_register_chunk, proto_reg_handoff_chunk },
};

/* Called once by Wireshark when it loads chunk.so. */
void plugin_register(void)
{
    for (size_t i = 0; i < array_length(plugin_protocols); i++)
        proto_register_plugin(&plugin_protocols[i]);
}
