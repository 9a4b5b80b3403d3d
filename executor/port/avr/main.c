/*
 * The executor application on FreeRTOS (paper section 5.2, Table 2):
 *   timecode task  highest priority; woken by a task notification from the pin-change ISR; on the task
 *                  dispatch path it writes the precomputed output first, then extends the timecode,
 *                  reports FIRED and arms the next output (core: ex_tick)
 *   serial task    woken by the USART receive ISR at each frame delimiter; feeds the bytes to the core,
 *                  which decodes, answers and queues replies for the transmit ISR
 *   status task    lowest priority; blinks the LED at a rate that tells the mode
 *   idle hook      sleeps (SLEEP_MODE_IDLE) until the next interrupt
 * The core is not reentrant: both tasks call it holding `core_lock`, a mutex with priority
 * inheritance. No interrupt handler calls the core.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>

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

static void timecode_task(void *arg)
{
    (void)arg;
    for (;;) {
        /* The pin-change ISR notifies with eNoAction (xTaskNotifyFromISR): no value to count or clear,
         * only "notified", which is all the task needs (it reads the port itself, and edges that
         * arrive while it runs collapse into one more pass). Measured against vTaskNotifyGiveFromISR +
         * ulTaskNotifyTake: 621 -> 587 cycles from the edge to the event on the task dispatch path
         * (tests/cycleprof.py). portMAX_DELAY is 65535 ticks (524 s) here, since INCLUDE_vTaskSuspend
         * is 0; a timeout just runs one more harmless pass. */
        xTaskNotifyWait(0, 0, NULL, portMAX_DELAY);
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
    }
}

static void serial_task(void *arg)
{
    (void)arg;
    for (;;) {
        int16_t b;

        ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
        while ((b = board_rx_get()) >= 0) {
            xSemaphoreTake(core_lock, portMAX_DELAY);
            ex_tick(&core, board_read_timecode()); /* handle the frame against the current timecode */
            ex_rx_byte(&core, (uint8_t)b);
            xSemaphoreGive(core_lock);
        }
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

static void halt(void)
{
    cli();
    board_led_on();
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
    vTaskStartScheduler();
    halt(); /* not reached */
    return 0;
}
