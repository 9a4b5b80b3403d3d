"""mmanalysis: pandas loaders, statistics, plots and reports for mmrig runs (docs/data-format.md).

    from mmanalysis import read_runs, summarize
    data = read_runs("results/")       # RunSet(df, meta): one run, a directory, or several
    summarize(data)                    # one row per run
    summarize(data, by="group")        # one row per (mode, distance, load, profiler_kind)
    data.df.groupby("profiler_kind")   # avr / 8051 (target.profiler_kind; a run without it: avr)
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use (PEP 562), not at import: the CLI imports mmanalysis.histogram for every `mmrig` command,
# and pandas alone took 170 of the CLI's 415 ms to start (python -X importtime -m mmrig --help, 2026-11-29).
_WHERE = {"measured": "latstats", "variance_text": "latstats", "RunSet": "reader", "jitter_us": "reader",
          "profiler_kind": "reader", "read_run": "reader", "read_runs": "reader", "MEASURED": "schema",
          "OUTCOMES": "schema", "SchemaError": "schema", "summarize": "stats"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
