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
/* After a parent that is gone: the run folder it made for this bench (its owner.pid, written by mmhil's Bench,
 * names that parent) has nobody left to remove it, so the bench removes its records (owner.pid, bench.log,
 * final_status.json) and the folder if nothing else is left in it. Any other folder is left alone. */
void parent_remove_run_dir(const char *run_dir);

#endif
