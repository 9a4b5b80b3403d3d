/*
 * 8051 board layer (SDCC, small model, 87C51: 4 KB code, 128 B RAM).
 *
 *   P1        timecode out (8 bits)
 *   P0.0-2    event id in; P0.3 strobe in, toggled once per event (P0 needs external pull-ups)
 *   P2        event LEDs, active low (LED from Vcc through a resistor into the pin)
 *   P3.0/P3.1 UART, 8N1, Timer1 mode 2 baud generator (0xFD, SMOD=0 at 9600)
 *   Timer0    mode 1, free running: one tick = 65536 machine cycles = 71.11 ms; timestamp = count
 *
 * Event input is the paper's foreground poll of P0 (pf_main.c calls board_poll_events in its loop),
 * so this build never sleeps: idle mode would stop the poll. Timestamp error bound: see
 * docs/hardware.md and tests/test_mcs51.py (the longest stretch without a poll of P0).
 *
 * Timecode: Timer0 has high priority; its ISR writes P1 first and reads TL0 right after, which gives
 * this tick's port-change moment in Timer0 counts (tick_off). Timestamps are counted from that
 * moment, not from the overflow, so the ISR's entry latency does not enter them.
 */
#include "pf_core.h"

#define STROBE 0x08u
#define ID_MASK 0x07u
/* Timer0 counts between the P1 write and the TL0 read that follows it in t0_isr (both 2-cycle
 * direct moves: the port changes at the end of the first, TL0 is read in the second). Calibrated
 * against ucsim's P1 trace in tests/test_mcs51.py. */
#define TL0_AFTER_P1 2u

/* Port-change moments of this tick and the previous one, in counts since their overflow. Written by
 * the Timer0 ISR, read with EA=0 (board_stamp_back): volatile for that reason. */
static volatile uint8_t tick_off;
static volatile uint8_t tick_off_prev;
static uint8_t last_p0;          /* foreground only */

void t0_isr(void) __interrupt(1)
{
    P1 = pf_tc_next;             /* the tick: first statement, before anything else */
    tick_off_prev = tick_off;
    tick_off = (uint8_t)(TL0 - TL0_AFTER_P1);
    pf_tick();
}

void uart_isr(void) __interrupt(4)
{
    int16_t b;

    if (RI) {
        RI = 0;
        pf_rx_byte(SBUF);
    }
    if (TI) {
        TI = 0;
        b = pf_tx_next();
        if (b >= 0)
            SBUF = (uint8_t)b;
    }
}

void board_init(void)
{
    P1 = 0;               /* timecode 0 */
    P2 = 0xFF;            /* LEDs off */
    TMOD = 0x21;          /* Timer1 mode 2 (baud), Timer0 mode 1 (16-bit) */
#if (PF_CPU_HZ / 384ul) % PF_BAUD == 0
    PCON &= 0x7F;         /* SMOD = 0 */
    TH1 = (uint8_t)(256u - PF_CPU_HZ / 384ul / PF_BAUD);
#elif (PF_CPU_HZ / 192ul) % PF_BAUD == 0
    PCON |= 0x80;         /* SMOD = 1 */
    TH1 = (uint8_t)(256u - PF_CPU_HZ / 192ul / PF_BAUD);
#else
#error "PF_BAUD not reachable with Timer1 mode 2 at 11.0592 MHz"
#endif
    TL1 = TH1;
    TR1 = 1;
    SCON = 0x50;          /* mode 1, receiver on */
    PT0 = 1;              /* the tick preempts the serial ISR */
    last_p0 = P0;
}

void board_start(void)
{
    TH0 = 0;
    TL0 = 0;
    tick_off = 0;
    tick_off_prev = 0;
    P1 = 0;
    TR0 = 1;
    ET0 = 1;
    ES = 1;
    EA = 1;
}

void board_leds_write(uint8_t mask)
{
    P2 = (uint8_t)~mask;  /* active low */
}

void board_delay_ms(uint16_t ms)
{
    uint8_t i;

    while (ms--) {
        for (i = 0; i < 115u; i++) { /* about 8 machine cycles per pass: ~1 ms */
            __asm nop __endasm;
        }
    }
}

void board_uart_kick_tx(void)
{
    TI = 1;               /* the serial ISR pulls the first byte */
}

/* Counts of (now - back) since the port change of the tick it falls in. Interrupts masked here. */
void board_stamp_back(struct pf_stamp *s, pf_count_t back)
{
    uint8_t h, l, tf, tc, off, offp;
    int32_t t;

    PF_CRIT_ENTER();
    do {
        h = TH0;
        l = TL0;
    } while (h != TH0);
    tf = TF0;
    tc = (uint8_t)(pf_tc_next - 1u);
    off = tick_off;
    offp = tick_off_prev;
    PF_CRIT_EXIT();
    t = (int32_t)(((uint16_t)h << 8) | l);
    if (tf && h < 0x80u)
        t += 0x10000l;    /* overflowed, ISR not run yet: the port still shows tc */
    t -= back;
    if (t >= off) {
        t -= off;
    } else {
        t += 0x10000l - offp; /* before this tick's port change: the previous tick */
        tc--;
    }
    s->tc_lo = tc;
    s->carry = (uint8_t)(t >> 16);
    s->counts = (uint16_t)t;
}

/* The paper's foreground poll: a strobe change is an event. */
void board_poll_events(void)
{
    uint8_t p = P0;
    struct pf_stamp s;

    if (((p ^ last_p0) & STROBE) == 0)
        return;
    EA = 0; /* pf_event and board_stamp_back are shared with the serial ISR (fixed-address locals) */
    board_stamp_back(&s, 0);
    pf_event((uint8_t)(p & ID_MASK), (uint8_t)(p & STROBE), &s);
    EA = 1;
    last_p0 = p;
}

void board_idle(void)
{
    /* No sleep: the poll of P0 is the event input. */
}
