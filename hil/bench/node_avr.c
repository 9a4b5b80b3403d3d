/*
 * The AVR node: an ATmega2560 image (the very .elf one would flash) on simavr 1.6, as a bench node
 * (node.h). The chip and its clock are set here (16 MHz; AVR_MCU() metadata in the image is ignored).
 *
 * Stepping. In two-node mode the co-simulation (cosim.c) gives the core turns: `step` runs the
 * instructions that start before a limit, in simavr's batches (run_cycle_count) cut at the limit and
 * at the core's next cycle timer, one at a time while the executor trace watches it. A sleeping core
 * is not stepped: its clock jumps to its next cycle timer, or is brought up lazily (`catch_up`) when
 * the other core changes one of its inputs (nothing of its own could happen before that moment). A
 * wire's change that the core has already run past (by at most its last instruction) is applied with
 * its clock set back to that cycle, so timer input capture (ICR5) latches the count of that cycle,
 * and then put back; its next instruction sees the new level. Alone (one-node mode) the core runs in
 * simavr's own loop (`run_alone`).
 *
 * simavr 1.6 has quirks the bench corrects here, each where it acts: PORT writes raise driven inputs
 * ("PORT writes"), TIFRn writes clear every flag ("TIFRn writes"), the watchdog reset is never done
 * in the two-node loop ("the watchdog reset"), port K has no pin-change interrupt (PCINT2, below), and
 * a UART character is 11 bits with RXC one character late ("USART0").
 */
#define _GNU_SOURCE
#include "node_avr.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <simavr/avr_timer.h>
#include <simavr/sim_core.h>
#include <simavr/sim_cycle_timers.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_io.h>

#include "exectrace.h"
#include "trace.h"

/* ATmega2560 data-space addresses */
#define REG_PORTF 0x31
#define REG_PCIFR 0x3B
#define REG_MCUSR 0x54
#define REG_PCICR 0x68
#define REG_PCMSK2 0x6D
#define REG_UCSR0A 0xC0
#define REG_UCSR0B 0xC1
#define REG_UCSR0C 0xC2
#define REG_UBRR0L 0xC4
#define REG_UBRR0H 0xC5
#define PCINT2_VECTOR 11

/* The boards' pin map (docs/hardware.md): the profiler drives its timecode on PA0..7 and reads the
 * event id on PC0..2 and the strobe on PL1 = ICP5 (input capture); the executor reads the timecode on
 * PK0..7 (PCINT2) and drives PC0..3. */
static const struct node_pins profiler_pins = {
    .timecode = {{'A', 0}, {'A', 1}, {'A', 2}, {'A', 3}, {'A', 4}, {'A', 5}, {'A', 6}, {'A', 7}},
    .event = {{'C', 0}, {'C', 1}, {'C', 2}, {'L', 1}},
};
static const struct node_pins executor_pins = {
    .timecode = {{'K', 0}, {'K', 1}, {'K', 2}, {'K', 3}, {'K', 4}, {'K', 5}, {'K', 6}, {'K', 7}},
    .event = {{'C', 0}, {'C', 1}, {'C', 2}, {'C', 3}},
};

/* the two cores one bench can have, one per role */
static struct avr_node nodes[NNODES];
static const struct node_ops avr_ops;

struct avr_node *node_avr(struct node *n)
{
    if (!n || n->ops != &avr_ops)
        die("%s: not an AVR node", n ? n->name : "(none)");
    return (struct avr_node *)n;
}

static int traced(const struct avr_node *an)
{
    return exectrace_on && an->node.id == EXECUTOR; /* (attached only in two-node mode) */
}

/* ---- PORT writes ----------------------------------------------------------------------------
 * simavr 1.6 raises an input pin to 1 when the firmware writes its PORT bit 1 (the internal pull-up),
 * on every write to that PORT or DDR register, as if the pull-up drove the pin: with the pull-ups on
 * (the boards' firmware turns them on for the wired inputs) the executor's PINK read 0xFF, not the
 * profiler's timecode, until each bit changed again, and a PORTL write set the profiler's strobe input
 * to 1 under the executor's 0. On the board the driver (the other node's push-pull output) overrides
 * the ~35 kOhm pull-up. simavr's port has an "external" level for input pins
 * (AVR_IOCTL_IOPORT_SET_EXTERNAL: pull_mask, pull_value) that it uses instead of the PORT bit: each
 * driven input is in its port's mask, at the wire's level, kept up to date at every change, so a PORT
 * or DDR write leaves a driven input at its wire's level and raises no edge. An input nothing drives
 * (cosim.c, "Unconnected") is left out of the mask: its pull-up then reads 1, as on the board. */
static void hold_pin(avr_ioport_t *p, uint8_t m, int level)
{
    p->external.pull_mask |= m;
    p->external.pull_value = (uint8_t)(level ? p->external.pull_value | m : p->external.pull_value & ~m);
}

static avr_ioport_t *find_port(avr_t *a, char name)
{
    avr_io_t *io;
    for (io = a->io_port; io; io = io->next)
        if (io->kind && !strcmp(io->kind, "port") && ((avr_ioport_t *)io)->name == name)
            return (avr_ioport_t *)io;
    return NULL;
}

/* The port and IRQ are looked up once, not at every change of every bit. */
struct avr_input node_avr_input(avr_t *a, char port, int bit)
{
    struct avr_input in = {find_port(a, port), avr_io_getirq(a, AVR_IOCTL_IOPORT_GETIRQ(port), bit),
                           (uint8_t)(1u << bit), port, bit};
    if (!in.port)
        die("no port %c", port);
    if (!in.irq)
        die("no irq for port %c%d", port, bit);
    return in;
}

void node_avr_drive(const struct avr_input *in, int level)
{
    hold_pin(in->port, in->mask, level);
    avr_raise_irq(in->irq, (uint32_t)level);
}

/* ---- running ---------------------------------------------------------------------------------- */

static uint64_t avr_cycle(struct node *n)
{
    return ((struct avr_node *)n)->avr->cycle;
}

static void avr_catch_up(struct node *n, uint64_t at)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_t *a = an->avr;
    if (a->cycle < at) {
        if (a->state == cpu_Sleeping)
            an->sleep_cycles += at - a->cycle;
        a->cycle = at;
    }
}

static uint64_t next_timer(avr_t *a)
{
    avr_cycle_timer_slot_p s = a->cycle_timers.timer;
    uint64_t t = NEVER;
    for (; s; s = s->next)
        if (s->when < t)
            t = s->when;
    return t;
}

static uint64_t avr_next_event(struct node *n)
{
    avr_t *a = ((struct avr_node *)n)->avr;
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

static enum node_state avr_state(struct node *n)
{
    switch (((struct avr_node *)n)->avr->state) {
    case cpu_Running: return NODE_RUNNING;
    case cpu_Sleeping: return NODE_SLEEPING;
    case cpu_Done: return NODE_HALTED;
    case cpu_Crashed: return NODE_CRASHED;
    default: return NODE_STOPPED;
    }
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
 * command (wires, UART bridge: node.self_reset) counted as a watchdog reset; simavr's hook still sets
 * WDRF. */
static void watchdog_reset(struct avr_node *an)
{
    uint64_t at = an->avr->cycle;
    an->wdt_resets++;
    logmsg("%s: watchdog reset at cycle %" PRIu64, an->node.name, at);
    an->node.self_reset(&an->node, at, "watchdog"); /* avr_reset: simavr's watchdog hook restores avr->run, sets WDRF */
    an->avr->run = an->run_fn;                      /* (already so; the bench never runs a swapped callback) */
}

static inline void check_watchdog(struct avr_node *an)
{
    if (an->avr->run != an->run_fn)
        watchdog_reset(an);
}

static void avr_step(struct node *n, uint64_t limit)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_t *a = an->avr;
    int tr = traced(an);
    if (a->state == cpu_Sleeping) {
        if (!avr_has_pending_interrupts(a)) {
            uint64_t t = next_timer(a);
            if (t != NEVER && t > a->cycle) {
                an->sleep_cycles += t - a->cycle;
                a->cycle = t;
            }
        }
        avr_cycle_timer_process(a);
        if (tr)
            exectrace_core(a, a->cycle); /* a timer's interrupt woke it */
        if (a->run != an->run_fn) {
            watchdog_reset(an);
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
        if (tr) {
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
        if (tr)
            exectrace_core(a, a->cycle); /* a timer due then woke it at once */
    }
    if (a->run != an->run_fn) {
        watchdog_reset(an);
        return;
    }
    if (a->state == cpu_Sleeping) {
        if (!a->sreg[S_I]) {
            logmsg("%s: sleeping with interrupts off at cycle %" PRIu64 ": halted", n->name, (uint64_t)a->cycle);
            a->state = cpu_Done;
            if (tr)
                exectrace_core(a, a->cycle);
            return;
        }
        a->cycle += 1;
        an->sleep_cycles += 1;
    }
    if (a->state == cpu_Running || a->state == cpu_Sleeping)
        avr_service_interrupts(a);
    if (a->state == cpu_Crashed) {
        logmsg("%s: crashed at cycle %" PRIu64 " pc=0x%x", n->name, (uint64_t)a->cycle, a->pc);
        if (tr)
            exectrace_core(a, a->cycle);
    }
}

/* One-node mode: one core needs no ordering against another, so it runs in simavr's own loop
 * (avr_run, with simavr's default batching), as the former one-node harnesses ran it: their figures
 * depend on its sleep stepping (a core asleep until a timer resumes one cycle after that timer, so
 * e.g. the executor's ISR dispatch measures 22 cycles here and 21 in the two-node loop). */
static void avr_run_alone(struct node *n, uint64_t until)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_t *a = an->avr;
    while (a->cycle < until && a->state != cpu_Done && a->state != cpu_Crashed) {
        if (a->cycle < an->itrace_until)
            TRACE("P %" PRIu64 " %x %d\n", (uint64_t)a->cycle, a->pc, a->sreg[S_I]);
        check_watchdog(an); /* before simavr's swapped callback would reset it unseen */
        avr_run(a);
    }
    if (a->state == cpu_Crashed)
        logmsg("%s: crashed at cycle %" PRIu64 " pc=0x%x", n->name, (uint64_t)a->cycle, a->pc);
}

/* at: the node's own cycle. The RESET pin (cause "reset"): on the silicon an external reset sets
 * EXTRF in MCUSR, which avr_reset (it clears the I/O registers) leaves at 0. */
static uint64_t avr_reset_core(struct node *n, uint64_t at, const char *cause)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_t *a = an->avr;
    avr_catch_up(n, at);
    at = a->cycle;
    avr_reset(a);
    a->cycle = at;
    if (n->id == EXECUTOR && !an->alone)
        exectrace_reset(at, cause);
    if (!an->alone)
        a->run_cycle_limit = 1;
    n->resets++;
    if (!strcmp(cause, "reset"))
        avr_regbit_set(a, a->reset_flags.extrf);
    if (an->alone)
        logmsg("%s reset at cycle %" PRIu64 " (one-node mode: the stimulus timers are gone)", n->name, at);
    else
        logmsg("%s reset at cycle %" PRIu64, n->name, at);
    return at;
}

/* simavr's cycle timer calls this; the slot keeps the bench's (fn, ctx) */
static avr_cycle_count_t on_timer(avr_t *a, avr_cycle_count_t when, void *param)
{
    struct avr_timer *t = param;
    (void)a;
    return t->fn(&t->an->node, when, t->ctx);
}

static struct avr_timer *timer_slot(struct avr_node *an, node_timer_fn fn, void *ctx, int make)
{
    int i;
    for (i = 0; i < an->n_timers; i++)
        if (an->timers[i].fn == fn && an->timers[i].ctx == ctx)
            return &an->timers[i];
    if (!make)
        return NULL;
    if (an->n_timers == AVR_TIMERS)
        die("%s: more than %d kinds of timer", an->node.name, AVR_TIMERS);
    an->timers[an->n_timers] = (struct avr_timer){an, fn, ctx};
    return &an->timers[an->n_timers++];
}

/* at or before the clock: the next cycle (simavr runs a timer due now only after the instruction) */
static void avr_timer(struct node *n, uint64_t at, node_timer_fn fn, void *ctx)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_t *a = an->avr;
    if (at <= a->cycle)
        at = a->cycle + 1;
    avr_cycle_timer_register(a, at - a->cycle, on_timer, timer_slot(an, fn, ctx, 1));
}

static void avr_timer_cancel(struct node *n, node_timer_fn fn, void *ctx)
{
    struct avr_node *an = (struct avr_node *)n;
    struct avr_timer *t = timer_slot(an, fn, ctx, 0);
    if (t)
        avr_cycle_timer_cancel(an->avr, on_timer, t);
}

/* ---- pins ------------------------------------------------------------------------------------- */

static int avr_input(struct node *n, struct node_pin pin)
{
    struct avr_node *an = (struct avr_node *)n;
    if (an->n_inputs == AVR_INPUTS)
        die("%s: more than %d wired inputs", n->name, AVR_INPUTS);
    an->inputs[an->n_inputs] = node_avr_input(an->avr, pin.port, pin.bit);
    return an->n_inputs++;
}

static void avr_preset_input(struct node *n, int in, int level, int driven)
{
    struct avr_input *p = &((struct avr_node *)n)->inputs[in];
    if (driven)
        hold_pin(p->port, p->mask, level);
    avr_raise_irq(p->irq, (uint32_t)level);
}

static uint64_t avr_set_input(struct node *n, int in, int level, uint64_t at, int driven)
{
    struct avr_node *an = (struct avr_node *)n;
    struct avr_input *p = &an->inputs[in];
    avr_t *a = an->avr;
    uint64_t saved, back = 0;
    avr_catch_up(n, at);
    saved = a->cycle;
    if (saved > at) {
        back = saved - at;
        a->cycle = at; /* apply the change as of the cycle it happened (input capture) */
    }
    if (driven)
        hold_pin(p->port, p->mask, level);
    avr_raise_irq(p->irq, (uint32_t)level);
    if (an->pcint2.vector && p->name == 'K') {
        /* the missing PCINT2: PCIF2 is set on any change of a port K pin enabled in PCMSK2 */
        if (a->data[REG_PCMSK2] & p->mask)
            avr_raise_interrupt(a, &an->pcint2);
    }
    if (traced(an))
        exectrace_core(a, at); /* woken by the pin change's interrupt */
    if (back)
        a->cycle = saved;
    return back;
}

static enum pin_mode avr_input_mode(struct node *n, int in)
{
    struct avr_node *an = (struct avr_node *)n;
    struct avr_input *p = &an->inputs[in];
    if (an->avr->data[p->port->r_ddr] & p->mask)
        return PIN_OUTPUT;
    return an->avr->data[p->port->r_port] & p->mask ? PIN_PULLUP : PIN_FLOATING;
}

static struct avr_watch *watch_slot(struct avr_node *an)
{
    if (an->n_watches == AVR_WATCHES)
        die("%s: more than %d watched outputs", an->node.name, AVR_WATCHES);
    an->watches[an->n_watches].an = an;
    return &an->watches[an->n_watches++];
}

static void on_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
    struct avr_watch *w = param;
    avr_t *a = w->an->avr;
    (void)irq;
    if (w->pin(w->ctx, value ? 1 : 0, a->cycle))
        /* end the source's instruction batch: the destination may have woken up or must react */
        a->run_cycle_count = 0;
}

static void avr_watch_pin(struct node *n, struct node_pin pin, node_pin_fn fn, void *ctx)
{
    struct avr_node *an = (struct avr_node *)n;
    struct avr_watch *w = watch_slot(an);
    w->pin = fn;
    w->ctx = ctx;
    avr_irq_register_notify(avr_io_getirq(an->avr, AVR_IOCTL_IOPORT_GETIRQ(pin.port), pin.bit), on_pin, w);
}

/* a port's pins as a whole: simavr raises IOPORT_IRQ_PIN_ALL after each write of PORTx, DDRx or PINx,
 * within the writing instruction, after the single pins' notifications */
static void on_port(struct avr_irq_t *irq, uint32_t value, void *param)
{
    struct avr_watch *w = param;
    (void)irq;
    w->port(w->ctx, (uint8_t)value, w->an->avr->cycle);
}

static void avr_watch_port(struct node *n, char port, node_port_fn fn, void *ctx)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_irq_t *irq = avr_io_getirq(an->avr, AVR_IOCTL_IOPORT_GETIRQ(port), IOPORT_IRQ_PIN_ALL);
    struct avr_watch *w;
    if (!irq)
        die("no irq for the %s's port %c", n->name, port);
    w = watch_slot(an);
    w->port = fn;
    w->ctx = ctx;
    avr_irq_register_notify(irq, on_port, w);
}

static uint8_t avr_port_out(struct node *n, char port)
{
    avr_irq_t *irq = avr_io_getirq(((struct avr_node *)n)->avr, AVR_IOCTL_IOPORT_GETIRQ(port), IOPORT_IRQ_PIN_ALL);
    return irq ? (uint8_t)irq->value : 0;
}

/* every change is reported at the writing instruction's cycle: nothing held */
static uint64_t avr_held_out(struct node *n)
{
    (void)n;
    return NEVER;
}

static void avr_release_out(struct node *n, uint64_t upto)
{
    (void)n;
    (void)upto;
}

/* ---- USART0 ------------------------------------------------------------------------------------
 * simavr 1.6 times a UART character as 11 bits (it always counts a parity bit) and raises RXC one
 * such character after a byte is injected. The bench corrects both (unless --uart-timing simavr keeps
 * them for one-node mode: stimulus.c): the character time comes from UBRR/U2X/UCSZ/USBS/UPM (10 bits
 * for 8N1), and a byte handed to the receiver (the bridge hands it when its stop bit ends) raises RXC
 * at once. */
static uint32_t ubrr(const avr_t *a)
{
    return (uint32_t)a->data[REG_UBRR0L] | ((uint32_t)(a->data[REG_UBRR0H] & 0x0F) << 8);
}

static uint64_t char_cycles(const avr_t *a)
{
    uint8_t ucsra = a->data[REG_UCSR0A], ucsrb = a->data[REG_UCSR0B], ucsrc = a->data[REG_UCSR0C];
    static const int databits[8] = {5, 6, 7, 8, 8, 8, 8, 9};
    int db = databits[((ucsrc >> 1) & 3) | (ucsrb & 4)];
    int sb = 1 + ((ucsrc >> 3) & 1);
    int parity = (ucsrc >> 4) & 3 ? 1 : 0;
    uint64_t per_bit = (uint64_t)(ubrr(a) + 1) * ((ucsra & 0x02) ? 8 : 16);
    return per_bit * (uint64_t)(1 + db + parity + sb);
}

static void fix_uart_timing(struct avr_node *an)
{
    an->uart->cycles_per_byte = char_cycles(an->avr);
}

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    struct avr_node *an = param;
    avr_t *a = an->avr;
    uint64_t chr, start, end;
    (void)irq;
    if (!an->uart_raw)
        fix_uart_timing(an); /* before simavr starts its transmit pump with its own char time */
    chr = an->uart->cycles_per_byte;
    start = a->cycle > an->tx_line_free ? a->cycle : an->tx_line_free;
    end = start + chr;
    an->tx_line_free = end;
    an->tx_fn(an->tx_ctx, end, chr, (uint8_t)value);
}

static avr_uart_t *find_uart(avr_t *a, char name)
{
    avr_io_t *io;
    for (io = a->io_port; io; io = io->next)
        if (io->kind && !strcmp(io->kind, "uart") && ((avr_uart_t *)io)->name == name)
            return (avr_uart_t *)io;
    return NULL;
}

static void avr_uart_attach(struct node *n, node_tx_fn fn, void *ctx, int raw)
{
    struct avr_node *an = (struct avr_node *)n;
    uint32_t flags = 0;
    avr_ioctl(an->avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_POLL_SLEEP | AVR_UART_FLAG_STDIO);
    avr_ioctl(an->avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    an->uart = find_uart(an->avr, '0');
    if (!an->uart)
        die("no USART0 in simavr's atmega2560");
    an->uart_in = avr_io_getirq(an->avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    an->uart_raw = raw;
    an->tx_fn = fn;
    an->tx_ctx = ctx;
    avr_irq_register_notify(avr_io_getirq(an->avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_out, an);
}

static int avr_uart_rx(struct node *n, uint8_t b)
{
    struct avr_node *an = (struct avr_node *)n;
    avr_uart_t *au = an->uart;
    avr_t *a = an->avr;
    if (an->uart_raw) {
        avr_raise_irq(an->uart_in, b); /* simavr raises RXC one of its characters later */
        return 1;
    }
    if (!(a->data[REG_UCSR0B] & 0x10))
        return 0; /* receiver off: the byte is lost, as on the chip */
    fix_uart_timing(an);
    avr_raise_irq(an->uart_in, b);
    /* the stop bit has ended now: RXC at once (simavr would wait another character) */
    if (!avr_regbit_get(a, au->rxc.raised)) {
        au->rxc_raise_time = a->cycle;
        au->rx_cnt = 0;
    }
    avr_raise_interrupt(a, &au->rxc);
    return 1;
}

static uint64_t avr_uart_char(struct node *n)
{
    return char_cycles(((struct avr_node *)n)->avr);
}

static double avr_uart_baud(struct node *n)
{
    const avr_t *a = ((struct avr_node *)n)->avr;
    return (double)F_CPU / ((double)(ubrr(a) + 1) * ((a->data[REG_UCSR0A] & 0x02) ? 8.0 : 16.0));
}

/* a byte that came with the receiver off is counted by the bridge (uart_rx returned 0) */
static unsigned long avr_uart_rx_lost(struct node *n)
{
    (void)n;
    return 0;
}

static void avr_status_json(struct node *n, struct sbuf *b)
{
    struct avr_node *an = (struct avr_node *)n;
    uint64_t c = an->avr->cycle;
    sb_printf(b, "\"state\":\"%s\",", node_state_name(avr_state(n)));
    sb_printf(b, "\"asleep_share\":%.6f,", c ? (double)an->sleep_cycles / (double)c : 0.0);
    sb_printf(b, "\"resets\":%" PRIu64 ",", n->resets);
    sb_printf(b, "\"wdt_resets\":%" PRIu64 ",\"mcusr\":%u,", an->wdt_resets, (unsigned)an->avr->data[REG_MCUSR]);
    if (n->id == PROFILER) /* the event LEDs, PF0..7, active high (docs/hardware.md) */
        sb_printf(b, "\"leds\":%u,", (unsigned)an->avr->data[REG_PORTF]);
}

static const struct node_ops avr_ops = {
    .cycle = avr_cycle,
    .next_event = avr_next_event,
    .step = avr_step,
    .run_alone = avr_run_alone,
    .catch_up = avr_catch_up,
    .state = avr_state,
    .reset = avr_reset_core,
    .timer = avr_timer,
    .timer_cancel = avr_timer_cancel,
    .input = avr_input,
    .preset_input = avr_preset_input,
    .set_input = avr_set_input,
    .input_mode = avr_input_mode,
    .watch_pin = avr_watch_pin,
    .watch_port = avr_watch_port,
    .port_out = avr_port_out,
    .held_out = avr_held_out,
    .release_out = avr_release_out,
    .uart_attach = avr_uart_attach,
    .uart_rx = avr_uart_rx,
    .uart_char = avr_uart_char,
    .uart_baud = avr_uart_baud,
    .uart_rx_lost = avr_uart_rx_lost,
    .status_json = avr_status_json,
};

/* ---- load --------------------------------------------------------------------------------------- */

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

static void fix_tifr_writes(struct avr_node *an)
{
    avr_t *a = an->avr;
    avr_io_t *io;

    for (io = a->io_port; io; io = io->next) {
        avr_timer_t *p = (avr_timer_t *)io;
        avr_io_addr_t r;
        if (strcmp(io->kind, "timer") != 0)
            continue;
        r = p->overflow.raised.reg;
        /* simavr registered its own handler there, with the timer as its parameter */
        if (!r || a->io[AVR_DATA_TO_IO(r)].w.param != p)
            die("%s: timer %c: TIFR write handler not where simavr 1.6 puts it", an->node.name, p->name);
        a->io[AVR_DATA_TO_IO(r)].w.c = tifr_write;
    }
}

struct node *node_avr_load(int id, const char *elf, int alone)
{
    struct avr_node *an = &nodes[id];
    struct node *n = &an->node;
    elf_firmware_t fw;

    n->id = id;
    n->name = node_names[id];
    n->image = elf;
    n->kind = "avr";
    n->hz = F_CPU;
    n->ops = &avr_ops;
    n->pins = id == PROFILER ? &profiler_pins : &executor_pins;
    n->reset_floats_pins = 1;
    an->alone = alone;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf, &fw) != 0)
        die("cannot read %s image %s", n->name, elf);
    an->avr = avr_make_mcu_by_name("atmega2560");
    if (!an->avr)
        die("simavr has no atmega2560");
    avr_init(an->avr);
    an->avr->frequency = F_CPU;
    an->avr->sleep = no_sleep;
    an->avr->log = 1;
    /* 1: a cycle timer registered in the middle of a batch ends the batch (simavr re-clamps
     * run_cycle_count to run_cycle_limit then), so a batch never runs past the bound avr_step set;
     * alone, simavr's own loop keeps its default */
    if (!alone)
        an->avr->run_cycle_limit = 1;
    avr_load_firmware(an->avr, &fw);
    an->avr->frequency = F_CPU; /* whatever the ELF says */
    if (id == EXECUTOR && !alone)
        exectrace_attach(an->avr, elf); /* its interrupt table is watched from the start (exectrace.c) */
    an->run_fn = an->avr->run;
    fix_tifr_writes(an);
    if (id == EXECUTOR) {
        /* simavr's ATmega2560 has no pin-change interrupt on port K: the bench supplies PCINT2
         * (vector 11, PCICR bit 2, PCIFR bit 2, PCMSK2), raised on each change of a driven K pin */
        an->pcint2.vector = PCINT2_VECTOR;
        an->pcint2.enable = (avr_regbit_t)AVR_IO_REGBIT(REG_PCICR, 2);
        an->pcint2.raised = (avr_regbit_t)AVR_IO_REGBIT(REG_PCIFR, 2);
        avr_register_vector(an->avr, &an->pcint2);
    }
    return n;
}
