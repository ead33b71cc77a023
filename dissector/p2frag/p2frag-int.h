/* p2frag/p2frag-int.h
 * Shared between the fragment protocol's decoder (p2frag/dissect.c), its
 * analysis (p2frag/analysis.c) and its statistics (p2frag/stats.c).
 * The protocol: docs/p2frag.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef P2FRAG_INT_H
#define P2FRAG_INT_H

#include <epan/packet.h>
#include <epan/address.h>
#include <epan/prefs.h>
#include <epan/reassemble.h>

#include "common/protocol2.h"
#include "common/register-util.h"
#include "common/single-pass.h"

/* One direction of a UDP conversation (first pass, file scope). */
typedef struct p2frag_dir {
    guint32 stream;            /* the conversation's index */
    address src, dst;
    guint32 sport, dport;
    gboolean have_newest;
    gint64 newest;             /* newest sequence, unwrapped */
    wmem_tree_t *pkts;         /* fragmented packets by unwrapped sequence (low 32 bits); NULL until the first */
    wmem_list_t *in_progress;  /* fragmented packets neither complete nor lost; NULL until the first */
    struct p2frag_pkt *last_pkt; /* the packet of the last fragment (saves a lookup) */
    /* Running totals of the first pass, shown on each fragment. */
    guint32 frag_pkts;         /* fragmented packets seen */
    guint32 frag_pkts_complete;
    guint64 frags_expected;    /* sum of their fragment counts */
    guint64 frags_seen;        /* distinct fragments seen */
    guint32 regular;           /* regular packets */
    /* Fragmented packets per fragment count: the distinct counts seen, in
     * increasing order, and how many packets had each (grown as counts
     * appear, so a direction costs what it sends, not 256 entries). */
    guint8 *count_n;
    guint32 *count_pkts;
    guint32 n_counts, counts_cap;
} p2frag_dir_t;

/* One fragmented packet: a sequence of one direction. */
typedef struct p2frag_pkt {
    p2frag_dir_t *dir;
    guint32 index;             /* 1, 2, ... over the file, in order of first fragment */
    gint64 ext;                /* unwrapped sequence */
    guint16 seq;
    guint32 num_fragments;     /* 1..255 */
    /* The fragments seen: ids in increasing order and the frame of each
     * one's first copy, `seen` of them in arrays grown as fragments arrive
     * (a packet claiming 255 fragments and sending one holds one entry). */
    guint8 *frag_ids;
    guint32 *frag_frames;
    guint32 seen;              /* distinct fragments */
    guint32 frags_cap;
    guint32 last_bytes;        /* size of the last fragment, 0 until seen */
    guint32 dups;
    guint32 first_frame, last_frame;
    nstime_t first_ts, last_ts;
    guint32 complete_frame;    /* frame of the fragment that completed it */
    nstime_t complete_ts;
    guint32 lost_frame;        /* frame that moved it out of the receive window */
    gint64 lost_by;            /* the sequence that did (unwrapped) */
    guint32 interleave_frame;  /* first frame of a newer sequence before completion */
    guint16 interleave_seq;
    guint32 overtaken_frame;   /* frame in which a newer packet of its direction completed while
                                  it was incomplete (its loss shows there), 0 if none did */
    guint16 overtaken_by;      /* that newer packet's sequence */
    /* Reassembly in tshark's single pass: the fragments held so far in a
     * buffer of the packet's own (common/single-pass.h), NULL when it holds
     * nothing; in_table once a fragment went to Wireshark's table instead
     * (the packet stays there); sp_dropped when its fragments were freed
     * unfinished (out of reach). */
    cs_sp_buf_t *sp_buf;
    gboolean in_table;
    gboolean sp_dropped;
} p2frag_pkt_t;

/* What the decoder hands its taps for each analysed datagram. */
typedef struct p2frag_tap {
    const p2frag_dir_t *dir;
    const p2frag_pkt_t *pkt;   /* fragments: their packet; NULL for regular packets */
    guint32 flags;             /* P2FRAG_FF_* */
} p2frag_tap_t;

/* Per-frame analysis flags. */
#define P2FRAG_FF_DUP       (1u << 0)   /* fragment already held */
#define P2FRAG_FF_CONFLICT  (1u << 1)   /* count disagrees with earlier fragments */
#define P2FRAG_FF_TOO_OLD   (1u << 2)   /* more than 256 behind the newest sequence */
#define P2FRAG_FF_COMPLETES (1u << 3)   /* the fragment that completes its packet */

/* docs/p2frag.md, "Constants". */
#define P2FRAG_TYPE_FRAGMENT        0
#define P2FRAG_FRAGMENT_SIZE        1024    /* data in every fragment but the last */
/* A receiver drops a sequence more than this many behind the newest, and
 * keeps this many packets in progress (one per sequence % 256). */
#define P2FRAG_WINDOW               256
/* The original example's receiver indexes its packets by (oldest + i) &
 * 0xFF, so it never delivers a sequence of this or more (its bug 2). */
#define P2FRAG_ORIGINAL_SEQ_LIMIT   256

/* One parse of a datagram (or of a reassembled packet). Positions are
 * stream bits unless named offsets. */
typedef struct p2frag_body {
    dp2_reader_t r;
    guint nfields;           /* leading fields read completely */
    guint16 seq;
    guint type_bits;
    guint32 type;
    /* fragment */
    guint32 fragment_id, num_fragments;
    guint data_offset;       /* byte offset of the fragment data */
    guint data_len;          /* fragment bytes (reported) */
    /* regular */
    guint body_bit;          /* stream bit of the body */
    gint32 a, b, c;
    guint32 num_items;
    guint items_bit;
    guint32 items_read;      /* items present (num_items unless broken) */
    guint32 items_bad;       /* items above their maximum */
    guint32 pos[3], vel[3];  /* IEEE-754 bits */
    gboolean at_rest;
    guint float_bit;         /* stream bit of position x */
    guint opaque_offset, opaque_len;
    guint32 errors;          /* DP2_ERR_* | P2FRAG_ERR_* */
} p2frag_body_t;
enum { PF_SEQ = 1, PF_TYPE, PF_FRAG_HEADER, PF_BODY };

static inline gboolean p2frag_is_fragment(const p2frag_body_t *b)
{
    return b->nfields >= PF_TYPE && b->type == P2FRAG_TYPE_FRAGMENT;
}

/* Per frame, file scope (p_add_proto_data key 0). */
typedef struct p2frag_frame {
    p2frag_dir_t *dir;
    p2frag_pkt_t *pkt;        /* fragments: their packet */
    gint64 ext;               /* unwrapped sequence */
    guint32 flags;            /* P2FRAG_FF_* */
    guint32 other_frame;      /* DUP: the first copy; CONFLICT: the fragment that set the count */
    guint32 other_count;      /* CONFLICT: the count of the earlier fragments */
    guint16 newest_seq;       /* TOO_OLD: the newest sequence at the time */
    guint32 n_lost;           /* packets this frame moved out of the window unfinished */
    p2frag_pkt_t **lost;
    guint32 n_overtaken;      /* older packets still incomplete when this frame completed its packet */
    p2frag_pkt_t **overtaken;
} p2frag_frame_t;

/* ---- p2frag/analysis.c -------------------------------------------------- */

/* Registers the analysis' fields, subtree and expert infos under proto, its
 * preference (p2frag.single_pass, in module) and init routine; p2 is the
 * protocol's protocol2 registration (its conversation state). */
void p2frag_analysis_register(int proto, module_t *module, const dp2_protocol_t *p2);
void p2frag_analysis_handoff(void);

/* The first-pass analysis of a datagram a receiver would not drop on its
 * own (clean parse, the configured id), made once and kept with the frame:
 * its record, or NULL on a later pass of a frame never analysed. *transient
 * is TRUE in tshark's single pass (the record lives in the packet scope). */
p2frag_frame_t *p2frag_analysis_packet(packet_info *pinfo, const p2frag_body_t *b, gboolean *transient);

/* Reassembly in tshark's single pass (common/single-pass.c says why): starts
 * holding pkt's fragments at its first fragment given to reassembly (FALSE
 * when over budget: the packet then uses the table); adds one, returning the
 * reassembled packet, shown under tree as process_reassembled_data() shows
 * it with fit, when this fragment completes it, else NULL. */
gboolean p2frag_sp_start(p2frag_pkt_t *pkt);
tvbuff_t *p2frag_sp_add(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, guint32 fragment_id,
                        guint data_offset, guint data_len, p2frag_pkt_t *pkt, const fragment_items *fit);

/* Adds the analysis subtree and its expert infos (tree may be NULL);
 * original_notes: the notes for games built on the original example. */
void p2frag_analysis_show(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const p2frag_body_t *b,
                          const p2frag_frame_t *ff, gboolean original_notes);

/* The packet's byte count, when its last fragment was seen (else 0). */
guint32 p2frag_pkt_bytes(const p2frag_pkt_t *pkt);

/* "3-5,17" for the fragment ids never seen (scope-allocated). */
char *p2frag_missing_str(wmem_allocator_t *scope, const p2frag_pkt_t *pkt);

/* "complete in frame N", "lost in frame N, missing 3,7" or "incomplete,
 * missing ..." (scope-allocated). */
char *p2frag_status_str(wmem_allocator_t *scope, const p2frag_pkt_t *pkt);

/* ---- p2frag/stats.c ------------------------------------------------------ */

/* Registers -z p2frag,packets and the GUI table. */
void p2frag_stats_register(void);

#endif /* P2FRAG_INT_H */
