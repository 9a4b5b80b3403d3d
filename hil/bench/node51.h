/*
 * The 8051 profiler node (--profiler IMAGE.ihx, or --profiler-kind 8051): the paper's 87C51 profiler
 * image on ucsim's 8051 core (mcs51/mcs51.h) as the bench's profiler, beside the executor's simavr core
 * (node51.c says how it is stepped and wired). Built only where tools/ucsim.sh built build/ucsim
 * (MMBENCH_MCS51); without it node51_built() is 0 and an 8051 profiler is refused with one line.
 */
#ifndef MMBENCH_NODE51_H
#define MMBENCH_NODE51_H

#include <stdint.h>

#include "bench.h"

#define NODE51_HZ 11059200ull /* the 87C51's crystal (11.0592 MHz: 9600 baud exactly) */

struct node51 {
    int on;              /* the profiler node is the 8051 */
    uint8_t p0;          /* the P0 pins as the executor's wires drive them (P0.4..7: pull-ups, 1) */
    uint8_t p1, p2;      /* the latches as last written (P1: timecode, P2: LEDs, active low) */
    uint64_t p1_writes, p2_writes; /* writes that changed the latch */
    int stopped;         /* ucsim stopped the core (mcs51_error): only a reset brings it back */
    uint64_t stops;
    /* P1 writes not yet on the wires: applied when the executor has reached their moment (cosim.c,
     * apply_p51_pending); pend_dropped: writes a full queue lost (never seen: the 8051 stops after each) */
    int pend_n;
    struct {
        uint64_t clock;
        uint8_t value;
    } pend[16];
    uint64_t pend_dropped;
    /* one timer, the UART bridge's (a host byte's start bit): fn(at) at the first instruction
     * boundary at or after clock `timer_at` */
    uint64_t timer_at;
    void (*timer_fn)(uint64_t at);
};
extern struct node51 node51;

int node51_built(void);                       /* this mmbench has the 8051 core */
int node51_is_image(const char *path);        /* an Intel HEX name (.ihx, .hex): the 8051's */
void node51_load(const char *path);           /* dies with one line when it cannot */
uint64_t node51_clock(void);                  /* 8051 clocks (11.0592 MHz) */
uint64_t node51_eff_clock(void);              /* NEVER once stopped */
void node51_run(uint64_t limit);              /* runs instructions that start before `limit` (a turn) */
void node51_set_input(int bit, int level);    /* a P0 pin (0..7) */
void node51_reset(void);                      /* the RST pin */
void node51_timer(uint64_t at, void (*fn)(uint64_t at));
void node51_timer_cancel(void);
void node51_uart_rx(uint8_t b);               /* a byte's start bit on the receive line now */
void node51_on_tx(void (*fn)(uint64_t clock, uint8_t b));
double node51_baud(void);                     /* the UART's rate from TH1, TMOD, PCON.SMOD */
uint64_t node51_char_clocks(void);            /* 10 bit times at that rate, in clocks */
unsigned long node51_rx_lost(void);           /* bytes that came with REN = 0 */
const char *node51_error(void);

#endif
