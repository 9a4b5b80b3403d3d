/*
 * Timed actions: what a command leaves to happen at a later virtual time (a reset at a given time, the
 * end of a cut, of a hang-up, of a stuck wire). The main loop runs each at its cycle, in every mode
 * (paced, unpaced, lockstep), so a run with the same commands at the same cycles stays the same.
 */
#ifndef MMBENCH_ACTIONS_H
#define MMBENCH_ACTIONS_H

#include <stdint.h>

#include "bench.h"

/* what an action does at its cycle `now` (global), with the argument it was added with */
typedef void (*action_fn)(int arg, uint64_t now);

int actions_add(uint64_t at, action_fn fn, int arg); /* 0, or -1: the table is full */
uint64_t actions_next(void);                         /* cycle of the next one (NEVER: none) */
void actions_run(uint64_t now);                      /* those due by `now` */

#endif
