/* The --trace text record (format: trace.h). */
#include "trace.h"

#include <errno.h>
#include <string.h>

#include "bench.h"
#include "safefile.h"

FILE *trace_out;
static const char *trace_path;

/* made through safefile.c: a link planted under PATH is replaced when the trace is complete, never written
 * through */
void trace_open(const char *path)
{
    trace_out = sf_open(path, 0666);
    if (!trace_out)
        die("cannot open %s: %s", path, sf_strerror(errno));
    trace_path = path;
}

void trace_close(void)
{
    if (trace_out) {
        if (sf_commit(trace_out))
            logmsg("cannot write %s: %s", trace_path, strerror(errno));
        trace_out = NULL;
    }
}
