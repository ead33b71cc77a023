/* plugin-netgame-only.c
 * Plugin entry points registering netgame alone, for versions.sh: it builds
 * the netgame sources against another Wireshark (a chroot's 4.4 or 4.6)
 * without the rest of the plugin.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <wireshark.h>
#include <epan/proto.h>
#include <wsutil/plugins.h>

#include "netgame-int.h"
#include "ws-compat.h"

WS_DLL_PUBLIC_DEF const char plugin_version[] = "0.1.0";
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;
WS_DLL_PUBLIC void plugin_register(void);

#if CS_WS_AT_LEAST(4, 2)
WS_DLL_PUBLIC uint32_t plugin_describe(void);
uint32_t plugin_describe(void)
{
    return WS_PLUGIN_DESC_DISSECTOR;
}
#endif

void plugin_register(void)
{
    static proto_plugin plug_netgame = { proto_register_netgame, proto_reg_handoff_netgame };
    proto_register_plugin(&plug_netgame);
}
