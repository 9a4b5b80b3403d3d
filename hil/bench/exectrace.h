/*
 * The executor trace: what the executor core did, seen by the bench from outside (no instrumentation
 * in the firmware): task switches, interrupt entries and returns, sleep, its wired pins; one record
 * per line, with the executor's own cycle count (the clock of --trace and of the VCD; with a crystal
 * offset, cosim.h, those are global cycles and this one the executor's own: a "# ppm N" line says so).
 *
 * Turned on by --exec-trace PATH (from cycle 0) or the control commands `exectrace on [FILE]` /
 * `exectrace off` (commands.c); two-node mode only. Format, version 1 (fields separated by one space;
 * <cycle> and <vector> decimal; <addr> four lower-case hex digits, no prefix, a data-space address as
 * the core sees it, e.g. 0227 for the ELF's 0x800227):
 *
 *   # mmbench executor trace 1
 *   # cpu_hz 16000000
 *   # node executor
 *   # image <path of the executor ELF>
 *   # ppm <N>                               (only with --ppm-executor N, N not 0: the cycles below
 *                                            are the executor's, 16 MHz x (1 + N/1e6) of global time)
 *   # current_tcb pxCurrentTCB <addr>       (or "# current_tcb none": no such symbol, no S records)
 *   T <addr> <symbol>        a task control block: every STT_OBJECT symbol named tcb_* and the
 *                            kernel's static idle (and timer) task TCB (xIdleTaskTCB, as the symbol
 *                            table names it: a function-local static, "xIdleTaskTCB.2692"); sorted
 *                            by address. An S address with no T line is written as is.
 *   V <vector> <name>        an interrupt vector the image has a handler for (its __vector_N is not
 *                            avr-libc's __bad_interrupt), ATmega2560 names (PCINT2, TIMER0_COMPA ...)
 *   F <cycle> <vector> <addr>  an interrupt taken at <cycle>, before the trace began, whose return
 *                            address is still on a stack (see R), and the TCB current when it was
 *                            taken; oldest first
 *   B <cycle>                the trace begins; S, Z and L records at this cycle follow with the
 *                            state then (the current TCB, asleep or not, the wires' levels)
 *   S <cycle> <addr>         pxCurrentTCB took a new value: the kernel switched tasks (before the
 *                            scheduler starts, xTaskCreateStatic sets it too; 0000 after the start-up
 *                            code clears .bss). <cycle> is the end of the store that changed its last
 *                            byte (see exectrace.c: how a half-written pointer is never recorded)
 *   I <cycle> <vector>       an interrupt was taken: the return address pushed, I cleared, the vector
 *                            fetched (simavr's avr_service_interrupts; the cycle the core's clock
 *                            had then)
 *   R <cycle> <vector>|-     a RETI executed at <cycle> (the instruction's first cycle). <vector>:
 *                            the RETI popped the return address that vector's entry pushed (matched
 *                            by the stack pointer: the interrupted code resumes). "-": it popped
 *                            another return address. Under FreeRTOS's ATmega port that is normal:
 *                            a context switch from an ISR (vPortYieldFromISR) ends with a RETI into
 *                            the incoming task's own saved call site, and the interrupted task's
 *                            frame is only popped, by its ISR's own RETI, when that task runs again;
 *                            the tick ISR switches with RET (vPortYieldFromTick) and its RETI also
 *                            comes when the interrupted task runs again. So an I is matched by the
 *                            R with its vector that comes while the same task is current (F frames
 *                            likewise), with other tasks' records in between; nested interrupts
 *                            nest. What a handler itself costs: from I to the first S after it (the
 *                            kernel switched away) or to its R, plus, after a switch, from the S
 *                            back to the interrupted task until its R.
 *   Z <cycle> 1|0            the core went to sleep (the cycle after its SLEEP) / woke (an enabled
 *                            interrupt was raised: the cycle it was raised at)
 *   W <cycle> <wire> 0|1     a wired pin of the executor changed: timecode0..7 (inputs PK0..7, the
 *                            level the executor sees, after a cut or stuck fault) or event_id0..2,
 *                            strobe (outputs PC0..3, the level the executor drives, before a fault).
 *                            After a reset the bench drives every input again (cosim.c, REAPPLY_S):
 *                            W lines that repeat a level are the executor seeing that level anew
 *   L <cycle> <wire> 0|1     right after B, one per wire: its level when the trace began (the wires
 *                            and their sense as for W): a state, not a change
 *   X <cycle> reset|watchdog|halted|crashed   the core was reset (the reset command / the watchdog;
 *                            it then runs from its reset vector: no interrupt frames, awake, no
 *                            task until the next S), or stopped (slept with interrupts off / simavr
 *                            crashed) until a reset
 *   M <cycle> <since> <pc> <function> <pc> <function>
 *                            interrupts were masked by code from <since> to <cycle> while one became
 *                            pending: the instruction at byte address <pc> (five hex digits, as
 *                            avr-objdump prints it) in <function> cleared I (cli, an `out` to SREG:
 *                            a critical section, a context save), the one at the second <pc> set it
 *                            again (sei, an `out` restoring SREG) at <cycle>, and the pending
 *                            interrupt was taken after it. <function>: the ELF's function symbol
 *                            that holds the address ("?" if none). Written only when an interrupt
 *                            was pending as the span ended: the spans that held one off. An
 *                            interrupt's entry and its RETI open and close none (an ISR's own time
 *                            is its I..R); a span a RETI ended (a task that masked, then switched)
 *                            or open when the trace began is not written
 *   E <cycle>                the trace ends (exectrace off, another exectrace on, the bench stopped)
 *
 * Lines starting with '#' are comments. Every record from F on has its cycle in the second field,
 * and those cycles never go back. Records of one cycle are in the order the bench saw them (an S is
 * known only once the pointer has settled, 8 instructions later, so it can follow records of its own
 * cycle that came after it).
 * A reader that does not know a record's letter should skip the line (later versions may add some).
 */
#ifndef MMBENCH_EXECTRACE_H
#define MMBENCH_EXECTRACE_H

#include <stdint.h>
#include <stdio.h>

#include <simavr/sim_avr.h>

#include "wire.h"

/* tested by node_avr.c at every executor step: a plain int, not a call */
extern int exectrace_on;

void exectrace_attach(avr_t *a, const char *elf); /* at load, two-node mode: symbols, interrupt hooks */
/* The file is made through safefile.c: PATH appears, whole, when the trace is closed. */
/* `wires`, `ppm`: the co-simulation's (cosim_wires(), cosim_ppm(EXECUTOR)), the trace's header and the wires'
 * levels it starts with */
int exectrace_open(const char *path, uint64_t cycle, const struct wire wires[NWIRES], int ppm); /* --exec-trace: 0, or -1 */
/* a file the caller opened with sf_open */
void exectrace_start(FILE *f, const char *path, uint64_t cycle, const struct wire wires[NWIRES], int ppm);
void exectrace_close(uint64_t cycle);                    /* E record, then committed (sf_commit), if open */
int exectrace_is_open(void);
const char *exectrace_path(void); /* the last file opened ("" if none) */
uint64_t exectrace_records(void); /* records written to the current file */

/* hooks from cosim.c and node_avr.c (each a no-op unless the trace is on) */
void exectrace_insn(avr_t *a);                           /* after each executor instruction */
void exectrace_core(avr_t *a, uint64_t cycle);           /* asleep, awake, halted, crashed? */
void exectrace_wire(const char *name, int level, uint64_t cycle);
void exectrace_reset(uint64_t cycle, const char *cause); /* always (the frame table is kept always) */
void exectrace_flush(uint64_t horizon);                  /* write records at or before horizon */
extern int exectrace_held;                               /* records waiting for the horizon */

#endif
