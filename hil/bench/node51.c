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
 * reports it with that clock), which may be later than the executor's clock: the write is queued
 * (node51.pend) and the 8051 stops after that instruction (mcs51_break); the executor then runs up to
 * that moment, and cosim.c passes the change to the wires with the executor at it (exactly as an AVR
 * profiler's change: a rewind if the executor's last instruction went past it). The executor's event
 * pins reach P0 at the first 8051 clock at or after their moment, which is never after the 8051's
 * clock (it ran no instruction starting after the executor's): the next instruction reads them.
 *
 * UART. The host line stays the bridge's (uart_bridge.c: paced at the adapter's rate, faults, cuts):
 * for the 8051 it starts each byte's start bit at its moment (a timer here, at the first instruction
 * boundary at or after it: up to 47 clocks, 4.3 us, late) and ucsim's receiver counts the 10 bit times
 * at the rate the image set (Timer1) and sets RI at the end of the stop bit. Output: ucsim reports each
 * byte at the end of its stop bit (mcs51_on_tx), which is when the bridge queues it for the pty.
 */
#define _GNU_SOURCE
#include "node51.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct node51 node51;

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

static mcs51_t *m;
static void (*tx_fn)(uint64_t clock, uint8_t b);

int node51_built(void)
{
    return 1;
}

/* every write to P1 or P2, at the end of the writing instruction */
static void on_port(void *ctx, int port, uint64_t clock, uint8_t value)
{
    (void)ctx;
    if (port == 2) {
        if (value != node51.p2)
            node51.p2_writes++;
        node51.p2 = value;
        return;
    }
    if (value == node51.p1)
        return; /* a write that leaves the pins as they were: nothing on the wires */
    node51.p1 = value;
    node51.p1_writes++;
    if (node51.pend_n == (int)(sizeof node51.pend / sizeof node51.pend[0])) {
        node51.pend_dropped++; /* cannot happen while cosim.c drains it before each turn */
        return;
    }
    node51.pend[node51.pend_n].clock = clock;
    node51.pend[node51.pend_n].value = value;
    node51.pend_n++;
    mcs51_break(m); /* the executor must reach this moment before the 8051 runs on */
}

static void on_tx(void *ctx, uint64_t clock, uint8_t b)
{
    (void)ctx;
    if (tx_fn)
        tx_fn(clock, b);
}

void node51_load(const char *path)
{
    char err[200];
    long n;
    m = mcs51_create(err, sizeof err);
    if (!m)
        die("8051 profiler: %s", err);
    n = mcs51_load_ihx(m, path);
    if (n < 0)
        die("cannot read profiler image %s (not an Intel HEX file the 8051 can run)", path);
    node51.on = 1;
    node51.p1 = node51.p2 = 0xFF; /* reset latches */
    node51.p0 = 0xF0;             /* the event wires at 0 (cosim.c), P0.4..7 pulled up */
    mcs51_set_p0(m, node51.p0);
    mcs51_on_port(m, on_port, NULL);
    mcs51_on_tx(m, on_tx, NULL);
    node51.timer_at = NEVER;
    logmsg("profiler: 8051 (ucsim, 87C51 at 11.0592 MHz), %s: %ld bytes", path, n);
}

uint64_t node51_clock(void)
{
    return mcs51_clock(m);
}

uint64_t node51_eff_clock(void)
{
    return node51.stopped ? NEVER : mcs51_clock(m);
}

void node51_run(uint64_t limit)
{
    uint64_t c = mcs51_clock(m);
    if (node51.stopped)
        return;
    if (node51.timer_fn && node51.timer_at <= c) {
        void (*fn)(uint64_t) = node51.timer_fn;
        node51.timer_fn = NULL;
        node51.timer_at = NEVER;
        fn(c);
        return;
    }
    if (node51.timer_fn && node51.timer_at < limit)
        limit = node51.timer_at;
    if (limit <= c)
        limit = c + 1;
    if (mcs51_run_until(m, limit) < 0) {
        node51.stopped = 1;
        node51.stops++;
        logmsg("profiler (8051): stopped at clock %" PRIu64 ": %s", mcs51_clock(m), mcs51_error(m));
    }
}

void node51_set_input(int bit, int level)
{
    uint8_t b = (uint8_t)(1u << bit);
    node51.p0 = (uint8_t)(level ? node51.p0 | b : node51.p0 & ~b);
    mcs51_set_p0(m, node51.p0);
}

void node51_reset(void)
{
    mcs51_reset(m); /* P1, P2 latches to 0xFF: seen as writes (on_port) */
    node51.stopped = 0;
}

void node51_timer(uint64_t at, void (*fn)(uint64_t at))
{
    node51.timer_at = at;
    node51.timer_fn = fn;
}

void node51_timer_cancel(void)
{
    node51.timer_fn = NULL;
    node51.timer_at = NEVER;
}

void node51_uart_rx(uint8_t b)
{
    if (mcs51_uart_rx(m, b))
        logmsg("profiler (8051): receive queue full, byte %02x lost", b);
}

void node51_on_tx(void (*fn)(uint64_t clock, uint8_t b))
{
    tx_fn = fn;
}

/* Timer1 in mode 2 (auto-reload) as the baud generator: f / (12 x (256 - TH1) x (SMOD ? 16 : 32));
 * the image's TH1 = 0xFD, SMOD 0: 9600 exactly. 0 while Timer1 is not so set up (before the image's
 * start-up), as an AVR's UART is at another rate before its UBRR is written. */
static uint64_t bit_clocks(void)
{
    uint8_t th1 = mcs51_sfr(m, SFR_TH1), tmod = mcs51_sfr(m, SFR_TMOD), pcon = mcs51_sfr(m, SFR_PCON);
    if (((tmod >> 4) & 3) != 2 || th1 == 0)
        return 0;
    return 12ull * (256u - th1) * ((pcon & 0x80) ? 16u : 32u);
}

double node51_baud(void)
{
    uint64_t b = bit_clocks();
    return b ? (double)NODE51_HZ / (double)b : 0.0;
}

uint64_t node51_char_clocks(void)
{
    uint64_t b = bit_clocks();
    return 10 * (b ? b : 1152); /* 1152: 9600 baud, before the image set it up */
}

unsigned long node51_rx_lost(void)
{
    return mcs51_uart_rx_lost(m);
}

const char *node51_error(void)
{
    return mcs51_error(m);
}

#else /* built without build/ucsim: the AVR bench alone */

int node51_built(void)
{
    return 0;
}

void node51_load(const char *path)
{
    (void)path; /* never called: main.c refuses an 8051 image before loading when node51_built() is 0 */
}

uint64_t node51_clock(void) { return 0; }
uint64_t node51_eff_clock(void) { return NEVER; }
void node51_run(uint64_t limit) { (void)limit; }
void node51_set_input(int bit, int level) { (void)bit; (void)level; }
void node51_reset(void) {}
void node51_timer(uint64_t at, void (*fn)(uint64_t at)) { (void)at; (void)fn; }
void node51_timer_cancel(void) {}
void node51_uart_rx(uint8_t b) { (void)b; }
void node51_on_tx(void (*fn)(uint64_t clock, uint8_t b)) { (void)fn; }
double node51_baud(void) { return 0.0; }
uint64_t node51_char_clocks(void) { return 11520; }
unsigned long node51_rx_lost(void) { return 0; }
const char *node51_error(void) { return ""; }

#endif
