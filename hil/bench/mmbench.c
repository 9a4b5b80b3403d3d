/*
 * mmbench: the virtual bench. Two ATmega2560 images (profiler and executor) in simavr on one virtual
 * clock, wired pin by pin, each USART0 on a pseudo-terminal, a control channel on a Unix socket.
 *
 *   mmbench --profiler ELF --executor ELF [--run-dir DIR] [--unpaced] [--until SECONDS]
 *           [--baud B] [--out-buffer BYTES] [--lag-bound-us US] [--seed N] [--vcd FILE]
 *           [--script FILE] [--trace FILE] [--spin | --spin-us US] [--quantum-us US]
 *           [--realtime] [--sched fifo|nice|other] [--mlock] [--dma-latency US] [--cpu N]
 *
 * Run directory (created if missing): profiler.tty and executor.tty (symlinks to /dev/pts/N),
 * control.sock (the control channel), ready (written once everything is up: a JSON line with the
 * paths). The bench logs to stderr; on exit it prints its final status (JSON) on stdout.
 *
 * Clock. Both cores start at cycle 0 and run at 16 MHz (chip and clock are set here; AVR_MCU()
 * metadata in the images is ignored). The core whose clock is lower always runs next (ties: the
 * profiler), so when a core executes an instruction that starts at cycle a, the other core has
 * executed exactly its instructions that started at or before a and none after. A core runs more
 * than one instruction per turn only while its instructions start before the other core's clock
 * (simavr's own batching, bounded by run_cycle_count). A sleeping core is not stepped at all until
 * its next cycle timer (an interrupt source of its own: timer, UART, bench input) or until the
 * other core changes one of its input pins: its clock is then brought up to the moment of the
 * change (nothing of its own could happen before that moment, its next timer is later).
 *
 * Wires (fixed pin map, docs/hardware.md): profiler PA0..7 -> executor PK0..7 ("timecode"),
 * executor PC0..2 -> profiler PC0..2 and executor PC3 -> profiler PL1 = ICP5 ("event"). A pin change
 * made by an instruction starting at cycle a is applied to the other core as of cycle a: if that core
 * has already run past a (by at most the length of its last instruction), its clock is set back to a
 * while the change is applied, so timer input capture (ICR5) latches the count of cycle a, and put
 * back afterwards; its next instruction sees the new level. simavr's ATmega2560 has no pin-change
 * interrupt on port K: the bench supplies PCINT2 (vector 11, PCICR bit 2, PCIFR bit 2, PCMSK2).
 *
 * UARTs. simavr 1.6 times a UART character as 11 bits (it always counts a parity bit) and raises
 * RXC one such character after a byte is injected. The bench corrects both: it sets the UART's
 * character time from UBRR/U2X/UCSZ/USBS/UPM (10 bits for 8N1), and injects each host byte at the
 * moment its stop bit ends, raising RXC at once. Host bytes are paced at --baud (default 9600,
 * 10 bit times per byte) in virtual time, one after the other. MCU output reaches the pty when its
 * stop bit ends (UDR write, or the end of the previous character, plus one character); output the
 * host does not read stays in a bounded per-node buffer (--out-buffer) whose overflow is counted.
 *
 * Pacing. Paced (default): virtual time follows wall time (CLOCK_MONOTONIC). The bench runs in
 * slices (at most 200 us of virtual time) up to wall time + a quantum (--quantum-us, default 20), so
 * virtual time is never more than the quantum ahead of wall time (status: lag.lead_max_us); before
 * each slice it syncs with wall time: if ahead, it waits (ppoll on the ptys and the control socket,
 * timer slack 1 ns, servicing only what is ready) until wall time reaches virtual time, then records
 * the lag = wall time now - the wall time at which the current virtual time was due (>= 0) in a
 * histogram: one sample per slice, at every sync point. A run whose lag ever exceeded
 * --lag-bound-us is reported invalid (lag.exceeded: samples over it; lag.episodes: runs of
 * consecutive such samples, i.e. separate stalls). --spin-us US busy-waits the last US of each wait (--spin: all
 * of it). On this kind of host (a 2-vCPU VM) the lag is the host's wake-up latency: a sleeping
 * thread is woken ~15-25 us late, and with other work at the same priority, milliseconds late.
 * --realtime asks for SCHED_FIFO 10 (falling back to nice -10, then nothing), mlockall and
 * /dev/cpu_dma_latency 0 (idle CPUs poll rather than halt); --sched, --mlock, --dma-latency and
 * --cpu do one each. What was granted is in the status ("host"). Unpaced: as fast as possible, in
 * slices of 1 ms of virtual time.
 *
 * Determinism. In unpaced mode the simulation depends only on the images, the script and the seed:
 * the same --script gives byte-identical UART output at identical cycles (--trace records them).
 * Bytes typed into a pty in unpaced mode enter at whatever virtual time the bench reads them.
 *
 * Control channel (text commands, one per line; one JSON line per reply):
 *   status                                  virtual time, lag, nodes, UART counters, wires
 *   reset NODE [at SECONDS]                 reset a node now or at a virtual time
 *   fault NODE in|out drop|corrupt|delay RATE [DELAY_US]   per-byte probability (seeded PRNG)
 *   fault clear [NODE]
 *   cut LINE SECONDS                        LINE: profiler.uart executor.uart timecode event
 *   vcd on [FILE] | vcd off                 VCD trace of the wired ports
 *   stop
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_core.h>
#include <simavr/sim_cycle_timers.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_interrupts.h>
#include <simavr/sim_io.h>
#include <simavr/sim_irq.h>

#define F_CPU 16000000ull
#define NEVER UINT64_MAX

/* ATmega2560 data-space addresses */
#define REG_PCIFR 0x3B
#define REG_PCICR 0x68
#define REG_PCMSK2 0x6D
#define REG_UCSR0A 0xC0
#define REG_UCSR0B 0xC1
#define REG_UCSR0C 0xC2
#define REG_UBRR0L 0xC4
#define REG_UBRR0H 0xC5
#define PCINT2_VECTOR 11

enum { PROFILER = 0, EXECUTOR = 1, NNODES = 2 };
static const char *node_names[NNODES] = {"profiler", "executor"};

/* ---- small helpers ------------------------------------------------------------------------- */

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mmbench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void logmsg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mmbench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: the fault injector's PRNG (seeded, so faults are reproducible in unpaced mode) */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rng_unit(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* growable text buffer for JSON replies */
struct sbuf {
    char *p;
    size_t n, cap;
};
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->n;
        int k;
        va_start(ap, fmt);
        k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            die("out of memory");
    }
}

/* ---- nodes ------------------------------------------------------------------------------- */

struct in_byte {
    uint64_t at; /* virtual cycle the byte reached the bench (host write, or script time) */
    uint8_t b;
};

struct out_byte {
    uint64_t at; /* virtual cycle the stop bit ends: the byte is complete at the host */
    uint8_t b;
};

struct fault {
    double drop, corrupt, delay; /* probability per byte */
    uint64_t delay_cycles;
};

struct node {
    int id;
    const char *name;
    const char *elf;
    avr_t *avr;
    avr_uart_t *uart;
    avr_irq_t *uart_in;
    avr_int_vector_t pcint2; /* executor only (port K) */
    uint64_t sleep_cycles;
    uint64_t resets;
    /* pty */
    int master, slave;
    char pts[64];
    char link[512];
    /* host -> MCU */
    struct in_byte *inq;
    size_t inq_head, inq_n, inq_cap;
    size_t inq_limit;   /* bytes read from the pty at most waiting here */
    uint64_t rx_line_free_scaled; /* end of the last stop bit on the host line, in cycle*baud units */
    int rx_armed;
    uint64_t rx_armed_at;
    /* MCU -> host */
    struct out_byte *outq;
    size_t out_head, out_n, out_cap;
    uint64_t tx_line_free;
    /* counters */
    uint64_t in_read, in_delivered, in_ignored;
    uint64_t out_bytes, out_written, out_dropped;
    uint64_t f_dropped[2], f_corrupted[2], f_delayed[2], cut_dropped[2];
    struct fault fault[2]; /* [0] in (host -> MCU), [1] out (MCU -> host) */
    uint64_t uart_cut_until;
    uint64_t first_in_cycle, last_in_cycle;
};

static struct node nodes[NNODES];

/* ---- configuration and global state ------------------------------------------------------- */

static int paced = 1;
static uint64_t spin_ns; /* --spin-us: busy-wait this last part of each wait instead of sleeping (--spin: all) */
static uint64_t quantum_ns = 20000; /* --quantum-us: how far virtual time may run ahead of wall time */
/* host set-up for pacing (--realtime, --sched, --mlock, --dma-latency, --cpu), as done: see status "host" */
static char host_sched[32] = "other";
static int host_mlock, host_dma_fd = -1, host_dma_us = -1, host_cpu = -1;
static uint64_t baud = 9600;
static uint64_t until_cycles = NEVER;
static uint64_t lag_bound_ns = 1000000; /* 1 ms */
static size_t out_buffer = 1 << 20;
static char run_dir[400];
static char sock_path[512];
static FILE *trace;
static volatile sig_atomic_t stop_requested;
static uint64_t now_cycles; /* the global virtual time: every core has reached it */
static uint64_t wall_start_ns;

/* lag histogram: bins 0..999 are 1 us wide, 1000..1998 are 1 ms wide (1 ms .. 999 ms), 1999: more */
#define LAG_BINS 2000
static uint64_t lag_hist[LAG_BINS];
static uint64_t lag_samples, lag_exceeded, lag_max_ns;
static uint64_t lead_max_ns; /* how far virtual time was ever ahead of wall time (bounded by the quantum) */
static uint64_t early_wakeups; /* waits ended by a ready descriptor before the deadline */
static uint64_t lag_episodes; /* times the lag went over the bound (consecutive samples over it: one episode) */
static int lag_over;

/* ---- wires ------------------------------------------------------------------------------- */

enum { GROUP_TIMECODE = 0, GROUP_EVENT = 1, NGROUPS = 2 };
static const char *group_names[NGROUPS] = {"timecode", "event"};

struct wire {
    int src, dst;
    char src_port, dst_port;
    int src_bit, dst_bit;
    int group;
    int level;     /* level the destination sees */
    int src_level; /* level the source drives */
    avr_irq_t *dst_irq;
    const char *vcd_name;
};

#define NWIRES 12
static struct wire wires[NWIRES];
static uint64_t group_cut_until[NGROUPS];
static uint64_t wire_changes, wire_cut_dropped, wire_max_skew, wire_rewinds;

/* VCD of the wired ports (written here so both cores' changes carry their exact cycle) */
static FILE *vcd;
static char vcd_path[512];
static uint64_t vcd_last_t;

static uint64_t eff_clock(struct node *n);

/* ---- VCD --------------------------------------------------------------------------------- */

static void vcd_value(int w, int level, uint64_t cycle)
{
    uint64_t t = cycle * 625; /* timescale 100 ps: 62.5 ns per cycle */
    if (!vcd)
        return;
    if (t < vcd_last_t)
        t = vcd_last_t;
    if (t != vcd_last_t) {
        fprintf(vcd, "#%" PRIu64 "\n", t);
        vcd_last_t = t;
    }
    fprintf(vcd, "%d%c\n", level, (char)('!' + w));
}

static int vcd_open(const char *path, uint64_t cycle)
{
    int w;
    if (vcd)
        fclose(vcd);
    vcd = fopen(path, "w");
    if (!vcd)
        return -1;
    snprintf(vcd_path, sizeof vcd_path, "%s", path);
    fprintf(vcd, "$comment mmbench: wired ports of the virtual bench $end\n$timescale 100ps $end\n");
    fprintf(vcd, "$scope module bench $end\n");
    for (w = 0; w < NWIRES; w++)
        fprintf(vcd, "$var wire 1 %c %s $end\n", (char)('!' + w), wires[w].vcd_name);
    fprintf(vcd, "$upscope $end\n$enddefinitions $end\n");
    vcd_last_t = cycle * 625;
    fprintf(vcd, "#%" PRIu64 "\n$dumpvars\n", vcd_last_t);
    for (w = 0; w < NWIRES; w++)
        fprintf(vcd, "%d%c\n", wires[w].level, (char)('!' + w));
    fprintf(vcd, "$end\n");
    return 0;
}

static void vcd_close(void)
{
    if (vcd) {
        fclose(vcd);
        vcd = NULL;
    }
}

/* ---- pin delivery ------------------------------------------------------------------------ */

/* Bring a core that is not running (asleep, or halted) up to cycle `at` lazily. */
static void catch_up(struct node *n, uint64_t at)
{
    avr_t *a = n->avr;
    if (a->cycle < at) {
        if (a->state == cpu_Sleeping)
            n->sleep_cycles += at - a->cycle;
        a->cycle = at;
    }
}

static void apply_level(struct wire *w, int level, uint64_t at)
{
    struct node *d = &nodes[w->dst];
    avr_t *a = d->avr;
    uint64_t saved;
    int rewound = 0;

    if (w->level == level)
        return;
    w->level = level;
    catch_up(d, at);
    saved = a->cycle;
    if (saved > at) {
        if (saved - at > wire_max_skew)
            wire_max_skew = saved - at;
        a->cycle = at; /* apply the change as of the cycle it happened (input capture) */
        rewound = 1;
        wire_rewinds++;
    }
    avr_raise_irq(w->dst_irq, (uint32_t)level);
    if (w->dst == EXECUTOR && w->dst_port == 'K') {
        /* the missing PCINT2: PCIF2 is set on any change of a port K pin enabled in PCMSK2 */
        if (a->data[REG_PCMSK2] & (1u << w->dst_bit))
            avr_raise_interrupt(a, &d->pcint2);
    }
    if (rewound)
        a->cycle = saved;
    wire_changes++;
    vcd_value((int)(w - wires), level, at);
    if (trace)
        fprintf(trace, "W %" PRIu64 " %s %d\n", at, w->vcd_name, level);
}

static void on_src_pin(struct avr_irq_t *irq, uint32_t value, void *param)
{
    struct wire *w = param;
    struct node *s = &nodes[w->src];
    uint64_t at = s->avr->cycle;
    int level = value ? 1 : 0;
    (void)irq;

    w->src_level = level;
    if (w->level == level)
        return;
    if (at < group_cut_until[w->group]) {
        wire_cut_dropped++;
        return;
    }
    apply_level(w, level, at);
    /* end the source's instruction batch: the destination may have woken up or must react */
    s->avr->run_cycle_count = 0;
}

/* Re-applies the levels the sources drive (after a cut ends or a reset). */
static void resync_wires(int group, int dst, uint64_t at)
{
    int i;
    for (i = 0; i < NWIRES; i++) {
        struct wire *w = &wires[i];
        if ((group >= 0 && w->group != group) || (dst >= 0 && w->dst != dst))
            continue;
        if (at < group_cut_until[w->group])
            continue;
        apply_level(w, w->src_level, at);
    }
}

static void add_wire(int i, int src, char sp, int sb, int dst, char dp, int db, int group, const char *name)
{
    struct wire *w = &wires[i];
    w->src = src;
    w->dst = dst;
    w->src_port = sp;
    w->dst_port = dp;
    w->src_bit = sb;
    w->dst_bit = db;
    w->group = group;
    w->level = 0;
    w->src_level = 0;
    w->vcd_name = name;
    w->dst_irq = avr_io_getirq(nodes[dst].avr, AVR_IOCTL_IOPORT_GETIRQ(dp), db);
    avr_irq_register_notify(avr_io_getirq(nodes[src].avr, AVR_IOCTL_IOPORT_GETIRQ(sp), sb), on_src_pin, w);
    if (!w->dst_irq)
        die("no irq for port %c%d", dp, db);
}

/* ---- UART ------------------------------------------------------------------------------- */

/* Character time of the node's USART0 from its registers (simavr would count 11 bits for 8N1). */
static uint64_t uart_char_cycles(avr_t *a)
{
    uint32_t ubrr = (uint32_t)a->data[REG_UBRR0L] | ((uint32_t)(a->data[REG_UBRR0H] & 0x0F) << 8);
    uint8_t ucsra = a->data[REG_UCSR0A], ucsrb = a->data[REG_UCSR0B], ucsrc = a->data[REG_UCSR0C];
    static const int databits[8] = {5, 6, 7, 8, 8, 8, 8, 9};
    int db = databits[((ucsrc >> 1) & 3) | (ucsrb & 4)];
    int sb = 1 + ((ucsrc >> 3) & 1);
    int parity = (ucsrc >> 4) & 3 ? 1 : 0;
    uint64_t per_bit = (uint64_t)(ubrr + 1) * ((ucsra & 0x02) ? 8 : 16);
    return per_bit * (uint64_t)(1 + db + parity + sb);
}

static void fix_uart_timing(struct node *n)
{
    n->uart->cycles_per_byte = uart_char_cycles(n->avr);
}

static void out_push(struct node *n, uint64_t at, uint8_t b)
{
    if (n->out_n == n->out_cap) {
        n->out_dropped++;
        return;
    }
    n->outq[(n->out_head + n->out_n) % n->out_cap] = (struct out_byte){at, b};
    n->out_n++;
}

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    struct node *n = param;
    avr_t *a = n->avr;
    uint64_t chr, start, at;
    uint8_t b = (uint8_t)value;
    struct fault *f = &n->fault[1];
    (void)irq;

    fix_uart_timing(n); /* before simavr starts its transmit pump with its own char time */
    chr = n->uart->cycles_per_byte;
    start = a->cycle > n->tx_line_free ? a->cycle : n->tx_line_free;
    at = start + chr;
    n->tx_line_free = at;
    n->out_bytes++;
    if (at < n->uart_cut_until) {
        n->cut_dropped[1]++;
        return;
    }
    if (f->drop > 0 && rng_unit() < f->drop) {
        n->f_dropped[1]++;
        return;
    }
    if (f->corrupt > 0 && rng_unit() < f->corrupt) {
        b ^= (uint8_t)(1u << (int)(rng_unit() * 8));
        n->f_corrupted[1]++;
    }
    if (f->delay > 0 && rng_unit() < f->delay) {
        at += f->delay_cycles;
        n->f_delayed[1]++;
    }
    if (n->out_n) { /* keep the byte order: a delayed byte holds back the ones after it */
        struct out_byte *last = &n->outq[(n->out_head + n->out_n - 1) % n->out_cap];
        if (at < last->at)
            at = last->at;
    }
    out_push(n, at, b);
    if (trace)
        fprintf(trace, "O %" PRIu64 " %s %02x\n", at, n->name, b);
}

/* Writes the node's output that is complete by `now` to its pty, as far as the pty takes it. */
static void flush_out(struct node *n, uint64_t now)
{
    uint8_t buf[512];
    while (n->out_n) {
        size_t k = 0, i;
        ssize_t w;
        while (k < sizeof buf && k < n->out_n) {
            struct out_byte *o = &n->outq[(n->out_head + k) % n->out_cap];
            if (o->at > now)
                break;
            buf[k++] = o->b;
        }
        if (!k)
            return;
        w = write(n->master, buf, k);
        if (w <= 0)
            return; /* pty full (host not reading): keep the bytes, bounded by out_cap */
        for (i = 0; i < (size_t)w; i++) {
            n->out_head = (n->out_head + 1) % n->out_cap;
            n->out_n--;
        }
        n->out_written += (uint64_t)w;
        if ((size_t)w < k)
            return;
    }
}

static void inq_push(struct node *n, uint64_t at, uint8_t b)
{
    if (n->inq_n == n->inq_cap) {
        size_t i, cap = n->inq_cap ? n->inq_cap * 2 : 4096;
        struct in_byte *q = malloc(cap * sizeof *q);
        if (!q)
            die("out of memory");
        for (i = 0; i < n->inq_n; i++)
            q[i] = n->inq[(n->inq_head + i) % n->inq_cap];
        free(n->inq);
        n->inq = q;
        n->inq_head = 0;
        n->inq_cap = cap;
    }
    n->inq[(n->inq_head + n->inq_n) % n->inq_cap] = (struct in_byte){at, b};
    n->inq_n++;
}

static avr_cycle_count_t rx_deliver(avr_t *a, avr_cycle_count_t when, void *param);

/* Schedules the next host byte: its stop bit ends one character (10 bit times at --baud) after it
 * started, and it starts when it reached the bench or when the previous one ended. */
static void rx_arm(struct node *n)
{
    struct in_byte *ib;
    uint64_t start_scaled, end_scaled, end;
    avr_t *a = n->avr;

    if (n->rx_armed || !n->inq_n)
        return;
    ib = &n->inq[n->inq_head];
    start_scaled = ib->at * baud;
    if (start_scaled < n->rx_line_free_scaled)
        start_scaled = n->rx_line_free_scaled;
    end_scaled = start_scaled + 10 * F_CPU;
    if (n->fault[0].delay > 0 && rng_unit() < n->fault[0].delay) {
        end_scaled += n->fault[0].delay_cycles * baud;
        n->f_delayed[0]++;
    }
    n->rx_line_free_scaled = end_scaled;
    end = (end_scaled + baud - 1) / baud;
    if (end <= a->cycle)
        end = a->cycle + 1;
    n->rx_armed = 1;
    n->rx_armed_at = end;
    avr_cycle_timer_register(a, end - a->cycle, rx_deliver, n);
}

static avr_cycle_count_t rx_deliver(avr_t *a, avr_cycle_count_t when, void *param)
{
    struct node *n = param;
    avr_uart_t *u = n->uart;
    uint8_t b;
    struct fault *f = &n->fault[0];
    int deliver = 1;
    (void)when;

    n->rx_armed = 0;
    if (!n->inq_n)
        return 0;
    b = n->inq[n->inq_head].b;
    n->inq_head = (n->inq_head + 1) % n->inq_cap;
    n->inq_n--;
    if (a->cycle < n->uart_cut_until) {
        n->cut_dropped[0]++;
        deliver = 0;
    } else if (f->drop > 0 && rng_unit() < f->drop) {
        n->f_dropped[0]++;
        deliver = 0;
    } else if (f->corrupt > 0 && rng_unit() < f->corrupt) {
        b ^= (uint8_t)(1u << (int)(rng_unit() * 8));
        n->f_corrupted[0]++;
    }
    if (deliver) {
        if (!(a->data[REG_UCSR0B] & 0x10)) {
            n->in_ignored++; /* receiver off: the byte is lost, as on the chip */
        } else {
            fix_uart_timing(n);
            avr_raise_irq(n->uart_in, b);
            /* the stop bit has ended now: RXC at once (simavr would wait another character) */
            if (!avr_regbit_get(a, u->rxc.raised)) {
                u->rxc_raise_time = a->cycle;
                u->rx_cnt = 0;
            }
            avr_raise_interrupt(a, &u->rxc);
            n->in_delivered++;
            if (!n->first_in_cycle)
                n->first_in_cycle = a->cycle;
            n->last_in_cycle = a->cycle;
            if (trace)
                fprintf(trace, "I %" PRIu64 " %s %02x\n", (uint64_t)a->cycle, n->name, b);
        }
    }
    rx_arm(n);
    return 0;
}

static void read_pty(struct node *n, uint64_t now)
{
    uint8_t buf[512];
    while (n->inq_n < n->inq_limit) {
        size_t want = n->inq_limit - n->inq_n;
        ssize_t k, i;
        if (want > sizeof buf)
            want = sizeof buf;
        k = read(n->master, buf, want);
        if (k <= 0)
            break;
        for (i = 0; i < k; i++)
            inq_push(n, now, buf[i]);
        n->in_read += (uint64_t)k;
    }
    rx_arm(n);
}

/* ---- pseudo-terminals --------------------------------------------------------------------- */

static void open_pty(struct node *n)
{
    struct termios tio;
    char *name;
    n->master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (n->master < 0 || grantpt(n->master) || unlockpt(n->master))
        die("cannot open a pseudo-terminal: %s", strerror(errno));
    name = ptsname(n->master);
    if (!name)
        die("ptsname: %s", strerror(errno));
    snprintf(n->pts, sizeof n->pts, "%s", name);
    /* Keep one slave descriptor open: the pty then survives the host closing and reopening it, and
     * the line discipline is raw (no echo of MCU output back into the MCU, no CR/LF mapping). */
    n->slave = open(n->pts, O_RDWR | O_NOCTTY);
    if (n->slave < 0)
        die("cannot open %s: %s", n->pts, strerror(errno));
    if (tcgetattr(n->slave, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(n->slave, TCSANOW, &tio);
    }
    snprintf(n->link, sizeof n->link, "%s/%s.tty", run_dir, n->name);
    unlink(n->link);
    if (symlink(n->pts, n->link))
        die("cannot create %s: %s", n->link, strerror(errno));
}

/* ---- stepping ----------------------------------------------------------------------------- */

static uint64_t next_timer(avr_t *a)
{
    avr_cycle_timer_slot_p s = a->cycle_timers.timer;
    uint64_t t = NEVER;
    for (; s; s = s->next)
        if (s->when < t)
            t = s->when;
    return t;
}

/* The cycle at which a core next has something to do. */
static uint64_t eff_clock(struct node *n)
{
    avr_t *a = n->avr;
    if (a->state == cpu_Running)
        return a->cycle;
    if (a->state == cpu_Sleeping) {
        uint64_t t;
        if (avr_has_pending_interrupts(a))
            return a->cycle;
        t = next_timer(a);
        return t > a->cycle ? t : a->cycle;
    }
    return NEVER; /* done, crashed, stopped: only a reset brings it back */
}

static void step(struct node *n, uint64_t limit)
{
    avr_t *a = n->avr;
    if (a->state == cpu_Sleeping) {
        if (!avr_has_pending_interrupts(a)) {
            uint64_t t = next_timer(a);
            if (t != NEVER && t > a->cycle) {
                n->sleep_cycles += t - a->cycle;
                a->cycle = t;
            }
        }
        avr_cycle_timer_process(a);
        avr_service_interrupts(a);
        return;
    }
    if (a->state != cpu_Running)
        return;
    /* let simavr run several instructions in one call while they start before `limit` */
    a->run_cycle_count = limit > a->cycle ? limit - a->cycle : 0;
    {
        uint64_t t = next_timer(a);
        if (t != NEVER && t > a->cycle && t - a->cycle < a->run_cycle_count)
            a->run_cycle_count = t - a->cycle;
    }
    {
        avr_flashaddr_t new_pc = avr_run_one(a);
        avr_cycle_timer_process(a);
        a->pc = new_pc;
    }
    if (a->state == cpu_Sleeping) {
        if (!a->sreg[S_I]) {
            logmsg("%s: sleeping with interrupts off at cycle %" PRIu64 ": halted", n->name, (uint64_t)a->cycle);
            a->state = cpu_Done;
            return;
        }
        a->cycle += 1;
        n->sleep_cycles += 1;
    }
    if (a->state == cpu_Running || a->state == cpu_Sleeping)
        avr_service_interrupts(a);
    if (a->state == cpu_Crashed)
        logmsg("%s: crashed at cycle %" PRIu64 " pc=0x%x", n->name, (uint64_t)a->cycle, a->pc);
}

/* Runs both cores until each has reached `target` (its next action is at or after it). */
static void run_until(uint64_t target)
{
    struct node *p = &nodes[PROFILER], *e = &nodes[EXECUTOR];
    for (;;) {
        uint64_t cp = eff_clock(p), ce = eff_clock(e);
        if (cp >= target && ce >= target)
            break;
        if (cp <= ce)
            step(p, (ce < target ? ce : target) + 1); /* ties: the profiler first */
        else
            step(e, cp < target ? cp : target);
    }
    now_cycles = target;
    /* lazily sleeping or halted cores: bring their clocks up (nothing happens in between) */
    catch_up(p, target);
    catch_up(e, target);
}

/* ---- nodes: load, reset ------------------------------------------------------------------- */

static avr_uart_t *find_uart(avr_t *a, char name)
{
    avr_io_t *io;
    for (io = a->io_port; io; io = io->next)
        if (io->kind && !strcmp(io->kind, "uart") && ((avr_uart_t *)io)->name == name)
            return (avr_uart_t *)io;
    return NULL;
}

static void no_sleep(avr_t *a, avr_cycle_count_t howlong)
{
    (void)a;
    (void)howlong;
}

static void load_node(struct node *n)
{
    elf_firmware_t fw;
    uint32_t flags = 0;

    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(n->elf, &fw) != 0)
        die("cannot read %s image %s", n->name, n->elf);
    n->avr = avr_make_mcu_by_name("atmega2560");
    if (!n->avr)
        die("simavr has no atmega2560");
    avr_init(n->avr);
    n->avr->frequency = F_CPU;
    n->avr->sleep = no_sleep;
    n->avr->log = 1;
    /* 1: a cycle timer registered in the middle of a batch ends the batch (simavr re-clamps
     * run_cycle_count to run_cycle_limit then), so a batch never runs past the bound step() set */
    n->avr->run_cycle_limit = 1;
    avr_load_firmware(n->avr, &fw);
    n->avr->frequency = F_CPU; /* whatever the ELF says */
    avr_ioctl(n->avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_POLL_SLEEP | AVR_UART_FLAG_STDIO);
    avr_ioctl(n->avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    n->uart = find_uart(n->avr, '0');
    if (!n->uart)
        die("no USART0 in simavr's atmega2560");
    n->uart_in = avr_io_getirq(n->avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(n->avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_out, n);
    if (n->id == EXECUTOR) {
        n->pcint2.vector = PCINT2_VECTOR;
        n->pcint2.enable = (avr_regbit_t)AVR_IO_REGBIT(REG_PCICR, 2);
        n->pcint2.raised = (avr_regbit_t)AVR_IO_REGBIT(REG_PCIFR, 2);
        avr_register_vector(n->avr, &n->pcint2);
    }
    n->out_cap = out_buffer ? out_buffer : 1;
    n->outq = calloc(n->out_cap, sizeof *n->outq);
    if (!n->outq)
        die("out of memory");
    n->inq_limit = 65536;
}

static void reset_node(struct node *n, uint64_t at)
{
    avr_t *a = n->avr;
    int i;
    catch_up(n, at);
    at = a->cycle;
    avr_reset(a);
    a->cycle = at;
    a->run_cycle_limit = 1;
    n->resets++;
    n->rx_armed = 0; /* avr_reset dropped every cycle timer */
    rx_arm(n);
    /* The node's outputs are inputs again after reset: its lines fall to 0. */
    for (i = 0; i < NWIRES; i++)
        if (wires[i].src == n->id) {
            wires[i].src_level = 0;
            if (at >= group_cut_until[wires[i].group])
                apply_level(&wires[i], 0, at);
        }
    /* Its input pins see what the other node drives. */
    for (i = 0; i < NWIRES; i++)
        if (wires[i].dst == n->id) {
            int lv = wires[i].level;
            wires[i].level = !lv;
            apply_level(&wires[i], lv, at);
        }
    logmsg("%s reset at cycle %" PRIu64, n->name, at);
}

/* ---- script ------------------------------------------------------------------------------- */

/* Script lines: "<seconds> <node> <hex bytes...>"   e.g. "0.25 executor 03 22 02 ..."
 * The bytes reach the bench at that virtual time and are paced like host bytes. */
static void load_script(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    if (!f)
        die("cannot open script %s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end, name[32];
        double t;
        int k, id;
        uint64_t at;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || !*p)
            continue;
        if (sscanf(p, "%lf %31s %n", &t, name, &k) != 2)
            die("bad script line: %s", line);
        p += k;
        id = !strcmp(name, "profiler") ? PROFILER : !strcmp(name, "executor") ? EXECUTOR : -1;
        if (id < 0)
            die("bad node in script line: %s", line);
        at = (uint64_t)llround(t * (double)F_CPU);
        for (;;) {
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                break;
            p = end;
            inq_push(&nodes[id], at, (uint8_t)v);
        }
    }
    fclose(f);
}

/* ---- status ------------------------------------------------------------------------------- */

static double lag_percentile_us(double q)
{
    uint64_t want, acc = 0;
    int i;
    if (!lag_samples)
        return 0;
    want = (uint64_t)ceil(q * (double)lag_samples);
    if (want < 1)
        want = 1;
    for (i = 0; i < LAG_BINS; i++) {
        acc += lag_hist[i];
        if (acc >= want) {
            if (i < 1000)
                return i + 1; /* upper edge of the bin */
            if (i < 1999)
                return (double)(i - 998) * 1000.0;
            return (double)lag_max_ns / 1000.0;
        }
    }
    return (double)lag_max_ns / 1000.0;
}

static const char *state_name(int s)
{
    switch (s) {
    case cpu_Running: return "running";
    case cpu_Sleeping: return "sleeping";
    case cpu_Done: return "halted";
    case cpu_Crashed: return "crashed";
    default: return "stopped";
    }
}

static void status_json(struct sbuf *b)
{
    uint64_t wall = mono_ns() - wall_start_ns;
    int i;
    double vs = (double)now_cycles / (double)F_CPU;
    sb_printf(b, "{\"ok\":true,\"virtual_s\":%.9f,\"cycle\":%" PRIu64 ",\"paced\":%s,\"wall_s\":%.6f,"
                 "\"speed\":%.4f,",
              vs, now_cycles, paced ? "true" : "false", (double)wall / 1e9,
              wall ? vs / ((double)wall / 1e9) : 0.0);
    sb_printf(b, "\"lag\":{\"samples\":%" PRIu64 ",\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
                 "\"max_us\":%.1f,\"bound_us\":%.1f,\"exceeded\":%" PRIu64 ",\"episodes\":%" PRIu64 ",\"lead_max_us\":%.1f,"
                 "\"quantum_us\":%.1f,\"spin_us\":%.1f,\"early_wakeups\":%" PRIu64 ",\"histogram_us\":[",
              lag_samples, lag_percentile_us(0.5), lag_percentile_us(0.99), lag_percentile_us(0.999),
              (double)lag_max_ns / 1000.0, (double)lag_bound_ns / 1000.0, lag_exceeded, lag_episodes,
              (double)lead_max_ns / 1000.0, (double)quantum_ns / 1000.0, (double)spin_ns / 1000.0, early_wakeups);
    {
        int first = 1;
        for (i = 0; i < LAG_BINS; i++)
            if (lag_hist[i]) {
                uint64_t lo = i < 1000 ? (uint64_t)i : (uint64_t)(i - 999) * 1000;
                sb_printf(b, "%s[%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", lo, lag_hist[i]);
                first = 0;
            }
    }
    sb_printf(b, "]},\"host\":{\"sched\":\"%s\",\"mlock\":%s,\"dma_latency_us\":%d,\"cpu\":%d,"
                 "\"timer_slack_ns\":%d},",
              host_sched, host_mlock ? "true" : "false", host_dma_fd >= 0 ? host_dma_us : -1, host_cpu,
              prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    sb_printf(b, "\"valid\":%s,\"nodes\":{", (!paced || lag_exceeded == 0) ? "true" : "false");
    for (i = 0; i < NNODES; i++) {
        struct node *n = &nodes[i];
        uint64_t c = n->avr->cycle;
        sb_printf(b, "%s\"%s\":{\"cycle\":%" PRIu64 ",\"state\":\"%s\",\"asleep_share\":%.6f,\"resets\":%" PRIu64
                     ",\"tty\":\"%s\",\"pts\":\"%s\",\"uart\":{\"in\":%" PRIu64 ",\"in_queued\":%zu,\"in_read\":%" PRIu64
                     ",\"in_ignored\":%" PRIu64 ",\"out\":%" PRIu64 ",\"out_written\":%" PRIu64 ",\"out_buffered\":%zu,"
                     "\"out_dropped\":%" PRIu64 ",\"first_in_cycle\":%" PRIu64 ",\"last_in_cycle\":%" PRIu64
                     ",\"fault_dropped\":[%" PRIu64 ",%" PRIu64 "],\"fault_corrupted\":[%" PRIu64 ",%" PRIu64
                     "],\"fault_delayed\":[%" PRIu64 ",%" PRIu64 "],\"cut_dropped\":[%" PRIu64 ",%" PRIu64 "]}}",
                  i ? "," : "", n->name, c, state_name(n->avr->state),
                  c ? (double)n->sleep_cycles / (double)c : 0.0, n->resets, n->link, n->pts,
                  n->in_delivered, n->inq_n, n->in_read, n->in_ignored, n->out_bytes, n->out_written, n->out_n,
                  n->out_dropped, n->first_in_cycle, n->last_in_cycle, n->f_dropped[0], n->f_dropped[1],
                  n->f_corrupted[0], n->f_corrupted[1], n->f_delayed[0], n->f_delayed[1], n->cut_dropped[0],
                  n->cut_dropped[1]);
    }
    sb_printf(b, "},\"wires\":{\"changes\":%" PRIu64 ",\"cut_dropped\":%" PRIu64 ",\"rewinds\":%" PRIu64
                 ",\"max_rewind_cycles\":%" PRIu64 "},\"vcd\":",
              wire_changes, wire_cut_dropped, wire_rewinds, wire_max_skew);
    if (vcd)
        sb_printf(b, "\"%s\"", vcd_path);
    else
        sb_printf(b, "null");
    sb_printf(b, ",\"run_dir\":\"%s\"}\n", run_dir);
}

/* ---- control channel ---------------------------------------------------------------------- */

#define MAX_CLIENTS 8
struct client {
    int fd;
    char buf[1024];
    size_t n;
};
static struct client clients[MAX_CLIENTS];
static int listen_fd = -1;

/* pending timed actions (resets at a virtual time, ends of cuts) */
struct action {
    uint64_t at;
    int kind; /* 0 reset node, 1 cut end of a group */
    int arg;
};
#define MAX_ACTIONS 64
static struct action actions[MAX_ACTIONS];
static int n_actions;

static int add_action(uint64_t at, int kind, int arg)
{
    if (n_actions == MAX_ACTIONS)
        return -1;
    actions[n_actions++] = (struct action){at, kind, arg};
    return 0;
}

static uint64_t next_action(void)
{
    uint64_t t = NEVER;
    int i;
    for (i = 0; i < n_actions; i++)
        if (actions[i].at < t)
            t = actions[i].at;
    return t;
}

static void run_actions(uint64_t now)
{
    int i = 0;
    while (i < n_actions) {
        if (actions[i].at <= now) {
            struct action a = actions[i];
            actions[i] = actions[--n_actions];
            if (a.kind == 0)
                reset_node(&nodes[a.arg], now);
            else
                resync_wires(a.arg, -1, now);
            i = 0;
        } else {
            i++;
        }
    }
}

static int parse_node(const char *s)
{
    int i;
    for (i = 0; i < NNODES; i++)
        if (!strcmp(s, node_names[i]))
            return i;
    return -1;
}

static void reply(int fd, const char *text)
{
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (errno == EAGAIN) {
                struct pollfd p = {fd, POLLOUT, 0};
                poll(&p, 1, 100);
                continue;
            }
            return;
        }
        off += (size_t)w;
    }
}

static void replyf(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    reply(fd, buf);
}

static uint64_t secs_to_cycles(double s)
{
    return s <= 0 ? 0 : (uint64_t)llround(s * (double)F_CPU);
}

static void handle_command(int fd, char *line)
{
    char w[6][128];
    int nw;
    memset(w, 0, sizeof w);
    nw = sscanf(line, "%127s %127s %127s %127s %127s %127s", w[0], w[1], w[2], w[3], w[4], w[5]);
    if (nw <= 0)
        return;
    if (!strcmp(w[0], "status")) {
        struct sbuf b = {0};
        status_json(&b);
        reply(fd, b.p);
        free(b.p);
    } else if (!strcmp(w[0], "stop")) {
        stop_requested = 1;
        reply(fd, "{\"ok\":true}\n");
    } else if (!strcmp(w[0], "reset")) {
        int id = parse_node(w[1]);
        if (id < 0) {
            replyf(fd, "{\"ok\":false,\"error\":\"reset: unknown node '%s'\"}\n", w[1]);
        } else if (nw >= 4 && !strcmp(w[2], "at")) {
            uint64_t at = secs_to_cycles(atof(w[3]));
            if (at < now_cycles)
                at = now_cycles;
            if (add_action(at, 0, id))
                reply(fd, "{\"ok\":false,\"error\":\"too many pending actions\"}\n");
            else
                replyf(fd, "{\"ok\":true,\"at_cycle\":%" PRIu64 "}\n", at);
        } else {
            reset_node(&nodes[id], now_cycles);
            replyf(fd, "{\"ok\":true,\"at_cycle\":%" PRIu64 "}\n", now_cycles);
        }
    } else if (!strcmp(w[0], "fault")) {
        if (!strcmp(w[1], "clear")) {
            int i;
            for (i = 0; i < NNODES; i++)
                if (nw < 3 || parse_node(w[2]) == i)
                    memset(nodes[i].fault, 0, sizeof nodes[i].fault);
            reply(fd, "{\"ok\":true}\n");
            return;
        }
        {
            int id = parse_node(w[1]);
            int dir = !strcmp(w[2], "in") ? 0 : !strcmp(w[2], "out") ? 1 : -1;
            double rate = atof(w[4]);
            struct fault *f;
            if (id < 0 || dir < 0 || nw < 5 || rate < 0 || rate > 1) {
                reply(fd, "{\"ok\":false,\"error\":\"usage: fault NODE in|out drop|corrupt|delay RATE [DELAY_US]\"}\n");
                return;
            }
            f = &nodes[id].fault[dir];
            if (!strcmp(w[3], "drop"))
                f->drop = rate;
            else if (!strcmp(w[3], "corrupt"))
                f->corrupt = rate;
            else if (!strcmp(w[3], "delay")) {
                f->delay = rate;
                f->delay_cycles = secs_to_cycles((nw >= 6 ? atof(w[5]) : 1000.0) / 1e6);
            } else {
                replyf(fd, "{\"ok\":false,\"error\":\"fault: unknown kind '%s'\"}\n", w[3]);
                return;
            }
            replyf(fd, "{\"ok\":true,\"node\":\"%s\",\"dir\":\"%s\",\"kind\":\"%s\",\"rate\":%g}\n", w[1], w[2],
                   w[3], rate);
        }
    } else if (!strcmp(w[0], "cut")) {
        double s = atof(w[2]);
        uint64_t until = now_cycles + secs_to_cycles(s);
        int g, id = -1;
        if (nw < 3 || s <= 0) {
            reply(fd, "{\"ok\":false,\"error\":\"usage: cut LINE SECONDS (LINE: profiler.uart executor.uart timecode event)\"}\n");
            return;
        }
        for (g = 0; g < NGROUPS; g++)
            if (!strcmp(w[1], group_names[g]))
                break;
        if (g < NGROUPS) {
            group_cut_until[g] = until;
            add_action(until, 1, g);
        } else {
            if (!strcmp(w[1], "profiler.uart"))
                id = PROFILER;
            else if (!strcmp(w[1], "executor.uart"))
                id = EXECUTOR;
            if (id < 0) {
                replyf(fd, "{\"ok\":false,\"error\":\"cut: unknown line '%s'\"}\n", w[1]);
                return;
            }
            nodes[id].uart_cut_until = until;
        }
        replyf(fd, "{\"ok\":true,\"line\":\"%s\",\"until_cycle\":%" PRIu64 "}\n", w[1], until);
    } else if (!strcmp(w[0], "vcd")) {
        if (!strcmp(w[1], "on")) {
            char path[512];
            if (nw >= 3)
                snprintf(path, sizeof path, "%s", w[2]);
            else
                snprintf(path, sizeof path, "%s/wires.vcd", run_dir);
            if (vcd_open(path, now_cycles))
                replyf(fd, "{\"ok\":false,\"error\":\"cannot open %s\"}\n", path);
            else
                replyf(fd, "{\"ok\":true,\"vcd\":\"%s\"}\n", path);
        } else if (!strcmp(w[1], "off")) {
            vcd_close();
            replyf(fd, "{\"ok\":true,\"vcd\":\"%s\"}\n", vcd_path);
        } else {
            reply(fd, "{\"ok\":false,\"error\":\"usage: vcd on [FILE] | vcd off\"}\n");
        }
    } else {
        replyf(fd, "{\"ok\":false,\"error\":\"unknown command '%s'\"}\n", w[0]);
    }
}

static void open_control(void)
{
    struct sockaddr_un sa;
    snprintf(sock_path, sizeof sock_path, "%s/control.sock", run_dir);
    if (strlen(sock_path) >= sizeof sa.sun_path)
        die("run directory path too long for a Unix socket: %s", sock_path);
    unlink(sock_path);
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd < 0)
        die("socket: %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
    if (bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) || listen(listen_fd, 4))
        die("cannot listen on %s: %s", sock_path, strerror(errno));
}

static void service_control(void)
{
    int i;
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            break;
        for (i = 0; i < MAX_CLIENTS; i++)
            if (!clients[i].fd) {
                clients[i].fd = fd;
                clients[i].n = 0;
                break;
            }
        if (i == MAX_CLIENTS) {
            reply(fd, "{\"ok\":false,\"error\":\"too many control clients\"}\n");
            close(fd);
        }
    }
    for (i = 0; i < MAX_CLIENTS; i++) {
        struct client *c = &clients[i];
        ssize_t k;
        char *nl;
        if (!c->fd)
            continue;
        k = read(c->fd, c->buf + c->n, sizeof c->buf - 1 - c->n);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
            close(c->fd);
            c->fd = 0;
            continue;
        }
        if (k > 0)
            c->n += (size_t)k;
        c->buf[c->n] = 0;
        while ((nl = strchr(c->buf, '\n'))) {
            *nl = 0;
            handle_command(c->fd, c->buf);
            memmove(c->buf, nl + 1, c->n - (size_t)(nl + 1 - c->buf) + 1);
            c->n -= (size_t)(nl + 1 - c->buf);
        }
        if (c->n == sizeof c->buf - 1) {
            reply(c->fd, "{\"ok\":false,\"error\":\"line too long\"}\n");
            c->n = 0;
        }
    }
}

/* ---- main loop ---------------------------------------------------------------------------- */

static void service_io(void)
{
    int i;
    for (i = 0; i < NNODES; i++) {
        read_pty(&nodes[i], now_cycles);
        flush_out(&nodes[i], now_cycles);
    }
    service_control();
}

/* Services only what a wait found ready (paced mode: no syscalls for idle descriptors). */
static void service_ready(const struct pollfd *pfd, int n)
{
    int i, control = 0;
    for (i = 0; i < n; i++) {
        if (!pfd[i].revents)
            continue;
        if (i < NNODES)
            read_pty(&nodes[i], now_cycles);
        else
            control = 1;
    }
    if (control)
        service_control();
}

/* Paced mode: waits until the wall clock reaches the virtual time `cycle` stands for, or until a
 * descriptor (pty, control socket) is ready, which it then services. Sleeps in ppoll (timer slack
 * 1 ns, see main) up to `spin_ns` before the deadline and busy-waits the rest. Returns the wall
 * time (CLOCK_MONOTONIC ns) when it returned. */
static uint64_t wait_until(uint64_t cycle)
{
    struct pollfd pfd[2 + 1 + MAX_CLIENTS];
    int n = 0, i;
    uint64_t target_ns = wall_start_ns + cycle * 1000ull / (F_CPU / 1000000ull);
    uint64_t now = mono_ns();
    if (now >= target_ns)
        return now;
    for (i = 0; i < NNODES; i++)
        pfd[n++] = (struct pollfd){nodes[i].master, POLLIN, 0};
    pfd[n++] = (struct pollfd){listen_fd, POLLIN, 0};
    for (i = 0; i < MAX_CLIENTS; i++)
        if (clients[i].fd)
            pfd[n++] = (struct pollfd){clients[i].fd, POLLIN, 0};
    if (target_ns - now > spin_ns) {
        uint64_t sleep_ns = target_ns - now - spin_ns;
        struct timespec ts = {(time_t)(sleep_ns / 1000000000ull), (long)(sleep_ns % 1000000000ull)};
        if (ppoll(pfd, (nfds_t)n, &ts, NULL) > 0) {
            service_ready(pfd, n);
            now = mono_ns();
            if (now < target_ns) {
                early_wakeups++;
                return now;
            }
        }
    } else {
        /* spinning: still look at the descriptors once (zero timeout) */
        struct timespec zero = {0, 0};
        if (ppoll(pfd, (nfds_t)n, &zero, NULL) > 0)
            service_ready(pfd, n);
    }
    while ((now = mono_ns()) < target_ns)
        ;
    return now;
}

static void record_lag(uint64_t lag_ns)
{
    uint64_t us = lag_ns / 1000;
    int bin = us < 1000 ? (int)us : us < 1000000 ? 999 + (int)(us / 1000) : LAG_BINS - 1;
    if (bin >= LAG_BINS)
        bin = LAG_BINS - 1;
    lag_hist[bin]++;
    lag_samples++;
    if (lag_ns > lag_max_ns)
        lag_max_ns = lag_ns;
    if (lag_ns > lag_bound_ns) {
        lag_exceeded++;
        if (!lag_over)
            lag_episodes++;
        lag_over = 1;
    } else {
        lag_over = 0;
    }
}

static uint64_t wall_cycles_now(void)
{
    return (mono_ns() - wall_start_ns) * (F_CPU / 1000000ull) / 1000ull;
}

/* Paced mode only: what the host allows of what was asked, each with a fallback; logged and reported
 * in the status ("host"). sched: fifo (SCHED_FIFO priority 10; if not permitted: nice -10; else
 * nothing), nice (nice -10), other. The bench sleeps between slices, so a FIFO bench that keeps up
 * takes little CPU; if it cannot keep up, the kernel's RT throttling still leaves 5% to others. */
static void host_setup(const char *want_sched, int want_mlock)
{
    if (host_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(host_cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set)) {
            logmsg("--cpu %d: %s (ignored)", host_cpu, strerror(errno));
            host_cpu = -1;
        }
    }
    if (want_mlock) {
        if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
            host_mlock = 1;
        else
            logmsg("mlockall: %s (pages not locked)", strerror(errno));
    }
    if (host_dma_us >= 0) {
        /* PM QoS: while this descriptor is open, idle CPUs stay in idle states at most this slow
         * to leave (0: poll instead of halt), so a timer wakes the bench without a halt exit. */
        int32_t v = host_dma_us;
        host_dma_fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
        if (host_dma_fd >= 0 && write(host_dma_fd, &v, sizeof v) != (ssize_t)sizeof v) {
            close(host_dma_fd);
            host_dma_fd = -1;
        }
        if (host_dma_fd < 0)
            logmsg("/dev/cpu_dma_latency: %s (not held)", strerror(errno));
    }
    if (!strcmp(want_sched, "fifo") && spin_ns >= quantum_ns) {
        /* a FIFO thread that never sleeps gets throttled by the kernel (tens of ms per second) */
        logmsg("SCHED_FIFO with a full spin would be throttled: using nice -10");
        want_sched = "nice";
    }
    if (!strcmp(want_sched, "fifo")) {
        struct sched_param sp = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0) {
            snprintf(host_sched, sizeof host_sched, "fifo 10");
            return;
        }
        logmsg("SCHED_FIFO: %s (trying nice -10)", strerror(errno));
        want_sched = "nice";
    }
    if (!strcmp(want_sched, "nice")) {
        if (setpriority(PRIO_PROCESS, 0, -10) == 0)
            snprintf(host_sched, sizeof host_sched, "nice -10");
        else
            logmsg("nice -10: %s (normal priority)", strerror(errno));
    }
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mmbench --profiler ELF --executor ELF [--run-dir DIR] [--unpaced] [--until SECONDS]\n"
            "               [--baud B] [--out-buffer BYTES] [--lag-bound-us US] [--seed N] [--vcd FILE]\n"
            "               [--script FILE] [--trace FILE] [--spin | --spin-us US] [--quantum-us US]\n"
            "               [--realtime] [--sched fifo|nice|other] [--mlock] [--dma-latency US] [--cpu N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *vcd_arg = NULL, *script = NULL, *trace_path = NULL, *want_sched = "other";
    int want_mlock = 0;
    const uint64_t unpaced_slice = F_CPU / 1000;   /* 1 ms */
    const uint64_t paced_max_slice = F_CPU / 5000; /* 200 us */
    int i;
    char ready[600], tmp[700];
    FILE *f, *status_out;

    /* stdout carries the final status only: simavr's own messages go to stderr */
    status_out = fdopen(dup(1), "w");
    if (!status_out || dup2(2, 1) < 0)
        die("cannot set up stdout");

    nodes[PROFILER].id = PROFILER;
    nodes[EXECUTOR].id = EXECUTOR;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--unpaced")) {
            paced = 0;
            continue;
        }
        if (!strcmp(a, "--spin")) {
            spin_ns = NEVER;
            continue;
        }
        if (!strcmp(a, "--realtime")) {
            want_sched = "fifo";
            want_mlock = 1;
            host_dma_us = 0;
            continue;
        }
        if (!strcmp(a, "--mlock")) {
            want_mlock = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--profiler"))
            nodes[PROFILER].elf = v;
        else if (!strcmp(a, "--executor"))
            nodes[EXECUTOR].elf = v;
        else if (!strcmp(a, "--run-dir"))
            snprintf(run_dir, sizeof run_dir, "%s", v);
        else if (!strcmp(a, "--until"))
            until_cycles = secs_to_cycles(atof(v));
        else if (!strcmp(a, "--baud"))
            baud = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--out-buffer"))
            out_buffer = (size_t)strtoull(v, NULL, 0);
        else if (!strcmp(a, "--lag-bound-us"))
            lag_bound_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--seed"))
            rng_state = strtoull(v, NULL, 0) * 0x9E3779B97F4A7C15ull + 1;
        else if (!strcmp(a, "--vcd"))
            vcd_arg = v;
        else if (!strcmp(a, "--script"))
            script = v;
        else if (!strcmp(a, "--trace"))
            trace_path = v;
        else if (!strcmp(a, "--spin-us"))
            spin_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--quantum-us"))
            quantum_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--sched"))
            want_sched = v;
        else if (!strcmp(a, "--dma-latency"))
            host_dma_us = atoi(v);
        else if (!strcmp(a, "--cpu"))
            host_cpu = atoi(v);
        else
            usage();
    }
    if (!nodes[PROFILER].elf || !nodes[EXECUTOR].elf || !baud)
        usage();
    if (!run_dir[0]) {
        snprintf(run_dir, sizeof run_dir, "/tmp/mmbench.XXXXXX");
        if (!mkdtemp(run_dir))
            die("mkdtemp: %s", strerror(errno));
    } else if (mkdir(run_dir, 0755) && errno != EEXIST) {
        die("cannot create %s: %s", run_dir, strerror(errno));
    }
    if (trace_path) {
        trace = fopen(trace_path, "w");
        if (!trace)
            die("cannot open %s", trace_path);
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* ppoll wake-ups to the nanosecond (default slack: 50 us) */
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    signal(SIGPIPE, SIG_IGN);

    for (i = 0; i < NNODES; i++) {
        nodes[i].name = node_names[i];
        load_node(&nodes[i]);
    }
    /* wires: timecode (profiler PORTA -> executor PORTK), event (executor PC0..3 -> profiler) */
    {
        static char names[8][16];
        for (i = 0; i < 8; i++) {
            snprintf(names[i], sizeof names[i], "timecode%d", i);
            add_wire(i, PROFILER, 'A', i, EXECUTOR, 'K', i, GROUP_TIMECODE, names[i]);
        }
        add_wire(8, EXECUTOR, 'C', 0, PROFILER, 'C', 0, GROUP_EVENT, "event_id0");
        add_wire(9, EXECUTOR, 'C', 1, PROFILER, 'C', 1, GROUP_EVENT, "event_id1");
        add_wire(10, EXECUTOR, 'C', 2, PROFILER, 'C', 2, GROUP_EVENT, "event_id2");
        add_wire(11, EXECUTOR, 'C', 3, PROFILER, 'L', 1, GROUP_EVENT, "strobe");
        for (i = 0; i < NWIRES; i++)
            avr_raise_irq(wires[i].dst_irq, 0);
    }
    for (i = 0; i < NNODES; i++)
        open_pty(&nodes[i]);
    open_control();
    if (script)
        load_script(script);
    if (vcd_arg && vcd_open(vcd_arg, 0))
        die("cannot open %s", vcd_arg);

    snprintf(ready, sizeof ready, "%s/ready", run_dir);
    snprintf(tmp, sizeof tmp, "%s/ready.tmp", run_dir);
    f = fopen(tmp, "w");
    if (!f)
        die("cannot write %s", tmp);
    fprintf(f, "{\"pid\":%d,\"profiler\":\"%s\",\"executor\":\"%s\",\"control\":\"%s\",\"paced\":%s}\n", (int)getpid(),
            nodes[PROFILER].link, nodes[EXECUTOR].link, sock_path, paced ? "true" : "false");
    fclose(f);
    rename(tmp, ready);
    logmsg("ready: %s %s control %s (%s)", nodes[PROFILER].link, nodes[EXECUTOR].link, sock_path,
           paced ? "paced" : "unpaced");

    if (paced)
        host_setup(want_sched, want_mlock);
    wall_start_ns = mono_ns();
    for (i = 0; i < NNODES; i++)
        rx_arm(&nodes[i]);
    while (!stop_requested && now_cycles < until_cycles) {
        uint64_t target, act;
        if (paced) {
            /* A sync point: virtual time may be at most the quantum ahead of wall time. If it is
             * ahead, wait for the wall clock (or a descriptor); once wall time has reached virtual
             * time, record the lag = wall now - the wall time at which the current virtual time
             * was due (>= 0), then run the next slice up to wall time + quantum. One lag sample
             * per slice, taken every time the bench is about to run. */
            uint64_t virt_ns = now_cycles * 1000ull / (F_CPU / 1000000ull);
            uint64_t wall_ns = mono_ns() - wall_start_ns, lag_ns;
            if (virt_ns > wall_ns) {
                if (virt_ns - wall_ns > lead_max_ns)
                    lead_max_ns = virt_ns - wall_ns;
                wall_ns = wait_until(now_cycles) - wall_start_ns;
                if (wall_ns < virt_ns)
                    continue; /* woken early by a descriptor (serviced): wait on */
            }
            lag_ns = wall_ns - virt_ns;
            record_lag(lag_ns);
            target = (wall_ns + quantum_ns) * (F_CPU / 1000000ull) / 1000ull;
            if (target > now_cycles + paced_max_slice)
                target = now_cycles + paced_max_slice;
        } else {
            target = now_cycles + unpaced_slice;
        }
        if (target > until_cycles)
            target = until_cycles;
        act = next_action();
        if (act < target)
            target = act > now_cycles ? act : now_cycles;
        if (target > now_cycles)
            run_until(target);
        run_actions(now_cycles);
        if (paced && now_cycles > wall_cycles_now())
            for (i = 0; i < NNODES; i++)
                flush_out(&nodes[i], now_cycles); /* ahead: the wait services the descriptors */
        else
            service_io(); /* unpaced, or behind (no wait next): look at every descriptor now */
    }
    /* final flush of what the host can still take, then the final status */
    for (i = 0; i < NNODES; i++)
        flush_out(&nodes[i], now_cycles);
    {
        struct sbuf b = {0};
        status_json(&b);
        fputs(b.p, status_out);
        fflush(status_out);
        free(b.p);
    }
    logmsg("stopped at virtual %.6f s", (double)now_cycles / (double)F_CPU);
    vcd_close();
    if (trace)
        fclose(trace);
    unlink(sock_path);
    unlink(ready);
    for (i = 0; i < NNODES; i++)
        unlink(nodes[i].link);
    return 0;
}
