#!/usr/bin/env python3
"""How fast mmanalysis summarises a large run: 1,000,000 events (the budget: <= 1 s).

Writes one synthetic run of 1e6 events in the real on-disk format (mmanalysis.synth), reads it with
mmanalysis.read_runs, then times summarize() per run and per group (mode, distance, load). Prints the
figures as JSON for tools/perf.py: a list of {"name", "unit", "median", "max", "runs", "note"}.
The reading time is reported too (not part of the 1 s budget).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mmanalysis import read_runs, summarize
from mmanalysis.synth import sidecar, synthetic_events, write_run

RUNS = 7
EVENTS = 1_000_000


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else EVENTS
    with tempfile.TemporaryDirectory() as tmp:
        rows = synthetic_events("mixed", 2, False, events, seed=1)
        write_run(Path(tmp) / "big", rows, sidecar("big", rows))
        read_s = timed(lambda: read_runs(Path(tmp) / "big.csv"), 3)
        data = read_runs(Path(tmp) / "big.csv")
    per_run = timed(lambda: summarize(data), RUNS)
    per_group = timed(lambda: summarize(data, by="group"), RUNS)
    note = f"{events} events, synthetic mixed run, all statistics in us and ticks, jitter, outcome counts"
    print(json.dumps([
        {"name": "analysis summary per run", "unit": "s", "median": statistics.median(per_run),
         "max": max(per_run), "runs": RUNS, "note": note + "; budget 1 s"},
        {"name": "analysis summary per group", "unit": "s", "median": statistics.median(per_group),
         "max": max(per_group), "runs": RUNS, "note": note + "; groupby mode, distance, load"},
        {"name": "analysis read_runs (CSV+JSON, checked)", "unit": "s", "median": statistics.median(read_s),
         "max": max(read_s), "runs": 3, "note": f"{events} rows, schema checks included"},
    ]))


if __name__ == "__main__":
    main()
