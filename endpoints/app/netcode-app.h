/* netcode-app.h: what the netcode programs (netcode-token, -server, -client,
 * -sim) share around include/netcode.h: keys in hex, the key log, the test
 * payload, addresses between platform.h and netcode.h, and the protocol id
 * option. docs/netcode-endpoints.md. */
#ifndef NETCODE_APP_H
#define NETCODE_APP_H

#include <stdint.h>
#include <stdio.h>

#include "app.h"
#include "netcode.h"
#include "platform.h"

/* The private key of the reference library's example programs, the default
 * of our programs so that each side works with the other out of the box. */
extern const uint8_t netcode_app_example_key[NETCODE_KEY_BYTES];

/* Parses 64 hex digits. Returns 0, or -1 when text is not exactly that. */
int netcode_app_parse_key(const char *text, uint8_t key[NETCODE_KEY_BYTES]);
/* Reads a key file: 32 raw bytes, or 64 hex digits (surrounding white space
 * allowed). Returns 0, or -1 with why in err. */
int netcode_app_read_key_file(const char *path, uint8_t key[NETCODE_KEY_BYTES], char *err, size_t err_size);
/* Writes 64 lowercase hex digits (and nothing else) to out. */
void netcode_app_print_key(FILE *out, const uint8_t key[NETCODE_KEY_BYTES]);
/* Writes a connect token's two session keys as JSON members:
 * "client_to_server_key": "<hex>", "server_to_client_key": "<hex>". */
void netcode_app_print_session_keys(FILE *out, const netcode_connect_token_t *token);

/* A protocol id: decimal or 0x hex, all 64 bits. Returns 0 or -1. */
int netcode_app_parse_u64(const char *text, uint64_t *out);

/* The key log (docs/netcode-endpoints.md "Key log"): opens path for
 * appending (truncating when truncate is set) and writes a comment line.
 * Returns the file, or NULL after printing "PROGRAM: cannot write PATH: why". */
FILE *netcode_app_keylog_open(const char *program, const char *path, int truncate);
void netcode_app_keylog_private_key(FILE *out, const uint8_t key[NETCODE_KEY_BYTES]);
void netcode_app_keylog_connection(FILE *out, const uint8_t client_to_server[NETCODE_KEY_BYTES],
                                   const uint8_t server_to_client[NETCODE_KEY_BYTES]);
/* Closes it; returns 0, or -1 after "PROGRAM: error writing PATH". */
int netcode_app_keylog_close(const char *program, const char *path, FILE *out);

/* The test payload of the reference examples: byte i is i & 0xff. */
void netcode_app_fill_payload(uint8_t *payload, int bytes);
/* 1 when payload is that pattern. */
int netcode_app_payload_ok(const uint8_t *payload, int bytes);

void netcode_app_address_from_platform(const platform_address_t *in, netcode_address_t *out);

/* ---- netcode-client's and netcode-server's socket ---- */

/* The socket, the pcap of every datagram sent and received on it, and the
 * counts the summary shows. */
typedef struct netcode_app_link_t {
    platform_socket_t socket;
    app_capture_t capture;
    uint8_t datagram[PLATFORM_SOCKET_MAX_DATAGRAM]; /* the one received last */
    uint64_t datagrams_sent, send_errors, datagrams_received;
    uint64_t payloads_ok, payloads_bad; /* payloads received with the test pattern, and without */
} netcode_app_link_t;

/* Sends packet to `to` and records it. A send the kernel refuses is counted
 * in send_errors and logged at debug level: the protocol copes with a lost
 * packet. */
void netcode_app_link_send(netcode_app_link_t *link, const netcode_address_t *to, const uint8_t *packet, int bytes);

/* Takes every datagram waiting into the link's datagram, counts and records
 * it, and hands those a netcode packet can be (up to NETCODE_MAX_PACKET_BYTES)
 * to packet(context, from, data, bytes). Returns 0 when none is left, or -1
 * on a socket error after printing "PROGRAM: receive: why" and setting
 * *exit_code to io_exit_code and *outcome to "socket error". */
int netcode_app_link_receive_all(netcode_app_link_t *link, const char *program, int io_exit_code, int *exit_code,
                                 const char **outcome,
                                 void (*packet)(void *context, const netcode_address_t *from, const uint8_t *data,
                                                int bytes),
                                 void *context);

/* Counts a payload received in payloads_ok or payloads_bad. */
void netcode_app_link_check_payload(netcode_app_link_t *link, const uint8_t *payload, int bytes);

/* The summary's lines after the first, on stderr: payloads sent and
 * received (with and without the test pattern), the endpoint's non-zero
 * counters, the datagrams, and the pcap. */
void netcode_app_link_print_summary(const netcode_app_link_t *link, uint64_t payloads_sent,
                                    uint64_t payloads_received, const uint64_t *counters, int count,
                                    const char *(*name)(int));

/* ---- the real-UDP programs: netcode_app_main(role) ---- */

/* netcode-client (netcode-app-client.c) and netcode-server
 * (netcode-app-server.c); netcode-token is no UDP program and keeps its own
 * main. */
typedef enum netcode_app_role_t { NETCODE_APP_CLIENT, NETCODE_APP_SERVER } netcode_app_role_t;

/* Runs the program of that role with its command line; returns its exit code
 * (each program's --help says them). */
int netcode_app_main(int argc, char **argv, netcode_app_role_t role);
int netcode_app_client_main(int argc, char **argv);
int netcode_app_server_main(int argc, char **argv);

#endif
