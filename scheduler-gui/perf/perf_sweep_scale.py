#!/usr/bin/env python3
"""Benchmark: `mmrig sweep`'s client at scale. Usage: perf_sweep_scale.py [SYNTHETIC_POINTS [REAL_POINTS]]
(default 10000 and 100).

1. SYNTHETIC_POINTS point results, each the files of a real 10-event lockstep point (run once here), fed
   through the client's own code path (Campaign.record: the point's CSV and sidecar written, its line appended
   to points.jsonl, campaign.json's snapshot when due), with no cluster: the client's time per point, median
   and p99 and its total, the size of campaign.json and points.jsonl at the end, the client's peak memory; then
   the resume of that campaign stopped halfway (Campaign.open + the completeness check of every point).
2. REAL_POINTS lockstep points of 10 events on a local cluster of 2 workers (run_campaign): total wall time and
   wall time per point.

Prints a table on stderr and a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py."""

from __future__ import annotations

import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mmhil.bench import ensure_built
from mmrig.sweep.campaign import Campaign, Plan, run_campaign
from mmrig.sweep.task import run_point

SYNTHETIC = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
REAL = int(sys.argv[2]) if len(sys.argv) > 2 else 100


def grid(n: int) -> Plan:
    """A plan of at least n points: distances 1..255 x rates 1ms, 2ms, ... (lockstep, 10 events)."""
    rates = [f"{i}ms" for i in range(1, n // 255 + 2)]
    return Plan(distance=list(range(1, 256)), rate=rates, count=10)


def synthetic(tmp: Path) -> dict:
    one = run_point(Plan(distance=[2], count=10).run_fields(Plan(distance=[2], count=10).points()[0]),
                    "d2-rtick-isr-idle")
    assert not one.get("error"), one
    plan = grid(SYNTHETIC)
    points = plan.points()[:SYNTHETIC]
    camp = Campaign.open(tmp / "syn", plan)
    camp.save()
    camp.open_store()
    per: list[float] = []
    half = len(points) // 2
    t_all = time.perf_counter()
    for i, p in enumerate(points):
        side = json.loads(one["json"])
        side["name"] = p.name
        got = {**one, "json": json.dumps(side).encode()}
        t0 = time.perf_counter()
        camp.record(p, got)
        per.append(time.perf_counter() - t0)
        if i + 1 == half:
            camp.store.sync()
            resume_folder = tmp / "syn"
    total = time.perf_counter() - t_all
    camp.close_store()
    t0 = time.perf_counter()
    camp.save()
    final_save = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sizes = {f: (tmp / "syn" / f).stat().st_size / 1e6 for f in ("campaign.json", "points.jsonl")}
    # resume halfway: a second folder holding the first half only (the store's lines and the files)
    import shutil

    half_dir = tmp / "half"
    (half_dir / "points").mkdir(parents=True)
    shutil.copy(tmp / "syn" / "campaign.json", half_dir / "campaign.json")
    lines = (resume_folder / "points.jsonl").read_text().splitlines()[:half]
    (half_dir / "points.jsonl").write_text("\n".join(lines) + "\n")
    for p in points[:half]:
        for suf in (".csv", ".json"):
            shutil.copy(tmp / "syn" / "points" / f"{p.name}{suf}", half_dir / "points" / f"{p.name}{suf}")
    t0 = time.perf_counter()
    again = Campaign.open(half_dir, None)
    again.mark_existing()
    todo = again.todo()
    resume_s = time.perf_counter() - t0
    assert len(todo) == len(plan.points()) - half, (len(todo), half)
    per.sort()
    return {"n": len(points), "median_ms": 1000 * statistics.median(per), "p99_ms": 1000 * per[int(0.99 * len(per))],
            "max_ms": 1000 * per[-1], "total_s": total, "final_save_s": final_save, "rss_mb": rss_mb,
            "resume_s": resume_s, "resume_points": len(plan.points()), **{f"{k}_mb": v for k, v in sizes.items()}}


def real(tmp: Path) -> dict:
    plan = grid(REAL)
    plan = Plan(distance=plan.distance[:min(255, REAL)], rate=plan.rate[:max(1, -(-REAL // 255))], count=10)
    camp = Campaign.open(tmp / "real", plan)
    t0 = time.monotonic()
    out = run_campaign(camp, run_point, workers=2)
    wall = time.monotonic() - t0
    assert out.exit_code == 0, (out, camp.doc.get("totals"))
    return {"n": len(out.ran), "wall_s": wall, "per_point_ms": 1000 * wall / max(1, len(out.ran)),
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    ensure_built()
    with tempfile.TemporaryDirectory(prefix="perf-sweep-scale-") as tmp:
        s = synthetic(Path(tmp))
        r = real(Path(tmp)) if REAL else None
    print(f"client bookkeeping, {s['n']} synthetic points of 10 events (Campaign.record, no cluster):\n"
          f"  per point: median {s['median_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms, max {s['max_ms']:.0f} ms "
          f"(campaign.json snapshots included); total {s['total_s']:.1f} s\n"
          f"  at the end: campaign.json {s['campaign.json_mb']:.1f} MB (one save {s['final_save_s']:.2f} s), "
          f"points.jsonl {s['points.jsonl_mb']:.1f} MB; client peak RSS {s['rss_mb']:.0f} MB\n"
          f"  resume after half: {s['resume_s']:.1f} s to open and check {s['resume_points']} points", file=sys.stderr)
    if r:
        print(f"real lockstep sweep, {r['n']} points of 10 events, local cluster of 2 workers: wall "
              f"{r['wall_s']:.1f} s ({r['per_point_ms']:.0f} ms a point, cluster start included); client peak "
              f"RSS {r['rss_mb']:.0f} MB (the workers' memory is not measured)", file=sys.stderr)
    rows = [{"name": f"sweep client time per point ({s['n']} synthetic 10-event points)", "unit": "ms",
             "median": s["median_ms"], "max": s["p99_ms"], "runs": s["n"],
             "note": f"max is p99; total {s['total_s']:.1f} s; campaign.json {s['campaign.json_mb']:.1f} MB, "
                     f"points.jsonl {s['points.jsonl_mb']:.1f} MB; peak RSS {s['rss_mb']:.0f} MB"},
            {"name": f"sweep resume of a {s['resume_points']}-point campaign stopped halfway", "unit": "s",
             "median": s["resume_s"], "max": s["resume_s"], "runs": 1, "note": "open + completeness check"}]
    if r:
        rows.append({"name": f"sweep of {r['n']} lockstep 10-event points, 2 local workers", "unit": "s",
                     "median": r["wall_s"], "max": r["wall_s"], "runs": 1,
                     "note": f"{r['per_point_ms']:.0f} ms a point; client RSS {r['rss_mb']:.0f} MB"})
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
