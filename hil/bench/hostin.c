/*
 * Host input on the host clock (paced mode).
 *
 * Why. A byte the PC writes is part of what a paced run measures: in normal mode its FIRE's moment is
 * the PC's result, in mixed mode its SCHEDULE's moment decides whether the executor can still fire on
 * time. Before, the simulation read the ptys itself at its sync points and put a byte on the line at the
 * virtual moment it had then reached. A host stall of the simulation thread (a few ms, several times a
 * second on a busy 2-vCPU VM) then moved input: the thread came back at the virtual moment where it had
 * frozen and injected the byte there, up to a stall's length too early. So every event a stall came near
 * had to be thrown away (docs/bench.md, "Validity by cause").
 *
 * How. One thread does nothing but wait in poll() on the nodes' host sides (the line socket's connection
 * where one holds the line, else the pty's master: uart_host.c); when it wakes it takes
 * CLOCK_MONOTONIC first, reads what is there and keeps the bytes with that stamp in a ring per node
 * (with the rate the host had set: read from the pty's termios right after the bytes, or the one the
 * socket's packet carries). It runs one
 * SCHED_FIFO priority above the simulation (11) where the host grants real-time scheduling, so a busy
 * simulation does not delay its stamps. The simulation takes the stamped bytes at every sync point and
 * puts each on its line at the virtual moment of its stamp (virtual = stamp - wall_start): paced, the
 * simulation is never more than the quantum (20 us) ahead of wall time, so that moment is in its future
 * (it was stalled: the byte waits for its moment while the simulation catches up) or at most a quantum in
 * its past (then the byte enters at once, and how far it was moved is recorded). A stall of the
 * simulation thread therefore moves no input at all; what remains is the hop from the PC's write to the
 * stamping thread, which the scheduler measures against its own write moments: through the line socket
 * the writer's own call wakes this thread; through a pty a kworker must run first (milliseconds on a
 * loaded host: linesock.c).
 *
 * Record. Every read is kept (a ring of HOSTIN_RECORD entries, older ones counted as dropped): node,
 * the host stream's generation, the offset of its first byte in the host's byte stream (bytes read from
 * that stream before: the PC's own write count, since neither a pty nor the socket loses anything from
 * host to bench), count, stamp and how
 * far it was moved. The control channel's `timing` command returns it; the scheduler looks up each
 * event's FIRE or SCHEDULE by its offset (mmsched/verdict/validity.py).
 *
 * Threads. The ring and the descriptors are shared under one mutex (priority inheritance, held for a
 * read() or a copy: microseconds). The simulation changes a node's descriptor (hang-up, re-plug) only
 * under hostin_lock() and then wakes the thread (eventfd), which polls the descriptors anew; it reads a
 * descriptor only while it is still the node's, so a number reused by another file is never read.
 * Bytes read from a pty that was hung up before the simulation took them are dropped (the adapter was
 * unplugged with them in flight) and counted.
 */
#define _GNU_SOURCE
#include "hostin.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arduino.h"
#include "cosim.h"
#include "linesock.h"
#include "pacing.h"
#include "uart_bridge.h"

#define HOSTIN_RING 65536   /* bytes per node waiting for the simulation (it takes them every <= 200 us) */
#define HOSTIN_READS 4096   /* reads per node waiting for it */
#define HOSTIN_RECORD 65536 /* reads kept for `timing` (a 200-event run makes a few hundred) */

struct pending_read {
    uint64_t stamp_ns, gen, baud;
    uint32_t n;  /* 0: no bytes: the host set its rate (a socket's 'B'), or closed (`closed`) */
    int closed;  /* the host closed the connection `gen` (a socket): the line goes back to the pty */
};

/* one node's ring: written by the stamping thread, emptied by the simulation, under `lock` */
struct node_ring {
    uint8_t bytes[HOSTIN_RING];
    size_t head, n;
    struct pending_read reads[HOSTIN_READS];
    size_t rhead, rn;
};

static struct {
    int running;
    pthread_t thread;
    pthread_mutex_t lock;
    int wake_fd;          /* eventfd: stop, or a node's descriptor changed, or its ring has room again */
    volatile int stopping; /* set under lock by hostin_stop, read by the thread after a wake */
    struct node_ring ring[NNODES];
    char sched[32];       /* what the thread was granted at its start */
    int tid;              /* its kernel thread id (the host may raise it later: RealtimeKit names it so) */
    sem_t started;        /* posted once the thread has its scheduling and its tid: hostin_start waits for it, so
                           * a status never names tid 0 (RealtimeKit took 0 for the asking thread) */
    /* the record, and figures for the status (simulation thread only) */
    struct hostin_entry record[HOSTIN_RECORD];
    size_t rec_head, rec_n;
    uint64_t rec_dropped;
    uint64_t bytes, reads, moved_reads, moved_max_ns, stale_bytes, ring_full_waits;
} host_stamper = {.wake_fd = -1, .sched = "none"};

int hostin_running(void)
{
    return host_stamper.running;
}

void hostin_lock(void)
{
    if (host_stamper.running)
        pthread_mutex_lock(&host_stamper.lock);
}

void hostin_unlock(void)
{
    if (!host_stamper.running)
        return;
    pthread_mutex_unlock(&host_stamper.lock);
    {
        uint64_t one = 1;
        if (write(host_stamper.wake_fd, &one, sizeof one) < 0) { /* (the counter only saturates: a wake is pending) */
        }
    }
}

/* ---- the stamping thread --------------------------------------------------------------------- */

/* what a read may take now: 0 when a whole socket packet might not fit (the thread then polls again in
 * 1 ms, after the simulation took some) */
static size_t room(const struct node_ring *r)
{
    return r->rn == HOSTIN_READS || HOSTIN_RING - r->n < LINESOCK_MAX ? 0 : HOSTIN_RING - r->n;
}

static void push_read(struct node_ring *r, const uint8_t *buf, size_t k, struct pending_read p)
{
    size_t i;
    for (i = 0; i < k; i++)
        r->bytes[(r->head + r->n + i) % HOSTIN_RING] = buf[i];
    r->n += k;
    r->reads[(r->rhead + r->rn) % HOSTIN_READS] = p;
    r->rn++;
}

/* reads what node `id`'s host side holds, stamped `t`; under the lock. 0: the descriptor is done with
 * (a connection that closed: not polled again) */
static int read_node(int id, int fd, uint64_t t)
{
    struct node_ring *r = &host_stamper.ring[id];
    uint8_t buf[LINESOCK_MAX];
    uint64_t stamp = t - pacing.wall_start_ns, gen = uart_generation(id);
    ssize_t k;
    if (uart_host_fd(id) != fd || !room(r))
        return 1; /* re-plugged or hung up meanwhile, or full: the wake that follows polls anew */
    if (!uart_host_is_socket(id)) {
        size_t want = room(r) < sizeof buf ? room(r) : sizeof buf;
        k = read(fd, buf, want);
        if (k > 0)
            push_read(r, buf, (size_t)k, (struct pending_read){stamp, gen, uart_pty_baud(fd), (uint32_t)k, 0});
        return 1;
    }
    /* a socket: every packet waiting (each a write of the host's, all there at the wake) */
    while (room(r)) {
        uint32_t baud = 0;
        k = linesock_recv(fd, buf, sizeof buf, &baud);
        if (k == -3)
            continue; /* malformed: counted, dropped */
        if (k == -1)
            return 1;
        if (k == -2) {
            push_read(r, buf, 0, (struct pending_read){stamp, gen, 0, 0, 1});
            return 0;
        }
        push_read(r, buf, (size_t)k, (struct pending_read){stamp, gen, baud, (uint32_t)k, 0});
    }
    return 1;
}

/* One priority above the simulation where it is SCHED_FIFO; else as high a nice as allowed. */
static void set_priority(void)
{
    struct sched_param sp = {.sched_priority = 11};
    host_stamper.tid = (int)syscall(SYS_gettid);
    prctl(PR_SET_NAME, (unsigned long)"mmbench-stamp", 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (!strncmp(pacing.host_sched, "fifo", 4) && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0) {
        snprintf(host_stamper.sched, sizeof host_stamper.sched, "fifo 11");
        return;
    }
    /* (the thread did not inherit the simulation's FIFO: SCHED_RESET_ON_FORK) */
    if (setpriority(PRIO_PROCESS, 0, -10) == 0)
        snprintf(host_stamper.sched, sizeof host_stamper.sched, "nice -10");
    else
        snprintf(host_stamper.sched, sizeof host_stamper.sched, "other");
}

static void *stamping_thread(void *arg)
{
    int bad[NNODES]; /* a descriptor that reported an error with nothing to read: not polled until it changes */
    (void)arg;
    set_priority();
    sem_post(&host_stamper.started);
    memset(bad, -1, sizeof bad);
    for (;;) {
        struct pollfd pfd[1 + NNODES];
        int fds[NNODES], i, n = 1, full = 0;
        uint64_t t;
        pthread_mutex_lock(&host_stamper.lock);
        if (host_stamper.stopping) {
            pthread_mutex_unlock(&host_stamper.lock);
            break;
        }
        pfd[0] = (struct pollfd){host_stamper.wake_fd, POLLIN, 0};
        for (i = 0; i < NNODES; i++) {
            int fd = cosim_present(i) ? uart_host_fd(i) : -1;
            fds[i] = -1;
            if (fd < 0 || fd == bad[i])
                continue;
            if (!room(&host_stamper.ring[i])) {
                full = 1; /* the simulation empties it within a slice: look again in 1 ms */
                continue;
            }
            fds[i] = fd;
            pfd[n++] = (struct pollfd){fd, POLLIN, 0};
        }
        if (full)
            host_stamper.ring_full_waits++;
        pthread_mutex_unlock(&host_stamper.lock);
        if (poll(pfd, (nfds_t)n, full ? 1 : -1) < 0 && errno != EINTR)
            break;
        t = mono_ns(); /* first thing after the wake: the stamp of whatever is there */
        if (pfd[0].revents & POLLIN) {
            uint64_t v;
            if (read(host_stamper.wake_fd, &v, sizeof v) < 0) { /* (nonblocking: another wake already took it) */
            }
        }
        pthread_mutex_lock(&host_stamper.lock);
        for (i = 1; i < n; i++) {
            int id, fd = pfd[i].fd;
            if (!pfd[i].revents)
                continue;
            for (id = 0; id < NNODES && fds[id] != fd; id++)
                ;
            if (id == NNODES)
                continue;
            if (!(pfd[i].revents & POLLIN) && uart_host_is_socket(id) && uart_host_fd(id) == fd)
                pfd[i].revents |= POLLIN; /* a closed connection: its end is read as a packet (-2) */
            if (!(pfd[i].revents & POLLIN) || !read_node(id, fd, t))
                bad[id] = fd; /* POLLERR/POLLHUP/POLLNVAL and nothing to read, or a connection's end: do not
                               * spin on it */
        }
        for (i = 0; i < NNODES; i++) /* a changed descriptor is polled again */
            if (bad[i] >= 0 && (!cosim_present(i) || uart_host_fd(i) != bad[i]))
                bad[i] = -1;
        pthread_mutex_unlock(&host_stamper.lock);
    }
    return NULL;
}

void hostin_start(void)
{
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&host_stamper.lock, &ma);
    pthread_mutexattr_destroy(&ma);
    host_stamper.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (host_stamper.wake_fd < 0)
        die("eventfd: %s", strerror(errno));
    host_stamper.stopping = 0;
    sem_init(&host_stamper.started, 0, 0);
    if (pthread_create(&host_stamper.thread, NULL, stamping_thread, NULL))
        die("cannot start the input stamping thread");
    while (sem_wait(&host_stamper.started) && errno == EINTR)
        ;
    host_stamper.running = 1;
}

void hostin_stop(void)
{
    uint64_t one = 1;
    if (!host_stamper.running)
        return;
    pthread_mutex_lock(&host_stamper.lock);
    host_stamper.stopping = 1;
    pthread_mutex_unlock(&host_stamper.lock);
    if (write(host_stamper.wake_fd, &one, sizeof one) < 0) { /* (a wake is pending already) */
    }
    pthread_join(host_stamper.thread, NULL);
    host_stamper.running = 0;
    close(host_stamper.wake_fd);
    host_stamper.wake_fd = -1;
}

/* ---- the simulation's side ------------------------------------------------------------------- */

static void record(const struct hostin_entry *e)
{
    if (host_stamper.rec_n == HOSTIN_RECORD) {
        host_stamper.rec_head = (host_stamper.rec_head + 1) % HOSTIN_RECORD;
        host_stamper.rec_n--;
        host_stamper.rec_dropped++;
    }
    host_stamper.record[(host_stamper.rec_head + host_stamper.rec_n) % HOSTIN_RECORD] = *e;
    host_stamper.rec_n++;
}

void hostin_take(int id, uint64_t now)
{
    struct node_ring *r = &host_stamper.ring[id];
    static uint8_t bytes[HOSTIN_RING];
    struct pending_read reads[64];
    size_t nr, nb, i, pos = 0, was_full;
    /* --arduino: a host open before these bytes resets the node first (the open came before its writes) */
    arduino_service(now);
    do {
        pthread_mutex_lock(&host_stamper.lock);
        was_full = !room(r);
        nr = r->rn < 64 ? r->rn : 64;
        for (i = 0, nb = 0; i < nr; i++) {
            reads[i] = r->reads[(r->rhead + i) % HOSTIN_READS];
            nb += reads[i].n;
        }
        for (i = 0; i < nb; i++)
            bytes[i] = r->bytes[(r->head + i) % HOSTIN_RING];
        r->rhead = (r->rhead + nr) % HOSTIN_READS;
        r->rn -= nr;
        r->head = (r->head + nb) % HOSTIN_RING;
        r->n -= nb;
        pthread_mutex_unlock(&host_stamper.lock);
        if (was_full && nr) {
            uint64_t one = 1; /* room again: the thread polls the pty again */
            if (write(host_stamper.wake_fd, &one, sizeof one) < 0) {
            }
        }
        for (i = 0, pos = 0; i < nr; i++) {
            const struct pending_read *p = &reads[i];
            uint64_t at = p->stamp_ns * (F_CPU / 1000000ull) / 1000ull; /* the stamp's virtual cycle */
            struct hostin_entry e = {p->gen, uart_in_read(id), p->n, p->stamp_ns, 0, 0, p->baud, (uint8_t)id};
            if (p->closed) {
                uart_host_closed(id, p->gen); /* (the bytes before its end were taken above) */
                continue;
            }
            if (p->gen != uart_generation(id)) {
                host_stamper.stale_bytes += p->n; /* read from a host side that was hung up (or let go) before we took it */
                pos += p->n;
                continue;
            }
            if (!p->n) {
                uart_take_host_bytes(id, at, NULL, 0, p->baud); /* the host set its rate */
                continue;
            }
            if (at < now) {
                /* the simulation ran ahead of the stamp (at most the quantum): the byte enters now */
                e.moved_ns = (now - at) * 1000ull / (F_CPU / 1000000ull);
                at = now;
                host_stamper.moved_reads++;
                if (e.moved_ns > host_stamper.moved_max_ns)
                    host_stamper.moved_max_ns = e.moved_ns;
            }
            e.cycle = at;
            uart_take_host_bytes(id, at, bytes + pos, p->n, p->baud);
            pos += p->n;
            host_stamper.bytes += p->n;
            host_stamper.reads++;
            record(&e);
        }
    } while (nr == 64);
    uart_arm(id);
}

void hostin_record_json(struct sbuf *b, uint64_t since_ns)
{
    size_t i;
    int first = 1;
    sb_printf(b, "\"inputs\":[");
    for (i = 0; i < host_stamper.rec_n; i++) {
        const struct hostin_entry *e = &host_stamper.record[(host_stamper.rec_head + i) % HOSTIN_RECORD];
        if (e->stamp_ns < since_ns)
            continue;
        sb_printf(b, "%s[\"%s\",%" PRIu64 ",%" PRIu64 ",%u,%.9f,%.3f,%" PRIu64 ",%" PRIu64 "]", first ? "" : ",",
                  node_names[e->node], e->gen, e->offset, e->n, (double)e->stamp_ns / 1e9, (double)e->moved_ns / 1000.0,
                  e->cycle, e->baud);
        first = 0;
    }
    sb_printf(b, "],\"inputs_dropped\":%" PRIu64, host_stamper.rec_dropped);
}

void hostin_status_json(struct sbuf *b)
{
    char now_sched[32] = "none";
    if (host_stamper.running && host_stamper.tid)
        thread_sched_text(host_stamper.tid, now_sched, sizeof now_sched); /* read back: a later change shows */
    sb_printf(b, "\"hostin\":{\"running\":%s,\"sched\":", host_stamper.running ? "true" : "false");
    sb_json_str(b, host_stamper.running ? now_sched : host_stamper.sched);
    sb_printf(b, ",\"sched_at_start\":");
    sb_json_str(b, host_stamper.sched);
    sb_printf(b, ",\"tid\":%d", host_stamper.tid);
    sb_printf(b, ",\"bytes\":%" PRIu64 ",\"reads\":%" PRIu64 ",\"moved_reads\":%" PRIu64 ",\"moved_max_us\":%.3f,"
                 "\"stale_bytes\":%" PRIu64 ",\"ring_full_waits\":%" PRIu64 ",\"record_dropped\":%" PRIu64 "},",
              host_stamper.bytes, host_stamper.reads, host_stamper.moved_reads, (double)host_stamper.moved_max_ns / 1000.0,
              host_stamper.stale_bytes, host_stamper.ring_full_waits, host_stamper.rec_dropped);
}
