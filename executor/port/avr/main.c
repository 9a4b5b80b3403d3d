/*
 * The executor application on FreeRTOS (paper section 5.2, Table 2), highest priority first:
 *   load_periodic  the load's periodic task (protocol version 3, SPEC.md MODE), above everything so that
 *                  it delays the dispatch path; blocked unless MODE set a period (see below)
 *   timecode task  highest of the executor's own tasks; woken by a task notification from the pin-change ISR; on the task
 *                  dispatch path it writes the precomputed output first, then extends the timecode,
 *                  reports FIRED and arms the next output (core: ex_tick)
 *   serial task    woken by the USART receive ISR at each frame delimiter (or a half-full ring); feeds the bytes to the core,
 *                  which decodes, answers and queues replies for the transmit ISR
 *   status task    lowest of the executor's own tasks (idle + 1); blinks the LED at a rate that tells the mode
 *   load_cpu       the load's CPU-bound task, at the idle priority: below every other task, so below the
 *                  dispatch path; blocked unless MODE set cpu_load (see below)
 *   idle hook      sleeps (SLEEP_MODE_IDLE) until the next interrupt, unless the CPU load is on
 * The core is not reentrant: both tasks call it holding `core_lock`, a mutex with priority
 * inheritance. No interrupt handler calls the core.
 *
 * Watchdog. Each of the three tasks checks in once per pass of its loop (checkin()); the
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
 * The load's tasks do not check in: the CPU load is meant to be starved by everything else, and it
 * cannot starve anything (it is at the idle priority, below the status task). The periodic task takes
 * at most half the CPU (the core refuses a job longer than half the period, and a release that finds
 * the job unfinished is skipped, port/avr/board.c "load"); if it ever spun, the tasks below it would
 * stop checking in and the watchdog would reset the executor, as for any stuck task.
 * tests/test_executor_load.py test_watchdog_holds_under_the_heaviest_load: no reset in 6.4 s of
 * simulated time at 1000 us / 500 us with the CPU load on, in mixed mode with a profiler ticking; the
 * longest feed interval there was 248.2 ms (timecode 71.7 ms, serial 248.8 ms, status 120.1 ms), as
 * without the load.
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

/* High-water marks (bytes never used) in tests/test_executor_sim.py's campaign (no load): timecode
 * 133 of 256, serial 172 of 320, status 97 of 160. Before the load (protocol version 3 alone) they were
 * 176, 193, 98: the serial task's 21 more bytes are mostly STATUS's 15 new body bytes on its stack; the
 * timecode task's 43 more are not pinned down (not the fifth priority, not the un-inlined
 * xTaskGenericNotify: each reverted alone left it at 133; about one saved context). */
#define STACK_TC 256u
#define STACK_SERIAL 320u
#define STACK_STATUS 160u
/* The load's tasks: little code of their own, but every interrupt handler (and the context a
 * portYIELD_FROM_ISR saves) runs on the stack of the task it interrupts, so they get the kernel's
 * minimal stack, as the idle task has. Measured high-water marks (bytes never used), heaviest load
 * (1000 us / 500 us and the CPU load, profiler ticking, STATUS every 500 ms, 6.5 s simulated;
 * tests/test_executor_load.py, the test image's 'W' hook): load_cpu 97 of 160, load_periodic 113 of
 * 160 (timecode 193, serial 161, status 97 in the same run). The status task halts the executor if
 * one of them ever reaches 0 (status_task). */
#define STACK_LOAD_CPU configMINIMAL_STACK_SIZE
#define STACK_LOAD_PERIODIC configMINIMAL_STACK_SIZE

/* Priorities. configMAX_PRIORITIES is 5: one level above the timecode task for the load. */
#define PRIO_LOAD_PERIODIC (configMAX_PRIORITIES - 1)
#define PRIO_TC (configMAX_PRIORITIES - 2)
#define PRIO_SERIAL (configMAX_PRIORITIES - 3)
#define PRIO_STATUS (tskIDLE_PRIORITY + 1)
#define PRIO_LOAD_CPU tskIDLE_PRIORITY
typedef char ex_priorities_are_distinct[(PRIO_SERIAL > PRIO_STATUS && PRIO_STATUS > PRIO_LOAD_CPU) ? 1 : -1];

static const struct ex_cfg cfg = {
    F_CPU, BOARD_TIMER_HZ, BOARD_TICK_COUNTS, EX_BAUD, EX_DISPATCH,
};

static struct ex core;
static SemaphoreHandle_t core_lock;
static StaticSemaphore_t core_lock_buf;

static StackType_t stack_tc[STACK_TC], stack_serial[STACK_SERIAL], stack_status[STACK_STATUS];
static StackType_t stack_load_cpu[STACK_LOAD_CPU], stack_load_periodic[STACK_LOAD_PERIODIC];
/* TCB symbols start with tcb_: the bench's tracer names tasks by them. */
static StaticTask_t tcb_tc, tcb_serial, tcb_status, tcb_load_cpu, tcb_load_periodic;
#define N_TASKS 5u
#define T_LOAD_CPU 3u
#define T_LOAD_PERIODIC 4u
/* 0 timecode, 1 serial, 2 status (exb_stack_free's numbering), 3 load_cpu, 4 load_periodic */
static TaskHandle_t task_handles[N_TASKS];

/* ---- extra tasks: a measurement build only (make avr EXTRA_TASKS=N, -DEX_EXTRA_TASKS=N) -------------- */
/*
 * How the kernel tick's cost grows with the number of tasks (the question of Kohout's "Hardware Support for
 * Real-Time Operating Systems", 2002; docs/executor-profile.md, executor/perf/perf_tick_tasks.py): N more tasks that
 * do nothing but vTaskDelay, so that the trace has ticks that wake 0, 1, ... N of them. The default image (N = 0)
 * has none of this: it is byte-identical.
 *
 * Wake pattern: kernel ticks counted from the scheduler's start, phase = tick mod (N + 1); task i (1..N)
 * is woken at phases i..N, so the tick of phase k wakes exactly k of them (phase 0 none), each k once every
 * N + 1 ticks (8 ms each). vTaskDelay is relative to the tick it is called in, and each task calls it in
 * the tick that woke it (it runs for a few hundred cycles, below only the short work of the timecode and
 * serial tasks), so the phases hold. The measurement does not rely on them: it counts from the trace which
 * tasks each tick woke.
 *
 * Priority: the status task's (idle + 1). Above idle, so a tick that wakes one of them from the sleeping
 * idle task switches to it at once (inside the tick, as a real application's periodic task); below the
 * timecode and serial tasks, so they never delay dispatch or the link (only the tick's own work and their
 * few short critical sections can). Level with the status task, not below it: nothing is between status
 * and idle. They cannot starve it: time slicing is off, and each blocks again within microseconds, so the
 * status task still runs each half period and checks in with the watchdog; were one ever to spin, status
 * would stop checking in and the watchdog would reset the executor, as for any stuck task. Like the
 * load's tasks they do not check in themselves, and get the kernel's minimal stack (interrupts run on it).
 * TCBs are separate objects named tcb_x1 .. tcb_xN: the bench's tracer names a task by its TCB's symbol,
 * and an array would be one symbol.
 */
#ifndef EX_EXTRA_TASKS
#define EX_EXTRA_TASKS 0
#endif
#if EX_EXTRA_TASKS > 0
#if EX_EXTRA_TASKS > 16
#error "EX_EXTRA_TASKS: at most 16"
#endif
#define STACK_EXTRA configMINIMAL_STACK_SIZE
#define PRIO_EXTRA PRIO_STATUS
/* X_UPTO_N(X) expands X(1) .. X(N); EX_EXTRA_TASKS must be a plain decimal number (the Makefile's). */
#define X_UPTO_1(X) X(1)
#define X_UPTO_2(X) X_UPTO_1(X) X(2)
#define X_UPTO_3(X) X_UPTO_2(X) X(3)
#define X_UPTO_4(X) X_UPTO_3(X) X(4)
#define X_UPTO_5(X) X_UPTO_4(X) X(5)
#define X_UPTO_6(X) X_UPTO_5(X) X(6)
#define X_UPTO_7(X) X_UPTO_6(X) X(7)
#define X_UPTO_8(X) X_UPTO_7(X) X(8)
#define X_UPTO_9(X) X_UPTO_8(X) X(9)
#define X_UPTO_10(X) X_UPTO_9(X) X(10)
#define X_UPTO_11(X) X_UPTO_10(X) X(11)
#define X_UPTO_12(X) X_UPTO_11(X) X(12)
#define X_UPTO_13(X) X_UPTO_12(X) X(13)
#define X_UPTO_14(X) X_UPTO_13(X) X(14)
#define X_UPTO_15(X) X_UPTO_14(X) X(15)
#define X_UPTO_16(X) X_UPTO_15(X) X(16)
#define X_UPTO_(n) X_UPTO_##n
#define X_UPTO(n) X_UPTO_(n)
#define X_TCB(n) static StaticTask_t tcb_x##n;
#define X_TCB_REF(n) &tcb_x##n,
X_UPTO(EX_EXTRA_TASKS)(X_TCB)
static StaticTask_t *const extra_tcbs[EX_EXTRA_TASKS] = {X_UPTO(EX_EXTRA_TASKS)(X_TCB_REF)};
static StackType_t stack_extra[EX_EXTRA_TASKS][STACK_EXTRA];
static TaskHandle_t extra_handles[EX_EXTRA_TASKS];

static void extra_task(void *arg)
{
    const TickType_t i = (TickType_t)(uintptr_t)arg; /* 1..EX_EXTRA_TASKS */

    vTaskDelay(i); /* created before the scheduler starts: from tick 0 (phase 0) to phase i */
    for (;;) {
        for (TickType_t j = i; j < EX_EXTRA_TASKS; j++)
            vTaskDelay(1);   /* phases i + 1 .. N */
        vTaskDelay(i + 1u);  /* from phase N to phase i of the next round (N + 1 ticks a round) */
    }
}

static void extra_tasks_create(void)
{
    for (uint8_t t = 0; t < EX_EXTRA_TASKS; t++)
        extra_handles[t] = xTaskCreateStatic(extra_task, "x", STACK_EXTRA, (void *)(uintptr_t)(t + 1u), PRIO_EXTRA,
                                             stack_extra[t], extra_tcbs[t]);
}
#endif

uint16_t exb_stack_free(uint8_t task)
{
    if (task >= N_TASKS || task_handles[task] == NULL)
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
 *   'X' halt()
 *   'W' every task's stack high-water mark to GPIOR2: for task t (0..4, as task_handles), 0x40 | t,
 *       then the mark's low and high byte (the load's tasks have no STATUS field) */
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
        if (b == 'W') {
            portENTER_CRITICAL(); /* the 15 marks in one piece: no check-in mark among them */
            for (uint8_t t = 0; t < N_TASKS; t++) {
                uint16_t m = exb_stack_free(t);
                TEST_MARK(0x40u | t);
                TEST_MARK((uint8_t)m);
                TEST_MARK((uint8_t)(m >> 8));
            }
            portEXIT_CRITICAL();
        }
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
        board_moment_dispatch(); /* a series' moment on the task path (board.c, "moments") */
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
        for (uint8_t t = 0; t < N_TASKS; t++)
            if (uxTaskGetStackHighWaterMark2(task_handles[t]) == 0)
                halt();
#if EX_EXTRA_TASKS > 0
        for (uint8_t t = 0; t < EX_EXTRA_TASKS; t++)
            if (uxTaskGetStackHighWaterMark2(extra_handles[t]) == 0)
                halt();
#endif
        checkin(CHECKIN_STATUS);
        vTaskDelay(half);
    }
}

/* ---- the executor's load (protocol version 3, SPEC.md MODE) --------------------------------------- */
/*
 * Cost (avr-size of make avr, before and after the load): program 12964 -> 14096 bytes (+1132: the two
 * tasks, Timer3's set-up, job and two interrupt handlers, the core's MODE and STATUS fields), data + bss
 * 1628 -> 2095 bytes (+467: two 160-byte stacks, two 38-byte TCBs, one more ready list for the fifth
 * priority (9), 8 more bytes of decode buffer for version 3's MAX_BODY, and the load's variables).
 */

/* 1 while the CPU load is on. Written by the serial task (exb_set_load, under the core lock), read
 * without a lock by load_cpu at each pass and by the idle hook: volatile, so that neither keeps a copy
 * across its loop (with LTO the idle hook is inlined into the kernel's idle loop). One byte: atomic. */
static volatile uint8_t load_cpu_on;
/* Passes of load_cpu's loop (STATUS.cpu_loops). Incremented in load_cpu's critical section and read by
 * exb_load_counts in one too: it is 4 bytes, and a task switch in the middle of the increment (any
 * interrupt may make one) would let the reader, a higher-priority task, see it half-written. The
 * critical sections (cli and a compiler memory barrier) order every access: not volatile. */
static uint32_t load_cpu_loops;
/* What load_cpu works on. Volatile so that the compiler keeps the work: nothing ever reads the result,
 * the work is the point (each pass reads and writes all 16 bytes, as code walking a buffer does). */
static volatile uint8_t load_buf[16];

/*
 * The CPU load: whenever no other task is ready, some arithmetic over a small buffer, then a short
 * critical section (the count: 25 cycles from cli to the restore of SREG, avr-objdump; as real code has,
 * for a shared counter or a queue operation). Measured (tests/test_executor_load.py and the same run
 * with other loads, mixed mode, profiler ticking, no events): 49059 passes/s with the CPU load alone,
 * i.e. one pass every 326 cycles (20.4 us) when it has the CPU; 38644/s with 10000 us / 2000 us
 * periodic load beside it (78.8 %: the job's 20 % and 1.2 % for 100 releases/s), 18999/s at
 * 1000 us / 500 us (38.7 %), 43718/s at 1000 us / 0 us (89.1 %: each release costs ~109 us, board.c).
 *
 * With it running, the CPU never sleeps in the idle hook: an interrupt finds the core executing code, never
 * asleep. Asleep, the response is always the same (the silicon adds its 5-cycle wake-up
 * from sleep; simavr's one-node loop adds 1 cycle). Awake, it waits for the instruction in progress to
 * complete (up to 4 more cycles: call and ret take 5 on the ATmega2560), and for the end of the critical
 * section when it arrives inside one (up to its 25 cycles). So ISR latency gets a spread it does not
 * have on an idle executor, whose every edge finds it asleep: on the task dispatch path (the pin-change
 * interrupt starts it), and on the ISR dispatch path for the edges that have no quiet window (armed
 * less than 100 us before the edge, see board.c); in the quiet window the timecode task holds the CPU
 * asleep, above this task. Measured in simavr with this and a 10000 us / 2000 us periodic load
 * (tests/test_executor_load.py): ISR dispatch 21 or 22 cycles (22 on the idle executor), task dispatch
 * 36.62 us at the least (36.69 us, every time, on the idle executor).
 */
static void load_cpu_task(void *arg)
{
    uint8_t acc = 0x5Au;

    (void)arg;
    for (;;) {
        if (!load_cpu_on) {
            /* Blocked until exb_set_load turns the load on (a notification is kept until taken, so one
             * given between the test and the wait is not lost). portMAX_DELAY is 524 s here (no
             * vTaskSuspend): a timeout just tests the flag again. */
            ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
            continue;
        }
        for (uint8_t i = 0; i < sizeof load_buf; i++) {
            acc = (uint8_t)(((uint8_t)(acc << 1) | (uint8_t)(acc >> 7)) ^ load_buf[i]);
            load_buf[i] = (uint8_t)(acc + i);
        }
        portENTER_CRITICAL();
        load_cpu_loops++;
        portEXIT_CRITICAL();
    }
}

/* The periodic load: released by Timer3 (board.c, "load"), it busy-waits its job on the timer and blocks
 * again. portMAX_DELAY is 524 s here: a timeout (no release: the load is off) runs nothing. It waits
 * with ulTaskNotifyTake, not the timecode task's xTaskNotifyWait: that one, called from the timecode
 * task alone, is inlined and specialised there by LTO (a second caller cost the task dispatch path 20
 * cycles). A release is never given twice before it is taken (load_busy, board.c), so the count is 0
 * or 1. */
static void load_periodic_task(void *arg)
{
    (void)arg;
    for (;;)
        if (ulTaskNotifyTake(pdTRUE, portMAX_DELAY) != 0)
            board_load_job();
}

/* Called by the core (serial task, core lock held) on every accepted MODE, values checked. */
void exb_set_load(uint8_t cpu, uint16_t period_us, uint16_t exec_us)
{
    load_cpu_on = cpu;
    if (cpu)
        xTaskNotifyGive(task_handles[T_LOAD_CPU]); /* below us: it runs when we are done */
    board_load_periodic(period_us, exec_us);
}

void exb_load_counts(uint32_t *cpu_loops, uint32_t *periodic_runs, uint16_t *periodic_overruns)
{
    portENTER_CRITICAL(); /* multi-byte counters the load's tasks and interrupt update */
    *cpu_loops = load_cpu_loops;
    board_load_counts(periodic_runs, periodic_overruns);
    portEXIT_CRITICAL();
}

/*
 * With the CPU load on, load_cpu and the idle task share the idle priority. Time slicing is off, but
 * the kernel still takes the tasks of one priority in turn after every preemption, so the idle task
 * gets the CPU back now and then; it yields at once (configIDLE_SHOULD_YIELD) but calls this hook
 * first if it was switched out there. Sleeping then would take the CPU from the load until the next
 * interrupt (up to a kernel tick, 8 ms): so no sleep while the load is on.
 */
void vApplicationIdleHook(void)
{
    if (load_cpu_on)
        return;
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
    task_handles[0] = xTaskCreateStatic(timecode_task, "tc", STACK_TC, NULL, PRIO_TC, stack_tc, &tcb_tc);
    task_handles[1] = xTaskCreateStatic(serial_task, "serial", STACK_SERIAL, NULL, PRIO_SERIAL, stack_serial,
                                        &tcb_serial);
    task_handles[2] = xTaskCreateStatic(status_task, "led", STACK_STATUS, NULL, PRIO_STATUS, stack_status,
                                        &tcb_status);
    task_handles[T_LOAD_CPU] = xTaskCreateStatic(load_cpu_task, "lcpu", STACK_LOAD_CPU, NULL, PRIO_LOAD_CPU,
                                                 stack_load_cpu, &tcb_load_cpu);
    task_handles[T_LOAD_PERIODIC] = xTaskCreateStatic(load_periodic_task, "lper", STACK_LOAD_PERIODIC, NULL,
                                                      PRIO_LOAD_PERIODIC, stack_load_periodic, &tcb_load_periodic);
#if EX_EXTRA_TASKS > 0
    extra_tasks_create(); /* after the executor's own: the status task is first of its priority */
#endif
    board_set_tasks(task_handles[0], task_handles[1]);
    board_set_load_task(task_handles[T_LOAD_PERIODIC]);
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
