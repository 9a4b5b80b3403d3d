/*
 * Host input on the host clock (paced mode): a thread of its own reads the nodes' host sides (the line
 * socket's connection, or the pty) as bytes arrive and stamps them with CLOCK_MONOTONIC; the simulation puts each byte on its node's line at
 * the virtual moment of its stamp (hostin.c says how, and what it records).
 */
#ifndef MMBENCH_HOSTIN_H
#define MMBENCH_HOSTIN_H

#include <stdint.h>

#include "bench.h"

/* One read of a host side: n bytes that reached the bench together, as the record keeps it. */
struct hostin_entry {
    uint64_t gen;      /* the generation of the host stream it came from (uart_generation) */
    uint64_t offset;   /* bytes read from that stream before these: the host's own write count */
    uint32_t n;
    uint64_t stamp_ns; /* host clock when the stamping thread woke for them, from wall_start */
    uint64_t moved_ns; /* how far after its stamp the simulation had to put the first byte */
    uint64_t cycle;    /* the global cycle the bytes were queued at (the stamp's, or now if moved): a replay's */
    uint64_t baud;     /* the rate the host had set on its port when it wrote them (0: --baud) */
    uint8_t node;
};

void hostin_start(void);  /* paced mode: the stamping thread, after pacing_start and the host set-up */
void hostin_stop(void);
int hostin_running(void);
/* The simulation's side, at `now` (global cycles): the bytes stamped so far go into the node's input
 * queue at their moments (or at `now` if the simulation is already past one: recorded as moved). */
void hostin_take(int id, uint64_t now);
/* Around every change of a node's host side (hang-up, re-plug, a connection taking the line or letting it
 * go): the thread reads a descriptor only while it is the node's. */
void hostin_lock(void);
void hostin_unlock(void);
/* "inputs":[[node,gen,offset,n,stamp_s,moved_us],...] with stamps at or after `since_ns` (from
 * wall_start), then ,"inputs_dropped":N */
void hostin_record_json(struct sbuf *b, uint64_t since_ns);
void hostin_status_json(struct sbuf *b); /* "hostin":{...}, for the status */

#endif
