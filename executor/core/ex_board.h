/*
 * What the executor core needs from the hardware layer (one implementation per target:
 * port/avr/board.c on the ATmega2560, tests/test_core.c's fake on the host).
 *
 * The core never touches a register. It calls these hooks with the core lock held (see ex_core.h),
 * so they need no locking of their own except against interrupt handlers.
 */
#ifndef EX_BOARD_H
#define EX_BOARD_H

#include <stdint.h>

/* Dispatch arming: which context may put the precomputed output on the event port. */
#define EXB_ARM_NONE 0
#define EXB_ARM_ISR 1  /* the pin-change ISR writes `out` as soon as the timecode port reads `tc8` */
#define EXB_ARM_TASK 2 /* the timecode task does, first thing after its notification */

/* How far into the current timecode tick we are, in 1/65536 of a tick. */
uint16_t exb_phase(void);

/* Free room in the transmit buffer, in bytes, and one byte into it (only after checking room). */
uint8_t exb_tx_room(void);
void exb_tx_put(uint8_t byte);
/* All bytes of a frame are in: start transmitting if the line is idle. */
void exb_tx_kick(void);

/* Write the event port now (task-context dispatch path and late events). */
void exb_output(uint8_t value);
/* Wait out the gap the profiler needs between two edges (EX_OUT_GAP_US), before the second of two
 * outputs of one tick. The profiler stamps an edge by input capture and reads its id in an interrupt: it
 * separates two edges from 85 cycles (5.3 us) apart on when it serves no other interrupt, more while its
 * UART interrupts run (profiler-fw/tests/test_avr.py, test_close_edges). Without the gap the
 * executor put the events of one tick out 25 cycles apart and the profiler lost them. The k-th event of a
 * tick so leaves (k - 1) gaps later: the latency the rig measures includes them, by design. */
void exb_output_gap(void);

/* Publish the precomputed output for the next tick (atomically with respect to the ISR). */
void exb_arm(uint8_t path, uint8_t tc8, uint8_t out);
/* Withdraw it (atomically); returns 1 if the armed output had already been written to the port. */
uint8_t exb_disarm(void);

/* A moment inside a tick (PERIODIC, SPEC.md 0x28): put `out` on the event port `phase`/65536 of a tick after
 * the timecode port changed to `tc8`, the tick's length being the one the board measured between its last two
 * edges (its own clock: two boards' resonators differ). `tc8` is the current tick's low byte or the next
 * one's; a moment whose time has passed already (armed late) is written at once. `path`: EXB_ARM_ISR, a
 * timer interrupt writes it; EXB_ARM_TASK, that interrupt wakes the timecode task, whose first act
 * (board_task_dispatch) writes it. Either way the timecode task is woken afterwards, and the core asks
 * exb_moment_done. Re-arming replaces the moment armed before. */
void exb_arm_moment(uint8_t path, uint8_t tc8, uint16_t phase, uint8_t out);
/* 1 once the armed moment's output has been written (until exb_disarm_moment). */
uint8_t exb_moment_done(void);
/* Withdraw the moment (atomically); returns 1 if its output had already been written. */
uint8_t exb_disarm_moment(void);

/* Why the node last reset: HELLO.reset_cause (MM_RESET_* bits; on the ATmega2560 MCUSR as the
 * earliest start-up code found it, see port/avr/board.c). Constant after start-up. */
uint8_t exb_reset_cause(void);

/* Received bytes lost before the core saw them (COUNTERS.rx_ring_overflow, rx_hw_overrun): counted
 * by the receive interrupt, so the board reads them atomically. Each wraps at 65536. */
void exb_rx_lost(uint16_t *ring_overflow, uint16_t *hw_overrun);

/* Stack high-water mark (bytes never used) of task 0 timecode, 1 serial, 2 status LED. */
uint16_t exb_stack_free(uint8_t task);

/* The executor's load (SPEC.md MODE, protocol version 3), values already checked by the core:
 * cpu 0 or 1; period_us 0 (no periodic task) or MM_LOAD_PERIOD_MIN_US..65535; exec_us at most
 * period_us / 2. Called on every accepted MODE (the same load again restarts the periodic timer). */
void exb_set_load(uint8_t cpu, uint16_t period_us, uint16_t exec_us);
/* What the load did since reset (STATUS.cpu_loops, periodic_runs, periodic_overruns), read
 * atomically: the load's tasks and interrupt handler update them. */
void exb_load_counts(uint32_t *cpu_loops, uint32_t *periodic_runs, uint16_t *periodic_overruns);

/* BAUD (SPEC.md 0x06, protocol version 4). exb_baud_check: a nonzero divisor token if the UART makes
 * hundreds * 100 baud within 2.5 % (its nearest divisor), else 0; changes nothing. exb_baud_set: the frame
 * the transmitter is sending (if any) ends at the old rate, and every byte after it (frames queued and
 * not begun, then the core's lone delimiter and HELLO) goes at the new one; the receiver switches with
 * it. Returns at once (the port switches in its transmit interrupt). After a reset the port runs at its
 * build-time rate again. */
uint16_t exb_baud_check(uint16_t hundreds);
void exb_baud_set(uint16_t div);

#endif /* EX_BOARD_H */
