/*
 * The parent's watch (--parent-fd FD): the bench ends, as on SIGTERM, when the process that started it
 * is gone, however it ended (SIGKILL included). parent.c says why a pipe and not PR_SET_PDEATHSIG.
 */
#ifndef MMBENCH_PARENT_H
#define MMBENCH_PARENT_H

#include <signal.h>

/* Set (with bench_stop) once the parent is gone: main.c says so in the log */
extern volatile sig_atomic_t parent_gone;

/* Parses --parent-fd's value: an open descriptor, else one line and exit 2 (die) */
int parent_fd_option(const char *opt, const char *v);
/* Watches FD from a thread of its own, from now on; call after the signal handlers are set (it signals the
 * calling thread, the main loop's, to end a wait). */
void parent_watch_start(int fd);

#endif
