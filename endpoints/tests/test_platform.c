/* Tests of app/platform.c: option values, address parsing and printing, and
 * UDP sockets on loopback (127.0.0.1, and ::1 when the machine has it). */
#include <math.h>
#include <string.h>

#include "platform.h"
#include "test.h"

static int near(double a, double b) { return fabs(a - b) < 1e-9; }

static void test_parse_numbers(void)
{
    long long i = 0;
    CHECK(platform_parse_int("42", 0, 100, &i) == 0 && i == 42);
    CHECK(platform_parse_int("0x11223344", 0, 0xffffffffLL, &i) == 0 && i == 0x11223344);
    CHECK(platform_parse_int("101", 0, 100, &i) == -1);
    CHECK(platform_parse_int("-1", 0, 100, &i) == -1);
    CHECK(platform_parse_int("4x", 0, 100, &i) == -1);
    CHECK(platform_parse_int("", 0, 100, &i) == -1);

    double d = -1;
    CHECK(platform_parse_seconds("0.1", 10, &d) == 0 && near(d, 0.1));
    CHECK(platform_parse_seconds("100ms", 10, &d) == 0 && near(d, 0.1));
    CHECK(platform_parse_seconds("2s", 10, &d) == 0 && near(d, 2));
    CHECK(platform_parse_seconds("1.5m", 100, &d) == 0 && near(d, 90));
    CHECK(platform_parse_seconds("11", 10, &d) == -1);
    CHECK(platform_parse_seconds("-1", 10, &d) == -1);
    CHECK(platform_parse_seconds("1h", 10, &d) == -1);
    CHECK(platform_parse_seconds("nan", 10, &d) == -1);

    CHECK(platform_parse_probability("0.2", &d) == 0 && near(d, 0.2));
    CHECK(platform_parse_probability("20%", &d) == 0 && near(d, 0.2));
    CHECK(platform_parse_probability("1", &d) == 0 && near(d, 1));
    CHECK(platform_parse_probability("1.5", &d) == -1);
    CHECK(platform_parse_probability("101%", &d) == -1);
    CHECK(platform_parse_probability("20 %", &d) == -1);

    CHECK(platform_parse_bytes("1024", 1 << 30, &i) == 0 && i == 1024);
    CHECK(platform_parse_bytes("256K", 1 << 30, &i) == 0 && i == 262144);
    CHECK(platform_parse_bytes("1M", 1 << 30, &i) == 0 && i == 1048576);
    CHECK(platform_parse_bytes("1MiB", 1 << 30, &i) == 0 && i == 1048576);
    CHECK(platform_parse_bytes("1.5K", 1 << 30, &i) == 0 && i == 1536);
    CHECK(platform_parse_bytes("1.5", 1 << 30, &i) == -1); /* not a whole byte count */
    CHECK(platform_parse_bytes("2G", 1 << 30, &i) == -1);  /* above max */
    CHECK(platform_parse_bytes("5Q", 1 << 30, &i) == -1);

    CHECK(platform_parse_rate("125000", &d) == 0 && near(d, 125000));
    CHECK(platform_parse_rate("125kB", &d) == 0 && near(d, 125000));
    CHECK(platform_parse_rate("1Mbit", &d) == 0 && near(d, 125000));
    CHECK(platform_parse_rate("8mbps", &d) == 0 && near(d, 1e6));
    CHECK(platform_parse_rate("256kbit/s", &d) == 0 && near(d, 32000));
    CHECK(platform_parse_rate("unlimited", &d) == 0 && d == 0);
    CHECK(platform_parse_rate("fast", &d) == -1);
    CHECK(platform_parse_rate("1 MB", &d) == -1);
    CHECK(platform_parse_rate("-5", &d) == -1);
}

static void test_parse_addresses(void)
{
    char err[256], text[PLATFORM_ADDRESS_STRING_SIZE];
    platform_address_t a;
    uint16_t port = 1;
    CHECK(platform_parse_port("0", &port) == 0 && port == 0);
    CHECK(platform_parse_port("65535", &port) == 0 && port == 65535);
    CHECK(platform_parse_port("65536", &port) == -1);
    CHECK(platform_parse_port("", &port) == -1);
    CHECK(platform_parse_port("+1", &port) == -1);

    CHECK(platform_address_parse("127.0.0.1:5", 0, 40000, &a, err, sizeof err) == 0);
    CHECK(a.family == 4 && a.port == 5 && memcmp(a.addr, "\x7f\x00\x00\x01", 4) == 0);
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "127.0.0.1:5") == 0);
    CHECK(platform_address_parse("10.1.2.3", 0, 40000, &a, err, sizeof err) == 0);
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "10.1.2.3:40000") == 0);
    CHECK(platform_address_parse("[::1]:7", 0, 40000, &a, err, sizeof err) == 0);
    CHECK(a.family == 6 && a.port == 7 && a.addr[15] == 1 && a.addr[0] == 0);
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "[::1]:7") == 0);
    CHECK(platform_address_parse("::1", 0, 40000, &a, err, sizeof err) == 0); /* bare IPv6: no port */
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "[::1]:40000") == 0);
    CHECK(platform_address_parse("[2001:db8::2]", 0, 9, &a, err, sizeof err) == 0);
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "[2001:db8::2]:9") == 0);
    CHECK(platform_address_parse(":9", 4, 1, &a, err, sizeof err) == 0);
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "0.0.0.0:9") == 0);
    CHECK(platform_address_parse(":9", 0, 1, &a, err, sizeof err) == 0);
    CHECK(strcmp(platform_address_format(&a, text, sizeof text), "[::]:9") == 0);

    CHECK(platform_address_parse("127.0.0.1:x", 0, 1, &a, err, sizeof err) == -1);
    CHECK(strstr(err, "bad port") != NULL);
    CHECK(platform_address_parse("127.0.0.1:70000", 0, 1, &a, err, sizeof err) == -1);
    CHECK(platform_address_parse("[::1", 0, 1, &a, err, sizeof err) == -1);
    CHECK(platform_address_parse("[::1]x", 0, 1, &a, err, sizeof err) == -1);
    CHECK(platform_address_parse("", 0, 1, &a, err, sizeof err) == -1);
    CHECK(platform_address_parse("127.0.0.1", 6, 1, &a, err, sizeof err) == -1); /* IPv4 text, IPv6 wanted */

    platform_address_t b;
    platform_address_parse("127.0.0.1:5", 0, 1, &a, err, sizeof err);
    platform_address_parse("127.0.0.1:5", 0, 1, &b, err, sizeof err);
    CHECK(platform_address_equal(&a, &b));
    b.port = 6;
    CHECK(!platform_address_equal(&a, &b));

    pcapout_addr_t p;
    platform_address_to_pcap(&a, &p);
    CHECK(p.family == 4 && p.port == 5 && memcmp(p.addr, a.addr, 4) == 0);
}

/* Sends a datagram from one socket to another and checks what arrives. */
static void round_trip(platform_socket_t *from, platform_socket_t *to, const platform_address_t *to_address,
                       const platform_address_t *expected_source)
{
    uint8_t out[3] = {1, 2, 3}, in[PLATFORM_SOCKET_MAX_DATAGRAM];
    CHECK(platform_socket_send(from, to_address, out, 3) == 0);
    int readable = 0;
    CHECK(platform_wait(&to->fd, 1, 2.0, &readable) == 1 && readable == 1);
    platform_address_t source;
    CHECK_EQ(platform_socket_receive(to, &source, in), 3);
    CHECK(memcmp(in, out, 3) == 0);
    CHECK(platform_address_equal(&source, expected_source));
    CHECK_EQ(platform_socket_receive(to, &source, in), -1); /* nothing more waiting */
}

static void test_sockets_ipv4(void)
{
    char err[256];
    platform_address_t any4, loop4;
    platform_address_any(&any4, 4, 0);
    platform_address_parse("127.0.0.1:0", 4, 0, &loop4, err, sizeof err);
    platform_socket_t a, b;
    CHECK(platform_socket_open(&a, &loop4, 0, err, sizeof err) == 0);
    CHECK(platform_socket_open(&b, &any4, 0, err, sizeof err) == 0);
    CHECK(a.bound.port != 0 && b.bound.port != 0);

    /* A wildcard socket's local address toward 127.0.0.1 is 127.0.0.1. */
    platform_address_t local;
    CHECK(platform_socket_local_address(&b, &a.bound, &local) == 0);
    CHECK(local.family == 4 && memcmp(local.addr, "\x7f\x00\x00\x01", 4) == 0 && local.port == b.bound.port);
    round_trip(&b, &a, &a.bound, &local);
    round_trip(&a, &b, &local, &a.bound);

    /* A wait with nothing to read times out, after about the time asked. */
    int readable = 1;
    double start = platform_time();
    CHECK(platform_wait(&a.fd, 1, 0.02, &readable) == 0 && readable == 0);
    CHECK(platform_time() - start >= 0.015);
    platform_socket_close(&a);
    platform_socket_close(&b);
    CHECK(a.fd == -1);
}

static void test_sockets_ipv6(void)
{
    char err[256];
    platform_address_t loop6, any6, loop4;
    platform_address_parse("[::1]:0", 6, 0, &loop6, err, sizeof err);
    platform_socket_t v6, dual, v4;
    if (platform_socket_open(&v6, &loop6, 0, err, sizeof err) != 0) {
        printf("  (no IPv6 loopback here: %s; skipped)\n", err);
        return;
    }
    platform_address_any(&any6, 6, 0);
    CHECK(platform_socket_open(&dual, &any6, 1, err, sizeof err) == 0);
    platform_address_t to_dual6 = dual.bound;
    memcpy(to_dual6.addr, loop6.addr, 16);
    round_trip(&v6, &dual, &to_dual6, &v6.bound);

    /* IPv4 traffic on a dual-stack socket is reported as plain IPv4, and
     * the answer to that IPv4 address goes back through the same socket. */
    platform_address_parse("127.0.0.1:0", 4, 0, &loop4, err, sizeof err);
    CHECK(platform_socket_open(&v4, &loop4, 0, err, sizeof err) == 0);
    platform_address_t to_dual4 = loop4;
    to_dual4.port = dual.bound.port;
    round_trip(&v4, &dual, &to_dual4, &v4.bound);
    platform_address_t local;
    CHECK(platform_socket_local_address(&dual, &v4.bound, &local) == 0);
    CHECK(local.family == 4 && memcmp(local.addr, "\x7f\x00\x00\x01", 4) == 0);
    round_trip(&dual, &v4, &v4.bound, &to_dual4);
    platform_socket_close(&v6);
    platform_socket_close(&dual);
    platform_socket_close(&v4);
}

const chunk_test_t platform_tests[] = {
    {"parse_numbers", test_parse_numbers},
    {"parse_addresses", test_parse_addresses},
    {"sockets_ipv4", test_sockets_ipv4},
    {"sockets_ipv6", test_sockets_ipv6},
    {NULL, NULL},
};
