/*
 * The parent's watch: the bench must end when the process that started it is gone, whatever the
 * signal: a SIGKILLed `mmrig run` otherwise left a paced bench at SCHED_FIFO holding
 * /dev/cpu_dma_latency, or a lockstep bench idle in poll, until someone killed it by hand.
 *
 * How: the parent (mmhil's Bench) makes a pipe, hands the bench the read end (--parent-fd FD) and
 * keeps the write end to itself (close-on-exec, so no other program it starts holds it). The bench
 * never reads a byte from it; EOF comes when the last write end is closed, which the kernel does
 * when the parent process ends, however it ended. A thread of our own waits for it in poll(), then
 * sets bench_stop and sends SIGTERM to the main thread: a wait there (lockstep's poll for a grant,
 * paced mode's ppoll) ends at once, and the bench ends as after the stop command, its files and
 * final status written.
 *
 * Why not prctl(PR_SET_PDEATHSIG, SIGTERM): the signal comes when the parent *thread* that forked the
 * bench exits, not its process. Bench is started from worker threads (the GUI's connect thread, a
 * sweep's point), which end while their process and its use of the bench go on. A pipe's write end
 * belongs to the process. It also closes the race PDEATHSIG needs a getppid() check for: a parent that
 * died before this watch began has closed its end already, and the first poll() reads EOF.
 *
 * The caveat: a process the parent forks without exec inherits the write end too, and the bench
 * then lives until that one has ended as well (mmrig's child processes are spawned, not forked).
 */
#define _GNU_SOURCE
#include "parent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

volatile sig_atomic_t parent_gone;

static int watch_fd = -1;
static pthread_t main_thread;
static pid_t parent_pid; /* the process that started the bench, as it was when the watch began */

int parent_fd_option(const char *opt, const char *v)
{
    char *end;
    long fd = strtol(v, &end, 10);
    if (end == v || *end || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0)
        die("%s: '%s' is not an open file descriptor (the read end of the parent's pipe)", opt, v);
    return (int)fd;
}

static void *watch(void *arg)
{
    char c;
    (void)arg;
    for (;;) {
        struct pollfd p = {watch_fd, POLLIN, 0};
        ssize_t n;
        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break; /* cannot watch any more: treat as gone rather than outlive the parent unseen */
        }
        n = read(watch_fd, &c, 1); /* POLLHUP or POLLIN: EOF reads 0; a stray byte is dropped */
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            break;
    }
    parent_gone = 1;
    bench_stop = 1;
    pthread_kill(main_thread, SIGTERM); /* its handler sets bench_stop; the point is the EINTR */
    return NULL;
}

void parent_watch_start(int fd)
{
    pthread_t t;
    sigset_t all, old;
    watch_fd = fd;
    parent_pid = getppid();
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    main_thread = pthread_self();
    /* every signal blocked in the watcher (it inherits the mask), so SIGTERM and SIGINT reach the main
     * thread's waits, not this one */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&t, NULL, watch, NULL))
        die("cannot start the parent's watch: %s", strerror(errno));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_detach(t);
}

/* The folder a Python parent made for this bench (hil/mmhil/rundirs.py): its owner.pid names the parent. A
 * killed parent (a SIGKILLed Dask worker running a sweep's point) never ran its Bench.close, and the next
 * Bench.start that would sweep it may never come on that machine. Only a folder whose owner.pid names the
 * pid this bench's parent had is touched: a folder the user gave, or anyone else's, is left as it is. */
void parent_remove_run_dir(const char *run_dir)
{
    static const char *const records[] = {"final_status.json", "bench.log", "owner.pid"};
    char path[600];
    FILE *f;
    long owner = -1;
    size_t i;
    if (!parent_gone || parent_pid <= 1)
        return;
    snprintf(path, sizeof path, "%s/owner.pid", run_dir);
    f = fopen(path, "re");
    if (!f)
        return;
    if (fscanf(f, "%ld", &owner) != 1)
        owner = -1;
    fclose(f);
    if (owner != (long)parent_pid)
        return;
    for (i = 0; i < sizeof records / sizeof records[0]; i++) { /* owner.pid last: the folder is ours until then */
        snprintf(path, sizeof path, "%s/%s", run_dir, records[i]);
        unlink(path);
    }
    rmdir(run_dir); /* not empty (a file asked for there): kept, and rundirs.py has no owner record to go by */
}
