/*
 * AVR board layer: ATmega2560 at 16 MHz (Arduino Mega 2560).
 *
 *   PORTA (Mega 22..29)   timecode out
 *   PC0..PC2 (Mega 37,36,35)  event id in
 *   PL1 = ICP5 (Mega 48)  strobe in, toggled once per event: Timer5 input capture, both edges
 *   PORTF (A0..A7)        event LEDs, active high
 *   USART0 (USB)          serial link to the PC, 8N1, double speed
 *
 * Time: Timer5 runs free at the CPU clock (no prescaler); its overflow ISR extends it to 32 bits.
 * The timecode tick is an OCR5A match TICK_EARLY cycles before the tick's moment T; the ISR then
 * spins on TCNT5L and pads with a computed number of NOPs so that the PORTA write lands on the
 * same timer count every tick (the tick period is exactly PF_TICK_COUNTS cycles). Right after the
 * write it reads TCNT5, which gives the port-change moment as a timer value (no assumed offset:
 * PORT_READ_LAG below is the instruction distance from the OUT to that read). Edge timestamps are
 * ICR5 (latched by hardware at the edge) minus that moment.
 */
#include <avr/io.h>
#include <avr/interrupt.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include "pf_core.h"

#define F_CPU PF_CPU_HZ
#include <util/delay.h>
#include <util/delay_basic.h>

/* Cycles the compare fires ahead of the tick: covers the other ISRs. Measured in simavr (the
 * tests' run): the ISR reaches its coarse wait 256 cycles before the spin's target when no other ISR
 * delays it. 448 = 400 + the 48 cycles pf_tick_tx takes before the spin (measured), which keep that
 * slack at 256. */
#define TICK_EARLY 448u
#define SPIN_TARGET 15u    /* cycles from the last TCNT5L read of the spin to the OUT (see tick_isr) */
#define PORT_READ_LAG 1u   /* the TCNT5 read after the OUT happens 1 cycle after the OUT */

/* HELLO.reset_cause: MCUSR as it was at reset (power-on 0x01, external 0x02, brown-out 0x04, watchdog
 * 0x08, JTAG 0x10: MM_RESET_*, the bits as they are). Read in .init3, the earliest start-up code that
 * may be C (after avr-libc's .init2 set the stack and r1, before .bss is cleared and main runs), then
 * MCUSR is cleared (the flags would pile up over resets) and the watchdog stopped: after a watchdog
 * reset it stays enabled at its shortest period (16 ms, WDRF set: WDE cannot be cleared before WDRF),
 * and the C start-up and the LED self test (240 ms) would never reach board_start, which enables it
 * again. In .noinit so the .bss clearing that follows leaves it alone. Written once here, before any
 * interrupt can run, and only read afterwards (by F): no volatile, no critical section. */
static uint8_t mcusr_at_reset __attribute__((section(".noinit")));

static void read_reset_cause(void) __attribute__((naked, used, section(".init3")));
static void read_reset_cause(void)
{
    mcusr_at_reset = MCUSR;
    MCUSR = 0;
    wdt_disable();
}

uint8_t board_reset_cause(void)
{
    return (uint8_t)(mcusr_at_reset & (MM_RESET_POWER_ON | MM_RESET_EXTERNAL | MM_RESET_BROWN_OUT |
                                        MM_RESET_WATCHDOG | MM_RESET_JTAG));
}

/* Watchdog (a profiler that hangs must reset, and say so in HELLO.reset_cause = 0x08).
 * Fed only when both the main loop and the tick ISR are alive: the tick ISR sets wd_tick at every tick,
 * and the main loop (board_watchdog_main, every pass) feeds the watchdog only if wd_tick is set, and
 * clears it. A stuck main loop, a stuck ISR (interrupts masked for good) or a tick that stopped all
 * end in a watchdog reset. The other ISRs (capture, UART) run only when the outside world sends
 * something, so they cannot be asked to check in.
 * Period: WDTO_120MS, 16K cycles of the 128 kHz watchdog oscillator: 0.125 s typical at 5 V
 * (datasheet), 128 ms in simavr (2048000 CPU cycles). The facts it rests on: a tick is exactly
 * 1137778 cycles = 71.11 ms (measured in simavr, tests/test_avr.py), and the main loop runs within a
 * few hundred microseconds of every tick (the tick ISR wakes it; its longest step is the TIMECODE
 * encoded ahead, 1864 cycles = 116 us, measured), so two feeds are at most about 71.7 ms apart: 53 ms
 * (43 %) of margin for the oscillator's spread. One missed tick check-in already resets (2 ticks =
 * 142 ms > 125 ms): the tick is the rig's clock, a profiler that skips one is broken. A hang is
 * caught 125 .. 197 ms after the last feed. The next shorter period, 60 ms, is under one tick.
 * wd_tick: written by T (set) and F (clear); volatile for that. No critical section: if T sets it
 * between F's test and F's clear, that check-in is lost, but F has just fed, so the next feed merely
 * waits for the next tick (71 ms < 125 ms). */
#define PF_WDTO WDTO_120MS
static volatile uint8_t wd_tick;

void board_watchdog_main(void)
{
#if defined(PF_TEST_HANG) && PF_TEST_HANG == 1
    /* Test-only image (Makefile: build/avr-test, never the shipped one): the main loop hangs at
     * timecode 20 with interrupts on, as a foreground deadlock would (tests/test_avr.py). */
    if (pf_timecode() >= 20u)
        for (;;)
            ;
#endif
    if (wd_tick) {
        wd_tick = 0;
        wdt_reset();
    }
}

/* Any interrupt without a handler (a bug): avr-libc would jump to address 0, a restart without a
 * reset (peripherals as they were, MCUSR 0). Wait for the watchdog instead, interrupts off: a real
 * reset, reported as such (reset_cause 0x08). */
ISR(BADISR_vect)
{
    for (;;)
        ;
}

/* Timer5 high word. Written by the overflow ISR, read by the other Timer5 ISRs (interrupts are
 * off inside ISRs on the AVR, so no tearing) and by board_stamp_back (interrupts masked). */
static volatile uint16_t t5_hi;
/* Port-change moments (32-bit timer values) of this tick and the previous one, and the next tick's
 * nominal moment. Written in the compare ISR, read in other ISRs / masked sections. */
static volatile uint32_t tick_at;
static volatile uint32_t tick_prev_at;
static volatile uint32_t tick_next;

/* 32-bit timer value of a 16-bit count read just now (interrupts masked): the high word, plus one
 * if an overflow is pending that the count already reflects. */
static uint32_t extend(uint16_t lo)
{
    uint16_t hi = t5_hi;

    if ((TIFR5 & _BV(TOV5)) && lo < 0x8000u)
        hi++;
    return ((uint32_t)hi << 16) | lo;
}

ISR(TIMER5_OVF_vect)
{
    t5_hi++;
}

ISR(TIMER5_COMPA_vect)
{
    uint16_t lo;
    uint8_t v, t, d;
    int16_t first;
    uint32_t now = extend(TCNT5);
    uint32_t fire = tick_next - TICK_EARLY;

    if ((int32_t)(now - fire) < 0)
        return; /* an earlier wrap of the 16-bit compare: not this tick yet */
    v = pf_tc_next;
    /* This tick's TIMECODE frame, if the core encoded it ahead and the transmitter is free: its first
     * byte goes to UDR0 right after the port write (below), so the frame starts with the tick; the PC
     * dates the tick by it. Asked before the spin, so the write costs the tick only its few cycles.
     * UDRE0 is always set when the core's transmitter is idle (tx_busy is cleared only by the UDRE
     * ISR, which then leaves UDR0 empty): checked anyway, as the data register must be empty. */
    first = (UCSR0A & _BV(UDRE0)) ? pf_tick_tx() : -1;
    t = (uint8_t)(tick_next - SPIN_TARGET);
    /* Coarse wait: the 8-bit spin below must start less than 128 counts before its target. */
    while ((int16_t)(TCNT5 - (uint16_t)(tick_next - SPIN_TARGET - 100u)) < 0)
        ;
    /* Cycle-exact port write. The loop reads TCNT5L every 5 cycles until it reaches t; d = how far
     * past t that read was (0..4); then 4 - d NOPs. From the last read to the OUT: lds 2 + brmi 1 +
     * cpi 1 + brsh 1 + ldi 1 + ldi 1 + add 1 + adc 1 + ijmp 2 + (4 - d) = 15 - d cycles, so the OUT
     * runs at count t + d + 15 - d = tick_next. If the ISR came in late (d > 4) it writes at once. */
    __asm__ __volatile__(
        "1:  lds  %[d], %[tcntl]      \n\t"
        "    sub  %[d], %[t]          \n\t"
        "    brmi 1b                  \n\t"
        "    cpi  %[d], 5             \n\t"
        "    brsh 3f                  \n\t"
        "    ldi  r30, lo8(pm(2f))    \n\t"
        "    ldi  r31, hi8(pm(2f))    \n\t"
        "    add  r30, %[d]           \n\t"
        "    adc  r31, __zero_reg__   \n\t"
        "    ijmp                     \n\t"
        "2:  nop                      \n\t"
        "    nop                      \n\t"
        "    nop                      \n\t"
        "    nop                      \n\t"
        "3:  out  %[porta], %[v]      \n\t"
        "    lds  %A[lo], %[tcntl]    \n\t"
        "    lds  %B[lo], %[tcnth]    \n\t"
        : [d] "=&d"(d), [lo] "=&r"(lo)
        : [t] "r"(t), [v] "r"(v), [tcntl] "n"(_SFR_MEM_ADDR(TCNT5L)),
          [tcnth] "n"(_SFR_MEM_ADDR(TCNT5H)), [porta] "I"(_SFR_IO_ADDR(PORTA))
        : "r30", "r31");
    if (first >= 0) {
        UDR0 = (uint8_t)first;      /* 7 cycles after the port change (tests/test_avr.py) */
        UCSR0B |= _BV(UDRIE0);      /* the UDRE ISR sends the rest (pf_tx_next) */
    }
    tick_prev_at = tick_at;
    tick_at = extend(lo) - PORT_READ_LAG;
    tick_next += PF_TICK_COUNTS;
    OCR5A = (uint16_t)(tick_next - TICK_EARLY);
    pf_tick();
    wd_tick = 1;                    /* the tick ISR checks in (board_watchdog_main) */
#if defined(PF_TEST_HANG) && PF_TEST_HANG == 2
    /* Test-only image: the tick stops at timecode 20 (its interrupt disabled), the main loop runs on. */
    if (pf_tc_next == 21u)
        TIMSK5 &= (uint8_t)~_BV(OCIE5A);
#endif
}

/* Strobe-edge capture. The order matters for edges that come close together: arm for the
 * next edge first, then read the id and the level. An edge after the arming is captured in hardware and
 * comes back here; an edge between the capture and the id read shows as a level that is not the captured
 * edge's, and then the id may be the later event's: the pair is not a measurement of any one event. */
#define REARM_TRIES 4u    /* a strobe that keeps moving while we re-arm: give up, losses stay flagged */
ISR(TIMER5_CAPT_vect)
{
    uint16_t icr = ICR5;
    uint8_t rising = (uint8_t)(TCCR5B & _BV(ICES5));
    uint8_t id, level, lvl, n;
    struct pf_stamp s;
    uint32_t t;

    TCCR5B ^= _BV(ICES5);   /* the next edge goes the other way */
    TIFR5 = _BV(ICF5);      /* changing ICES5 may set ICF5 (datasheet 17.6.3): clear it */
    id = (uint8_t)(PINC & 0x07u);
    level = (uint8_t)(PINL & _BV(PL1));
    t = extend(icr);
    if ((rising != 0) != (level != 0)) {
        /* The strobe moved again before the id was read: two events closer together than the capture
         * separates, or a glitch. ICR5 holds the first edge's time, PINC may hold a later event's id:
         * drop it (pf_spurious counts it and flags the next result "lost before"). Measured on the
         * bench (tests/test_avr.py, test_close_edges): two edges are separated from 85 cycles apart on
         * (5.3 us); without its 20 us gap (exb_output_gap) the executor put a tick's events out 25
         * cycles apart.
         * If the edge that moved it came after the arming above, ICF5 is set and it is measured next;
         * else it was not captured and the capture waits for the wrong way: arm against the level now,
         * and again if the strobe moves while we do (each such edge is lost too, and counted). */
        pf_spurious();
        for (n = 0; n < REARM_TRIES && !(TIFR5 & _BV(ICF5)); n++) {
            lvl = (uint8_t)(PINL & _BV(PL1));
            if (lvl)
                TCCR5B &= (uint8_t)~_BV(ICES5);
            else
                TCCR5B |= _BV(ICES5);
            TIFR5 = _BV(ICF5);
            if ((uint8_t)(PINL & _BV(PL1)) == lvl || (TIFR5 & _BV(ICF5)))
                break;          /* steady since the arming, or the edge that moved it was captured */
            pf_spurious();
        }
        return;
    }
    if ((int32_t)(t - tick_at) >= 0) {
        s.tc_lo = (uint8_t)(pf_tc_next - 1u);
        s.counts = t - tick_at;
    } else {
        /* Captured during the tick ISR's spin, just before the port changed: previous tick. */
        s.tc_lo = (uint8_t)(pf_tc_next - 2u);
        s.counts = t - tick_prev_at;
    }
    s.carry = 0;
    pf_event(id, rising, &s);
}

/* COUNTERS.rx_hw_overrun and rx_ring_overflow (protocol version 2). The USART holds two received
 * bytes and a third in its shift register; when a third complete byte finds no room, it is lost and
 * DOR0 is set, valid until UDR0 is read (ATmega2560 datasheet, USART "Data OverRun"), so UCSR0A is
 * read before UDR0. One DOR0 counts once: it may stand for more than one lost byte if the ISR was away
 * for more than a character while two waited (at 9600 baud a character is 16640 cycles; the longest
 * interrupt-masked stretch is the tick ISR, under 1000 cycles, so it is not expected to happen at
 * all). There is no receive ring to overflow: each byte goes straight into the decoder here, and a
 * frame longer than its buffer is rx_too_long, so rx_ring_overflow stays 0 (pf_core.h). */
ISR(USART0_RX_vect)
{
    /* UCSR0A before UDR0; nothing kept across the call (with the status and byte in locals the ISR
     * saved more registers: the FIRE stamp came 8 cycles later; this way 5, measured in simavr) */
    if (UCSR0A & _BV(DOR0))
        pf_rx_overrun();
    pf_rx_byte(UDR0);
}

ISR(USART0_UDRE_vect)
{
    int16_t b = pf_tx_next();

    if (b < 0)
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
    else
        UDR0 = (uint8_t)b;
}

void board_init(void)
{
    PORTA = 0;
    DDRA = 0xFF;            /* timecode 0 */
    DDRC &= (uint8_t)~0x07u;
    DDRL &= (uint8_t)~_BV(PL1);
    /* The id inputs (PC0..2) and the strobe (PL1 = ICP5) with the internal pull-ups on (DDR 0, PORT 1):
     * an input nothing drives picks up noise, and every noise edge on ICP5 is a capture, a RESULT frame
     * in the ring. That happens in normal mode without an executor, with the executor unplugged, and
     * while the executor resets (its outputs are inputs then): the noise RESULTs fill the 16-entry ring
     * and the FIRE results behind them are lost (the bench shows it: mmbench --unconnected event, with
     * and without PF_PULLUPS; hil/tests/test_unconnected.py). With the pull-up the lines rest at 1 and
     * see no edge; the executor drives PC0..3 push-pull, which overrides the ~35 kOhm pull-up, so
     * nothing changes while it runs. So PL1 needs no external 10 kOhm pull-down (one fitted anyway holds
     * the idle line at ~1.1 V, a valid 0: harmless).
     * PF_PULLUPS=0 (make avr PULLUPS=0, a test-only image) leaves them off. */
#if PF_PULLUPS
    PORTC |= 0x07u;
    PORTL |= _BV(PL1);
#else
    PORTC &= (uint8_t)~0x07u;
    PORTL &= (uint8_t)~_BV(PL1);
#endif
    PORTF = 0;
    DDRF = 0xFF;
    UCSR0A = _BV(U2X0);     /* before UBRR0: simavr 1.6 derives its byte time when UBRR0 is written */
    UBRR0 = (uint16_t)PF_UBRR;
    board_char_counts = 80ul * (PF_UBRR + 1ul);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00); /* 8N1 */
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);
}

void board_start(void)
{
    uint16_t lo;

    TCCR5A = 0;
    TCCR5B = 0;
    TCNT5 = 0;
    t5_hi = 0;
    /* Capture the first edge in the direction away from the strobe's current level. */
    if (PINL & _BV(PL1))
        TCCR5B = _BV(CS50);
    else
        TCCR5B = _BV(ICES5) | _BV(CS50);
    PORTA = 0;
    lo = TCNT5;
    tick_at = lo;           /* tick 0: the timer started just now, the port already shows 0 */
    tick_prev_at = lo;
    tick_next = (uint32_t)lo + PF_TICK_COUNTS;
    OCR5A = (uint16_t)(tick_next - TICK_EARLY);
    TIFR5 = _BV(ICF5) | _BV(OCF5A) | _BV(TOV5);
    TIMSK5 = _BV(ICIE5) | _BV(OCIE5A) | _BV(TOIE5);
    set_sleep_mode(SLEEP_MODE_IDLE);
    wd_tick = 0;
    wdt_enable(PF_WDTO);    /* after the LED self test (240 ms); the first tick comes 71 ms from now */
    sei();
}

void board_leds_write(uint8_t mask)
{
    PORTF = mask;
}

void board_delay_ms(uint16_t ms)
{
    while (ms--)
        _delay_ms(1);
}

void board_uart_kick_tx(void)
{
    PF_CRIT_ENTER();
    UCSR0B |= _BV(UDRIE0);
    PF_CRIT_EXIT();
}

/* Interrupts masked (called from the RX ISR). */
/* s = the time t (32-bit timer), as a tick and counts since its port change. */
static inline __attribute__((always_inline)) void stamp_at(struct pf_stamp *s, uint32_t t)
{
    if ((int32_t)(t - tick_at) >= 0) {
        s->tc_lo = (uint8_t)(pf_tc_next - 1u);
        s->counts = t - tick_at;
    } else {
        s->tc_lo = (uint8_t)(pf_tc_next - 2u);
        s->counts = t - tick_prev_at;
    }
    s->carry = 0;
}

void board_stamp_back(struct pf_stamp *s, pf_count_t back)
{
    stamp_at(s, extend(TCNT5) - back);
}

/* R (the RX ISR, a frame's first byte): one character at the rate in force before now. TCNT5 first,
 * then board_char_counts (see pf_board_cfg.h). */
void board_rx_stamp(struct pf_stamp *s)
{
    uint32_t now = extend(TCNT5);

    stamp_at(s, now - board_char_counts);
}

void board_poll_events(void)
{
}

/* PF_CHAR_COUNTS: 80 * (UBRR0 + 1), one character at the rate in force. Written by F in board_baud_set
 * with interrupts masked, read by R (pf_rx_byte's FIRE stamp): 4 bytes are not written atomically on
 * the AVR. Not volatile: R reads it afresh on every call (an ISR). */
uint32_t board_char_counts;

/* BAUD (core/pf_board.h): USART0 in double speed, UBRR0 = round(F_CPU / (8 * baud)) - 1 (12 bits). The
 * divisor token is UBRR0 + 1. 115200 -> UBRR0 16 = 117647 baud (+2.1 %); 9600 .. 57600 are within
 * 0.2 %; 38400 -> 38462 (+0.16 %). */
uint16_t board_baud_check(uint16_t hundreds)
{
    return mm_baud_div(PF_CPU_HZ / 8ul, hundreds, 4096u);
}

/* F, tx_busy 0: the last frame's delimiter went from UDR0 into the shift register when the UDRE ISR
 * found no next byte (pf_tx_next -1), at most one character before now. So UDR0 is empty and waiting
 * one character at the old rate (10 * 8 * (UBRR0 + 1) cycles, _delay_loop_2's 4 cycles a pass) lets
 * that byte leave at the rate it began at before UBRR0 changes; 1.04 ms at 9600, far inside the
 * watchdog's time. Interrupts stay on meanwhile (the tick and the capture must not wait). */
void board_baud_set(uint16_t div)
{
    uint8_t sreg;

    while (!(UCSR0A & _BV(UDRE0)))
        ;
    _delay_loop_2((uint16_t)(board_char_counts / 4u));
    sreg = SREG;            /* board_char_counts against R (see its definition) */
    cli();
    UCSR0A = _BV(U2X0);     /* before UBRR0: simavr 1.6 derives its byte time when UBRR0 is written */
    UBRR0 = (uint16_t)(div - 1u);
    board_char_counts = 80ul * div;
    SREG = sreg;
}

void board_idle(void)
{
    cli();
    if (!pf_has_work()) {
        sleep_enable();
        sei();      /* the instruction after SEI runs before any interrupt: no lost wake-up */
        sleep_cpu();
        sleep_disable();
    }
    sei();
}
