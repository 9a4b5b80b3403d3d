/*
 * The executor application on FreeRTOS (paper section 5.2, Table 2):
 *   timecode task  highest priority; woken by a task notification from the pin-change ISR; on the task
 *                  dispatch path it writes the precomputed output first, then extends the timecode,
 *                  reports FIRED and arms the next output (core: ex_tick)
 *   serial task    woken by the USART receive ISR at each frame delimiter (or a half-full ring); feeds the bytes to the core,
 *                  which decodes, answers and queues replies for the transmit ISR
 *   status task    lowest priority; blinks the LED at a rate that tells the mode
 *   idle hook      sleeps (SLEEP_MODE_IDLE) until the next interrupt
 * The core is not reentrant: both tasks call it holding `core_lock`, a mutex with priority
 * inheritance. No interrupt handler calls the core.
 *
 * Watchdog (issue 18). Each of the three tasks checks in once per pass of its loop (checkin()); the
 * watchdog is fed only when all three have checked in since the last feed, so a task that is stuck,
 * or starved by a higher-priority one that spins, stops the feeding and the watchdog resets the
 * executor, which then says so in its HELLO (reset_cause = WATCHDOG). The idle task does not check
 * in: anything that starves it starves the status task too (priority idle + 1), which does.
 * Check-in periods (measured in simavr with the test image, tests/test_executor_sim.py
 * test_watchdog_feed_intervals):
 *   timecode task  every tick (71.1 ms) with a profiler attached, else every CHECKIN_WAIT (248 ms):
 *                  its notification wait times out then
 *   serial task    every frame delimiter, else every CHECKIN_WAIT (248 ms)
 *   status task    every LED half period: 120 ms mixed, 248 ms verification, 496 ms idle
 * Longest feed interval measured: 496.0 ms idle (the status task bounds it), 248.0 ms in verification
 * and mixed mode (the serial task's wait bounds it when no frames come). WDTO_1S: nominally 1.0 s
 * (1.02 s measured in simavr from the last feed to the reset) from the watchdog's own 128 kHz RC
 * oscillator, which the datasheet specifies only loosely; even 20 % fast (0.8 s) it leaves 300 ms over
 * the longest interval. WDTO_500MS would leave nothing. A stuck task is caught within ~1.5 s.
 *
 * halt() (failed assertion, stack overflow) switches interrupts off and spins with the LED on; it
 * enables the watchdog at its shortest period (WDTO_15MS), so a halted executor comes back ~16 ms
 * later with HELLO reset_cause = WATCHDOG (0x08) rather than staying dead.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#ifdef EX_TEST_HOOKS
#include <util/delay.h>
#endif

#include "FreeRTOS.h"
#include "semphr.h"
#include "task.h"

#include "board.h"
#include "ex_board.h"
#include "ex_core.h"

#ifndef EX_BAUD
#define EX_BAUD 9600UL
#endif
#ifndef EX_DISPATCH
#define EX_DISPATCH MM_DISPATCH_ISR /* build default; MODE.dispatch changes it at run time */
#endif

#define STACK_TC 256u
#define STACK_SERIAL 320u
#define STACK_STATUS 160u

static const struct ex_cfg cfg = {
    F_CPU, BOARD_TIMER_HZ, BOARD_TICK_COUNTS, EX_BAUD, EX_DISPATCH,
};

static struct ex core;
static SemaphoreHandle_t core_lock;
static StaticSemaphore_t core_lock_buf;

static StackType_t stack_tc[STACK_TC], stack_serial[STACK_SERIAL], stack_status[STACK_STATUS];
static StaticTask_t tcb_tc, tcb_serial, tcb_status;
static TaskHandle_t task_handles[3];

uint16_t exb_stack_free(uint8_t task)
{
    if (task > 2 || task_handles[task] == NULL)
        return 0;
    return uxTaskGetStackHighWaterMark2(task_handles[task]);
}

static void halt(void);

/* ---- watchdog (see the top of this file) ------------------------------------------------------- */

#define CHECKIN_TC 0x01u
#define CHECKIN_SERIAL 0x02u
#define CHECKIN_STATUS 0x04u
#define CHECKIN_ALL (CHECKIN_TC | CHECKIN_SERIAL | CHECKIN_STATUS)
/* How long the timecode and serial tasks wait for work before they check in anyway: 31 kernel ticks.
 * Half the status task's longest period, so neither of them bounds the feeding interval. */
#define CHECKIN_WAIT pdMS_TO_TICKS(248)
#define WDT_PERIOD WDTO_1S

/* Test image only (make avr-test: EX_TEST_HOOKS): each check-in and each feed written to GPIOR2, which
 * the bench records ("D" trace lines), so the tests can measure the periods above. */
#ifdef EX_TEST_HOOKS
#define TEST_MARK(v) (GPIOR2 = (v))
#else
#define TEST_MARK(v) ((void)0)
#endif

/* Bits of the tasks that checked in since the last feed. Only touched inside the critical section of
 * checkin(), whose `cli` and compiler memory barrier (portENTER_CRITICAL) order every access, so it
 * needs no volatile; the critical section is needed because three tasks of different priorities do a
 * read-modify-write of it (lds/or/sts), and a task switch in between would lose a bit. */
static uint8_t checked_in;

static void checkin(uint8_t task_bit)
{
    portENTER_CRITICAL();
    checked_in |= task_bit;
    TEST_MARK(task_bit);
    if (checked_in == CHECKIN_ALL) {
        wdt_reset();
        checked_in = 0;
        TEST_MARK(0x80u);
    }
    portEXIT_CRITICAL();
}

#ifdef EX_TEST_HOOKS
/* Test image only: DE AD BE EF then a command byte, seen by the serial task among the received bytes
 *   'H' the serial task hangs (spins with interrupts on: the timecode task still runs and checks in,
 *       the status task starves; the watchdog must reset the executor)
 *   'S' the serial task stalls 300 ms without reading (the receive ring overflows at 9600 baud)
 *   'X' halt() */
static void test_hook(uint8_t b)
{
    static const uint8_t magic[4] = {0xDE, 0xAD, 0xBE, 0xEF};
    static uint8_t k;

    if (k == sizeof magic) {
        k = 0;
        if (b == 'H')
            for (;;) {
            }
        if (b == 'S')
            _delay_ms(300);
        if (b == 'X')
            halt();
    }
    k = b == magic[k] ? (uint8_t)(k + 1u) : (uint8_t)(b == magic[0]);
}
#endif

static void timecode_task(void *arg)
{
    (void)arg;
    for (;;) {
        /* The pin-change ISR notifies with eNoAction (xTaskNotifyFromISR): no value to count or clear,
         * only "notified", which is all the task needs (it reads the port itself, and edges that
         * arrive while it runs collapse into one more pass). Measured against vTaskNotifyGiveFromISR +
         * ulTaskNotifyTake: 621 -> 587 cycles from the edge to the event on the task dispatch path
         * (tests/cycleprof.py). It waits at most CHECKIN_WAIT, so that it checks in with the watchdog
         * when no profiler drives the port; a timeout just runs one more harmless pass (the port reads
         * +0: nothing is dispatched or sent). */
        xTaskNotifyWait(0, 0, NULL, CHECKIN_WAIT);
        board_task_dispatch(); /* dispatch path 1, first thing: does nothing unless armed for the task */
        if (board_guard_due()) {
            /* Woken by the guard timer 1 ms before an ISR-dispatched edge, not by an edge: hold the
             * CPU quietly until the ISR has put the event out (board.c, "quiet window"). The edge's
             * own notification arrived meanwhile; clear it, the port is read below anyway. */
            board_guard();
            xTaskNotifyStateClear(NULL);
        }
        xSemaphoreTake(core_lock, portMAX_DELAY);
        ex_tick(&core, board_read_timecode());
        xSemaphoreGive(core_lock);
        checkin(CHECKIN_TC); /* after the core, off the dispatch path */
    }
}

static void serial_task(void *arg)
{
    (void)arg;
    for (;;) {
        int16_t b;

        ulTaskNotifyTake(pdTRUE, CHECKIN_WAIT);
        while ((b = board_rx_get()) >= 0) {
#ifdef EX_TEST_HOOKS
            test_hook((uint8_t)b);
#endif
            xSemaphoreTake(core_lock, portMAX_DELAY);
            ex_tick(&core, board_read_timecode()); /* handle the frame against the current timecode */
            ex_rx_byte(&core, (uint8_t)b);
            xSemaphoreGive(core_lock);
        }
        checkin(CHECKIN_SERIAL);
    }
}

static void status_task(void *arg)
{
    (void)arg;
    for (;;) {
        /* idle: 1 Hz, verification: 2 Hz, mixed: 4 Hz (period = 2 half periods) */
        uint8_t mode = core.mode; /* one byte: read without the lock */
        TickType_t half = mode == MM_MODE_MIXED ? pdMS_TO_TICKS(120) :
                          mode == MM_MODE_VERIFICATION ? pdMS_TO_TICKS(248) : pdMS_TO_TICKS(496);
        board_led_toggle();
        /* Stack overflow check (configCHECK_FOR_STACK_OVERFLOW is 0, see FreeRTOSConfig.h): a task
         * that used its whole stack has overwritten memory beyond it; stop before it does harm. */
        for (uint8_t t = 0; t < 3; t++)
            if (uxTaskGetStackHighWaterMark2(task_handles[t]) == 0)
                halt();
        checkin(CHECKIN_STATUS);
        vTaskDelay(half);
    }
}

void vApplicationIdleHook(void)
{
    set_sleep_mode(SLEEP_MODE_IDLE);
    cli();
    sleep_enable();
    sei();       /* the instruction after sei runs before any interrupt: no lost wake-up */
    sleep_cpu();
    sleep_disable();
}

/* Stops everything with the LED on; the watchdog, at its shortest period (~16 ms), then resets the
 * executor, which comes back with HELLO reset_cause = WATCHDOG. wdt_enable's timed sequence is safe
 * with interrupts off. It resets the watchdog (wdr) before it writes the new period; the wdt_reset()
 * after it starts the 16 ms from the new period: simavr 1.6 schedules the timeout only at a wdr, and
 * without it halted for the rest of the old 1 s period (measured: 1.02 s from halt to reset, 16 ms
 * with it). On the silicon it only restarts the count. */
static void halt(void)
{
    cli();
    board_led_on();
    wdt_enable(WDTO_15MS);
    wdt_reset();
    for (;;) {
    }
}

void ex_assert_failed(void)
{
    halt();
}

int main(void)
{
    board_init();
    core_lock = xSemaphoreCreateMutexStatic(&core_lock_buf);
    task_handles[0] = xTaskCreateStatic(timecode_task, "tc", STACK_TC, NULL, configMAX_PRIORITIES - 1,
                                        stack_tc, &tcb_tc);
    task_handles[1] = xTaskCreateStatic(serial_task, "serial", STACK_SERIAL, NULL, configMAX_PRIORITIES - 2,
                                        stack_serial, &tcb_serial);
    task_handles[2] = xTaskCreateStatic(status_task, "led", STACK_STATUS, NULL, tskIDLE_PRIORITY + 1,
                                        stack_status, &tcb_status);
    board_set_tasks(task_handles[0], task_handles[1]);
    /* Interrupts are still off: the lone 0x00 and HELLO wait in the transmit ring until the
     * scheduler starts the first task with interrupts enabled. */
    ex_init(&core, &cfg, board_read_timecode());
    /* The start-up code switched the watchdog off (board.c, board_read_reset_cause); from here the
     * tasks feed it (checkin). */
    wdt_enable(WDT_PERIOD);
    vTaskStartScheduler();
    halt(); /* not reached */
    return 0;
}
