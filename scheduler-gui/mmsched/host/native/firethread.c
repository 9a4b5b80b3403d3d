/*
 * Normal mode's firing thread in C (firethread.h).
 *
 * Why. The PC's half of the paper's question is "how late does the PC write at a moment of its
 * choosing": cyclictest's question, with a write added. A Python thread woke on a futex and then needed
 * the interpreter lock from the run's other threads (the reader threads, the run's loop) before it could
 * write: at 1,000 events a second on this project's 2-vCPU VM its wake-up was p50 305 us / p99.9 5,771 us
 * beside cyclictest's 12 / 60 us in the same minute, and beside `stress-ng --cpu 1` it fell further
 * behind with every event (p50 0.55 s). This thread needs nothing but the CPU: it sleeps with
 * clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to the moment as cyclictest does, writes with write(2)
 * on the line's descriptor and stamps the wake-up and the write's return on CLOCK_MONOTONIC.
 *
 * How. The queue is a binary heap of moments (earliest first, then the order they came in) over a pool
 * of fixed entries, under one mutex with priority inheritance: the Python thread that adds a moment holds
 * it for a copy of a few hundred bytes, and a firing thread at SCHED_FIFO waiting for it lends that thread
 * its priority (no interpreter lock is taken inside: ctypes let go of it before the call). The thread
 * waits on a condition variable (CLOCK_MONOTONIC) until GUARD_NS before a moment, so a moment added
 * meanwhile that is due sooner is seen; then it takes the entry and sleeps the last stretch with
 * clock_nanosleep, spins the accuracy slider's share (busy_ns) and, when the line's gap since the last
 * write has not passed yet, spins that out (the writes' RESULTs must fit the profiler's line: firing.py).
 * A write for now (mf_write_now: a QUERY on the line during the run) goes first; its caller waits on a
 * second condition variable. Stamps go into a ring the caller drains in write order.
 *
 * Nothing here allocates once the thread runs (the pool and the ring are made by mf_start), so with
 * mlockall (cyclictest's -m, done by the caller for the whole process) the path takes no page fault.
 */
#define _GNU_SOURCE
#include "firethread.h"
#include "monotime.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A moment further than this away is waited for on the condition variable (a sooner one added meanwhile
 * wakes it); the last GUARD_NS are slept with clock_nanosleep, as cyclictest sleeps. 2 ms: above the
 * longest a FIRE's moment is known ahead on a kilohertz grid minus a tick's creation lag, so a 1 kHz run
 * sleeps every event with clock_nanosleep alone. */
#define GUARD_NS 2000000LL

struct entry {
    int64_t at_ns;
    uint64_t seq, tag;
    uint32_t n;
    int now; /* an mf_write_now: its caller waits on `done` */
    uint8_t b[MF_BYTES];
};

struct mf_thread {
    struct mf_config cfg;
    pthread_t thread;
    pthread_mutex_t m;
    pthread_cond_t cv;   /* queue changed or stop: the thread looks again */
    pthread_cond_t done; /* a write finished: mf_write_now's caller looks */
    struct entry *pool;
    int *heap, *free_list;
    int heap_n, free_n;
    uint64_t seq;
    struct mf_stamp *ring;
    int ring_head, ring_n;
    uint64_t last_done_seq_now; /* the seq of the last mf_write_now entry written */
    struct mf_stamp last_now;
    int stop, ready;
    struct mf_info info;
};

static struct timespec ts_of(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    return ts;
}

/* ---- the heap (under m) ------------------------------------------------------------------------ */

static int before(const struct mf_thread *t, int a, int b)
{
    const struct entry *x = &t->pool[a], *y = &t->pool[b];
    return x->at_ns != y->at_ns ? x->at_ns < y->at_ns : x->seq < y->seq;
}

static void heap_push(struct mf_thread *t, int e)
{
    int i = t->heap_n++;
    t->heap[i] = e;
    while (i > 0) {
        int p = (i - 1) / 2, tmp;
        if (!before(t, t->heap[i], t->heap[p]))
            break;
        tmp = t->heap[i];
        t->heap[i] = t->heap[p];
        t->heap[p] = tmp;
        i = p;
    }
}

static int heap_pop(struct mf_thread *t)
{
    int top = t->heap[0], i = 0;
    t->heap[0] = t->heap[--t->heap_n];
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i, tmp;
        if (l < t->heap_n && before(t, t->heap[l], t->heap[m]))
            m = l;
        if (r < t->heap_n && before(t, t->heap[r], t->heap[m]))
            m = r;
        if (m == i)
            break;
        tmp = t->heap[i];
        t->heap[i] = t->heap[m];
        t->heap[m] = tmp;
        i = m;
    }
    return top;
}

/* ---- the thread -------------------------------------------------------------------------------- */

/* All of b onto the line: a partial write goes on, a full one waits (poll) up to the write timeout. */
static int write_all(const struct mf_config *cfg, const uint8_t *b, uint32_t n, uint32_t *written)
{
    int64_t deadline = mono_ns() + cfg->write_timeout_ns;
    *written = 0;
    while (*written < n) {
        ssize_t k = write(cfg->fd, b + *written, n - *written);
        if (k > 0) {
            *written += (uint32_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return errno;
        {
            int64_t left = deadline - mono_ns();
            struct pollfd p = {cfg->fd, POLLOUT, 0};
            if (left <= 0)
                return ETIMEDOUT;
            if (poll(&p, 1, (int)(left / 1000000LL) + 1) < 0 && errno != EINTR)
                return errno;
        }
    }
    return 0;
}

static void set_scheduling(struct mf_thread *t)
{
    struct sched_param sp;
    int policy;
    t->info.tid = (int)syscall(SYS_gettid);
    /* the default 50 us slack made every sleeping wake-up up to 50 us late (docs/bench.md) */
    t->info.slack_ns = prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0 ? 1 : -1;
    if (t->cfg.priority > 0) {
        sp.sched_priority = t->cfg.priority;
        t->info.sched_err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    }
    if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0) {
        t->info.policy = policy;
        t->info.prio = sp.sched_priority;
    }
}

static void *run(void *arg)
{
    struct mf_thread *t = arg;
    int64_t last_end = 0;
    pthread_mutex_lock(&t->m);
    set_scheduling(t);
    t->ready = 1;
    pthread_cond_broadcast(&t->done);
    while (!t->stop) {
        struct entry *e;
        struct mf_stamp s;
        int ei;
        int64_t wake, now;
        if (!t->heap_n) {
            pthread_cond_wait(&t->cv, &t->m);
            continue;
        }
        e = &t->pool[t->heap[0]];
        wake = e->at_ns - t->cfg.busy_ns;
        if (!e->now && wake - mono_ns() > GUARD_NS) {
            struct timespec ts = ts_of(wake - GUARD_NS);
            pthread_cond_timedwait(&t->cv, &t->m, &ts); /* (a sooner moment, or a stop, wakes it) */
            continue;
        }
        ei = heap_pop(t);
        pthread_mutex_unlock(&t->m);
        memset(&s, 0, sizeof s);
        s.tag = e->tag;
        s.at_ns = e->now ? 0 : e->at_ns;
        s.size = e->n;
        if (!e->now) {
            struct timespec ts = ts_of(wake);
            s.slept = mono_ns() < wake;
            while (mono_ns() < wake && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        }
        s.woke_ns = mono_ns();
        if (!e->now)
            while (mono_ns() < e->at_ns) /* the accuracy slider's last stretch */
                ;
        if (t->cfg.min_gap_ns && (now = mono_ns()) < last_end + t->cfg.min_gap_ns) {
            s.held = 1; /* still in the line's gap after the write before: spun out */
            while (mono_ns() < last_end + t->cfg.min_gap_ns)
                ;
        }
        s.began_ns = mono_ns();
        s.err = write_all(&t->cfg, e->b, e->n, &s.written);
        s.ended_ns = last_end = mono_ns();
        pthread_mutex_lock(&t->m);
        if (t->ring_n == t->cfg.capacity) { /* the caller has not taken a whole capacity of stamps: the oldest goes */
            t->ring_head = (t->ring_head + 1) % t->cfg.capacity;
            t->ring_n--;
            t->info.stamps_dropped++;
        }
        t->ring[(t->ring_head + t->ring_n++) % t->cfg.capacity] = s;
        if (!s.err)
            t->info.fired += !e->now;
        t->info.held += s.held;
        if (e->now) {
            t->last_done_seq_now = e->seq;
            t->last_now = s;
        }
        t->free_list[t->free_n++] = ei;
        pthread_cond_broadcast(&t->done);
    }
    {
        struct timespec ts; /* its CPU time, kept for mf_stop's caller (the clock goes with the thread) */
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
            t->info.cpu_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    pthread_mutex_unlock(&t->m);
    return NULL;
}

/* ---- the caller's side ------------------------------------------------------------------------- */

struct mf_thread *mf_start(const struct mf_config *cfg)
{
    struct mf_thread *t = calloc(1, sizeof *t);
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    int i, err;
    if (!t)
        return NULL;
    t->cfg = *cfg;
    if (t->cfg.capacity < 16)
        t->cfg.capacity = 16;
    t->pool = calloc((size_t)t->cfg.capacity, sizeof *t->pool);
    t->heap = calloc((size_t)t->cfg.capacity, sizeof *t->heap);
    t->free_list = calloc((size_t)t->cfg.capacity, sizeof *t->free_list);
    t->ring = calloc((size_t)t->cfg.capacity, sizeof *t->ring);
    if (!t->pool || !t->heap || !t->free_list || !t->ring) {
        free(t->pool), free(t->heap), free(t->free_list), free(t->ring), free(t);
        errno = ENOMEM;
        return NULL;
    }
    for (i = 0; i < t->cfg.capacity; i++)
        t->free_list[t->free_n++] = t->cfg.capacity - 1 - i;
    /* priority inheritance: a caller holding m while the firing thread (SCHED_FIFO) waits for it runs at
     * the thread's priority for that copy */
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&t->m, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cv, &ca);
    pthread_cond_init(&t->done, &ca);
    pthread_condattr_destroy(&ca);
    err = pthread_create(&t->thread, NULL, run, t);
    if (err) {
        free(t->pool), free(t->heap), free(t->free_list), free(t->ring), free(t);
        errno = err;
        return NULL;
    }
    pthread_mutex_lock(&t->m);
    while (!t->ready)
        pthread_cond_wait(&t->done, &t->m);
    pthread_mutex_unlock(&t->m);
    return t;
}

static int enqueue(struct mf_thread *t, uint64_t tag, int64_t at_ns, const uint8_t *b, uint32_t n, int now,
                   uint64_t *seq)
{
    struct entry *e;
    int ei;
    if (n > MF_BYTES) {
        errno = EMSGSIZE;
        return -1;
    }
    if (!t->free_n) {
        t->info.full++;
        errno = ENOSPC;
        return -1;
    }
    ei = t->free_list[--t->free_n];
    e = &t->pool[ei];
    e->at_ns = now ? 0 : at_ns;
    e->seq = *seq = ++t->seq;
    e->tag = tag;
    e->n = n;
    e->now = now;
    memcpy(e->b, b, n);
    heap_push(t, ei);
    pthread_cond_signal(&t->cv);
    return 0;
}

int mf_add(struct mf_thread *t, uint64_t tag, int64_t at_ns, const uint8_t *b, uint32_t n)
{
    uint64_t seq;
    int r;
    pthread_mutex_lock(&t->m);
    r = enqueue(t, tag, at_ns, b, n, 0, &seq);
    pthread_mutex_unlock(&t->m);
    return r;
}

int mf_write_now(struct mf_thread *t, uint64_t tag, const uint8_t *b, uint32_t n, int64_t timeout_ns,
                 struct mf_stamp *out)
{
    uint64_t seq;
    struct timespec ts = ts_of(mono_ns() + timeout_ns);
    int r = 0;
    pthread_mutex_lock(&t->m);
    if (enqueue(t, tag, 0, b, n, 1, &seq)) {
        pthread_mutex_unlock(&t->m);
        return -1;
    }
    /* writes for now go in order (their seq), so the last one done says whether ours is */
    while (t->last_done_seq_now < seq && !t->stop)
        if (pthread_cond_timedwait(&t->done, &t->m, &ts) == ETIMEDOUT) {
            r = -1;
            errno = ETIMEDOUT;
            break;
        }
    if (!r && t->last_done_seq_now >= seq && out)
        *out = t->last_now;
    pthread_mutex_unlock(&t->m);
    return r;
}

int mf_take(struct mf_thread *t, struct mf_stamp *out, int max)
{
    int k = 0;
    pthread_mutex_lock(&t->m);
    while (k < max && t->ring_n) {
        out[k++] = t->ring[t->ring_head];
        t->ring_head = (t->ring_head + 1) % t->cfg.capacity;
        t->ring_n--;
    }
    pthread_mutex_unlock(&t->m);
    return k;
}

int mf_pending(struct mf_thread *t)
{
    int n;
    pthread_mutex_lock(&t->m);
    n = t->heap_n;
    pthread_mutex_unlock(&t->m);
    return n;
}

void mf_info(struct mf_thread *t, struct mf_info *out)
{
    clockid_t cid;
    struct timespec ts;
    pthread_mutex_lock(&t->m);
    *out = t->info;
    pthread_mutex_unlock(&t->m);
    if (pthread_getcpuclockid(t->thread, &cid) == 0 && clock_gettime(cid, &ts) == 0)
        out->cpu_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void mf_stop(struct mf_thread *t, struct mf_info *final)
{
    pthread_mutex_lock(&t->m);
    if (!t->stop) {
        t->stop = 1;
        pthread_cond_broadcast(&t->cv);
        pthread_cond_broadcast(&t->done);
        pthread_mutex_unlock(&t->m);
        pthread_join(t->thread, NULL);
        pthread_mutex_lock(&t->m);
    }
    if (final)
        *final = t->info;
    pthread_mutex_unlock(&t->m);
}

void mf_free(struct mf_thread *t)
{
    mf_stop(t, NULL);
    pthread_mutex_destroy(&t->m);
    pthread_cond_destroy(&t->cv);
    pthread_cond_destroy(&t->done);
    free(t->pool);
    free(t->heap);
    free(t->free_list);
    free(t->ring);
    free(t);
}
