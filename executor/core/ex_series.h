/*
 * A PERIODIC series (SPEC.md 0x28, protocol version 5): events due at moments inside ticks, `period` of the
 * profiler's counts apart, so that a kilohertz schedule is one frame. The executor has no profiler clock:
 * it keeps each moment as a fraction of a tick and the board places it in the tick length it measures
 * itself between two timecode edges. Two boards run on two resonators up to 0.5 % apart; a moment
 * placed by the executor's nominal tick would be up to 355 us off at the end of a 71.1 ms tick.
 *
 * The fraction is a 32-bit fixed-point number (1/2^32 of a tick, 17 ps at 71.1 ms): the step from one
 * moment to the next is computed once, with a 64-bit division, when the series starts; each moment
 * after that is one 32-bit addition with carry into the tick count. The truncation of the step adds at
 * most one 2^-32 tick per event: 1 ns over 65535 events, far below the board's 4 us timer count.
 *
 * A quiet series (protocol version 6, PERIODIC flags bit 0) is fired the same; the core reports only its
 * last event FIRED. Each series keeps its own flag: the running one and the one queued behind it may differ.
 */
#ifndef EX_SERIES_H
#define EX_SERIES_H

#include <stdint.h>

struct ex_series {
    uint32_t tc;         /* the executor's extended timecode of the next moment's tick */
    uint32_t frac;       /* how far into that tick, in 1/2^32 of a tick */
    uint32_t step_frac;  /* one period: whole ticks ... */
    uint16_t step_ticks; /* ... and the fraction */
    uint16_t tag;        /* the next moment's event tag */
    uint16_t left;       /* events still to fire (0: no series) */
    uint32_t armed_tc;   /* the tick the board was told the next moment is in (FIRED names it) */
    uint8_t armed;       /* 1: the board holds this moment, armed for armed_tc (0 after start and each next) */
    uint8_t id;          /* the next moment's event id, 0..7 */
    uint8_t quiet;       /* 1: FIRED for the last event only (PERIODIC flags bit 0, version 6) */
};

/* Starts a series (values already checked: tick_counts > 0, first < tick_counts, period > 0); quiet 0 or 1. */
void ex_series_start(struct ex_series *s, uint16_t tag, uint8_t id, uint32_t tc, uint32_t first,
                     uint32_t period, uint32_t tick_counts, uint16_t count, uint8_t quiet);
/* The next moment, after one fired. */
void ex_series_next(struct ex_series *s);
/* The next moment's place in its tick for the board, in 1/65536 of a tick (rounded down). */
#define ex_series_phase(s) ((uint16_t)((s)->frac >> 16))

#endif
