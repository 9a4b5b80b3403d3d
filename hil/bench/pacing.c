/*
 * Pacing and the host's real-time set-up.
 *
 * Paced (default): virtual time follows wall time (CLOCK_MONOTONIC). The bench runs in slices (at
 * most 200 us of virtual time) up to wall time + a quantum (--quantum-us, default 20), so virtual
 * time is never more than the quantum ahead of wall time (status: lag.lead_max_us); before each
 * slice it syncs with wall time: if ahead, it waits (ppoll on the ptys and the control socket, timer
 * slack 1 ns, servicing only what is ready) until wall time reaches virtual time, then records the
 * lag = wall time now - the wall time at which the current virtual time was due (>= 0) in a
 * histogram: one sample per slice, at every sync point. A run whose lag ever exceeded --lag-bound-us
 * is reported invalid (lag.exceeded: samples over it; lag.episodes: runs of consecutive such
 * samples, i.e. separate stalls). --spin-us US busy-waits the last US of each wait (--spin: all of
 * it). On this kind of host (a 2-vCPU VM) the lag is the host's wake-up latency: a sleeping thread is
 * woken ~15-25 us late, and with other work at the same priority, milliseconds late. --realtime asks
 * for SCHED_FIFO 10 (falling back to nice -10, then nothing), mlockall and /dev/cpu_dma_latency 0
 * (idle CPUs poll rather than halt); --sched, --mlock, --dma-latency and --cpu do one each. What was
 * granted is in the status ("host"). Unpaced: as fast as possible, in slices of 1 ms of virtual time.
 *
 * Output, paced: a node's byte is written to its pty no earlier than the wall moment of the cycle
 * its stop bit ends (main.c holds it, spinning up to the quantum at a sync point). Recorded per byte
 * against that moment: lag.out_early_max_us (0 by construction; before, up to the quantum) and the
 * lateness histogram (out_late_p50_us, p99, max): a byte that completes in the part of a slice the
 * bench simulates behind wall time (the lag it starts the slice with) goes out late by up to that lag.
 */
#define _GNU_SOURCE
#include "pacing.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* the pacing settings, the lag record and the host set-up of this run */
struct pacing pacing = {
    .paced = 1,
    .quantum_ns = 20000,
    .lag_bound_ns = 1000000, /* 1 ms */
    .host_sched = "other",
    .host_dma_fd = -1,
    .host_dma_us = -1,
    .host_cpu = -1,
};

void pacing_start(void)
{
    pacing.wall_start_ns = mono_ns();
}

/* Paced mode: waits until the wall clock reaches the virtual time `cycle` stands for, or until a
 * descriptor (pty, control socket) is ready, which it then services. Sleeps in ppoll (timer slack
 * 1 ns, see main) up to `spin_ns` before the deadline and busy-waits the rest. Returns the wall
 * time (CLOCK_MONOTONIC ns) when it returned. */
uint64_t pacing_wait_until(uint64_t cycle, struct pollfd *pfd, int n, pacing_service_fn service)
{
    uint64_t target_ns = pacing.wall_start_ns + cycle * 1000ull / (F_CPU / 1000000ull);
    uint64_t now = mono_ns();
    if (now >= target_ns)
        return now;
    if (target_ns - now > pacing.spin_ns) {
        uint64_t sleep_ns = target_ns - now - pacing.spin_ns;
        struct timespec ts = {(time_t)(sleep_ns / 1000000000ull), (long)(sleep_ns % 1000000000ull)};
        if (ppoll(pfd, (nfds_t)n, &ts, NULL) > 0) {
            service(pfd, n);
            now = mono_ns();
            if (now < target_ns) {
                pacing.early_wakeups++;
                return now;
            }
        }
    } else {
        /* spinning: still look at the descriptors once (zero timeout) */
        struct timespec zero = {0, 0};
        if (ppoll(pfd, (nfds_t)n, &zero, NULL) > 0)
            service(pfd, n);
    }
    while ((now = mono_ns()) < target_ns)
        ;
    return now;
}

static void push_stall(const struct stall *st)
{
    if (pacing.stalls_n == MAX_STALLS) {
        pacing.stalls_head = (pacing.stalls_head + 1) % MAX_STALLS;
        pacing.stalls_n--;
        pacing.stalls_dropped++;
    }
    pacing.stalls[(pacing.stalls_head + pacing.stalls_n) % MAX_STALLS] = *st;
    pacing.stalls_n++;
}

/* One sync sample: the lag at virtual time `now_cycles`. */
void pacing_record_lag(uint64_t lag_ns, uint64_t now_cycles)
{
    uint64_t us = lag_ns / 1000;
    int bin = us < 1000 ? (int)us : us < 1000000 ? 999 + (int)(us / 1000) : LAG_BINS - 1;
    if (bin >= LAG_BINS)
        bin = LAG_BINS - 1;
    pacing.lag_hist[bin]++;
    pacing.lag_samples++;
    if (lag_ns > pacing.lag_max_ns)
        pacing.lag_max_ns = lag_ns;
    if (lag_ns > pacing.lag_bound_ns) {
        pacing.lag_exceeded++;
        if (!pacing.lag_over) {
            pacing.lag_episodes++;
            pacing.open = (struct stall){pacing.last_ok_cycle, now_cycles, lag_ns};
        } else if (lag_ns > pacing.open.max_ns) {
            pacing.open.max_ns = lag_ns;
        }
        pacing.lag_over = 1;
    } else {
        if (pacing.lag_over) {
            pacing.open.end = now_cycles;
            push_stall(&pacing.open);
        }
        pacing.lag_over = 0;
        pacing.last_ok_cycle = now_cycles;
    }
}

void pacing_stalls_json(struct sbuf *b, uint64_t since, uint64_t now)
{
    size_t i;
    int first = 1;
    sb_printf(b, "\"stalls\":[");
    for (i = 0; i < pacing.stalls_n; i++) {
        const struct stall *st = &pacing.stalls[(pacing.stalls_head + i) % MAX_STALLS];
        if (st->end < since)
            continue;
        sb_printf(b, "%s[%.9f,%.9f,%.1f]", first ? "" : ",", (double)st->start / (double)F_CPU,
                  (double)st->end / (double)F_CPU, (double)st->max_ns / 1000.0);
        first = 0;
    }
    if (pacing.lag_over && now >= since)
        sb_printf(b, "%s[%.9f,%.9f,%.1f]", first ? "" : ",", (double)pacing.open.start / (double)F_CPU,
                  (double)now / (double)F_CPU, (double)pacing.open.max_ns / 1000.0);
    sb_printf(b, "],\"stalls_dropped\":%" PRIu64 ",\"stall_open\":%s", pacing.stalls_dropped,
              pacing.lag_over ? "true" : "false");
}

uint64_t pacing_wall_cycles_now(void)
{
    return (mono_ns() - pacing.wall_start_ns) * (F_CPU / 1000000ull) / 1000ull;
}

/* The wall moment of a virtual cycle, rounded up to the nanosecond, so that pacing_wall_cycles_now()
 * at or after it gives `cycle` or more (a cycle is 62.5 ns). */
uint64_t pacing_cycle_wall_ns(uint64_t cycle)
{
    return pacing.wall_start_ns + (cycle * 1000ull + F_CPU / 1000000ull - 1) / (F_CPU / 1000000ull);
}

/* Busy-waits: used for output held until its wall moment, which is never more than the quantum
 * (20 us) away; a sleep that short wakes 15-25 us late on this host (pacing.c header), a spin
 * within about a microsecond. */
void pacing_spin_until(uint64_t cycle)
{
    uint64_t t = pacing_cycle_wall_ns(cycle);
    while (mono_ns() < t)
        ;
}

/* a byte of node `id` written HELD_MIN_NS or more after its moment: it extends the node's open run of such
 * bytes, or opens one */
static void record_held(int id, uint64_t at, uint64_t late_ns)
{
    struct held_run *r;
    if (pacing.held_open[id] && pacing.held_n) {
        r = &pacing.held[(pacing.held_head + pacing.held_n - 1) % HELD_RUNS];
        if (r->node == id) {
            r->due_last = at;
            r->n++;
            if (late_ns > r->max_late_ns)
                r->max_late_ns = late_ns;
            return;
        }
    }
    if (pacing.held_n == HELD_RUNS) {
        pacing.held_head = (pacing.held_head + 1) % HELD_RUNS;
        pacing.held_n--;
        pacing.held_dropped++;
    }
    pacing.held[(pacing.held_head + pacing.held_n) % HELD_RUNS] = (struct held_run){at, at, late_ns, 1, (uint8_t)id};
    pacing.held_n++;
    for (int i = 0; i < NNODES; i++) /* runs are kept whole per node: the other node's run is closed */
        pacing.held_open[i] = 0;
    pacing.held_open[id] = 1;
}

void pacing_held_json(struct sbuf *b, uint64_t since)
{
    size_t i;
    int first = 1;
    sb_printf(b, "\"held\":[");
    for (i = 0; i < pacing.held_n; i++) {
        const struct held_run *r = &pacing.held[(pacing.held_head + i) % HELD_RUNS];
        if (r->due_last < since)
            continue;
        sb_printf(b, "%s[\"%s\",%.9f,%.9f,%u,%.3f]", first ? "" : ",", node_names[r->node],
                  (double)r->due_first / (double)F_CPU, (double)r->due_last / (double)F_CPU, r->n,
                  (double)r->max_late_ns / 1000.0);
        first = 0;
    }
    sb_printf(b, "],\"held_dropped\":%" PRIu64 ",\"held_min_us\":%.1f", pacing.held_dropped, HELD_MIN_NS / 1000.0);
}

/* One byte of node `id` written to its pty at t_ns whose stop bit ended at virtual cycle `at`. */
void pacing_record_out(int id, uint64_t at, uint64_t t_ns)
{
    uint64_t due = pacing_cycle_wall_ns(at);
    if (t_ns >= due + HELD_MIN_NS)
        record_held(id, at, t_ns - due);
    else
        pacing.held_open[id] = 0;
    pacing.out_bytes++;
    if (t_ns < due) {
        if (due - t_ns > pacing.out_early_max_ns)
            pacing.out_early_max_ns = due - t_ns;
        pacing.out_late_hist[0]++;
    } else {
        uint64_t us = (t_ns - due) / 1000;
        pacing.out_late_hist[us < OUT_BINS - 1 ? us : OUT_BINS - 1]++;
        if (t_ns - due > pacing.out_late_max_ns)
            pacing.out_late_max_ns = t_ns - due;
    }
}

int pacing_valid(void)
{
    return !pacing.paced || pacing.lag_exceeded == 0;
}

/* Paced mode only: what the host allows of what was asked, each with a fallback; logged and reported
 * in the status ("host"). sched: fifo (SCHED_FIFO priority 10; if not permitted: nice -10; else
 * nothing), nice (nice -10), other. The bench sleeps between slices, so a FIFO bench that keeps up
 * takes little CPU; if it cannot keep up, the kernel's RT throttling still leaves 5% to others. */
/* RealtimeKit (the host's way to real-time for a user without RLIMIT_RTPRIO: mmhil.endpoint) sets RLIMIT_RTTIME
 * first: a real-time thread that runs longer than its hard limit (200 ms on Debian) without sleeping is killed.
 * The paced simulation sleeps whenever it is ahead, but catching up after a long host stall it may run that long:
 * the soft limit's SIGXCPU comes first, and the loop then leaves real-time for SCHED_OTHER (its nice kept) rather
 * than be killed. volatile sig_atomic_t: the handler sets it, the main loop reads it. */
static volatile sig_atomic_t rt_limit_met;

static void on_xcpu(int sig)
{
    (void)sig;
    rt_limit_met = 1;
}

void pacing_rt_limit_check(void)
{
    struct sched_param sp = {.sched_priority = 0};
    if (!rt_limit_met)
        return;
    rt_limit_met = 0;
    if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_OTHER)
        return; /* (another thread's warning, or already left) */
    sched_setscheduler(0, SCHED_OTHER, &sp);
    pacing.rt_limit_demotions++;
    logmsg("RLIMIT_RTTIME's warning (SIGXCPU): the simulation leaves real-time scheduling before its hard limit");
}

void pacing_host_setup(const char *want_sched, int want_mlock)
{
    signal(SIGXCPU, on_xcpu);
    if (pacing.host_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(pacing.host_cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set)) {
            logmsg("--cpu %d: %s (ignored)", pacing.host_cpu, strerror(errno));
            pacing.host_cpu = -1;
        }
    }
    if (want_mlock) {
        if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
            pacing.host_mlock = 1;
        else
            logmsg("mlockall: %s (pages not locked)", strerror(errno));
    }
    if (pacing.host_dma_us >= 0) {
        /* PM QoS: while this descriptor is open, idle CPUs stay in idle states at most this slow
         * to leave (0: poll instead of halt), so a timer wakes the bench without a halt exit. */
        int32_t v = pacing.host_dma_us;
        pacing.host_dma_fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
        if (pacing.host_dma_fd >= 0 && write(pacing.host_dma_fd, &v, sizeof v) != (ssize_t)sizeof v) {
            close(pacing.host_dma_fd);
            pacing.host_dma_fd = -1;
        }
        if (pacing.host_dma_fd < 0)
            logmsg("/dev/cpu_dma_latency: %s (not held)", strerror(errno));
    }
    if (!strcmp(want_sched, "fifo") && pacing.spin_ns >= pacing.quantum_ns) {
        /* a FIFO thread that never sleeps gets throttled by the kernel (tens of ms per second) */
        logmsg("SCHED_FIFO with a full spin would be throttled: using nice -10");
        want_sched = "nice";
    }
    if (!strcmp(want_sched, "fifo")) {
        struct sched_param sp = {.sched_priority = 10};
        if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0) {
            snprintf(pacing.host_sched, sizeof pacing.host_sched, "fifo 10");
            return;
        }
        logmsg("SCHED_FIFO: %s (trying nice -10)", strerror(errno));
        want_sched = "nice";
    }
    if (!strcmp(want_sched, "nice")) {
        if (setpriority(PRIO_PROCESS, 0, -10) == 0)
            snprintf(pacing.host_sched, sizeof pacing.host_sched, "nice -10");
        else
            logmsg("nice -10: %s (normal priority)", strerror(errno));
    }
}

/* The upper edge of the bin holding quantile q, but never above the maximum sampled: a 1 ms bin's edge
 * can be far above it (seen: p99.9 3000 us, max 2671 us). */
static double lag_percentile_us(double q)
{
    uint64_t want, acc = 0;
    double max_us = (double)pacing.lag_max_ns / 1000.0, edge = max_us;
    int i;
    if (!pacing.lag_samples)
        return 0;
    want = (uint64_t)ceil(q * (double)pacing.lag_samples);
    if (want < 1)
        want = 1;
    for (i = 0; i < LAG_BINS; i++) {
        acc += pacing.lag_hist[i];
        if (acc >= want) {
            if (i < 1000)
                edge = i + 1;
            else if (i < 1999)
                edge = (double)(i - 998) * 1000.0;
            break;
        }
    }
    return edge < max_us ? edge : max_us;
}

/* the same for the output lateness (bin 0 also holds bytes written early, if any) */
static double out_late_percentile_us(double q)
{
    uint64_t want, acc = 0;
    double max_us = (double)pacing.out_late_max_ns / 1000.0;
    int i;
    if (!pacing.out_bytes)
        return 0;
    want = (uint64_t)ceil(q * (double)pacing.out_bytes);
    if (want < 1)
        want = 1;
    for (i = 0; i < OUT_BINS - 1; i++) {
        acc += pacing.out_late_hist[i];
        if (acc >= want)
            return i + 1 < max_us ? i + 1 : max_us;
    }
    return max_us;
}

void pacing_status_json(struct sbuf *b, uint64_t now)
{
    int i, first = 1;
    sb_printf(b, "\"lag\":{\"samples\":%" PRIu64 ",\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
                 "\"max_us\":%.1f,\"bound_us\":%.1f,\"exceeded\":%" PRIu64 ",\"episodes\":%" PRIu64 ",\"lead_max_us\":%.1f,"
                 "\"quantum_us\":%.1f,\"spin_us\":%.1f,\"early_wakeups\":%" PRIu64 ",\"histogram_us\":[",
              pacing.lag_samples, lag_percentile_us(0.5), lag_percentile_us(0.99), lag_percentile_us(0.999),
              (double)pacing.lag_max_ns / 1000.0, (double)pacing.lag_bound_ns / 1000.0, pacing.lag_exceeded,
              pacing.lag_episodes, (double)pacing.lead_max_ns / 1000.0, (double)pacing.quantum_ns / 1000.0,
              (double)pacing.spin_ns / 1000.0, pacing.early_wakeups);
    for (i = 0; i < LAG_BINS; i++)
        if (pacing.lag_hist[i]) {
            uint64_t lo = i < 1000 ? (uint64_t)i : (uint64_t)(i - 999) * 1000;
            sb_printf(b, "%s[%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", lo, pacing.lag_hist[i]);
            first = 0;
        }
    sb_printf(b, "],\"out_bytes\":%" PRIu64 ",\"out_early_max_us\":%.3f,\"out_late_p50_us\":%.1f,"
                 "\"out_late_p99_us\":%.1f,\"out_late_max_us\":%.1f,\"out_waits\":%" PRIu64 ",",
              pacing.out_bytes, (double)pacing.out_early_max_ns / 1000.0, out_late_percentile_us(0.5),
              out_late_percentile_us(0.99), (double)pacing.out_late_max_ns / 1000.0, pacing.out_waits);
    pacing_stalls_json(b, 0, now);
    {
        char now_sched[32]; /* read back: RealtimeKit may have changed it on the host's behalf since the set-up */
        thread_sched_text((int)getpid(), now_sched, sizeof now_sched);
        sb_printf(b, "},\"host\":{\"sched\":");
        sb_json_str(b, now_sched);
        sb_printf(b, ",\"sched_at_setup\":");
        sb_json_str(b, pacing.host_sched);
        sb_printf(b, ",\"tid\":%d,\"rt_limit_demotions\":%" PRIu64, (int)getpid(), pacing.rt_limit_demotions);
    }
    sb_printf(b, ",\"mlock\":%s,\"dma_latency_us\":%d,\"cpu\":%d,\"timer_slack_ns\":%d},",
              pacing.host_mlock ? "true" : "false",
              pacing.host_dma_fd >= 0 ? pacing.host_dma_us : -1, pacing.host_cpu,
              prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
}
