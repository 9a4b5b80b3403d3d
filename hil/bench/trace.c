/* The --trace text record (format: trace.h). */
#include "trace.h"

#include "bench.h"

FILE *trace_out;

void trace_open(const char *path)
{
    trace_out = fopen(path, "w");
    if (!trace_out)
        die("cannot open %s", path);
}

void trace_close(void)
{
    if (trace_out) {
        fclose(trace_out);
        trace_out = NULL;
    }
}
