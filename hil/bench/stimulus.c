/*
 * One-node mode: `mmbench --executor ELF` (or `--profiler ELF`) alone, unpaced, with --stimulus FILE.
 * The missing node's output wires are played from the file, at exact cycles, by cycle timers of the
 * node (so a change lands at the first instruction boundary at or after its cycle, as a change from a
 * timer of the chip itself would). simavr's missing port-K PCINT2 is raised as in the two-node bench.
 *
 * Stimulus lines (cycles absolute, in any order; '#' starts a comment):
 *   K <cycle> <value> [<skew>]   the timecode port (executor PK0..7) becomes value (hex); with skew,
 *                                the low nibble changes at cycle and the high nibble skew cycles
 *                                later (a port read in between sees a half-changed value). Starts
 *                                an instruction-trace window (--itrace).
 *   G <cycle> <value>            a glitch value on the timecode port (like K, no window)
 *   E <cycle> <id>               the event lines (profiler PC0..2 = id, hex) and a toggle of the
 *                                strobe (PL1 = ICP5), in one step like the executor's port write
 *   U <cycle> <hex bytes...>     host bytes reaching the node's UART line at cycle, paced at --baud
 *                                like bytes from the pty (10 bit times each, RXC at the stop bit's end)
 *   R <cycle> <hex byte>         one byte whose stop bit ends at cycle: RXC then, not paced
 * With --uart-timing simavr the UART keeps simavr 1.6's own timing, as the former one-node harnesses
 * had it and as the executor's and profiler's tests model it (their figures stay): U bytes are handed
 * to simavr's receiver no earlier than their cycle and one character (10 bit times at --baud, rounded
 * up) apart, R bytes at their cycle, and simavr raises RXC one of its 11-bit characters later; MCU
 * output keeps simavr's 11-bit character time.
 *
 * Trace lines of one-node mode (--trace), besides the I and O lines of trace.h:
 *   K <cycle> <value>  G <cycle> <value>    a timecode stimulus applied (its cycle)
 *   E <cycle> <applied> <id> <level>        an event stimulus applied (applied: the node's clock then)
 *   A <cycle> <value>                       PORTA pins changed (the profiler's timecode output)
 *   C <cycle> <value>                       PORTC written with a new value (the executor's event port)
 *   L <cycle> <level>                       the status LED (PB7) changed
 *   D <cycle> <value>                       GPIOR2 written (a free register firmware marks code with)
 *   T <cycle> <byte>                        the MCU wrote UDR0 (the byte's start; O: its end)
 *   P <cycle> <pc> <I>                      --itrace C: every instruction in the C cycles after each
 *                                           K edge: byte address (hex) and the I flag, before it runs
 *   END <cycle> <state> <name>              end of run: the node's clock and simavr's CPU state
 * Values are hex, cycles decimal.
 */
#define _GNU_SOURCE
#include "stimulus.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_cycle_timers.h>
#include <simavr/sim_io.h>

#include "cosim.h"
#include "node_avr.h"
#include "trace.h"
#include "uart_bridge.h"

#define REG_PCMSK2 0x6D
#define REG_GPIOR2 0x4B

struct stim {
    uint64_t at;
    char kind; /* K G E R; U (simavr timing only: otherwise U lines go to the UART bridge's queue) */
    uint8_t value;
    uint32_t skew;
};

/* the stimulus of the one node a one-node run has, and the port state it drives */
static struct {
    int id;
    struct avr_node *n;
    struct stim *items;
    size_t n_items, cap, next;
    struct stim *bytes;       /* U bytes with simavr timing: a chain of their own, paced */
    size_t n_bytes, bytes_cap, next_byte;
    uint64_t last_byte_at, cpb;
    uint64_t itrace_cycles;
    struct avr_input port_k[8], event_id[3], strobe; /* the inputs it drives (stimulus_start) */
    uint8_t tc;          /* the level of the timecode port the node sees */
    int strobe_level;
    int portc_last;      /* last PORTC value traced (-1: none yet) */
} st = {.portc_last = -1};

static void push(struct stim **v, size_t *n, size_t *cap, struct stim s)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *v = realloc(*v, *cap * sizeof **v);
        if (!*v)
            die("out of memory");
    }
    (*v)[(*n)++] = s;
}

static void add(uint64_t at, char kind, uint8_t value, uint32_t skew)
{
    push(&st.items, &st.n_items, &st.cap, (struct stim){at, kind, value, skew});
}

void stimulus_load(int id, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    size_t i;
    if (!f)
        die("cannot open stimulus %s: %s", path, strerror(errno));
    st.id = id;
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end, kind;
        unsigned long long at;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        kind = *p++;
        at = strtoull(p, &end, 0);
        if (end == p || !strchr("KGEUR", kind))
            die("bad stimulus line: %s", line);
        p = end;
        if (kind == 'U') {
            for (;;) {
                unsigned long v = strtoul(p, &end, 16);
                if (end == p)
                    break;
                p = end;
                if (uart_simavr_timing())
                    push(&st.bytes, &st.n_bytes, &st.bytes_cap, (struct stim){at, 'U', (uint8_t)v, 0});
                else
                    uart_push_input(id, at, (uint8_t)v);
            }
            continue;
        }
        {
            unsigned long v = strtoul(p, &end, 16), skew = 0;
            if (end == p)
                die("bad stimulus line: %s", line);
            p = end;
            if (kind == 'K')
                skew = strtoul(p, &end, 0);
            if ((kind == 'K' || kind == 'G') && id != EXECUTOR)
                die("K and G lines drive the executor's timecode port: %s", line);
            if (kind == 'E' && id != PROFILER)
                die("E lines drive the profiler's event inputs: %s", line);
            add(at, kind, (uint8_t)v, (uint32_t)skew);
        }
    }
    fclose(f);
    /* by cycle, ties in file order (insertion sort: stable, and linear on the sorted files the
     * drivers write) */
    for (i = 1; i < st.n_items; i++) {
        struct stim x = st.items[i];
        size_t j;
        for (j = i; j > 0 && st.items[j - 1].at > x.at; j--)
            st.items[j] = st.items[j - 1];
        st.items[j] = x;
    }
}

/* The timecode port: change the bits in `mask` to `value`, with PCINT2 for each changed pin. */
static void set_port_k(uint8_t value, uint8_t mask)
{
    avr_t *a = st.n->avr;
    int i;
    for (i = 0; i < 8; i++)
        if (mask & (1u << i)) {
            uint8_t bit = (value >> i) & 1u;
            if (((st.tc >> i) & 1u) != bit) {
                node_avr_drive(&st.port_k[i], bit);
                if (a->data[REG_PCMSK2] & (1u << i))
                    avr_raise_interrupt(a, &st.n->pcint2);
            }
        }
    st.tc = (uint8_t)((st.tc & ~mask) | (value & mask));
}

static avr_cycle_count_t high_nibble(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)a;
    (void)when;
    set_port_k((uint8_t)(uintptr_t)param, 0xF0);
    return 0;
}

static void apply(struct stim *s, uint64_t when)
{
    avr_t *a = st.n->avr;
    int b;
    switch (s->kind) {
    case 'K':
        TRACE("K %" PRIu64 " %02x\n", when, s->value);
        if (st.itrace_cycles)
            st.n->itrace_until = when + st.itrace_cycles;
        if (s->skew) {
            set_port_k(s->value, 0x0F);
            /* the high nibble `skew` cycles after the low one changed: the port's halves settling apart */
            avr_cycle_timer_register(a, s->skew, high_nibble, (void *)(uintptr_t)s->value);
        } else {
            set_port_k(s->value, 0xFF);
        }
        break;
    case 'G':
        TRACE("G %" PRIu64 " %02x\n", when, s->value);
        set_port_k(s->value, 0xFF);
        break;
    case 'E':
        for (b = 0; b < 3; b++)
            node_avr_drive(&st.event_id[b], (s->value >> b) & 1u);
        st.strobe_level = !st.strobe_level;
        node_avr_drive(&st.strobe, st.strobe_level);
        TRACE("E %" PRIu64 " %" PRIu64 " %x %d\n", s->at, (uint64_t)a->cycle, s->value, st.strobe_level);
        break;
    case 'R':
        uart_deliver_now(st.id, s->value, st.n->avr->cycle);
        break;
    }
}

static avr_cycle_count_t on_stimulus(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)a;
    (void)param;
    while (st.next < st.n_items && st.items[st.next].at <= when)
        apply(&st.items[st.next++], when);
    return st.next < st.n_items ? st.items[st.next].at : 0;
}

/* simavr timing: the next U byte no earlier than its cycle and one character after the last one */
static avr_cycle_count_t on_byte(avr_t *a, avr_cycle_count_t when, void *param)
{
    uint64_t next;
    (void)a;
    (void)param;
    if (st.next_byte < st.n_bytes && st.bytes[st.next_byte].at <= when) {
        if (st.last_byte_at && when < st.last_byte_at + st.cpb)
            return st.last_byte_at + st.cpb;
        uart_deliver_now(st.id, st.bytes[st.next_byte++].value, when); /* traced at its timer's cycle */
        st.last_byte_at = when;
    }
    if (st.next_byte >= st.n_bytes)
        return 0;
    next = st.bytes[st.next_byte].at;
    if (st.last_byte_at && next < st.last_byte_at + st.cpb)
        next = st.last_byte_at + st.cpb;
    return next > when ? next : when + 1;
}

/* ---- what the node does ------------------------------------------------------------------ */

static void on_porta(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    TRACE("A %" PRIu64 " %02x\n", (uint64_t)st.n->avr->cycle, value & 0xFFu);
}

static void on_portc(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    if ((int)(value & 0xFFu) != st.portc_last) {
        st.portc_last = (int)(value & 0xFFu);
        TRACE("C %" PRIu64 " %02x\n", (uint64_t)st.n->avr->cycle, value & 0xFFu);
    }
}

static void on_led(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    TRACE("L %" PRIu64 " %u\n", (uint64_t)st.n->avr->cycle, value & 1u);
}

static void on_tx(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    TRACE("T %" PRIu64 " %02x\n", (uint64_t)st.n->avr->cycle, value & 0xFFu);
}

static void on_gpior2(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void)param;
    a->data[addr] = v;
    TRACE("D %" PRIu64 " %02x\n", (uint64_t)a->cycle, v);
}

void stimulus_start(int id, uint64_t itrace_cycles)
{
    avr_t *a;
    int i;
    st.id = id;
    st.n = node_avr(cosim_node(id));
    a = st.n->avr;
    st.itrace_cycles = itrace_cycles;
    if (id == EXECUTOR) {
        for (i = 0; i < 8; i++) {
            st.port_k[i] = node_avr_input(a, 'K', i);
            node_avr_drive(&st.port_k[i], 0); /* the stimulus drives it: a pull-up does not change it */
        }
    } else {
        for (i = 0; i < 3; i++) {
            st.event_id[i] = node_avr_input(a, 'C', i);
            node_avr_drive(&st.event_id[i], 0); /* the stimulus drives it: a pull-up does not change it */
        }
        st.strobe = node_avr_input(a, 'L', 1);
        node_avr_drive(&st.strobe, 0);
    }
    avr_irq_register_notify(avr_io_getirq(a, AVR_IOCTL_IOPORT_GETIRQ('A'), IOPORT_IRQ_PIN_ALL), on_porta, NULL);
    avr_irq_register_notify(avr_io_getirq(a, AVR_IOCTL_IOPORT_GETIRQ('C'), IOPORT_IRQ_REG_PORT), on_portc, NULL);
    avr_irq_register_notify(avr_io_getirq(a, AVR_IOCTL_IOPORT_GETIRQ('B'), 7), on_led, NULL);
    avr_irq_register_notify(avr_io_getirq(a, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_tx, NULL);
    avr_register_io_write(a, REG_GPIOR2, on_gpior2, NULL);
    /* what is due at cycle 0 is in place before the first instruction */
    while (st.next < st.n_items && st.items[st.next].at <= a->cycle)
        apply(&st.items[st.next++], a->cycle);
    if (st.next < st.n_items)
        avr_cycle_timer_register(a, st.items[st.next].at - a->cycle, on_stimulus, NULL);
    if (st.n_bytes) {
        uint64_t baud = uart_default_baud();
        st.cpb = (10 * F_CPU + baud - 1) / baud; /* 10 bit times, rounded up: never faster */
        avr_cycle_timer_register(a, st.bytes[0].at ? st.bytes[0].at : 1, on_byte, NULL);
    }
}

void stimulus_end(int id)
{
    struct node *n = cosim_node(id);
    avr_t *a = node_avr(n)->avr;
    TRACE("END %" PRIu64 " %d %s\n", (uint64_t)a->cycle, (int)a->state, node_state_name(n->ops->state(n)));
}
