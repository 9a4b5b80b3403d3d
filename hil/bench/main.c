/*
 * mmbench: the virtual bench. The profiler and executor images as two nodes on one virtual clock
 * (ATmega2560s on simavr; the profiler may be the 87C51 on ucsim's core), wired pin by pin, each
 * node's serial port on a pseudo-terminal and on a Unix socket of its own (mmrig's links: linesock.c),
 * a control channel on a Unix socket.
 *
 *   mmbench --profiler ELF --executor ELF [--run-dir DIR] [--unpaced | --lockstep] [--until SECONDS]
 *           [--baud B] [--out-buffer BYTES] [--lag-bound-us US] [--seed N] [--vcd FILE]
 *           [--exec-trace FILE] [--script FILE] [--trace FILE] [--spin | --spin-us US] [--quantum-us US]
 *           [--realtime] [--sched fifo|nice|other] [--mlock] [--dma-latency US] [--cpu N]
 *           [--ppm-profiler N] [--ppm-executor N]   crystal offsets, -10000..10000 ppm (cosim.h)
 *           [--arduino [--bootloader HEX]]   both nodes as an Arduino Mega 2560: its stk500v2 bootloader,
 *                                             a reset each time the host opens a port (arduino.c)
 *           [--line-model ideal|ftdi[:latency=MS]|cdc-16u2]   the USB-serial adapter on both lines, in
 *                                             virtual time (uart_usb.h); default ideal: none
 *           [--unconnected timecode|event]... the group's wires left off: its inputs float (cosim.c)
 *           --seed N seeds both the byte faults and that noise
 *           [--parent-fd FD]   the read end of a pipe only the starting process holds: EOF (that process
 *                              gone, however it ended) ends the bench as SIGTERM does (parent.c)
 *           [--profiler-kind avr|8051]   the profiler's core; default: 8051 for an Intel HEX image
 *                                        (IMAGE.ihx, .hex: profiler-fw/build/mcs51/profiler.ihx), else avr.
 *                                        The 8051 runs on ucsim's core (node51.c), where this mmbench was
 *                                        built with build/ucsim (tools/ucsim.sh); two-node mode only, no
 *                                        --arduino, no --unconnected event
 *   mmbench --executor ELF | --profiler ELF  [--stimulus FILE] [--until-cycles N] [--itrace CYCLES]
 *           [--uart-timing bench|simavr] [--trace FILE] [--script FILE] [--run-dir DIR] [--baud B] ...
 *           one-node mode: one image alone, unpaced, the other node played from a stimulus
 *           file (stimulus.c has the formats)
 *
 * Run directory (created if missing, mode 0700): profiler.tty and executor.tty (symlinks to
 * /dev/pts/N), profiler.sock and executor.sock (the lines' sockets, 0600), control.sock (the control
 * channel), ready (written once everything is up: a JSON line with the paths). An existing --run-dir must be a directory owned by the current user and not
 * writable by group or others, else the bench refuses it. Without --run-dir the bench makes its own
 * (/tmp/mmbench.XXXXXX) and removes it when it ends, unless files it was asked to write there remain (a
 * VCD). The bench logs to stderr; on exit it prints its final status (JSON) on stdout.
 *
 * Exit status: 0 after stop, a signal, --until or its parent's end (--parent-fd); 1 in one-node mode if
 * the core crashed; 2 for a usage error or a set-up failure (one line on stderr: bad options, an image
 * that cannot be loaded, a refused run directory, no pty, no socket, a --parent-fd that is not open).
 *
 * The parts, one concept per file:
 *   cosim.c        the two nodes on one clock, the wires between them, stepping in cycle order; the
 *                  noise on unconnected inputs (--unconnected)
 *   node.h         a node as the bench uses it: stepping, pins, timers, its UART, reset, its status
 *   node_avr.c     the ATmega2560 node on simavr, and the simavr 1.6 quirks the bench corrects
 *   node51.c       the 8051 profiler node (ucsim's core, mcs51/): its clock, P1/P0/P2, its UART
 *   uart_line.c    the UART bridge's line model: each node's serial line, host bytes paced at the
 *                  adapter's rate, the output queue, injections (uart_bridge.h: the bridge's interface)
 *   uart_host.c    a line's host side: a pty, or a connection to its line socket; hang-up, re-plug
 *   uart_rate.c    the USB-serial adapter's rate: termios, the baud table, a rate mismatch
 *   uart_faults.c  byte faults on a line (the seeded PRNG), cuts
 *   uart_garbage.c garbage bursts: seeded random bytes onto a line
 *   uart_shadow.c  the line as it would be without injected delays: what a delay held back
 *   uart_script.c  --script: host bytes at given virtual times (a replay's record)
 *   linesock.c     a node's line on a Unix socket (SOCK_SEQPACKET): mmrig's own links, without the
 *                  pty's kernel hop; its packets
 *   hostin.c       paced: the host's bytes stamped on the host clock by a thread of their own, each put
 *                  on its line at its stamp's virtual moment (a stall of the simulation moves no input)
 *   control.c      the control socket's server: its clients, their lines, their replies
 *   commands.c     the control commands: the table (name -> handler) and the handlers of no other part
 *   status.c       the status JSON, each part's members in their order
 *   actions.c      timed actions: a reset at a later time, the ends of cuts, hang-ups, stuck wires
 *   faults.c       the fault commands: byte faults, garbage, pty hang-ups, stuck wires
 *   faulthold.c    the record of host bytes an injected delay held back (the `injected` reply)
 *   arduino.c      --arduino: the Mega's bootloader, the reset when the host opens a port
 *   pacing.c       virtual time on wall time, the lag record and stall intervals, the host's
 *                  real-time set-up
 *   lockstep.c     --lockstep: virtual time advances only as far as the host grants
 *   uparse.c       the control channel's numbers (a grant's cycle, byte counts), parsed strictly
 *   inject.c       floor calibration: bytes into a node's receiver on the profiler's tick edge
 *   stimulus.c     one-node mode: the missing node's outputs from a file, the node's own traced
 *   vcd.c, trace.c the VCD of the wired ports and the --trace text record
 *   safefile.c     the one way the bench creates a file: a new temporary file beside it, renamed over
 *                  it when complete (a link planted under the name is replaced, never written through)
 *   exectrace.c    the executor trace: task switches, interrupts, sleep, pins, seen from outside
 *   bench.c        what every part shares: the clock, node names, logging, the JSON text buffer
 *   parent.c       --parent-fd: the bench ends when the process that started it is gone
 *   main.c         options, set-up (the hooks between the parts) and the main loop (this file)
 * No part calls back into a part that uses it: where a lower part must reach a higher one (a node's
 * reset to the UART bridge, the bridge to the stamping thread, to a lockstep grant, to an injection,
 * the control server to the record of the commands), it calls a hook main.c set up or a function it was
 * handed; what a lower part reports about a higher one (the bytes still queued in the `injected` reply,
 * the wires a VCD or an executor trace starts with) its caller passes in.
 *
 * Determinism. In unpaced mode the simulation depends only on the images, the script and the seed:
 * the same --script gives byte-identical UART output at identical cycles (--trace records them).
 * Bytes typed into a pty in unpaced mode enter at whatever virtual time the bench reads them; in
 * lockstep mode at the grant that announces them, so a run with the same grants and host bytes is
 * byte-identical too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions.h"
#include "arduino.h"
#include "bench.h"
#include "commands.h"
#include "control.h"
#include "cosim.h"
#include "exectrace.h"
#include "hostin.h"
#include "inject.h"
#include "lockstep.h"
#include "node51.h"
#include "node_avr.h"
#include "pacing.h"
#include "parent.h"
#include "safefile.h"
#include "status.h"
#include "stimulus.h"
#include "trace.h"
#include "uart_bridge.h"
#include "vcd.h"

/* ---- the main loop's I/O ------------------------------------------------------------------ */

/* The host's bytes so far into the nodes' input queues: paced, those the stamping thread read, each at
 * its stamp's moment (hostin.c); unpaced, read now and entering now. (A port opened: both reset its node
 * (arduino_service) before the host's bytes enter; there is always a node, so it always runs.) */
static void take_input(void)
{
    int i;
    for (i = 0; i < NNODES; i++)
        if (cosim_present(i)) {
            if (hostin_running())
                hostin_take(i, cosim_now());
            else
                uart_read_host(i, cosim_now());
        }
}

static void service_io(void)
{
    int i;
    for (i = 0; i < NNODES; i++)
        if (cosim_present(i))
            uart_accept(i, cosim_now()); /* a connection to a line socket takes the line before its bytes */
    take_input();
    for (i = 0; i < NNODES; i++)
        if (cosim_present(i))
            uart_flush_out(i, cosim_now());
    control_service();
}

/* Paced: writes the output whose wall moment has come (complete by virtual time and by the wall
 * clock). Returns the wall clock, in cycles, it went by. */
static uint64_t flush_by_wall(void)
{
    uint64_t w = pacing_wall_cycles_now(), by = cosim_now() < w ? cosim_now() : w;
    int i;
    for (i = 0; i < NNODES; i++)
        if (cosim_present(i))
            uart_flush_out(i, by);
    return w;
}

/* Paced: the earliest byte complete in virtual time (by `now`) whose wall moment had not come at
 * `wall` (NEVER: none). A byte whose moment had come and is still unwritten waits for its host to
 * read the pty: it is not waited for. */
static uint64_t next_held_out(uint64_t wall, uint64_t now)
{
    uint64_t t = NEVER;
    int i;
    for (i = 0; i < NNODES; i++) {
        uint64_t at = cosim_present(i) ? uart_next_out(i) : NEVER;
        if (at > wall && at <= now && at < t)
            t = at;
    }
    return t;
}

/* The index of the first line socket in io_pollfds' list (after the host sides and the inotify fd) */
#define POLL_LISTEN (NNODES + 1)

/* Services only what a wait found ready (paced mode: no syscalls for idle descriptors). */
static void service_ready(const struct pollfd *pfd, int n)
{
    int i, control = 0;
    if (pfd[NNODES].revents) /* (only the inotify fd may be ready: no uart_read_host then) */
        arduino_service(cosim_now()); /* before the ptys: the host's bytes after its open */
    for (i = POLL_LISTEN; i < POLL_LISTEN + NNODES; i++)
        if (pfd[i].revents) /* before the host sides: a connection takes the line before its bytes are read */
            uart_accept(i - POLL_LISTEN, cosim_now());
    for (i = 0; i < n; i++) {
        if (!pfd[i].revents || (i >= NNODES && i < POLL_LISTEN + NNODES))
            continue;
        if (i < NNODES)
            uart_read_host(i, cosim_now()); /* fd -1 (no node) never has revents */
        else
            control = 1;
    }
    if (control)
        control_service();
}

/* the host sides first (index = node id, see service_ready; fd -1 where the stamping thread reads them),
 * the opens of the ptys' slave sides (--arduino; else fd -1), the line sockets (POLL_LISTEN + node id),
 * then the control channel */
static int io_pollfds(struct pollfd *pfd)
{
    int i, n = 0;
    for (i = 0; i < NNODES; i++)
        pfd[n++] = (struct pollfd){cosim_present(i) && !hostin_running() ? uart_host_fd(i) : -1, POLLIN, 0};
    pfd[n++] = (struct pollfd){arduino_fd(), POLLIN, 0};
    for (i = 0; i < NNODES; i++)
        pfd[n++] = (struct pollfd){cosim_present(i) ? uart_listen_fd(i) : -1, POLLIN, 0};
    return n + control_pollfds(pfd + n);
}

/* Which signal ended the bench and who sent it, said in bench.log at the end: a bench that stops while its
 * run still wants it (its ports vanishing under the host) names the process that stopped it. Written once,
 * by the first signal; sig_atomic_t because the handler writes them and the main thread reads them after. */
static volatile sig_atomic_t stop_signal, stop_sender;

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    if (!stop_signal) {
        stop_sender = info ? (sig_atomic_t)info->si_pid : 0;
        stop_signal = sig;
    }
    bench_stop = 1;
}

static void on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mmbench --profiler ELF --executor ELF [--run-dir DIR] [--unpaced | --lockstep] [--until SECONDS]\n"
            "               [--baud B] [--out-buffer BYTES] [--lag-bound-us US] [--seed N] [--vcd FILE]\n"
            "               [--exec-trace FILE] [--script FILE] [--trace FILE] [--spin | --spin-us US] [--quantum-us US]\n"
            "               [--realtime] [--sched fifo|nice|other] [--mlock] [--dma-latency US] [--cpu N]\n"
            "               [--ppm-profiler N] [--ppm-executor N]   (crystal offsets, -%d..%d ppm)\n"
            "               [--arduino [--bootloader HEX]] [--unconnected timecode|event]...\n"
            "               [--line-model ideal|ftdi[:latency=MS]|cdc-16u2]   (the USB-serial adapter on both lines)\n"
            "               [--profiler-kind avr|8051]   (default: 8051 for a .ihx/.hex profiler image)\n"
            "               [--parent-fd FD]   (end when the pipe FD reads EOF: the starting process is gone)\n"
            "       mmbench --executor ELF | --profiler ELF [--stimulus FILE] [--until-cycles N] [--itrace CYCLES]\n"
            "               [--uart-timing bench|simavr] [--trace FILE] [--script FILE] [--run-dir DIR] [--baud B]   (one node alone, unpaced)\n",
            PPM_MAX, PPM_MAX);
    exit(2);
}

/* ---- options ------------------------------------------------------------------------------ */

struct options {
    const char *elf[NNODES];
    const char *vcd, *exec_trace, *script, *trace, *sched, *stimulus;
    char run_dir[400];
    int mlock;
    uint64_t until_cycles, itrace_cycles;
    int alone; /* one-node mode: the node that runs, or -1 */
    int ppm_set; /* a --ppm-* option was given */
    const char *profiler_kind; /* --profiler-kind, or NULL: from the image's name */
    int p51; /* the profiler is the 8051 (node51.c) */
    int parent_fd; /* --parent-fd, or -1 */
    int own_dir; /* the run directory is our mkdtemp's: removed at the end */
};

/* --ppm-profiler / --ppm-executor: an integer -PPM_MAX..PPM_MAX */
static void parse_ppm(struct options *o, int id, const char *opt, const char *v)
{
    char *end;
    long ppm = strtol(v, &end, 10);
    if (end == v || *end || ppm < -PPM_MAX || ppm > PPM_MAX)
        die("%s: '%s' is not an integer from %d to %d", opt, v, -PPM_MAX, PPM_MAX);
    cosim_set_ppm(id, (int)ppm);
    o->ppm_set = 1;
}

/* --unconnected GROUP: a group name of cosim.c (timecode, event) */
static void parse_unconnected(const char *opt, const char *v)
{
    int g;
    for (g = 0; g < NGROUPS; g++)
        if (!strcmp(v, group_names[g])) {
            cosim_leave_unconnected(g);
            return;
        }
    die("%s: '%s' is not a line group (timecode or event)", opt, v);
}

static void parse_options(int argc, char **argv, struct options *o)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--unpaced")) {
            pacing.paced = 0;
            continue;
        }
        if (!strcmp(a, "--lockstep")) {
            pacing.paced = 0;
            lockstep.on = 1;
            continue;
        }
        if (!strcmp(a, "--spin")) {
            pacing.spin_ns = NEVER;
            continue;
        }
        if (!strcmp(a, "--realtime")) {
            o->sched = "fifo";
            o->mlock = 1;
            pacing.host_dma_us = 0;
            continue;
        }
        if (!strcmp(a, "--mlock")) {
            o->mlock = 1;
            continue;
        }
        if (!strcmp(a, "--arduino")) {
            arduino.on = 1;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--profiler"))
            o->elf[PROFILER] = v;
        else if (!strcmp(a, "--executor"))
            o->elf[EXECUTOR] = v;
        else if (!strcmp(a, "--run-dir"))
            snprintf(o->run_dir, sizeof o->run_dir, "%s", v);
        else if (!strcmp(a, "--until"))
            o->until_cycles = secs_to_cycles(atof(v));
        else if (!strcmp(a, "--until-cycles"))
            o->until_cycles = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--stimulus"))
            o->stimulus = v;
        else if (!strcmp(a, "--itrace"))
            o->itrace_cycles = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--uart-timing") && (!strcmp(v, "simavr") || !strcmp(v, "bench")))
            uart_set_simavr_timing(!strcmp(v, "simavr"));
        else if (!strcmp(a, "--baud"))
            uart_set_baud(strtoull(v, NULL, 0));
        else if (!strcmp(a, "--out-buffer"))
            uart_set_out_buffer((size_t)strtoull(v, NULL, 0));
        else if (!strcmp(a, "--lag-bound-us"))
            pacing.lag_bound_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--seed")) {
            uart_seed(strtoull(v, NULL, 0));
            cosim_seed_noise(strtoull(v, NULL, 0));
        } else if (!strcmp(a, "--bootloader")) {
            arduino.bootloader = v;
        } else if (!strcmp(a, "--line-model")) {
            char err[160];
            if (uart_set_line_model(v, err, sizeof err))
                die("--line-model: %s", err);
        } else if (!strcmp(a, "--unconnected"))
            parse_unconnected(a, v);
        else if (!strcmp(a, "--vcd"))
            o->vcd = v;
        else if (!strcmp(a, "--exec-trace"))
            o->exec_trace = v;
        else if (!strcmp(a, "--script"))
            o->script = v;
        else if (!strcmp(a, "--trace"))
            o->trace = v;
        else if (!strcmp(a, "--spin-us"))
            pacing.spin_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--quantum-us"))
            pacing.quantum_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--sched"))
            o->sched = v;
        else if (!strcmp(a, "--dma-latency"))
            pacing.host_dma_us = atoi(v);
        else if (!strcmp(a, "--cpu"))
            pacing.host_cpu = atoi(v);
        else if (!strcmp(a, "--parent-fd"))
            o->parent_fd = parent_fd_option(a, v);
        else if (!strcmp(a, "--ppm-profiler"))
            parse_ppm(o, PROFILER, a, v);
        else if (!strcmp(a, "--ppm-executor"))
            parse_ppm(o, EXECUTOR, a, v);
        else if (!strcmp(a, "--profiler-kind")) {
            if (strcmp(v, "avr") && strcmp(v, "8051"))
                die("--profiler-kind: '%s' is not avr or 8051", v);
            o->profiler_kind = v;
        } else
            usage();
    }
    if (arduino.bootloader && !arduino.on)
        die("--bootloader is for --arduino");
    if (!arduino.bootloader)
        arduino.bootloader = ARDUINO_BOOTLOADER;
    if (o->profiler_kind && !o->elf[PROFILER])
        die("--profiler-kind without --profiler");
    if (o->elf[PROFILER] && (o->profiler_kind ? !strcmp(o->profiler_kind, "8051") : node51_is_image(o->elf[PROFILER]))) {
        if (!node51_built())
            die("%s: an 8051 profiler image, but this mmbench was built without the 8051 core (build/ucsim is "
                "missing: bash tools/ucsim.sh, then make -C hil/bench)", o->elf[PROFILER]);
        if (!o->elf[EXECUTOR])
            die("the 8051 profiler runs on the bench with an executor (alone: hil/bench/build/mcs51/run51)");
        if (arduino.on)
            die("--arduino is for the AVR profiler (the 8051 has no bootloader)");
        if (cosim_unconnected(GROUP_EVENT))
            die("--unconnected event is for the AVR profiler (the 8051's P0 noise is not modelled)");
        o->p51 = 1;
    }
    o->alone = !o->elf[PROFILER] ? EXECUTOR : !o->elf[EXECUTOR] ? PROFILER : -1;
    if ((!o->elf[PROFILER] && !o->elf[EXECUTOR]) || !uart_default_baud())
        usage();
    if (o->alone >= 0) {
        if (lockstep.on || o->vcd || o->exec_trace)
            die("one-node mode (one image) runs unpaced, without --lockstep, --vcd or --exec-trace");
        if (o->ppm_set) /* a stimulus file is in the node's own cycles: there is no other clock to drift from */
            die("--ppm-profiler and --ppm-executor are for two-node mode (both images)");
        pacing.paced = 0;
        if (arduino.on || cosim_unconnected(GROUP_TIMECODE) || cosim_unconnected(GROUP_EVENT))
            die("--arduino and --unconnected are for two-node mode (both images)");
    } else if (o->stimulus || o->itrace_cycles || uart_simavr_timing()) {
        die("--stimulus, --itrace and --uart-timing are for one-node mode (one image)");
    }
}

/* An explicit --run-dir holds the control socket (anyone who can reach it drives the bench) and the
 * links the host opens: a new one is made 0700, and an existing one is taken only if it is a real
 * directory of ours that nobody else can write to (a planted control.sock or NODE.tty link there
 * would otherwise be followed or replaced under us). Refused: one line on stderr, exit 2. mmhil's Bench
 * checks a folder it is given first, by these rules in these words (mmanalysis.safefiles.check_private_dir),
 * before it writes bench.log and final_status.json there: keep the two alike. */
static void check_run_dir(const char *dir)
{
    struct stat st;
    if (!mkdir(dir, 0700))
        return;
    if (errno != EEXIST)
        die("cannot create run directory %s: %s", dir, strerror(errno));
    if (lstat(dir, &st))
        die("cannot stat run directory %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        die("run directory %s is not a directory (a symlink or a file): refused", dir);
    if (st.st_uid != getuid())
        die("run directory %s is owned by uid %u, not by this user (uid %u): refused", dir, (unsigned)st.st_uid,
            (unsigned)getuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        die("run directory %s is writable by group or others (mode %04o): refused", dir, (unsigned)(st.st_mode & 07777));
}

/* ready: the host waits for it and reads it whole, so it is made as every file of the bench is
 * (safefile.c: a new temporary file renamed over it, never a fixed ready.tmp a link could be planted under) */
static void write_ready(const char *run_dir)
{
    char ready[600];
    FILE *f;
    struct sbuf b = {0};
    snprintf(ready, sizeof ready, "%s/ready", run_dir);
    f = sf_open(ready, 0600);
    if (!f)
        die("cannot write %s: %s", ready, sf_strerror(errno));
    sb_printf(&b, "{\"pid\":%d,\"profiler\":", (int)getpid());
    sb_json_str(&b, uart_link(PROFILER));
    sb_printf(&b, ",\"executor\":");
    sb_json_str(&b, uart_link(EXECUTOR));
    sb_printf(&b, ",\"profiler_socket\":");
    sb_json_str(&b, uart_socket_path(PROFILER));
    sb_printf(&b, ",\"executor_socket\":");
    sb_json_str(&b, uart_socket_path(EXECUTOR));
    sb_printf(&b, ",\"control\":");
    sb_json_str(&b, control_sock_path());
    sb_printf(&b, ",\"paced\":%s,\"arduino\":%s,\"profiler_kind\":\"%s\",\"line_model\":\"%s\"}\n",
              pacing.paced ? "true" : "false", arduino.on ? "true" : "false",
              cosim_present(PROFILER) ? cosim_node(PROFILER)->kind : "avr", uart_line_model());
    fputs(b.p, f);
    free(b.p);
    if (sf_commit(f))
        die("cannot write %s: %s", ready, sf_strerror(errno));
}

/* ---- main loop ---------------------------------------------------------------------------- */

/* Lockstep, no grant outstanding: block until the control channel has something (no CPU spent). The
 * host sides are not read: host input is taken at grant points only (a connection to a line socket is
 * taken here, so its host gets its welcome). */
static void wait_for_grant(void)
{
    struct pollfd pfd[1 + NNODES + CONTROL_POLLFDS];
    int n, i;
    pfd[0] = (struct pollfd){arduino_fd(), POLLIN, 0}; /* --arduino: a port opened meanwhile resets now */
    for (i = 0; i < NNODES; i++) /* a connection to a line socket: its welcome now (the host waits for it) */
        pfd[1 + i] = (struct pollfd){cosim_present(i) ? uart_listen_fd(i) : -1, POLLIN, 0};
    n = 1 + NNODES + control_pollfds(pfd + 1 + NNODES);
    if (poll(pfd, (nfds_t)n, -1) > 0) {
        if (pfd[0].revents)
            arduino_service(cosim_now());
        for (i = 0; i < NNODES; i++)
            if (pfd[1 + i].revents)
                uart_accept(i, cosim_now());
        control_service();
    }
}

static void run(uint64_t until_cycles)
{
    const uint64_t unpaced_slice = F_CPU / 1000;   /* 1 ms */
    const uint64_t paced_max_slice = F_CPU / 5000; /* 200 us */
    int i;
    while (!bench_stop && cosim_now() < until_cycles) {
        uint64_t target, act, now = cosim_now();
        pacing_rt_limit_check();
        if (lockstep.on) {
            if (!lockstep.active) {
                wait_for_grant();
                continue;
            }
            target = now + unpaced_slice;
            if (target > lockstep.stop_at)
                target = lockstep.stop_at;
        } else if (pacing.paced) {
            /* A sync point: virtual time may be at most the quantum ahead of wall time. If it is
             * ahead, wait for the wall clock (or a descriptor); once wall time has reached virtual
             * time, record the lag = wall now - the wall time at which the current virtual time
             * was due (>= 0), then run the next slice up to wall time + quantum. One lag sample
             * per slice, taken every time the bench is about to run. */
            uint64_t virt_ns = now * 1000ull / (F_CPU / 1000000ull);
            uint64_t wall_ns, lag_ns, held;
            /* Output first, no earlier than wall time: the bytes whose wall moment has come go to
             * the ptys; a byte complete in virtual time whose moment comes before the sync point
             * (at most the quantum away) is held and handed over at that moment, by a spin (a
             * sleep wakes 15-25 us late here); then the sync as below. Before, a byte went out as
             * soon as virtual time passed its stop bit, up to the quantum (20 us) before its wall
             * moment, which pulled the host's tick-start estimates early by ~8 us (docs/bench.md). */
            held = next_held_out(flush_by_wall(), now);
            if (held != NEVER) {
                pacing.out_waits++;
                pacing_spin_until(held);
                continue; /* the loop flushes it now, and looks for the next one */
            }
            wall_ns = mono_ns() - pacing.wall_start_ns;
            if (virt_ns > wall_ns) {
                struct pollfd pfd[POLL_LISTEN + NNODES + CONTROL_POLLFDS];
                if (virt_ns - wall_ns > pacing.lead_max_ns)
                    pacing.lead_max_ns = virt_ns - wall_ns;
                wall_ns = pacing_wait_until(now, pfd, io_pollfds(pfd), service_ready) - pacing.wall_start_ns;
                if (wall_ns < virt_ns)
                    continue; /* woken early by a descriptor (serviced): wait on */
            }
            lag_ns = wall_ns - virt_ns;
            pacing_record_lag(lag_ns, now);
            target = (wall_ns + pacing.quantum_ns) * (F_CPU / 1000000ull) / 1000ull;
            if (target > now + paced_max_slice)
                target = now + paced_max_slice;
        } else {
            target = now + unpaced_slice;
        }
        if (target > until_cycles)
            target = until_cycles;
        if (hostin_running())
            take_input(); /* what the host wrote so far, before the slice that may reach its moments */
        act = actions_next();
        if (act < target)
            target = act > now ? act : now;
        if (target > now)
            cosim_run_until(target);
        actions_run(cosim_now());
        if (lockstep.on) {
            /* output as it falls due; host input only at grant points (lockstep.c) */
            for (i = 0; i < NNODES; i++)
                uart_flush_out(i, cosim_now());
            if (!lockstep_reached(cosim_now()))
                control_service(); /* (a port opened meanwhile resets its node at a grant point only) */
        } else if (pacing.paced && cosim_now() > pacing_wall_cycles_now()) {
            /* ahead: the sync point next writes the output by wall time and services the descriptors */
        } else {
            service_io(); /* unpaced, or behind (no wait next): look at every descriptor now */
        }
    }
}

int main(int argc, char **argv)
{
    struct options o = {.sched = "other", .until_cycles = NEVER, .parent_fd = -1};
    int i;
    FILE *status_out;

    /* stdout carries the final status only: simavr's own messages go to stderr */
    status_out = fdopen(dup(1), "w");
    if (!status_out || dup2(2, 1) < 0)
        die("cannot set up stdout");

    parse_options(argc, argv, &o);
    if (!o.run_dir[0]) {
        snprintf(o.run_dir, sizeof o.run_dir, "/tmp/mmbench.XXXXXX");
        if (!mkdtemp(o.run_dir))
            die("mkdtemp: %s", strerror(errno));
        o.own_dir = 1;
    } else {
        check_run_dir(o.run_dir);
    }
    snprintf(bench_run_dir, sizeof bench_run_dir, "%s", o.run_dir);
    if (o.trace)
        trace_open(o.trace);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* ppoll wake-ups to the nanosecond (default slack: 50 us) */
    on_signals();
    if (o.parent_fd >= 0) /* before the images load: a parent gone meanwhile ends the bench once it is up */
        parent_watch_start(o.parent_fd);

    for (i = 0; i < NNODES; i++)
        if (o.elf[i]) {
            cosim_add_node(i == PROFILER && o.p51 ? node51_load(o.elf[i]) : node_avr_load(i, o.elf[i], o.alone >= 0));
            if (arduino.on)
                arduino_load_bootloader(i);
            uart_attach(i);
        }
    cosim_on_reset(uart_reset); /* a watchdog or external reset (cosim.c) resets the node's UART side too */
    /* the stamping thread reads the host sides (it takes the lock once it runs) */
    uart_set_pty_lock(hostin_lock, hostin_unlock);
    if (lockstep.on)
        uart_on_out_byte(lockstep_on_byte_out); /* a frame grant stops at the delimiter's stop bit */
    if (o.alone < 0)
        cosim_wire_up();
    if (o.elf[PROFILER])
        inject_attach();
    for (i = 0; i < NNODES; i++)
        if (o.elf[i]) {
            uart_open_pty(i, o.run_dir);
            uart_open_socket(i);
        }
    control_open(o.run_dir, commands, commands_log);
    if (o.script)
        uart_load_script(o.script);
    if (o.alone >= 0) {
        if (o.stimulus)
            stimulus_load(o.alone, o.stimulus);
        stimulus_start(o.alone, o.itrace_cycles);
    }
    if (o.vcd && vcd_open(o.vcd, 0, cosim_wires()))
        die("cannot open %s: %s", o.vcd, sf_strerror(errno));
    if (o.exec_trace && exectrace_open(o.exec_trace, 0, cosim_wires(), cosim_ppm(EXECUTOR)))
        die("cannot open %s: %s", o.exec_trace, sf_strerror(errno));

    write_ready(o.run_dir);
    logmsg("ready: %s %s control %s (%s)", uart_link(PROFILER), uart_link(EXECUTOR), control_sock_path(),
           pacing.paced ? "paced" : "unpaced");

    if (pacing.paced)
        pacing_host_setup(o.sched, o.mlock);
    pacing_start();
    if (pacing.paced)
        hostin_start(); /* host bytes stamped on the host clock (after the set-up: it sets itself above it) */
    for (i = 0; i < NNODES; i++)
        if (o.elf[i])
            uart_arm(i);
    run(o.until_cycles);
    hostin_stop();
    lockstep_end(); /* --until or stop ended the run during a grant */

    /* final flush of what the host can still take (paced: once the wall clock has reached virtual
     * time, at most the quantum away), then the final status */
    if (pacing.paced)
        pacing_spin_until(cosim_now());
    for (i = 0; i < NNODES; i++)
        if (o.elf[i])
            uart_flush_out(i, cosim_now());
    if (o.alone >= 0)
        stimulus_end(o.alone);
    {
        struct sbuf b = {0};
        status_json(&b);
        fputs(b.p, status_out);
        fflush(status_out);
        free(b.p);
    }
    if (parent_gone)
        logmsg("the process that started the bench is gone (--parent-fd read EOF): ending");
    else if (stop_signal)
        logmsg("stopped by signal %d (%s) from pid %d", (int)stop_signal, strsignal((int)stop_signal),
               (int)stop_sender);
    logmsg("stopped at virtual %.6f s", (double)cosim_now() / (double)F_CPU);
    vcd_close(cosim_now());
    exectrace_close(global_to_node(EXECUTOR, cosim_now())); /* the executor's clock */
    trace_close();
    control_close();
    {
        char ready[600];
        snprintf(ready, sizeof ready, "%s/ready", o.run_dir);
        unlink(ready);
    }
    for (i = 0; i < NNODES; i++)
        if (o.elf[i])
            uart_close(i);
    /* our own mkdtemp folder, empty now (its links, socket and ready are gone): nobody else would remove
     * it. rmdir, not a recursive removal: a file asked for there (vcd on wires.vcd) keeps it. */
    if (o.own_dir && rmdir(o.run_dir) && errno != ENOTEMPTY && errno != EEXIST)
        logmsg("cannot remove run directory %s: %s", o.run_dir, strerror(errno));
    else if (!o.own_dir && parent_gone)
        parent_remove_run_dir(o.run_dir); /* the parent's folder for us, if it is (parent.c): nobody else will */
    /* one-node mode: a crashed core fails the run, as a test driver expects */
    return o.alone >= 0 && cosim_node(o.alone)->ops->state(cosim_node(o.alone)) == NODE_CRASHED ? 1 : 0;
}
