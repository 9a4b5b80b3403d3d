/*
 * Pacing: virtual time on wall time (paced mode), the lag histogram, and the host's real-time
 * set-up (pacing.c says how and what was measured).
 */
#ifndef MMBENCH_PACING_H
#define MMBENCH_PACING_H

#include <poll.h>
#include <stdint.h>

#include "bench.h"

/* lag histogram: bins 0..999 are 1 us wide, 1000..1998 are 1 ms wide (1 ms .. 999 ms), 1999: more */
#define LAG_BINS 2000

/* a stall interval, in virtual cycles: from the last sync sample within the lag bound before the lag
 * went over it, to the first sample back within it (the stall and the catch-up after it) */
struct stall {
    uint64_t start, end;
    uint64_t max_ns; /* the largest lag sampled in it */
};
#define MAX_STALLS 4096 /* the last ones kept; older ones are counted in stalls_dropped */
#define OUT_BINS 1001   /* output lateness histogram: 0..999 us, 1 us wide; 1000: 1 ms or more */

/* Output held: a run of one node's consecutive bytes each written to its pty at least HELD_MIN_NS after
 * its wall moment (pacing.c), for the `timing` command: a frame the PC's figures depend on (a TIMECODE)
 * is looked up by its moment there (mmsched/verdict/validity.py). */
#define HELD_MIN_NS 20000 /* the quantum: a byte is never later than this unless the bench lagged */
#define HELD_RUNS 65536   /* the last ones kept; older ones counted in held_dropped */
struct held_run {
    uint64_t due_first, due_last; /* the wall moments of its first and last byte, as virtual cycles */
    uint64_t max_late_ns;
    uint32_t n;
    uint8_t node;
};

struct pacing {
    int paced;             /* 0: --unpaced */
    uint64_t spin_ns;      /* --spin-us: busy-wait this last part of each wait instead of sleeping (--spin: all) */
    uint64_t quantum_ns;   /* --quantum-us: how far virtual time may run ahead of wall time */
    uint64_t lag_bound_ns; /* --lag-bound-us: a run whose lag went over it is invalid */
    uint64_t wall_start_ns;
    /* lag */
    uint64_t lag_hist[LAG_BINS];
    uint64_t lag_samples, lag_exceeded, lag_max_ns;
    uint64_t lead_max_ns;   /* how far virtual time was ever ahead of wall time (bounded by the quantum) */
    uint64_t early_wakeups; /* waits ended by a ready descriptor before the deadline */
    uint64_t lag_episodes;  /* times the lag went over the bound (consecutive samples over it: one episode) */
    int lag_over;           /* the last sample was over the bound: a stall interval is open */
    uint64_t last_ok_cycle; /* virtual time of the last sample within the bound */
    struct stall open;      /* the open interval (lag_over), its end not known yet */
    struct stall stalls[MAX_STALLS]; /* closed intervals, a ring, oldest at stalls_head */
    size_t stalls_head, stalls_n;
    uint64_t stalls_dropped;
    /* output against wall time (paced): a node's byte goes to its pty no earlier than the wall moment
     * of the cycle its stop bit ends (wall_start + virtual time); main.c holds it until then */
    uint64_t out_bytes;               /* bytes written to the ptys */
    uint64_t out_early_max_ns;        /* the most any byte was written before its wall moment */
    uint64_t out_late_hist[OUT_BINS]; /* how late after it, 1 us bins; the last: 1 ms or more */
    uint64_t out_late_max_ns;
    uint64_t out_waits;               /* sync points that spun for a byte's moment first */
    struct held_run held[HELD_RUNS];  /* output written late (a ring, oldest at held_head) */
    size_t held_head, held_n;
    uint64_t held_dropped;
    int held_open[NNODES];            /* the node's last byte was late: its run is the newest, still growing */
    /* host set-up (--realtime, --sched, --mlock, --dma-latency, --cpu), as done: see status "host" */
    char host_sched[32];
    int host_mlock, host_dma_fd, host_dma_us, host_cpu;
    uint64_t rt_limit_demotions; /* times the simulation left real-time at RLIMIT_RTTIME's warning (pacing.c) */
};
extern struct pacing pacing;

/* Services the descriptors a wait found ready. */
typedef void (*pacing_service_fn)(const struct pollfd *pfd, int n);

void pacing_start(void); /* wall time 0 = virtual time 0 */
uint64_t pacing_wait_until(uint64_t cycle, struct pollfd *pfd, int n, pacing_service_fn service);
void pacing_record_lag(uint64_t lag_ns, uint64_t now_cycles);
uint64_t pacing_wall_cycles_now(void);
uint64_t pacing_cycle_wall_ns(uint64_t cycle); /* CLOCK_MONOTONIC of virtual `cycle`, rounded up */
void pacing_spin_until(uint64_t cycle);        /* busy-waits until the wall clock reaches `cycle` */
void pacing_record_out(int id, uint64_t at, uint64_t t_ns); /* node id's byte complete at cycle `at` written at t_ns */
/* "held":[[node,due_first_s,due_last_s,n,max_late_us],...] for runs ending at or after `since` (cycles),
 * ,"held_dropped":N,"held_min_us":US */
void pacing_held_json(struct sbuf *b, uint64_t since);
void pacing_host_setup(const char *want_sched, int want_mlock);
/* The main loop, every turn: a real-time simulation warned by RLIMIT_RTTIME (SIGXCPU) leaves real-time before
 * the limit's hard end (SIGKILL) comes (pacing.c says why) */
void pacing_rt_limit_check(void);
void pacing_status_json(struct sbuf *b, uint64_t now); /* the "lag" and "host" members of the status */
int pacing_valid(void); /* the run kept within its lag bound (or was unpaced) */
/* "stalls":[[start_s,end_s,max_us],...],"stalls_dropped":N,"stall_open":B for the intervals ending
 * at or after `since` (cycles); an open one last, ending at `now` */
void pacing_stalls_json(struct sbuf *b, uint64_t since, uint64_t now);

#endif
