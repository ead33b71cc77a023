/* netcode-stack.h: the netcode 1.02 stack that netcode-sim and yojimbo-sim
 * run in virtual time over netsim: libsodium, keys and nonces drawn from
 * --seed, the server at 10.0.0.2:40000 with the run's private key, clients
 * at 10.0.0.1 from port 50000, connect tokens on the tokens' clock, the key
 * log and the truth file's private key. What a program carries over the
 * connections, and its truth file's other parts, stay the program's.
 * docs/netcode-endpoints.md, docs/yojimbo-endpoints.md. */
#ifndef NETCODE_STACK_H
#define NETCODE_STACK_H

#include <stdint.h>
#include <stdio.h>

#include "netcode.h"
#include "util.h"

/* The unix time at virtual time 0 (2026-01-01T00:00:00Z): tokens' timestamps. */
#define NETCODE_STACK_UNIX_EPOCH 1767225600.0
#define NETCODE_STACK_CLIENT_PORT 50000 /* client i at 10.0.0.1, this port + i */
#define NETCODE_STACK_SERVER_PORT NETCODE_DEFAULT_SERVER_PORT

typedef struct netcode_stack_t {
    const char *program;                    /* for messages */
    cs_rng_t token_rng;                     /* the private key, then the tokens' keys and nonces */
    cs_rng_t server_rng;                    /* the server's own random bytes */
    uint8_t private_key[NETCODE_KEY_BYTES]; /* the first bytes token_rng gives */
    netcode_address_t server_address;       /* 10.0.0.2:NETCODE_STACK_SERVER_PORT */
    netcode_server_t *server;
} netcode_stack_t;

/* Starts libsodium, seeds token_rng with seed ^ salt and server_rng with
 * seed ^ (salt + 1) (a program's own salt keeps its keys its own), and draws
 * the private key. Returns 0, or -1 after "PROGRAM: libsodium cannot start". */
int netcode_stack_init(netcode_stack_t *st, const char *program, uint64_t seed, uint64_t salt);

/* Creates the server: config's protocol id, slots and callbacks, with the
 * stack's private key, address, clock and server_rng. Returns 0, or -1
 * after "PROGRAM: out of memory". */
int netcode_stack_create_server(netcode_stack_t *st, const netcode_server_config_t *config);

/* A client on the tokens' clock with these callbacks, or NULL when out of
 * memory. */
netcode_client_t *netcode_stack_create_client(netcode_send_fn send,
                                              void (*receive)(void *context, uint64_t sequence,
                                                              const uint8_t *payload, int bytes),
                                              void (*state_changed)(void *context, int from, int to), void *context);

/* Makes a connect token of params encrypted with key (the private key, or
 * another for a test), its nonce and session keys from token_rng, into
 * *token, and has client connect with it at now. Returns 0, or -1 after
 * "PROGRAM: cannot make a connect token". */
int netcode_stack_connect(netcode_stack_t *st, netcode_client_t *client, double now,
                          const netcode_token_params_t *params, const uint8_t key[NETCODE_KEY_BYTES],
                          netcode_connect_token_t *token);

/* Writes the key log at path (truncated): the private key, then each of
 * clients clients' session keys, token(context, i) giving client i's token,
 * under a comment naming it and its address. Returns 0, or -1 after
 * printing why. */
int netcode_stack_write_keys(const netcode_stack_t *st, const char *path, int clients,
                             const netcode_connect_token_t *(*token)(const void *context, int i), const void *context);

/* The truth file's member "  \"private_key\": \"<hex>\",\n". */
void netcode_stack_truth_private_key(FILE *out, const netcode_stack_t *st);

/* Destroys the server. */
void netcode_stack_free(netcode_stack_t *st);

#endif /* NETCODE_STACK_H */
