/* p2frag/p2frag-int.h
 * Shared between the fragment protocol's decoder and analysis
 * (p2frag/dissect.c) and its statistics (p2frag/stats.c).
 * The protocol: docs/p2frag.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef P2FRAG_INT_H
#define P2FRAG_INT_H

#include <epan/packet.h>
#include <epan/address.h>

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
    /* Reassembly in tshark's single pass: each fragment's data as it came,
     * beside frag_ids (sp_data[i] for fragment frag_ids[i]; NULL when not
     * held; the array NULL when the packet holds nothing), sp_have of them,
     * sp_bytes in all, at sp_slot of the live set; in_table once a fragment
     * went to Wireshark's table instead (the packet stays there); sp_dropped
     * when its fragments were freed unfinished (out of reach). */
    guint8 **sp_data;
    guint32 sp_have;
    guint32 sp_bytes;
    guint32 sp_slot;
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

/* The packet's byte count, when its last fragment was seen (else 0). */
guint32 p2frag_pkt_bytes(const p2frag_pkt_t *pkt);

/* "3-5,17" for the fragment ids never seen (scope-allocated). */
char *p2frag_missing_str(wmem_allocator_t *scope, const p2frag_pkt_t *pkt);

/* "complete in frame N", "lost in frame N, missing 3,7" or "incomplete,
 * missing ..." (scope-allocated). */
char *p2frag_status_str(wmem_allocator_t *scope, const p2frag_pkt_t *pkt);

/* Registers -z p2frag,packets and the GUI table (p2frag/stats.c). */
void p2frag_register_stats(void);

#endif /* P2FRAG_INT_H */
