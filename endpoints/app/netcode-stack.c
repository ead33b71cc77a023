/* netcode-stack.c: the netcode stack of the simulators. See netcode-stack.h. */
#include "netcode-stack.h"

#include <string.h>

#include "app.h"
#include "netcode-app.h"

int netcode_stack_init(netcode_stack_t *st, const char *program, uint64_t seed, uint64_t salt)
{
    memset(st, 0, sizeof *st);
    st->program = program;
    if (netcode_crypto_init() != 0) {
        fprintf(stderr, "%s: libsodium cannot start\n", program);
        return -1;
    }
    cs_rng_seed(&st->token_rng, seed ^ salt);
    cs_rng_seed(&st->server_rng, seed ^ (salt + 1));
    cs_rng_bytes(&st->token_rng, st->private_key, NETCODE_KEY_BYTES);
    netcode_address_ipv4(&st->server_address, 10, 0, 0, 2, NETCODE_STACK_SERVER_PORT);
    return 0;
}

int netcode_stack_create_server(netcode_stack_t *st, const netcode_server_config_t *config)
{
    netcode_server_config_t sc = *config;
    memcpy(sc.private_key, st->private_key, NETCODE_KEY_BYTES);
    sc.public_address = st->server_address;
    sc.unix_epoch = NETCODE_STACK_UNIX_EPOCH;
    sc.random = cs_rng_bytes;
    sc.random_context = &st->server_rng;
    st->server = netcode_server_create(&sc, 0);
    if (!st->server) return app_out_of_memory(st->program, -1);
    return 0;
}

netcode_client_t *netcode_stack_create_client(netcode_send_fn send,
                                              void (*receive)(void *context, uint64_t sequence,
                                                              const uint8_t *payload, int bytes),
                                              void (*state_changed)(void *context, int from, int to), void *context)
{
    netcode_client_config_t cc = {NETCODE_STACK_UNIX_EPOCH, send, receive, state_changed, context};
    return netcode_client_create(&cc);
}

int netcode_stack_connect(netcode_stack_t *st, netcode_client_t *client, double now,
                          const netcode_token_params_t *params, const uint8_t key[NETCODE_KEY_BYTES],
                          netcode_connect_token_t *token)
{
    uint8_t bytes[NETCODE_CONNECT_TOKEN_BYTES];
    if (netcode_generate_connect_token(params, key, cs_rng_bytes, &st->token_rng, bytes, token) != 0) {
        fprintf(stderr, "%s: cannot make a connect token\n", st->program);
        return -1;
    }
    netcode_client_connect(client, now, bytes, sizeof bytes);
    return 0;
}

int netcode_stack_write_keys(const netcode_stack_t *st, const char *path, int clients,
                             const netcode_connect_token_t *(*token)(const void *context, int i), const void *context)
{
    FILE *out = netcode_app_keylog_open(st->program, path, 1);
    if (!out) return -1;
    netcode_app_keylog_private_key(out, st->private_key);
    for (int i = 0; i < clients; i++) {
        const netcode_connect_token_t *t = token(context, i);
        fprintf(out, "# client %d, 10.0.0.1:%d\n", i, NETCODE_STACK_CLIENT_PORT + i);
        netcode_app_keylog_connection(out, t->client_to_server_key, t->server_to_client_key);
    }
    return netcode_app_keylog_close(st->program, path, out);
}

void netcode_stack_truth_private_key(FILE *out, const netcode_stack_t *st)
{
    fprintf(out, "  \"private_key\": \"");
    netcode_app_print_key(out, st->private_key);
    fprintf(out, "\",\n");
}

void netcode_stack_free(netcode_stack_t *st)
{
    netcode_server_destroy(st->server);
    st->server = NULL;
}
