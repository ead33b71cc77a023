/* netcode-app.c: see netcode-app.h. */
#define _POSIX_C_SOURCE 200809L

#include "netcode-app.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const uint8_t netcode_app_example_key[NETCODE_KEY_BYTES] = {
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1};

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int netcode_app_parse_key(const char *text, uint8_t key[NETCODE_KEY_BYTES])
{
    if (strlen(text) != 2 * NETCODE_KEY_BYTES) return -1;
    for (int i = 0; i < NETCODE_KEY_BYTES; i++) {
        int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int netcode_app_read_key_file(const char *path, uint8_t key[NETCODE_KEY_BYTES], char *err, size_t err_size)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(err, err_size, "%s", strerror(errno));
        return -1;
    }
    char buf[200];
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    if (n == NETCODE_KEY_BYTES) {
        memcpy(key, buf, NETCODE_KEY_BYTES);
        return 0;
    }
    buf[n] = 0;
    char *start = buf, *end = buf + n;
    while (start < end && isspace((unsigned char)*start)) start++;
    while (end > start && isspace((unsigned char)end[-1])) *--end = 0;
    if (netcode_app_parse_key(start, key) != 0) {
        snprintf(err, err_size, "not a key: 32 bytes or 64 hex digits wanted");
        return -1;
    }
    return 0;
}

void netcode_app_print_key(FILE *out, const uint8_t key[NETCODE_KEY_BYTES])
{
    for (int i = 0; i < NETCODE_KEY_BYTES; i++) fprintf(out, "%02x", key[i]);
}

void netcode_app_print_session_keys(FILE *out, const netcode_connect_token_t *token)
{
    fprintf(out, "\"client_to_server_key\": \"");
    netcode_app_print_key(out, token->client_to_server_key);
    fprintf(out, "\", \"server_to_client_key\": \"");
    netcode_app_print_key(out, token->server_to_client_key);
    fprintf(out, "\"");
}

int netcode_app_parse_u64(const char *text, uint64_t *out)
{
    if (!*text || *text == '-' || isspace((unsigned char)*text)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

FILE *netcode_app_keylog_open(const char *program, const char *path, int truncate)
{
    FILE *out = fopen(path, truncate ? "w" : "a");
    if (!out) {
        fprintf(stderr, "%s: cannot write %s: %s\n", program, path, strerror(errno));
        return NULL;
    }
    fprintf(out, "# netcode 1.02 keys written by %s (docs/netcode-endpoints.md \"Key log\")\n", program);
    return out;
}

void netcode_app_keylog_private_key(FILE *out, const uint8_t key[NETCODE_KEY_BYTES])
{
    fprintf(out, "NETCODE_PRIVATE_KEY ");
    netcode_app_print_key(out, key);
    fprintf(out, "\n");
}

void netcode_app_keylog_connection(FILE *out, const uint8_t client_to_server[NETCODE_KEY_BYTES],
                                   const uint8_t server_to_client[NETCODE_KEY_BYTES])
{
    fprintf(out, "NETCODE_CONNECTION_KEYS ");
    netcode_app_print_key(out, client_to_server);
    fprintf(out, " ");
    netcode_app_print_key(out, server_to_client);
    fprintf(out, "\n");
    fflush(out);
}

int netcode_app_keylog_close(const char *program, const char *path, FILE *out)
{
    int bad = ferror(out);
    if (fclose(out) != 0) bad = 1;
    if (bad) fprintf(stderr, "%s: error writing %s\n", program, path);
    return bad ? -1 : 0;
}

void netcode_app_fill_payload(uint8_t *payload, int bytes)
{
    for (int i = 0; i < bytes; i++) payload[i] = (uint8_t)i;
}

int netcode_app_payload_ok(const uint8_t *payload, int bytes)
{
    for (int i = 0; i < bytes; i++)
        if (payload[i] != (uint8_t)i) return 0;
    return 1;
}

void netcode_app_address_from_platform(const platform_address_t *in, netcode_address_t *out)
{
    memset(out, 0, sizeof *out);
    out->type = in->family == 6 ? NETCODE_ADDRESS_IPV6 : NETCODE_ADDRESS_IPV4;
    memcpy(out->ip, in->addr, in->family == 6 ? 16 : 4);
    out->port = in->port;
}

static void address_to_platform(const netcode_address_t *in, platform_address_t *out)
{
    memset(out, 0, sizeof *out);
    out->family = in->type == NETCODE_ADDRESS_IPV6 ? 6 : 4;
    memcpy(out->addr, in->ip, in->type == NETCODE_ADDRESS_IPV6 ? 16 : 4);
    out->port = in->port;
}

void netcode_app_link_send(netcode_app_link_t *link, const netcode_address_t *to, const uint8_t *packet, int bytes)
{
    platform_address_t dst;
    address_to_platform(to, &dst);
    app_send_recorded(&link->socket, &link->capture, &dst, packet, bytes, &link->datagrams_sent, &link->send_errors);
}

/* Takes the next datagram waiting into link->datagram, counts it and records it.
 * Returns its length with *from set, -1 when none is waiting, or -2 after a
 * socket error (printed, *exit_code and *outcome set). */
static int link_receive(netcode_app_link_t *link, const char *program, netcode_address_t *from, int io_exit_code,
                        int *exit_code, const char **outcome)
{
    platform_address_t source;
    int n = platform_socket_receive(&link->socket, &source, link->datagram);
    if (n == -1) return -1;
    if (n == -2) {
        fprintf(stderr, "%s: receive: %s\n", program, strerror(errno));
        *exit_code = io_exit_code;
        *outcome = "socket error";
        return -2;
    }
    link->datagrams_received++;
    app_capture_exchange(&link->capture, &link->socket, &source, 1, link->datagram, n);
    netcode_app_address_from_platform(&source, from);
    return n;
}

int netcode_app_link_receive_all(netcode_app_link_t *link, const char *program, int io_exit_code, int *exit_code,
                                 const char **outcome,
                                 void (*packet)(void *context, const netcode_address_t *from, const uint8_t *data,
                                                int bytes),
                                 void *context)
{
    for (;;) {
        netcode_address_t from;
        int n = link_receive(link, program, &from, io_exit_code, exit_code, outcome);
        if (n < 0) return n == -1 ? 0 : -1;
        if (n <= NETCODE_MAX_PACKET_BYTES) packet(context, &from, link->datagram, n);
    }
}

void netcode_app_link_check_payload(netcode_app_link_t *link, const uint8_t *payload, int bytes)
{
    if (netcode_app_payload_ok(payload, bytes)) link->payloads_ok++;
    else link->payloads_bad++;
}

void netcode_app_link_print_summary(const netcode_app_link_t *link, uint64_t payloads_sent,
                                    uint64_t payloads_received, const uint64_t *counters, int count,
                                    const char *(*name)(int))
{
    fprintf(stderr, "  payloads: %llu sent, %llu received (%llu with the expected bytes, %llu not)\n",
            (unsigned long long)payloads_sent, (unsigned long long)payloads_received,
            (unsigned long long)link->payloads_ok, (unsigned long long)link->payloads_bad);
    fprintf(stderr, "  counters:");
    app_print_nonzero_counters(stderr, counters, count, name);
    fprintf(stderr, "  datagrams: %llu sent, %llu received, %llu send errors\n", (unsigned long long)link->datagrams_sent,
            (unsigned long long)link->datagrams_received, (unsigned long long)link->send_errors);
    app_capture_print(&link->capture);
}
