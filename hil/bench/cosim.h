/*
 * Co-simulation: the two ATmega2560 cores on one virtual clock, the wires between their ports, and
 * stepping them in cycle order (cosim.c says how and why).
 */
#ifndef MMBENCH_COSIM_H
#define MMBENCH_COSIM_H

#include <stdint.h>

#include <simavr/sim_avr.h>
#include <simavr/sim_interrupts.h>
#include <simavr/sim_irq.h>

#include "bench.h"

struct node {
    int id;
    const char *name;
    const char *elf;
    avr_t *avr;
    avr_int_vector_t pcint2; /* executor only (port K) */
    uint64_t sleep_cycles;
    uint64_t resets;     /* every reset: the reset command and the watchdog's */
    uint64_t wdt_resets; /* the watchdog's */
    avr_run_t run_fn;    /* simavr's run callback: the watchdog swaps it to ask for a reset */
};

enum { GROUP_TIMECODE = 0, GROUP_EVENT = 1, NGROUPS = 2 };
extern const char *const group_names[NGROUPS];

struct wire {
    int src, dst;
    char src_port, dst_port;
    int src_bit, dst_bit;
    int group;
    int level;     /* level the destination sees */
    int src_level; /* level the source drives */
    avr_irq_t *dst_irq;
    const char *vcd_name;
    int index;              /* bit within its group: timecode 0..7, event 0..3 (3: the strobe) */
    uint64_t stuck_until;   /* a stuck wire (faults.c): the destination sees the stuck level until then */
};

#define NWIRES 12

struct cosim {
    struct node nodes[NNODES];
    struct wire wires[NWIRES];
    uint64_t group_cut_until[NGROUPS]; /* a cut line group drops changes until then */
    uint64_t now_cycles;               /* the global virtual time: every core has reached it */
    uint64_t run_target;               /* where the current cosim_run_until stops (may be lowered) */
    uint64_t wire_changes, wire_cut_dropped, wire_max_skew, wire_rewinds;
    uint64_t wire_stuck_masked; /* source changes a stuck wire did not pass on */
    int wired;              /* both nodes and the wires between them (0: one-node mode) */
    uint64_t itrace_until;  /* one-node --itrace: instructions are traced while the clock is below this */
    void (*after_reset)(int id); /* the rest of a node's reset (the UART bridge: main.c sets uart_reset) */
};
extern struct cosim cosim;

void cosim_load_node(int id, const char *elf, int alone); /* dies if the image cannot be loaded */
void cosim_wire_up(void);                      /* the fixed pin map, both nodes loaded */
void cosim_run_until(uint64_t target);
void cosim_catch_up(struct node *n, uint64_t at);
void cosim_reset_node(int id, uint64_t at);    /* the core and its wires; the UART side: uart_reset */
void cosim_external_reset(int id, uint64_t at); /* the reset command: as the RESET pin, MCUSR EXTRF */
void cosim_resync_wires(int group, int dst, uint64_t at);
/* a stuck wire: the destination sees `level` on the group's bit `bit` (-1: every bit) until `until`;
 * returns how many wires; cosim_unstick (a timed action) then gives them the driver's level */
int cosim_stick(int group, int bit, int level, uint64_t until, uint64_t now);
void cosim_unstick(int group, uint64_t now);
const char *cosim_state_name(int state);
int cosim_present(int id); /* one-node mode runs one of the two */

#endif
