/*
 * The 8051 profiler node: the 87C51 image (profiler-fw/build/mcs51/profiler.ihx, the very file one
 * would burn) on ucsim's 8051 core (mcs51/mcs51.h), as the bench's profiler beside the simavr executor.
 *
 * Clock. The 8051 counts its own clocks (11.0592 MHz; a machine cycle is 12). The bench's global time
 * stays in nominal 16 MHz AVR cycles; node n's clock runs K_n cycles per GLOBAL_K global cycles
 * (cosim.h): 625 (10^6 + ppm) for an AVR, 432 (10^6 + ppm) for the 8051, since 11.0592 / 16 = 432 / 625
 * exactly. So every conversion stays an exact 128-bit muldiv, as for two AVRs (in a 27.648 GHz tick
 * base, one AVR cycle is 1728 ticks and one 8051 clock 2500: the same ratio).
 *
 * Stepping (cosim.c, cosim_run_until). The 8051 runs the instructions that start at or before the
 * executor's clock, as an AVR profiler does (mcs51_run_until to the first 8051 clock after it). Its P1
 * latch takes a write at the END of the writing instruction (S6P2 of its last machine cycle; ucsim
 * reports it with that clock), which may be later than the executor's clock: the write is held
 * (node8051.pend, node.h: held_out) and the 8051 stops after that instruction (mcs51_break); the executor
 * then runs up to that moment, and cosim.c has the change released onto the wires with the executor at
 * it (exactly as an AVR profiler's change: a rewind if the executor's last instruction went past it).
 * The executor's event pins reach P0 at the first 8051 clock at or after their moment, which is never
 * after the 8051's clock (it ran no instruction starting after the executor's): the next instruction
 * reads them. It is never lazily asleep (idle mode is stepped a machine cycle at a time), so it has no
 * sleep to count and nothing to catch up.
 *
 * UART. The host line stays the bridge's (uart_line.c: paced at the adapter's rate, faults, cuts):
 * for the 8051 it starts each byte's start bit at its moment (node.rx_at_start; a timer here, at the first
 * instruction boundary at or after it: up to 47 clocks, 4.3 us, late) and ucsim's receiver counts the 10 bit times
 * at the rate the image set (Timer1) and sets RI at the end of the stop bit. Output: ucsim reports each
 * byte at the end of its stop bit (mcs51_on_tx), which is when the bridge queues it for the pty.
 */
#define _GNU_SOURCE
#include "node51.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int node51_is_image(const char *path)
{
    size_t n = strlen(path);
    return (n > 4 && (!strcmp(path + n - 4, ".ihx") || !strcmp(path + n - 4, ".hex")));
}

#ifdef MMBENCH_MCS51

#include "mcs51/mcs51.h"

/* SFR addresses */
#define SFR_PCON 0x87
#define SFR_TMOD 0x89
#define SFR_TH1 0x8D

#define TIMERS 4  /* (fn, ctx) pairs: the UART bridge's receive timer is the one there is */
#define WATCHES 16 /* P1: its 8 pins (the timecode wires) and the port as a whole (inject.c) */

/* The board's pins (docs/hardware.md): P1.0..7 drive the timecode, P0.0..3 read the event id (PC0..2)
 * and the strobe (PC3) */
static const struct node_pins pins51 = {
    .timecode = {{'1', 0}, {'1', 1}, {'1', 2}, {'1', 3}, {'1', 4}, {'1', 5}, {'1', 6}, {'1', 7}},
    .event = {{'0', 0}, {'0', 1}, {'0', 2}, {'0', 3}},
};

/* the one 8051 a bench can have (the profiler) */
static struct {
    struct node node;    /* the interface; first, so a struct node * of this kind is one of these */
    mcs51_t *m;
    uint8_t p0;          /* the P0 pins as the executor's wires drive them (P0.4..7: pull-ups, 1) */
    uint8_t p1, p2;      /* the latches as last written (P1: timecode, P2: LEDs, active low) */
    uint64_t p1_writes, p2_writes; /* writes that changed the latch */
    int stopped;         /* ucsim stopped the core (mcs51_error): only a reset brings it back */
    uint64_t stops;
    /* P1 writes not yet on the wires (held_out): released when the executor has reached their moment;
     * pend_dropped: writes a full queue lost (never seen: the 8051 stops after each) */
    int pend_n;
    struct {
        uint64_t clock;
        uint8_t value;
    } pend[16];
    uint64_t pend_dropped;
    /* timers: fn at the first instruction boundary at or after clock `at` */
    struct {
        uint64_t at;
        node_timer_fn fn;
        void *ctx;
    } timers[TIMERS];
    int n_timers;
    /* who watches P1: a pin (bit >= 0) or the port (bit -1) */
    struct {
        int bit;
        node_pin_fn pin;
        node_port_fn port;
        void *ctx;
    } watches[WATCHES];
    int n_watches;
    node_tx_fn tx_fn;
    void *tx_ctx;
} node8051;

int node51_built(void)
{
    return 1;
}

/* every write to P1 or P2, at the end of the writing instruction */
static void on_port(void *ctx, int port, uint64_t clock, uint8_t value)
{
    (void)ctx;
    if (port == 2) {
        if (value != node8051.p2)
            node8051.p2_writes++;
        node8051.p2 = value;
        return;
    }
    if (value == node8051.p1)
        return; /* a write that leaves the pins as they were: nothing on the wires */
    node8051.p1 = value;
    node8051.p1_writes++;
    if (node8051.pend_n == (int)(sizeof node8051.pend / sizeof node8051.pend[0])) {
        node8051.pend_dropped++; /* cannot happen while cosim.c releases them before each turn */
        return;
    }
    node8051.pend[node8051.pend_n].clock = clock;
    node8051.pend[node8051.pend_n].value = value;
    node8051.pend_n++;
    mcs51_break(node8051.m); /* the executor must reach this moment before the 8051 runs on */
}

/* Timer1 in mode 2 (auto-reload) as the baud generator: f / (12 x (256 - TH1) x (SMOD ? 16 : 32));
 * the image's TH1 = 0xFD, SMOD 0: 9600 exactly. 0 while Timer1 is not so set up (before the image's
 * start-up), as an AVR's UART is at another rate before its UBRR is written. */
static uint64_t bit_clocks(void)
{
    uint8_t th1 = mcs51_sfr(node8051.m, SFR_TH1), tmod = mcs51_sfr(node8051.m, SFR_TMOD),
            pcon = mcs51_sfr(node8051.m, SFR_PCON);
    if (((tmod >> 4) & 3) != 2 || th1 == 0)
        return 0;
    return 12ull * (256u - th1) * ((pcon & 0x80) ? 16u : 32u);
}

static uint64_t n51_uart_char(struct node *n)
{
    uint64_t b = bit_clocks();
    (void)n;
    return 10 * (b ? b : 1152); /* 1152: 9600 baud, before the image set it up */
}

/* ucsim's transmitter reports each byte at the end of its stop bit */
static void on_tx(void *ctx, uint64_t clock, uint8_t b)
{
    (void)ctx;
    if (node8051.tx_fn)
        node8051.tx_fn(node8051.tx_ctx, clock, n51_uart_char(&node8051.node), b);
}

/* ---- running ---------------------------------------------------------------------------------- */

static uint64_t n51_cycle(struct node *n)
{
    (void)n;
    return mcs51_clock(node8051.m);
}

static uint64_t n51_next_event(struct node *n)
{
    (void)n;
    return node8051.stopped ? NEVER : mcs51_clock(node8051.m);
}

/* the timer due first (-1: none) */
static int first_timer(void)
{
    int i, t = -1;
    for (i = 0; i < node8051.n_timers; i++)
        if (node8051.timers[i].fn && (t < 0 || node8051.timers[i].at < node8051.timers[t].at))
            t = i;
    return t;
}

static void n51_step(struct node *n, uint64_t limit)
{
    uint64_t c = mcs51_clock(node8051.m);
    int t;
    if (node8051.stopped)
        return;
    t = first_timer();
    if (t >= 0 && node8051.timers[t].at <= c) {
        node_timer_fn fn = node8051.timers[t].fn;
        uint64_t again;
        node8051.timers[t].fn = NULL;
        node8051.timers[t].at = NEVER;
        again = fn(n, c, node8051.timers[t].ctx);
        if (again)
            n->ops->timer(n, again, fn, node8051.timers[t].ctx);
        return;
    }
    if (t >= 0 && node8051.timers[t].at < limit)
        limit = node8051.timers[t].at;
    if (limit <= c)
        limit = c + 1;
    if (mcs51_run_until(node8051.m, limit) < 0) {
        node8051.stopped = 1;
        node8051.stops++;
        logmsg("profiler (8051): stopped at clock %" PRIu64 ": %s", mcs51_clock(node8051.m), mcs51_error(node8051.m));
    }
}

/* (never called: main.c runs the 8051 with an executor only) */
static void n51_run_alone(struct node *n, uint64_t until)
{
    while (!node8051.stopped && mcs51_clock(node8051.m) < until)
        n51_step(n, until);
}

static void n51_catch_up(struct node *n, uint64_t at)
{
    (void)n;
    (void)at; /* never lazily asleep: its clock is where it ran to */
}

static enum node_state n51_state(struct node *n)
{
    (void)n;
    return node8051.stopped ? NODE_CRASHED : NODE_RUNNING;
}

/* The RST pin: its clock goes on; P1 and P2 latches to 0xFF, which ucsim reports as writes (on_port:
 * P1 held for the wires, high as the quasi-bidirectional pins go); its P0 inputs keep what the executor
 * drives (node8051.p0, outside the core). The 87C51 has no reset flags. */
static uint64_t n51_reset(struct node *n, uint64_t at, const char *cause)
{
    (void)at;
    (void)cause;
    n->resets++;
    mcs51_reset(node8051.m);
    node8051.stopped = 0;
    logmsg("profiler (8051) reset at clock %" PRIu64, mcs51_clock(node8051.m));
    return mcs51_clock(node8051.m);
}

static void n51_timer(struct node *n, uint64_t at, node_timer_fn fn, void *ctx)
{
    int i;
    (void)n;
    for (i = 0; i < node8051.n_timers; i++)
        if (node8051.timers[i].ctx == ctx && (node8051.timers[i].fn == fn || !node8051.timers[i].fn))
            break;
    if (i == node8051.n_timers) {
        if (node8051.n_timers == TIMERS)
            die("profiler (8051): more than %d timers", TIMERS);
        node8051.n_timers++;
    }
    node8051.timers[i].at = at;
    node8051.timers[i].fn = fn;
    node8051.timers[i].ctx = ctx;
}

/* the core's reset keeps the timers (they are the bench's, outside it): only this drops one */
static void n51_timer_cancel(struct node *n, node_timer_fn fn, void *ctx)
{
    int i;
    (void)n;
    for (i = 0; i < node8051.n_timers; i++)
        if (node8051.timers[i].fn == fn && node8051.timers[i].ctx == ctx) {
            node8051.timers[i].fn = NULL;
            node8051.timers[i].at = NEVER;
        }
}

/* ---- pins ------------------------------------------------------------------------------------- */

static int n51_input(struct node *n, struct node_pin pin)
{
    if (pin.port != '0' || pin.bit < 0 || pin.bit > 7)
        die("%s (8051): no input P%c.%d", n->name, pin.port, pin.bit);
    return pin.bit;
}

static void set_p0(int bit, int level)
{
    uint8_t b = (uint8_t)(1u << bit);
    node8051.p0 = (uint8_t)(level ? node8051.p0 | b : node8051.p0 & ~b);
    mcs51_set_p0(node8051.m, node8051.p0);
}

static void n51_preset_input(struct node *n, int in, int level, int driven)
{
    (void)n;
    (void)driven;
    if (((node8051.p0 >> in) & 1) != level)
        set_p0(in, level);
}

/* read from its next instruction on (never after its clock: it ran none that starts later) */
static uint64_t n51_set_input(struct node *n, int in, int level, uint64_t at, int driven)
{
    (void)n;
    (void)at;
    (void)driven;
    set_p0(in, level);
    return 0;
}

/* P0 has no internal pull-ups: a pin nothing drives floats (main.c refuses --unconnected event with
 * the 8051: its noise is not modelled) */
static enum pin_mode n51_input_mode(struct node *n, int in)
{
    (void)n;
    (void)in;
    return PIN_FLOATING;
}

static void add_watch(struct node *n, char port, int bit, node_pin_fn pin, node_port_fn pf, void *ctx)
{
    if (port != '1')
        die("%s (8051): the bench watches P1 only, not P%c", n->name, port);
    if (node8051.n_watches == WATCHES)
        die("%s (8051): more than %d watches on P1", n->name, WATCHES);
    node8051.watches[node8051.n_watches].bit = bit;
    node8051.watches[node8051.n_watches].pin = pin;
    node8051.watches[node8051.n_watches].port = pf;
    node8051.watches[node8051.n_watches].ctx = ctx;
    node8051.n_watches++;
}

static void n51_watch_pin(struct node *n, struct node_pin pin, node_pin_fn fn, void *ctx)
{
    add_watch(n, pin.port, pin.bit, fn, NULL, ctx);
}

static void n51_watch_port(struct node *n, char port, node_port_fn fn, void *ctx)
{
    add_watch(n, port, -1, NULL, fn, ctx);
}

static uint8_t n51_port_out(struct node *n, char port)
{
    (void)n;
    return port == '1' ? node8051.p1 : port == '2' ? node8051.p2 : 0xFF;
}

static uint64_t n51_held_out(struct node *n)
{
    (void)n;
    return node8051.pend_n ? node8051.pend[0].clock : NEVER;
}

/* each held P1 write at or before `upto`, in order: its pins one by one, then the port as a whole (as
 * simavr reports an AVR's port write) */
static void n51_release_out(struct node *n, uint64_t upto)
{
    int i = 0, j, k;
    (void)n;
    for (; i < node8051.pend_n && node8051.pend[i].clock <= upto; i++) {
        for (k = 0; k < node8051.n_watches; k++)
            if (node8051.watches[k].pin)
                node8051.watches[k].pin(node8051.watches[k].ctx, (node8051.pend[i].value >> node8051.watches[k].bit) & 1,
                                        node8051.pend[i].clock);
        for (k = 0; k < node8051.n_watches; k++)
            if (node8051.watches[k].port)
                node8051.watches[k].port(node8051.watches[k].ctx, node8051.pend[i].value, node8051.pend[i].clock);
    }
    for (j = i; j < node8051.pend_n; j++)
        node8051.pend[j - i] = node8051.pend[j];
    node8051.pend_n -= i;
}

/* ---- UART ------------------------------------------------------------------------------------- */

static void n51_uart_attach(struct node *n, node_tx_fn fn, void *ctx, int raw)
{
    (void)n;
    (void)raw; /* ucsim times its own UART */
    node8051.tx_fn = fn;
    node8051.tx_ctx = ctx;
}

/* the byte's start bit on the receive line now: ucsim's receiver has it at the end of its stop bit (a
 * byte that starts while REN = 0 is lost there: uart_rx_lost) */
static int n51_uart_rx(struct node *n, uint8_t b)
{
    (void)n;
    if (mcs51_uart_rx(node8051.m, b))
        logmsg("profiler (8051): receive queue full, byte %02x lost", b);
    return 1;
}

static double n51_uart_baud(struct node *n)
{
    uint64_t b = bit_clocks();
    (void)n;
    return b ? (double)NODE51_HZ / (double)b : 0.0;
}

static unsigned long n51_uart_rx_lost(struct node *n)
{
    (void)n;
    return mcs51_uart_rx_lost(node8051.m);
}

/* no watchdog, no reset flags; leds: P2's LEDs lit (active low: ~P2), p2 the latch; no sleep counted
 * (idle mode is stepped a machine cycle at a time) */
static void n51_status_json(struct node *n, struct sbuf *b)
{
    sb_printf(b, "\"state\":\"%s\",\"asleep_share\":0,\"resets\":%" PRIu64 ",", node_state_name(n51_state(n)), n->resets);
    sb_printf(b, "\"wdt_resets\":0,\"mcusr\":null,"
                 "\"leds\":%u,\"p1\":%u,\"p2\":%u,\"p0_pins\":%u,\"p1_changes\":%" PRIu64 ",\"p2_changes\":%" PRIu64
                 ",\"p1_dropped\":%" PRIu64 ",\"stops\":%" PRIu64 ",\"error\":",
              (unsigned)(uint8_t)~node8051.p2, (unsigned)node8051.p1, (unsigned)node8051.p2, (unsigned)node8051.p0,
              node8051.p1_writes, node8051.p2_writes, node8051.pend_dropped, node8051.stops);
    sb_json_str(b, mcs51_error(node8051.m));
    sb_printf(b, ",");
}

static const struct node_ops ops51 = {
    .cycle = n51_cycle,
    .next_event = n51_next_event,
    .step = n51_step,
    .run_alone = n51_run_alone,
    .catch_up = n51_catch_up,
    .state = n51_state,
    .reset = n51_reset,
    .timer = n51_timer,
    .timer_cancel = n51_timer_cancel,
    .input = n51_input,
    .preset_input = n51_preset_input,
    .set_input = n51_set_input,
    .input_mode = n51_input_mode,
    .watch_pin = n51_watch_pin,
    .watch_port = n51_watch_port,
    .port_out = n51_port_out,
    .held_out = n51_held_out,
    .release_out = n51_release_out,
    .uart_attach = n51_uart_attach,
    .uart_rx = n51_uart_rx,
    .uart_char = n51_uart_char,
    .uart_baud = n51_uart_baud,
    .uart_rx_lost = n51_uart_rx_lost,
    .status_json = n51_status_json,
};

struct node *node51_load(const char *path)
{
    struct node *n = &node8051.node;
    char err[200];
    long len;
    node8051.m = mcs51_create(err, sizeof err);
    if (!node8051.m)
        die("8051 profiler: %s", err);
    len = mcs51_load_ihx(node8051.m, path);
    if (len < 0)
        die("cannot read profiler image %s (not an Intel HEX file the 8051 can run)", path);
    n->id = PROFILER;
    n->name = node_names[PROFILER];
    n->image = path;
    n->kind = "8051";
    n->hz = NODE51_HZ;
    n->ops = &ops51;
    n->pins = &pins51;
    n->rx_at_start = 1;
    n->reset_floats_pins = 0;
    node8051.p1 = node8051.p2 = 0xFF; /* reset latches */
    node8051.p0 = 0xF0;          /* the event wires at 0 (cosim.c), P0.4..7 pulled up */
    mcs51_set_p0(node8051.m, node8051.p0);
    mcs51_on_port(node8051.m, on_port, NULL);
    mcs51_on_tx(node8051.m, on_tx, NULL);
    /* it leaves reset with its P1 latch 0xFF (quasi-bidirectional: the pins high): held from clock 0,
     * so the executor sees it from its first cycle once the wires are up (cosim_wire_up releases it) */
    node8051.pend[0].clock = 0;
    node8051.pend[0].value = node8051.p1;
    node8051.pend_n = 1;
    logmsg("profiler: 8051 (ucsim, 87C51 at 11.0592 MHz), %s: %ld bytes", path, len);
    return n;
}

#else /* built without build/ucsim: the AVR bench alone */

int node51_built(void)
{
    return 0;
}

struct node *node51_load(const char *path)
{
    /* (main.c refuses an 8051 image before loading when node51_built() is 0) */
    die("%s: an 8051 profiler image, but this mmbench was built without the 8051 core", path);
}

#endif
