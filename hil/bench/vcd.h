/*
 * VCD trace of the wired ports (GTKWave, PulseView), written by the bench rather than by simavr so
 * that both cores' changes carry their exact cycle. One time unit per CPU cycle: `$timescale 62500 ps`,
 * times in cycles. A viewer samples a VCD at 1 / timescale: the former `100ps` (625 units a cycle) made
 * sigrok expand 2 s of bench time into 19.5 billion samples at 10 GHz; 62500 ps is the clock's own
 * 16 MHz. IEEE 1364 lists only 1, 10 and 100 as multipliers; sigrok and GTKWave read 62500 (measured:
 * docs/bench.md, "VCD of the wired ports"). With a crystal offset (cosim.h) the times are global
 * (nominal 16 MHz) cycles, a change at the destination's cycle converted, rounded up.
 */
#ifndef MMBENCH_VCD_H
#define MMBENCH_VCD_H

#include <stdint.h>
#include <stdio.h>

#include "wire.h"

/* The file is made through safefile.c: PATH appears, whole, when the trace is closed. */
/* `wires`: the co-simulation's (cosim_wires()), their names and the levels they start the record with */
int vcd_open(const char *path, uint64_t cycle, const struct wire wires[NWIRES]); /* 0, or -1 if the file cannot be written */
/* a file the caller opened with sf_open (commands.c) */
void vcd_start(FILE *f, const char *path, uint64_t cycle, const struct wire wires[NWIRES]);
void vcd_value(int wire, int level, uint64_t cycle);
void vcd_close(uint64_t cycle); /* the end time written (the current cycle), then committed (sf_commit) */
int vcd_is_open(void);
const char *vcd_path(void); /* the last file opened ("" if none) */

#endif
