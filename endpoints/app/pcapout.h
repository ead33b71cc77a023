/* pcapout.h: writes UDP datagrams to a pcap file (libpcap, LINKTYPE_ETHERNET)
 * with Ethernet, IPv4 or IPv6, and UDP headers whose lengths and checksums
 * are correct, so that tshark shows every packet as valid UDP. */
#ifndef PCAPOUT_H
#define PCAPOUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct pcapout_addr_t {
    int family;       /* 4 or 6 */
    uint8_t addr[16]; /* IPv4 in the first 4 bytes, network order */
    uint16_t port;    /* host order */
} pcapout_addr_t;

typedef struct pcapout_t pcapout_t;

/* Creates (truncates) a pcap file with microsecond timestamps. Returns NULL
 * and writes a message into err on failure. */
pcapout_t *pcapout_open(const char *path, char *err, size_t err_size);

/* Appends one UDP datagram seen at time (seconds since the epoch, or virtual
 * time; written as given). Returns 0, or -1 when the datagram is too large
 * for one IP packet or the write failed. */
int pcapout_write_udp(pcapout_t *pcap, double time, const pcapout_addr_t *src,
                      const pcapout_addr_t *dst, const uint8_t *payload, int bytes);

/* Flushes and closes; returns 0, or -1 if a write failed at any point. */
int pcapout_close(pcapout_t *pcap);

/* Fills addr for an IPv4 address given as a.b.c.d (host order pieces) and port. */
void pcapout_addr_ipv4(pcapout_addr_t *addr, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port);

#endif
