/*
 * The AVR node: an ATmega2560 image on simavr as a bench node (node.h), with the quirks of simavr 1.6
 * the bench corrects (node_avr.c says which and why). Arduino mode (arduino.c) and one-node mode
 * (stimulus.c) reach into the core itself: they are about this chip alone.
 */
#ifndef MMBENCH_NODE_AVR_H
#define MMBENCH_NODE_AVR_H

#include <stdint.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_interrupts.h>
#include <simavr/sim_irq.h>

#include "node.h"

/* an input pin the bench drives, held at its level against PORT writes (node_avr.c, "PORT writes") */
struct avr_input {
    avr_ioport_t *port;
    avr_irq_t *irq;
    uint8_t mask;
    char name; /* the port's letter */
    int bit;
};

#define AVR_INPUTS 16 /* inputs one node has wired: 8 at most (port K), 12 wires in all */
#define AVR_WATCHES 16
#define AVR_TIMERS 8 /* (fn, ctx) pairs: the UART bridge's receive timer, the inputs' re-drive, the noise */

struct avr_node {
    struct node node; /* the interface; first, so a struct node * of this kind is one of these */
    avr_t *avr;
    int alone;                 /* one-node mode: simavr's own loop, no wires */
    avr_int_vector_t pcint2;   /* executor only (port K: simavr 1.6 has no PCINT2 there) */
    avr_run_t run_fn;          /* simavr's run callback: the watchdog swaps it to ask for a reset */
    uint64_t sleep_cycles;
    uint64_t wdt_resets;       /* the watchdog's (node.resets counts them too) */
    uint64_t itrace_until;     /* one-node --itrace: instructions are traced while the clock is below this */
    struct avr_input inputs[AVR_INPUTS];
    int n_inputs;
    /* the callbacks behind simavr's (irq notify, cycle timer): each keeps its (fn, ctx) */
    struct avr_watch {
        struct avr_node *an;
        node_pin_fn pin;
        node_port_fn port;
        void *ctx;
    } watches[AVR_WATCHES];
    int n_watches;
    struct avr_timer {
        struct avr_node *an;
        node_timer_fn fn;
        void *ctx;
    } timers[AVR_TIMERS];
    int n_timers;
    /* USART0 */
    avr_uart_t *uart;
    avr_irq_t *uart_in;
    int uart_raw;          /* simavr's own UART timing (--uart-timing simavr) */
    uint64_t tx_line_free; /* the cycle its transmitter's last stop bit ends */
    node_tx_fn tx_fn;
    void *tx_ctx;
};

/* the image at `elf` as node `id`; alone: one-node mode. Dies with one line if it cannot be loaded. */
struct node *node_avr_load(int id, const char *elf, int alone);
struct avr_node *node_avr(struct node *n); /* the AVR behind n (dies if n is of another kind) */
/* one-node mode (stimulus.c): an input the stimulus drives, held at its level as a wire's is */
struct avr_input node_avr_input(avr_t *a, char port, int bit); /* dies if the core has no such port */
void node_avr_drive(const struct avr_input *in, int level);

#endif
