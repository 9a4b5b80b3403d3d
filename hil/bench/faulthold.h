/*
 * What the bench's own injected faults held back: the host's bytes whose stop bit ended later than it
 * would have with no injected delay (`fault NODE in delay`), as runs of the host's stream. The bench
 * knows what it did to the line, so the scheduler can name the fault instead of blaming the system
 * under test for a SCHEDULE or a FIRE that arrived late (mmsched/verdict/injected.py reads the `injected`
 * command's reply).
 */
#ifndef MMBENCH_FAULTHOLD_H
#define MMBENCH_FAULTHOLD_H

#include <stdint.h>

#include "bench.h"

/* Host byte `offset` of pty generation `gen` on node `id` ended `held_cycles` (global) later than the
 * line with no injected delay would have ended it. */
void faulthold_note(int id, uint64_t gen, uint64_t offset, uint64_t held_cycles);
/* A node's host bytes still queued behind an injected delay when asked (the run's end): `n` bytes from
 * `first` of generation `gen`, held at least `held_cycles`; none if `n` is 0. The line's model knows
 * them (uart_queued_held), the caller asks it: this record stays below the line that notes into it. */
struct faulthold_queued {
    uint64_t gen, first, n, held_cycles;
};
/* "held_by_fault":[[node,gen,offset,n,held_max_us],...],"held_by_fault_dropped":N, the runs noted and
 * then each node's `queued` */
void faulthold_json(struct sbuf *b, const struct faulthold_queued queued[NNODES]);

#endif
