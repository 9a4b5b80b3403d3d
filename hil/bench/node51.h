/*
 * The 8051 profiler node (--profiler IMAGE.ihx, or --profiler-kind 8051): the paper's 87C51 profiler
 * image on ucsim's 8051 core (mcs51/mcs51.h) as the bench's profiler, beside the executor's simavr core,
 * behind the node interface (node.h; node51.c says how it is stepped and wired). Built only where
 * tools/ucsim.sh built build/ucsim (MMBENCH_MCS51); without it node51_built() is 0, an 8051 profiler is
 * refused with one line (main.c) and node51_load refuses too.
 */
#ifndef MMBENCH_NODE51_H
#define MMBENCH_NODE51_H

#include "node.h"

#define NODE51_HZ 11059200ull /* the 87C51's crystal (11.0592 MHz: 9600 baud exactly) */

int node51_built(void);                /* this mmbench has the 8051 core */
int node51_is_image(const char *path); /* an Intel HEX name (.ihx, .hex): the 8051's */
struct node *node51_load(const char *path); /* the profiler node; dies with one line when it cannot */

#endif
