/* platform.h: the one place the programs touch the operating system for
 * networking and time: UDP sockets (IPv4 and IPv6), address parsing and
 * printing, the clocks, sleeping and waiting for input, and SIGINT/SIGTERM.
 * The protocol code in endpoints/src never includes this. POSIX only. */
#ifndef PLATFORM_H
#define PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "pcapout.h"

/* ---- time ---- */

/* Monotonic seconds from an arbitrary origin: what the endpoints and the
 * simulator are driven with. Never goes backwards. */
double platform_time(void);

/* Wall-clock seconds since the Unix epoch: the timestamps of pcap records. */
double platform_wall_time(void);

/* Sleeps for seconds (returns early on a signal). */
void platform_sleep(double seconds);

/* ---- signals ---- */

/* Catches SIGINT and SIGTERM (without SA_RESTART, so a wait returns at once)
 * and ignores SIGPIPE, so that a closed output pipe is a write error. */
void platform_catch_signals(void);

/* The signal number caught since platform_catch_signals, or 0. */
int platform_stop_signal(void);

/* ---- command-line values ----
 * The programs' option values. Each returns 0, or -1 when text is not a
 * value in range (the caller prints the message and exits 2). */

/* A decimal integer in [min, max], or hexadecimal with 0x. */
int platform_parse_int(const char *text, long long min, long long max, long long *out);

/* A non-negative number of seconds: "0.1", "100ms", "2s", "1.5m" at most max. */
int platform_parse_seconds(const char *text, double max, double *out);

/* A probability: "0.2" or "20%", in [0, 1]. */
int platform_parse_probability(const char *text, double *out);

/* A byte count with an optional binary suffix: "1024", "256K", "1M", "1G"
 * (K = 1024), at most max. */
int platform_parse_bytes(const char *text, long long max, long long *out);

/* A rate in bytes per second: a number with an optional decimal multiplier
 * and unit, "125000", "125kB", "1Mbit", "8mbps" ("bit"/"bps" divide by 8;
 * k = 1000, M = 10^6, G = 10^9), or "0" / "unlimited" for no limit (0). */
int platform_parse_rate(const char *text, double *out);

/* Writes port and a newline to path through a temporary file and a rename,
 * so a script polling for the file never reads it half written. Returns 0,
 * or -1 with a message in err. */
int platform_write_port_file(const char *path, uint16_t port, char *err, size_t err_size);

/* 1 when stderr is a terminal (progress lines then redraw in place). */
int platform_stderr_is_tty(void);

/* ---- addresses ---- */

typedef struct platform_address_t {
    int family;        /* 4 or 6; 0 = no address */
    uint8_t addr[16];  /* network order; IPv4 in the first 4 bytes */
    uint16_t port;     /* host order */
    uint32_t scope_id; /* IPv6 interface index for link-local addresses, else 0 */
} platform_address_t;

/* Longest text platform_address_format writes, with the terminating NUL. */
#define PLATFORM_ADDRESS_STRING_SIZE 80

/* Parses a port number 0..65535. Returns 0, or -1 when text is not one. */
int platform_parse_port(const char *text, uint16_t *port);

/* Parses "HOST", "HOST:PORT", "[IPV6]", "[IPV6]:PORT", a bare IPv6 address
 * ("::1", which has no port) or ":PORT" (host left as the unspecified address
 * of want_family, or IPv6 when want_family is 0). HOST may be a name, resolved
 * with getaddrinfo (first result of want_family, or of any family when
 * want_family is 0). A missing port is default_port. Returns 0, or -1 with a
 * message in err when the text is malformed or the name does not resolve. */
int platform_address_parse(const char *text, int want_family, uint16_t default_port,
                           platform_address_t *out, char *err, size_t err_size);

/* The unspecified address (0.0.0.0 or ::) of family 4 or 6 with port. */
void platform_address_any(platform_address_t *out, int family, uint16_t port);

/* 1 when a and b are the same address, port and family. */
int platform_address_equal(const platform_address_t *a, const platform_address_t *b);

/* Writes "1.2.3.4:5" or "[::1]:5" into buf (PLATFORM_ADDRESS_STRING_SIZE bytes
 * suffice) and returns buf. */
const char *platform_address_format(const platform_address_t *address, char *buf, size_t size);

/* Converts to the pcap writer's address. */
void platform_address_to_pcap(const platform_address_t *address, pcapout_addr_t *out);

/* ---- UDP sockets ---- */

typedef struct platform_socket_t {
    int fd;              /* -1 when closed */
    int family;          /* 4 or 6: the socket's own family */
    platform_address_t bound; /* address and port it is bound to (port filled in after bind) */
} platform_socket_t;

/* Largest datagram a receive can return: any UDP payload fits, so a datagram
 * is never silently truncated. */
#define PLATFORM_SOCKET_MAX_DATAGRAM 65536

/* Opens a non-blocking UDP socket bound to address (port 0 picks a free port;
 * the port chosen is in socket->bound.port). When address is the IPv6
 * unspecified address and dual_stack is set, the socket also takes IPv4
 * traffic, which is then reported with IPv4 addresses. Returns 0, or -1 with
 * a message in err (address in use, no IPv6, ...). */
int platform_socket_open(platform_socket_t *socket, const platform_address_t *address, int dual_stack,
                         char *err, size_t err_size);

void platform_socket_close(platform_socket_t *socket);

/* Sends one datagram to address. Returns 0; or -1 when the kernel refused it
 * (errno says why; a full buffer, EAGAIN or ENOBUFS, is a loss the protocol
 * recovers from, like any other). */
int platform_socket_send(platform_socket_t *socket, const platform_address_t *to, const uint8_t *data, int bytes);

/* Receives one datagram into buffer (PLATFORM_SOCKET_MAX_DATAGRAM bytes) and its
 * source into *from. Returns its length (0 is a valid empty datagram), -1 when
 * none is waiting, or -2 on a real error (errno set). ICMP errors reported
 * on the socket (ECONNREFUSED and the like) count as "none waiting". */
int platform_socket_receive(platform_socket_t *socket, platform_address_t *from, uint8_t *buffer);

/* Fills *local with the address the kernel would use as the source of a
 * datagram from socket to peer (the socket's bound address when that is not
 * the unspecified address; otherwise the one its routing picks), with the
 * socket's port. For pcap records: real addresses, not 0.0.0.0. Returns 0, or
 * -1 when no route exists (then *local is the bound address). */
int platform_socket_local_address(const platform_socket_t *socket, const platform_address_t *peer,
                                  platform_address_t *local);

/* Waits until one of fds is readable, timeout seconds pass (< 0: forever), or
 * a signal arrives. fds may hold -1 entries, which are skipped. Sets
 * readable[i] to 1 or 0 for each fd. Returns the number of readable fds, 0 on
 * timeout or signal, or -1 on error. */
int platform_wait(const int *fds, int count, double timeout, int *readable);

#endif
