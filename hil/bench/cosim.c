/*
 * Co-simulation of the two nodes on one virtual clock. A node is a core behind the node interface
 * (node.h): an ATmega2560 on simavr (node_avr.c) or the 87C51 profiler on ucsim (node51.c); nothing
 * here asks which.
 *
 * Clock. Both cores start at cycle 0. The core whose clock is earlier always runs next (ties: the
 * profiler), so when a core executes an instruction that starts at cycle a, the other core has
 * executed exactly its instructions that started at or before a and none after. A core runs more
 * than one instruction per turn only while its instructions start before the other core's clock
 * (node.h: step). A sleeping core is not stepped at all until its next event (an interrupt source of
 * its own: timer, UART, bench input) or until the other core changes one of its input pins: its
 * clock is then brought up to the moment of the change (nothing of its own could happen before that
 * moment, its next event is later).
 *
 * Wires (fixed pin map, docs/hardware.md; each node's board names its pins, node.h): the profiler's
 * timecode port (an AVR's PA0..7, the 8051's P1) -> executor PK0..7 ("timecode"), executor PC0..2 ->
 * the profiler's event id inputs and executor PC3 -> its strobe input (an AVR's PL1 = ICP5, the 8051's
 * P0.3) ("event"). A pin change made by an instruction starting at cycle a is applied to the other core
 * as of cycle a: if that core has already run past a (by at most the length of its last instruction),
 * the node applies it with its clock set back to a (timer input capture latches the count of cycle a)
 * and counts the rewind here; its next instruction sees the new level. A node whose port write takes
 * effect after its clock (the 8051: at the end of the instruction) holds the change back until the
 * other core has reached that moment (node.h: held_out), and it is then applied the same way.
 *
 * Crystal offsets (cosim.h; docs/bench.md, "Crystal offsets"). With --ppm-profiler / --ppm-executor
 * each core's clock counts its own crystal's cycles, K_n of them per GLOBAL_K global cycles (the 8051's
 * 11.0592 MHz is one more factor in K_n). "The earlier clock" above: the profiler's cycle cp is not
 * later than the executor's ce when cp * K_e <= ce * K_p (exact, 128-bit), and a pin change at source
 * cycle a arrives at destination cycle ceil(a * K_dst / K_src), the first cycle of the destination at
 * or after that moment (a rewind as above when the destination is past it). A run target and every
 * time the rest of the bench holds (cuts, stuck wires, resets, the control commands) are global cycles,
 * converted here; --trace and the VCD record global cycles, the executor trace the executor's own.
 * Both ppm 0 and two AVRs (the default): every conversion is the identity, the same stepping cycle for
 * cycle.
 */
#define _GNU_SOURCE
#include "cosim.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "exectrace.h"
#include "trace.h"
#include "vcd.h"

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

int cosim_present(int id)
{
    return cosim.nodes[id] != NULL;
}

/* ---- pin delivery ------------------------------------------------------------------------ */

/* `at`: the destination's cycle */
static void apply_level_raw(struct wire *w, int level, uint64_t at)
{
    struct node *d = cosim.nodes[w->dst];
    uint64_t g, back;

    if (w->level == level)
        return;
    w->level = level;
    if (exectrace_on && w->dst == EXECUTOR)
        exectrace_wire(w->vcd_name, level, at);
    back = d->ops->set_input(d, w->dst_in, level, at, !cosim.unconnected[w->group]);
    if (back) {
        if (back > cosim.wire_max_skew)
            cosim.wire_max_skew = back;
        cosim.wire_rewinds++;
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

/* the source node's pin changed (node.h: watch_pin); 1: the destination saw it, the source ends its batch */
static int on_src_pin(void *ctx, int level, uint64_t at)
{
    struct wire *w = ctx;
    if (exectrace_on && w->src == EXECUTOR && level != w->src_level)
        exectrace_wire(w->vcd_name, level, at); /* what the executor drives, whatever a fault does */
    return src_change(w, level, at);
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

static void add_wire(int i, int src, struct node_pin sp, int dst, struct node_pin dp, int group, const char *name)
{
    struct wire *w = &cosim.wires[i];
    struct node *s = cosim.nodes[src], *d = cosim.nodes[dst];
    w->src = src;
    w->dst = dst;
    w->src_pin = sp;
    w->dst_pin = dp;
    w->group = group;
    w->level = 0;
    w->src_level = 0;
    w->vcd_name = name;
    w->index = group == GROUP_TIMECODE ? i : i - 8;
    w->dst_in = d->ops->input(d, dp);
    s->ops->watch_pin(s, sp, on_src_pin, w);
}

/* ---- Unconnected inputs ----------------------------------------------------------------------
 * --unconnected GROUP: the group's wires are not there (a node alone on the bench, normal mode without
 * an executor, a cable left off). The source's changes go nowhere, and each destination input with
 * nothing driving it is what it is on the board: with its internal pull-up off (DDR bit 0, PORT bit
 * 0) a floating CMOS input that picks up noise and reads 0 or 1 at random; with the pull-up on (PORT
 * bit 1) it reads 1 (simavr raises it so on the PORT write, and the noise leaves it there); an output
 * (DDR bit 1) is the node's own (node.h: input_mode). The bench makes the noise: a timer of the destination node at
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
static uint64_t noise_interval(const struct node *n, int pins)
{
    uint64_t mean = (uint64_t)NOISE_PIN_US * (n->hz / 1000000u) / (uint64_t)pins;
    return 1 + noise_next() % (2 * mean - 1);
}

static uint64_t noise_tick(struct node *n, uint64_t when, void *ctx)
{
    struct wire *in[NWIRES], *w;
    int k = noise_inputs(n, in), level;
    enum pin_mode mode;
    (void)ctx;
    w = in[noise_next() % (uint64_t)k];
    mode = n->ops->input_mode(n, w->dst_in);
    if (mode != PIN_OUTPUT) {
        level = mode == PIN_PULLUP ? 1 : !w->level; /* pull-up: 1; floating: flips */
        if (level != w->level) {
            cosim.noise_changes[w->group]++;
            apply_level_raw(w, level, when);
        }
    }
    return when + noise_interval(n, k);
}

/* (re)starts the node's noise timer: at wire-up, and after each reset (a reset drops the node's timers) */
static void noise_start(struct node *n)
{
    struct wire *in[NWIRES];
    int k = cosim.wired ? noise_inputs(n, in) : 0;
    if (k)
        n->ops->timer(n, n->ops->cycle(n) + noise_interval(n, k), noise_tick, n);
}

/* A node's output changes it held back (node.h: held_out) go onto the wires once the other node `d`
 * has reached their moment (or sleeps until after it): its next event at `cd` (its own cycle).
 * Returns 1 if it released any. */
static int release_held(struct node *s, struct node *d, uint64_t cd)
{
    uint64_t h = s->ops->held_out(s);
    if (h == NEVER || cd < node_to_node(s->id, d->id, h))
        return 0;
    s->ops->release_out(s, node_to_node_down(d->id, s->id, cd)); /* the last source cycle not later than cd */
    return 1;
}

/* wires: timecode (profiler -> executor PORTK), event (executor PC0..3 -> profiler) */
void cosim_wire_up(void)
{
    static const char *const tc_names[8] = {"timecode0", "timecode1", "timecode2", "timecode3",
                                            "timecode4", "timecode5", "timecode6", "timecode7"};
    static const char *const ev_names[4] = {"event_id0", "event_id1", "event_id2", "strobe"};
    struct node *p = cosim.nodes[PROFILER], *e = cosim.nodes[EXECUTOR];
    int i;
    for (i = 0; i < 8; i++)
        add_wire(i, PROFILER, p->pins->timecode[i], EXECUTOR, e->pins->timecode[i], GROUP_TIMECODE, tc_names[i]);
    for (i = 0; i < 4; i++)
        add_wire(8 + i, EXECUTOR, e->pins->event[i], PROFILER, p->pins->event[i], GROUP_EVENT, ev_names[i]);
    /* every input at the wires' power-on level 0, held there where a wire drives it */
    for (i = 0; i < NWIRES; i++) {
        struct wire *w = &cosim.wires[i];
        struct node *d = cosim.nodes[w->dst];
        d->ops->preset_input(d, w->dst_in, 0, !cosim.unconnected[w->group]);
    }
    cosim.wired = 1;
    /* what a node's pins did before there were wires (the 8051's reset latch 0xFF): the other node sees
     * it from its first cycle */
    release_held(p, e, NEVER);
    release_held(e, p, NEVER);
    noise_start(p);
    noise_start(e);
}

/* ---- stepping ----------------------------------------------------------------------------- */

/* Runs both cores until each has reached the run target (its next event is at or after it). The
 * target starts at `target`; lockstep frame mode lowers it while running (cosim.run_target), when a
 * frame delimiter will be complete earlier: every core is then still at or before that cycle (they
 * are within one instruction of each other, and a byte completes a character time after its
 * write). The target is global; each core runs to its own cycle of it (tp, te), and "the earlier
 * clock" is the earlier moment (cosim_not_later; with equal crystals, the lower count). One-node mode:
 * the node alone (node.h: run_alone). */
void cosim_run_until(uint64_t target)
{
    struct node *p = cosim.nodes[PROFILER], *e = cosim.nodes[EXECUTOR];
    uint64_t tp = 0, te = 0, converted = 0;
    int have = 0;
    if (!cosim.wired) {
        struct node *n = p ? p : e;
        uint64_t node_target = global_to_node(n->id, target);
        n->ops->run_alone(n, node_target);
        cosim.now_cycles = target;
        n->ops->catch_up(n, node_target);
        return;
    }
    cosim.run_target = target;
    for (;;) {
        uint64_t cp = p->ops->next_event(p), ce = e->ops->next_event(e);
        if (release_held(p, e, ce) || release_held(e, p, cp))
            continue; /* the other core has reached a held change: it is on the wires now */
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
            p->ops->step(p, (lim < tp ? lim : tp) + 1);
        } else {
            /* the executor runs those that start before the profiler's clock (the first executor
             * cycle at or after cp) and the target */
            uint64_t lim = node_to_node(PROFILER, EXECUTOR, cp);
            e->ops->step(e, lim < te ? lim : te);
        }
    }
    cosim.now_cycles = target;
    if (exectrace_held)
        exectrace_flush(te);
    /* lazily sleeping or halted cores: bring their clocks up (nothing happens in between) */
    p->ops->catch_up(p, tp);
    e->ops->catch_up(e, te);
}

/* ---- nodes: add, reset -------------------------------------------------------------------- */

static void reset_node(struct node *n, uint64_t at, const char *cause);

/* the node's watchdog (node.h: self_reset): the reset command's reset, counted by the node */
static void self_reset(struct node *n, uint64_t at, const char *cause)
{
    reset_node(n, at, cause);
    if (cosim.after_reset)
        cosim.after_reset(n->id);
    TRACE("R %" PRIu64 " %s %s\n", node_to_global(n->id, at), n->name, cause);
}

void cosim_add_node(struct node *n)
{
    if (n->hz % RATIO_HZ)
        die("%s: a %" PRIu64 " Hz clock is not a multiple of %llu Hz (cosim.h)", n->name, n->hz, RATIO_HZ);
    cosim.nodes[n->id] = n;
    cosim.ratio[n->id] = n->hz / RATIO_HZ;
    set_k(n->id);
    n->self_reset = self_reset;
}

/* After a reset (a node whose reset floats its pins, node.h: an AVR). simavr 1.6 quirk: a write to a
 * port's PORT register raises every pin of the port with the PORT
 * bit, input pins included, so the PIN register then reads the PORT value, not what the wire drives.
 * At power-on both are 0 and nothing shows; after a reset mid-run the executor's start-up writes
 * PORTK = 0 and its timecode inputs read 0 until each bit changes again: on the bench its count went
 * 0, 5, 6, 7 ... and came right only 11 ticks later (measured: 'reset executor' at tick 21). A real
 * pin reads the wire. So the bench drives the inputs again once the node has started up (REAPPLY_S
 * after the reset, long after its port set-up): the node sees one change to the wire's real level. */
#define REAPPLY_S 0.010

/* Drives an input pin to the wire's level even where the node believes it is there already (a pin
 * IRQ keeps its value across simavr's reset and simavr filters a raise to the same value), so the pin
 * is first preset to the other level (no interrupt is raised for that step: the node sees one change). */
static void force_input(struct wire *w, uint64_t at)
{
    struct node *d = cosim.nodes[w->dst];
    int lv = w->level;
    d->ops->preset_input(d, w->dst_in, !lv, 1);
    w->level = !lv;
    apply_level_raw(w, lv, at);
}

static uint64_t reapply_inputs(struct node *n, uint64_t when, void *ctx)
{
    int i;
    (void)ctx;
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].dst == n->id && !cosim.unconnected[cosim.wires[i].group])
            force_input(&cosim.wires[i], when);
    return 0; /* once */
}

/* at: the node's own cycle; cause: "reset" (the command: the RESET pin) or "watchdog" */
static void reset_node(struct node *n, uint64_t at, const char *cause)
{
    int i, id = n->id;
    at = n->ops->reset(n, at, cause);
    if (!cosim.wired || !n->reset_floats_pins)
        return;
    /* The node's outputs are inputs again after reset: its lines fall to 0. */
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].src == id) {
            if (exectrace_on && id == EXECUTOR && cosim.wires[i].src_level)
                exectrace_wire(cosim.wires[i].vcd_name, 0, at);
            cosim.wires[i].src_level = 0;
            if (node_to_global(id, at) >= cosim.group_cut_until[cosim.wires[i].group] &&
                !cosim.unconnected[cosim.wires[i].group])
                apply_level(&cosim.wires[i], 0, node_to_node(id, cosim.wires[i].dst, at));
        }
    /* Its input pins see what the other node drives. */
    for (i = 0; i < NWIRES; i++)
        if (cosim.wires[i].dst == id && !cosim.unconnected[cosim.wires[i].group])
            force_input(&cosim.wires[i], at); /* the level it sees, stuck or not */
    n->ops->timer(n, at + (uint64_t)(REAPPLY_S * (double)n->hz), reapply_inputs, NULL);
    noise_start(n); /* the reset dropped its timer */
}

/* The reset command is the RESET pin (node.h: reset); then the rest of the node's reset (the UART
 * bridge), as a watchdog reset does. */
void cosim_external_reset(int id, uint64_t at)
{
    reset_node(cosim.nodes[id], global_to_node(id, at), "reset");
    if (cosim.after_reset)
        cosim.after_reset(id);
}

/* ---- what the rest of the bench reads and sets ---------------------------------------------- */

int cosim_wired(void)
{
    return cosim.wired;
}

const struct wire *cosim_wires(void)
{
    return cosim.wires;
}

int cosim_ppm(int id)
{
    return cosim.ppm[id];
}

void cosim_cut_group(int group, uint64_t until)
{
    cosim.group_cut_until[group] = until;
}

void cosim_stop_by(uint64_t at)
{
    if (at < cosim.run_target)
        cosim.run_target = at;
}

void cosim_leave_unconnected(int group)
{
    cosim.unconnected[group] = 1;
}

int cosim_unconnected(int group)
{
    return cosim.unconnected[group];
}

void cosim_on_reset(void (*fn)(int id))
{
    cosim.after_reset = fn;
}

void cosim_noise_json(struct sbuf *b)
{
    sb_printf(b, "\"unconnected\":[%s%s%s],\"noise_changes\":{\"%s\":%" PRIu64 ",\"%s\":%" PRIu64 "}",
              cosim.unconnected[0] ? "\"timecode\"" : "", cosim.unconnected[0] && cosim.unconnected[1] ? "," : "",
              cosim.unconnected[1] ? "\"event\"" : "", group_names[0], cosim.noise_changes[0], group_names[1],
              cosim.noise_changes[1]);
}

void cosim_wires_json(struct sbuf *b)
{
    sb_printf(b, "\"wires\":{\"changes\":%" PRIu64 ",\"cut_dropped\":%" PRIu64 ",\"rewinds\":%" PRIu64
                 ",\"max_rewind_cycles\":%" PRIu64 ",\"stuck_changes_masked\":%" PRIu64 "}",
              cosim.wire_changes, cosim.wire_cut_dropped, cosim.wire_rewinds, cosim.wire_max_skew,
              cosim.wire_stuck_masked);
}
