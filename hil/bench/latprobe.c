/*
 * latprobe: a cyclictest-like probe of host scheduling latency, to tell the bench's own pacing
 * error apart from the host's (bench_bench.py runs it next to and apart from the bench).
 *
 *   latprobe [--mode sleep|spin] [--seconds S] [--period-us P] [--fifo PRIO] [--cpu N] [--dma-latency US]
 *
 * sleep: clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to deadlines P us apart; the latency is
 *        wall time at wake-up - the deadline (what a sleeping bench sees at each sync point).
 * spin:  reads CLOCK_MONOTONIC in a tight loop and records each gap between two consecutive
 *        reads of 1 us or more (an interruption): a gap of tens of us means the thread (or its
 *        virtual CPU) was not running, i.e. preemption by the guest or the host, which no pacing
 *        code can avoid. Samples are interruptions only.
 * --dma-latency US: hold /dev/cpu_dma_latency at US while running (0: idle CPUs poll, no halt).
 * Prints one JSON line: samples, p50/p99/p99.9/max in us, scheduler actually used, steal ticks.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#define BINS 100000 /* 1 us bins up to 100 ms */

static uint64_t hist[BINS + 1], samples, max_ns;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void record(uint64_t ns)
{
    uint64_t us = ns / 1000;
    hist[us < BINS ? us : BINS]++;
    samples++;
    if (ns > max_ns)
        max_ns = ns;
}

static double pct(double q)
{
    uint64_t want = (uint64_t)ceil(q * (double)samples), acc = 0;
    int i;
    if (!samples)
        return 0;
    for (i = 0; i <= BINS; i++) {
        acc += hist[i];
        if (acc >= want)
            return i < BINS ? (double)i : (double)max_ns / 1000.0;
    }
    return (double)max_ns / 1000.0;
}

static uint64_t steal_ticks(void)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    if (!f)
        return 0;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
               &v[7]) != 8)
        v[7] = 0;
    fclose(f);
    return v[7];
}

int main(int argc, char **argv)
{
    const char *mode = "sleep", *sched = "other";
    double seconds = 5, period_us = 50;
    int fifo = 0, cpu = -1, dma = -1, dma_fd = -1, i;
    uint64_t start, end, steal0;
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--period-us"))
            period_us = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--fifo"))
            fifo = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--cpu"))
            cpu = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dma-latency"))
            dma = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: latprobe [--mode sleep|spin] [--seconds S] [--period-us P] [--fifo PRIO] [--cpu N] [--dma-latency US]\n");
            return 2;
        }
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    mlockall(MCL_CURRENT | MCL_FUTURE);
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    if (fifo > 0) {
        struct sched_param sp = {.sched_priority = fifo};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
            sched = "fifo";
    }
    if (dma >= 0) { /* PM QoS: keep idle CPUs out of halt while open (what cyclictest does) */
        int32_t v = dma;
        dma_fd = open("/dev/cpu_dma_latency", O_WRONLY);
        if (dma_fd >= 0 && write(dma_fd, &v, sizeof v) != (ssize_t)sizeof v) {
            close(dma_fd);
            dma_fd = -1;
        }
    }
    steal0 = steal_ticks();
    start = mono_ns();
    end = start + (uint64_t)(seconds * 1e9);
    if (!strcmp(mode, "spin")) {
        uint64_t prev = start, now;
        while ((now = mono_ns()) < end) {
            if (now - prev >= 1000) /* an interruption: the thread was not running */
                record(now - prev);
            prev = now;
        }
    } else {
        uint64_t period = (uint64_t)(period_us * 1000.0), next = start + period, now;
        while (next < end) {
            struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            now = mono_ns();
            record(now > next ? now - next : 0);
            next += period;
            if (next < now) /* fell behind by more than a period: resume from now */
                next = now + period;
        }
    }
    printf("{\"mode\":\"%s\",\"sched\":\"%s\",\"cpu\":%d,\"seconds\":%g,\"samples\":%" PRIu64
           ",\"dma_latency\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"steal_ticks\":%" PRIu64 "}\n",
           mode, sched, cpu, seconds, samples, dma_fd >= 0 ? dma : -1, pct(0.5), pct(0.99), pct(0.999), (double)max_ns / 1000.0,
           steal_ticks() - steal0);
    return 0;
}
