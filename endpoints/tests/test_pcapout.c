/* Tests of the pcap writer (app/pcapout.c): written files read back with
 * libpcap, headers checked field by field, checksums verified independently. */
#define _DEFAULT_SOURCE /* libpcap's headers use u_char and friends */

#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcapout.h"
#include "test.h"
#include "util.h"

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* One's-complement sum over bytes, as a receiver verifies a checksum: the
 * folded sum of a correct header (checksum included) is 0xffff. */
static uint32_t ones_sum(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) sum += get16(p + i);
    if (n & 1) sum += (uint32_t)p[n - 1] << 8;
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

/* Opens a pcap file for writing at a path of this process's own, in path. */
static pcapout_t *open_temp(char *path, size_t size)
{
    char err[256];
    snprintf(path, size, "/tmp/chunk-test-pcapout-%ld.pcap", (long)getpid());
    pcapout_t *pcap = pcapout_open(path, err, sizeof err);
    CHECK(pcap != NULL);
    if (!pcap) fprintf(stderr, "%s\n", err);
    return pcap;
}

/* Closes what open_temp opened and opens it again for reading with libpcap. */
static pcap_t *close_and_read(pcapout_t *pcap, const char *path)
{
    char err[PCAP_ERRBUF_SIZE];
    CHECK_EQ(pcapout_close(pcap), 0);
    pcap_t *in = pcap_open_offline(path, err);
    CHECK(in != NULL);
    if (!in) fprintf(stderr, "%s\n", err);
    return in;
}

static void test_ipv4_frame(void)
{
    char path[128];
    pcapout_t *pcap = open_temp(path, sizeof path);
    if (!pcap) return;
    pcapout_addr_t a, b;
    pcapout_addr_ipv4(&a, 10, 0, 0, 1, 50000);
    pcapout_addr_ipv4(&b, 10, 0, 0, 2, 40000);
    uint8_t payload[37];
    for (int i = 0; i < 37; i++) payload[i] = (uint8_t)(i * 13 + 1);
    CHECK_EQ(pcapout_write_udp(pcap, 1.5, &a, &b, payload, 37), 0);
    CHECK_EQ(pcapout_write_udp(pcap, 2.9999996, &b, &a, payload, 36), 0); /* rounds up to 3.000000 */
    CHECK_EQ(pcapout_write_udp(pcap, 3.0, &a, &b, payload, 65535 - CS_IP_UDP_OVERHEAD + 1), -1); /* too big for IPv4 */

    pcap_t *in = close_and_read(pcap, path);
    if (!in) return;
    CHECK_EQ(pcap_datalink(in), DLT_EN10MB);
    struct pcap_pkthdr *h;
    const u_char *f;
    CHECK_EQ(pcap_next_ex(in, &h, &f), 1);
    CHECK_EQ(h->ts.tv_sec, 1);
    CHECK_EQ(h->ts.tv_usec, 500000);
    CHECK_EQ(h->caplen, 14 + 20 + 8 + 37);
    CHECK_EQ(h->len, h->caplen);
    CHECK_EQ(get16(f + 12), 0x0800);
    const uint8_t *ip = f + 14;
    CHECK_EQ(ip[0], 0x45);
    CHECK_EQ(get16(ip + 2), 20 + 8 + 37);
    /* The overhead the sender's budget and the simulator count is this header. */
    CHECK_EQ(get16(ip + 2) - 37, CS_IP_UDP_OVERHEAD);
    CHECK_EQ(ip[9], 17);
    CHECK_EQ(ip[12], 10);
    CHECK_EQ(ip[15], 1);
    CHECK_EQ(ip[19], 2);
    CHECK_EQ(fold(ones_sum(0, ip, 20)), 0xffff);
    const uint8_t *udp = ip + 20;
    CHECK_EQ(get16(udp), 50000);
    CHECK_EQ(get16(udp + 2), 40000);
    CHECK_EQ(get16(udp + 4), 8 + 37);
    CHECK(get16(udp + 6) != 0);
    uint32_t pseudo = ones_sum(0, ip + 12, 8) + 17 + (8 + 37);
    CHECK_EQ(fold(ones_sum(pseudo, udp, 8 + 37)), 0xffff);
    CHECK(memcmp(udp + 8, payload, 37) == 0);

    CHECK_EQ(pcap_next_ex(in, &h, &f), 1);
    CHECK_EQ(h->ts.tv_sec, 3);
    CHECK_EQ(h->ts.tv_usec, 0);
    ip = f + 14;
    CHECK_EQ(ip[15], 2); /* reversed direction */
    CHECK_EQ(get16(ip + 4), 1); /* second datagram: next IP id */
    CHECK_EQ(fold(ones_sum(0, ip, 20)), 0xffff);
    pseudo = ones_sum(0, ip + 12, 8) + 17 + (8 + 36);
    CHECK_EQ(fold(ones_sum(pseudo, ip + 20, 8 + 36)), 0xffff);
    CHECK(pcap_next_ex(in, &h, &f) != 1); /* the oversize one was not written */
    pcap_close(in);
    unlink(path);
}

static void test_ipv6_frame(void)
{
    char path[128];
    pcapout_t *pcap = open_temp(path, sizeof path);
    if (!pcap) return;
    pcapout_addr_t a = {.family = 6, .port = 40000}, b = {.family = 6, .port = 1234};
    a.addr[15] = 1; /* ::1 */
    b.addr[0] = 0xfe, b.addr[1] = 0x80, b.addr[15] = 7;
    uint8_t payload[1037];
    memset(payload, 0x5a, sizeof payload);
    CHECK_EQ(pcapout_write_udp(pcap, 0.25, &a, &b, payload, (int)sizeof payload), 0);
    pcapout_addr_t v4;
    pcapout_addr_ipv4(&v4, 127, 0, 0, 1, 1);
    CHECK_EQ(pcapout_write_udp(pcap, 0.5, &a, &v4, payload, 10), -1); /* families differ */

    pcap_t *in = close_and_read(pcap, path);
    if (!in) return;
    struct pcap_pkthdr *h;
    const u_char *f;
    CHECK_EQ(pcap_next_ex(in, &h, &f), 1);
    CHECK_EQ(h->caplen, 14 + 40 + 8 + 1037);
    CHECK_EQ(get16(f + 12), 0x86dd);
    const uint8_t *ip = f + 14;
    CHECK_EQ(ip[0] >> 4, 6);
    CHECK_EQ(get16(ip + 4), 8 + 1037);
    CHECK_EQ(ip[6], 17);
    CHECK(memcmp(ip + 8, a.addr, 16) == 0);
    CHECK(memcmp(ip + 24, b.addr, 16) == 0);
    const uint8_t *udp = ip + 40;
    CHECK_EQ(get16(udp), 40000);
    CHECK_EQ(get16(udp + 2), 1234);
    uint32_t pseudo = ones_sum(0, ip + 8, 32) + 17 + (8 + 1037);
    CHECK_EQ(fold(ones_sum(pseudo, udp, 8 + 1037)), 0xffff);
    CHECK(pcap_next_ex(in, &h, &f) != 1);
    pcap_close(in);
    unlink(path);
}

static void test_open_failure(void)
{
    char err[256] = "";
    pcapout_t *pcap = pcapout_open("/nonexistent-folder/x.pcap", err, sizeof err);
    CHECK(pcap == NULL);
    CHECK(err[0] != 0);
}

const chunk_test_t pcapout_tests[] = {
    {"ipv4_frame", test_ipv4_frame},
    {"ipv6_frame", test_ipv6_frame},
    {"open_failure", test_open_failure},
    {NULL, NULL},
};
