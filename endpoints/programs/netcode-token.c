/*
 * netcode-token: writes a netcode 1.02 connect token (2048 bytes: the public
 * part in clear with both keys, the private part encrypted with the
 * server's private key), as a web backend would hand it to a client. Keys and
 * nonce come from libsodium's random bytes. docs/netcode-endpoints.md.
 *
 * Exit codes: 0 written; 2 bad arguments; 3 a file could not be read or written.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "netcode-app.h"
#include "netcode.h"
#include "platform.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_IO = 3 };
static const char *const program = "netcode-token";

typedef struct token_t {
    /* options */
    const char *output, *keys_path;
    uint8_t key[NETCODE_KEY_BYTES]; /* the server's private key */
    netcode_token_params_t params;
    int client_id_given, quiet;
    /* the token */
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    netcode_connect_token_t fields; /* its public part, as written */
} token_t;

static void usage(FILE *out)
{
    fprintf(out,
"usage: netcode-token [options] -o FILE\n"
"Writes a netcode 1.02 connect token for netcode-client (or any netcode 1.02\n"
"client): 2048 bytes, the private part encrypted with the server's private key.\n"
"  netcode-token -o token.bin --server 127.0.0.1:40000 --keys client.keys\n"
"\n"
"options:\n"
"  -o, --output FILE        where to write the token (required)\n"
"      --key HEX            the server's private key, 64 hex digits (default: the\n"
"                           reference library examples' key, 606abe6e...15aba1)\n"
"      --key-file FILE      the private key from FILE (32 bytes or 64 hex digits)\n"
"      --protocol-id N      protocol id (default 0x1122334455667788)\n"
"  -s, --server ADDR:PORT   a server address (IPv4 or [IPv6]; repeat for up to 32,\n"
"                           tried in order; default 127.0.0.1:40000)\n"
"      --client-id N        the client's id (default: random)\n"
"      --expire SEC         seconds from now until the token expires (default 30;\n"
"                           -1 never)\n"
"      --timeout SEC        seconds of silence before either side gives up\n"
"                           (default 5; -1 none)\n"
"      --keys FILE          append the connection's keys to a key log\n"
"  -q, --quiet              no summary on stderr\n"
"  -h, --help               this help\n"
"\n"
"Exit status: 0 written; 2 bad arguments; 3 file error.\n");
}

/* ---- options ---- */

enum { OPT_KEY = 256, OPT_KEY_FILE, OPT_PROTOCOL_ID, OPT_CLIENT_ID, OPT_EXPIRE, OPT_TIMEOUT, OPT_KEYS };

/* -s/--server: one more server address, public and internal. */
static void add_server(netcode_token_params_t *p, const char *text)
{
    char err[256];
    if (p->num_servers == NETCODE_MAX_SERVERS) app_bad_argument(program, "at most %d --server options", NETCODE_MAX_SERVERS);
    platform_address_t a;
    if (platform_address_parse(text, 0, NETCODE_DEFAULT_SERVER_PORT, &a, err, sizeof err) != 0)
        app_bad_argument(program, "bad --server '%s': %s", text, err);
    netcode_app_address_from_platform(&a, &p->public_servers[p->num_servers]);
    p->internal_servers[p->num_servers] = p->public_servers[p->num_servers];
    p->num_servers++;
}

static void parse_options(token_t *t, int argc, char **argv)
{
    static const struct option options[] = {
        {"output", required_argument, 0, 'o'},   {"key", required_argument, 0, OPT_KEY},
        {"key-file", required_argument, 0, OPT_KEY_FILE}, {"protocol-id", required_argument, 0, OPT_PROTOCOL_ID},
        {"server", required_argument, 0, 's'},   {"client-id", required_argument, 0, OPT_CLIENT_ID},
        {"expire", required_argument, 0, OPT_EXPIRE}, {"timeout", required_argument, 0, OPT_TIMEOUT},
        {"keys", required_argument, 0, OPT_KEYS}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    netcode_token_params_t *p = &t->params;
    memcpy(t->key, netcode_app_example_key, sizeof t->key);
    p->protocol_id = NETCODE_DEFAULT_PROTOCOL_ID;
    p->expire_seconds = 30;
    p->timeout_seconds = 5;
    char err[256];
    int opt;
    opterr = 0; /* our own messages, with exit code 2 */
    while ((opt = getopt_long(argc, argv, ":o:s:qh", options, NULL)) != -1) {
        switch (opt) {
        case 'o': t->output = optarg; break;
        case OPT_KEY:
            if (netcode_app_parse_key(optarg, t->key) != 0)
                app_bad_argument(program, "bad --key '%s': expected 64 hex digits", optarg);
            break;
        case OPT_KEY_FILE:
            if (netcode_app_read_key_file(optarg, t->key, err, sizeof err) != 0) {
                fprintf(stderr, "%s: --key-file %s: %s\n", program, optarg, err);
                exit(EXIT_IO);
            }
            break;
        case OPT_PROTOCOL_ID:
            if (netcode_app_parse_u64(optarg, &p->protocol_id) != 0)
                app_bad_argument(program, "bad --protocol-id '%s': expected a 64-bit number", optarg);
            break;
        case OPT_CLIENT_ID:
            if (netcode_app_parse_u64(optarg, &p->client_id) != 0)
                app_bad_argument(program, "bad --client-id '%s': expected a 64-bit number", optarg);
            t->client_id_given = 1;
            break;
        case OPT_EXPIRE: p->expire_seconds = app_int_option(program, "expire", optarg, -1, 10LL * 365 * 86400); break;
        case OPT_TIMEOUT: p->timeout_seconds = (int32_t)app_int_option(program, "timeout", optarg, -1, 86400); break;
        case OPT_KEYS: t->keys_path = optarg; break;
        case 's': add_server(p, optarg); break;
        case 'q': t->quiet = 1; break;
        case 'h': usage(stdout); exit(EXIT_OK);
        default: app_option_error(program, opt, argv);
        }
    }
    if (optind < argc) app_bad_argument(program, "unexpected argument '%s'", argv[optind]);
    if (!t->output) app_bad_argument(program, "missing -o FILE");
    if (p->num_servers == 0) {
        netcode_address_ipv4(&p->public_servers[0], 127, 0, 0, 1, NETCODE_DEFAULT_SERVER_PORT);
        p->internal_servers[0] = p->public_servers[0];
        p->num_servers = 1;
    }
}

/* ---- the token ---- */

/* Draws the client id (unless --client-id) and makes the token, created
 * now. Returns 0, or the exit code after printing why. */
static int make_token(token_t *t)
{
    netcode_token_params_t *p = &t->params;
    if (netcode_crypto_init() != 0) {
        fprintf(stderr, "%s: libsodium cannot start\n", program);
        return EXIT_IO;
    }
    if (!t->client_id_given) netcode_random_system(NULL, (uint8_t *)&p->client_id, sizeof p->client_id);
    p->create_timestamp = (uint64_t)time(NULL);
    if (netcode_generate_connect_token(p, t->key, NULL, NULL, t->token, &t->fields) != 0) {
        fprintf(stderr, "%s: cannot make the token\n", program);
        return EXIT_IO;
    }
    return 0;
}

/* Writes the token to -o's file and appends its keys to --keys' key log.
 * Returns 0, or the exit code after printing why. */
static int write_token(const token_t *t)
{
    FILE *out = fopen(t->output, "wb");
    if (!out) {
        fprintf(stderr, "%s: cannot write %s: %s\n", program, t->output, strerror(errno));
        return EXIT_IO;
    }
    int bad = fwrite(t->token, 1, sizeof t->token, out) != sizeof t->token;
    if (fclose(out) != 0 || bad) {
        fprintf(stderr, "%s: error writing %s\n", program, t->output);
        return EXIT_IO;
    }
    if (t->keys_path) {
        FILE *log = netcode_app_keylog_open(program, t->keys_path, 0);
        if (!log) return EXIT_IO;
        netcode_app_keylog_connection(log, t->fields.client_to_server_key, t->fields.server_to_client_key);
        if (netcode_app_keylog_close(program, t->keys_path, log) != 0) return EXIT_IO;
    }
    return 0;
}

static void print_summary(const token_t *t)
{
    char text[64];
    fprintf(stderr, "%s: wrote %s: client id 0x%016llx, protocol id 0x%016llx, created %llu, expires %llu, "
                    "timeout %d s, %d server(s), first %s\n",
            program, t->output, (unsigned long long)t->params.client_id, (unsigned long long)t->params.protocol_id,
            (unsigned long long)t->fields.create_timestamp, (unsigned long long)t->fields.expire_timestamp,
            t->fields.timeout_seconds, t->fields.num_servers,
            netcode_address_format(&t->fields.servers[0], text, sizeof text));
}

int main(int argc, char **argv)
{
    static token_t t;
    parse_options(&t, argc, argv);
    int code = make_token(&t);
    if (code == 0) code = write_token(&t);
    if (code != 0) return code;
    if (!t.quiet) print_summary(&t);
    return EXIT_OK;
}
