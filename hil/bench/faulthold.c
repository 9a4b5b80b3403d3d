/*
 * The record of host bytes an injected delay held back (faulthold.h). Fixed storage: a run of
 * consecutive held bytes is one entry (a 40 ms delay at 115200 baud holds back ~460 bytes behind it,
 * all one run), so a 60-event run with a 10 % delay rate makes a few dozen entries; past
 * FAULTHOLD_MAX they are counted as dropped, never silently lost.
 */
#include "faulthold.h"

#include <inttypes.h>

#define FAULTHOLD_MAX 8192

struct faulthold_run {
    uint64_t gen, offset, n, held_max;
    uint8_t node;
};

/* Only the simulation thread notes and the control channel reads, both on the main loop (control.c
 * serves commands between simulation steps): no lock needed. */
static struct faulthold_run runs[FAULTHOLD_MAX];
static size_t nruns;
static uint64_t dropped;

void faulthold_note(int id, uint64_t gen, uint64_t offset, uint64_t held_cycles)
{
    size_t i;
    /* the latest run of this node: a byte that continues it (or is in it again, re-armed) joins it */
    for (i = nruns; i-- > 0;) {
        struct faulthold_run *r = &runs[i];
        if (r->node != (uint8_t)id)
            continue;
        if (r->gen == gen && offset >= r->offset && offset <= r->offset + r->n) {
            if (offset == r->offset + r->n)
                r->n++;
            if (held_cycles > r->held_max)
                r->held_max = held_cycles;
            return;
        }
        break;
    }
    if (nruns == FAULTHOLD_MAX) {
        dropped++;
        return;
    }
    runs[nruns++] = (struct faulthold_run){gen, offset, 1, held_cycles, (uint8_t)id};
}

void faulthold_json(struct sbuf *b, const struct faulthold_queued queued[NNODES])
{
    size_t i;
    int id, any = 0;
    sb_printf(b, "\"held_by_fault\":[");
    for (i = 0; i < nruns; i++)
        sb_printf(b, "%s[\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f]", i ? "," : "", node_names[runs[i].node],
                  runs[i].gen, runs[i].offset, runs[i].n, (double)runs[i].held_max * 1e6 / (double)F_CPU);
    for (id = 0; id < NNODES; id++) /* still queued behind the delay when asked (the run's end) */
        if (queued[id].n)
            sb_printf(b, "%s[\"%s\",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f]", nruns || any ? "," : "",
                      node_names[id], queued[id].gen, queued[id].first, queued[id].n,
                      (double)queued[id].held_cycles * 1e6 / (double)F_CPU),
                any = 1;
    sb_printf(b, "],\"held_by_fault_dropped\":%" PRIu64, dropped);
}
