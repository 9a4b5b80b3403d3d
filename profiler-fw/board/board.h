/*
 * Board API of the profiler: one implementation per target (board/avr, board/mcs51, board/host).
 * The portable core (core/pf_core.c) calls only these, plus the PF_* macros of the board's
 * board_cfg.h (types, sizes, clock constants, critical sections), which the build puts on the
 * include path before core/.
 */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>
#include "board_cfg.h"

/* Address space of the stamps passed by pointer (8051: __data, a 1-byte pointer). */
#ifndef PF_RAM
#define PF_RAM
#endif

/* A timestamp: extended timecode (low byte only; the core extends it) and counts since the
 * timecode output port changed to that value. carry: counts has a 17th bit (8051 only, where
 * pf_count_t is 16 bits; see board/mcs51/board.c). */
struct pf_stamp {
    uint8_t tc_lo;
    uint8_t carry;
    pf_count_t counts;
};

void board_init(void);       /* clocks, ports, UART; interrupts still off */
void board_start(void);      /* starts the timecode timer and enables interrupts */
#ifndef board_leds_write /* (a board may make it a macro: the 8051 saves the stack of a call) */
void board_leds_write(uint8_t mask); /* bit i = LED of event id i, 1 = lit (board maps polarity) */
#endif
void board_delay_ms(uint16_t ms);    /* busy wait, only for the LED self test before start */
void board_uart_kick_tx(void);       /* a frame is ready: start pulling bytes with pf_tx_next() */
/* Called with interrupts disabled (ISR or critical section): the time `back` counts before now. */
void board_stamp_back(struct pf_stamp PF_RAM *s, pf_count_t back);
#ifdef PF_FOREGROUND_IO
/* The time of the frame's first byte, less one character (SPEC.md 0x12 FIRE), taken by the board when
 * that byte arrived; pf_rx_byte asks for it when it is given a frame's first byte. */
void board_rx_stamp(struct pf_stamp PF_RAM *s);
#endif
void board_idle(void);       /* sleep until an interrupt if the core has nothing to do (or return) */
void board_poll_events(void);/* polled event input (8051); empty where events are interrupt-driven */

#endif
