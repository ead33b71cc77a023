/* platform.c: sockets, addresses, clocks, waiting and signals (POSIX). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "platform.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- time ---- */

static double clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double platform_time(void) { return clock_seconds(CLOCK_MONOTONIC); }

double platform_wall_time(void) { return clock_seconds(CLOCK_REALTIME); }

void platform_sleep(double seconds)
{
    if (seconds <= 0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* ---- signals ---- */

static volatile sig_atomic_t stop_signal = 0;

static void on_stop_signal(int sig) { stop_signal = sig; }

void platform_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: poll() returns EINTR and the loop sees the flag */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int platform_stop_signal(void) { return (int)stop_signal; }

/* ---- command-line values ---- */

int platform_parse_int(const char *text, long long min, long long max, long long *out)
{
    if (!text || !*text) return -1;
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 0);
    if (errno != 0 || *end != 0 || end == text || value < min || value > max) return -1;
    *out = value;
    return 0;
}

/* strtod that must consume a number; *rest gets what follows it. */
static int parse_number(const char *text, double *value, const char **rest)
{
    if (!text || !*text) return -1;
    char *end;
    errno = 0;
    *value = strtod(text, &end);
    if (errno != 0 || end == text || *value != *value) return -1;
    *rest = end;
    return 0;
}

int platform_parse_seconds(const char *text, double max, double *out)
{
    double value;
    const char *unit;
    if (parse_number(text, &value, &unit) != 0) return -1;
    if (strcmp(unit, "ms") == 0)
        value /= 1000.0;
    else if (strcmp(unit, "m") == 0)
        value *= 60.0;
    else if (*unit != 0 && strcmp(unit, "s") != 0)
        return -1;
    if (!(value >= 0.0 && value <= max)) return -1;
    *out = value;
    return 0;
}

int platform_parse_probability(const char *text, double *out)
{
    double value;
    const char *unit;
    if (parse_number(text, &value, &unit) != 0) return -1;
    if (strcmp(unit, "%") == 0)
        value /= 100.0;
    else if (*unit != 0)
        return -1;
    if (!(value >= 0.0 && value <= 1.0)) return -1;
    *out = value;
    return 0;
}

int platform_parse_bytes(const char *text, long long max, long long *out)
{
    double value;
    const char *unit;
    if (parse_number(text, &value, &unit) != 0) return -1;
    double scale = 1.0;
    if (*unit == 'k' || *unit == 'K')
        scale = 1024.0, unit++;
    else if (*unit == 'M')
        scale = 1024.0 * 1024.0, unit++;
    else if (*unit == 'G')
        scale = 1024.0 * 1024.0 * 1024.0, unit++;
    if (*unit == 'i' && scale > 1.0) unit++; /* KiB, MiB */
    if (*unit == 'B') unit++;
    if (*unit != 0) return -1;
    value *= scale;
    if (!(value >= 0.0 && value <= (double)max) || value != (double)(long long)value) return -1;
    *out = (long long)value;
    return 0;
}

int platform_parse_rate(const char *text, double *out)
{
    if (text && (strcmp(text, "unlimited") == 0 || strcmp(text, "none") == 0)) {
        *out = 0.0;
        return 0;
    }
    double value;
    const char *unit;
    if (parse_number(text, &value, &unit) != 0) return -1;
    if (*unit == 'k' || *unit == 'K')
        value *= 1e3, unit++;
    else if (*unit == 'M' || *unit == 'm')
        value *= 1e6, unit++;
    else if (*unit == 'G' || *unit == 'g')
        value *= 1e9, unit++;
    if (strcmp(unit, "bit") == 0 || strcmp(unit, "bit/s") == 0 || strcmp(unit, "bps") == 0)
        value /= 8.0;
    else if (*unit != 0 && strcmp(unit, "B") != 0 && strcmp(unit, "B/s") != 0)
        return -1;
    if (!(value >= 0.0 && value < 1e15)) return -1;
    *out = value;
    return 0;
}

int platform_stderr_is_tty(void) { return isatty(STDERR_FILENO); }

int platform_write_port_file(const char *path, uint16_t port, char *err, size_t err_size)
{
    char temporary[4096];
    if (snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof temporary) {
        snprintf(err, err_size, "path too long: %s", path);
        return -1;
    }
    FILE *f = fopen(temporary, "w");
    if (!f) {
        snprintf(err, err_size, "cannot create %s: %s", temporary, strerror(errno));
        return -1;
    }
    int failed = fprintf(f, "%u\n", (unsigned)port) < 0;
    failed |= fclose(f) != 0;
    if (failed || rename(temporary, path) != 0) {
        snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
        remove(temporary);
        return -1;
    }
    return 0;
}

/* ---- addresses ---- */

int platform_parse_port(const char *text, uint16_t *port)
{
    if (!text || !*text) return -1;
    unsigned long value = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        value = value * 10 + (unsigned long)(*p - '0');
        if (value > 65535) return -1;
    }
    *port = (uint16_t)value;
    return 0;
}

void platform_address_any(platform_address_t *out, int family, uint16_t port)
{
    memset(out, 0, sizeof *out);
    out->family = family;
    out->port = port;
}

/* Fills out from a sockaddr; an IPv4-mapped IPv6 address (what a dual-stack
 * socket reports for IPv4 peers) becomes the plain IPv4 address. */
static int address_from_sockaddr(const struct sockaddr *sa, platform_address_t *out)
{
    memset(out, 0, sizeof *out);
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        out->family = 4;
        memcpy(out->addr, &in->sin_addr, 4);
        out->port = ntohs(in->sin_port);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
            out->family = 4;
            memcpy(out->addr, &in6->sin6_addr.s6_addr[12], 4);
        } else {
            out->family = 6;
            memcpy(out->addr, &in6->sin6_addr, 16);
            out->scope_id = in6->sin6_scope_id;
        }
        out->port = ntohs(in6->sin6_port);
        return 0;
    }
    return -1;
}

/* Builds the sockaddr for sending from a socket of socket_family (4 or 6) to
 * address; an IPv4 address on an IPv6 socket becomes IPv4-mapped. Returns
 * its length, or 0 when an IPv6 address cannot go out of an IPv4 socket. */
static socklen_t address_to_sockaddr(const platform_address_t *address, int socket_family,
                                     struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (socket_family == 4) {
        if (address->family != 4) return 0;
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family = AF_INET;
        in->sin_port = htons(address->port);
        memcpy(&in->sin_addr, address->addr, 4);
        return sizeof *in;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(address->port);
    if (address->family == 4) {
        in6->sin6_addr.s6_addr[10] = 0xff;
        in6->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&in6->sin6_addr.s6_addr[12], address->addr, 4);
    } else {
        memcpy(&in6->sin6_addr, address->addr, 16);
        in6->sin6_scope_id = address->scope_id;
    }
    return sizeof *in6;
}

static int resolve_host(const char *host, int want_family, uint16_t port, platform_address_t *out,
                        char *err, size_t err_size)
{
    struct addrinfo hints, *result = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = want_family == 4 ? AF_INET : want_family == 6 ? AF_INET6 : AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    int rc = getaddrinfo(host, NULL, &hints, &result);
    if (rc != 0) {
        snprintf(err, err_size, "cannot resolve '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    int found = -1;
    for (struct addrinfo *ai = result; ai; ai = ai->ai_next) {
        if (address_from_sockaddr(ai->ai_addr, out) == 0) {
            found = 0;
            break;
        }
    }
    freeaddrinfo(result);
    if (found != 0) {
        snprintf(err, err_size, "no IPv4 or IPv6 address for '%s'", host);
        return -1;
    }
    out->port = port;
    return 0;
}

int platform_address_parse(const char *text, int want_family, uint16_t default_port,
                           platform_address_t *out, char *err, size_t err_size)
{
    char host[256];
    const char *port_text = NULL;
    size_t len = strlen(text);
    if (len == 0 || len >= sizeof host) {
        snprintf(err, err_size, "bad address '%s'", text);
        return -1;
    }
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close == text + 1) {
            snprintf(err, err_size, "bad address '%s': expected [IPV6] or [IPV6]:PORT", text);
            return -1;
        }
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = 0;
        if (close[1] == ':') {
            port_text = close + 2;
        } else if (close[1] != 0) {
            snprintf(err, err_size, "bad address '%s': expected [IPV6] or [IPV6]:PORT", text);
            return -1;
        }
    } else {
        const char *colon = strchr(text, ':');
        if (colon && strchr(colon + 1, ':')) {
            /* Two or more colons: a bare IPv6 address, which cannot carry a port. */
            strcpy(host, text);
        } else if (colon) {
            memcpy(host, text, (size_t)(colon - text));
            host[colon - text] = 0;
            port_text = colon + 1;
        } else {
            strcpy(host, text);
        }
    }
    uint16_t port = default_port;
    if (port_text && platform_parse_port(port_text, &port) != 0) {
        snprintf(err, err_size, "bad port '%s' in '%s' (expected 0..65535)", port_text, text);
        return -1;
    }
    if (host[0] == 0) {
        platform_address_any(out, want_family ? want_family : 6, port);
        return 0;
    }
    if (resolve_host(host, want_family, port, out, err, err_size) != 0) return -1;
    return 0;
}

int platform_address_equal(const platform_address_t *a, const platform_address_t *b)
{
    if (a->family != b->family || a->port != b->port) return 0;
    return memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16) == 0;
}

const char *platform_address_format(const platform_address_t *address, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    if (address->family == 4) {
        inet_ntop(AF_INET, address->addr, host, sizeof host);
        snprintf(buf, size, "%s:%u", host, (unsigned)address->port);
    } else if (address->family == 6) {
        inet_ntop(AF_INET6, address->addr, host, sizeof host);
        if (address->scope_id)
            snprintf(buf, size, "[%s%%%u]:%u", host, (unsigned)address->scope_id, (unsigned)address->port);
        else
            snprintf(buf, size, "[%s]:%u", host, (unsigned)address->port);
    } else {
        snprintf(buf, size, "(none)");
    }
    return buf;
}

void platform_address_to_pcap(const platform_address_t *address, pcapout_addr_t *out)
{
    memset(out, 0, sizeof *out);
    out->family = address->family;
    memcpy(out->addr, address->addr, sizeof out->addr);
    out->port = address->port;
}

static int address_is_unspecified(const platform_address_t *address)
{
    static const uint8_t zero[16];
    return memcmp(address->addr, zero, address->family == 4 ? 4 : 16) == 0;
}

/* ---- UDP sockets ---- */

int platform_socket_open(platform_socket_t *sock, const platform_address_t *address, int dual_stack,
                         char *err, size_t err_size)
{
    char text[PLATFORM_ADDRESS_STRING_SIZE];
    sock->fd = -1;
    sock->family = address->family;
    int fd = socket(address->family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM, 0);
    if (fd < 0) {
        snprintf(err, err_size, "cannot open an IPv%d UDP socket: %s", address->family, strerror(errno));
        return -1;
    }
    if (address->family == 6) {
        int v6only = !(dual_stack && address_is_unspecified(address));
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
    }
    /* A chunk leaves in bursts of up to 256 datagrams of 1 KiB; bigger
     * buffers than the default keep the kernel from dropping those on
     * loopback (best effort: capped by net.core.*mem_max). */
    int buffer_bytes = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);

    struct sockaddr_storage ss;
    socklen_t len = address_to_sockaddr(address, address->family, &ss);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0) {
        snprintf(err, err_size, "cannot bind to %s: %s", platform_address_format(address, text, sizeof text),
                 strerror(errno));
        close(fd);
        return -1;
    }
    len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
        address_from_sockaddr((struct sockaddr *)&ss, &sock->bound) != 0) {
        snprintf(err, err_size, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        snprintf(err, err_size, "cannot make the socket non-blocking: %s", strerror(errno));
        close(fd);
        return -1;
    }
    sock->fd = fd;
    return 0;
}

void platform_socket_close(platform_socket_t *sock)
{
    if (sock->fd >= 0) close(sock->fd);
    sock->fd = -1;
}

int platform_socket_send(platform_socket_t *sock, const platform_address_t *to, const uint8_t *data, int bytes)
{
    struct sockaddr_storage ss;
    socklen_t len = address_to_sockaddr(to, sock->family, &ss);
    if (len == 0) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    ssize_t sent = sendto(sock->fd, data, (size_t)bytes, 0, (struct sockaddr *)&ss, len);
    return sent == (ssize_t)bytes ? 0 : -1;
}

int platform_socket_receive(platform_socket_t *sock, platform_address_t *from, uint8_t *buffer)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        ssize_t n = recvfrom(sock->fd, buffer, PLATFORM_SOCKET_MAX_DATAGRAM, 0, (struct sockaddr *)&ss, &len);
        if (n >= 0) {
            if (address_from_sockaddr((struct sockaddr *)&ss, from) != 0) continue; /* not IP: skip */
            return (int)n;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return -1;
        /* Pending ICMP errors surface here once; they say nothing about the
         * next datagram, so report "nothing waiting" and let the loop go on. */
        if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH ||
            errno == EHOSTDOWN || errno == ENETDOWN)
            return -1;
        return -2;
    }
}

int platform_socket_local_address(const platform_socket_t *sock, const platform_address_t *peer, platform_address_t *local)
{
    *local = sock->bound;
    if (!address_is_unspecified(&sock->bound)) return 0;
    /* Connecting a UDP socket sends nothing; it only asks the routing table
     * which source address a datagram to peer would carry. */
    struct sockaddr_storage ss;
    socklen_t len = address_to_sockaddr(peer, sock->family, &ss);
    if (len == 0) return -1;
    int fd = socket(sock->family == 4 ? AF_INET : AF_INET6, SOCK_DGRAM, 0);
    if (fd < 0) return -1;
    int rc = -1;
    platform_address_t found;
    if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
        len = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
            address_from_sockaddr((struct sockaddr *)&ss, &found) == 0) {
            found.port = sock->bound.port;
            *local = found;
            rc = 0;
        }
    }
    close(fd);
    return rc;
}

int platform_wait(const int *fds, int count, double timeout, int *readable)
{
    struct pollfd pfd[8];
    assert(count >= 0 && count <= 8); /* the programs wait on at most three */
    for (int i = 0; i < count; i++) {
        pfd[i].fd = fds[i]; /* poll skips negative fds */
        pfd[i].events = POLLIN;
        pfd[i].revents = 0;
        readable[i] = 0;
    }
    int ms;
    if (timeout < 0)
        ms = -1;
    else if (timeout > 3600)
        ms = 3600 * 1000;
    else
        ms = (int)(timeout * 1000.0 + 0.999); /* round up: never spin on a sub-millisecond wait */
    int rc = poll(pfd, (nfds_t)count, ms);
    if (rc < 0) return errno == EINTR ? 0 : -1;
    int ready = 0;
    for (int i = 0; i < count; i++) {
        /* POLLHUP/POLLERR count as readable: the read then reports EOF or the error. */
        if (fds[i] >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
            readable[i] = 1;
            ready++;
        }
    }
    return ready;
}
