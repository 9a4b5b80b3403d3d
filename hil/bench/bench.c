/* Helpers every part of the bench uses (see bench.h). */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const node_names[NNODES] = {"profiler", "executor"};

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
