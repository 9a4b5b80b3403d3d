/*
 * The UART bridge's line model: the host's side of each node's serial line, as the USB-serial adapter
 * puts bytes on it and takes them off. The node's side is the node's own (node.h: uart_*): an AVR's
 * USART0 gets each host byte whole at the moment its stop bit ends, with RXC at once and its character
 * time corrected (node_avr.c, "USART0"); the 8051's receiver gets the start bit at its moment and times
 * the bits itself (node.rx_at_start). Host bytes are paced at the adapter's rate (uart_rate.c; --baud,
 * default 9600, until the host sets another: 10 bit times per byte) in virtual time, one after the other.
 * MCU output reaches the host's side when its stop bit ends (UDR write, or the end of the previous
 * character, plus one character; paced, not before the wall clock has reached that moment: main.c,
 * pacing.c); output the host does not read stays in a bounded per-node buffer (--out-buffer) whose
 * overflow is counted.
 *
 * One-node mode can keep simavr's own timing instead (--uart-timing simavr: 11-bit characters, a
 * byte handed to the receiver at its cycle and RXC one such character later), which is what the
 * firmware tests were written against (see stimulus.c).
 *
 * The rest of the bridge, one concept a file (uart_bridge.h lists them): the host's side, its pty and
 * socket (uart_host.c), which this file reads the host's bytes from and writes the node's to; the
 * adapter's rate (uart_rate.c) and its timing (uart_usb.c, --line-model: when a node's byte reaches the host's
 * side and a host's byte the line); the faults each byte may meet on the way (uart_faults.c) and the line as
 * it would be without their delays (uart_shadow.c); garbage bursts (uart_garbage.c) and --script
 * (uart_script.c), which put bytes on the line through this file. Injections (inject.c) put bytes on the
 * line here, ahead of the host's.
 *
 * Clocks (crystal offsets, cosim.h). The node's side runs on its own crystal: its character time
 * comes from its UBRR in its own cycles, and a byte it sends is complete at its own cycle, stamped in
 * global time (node_to_global) for the output queue, the lockstep grants, pacing and --trace. The
 * host's side (the USB serial adapter) runs on global time: host bytes, their pacing at the adapter's
 * rate, cuts, faults' delays, injections and scripts are in global cycles, and a byte's stop bit is
 * delivered at the node's first cycle at or after that moment (global_to_node). Both ppm 0: the same
 * cycles.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arduino.h"
#include "cosim.h"
#include "linesock.h"
#include "pacing.h"
#include "trace.h"
#include "uart_node.h"

/* both nodes' bridges, and their shared settings and fault PRNG */
struct uart_bridge uart = {.baud = 9600, .out_buffer = 1 << 20, .rng = 0x9E3779B97F4A7C15ull};

void uart_set_baud(uint64_t baud)
{
    uart.baud = baud;
}

void uart_set_out_buffer(size_t bytes)
{
    uart.out_buffer = bytes;
}

void uart_set_simavr_timing(int on)
{
    uart.simavr_timing = on;
}

uint64_t uart_default_baud(void)
{
    return uart.baud;
}

int uart_simavr_timing(void)
{
    return uart.simavr_timing;
}

int uart_set_line_model(const char *spec, char *err, unsigned errlen)
{
    return usb_parse(spec, &uart.usb, err, errlen);
}

const char *uart_line_model(void)
{
    return usb_kind_name(uart.usb.kind);
}

void uart_set_pty_lock(void (*lock)(void), void (*unlock)(void))
{
    uart.pty_lock = lock;
    uart.pty_unlock = unlock;
}

void uart_on_out_byte(void (*fn)(uint8_t b, uint64_t at))
{
    uart.on_out_byte = fn;
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

/* ---- MCU -> host ------------------------------------------------------------------------- */

int uart_outq_push(struct uart_node *u, uint64_t at, uint8_t b)
{
    if (u->out_n == u->out_cap) {
        u->out_dropped++;
        return 0;
    }
    u->outq[(u->out_head + u->out_n) % u->out_cap] = (struct out_byte){at, b};
    u->out_n++;
    return 1;
}

uint64_t uart_outq_after_last(const struct uart_node *u, uint64_t at)
{
    if (u->out_n) {
        const struct out_byte *last = &u->outq[(u->out_head + u->out_n - 1) % u->out_cap];
        if (at < last->at)
            at = last->at;
    }
    return at;
}

/* A full packet (uart_usb.c) sent the bytes that waited with it earlier than their `from`: the queue's last
 * bytes still at `from` go at `to` (the ones before them went in earlier packets, at earlier moments). A
 * delimiter among them ends a lockstep frame grant earlier (the hook). */
static void outq_move_tail(struct uart_node *u, uint64_t from, uint64_t to)
{
    size_t k = u->out_n;
    while (k--) {
        struct out_byte *o = &u->outq[(u->out_head + k) % u->out_cap];
        if (o->at != from)
            break;
        o->at = to;
        u->usb_moved++;
        if (uart.on_out_byte)
            uart.on_out_byte(o->b, to);
    }
}

uint64_t uart_out_push(struct uart_node *u, const char *name, uint64_t at, uint8_t b)
{
    uint64_t host, moved_from;
    if (uart.usb.kind == USB_IDEAL) {
        host = at = uart_outq_after_last(u, at);
    } else {
        host = usb_up_byte(&uart.usb, &u->usb_up, at, &moved_from);
        at = u->usb_up.last_in; /* its arrival at the adapter, after the bytes before it */
        if (moved_from)
            outq_move_tail(u, moved_from, host);
    }
    if (uart_outq_push(u, host, b) && uart.on_out_byte)
        uart.on_out_byte(b, host);
    TRACE("O %" PRIu64 " %s %02x\n", at, name, b); /* the line's side: when the byte left the node */
    return at;
}

/* A byte the node sent, complete at the host when its stop bit ends (the node's cycle `end`; chr: a
 * character in the node's cycles): node.h, uart_attach */
static void out_done(void *ctx, uint64_t end, uint64_t chr, uint8_t b)
{
    struct node *n = ctx;
    struct uart_node *u = &uart.n[n->id];
    uint64_t at = node_to_global(n->id, end); /* from here on, global time */
    u->out_bytes++;
    uart_poll_host_baud(n->id, 0);
    if (u->host_baud && uart_rate_mismatch(n->id, u->host_baud)) {   /* (a script has no adapter reading) */
        u->baud_mismatch_dropped[1]++; /* the adapter at another rate: framing errors, not this byte */
        return;
    }
    if (u->hung) {
        u->hangup_dropped++; /* no pty: the adapter is unplugged */
        return;
    }
    if (uart_fault_cut(u, 1, at) || !uart_fault_out(u, &b, &at))
        return;
    at = uart_out_push(u, n->name, at, b);
    if (uart_fault_repeats(u, 1)) {
        /* the line repeats the byte: it follows, one character later */
        uint64_t chr_g = node_to_global(n->id, end + chr) - node_to_global(n->id, end);
        uart_out_push(u, n->name, at + chr_g, b);
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
        /* An empty queue starts again at its first slot: the pages it touches are those of its deepest fill, not
         * all of its 16 MB (1 << 20 bytes of 16) swept by a head going round. Swept, they made a 10^6-event
         * lockstep run's bench grow 5.8 -> 10.3 MB and a 10^7-event one's 5.8 -> 22 MB by its third (perf_long_run_memory). */
        if (!u->out_n)
            u->out_head = 0;
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

uint64_t uart_next_delimiter(int id, uint64_t now)
{
    const struct uart_node *u = &uart.n[id];
    uint64_t t = NEVER;
    size_t k;
    for (k = 0; k < u->out_n; k++) {
        const struct out_byte *o = &u->outq[(u->out_head + k) % u->out_cap];
        if (o->b == 0 && o->at > now && o->at < t)
            t = o->at;
    }
    return t;
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

void uart_inq_push(struct uart_node *u, uint64_t at, uint8_t b, uint64_t off)
{
    inq_grow(u);
    u->inq[(u->inq_head + u->inq_n) % u->inq_cap] = (struct in_byte){at, b, uart_rate_adapter(u), off};
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
 * adapter's rate, uart_line_baud: --baud until the host sets another) after it started. An injection's
 * bytes go first (the first at its start cycle), with no faults; host bytes start when they reached the
 * bench or when the previous one ended, unless held for an injection. The line is timed in global cycles; the byte enters at the node's first cycle at
 * or after its stop bit's end. */
void uart_arm(int id)
{
    struct uart_node *u = &uart.n[id];
    struct node *n = cosim_node(id);
    struct in_byte *ib = NULL;
    uint64_t start_scaled, end_scaled, at, shadow_start;
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
        end_scaled += uart_fault_in_delay(u) * baud;
        u->rx_armed_start_scaled = start_scaled;
        u->rx_prev_free_scaled = u->rx_line_free_scaled;
        u->rx_prev_shadow_scaled = u->rx_shadow_free_scaled;
        shadow_start = ib->at * baud;
    }
    uart_shadow_advance(id, u, shadow_start, end_scaled, baud, ib ? ib->off : 0);
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
    struct node *n = cosim_node(id);
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
    if (uart_fault_cut(u, 0, node_to_global(n->id, cycle))) {
        deliver = 0;
    } else if (uart_rate_mismatch(n->id, bb) && arduino.on && (double)bb < uart_node_baud(n->id)) {
        /* --arduino: the Mega's bootloader listens at 115200 while the host is at the application's
         * rate (9600). A slower host byte's start bit (104 us) outlasts the node's whole frame (87 us):
         * its receiver reads 0x00 with a framing error and RXC is set all the same, and a byte is what
         * keeps the bootloader waiting (what failed the handshakes on real Megas). One 0x00 per host
         * byte (the bits after the start bit may make more frames on the board: at least this one). */
        u->baud_mismatch_garbled++;
        b = 0x00;
    } else if (uart_rate_mismatch(n->id, bb)) {
        u->baud_mismatch_dropped[0]++; /* the node's UART at another rate: framing errors */
        deliver = 0;
    } else {
        deliver = uart_fault_in(u, &b); /* dropped, or corrupted */
    }
    if (deliver) {
        uart_deliver_now(n->id, b, cycle);
        if (uart_fault_repeats(u, 0)) {
            inq_push_front(u, node_to_global(n->id, cycle), b, bb); /* on the line next, right after this one */
            u->rx_dup_head = 1;
        }
    }
    uart_arm(n->id);
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
        k = uart_host_read(id, buf, want);
        if (!k)
            break;
        for (i = 0; i < k; i++)
            uart_inq_push(u, usb_down_byte(&uart.usb, now), buf[i], u->in_read + (uint64_t)i + 1);
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
        k = uart_host_read(id, buf, (size_t)want);
        if (k) {
            for (i = 0; i < k; i++)
                uart_inq_push(u, usb_down_byte(&uart.usb, now), buf[i], u->in_read + (uint64_t)i + 1);
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
    uart_rate_from_host(u, baud); /* the rate the host had set when it wrote them */
    for (i = 0; i < n; i++)
        uart_inq_push(u, usb_down_byte(&uart.usb, at), b[i], u->in_read + i + 1);
    u->in_read += n;
}

void uart_push_input(int id, uint64_t at, uint8_t b)
{
    uart_inq_push(&uart.n[id], at, b, 0);
}

void uart_hold(int id)
{
    uart.n[id].hold = 1;
}

int uart_held(int id)
{
    return uart.n[id].hold;
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
        cosim_node(id)->ops->timer_cancel(cosim_node(id), rx_deliver, u);
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
    cosim_node(id)->ops->timer_cancel(cosim_node(id), rx_deliver, &uart.n[id]);
    uart.n[id].rx_armed = 0;
    uart.n[id].rx_armed_inj = 0; /* an injected byte on the line goes again, whole */
    uart_arm(id);
}

/* the node's "tty", "pts" and "uart" members of its status object */
void uart_status_json(int id, struct sbuf *b)
{
    struct node *n = cosim_node(id);
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
                 ",\"baud_mismatch_dropped\":[%" PRIu64 ",%" PRIu64 "]",
              in_ok, u->inq_n, u->in_read, in_ignored, u->out_bytes, u->out_written, u->out_n,
              u->out_dropped, u->first_in_cycle, u->last_in_cycle, u->f_dropped[0], u->f_dropped[1],
              u->f_corrupted[0], u->f_corrupted[1], u->f_delayed[0], u->f_delayed[1], u->cut_dropped[0],
              u->cut_dropped[1], u->f_duplicated[0], u->f_duplicated[1], u->garbage_bytes[0], u->garbage_bytes[1],
              u->hangups, u->hangup_dropped, u->hung ? "true" : "false", uart_generation(id),
              u->hung ? "none" : u->sock_conn >= 0 ? "socket" : "pty", u->sock_conns, u->sock_refused,
              uart_line_baud(id), uart_node_baud(id), u->host_baud_changes, u->baud_mismatch_dropped[0],
              u->baud_mismatch_dropped[1]);
    /* the adapter's model and what it did (its parameters are the run's, in the sidecar) */
    sb_printf(b, ",\"line_model\":{\"model\":\"%s\"", usb_kind_name(uart.usb.kind));
    if (uart.usb.kind == USB_FTDI)
        sb_printf(b, ",\"latency_timer_ms\":%u,\"packet_data_bytes\":%u", uart.usb.latency_ms, uart.usb.fill);
    else if (uart.usb.kind == USB_CDC16U2)
        sb_printf(b, ",\"flush_period_us\":%.3f,\"flush_above_bytes\":%u",
                  (double)uart.usb.period * 1e6 / (double)F_CPU, uart.usb.fill - 1);
    if (uart.usb.kind != USB_IDEAL)
        sb_printf(b, ",\"frame_us\":%.0f,\"packets\":%" PRIu64 ",\"full_packets\":%" PRIu64 ",\"moved_bytes\":%" PRIu64,
                  (double)uart.usb.frame * 1e6 / (double)F_CPU, u->usb_up.packets, u->usb_up.fills, u->usb_moved);
    sb_printf(b, "}}");
}

uint64_t uart_arduino_garbled(int id)
{
    return uart.n[id].baud_mismatch_garbled;
}

void uart_attach(int id)
{
    struct node *n = cosim_node(id);
    struct uart_node *u = &uart.n[id];

    n->ops->uart_attach(n, out_done, n, uart.simavr_timing);
    u->out_cap = uart.out_buffer ? uart.out_buffer : 1;
    u->outq = calloc(u->out_cap, sizeof *u->outq);
    if (!u->outq)
        die("out of memory");
    u->inq_limit = 65536;
    u->sock_listen = u->sock_conn = -1;
    usb_up_init(&uart.usb, &u->usb_up);
}
