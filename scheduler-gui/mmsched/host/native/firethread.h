/*
 * The firing thread of normal mode, in C: the PC's own write of each FIRE frame at its moment, as
 * cyclictest's measuring thread wakes (absolute CLOCK_MONOTONIC sleep, SCHED_FIFO, no interpreter lock
 * anywhere on its path). firethread.c says why and how; mmsched/host/firethread.py loads it with ctypes.
 *
 * The caller feeds it moments ahead of time (mf_add) and reads back, in write order, what happened to
 * each (mf_take); a write that must go out now waits for its own (mf_write_now). Every write to the line
 * goes through the thread while it runs, so the line has one writer and its bytes one order.
 */
#ifndef MMSCHED_FIRETHREAD_H
#define MMSCHED_FIRETHREAD_H

#include <stdint.h>

#define MF_BYTES 320     /* the most bytes one write carries (a frame is at most 258, a socket packet 5 more) */
#define MF_REASON 160

struct mf_config {
    int fd;                   /* the line's descriptor (a tty, a pty, a bench's line socket) */
    int priority;             /* SCHED_FIFO priority for the thread; 0: the policy it inherits */
    int64_t busy_ns;          /* spin this long before each moment (the accuracy slider; 0: sleep only) */
    int64_t min_gap_ns;       /* two writes at least this far apart (the line's RESULT time; 0: none) */
    int64_t write_timeout_ns; /* a write the line takes nothing of for this long fails (ETIMEDOUT) */
    int capacity;             /* writes waiting at most, and stamps not yet taken at most */
};

/* What happened to one write: times on CLOCK_MONOTONIC, in ns */
struct mf_stamp {
    uint64_t tag;     /* the caller's */
    int64_t at_ns;    /* the moment asked for; 0: as soon as possible (mf_write_now) */
    int64_t woke_ns;  /* the clock when the sleep returned (before the last stretch's spin) */
    int64_t began_ns; /* just before write() */
    int64_t ended_ns; /* after the last write() returned */
    uint32_t size;    /* bytes asked to write */
    uint32_t written; /* bytes the line took */
    int32_t err;      /* 0, or the errno of the write that failed (ETIMEDOUT: nothing taken in time) */
    uint32_t held;    /* 1: the line's gap held it after its moment */
    uint32_t slept;   /* 1: its moment (less the spin) was still ahead when the thread took it, so it slept for it:
                       * a wake-up as cyclictest samples them (0: an overrun, due already: a late one before it) */
};

struct mf_info {
    int tid;                 /* the thread's id (RealtimeKit names a thread by it) */
    int sched_err;           /* errno of pthread_setschedparam (0: granted, or none asked) */
    int slack_ns;            /* the timer slack the thread set (1), or -1: refused */
    int policy, prio;        /* what the thread runs at, read back */
    int64_t cpu_ns;          /* the thread's CPU time so far */
    uint64_t fired, held, full, stamps_dropped;
};

struct mf_thread;
/* Starts the thread; returns once it has its scheduling (mf_info says what it got). NULL: errno. */
struct mf_thread *mf_start(const struct mf_config *cfg);
/* Queues a write of b[0..n) at `at_ns` (0: at once). 0; -1: the queue is full or n > MF_BYTES (errno). */
int mf_add(struct mf_thread *t, uint64_t tag, int64_t at_ns, const uint8_t *b, uint32_t n);
/* A write at once, waiting until it is done (or timeout_ns): its stamp in *out. 0; -1: timed out (it is
 * still queued and will be written; its stamp comes through mf_take then). */
int mf_write_now(struct mf_thread *t, uint64_t tag, const uint8_t *b, uint32_t n, int64_t timeout_ns,
                 struct mf_stamp *out);
/* The stamps of writes done since the last take, in write order: at most max into out; how many. */
int mf_take(struct mf_thread *t, struct mf_stamp *out, int max);
int mf_pending(struct mf_thread *t); /* writes queued, not yet begun */
void mf_info(struct mf_thread *t, struct mf_info *out);
/* Ends the thread (a write under way finishes first; queued ones are dropped); what it did, its CPU time to
 * its end included, into *final (may be NULL). The stamps not taken yet stay for mf_take. */
void mf_stop(struct mf_thread *t, struct mf_info *final);
void mf_free(struct mf_thread *t); /* stops it if need be and frees it: nothing of it is used after */

#endif
