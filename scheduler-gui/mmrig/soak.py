"""The soak (`make soak`): long runs that cross the 8-bit timecode wrap many times and show that
nothing drifts, leaks or piles up: a paced mixed run of 30 minutes (the wrap every 256 ticks = 18.2 s: about
100 wraps) and a lockstep mixed run of several hours of virtual time. Each reports its outcome counts, the
nodes' and the scheduler's counters, its validity and the time of its worst event, and writes its CSV +
JSON; it fails (exit 1) when an event is not ok in a run without a fault, or the invariant breaks.

    python -m mmrig.soak [--paced-minutes 30] [--lockstep-hours 3] [--out build/soak]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mmanalysis.safefiles import atomic_write
from mmsched.model.config import RunConfig
from mmsched.run.runner import Runner

from mmsched.link.endpoint import Endpoint

from mmrig.endpoints import Target, choose_endpoint


def soak(name: str, endpoint: Endpoint, seconds: float, out: Path) -> dict[str, Any]:
    cfg = RunConfig(mode="mixed", distance=2, count=None, duration_s=seconds, out=out / name)
    for old in out.glob(f"{name}.*"):
        old.unlink()
    t0 = time.monotonic()
    res = Runner(cfg, endpoint).run()
    wall = time.monotonic() - t0
    sc = res.sidecar
    measured = [e for e in res.events if e.latency_us is not None and e.measurable]
    worst = max(measured, key=lambda e: e.latency_us, default=None)
    ticks = (res.events[-1].scheduled_tc - res.events[0].scheduled_tc) if res.events else 0
    outcomes = Counter(f"{e.outcome}/{e.reason}" if e.reason else e.outcome for e in res.events)
    problems = []
    if not sc["invariant"]["ok"]:
        problems.append(f"invariant: {sc['invariant']['error']}")
    # An event a host stall displaced a byte of (the bench's, or the scheduler's own: made past its tick) is not measurable:
    # its outcome is kept and counted, but it is no fault of the system under test.
    if not sc.get("faults") and any(e.outcome != "ok" and e.measurable for e in res.events):
        problems.append("measurable events not ok in a run without a fault of the rig")
    sched = {k: v for k, v in sc["counters"]["scheduler"].items() if v and not isinstance(v, dict)}
    return {"name": name, "wall_s": round(wall, 1), "virtual_s": seconds, "events": len(res.events),
            "ticks": ticks, "wraps": ticks // 256, "outcomes": dict(outcomes),
            "unmeasurable": sum(not e.measurable for e in res.events),
            "unmeasurable_outcomes": dict(Counter(e.outcome for e in res.events if not e.measurable)),
            "stalls": sc["measurability"]["stalls"], "late_creations": sc["measurability"]["late_creations"],
            "valid": sc["valid"],
            "invalid_reasons": [r["text"] for r in sc["invalid_reasons"]],
            "worst_us": worst.latency_us if worst else None,
            "worst_at_s": worst.sent_s if worst else None, "worst_event": worst.event if worst else None,
            "latency_us": {k: sc["summary"].get(k) for k in ("n", "min_us", "p50_us", "p99_us", "max_us")},
            "counters": {"scheduler": sched, "profiler": sc["counters"]["profiler"],
                         "executor": sc["counters"]["executor"]},
            "problems": problems, "csv": str(res.csv_path)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmrig.soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--paced-minutes", type=float, default=30.0, help="paced mixed run length (0: skip)")
    ap.add_argument("--lockstep-hours", type=float, default=3.0, help="lockstep run, virtual hours (0: skip)")
    ap.add_argument("--out", type=Path, default=Path("build/soak"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    reports = []
    if args.lockstep_hours > 0:
        reports.append(soak("lockstep", choose_endpoint(Target.of(lockstep=True)), args.lockstep_hours * 3600, args.out))
        print(json.dumps(reports[-1], indent=1), flush=True)
    if args.paced_minutes > 0:
        reports.append(soak("paced", choose_endpoint(Target()), args.paced_minutes * 60, args.out))
        print(json.dumps(reports[-1], indent=1), flush=True)
    atomic_write(args.out / "results.json", json.dumps(reports, indent=1).encode())
    print()
    print("| run | virtual | wall | events | wraps | outcomes | not measurable (bench stalls, late creations) | valid "
          "| worst latency (at) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in reports:
        oc = ", ".join(f"{k} {v}" for k, v in sorted(r["outcomes"].items()))
        print(f"| {r['name']} | {r['virtual_s']:.0f} s | {r['wall_s']:.0f} s | {r['events']} | {r['wraps']} | {oc} | "
              f"{r['unmeasurable']} ({r['stalls']}, {r['late_creations']}) | {r['valid']} | {r['worst_us']} us (event {r['worst_event']}, {r['worst_at_s']} s) |")
    bad = [p for r in reports for p in r["problems"]]
    for p in bad:
        print(f"soak: {p}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
