/*
 * ATmega2560 hardware layer of the executor (Arduino Mega 2560). Pin map (docs/hardware.md):
 *   timecode in   PK0..PK7 (Mega A8..A15), pin-change interrupts PCINT16..23 (PCIE2)
 *   event id out  PC0..PC2 (Mega 37, 36, 35), strobe out PC3 (Mega 34), one port write per event
 *   status LED    PB7 (Mega 13)
 *   serial        USART0 (the USB port), 8N1, EX_BAUD (default 9600)
 *   phase timer   Timer1, free running at F_CPU / 64 (4 us); compare A: settle timer, compare B:
 *                 quiet-window guard (board.c)
 *   kernel tick   Timer0 compare A (see FreeRTOSConfig.h)
 *   load timer    Timer3, CTC, compare A: releases the load's periodic task (board.c, "load")
 */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

#include "FreeRTOS.h"
#include "task.h"

#define BOARD_TIMER_HZ (F_CPU / 64u)
/* The profiler's tick (71.111 ms: 1137778 CPU cycles of a 16 MHz AVR profiler) in Timer1 counts. */
#define BOARD_TICK_COUNTS 17778u

void board_init(void);
/* Tasks the interrupt handlers wake (set before the scheduler starts). */
void board_set_tasks(TaskHandle_t timecode, TaskHandle_t serial);
uint8_t board_read_timecode(void); /* PINK, read until two reads agree */
/* Task dispatch path: writes the armed output if armed for the task and PINK shows the armed
 * timecode. The first thing the timecode task does after its notification. */
void board_task_dispatch(void);
void board_moment_dispatch(void); /* a PERIODIC moment on the task path (board.c, "moments") */
/* Quiet window before an ISR-dispatched edge (board.c): board_guard_due() is 1 when the guard timer
 * woke the timecode task; board_guard() then holds the CPU, quietly, until the armed output is out. */
uint8_t board_guard_due(void);
void board_guard(void);
/* Next received byte: 0..255, or -1 if none. */
int16_t board_rx_get(void);
void board_led_toggle(void);
void board_led_on(void);
/* The load's periodic task (protocol version 3, board.c "load"): the task its timer releases (set
 * before the scheduler starts); the timer set to a period (0: off) and job length, values checked by
 * the core; the job itself (the task calls it on each release); its counts (interrupts disabled). */
void board_set_load_task(TaskHandle_t periodic);
void board_load_periodic(uint16_t period_us, uint16_t exec_us);
void board_load_job(void);
void board_load_counts(uint32_t *runs, uint16_t *overruns);

#endif
