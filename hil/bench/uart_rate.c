/*
 * The USB-serial adapter's rate: what the host set on its end of the line. A pty says it in its termios
 * (tcsetattr on the slave; Linux's tcgetattr on the master returns the pair's), which is polled (at most
 * once a millisecond of wall time paced: one ioctl, not one per byte); a socket says it in its packets.
 * A fresh pty starts at --baud, the adapter's power-on rate. Host bytes are paced at the rate the adapter
 * had when they reached it (uart_line.c); while it and the node's USART0 rate differ by more than
 * BAUD_MISMATCH, bytes in either direction are not delivered (a real receiver sees framing errors).
 * termios knows only its table of rates: a --baud outside it stays the adapter's rate (no polling, no
 * mismatch).
 */
#include <math.h>
#include <termios.h>

#include "cosim.h"
#include "uart_node.h"

static const struct {
    speed_t code;
    uint64_t baud;
} speeds[] = {
    {B1200, 1200},     {B2400, 2400},     {B4800, 4800},     {B9600, 9600},     {B19200, 19200},
    {B38400, 38400},   {B57600, 57600},   {B115200, 115200}, {B230400, 230400}, {B460800, 460800},
    {B500000, 500000}, {B576000, 576000}, {B921600, 921600}, {B1000000, 1000000}, {B2000000, 2000000},
};

static uint64_t speed_baud(speed_t code)
{
    size_t i;
    for (i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
        if (speeds[i].code == code)
            return speeds[i].baud;
    return 0; /* a rate the table does not know (B0: hang up; B50..B600): keep the last one */
}

static int baud_speed(uint64_t baud, speed_t *code)
{
    size_t i;
    for (i = 0; i < sizeof speeds / sizeof speeds[0]; i++)
        if (speeds[i].baud == baud) {
            *code = speeds[i].code;
            return 1;
        }
    return 0;
}

uint64_t uart_line_baud(int id)
{
    uint64_t b = uart.n[id].host_baud;
    return b ? b : uart.baud;
}

double uart_node_baud(int id)
{
    struct node *n = cosim_node(id);
    return n->ops->uart_baud(n);
}

/* The two ends of the line run at rates a receiver cannot bridge (more than 4 %: 10 bits drift by
 * more than the half bit a UART samples within). Only with a pty: the stimulus is no adapter. */
int uart_rate_mismatch(int id, uint64_t host)
{
    struct uart_node *u = &uart.n[id];
    double nb, hb;
    if (!u->host_baud && !u->script_baud)
        return 0;
    nb = uart_node_baud(id);
    hb = (double)host;
    return fabs(hb - nb) > BAUD_MISMATCH * nb;
}

/* the rate a host byte reaching the adapter now goes on the line at */
uint32_t uart_rate_adapter(const struct uart_node *u)
{
    return (uint32_t)(u->host_baud ? u->host_baud : uart.baud);
}

uint64_t uart_pty_baud(int fd)
{
    struct termios tio;
    return tcgetattr(fd, &tio) ? 0 : speed_baud(cfgetospeed(&tio));
}

void uart_poll_host_baud(int id, int force)
{
    struct uart_node *u = &uart.n[id];
    struct termios tio;
    uint64_t t, b;
    if (u->master < 0 || !u->host_baud || u->sock_conn >= 0)
        return; /* (a connection says its rate in its packets) */
    t = mono_ns();
    if (!force && t - u->termios_polled_ns < 1000000ull)
        return;
    u->termios_polled_ns = t;
    if (tcgetattr(u->master, &tio))
        return;
    b = speed_baud(cfgetospeed(&tio));
    if (!b || b == u->host_baud)
        return;
    u->host_baud = b;
    u->host_baud_changes++;
}

/* The host set its port to `baud` (a socket's packet says so; 0: not known). As a pty's termios poll:
 * only where the adapter's rate is one termios can say (host_baud 0: --baud stays). */
void uart_rate_from_host(struct uart_node *u, uint64_t baud)
{
    if (u->host_baud && baud && baud != u->host_baud) {
        u->host_baud = baud;
        u->host_baud_changes++;
    }
}

/* A fresh pty (uart_open_pty, a re-plug): its line discipline raw (no echo of MCU output back into the
 * MCU, no CR/LF mapping) and its rate the adapter's power-on one, --baud, which a host that never sets its
 * port sees */
void uart_rate_power_on(struct uart_node *u)
{
    struct termios tio;
    if (tcgetattr(u->slave, &tio) == 0) {
        speed_t sp;
        cfmakeraw(&tio);
        if (baud_speed(uart.baud, &sp)) {
            cfsetispeed(&tio, sp);
            cfsetospeed(&tio, sp);
        }
        tcsetattr(u->slave, TCSANOW, &tio);
    }
    {
        speed_t sp;
        /* a --baud termios cannot say: the adapter stays at it (no rate polling, no mismatch) */
        uint64_t b = baud_speed(uart.baud, &sp) ? uart.baud : 0;
        u->host_baud = b; /* (a re-plug: the new adapter's power-on rate) */
        u->termios_polled_ns = 0;
    }
}
