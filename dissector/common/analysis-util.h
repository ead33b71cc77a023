/* common/analysis-util.h
 * Small display helpers that every protocol of the plugin needs, kept out of
 * the protocol files so that chunk, fragment and netgame show the same thing
 * the same way:
 *
 * - sets of ids 0..n-1 as ranges, "3-5,17,200-255" (missing slices of a
 *   chunk, acked slices, missing fragment ids, acked sequence numbers),
 *   optionally cut after so many characters;
 * - Info column marks, " [Stall]", from a table of problem bits;
 * - a direction's endpoints, copied from the packet's;
 * - expert infos with a fixed summary, their numbers in a detail item
 *   (formatted only when the tree shows it).
 *
 * Prefix au_ (analysis utilities). No state but the expert tap's id: every
 * function works on what it is given.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ANALYSIS_UTIL_H
#define ANALYSIS_UTIL_H

#include <string.h>

#include <epan/packet.h>
#include <epan/expert.h>

/* ---- Id sets as ranges -------------------------------------------------- */

/* A set of ids 0..n-1, read through has(data, id). Runs of consecutive
 * members are its ranges; joins (may be NULL: always) can split a run: it
 * says whether member `id` continues the run that began at `first`. */
typedef struct au_idset {
    guint32 n;
    gboolean (*has)(const void *data, guint32 id);
    gboolean (*joins)(const void *data, guint32 first, guint32 id);
    const void *data;
} au_idset_t;

/* The ids whose byte in v[0..n) is zero (e.g. the clear entries of an array
 * of 0/1 acked flags). v must outlive the set. */
au_idset_t au_idset_zero_bytes(const guint8 *v, guint32 n);

/* The ids whose bit is set in bitmap (bit i is bit i % 8 of byte i / 8,
 * least significant first), n bits. bitmap must outlive the set. */
au_idset_t au_idset_set_bits(const guint8 *bitmap, guint32 n);

/* Finds the next run of s at or after *next: returns FALSE when there is
 * none, else TRUE with the run in [*first, *last] and *next moved past it.
 * Start with *next = 0. */
gboolean au_idset_next_run(const au_idset_t *s, guint32 *next, guint32 *first, guint32 *last);

/* Appends "first" or "first-last" to sb. */
void au_append_range(wmem_strbuf_t *sb, guint32 first, guint32 last);

/* Returns s as ranges, "3-5,17,200-255" ("" when empty), in scope. With
 * max_len > 0, no range is begun once the text holds max_len characters:
 * ",..." is appended instead (so the text can exceed max_len by one range
 * and the mark). For a bound on a display cost, not on a label length: for
 * that, au_ranges_cut(). */
char *au_ranges(wmem_allocator_t *scope, const au_idset_t *s, gsize max_len);

/* Returns ranges (as au_ranges() makes them) cut at a range boundary so
 * that, with the ",..." it then ends in, it holds at most max_len
 * characters; ranges itself when it is short enough (it may be modified
 * otherwise). For a range list inside a message of bounded length (expert
 * infos are cut at 240 characters). max_len >= 4. */
char *au_ranges_cut(wmem_allocator_t *scope, char *ranges, gsize max_len);

/* ---- Info column marks -------------------------------------------------- */

/* An Info text of the protocol's own: au_info_begin gives a buffer in the
 * packet scope with room for `len` characters of text and AU_INFO_MARKS_ROOM
 * more, au_info_set NUL-terminates it at end and sets the column to it
 * (col_set_str: not copied). While the column still shows that buffer, in
 * the same packet, au_info_marks writes the marks into it instead of
 * appending (col_append copies the whole text each time). */
#define AU_INFO_MARKS_ROOM 1024
char *au_info_begin(packet_info *pinfo, size_t len);
void au_info_set(packet_info *pinfo, char *end);

/* One mark: shown when `bits` has any bit of `when` and none of `unless`.
 * A protocol lays out its problems as bits of one guint64 (its own flags,
 * notes, decoder errors) and lists its marks in the order they appear. */
typedef struct au_info_mark {
    guint64 when;
    guint64 unless;
    const char *mark;   /* " [Stall]": with its leading space */
} au_info_mark_t;

/* Appends to the Info column lead (may be NULL) and then the marks of
 * table[0..n) that bits selects, in table order, with one column append
 * (each append copies the column's text). Does nothing without columns. */
void au_info_marks(packet_info *pinfo, const char *lead, guint64 bits, const au_info_mark_t *table, size_t n);

/* Writers of Info text without printf (it runs for every datagram): v in
 * decimal or hex, or s, at p; they return the end (no terminating NUL). */
static inline char *au_put_uint(char *p, guint32 v)
{
    /* The digits written from the end, two at a time, in 32-bit
     * arithmetic: a few instructions a digit pair. */
    static const char pairs[] =
        "0001020304050607080910111213141516171819"
        "2021222324252627282930313233343536373839"
        "4041424344454647484950515253545556575859"
        "6061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    guint n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5
            : v < 1000000 ? 6 : v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
    char *end = p + n;

    while (v >= 100) {
        guint r = v % 100;
        v /= 100;
        end -= 2;
        memcpy(end, pairs + 2 * r, 2);
    }
    if (v >= 10)
        memcpy(end - 2, pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
    return p + n;
}

static inline char *au_put_uint64(char *p, guint64 v)
{
    char digits[20];
    int n = 0;

    if (v <= G_MAXUINT32)
        return au_put_uint(p, (guint32)v);
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = digits[--n];
    return p;
}

/* v as eight lower-case hex digits, as "%08x". */
static inline char *au_put_hex8(char *p, guint32 v)
{
    static const char hex[] = "0123456789abcdef";
    for (int shift = 28; shift >= 0; shift -= 4)
        *p++ = hex[(v >> shift) & 0xF];
    return p;
}

static inline char *au_put_str(char *p, const char *s)
{
    size_t n = strlen(s);   /* known at compile time for a literal */
    memcpy(p, s, n);
    return p + n;
}

/* " Ack=<ack> AckBits=0x<8 hex>": the acks of the articles' packet header,
 * as the Info texts of netgame and reliable show them. */
static inline char *au_put_acks(char *p, guint32 ack, guint32 ack_bits)
{
    p = au_put_str(p, " Ack=");
    p = au_put_uint(p, ack);
    p = au_put_str(p, " AckBits=0x");
    return au_put_hex8(p, ack_bits);
}

/* ---- Times ---------------------------------------------------------------- */

#define AU_NS_PER_S 1000000000LL

/* A capture time in nanoseconds. */
static inline gint64 au_ns(const nstime_t *t)
{
    return (gint64)t->secs * AU_NS_PER_S + t->nsecs;
}

/* Nanoseconds as an nstime_t the way Wireshark keeps a signed time (its
 * nstime_delta, and the display of FT_RELATIVE_TIME): seconds and
 * nanoseconds of the same sign, so -1.5 s is { -1, -500000000 } and shows as
 * -1.500000000 (a capture whose clock steps back gives negative times). */
static inline nstime_t au_nstime(gint64 ns)
{
    nstime_t t;
    t.secs = (time_t)(ns / AU_NS_PER_S);
    t.nsecs = (int)(ns % AU_NS_PER_S);
    return t;
}

/* ---- Endpoints ------------------------------------------------------------ */

/* The packet's endpoints, copied into the capture file's scope: its source
 * address and port into *src and *sport, its destination into *dst and
 * *dport; swapped when reverse (the endpoints of the other direction). */
void au_copy_endpoints(packet_info *pinfo, gboolean reverse, address *src, guint32 *sport, address *dst,
                       guint32 *dport);

/* ---- Expert infos ------------------------------------------------------- */

/* Whether anything listens to the expert tap (tshark -z expert, the GUI's
 * Expert Information): then an expert info's own text is kept even when no
 * tree is built. */
gboolean au_expert_tapped(void);

/* An expert info hung on no item (no tree: first pass, packet list, taps)
 * reaches three places only: the expert tap, the Expert column (COL_EXPERT)
 * and the capture's highest severity (the GUI status bar's indicator). When
 * nothing listens to the tap, no Expert column is shown and an earlier call
 * for the same expert info left the highest severity where it still is (at
 * or above this one's), adding it again changes nothing anyone can see:
 * au_expert_unseen() says so, and the call is skipped. Anything that shows
 * expert infos (a tree, the tap, the column) gets every one. */
gboolean au_expert_unseen(packet_info *pinfo, const expert_field *ei);
/* expert_add_info after a call that was not skipped: records the highest
 * severity it left. */
void au_expert_add(packet_info *pinfo, expert_field *ei);

/* expert_add_info, skipping (au_expert_unseen) a call nothing would show. */
static inline void au_expert_add_info(packet_info *pinfo, proto_item *ti, expert_field *ei)
{
    if (ti)
        expert_add_info(pinfo, ti, ei);
    else
        au_expert_add(pinfo, ei);
}

/* An expert info with a fixed summary and its detail in the tree. The
 * summary is always ei's registered text, one text per kind (as TCP's
 * "Previous segment not captured"): tshark -z expert and the GUI's Expert
 * Information group by summary, so a summary with frame or sequence numbers
 * in it made one group per packet. The numbers (format and what follows, as
 * printf) go into the tree instead: a generated text item of the protocol's
 * field <proto>.expert.detail under ti, whose text is the detail and which
 * carries the expert info. The text is only formatted when something can
 * read it (a visible tree, or a filter or column on the detail field);
 * otherwise the expert info is hung on ti as it is. Without an item (no
 * tree: first pass, packet list, taps) the expert info alone, with its
 * summary, severity and group, or nothing when nothing would show it
 * (au_expert_unseen). ti is evaluated once. */
void au_expert_detail(packet_info *pinfo, proto_item *ti, expert_field *ei, const char *format, ...)
    G_GNUC_PRINTF(4, 5);
#define AU_EXPERT(pinfo, ti, ei, ...) au_expert_detail((pinfo), (ti), (ei), __VA_ARGS__)

/* Registers protocol proto's detail field, <proto>.expert.detail, once
 * (later calls for the same protocol do nothing): CS_REGISTER_ARRAYS calls
 * it for every protocol of the plugin. */
void au_expert_detail_register(int proto);

#endif /* ANALYSIS_UTIL_H */
