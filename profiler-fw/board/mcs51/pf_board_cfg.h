/* 8051 profiler (87C51 / AT89S52 / STC89C52 at 11.0592 MHz): build-time configuration for the core
 * (core/pf_board.h). No target header here (board.c includes <8051.h>): the two SFRs the inline
 * macros below touch are declared under names of their own, at their standard 8051 addresses. */
#ifndef PF_BOARD_CFG_H
#define PF_BOARD_CFG_H

#include <stdint.h>

__sfr __at(0xA0) PF_SFR_P2;   /* P2: event LEDs */
__sbit __at(0xAF) PF_SBIT_EA; /* IE.7: global interrupt enable */
__sfr __at(0x8D) PF_SFR_TH1;  /* Timer1 reload: the baud divisor (SMOD = 1 always, board.c) */

#ifndef PF_BAUD
#define PF_BAUD 9600ul
#endif

typedef uint16_t pf_count_t; /* Timer0 counts; a 17th bit travels as PF_INFO_CARRY */
/* The paper's 32-byte result buffer: 8 records of 4 bytes (info, timecode low byte, counts). */
#define PF_RING_LEN 8
#define PF_FIRE_TAGS 1           /* FIRE tags waiting for their RESULT */
#define PF_COUNTERS_LIVE         /* no RAM for a COUNTERS copy: see pf_core.c */
#define PF_RAM __idata           /* stamps: 1-byte pointers that reach data and idata */
#define PF_RESULT_LIVE           /* no RAM for a RESULT body: generated, see pf_core.c */
#define PF_FOREGROUND_IO         /* UART and core work in main, bounded steps: see pf_core.c */
#define PF_STAMP_IN_RING         /* edges are stamped straight into their ring record */
/* SDCC 4.2 inlines a static inline function but still emits an unused copy of it (code bytes); a C99
 * inline definition it inlines without one */
#define PF_INLINE inline
#define board_leds_write(mask) (PF_SFR_P2 = (uint8_t)~(uint8_t)(mask)) /* LEDs active low */
/* SDCC generates an interrupt vector only for a handler whose prototype the module holding main()
 * sees: core/pf_main.c includes this file (through pf_core.h and pf_board.h). */
void t0_isr(void) __interrupt(1);
#define PF_FLAG volatile __bit   /* one-bit flags in the bit-addressable area */
#define PF_CPU_HZ 11059200ul
#define PF_TIMER_HZ 921600ul     /* one count per machine cycle (12 clocks) */
#define PF_TICK_COUNTS 65536ul   /* Timer0 16-bit overflow */
#define PF_HELLO_FLAGS (MM_HELLO_FLAG_POLLED | MM_HELLO_FLAG_8051)
/* HELLO.reset_cause: 0 = cannot tell (SPEC.md). The 87C51 has no reset-flag register: power-on, the
 * RST pin and (on an AT89S52 / STC89) a watchdog reset all look the same to the program. A constant,
 * so the HELLO body stays in code memory (one byte more). */
#define PF_RESET_CAUSE 0
/* The rate in force lives in TH1 alone (no RAM byte is free, README.md "8051 design"): with SMOD = 1
 * the UART runs at 921600 / 16 / n = 57600 / n baud, n = 256 - TH1 (board.c), so one character
 * (start + 8 data + stop) is 10 * 16 * n = 160 * n Timer0 counts (960 at 9600). An 8 x 8 bit product:
 * SDCC makes it with MUL AB, no library call. */
#define PF_BAUD_N() ((uint8_t)(0u - PF_SFR_TH1))
#define PF_CHAR_COUNTS ((pf_count_t)((uint8_t)160u * PF_BAUD_N()))
/* HELLO.baud: 57600 / n, from a code table (board.c): no division, no RAM. */
extern const __code uint16_t pf_baud_by_n[];
#define PF_BAUD_NOW() (pf_baud_by_n[PF_BAUD_N()])
#if 57600ul % PF_BAUD != 0 || 57600ul / PF_BAUD > 48
#error "PF_BAUD not reachable with Timer1 mode 2, SMOD 1 at 11.0592 MHz (57600 / n, n <= 48)"
#endif
#ifndef PF_POST_MS
#define PF_POST_MS 30
#endif

/* Critical section: saves and clears EA, restores it. A __bit local, so it nests and works from
 * the serial ISR too (where the high-priority Timer0 ISR could still interrupt). */
#define PF_CRIT_ENTER() { __bit pf_ea_ = PF_SBIT_EA; PF_SBIT_EA = 0;
#define PF_CRIT_EXIT() PF_SBIT_EA = pf_ea_; }

#endif
