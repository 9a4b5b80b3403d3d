/*
 * The host's side of each node's line. It is a pty (RUN_DIR/NODE.tty), which any program opens as a
 * serial port, and a Unix socket (RUN_DIR/NODE.sock, linesock.c: mmrig's own links, without the pty's
 * kernel hop). One of them holds the line at a time: a connection to the socket takes it from the pty
 * until it closes (a second connection meanwhile is refused, as a port another program holds); the pty's
 * bytes wait in it meanwhile. Every host stream (a pty, a connection) has a generation of its own, and the
 * byte counts in_read and out_written count on the one that holds the line. What the host side has is
 * read here (uart_host_read); the line (uart_line.c) puts it in its queue.
 *
 * A hang-up (faults.c's command) is the USB-serial adapter unplugged: the pty and the socket are closed
 * (the host's port goes away), output is dropped meanwhile, and the re-plug opens a fresh pty behind the
 * same NODE.tty link, its socket listening again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arduino.h"
#include "linesock.h"
#include "uart_node.h"

/* What the host side holding the line has now, at most `want` bytes from a pty (a socket: one whole
 * packet, up to LINESOCK_MAX); the pty's rate is read right after (the host wrote the bytes at the rate
 * its port was set to then: read now, not up to a millisecond later, or unpaced they would be judged at
 * the old one), a socket's comes with its packet. 0: nothing now (or the host closed its connection: the
 * line is back on the pty). */
size_t uart_host_read(int id, uint8_t *buf, size_t want)
{
    struct uart_node *u = &uart.n[id];
    if (u->sock_conn < 0) {
        ssize_t k = u->master < 0 ? -1 : read(u->master, buf, want);
        if (k <= 0)
            return 0;
        uart_poll_host_baud(id, 1);
        return (size_t)k;
    }
    for (;;) {
        uint32_t baud = 0;
        ssize_t k = linesock_recv(u->sock_conn, buf, LINESOCK_MAX, &baud);
        if (k == -3)
            continue; /* malformed: counted, dropped */
        if (k == -1)
            return 0;
        if (k == -2) {
            uart_host_closed(id, u->sock_gen);
            return 0;
        }
        uart_rate_from_host(u, baud);
        if (k > 0)
            return (size_t)k;
    }
}

void uart_open_pty(int id, const char *run_dir)
{
    struct uart_node *u = &uart.n[id];
    char *name;
    u->master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (u->master < 0 || grantpt(u->master) || unlockpt(u->master))
        die("cannot open a pseudo-terminal: %s", strerror(errno));
    name = ptsname(u->master);
    if (!name)
        die("ptsname: %s", strerror(errno));
    snprintf(u->pts, sizeof u->pts, "%s", name);
    /* Keep one slave descriptor open: the pty then survives the host closing and reopening it, and
     * the line discipline stays raw (no echo of MCU output back into the MCU, no CR/LF mapping). */
    u->slave = open(u->pts, O_RDWR | O_NOCTTY);
    if (u->slave < 0)
        die("cannot open %s: %s", u->pts, strerror(errno));
    uart_rate_power_on(u); /* raw, at --baud */
    /* the link is made under a temporary name and renamed into place: a host that (re)opens the path
     * finds the new pty whole (during a hang-up there is no link: uart_hangup) */
    if (run_dir != uart.run_dir)
        snprintf(uart.run_dir, sizeof uart.run_dir, "%s", run_dir);
    snprintf(u->link, sizeof u->link, "%s/%s.tty", run_dir, node_names[id]);
    {
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s/.%s.tty.new", run_dir, node_names[id]);
        unlink(tmp);
        if (symlink(u->pts, tmp) || rename(tmp, u->link))
            die("cannot create %s: %s", u->link, strerror(errno));
    }
    u->pty_gen = ++u->streams;
    arduino_watch(id, u->pts); /* --arduino: the host's opens from now on (ours above is not seen) */
}

void uart_open_socket(int id)
{
    struct uart_node *u = &uart.n[id];
    snprintf(u->sock_path, sizeof u->sock_path, "%s/%s.sock", uart.run_dir, node_names[id]);
    u->sock_listen = linesock_listen(u->sock_path);
}

int uart_listen_fd(int id)
{
    return uart.n[id].sock_listen;
}

const char *uart_link(int id)
{
    return uart.n[id].link;
}

const char *uart_socket_path(int id)
{
    return uart.n[id].sock_path;
}

int uart_host_fd(int id)
{
    const struct uart_node *u = &uart.n[id];
    return u->sock_conn >= 0 ? u->sock_conn : u->master;
}

int uart_host_is_socket(int id)
{
    return uart.n[id].sock_conn >= 0;
}

uint64_t uart_generation(int id)
{
    const struct uart_node *u = &uart.n[id];
    return u->sock_conn >= 0 ? u->sock_gen : u->pty_gen;
}

uint64_t uart_in_read(int id)
{
    return uart.n[id].in_read;
}

uint64_t uart_out_written(int id)
{
    return uart.n[id].out_written;
}

int uart_hung_up(int id)
{
    return uart.n[id].hung;
}

/* The line's host side changes (a connection takes it, or gives it back): under the stamping thread's
 * lock, which reads the host side's descriptor only while it is the node's (hostin.c). */
static void switch_host(struct uart_node *u, int conn)
{
    if (uart.pty_lock)
        uart.pty_lock();
    if (conn >= 0) {
        u->pty_in_read = u->in_read;
        u->pty_out_written = u->out_written;
        u->sock_conn = conn;
        u->sock_gen = ++u->streams;
        u->in_read = u->out_written = 0;
    } else {
        close(u->sock_conn);
        u->sock_conn = -1;
        u->in_read = u->pty_in_read;
        u->out_written = u->pty_out_written;
    }
    if (uart.pty_unlock)
        uart.pty_unlock(); /* (wakes the stamping thread: it polls the new descriptor) */
}

void uart_accept(int id, uint64_t now)
{
    struct uart_node *u = &uart.n[id];
    int fd;
    while ((fd = linesock_accept(u->sock_listen)) >= 0) {
        if (u->sock_conn >= 0) {
            char why[128];
            snprintf(why, sizeof why, "%s: the line is held by another connection", node_names[id]);
            linesock_refuse(fd, why);
            close(fd);
            u->sock_refused++;
            continue;
        }
        switch_host(u, fd);
        u->sock_conns++;
        linesock_welcome(fd, u->sock_gen, (uint32_t)uart_line_baud(id));
        logmsg("%s: the line socket holds the line (generation %" PRIu64 ")", node_names[id], u->sock_gen);
        arduino_opened(id, now); /* --arduino: an open pulls DTR, as the pty's does */
    }
}

void uart_host_closed(int id, uint64_t gen)
{
    struct uart_node *u = &uart.n[id];
    if (u->sock_conn < 0 || u->sock_gen != gen)
        return; /* (that connection is gone already: a hang-up) */
    switch_host(u, -1);
    logmsg("%s: the line socket's host closed; the line is back on the pty", node_names[id]);
}

void uart_close(int id)
{
    unlink(uart.n[id].link);
    if (uart.n[id].sock_listen >= 0)
        unlink(uart.n[id].sock_path);
}

/* The USB serial adapter unplugged: both ends of the pty are closed, so the host's open port fails
 * (read: EIO, which pyserial reports as a disconnected device) and the /dev/pts entry goes once the
 * host lets go; a connection to the line's socket is closed too (its reader sees the end). Output not
 * yet taken, and all output until the re-plug, is dropped and counted. */
void uart_hangup(int id)
{
    struct uart_node *u = &uart.n[id];
    if (u->hung)
        return;
    u->hung = 1;
    u->hangups++;
    u->hangup_dropped += u->out_n;
    u->out_head = 0;
    u->out_n = 0;
    if (uart.pty_lock)
        uart.pty_lock(); /* the stamping thread reads the host side only while it is the node's */
    close(u->master);
    close(u->slave);
    u->master = u->slave = -1;
    if (u->sock_conn >= 0) { /* the adapter's other host side goes with it: the connection ends (EOF) */
        close(u->sock_conn);
        u->sock_conn = -1;
    }
    if (u->sock_listen >= 0) { /* and NODE.sock, as NODE.tty: nothing to connect to until the re-plug */
        close(u->sock_listen);
        u->sock_listen = -1;
        unlink(u->sock_path);
    }
    /* NODE.tty goes with the adapter, as /dev/ttyUSB0 does: left pointing at the closed /dev/pts/N, a host
     * retrying its open during the hang-up got that number once the kernel had given it to another pty (another
     * bench's, in a parallel test run), read that bench's bytes (its link came up short: 144 of 149 bytes) and
     * wrote into its node. Until the re-plug an open finds no such file. */
    unlink(u->link);
    if (uart.pty_unlock)
        uart.pty_unlock();
    logmsg("%s: pty %s hung up", node_names[id], u->pts);
}

/* Plugged in again: a fresh pty, NODE.tty re-pointed to it, and NODE.sock listening again; the byte
 * counts the lockstep handshake uses (in_read, out_written) start again at 0 on the new stream (its
 * generation says which stream they count). */
void uart_replug(int id)
{
    struct uart_node *u = &uart.n[id];
    if (!u->hung)
        return;
    if (uart.pty_lock)
        uart.pty_lock();
    uart_open_pty(id, uart.run_dir);
    if (u->sock_path[0])
        uart_open_socket(id);
    if (uart.pty_unlock)
        uart.pty_unlock(); /* (wakes the stamping thread: it polls the new master) */
    u->in_read = 0;
    u->out_written = 0;
    u->hung = 0;
    logmsg("%s: re-plugged on %s and %s (generation %" PRIu64 ")", node_names[id], u->pts, u->sock_path, u->pty_gen);
}
