/*
 * A node: one simulated microcontroller of the bench, as the co-simulation (cosim.c) and the UART
 * bridge (uart_line.c) use it. Two kinds implement it: the ATmega2560 on simavr (node_avr.c: both
 * nodes, or the executor beside the 8051) and the 87C51 profiler on ucsim's core (node51.c). The
 * bench's parts call these operations and never ask which kind runs.
 *
 * Every cycle here is the node's own (its crystal, node->hz); cosim.h converts to and from the
 * bench's global time.
 */
#ifndef MMBENCH_NODE_H
#define MMBENCH_NODE_H

#include <stdint.h>

#include "bench.h"

struct node;

enum node_state { NODE_RUNNING, NODE_SLEEPING, NODE_HALTED, NODE_CRASHED, NODE_STOPPED };

/* the status's names ("halted": slept with interrupts off; "stopped": any other state simavr has) */
static inline const char *node_state_name(enum node_state s)
{
    static const char *const names[] = {"running", "sleeping", "halted", "crashed", "stopped"};
    return names[s];
}

/* What an input pin reads with nothing driving it (the noise on unconnected inputs, cosim.c) */
enum pin_mode { PIN_OUTPUT, PIN_PULLUP, PIN_FLOATING };

/* A pin of the node's board: port (its letter, or the 8051's port digit) and bit */
struct node_pin {
    char port;
    int bit;
};

/* The pins the bench wires (docs/hardware.md), as this node's board has them in its role: the
 * timecode port's eight bits (profiler: outputs; executor: inputs) and the event group's four (the id
 * lines 0..2, the strobe: executor outputs, profiler inputs) */
struct node_pins {
    struct node_pin timecode[8], event[4];
};

/* an output pin changed to `level` at the node's cycle `at`; returns 1 when the change reached
 * another core (the node then ends its batch of instructions: the other may have to react) */
typedef int (*node_pin_fn)(void *ctx, int level, uint64_t at);
/* a port's pins, all eight, are `value` from the node's cycle `at` */
typedef void (*node_port_fn)(void *ctx, uint8_t value, uint64_t at);
/* a timer: `when`, the cycle it fires at; returns the cycle to fire again at, or 0 */
typedef uint64_t (*node_timer_fn)(struct node *n, uint64_t when, void *ctx);
/* the node's transmitter finished a byte: its stop bit ended at the node's cycle `end`; chr is one
 * character at the node's rate (its cycles) */
typedef void (*node_tx_fn)(void *ctx, uint64_t end, uint64_t chr, uint8_t b);

struct node_ops {
    /* ---- running ---- */
    uint64_t (*cycle)(struct node *n);      /* the node's clock now */
    /* the cycle at which the node next has something to do: its clock while it runs, the next timer
     * or interrupt while it sleeps, NEVER once it stopped (only a reset brings it back) */
    uint64_t (*next_event)(struct node *n);
    /* two-node mode, one turn: runs the instructions that start before `limit` (at least one) */
    void (*step)(struct node *n, uint64_t limit);
    /* one-node mode: runs alone until its clock reaches `until` or it stops */
    void (*run_alone)(struct node *n, uint64_t until);
    /* a node not running (asleep, stopped) is brought up to its cycle `at` without stepping */
    void (*catch_up)(struct node *n, uint64_t at);
    enum node_state (*state)(struct node *n);
    /* the core's reset at its cycle `at` (cause "reset": the RESET pin; "watchdog"): returns the cycle
     * it happened at. Its pins are cosim.c's (reset_floats_pins); its UART side the bridge's. */
    uint64_t (*reset)(struct node *n, uint64_t at, const char *cause);
    /* fn(n, when, ctx) at the node's cycle `at`, or as soon as it can where `at` has passed; one timer
     * per (fn, ctx): a second call moves it. A reset that drops the node's timers drops these too. */
    void (*timer)(struct node *n, uint64_t at, node_timer_fn fn, void *ctx);
    void (*timer_cancel)(struct node *n, node_timer_fn fn, void *ctx);

    /* ---- pins ---- */
    /* an input pin the bench drives: its handle (dies if the node has no such pin) */
    int (*input)(struct node *n, struct node_pin pin);
    /* the level the pin is at, set without the core seeing a change (the wires' power-on level, the
     * step before a forced change); driven: the wire holds it against the node's own port writes */
    void (*preset_input)(struct node *n, int in, int level, int driven);
    /* the wire drives `level` as of the node's cycle `at` (never later than its clock, by at most its
     * last instruction): returns how many cycles its clock was set back to apply it, 0 if none */
    uint64_t (*set_input)(struct node *n, int in, int level, uint64_t at, int driven);
    enum pin_mode (*input_mode)(struct node *n, int in);
    void (*watch_pin)(struct node *n, struct node_pin pin, node_pin_fn fn, void *ctx);
    void (*watch_port)(struct node *n, char port, node_port_fn fn, void *ctx);
    uint8_t (*port_out)(struct node *n, char port); /* the port's output pins now */
    /* Output changes the node holds back: the cycle of the earliest (NEVER: none). A node whose port
     * write takes effect after its clock (the 8051: at the end of the instruction) holds it until the
     * other core has reached that moment; release_out then reports those at or before `upto` to the
     * watchers. A node that reports each change at its clock holds none. */
    uint64_t (*held_out)(struct node *n);
    void (*release_out)(struct node *n, uint64_t upto);

    /* ---- UART (the node's serial port on the bench's host line, uart_line.c) ---- */
    /* raw: simavr's own UART timing kept (one-node --uart-timing simavr) */
    void (*uart_attach)(struct node *n, node_tx_fn fn, void *ctx, int raw);
    int (*uart_rx)(struct node *n, uint8_t b); /* a byte into the receiver now; 0: its receiver is off */
    uint64_t (*uart_char)(struct node *n);     /* one character at the rate the image set, in cycles */
    double (*uart_baud)(struct node *n);       /* that rate, bits per second */
    unsigned long (*uart_rx_lost)(struct node *n); /* bytes the core itself lost (its receiver off) */

    /* the node's own members of its status object, from "state" on, each followed by a comma */
    void (*status_json)(struct node *n, struct sbuf *b);
};

struct node {
    int id;           /* PROFILER or EXECUTOR */
    const char *name; /* node_names[id] */
    const char *image;
    const char *kind; /* "avr", "8051": the status and the ready file */
    uint64_t hz;      /* its nominal clock */
    const struct node_ops *ops;
    const struct node_pins *pins;
    /* The receiver is handed a host byte at its start bit and times the bits itself (ucsim's);
     * else the whole byte when its stop bit ends (simavr's receiver has no bit timing: the bridge
     * times the line). */
    int rx_at_start;
    /* A reset makes the node's outputs inputs (its lines fall to 0) and loses the levels its inputs
     * saw (simavr's PORT-write quirk: cosim.c drives them again). The 8051's reset does neither: its
     * latches go to 0xFF through its own port writes and its P0 pins are outside the core. */
    int reset_floats_pins;
    uint64_t resets; /* every reset: the reset command's and the watchdog's */
    /* set by cosim.c: the node reset itself (its watchdog) at its cycle `at`; the bench resets the
     * rest (the wires, the UART side) as for the reset command */
    void (*self_reset)(struct node *n, uint64_t at, const char *cause);
};

#endif
