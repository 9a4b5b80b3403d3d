/*
 * --trace FILE: a text record of what crossed the bench's boundaries, one line each, with the cycle
 * it happened at, for determinism checks and tests:
 *   W <cycle> <wire> <level>      a wired pin changed at the destination
 *   I <cycle> <node> <hex>        a host byte entered the MCU (its stop bit ended)
 *   O <cycle> <node> <hex>        an MCU byte is complete at the host (its stop bit ended)
 *   R <cycle> <node> <cause>      a reset: watchdog, or open (--arduino: the host opened the node's port)
 * Cycles are global (nominal 16 MHz): with a crystal offset (--ppm-*, cosim.h) a node's cycle is
 * converted, rounded up; at 0 ppm the nodes' cycles and global cycles are one.
 */
#ifndef MMBENCH_TRACE_H
#define MMBENCH_TRACE_H

#include <stdio.h>

/* the open trace, or NULL: tested at every line, so it is a plain pointer rather than a call */
extern FILE *trace_out;

#define TRACE(...)                                                                                 \
    do {                                                                                           \
        if (trace_out)                                                                             \
            fprintf(trace_out, __VA_ARGS__);                                                       \
    } while (0)

void trace_open(const char *path); /* dies if it cannot; PATH appears, whole, at trace_close (safefile.h) */
void trace_close(void);

#endif
