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
#include <epan/prefs.h>
#include <epan/reassemble.h>

#include "reliable.h"
#include "common/ws-compat.h"
#include "common/register-util.h"

/* tvb_get_guint8 is deprecated from 4.4 on (tvb_get_uint8, absent in 4.0). */
#if CS_WS_AT_LEAST(4, 4)
#define rl_get_u8 tvb_get_uint8
#else
#define rl_get_u8 tvb_get_guint8
#endif

#define RELIABLE_FRAGMENT_HEADER_LEN 5

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
    RLA_ACK_UNDONE   = 1u << 5,  /* a bit clear for a sequence this side acked before */
    RLA_ACK_STALLED  = 1u << 6,  /* ack stuck while the peer sent 32 and more newer packets */
    RLA_FRAG_COUNT   = 1u << 7,  /* fragment count differs from the packet's first fragment */
    RLA_NOT_CAPTURED = 1u << 8,  /* acks packets of the peer the capture missed */
    RLA_RESTART      = 1u << 9,  /* the endpoint started again: its sequences start over */
};

/* The analysis' record of one frame, made on the first pass: in the packet's
 * scope (analysis.c keeps a smaller record for the passes that revisit), so
 * valid for this packet only. */
typedef struct rl_frame {
    struct rl_conn *conn;
    guint8 dir;
    /* The frame completed a fragmented packet that had a header (its
     * fragment 0's): packet_ack, packet_ack_bits (first pass; in the
     * record's padding). */
    guint8 packet_acks;
    guint32 flags;
    guint64 ext_seq;         /* sequence unwrapped in its direction */
    guint32 dup_of;          /* duplicate: the first frame */
    guint32 gap;             /* sequences skipped */
    guint16 prev_ack;        /* ack back / stalled: the earlier ack */
    guint32 stalled_packets; /* ack stalled: packets of the peer since */
    guint16 undone_seq;
    guint16 first_count;     /* fragment count mismatch: the first fragment's */
    guint32 not_captured;    /* packets of the peer this header acks that the capture missed */
    guint16 n_links, n_lost, n_incomplete;
    guint16 packet_ack;
    guint64 ack_ext;         /* the header taken here: its ack, unwrapped in the peer's direction */
    rl_ack_link_t *links;    /* packets this frame acks first */
    guint32 *lost_frames;    /* packets found lost here: their frames */
    guint16 *lost_seqs;
    guint16 *incomplete_seqs;   /* reassemblies found abandoned here */
    guint16 *incomplete_missing; /* and how many fragments each missed */
    guint32 *incomplete_frames;
    /* Forward-looking (set by later frames on the first pass; shown when
     * the frame is revisited). */
    guint32 acked_in;
    guint32 packet_ack_bits;   /* (not forward-looking: with packet_acks) */
    gint64 rtt_ns;
    guint32 lost_in;
} rl_frame_t;

/* One packet sent in a direction (its first frame), for acks and loss. */
typedef struct rl_sent {
    guint64 ext;             /* extended sequence */
    gint64 t_ns;             /* the first frame's time; once acked, the RTT */
    guint32 frame;           /* the first frame */
    guint32 acked_in;        /* the frame that first acked it, 0: not acked */
    guint32 lost_in;         /* the frame that found it lost, 0: not (or no longer) lost */
} rl_sent_t;

/* A fragmented packet of a direction still being reassembled. */
typedef struct rl_reasm {
    guint64 ext;
    guint32 first_frame;
    guint16 num, have_count;
    guint8 have[32];          /* bit per fragment id */
    gboolean has_header;
    guint16 ack;
    guint32 ack_bits;
} rl_reasm_t;

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
    /* Every packet sent, by extended sequence: sent[0..n_sent) in increasing
     * order (packets arrive in order, or reordered by a few), and late, the
     * few that came too far behind to be put in their place (ext -> rl_sent_t). */
    rl_sent_t *sent;
    guint n_sent, sent_cap;
    GHashTable *late;
    /* Reassemblies under way: at most the 64-packet window. */
    rl_reasm_t *pending;
    guint n_pending, pending_cap;
    gboolean have_ack;
    guint16 last_ack;
    guint64 last_ack_seq;    /* the extended sequence of the packet whose header gave last_ack */
    gboolean last_ack_start; /* that header was an endpoint's start (ack 65535, no ack bits) */
    guint32 restarts;        /* times the endpoint started again (a reconnect on the same ports) */
    gboolean stale;          /* the peer started again and this side not yet: its acks are of the old peer */
    guint32 last_ack_frame;
    gboolean stall_flagged;
    /* The peer acknowledged packets of this direction that the capture
     * missed: this direction's next header after a gap may follow headers
     * the capture missed too, so it decides no loss. */
    gboolean missed;
    gboolean gap_since_header;
    guint64 missed_to;       /* the newest of its sequences counted as not captured */ /* sequences skipped since this direction's last header taken */
    /* counters */
    guint32 packets, fragments, dups, reordered, gap_seqs, acked, lost, incomplete, reassembled, bad;
    gint64 rtt_min_ns, rtt_max_ns, rtt_sum_ns;
    guint64 bytes;
} rl_dir_t;

/* The heuristic under netcode (dissect.c) in one direction of a
 * conversation: whether the direction showed a payload, whether it carries
 * reliable packets, and until it does, the newest sequence of its payloads
 * (claimed or not). Once confirmed, the direction's newest sequence is the
 * analysis' (rl_dir_t.newest). */
typedef struct rl_heur_dir {
    gboolean seen;
    gboolean confirmed;
    guint16 newest;
} rl_heur_dir_t;

typedef struct rl_conn {
    guint32 index;
    gboolean listed;         /* analysed: in the list of conversations (index set) */
    rl_dir_t dir[2];
    /* The heuristic's view: its direction 0 is that of the first payload it
     * saw (the analysis' is that of the first packet claimed). */
    address heur_src0;
    guint32 heur_port0;
    rl_heur_dir_t heur[2];
} rl_conn_t;

/* Queued on the "reliable" tap for every analysed packet. */
typedef struct rl_tap_info {
    rl_conn_t *conn;
    guint8 dir;
} rl_tap_info_t;

/* analysis.c */
void reliable_analysis_register(int proto, module_t *module);
/* The frame's record (packet scope), or NULL; transient: tshark's single
 * pass, where the frame is never dissected again (common/single-pass.h). */
rl_frame_t *reliable_analysis_packet(packet_info *pinfo, const reliable_pkt_t *pkt, guint32 bytes,
                                     gboolean *transient);
void reliable_analysis_handoff(void);
void reliable_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *ti, rl_frame_t *rec);
/* The state of the packet's conversation, made at its first packet, the
 * heuristic's or the analysis' (entered among the analysed conversations,
 * and numbered, at its first analysed packet). */
rl_conn_t *reliable_conn_of(packet_info *pinfo);
/* The analysis' direction of a conversation whose packets come from src,
 * port (NULL: none analysed). */
const rl_dir_t *reliable_conn_dir(const rl_conn_t *c, const address *src, guint32 port);

/* reasm.c: fragmented packets in the plugin's own store (common/
 * reasm-store.h; for the revisit: each completed packet once, without the
 * completing frame's own fragment). rl_reasm_register() from the registration routine.
 * rl_reasm_add(): the fragment at data_off (data_len bytes) of the packet
 * rec describes; the reassembled packet (a tvb of this packet, a data
 * source, with the fragment list under rt) in the frame that completes it,
 * NULL elsewhere ("Reassembled in" under rt on a revisit). */
void rl_reasm_register(void);
tvbuff_t *rl_reasm_add(tvbuff_t *tvb, guint data_off, guint data_len, packet_info *pinfo, proto_tree *rt,
                       const rl_frame_t *rec, const reliable_pkt_t *pkt, gboolean transient,
                       const fragment_items *fit);

/* stats.c */
void reliable_stats_register(void);

#endif /* RELIABLE_INT_H */
