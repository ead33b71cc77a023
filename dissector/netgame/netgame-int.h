/* netgame/netgame-int.h
 * The netgame protocol (the 2008 reliability header, docs/netgame.md):
 * what the decoder (netgame/dissect.c), the connection analysis
 * (netgame/analysis.c) and its statistics (netgame/stats.c) share.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NETGAME_INT_H
#define NETGAME_INT_H

#include <epan/packet.h>
#include <epan/conversation.h>

#include "common/register-util.h"

/* docs/netgame.md, "Wire format": 16-byte header, all big-endian. */
#define NETGAME_HEADER_LEN 16

/* 2008 "more recent" rule with integer half range; at exactly half the
 * range the numerically smaller sequence counts as more recent. */
static inline gboolean netgame_more_recent(guint32 s1, guint32 s2, guint32 max_seq)
{
    guint32 half = max_seq / 2;
    return (s1 > s2 && s1 - s2 <= half) || (s2 > s1 && s2 - s1 > half);
}

/* (a - b) modulo MaxSequence + 1, for a and b in 0..max_seq. */
static inline guint32 netgame_seq_sub(guint32 a, guint32 b, guint32 max_seq)
{
    if (max_seq == 0xFFFFFFFFu)
        return a - b;
    guint64 space = (guint64)max_seq + 1;
    return (guint32)((((guint64)a % space) + space - ((guint64)b % space)) % space);
}

/* Sequences behind the newest of a direction whose arrival is remembered
 * (ng_dir_t.seen, a bit each): enough for 32 ack bits and reordering. */
#define NG_SEEN_WINDOW 256

/* One decoded datagram handed to the analysis. */
typedef struct netgame_pkt {
    guint32 protocol_id, seq, ack, ack_bits;
    guint32 payload_len;
    gboolean header_only;   /* exactly 16 bytes: the original receiver drops it, acks and all */
    gboolean foreign_id;    /* id differs from the conversation's first: dropped by the receiver */
    guint32 max_seq;        /* MaxSequence (the netgame.max_sequence preference, as applied) */
    conversation_t *conv;   /* the datagram's conversation, found once by the dissector */
} netgame_pkt_t;

/* Problems: each sets netgame.analysis.flags (values shown in the tree). */
enum {
    NG_F_SEQ_GAP     = 1u << 0,
    NG_F_DUPLICATE   = 1u << 1,
    NG_F_SEQ_BACK    = 1u << 2,
    NG_F_ACK_BACK    = 1u << 3,
    NG_F_ACK_UNSENT  = 1u << 4,
    NG_F_FALSE_ACK0  = 1u << 5,
    NG_F_LOST        = 1u << 6,
    NG_F_TO_BAD      = 1u << 7,
    NG_F_HEADER_ONLY = 1u << 8,
    NG_F_NOT_CAPTURED = 1u << 9,
    NG_F_COUNT       = 10
};

/* Inferred flow-control mode, as its packet rate. */
#define NG_MODE_GOOD 30
#define NG_MODE_BAD  10

/* A sent packet while the analysis can still ack it or call it lost. */
typedef struct ng_sent {
    guint32 seq;
    guint32 frame;
    gint64 t_ns;
    struct ng_frame *rec;     /* its frame record when kept (not in tshark's single pass) */
    guint32 acked_frame;      /* first acking frame, 0 while none */
    guint8 decided;           /* loss decided: 1 acked in time, 2 lost, 3 unknown (its acks may be in
                               * packets the capture missed) */
    guint8 superseded;        /* its sequence was sent again since: not ackable */
} ng_sent_t;

/* One direction of a connection: the packets one side sends. */
typedef struct ng_dir {
    address src, dst;
    guint32 sport, dport;
    gboolean active;              /* any packet yet */
    guint32 first_frame, last_frame;
    gint64 first_ns, last_ns;
    guint32 first_seq, hi_seq;    /* first seen, most recent seen */
    gint64 hi_ns;                 /* time of the most recent sequence */
    guint64 seen[NG_SEEN_WINDOW / 64]; /* bit k: sequence hi_seq - k seen (k < NG_SEEN_WINDOW) */
    gboolean have_ack;
    guint32 last_ack;             /* most recent ack this side sent */
    /* Pending: sent packets in capture order (a ring). */
    ng_sent_t *sent;
    guint32 sent_cap, sent_head, sent_count, sent_undecided; /* undecided: first index not decided */
    guint32 n_open;               /* kept packets neither acked nor superseded */
    /* Those open packets, oldest first, by absolute index (the count of
     * packets pushed before each): acks and resends look at them alone. */
    guint32 *open;
    guint32 open_cap, open_start, open_end;
    guint32 pushed;               /* packets pushed so far */
    /* Send times of the last second (a ring), for the send rate. */
    gint64 *times;
    guint32 times_cap, times_head, times_count;
    /* Counters. */
    guint32 packets, dups, gaps, missing, backs;
    guint32 acked, lost, late;    /* acked within 1 s, not acked within 1 s, acked after 1 s */
    guint64 payload_bytes;
    gint64 rtt_min_ns, rtt_max_ns, rtt_sum_ns;
    double srtt;                  /* seconds, the original's 10% steps */
    double srtt_max;
    gint64 last_acked_ns;         /* when the peer last acked something of this direction */
    guint32 last_acked_frame;
    guint32 peer_pkts_at_ack;     /* the peer's packet count then */
    guint32 acks_sent;            /* packets of this side that acked something new */
    /* Flow-control mode inferred from the packet intervals. */
    guint8 mode;
    guint8 iv_head, n_iv;
    gint64 iv[6];                 /* the last intervals (ns per sequence), a ring */
    gint64 mode_since_ns;
    gint64 good_ns, bad_ns;
    guint32 switches, to_bad;
    /* Packets of this side the capture does not hold, which the peer's
     * acks reveal (docs/netgame.md, "Packets not captured"). */
    gboolean nc_have;             /* nc_to is set */
    gboolean nc_open;             /* a run shown, and no packet of this side captured since */
    guint32 nc_to;                /* counted up to this sequence */
    guint32 not_captured;         /* counted in all */
    gboolean have_gap;
    guint32 gap_lo, gap_hi;       /* the sequences missing at the last gap */
} ng_dir_t;

/* One connection: a UDP conversation, both directions. */
typedef struct ng_conn {
    guint32 index;
    guint32 id;                   /* protocol id of its first packet */
    guint32 id_frame;
    ng_dir_t dir[2];              /* [0]: from the side that sent first */
} ng_conn_t;

/* A packet of the peer that this frame acks for the first time. */
typedef struct ng_ack_link {
    guint32 frame;
    guint32 seq;
    gint64 rtt_ns;
} ng_ack_link_t;

/* What the analysis found in one frame, fixed on the first pass. */
typedef struct ng_frame {
    ng_conn_t *conn;
    guint8 dir;
    guint8 mode;                  /* NG_MODE_* at this send */
    guint8 switched;              /* mode switched at this packet */
    guint8 ack_seen;              /* 0 no, 1 yes, 2 unknown (older than the window) */
    guint8 lost;                  /* forward: not acked within 1 s */
    guint8 false_ack0;
    guint8 pending;               /* entered the pending packets (not a duplicate) */
    guint8 unknown;               /* its acks may be in packets the capture missed: neither lost nor acked */
    guint32 flags;
    guint32 seq_gap;
    guint32 not_captured;         /* packets of the peer this frame's acks reveal the capture lacks */
    guint32 dup_of;               /* duplicate: first frame with this sequence (0: unknown) */
    guint32 send_rate;
    guint32 prev_ack;             /* ack back: the previous (more recent) ack */
    gint64 t_ns;
    gint64 srtt_ns;               /* the sender's smoothed RTT at this send */
    guint32 seen_mask;            /* bit i: sequence ack-1-i seen before this frame */
    guint32 known_mask;           /* bit i: whether that is known */
    guint32 unsent_mask;          /* bit i: acked but never sent in the capture */
    guint8 ack_unsent;            /* the ack field itself names an unsent sequence */
    guint8 dup;
    guint8 back;
    guint16 n_links;
    guint16 n_lost_here;          /* single pass: packets found lost at this frame */
    ng_ack_link_t *links;
    guint32 *lost_here;
    /* Forward-looking (set by later frames; not in tshark's single pass). */
    guint32 acked_in;
    gint64 rtt_ns;
} ng_frame_t;

/* Queued on the "netgame" tap for every analysed packet (the statistics,
 * the Flow Graph and the Conversations tab read it). */
typedef struct ng_tap_info {
    ng_conn_t *conn;
    guint8 dir;
    const ng_frame_t *rec;
    guint32 seq, ack, ack_bits, payload_len;
    guint32 flags;                /* NG_F_* as shown, forward-looking loss included */
} ng_tap_info_t;

/* The analysis (netgame/analysis.c). */
void netgame_analysis_register(int proto, module_t *module);
void netgame_analysis_handoff(void);
/* First pass: analyses the packet; later: the cached record. NULL when the
 * packet is not analysed (foreign id). */
ng_frame_t *netgame_analysis_packet(packet_info *pinfo, const netgame_pkt_t *pkt);
/* Adds the analysis fields and expert infos (tree may be NULL), and writes
 * the analysis' part of the Info text at info (" Mode=Good SRTT=69ms
 * [lost]"); returns its end (NULL when info is NULL: no columns). */
char *netgame_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *ng_item,
                            const netgame_pkt_t *pkt, ng_frame_t *rec, char *info);

/* For the statistics, the end-of-capture view: lost in d, counting packets
 * still undecided that are older than 1 s at the end of the capture. */
guint32 netgame_dir_lost_final(const ng_dir_t *d);
/* Time spent in Good and Bad up to the end of the direction. */
void netgame_dir_mode_times(const ng_dir_t *d, gint64 *good_ns, gint64 *bad_ns);
/* Diagnosis for the direction, NULL when nothing is wrong. */
char *netgame_dir_diagnosis(wmem_allocator_t *scope, const ng_conn_t *c, guint dir);
const char *netgame_flag_name(guint32 flag);

/* The statistics (netgame/stats.c). */
void netgame_stats_register(void);
/* The Flow Graph and the Conversations and Endpoints tabs (netgame/flow.c). */
void netgame_flow_register(int proto);
/* The hidden fields netgame.end, src_end and dst_end of an analysed packet,
 * when a filter or the tree wants them. */
void netgame_flow_end_fields(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo);

#endif /* NETGAME_INT_H */
