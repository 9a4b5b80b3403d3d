/*
 * One-node mode: one image alone, unpaced, with the other node's outputs played from a stimulus
 * file and the node's own outputs recorded in the trace (stimulus.c has both formats).
 */
#ifndef MMBENCH_STIMULUS_H
#define MMBENCH_STIMULUS_H

#include <stdint.h>

void stimulus_load(int id, const char *path); /* dies on a bad line */
void stimulus_start(int id, uint64_t itrace_cycles);
void stimulus_end(int id); /* the END line */

#endif
