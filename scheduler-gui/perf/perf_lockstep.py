#!/usr/bin/env python3
"""Benchmark: the paper's 200-event mixed experiment (two ticks ahead) run unpaced in lockstep, as a
multiple of real time (virtual seconds the bench simulated / wall seconds the whole run took, handshake
and export included). Target >= 20x on the 2-vCPU machine, median of the runs. Prints a JSON list of
{"name","unit","median","max","runs","note"} for tools/perf.py."""

from __future__ import annotations

import json
import statistics
import sys
import time

from mmhil import LockstepEndpoint
from mmsched.model.config import RunConfig
from mmsched.run.runner import run

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def main() -> int:
    speeds, grants = [], []
    for _ in range(RUNS):
        t0 = time.monotonic()
        result = run(RunConfig(mode="mixed", distance=2, count=200), LockstepEndpoint())
        wall = time.monotonic() - t0
        assert result.valid and result.summary["outcomes"]["ok"] == 200, result.sidecar["invalid_reason"]
        speeds.append(result.sidecar["bench"]["virtual_s"] / wall)
        grants.append(result.sidecar["bench"]["grants"])
    print(json.dumps([{"name": "lockstep run, 200 mixed events 2 ahead", "unit": "x real time",
                       "median": statistics.median(speeds), "max": max(speeds), "runs": RUNS,
                       "note": f"target >= 20x; min {min(speeds):.1f}x; {statistics.median(grants):.0f} grants per run"}]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
