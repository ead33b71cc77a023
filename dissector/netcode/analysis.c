/* analysis.c
 * The netcode connection analysis (docs/netcode.md, "Analysis"): per
 * client address and port and server, the handshake step by step
 * (request, challenge, response, the server's first keep-alive), how it
 * ended (denied, disconnect, timed out), the connect token's client id,
 * timeout and expiry, and per direction the sequence numbers: gaps,
 * duplicates, replays older than the 256-packet replay window, packets out
 * of order. State changes on the first pass only, from authenticated
 * packets when the connection's keys are known; every pass shows the
 * frame's record, with or without a tree.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include <wireshark.h>
#include <epan/packet.h>
#include <epan/expert.h>
#include <epan/to_str.h>

#include "netcode-int.h"
#include "common/analysis-util.h"
#include "common/flow-conv.h"

static const char *const type_short[NC_NUM_TYPES] = {
    "Request", "Denied", "Challenge", "Response", "Keep-alive", "Payload", "Disconnect"
};

const char *nc_type_short_name(guint type)
{
    return type < NC_NUM_TYPES ? type_short[type] : "?";
}

nstime_t nc_last_time, nc_first_time;
gboolean nc_have_first_time;

static int hf_conn = -1;
static int hf_direction = -1;
static int hf_state = -1;
static int hf_flags = -1;
static int hf_request_frame = -1;
static int hf_challenge_frame = -1;
static int hf_response_frame = -1;
static int hf_handshake_time = -1;
static int hf_step_time = -1;
static int hf_nth = -1;
static int hf_gap = -1;
static int hf_dup_frame = -1;
static int hf_silence = -1;
static int hf_not_captured = -1;
static int hf_client_id = -1;
static int ett_analysis = -1;

static expert_field ei_netcode_request = EI_INIT;
static expert_field ei_netcode_request_repeated = EI_INIT;
static expert_field ei_netcode_request_after_challenge = EI_INIT;
static expert_field ei_netcode_token_expired = EI_INIT;
static expert_field ei_netcode_challenge = EI_INIT;
static expert_field ei_netcode_response = EI_INIT;
static expert_field ei_netcode_response_repeated = EI_INIT;
static expert_field ei_netcode_connected = EI_INIT;
static expert_field ei_netcode_denied = EI_INIT;
static expert_field ei_netcode_disconnect = EI_INIT;
static expert_field ei_netcode_gap = EI_INIT;
static expert_field ei_netcode_duplicate = EI_INIT;
static expert_field ei_netcode_replay = EI_INIT;
static expert_field ei_netcode_out_of_order = EI_INIT;
static expert_field ei_netcode_timed_out = EI_INIT;
static expert_field ei_netcode_not_captured = EI_INIT;
static expert_field ei_netcode_after_disconnect = EI_INIT;

static const char *const dir_names[2] = { "client to server", "server to client" };

static const au_info_mark_t info_marks[] = {
    { NC_F_REQUEST_REPEATED, 0, " [Repeated]" },
    { NC_F_RESPONSE_REPEATED, 0, " [Repeated]" },
    { NC_F_TOKEN_EXPIRED, 0, " [Token expired]" },
    { NC_F_CONNECTED, 0, " [Connected]" },
    { NC_F_DENIED, 0, " [Denied]" },
    { NC_F_GAP, 0, " [Gap]" },
    { NC_F_DUPLICATE, 0, " [Duplicate]" },
    { NC_F_REPLAY, 0, " [Replay]" },
    { NC_F_OUT_OF_ORDER, 0, " [Out of order]" },
    { NC_F_TIMED_OUT, 0, " [Timed out]" },
    { NC_F_NOT_CAPTURED, 0, " [Packets not captured]" },
};

const char *nc_state_name(guint state)
{
    switch (state) {
    case NC_ST_REQUESTED: return "requested";
    case NC_ST_CHALLENGED: return "challenged";
    case NC_ST_RESPONDED: return "responded";
    case NC_ST_CONNECTED: return "connected";
    default: return "none";
    }
}

static double secs_between(const nstime_t *a, const nstime_t *b)
{
    return (double)(au_ns(b) - au_ns(a)) / 1e9;
}

/* How a connection that is still up at the end of the capture went quiet:
 * NC_QUIET_NONE; NC_QUIET_BOTH, silent for longer than its timeout; or one
 * side silent while the other kept sending for about the timeout (within a
 * keep-alive interval and the latencies: NC_QUIET_MARGIN) and then stopped
 * without a disconnect: that other side timed it out (netcode sends nothing
 * when a timeout resets a connection). */
enum { NC_QUIET_NONE = 0, NC_QUIET_BOTH, NC_QUIET_CLIENT, NC_QUIET_SERVER };
#define NC_QUIET_MARGIN 0.5

static int quiet_at_end(const nc_conn_t *c)
{
    const nstime_t *lc = &c->dir[NC_C2S].last_time, *ls = &c->dir[NC_S2C].last_time;
    const nstime_t *last = au_ns(ls) > au_ns(lc) ? ls : lc;
    double margin = MIN(NC_QUIET_MARGIN, (double)c->timeout_s / 4);

    if (!c->have_token || c->timeout_s <= 0 || c->state != NC_ST_CONNECTED || c->end != NC_END_NONE)
        return NC_QUIET_NONE;
    if (secs_between(last, &nc_last_time) > (double)c->timeout_s)
        return NC_QUIET_BOTH;
    if (!c->dir[NC_C2S].packets || !c->dir[NC_S2C].packets)
        return NC_QUIET_NONE;
    if (secs_between(lc, ls) >= (double)c->timeout_s - margin)
        return NC_QUIET_CLIENT;
    if (secs_between(ls, lc) >= (double)c->timeout_s - margin)
        return NC_QUIET_SERVER;
    return NC_QUIET_NONE;
}

const char *nc_end_name(const nc_conn_t *c)
{
    switch (c->end) {
    case NC_END_DENIED: return "denied";
    case NC_END_DISCONNECT_CLIENT: return "client disconnected";
    case NC_END_DISCONNECT_SERVER: return "server disconnected";
    case NC_END_TIMED_OUT: return "timed out";
    default:
        switch (quiet_at_end(c)) {
        case NC_QUIET_BOTH: return "timed out (silent at the end)";
        case NC_QUIET_CLIENT: return "timed out (client silent)";
        case NC_QUIET_SERVER: return "timed out (server silent)";
        default: break;
        }
        return c->state == NC_ST_CONNECTED ? "open at capture end" : "handshake incomplete";
    }
}

/* Sequence numbers of one direction (not the server's global ones). */
static void track_sequence(nc_dir_t *d, nc_frame_t *rec, guint64 seq, guint32 frame)
{
    guint idx = (guint)(seq % NC_REPLAY_WINDOW);

    if (!d->window) {
        d->window = wmem_alloc_array(wmem_file_scope(), guint64, NC_REPLAY_WINDOW);
        d->window_frame = wmem_alloc0_array(wmem_file_scope(), guint32, NC_REPLAY_WINDOW);
        memset(d->window, 0xFF, NC_REPLAY_WINDOW * sizeof *d->window);
    }
    if (!d->have_seq) {
        d->have_seq = TRUE;
        d->most_recent = seq;
    } else if (seq > d->most_recent) {
        guint64 gap = seq - d->most_recent - 1;
        if (gap && (rec->flags & NC_F_NOT_CAPTURED)) {
            rec->gap = gap;     /* sent during a silence the capture missed: not lost */
        } else if (gap) {
            rec->flags |= NC_F_GAP;
            rec->gap = gap;
            d->gaps++;
            d->lost += gap;
        }
        d->most_recent = seq;
    } else if (d->most_recent >= NC_REPLAY_WINDOW && seq <= d->most_recent - NC_REPLAY_WINDOW) {
        rec->flags |= NC_F_REPLAY;
        rec->gap = d->most_recent - seq;
        d->replays++;
        return;
    } else if (d->window[idx] == seq) {
        rec->flags |= NC_F_DUPLICATE;
        rec->dup_frame = d->window_frame[idx];
        d->dups++;
        return;
    } else {
        rec->flags |= NC_F_OUT_OF_ORDER;
        rec->gap = d->most_recent - seq;
        d->out_of_order++;
        if (d->lost)
            d->lost--;
    }
    d->window[idx] = seq;
    d->window_frame[idx] = frame;
}

/* How the connection ended, in which frame and when. */
static void set_end(nc_conn_t *c, guint8 end, guint32 frame, const nstime_t *t)
{
    c->end = end;
    c->end_frame = frame;
    c->end_time = *t;
}

/* Connected, in which frame and when. */
static void set_connected(nc_conn_t *c, guint32 frame, const nstime_t *t)
{
    c->state = NC_ST_CONNECTED;
    c->connected_frame = frame;
    c->connected_time = *t;
}

/* Whether the packet carries the direction's sequence (track_sequence). */
static gboolean has_sequence(guint8 type)
{
    return type == NC_RESPONSE || type == NC_KEEP_ALIVE || type == NC_PAYLOAD || type == NC_DISCONNECT;
}

/* Silence longer than the token's timeout: the other side has dropped the
 * connection by now. Unless the packet after it continues the direction's
 * sequence with a jump: the sender went on sending through the silence
 * (netcode sends 10 packets a second at least), so the silence is only
 * packets the capture missed (a kernel's drops), not a timeout. */
static void check_timeout(packet_info *pinfo, nc_conn_t *c, const nc_dir_t *d, nc_frame_t *rec, const nc_pkt_t *p)
{
    const nstime_t *t = &pinfo->abs_ts;

    if (d->packets && c->have_token && c->timeout_s > 0 && c->state == NC_ST_CONNECTED &&
        c->end == NC_END_NONE && secs_between(&d->last_time, t) > (double)c->timeout_s) {
        if (has_sequence(p->type) && d->have_seq && p->seq > d->most_recent + 1) {
            rec->flags |= NC_F_NOT_CAPTURED;
            nstime_delta(&rec->silence, t, &d->last_time);
            rec->ref_frame = d->last_frame;
            return;
        }
        rec->flags |= NC_F_TIMED_OUT;
        nstime_delta(&rec->silence, t, &d->last_time);
        rec->ref_frame = d->last_frame;
        set_end(c, NC_END_TIMED_OUT, d->last_frame, &d->last_time);
        c->timed_out_frame = pinfo->num;
    }
}

/* The connect token's facts, from a request whose token decrypted (or one
 * that no private key opened). */
static void note_token(packet_info *pinfo, nc_conn_t *c, const nc_pkt_t *p)
{
    if (p->token_decrypted) {
        c->have_token = TRUE;
        c->client_id = p->client_id;
        c->timeout_s = p->token_timeout;
        c->token_bad = p->token_bad;
        c->server_not_in_token = !p->token_bad && !p->server_in_token &&
                                 (pinfo->dst.type == AT_IPv4 || pinfo->dst.type == AT_IPv6);
    } else if (p->token_tried) {
        c->token_failed = TRUE;
        c->n_token_failed++;
    }
}

static void analyse_request(packet_info *pinfo, nc_conn_t *c, nc_frame_t *rec, const nc_pkt_t *p)
{
    const nstime_t *t = &pinfo->abs_ts;

    c->n_requests++;
    rec->nth = c->n_requests;
    if (c->n_requests == 1) {
        rec->flags |= NC_F_REQUEST;
        c->request_frame = pinfo->num;
        c->request_time = *t;
    } else if (c->state >= NC_ST_CHALLENGED && c->challenge_frame) {
        rec->flags |= NC_F_REQUEST_AFTER_CHALLENGE;
        rec->ref_frame = c->challenge_frame;
        nstime_delta(&rec->delta, t, &c->challenge_time);
    } else {
        rec->flags |= NC_F_REQUEST_REPEATED;
        rec->ref_frame = c->request_frame;
        nstime_delta(&rec->delta, t, &c->request_time);
    }
    c->last_request_frame = pinfo->num;
    if (c->state < NC_ST_REQUESTED)
        c->state = NC_ST_REQUESTED;
    c->protocol_id = p->protocol_id;
    c->have_protocol_id = TRUE;
    c->expire_ts = p->expire_ts;
    if (p->expire_ts <= (guint64)t->secs) {
        rec->flags |= NC_F_TOKEN_EXPIRED;
        c->token_expired = TRUE;
    }
    note_token(pinfo, c, p);
}

static void analyse_challenge(packet_info *pinfo, nc_conn_t *c, nc_frame_t *rec)
{
    c->n_challenges++;
    rec->nth = c->n_challenges;
    rec->flags |= NC_F_CHALLENGE;
    rec->ref_frame = c->last_request_frame;
    if (c->last_request_frame)
        nstime_delta(&rec->delta, &pinfo->abs_ts, &c->request_time);
    if (!c->challenge_frame) {
        c->challenge_frame = pinfo->num;
        c->challenge_time = pinfo->abs_ts;
    }
    if (c->state < NC_ST_CHALLENGED)
        c->state = NC_ST_CHALLENGED;
}

static void analyse_response(packet_info *pinfo, nc_conn_t *c, nc_frame_t *rec)
{
    c->n_responses++;
    rec->nth = c->n_responses;
    if (c->n_responses == 1) {
        rec->flags |= NC_F_RESPONSE;
        rec->ref_frame = c->challenge_frame;
        if (c->challenge_frame)
            nstime_delta(&rec->delta, &pinfo->abs_ts, &c->challenge_time);
        c->response_frame = pinfo->num;
        c->response_time = pinfo->abs_ts;
    } else {
        rec->flags |= NC_F_RESPONSE_REPEATED;
        rec->ref_frame = c->response_frame;
        nstime_delta(&rec->delta, &pinfo->abs_ts, &c->response_time);
    }
    if (c->state < NC_ST_RESPONDED)
        c->state = NC_ST_RESPONDED;
}

static void analyse_keep_alive(packet_info *pinfo, nc_conn_t *c, nc_dir_t *d, nc_frame_t *rec, const nc_pkt_t *p)
{
    const nstime_t *t = &pinfo->abs_ts;

    if (p->dir == NC_S2C && c->state < NC_ST_CONNECTED) {
        if (c->state >= NC_ST_REQUESTED) {
            rec->flags |= NC_F_CONNECTED;
            rec->ref_frame = c->request_frame;
            nstime_delta(&rec->delta, t, &c->request_time);
        }
        set_connected(c, pinfo->num, t);
    }
    if (p->dir == NC_S2C && p->decrypted) {
        c->client_index = p->client_index;
        c->max_clients = p->max_clients;
        c->have_client_index = TRUE;
    }
    if (!d->by_type[NC_KEEP_ALIVE] || d->by_type[NC_KEEP_ALIVE] == 1)
        d->keep_alive_first = *t;
    d->keep_alive_last = *t;
}

static void analyse_disconnect(packet_info *pinfo, nc_conn_t *c, nc_frame_t *rec, guint dn)
{
    c->n_disconnect[dn]++;
    rec->nth = c->n_disconnect[dn];
    rec->flags |= NC_F_DISCONNECT;
    if (c->end == NC_END_NONE)
        set_end(c, dn == NC_C2S ? NC_END_DISCONNECT_CLIENT : NC_END_DISCONNECT_SERVER, pinfo->num, &pinfo->abs_ts);
}

void nc_analysis_packet(packet_info *pinfo, nc_conn_t *c, nc_frame_t *rec, const nc_pkt_t *p)
{
    guint dn = p->dir;
    nc_dir_t *d = &c->dir[dn];
    const nstime_t *t = &pinfo->abs_ts;

    check_timeout(pinfo, c, d, rec, p);
    if (!d->packets) {
        d->first_frame = pinfo->num;
        d->first_time = *t;
    }
    d->packets++;
    d->bytes += p->len;
    d->by_type[p->type]++;
    d->last_frame = pinfo->num;
    d->last_time = *t;

    if ((c->end == NC_END_DISCONNECT_CLIENT || c->end == NC_END_DISCONNECT_SERVER) && c->end_frame < pinfo->num &&
        p->type != NC_DISCONNECT && p->type != NC_REQUEST)
        rec->flags |= NC_F_AFTER_DISCONNECT;

    switch (p->type) {
    case NC_REQUEST:
        analyse_request(pinfo, c, rec, p);
        break;
    case NC_DENIED:
        c->n_denied++;
        rec->flags |= NC_F_DENIED;
        rec->ref_frame = c->last_request_frame;
        if (!c->denied_frame)
            c->denied_frame = pinfo->num;
        set_end(c, NC_END_DENIED, pinfo->num, t);
        break;
    case NC_CHALLENGE:
        analyse_challenge(pinfo, c, rec);
        break;
    case NC_RESPONSE:
        analyse_response(pinfo, c, rec);
        track_sequence(d, rec, p->seq, pinfo->num);
        break;
    case NC_KEEP_ALIVE:
        analyse_keep_alive(pinfo, c, d, rec, p);
        track_sequence(d, rec, p->seq, pinfo->num);
        break;
    case NC_PAYLOAD:
        if (c->state == NC_ST_NONE)
            set_connected(c, pinfo->num, t);   /* connected before the capture began */
        track_sequence(d, rec, p->seq, pinfo->num);
        break;
    case NC_DISCONNECT:
        analyse_disconnect(pinfo, c, rec, dn);
        track_sequence(d, rec, p->seq, pinfo->num);
        break;
    default:
        break;
    }
    rec->state_after = c->state;
}

void nc_analysis_info(packet_info *pinfo, const nc_frame_t *rec)
{
    au_info_marks(pinfo, NULL, rec->flags, info_marks, array_length(info_marks));
}

char *nc_analysis_marks(wmem_allocator_t *scope, const nc_frame_t *rec)
{
    return fc_marks(scope, rec->flags, info_marks, array_length(info_marks));
}

static void add_time(proto_tree *tree, int hf, tvbuff_t *tvb, const nstime_t *t)
{
    proto_item_set_generated(proto_tree_add_time(tree, hf, tvb, 0, 0, t));
}

/* The request's analysis: first, repeated, after a challenge, expired token. */
static void show_request_notes(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, proto_item *top,
                               const nc_frame_t *rec)
{
    const nc_conn_t *c = rec->conn;

    if (rec->flags & NC_F_REQUEST) {
        if (c->have_token)
            AU_EXPERT(pinfo, top, &ei_netcode_request,
                      "Connection request from the client (client id %" G_GUINT64_FORMAT
                      ", timeout %d s)", c->client_id, c->timeout_s);
        else
            expert_add_info(pinfo, top, &ei_netcode_request);
    }
    if (rec->flags & NC_F_REQUEST_REPEATED) {
        proto_item_set_generated(proto_tree_add_uint(at, hf_request_frame, tvb, 0, 0, rec->ref_frame));
        add_time(at, hf_step_time, tvb, &rec->delta);
        AU_EXPERT(pinfo, top, &ei_netcode_request_repeated,
                  "Request sent again (%u. request; first in frame %u, %.3f s ago): no challenge has "
                  "come back yet", rec->nth, rec->ref_frame, nstime_to_sec(&rec->delta));
    }
    if (rec->flags & NC_F_REQUEST_AFTER_CHALLENGE) {
        proto_item_set_generated(proto_tree_add_uint(at, hf_challenge_frame, tvb, 0, 0, rec->ref_frame));
        AU_EXPERT(pinfo, top, &ei_netcode_request_after_challenge,
                  "Request sent again %.3f s after the server's challenge in frame %u: the client did "
                  "not get the challenge (lost on the way back?)", nstime_to_sec(&rec->delta),
                  rec->ref_frame);
    }
    if (rec->flags & NC_F_TOKEN_EXPIRED)
        AU_EXPERT(pinfo, top, &ei_netcode_token_expired,
                  "The connect token expired at %" G_GUINT64_FORMAT " (Unix time), before this "
                  "request: the server ignores it. A fresh token is needed (or a clock is wrong)",
                  c->expire_ts);
}

/* The rest of the handshake: challenge, response, connected, denied. */
static void show_handshake_notes(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, proto_item *top,
                                 const nc_frame_t *rec)
{

    if (rec->flags & NC_F_CHALLENGE) {
        if (rec->ref_frame) {
            proto_item_set_generated(proto_tree_add_uint(at, hf_request_frame, tvb, 0, 0, rec->ref_frame));
            add_time(at, hf_step_time, tvb, &rec->delta);
        }
        AU_EXPERT(pinfo, top, &ei_netcode_challenge,
                  "Challenge from the server%s",
                  rec->ref_frame ? wmem_strdup_printf(pinfo->pool, ", %.3f ms after the request in frame %u",
                                                                  nstime_to_msec(&rec->delta), rec->ref_frame) : "");
    }
    if (rec->flags & NC_F_RESPONSE) {
        if (rec->ref_frame) {
            proto_item_set_generated(proto_tree_add_uint(at, hf_challenge_frame, tvb, 0, 0, rec->ref_frame));
            add_time(at, hf_step_time, tvb, &rec->delta);
        }
        AU_EXPERT(pinfo, top, &ei_netcode_response, "Challenge response from the client%s",
                  rec->ref_frame ? wmem_strdup_printf(pinfo->pool, ", %.3f ms after the challenge in frame %u",
                                                                  nstime_to_msec(&rec->delta), rec->ref_frame) : "");
    }
    if (rec->flags & NC_F_RESPONSE_REPEATED) {
        proto_item_set_generated(proto_tree_add_uint(at, hf_response_frame, tvb, 0, 0, rec->ref_frame));
        AU_EXPERT(pinfo, top, &ei_netcode_response_repeated,
                  "Response sent again (%u.; first in frame %u, %.3f s ago): no keep-alive from the "
                  "server yet", rec->nth, rec->ref_frame, nstime_to_sec(&rec->delta));
    }
    if (rec->flags & NC_F_CONNECTED) {
        proto_item_set_generated(proto_tree_add_uint(at, hf_request_frame, tvb, 0, 0, rec->ref_frame));
        add_time(at, hf_handshake_time, tvb, &rec->delta);
        AU_EXPERT(pinfo, top, &ei_netcode_connected,
                  "Connected: the server's first keep-alive, %.3f ms after the request in frame %u",
                  nstime_to_msec(&rec->delta), rec->ref_frame);
    }
    if (rec->flags & NC_F_DENIED)
        AU_EXPERT(pinfo, top, &ei_netcode_denied,
                  "Connection denied: the server is full (all its client slots are taken)%s",
                  rec->ref_frame ? wmem_strdup_printf(pinfo->pool, "; request in frame %u", rec->ref_frame) : "");
}

/* Disconnects, and what the sequence numbers and the silences show. */
static void show_sequence_notes(tvbuff_t *tvb, packet_info *pinfo, proto_tree *at, proto_item *top,
                                const nc_frame_t *rec)
{
    const nc_conn_t *c = rec->conn;
    const char *side = rec->dir == NC_C2S ? "client" : "server";

    if (rec->flags & NC_F_DISCONNECT)
        AU_EXPERT(pinfo, top, &ei_netcode_disconnect,
                  "Disconnect from the %s (netcode sends 10 in a row)", side);
    if (rec->flags & NC_F_AFTER_DISCONNECT)
        AU_EXPERT(pinfo, top, &ei_netcode_after_disconnect,
                  "Packet after the connection's disconnect in frame %u", c->end_frame);
    if (rec->flags & NC_F_GAP) {
        proto_item_set_generated(proto_tree_add_uint64(at, hf_gap, tvb, 0, 0, rec->gap));
        AU_EXPERT(pinfo, top, &ei_netcode_gap,
                  "%" G_GUINT64_FORMAT " sequence number(s) skipped from the %s: lost before this "
                  "capture point (or still to come, out of order)", rec->gap, side);
    }
    if (rec->flags & NC_F_DUPLICATE) {
        if (rec->dup_frame)
            proto_item_set_generated(proto_tree_add_uint(at, hf_dup_frame, tvb, 0, 0, rec->dup_frame));
        AU_EXPERT(pinfo, top, &ei_netcode_duplicate,
                  "Duplicate of frame %u (same sequence): the receiver's replay protection drops it",
                  rec->dup_frame);
    }
    if (rec->flags & NC_F_REPLAY)
        AU_EXPERT(pinfo, top, &ei_netcode_replay,
                  "Sequence %" G_GUINT64_FORMAT " behind the newest of the %s: outside the 256-packet "
                  "replay window, the receiver drops it as a replay", rec->gap, side);
    if (rec->flags & NC_F_OUT_OF_ORDER)
        AU_EXPERT(pinfo, top, &ei_netcode_out_of_order,
                  "Out of order: %" G_GUINT64_FORMAT " behind the newest sequence of the %s (inside the "
                  "replay window: accepted)", rec->gap, side);
    if (rec->flags & NC_F_TIMED_OUT) {
        add_time(at, hf_silence, tvb, &rec->silence);
        AU_EXPERT(pinfo, top, &ei_netcode_timed_out,
                  "%.3f s of silence from the %s since frame %u, longer than the token's timeout of "
                  "%d s: the %s has timed out the connection and drops this packet",
                  nstime_to_sec(&rec->silence), side, rec->ref_frame, c->timeout_s,
                  rec->dir == NC_C2S ? "server" : "client");
    }
    if (rec->flags & NC_F_NOT_CAPTURED) {
        proto_item *it = proto_tree_add_uint64_format_value(at, hf_not_captured, tvb, 0, 0, rec->gap,
                                                            "%" G_GUINT64_FORMAT " (sequences of the %s during "
                                                            "%.3f s after frame %u)", rec->gap, side,
                                                            nstime_to_sec(&rec->silence), rec->ref_frame);
        proto_item_set_generated(it);
        add_time(at, hf_silence, tvb, &rec->silence);
        expert_add_info(pinfo, it ? it : top, &ei_netcode_not_captured);
    }
}

void nc_analysis_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_item *top, const nc_frame_t *rec)
{
    const nc_conn_t *c = rec->conn;
    proto_item *ai;
    proto_tree *at;

    if (!c)
        return;
    ai = proto_tree_add_uint(tree, hf_conn, tvb, 0, 0, c->index);
    proto_item_set_generated(ai);
    at = proto_item_add_subtree(ai, ett_analysis);
    proto_item_set_generated(proto_tree_add_string(at, hf_direction, tvb, 0, 0, dir_names[rec->dir]));
    if (!rec->analysed) {
        proto_item_append_text(ai, " (not analysed: not authenticated)");
        return;
    }
    proto_item_set_generated(proto_tree_add_string(at, hf_state, tvb, 0, 0, nc_state_name(rec->state_after)));
    if (rec->flags)
        proto_item_set_generated(proto_tree_add_uint(at, hf_flags, tvb, 0, 0, rec->flags));
    if (c->have_token)
        proto_item_set_generated(proto_tree_add_uint64(at, hf_client_id, tvb, 0, 0, c->client_id));
    if (rec->nth)
        proto_item_set_generated(proto_tree_add_uint(at, hf_nth, tvb, 0, 0, rec->nth));
    show_request_notes(tvb, pinfo, at, top, rec);
    show_handshake_notes(tvb, pinfo, at, top, rec);
    show_sequence_notes(tvb, pinfo, at, top, rec);
}

char *nc_conn_diagnosis(wmem_allocator_t *scope, const nc_conn_t *c)
{
    wmem_strbuf_t *sb = wmem_strbuf_new(scope, "");
    guint32 s2c = c->dir[NC_S2C].packets;

    if (c->end == NC_END_DENIED) {
        wmem_strbuf_append_printf(sb, "Denied (frame %u): the server is full, every client slot is taken. ",
                                  c->denied_frame);
    } else if (c->state == NC_ST_REQUESTED) {
        wmem_strbuf_append_printf(sb, "The server never answered %u request(s) (frame %u on). ",
                                  c->n_requests, c->request_frame);
        if (c->token_expired)
            wmem_strbuf_append(sb, "The connect token had expired when the client sent it: the server ignores "
                                   "expired tokens. Get a fresh token (or check the clocks of backend, client and "
                                   "server). ");
        else if (c->token_bad)
            wmem_strbuf_append(sb, "The private connect token decrypts but is malformed: the server ignores it. ");
        else if (c->server_not_in_token)
            wmem_strbuf_append(sb, "The server's address is not among the token's server addresses: the server "
                                   "ignores the request (check the backend's list, or an address translation). ");
        else if (c->token_failed)
            wmem_strbuf_append(sb, "The private connect token does not decrypt with the private key(s) given: if one "
                                   "is the server's, the server cannot read the token either (the backend signs "
                                   "tokens with another private key, or with another protocol id). ");
        else if (c->have_token)
            wmem_strbuf_append(sb, "The token is valid for this server (it decrypts, has not expired, lists this "
                                   "address): is the server running, on this port, with the same protocol id? Does "
                                   "the request reach it, and its challenge come back (lost on the way back)? Has "
                                   "the token been used from another address? ");
        else
            wmem_strbuf_append(sb, "Without the private key the token cannot be checked: wrong private key or "
                                   "protocol id on the server, an expired token (compare the expire timestamp), or "
                                   "no server listening. ");
    } else if (c->state == NC_ST_CHALLENGED) {
        wmem_strbuf_append_printf(sb, "The server challenged (frame %u) but no response followed: ", c->challenge_frame);
        if (c->n_requests > 1 && c->last_request_frame > c->challenge_frame)
            wmem_strbuf_append(sb, "the client kept requesting, so the challenge did not reach it (lost on the "
                                   "way back). ");
        else
            wmem_strbuf_append(sb, "the challenge was lost on the way to the client, or the client gave up. ");
    } else if (c->state == NC_ST_RESPONDED) {
        wmem_strbuf_append_printf(sb, "The client answered the challenge (frame %u, %u response(s)) but no keep-alive "
                                  "came back: the responses were lost on the way to the server, the server was full "
                                  "by then, or it no longer accepts the challenge token (restarted: new challenge "
                                  "key). ", c->response_frame, c->n_responses);
    }
    if (c->state == NC_ST_CONNECTED || c->end == NC_END_TIMED_OUT) {
        if (c->end == NC_END_TIMED_OUT)
            wmem_strbuf_append_printf(sb, "Timed out: a side was silent longer than the token's %d s timeout (after "
                                      "frame %u). ", c->timeout_s, c->end_frame);
        else {
            int quiet = quiet_at_end(c);
            if (quiet == NC_QUIET_BOTH)
                wmem_strbuf_append_printf(sb, "Silent for longer than the token's %d s timeout at the end of the "
                                          "capture: both sides have dropped the connection. ", c->timeout_s);
            else if (quiet != NC_QUIET_NONE)
                wmem_strbuf_append_printf(sb, "Timed out: the %s went silent (after frame %u); the %s kept sending "
                                          "for the token's %d s timeout, then stopped without a disconnect: it "
                                          "timed the %s out. ",
                                          quiet == NC_QUIET_CLIENT ? "client" : "server",
                                          c->dir[quiet == NC_QUIET_CLIENT ? NC_C2S : NC_S2C].last_frame,
                                          quiet == NC_QUIET_CLIENT ? "server" : "client", c->timeout_s,
                                          quiet == NC_QUIET_CLIENT ? "client" : "server");
        }
    }
    if (c->decrypt_failed)
        wmem_strbuf_append_printf(sb, "%u packet(s) did not decrypt with the connection's keys: forged or corrupted "
                                  "packets, or other keys. ", c->decrypt_failed);
    for (int d = 0; d < 2; d++) {
        const nc_dir_t *dd = &c->dir[d];
        if (dd->dups || dd->replays)
            wmem_strbuf_append_printf(sb, "The %s sent %u duplicate(s) and %u replay(s): dropped by replay "
                                      "protection. ", d == NC_C2S ? "client" : "server", dd->dups, dd->replays);
    }
    if (c->state >= NC_ST_REQUESTED && !s2c && c->end != NC_END_DENIED && c->state == NC_ST_REQUESTED)
        wmem_strbuf_append(sb, "Nothing at all came back from the server.");
    if (!wmem_strbuf_get_len(sb))
        return NULL;
    return g_strchomp((char *)wmem_strbuf_get_str(sb));
}

void nc_analysis_register(int proto)
{
    static hf_register_info hf[] = {
        { &hf_conn, { "Connection", "netcode.conn", FT_UINT32, BASE_DEC, NULL, 0x0,
            "Index of the connection (client address and port, server) in the capture", HFILL } },
        { &hf_direction, { "Direction", "netcode.direction", FT_STRING, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_state, { "Connection state", "netcode.analysis.state", FT_STRING, BASE_NONE, NULL, 0x0,
            "The furthest handshake step reached after this packet", HFILL } },
        { &hf_flags, { "Analysis flags", "netcode.analysis.flags", FT_UINT32, BASE_HEX, NULL, 0x0,
            "Events and problems of this packet (docs/netcode.md)", HFILL } },
        { &hf_request_frame, { "Request in frame", "netcode.analysis.request_frame", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_challenge_frame, { "Challenge in frame", "netcode.analysis.challenge_frame", FT_FRAMENUM, BASE_NONE, NULL,
            0x0, NULL, HFILL } },
        { &hf_response_frame, { "First response in frame", "netcode.analysis.response_frame", FT_FRAMENUM, BASE_NONE,
            NULL, 0x0, NULL, HFILL } },
        { &hf_handshake_time, { "Handshake time", "netcode.analysis.handshake_time", FT_RELATIVE_TIME, BASE_NONE,
            NULL, 0x0, "From the first request to the server's first keep-alive", HFILL } },
        { &hf_step_time, { "Time since the previous step", "netcode.analysis.step_time", FT_RELATIVE_TIME, BASE_NONE,
            NULL, 0x0, NULL, HFILL } },
        { &hf_nth, { "Count", "netcode.analysis.count", FT_UINT32, BASE_DEC, NULL, 0x0,
            "The how-many-th request, challenge, response or disconnect of this connection", HFILL } },
        { &hf_gap, { "Sequence distance", "netcode.analysis.gap", FT_UINT64, BASE_DEC, NULL, 0x0,
            "Numbers skipped (gap), or behind the newest (out of order, replay)", HFILL } },
        { &hf_dup_frame, { "Duplicate of frame", "netcode.analysis.duplicate_of", FT_FRAMENUM, BASE_NONE, NULL, 0x0,
            NULL, HFILL } },
        { &hf_silence, { "Silence", "netcode.analysis.silence", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
            "Time since the sender's previous packet, over the token's timeout", HFILL } },
        { &hf_not_captured, { "Packets not captured", "netcode.analysis.not_captured", FT_UINT64, BASE_DEC, NULL,
            0x0, "Sequences the sender went on with through a silence longer than the timeout: packets the "
            "capture does not hold (docs/netcode.md)", HFILL } },
        { &hf_client_id, { "Client id", "netcode.analysis.client_id", FT_UINT64, BASE_DEC, NULL, 0x0,
            "From the connection's connect token", HFILL } },
    };
    static gint *ett[] = { &ett_analysis };
    static ei_register_info ei[] = {
        { &ei_netcode_request, { "netcode.request", PI_SEQUENCE, PI_CHAT,
            "Connection request", EXPFILL } },
        { &ei_netcode_request_repeated, { "netcode.request.repeated", PI_SEQUENCE, PI_NOTE,
            "Request sent again: no challenge yet", EXPFILL } },
        { &ei_netcode_request_after_challenge, { "netcode.request.after_challenge", PI_SEQUENCE, PI_WARN,
            "Request sent again after the server's challenge: the client did not get it", EXPFILL } },
        { &ei_netcode_token_expired, { "netcode.token.expired", PI_SEQUENCE, PI_WARN,
            "The connect token had expired at the request's capture time", EXPFILL } },
        { &ei_netcode_challenge, { "netcode.challenge", PI_SEQUENCE, PI_CHAT,
            "Connection challenge", EXPFILL } },
        { &ei_netcode_response, { "netcode.response", PI_SEQUENCE, PI_CHAT,
            "Challenge response", EXPFILL } },
        { &ei_netcode_response_repeated, { "netcode.response.repeated", PI_SEQUENCE, PI_NOTE,
            "Response sent again: no keep-alive yet", EXPFILL } },
        { &ei_netcode_connected, { "netcode.connected", PI_SEQUENCE, PI_CHAT,
            "Connected", EXPFILL } },
        { &ei_netcode_denied, { "netcode.denied", PI_SEQUENCE, PI_WARN,
            "Connection denied: server full", EXPFILL } },
        { &ei_netcode_disconnect, { "netcode.disconnect", PI_SEQUENCE, PI_NOTE,
            "Disconnect", EXPFILL } },
        { &ei_netcode_gap, { "netcode.sequence.gap", PI_SEQUENCE, PI_NOTE,
            "Sequence numbers skipped", EXPFILL } },
        { &ei_netcode_duplicate, { "netcode.sequence.duplicate", PI_SEQUENCE, PI_WARN,
            "Duplicate sequence", EXPFILL } },
        { &ei_netcode_replay, { "netcode.sequence.replay", PI_SEQUENCE, PI_WARN,
            "Sequence older than the replay window", EXPFILL } },
        { &ei_netcode_out_of_order, { "netcode.sequence.out_of_order", PI_SEQUENCE, PI_NOTE,
            "Sequence out of order", EXPFILL } },
        { &ei_netcode_timed_out, { "netcode.timed_out", PI_SEQUENCE, PI_WARN,
            "Silence longer than the token's timeout", EXPFILL } },
        { &ei_netcode_not_captured, { "netcode.analysis.not_captured.expert", PI_SEQUENCE, PI_NOTE,
            "Packets not captured", EXPFILL } },
        { &ei_netcode_after_disconnect, { "netcode.after_disconnect", PI_SEQUENCE, PI_NOTE,
            "Packet after a disconnect", EXPFILL } },
    };

    CS_REGISTER_ARRAYS(proto, hf, ett, ei);
}
