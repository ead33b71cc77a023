/*
 * pcapout.c: pcapout.h on top of libpcap. Each datagram becomes one Ethernet
 * frame carrying IPv4 or IPv6 and UDP with correct lengths and checksums.
 * Nothing depends on the clock or the host, so the same calls give the same
 * file byte for byte (chunk-sim relies on that).
 */
#define _DEFAULT_SOURCE /* libpcap's headers use u_char and friends */

#include <math.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapout.h"

#define ETHERNET_HEADER 14
#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define UDP_HEADER 8
#define MAX_FRAME (ETHERNET_HEADER + IPV6_HEADER + 65535)

struct pcapout_t {
    pcap_t *dead;
    pcap_dumper_t *dumper;
    uint16_t ip_id; /* IPv4 identification, one per datagram, from 0 */
    int failed;
    uint8_t frame[MAX_FRAME];
};

pcapout_t *pcapout_open(const char *path, char *err, size_t err_size)
{
    pcapout_t *pcap = calloc(1, sizeof *pcap);
    if (!pcap) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    pcap->dead = pcap_open_dead(DLT_EN10MB, MAX_FRAME);
    if (!pcap->dead) {
        snprintf(err, err_size, "pcap_open_dead failed");
        free(pcap);
        return NULL;
    }
    pcap->dumper = pcap_dump_open(pcap->dead, path);
    if (!pcap->dumper) {
        snprintf(err, err_size, "%s", pcap_geterr(pcap->dead));
        pcap_close(pcap->dead);
        free(pcap);
        return NULL;
    }
    return pcap;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* One's-complement sum of big-endian 16-bit words (odd length padded with zero). */
static uint32_t sum16(uint32_t sum, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1) sum += (uint32_t)(p[n - 1] << 8);
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* A locally administered MAC derived from the address, so each host keeps
 * one MAC and the file stays reproducible. */
static void mac_for(uint8_t *mac, const pcapout_addr_t *a)
{
    const uint8_t *last = a->family == 6 ? a->addr + 12 : a->addr;
    mac[0] = 0x02;
    mac[1] = 0x00;
    memcpy(mac + 2, last, 4);
}

int pcapout_write_udp(pcapout_t *pcap, double time, const pcapout_addr_t *src,
                      const pcapout_addr_t *dst, const uint8_t *payload, int bytes)
{
    if (!pcap || !src || !dst || bytes < 0 || (bytes > 0 && !payload)) return -1;
    if (src->family != dst->family || (src->family != 4 && src->family != 6)) return -1;
    int v6 = src->family == 6;
    int ip_header = v6 ? IPV6_HEADER : IPV4_HEADER;
    /* IPv4 total length and the IPv6 payload length are 16-bit fields. */
    int limit = v6 ? 65535 - UDP_HEADER : 65535 - IPV4_HEADER - UDP_HEADER;
    if (bytes > limit) return -1;

    uint8_t *f = pcap->frame;
    int udp_length = UDP_HEADER + bytes;
    int frame_length = ETHERNET_HEADER + ip_header + udp_length;

    mac_for(f, dst);
    mac_for(f + 6, src);
    put16(f + 12, v6 ? 0x86dd : 0x0800);

    uint8_t *ip = f + ETHERNET_HEADER;
    uint32_t pseudo = 0;
    if (v6) {
        memset(ip, 0, IPV6_HEADER);
        ip[0] = 0x60;
        put16(ip + 4, (uint16_t)udp_length);
        ip[6] = 17; /* UDP */
        ip[7] = 64; /* hop limit */
        memcpy(ip + 8, src->addr, 16);
        memcpy(ip + 24, dst->addr, 16);
        pseudo = sum16(pseudo, ip + 8, 32);
    } else {
        memset(ip, 0, IPV4_HEADER);
        ip[0] = 0x45;
        put16(ip + 2, (uint16_t)(IPV4_HEADER + udp_length));
        put16(ip + 4, pcap->ip_id++);
        put16(ip + 6, 0x4000); /* don't fragment */
        ip[8] = 64;            /* TTL */
        ip[9] = 17;            /* UDP */
        memcpy(ip + 12, src->addr, 4);
        memcpy(ip + 16, dst->addr, 4);
        put16(ip + 10, fold(sum16(0, ip, IPV4_HEADER)));
        pseudo = sum16(pseudo, ip + 12, 8);
    }
    pseudo += 17 + (uint32_t)udp_length;

    uint8_t *udp = ip + ip_header;
    put16(udp, src->port);
    put16(udp + 2, dst->port);
    put16(udp + 4, (uint16_t)udp_length);
    put16(udp + 6, 0);
    if (bytes > 0) memcpy(udp + UDP_HEADER, payload, (size_t)bytes);
    uint16_t check = fold(sum16(pseudo, udp, (size_t)udp_length));
    put16(udp + 6, check ? check : 0xffff); /* 0 means "no checksum" in UDP */

    struct pcap_pkthdr header;
    memset(&header, 0, sizeof header);
    double whole = floor(time);
    long usec = lround((time - whole) * 1e6);
    if (usec >= 1000000) {
        whole += 1;
        usec -= 1000000;
    }
    header.ts.tv_sec = (time_t)whole;
    header.ts.tv_usec = (suseconds_t)usec;
    header.caplen = (bpf_u_int32)frame_length;
    header.len = (bpf_u_int32)frame_length;
    pcap_dump((u_char *)pcap->dumper, &header, f);
    if (ferror(pcap_dump_file(pcap->dumper))) {
        pcap->failed = 1;
        return -1;
    }
    return 0;
}

int pcapout_close(pcapout_t *pcap)
{
    if (!pcap) return -1;
    int failed = pcap->failed;
    if (pcap_dump_flush(pcap->dumper) != 0) failed = 1;
    if (ferror(pcap_dump_file(pcap->dumper))) failed = 1;
    pcap_dump_close(pcap->dumper);
    pcap_close(pcap->dead);
    free(pcap);
    return failed ? -1 : 0;
}

void pcapout_addr_ipv4(pcapout_addr_t *addr, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
    memset(addr, 0, sizeof *addr);
    addr->family = 4;
    addr->addr[0] = a;
    addr->addr[1] = b;
    addr->addr[2] = c;
    addr->addr[3] = d;
    addr->port = port;
}
