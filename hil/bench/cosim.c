/*
 * Co-simulation of the two nodes on one virtual clock.
 *
 * Clock. Both cores start at cycle 0 and run at 16 MHz (chip and clock are set here; AVR_MCU()
 * metadata in the images is ignored). The core whose clock is lower always runs next (ties: the
 * profiler), so when a core executes an instruction that starts at cycle a, the other core has
 * executed exactly its instructions that started at or before a and none after. A core runs more
 * than one instruction per turn only while its instructions start before the other core's clock
 * (simavr's own batching, bounded by run_cycle_count). A sleeping core is not stepped at all until
 * its next cycle timer (an interrupt source of its own: timer, UART, bench input) or until the
 * other core changes one of its input pins: its clock is then brought up to the moment of the
 * change (nothing of its own could happen before that moment, its next timer is later).
 *
 * Wires (fixed pin map, docs/hardware.md): profiler PA0..7 -> executor PK0..7 ("timecode"),
 * executor PC0..2 -> profiler PC0..2 and executor PC3 -> profiler PL1 = ICP5 ("event"). A pin change
 * made by an instruction starting at cycle a is applied to the other core as of cycle a: if that core
 * has already run past a (by at most the length of its last instruction), its clock is set back to a
 * while the change is applied, so timer input capture (ICR5) latches the count of cycle a, and put
 * back afterwards; its next instruction sees the new level. simavr's ATmega2560 has no pin-change
 * interrupt on port K: the bench supplies PCINT2 (vector 11, PCICR bit 2, PCIFR bit 2, PCMSK2).
 *
 * Crystal offsets (cosim.h; docs/bench.md, "Crystal offsets"). With --ppm-profiler / --ppm-executor
 * each core's clock (avr->cycle) counts its own crystal's cycles, K_n = 10^6 + ppm_n of them per 10^6
 * global cycles. "The lower clock" above is then the earlier moment: the profiler's cycle cp is not
 * later than the executor's ce when cp * K_e <= ce * K_p (exact, 128-bit), and a pin change at source
 * cycle a arrives at destination cycle ceil(a * K_dst / K_src), the first cycle of the destination at
 * or after that moment (a rewind as above when the destination is past it). A run target and every
 * time the rest of the bench holds (cuts, stuck wires, resets, the control commands) are global cycles,
 * converted here; --trace and the VCD record global cycles, the executor trace the executor's own.
 * Both ppm 0 (the default): every conversion is the identity, the same stepping cycle for cycle.
 *
 * The 8051 profiler (cosim.p51, node51.c). The profiler node may be the 87C51 image on ucsim's core: its
 * clock runs at 432/625 of an AVR's (K_n in cosim.h), it is stepped with node51_run in the same order
 * (its instructions that start at or before the executor's clock), its P1 writes, which take effect at
 * the end of their instruction, are queued and passed to the wires once the executor has reached them
 * (apply_p51_pending), and the executor's event pins set its P0 (apply_level_raw). Nothing else here
 * changes: the wires, cuts, stuck wires, VCD and trace are the same.
 */
#define _GNU_SOURCE
#include "cosim.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_timer.h>
#include <simavr/sim_core.h>
#include <simavr/sim_cycle_timers.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_io.h>

#include "bench.h"
#include "exectrace.h"
#include "inject.h"
#include "node51.h"
#include "trace.h"
#include "vcd.h"

/* ATmega2560 data-space addresses */
#define REG_PCICR 0x68
#define REG_PCIFR 0x3B
#define REG_PCMSK2 0x6D
#define PCINT2_VECTOR 11

const char *const group_names[NGROUPS] = {"timecode", "event"};

/* the two cores, their wires and the virtual clock: one simulation per process (both crystals nominal
 * until cosim_set_ppm) */
struct cosim cosim = {.k = {GLOBAL_K, GLOBAL_K}, .ratio = {RATIO_AVR, RATIO_AVR}, .same_clock = 1,
                      .noise_rng = 0x2545F4914F6CDD1Dull}; /* noise: --seed 0 */

static void set_k(int id)
{
    cosim.k[id] = cosim.ratio[id] * (uint64_t)((int64_t)PPM_ONE + cosim.ppm[id]);
    cosim.same_clock = cosim.k[PROFILER] == cosim.k[EXECUTOR];
}

void cosim_set_ppm(int id, int ppm)
{
    cosim.ppm[id] = ppm;
    set_k(id);
}

void cosim_set_8051(void)
{
    cosim.p51 = 1;
    cosim.ratio[PROFILER] = RATIO_8051;
    set_k(PROFILER);
}

/* ---- pin delivery ------------------------------------------------------------------------ */

/* Bring a core that is not running (asleep, or halted) up to its cycle `at` lazily. */
void cosim_catch_up(struct node *n, uint64_t at)
{
    avr_t *a = n->avr;
    if (a && a->cycle < at) {
        if (a->state == cpu_Sleeping)
            n->sleep_cycles += at - a->cycle;
        a->cycle = at;
    }
}

/* ---- PORT writes ----------------------------------------------------------------------------
 * simavr 1.6 raises an input pin to 1 when the firmware writes its PORT bit 1 (the internal pull-up),
 * on every write to that PORT or DDR register, as if the pull-up drove the pin: with the pull-ups on
 * (the boards' firmware since issue 23) the executor's PINK read 0xFF, not the profiler's timecode,
 * until each bit changed again, and a PORTL write set the profiler's strobe input to 1 under the
 * executor's 0. On the board the driver (the other node's push-pull output) overrides the ~35 kOhm
 * pull-up. simavr's port has an "external" level for input pins (AVR_IOCTL_IOPORT_SET_EXTERNAL:
 * pull_mask, pull_value) that it uses instead of the PORT bit: each connected wire's destination pin
 * is in its port's mask, at the wire's level, kept up to date here at every change, so a PORT or DDR
 * write leaves a driven input at its wire's level and raises no edge. An unconnected input (below) is
 * left out of the mask: its pull-up then reads 1, as on the board. */
static void hold_pin(avr_ioport_t *p, uint8_t m, int level)
{
    p->external.pull_mask |= m;
    p->external.pull_value = (uint8_t)(level ? p->external.pull_value | m : p->external.pull_value & ~m);
}

static void set_pull(struct wire *w, int level)
{
    if (!w->dst_io || cosim.unconnected[w->group])
        return;
    hold_pin(w->dst_io, (uint8_t)(1u << w->dst_bit), level);
}

static avr_ioport_t *find_port(avr_t *a, char name)
{
    avr_io_t *io;
    for (io = a->io_port; io; io = io->next)
        if (io->kind && !strcmp(io->kind, "port") && ((avr_ioport_t *)io)->name == name)
            return (avr_ioport_t *)io;
    return NULL;
}

/* One-node mode (stimulus.c): an input the stimulus drives, held at its level the same way. The
 * port and IRQ are looked up once (cosim_input), not at every change of every bit. */
struct cosim_input cosim_input(avr_t *a, char port, int bit)
{
    struct cosim_input in = {find_port(a, port), avr_io_getirq(a, AVR_IOCTL_IOPORT_GETIRQ(port), bit),
                             (uint8_t)(1u << bit)};
    if (!in.port)
        die("no port %c", port);
    return in;
}

void cosim_drive_input(const struct cosim_input *in, int level)
{
    hold_pin(in->port, in->mask, level);
    avr_raise_irq(in->irq, (uint32_t)level);
}

/* `at`: the destination's cycle */
static void apply_level_raw(struct wire *w, int level, uint64_t at)
{
    struct node *d = &cosim.nodes[w->dst];
    avr_t *a = d->avr;
    uint64_t g;

    if (w->level == level)
        return;
    w->level = level;
    if (!a) {
        /* the 8051 profiler's P0: read from its next instruction on (node51.c: never after its clock) */
        node51_set_input(w->dst_bit, level);
    } else {
        uint64_t saved;
        int rewound = 0;
        cosim_catch_up(d, at);
        saved = a->cycle;
        if (saved > at) {
            if (saved - at > cosim.wire_max_skew)
                cosim.wire_max_skew = saved - at;
            a->cycle = at; /* apply the change as of the cycle it happened (input capture) */
            rewound = 1;
            cosim.wire_rewinds++;
        }
        set_pull(w, level);
        avr_raise_irq(w->dst_irq, (uint32_t)level);
        if (w->dst == EXECUTOR && w->dst_port == 'K') {
            /* the missing PCINT2: PCIF2 is set on any change of a port K pin enabled in PCMSK2 */
            if (a->data[REG_PCMSK2] & (1u << w->dst_bit))
                avr_raise_interrupt(a, &d->pcint2);
        }
        if (exectrace_on && w->dst == EXECUTOR) {
            exectrace_wire(w->vcd_name, level, at);
            exectrace_core(a, at); /* woken by the pin change's interrupt */
        }
        if (rewound)
            a->cycle = saved;
    }
    cosim.wire_changes++;
    g = node_to_global(w->dst, at);
    vcd_value((int)(w - cosim.wires), level, g);
    TRACE("W %" PRIu64 " %s %d\n", g, w->vcd_name, level);
}

/* What the destination sees: the driven level, unless the wire is stuck (then it keeps the stuck
 * level; the driver's level is taken when it comes free: cosim_unstick). */
static void apply_level(struct wire *w, int level, uint64_t at)
{
    if (node_to_global(w->dst, at) < w->stuck_until)
        return;
    apply_level_raw(w, level, at);
}

/* The source drives `level` from its cycle `at` on. Returns 1 if the destination saw a change. */
static int src_change(struct wire *w, int level, uint64_t at)
{
    uint64_t g = node_to_global(w->src, at); /* the source's cycle, global time */

    if (cosim.unconnected[w->group]) {
        w->src_level = level; /* driven into no wire: the destination's input floats (noise below) */
        return 0;
    }
    if (g < w->stuck_until) {
        if (level != w->src_level)
            cosim.wire_stuck_masked++;
        w->src_level = level;
        return 0;
    }
    w->src_level = level;
    if (w->level == level)
        return 0;
    if (g < cosim.group_cut_until[w->group]) {
        cosim.wire_cut_dropped++;
        return 0;
    }
    apply_level(w, level, node_to_node(w->src, w->dst, at)); /* the destination's cycle of that moment */
    return 1;
}

static void on_src_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
    struct wire *w = param;
    struct node *s = &cosim.nodes[w->src];
    (void)irq;
    if (exectrace_on && w->src == EXECUTOR && (value ? 1 : 0) != w->src_level)
        exectrace_wire(w->vcd_name, value ? 1 : 0, s->avr->cycle); /* what the executor drives, whatever a fault does */
    if (src_change(w, value ? 1 : 0, s->avr->cycle))
        /* end the source's instruction batch: the destination may have woken up or must react */
        s->avr->run_cycle_count = 0;
}

/* The 8051's P1 writes queued by node51.c, onto the timecode wires (the executor has reached their
 * moment, or is asleep until after it: cosim_run_until) */
static void apply_p51_pending(uint64_t ce)
{
    int i = 0, j;
    for (; i < node51.pend_n && node_to_node(PROFILER, EXECUTOR, node51.pend[i].clock) <= ce; i++) {
        for (j = 0; j < 8; j++)
            src_change(&cosim.wires[j], (node51.pend[i].value >> j) & 1, node51.pend[i].clock);
        inject_edge(node_to_global(PROFILER, node51.pend[i].clock), node51.pend[i].value); /* (the 8051 stands at it) */
    }
    memmove(node51.pend, node51.pend + i, (size_t)(node51.pend_n - i) * sizeof node51.pend[0]);
    node51.pend_n -= i;
}

/* Re-applies the levels the sources drive (after a cut ends or a reset). */
void cosim_resync_wires(int group, int dst, uint64_t at)
{
    int i;
    if (!cosim.wired)
        return;
    for (i = 0; i < NWIRES; i++) {
        struct wire *w = &cosim.wires[i];
        if ((group >= 0 && w->group != group) || (dst >= 0 && w->dst != dst))
            continue;
        if (at < cosim.group_cut_until[w->group] || cosim.unconnected[w->group])
            continue;
        apply_level(w, w->src_level, global_to_node(w->dst, at));
    }
}

/* A stuck wire, as `cut` on a group but per bit and at a level: the destination sees `level` from
 * now; the source's changes meanwhile are only recorded (wire_stuck_masked). */
int cosim_stick(int group, int bit, int level, uint64_t until, uint64_t now)
{
    int i, n = 0;
    if (!cosim.wired)
        return 0;
    for (i = 0; i < NWIRES; i++) {
        struct wire *w = &cosim.wires[i];
        if (w->group != group || (bit >= 0 && w->index != bit))
            continue;
        w->stuck_until = until;
        apply_level_raw(w, level, global_to_node(w->dst, now));
        n++;
    }
    return n;
}

void cosim_unstick(int group, uint64_t now)
{
    int i;
    for (i = 0; i < NWIRES; i++) {
        struct wire *w = &cosim.wires[i];
        if (w->group != group || !w->stuck_until || w->stuck_until > now)
            continue;
        w->stuck_until = 0;
        if (now >= cosim.group_cut_until[w->group]) /* a cut still on: its end resyncs */
            apply_level(w, w->src_level, global_to_node(w->dst, now));
    }
}

static void add_wire(int i, int src, char sp, int sb, int dst, char dp, int db, int group, const char *name)
{
    struct wire *w = &cosim.wires[i];
    w->src = src;
    w->dst = dst;
    w->src_port = sp;
    w->dst_port = dp;
    w->src_bit = sb;
    w->dst_bit = db;
    w->group = group;
    w->level = 0;
    w->src_level = 0;
    w->vcd_name = name;
    w->index = group == GROUP_TIMECODE ? i : i - 8;
    if (cosim.p51 && src == PROFILER) {
        w->src_port = '1'; /* the 8051's P1.n (node51.c queues its writes: apply_p51_pending) */
        w->src_bit = w->index;
    }
    if (cosim.p51 && dst == PROFILER) {
        w->dst_port = '0'; /* the 8051's P0.0..3: PC0..2 the id, PC3 the strobe (docs/hardware.md) */
        w->dst_bit = w->index;
    } else {
        w->dst_irq = avr_io_getirq(cosim.nodes[dst].avr, AVR_IOCTL_IOPORT_GETIRQ(dp), db);
        w->dst_io = find_port(cosim.nodes[dst].avr, dp);
        if (!w->dst_io)
            die("no port %c", dp);
        set_pull(w, 0);
        if (!w->dst_irq)
            die("no irq for port %c%d", dp, db);
    }
    if (cosim.nodes[src].avr)
        avr_irq_register_notify(avr_io_getirq(cosim.nodes[src].avr, AVR_IOCTL_IOPORT_GETIRQ(sp), sb), on_src_pin, w);
}

/* ---- Unconnected inputs ----------------------------------------------------------------------
 * --unconnected GROUP: the group's wires are not there (a node alone on the bench, normal mode without
 * an executor, a cable left off). The source's changes go nowhere, and each destination input with
 * nothing driving it is what it is on the board: with its internal pull-up off (DDR bit 0, PORT bit
 * 0) a floating CMOS input that picks up noise and reads 0 or 1 at random; with the pull-up on (PORT
 * bit 1) it reads 1 (simavr raises it so on the PORT write, and the noise leaves it there); an output
 * (DDR bit 1) is the node's own. The bench makes the noise: a cycle timer on the destination core at
 * seeded random intervals (--seed) toggles one of its floating inputs, on average every NOISE_PIN_US
 * per pin (2.5 changes per millisecond per pin), each change reaching the core as a wire's change
 * does (the pin-change interrupt on port K, input capture on ICP5). Counted per group in the status
 * (noise_changes). The firmware's pull-ups are what keeps that noise out (profiler-fw/board/avr,
 * executor/port/avr: board.c; hil/tests/test_unconnected.py). */
#define NOISE_PIN_US 400

static uint64_t noise_next(void)
{
    uint64_t x = cosim.noise_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    cosim.noise_rng = x;
    return x;
}

void cosim_seed_noise(uint64_t seed)
{
    cosim.noise_rng = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!cosim.noise_rng)
        cosim.noise_rng = 1;
}

/* the node's inputs that float: the wires of unconnected groups ending at it */
static int noise_inputs(const struct node *n, struct wire **out)
{
    int i, k = 0;
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].dst == n->id && cosim.unconnected[cosim.wires[i].group])
            out[k++] = &cosim.wires[i];
    return k;
}

/* uniform in 1 .. 2 * mean - 1 node cycles: mean NOISE_PIN_US per pin */
static avr_cycle_count_t noise_interval(const struct node *n, int pins)
{
    uint64_t mean = (uint64_t)NOISE_PIN_US * (uint64_t)(n->avr->frequency / 1000000u) / (uint64_t)pins;
    return (avr_cycle_count_t)(1 + noise_next() % (2 * mean - 1));
}

static avr_cycle_count_t noise_tick(struct avr_t *a, avr_cycle_count_t when, void *param)
{
    struct node *n = param;
    struct wire *in[NWIRES], *w;
    int k = noise_inputs(n, in), level;
    uint8_t m;
    (void)a;
    w = in[noise_next() % (uint64_t)k];
    m = (uint8_t)(1u << w->dst_bit);
    if (!(n->avr->data[w->dst_io->r_ddr] & m)) {
        level = (n->avr->data[w->dst_io->r_port] & m) ? 1 : !w->level; /* pull-up: 1; floating: flips */
        if (level != w->level) {
            cosim.noise_changes[w->group]++;
            apply_level_raw(w, level, when);
        }
    }
    return when + noise_interval(n, k);
}

/* (re)starts the node's noise timer: at wire-up, and after each reset (avr_reset drops the timers) */
static void noise_start(struct node *n)
{
    struct wire *in[NWIRES];
    int k = n->avr && cosim.wired ? noise_inputs(n, in) : 0;
    if (k)
        avr_cycle_timer_register(n->avr, noise_interval(n, k), noise_tick, n);
}

/* wires: timecode (profiler PORTA -> executor PORTK), event (executor PC0..3 -> profiler) */
void cosim_wire_up(void)
{
    static const char *const tc_names[8] = {"timecode0", "timecode1", "timecode2", "timecode3",
                                            "timecode4", "timecode5", "timecode6", "timecode7"};
    int i;
    for (i = 0; i < 8; i++)
        add_wire(i, PROFILER, 'A', i, EXECUTOR, 'K', i, GROUP_TIMECODE, tc_names[i]);
    add_wire(8, EXECUTOR, 'C', 0, PROFILER, 'C', 0, GROUP_EVENT, "event_id0");
    add_wire(9, EXECUTOR, 'C', 1, PROFILER, 'C', 1, GROUP_EVENT, "event_id1");
    add_wire(10, EXECUTOR, 'C', 2, PROFILER, 'C', 2, GROUP_EVENT, "event_id2");
    add_wire(11, EXECUTOR, 'C', 3, PROFILER, 'L', 1, GROUP_EVENT, "strobe");
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].dst_irq)
            avr_raise_irq(cosim.wires[i].dst_irq, 0);
    cosim.wired = 1;
    if (cosim.p51) {
        /* the 8051 leaves reset with its P1 latch 0xFF (quasi-bidirectional: the pins high): so the
         * executor sees it from cycle 0 */
        node51.pend[0].clock = 0;
        node51.pend[0].value = node51.p1;
        node51.pend_n = 1;
        apply_p51_pending(NEVER);
    }
    noise_start(&cosim.nodes[PROFILER]);
    noise_start(&cosim.nodes[EXECUTOR]);
}

/* ---- stepping ----------------------------------------------------------------------------- */

static uint64_t next_timer(avr_t *a)
{
    avr_cycle_timer_slot_p s = a->cycle_timers.timer;
    uint64_t t = NEVER;
    for (; s; s = s->next)
        if (s->when < t)
            t = s->when;
    return t;
}

/* The cycle at which a core next has something to do. */
static uint64_t eff_clock(struct node *n)
{
    avr_t *a = n->avr;
    if (!a)
        return n->id == PROFILER && cosim.p51 ? node51_eff_clock() : NEVER; /* else one-node mode: not there */
    if (a->state == cpu_Running)
        return a->cycle;
    if (a->state == cpu_Sleeping) {
        uint64_t t;
        if (avr_has_pending_interrupts(a))
            return a->cycle;
        t = next_timer(a);
        return t > a->cycle ? t : a->cycle;
    }
    return NEVER; /* done, crashed, stopped: only a reset brings it back */
}

/* ---- simavr 1.6 quirk: the watchdog reset ----------------------------------------------------
 * When the watchdog times out with WDE set and WDIE clear, simavr 1.6 (avr_watchdog_timer) does not
 * reset the core itself: it saves avr->run and puts a callback there that calls avr_reset on the next
 * avr_run(); avr_reset then runs the watchdog's own reset hook, which puts avr->run back, sets WDRF in
 * MCUSR (after avr_reset has cleared the I/O registers) and restarts the watchdog at its shortest
 * period (WDE on, 16 ms), as the silicon does. The two-node loop steps cores with avr_run_one and
 * never calls avr->run, so there the watchdog never bit: measured with hil/bench/tests/wdt.c (15 ms,
 * not fed), one "MCUSR 01" and nothing after in 0.1 s. Alone (simavr's avr_run), simavr reset the core
 * every 24.3 ms (16.0 ms = 256,000 cycles of watchdog plus the image's start) with "MCUSR 08", but
 * behind the bench's back: no reset counted, the UART bridge's receive timer lost. So the bench looks
 * for the swapped callback after every step and does the reset itself, the same reset as the reset
 * command (wires, UART bridge) counted as a watchdog reset; simavr's hook still sets WDRF. */
static void reset_node(int id, uint64_t at, const char *cause);

static void watchdog_reset(struct node *n)
{
    uint64_t at = n->avr->cycle;
    n->wdt_resets++;
    logmsg("%s: watchdog reset at cycle %" PRIu64, n->name, at);
    reset_node(n->id, at, "watchdog"); /* avr_reset: simavr's watchdog hook restores avr->run, sets WDRF */
    n->avr->run = n->run_fn;     /* (already so; the bench never runs a swapped callback) */
    if (cosim.after_reset)
        cosim.after_reset(n->id);
    TRACE("R %" PRIu64 " %s watchdog\n", node_to_global(n->id, at), n->name);
}

static inline void check_watchdog(struct node *n)
{
    if (n->avr->run != n->run_fn)
        watchdog_reset(n);
}

static void step(struct node *n, uint64_t limit)
{
    avr_t *a = n->avr;
    int traced = exectrace_on && n->id == EXECUTOR;
    if (a->state == cpu_Sleeping) {
        if (!avr_has_pending_interrupts(a)) {
            uint64_t t = next_timer(a);
            if (t != NEVER && t > a->cycle) {
                n->sleep_cycles += t - a->cycle;
                a->cycle = t;
            }
        }
        avr_cycle_timer_process(a);
        if (traced)
            exectrace_core(a, a->cycle); /* a timer's interrupt woke it */
        if (a->run != n->run_fn) {
            watchdog_reset(n);
            return;
        }
        avr_service_interrupts(a);
        return;
    }
    if (a->state != cpu_Running)
        return;
    /* let simavr run several instructions in one call while they start before `limit` */
    a->run_cycle_count = limit > a->cycle ? limit - a->cycle : 0;
    {
        uint64_t t = next_timer(a);
        if (t != NEVER && t > a->cycle && t - a->cycle < a->run_cycle_count)
            a->run_cycle_count = t - a->cycle;
    }
    {
        avr_flashaddr_t new_pc;
        if (traced) {
            /* The executor trace looks at pxCurrentTCB after every instruction (exectrace.c), so the
             * batch runs here one instruction at a time, as simavr's own loop (avr_run_one) would run
             * it: on while the next instruction starts before the bound above, the core runs and no
             * interrupt is pending; a timer registered meanwhile ends it (simavr then sets
             * run_cycle_count to at most run_cycle_limit, 1: here it is no longer 0). The --trace
             * records of a run are the same with and without the executor trace
             * (hil/tests/test_exectrace.py). Measured cost: docs/bench.md, "Executor trace". */
            uint64_t bound = a->cycle + a->run_cycle_count;
            for (;;) {
                a->run_cycle_count = 0;
                new_pc = avr_run_one(a);
                exectrace_insn(a);
                if (a->state != cpu_Running || a->interrupt_state || a->cycle >= bound || a->run_cycle_count)
                    break;
                a->pc = new_pc;
            }
            exectrace_core(a, a->cycle); /* SLEEP: asleep from the cycle after it */
        } else {
            new_pc = avr_run_one(a);
        }
        avr_cycle_timer_process(a);
        a->pc = new_pc;
        if (traced)
            exectrace_core(a, a->cycle); /* a timer due then woke it at once */
    }
    if (a->run != n->run_fn) {
        watchdog_reset(n);
        return;
    }
    if (a->state == cpu_Sleeping) {
        if (!a->sreg[S_I]) {
            logmsg("%s: sleeping with interrupts off at cycle %" PRIu64 ": halted", n->name, (uint64_t)a->cycle);
            a->state = cpu_Done;
            if (traced)
                exectrace_core(a, a->cycle);
            return;
        }
        a->cycle += 1;
        n->sleep_cycles += 1;
    }
    if (a->state == cpu_Running || a->state == cpu_Sleeping)
        avr_service_interrupts(a);
    if (a->state == cpu_Crashed) {
        logmsg("%s: crashed at cycle %" PRIu64 " pc=0x%x", n->name, (uint64_t)a->cycle, a->pc);
        if (traced)
            exectrace_core(a, a->cycle);
    }
}

/* One-node mode: one core needs no ordering against another, so it runs in simavr's own loop
 * (avr_run, with simavr's default batching), as the former one-node harnesses ran it: their figures
 * depend on its sleep stepping (a core asleep until a timer resumes one cycle after that timer, so
 * e.g. the executor's ISR dispatch measures 22 cycles here and 21 in the two-node loop below). */
static void run_alone(struct node *n, uint64_t target)
{
    avr_t *a = n->avr;
    uint64_t node_target = global_to_node(n->id, target);
    while (a->cycle < node_target && a->state != cpu_Done && a->state != cpu_Crashed) {
        if (a->cycle < cosim.itrace_until)
            TRACE("P %" PRIu64 " %x %d\n", (uint64_t)a->cycle, a->pc, a->sreg[S_I]);
        check_watchdog(n); /* before simavr's swapped callback would reset it unseen */
        avr_run(a);
    }
    if (a->state == cpu_Crashed)
        logmsg("%s: crashed at cycle %" PRIu64 " pc=0x%x", n->name, (uint64_t)a->cycle, a->pc);
    cosim.now_cycles = target;
    cosim_catch_up(n, node_target);
}

/* Runs both cores until each has reached the run target (its next action is at or after it). The
 * target starts at `target`; lockstep frame mode lowers it while running (cosim.run_target), when a
 * frame delimiter will be complete earlier: every core is then still at or before that cycle (they
 * are within one instruction of each other, and a byte completes a character time after its
 * write). The target is global; each core runs to its own cycle of it (tp, te), and "the lower
 * clock" is the earlier moment (cosim_not_later; with equal crystals, the lower count). */
void cosim_run_until(uint64_t target)
{
    struct node *p = &cosim.nodes[PROFILER], *e = &cosim.nodes[EXECUTOR];
    uint64_t tp = 0, te = 0, converted = 0;
    int have = 0;
    if (!cosim.wired) {
        run_alone(p->avr ? p : e, target);
        return;
    }
    cosim.run_target = target;
    for (;;) {
        uint64_t cp = eff_clock(p), ce = eff_clock(e);
        if (node51.pend_n && ce >= node_to_node(PROFILER, EXECUTOR, node51.pend[0].clock)) {
            /* the executor has reached the 8051's P1 write (or sleeps until after it): onto the wires */
            apply_p51_pending(ce);
            continue;
        }
        target = cosim.run_target;
        if (!have || target != converted) {
            tp = global_to_node(PROFILER, target);
            te = global_to_node(EXECUTOR, target);
            converted = target;
            have = 1;
        }
        /* nothing recorded from now on is earlier than the lower of the two clocks (exectrace.c), on the
         * executor's clock: a pin change the profiler makes at cp or later arrives at or after this */
        if (exectrace_held) {
            uint64_t cpe = node_to_node(PROFILER, EXECUTOR, cp);
            exectrace_flush(cpe < ce ? cpe : ce);
        }
        if (cp >= tp && ce >= te)
            break;
        if (cosim_not_later(cp, ce)) {
            /* ties: the profiler first; it runs the instructions that start at or before the
             * executor's clock (the last profiler cycle not later than ce) and the target */
            uint64_t lim = node_to_node_down(EXECUTOR, PROFILER, ce);
            if (cosim.p51)
                node51_run((lim < tp ? lim : tp) + 1); /* stops after a P1 write: applied above */
            else
                step(p, (lim < tp ? lim : tp) + 1);
        } else {
            /* the executor runs those that start before the profiler's clock (the first executor
             * cycle at or after cp) and the target */
            uint64_t lim = node_to_node(PROFILER, EXECUTOR, cp);
            step(e, lim < te ? lim : te);
        }
    }
    cosim.now_cycles = target;
    if (exectrace_held)
        exectrace_flush(te);
    /* lazily sleeping or halted cores: bring their clocks up (nothing happens in between) */
    cosim_catch_up(p, tp);
    cosim_catch_up(e, te);
}

/* ---- nodes: load, reset ------------------------------------------------------------------- */

static void no_sleep(avr_t *a, avr_cycle_count_t howlong)
{
    (void)a;
    (void)howlong; /* never sleep in wall time: pacing is the bench's, not simavr's */
}

/* ---- simavr 1.6 quirk: TIFRn writes ---------------------------------------------------------
 * On the silicon a TIFRn flag is cleared by writing a 1 to it; bits written 0 are left alone. simavr
 * 1.6's handler (avr_timer_write_pending) does not write the value and then clears every flag of the
 * timer that is set: `TIFR5 = _BV(ICF5)` also clears a pending TOV5 (and OCF5A..C) and withdraws the
 * pending interrupt, so that interrupt is lost. Seen on the profiler: an edge captured while a Timer5
 * overflow was pending (the overflow fell inside the tick ISR) ran the capture ISR first (higher
 * priority), its `TIFR5 = _BV(ICF5)` took TOV5 with it, the overflow ISR never ran, and every later
 * 32-bit timestamp was 65536 counts short (a RESULT in the previous tick; the next tick 65536 cycles
 * late). Later simavr fixed it the same way as here. The bench installs this write-1-to-clear handler
 * on every timer's TIFR in place of simavr's. */
static void tifr_write(avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    avr_timer_t *p = param;
    int i;

    if (p->overflow.raised.reg == addr && avr_regbit_from_value(avr, p->overflow.raised, v))
        avr_clear_interrupt(avr, &p->overflow);
    if (p->icr.raised.reg == addr && avr_regbit_from_value(avr, p->icr.raised, v))
        avr_clear_interrupt(avr, &p->icr);
    for (i = 0; i < AVR_TIMER_COMP_COUNT; i++)
        if (p->comp[i].interrupt.raised.reg == addr && avr_regbit_from_value(avr, p->comp[i].interrupt.raised, v))
            avr_clear_interrupt(avr, &p->comp[i].interrupt);
}

static void fix_tifr_writes(struct node *n)
{
    avr_t *a = n->avr;
    avr_io_t *io;

    for (io = a->io_port; io; io = io->next) {
        avr_timer_t *p = (avr_timer_t *)io;
        avr_io_addr_t r;
        if (strcmp(io->kind, "timer") != 0)
            continue;
        r = p->overflow.raised.reg;
        /* simavr registered its own handler there, with the timer as its parameter */
        if (!r || a->io[AVR_DATA_TO_IO(r)].w.param != p)
            die("%s: timer %c: TIFR write handler not where simavr 1.6 puts it", n->name, p->name);
        a->io[AVR_DATA_TO_IO(r)].w.c = tifr_write;
    }
}

void cosim_load_node(int id, const char *elf, int alone)
{
    struct node *n = &cosim.nodes[id];
    elf_firmware_t fw;

    n->id = id;
    n->name = node_names[id];
    n->elf = elf;
    if (id == PROFILER && cosim.p51) { /* (main.c refused it alone or not built) */
        node51_load(elf);
        return;
    }
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(n->elf, &fw) != 0)
        die("cannot read %s image %s", n->name, n->elf);
    n->avr = avr_make_mcu_by_name("atmega2560");
    if (!n->avr)
        die("simavr has no atmega2560");
    avr_init(n->avr);
    n->avr->frequency = F_CPU;
    n->avr->sleep = no_sleep;
    n->avr->log = 1;
    /* 1: a cycle timer registered in the middle of a batch ends the batch (simavr re-clamps
     * run_cycle_count to run_cycle_limit then), so a batch never runs past the bound step() set;
     * alone, simavr's own loop keeps its default */
    if (!alone)
        n->avr->run_cycle_limit = 1;
    avr_load_firmware(n->avr, &fw);
    n->avr->frequency = F_CPU; /* whatever the ELF says */
    if (id == EXECUTOR && !alone)
        exectrace_attach(n->avr, elf); /* its interrupt table is watched from the start (exectrace.c) */
    n->run_fn = n->avr->run;
    fix_tifr_writes(n);
    if (n->id == EXECUTOR) {
        n->pcint2.vector = PCINT2_VECTOR;
        n->pcint2.enable = (avr_regbit_t)AVR_IO_REGBIT(REG_PCICR, 2);
        n->pcint2.raised = (avr_regbit_t)AVR_IO_REGBIT(REG_PCIFR, 2);
        avr_register_vector(n->avr, &n->pcint2);
    }
}

/* simavr 1.6 quirk: a write to a port's PORT register raises every pin of the port with the PORT
 * bit, input pins included, so the PIN register then reads the PORT value, not what the wire drives.
 * At power-on both are 0 and nothing shows; after a reset mid-run the executor's start-up writes
 * PORTK = 0 and its timecode inputs read 0 until each bit changes again: on the bench its count went
 * 0, 5, 6, 7 ... and came right only 11 ticks later (measured: 'reset executor' at tick 21). A real
 * pin reads the wire. So the bench drives the inputs again once the node has started up (REAPPLY_S
 * after the reset, long after its port set-up): the node sees one change to the wire's real level. */
#define REAPPLY_S 0.010

/* Drives an input pin to the wire's level even where simavr believes it is there already: a pin IRQ
 * keeps its value across avr_reset and simavr filters a raise to the same value, so the pin is first
 * raised to the other level (no interrupt is raised for that step: the node sees one change). */
static void force_input(struct wire *w, uint64_t at)
{
    int lv = w->level;
    set_pull(w, !lv);
    avr_raise_irq(w->dst_irq, (uint32_t)!lv);
    w->level = !lv;
    apply_level_raw(w, lv, at);
}

static avr_cycle_count_t reapply_inputs(struct avr_t *a, avr_cycle_count_t when, void *param)
{
    struct node *n = param;
    int i;
    (void)a;
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].dst == n->id && !cosim.unconnected[cosim.wires[i].group])
            force_input(&cosim.wires[i], when);
    return 0; /* once */
}

void cosim_reset_node(int id, uint64_t at)
{
    if (id == PROFILER && cosim.p51) {
        /* the 8051's RST pin: its clock goes on; P1 and P2 latches to 0xFF, which node51.c sees as writes
         * (P1: queued for the wires, high as the quasi-bidirectional pins go); its P0 inputs keep what
         * the executor drives (node51.p0, outside the core) */
        cosim.nodes[id].resets++;
        node51_reset();
        logmsg("profiler (8051) reset at clock %" PRIu64, node51_clock());
        (void)at;
        return;
    }
    reset_node(id, global_to_node(id, at), "reset");
}

/* at: the node's own cycle; cause: "reset" (the command) or "watchdog", for the executor trace */
static void reset_node(int id, uint64_t at, const char *cause)
{
    struct node *n = &cosim.nodes[id];
    avr_t *a = n->avr;
    int i;
    cosim_catch_up(n, at);
    at = a->cycle;
    avr_reset(a);
    a->cycle = at;
    if (id == EXECUTOR && cosim.wired)
        exectrace_reset(at, cause);
    if (cosim.wired)
        a->run_cycle_limit = 1;
    n->resets++;
    if (!cosim.wired) {
        logmsg("%s reset at cycle %" PRIu64 " (one-node mode: the stimulus timers are gone)", n->name, at);
        return;
    }
    /* The node's outputs are inputs again after reset: its lines fall to 0. */
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].src == n->id) {
            if (exectrace_on && id == EXECUTOR && cosim.wires[i].src_level)
                exectrace_wire(cosim.wires[i].vcd_name, 0, at);
            cosim.wires[i].src_level = 0;
            if (node_to_global(id, at) >= cosim.group_cut_until[cosim.wires[i].group] &&
                !cosim.unconnected[cosim.wires[i].group])
                apply_level(&cosim.wires[i], 0, node_to_node(id, cosim.wires[i].dst, at));
        }
    /* Its input pins see what the other node drives. */
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].dst == n->id && !cosim.unconnected[cosim.wires[i].group])
            force_input(&cosim.wires[i], at); /* the level it sees, stuck or not */
    avr_cycle_timer_register(a, (avr_cycle_count_t)(REAPPLY_S * a->frequency), reapply_inputs, n);
    noise_start(n); /* avr_reset dropped its timer */
    logmsg("%s reset at cycle %" PRIu64, n->name, at);
}

/* The reset command is the RESET pin: on the silicon an external reset sets EXTRF in MCUSR, which
 * avr_reset (it clears the I/O registers) leaves at 0. Then the rest of the node's reset (the UART
 * bridge), as a watchdog reset does. */
void cosim_external_reset(int id, uint64_t at)
{
    avr_t *a = cosim.nodes[id].avr;
    cosim_reset_node(id, at);
    if (a)
        avr_regbit_set(a, a->reset_flags.extrf); /* (the 87C51 has no reset flags) */
    if (cosim.after_reset)
        cosim.after_reset(id);
}

int cosim_present(int id)
{
    return cosim.nodes[id].avr != NULL || (id == PROFILER && node51.on);
}

uint64_t cosim_node_cycle(int id)
{
    return cosim.nodes[id].avr ? cosim.nodes[id].avr->cycle : id == PROFILER && node51.on ? node51_clock() : 0;
}

const char *cosim_state_name(int s)
{
    switch (s) {
    case cpu_Running: return "running";
    case cpu_Sleeping: return "sleeping";
    case cpu_Done: return "halted";
    case cpu_Crashed: return "crashed";
    default: return "stopped";
    }
}
