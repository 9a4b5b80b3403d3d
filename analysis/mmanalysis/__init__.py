"""mmanalysis: pandas loaders, statistics, plots and reports for mmrig runs (docs/data-format.md).

    from mmanalysis import read_runs, summarize
    data = read_runs("results/")       # RunSet(df, meta): one run, a directory, or several
    summarize(data)                    # one row per run
    summarize(data, by="group")        # one row per (mode, distance, load, profiler_kind)
    data.df.groupby("profiler_kind")   # avr / 8051 (target.profiler_kind; a run without it: avr)
"""

from .latstats import measured, variance_text
from .reader import RunSet, jitter_us, profiler_kind, read_run, read_runs
from .schema import MEASURED, OUTCOMES, SchemaError
from .stats import summarize

__all__ = ["MEASURED", "OUTCOMES", "RunSet", "SchemaError", "jitter_us", "measured", "profiler_kind", "read_run", "read_runs", "summarize",
           "variance_text"]
