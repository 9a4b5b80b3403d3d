/*
 * A line's reading thread in C (readthread.h).
 *
 * Why. Normal mode's naive PC places every FIRE by when the profiler's TIMECODE frames reached it: the paper's
 * "timecode thread". pyserial's reader is a Python thread, and it stamps a frame only once it holds the
 * interpreter's lock and the CPU: beside `stress-ng --cpu 1` on the project's 2-vCPU VM, at 1 kHz, TIMECODE frames
 * were stamped a median 19.8 ms (p99 468 ms) after their tick began, and the run's tick estimate swung by tens of
 * milliseconds from one frame to the next. That was the interpreter's, not the PC's. This thread needs nothing but
 * the CPU: it sleeps in poll(2) on the line's descriptor, and as it wakes it takes CLOCK_MONOTONIC first, reads
 * what is there and keeps the bytes with that stamp, for the Python side to decode when it gets to it. At the
 * firing thread's priority (`-p`) it is the PC's timecode thread as cyclictest would have it.
 *
 * How. Bytes go into a ring and each read into a ring of chunks (its stamp and its length), under one mutex with
 * priority inheritance (the taker holds it for a copy). A full ring is never dropped from: the thread waits until
 * the caller has taken some (what a kernel buffer would do). A read of a SOCK_SEQPACKET socket (a bench's line
 * socket) returns one whole packet, which stays one chunk. The end of the line (a read of 0 bytes: the far end
 * closed; EIO: a pty hung up) is kept in `err` for the caller, after the bytes before it. A pipe wakes the thread
 * to stop. Nothing is allocated once it runs.
 */
#define _GNU_SOURCE
#include "readthread.h"
#include "monotime.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define READ_MAX 4096 /* one read: a line socket's largest packet (the bench's LINESOCK_MAX) */

struct mr_thread {
    int fd, priority;
    int wake[2];
    pthread_t thread;
    pthread_mutex_t m;
    pthread_cond_t changed; /* bytes came, the line ended, or room was made */
    uint8_t *buf;
    uint32_t cap, head, n;
    struct mr_chunk *chunks;
    int ccap, chead, cn;
    int stop, err, ready;
    struct mr_info info;
};

/* waits (under m) until `need` bytes and a chunk fit, or stop; 0 if they do */
static int wait_room(struct mr_thread *t, uint32_t need)
{
    while (!t->stop && (t->cap - t->n < need || t->cn == t->ccap)) {
        t->info.waits_full++;
        pthread_cond_wait(&t->changed, &t->m);
    }
    return t->stop;
}

static void *run(void *arg)
{
    struct mr_thread *t = arg;
    uint8_t tmp[READ_MAX];
    pthread_mutex_lock(&t->m);
    t->info.tid = (int)syscall(SYS_gettid);
    if (t->priority > 0) {
        struct sched_param sp = {.sched_priority = t->priority};
        t->info.sched_err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    }
    {
        struct sched_param sp;
        int policy;
        if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0) {
            t->info.policy = policy;
            t->info.prio = sp.sched_priority;
        }
    }
    t->ready = 1;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->m);
    for (;;) {
        struct pollfd p[2] = {{t->fd, POLLIN, 0}, {t->wake[0], POLLIN, 0}};
        int64_t stamp;
        ssize_t k;
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        stamp = mono_ns(); /* first thing after the wake: the stamp of whatever is there */
        if (p[1].revents)
            break; /* stop */
        if (!p[0].revents)
            continue;
        k = read(t->fd, tmp, sizeof tmp);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        pthread_mutex_lock(&t->m);
        if (k <= 0) { /* the end of the line: after the bytes before it */
            t->err = k == 0 ? EPIPE : errno;
            pthread_cond_broadcast(&t->changed);
            pthread_mutex_unlock(&t->m);
            break;
        }
        if (wait_room(t, (uint32_t)k)) {
            pthread_mutex_unlock(&t->m);
            break;
        }
        for (ssize_t i = 0; i < k; i++)
            t->buf[(t->head + t->n + (uint32_t)i) % t->cap] = tmp[i];
        t->n += (uint32_t)k;
        t->chunks[(t->chead + t->cn) % t->ccap] = (struct mr_chunk){stamp, (uint32_t)k};
        t->cn++;
        t->info.reads++;
        t->info.bytes += (uint64_t)k;
        pthread_cond_broadcast(&t->changed);
        pthread_mutex_unlock(&t->m);
    }
    return NULL;
}

struct mr_thread *mr_start(int fd, int priority, int capacity)
{
    struct mr_thread *t = calloc(1, sizeof *t);
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    int err;
    if (!t)
        return NULL;
    t->fd = fd;
    t->priority = priority;
    t->cap = capacity < READ_MAX * 4 ? READ_MAX * 4 : (uint32_t)capacity;
    t->ccap = (int)(t->cap / 8);
    t->buf = malloc(t->cap);
    t->chunks = calloc((size_t)t->ccap, sizeof *t->chunks);
    if (!t->buf || !t->chunks || pipe2(t->wake, O_CLOEXEC | O_NONBLOCK)) {
        free(t->buf), free(t->chunks), free(t);
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT); /* the taker lends the thread its priority back */
    pthread_mutex_init(&t->m, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->changed, &ca);
    pthread_condattr_destroy(&ca);
    err = pthread_create(&t->thread, NULL, run, t);
    if (err) {
        close(t->wake[0]), close(t->wake[1]);
        free(t->buf), free(t->chunks), free(t);
        errno = err;
        return NULL;
    }
    pthread_mutex_lock(&t->m);
    while (!t->ready)
        pthread_cond_wait(&t->changed, &t->m);
    pthread_mutex_unlock(&t->m);
    return t;
}

int mr_wait(struct mr_thread *t, int64_t timeout_ns)
{
    int64_t end = mono_ns() + timeout_ns;
    struct timespec ts = {(time_t)(end / 1000000000LL), (long)(end % 1000000000LL)};
    int r;
    pthread_mutex_lock(&t->m);
    while (!t->cn && !t->err && !t->stop)
        if (pthread_cond_timedwait(&t->changed, &t->m, &ts) == ETIMEDOUT)
            break;
    r = t->cn ? 1 : t->err ? -1 : 0;
    pthread_mutex_unlock(&t->m);
    return r;
}

int mr_take(struct mr_thread *t, uint8_t *buf, uint32_t cap, struct mr_chunk *chunks, int max_chunks)
{
    int k = 0;
    uint32_t used = 0;
    pthread_mutex_lock(&t->m);
    while (k < max_chunks && t->cn) {
        struct mr_chunk c = t->chunks[t->chead];
        if (used + c.n > cap)
            break;
        for (uint32_t i = 0; i < c.n; i++)
            buf[used + i] = t->buf[(t->head + i) % t->cap];
        t->head = (t->head + c.n) % t->cap;
        t->n -= c.n;
        used += c.n;
        chunks[k++] = c;
        t->chead = (t->chead + 1) % t->ccap;
        t->cn--;
    }
    if (k)
        pthread_cond_broadcast(&t->changed); /* room again */
    pthread_mutex_unlock(&t->m);
    return k;
}

int mr_error(struct mr_thread *t)
{
    int e;
    pthread_mutex_lock(&t->m);
    e = t->cn ? 0 : t->err; /* (the bytes before the end are taken first) */
    pthread_mutex_unlock(&t->m);
    return e;
}

int mr_unread(struct mr_thread *t)
{
    struct pollfd p = {t->fd, POLLIN, 0};
    int n;
    pthread_mutex_lock(&t->m);
    n = t->cn;
    pthread_mutex_unlock(&t->m);
    return n || (poll(&p, 1, 0) > 0 && (p.revents & POLLIN));
}

void mr_info(struct mr_thread *t, struct mr_info *out)
{
    pthread_mutex_lock(&t->m);
    *out = t->info;
    pthread_mutex_unlock(&t->m);
}

void mr_stop(struct mr_thread *t)
{
    char one = 1;
    pthread_mutex_lock(&t->m);
    t->stop = 1;
    pthread_cond_broadcast(&t->changed);
    pthread_mutex_unlock(&t->m);
    if (write(t->wake[1], &one, 1) < 0) { /* (the pipe is empty: it takes the byte) */
    }
    pthread_join(t->thread, NULL);
    close(t->wake[0]);
    close(t->wake[1]);
    pthread_mutex_destroy(&t->m);
    pthread_cond_destroy(&t->changed);
    free(t->buf);
    free(t->chunks);
    free(t);
}
