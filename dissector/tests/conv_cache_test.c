/* conv_cache_test.c: dissector/common/conv-cache.c's cache of the last two
 * address and port pairs (here through protocol2-conv.c) gives, for every
 * frame, the conversation find_or_create_conversation() gives. Two conversations of one UDP pair
 * (set up in frames 1 and 100): after a lookup in frame 100, a revisit of
 * frame 5 (the GUI clicking back) must get the first, not the cached second.
 * Links libwireshark and libwiretap (epan_init, a session for the
 * conversation tables).
 * Exit 0 when every lookup agrees, 1 otherwise.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <wireshark.h>
#include <epan/epan.h>
#include <epan/packet.h>
#include <epan/conversation.h>
#include <wiretap/wtap.h>
#include <wsutil/privileges.h>
#include <wsutil/wslog.h>

#include "common/protocol2.h"
#include "common/protocol2-int.h"
#include "common/ws-compat.h"

static const nstime_t *no_ts(struct packet_provider_data *prov _U_, guint32 num _U_)
{
    static const nstime_t zero;
    return &zero;
}

/* Designated: the structure grows (4.6 adds get_process_id and more). */
static const struct packet_provider_funcs funcs = { .get_frame_ts = no_ts };

int main(void)
{
    static const guint32 frames[] = { 100, 5, 1, 150, 99, 100, 2 };
    guint32 a = g_htonl(0x0a000001), b = g_htonl(0x0a000002);
    dp2_protocol_t p;
    packet_info pinfo;
    conversation_t *first, *second;
    int failures = 0;

    g_setenv("HOME", "/nonexistent", TRUE);
#if CS_WS_AT_LEAST(4, 6)
    ws_log_init(NULL);                     /* 4.6: the program name comes from elsewhere */
#else
    ws_log_init("conv_cache_test", NULL);
#endif
    ws_log_set_level(LOG_LEVEL_CRITICAL);
    init_process_policies();
    wtap_init(FALSE);
    if (!epan_init(NULL, NULL, FALSE)) {
        fprintf(stderr, "conv_cache_test: epan_init failed\n");
        return 1;
    }
    dp2_conv_register();
    epan_t *session = epan_new(NULL, &funcs);

    memset(&pinfo, 0, sizeof pinfo);
    set_address(&pinfo.src, AT_IPv4, 4, &a);
    set_address(&pinfo.dst, AT_IPv4, 4, &b);
    pinfo.ptype = PT_UDP;
    pinfo.srcport = 50000;
    pinfo.destport = 40000;
    first = conversation_new(1, &pinfo.src, &pinfo.dst, CONVERSATION_UDP, 50000, 40000, 0);
    second = conversation_new(100, &pinfo.src, &pinfo.dst, CONVERSATION_UDP, 50000, 40000, 0);
    memset(&p, 0, sizeof p);
    p.filter_name = "test";

    for (size_t i = 0; i < G_N_ELEMENTS(frames); i++) {
        conversation_t *got = NULL, *want = frames[i] >= 100 ? second : first;
        pinfo.num = frames[i];
        dp2_conv_state(&pinfo, &p, NULL, &got);
        printf("frame %3u: conversation set up in frame %u, want %u%s\n", frames[i],
               got ? got->setup_frame : 0, want->setup_frame, got == want ? "" : "  FAIL");
        failures += got != want;
    }
    epan_free(session);
    epan_cleanup();
    printf("conv_cache_test: %d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
