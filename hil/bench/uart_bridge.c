/*
 * The UART bridge: the host's side of each node's serial line. The node's side is the node's own
 * (node.h: uart_*): an AVR's USART0 gets each host byte whole at the moment its stop bit ends, with
 * RXC at once and its character time corrected (node_avr.c, "USART0"); the 8051's receiver gets the
 * start bit at its moment and times the bits itself (node.rx_at_start). Host bytes are paced at --baud
 * (default 9600, 10 bit times per byte) in virtual time, one after the other. MCU output reaches the pty when its stop bit ends (UDR
 * write, or the end of the previous character, plus one character; paced, not before the wall clock
 * has reached that moment: main.c, pacing.c); output the host does not read
 * stays in a bounded per-node buffer (--out-buffer) whose overflow is counted.
 *
 * One-node mode can keep simavr's own timing instead (--uart-timing simavr: 11-bit characters, a
 * byte handed to the receiver at its cycle and RXC one such character later), which is what the
 * firmware tests were written against (see stimulus.c).
 *
 * The host's side is a pty (RUN_DIR/NODE.tty), which any program opens as a serial port, and a Unix
 * socket (RUN_DIR/NODE.sock, linesock.c: mmrig's own links, without the pty's kernel hop). One of them
 * holds the line at a time: a connection to the socket takes it from the pty until it closes (a second
 * connection meanwhile is refused, as a port another program holds); the pty's bytes wait in it
 * meanwhile. Every host stream (a pty, a connection) has a generation of its own, and the byte counts
 * in_read and out_written count on the one that holds the line.
 *
 * Faults (control channel, faults.c): each byte in either direction may be dropped, corrupted (one
 * bit), delayed or duplicated with a given probability, drawn from a seeded PRNG, so faults are
 * reproducible in unpaced mode; a cut line drops every byte until the cut ends; a garbage burst puts
 * random bytes on a line; a hang-up closes the node's pty (the host's port goes away) and later opens
 * a fresh one behind the same NODE.tty link.
 *
 * Clocks (crystal offsets, cosim.h). The node's side runs on its own crystal: its character time
 * comes from its UBRR in its own cycles, and a byte it sends is complete at its own cycle, stamped in
 * global time (node_to_global) for the output queue, the lockstep grants, pacing and --trace. The
 * host's side (the USB serial adapter) runs on global time: host bytes, their pacing at --baud, cuts,
 * faults' delays, injections and scripts are in global cycles, and a byte's stop bit is delivered at
 * the node's first cycle at or after that moment (global_to_node). Both ppm 0: the same cycles.
 */
#define _GNU_SOURCE
#include "uart_bridge.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "arduino.h"
#include "cosim.h"
#include "faulthold.h"
#include "linesock.h"
#include "pacing.h"
#include "trace.h"

/* both nodes' bridges, and their shared settings and fault PRNG */
struct uart_bridge uart = {.baud = 9600, .out_buffer = 1 << 20, .rng = 0x9E3779B97F4A7C15ull};

/* xorshift64*: the fault injector's PRNG (seeded, so faults are reproducible in unpaced mode) */
static double rng_unit(void)
{
    uart.rng ^= uart.rng >> 12;
    uart.rng ^= uart.rng << 25;
    uart.rng ^= uart.rng >> 27;
    return (double)((uart.rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

void uart_seed(uint64_t seed)
{
    uart.rng = seed * 0x9E3779B97F4A7C15ull + 1;
}


/* ---- the adapter's rate (the host's termios) ---------------------------------------------------- */

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
    struct node *n = cosim.nodes[id];
    return n->ops->uart_baud(n);
}

/* The two ends of the line run at rates a receiver cannot bridge (more than 4 %: 10 bits drift by
 * more than the half bit a UART samples within). Only with a pty: the stimulus is no adapter. */
static int baud_mismatch(int id, uint64_t host)
{
    struct uart_node *u = &uart.n[id];
    double nb, hb;
    if (!u->host_baud && !u->script_baud)
        return 0;
    nb = uart_node_baud(id);
    hb = (double)host;
    return fabs(hb - nb) > BAUD_MISMATCH * nb;
}

/* The line's time is kept scaled by its rate (cycle * baud): a byte at another rate rescales it to
 * that rate first, rounding up. */
static uint64_t rescale(uint64_t scaled, uint64_t from, uint64_t to)
{
    return (scaled + from - 1) / from * to;
}

static void line_to(struct uart_node *u, uint64_t baud)
{
    if (u->rx_line_baud && u->rx_line_baud != baud) {
        u->rx_line_free_scaled = rescale(u->rx_line_free_scaled, u->rx_line_baud, baud);
        u->rx_armed_start_scaled = rescale(u->rx_armed_start_scaled, u->rx_line_baud, baud);
        u->rx_prev_free_scaled = rescale(u->rx_prev_free_scaled, u->rx_line_baud, baud);
        u->rx_shadow_free_scaled = rescale(u->rx_shadow_free_scaled, u->rx_line_baud, baud);
        u->rx_prev_shadow_scaled = rescale(u->rx_prev_shadow_scaled, u->rx_line_baud, baud);
    }
    u->rx_line_baud = baud;
}

static uint32_t adapter_baud(const struct uart_node *u)
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

/* ---- MCU -> host ------------------------------------------------------------------------- */

static int out_push(struct uart_node *u, uint64_t at, uint8_t b)
{
    if (u->out_n == u->out_cap) {
        u->out_dropped++;
        return 0;
    }
    u->outq[(u->out_head + u->out_n) % u->out_cap] = (struct out_byte){at, b};
    u->out_n++;
    return 1;
}

/* A byte the node sent, complete at the host when its stop bit ends (the node's cycle `end`; chr: a
 * character in the node's cycles): node.h, uart_attach */
static void out_done(void *ctx, uint64_t end, uint64_t chr, uint8_t b)
{
    struct node *n = ctx;
    struct uart_node *u = &uart.n[n->id];
    struct fault *f = &u->fault[1];
    uint64_t at = node_to_global(n->id, end); /* from here on, global time */
    u->out_bytes++;
    uart_poll_host_baud(n->id, 0);
    if (u->host_baud && baud_mismatch(n->id, u->host_baud)) {   /* (a script has no adapter reading) */
        u->baud_mismatch_dropped[1]++; /* the adapter at another rate: framing errors, not this byte */
        return;
    }
    if (u->hung) {
        u->hangup_dropped++; /* no pty: the adapter is unplugged */
        return;
    }
    if (at < u->uart_cut_until) {
        u->cut_dropped[1]++;
        return;
    }
    if (f->drop > 0 && rng_unit() < f->drop) {
        u->f_dropped[1]++;
        return;
    }
    if (f->corrupt > 0 && rng_unit() < f->corrupt) {
        b ^= (uint8_t)(1u << (int)(rng_unit() * 8));
        u->f_corrupted[1]++;
    }
    if (f->delay > 0 && rng_unit() < f->delay) {
        at += f->delay_cycles;
        u->f_delayed[1]++;
    }
    if (u->out_n) { /* keep the byte order: a delayed byte holds back the ones after it */
        struct out_byte *last = &u->outq[(u->out_head + u->out_n - 1) % u->out_cap];
        if (at < last->at)
            at = last->at;
    }
    if (out_push(u, at, b) && uart.on_out_byte)
        uart.on_out_byte(b, at);
    TRACE("O %" PRIu64 " %s %02x\n", at, n->name, b);
    if (f->dup > 0 && rng_unit() < f->dup) {
        /* the line repeats the byte: it follows, one character later */
        uint64_t chr_g = node_to_global(n->id, end + chr) - node_to_global(n->id, end);
        u->f_duplicated[1]++;
        if (out_push(u, at + chr_g, b) && uart.on_out_byte)
            uart.on_out_byte(b, at + chr_g);
        TRACE("O %" PRIu64 " %s %02x\n", at + chr_g, n->name, b);
    }
}

/* Writes the node's output that is complete by `now` to the host side that holds the line, as far as it
 * takes it (a socket: one packet a write). Paced,
 * the caller passes no later a `now` than the wall clock has reached (main.c), and each byte's
 * earliness or lateness against its wall moment is recorded (the time taken just before write(), so
 * a byte is never counted later than it was). */
void uart_flush_out(int id, uint64_t now)
{
    struct uart_node *u = &uart.n[id];
    uint8_t buf[512];
    int fd = uart_host_fd(id);
    if (fd < 0)
        return; /* hung up */
    while (u->out_n) {
        size_t k = 0, i;
        ssize_t w;
        uint64_t t = 0;
        while (k < sizeof buf && k < u->out_n) {
            struct out_byte *o = &u->outq[(u->out_head + k) % u->out_cap];
            if (o->at > now)
                break;
            buf[k++] = o->b;
        }
        if (!k)
            return;
        if (pacing.paced)
            t = mono_ns();
        w = u->sock_conn >= 0 ? linesock_send(fd, buf, k) : write(fd, buf, k);
        if (w <= 0)
            return; /* full (host not reading; a closed socket: until the line is back on the pty): keep the
                     * bytes, bounded by out_cap */
        for (i = 0; i < (size_t)w; i++) {
            if (pacing.paced)
                pacing_record_out(id, u->outq[u->out_head].at, t);
            u->out_head = (u->out_head + 1) % u->out_cap;
            u->out_n--;
        }
        u->out_written += (uint64_t)w;
        if ((size_t)w < k)
            return;
    }
}

/* The cycle the node's oldest unwritten byte was complete (NEVER: none). */
uint64_t uart_next_out(int id)
{
    struct uart_node *u = &uart.n[id];
    return u->out_n ? u->outq[u->out_head].at : NEVER;
}

/* ---- host -> MCU ------------------------------------------------------------------------- */

static void inq_grow(struct uart_node *u)
{
    if (u->inq_n == u->inq_cap) {
        size_t i, cap = u->inq_cap ? u->inq_cap * 2 : 4096;
        struct in_byte *q = malloc(cap * sizeof *q);
        if (!q)
            die("out of memory");
        for (i = 0; i < u->inq_n; i++)
            q[i] = u->inq[(u->inq_head + i) % u->inq_cap];
        free(u->inq);
        u->inq = q;
        u->inq_head = 0;
        u->inq_cap = cap;
    }
}

/* `off`: 1 + the byte's offset in the host's stream of this pty, 0 for a byte the host did not write */
static void inq_push(struct uart_node *u, uint64_t at, uint8_t b, uint64_t off)
{
    inq_grow(u);
    u->inq[(u->inq_head + u->inq_n) % u->inq_cap] = (struct in_byte){at, b, adapter_baud(u), off};
    u->inq_n++;
}

/* a byte that goes on the line next (a duplicate) */
static void inq_push_front(struct uart_node *u, uint64_t at, uint8_t b, uint32_t baud)
{
    inq_grow(u);
    u->inq_head = (u->inq_head + u->inq_cap - 1) % u->inq_cap;
    u->inq[u->inq_head] = (struct in_byte){at, b, baud, 0};
    u->inq_n++;
}

static uint64_t rx_deliver(struct node *n, uint64_t when, void *ctx);

/* Schedules the next byte on the host line: its stop bit ends one character (10 bit times at the
 * adapter's rate, uart_line_baud: --baud until the host sets another) after it started. An injection's bytes go first (the first at its start cycle), with no
 * faults; host bytes start when they reached the bench or when the previous one ended, unless held
 * for an injection. The line is timed in global cycles; the byte enters at the node's first cycle at
 * or after its stop bit's end. */
void uart_arm(int id)
{
    struct uart_node *u = &uart.n[id];
    struct node *n = cosim.nodes[id];
    struct in_byte *ib = NULL;
    uint64_t start_scaled, end_scaled, at, shadow_start, shadow_end;
    uint64_t baud;

    if (u->rx_armed)
        return;
    if (u->inj_next < u->inj_n) {
        baud = uart_line_baud(id); /* an injection: at the adapter's rate now */
        line_to(u, baud);
        start_scaled = u->inj_next ? 0 : u->inj_start * baud;
        if (start_scaled < u->rx_line_free_scaled)
            start_scaled = u->rx_line_free_scaled;
        end_scaled = start_scaled + 10 * F_CPU;
        shadow_start = u->inj_next ? 0 : u->inj_start * baud;
        u->rx_armed_inj = 1;
    } else {
        if (u->hold || !u->inq_n)
            return;
        ib = &u->inq[u->inq_head];
        baud = ib->baud;           /* the adapter's rate when the byte reached it */
        line_to(u, baud);
        start_scaled = ib->at * baud;
        if (start_scaled < u->rx_line_free_scaled)
            start_scaled = u->rx_line_free_scaled;
        end_scaled = start_scaled + 10 * F_CPU;
        if (u->fault[0].delay > 0 && rng_unit() < u->fault[0].delay) {
            end_scaled += u->fault[0].delay_cycles * baud;
            u->f_delayed[0]++;
        }
        u->rx_armed_start_scaled = start_scaled;
        u->rx_prev_free_scaled = u->rx_line_free_scaled;
        u->rx_prev_shadow_scaled = u->rx_shadow_free_scaled;
        shadow_start = ib->at * baud;
    }
    /* the same byte on the line no injected delay ever held: it ends `end_scaled - shadow_end` sooner */
    if (shadow_start < u->rx_shadow_free_scaled)
        shadow_start = u->rx_shadow_free_scaled;
    shadow_end = shadow_start + 10 * F_CPU;
    if (shadow_end > end_scaled)
        shadow_end = end_scaled;
    u->rx_shadow_free_scaled = shadow_end;
    if (ib && ib->off && end_scaled > shadow_end)
        faulthold_note(id, uart_generation(id), ib->off - 1, (end_scaled - shadow_end) / baud);
    u->rx_line_free_scaled = end_scaled;
    /* the moment the node takes the byte: its start bit (a receiver that times the bits itself) or the
     * end of its stop bit; the node's first cycle at or after it (node.h: timer) */
    if (n->rx_at_start)
        at = (end_scaled - 10 * F_CPU + baud - 1) / baud;
    else
        at = (end_scaled + baud - 1) / baud;
    u->rx_armed = 1;
    n->ops->timer(n, global_to_node(id, at), rx_deliver, u);
}

/* the node's cycle a byte the node took at `cycle` ends its stop bit */
static uint64_t stop_bit_end(struct node *n, uint64_t cycle)
{
    return n->rx_at_start ? cycle + n->ops->uart_char(n) : cycle;
}

/* A byte whose stop bit ends now enters the MCU; `at` is the node's cycle the trace and counters give
 * it (the clock now, or the cycle of the timer that delivers it, which the clock may have passed), in
 * global time there. */
void uart_deliver_now(int id, uint8_t b, uint64_t at)
{
    struct node *n = cosim.nodes[id];
    struct uart_node *u = &uart.n[id];
    if (!n->ops->uart_rx(n, b)) {
        u->in_ignored++; /* receiver off: the byte is lost, as on the chip */
        return;
    }
    /* a receiver that times the bits itself was handed the start bit: traced at its stop bit's end (a
     * byte it lost with its receiver off: uart_rx_lost) */
    at = stop_bit_end(n, at);
    u->in_delivered++;
    at = node_to_global(id, at);
    if (!u->first_in_cycle)
        u->first_in_cycle = at;
    u->last_in_cycle = at;
    TRACE("I %" PRIu64 " %s %02x\n", at, n->name, b);
}

static void rx_take(struct node *n, uint64_t cycle);

/* the armed byte's moment: the node's clock (which may have passed `when` within an instruction) */
static uint64_t rx_deliver(struct node *n, uint64_t when, void *ctx)
{
    (void)when;
    (void)ctx;
    rx_take(n, n->ops->cycle(n));
    return 0;
}

/* The armed byte goes into the node at its cycle `cycle` (its stop bit ends, or its start bit begins:
 * node.rx_at_start) */
static void rx_take(struct node *n, uint64_t cycle)
{
    struct uart_node *u = &uart.n[n->id];
    uint8_t b;
    uint32_t bb; /* the rate it went on the line at */
    struct fault *f = &u->fault[0];
    int deliver = 1;

    u->rx_armed = 0;
    if (u->rx_armed_inj) {
        /* an injected byte: no faults or cuts (a calibration frame must arrive as sent) */
        u->rx_armed_inj = 0;
        uart_deliver_now(n->id, u->inj_data[u->inj_next++], cycle);
        if (u->inj_next == u->inj_n) {
            u->hold = 0;
            if (u->inj_done)
                u->inj_done(n->id, node_to_global(n->id, stop_bit_end(n, cycle)));
        }
        uart_arm(n->id);
        return;
    }
    if (!u->inq_n)
        return;
    b = u->inq[u->inq_head].b;
    bb = u->inq[u->inq_head].baud;
    u->inq_head = (u->inq_head + 1) % u->inq_cap;
    u->inq_n--;
    if (u->rx_dup_head) {
        /* the repeat of the byte before: on the line as it was, not faulted or repeated again */
        u->rx_dup_head = 0;
        uart_deliver_now(n->id, b, cycle);
        uart_arm(n->id);
        return;
    }
    if (node_to_global(n->id, cycle) < u->uart_cut_until) {
        u->cut_dropped[0]++;
        deliver = 0;
    } else if (baud_mismatch(n->id, bb) && arduino.on && (double)bb < uart_node_baud(n->id)) {
        /* --arduino: the Mega's bootloader listens at 115200 while the host is at the application's
         * rate (9600). A slower host byte's start bit (104 us) outlasts the node's whole frame (87 us):
         * its receiver reads 0x00 with a framing error and RXC is set all the same, and a byte is what
         * keeps the bootloader waiting (what failed the handshakes on real Megas). One 0x00 per host byte (the bits after the start
         * bit may make more frames on the board: at least this one). */
        u->baud_mismatch_garbled++;
        b = 0x00;
    } else if (baud_mismatch(n->id, bb)) {
        u->baud_mismatch_dropped[0]++; /* the node's UART at another rate: framing errors */
        deliver = 0;
    } else if (f->drop > 0 && rng_unit() < f->drop) {
        u->f_dropped[0]++;
        deliver = 0;
    } else if (f->corrupt > 0 && rng_unit() < f->corrupt) {
        b ^= (uint8_t)(1u << (int)(rng_unit() * 8));
        u->f_corrupted[0]++;
    }
    if (deliver) {
        uart_deliver_now(n->id, b, cycle);
        if (f->dup > 0 && rng_unit() < f->dup) {
            u->f_duplicated[0]++;
            inq_push_front(u, node_to_global(n->id, cycle), b, bb); /* on the line next, right after this one */
            u->rx_dup_head = 1;
        }
    }
    uart_arm(n->id);
}

/* The host set its port to `baud` (a socket's packet says so; 0: not known). As a pty's termios poll:
 * only where the adapter's rate is one termios can say (host_baud 0: --baud stays). */
static void host_rate(struct uart_node *u, uint64_t baud)
{
    if (u->host_baud && baud && baud != u->host_baud) {
        u->host_baud = baud;
        u->host_baud_changes++;
    }
}

/* What the host side holding the line has now, at most `want` bytes from a pty (a socket: one whole
 * packet, up to LINESOCK_MAX); the pty's rate is read right after (the host wrote the bytes at the rate
 * its port was set to then: read now, not up to a millisecond later, or unpaced they would be judged at
 * the old one), a socket's comes with its packet. 0: nothing now (or the host closed its connection: the
 * line is back on the pty). */
static size_t host_read(int id, uint8_t *buf, size_t want)
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
        host_rate(u, baud);
        if (k > 0)
            return (size_t)k;
    }
}

void uart_read_host(int id, uint64_t now)
{
    struct uart_node *u = &uart.n[id];
    uint8_t buf[LINESOCK_MAX];
    arduino_service(now); /* --arduino: an open before these bytes resets the node first */
    uart_poll_host_baud(id, 0);
    while (uart_host_fd(id) >= 0 && u->inq_n < u->inq_limit) {
        size_t want = u->inq_limit - u->inq_n, k, i;
        if (want > 512)
            want = 512;
        k = host_read(id, buf, want);
        if (!k)
            break;
        for (i = 0; i < k; i++)
            inq_push(u, now, buf[i], u->in_read + (uint64_t)i + 1);
        u->in_read += (uint64_t)k;
    }
    uart_arm(id);
}

/* Lockstep: reads until `total` bytes have been read from the host side since its stream began, no more
 * (the bytes the host announced; a socket's packets are the host's writes, which the count adds up),
 * waiting up to timeout_ms for them to arrive. */
int uart_read_host_exactly(int id, uint64_t total, uint64_t now, int timeout_ms)
{
    struct uart_node *u = &uart.n[id];
    uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * 1000000ull;
    uint8_t buf[LINESOCK_MAX];
    arduino_service(now); /* --arduino: an open before these bytes resets the node first */
    if (uart_host_fd(id) < 0) {
        uart_arm(id);
        return 0; /* hung up: no pty, nothing the host can have written (counts restart on the next) */
    }
    while (u->in_read < total) {
        uint64_t want = total - u->in_read, t;
        size_t k, i;
        int fd = uart_host_fd(id);
        if (want > 512)
            want = 512;
        k = host_read(id, buf, (size_t)want);
        if (k) {
            for (i = 0; i < k; i++)
                inq_push(u, now, buf[i], u->in_read + (uint64_t)i + 1);
            u->in_read += (uint64_t)k;
            continue;
        }
        if (uart_host_fd(id) != fd)
            break; /* the host closed its connection: what it announced went with it */
        t = mono_ns();
        if (t >= deadline)
            break;
        {
            struct pollfd p = {fd, POLLIN, 0};
            poll(&p, 1, (int)((deadline - t) / 1000000ull) + 1);
        }
    }
    uart_arm(id);
    return u->in_read < total ? -1 : 0;
}

void uart_take_host_bytes(int id, uint64_t at, const uint8_t *b, size_t n, uint64_t baud)
{
    struct uart_node *u = &uart.n[id];
    size_t i;
    host_rate(u, baud); /* the rate the host had set when it wrote them */
    for (i = 0; i < n; i++)
        inq_push(u, at, b[i], u->in_read + i + 1);
    u->in_read += n;
}

/* The host's bytes still queued while the line is behind where it would be with no injected delay:
 * each is held back by at least that much (faulthold.c reports them with what the line delivered). */
int uart_queued_held(int id, uint64_t *gen, uint64_t *first, uint64_t *n, uint64_t *held_cycles)
{
    struct uart_node *u = &uart.n[id];
    size_t i;
    uint64_t behind = u->rx_line_free_scaled > u->rx_shadow_free_scaled
                          ? (u->rx_line_free_scaled - u->rx_shadow_free_scaled) / (u->rx_line_baud ? u->rx_line_baud : 1)
                          : 0;
    *n = 0;
    if (!behind)
        return 0;
    for (i = 0; i < u->inq_n; i++) {
        const struct in_byte *ib = &u->inq[(u->inq_head + i) % u->inq_cap];
        if (!ib->off)
            continue;
        if (!*n)
            *first = ib->off - 1;
        *n = ib->off - *first; /* the host's bytes are queued in stream order */
    }
    *gen = uart_generation(id);
    *held_cycles = behind;
    return *n > 0;
}

void uart_push_input(int id, uint64_t at, uint8_t b)
{
    inq_push(&uart.n[id], at, b, 0);
}

void uart_hold(int id)
{
    uart.n[id].hold = 1;
}

uint64_t uart_inject(int id, const uint8_t *b, size_t n, uint64_t start, void (*done)(int id, uint64_t at))
{
    struct uart_node *u = &uart.n[id];
    uint64_t baud = uart_line_baud(id);
    uint64_t begin;
    line_to(u, baud);
    if (u->rx_armed && !u->rx_armed_inj && u->rx_armed_start_scaled >= start * baud) {
        /* a host byte scheduled but not begun by the injected start bit (armed before the hold):
         * it goes after the injection; it is still its queue's head (a byte leaves the queue when
         * delivered) */
        cosim.nodes[id]->ops->timer_cancel(cosim.nodes[id], rx_deliver, u);
        u->rx_armed = 0;
        u->rx_line_free_scaled = u->rx_prev_free_scaled;
        u->rx_shadow_free_scaled = u->rx_prev_shadow_scaled;
    }
    memcpy(u->inj_data, b, n);
    u->inj_done = done;
    u->inj_n = n;
    u->inj_next = 0;
    u->inj_start = start;
    begin = start * baud;
    if (begin < u->rx_line_free_scaled)
        begin = u->rx_line_free_scaled; /* a host byte on the line: after its stop bit */
    uart_arm(id);
    return (begin + baud - 1) / baud;
}

void uart_reset(int id)
{
    /* an AVR's reset dropped the byte's timer, the 8051's kept it: either way it is armed again below */
    cosim.nodes[id]->ops->timer_cancel(cosim.nodes[id], rx_deliver, &uart.n[id]);
    uart.n[id].rx_armed = 0;
    uart.n[id].rx_armed_inj = 0; /* an injected byte on the line goes again, whole */
    uart_arm(id);
}

/* the node's "tty", "pts" and "uart" members of its status object */
void uart_status_json(int id, struct sbuf *b)
{
    struct node *n = cosim.nodes[id];
    struct uart_node *u = &uart.n[id];
    uint64_t in_ok = u->in_delivered, in_ignored = u->in_ignored, lost;

    /* host bytes the core lost itself (ucsim: the start bit came with the receiver off), though the
     * bridge counted them delivered when it put them on the line */
    lost = n->ops->uart_rx_lost(n);
    in_ignored += lost;
    in_ok = in_ok > lost ? in_ok - lost : 0;
    sb_printf(b, "\"tty\":");
    sb_json_str(b, u->link);
    sb_printf(b, ",\"pts\":");
    sb_json_str(b, u->pts);
    sb_printf(b, ",\"socket\":");
    sb_json_str(b, u->sock_path);
    sb_printf(b, ",\"uart\":{\"in\":%" PRIu64 ",\"in_queued\":%zu,\"in_read\":%" PRIu64
                 ",\"in_ignored\":%" PRIu64 ",\"out\":%" PRIu64 ",\"out_written\":%" PRIu64 ",\"out_buffered\":%zu,"
                 "\"out_dropped\":%" PRIu64 ",\"first_in_cycle\":%" PRIu64 ",\"last_in_cycle\":%" PRIu64
                 ",\"fault_dropped\":[%" PRIu64 ",%" PRIu64 "],\"fault_corrupted\":[%" PRIu64 ",%" PRIu64
                 "],\"fault_delayed\":[%" PRIu64 ",%" PRIu64 "],\"cut_dropped\":[%" PRIu64 ",%" PRIu64 "],"
                 "\"fault_duplicated\":[%" PRIu64 ",%" PRIu64 "],\"garbage_bytes\":[%" PRIu64 ",%" PRIu64 "],"
                 "\"hangups\":%" PRIu64 ",\"hangup_dropped\":%" PRIu64 ",\"hung_up\":%s,\"generation\":%" PRIu64
                 ",\"host_side\":\"%s\",\"socket_connections\":%" PRIu64 ",\"socket_refused\":%" PRIu64
                 ",\"host_baud\":%" PRIu64 ",\"node_baud\":%.0f,\"host_baud_changes\":%" PRIu64
                 ",\"baud_mismatch_dropped\":[%" PRIu64 ",%" PRIu64 "]}",
              in_ok, u->inq_n, u->in_read, in_ignored, u->out_bytes, u->out_written, u->out_n,
              u->out_dropped, u->first_in_cycle, u->last_in_cycle, u->f_dropped[0], u->f_dropped[1],
              u->f_corrupted[0], u->f_corrupted[1], u->f_delayed[0], u->f_delayed[1], u->cut_dropped[0],
              u->cut_dropped[1], u->f_duplicated[0], u->f_duplicated[1], u->garbage_bytes[0], u->garbage_bytes[1],
              u->hangups, u->hangup_dropped, u->hung ? "true" : "false", uart_generation(id),
              u->hung ? "none" : u->sock_conn >= 0 ? "socket" : "pty", u->sock_conns, u->sock_refused,
              uart_line_baud(id), uart_node_baud(id), u->host_baud_changes, u->baud_mismatch_dropped[0],
              u->baud_mismatch_dropped[1]);
}

/* ---- set-up ------------------------------------------------------------------------------ */

void uart_attach(int id)
{
    struct node *n = cosim.nodes[id];
    struct uart_node *u = &uart.n[id];

    n->ops->uart_attach(n, out_done, n, uart.simavr_timing);
    u->out_cap = uart.out_buffer ? uart.out_buffer : 1;
    u->outq = calloc(u->out_cap, sizeof *u->outq);
    if (!u->outq)
        die("out of memory");
    u->inq_limit = 65536;
    u->sock_listen = u->sock_conn = -1;
}

void uart_open_pty(int id, const char *run_dir)
{
    struct uart_node *u = &uart.n[id];
    struct termios tio;
    char *name;
    u->master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (u->master < 0 || grantpt(u->master) || unlockpt(u->master))
        die("cannot open a pseudo-terminal: %s", strerror(errno));
    name = ptsname(u->master);
    if (!name)
        die("ptsname: %s", strerror(errno));
    snprintf(u->pts, sizeof u->pts, "%s", name);
    /* Keep one slave descriptor open: the pty then survives the host closing and reopening it, and
     * the line discipline is raw (no echo of MCU output back into the MCU, no CR/LF mapping). */
    u->slave = open(u->pts, O_RDWR | O_NOCTTY);
    if (u->slave < 0)
        die("cannot open %s: %s", u->pts, strerror(errno));
    if (tcgetattr(u->slave, &tio) == 0) {
        speed_t sp;
        cfmakeraw(&tio);
        /* the adapter's power-on rate: --baud (a host that never sets its port sees it) */
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

/* ---- faults: garbage, hang-up ------------------------------------------------------------- */

/* COUNT uniform random bytes (so 0x00, the frame delimiter, is 1 in 256 of them) onto the line, one
 * character (10 bit times at --baud) each. In: after the host bytes already queued, through the
 * receive path like any host byte (faults and cuts apply; not counted as read from the pty). Out:
 * towards the host from now (or after the output already queued), as MCU bytes go. */
void uart_garbage(int id, int dir, uint64_t count, uint64_t now)
{
    struct uart_node *u = &uart.n[id];
    uint64_t baud = uart_line_baud(id);
    uint64_t chr = (10 * F_CPU + baud - 1) / baud, at = now, k;
    if (dir == 0) {
        for (k = 0; k < count; k++)
            inq_push(u, now, (uint8_t)(rng_unit() * 256.0), 0);
        u->garbage_bytes[0] += count;
        uart_arm(id);
        return;
    }
    if (u->out_n) {
        struct out_byte *last = &u->outq[(u->out_head + u->out_n - 1) % u->out_cap];
        if (at < last->at)
            at = last->at;
    }
    for (k = 0; k < count; k++) {
        uint8_t b = (uint8_t)(rng_unit() * 256.0);
        at += chr;
        u->garbage_bytes[1]++;
        if (u->hung) {
            u->hangup_dropped++;
        } else if (at < u->uart_cut_until) {
            u->cut_dropped[1]++;
        } else if (out_push(u, at, b)) {
            if (uart.on_out_byte)
                uart.on_out_byte(b, at);
            TRACE("O %" PRIu64 " %s %02x\n", at, node_names[id], b);
        }
    }
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

/* Script lines: "<seconds> <node> <hex bytes...>"   e.g. "0.25 executor 03 22 02 ..."
 * The bytes reach the bench at that virtual time and are paced like host bytes. */
void uart_load_script(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    if (!f)
        die("cannot open script %s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end, name[32];
        double t;
        int k, id;
        uint64_t at;
        unsigned long baud;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        if (*p == '@') { /* @CYCLE: a global cycle, exact (a replay's record: mmanalysis/inputrecord.py) */
            unsigned long long c;
            if (sscanf(p + 1, "%llu %31s %n", &c, name, &k) != 2)
                die("bad script line: %s", line);
            at = (uint64_t)c;
            p += 1 + k;
        } else {
            if (sscanf(p, "%lf %31s %n", &t, name, &k) != 2)
                die("bad script line: %s", line);
            p += k;
            at = (uint64_t)llround(t * (double)F_CPU);
        }
        id = parse_node(name);
        if (id < 0)
            die("bad node in script line: %s", line);
        baud = 0;
        if (!strncmp(p, "baud=", 5)) { /* the rate the host had set when it wrote them: theirs on the line */
            baud = strtoul(p + 5, &end, 10);
            if (end == p + 5)
                die("bad baud in script line: %s", line);
            uart.n[id].script_baud = 1;
            p = end;
        }
        for (;;) {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            p = end;
            inq_push(&uart.n[id], at, (uint8_t)v, 0);
            if (baud) /* (inq_push took the adapter's rate: the line's own, as the host had set it) */
                uart.n[id].inq[(uart.n[id].inq_head + uart.n[id].inq_n - 1) % uart.n[id].inq_cap].baud =
                    (uint32_t)baud;
        }
    }
    fclose(f);
}
