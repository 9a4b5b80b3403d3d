/*
 * A wire between the two nodes' ports, as the co-simulation keeps it (cosim.c) and the records of the
 * wired ports read it (vcd.c, exectrace.c: their caller hands them cosim's wires, so neither reaches up
 * into the co-simulation that calls their hooks).
 */
#ifndef MMBENCH_WIRE_H
#define MMBENCH_WIRE_H

#include <stdint.h>

#include "node.h"

struct wire {
    int src, dst;
    struct node_pin src_pin, dst_pin; /* as the nodes' boards have them (node.h: pins) */
    int dst_in;    /* the destination's handle of its input (node.h: input) */
    int group;
    int level;     /* level the destination sees */
    int src_level; /* level the source drives */
    const char *vcd_name;
    int index;              /* bit within its group: timecode 0..7, event 0..3 (3: the strobe) */
    uint64_t stuck_until;   /* a stuck wire (faults.c): the destination sees the stuck level until then */
};

#define NWIRES 12

#endif
