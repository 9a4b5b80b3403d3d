/*
 * Timecode extension (SPEC.md section 7, the paper's "timecode thread"): the profiler shows an 8-bit
 * timecode on a port; the executor keeps a 32-bit count whose low byte is the last value it accepted.
 *
 * Reading a port while it changes. The profiler writes all 8 bits with one port write, but on a real
 * board the bits do not settle at exactly the same instant, and a pin-change interrupt fires on the
 * first bit that moves. Two defences:
 *  1. ex_tc_read_stable() reads the port until two consecutive reads agree (bounded number of reads):
 *     a half-changed value is not stable for two reads in a row unless the edge skew exceeds a read.
 *  2. ex_tc_update() accepts only steps of +0 (no change: a bounce or a second pin-change interrupt of
 *     the same edge) and +1 (the next tick). Anything else is a glitch: counted (COUNTERS.node_d) and
 *     not applied. A glitch value is remembered as a candidate; if the next distinct value read is the
 *     candidate or candidate + 1, the timecode really jumped (profiler reset, missed ticks) and the
 *     executor resynchronises to it (adding the whole difference mod 256, as SPEC.md section 7 says).
 *     A glitch followed by the old value or old + 1 was noise and is forgotten.
 * The 32-bit wrap needs no code: the count is a uint32_t and wraps modulo 2^32 like the profiler's.
 */
#ifndef EX_TC_H
#define EX_TC_H

#include <stdint.h>

#define EX_TC_SAME 0   /* +0: nothing happened */
#define EX_TC_STEP 1   /* +1: a new tick */
#define EX_TC_GLITCH 2 /* neither: counted, not applied */
#define EX_TC_RESYNC 3 /* a glitch confirmed by the next value: the count jumped to it */

#define EX_TC_MAX_READS 8 /* ex_tc_read_stable gives up after this many reads */

struct ex_tc {
    uint32_t ext;      /* extended timecode; low byte = last accepted port value */
    uint16_t glitches; /* reads that were neither +0 nor +1 (wraps at 65536 like every counter) */
    uint8_t cand;      /* last glitch value */
    uint8_t has_cand;
};

void ex_tc_init(struct ex_tc *t, uint8_t first);
/* One value read from the port; returns EX_TC_*. */
uint8_t ex_tc_update(struct ex_tc *t, uint8_t v);
/* Reads `rd` until two consecutive reads agree (at most EX_TC_MAX_READS reads; then the last one). */
uint8_t ex_tc_read_stable(uint8_t (*rd)(void));

#endif
