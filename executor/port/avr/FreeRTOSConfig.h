/*
 * FreeRTOS configuration of the mmrig executor (ATmega2560, 16 MHz, FreeRTOS-Kernel V11.2.0,
 * portable/ThirdParty/GCC/ATmega).
 */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include <avr/io.h>

/*
 * Tick source: Timer0, not the watchdog.
 *
 * portmacro.h picks the watchdog interrupt (WDTO_15MS) whenever the chip has an enhanced watchdog
 * (WDIE and WDIF defined), and Timer0 compare-match A otherwise. We want Timer0 for two reasons:
 *  - simavr 1.6 raises the watchdog interrupt only once, so a WDT-ticked kernel stops ticking in the
 *    virtual bench (vTaskDelay never returns); Timer0 ticks identically in simavr and on the board;
 *  - the watchdog runs from its own ~128 kHz RC oscillator (15 ms +-10 %), Timer0 from the crystal.
 * We may not modify kernel files, so we hide WDIE from portmacro.h: this header is included by
 * FreeRTOS.h before portable.h/portmacro.h, <avr/io.h> is include-guarded and will not define it again,
 * and no file of ours uses WDIE. port.c then compiles its portUSE_TIMER0 branch (it says so with a
 * "#warning Timer0 used for scheduler."). The kernel's own build is the only place this matters;
 * tests/test_executor_sim.py checks that the scheduler keeps ticking (the status LED task blinks).
 *
 * Rate: Timer0 runs at 16 MHz / 1024 = 15625 Hz; 125 Hz divides it exactly (OCR0A = 124), so one
 * kernel tick is exactly 8 ms. Nothing in the executor's timing depends on the kernel tick (the
 * timecode task is woken by the pin-change interrupt); a slow tick means fewer interrupts, so less
 * interference with dispatch and more idle cycles the simulator can skip.
 */
#undef WDIE

#define configCPU_CLOCK_HZ                      ( ( unsigned long ) F_CPU )
#define configTICK_RATE_HZ                      125
#define configUSE_PREEMPTION                    1
#define configUSE_TIME_SLICING                  0
#define configUSE_IDLE_HOOK                     1
#define configUSE_TICK_HOOK                     0
/* 0 idle and the load's CPU task, 1 status, 2 serial, 3 timecode, 4 the load's periodic task (main.c) */
#define configMAX_PRIORITIES                    5
#define configMINIMAL_STACK_SIZE                ( ( unsigned short ) 160 )
#define configMAX_TASK_NAME_LEN                 6
#define configTICK_TYPE_WIDTH_IN_BITS           TICK_TYPE_WIDTH_16_BITS
#define configSTACK_DEPTH_TYPE                  uint16_t
#define configIDLE_SHOULD_YIELD                 1
#define configUSE_MUTEXES                       1
#define configUSE_RECURSIVE_MUTEXES             0
#define configUSE_COUNTING_SEMAPHORES           0
#define configUSE_QUEUE_SETS                    0
#define configUSE_TASK_NOTIFICATIONS            1
#define configTASK_NOTIFICATION_ARRAY_ENTRIES   1
#define configQUEUE_REGISTRY_SIZE               0
#define configUSE_TIMERS                        0
#define configUSE_CO_ROUTINES                   0
#define configUSE_TRACE_FACILITY                0
#define configUSE_STATS_FORMATTING_FUNCTIONS    0
#define configGENERATE_RUN_TIME_STATS           0
#define configUSE_MALLOC_FAILED_HOOK            0
/* No check in the context switch: method 1 compares the stack pointer with the stack's end on every
 * switch, 20 cycles (1.25 us) on the task dispatch path (tests/cycleprof.py: 644 -> 624 cycles); method
 * 2 compares 16 bytes. Instead the status task checks every task's high-water mark (the stacks are
 * filled with a known value because INCLUDE_uxTaskGetStackHighWaterMark2 is on) at each blink, off
 * the dispatch path, and halts with the LED on if one reached zero (main.c, status_task). */
#define configCHECK_FOR_STACK_OVERFLOW          0
#define configENABLE_BACKWARD_COMPATIBILITY     0
#define configUSE_POSIX_ERRNO                   0
#define configUSE_NEWLIB_REENTRANT              0

/* Memory: everything static, no heap file linked; the kernel provides the idle task's memory. */
#define configSUPPORT_STATIC_ALLOCATION         1
#define configSUPPORT_DYNAMIC_ALLOCATION        0
#define configKERNEL_PROVIDED_STATIC_MEMORY     1

#define INCLUDE_vTaskDelay                      1
#define INCLUDE_vTaskDelayUntil                 0
#define INCLUDE_vTaskDelete                     0
#define INCLUDE_vTaskSuspend                    0
#define INCLUDE_vTaskPrioritySet                0
#define INCLUDE_uxTaskPriorityGet               0
#define INCLUDE_xTaskGetSchedulerState          0
#define INCLUDE_xTaskGetCurrentTaskHandle       0
/* STATUS reports stack high-water marks. uxTaskGetStackHighWaterMark returns UBaseType_t, which is
 * 8 bits on this port and would truncate marks above 255 bytes; the "2" variant returns
 * configSTACK_DEPTH_TYPE (uint16_t). */
#define INCLUDE_uxTaskGetStackHighWaterMark     0
#define INCLUDE_uxTaskGetStackHighWaterMark2    1

/* A failed assertion stops everything with the status LED on (PB7), where a debugger can see it. */
void ex_assert_failed(void);
#ifndef EX_NO_ASSERT
#define configASSERT( x )    do { if( !( x ) ) { ex_assert_failed(); } } while( 0 )
#endif

#endif /* FREERTOS_CONFIG_H */
