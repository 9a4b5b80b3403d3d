#!/usr/bin/env python3
"""Benchmark: the highest event rate each baud carries with nothing lost in mixed mode, found by `mmrig
sweep` itself (sweepplots.highest_clean_rates: every event on time, none skipped by the generator, the run
valid, at that rate and at every slower one).

One lockstep campaign: free-running rates from 10 to 400 events/s x baud 9600, 115200, distance 2 (a
SCHEDULE made anywhere in a tick has a whole tick to spare; one tick ahead a free-running event made in the
tick's last hundredths misses at any baud), ISR dispatch, 200 events a point. Lockstep:
the figures are the firmware's and the protocol's, not this host's, so one run is the measurement (runs 1).
Targets: >= 30 events/s at 9600 baud, >= 300 at 115200. Prints a JSON list of {"name", "unit",
"median", "max", "runs", "note"} for tools/perf.py; the note says what stopped the next faster rate.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from mmanalysis.sweepplots import highest_clean_rates
from mmhil.bench import ensure_built
from mmrig.sweep.task import run_point
from mmrig.sweep.campaign import Campaign, Plan, run_campaign

# free-running periods (ms): 10 .. 400 events/s
PERIODS_MS = ["100", "70", "50", "40", "35", "30", "25", "20", "15", "12", "10", "8", "6", "5", "4", "3.3", "2.5"]
BAUDS = [9600, 115200]
TARGETS = {9600: 30.0, 115200: 300.0}


def main() -> int:
    ensure_built()
    rates = [f"{ms}ms" for ms in PERIODS_MS]
    with tempfile.TemporaryDirectory(prefix="perf-clean-rate-") as tmp:
        camp = Campaign.open(Path(tmp) / "rates", Plan(distance=[2], rate=rates, baud=BAUDS, count=200))
        out = run_campaign(camp, run_point)
        if out.failed:
            print(f"points failed: {out.failed}", file=sys.stderr)
            return 1
        found = highest_clean_rates(camp.doc)
    figures = []
    for (baud, distance, dispatch, load), c in found.items():
        best = c.per_s or 0.0
        stop = f"; at {c.next_rate}: {c.why}" if c.next_rate else "; every rate tried was clean"
        figures.append({"name": f"highest clean event rate, {baud} baud (mixed, distance {distance}, {dispatch})",
                        "unit": "events/s", "median": best, "max": best, "runs": 1,
                        "note": f"target >= {TARGETS.get(baud, 0):g}: "
                                f"{'met' if best >= TARGETS.get(baud, 0) else 'NOT met'}{stop}"[:300]})
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
