/* reliable-int.h
 * The reliable protocol (packet acknowledgement and fragmentation,
 * docs/reliable.md): what the decoder (dissect.c), the analysis
 * (analysis.c) and the statistics (stats.c) share.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RELIABLE_INT_H
#define RELIABLE_INT_H

#include <epan/packet.h>
#include <epan/expert.h>

#include "reliable.h"
#include "ws-compat.h"
#include "register-util.h"

/* tvb_get_guint8 is deprecated from 4.4 on (tvb_get_uint8, absent in 4.0). */
#if CS_WS_AT_LEAST(4, 4)
#define rl_get_u8 tvb_get_uint8
#else
#define rl_get_u8 tvb_get_guint8
#endif

#define RELIABLE_FRAGMENT_HEADER_LEN 5
#define RELIABLE_MAX_HEADER_LEN 9

/* What the decoder read from one datagram, for the analysis. */
typedef struct reliable_pkt {
    guint16 seq;
    gboolean is_fragment;
    guint8 fragment_id;
    guint16 num_fragments;   /* 1..256 */
    gboolean has_header;     /* a regular packet, or fragment 0 with a readable header */
    guint16 ack;
    guint32 ack_bits;
    gboolean valid;          /* the library would take it (header readable, fragment rules kept) */
} reliable_pkt_t;

/* One acknowledgement this frame made for the first time. */
typedef struct rl_ack_link {
    guint32 frame;           /* the acked packet's (first) frame */
    guint16 seq;
    gint64 rtt_ns;
} rl_ack_link_t;

/* Problems found in one frame (each an expert info). */
enum {
    RLA_DUPLICATE    = 1u << 0,  /* sequence (or fragment) seen before in this direction */
    RLA_OUT_OF_ORDER = 1u << 1,  /* older than the newest of the direction */
    RLA_GAP          = 1u << 2,  /* sequences skipped before this one */
    RLA_ACK_BACK     = 1u << 3,  /* the ack went back while the sequence went forward */
    RLA_ACK_UNSENT   = 1u << 4,  /* acks a sequence the capture never saw sent */
    RLA_ACK_UNDONE   = 1u << 5,  /* a bit clear for a sequence this side acked before */
    RLA_ACK_STALLED  = 1u << 6,  /* ack stuck while the peer sent 32 and more newer packets */
    RLA_FRAG_COUNT   = 1u << 7,  /* fragment count differs from the packet's first fragment */
};

/* The analysis' record of one frame, fixed on the first pass. */
typedef struct rl_frame {
    struct rl_conn *conn;
    guint8 dir;
    guint32 flags;
    guint64 ext_seq;         /* sequence unwrapped in its direction */
    guint32 dup_of;          /* duplicate: the first frame */
    guint32 gap;             /* sequences skipped */
    guint16 prev_ack;        /* ack back / stalled: the earlier ack */
    guint32 stalled_packets; /* ack stalled: packets of the peer since */
    guint16 unsent_seq, undone_seq;
    guint16 first_count;     /* fragment count mismatch: the first fragment's */
    guint16 n_links, n_lost, n_incomplete;
    rl_ack_link_t *links;    /* packets this frame acks first */
    guint32 *lost_frames;    /* packets found lost here: their frames */
    guint16 *lost_seqs;
    guint16 *incomplete_seqs;   /* reassemblies found abandoned here */
    guint16 *incomplete_missing; /* and how many fragments each missed */
    guint32 *incomplete_frames;
    /* Forward-looking (set by later frames on the first pass). */
    guint32 acked_in;
    gint64 rtt_ns;
    guint32 lost_in;
} rl_frame_t;

/* One direction of a conversation. */
typedef struct rl_dir {
    address src, dst;
    guint32 sport, dport;
    gboolean active;
    guint32 first_frame, last_frame;
    gint64 first_ns, last_ns;
    guint64 newest;          /* newest extended sequence */
    /* Sent sequences whose loss is not decided yet, in increasing order
     * (und[und_head..und_len)): the loss check walks only these. */
    guint64 *und;
    guint und_head, und_len, und_cap;
    wmem_map_t *sent;        /* extended sequence -> rl_sent_t */
    wmem_map_t *pending;     /* extended sequence -> rl_reasm_t, incomplete */
    gboolean have_ack;
    guint16 last_ack;
    guint32 last_ack_frame;
    guint32 ack_since_peer_packets; /* peer packets since the ack last moved */
    gboolean stall_flagged;
    /* counters */
    guint32 packets, fragments, dups, reordered, gap_seqs, acked, lost, incomplete, reassembled, bad;
    gint64 rtt_min_ns, rtt_max_ns, rtt_sum_ns;
    guint64 bytes;
} rl_dir_t;

typedef struct rl_conn {
    guint32 index;
    rl_dir_t dir[2];
} rl_conn_t;

/* Queued on the "reliable" tap for every analysed packet. */
typedef struct rl_tap_info {
    rl_conn_t *conn;
    guint8 dir;
} rl_tap_info_t;

/* analysis.c */
void reliable_analysis_register(int proto);
rl_frame_t *reliable_analysis_packet(packet_info *pinfo, const reliable_pkt_t *pkt, guint32 bytes);
void reliable_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *ti, rl_frame_t *rec);
guint reliable_conn_count(void);
rl_conn_t *reliable_conn(guint i);

/* stats.c */
void reliable_stats_register(void);

#endif /* RELIABLE_INT_H */
