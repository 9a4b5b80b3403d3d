/* AVR profiler (ATmega2560 at 16 MHz, Arduino Mega 2560): build-time configuration for the core
 * (core/pf_board.h). No target header here: the registers are board.c's. */
#ifndef PF_BOARD_CFG_H
#define PF_BOARD_CFG_H

#include <stdint.h>

/* 1: the event inputs' internal pull-ups on (board.c says why); 0 only for a test image */
#ifndef PF_PULLUPS
#define PF_PULLUPS 1
#endif
#ifndef PF_BAUD
#define PF_BAUD 9600ul
#endif
#ifndef PF_TICK_COUNTS
#define PF_TICK_COUNTS 1137778ul /* 71.111 ms at 16 MHz, as near the 8051's tick as the clock allows */
#endif

typedef uint32_t pf_count_t;
#define PF_RING_LEN 32
#define PF_FIRE_TAGS PF_RING_LEN
#define PF_FLAG volatile uint8_t
#define PF_CPU_HZ 16000000ul
#define PF_TIMER_HZ 16000000ul     /* Timer5, no prescaler: one count per CPU cycle */
#define PF_HELLO_FLAGS (MM_HELLO_FLAG_CAPTURE | MM_HELLO_FLAG_HIST)
/* Histograms (protocol version 6, core/pf_hist.c): 1001 cells of 32 bits, 4 KB of the 8 KB SRAM; the
 * decoder holds HIST_ARM (MM_DEC_CAPACITY 30 in the Makefile). */
#define PF_HIST
#define PF_NOINIT __attribute__((section(".noinit"))) /* cells: pf_init clears them (pf_board.h) */
/* USART0 in double-speed mode: one bit = 8 * (UBRR0 + 1) cycles. */
#define PF_UBRR ((PF_CPU_HZ + 4ul * PF_BAUD) / (8ul * PF_BAUD) - 1ul)
/* One character (10 bits) at the rate in force: 10 * 8 * (UBRR0 + 1) cycles, kept ready by the board
 * (board.c, board_baud_set): multiplied in the RX ISR it delayed the FIRE stamp by 28 cycles (the
 * __umulhisi3 call before board_stamp_back reads TCNT5), loaded from RAM as board_stamp_back's argument
 * by 4 (measured in tests/test_avr.py): board_rx_stamp reads TCNT5 first (then 14 cycles sooner than
 * with the build-time constant before). */
extern uint32_t board_char_counts;
#define PF_CHAR_COUNTS board_char_counts
#define PF_WATCHDOG               /* board_watchdog_main: see board.c */
#define PF_NOINLINE __attribute__((noinline))
#ifndef PF_POST_MS
#define PF_POST_MS 30
#endif

/* Critical section: saves SREG (and so the I flag), disables interrupts, restores. Nests. Inline
 * asm, as avr-libc's cli() is (__SREG__ is defined by avr-gcc in every assembly file it writes). */
#define PF_CRIT_ENTER() { uint8_t pf_sreg_; \
    __asm__ __volatile__("in %0, __SREG__" "\n\t" "cli" : "=r"(pf_sreg_) : : "memory");
#define PF_CRIT_EXIT() __asm__ __volatile__("out __SREG__, %0" : : "r"(pf_sreg_) : "memory"); }

#endif
