/*
 * What the profiler core needs from a board. One implementation per target: board/avr (ATmega2560),
 * board/mcs51 (8051), board/host (unit tests). A board provides two things:
 *
 *   pf_board_cfg.h  its build-time configuration (below), found on the include path
 *                   (-Iboard/<target>). Plain C and the compiler's own keywords only: it must not
 *                   include a target header (<avr/io.h>, <8051.h>, ...), so the core never sees a
 *                   register name. A macro that must touch the hardware inline (a critical section,
 *                   a port write) uses compiler means: inline asm (avr-gcc), or the few SFRs it needs
 *                   declared with __sfr / __sbit __at (SDCC).
 *   board.c         the functions declared below, and everything else that touches the hardware
 *                   (it includes the target headers and pf_core.h).
 *
 * Configuration every board must provide (checked below):
 *   pf_count_t         unsigned timer count type (uint32_t; uint16_t on the 8051, see struct pf_stamp)
 *   PF_CPU_HZ, PF_TIMER_HZ, PF_TICK_COUNTS, PF_BAUD, PF_HELLO_FLAGS   the HELLO body (SPEC.md 0x01)
 *   PF_CHAR_COUNTS     one UART character (10 bits) in timer counts at the rate in force: a FIRE stamp
 *                      goes back by it. An expression of the board's current rate (BAUD, version 4
 *                      changes it at run time), read by R or F
 *   PF_RING_LEN        result ring records;  PF_FIRE_TAGS  FIRE tags waiting for their RESULT
 *   PF_POST_MS         LED self-test step (0: none)
 *   PF_FLAG            type of a one-bit flag shared with ISRs (volatile uint8_t; volatile __bit)
 *   PF_CRIT_ENTER() / PF_CRIT_EXIT()   critical section: disable interrupts, restore; must nest
 * Optional:
 *   PF_RESET_CAUSE     HELLO.reset_cause as a constant (the 8051: 0, it cannot tell why it reset): the
 *                      HELLO body stays a constant. Without it the board implements board_reset_cause()
 *   PF_WATCHDOG        the board has a watchdog: the main loop calls board_watchdog_main() on every pass
 *   PF_RAM             address space of the stamps passed by pointer (8051: __idata)
 *   PF_FOREGROUND_IO, PF_STAMP_IN_RING, PF_RESULT_LIVE, PF_COUNTERS_LIVE   core options for small
 *                      targets (pf_core.c, README.md "8051 design")
 *   board_leds_write   as a macro instead of a function
 *   PF_INLINE          how the core declares a step it wants inlined into its one caller (default:
 *                      static inline)
 *   PF_NOINLINE        keeps a function out of its caller (avr-gcc, gcc: __attribute__((noinline)));
 *                      the core marks with it the helpers whose locals would give pf_service a stack frame
 *   PF_BAUD_NOW()      HELLO.baud (u16: the board makes no rate above 65535) from the UART's own
 *                      registers, for a board with no RAM to keep it (8051, PF_RESULT_LIVE); without it
 *                      the core keeps the rate of the last BAUD it took (4 bytes)
 *   PF_HIST            the board keeps histograms (protocol version 6, core/pf_hist.c; README.md)
 *   PF_NOINIT          an attribute that keeps a large array out of the start-up code's zeroing (the AVR:
 *                      .noinit), for the histogram's cells, which pf_init clears anyway: zeroed by
 *                      avr-libc's start-up as well, 4 KB delayed the first port write after a reset by
 *                      28000 cycles (1.8 ms, simavr), which the watchdog test reads as the reset's time
 *   ISR prototypes the module holding main() must see (SDCC makes vectors only from those).
 *
 * The tick ISR starts the tick's TIMECODE frame itself when the core prepared it ahead (pf_core.c):
 * an ISR-driven board asks pf_tick_tx() before its port write and writes a byte >= 0 to the idle
 * transmitter right after it (then enables its transmit interrupt); a PF_FOREGROUND_IO board writes
 * pf_tc_first to its UART right after the port write when pf_tc_armed is set (pf_core.h).
 */
#ifndef PF_BOARD_H
#define PF_BOARD_H

#include <stdint.h>
#include "pf_board_cfg.h"

#if !defined(PF_CPU_HZ) || !defined(PF_TIMER_HZ) || !defined(PF_TICK_COUNTS) || !defined(PF_BAUD) || \
    !defined(PF_HELLO_FLAGS) || !defined(PF_CHAR_COUNTS) || !defined(PF_RING_LEN) || \
    !defined(PF_FIRE_TAGS) || !defined(PF_POST_MS) || !defined(PF_FLAG) || \
    !defined(PF_CRIT_ENTER) || !defined(PF_CRIT_EXIT)
#error "pf_board_cfg.h lacks a configuration macro the core needs (see pf_board.h)"
#endif

#ifndef PF_RAM
#define PF_RAM
#endif
#ifndef PF_NOINLINE
#define PF_NOINLINE
#endif
#ifndef PF_INLINE
#define PF_INLINE static inline
#endif

/* SDCC keeps locals and parameters at fixed addresses and overlays those of functions that call no
 * other: where ISRs call the core (no PF_FOREGROUND_IO), no function may share them with main's. */
#if defined(__SDCC_mcs51) && !defined(PF_FOREGROUND_IO)
#pragma nooverlay
#endif

/* The small-target options go together (pf_core.c; README.md "8051 design"). */
#if defined(PF_FOREGROUND_IO) && !defined(PF_RESULT_LIVE)
#error "PF_FOREGROUND_IO needs PF_RESULT_LIVE (the TIMECODE ahead reads tc_ext + 1 through pf_enc_body)"
#endif
#if defined(PF_COUNTERS_LIVE) && !defined(PF_RESULT_LIVE)
#error "PF_COUNTERS_LIVE needs PF_RESULT_LIVE (the COUNTERS body comes from pf_enc_body)"
#endif
#if defined(PF_RESULT_LIVE) && (!defined(PF_RESET_CAUSE) || !defined(PF_BAUD_NOW))
#error "PF_RESULT_LIVE (no tx_body for the HELLO) needs a constant PF_RESET_CAUSE and PF_BAUD_NOW"
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
/* The time of the frame's first byte, less one character at the rate in force (SPEC.md 0x12 FIRE);
 * pf_rx_byte asks for it when it is given a frame's first byte (R). At least board_stamp_back(s,
 * PF_CHAR_COUNTS) (the 8051: a few cycles after its poll saw RI; the host); the AVR reads its timer
 * before it loads the run-time character time, its FIRE stamp then 18 cycles sooner after the RX
 * interrupt than with board_stamp_back(s, PF_CHAR_COUNTS) and PF_CHAR_COUNTS in RAM (simavr). */
void board_rx_stamp(struct pf_stamp PF_RAM *s);
#ifdef PF_WATCHDOG
/* The main loop's watchdog check-in, once per pass: the board feeds its watchdog only if every other
 * part of the firmware (its tick ISR at least) has checked in since the last feed. */
void board_watchdog_main(void);
#endif
#ifndef PF_RESET_CAUSE
/* HELLO.reset_cause (SPEC.md 0x01): why the node last reset, the ATmega2560's MCUSR bits as they are
 * (MM_RESET_*). The same value for every HELLO until the next reset. */
uint8_t board_reset_cause(void);
#endif
/* BAUD (SPEC.md 0x06, protocol version 4). board_baud_check: the divisor that makes hundreds * 100 baud
 * within 2.5 % (the nearest one), as a nonzero token for board_baud_set, or 0 if the UART cannot make
 * it. Called by F (never in an ISR: the AVR's takes two 32-bit divisions, about 80 us); changes nothing.
 * board_baud_set: F, the last frame handed over to the UART (tx_busy 0) and nothing started since:
 * waits until that frame's last byte has left the transmitter, then runs the UART (both directions) at
 * div. PF_CHAR_COUNTS follows. After a reset the UART runs at PF_BAUD again (board_init). */
uint16_t board_baud_check(uint16_t hundreds);
void board_baud_set(uint16_t div);
void board_idle(void);       /* sleep until an interrupt if the core has nothing to do (or return) */
void board_poll_events(void);/* polled event input (8051); empty where events are interrupt-driven */

#endif
