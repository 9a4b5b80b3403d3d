/*
 * The executor trace (format: exectrace.h). How the bench sees each thing:
 *
 * Task switches. FreeRTOS's pxCurrentTCB is a 2-byte RAM variable (its address from the ELF's symbol
 * table). While the trace is on, the executor's batches run one instruction at a time (node_avr.c), and
 * after each one the bench compares the two bytes with what it saw after the previous one. The AVR
 * has no 16-bit store to RAM: the pointer is written byte by byte. The kernel's writes are adjacent:
 * avr-gcc writes the high byte, then the low byte in the very next instruction (the executor image:
 * sts 0x07B3 / sts 0x07B2 in vTaskSwitchContext and twice in xTaskCreateStatic), inside a critical
 * section or an ISR. The C start-up code writes it too, a byte per pass of a loop: __do_clear_bss
 * (st X+ / cpi / cpc / brne: 4 instructions a byte) after a reset, and __do_copy_data for .data
 * (5). With a one-instruction window the start-up's half-cleared pointer was recorded after a reset
 * ("S 0200" 6 cycles before "S 0000", the idle TCB being 0227). So a value is recorded once it has held
 * for SETTLE instructions after it changed, with the cycle it changed at (the end of the store that
 * changed its last byte). (Waiting for interrupts to be enabled again would not do: a task that
 * blocked inside a critical section resumes with interrupts off, hundreds of cycles after the switch.)
 *
 * Interrupts. simavr raises the interrupt table's RUNNING irq when it takes a vector (value: the
 * vector, after it pushed the return address and cleared I) and when a RETI executes (after it set I,
 * before it pops the return address; value: what simavr's own nesting stack then has on top, or 0).
 * The two are told apart by the I flag. simavr's nesting stack is not used: under FreeRTOS a context
 * switch returns into another task's stack (vPortYieldFromTick with RET, which simavr never pops), so
 * its stack soon pairs RETIs with the wrong vectors. The bench instead keeps each outstanding entry
 * with the stack pointer after its push: a RETI executed with that stack pointer pops exactly that
 * return address. The table is kept whether or not the trace is on, so a trace turned on mid-run
 * knows the frames taken before it (F lines).
 *
 * Interrupts held off by code. After each instruction the bench also compares the I flag with what it
 * was after the previous one: an instruction that cleared it (cli, an `out` to SREG: a critical section,
 * a context save) opens a masked span, one that set it (sei, an `out` restoring SREG) closes it. An
 * interrupt's entry and RETI change I too: on_int_running records them as the flag's new value, so they
 * never open or close a span. A span is written (M) only when an interrupt was pending as it closed: it
 * held that interrupt off. The CPU load's 25-cycle critical section runs every 326 cycles; written
 * always, its spans would be 100,000 records a second of a loaded executor, of which only those that
 * met an interrupt say anything. Each end is named by the function the ELF's symbol table places it in.
 *
 * Sleep, pins, resets: cosim.c and node_avr.c call the hooks below where they see them happen.
 *
 * Order. Records come from both cores' steps: a pin change the profiler makes at cycle a reaches the
 * executor as of a even when the executor has already run a few cycles past a (cosim.c), and a
 * pointer change is known one instruction late. So records wait in a small buffer sorted by cycle and
 * are written once the co-simulation has moved both cores past them (exectrace_flush: nothing that
 * comes later can be earlier than the lower of the two cores' clocks).
 */
#define _GNU_SOURCE
#include "exectrace.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simavr/sim_interrupts.h>
#include <simavr/sim_irq.h>

#include "bench.h"
#include "safefile.h"

#define DATA_OFFSET 0x800000u /* avr-gcc's data space in the ELF */
#define NVECTORS 57           /* ATmega2560: reset + 56 */
#define MAX_TCBS 64
#define MAX_FRAMES 64  /* outstanding interrupt frames (the tasks' stacks and nesting): a handful */
#define HOLD 1024      /* records waiting for the horizon: a few per step at most */
#define SETTLE 8       /* instructions a pointer value must hold: more than a start-up loop's pass (5) */
#define MAX_FUNCS 1024 /* function symbols of the image (the executor has about 300) */

static const char *const vector_names[NVECTORS] = {
    "RESET",        "INT0",         "INT1",         "INT2",         "INT3",        "INT4",
    "INT5",         "INT6",         "INT7",         "PCINT0",       "PCINT1",      "PCINT2",
    "WDT",          "TIMER2_COMPA", "TIMER2_COMPB", "TIMER2_OVF",   "TIMER1_CAPT", "TIMER1_COMPA",
    "TIMER1_COMPB", "TIMER1_COMPC", "TIMER1_OVF",   "TIMER0_COMPA", "TIMER0_COMPB", "TIMER0_OVF",
    "SPI_STC",      "USART0_RX",    "USART0_UDRE",  "USART0_TX",    "ANALOG_COMP", "ADC",
    "EE_READY",     "TIMER3_CAPT",  "TIMER3_COMPA", "TIMER3_COMPB", "TIMER3_COMPC", "TIMER3_OVF",
    "USART1_RX",    "USART1_UDRE",  "USART1_TX",    "TWI",          "SPM_READY",   "TIMER4_CAPT",
    "TIMER4_COMPA", "TIMER4_COMPB", "TIMER4_COMPC", "TIMER4_OVF",   "TIMER5_CAPT", "TIMER5_COMPA",
    "TIMER5_COMPB", "TIMER5_COMPC", "TIMER5_OVF",   "USART2_RX",    "USART2_UDRE", "USART2_TX",
    "USART3_RX",    "USART3_UDRE",  "USART3_TX",
};

struct rec {
    uint64_t cycle;
    char kind;       /* S I R Z W L X M */
    int num;         /* S: address; I, R: vector (R: -1 for "-"); Z, W, L: level */
    const char *str; /* W, L: wire name; X: cause (static strings) */
    uint64_t since;  /* M: the cycle interrupts were masked at */
    uint32_t pc[2];  /* M: the byte addresses of the instructions that masked and unmasked them */
};

struct func {
    uint32_t addr; /* byte address in flash */
    uint32_t size;
    char name[48];
};

struct frame {
    uint16_t sp;  /* the stack pointer after the entry pushed its return address */
    uint8_t vector;
    uint16_t tcb; /* pxCurrentTCB when it was taken */
    uint64_t cycle;
};

int exectrace_on;
int exectrace_held;

static struct {
    FILE *f;
    char path[512];
    char elf[512];
    avr_t *avr;
    /* from the ELF */
    int has_ptr;
    uint16_t ptr; /* address of pxCurrentTCB */
    struct {
        uint16_t addr;
        char name[64];
    } tcbs[MAX_TCBS];
    int ntcbs;
    uint8_t handled[NVECTORS];
    /* the pointer as seen after the last instruction, and as last recorded */
    uint16_t seen, recorded;
    uint64_t seen_cycle;
    int unsettled; /* instructions it has held since it changed, while under SETTLE; 0: settled */
    int asleep, stopped; /* as last recorded */
    struct frame frames[MAX_FRAMES];
    int nframes;
    uint64_t frames_dropped;
    struct rec hold[HOLD];
    /* the I flag after the last instruction, and the open masked span (masked: 1 while one is open) */
    int ival, masked;
    uint64_t masked_at;
    uint32_t masked_pc;
    struct func funcs[MAX_FUNCS]; /* by address */
    int nfuncs;
    uint64_t records;
    uint64_t last; /* cycle of the last record written */
} exec_trace;

static uint16_t read_ptr(const avr_t *a)
{
    return (uint16_t)(a->data[exec_trace.ptr] | (a->data[exec_trace.ptr + 1] << 8));
}

static uint16_t read_sp(const avr_t *a)
{
    return (uint16_t)(a->data[R_SPL] | (a->data[R_SPH] << 8));
}

/* ---- writing ------------------------------------------------------------------------------- */

/* The function the symbol table places byte address PC in ("?" outside every one) */
static const char *func_name(uint32_t pc)
{
    int lo = 0, hi = exec_trace.nfuncs - 1, at = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (exec_trace.funcs[mid].addr <= pc) {
            at = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (at < 0 || pc >= exec_trace.funcs[at].addr + (exec_trace.funcs[at].size ? exec_trace.funcs[at].size : 2))
        return "?";
    return exec_trace.funcs[at].name;
}

static void write_rec(const struct rec *r)
{
    switch (r->kind) {
    case 'S': fprintf(exec_trace.f, "S %" PRIu64 " %04x\n", r->cycle, (unsigned)r->num); break;
    case 'I': fprintf(exec_trace.f, "I %" PRIu64 " %d\n", r->cycle, r->num); break;
    case 'R':
        if (r->num < 0)
            fprintf(exec_trace.f, "R %" PRIu64 " -\n", r->cycle);
        else
            fprintf(exec_trace.f, "R %" PRIu64 " %d\n", r->cycle, r->num);
        break;
    case 'Z': fprintf(exec_trace.f, "Z %" PRIu64 " %d\n", r->cycle, r->num); break;
    case 'W': fprintf(exec_trace.f, "W %" PRIu64 " %s %d\n", r->cycle, r->str, r->num); break;
    case 'L': fprintf(exec_trace.f, "L %" PRIu64 " %s %d\n", r->cycle, r->str, r->num); break;
    case 'X': fprintf(exec_trace.f, "X %" PRIu64 " %s\n", r->cycle, r->str); break;
    case 'M':
        fprintf(exec_trace.f, "M %" PRIu64 " %" PRIu64 " %05x %s %05x %s\n", r->cycle, r->since, (unsigned)r->pc[0],
                func_name(r->pc[0]), (unsigned)r->pc[1], func_name(r->pc[1]));
        break;
    }
    exec_trace.records++;
    exec_trace.last = r->cycle;
}

void exectrace_flush(uint64_t horizon)
{
    int i = 0, n = exectrace_held;
    if (exec_trace.unsettled && exec_trace.seen_cycle < horizon)
        horizon = exec_trace.seen_cycle; /* a pointer change not yet recorded comes with that cycle */
    while (i < n && exec_trace.hold[i].cycle <= horizon)
        write_rec(&exec_trace.hold[i++]);
    if (i) {
        memmove(exec_trace.hold, exec_trace.hold + i, (size_t)(n - i) * sizeof exec_trace.hold[0]);
        exectrace_held = n - i;
    }
}

/* Into the buffer, in cycle order (stable: after the records of the same cycle). */
static void add(uint64_t cycle, char kind, int num, const char *str)
{
    int i;
    if (!exectrace_on)
        return;
    if (exectrace_held == HOLD) { /* never seen: the horizon moves every step; keep going in order */
        write_rec(&exec_trace.hold[0]);
        memmove(exec_trace.hold, exec_trace.hold + 1, (HOLD - 1) * sizeof exec_trace.hold[0]);
        exectrace_held--;
    }
    i = exectrace_held++;
    while (i > 0 && exec_trace.hold[i - 1].cycle > cycle) {
        exec_trace.hold[i] = exec_trace.hold[i - 1];
        i--;
    }
    exec_trace.hold[i] = (struct rec){cycle, kind, num, str, 0, {0, 0}};
}

/* An M record: interrupts masked from `since` (by the instruction at pc_from) to `cycle` (pc_to) */
static void add_masked(uint64_t cycle, uint64_t since, uint32_t pc_from, uint32_t pc_to)
{
    int i;
    add(cycle, 'M', 0, NULL);
    for (i = exectrace_held - 1; i >= 0; i--)
        if (exec_trace.hold[i].kind == 'M' && exec_trace.hold[i].cycle == cycle && !exec_trace.hold[i].since) {
            exec_trace.hold[i].since = since;
            exec_trace.hold[i].pc[0] = pc_from;
            exec_trace.hold[i].pc[1] = pc_to;
            return;
        }
}

/* ---- hooks --------------------------------------------------------------------------------- */

void exectrace_insn(avr_t *a)
{
    uint16_t v;
    int ival = a->sreg[S_I] != 0;
    if (ival != exec_trace.ival) { /* this instruction changed I (entries and RETIs never get here) */
        exec_trace.ival = ival;
        if (!ival) {
            exec_trace.masked = 1;
            exec_trace.masked_at = a->cycle;
            exec_trace.masked_pc = a->pc; /* the instruction just run: the caller sets pc to the next one after */
        } else if (exec_trace.masked) {
            exec_trace.masked = 0;
            if (avr_has_pending_interrupts(a))
                add_masked(a->cycle, exec_trace.masked_at, exec_trace.masked_pc, a->pc);
        }
    }
    if (!exec_trace.has_ptr)
        return;
    v = read_ptr(a);
    if (v != exec_trace.seen) {
        exec_trace.seen = v;
        exec_trace.seen_cycle = a->cycle; /* the end of the store that changed it */
        exec_trace.unsettled = 1;
    } else if (exec_trace.unsettled && ++exec_trace.unsettled > SETTLE) {
        exec_trace.unsettled = 0;
        if (v != exec_trace.recorded) {
            exec_trace.recorded = v;
            add(exec_trace.seen_cycle, 'S', v, NULL);
        }
    }
}

void exectrace_core(avr_t *a, uint64_t cycle)
{
    int asleep = a->state == cpu_Sleeping;
    int stopped = a->state == cpu_Done || a->state == cpu_Crashed;
    if (!exectrace_on)
        return;
    if (stopped && !exec_trace.stopped) {
        exec_trace.stopped = 1;
        add(cycle, 'X', 0, a->state == cpu_Done ? "halted" : "crashed");
    }
    if (!stopped && asleep != exec_trace.asleep) {
        exec_trace.asleep = asleep;
        add(cycle, 'Z', asleep, NULL);
    }
}

void exectrace_wire(const char *name, int level, uint64_t cycle)
{
    add(cycle, 'W', level, name);
}

void exectrace_reset(uint64_t cycle, const char *cause)
{
    exec_trace.nframes = 0; /* avr_reset: the stack pointer back at RAMEND, every frame gone */
    add(cycle, 'X', 0, cause);
    /* what the reader assumes after X: awake, running from the reset vector */
    exec_trace.asleep = 0;
    exec_trace.stopped = 0;
}

static void on_int_running(struct avr_irq_t *irq, uint32_t value, void *param)
{
    avr_t *a = param;
    uint16_t sp = read_sp(a);
    int i;
    (void)irq;
    if (!a->sreg[S_I]) {
        /* entry: simavr has pushed the return address and cleared I */
        if (exec_trace.nframes == MAX_FRAMES) { /* frames abandoned on a stack (none seen): forget the oldest */
            memmove(exec_trace.frames, exec_trace.frames + 1, (MAX_FRAMES - 1) * sizeof exec_trace.frames[0]);
            exec_trace.nframes--;
            exec_trace.frames_dropped++;
        }
        for (i = 0; i < exec_trace.nframes; i++)
            if (exec_trace.frames[i].sp == sp) { /* a frame at this address was abandoned: the new one replaces it */
                memmove(exec_trace.frames + i, exec_trace.frames + i + 1,
                        (size_t)(exec_trace.nframes - i - 1) * sizeof exec_trace.frames[0]);
                exec_trace.nframes--;
                exec_trace.frames_dropped++;
                break;
            }
        exec_trace.frames[exec_trace.nframes++] =
            (struct frame){sp, (uint8_t)value, exec_trace.has_ptr ? read_ptr(a) : 0, a->cycle};
        add(a->cycle, 'I', (int)value, NULL);
        exec_trace.ival = 0; /* the entry cleared I, no instruction: no masked span */
        exec_trace.masked = 0;
        return;
    }
    exec_trace.ival = 1; /* the RETI set it: a span still open (masked in a task, returned into another) ends */
    exec_trace.masked = 0;
    /* RETI: simavr has set I and not yet popped the return address */
    for (i = exec_trace.nframes - 1; i >= 0; i--)
        if (exec_trace.frames[i].sp == sp)
            break;
    if (i < 0) {
        add(a->cycle, 'R', -1, NULL);
        return;
    }
    add(a->cycle, 'R', exec_trace.frames[i].vector, NULL);
    memmove(exec_trace.frames + i, exec_trace.frames + i + 1,
            (size_t)(exec_trace.nframes - i - 1) * sizeof exec_trace.frames[0]);
    exec_trace.nframes--;
}

/* ---- the image's symbols ------------------------------------------------------------------- */

/* the kernel's own static TCBs (configKERNEL_PROVIDED_STATIC_MEMORY): function-local statics, which
 * gcc names with a numeric suffix ("xIdleTaskTCB.2692") */
static int kernel_tcb(const char *name)
{
    static const char *const bases[] = {"xIdleTaskTCB", "xTimerTaskTCB"};
    size_t i, k;
    for (i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        k = strlen(bases[i]);
        if (!strncmp(name, bases[i], k) && (name[k] == 0 || name[k] == '.'))
            return 1;
    }
    return 0;
}

static int by_addr(const void *x, const void *y)
{
    const uint16_t *a = x, *b = y; /* first member of the tcbs entries */
    return (int)*a - (int)*b;
}

static int by_func_addr(const void *x, const void *y)
{
    const struct func *a = x, *b = y;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static void read_symbols(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *e;
    Elf_Scn *scn = NULL;
    uint64_t bad = UINT64_MAX, vec[NVECTORS];
    int i;

    for (i = 0; i < NVECTORS; i++)
        vec[i] = UINT64_MAX;
    if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ, NULL)))
        die("executor trace: cannot read the symbols of %s", path);
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        size_t k, n;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
            continue;
        n = sh.sh_size / sh.sh_entsize;
        for (k = 0; k < n; k++) {
            GElf_Sym s;
            const char *name;
            if (!gelf_getsym(d, (int)k, &s) || !(name = elf_strptr(e, sh.sh_link, s.st_name)) || !name[0])
                continue;
            if (!strcmp(name, "__bad_interrupt"))
                bad = s.st_value;
            else if (!strncmp(name, "__vector_", 9)) {
                char *end;
                long v = strtol(name + 9, &end, 10);
                if (!*end && v > 0 && v < NVECTORS)
                    vec[v] = s.st_value;
            }
            if (GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_value < DATA_OFFSET && exec_trace.nfuncs < MAX_FUNCS) {
                struct func *f = &exec_trace.funcs[exec_trace.nfuncs++];
                f->addr = (uint32_t)s.st_value;
                f->size = (uint32_t)s.st_size;
                snprintf(f->name, sizeof f->name, "%s", name);
                continue;
            }
            if (GELF_ST_TYPE(s.st_info) != STT_OBJECT || s.st_value < DATA_OFFSET)
                continue;
            if (!strcmp(name, "pxCurrentTCB")) {
                exec_trace.has_ptr = 1;
                exec_trace.ptr = (uint16_t)(s.st_value - DATA_OFFSET);
            } else if ((!strncmp(name, "tcb_", 4) || kernel_tcb(name)) && exec_trace.ntcbs < MAX_TCBS) {
                exec_trace.tcbs[exec_trace.ntcbs].addr = (uint16_t)(s.st_value - DATA_OFFSET);
                snprintf(exec_trace.tcbs[exec_trace.ntcbs].name, sizeof exec_trace.tcbs[0].name, "%s", name);
                exec_trace.ntcbs++;
            }
        }
    }
    elf_end(e);
    close(fd);
    for (i = 1; i < NVECTORS; i++)
        exec_trace.handled[i] = vec[i] != UINT64_MAX && vec[i] != bad;
    qsort(exec_trace.tcbs, (size_t)exec_trace.ntcbs, sizeof exec_trace.tcbs[0], by_addr);
    qsort(exec_trace.funcs, (size_t)exec_trace.nfuncs, sizeof exec_trace.funcs[0], by_func_addr);
}

void exectrace_attach(avr_t *a, const char *elf)
{
    avr_irq_t *irq = avr_get_interrupt_irq(a, AVR_INT_ANY);
    if (!irq)
        die("executor trace: simavr has no interrupt irq");
    char *full = realpath(elf, NULL); /* the header names the image wherever the reader runs */
    exec_trace.avr = a;
    snprintf(exec_trace.elf, sizeof exec_trace.elf, "%s", full ? full : elf);
    free(full);
    read_symbols(elf);
    avr_irq_register_notify(irq + AVR_INT_IRQ_RUNNING, on_int_running, a);
}

/* ---- the file ------------------------------------------------------------------------------ */

void exectrace_start(FILE *f, const char *path, uint64_t cycle, const struct wire wires[NWIRES], int ppm)
{
    avr_t *a = exec_trace.avr;
    int i;
    if (exec_trace.f)
        exectrace_close(cycle);
    exec_trace.f = f;
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    snprintf(exec_trace.path, sizeof exec_trace.path, "%s", path);
    exec_trace.records = 0;
    exec_trace.last = cycle;
    fprintf(f, "# mmbench executor trace 1\n# cpu_hz %llu\n# node executor\n# image %s\n", F_CPU, exec_trace.elf);
    if (ppm) /* its own cycles: a crystal offset (cosim.h); absent at 0 ppm */
        fprintf(f, "# ppm %d\n", ppm);
    if (exec_trace.has_ptr)
        fprintf(f, "# current_tcb pxCurrentTCB %04x\n", exec_trace.ptr);
    else
        fprintf(f, "# current_tcb none\n");
    for (i = 0; i < exec_trace.ntcbs; i++)
        fprintf(f, "T %04x %s\n", exec_trace.tcbs[i].addr, exec_trace.tcbs[i].name);
    for (i = 1; i < NVECTORS; i++)
        if (exec_trace.handled[i])
            fprintf(f, "V %d %s\n", i, vector_names[i]);
    for (i = 0; i < exec_trace.nframes; i++)
        fprintf(f, "F %" PRIu64 " %d %04x\n", exec_trace.frames[i].cycle, exec_trace.frames[i].vector,
                exec_trace.frames[i].tcb);
    fprintf(f, "B %" PRIu64 "\n", cycle);
    exectrace_held = 0;
    exectrace_on = 1;
    exec_trace.stopped = a->state == cpu_Done || a->state == cpu_Crashed;
    exec_trace.asleep = a->state == cpu_Sleeping;
    /* a span open now began before the trace: its start is unknown, so none is open (no M for it) */
    exec_trace.ival = a->sreg[S_I] != 0;
    exec_trace.masked = 0;
    if (exec_trace.has_ptr) {
        exec_trace.seen = exec_trace.recorded = read_ptr(a);
        exec_trace.unsettled = 0;
        add(cycle, 'S', exec_trace.recorded, NULL);
    }
    add(cycle, 'Z', exec_trace.asleep, NULL);
    /* the wires' levels now: a trace begun mid-run otherwise knows only the bits that change later */
    for (i = 0; i < NWIRES; i++) {
        const struct wire *w = &wires[i];
        add(cycle, 'L', w->dst == EXECUTOR ? w->level : w->src_level, w->vcd_name);
    }
    if (exec_trace.stopped)
        add(cycle, 'X', 0, a->state == cpu_Done ? "halted" : "crashed");
}

/* --exec-trace PATH: any path the user gives, so made through safefile.c (a link planted under PATH is
 * replaced when the trace is complete, never written through) */
int exectrace_open(const char *path, uint64_t cycle, const struct wire wires[NWIRES], int ppm)
{
    FILE *f = sf_open(path, 0666);
    if (!f)
        return -1;
    exectrace_start(f, path, cycle, wires, ppm);
    return 0;
}

void exectrace_close(uint64_t cycle)
{
    if (!exec_trace.f)
        return;
    exectrace_flush(NEVER);
    /* a core may have run a few cycles past the bench's clock (its last instruction): E is last */
    fprintf(exec_trace.f, "E %" PRIu64 "\n", cycle > exec_trace.last ? cycle : exec_trace.last);
    if (sf_commit(exec_trace.f)) /* the record is lost, not the run: said in the log */
        logmsg("cannot write %s: %s", exec_trace.path, strerror(errno));
    exec_trace.f = NULL;
    exectrace_on = 0;
    exectrace_held = 0;
}

int exectrace_is_open(void)
{
    return exec_trace.f != NULL;
}

const char *exectrace_path(void)
{
    return exec_trace.path;
}

uint64_t exectrace_records(void)
{
    return exec_trace.records;
}
