/*
 * VCD trace of the wired ports (GTKWave, PulseView), written by the bench rather than by simavr so
 * that both cores' changes carry their exact cycle. Timescale 100 ps: 62.5 ns per cycle is 625 units.
 */
#ifndef MMBENCH_VCD_H
#define MMBENCH_VCD_H

#include <stdint.h>
#include <stdio.h>

int vcd_open(const char *path, uint64_t cycle); /* 0, or -1 if the file cannot be written */
void vcd_start(FILE *f, const char *path, uint64_t cycle); /* a file the caller opened (control.c) */
void vcd_value(int wire, int level, uint64_t cycle);
void vcd_close(void);
int vcd_is_open(void);
const char *vcd_path(void); /* the last file opened ("" if none) */

#endif
