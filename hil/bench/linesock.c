/*
 * The line sockets: each node's serial line also on a Unix socket, RUN_DIR/NODE.sock, which mmrig's own
 * links use (the pyserial URL unix://RUN_DIR/NODE.sock, protocol/python/mmproto/urlhandler/).
 *
 * Why. A pty hands the writer's bytes to the reader through the kernel's tty flip buffer and a work item
 * (flush_to_ldisc) on a normal-priority kworker: the reader, however high its priority, sees the bytes
 * only once that kworker has had its turn behind every CPU hog of the machine. On this project's 2-vCPU
 * VM under load, a byte written into a pty reached a SCHED_FIFO reader with p99.9 11.7 ms (max 13.7 ms),
 * through an AF_UNIX socket pair with p99.9 0.52 ms (max 2.2 ms) (2,000 bytes each, interleaved; the
 * comparison is `make perf`'s line_paths). A real USB-serial adapter has no such hop on the PC's transmit
 * side (the usb-serial driver submits the write's URB in the writer's own call), so through a pty the
 * bench measured itself, not the PC. A socket wakes its reader in the writer's own call.
 *
 * Packets. SOCK_SEQPACKET keeps each write whole, so a packet carries what a pty carries out of band: the
 * rate the host set on its port (termios on a pty) goes with every write ('D' baud bytes) and on its
 * own when the host changes it ('B' baud), in order with the bytes. linesock.h lists the four kinds;
 * docs/bench.md, "The line sockets", is the reference for other programs.
 *
 * These are the socket's calls only; which host side holds the line, the counts and the generations
 * are uart_host.c's.
 */
#define _GNU_SOURCE
#include "linesock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench.h"

static uint64_t malformed;

static void put_le(uint8_t *p, uint64_t v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int linesock_listen(const char *path)
{
    struct sockaddr_un sa;
    int fd;
    if (strlen(path) >= sizeof sa.sun_path)
        die("run directory path too long for a Unix socket: %s", path);
    unlink(path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    /* 0600: connecting needs write permission on the socket file; the run directory is the user's own and
     * 0700 too (main.c), so nobody else reaches a node's line */
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || chmod(path, 0600) || listen(fd, 4))
        die("cannot listen on %s: %s", path, strerror(errno));
    return fd;
}

int linesock_accept(int listen_fd)
{
    return listen_fd < 0 ? -1 : accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

void linesock_welcome(int fd, uint64_t generation, uint32_t baud)
{
    uint8_t p[13];
    p[0] = LINESOCK_HELLO;
    put_le(p + 1, generation, 8);
    put_le(p + 9, baud, 4);
    if (send(fd, p, sizeof p, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) { /* (a new socket has room: the host left) */
    }
}

void linesock_refuse(int fd, const char *why)
{
    uint8_t p[256];
    size_t n = strlen(why);
    if (n > sizeof p - 1)
        n = sizeof p - 1;
    p[0] = LINESOCK_BUSY;
    memcpy(p + 1, why, n);
    if (send(fd, p, n + 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) { /* (one try, never a wait) */
    }
}

ssize_t linesock_recv(int fd, uint8_t *buf, size_t cap, uint32_t *baud)
{
    uint8_t p[LINESOCK_MAX];
    ssize_t k = recv(fd, p, sizeof p, MSG_DONTWAIT | MSG_TRUNC);
    size_t n;
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
    if (k == 0)
        return -2; /* (a SEQPACKET peer cannot send an empty packet through send(): 0 is its close) */
    if ((size_t)k > sizeof p || k < 5 || (p[0] != LINESOCK_DATA && p[0] != LINESOCK_BAUD) ||
        (p[0] == LINESOCK_BAUD && k != 5) || (size_t)k - 5 > cap) {
        malformed++;
        return -3;
    }
    *baud = get_le32(p + 1);
    n = (size_t)k - 5;
    memcpy(buf, p + 5, n);
    if (p[0] == LINESOCK_DATA && !n) {
        malformed++;
        return -3;
    }
    return (ssize_t)n;
}

ssize_t linesock_send(int fd, const uint8_t *b, size_t n)
{
    uint8_t p[LINESOCK_MAX];
    ssize_t k;
    if (n > sizeof p - 1)
        n = sizeof p - 1;
    p[0] = LINESOCK_DATA;
    memcpy(p + 1, b, n);
    k = send(fd, p, n + 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR ? 0 : -1;
    return k - 1;
}

uint64_t linesock_malformed(void)
{
    return malformed;
}
