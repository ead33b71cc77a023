/* fuzz_dissector.c
 * libFuzzer harness for the plugin's dissectors (every dissector source linked in, with
 * coverage instrumentation, every protocol of dissector/protocols.txt registered) running inside libwireshark 4.0 (not
 * instrumented): every input is one capture's worth of datagrams, so the
 * decoder's conversation decisions and the transfer analysis are fuzzed too.
 *
 * Each input gets IP addresses of its own, so it starts in conversations no
 * earlier input touched. The epan session (a "file") is renewed every
 * FUZZ_INPUTS_PER_SESSION inputs rather than per input: epan_new() runs
 * every protocol's init routine (a tenth of a second) and libwireshark 4.0
 * does not give back all of a session's memory at epan_free() (6 to 15 MiB,
 * so a long run still grows by about 15 MiB per 1000 inputs).
 * What carries over between inputs of a session is only file-wide counters
 * (stream and transfer indexes, the analysis' state budget).
 *
 * Input layout (all of it optional; a short input is still a capture):
 *   byte 0   session options
 *            bits 0-1  chunk.max_slices: Auto, 256, 32, or 100 with
 *                      chunk.slice_size 7 (other games' constants)
 *            bit 2     a second pass over all frames (tshark -2, the GUI)
 *            bit 3     build the protocol tree (tshark -V) on the first pass
 *            bit 4     port 7777 instead of 40000: the heuristic finds it
 *            bit 5     one raw datagram: the rest of the input, as is
 *            bit 6     one frame_data reused for every frame, with columns:
 *                      how tshark's one pass runs (the analysis keeps no
 *                      per-frame records then)
 *            bit 7     the CRC fix (record flag bit 3, and raw datagrams)
 *                      uses the fragment protocol's id 0x55667788 (p2frag,
 *                      docs/p2frag.md) instead of chunk's
 *   then records, each: flags (1 byte), length (2 bytes LE), datagram
 *            flags bit 0   direction: 0 sender -> receiver (slices),
 *                          1 receiver -> sender (acks)
 *            bits 1-2      which of 4 conversations (source port)
 *            bit 3         recompute the CRC (protocol id 0x11223344, or
 *                          p2frag's with session option bit 7) so the
 *                          mutation reaches past the CRC check
 *            bits 4-7      time step before this frame (table below,
 *                          backwards steps included)
 *   At most FUZZ_MAX_FRAMES frames; a record cut by the end of the input is
 *   used as far as it goes.
 *
 * Sanitizers: ASan/UBSan (fuzz/CMakeLists.txt); WIRESHARK_ABORT_ON_DISSECTOR_BUG
 * and WIRESHARK_ABORT_ON_TOO_MANY_ITEMS turn dissector bugs into crashes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <zlib.h>

#include <wireshark.h>
#include <epan/epan.h>
#include <epan/epan_dissect.h>
#include <epan/column.h>
#include <epan/column-info.h>
#include <epan/frame_data.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/timestamp.h>
#include <epan/proto.h>
#include <epan/tvbuff.h>
#include <wiretap/wtap.h>
#include <wsutil/filesystem.h>
#include <wsutil/privileges.h>
#include <wsutil/wslog.h>

#include "plugin-protocols.h"

#define FUZZ_MAX_FRAMES  512
#define FUZZ_INPUTS_PER_SESSION 1024
#define FUZZ_PORT        40000
#define FUZZ_HEUR_PORT   7777
#define FUZZ_IP_UDP_LEN  28
/* docs/protocol.md, "Every packet": the protocol id seeds the CRC (never sent). */
#define FUZZ_PROTOCOL_ID 0x11223344u
/* docs/p2frag.md: the fragment protocol's default id. */
#define FUZZ_P2FRAG_PROTOCOL_ID 0x55667788u

enum {
    OPT_VARIANT  = 0x03,
    OPT_TWO_PASS = 0x04,
    OPT_TREE     = 0x08,
    OPT_HEUR     = 0x10,
    OPT_RAW      = 0x20,
    OPT_REUSE_FD = 0x40,
    OPT_P2FRAG   = 0x80,
};

/* Time steps in microseconds: around the analysis' thresholds (ack interval
 * 100 ms, resend delay 100 ms, stall 1 s) and backwards. */
static const gint64 time_steps_us[16] = {
    0, 1, 1000, 10000, 50000, 99000, 101000, 150000,
    500000, 1000000, 1100000, 2000000, 10000000, -1000, -1000000, 3600000000LL
};

typedef struct fuzz_frame {
    guint8 *data;    /* IPv4 + UDP + datagram */
    guint len;
    nstime_t ts;
} fuzz_frame_t;

static struct {
    fuzz_frame_t frames[FUZZ_MAX_FRAMES];
    guint n;
    guint32 base;      /* frame number before this input's first */
    guint32 input;     /* inputs so far: picks this input's addresses */
} cap;

static epan_t *session;
static guint session_inputs;

static column_info fuzz_cinfo;
static guint32 crc_prefix, crc_prefix_p2frag;
static gboolean crc_p2frag;   /* this input's CRC fix uses p2frag's id */

static const nstime_t *fuzz_get_frame_ts(struct packet_provider_data *prov _U_, guint32 num)
{
    static const nstime_t zero;

    return num > cap.base && num <= cap.base + cap.n ? &cap.frames[num - cap.base - 1].ts : &zero;
}

static const struct packet_provider_funcs fuzz_provider = {
    fuzz_get_frame_ts, NULL, NULL, NULL
};

static guint16 ip_checksum(const guint8 *h)
{
    guint32 s = 0;

    for (int i = 0; i < 20; i += 2)
        s += (guint32)(h[i] << 8 | h[i + 1]);
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return (guint16)~s;
}

/* Adds one frame: IPv4/UDP around the datagram. */
static void add_frame(const guint8 *dgram, guint len, guint flags, gboolean heur, gint64 *now_us)
{
    fuzz_frame_t *f = &cap.frames[cap.n++];
    gboolean to_sender = flags & 1;
    guint conv = (flags >> 1) & 3;
    guint16 peer_port = (guint16)(50000 + conv);
    guint16 server_port = heur ? FUZZ_HEUR_PORT : FUZZ_PORT;
    guint16 sport = to_sender ? server_port : peer_port;
    guint16 dport = to_sender ? peer_port : server_port;
    guint8 *p;

    *now_us += time_steps_us[flags >> 4];
    f->ts.secs = (time_t)(*now_us / 1000000);
    f->ts.nsecs = (int)(*now_us % 1000000) * 1000;
    if (f->ts.nsecs < 0) {
        f->ts.nsecs += 1000000000;
        f->ts.secs -= 1;
    }
    f->len = FUZZ_IP_UDP_LEN + len;
    p = f->data = (guint8 *)g_malloc(f->len);
    memset(p, 0, FUZZ_IP_UDP_LEN);
    p[0] = 0x45;
    p[2] = (guint8)(f->len >> 8);
    p[3] = (guint8)f->len;
    p[6] = 0x40;   /* don't fragment */
    p[8] = 64;
    p[9] = 17;     /* UDP */
    /* 10.a.b.c (sender) and 11.a.b.c (receiver), a.b.c from the input
     * count: a conversation of its own for every input. */
    p[12] = to_sender ? 11 : 10;
    p[16] = to_sender ? 10 : 11;
    p[13] = p[17] = (guint8)(cap.input >> 16);
    p[14] = p[18] = (guint8)(cap.input >> 8);
    p[15] = p[19] = (guint8)cap.input;
    {
        guint16 c = ip_checksum(p);
        p[10] = (guint8)(c >> 8);
        p[11] = (guint8)c;
    }
    p[20] = (guint8)(sport >> 8); p[21] = (guint8)sport;
    p[22] = (guint8)(dport >> 8); p[23] = (guint8)dport;
    p[24] = (guint8)((8 + len) >> 8); p[25] = (guint8)(8 + len);
    if (len)
        memcpy(p + FUZZ_IP_UDP_LEN, dgram, len);
    if ((flags & 8) && len >= 4) {
        /* CRC over LE32(protocol id), 4 zero bytes, datagram[4..]. */
        guint32 crc = (guint32)crc32(crc_p2frag ? crc_prefix_p2frag : crc_prefix, p + FUZZ_IP_UDP_LEN + 4,
                                     len - 4);
        p[FUZZ_IP_UDP_LEN + 0] = (guint8)crc;
        p[FUZZ_IP_UDP_LEN + 1] = (guint8)(crc >> 8);
        p[FUZZ_IP_UDP_LEN + 2] = (guint8)(crc >> 16);
        p[FUZZ_IP_UDP_LEN + 3] = (guint8)(crc >> 24);
    }
}

/* Splits the input into frames (see the layout at the top). */
static guint parse_input(const guint8 *buf, size_t size)
{
    guint opts = size ? buf[0] : 0;
    size_t off = 1;
    gint64 now_us = G_GINT64_CONSTANT(1700000000) * 1000000;

    cap.n = 0;
    crc_p2frag = (opts & OPT_P2FRAG) != 0;
    if (opts & OPT_RAW) {
        /* CRC fixed too, else almost nothing passes the check. */
        guint len = size > 1 ? (guint)MIN(size - 1, 65000) : 0;
        add_frame(buf + 1, len, 0x08, (opts & OPT_HEUR) != 0, &now_us);
        return opts;
    }
    while (off < size && cap.n < FUZZ_MAX_FRAMES) {
        guint flags = buf[off++];
        guint len = 0;
        if (off + 2 <= size) {
            len = (guint)(buf[off] | buf[off + 1] << 8);
            off += 2;
        } else {
            off = size;
        }
        len = (guint)MIN((size_t)len, size - off);
        add_frame(buf + off, len, flags, (opts & OPT_HEUR) != 0, &now_us);
        off += len;
    }
    return opts;
}

static void set_pref(const char *pref)
{
    char *errmsg = NULL;
    char copy[128];

    g_strlcpy(copy, pref, sizeof copy);   /* prefs_set_pref edits its argument */
    if (prefs_set_pref(copy, &errmsg) != PREFS_SET_OK) {
        fprintf(stderr, "fuzz_dissector: preference %s: %s\n", pref, errmsg ? errmsg : "rejected");
        abort();
    }
    g_free(errmsg);
}

static void apply_variant(guint v)
{
    static const char *const max_slices[4] = {
        "chunk.max_slices:0", "chunk.max_slices:256", "chunk.max_slices:32", "chunk.max_slices:100"
    };
    static guint current = 99;

    if (v == current)
        return;
    current = v;
    set_pref(max_slices[v]);
    set_pref(v == 3 ? "chunk.slice_size:7" : "chunk.slice_size:1024");
    prefs_apply_all();
}

static void dissect_frame(epan_t *session, frame_data *fd, fuzz_frame_t *f, gboolean tree,
                          column_info *cinfo)
{
    epan_dissect_t edt;
    wtap_rec rec;

    wtap_rec_init(&rec);
    rec.rec_type = REC_TYPE_PACKET;
    rec.presence_flags = WTAP_HAS_TS | WTAP_HAS_CAP_LEN;
    rec.ts = f->ts;
    rec.rec_header.packet_header.caplen = f->len;
    rec.rec_header.packet_header.len = f->len;
    rec.rec_header.packet_header.pkt_encap = WTAP_ENCAP_RAW_IP;

    epan_dissect_init(&edt, session, tree, tree);
    epan_dissect_run(&edt, WTAP_FILE_TYPE_SUBTYPE_UNKNOWN, &rec,
                     tvb_new_real_data(f->data, f->len, f->len), fd, cinfo);
    if (cinfo)
        epan_dissect_fill_in_columns(&edt, FALSE, TRUE);
    epan_dissect_cleanup(&edt);
    wtap_rec_cleanup(&rec);
}

static void run_capture(guint opts)
{
    frame_data *fds = g_new0(frame_data, cap.n ? cap.n : 1);
    const frame_data *ref = NULL, *prev = NULL;
    nstime_t elapsed = NSTIME_INIT_ZERO;
    guint32 cum = 0;
    wtap_rec rec;

    wtap_rec_init(&rec);
    for (guint i = 0; i < cap.n; i++) {
        /* tshark's one pass reuses a single frame_data; -2 and the GUI keep
         * one per frame. */
        frame_data *fd = (opts & OPT_REUSE_FD) ? &fds[0] : &fds[i];

        rec.rec_type = REC_TYPE_PACKET;
        rec.presence_flags = WTAP_HAS_TS | WTAP_HAS_CAP_LEN;
        rec.ts = cap.frames[i].ts;
        rec.rec_header.packet_header.caplen = cap.frames[i].len;
        rec.rec_header.packet_header.len = cap.frames[i].len;
        rec.rec_header.packet_header.pkt_encap = WTAP_ENCAP_RAW_IP;
        if (opts & OPT_REUSE_FD)
            frame_data_destroy(fd);
        frame_data_init(fd, cap.base + i + 1, &rec, 0, cum);
        frame_data_set_before_dissect(fd, &elapsed, &ref, prev);
        if (opts & OPT_REUSE_FD)
            ref = NULL;   /* the reused frame_data is not a stable reference */
        dissect_frame(session, fd, &cap.frames[i], (opts & OPT_TREE) != 0,
                      (opts & OPT_REUSE_FD) ? &fuzz_cinfo : NULL);
        frame_data_set_after_dissect(fd, &cum);
        fd->visited = 1;
        prev = (opts & OPT_REUSE_FD) ? NULL : fd;
    }
    if ((opts & OPT_TWO_PASS) && !(opts & OPT_REUSE_FD)) {
        for (guint i = 0; i < cap.n; i++)
            dissect_frame(session, &fds[i], &cap.frames[i], TRUE, &fuzz_cinfo);
    }
    wtap_rec_cleanup(&rec);
    for (guint i = 0; i < cap.n; i++)
        frame_data_destroy(&fds[(opts & OPT_REUSE_FD) ? 0 : i]);
    g_free(fds);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t size);

int LLVMFuzzerInitialize(int *argc _U_, char ***argv)
{
    char *err;
    e_prefs *prefs_p;

    /* No personal profile: the same input must do the same everywhere. */
    g_setenv("XDG_CONFIG_HOME", "/nonexistent", TRUE);
    g_setenv("HOME", "/nonexistent", TRUE);
    g_setenv("WIRESHARK_ABORT_ON_DISSECTOR_BUG", "1", TRUE);
    g_setenv("WIRESHARK_ABORT_ON_TOO_MANY_ITEMS", "1", TRUE);
    /* wmem's block allocators hand out pieces of big blocks, inside which
     * ASan sees no overflow: one malloc per allocation instead. */
    g_setenv("WIRESHARK_DEBUG_WMEM_OVERRIDE", "simple", TRUE);
    g_setenv("G_SLICE", "always-malloc", TRUE);
    g_set_prgname("fuzz_dissector");
    ws_log_init("fuzz_dissector", NULL);
    ws_log_set_level(LOG_LEVEL_CRITICAL);
    init_process_policies();
    err = configuration_init((*argv)[0], NULL);
    g_free(err);

    /* Columns need a time format (tshark's defaults). */
    timestamp_set_type(TS_RELATIVE);
    timestamp_set_precision(TS_PREC_AUTO);
    timestamp_set_seconds_type(TS_SECONDS_DEFAULT);

    wtap_init(FALSE);
    /* The plugin's registration, from the table plugin.c uses, but linked
     * in: epan calls registered "plugins" whether or not it loads any from
     * disk. */
    for (size_t i = 0; i < G_N_ELEMENTS(chunk_plugin_protocols); i++)
        proto_register_plugin(&chunk_plugin_protocols[i]);
    if (!epan_init(NULL, NULL, FALSE)) {
        fprintf(stderr, "fuzz_dissector: epan_init failed\n");
        abort();
    }
    prefs_p = epan_load_settings();
    build_column_format_array(&fuzz_cinfo, prefs_p->num_cols, TRUE);
    /* Keep the dissection to IP, UDP and chunk: other protocols' reassembly
     * would only slow the fuzzer down. */
    set_pref("ip.defragment:FALSE");
    set_pref("netcode.udp.port:7777,40000");
    set_pref("netcode.private_key:606abe6ec91910ea9a6562f66f2b30e44371d62cd19927266b3c60f4b715aba1,"
             "0000000000000000000000000000000000000000000000000000000000000000");
    prefs_apply_all();
    {
        static const char *const names[] = { CHUNK_PLUGIN_PROTOCOL_NAMES };
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
            if (proto_get_id_by_filter_name(names[i]) < 0) {
                fprintf(stderr, "fuzz_dissector: protocol %s did not register\n", names[i]);
                abort();
            }
        }
    }
    {
        guint8 prefix[8] = {
            (guint8)FUZZ_P2FRAG_PROTOCOL_ID, (guint8)(FUZZ_P2FRAG_PROTOCOL_ID >> 8),
            (guint8)(FUZZ_P2FRAG_PROTOCOL_ID >> 16), (guint8)(FUZZ_P2FRAG_PROTOCOL_ID >> 24), 0, 0, 0, 0
        };
        crc_prefix_p2frag = (guint32)crc32(0, prefix, sizeof prefix);
    }
    {
        guint8 prefix[8] = {
            (guint8)FUZZ_PROTOCOL_ID, (guint8)(FUZZ_PROTOCOL_ID >> 8),
            (guint8)(FUZZ_PROTOCOL_ID >> 16), (guint8)(FUZZ_PROTOCOL_ID >> 24), 0, 0, 0, 0
        };
        crc_prefix = (guint32)crc32(0, prefix, sizeof prefix);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t size)
{
    guint opts;

    if (!session || session_inputs == FUZZ_INPUTS_PER_SESSION) {
        if (session)
            epan_free(session);
        session = epan_new(NULL, &fuzz_provider);
        session_inputs = 0;
        cap.base = 0;
    }
    session_inputs++;
    cap.input++;
    opts = parse_input(buf, size);
    apply_variant(opts & OPT_VARIANT);
    run_capture(opts);
    for (guint i = 0; i < cap.n; i++)
        g_free(cap.frames[i].data);
    cap.base += cap.n;
    cap.n = 0;
    return 0;
}
