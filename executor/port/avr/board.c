/*
 * The hardware layer: registers, interrupt handlers and the ex_board.h hooks. Thin on purpose: all
 * decisions are in core/.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <util/delay.h>

/* 1: port K's internal pull-ups on (board_init says why); 0 only for a test image */
#ifndef EX_PULLUPS
#define EX_PULLUPS 1
#endif

#include "board.h"
#include "ex_board.h"
#include "ex_tc.h"
#include "mmproto.h"

#ifndef EX_BAUD
#define EX_BAUD 9600UL
#endif
#define BAUD EX_BAUD
#define BAUD_TOL 3
#include <util/setbaud.h>

#define LED_BIT _BV(PB7)
#define EVENT_MASK 0x0Fu /* PC0..PC3 */

/* ---- armed output, shared with the pin-change ISR ---------------------------------------------- */
/*
 * The armed output is written only with interrupts disabled (exb_arm, exb_disarm) and read by the
 * pin-change ISR and the timecode task. Its variables are volatile because the ISR and the task read
 * them between the tasks' writes, outside any critical section of their own.
 *
 * "Armed for the ISR" is bit 0 of GPIOR0, a general-purpose I/O register in the sbi/sbis range, not a
 * RAM flag: the naked front half of the ISR tests it with one `sbis`, which needs no working register,
 * so on the task path (bit clear) the ISR reaches its C half in 4 cycles instead of 24 (saving and
 * restoring two registers and SREG to compare two bytes), and `sbi`/`cbi` set and clear it atomically.
 * Bit 1 is the quiet-window flag (see "quiet window" below), bit 2 a series' moment waiting for its tick's
 * edge (see "moments"). Nothing else uses GPIOR0.
 */
#define EXA_ISR_ARMED() (GPIOR0 & _BV(0))
#define QUIET() (GPIOR0 & _BV(1)) /* in the quiet window, see below; one sbis, like the armed flag */
#define EXA_ISR_SET() (GPIOR0 |= _BV(0))   /* sbi: one instruction, atomic */
#define EXA_ISR_CLEAR() (GPIOR0 &= (uint8_t)~_BV(0))
static void guard_schedule(uint8_t isr_armed);
static void moment_at_edge(void) __attribute__((noinline)); /* out of the tail: see its definition */
/* A moment waits for its tick's edge (see "moments" below): bit 2 of GPIOR0, so that the pin-change tail
 * tests it with one sbis on every edge (a RAM flag's lds and test cost the edge's task dispatch ~5 cycles). */
#define MOM_WAIT() (GPIOR0 & _BV(2))
#define MOM_WAIT_SET() (GPIOR0 |= _BV(2))
#define MOM_WAIT_CLEAR() (GPIOR0 &= (uint8_t)~_BV(2))

static volatile uint8_t exa_task; /* 1: the timecode task may write exa_out when PINK == exa_tc8 */
static volatile uint8_t exa_tc8;
static volatile uint8_t exa_out;
static volatile uint8_t exa_fired; /* 1: exa_out was written to PORTC */

void exb_arm(uint8_t path, uint8_t tc8, uint8_t out)
{
    uint8_t s = SREG;
    cli(); /* the four fields change together with respect to the ISR and the timecode task */
    exa_tc8 = tc8;
    exa_out = out;
    exa_fired = 0;
    if (path == EXB_ARM_ISR)
        EXA_ISR_SET();
    else
        EXA_ISR_CLEAR();
    exa_task = path == EXB_ARM_TASK;
    guard_schedule(path == EXB_ARM_ISR);
    SREG = s;
}

uint8_t exb_disarm(void)
{
    uint8_t s = SREG;
    uint8_t f;
    cli(); /* read exa_fired and disarm in one step: the ISR cannot fire in between */
    f = exa_fired;
    EXA_ISR_CLEAR();
    exa_task = 0;
    exa_fired = 0;
    guard_schedule(0);
    SREG = s;
    return f;
}

void exb_output(uint8_t value)
{
    PORTC = value & EVENT_MASK; /* id and strobe in one write: one clean edge for the profiler */
}

/* The profiler needs 85 cycles between two edges when idle; its UART interrupts (a received byte decoded,
 * a byte sent) hold it off for up to about 200 cycles more. EX_OUT_GAP_US = 20 us (320 cycles) covers both,
 * and costs a tick's events (k - 1) x 20 us (ex_board.h). A busy wait: interrupts stay on, so the gap is a
 * minimum (measured on the bench: see docs/hardware.md, "Two edges close together"). */
#ifndef EX_OUT_GAP_US
#define EX_OUT_GAP_US 20
#endif
void exb_output_gap(void)
{
#if EX_OUT_GAP_US > 0
    _delay_us(EX_OUT_GAP_US);
#endif
}

/*
 * Task dispatch path: the first thing the timecode task does after its notification. No critical
 * section: no task that touches these fields runs between its read and its write (the timecode task
 * has the highest priority of the executor's own tasks; the only task above it, the load's periodic
 * task, never touches them), exb_arm/exb_disarm (in other tasks) keep interrupts off while they change
 * the fields, so the task never sees them half-written, and no ISR writes them while exa_task is set
 * (the ISR only touches the ISR-armed output). One port read, as in the ISR: a half-changed value never equals the armed byte,
 * and the pin change that completes it notifies the task again.
 */
/* A moment of a PERIODIC series on the task path, written here too (see "moments" below). */
static volatile uint8_t mom_due, mom_out, mom_done;

void board_task_dispatch(void)
{
    if (exa_task && PINK == exa_tc8) {
        PORTC = exa_out;
        exa_task = 0;
        exa_fired = 1;
    }
}

/* The task path of a moment (PERIODIC): its compare interrupt woke the timecode task, which writes it here,
 * right after board_task_dispatch. A function of its own because inside board_task_dispatch it makes that
 * function too large to be inlined into the timecode task, and the call costs the edge's task dispatch
 * 11 cycles (36.6875 -> 37.375 us in lockstep). */
void board_moment_dispatch(void)
{
    if (mom_due) {
        PORTC = mom_out;
        mom_due = 0;
        mom_done = 1;
    }
}

/* ---- timecode input ----------------------------------------------------------------------------- */

static TaskHandle_t tc_task, serial_task;
/* Written by the pin-change ISR, read by exb_phase (task) with interrupts off: volatile. */
static volatile uint16_t edge_t;    /* Timer1 at the last change of the timecode port */
static volatile uint16_t edge_prev; /* ... and at the change before (the tick length is the
                                     * difference, computed by the reader: 5 cycles less in the ISR) */
static volatile uint8_t edge_val;

void board_set_tasks(TaskHandle_t timecode, TaskHandle_t serial)
{
    tc_task = timecode;
    serial_task = serial;
}

/* Same rule as ex_tc_read_stable() (read until two consecutive reads agree, at most
 * EX_TC_MAX_READS reads), written inline: through a function pointer it cost 64 cycles (4 us) on the
 * task dispatch path, this costs about 8. */
uint8_t board_read_timecode(void)
{
    uint8_t prev = PINK;
    uint8_t i;

    for (i = 1; i < EX_TC_MAX_READS; i++) {
        uint8_t v = PINK;
        if (v == prev)
            break;
        prev = v;
    }
    return prev;
}

/*
 * Pin-change interrupt, in two halves.
 *
 * The front half is naked assembly so that the dispatch write comes before any of the 20-odd
 * register pushes a C handler that calls the kernel needs. If the output is not armed for the ISR
 * (GPIOR0 bit 0 clear: task dispatch path, or nothing armed) it jumps straight to the back half (4
 * cycles). Otherwise it saves two registers and SREG, compares PINK with the armed timecode byte and,
 * on a match, writes the precomputed byte to PORTC (22 cycles from the edge in simavr, 1.4 us at
 * 16 MHz; the silicon adds a few cycles of interrupt response and wake-up from idle sleep). A half-changed port value never equals the armed byte,
 * and the pin change that completes it raises the interrupt again, so this path needs no double read.
 * Then it restores everything and jumps to the back half, an ordinary C interrupt handler (signal
 * attribute, ends in reti), which notes the edge time for the ACK phase and notifies the timecode task.
 */
void __vector_pcint2_tail(void) __attribute__((signal, used, externally_visible));

ISR(PCINT2_vect, ISR_NAKED)
{
    __asm__ __volatile__(
        "sbis %[gpior0], 0"         "\n\t" /* armed for the ISR? */
        "jmp  __vector_pcint2_tail" "\n\t" /* no: nothing to do here */
        "push r24"                  "\n\t"
        "in   r24, __SREG__"        "\n\t"
        "push r24"                  "\n\t"
        "push r25"                  "\n\t"
        "lds  r24, %[pink]"         "\n\t"
        "lds  r25, %[tc8]"          "\n\t"
        "cp   r24, r25"             "\n\t"
        "brne 1f"                   "\n\t"
        "lds  r24, %[out]"          "\n\t"
        "out  %[portc], r24"        "\n\t"
        "cbi  %[gpior0], 0"         "\n\t" /* fired: disarm */
        "ldi  r25, 1"               "\n\t"
        "sts  %[fired], r25"        "\n\t"
        "1:"                        "\n\t"
        "pop  r25"                  "\n\t"
        "pop  r24"                  "\n\t"
        "out  __SREG__, r24"        "\n\t"
        "pop  r24"                  "\n\t"
        "jmp  __vector_pcint2_tail" "\n\t"
        :
        : [pink] "n"(_SFR_MEM_ADDR(PINK)), [portc] "I"(_SFR_IO_ADDR(PORTC)),
          [gpior0] "I"(_SFR_IO_ADDR(GPIOR0)), [tc8] "i"(&exa_tc8), [out] "i"(&exa_out),
          [fired] "i"(&exa_fired));
}

/*
 * The back half wakes the timecode task at once only for the value that follows the last one it woke
 * it for (+1: the next tick). Any other value is half-changed (the port's bits do not all move at the
 * same instant), a glitch, or a jump; waking the task for it would put a context switch (~40 us with
 * interrupts off) right where the rest of the edge arrives. Instead it starts a settle timer (Timer1
 * compare A, SETTLE_COUNTS later); if the port has not completed a +1 step by then, the timer wakes the
 * task, which reads whatever the port shows and lets the core count the glitch or resynchronise.
 */
#define SETTLE_COUNTS 13u /* 52 us at F_CPU / 64 */
static volatile uint8_t woken_for; /* port value the task was last woken for by an edge */

/*
 * Called from the interrupt handlers that wake the timecode task (pin change, settle timer, guard
 * timer). The "higher priority task woken" flag is a static, not a local: a local whose address goes
 * to the kernel forces a stack frame (SP read and written with interrupts off) in the handler, 27
 * cycles on the task dispatch path. Safe because all callers run with interrupts disabled (none is
 * ISR_NOBLOCK), so they never overlap, and the flag is consumed before the context switch.
 */
static BaseType_t tc_woken;

static inline __attribute__((always_inline)) void wake_timecode_task(void)
{
    tc_woken = pdFALSE;
    xTaskNotifyFromISR(tc_task, 0, eNoAction, &tc_woken); /* see timecode_task in main.c */
    if (tc_woken != pdFALSE)
        portYIELD_FROM_ISR();
}

void __vector_pcint2_tail(void)
{
    uint16_t now = TCNT1;
    uint8_t v = PINK;

    /* The front half may have seen a half-changed port whose last bits arrived while we got here:
     * dispatch now, before the task switch below keeps interrupts off for ~40 us. */
    if (EXA_ISR_ARMED() && v == exa_tc8) {
        PORTC = exa_out;
        EXA_ISR_CLEAR();
        exa_fired = 1;
    }
    if (v != edge_val) {
        edge_prev = edge_t;
        edge_t = now;
        edge_val = v;
    }
    /* A series' moment armed for this tick gets its compare now that the tick's edge is known
     * (moment_at_edge). Called last in each branch, where nothing of this frame is needed after it: called
     * while `now` and `v` were still live, it made the compiler keep them in saved registers, 3 pushes more
     * on every edge, 9 cycles on the task dispatch path (36.69 -> 37.25 us, tests/cycleprof.py). */
    if ((uint8_t)(v - woken_for) == 1u) {
        woken_for = v;
        TIMSK1 &= (uint8_t)~_BV(OCIE1A);
        if (MOM_WAIT())
            moment_at_edge();
        wake_timecode_task();
    } else if (v != woken_for) {
        OCR1A = (uint16_t)(now + SETTLE_COUNTS);
        TIFR1 = _BV(OCF1A);
        TIMSK1 |= _BV(OCIE1A);
        if (MOM_WAIT())
            moment_at_edge();
    }
}

ISR(TIMER1_COMPA_vect)
{
    TIMSK1 &= (uint8_t)~_BV(OCIE1A);
    woken_for = PINK;
    wake_timecode_task();
}

/*
 * Quiet window before an ISR-dispatched edge.
 *
 * The ISR dispatch path writes the event within ~1.4 us of the edge, unless the edge finds interrupts
 * disabled: a context switch keeps them off for ~20 us, the receive interrupt that wakes the serial
 * task and switches to it for ~30 us, the kernel tick for ~20 us (tests/test_quiet_window.py provokes
 * all of these and saw up to 32.9 us without this mechanism). The next edge is predictable (the last edge
 * plus the measured tick length), so when the output is armed for the ISR:
 *
 *  - exb_arm sets Timer1 compare B to GUARD_COUNTS (1 ms) before the predicted edge;
 *  - its interrupt wakes the timecode task (highest priority but the load's), which enters board_guard(): it holds
 *    the kernel tick (Timer0 compare interrupt masked), sets the quiet flag, and sleeps in idle mode,
 *    interrupts enabled, until the armed output has been written (or GUARD_TIMEOUT has passed: a
 *    missing or glitched edge must not hold the CPU for ever);
 *  - while it holds the CPU no other task can run, so there is no context switch and no kernel
 *    critical section; the interrupt handlers that may still run make no kernel call in the quiet
 *    window (the receive ISR defers waking the serial task to the end of the window, the load's
 *    periodic timer its release: see "load" below) and are short.
 *
 * So the edge finds the CPU asleep or in a short handler: the worst case is an edge that arrives just
 * as the quiet receive handler starts (its ~87 cycles, then the front half's ~22): 6.8 us measured by
 * tests/test_quiet_window.py (320 edges, serial traffic aimed at them), against 32.9 us without the
 * window. The costs: the timecode task holds the CPU ~1 ms per tick in which an ISR event is due
 * (serial frames are decoded up to ~1 ms later), and the kernel tick that falls in the window is
 * counted late, at the end of the window (the window is far shorter than a kernel tick, so at most one
 * is late and none is lost). The compare B interrupt also ends the sleep at the timeout; it then makes
 * no kernel call, but its C prologue saves ~16 registers: it comes 1 ms after the predicted edge, so
 * only an edge over 1 ms late could meet it.
 *
 * If the output is armed less than GUARD_MIN before the predicted edge (an event scheduled for the very
 * next tick at the last moment), there is no time to switch to the timecode task safely, and no guard
 * is started: that edge is served as fast as it can be, without the guarantee.
 */
/* The load's periodic task, and a release the compare interrupt held back during the quiet window
 * (ISR sets, board_guard reads and clears with interrupts off: volatile). See "load" below. */
static TaskHandle_t load_task;
static volatile uint8_t load_deferred;

#define GUARD_COUNTS 250u         /* 1 ms at F_CPU / 64 */
#define GUARD_TIMEOUT (2u * GUARD_COUNTS)
#define GUARD_MIN 25u             /* 100 us */
#define QUIET_SET() (GPIOR0 |= _BV(1))
#define QUIET_CLEAR() (GPIOR0 &= (uint8_t)~_BV(1))
/* Set by the compare B interrupt, read and cleared by the timecode task: volatile. */
static volatile uint8_t guard_due;
/* The receive ISR found a reason to wake the serial task during the quiet window (ISR writes, task
 * reads and clears with interrupts off): volatile. */
static volatile uint8_t rx_wake_deferred;

/* Measured tick length in Timer1 counts, or the nominal one if implausible (boot, glitches). Call
 * with interrupts disabled (edge_t and edge_prev change in the pin-change ISR). */
static uint16_t tick_counts(void)
{
    uint16_t len = (uint16_t)(edge_t - edge_prev);

    if (len < BOARD_TICK_COUNTS / 2u || len > BOARD_TICK_COUNTS + BOARD_TICK_COUNTS / 2u)
        len = BOARD_TICK_COUNTS;
    return len;
}

/* With interrupts disabled (exb_arm, exb_disarm). Re-arming for the same edge computes the same
 * compare value, so the serial task's repeated exb_arm calls do not move it. */
static void guard_schedule(uint8_t isr_armed)
{
    uint16_t now, len, el, rem;

    TIMSK1 &= (uint8_t)~_BV(OCIE1B);
    if (!isr_armed)
        return;
    now = TCNT1;
    len = tick_counts();
    el = (uint16_t)(now - edge_t);
    if (el >= len)
        return; /* the predicted edge has passed: the port shows something else; no guard */
    rem = (uint16_t)(len - el);
    if (rem <= GUARD_MIN)
        return;
    /* now + 2: a compare value equal to TCNT1 at the moment of writing may not match */
    OCR1B = rem > GUARD_COUNTS + 2u ? (uint16_t)(edge_t + len - GUARD_COUNTS) : (uint16_t)(now + 2u);
    TIFR1 = _BV(OCF1B);
    TIMSK1 |= _BV(OCIE1B);
}

ISR(TIMER1_COMPB_vect)
{
    TIMSK1 &= (uint8_t)~_BV(OCIE1B);
    if (QUIET())
        return; /* board_guard's timeout wake-up: it only had to end the sleep */
    guard_due = 1;
    wake_timecode_task();
}

uint8_t board_guard_due(void)
{
    return guard_due;
}

void board_guard(void)
{
    uint16_t t0;
    uint8_t wake_serial, wake_load, missed_tick;

    cli(); /* check, then enter the window, without an interrupt in between */
    guard_due = 0;
    if (!EXA_ISR_ARMED()) {
        sei(); /* disarmed meanwhile (mode change): nothing to guard */
        return;
    }
    QUIET_SET();
    TIMSK0 &= (uint8_t)~_BV(OCIE0A); /* hold the kernel tick (port.c: Timer0 compare A) */
    t0 = TCNT1;
    OCR1B = (uint16_t)(t0 + GUARD_TIMEOUT); /* wakes the sleep below at the timeout */
    TIFR1 = _BV(OCF1B);
    TIMSK1 |= _BV(OCIE1B);
    set_sleep_mode(SLEEP_MODE_IDLE);
    /* Interrupts are off at each check; sei then sleep, and the instruction after sei runs before any
     * interrupt, so an interrupt that ends the wait cannot slip in between the check and the sleep. */
    while (EXA_ISR_ARMED() && (uint16_t)(TCNT1 - t0) < GUARD_TIMEOUT) {
        sleep_enable();
        sei();
        sleep_cpu();
        sleep_disable();
        cli();
    }
    QUIET_CLEAR();
    TIMSK1 &= (uint8_t)~_BV(OCIE1B);
    /* A kernel tick that came due in the window left its flag set. The silicon would take the
     * interrupt as soon as it is unmasked; simavr 1.6 would not (it pends an interrupt only if it is
     * enabled at the moment the flag is raised, and drops it otherwise). So that both count the tick
     * the same way: unmask, and if the flag is set, clear it (which also withdraws the pending
     * interrupt) and hand the tick to the kernel with xTaskCatchUpTicks below. Clearing a flag seen
     * set cannot lose a tick: the next compare match is a whole kernel tick (8 ms) away. */
    TIMSK0 |= _BV(OCIE0A);
    missed_tick = (TIFR0 & _BV(OCF0A)) != 0;
    if (missed_tick)
        TIFR0 = _BV(OCF0A);
    wake_serial = rx_wake_deferred;
    rx_wake_deferred = 0;
    wake_load = load_deferred;
    load_deferred = 0;
    sei();
    if (missed_tick)
        xTaskCatchUpTicks(1); /* the edge is past: the kernel's critical sections are harmless now */
    if (wake_serial)
        xTaskNotifyGive(serial_task);
    if (wake_load)
        xTaskNotifyGive(load_task); /* above us: its job runs now, then we carry on */
}

uint16_t exb_phase(void)
{
    uint16_t now, e, len, el;
    uint8_t s = SREG;

    cli(); /* edge_t and edge_prev change in the pin-change ISR */
    now = TCNT1;
    e = edge_t;
    len = tick_counts();
    SREG = s;
    el = (uint16_t)(now - e);
    if (el >= len)
        return 0xFFFFu;
    return (uint16_t)(((uint32_t)el << 16) / len);
}

/* ---- moments inside a tick (PERIODIC, protocol version 5) ------------------------------------------ */
/*
 * The core arms one moment at a time (exb_arm_moment): the tick it is in (the timecode port's low byte,
 * the current tick's or the next one's) and its place as a fraction of the tick (phase / 65536). The
 * board places it in the tick length it measured in its own clock between the last two edges
 * (tick_counts(): the executor's resonator, not the profiler's, which a series' counts are in), from
 * that tick's edge: compare = edge_t + phase x len / 65536, on Timer1's compare C (free: A is the settle
 * timer, B the guard). For a moment of the next tick the pin-change interrupt computes it at the edge
 * (moment_at_edge: a 16 x 16 multiply, about 20 cycles). Timer1 counts at F_CPU / 64, 4 us: the edge is
 * known to the count it fell in and the compare matches at a count, so a moment goes out 4 to 12 us after
 * its time (two counts added: never before it), and the tick length it is scaled by is known to one count
 * in 17778 (at the end of a tick up to 4 us either way, varying tick to tick; no drift). No quiet window:
 * a moment's interrupt meets whatever the executor is doing (a kernel critical section holds it up to
 * about 40 us), which is what a series measures of it. A moment whose time has passed when it is
 * armed goes out at once (late); the core reports each one (FIRED) when the timecode task runs next.
 *
 * Shared with the interrupts (pin change, compare C) and the timecode task: volatile; every change by a
 * task is made with interrupts off.
 */
static volatile uint8_t mom_path, mom_tc8;
static volatile uint16_t mom_phase;

/* The moment's time has come: out now (ISR path, or a task that armed it late) or on the task path
 * through the timecode task. Interrupts off. */
static void moment_out(uint8_t in_task)
{
    TIMSK1 &= (uint8_t)~_BV(OCIE1C);
    MOM_WAIT_CLEAR();
    if (mom_path == EXB_ARM_ISR || in_task) {
        PORTC = mom_out;
        mom_done = 1;
    } else {
        mom_due = 1;
    }
}

/* The compare for the armed moment, from the edge of its tick (edge_t) and the last tick length. Interrupts
 * off. Returns 1 if its time had passed (then it is out already, or due for the task). */
static uint8_t moment_compare(uint8_t in_task)
{
    /* + 2: edge_t is the count the edge fell in, up to one count (4 us) after the edge itself, and the tick
     * length is known to a count, which at the end of a tick is a count more; with nothing added a moment went
     * out up to 2.6 us before its time on the bench, with one count added 0.44 us (an early event, made by the
     * executor's own rounding) */
    uint16_t off = (uint16_t)((((uint32_t)mom_phase * tick_counts()) >> 16) + 2u);
    uint16_t el = (uint16_t)(TCNT1 - edge_t);

    MOM_WAIT_CLEAR();
    /* + 2: a compare value equal to TCNT1 at the moment of writing may not match */
    if ((uint32_t)el + 2u >= off) {
        moment_out(in_task);
        return 1;
    }
    OCR1C = (uint16_t)(edge_t + off);
    TIFR1 = _BV(OCF1C);
    TIMSK1 |= _BV(OCIE1C);
    return 0;
}

/* From the pin-change interrupt at an edge: a moment waiting for this tick gets its compare (one out at
 * once, late, is reported after the edge's own wake-up of the timecode task). */
static void moment_at_edge(void)
{
    if (edge_val == mom_tc8)
        moment_compare(0);
}

void exb_arm_moment(uint8_t path, uint8_t tc8, uint16_t phase, uint8_t out)
{
    uint8_t s = SREG;

    cli();
    TIMSK1 &= (uint8_t)~_BV(OCIE1C);
    mom_path = path;
    mom_tc8 = tc8;
    mom_phase = phase;
    mom_out = out & EVENT_MASK;
    mom_done = 0;
    mom_due = 0;
    MOM_WAIT_SET();
    if (edge_val == tc8)
        moment_compare(1); /* its tick has begun: the compare now (or out now, late) */
    SREG = s;
}

uint8_t exb_moment_done(void)
{
    return mom_done;
}

uint8_t exb_disarm_moment(void)
{
    uint8_t s = SREG;
    uint8_t d;

    cli();
    TIMSK1 &= (uint8_t)~_BV(OCIE1C);
    MOM_WAIT_CLEAR();
    mom_due = 0;
    d = mom_done;
    mom_done = 0;
    SREG = s;
    return d;
}

/* Waking the timecode task switches to it inside this handler, with interrupts off for about 430 cycles
 * (27 us). A timecode edge that came meanwhile was noted that much late, and the tick after it measured that
 * much short: on the bench, every 9th tick (when a 1 ms grid's moment falls on the edge) the next tick's
 * moments came up to 19 us early. So a moment within MOM_EDGE_GUARD of the predicted edge (ISR path) leaves
 * the wake-up to the edge's own, which follows at once and reports it as well. */
#define MOM_EDGE_GUARD 13u /* counts: 52 us, twice the switch */
ISR(TIMER1_COMPC_vect)
{
    uint16_t el, len;

    moment_out(0); /* first: the port write is what is measured (the test below cost it 4 us before it) */
    el = (uint16_t)(TCNT1 - edge_t);
    len = tick_counts();
    if (mom_path == EXB_ARM_ISR && el < len && (uint16_t)(len - el) < MOM_EDGE_GUARD)
        return; /* out already; the edge's wake-up (the next +1 step) lets the core report it */
    wake_timecode_task(); /* the core reports it (FIRED) and arms the next; on the task path writes it first */
}

/* ---- reset cause -------------------------------------------------------------------------------- */
/*
 * HELLO.reset_cause is MCUSR as the earliest start-up code finds it (avr-libc's .init3 idiom: after
 * the stack pointer and r1 are set up in .init2, before .data/.bss are initialised in .init4, so the
 * variable lives in .noinit or .init4 would zero it). Then MCUSR is cleared, so the next reset's
 * cause is not mixed with this one's, and the watchdog is switched off: after a watchdog reset the
 * AVR keeps the watchdog enabled at its shortest period (WDRF set forces WDE), about 16 ms, and a
 * start-up longer than that would reset again and again. WDRF must be cleared before WDE can be
 * (datasheet 12.5), hence MCUSR = 0 first. main() enables the watchdog again when the tasks are set
 * up (board_wdt_start). Not volatile: written once before main, read only after.
 */
static uint8_t reset_cause __attribute__((section(".noinit")));

void board_read_reset_cause(void) __attribute__((naked, used, section(".init3")));
void board_read_reset_cause(void)
{
    reset_cause = MCUSR;
    MCUSR = 0;
    wdt_disable();
}

uint8_t exb_reset_cause(void)
{
    return reset_cause;
}

/* ---- serial ------------------------------------------------------------------------------------- */

#define RX_SIZE 64u /* powers of two */
#define TX_SIZE 128u
static volatile uint8_t rx_buf[RX_SIZE], tx_buf[TX_SIZE];
static volatile uint8_t rx_head, rx_tail, tx_head, tx_tail;
/*
 * Received bytes lost before the core saw them (COUNTERS.rx_ring_overflow, rx_hw_overrun). Incremented
 * only by the receive ISR and read by the serial task (exb_rx_lost): volatile, so that the ISR's
 * increments are not cached across the task's reads. They are 16-bit: the AVR reads and writes them
 * one byte at a time, so the task reads them with interrupts off (exb_rx_lost), or an increment from
 * 0x00FF to 0x0100 between its two byte reads would give 0x01FF or 0x0000. The ISR needs no critical
 * section: interrupts are off in every handler here (none is ISR_NOBLOCK).
 */
static volatile uint16_t rx_ring_overflow, rx_hw_overrun;

/* Bytes go into a ring; the serial task is woken only at a frame delimiter or when the ring is half
 * full, so a 13-byte SCHEDULE costs one context switch, not thirteen. A byte that finds the ring full
 * is dropped and counted (rx_ring_overflow); the frame it belonged to then fails its CRC or COBS check
 * and is counted there too. The data-overrun flag DOR0 (a byte arrived while the USART's two-byte
 * receive FIFO was full: at least one byte lost in the hardware, before this one) belongs to the byte
 * at the head of the FIFO and must be read before UDR0 (datasheet 22.7.4); it counts lost occasions,
 * not lost bytes (the USART cannot tell how many). Frame errors (FE0) are not counted: the SPEC row is
 * data overrun only. Returns 1 if the serial task should be woken. */
static inline __attribute__((always_inline)) uint8_t rx_store(void)
{
    uint8_t st = UCSR0A;
    uint8_t b = UDR0;
    uint8_t h = rx_head;
    uint8_t n = (uint8_t)((h + 1u) & (RX_SIZE - 1u));

    if (st & _BV(DOR0))
        rx_hw_overrun++;
    if (n != rx_tail) {
        rx_buf[h] = b;
        rx_head = n;
    } else {
        rx_ring_overflow++;
    }
    return b == 0 || (uint8_t)((n - rx_tail) & (RX_SIZE - 1u)) >= RX_SIZE / 2u;
}

/*
 * The receive interrupt, in two versions chosen by a naked front (4 cycles): in the quiet window
 * (GPIOR0 bit 1) a handler that makes no kernel call, so the compiler saves only the few registers it
 * uses, and an edge that arrives while it runs waits ~80 cycles, not ~110 (tests/test_quiet_window.py:
 * worst ISR dispatch 8.25 us with one handler, 6.38 us with two; 6.81 us since the handler reads
 * UCSR0A and counts lost bytes, protocol version 2); otherwise the handler that wakes the
 * serial task.
 */
void __vector_usart0_rx_quiet(void) __attribute__((signal, used, externally_visible));
void __vector_usart0_rx_wake(void) __attribute__((signal, used, externally_visible));

ISR(USART0_RX_vect, ISR_NAKED)
{
    __asm__ __volatile__(
        "sbis %[gpior0], 1"     "\n\t"
        "jmp  __vector_usart0_rx_wake"   "\n\t"
        "jmp  __vector_usart0_rx_quiet"  "\n\t"
        :
        : [gpior0] "I"(_SFR_IO_ADDR(GPIOR0)));
}

void __vector_usart0_rx_quiet(void)
{
    if (rx_store())
        rx_wake_deferred = 1; /* board_guard wakes the serial task at the end of the window */
}

void __vector_usart0_rx_wake(void)
{
    BaseType_t woken = pdFALSE;

    if (rx_store()) {
        vTaskNotifyGiveFromISR(serial_task, &woken);
        if (woken != pdFALSE)
            portYIELD_FROM_ISR();
    }
}

void exb_rx_lost(uint16_t *ring_overflow, uint16_t *hw_overrun)
{
    uint8_t s = SREG;
    cli(); /* 16-bit values the receive ISR updates: read each in one piece (see their definition) */
    *ring_overflow = rx_ring_overflow;
    *hw_overrun = rx_hw_overrun;
    SREG = s;
}

int16_t board_rx_get(void)
{
    uint8_t t = rx_tail;
    uint8_t b;

    if (t == rx_head)
        return -1;
    b = rx_buf[t];
    rx_tail = (uint8_t)((t + 1u) & (RX_SIZE - 1u));
    return b;
}

/* BAUD (SPEC.md 0x06): the switch waits in the transmit path. exb_baud_set (task, interrupts masked)
 * sets baud_at (the ring index of the first byte to go at the new rate), baud_ubrr and baud_due; the
 * UDRE ISR stops at baud_at and hands over to the TXC ISR, which fires once the last byte at the old rate
 * has left the shift register, switches and lets the UDRE ISR go on. The ISRs do not nest (AVR), and
 * the task writes these only with interrupts masked: volatile for the task's reads after the ISRs. */
static volatile uint8_t baud_due, baud_at;
static volatile uint16_t baud_ubrr;
/* UCSR0A's U2X0 bit in force: exb_tx_kick writes UCSR0A (to clear TXC0) and must keep it. Written by
 * init and the switch (an ISR), read by exb_tx_kick with interrupts masked. */
static uint8_t ucsra_u2x;
static void baud_switch(void);

ISR(USART0_UDRE_vect)
{
    uint8_t t = tx_tail;

    if (baud_due && t == baud_at) {
        /* every byte before baud_at is written: switch once the last has left (TXC). Already left
         * (TXC0 set): now. Else the TXC ISR does, when it has. (simavr 1.6 only calls the TXC vector
         * for a flag raised while TXCIE0 is on, hence the test here rather than relying on the vector
         * firing for a flag already set, as the silicon would.) */
        if (UCSR0A & _BV(TXC0))
            baud_switch();
        else
            UCSR0B = (uint8_t)((UCSR0B & (uint8_t)~_BV(UDRIE0)) | _BV(TXCIE0));
    } else if (t != tx_head) {
        UDR0 = tx_buf[t];
        tx_tail = (uint8_t)((t + 1u) & (TX_SIZE - 1u));
    } else {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
    }
}

/* ISR (UDRE or TXC): the switch, then the UDRE ISR goes on with the bytes after baud_at. */
static void baud_switch(void)
{
    uint16_t u = baud_ubrr;

    ucsra_u2x = _BV(U2X0);
    /* Before UBRR0: simavr 1.6 derives its byte time when UBRR0 is written. UDRE0 written back as read:
     * read-only on the silicon, a plain register bit in simavr 1.6. */
    UCSR0A = (uint8_t)(_BV(U2X0) | (UCSR0A & _BV(UDRE0)));
    UBRR0H = (uint8_t)(u >> 8);
    UBRR0L = (uint8_t)u;
    baud_due = 0;
    /* UDRIE0 off, then on: simavr 1.6 raises UDRE only on that edge (or at a byte's end), not for a
     * UDRIE0 left on after the UDRE ISR that called this; the silicon's level-triggered UDRE would fire
     * either way. */
    UCSR0B = (uint8_t)(UCSR0B & (uint8_t)~(_BV(TXCIE0) | _BV(UDRIE0)));
    UCSR0B |= _BV(UDRIE0);
}

ISR(USART0_TX_vect)
{
    baud_switch();
}

/* USART0 in double speed, UBRR0 = round(F_CPU / (8 * baud)) - 1 (12 bits); the token is UBRR0 + 1.
 * 115200 -> UBRR0 16 = 117647 baud (+2.1 %); 9600 .. 57600 within 0.2 %. */
uint16_t exb_baud_check(uint16_t hundreds)
{
    return mm_baud_div(F_CPU / 8ul, hundreds, 4096u);
}

/* Task (core lock held). The frame on the line: the bytes up to the first delimiter from tx_tail, unless
 * the byte last handed to UDR0 was a delimiter (then no frame has begun since). The ring is never empty of
 * history here: the boot HELLO went first. */
void exb_baud_set(uint16_t div)
{
    uint8_t s = SREG;
    uint8_t t, at;

    cli();
    t = tx_tail;
    at = t;
    if (tx_buf[(uint8_t)((t - 1u) & (TX_SIZE - 1u))] != 0) {
        while (at != tx_head && tx_buf[at] != 0)
            at = (uint8_t)((at + 1u) & (TX_SIZE - 1u));
        if (at != tx_head)
            at = (uint8_t)((at + 1u) & (TX_SIZE - 1u)); /* past the delimiter */
    }
    baud_at = at;
    baud_ubrr = (uint16_t)(div - 1u);
    baud_due = 1;
    UCSR0B |= _BV(UDRIE0);  /* the UDRE ISR reaches baud_at even with nothing queued */
    SREG = s;
}

uint8_t exb_tx_room(void)
{
    return (uint8_t)((tx_tail - tx_head - 1u) & (TX_SIZE - 1u));
}

void exb_tx_put(uint8_t byte)
{
    uint8_t h = tx_head;
    tx_buf[h] = byte;
    tx_head = (uint8_t)((h + 1u) & (TX_SIZE - 1u));
}

void exb_tx_kick(void)
{
    uint8_t s = SREG;
    cli();
    /* TXC0 cleared at each kick (not with each byte: the UDRE ISR stays as it was): set, it then means
     * every byte written since has left, which the BAUD switch relies on when the UDRE ISR reaches
     * baud_at. Not while a switch is due: the bytes before baud_at were kicked already, and clearing a
     * TXC0 the last of them has just set would leave the switch waiting for a TXC that never comes.
     * Writing 1 clears it; FE0/DOR0/UPE0 must be written 0; UDRE0 written back as read (read-only on the
     * silicon, a plain register bit in simavr 1.6). */
    if (!baud_due)
        UCSR0A = (uint8_t)(ucsra_u2x | _BV(TXC0) | (UCSR0A & _BV(UDRE0)));
    UCSR0B |= _BV(UDRIE0);
    SREG = s;
}

/* ---- load: the periodic task's timer (protocol version 3, SPEC.md MODE) --------------------------- */
/*
 * The load's periodic task (main.c, load_periodic_task) is released by Timer3's compare A interrupt.
 * Why Timer3: it is a 16-bit timer nothing else uses. Timer0 is the kernel tick (FreeRTOSConfig.h),
 * Timer1 the phase, settle and guard timer above; Timer2 is 8-bit (periods of 1..65 ms would need a
 * software postscaler, i.e. extra interrupts); Timer4 and Timer5 would do as well, Timer3 is the first
 * free one. None of its pins is used (COM3x = 0: the compare outputs stay disconnected).
 *
 * CTC mode (WGM 4, TOP = OCR3A): the hardware restarts the count at each compare match, so releases
 * come every period exactly, without drift, and the interrupt reprograms nothing. Clock F_CPU / 8 (2
 * counts per us: exact to 0.5 us) for periods up to 32767 us (TOP at most 65533), F_CPU / 64 (4 us
 * per count, rounded to the nearest) above. The job's length is measured on the same counter, from the
 * moment the job starts: exact to one count, whatever interrupts take meanwhile, since it is clocked
 * by the crystal, not counted in instructions.
 *
 * A release that finds the previous job not finished (running, or released and not started yet) is not
 * served: it is counted as an overrun. So the periodic task never takes more than exec / period of the
 * CPU (at most half, the core refuses more), whatever delays it.
 *
 * In the quiet window (GPIOR0 bit 1, see "quiet window" above) the release makes no kernel call and no
 * task switch: it is held (load_deferred) and board_guard releases the task when the window ends, at
 * most GUARD_TIMEOUT (2 ms) later, in practice just after the ISR-dispatched edge. So the periodic load
 * leaves the ISR dispatch path's guarantee as it was, and delays the task dispatch path (the timecode
 * task is below it) by up to exec when an edge comes during a job: the two paths differ visibly.
 * Measured (tests/test_executor_load.py's campaign, 60 events per path, CPU load on): at 10000 us /
 * 2000 us ISR dispatch 1.31..1.38 us, task dispatch median 36.6 us, max 1322 us, no overrun; at
 * 1000 us / 500 us ISR 1.38 us every time, task max 625 us, and 25 overruns: releases held in the
 * window, which is about a period long, the next release then finds the held one not started; at
 * 65535 us / 32767 us ISR 1.31..1.38 us, task max 32.7 ms.
 */
#define LOAD_SLOW_US 32767u /* longest period at F_CPU / 8 */
/* 1 from the release until the job has finished: the interrupt sets it, the task clears it (volatile:
 * each reads what the other wrote). One byte: its reads and writes are atomic. */
static volatile uint8_t load_busy;
/* Releases not served (STATUS.periodic_overruns): incremented by the interrupt only, read by
 * board_load_counts with interrupts off (16 bits, two byte reads): volatile, like the receive counters. */
static volatile uint16_t load_overruns;
/* Jobs run (STATUS.periodic_runs): written by the periodic task only. The task is above every other
 * task and no interrupt handler touches it, so nothing reads it in the middle of the task's increment;
 * the reader (serial task, lower priority) can be preempted in the middle of its read, so it reads
 * with interrupts off (board_load_counts). Not volatile: the task's increment is stored before it blocks
 * (the kernel call is a compiler barrier). */
static uint32_t load_runs;
/* Counts per period and per job (0, 0: no periodic load). Written by board_load_periodic (serial task)
 * with interrupts off, read by the job. The job never sees them half-written: the serial task is below
 * the periodic task, which can take the CPU from it only through the release interrupt, and that is
 * off while they change. Not volatile: the job reads them after a kernel call (a compiler barrier). */
static uint16_t load_cycle, load_exec;

void board_set_load_task(TaskHandle_t periodic)
{
    load_task = periodic;
}

void board_load_periodic(uint16_t period_us, uint16_t exec_us)
{
    uint8_t cs = 0, s;
    uint16_t cycle = 0, exec = 0;

    if (period_us != 0 && period_us <= LOAD_SLOW_US) {
        cs = _BV(CS31);                          /* F_CPU / 8: 2 counts per us */
        cycle = (uint16_t)(2u * period_us);
        exec = (uint16_t)(2u * exec_us);
    } else if (period_us != 0) {
        cs = _BV(CS31) | _BV(CS30);              /* F_CPU / 64: 4 us per count, nearest */
        cycle = (uint16_t)(period_us / 4u + ((period_us & 3u) >= 2u));
        exec = (uint16_t)(exec_us / 4u + ((exec_us & 3u) >= 2u));
    }
    s = SREG;
    cli(); /* the pair changes together for the job (see above); TCNT3 and OCR3A are 16-bit: TEMP */
    TCCR3B = 0; /* stop the clock */
    TIMSK3 = 0;
    load_cycle = cycle;
    load_exec = exec;
    if (cs) {
        TCCR3A = 0;
        TCNT3 = 0;
        OCR3A = (uint16_t)(cycle - 1u);          /* CTC: TOP + 1 counts per period */
        TIFR3 = _BV(OCF3A);
        TIMSK3 = _BV(OCIE3A);
        TCCR3B = _BV(WGM32) | cs;                /* the first release one period from now */
    }
    SREG = s;
}

/* The periodic job: holds the CPU for load_exec counts of Timer3 from now, then counts itself. The
 * counter restarts at TOP, so the time elapsed is taken modulo the period (exec is at most half of
 * it, and the loop reads the counter far more often than that). TCNT3 is read without a critical
 * section: no interrupt handler uses Timer3's 16-bit registers (their shared TEMP byte). */
#ifndef EX_MASKED_JOB
#define EX_MASKED_JOB 0
#endif
void board_load_job(void)
{
    uint16_t cycle = load_cycle, exec = load_exec, start, el;
#if EX_MASKED_JOB
    uint8_t s;
#endif

    if (cycle == 0) {
        load_busy = 0; /* a release still pending when the load was turned off: nothing to do */
        return;
    }
#if EX_MASKED_JOB
    /* The test-only image (make avr MASKED_JOB=1): the whole job with interrupts masked, a critical
     * section of a known length (EXEC), for the tests that plant one (`mmrig explain` must name it) */
    s = SREG;
    cli();
#endif
    start = TCNT3;
    do {
        uint16_t now = TCNT3;
        el = now >= start ? (uint16_t)(now - start) : (uint16_t)(now - start + cycle);
    } while (el < exec);
#if EX_MASKED_JOB
    SREG = s;
#endif
    load_runs++;
    load_busy = 0;
}

/* Call with interrupts disabled. */
void board_load_counts(uint32_t *runs, uint16_t *overruns)
{
    *runs = load_runs;
    *overruns = load_overruns;
}

/* What a release costs besides the job: about 109 us of CPU, measured as the CPU load's loss at
 * 1000 us / 0 us (43718 against 49059 passes/s, 10.9 % at 1000 releases/s; tests/test_executor_load.py
 * set-up): this interrupt, the notification, the switch to the periodic task, its return to the wait,
 * the switch back, and, with the CPU load on, the idle task's turn at the idle priority (it yields at
 * once). Hence the core's 1 ms minimum period.
 *
 * The release, in two versions chosen by a naked front (4 cycles), as the receive interrupt: in the
 * quiet window a handler that makes no kernel call (it saves only the few registers it uses),
 * otherwise the one that notifies the periodic task and switches to it. */
void __vector_timer3_compa_quiet(void) __attribute__((signal, used, externally_visible));
void __vector_timer3_compa_wake(void) __attribute__((signal, used, externally_visible));

ISR(TIMER3_COMPA_vect, ISR_NAKED)
{
    __asm__ __volatile__(
        "sbis %[gpior0], 1"     "\n\t"
        "jmp  __vector_timer3_compa_wake"   "\n\t"
        "jmp  __vector_timer3_compa_quiet"  "\n\t"
        :
        : [gpior0] "I"(_SFR_IO_ADDR(GPIOR0)));
}

void __vector_timer3_compa_quiet(void)
{
    if (load_busy) {
        load_overruns++;
        return;
    }
    load_busy = 1;
    load_deferred = 1; /* board_guard releases the task at the end of the window */
}

/* It notifies with vTaskNotifyGiveFromISR, as the receive interrupt does, not with the timecode task's
 * xTaskNotifyFromISR: a second caller of that one would keep LTO from specialising it for the timecode
 * task (measured: +20 cycles, 36.8 -> 38.0 us, on the task dispatch path, test_executor_sim.py). */
void __vector_timer3_compa_wake(void)
{
    BaseType_t woken = pdFALSE;

    if (load_busy) {
        load_overruns++;
        return;
    }
    load_busy = 1;
    vTaskNotifyGiveFromISR(load_task, &woken);
    if (woken != pdFALSE)
        portYIELD_FROM_ISR();
}

/* ---- LED, init ---------------------------------------------------------------------------------- */

void board_led_toggle(void)
{
    PINB = LED_BIT; /* writing 1 to PINx toggles PORTx */
}

void board_led_on(void)
{
    PORTB |= LED_BIT;
}

void board_init(void)
{
    DDRK = 0x00; /* timecode in */
    /* The internal pull-ups on: an input nothing drives picks up noise, and every noise change on
     * port K is a pin-change interrupt, a timecode the core takes for a tick (counted, and wrong
     * timecodes in STATUS and FIRED). That happens while the profiler resets (its PORTA is input then),
     * with it unplugged, or before it starts. With the pull-up an undriven line reads 1; the profiler
     * drives PORTA push-pull, which overrides the pull-up, so nothing changes while it runs.
     * EX_PULLUPS=0 (make avr PULLUPS=0, a test-only image) leaves them off. */
#if EX_PULLUPS
    PORTK = 0xFF;
#else
    PORTK = 0x00;
#endif
    PORTC = 0x00;
    DDRC = EVENT_MASK;
    DDRB |= LED_BIT;

    TCCR1A = 0;
    TCCR1B = _BV(CS11) | _BV(CS10); /* Timer1 free running, F_CPU / 64 */

    UBRR0H = UBRRH_VALUE;
    UBRR0L = UBRRL_VALUE;
#if USE_2X
    UCSR0A = _BV(U2X0);
    ucsra_u2x = _BV(U2X0);
#else
    UCSR0A = 0;
    ucsra_u2x = 0;
#endif
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00); /* 8N1 */
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);

    edge_val = PINK;
    woken_for = edge_val;
    edge_t = TCNT1;
    edge_prev = edge_t; /* tick length 0: implausible, exb_phase uses the nominal one until two edges */
    PCMSK2 = 0xFF;
    PCIFR = _BV(PCIF2);
    PCICR |= _BV(PCIE2);
}
