/*
 * What every part of the bench shares: the clock, the node names, logging and the text buffer the
 * JSON replies are built in. The parts (one file each) and how they fit together: main.c.
 */
#ifndef MMBENCH_BENCH_H
#define MMBENCH_BENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define F_CPU 16000000ull
#define NEVER UINT64_MAX

enum { PROFILER = 0, EXECUTOR = 1, NNODES = 2 };
extern const char *const node_names[NNODES];

int parse_node(const char *s); /* node id, or -1 */

/* Set by the stop command and by SIGINT/SIGTERM/SIGHUP (main.c): the main loop ends. volatile
 * sig_atomic_t: a signal handler writes it while the loop reads it. */
extern volatile sig_atomic_t bench_stop;
/* The run directory (main.c): the ptys' links, the control socket, files a command names (its
 * status member "run_dir") */
extern char bench_run_dir[400];

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t mono_ns(void);              /* CLOCK_MONOTONIC */
/* What thread `tid` runs at now, as Linux says it: "fifo 11", "rr 5", "nice -15", "other" (read back, so a
 * change made from outside, RealtimeKit's on the host's behalf, shows too) */
void thread_sched_text(int tid, char *out, size_t n);
uint64_t secs_to_cycles(double s);   /* virtual seconds to cycles (negative: 0) */

/* growable text buffer for JSON replies */
struct sbuf {
    char *p;
    size_t n, cap;
};
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The one way a string goes into JSON: appends it quoted and escaped (", \, control characters;
 * bytes that are not UTF-8 as \u00XX), so a word echoed from a command or a path with a quote in it
 * never breaks a reply. */
void sb_json_str(struct sbuf *b, const char *s);
/* An error reply, {"ok":false,"error":"..."} and a newline: the message (which may hold words from the
 * command, cut at 767 bytes) as one escaped JSON string. */
void sb_error(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
