/*
 * 8051 board layer (SDCC, small model, 87C51: 4 KB code, 128 B RAM).
 *
 *   P1        timecode out (8 bits)
 *   P0.0-2    event id in; P0.3 strobe in, toggled once per event (P0 needs external pull-ups)
 *   P2        event LEDs, active low (LED from Vcc through a resistor into the pin)
 *   P3.0/P3.1 UART, 8N1, Timer1 mode 2 baud generator (SMOD=1, TH1 = 256 - 57600/baud: 0xFA at 9600),
 *             polled (no ISR)
 *   P3.7      poll monitor: toggles at every poll of P0 (a scope or ucsim's VCD sees the poll gaps)
 *   Timer0    mode 1, free running: one tick = 65536 machine cycles = 71.11 ms; timestamp = count
 *
 * The paper's foreground polling loop. The only interrupt is the Timer0 tick: its ISR writes P1,
 * notes when it did so (tick_off), advances pf_tc_next and, if the core prepared this tick's TIMECODE
 * ahead (pf_tc_armed), writes its first byte to SBUF; it calls nothing and touches no core state but
 * those pf_ variables (the core follows in pf_service). Everything else runs in main: the poll of P0, the
 * UART (RI/TI polled: a received byte waits in SBUF for up to a character time, 960 cycles, far more
 * than one pass of the loop), and the core's work, one bounded step per pf_service call (PF_FOREGROUND_IO
 * in pf_board_cfg.h). main polls P0 between every two steps, so an edge is stamped at most one step
 * (plus the tick ISR) after it happened: that bound is stated and measured in tests/test_mcs51.py.
 * This build never sleeps: idle mode would stop the poll.
 *
 * Timecode: its ISR writes P1 first and reads TL0 right after, which gives this tick's port-change
 * moment in Timer0 counts (tick_off). Timestamps are counted from that moment, not from the overflow,
 * so the ISR's entry latency (longer while main has interrupts masked) does not enter them.
 */
#include <8051.h>
#include "pf_core.h"

#define STROBE 0x08u
#define ID_MASK 0x07u
/* Timer0 counts between the P1 write and the TL0 read that follows it in t0_isr (both 2-cycle
 * direct moves: the port changes at the end of the first, TL0 is read in the second). Calibrated
 * against ucsim's P1 trace in tests/test_mcs51.py. */
#define TL0_AFTER_P1 2u
/* Machine cycles from the start of poll_p0's P0 read to the start of board_stamp_back's TL0 read on
 * the event path (counted in the generated code, build/mcs51/board.asm + pf_core.asm: poll_p0 16,
 * pf_event_slot 19 (+5 when the ring index wraps), back in poll_p0 17, board_stamp_back 5). The stamp
 * is then the moment of the P0 read; tests/test_mcs51.py checks the errors in ucsim (-2 .. bound). */
#ifndef PF_POLL_READ_OFFSET
#define PF_POLL_READ_OFFSET 57u
#endif

/* Port-change moment of this tick, in counts since its overflow. Written by
 * the Timer0 ISR, read with EA=0 (capture): volatile for that reason. */
static volatile uint8_t tick_off;
static __idata uint8_t last_p0; /* main only (idata: see the Makefile, RAM layout) */

void t0_isr(void) __interrupt(1)
{
    P1 = pf_tc_next;             /* the tick: first statement, before anything else */
    tick_off = (uint8_t)(TL0 - TL0_AFTER_P1);
    pf_tc_next++;                /* the core's tick_sync counts it */
    if (pf_tc_armed) {           /* this tick's TIMECODE, prepared ahead by the core; the UART is idle */
        pf_tc_armed = 0;
        SBUF = pf_tc_first;      /* its first byte: written 10 machine cycles after P1 changed */
        pf_tc_isr = 1;           /* the core sends the rest (pf_tx_next at TI) */
    }
}

/* The time `back` counts before now, as counts since the port change of the tick it falls in. Masks
 * interrupts for the capture only. A leaf function (no calls), so SDCC may overlay its locals. */
void board_stamp_back(struct pf_stamp PF_RAM *s, pf_count_t back)
{
    uint8_t h, l, tc, off;
    __bit tf;
    __bit c;              /* 17th bit of t */
    uint16_t t;

    EA = 0;
    do {
        h = TH0;
        l = TL0;
    } while (h != TH0);
    tf = TF0;
    tc = (uint8_t)(pf_tc_next - 1u);
    off = tick_off;
    EA = 1;
    /* 16-bit arithmetic and a carry bit (no 32-bit code, no 4-byte locals). */
    t = ((uint16_t)h << 8) | l;
    c = (tf && h < 0x80u); /* overflowed, ISR not run yet: the port still shows tc */
    if (t < back) {
        if (!c) {
            /* Before this tick's overflow: the previous tick, whose port change came about
             * `off` counts after its own overflow too (ISR latency; taken as this tick's). */
            s->tc_lo = (uint8_t)(tc - 1u);
            s->carry = 0;
            s->counts = (uint16_t)(t - back - off);
            return;
        }
        c = 0;
    }
    t -= back;
    if (c || t >= off) {
        if (t < off)
            c = 0;
        t -= off;
    } else {
        c = (t >= off);   /* before this tick's port change (t < off): the previous tick */
        t -= off;
        tc--;
    }
    s->tc_lo = tc;
    s->carry = c;
    s->counts = t;
}

/* Called by pf_rx_byte for a frame's first byte, a few cycles after board_poll_events saw RI rise
 * (at the stop bit: one character after the start bit). */
void board_rx_stamp(struct pf_stamp PF_RAM *s)
{
    board_stamp_back(s, PF_CHAR_COUNTS);
}

void board_init(void)
{
    P1 = 0;               /* timecode 0 */
    P2 = 0xFF;            /* LEDs off */
    TMOD = 0x21;          /* Timer1 mode 2 (baud), Timer0 mode 1 (16-bit) */
    PCON |= 0x80;         /* SMOD = 1, always: the rate is then TH1 alone (pf_board_cfg.h, BAUD) */
    TH1 = (uint8_t)(256u - 57600ul / PF_BAUD);
    TL1 = TH1;
    TR1 = 1;
    SCON = 0x50;          /* mode 1, receiver on */
    last_p0 = P0;
}

void board_start(void)
{
    TH0 = 0;
    TL0 = 0;
    tick_off = 0;
    P1 = 0;
    TR0 = 1;
    ET0 = 1;
    EA = 1;
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
    TI = 1;               /* the transmitter is free: board_poll_events sends the first byte */
}

/* The paper's foreground poll: a strobe change is an event, stamped straight into its ring record
 * (no RAM for a stamp of its own). P0.0-2 are the id and P0.3 the strobe: p & 0x0F is the record's
 * info byte (PF_INFO_ID | PF_INFO_STROBE). */
static void poll_p0(void)
{
    uint8_t p = P0;
    struct pf_stamp PF_RAM *s;

    P3 ^= 0x80u;          /* poll monitor on P3.7 (docs/hardware.md): one toggle per poll */
    if (((p ^ last_p0) & STROBE) == 0)
        return;
    last_p0 = p;
    s = pf_event_slot();
    if (s) {
        board_stamp_back(s, PF_POLL_READ_OFFSET);
        pf_event_commit((uint8_t)(p & (ID_MASK | STROBE)));
    }
}

/* Called by the main loop before each pf_service step: P0, one UART step, P0 again. */
void board_poll_events(void)
{
    int16_t b;
    uint8_t c;

    poll_p0();
    if (RI) {
        c = SBUF;
        RI = 0;
        pf_rx_byte(c);    /* calls board_rx_stamp for a frame's first byte */
    } else if (TI) {
        b = pf_tx_next();
        if (b >= 0) {
            TI = 0;
            SBUF = (uint8_t)b;
        } else if (b == -1) {
            TI = 0;       /* frame done: the next kick sets it again */
        }
    }
    poll_p0();
}

/* BAUD (SPEC.md 0x06). Timer1 mode 2 with SMOD = 1 makes 57600 / n baud, n = 1 .. 255. The 8051 takes
 * the rates it makes exactly, n <= 48 (1200 .. 57600 but 38400): HELLO.baud must be the rate asked for
 * and there is no RAM to keep it, so it is read back from TH1 (PF_BAUD_NOW), which only holds for an
 * exact rate. Every standard rate it can make within 2.5 % is exact at 11.0592 MHz; 38400 (n 1.5) and
 * 115200 (n 0.5) are 25 % and 50 % off with any n: ERROR BAD_VALUE. The token is n. */
uint16_t board_baud_check(uint16_t hundreds)
{
    switch (hundreds) {
    case 576: return 1;
    case 288: return 2;
    case 192: return 3;
    case 144: return 4;
    case 96: return 6;
    case 48: return 12;
    case 24: return 24;
    case 12: return 48;
    default: return 0;
    }
}

/* HELLO.baud by n: 57600 / n for the n board_baud_check gives, 0 elsewhere (never in TH1). */
const __code uint16_t pf_baud_by_n[49] = {
    0, 57600, 28800, 19200, 14400, 0, 9600, 0, 0, 0, 0, 0, 4800,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2400, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1200,
};

/* F, line free (pf_core.c baud_line_free): TI of the last byte came at the start of its stop bit, the
 * line stays high from there on (stop bit, then idle), so the new rate may start now: a receiver at
 * the old rate still reads a high stop bit. The reload takes effect at Timer1's next overflow (at
 * most n machine cycles). */
void board_baud_set(uint16_t div)
{
    TH1 = (uint8_t)(0u - (uint8_t)div);
}

void board_idle(void)
{
    /* No sleep: the poll of P0 is the event input. */
}
