#!/usr/bin/env python3
"""Benchmark: one process that runs N short lockstep runs one after another (default 2,000; 10 mixed events two
ticks ahead each) through the sweep's point entry (`mmrig.sweep.task.run_point`, the line socket), as a sweep's
point host, a HIL pytest session or a script does. Figures: the process's RSS growth from after the first
WARMUP runs (imports, the images' hashes, the bench's first start) to the end, target < 20 MB; its peak RSS over
the same stretch; and a run's wall time (median and max). The RSS is sampled after every run. Prints a JSON list
of {"name","unit","median","max","runs","note"} for tools/perf.py."""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from pathlib import Path

from mmhil.bench import ensure_built
from mmrig.sweep.task import run_point

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
WARMUP = 20
POINT = dict(mode="mixed", distance=2, count=10, seed=1)


def rss_mb() -> float:
    """The process's resident set now (VmRSS), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> int:
    ensure_built()
    for i in range(WARMUP):
        assert "error" not in run_point(POINT, f"warm{i}"), "a warm-up run failed"
    start = rss_mb()
    samples, walls = [], []
    for i in range(RUNS):
        t0 = time.monotonic()
        got = run_point({**POINT, "seed": 1 + i % 7}, f"run{i}")
        walls.append(time.monotonic() - t0)
        assert "error" not in got and got["valid"], got.get("error") or got.get("invalid_reason")
        samples.append(rss_mb())
    growth = samples[-1] - start
    peak = max(samples) - start
    print(json.dumps([
        {"name": f"RSS growth over {RUNS} short lockstep runs in one process", "unit": "MB", "median": growth,
         "max": peak, "runs": 1,
         "note": f"target < 20 MB; {start:.1f} -> {samples[-1]:.1f} MB after {WARMUP} warm-up runs "
                 f"({1024 * growth / RUNS:.1f} KB a run); max: the peak over the runs; "
                 f"process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"},
        {"name": "short lockstep run (10 mixed events) in a process that runs many", "unit": "ms",
         "median": 1000 * statistics.median(walls), "max": 1000 * max(walls), "runs": RUNS,
         "note": "run_point's wall time, the bench's start and the files' bytes included"},
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
