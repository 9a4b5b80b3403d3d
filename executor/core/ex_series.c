#include "ex_series.h"

/* (num << 32) / den for num < den: the fraction of a tick num counts make. 64-bit on purpose: once per
 * series, in the serial task (a few hundred us on the ATmega2560), never per event. */
static uint32_t fraction(uint32_t num, uint32_t den)
{
    return (uint32_t)(((uint64_t)num << 32) / den);
}

void ex_series_start(struct ex_series *s, uint16_t tag, uint8_t id, uint32_t tc, uint32_t first,
                     uint32_t period, uint32_t tick_counts, uint16_t count, uint8_t quiet)
{
    uint32_t whole = period / tick_counts;

    s->tc = tc;
    s->frac = fraction(first, tick_counts);
    s->step_ticks = whole > 0xFFFFu ? 0xFFFFu : (uint16_t)whole; /* 65535 ticks: 78 minutes, past any run */
    s->step_frac = fraction(period % tick_counts, tick_counts);
    s->tag = tag;
    s->id = (uint8_t)(id & 0x07u);
    s->left = count;
    s->quiet = quiet;
    s->armed = 0;
}

void ex_series_next(struct ex_series *s)
{
    uint32_t f = s->frac + s->step_frac;

    if (f < s->frac)
        s->tc++; /* carried past the end of the tick */
    s->frac = f;
    s->tc += s->step_ticks;
    s->tag++;
    s->id = (uint8_t)((s->id + 1u) & 0x07u);
    s->armed = 0; /* a new moment: the board has not got it yet */
    if (s->left != 0)
        s->left--;
}
