/*
 * Co-simulation: the two nodes (node.h) on one virtual clock, the wires between their ports, and
 * stepping them in cycle order (cosim.c says how and why).
 */
#ifndef MMBENCH_COSIM_H
#define MMBENCH_COSIM_H

#include <stdint.h>

#include "bench.h"
#include "node.h"
#include "wire.h"

enum { GROUP_TIMECODE = 0, GROUP_EVENT = 1, NGROUPS = 2 };
extern const char *const group_names[NGROUPS];


/* Crystal offsets (--ppm-profiler, --ppm-executor; docs/bench.md, "Crystal offsets"). Each core counts
 * its own cycles (node.h: its timers, its UART's baud generator, its sleep) at 16 MHz x (1 + ppm/1e6);
 * the bench's global virtual time (cosim.now_cycles, pacing, grants, timed actions, the host's UART
 * line, --trace, the VCD) stays in nominal 16 MHz cycles. With K_n = 10^6 + ppm_n, node n's cycle c is
 * at global time c * 10^6 / K_n. Every crossing between the two kinds of cycle goes through the helpers
 * below; with both ppm 0 each of them is the identity. */
#define PPM_MAX 10000 /* 1 %: twice the 0.5 % of the resonator a genuine Mega clocks its ATmega2560 from */
#define PPM_ONE 1000000ull
/* The 8051 profiler (node51.h) runs at 11.0592 MHz: 432/625 of 16 MHz, exactly. So K_n is kept as node
 * cycles per GLOBAL_K = 625 x 10^6 global cycles: K_n = RATIO_n x (10^6 + ppm_n) with RATIO_n the node's
 * clock in units of RATIO_HZ (625 for an AVR at 16 MHz, 432 for the 8051), and every conversion below
 * stays one exact muldiv (an AVR's K is its former 10^6 + ppm scaled by 625: the same results). */
#define RATIO_AVR 625ull
#define RATIO_HZ (F_CPU / RATIO_AVR) /* 25.6 kHz: both crystals are whole multiples of it */
#define GLOBAL_K (RATIO_AVR * PPM_ONE)

struct cosim {
    struct node *nodes[NNODES]; /* NULL: not there (one-node mode runs one of the two) */
    struct wire wires[NWIRES];
    uint64_t group_cut_until[NGROUPS]; /* a cut line group drops changes until then */
    uint64_t now_cycles;               /* the global virtual time: every core has reached it */
    uint64_t run_target;               /* where the current cosim_run_until stops (may be lowered) */
    uint64_t wire_changes, wire_cut_dropped, wire_max_skew, wire_rewinds;
    uint64_t wire_stuck_masked; /* source changes a stuck wire did not pass on */
    int wired;              /* both nodes and the wires between them (0: one-node mode) */
    void (*after_reset)(int id); /* the rest of a node's reset (the UART bridge: main.c sets uart_reset) */
    int ppm[NNODES];             /* the crystal offsets, -PPM_MAX..PPM_MAX (cosim_set_ppm) */
    uint64_t ratio[NNODES];      /* the node's clock / RATIO_HZ (cosim_add_node): 625 an AVR, 432 the 8051 */
    uint64_t k[NNODES];          /* K_n = ratio_n x (10^6 + ppm_n): node cycles per GLOBAL_K global cycles */
    int same_clock;              /* K_profiler == K_executor: the cores' cycles compare as they are */
    /* --unconnected GROUP: the group's wires are not there; its inputs float (cosim.c, "Unconnected") */
    int unconnected[NGROUPS];
    uint64_t noise_changes[NGROUPS]; /* level changes the noise made on the group's inputs */
    uint64_t noise_rng;              /* its PRNG state (--seed) */
};
extern struct cosim cosim; /* cosim.c's: other files go through the functions below */

/* the global virtual time: every core has reached it (read many times a loop turn: inline) */
static inline uint64_t cosim_now(void)
{
    return cosim.now_cycles;
}

/* node id (NULL: not there, one-node mode) */
static inline struct node *cosim_node(int id)
{
    return cosim.nodes[id];
}

int cosim_wired(void);               /* both nodes and the wires between them (0: one-node mode) */
const struct wire *cosim_wires(void); /* the NWIRES wires, for the VCD's and the exec trace's headers */
int cosim_ppm(int id);               /* the node's crystal offset (cosim_set_ppm) */
void cosim_cut_group(int group, uint64_t until); /* the group's changes are dropped until global `until` */
/* lockstep: the cosim_run_until under way stops at global `at` at the latest (no core has passed it) */
void cosim_stop_by(uint64_t at);
void cosim_leave_unconnected(int group); /* --unconnected GROUP, before cosim_wire_up: its inputs float */
int cosim_unconnected(int group);
void cosim_on_reset(void (*fn)(int id)); /* the rest of a node's reset (the UART bridge: uart_reset) */
/* the status's "unconnected":[...],"noise_changes":{...}, and its "wires":{...} counters */
void cosim_noise_json(struct sbuf *b);
void cosim_wires_json(struct sbuf *b);

void cosim_set_ppm(int id, int ppm); /* before the run; default 0 */

/* c * num / den rounded up (up = 1) or down (up = 0), exact (128-bit); NEVER stays NEVER, and a result
 * past 64 bits is NEVER */
static inline uint64_t cosim_muldiv(uint64_t c, uint64_t num, uint64_t den, int up)
{
    unsigned __int128 q;
    if (c == NEVER)
        return NEVER;
    if (num == den)
        return c;
    q = ((unsigned __int128)c * num + (up ? den - 1 : 0)) / den;
    return q > (unsigned __int128)(NEVER - 1) ? NEVER : (uint64_t)q;
}

/* node id's cycle c in global time: the first global cycle at or after it */
static inline uint64_t node_to_global(int id, uint64_t c)
{
    return cosim_muldiv(c, GLOBAL_K, cosim.k[id], 1);
}

/* global time g on node id's clock: the first node cycle at or after it */
static inline uint64_t global_to_node(int id, uint64_t g)
{
    return cosim_muldiv(g, cosim.k[id], GLOBAL_K, 1);
}

/* cycle c of node src on node dst's clock: the first dst cycle at or after it (a wire's arrival) */
static inline uint64_t node_to_node(int src, int dst, uint64_t c)
{
    return cosim_muldiv(c, cosim.k[dst], cosim.k[src], 1);
}

/* the last dst cycle at or before src's cycle c */
static inline uint64_t node_to_node_down(int src, int dst, uint64_t c)
{
    return cosim_muldiv(c, cosim.k[dst], cosim.k[src], 0);
}

/* the profiler's cycle cp is not later than the executor's cycle ce (in time): cp * K_e <= ce * K_p */
static inline int cosim_not_later(uint64_t cp, uint64_t ce)
{
    if (cosim.same_clock)
        return cp <= ce;
    if (cp == NEVER || ce == NEVER)
        return ce == NEVER;
    return (unsigned __int128)cp * cosim.k[EXECUTOR] <= (unsigned __int128)ce * cosim.k[PROFILER];
}

void cosim_add_node(struct node *n);           /* a node loaded (node_avr_load, node51_load): its clock */
void cosim_wire_up(void);                      /* the fixed pin map, both nodes added */
void cosim_seed_noise(uint64_t seed);          /* --seed: the noise on unconnected inputs */
void cosim_run_until(uint64_t target);
/* the reset command: the RESET pin (an AVR: MCUSR EXTRF), at global `at`; the core, its wires, then
 * after_reset */
void cosim_external_reset(int id, uint64_t at);
void cosim_resync_wires(int group, int dst, uint64_t at); /* at: global */
/* a stuck wire: the destination sees `level` on the group's bit `bit` (-1: every bit) until `until`;
 * returns how many wires; cosim_unstick (a timed action) then gives them the driver's level (times: global) */
int cosim_stick(int group, int bit, int level, uint64_t until, uint64_t now);
void cosim_unstick(int group, uint64_t now);
int cosim_present(int id); /* one-node mode runs one of the two */

#endif
