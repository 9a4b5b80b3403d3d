/* Helpers every part of the bench uses (see bench.h). */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

const char *const node_names[NNODES] = {"profiler", "executor"};

volatile sig_atomic_t bench_stop;
char bench_run_dir[400];

int parse_node(const char *s)
{
    int i;
    for (i = 0; i < NNODES; i++)
        if (!strcmp(s, node_names[i]))
            return i;
    return -1;
}

static void vlog(const char *fmt, va_list ap)
{
    fprintf(stderr, "mmbench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
    exit(2);
}

void logmsg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void thread_sched_text(int tid, char *out, size_t n)
{
    struct sched_param sp;
    int policy = sched_getscheduler(tid), nice;
    if ((policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO || (policy & ~SCHED_RESET_ON_FORK) == SCHED_RR) {
        sched_getparam(tid, &sp);
        snprintf(out, n, "%s %d", (policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ? "fifo" : "rr", sp.sched_priority);
        return;
    }
    errno = 0;
    nice = getpriority(PRIO_PROCESS, (id_t)tid);
    if (!errno && nice)
        snprintf(out, n, "nice %d", nice);
    else
        snprintf(out, n, "other");
}

uint64_t secs_to_cycles(double s)
{
    return s <= 0 ? 0 : (uint64_t)llround(s * (double)F_CPU);
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->n;
        int k;
        va_start(ap, fmt);
        k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0)
            return;
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            die("out of memory");
    }
}

/* length of the UTF-8 sequence at p (2..4), or 0 if it is not one */
static int utf8_len(const unsigned char *p)
{
    int n, i;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        n = 3;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        n = 4;
    else
        return 0;
    for (i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

void sb_json_str(struct sbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    sb_printf(b, "\"");
    while (*p) {
        int n;
        if (*p == '"' || *p == '\\') {
            sb_printf(b, "\\%c", *p++);
        } else if (*p < 0x20 || *p == 0x7F) {
            sb_printf(b, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            sb_printf(b, "%c", *p++);
        } else if ((n = utf8_len(p))) {
            sb_printf(b, "%.*s", n, (const char *)p);
            p += n;
        } else {
            sb_printf(b, "\\u%04x", *p++); /* not UTF-8: the byte as a Latin-1 character */
        }
    }
    sb_printf(b, "\"");
}

void sb_error(struct sbuf *b, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sb_printf(b, "{\"ok\":false,\"error\":");
    sb_json_str(b, msg);
    sb_printf(b, "}\n");
}
