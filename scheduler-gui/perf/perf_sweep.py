#!/usr/bin/env python3
"""Benchmark: `mmrig sweep`'s lockstep campaign, a 3x3x2 grid of 200-event mixed runs (distance 1..3 x rate
tick, 2ticks, 50ms x dispatch isr, task: 18 points) on a local Dask cluster, once with one worker and once
with N (the CPU count), in the same run. Figures: the campaign's virtual time (the sum of its points') over
its wall time, cluster start and the files included, for each, and the parallel speed-up (wall with one
worker / wall with N), a ratio measured in one run. Prints a JSON list of {"name","unit","median","max",
"runs","note"} for tools/perf.py."""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mmhil.bench import ensure_built
from mmrig.sweep.task import run_point
from mmrig.sweep.campaign import Campaign, Plan, run_campaign

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
GRID = dict(distance=[1, 2, 3], rate=["tick", "2ticks", "50ms"], dispatch=["isr", "task"], count=200)


def campaign(workers: int) -> tuple[float, float]:
    """(wall s, virtual s) of the whole grid in a fresh folder on `workers` local workers."""
    with tempfile.TemporaryDirectory(prefix="perf-sweep-") as tmp:
        camp = Campaign.open(Path(tmp) / "grid", Plan(**GRID))
        t0 = time.monotonic()
        out = run_campaign(camp, run_point, workers=workers)
        wall = time.monotonic() - t0
        assert out.exit_code == 0 and len(out.ran) == 18, (out, camp.doc.get("totals"))
        return wall, float(camp.doc["totals"]["virtual_s"])


def main() -> int:
    ensure_built()
    n = os.cpu_count() or 1
    one, many, virtual = [], [], []
    for _ in range(RUNS):
        w1, v1 = campaign(1)
        wn, vn = campaign(n)
        one.append(w1)
        many.append(wn)
        virtual.append(v1)
        assert abs(v1 - vn) < 1e-6, (v1, vn)      # lockstep: the same grid takes the same virtual time
    speed_1 = [v / w for v, w in zip(virtual, one)]
    speed_n = [v / w for v, w in zip(virtual, many)]
    ratio = [a / b for a, b in zip(one, many)]
    grid = "18-point lockstep sweep (3x3x2, 200 events)"
    print(json.dumps([
        {"name": f"{grid}, {n} workers", "unit": "x real time", "median": statistics.median(speed_n),
         "max": max(speed_n), "runs": RUNS,
         "note": f"virtual {statistics.median(virtual):.1f} s (sum of the points) / wall, median wall "
                 f"{statistics.median(many):.1f} s incl. cluster start"},
        {"name": f"{grid}, 1 worker", "unit": "x real time", "median": statistics.median(speed_1),
         "max": max(speed_1), "runs": RUNS, "note": f"median wall {statistics.median(one):.1f} s incl. cluster start"},
        {"name": f"sweep parallel speed-up, {n} workers / 1", "unit": "ratio", "median": statistics.median(ratio),
         "max": max(ratio), "runs": RUNS, "note": f"wall with 1 worker / wall with {n}, both in this run "
                                                  f"({os.cpu_count()} CPUs)"},
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
