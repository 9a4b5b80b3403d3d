/* VCD of the wired ports (see vcd.h). One trace at a time, opened and closed from the control
 * channel or --vcd; the wire names and initial levels come from the co-simulation. */
#include "vcd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "safefile.h"

static struct {
    FILE *f;
    char path[512];
    uint64_t last_t; /* VCD time of the last timestamp written: times never go back */
} vcd;

void vcd_value(int w, int level, uint64_t cycle)
{
    uint64_t t = cycle; /* one VCD time unit per cycle (vcd.h) */
    if (!vcd.f)
        return;
    if (t < vcd.last_t)
        t = vcd.last_t;
    if (t != vcd.last_t) {
        fprintf(vcd.f, "#%" PRIu64 "\n", t);
        vcd.last_t = t;
    }
    fprintf(vcd.f, "%d%c\n", level, (char)('!' + w));
}

/* --vcd PATH: any path the user gives, in a shared folder too, so made through safefile.c (a planted link
 * under PATH replaced at the end, never written through) */
int vcd_open(const char *path, uint64_t cycle, const struct wire wires[NWIRES])
{
    FILE *f = sf_open(path, 0666);
    if (!f)
        return -1;
    vcd_start(f, path, cycle, wires);
    return 0;
}

void vcd_start(FILE *f, const char *path, uint64_t cycle, const struct wire wires[NWIRES])
{
    int w;
    vcd_close(cycle);
    vcd.f = f;
    snprintf(vcd.path, sizeof vcd.path, "%s", path);
    fprintf(vcd.f, "$comment mmbench: wired ports of the virtual bench $end\n$timescale 62500 ps $end\n");
    fprintf(vcd.f, "$scope module bench $end\n");
    for (w = 0; w < NWIRES; w++)
        fprintf(vcd.f, "$var wire 1 %c %s $end\n", (char)('!' + w), wires[w].vcd_name);
    fprintf(vcd.f, "$upscope $end\n$enddefinitions $end\n");
    vcd.last_t = cycle;
    fprintf(vcd.f, "#%" PRIu64 "\n$dumpvars\n", vcd.last_t);
    for (w = 0; w < NWIRES; w++)
        fprintf(vcd.f, "%d%c\n", wires[w].level, (char)('!' + w));
    fprintf(vcd.f, "$end\n");
}

/* The file ends with the time it was closed at, so a viewer shows the whole window recorded, not just up
 * to its last change (a quiet stretch at the end would otherwise vanish). */
void vcd_close(uint64_t cycle)
{
    if (vcd.f) {
        if (cycle > vcd.last_t)
            fprintf(vcd.f, "#%" PRIu64 "\n", cycle);
        if (sf_commit(vcd.f)) /* the record is lost, not the run: said in the log */
            logmsg("cannot write %s: %s", vcd.path, strerror(errno));
        vcd.f = NULL;
    }
}

int vcd_is_open(void)
{
    return vcd.f != NULL;
}

const char *vcd_path(void)
{
    return vcd.path;
}
