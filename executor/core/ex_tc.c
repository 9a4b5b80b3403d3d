#include "ex_tc.h"

void ex_tc_init(struct ex_tc *t, uint8_t first)
{
    t->ext = first;
    t->glitches = 0;
    t->cand = 0;
    t->has_cand = 0;
}

uint8_t ex_tc_update(struct ex_tc *t, uint8_t v)
{
    uint8_t d = (uint8_t)(v - (uint8_t)t->ext);

    if (d == 0) {
        t->has_cand = 0;
        return EX_TC_SAME;
    }
    if (d == 1) {
        t->has_cand = 0;
        t->ext++;
        return EX_TC_STEP;
    }
    if (t->has_cand && (uint8_t)(v - t->cand) <= 1) {
        t->has_cand = 0;
        t->ext += d;
        return EX_TC_RESYNC;
    }
    t->glitches++;
    t->cand = v;
    t->has_cand = 1;
    return EX_TC_GLITCH;
}

uint8_t ex_tc_read_stable(uint8_t (*rd)(void))
{
    uint8_t prev = rd();
    uint8_t i;

    for (i = 1; i < EX_TC_MAX_READS; i++) {
        uint8_t v = rd();
        if (v == prev)
            return v;
        prev = v;
    }
    return prev;
}
