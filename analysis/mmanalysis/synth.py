"""Synthetic runs in the exact on-disk format of docs/data-format.md (CSV + JSON sidecar).

For tests, the benchmark and practice: the numbers are drawn from simple models of the paper's five
experiments, NOT measurements. Every sidecar says so (`target.kind = "synthetic"`). The writer uses only
numpy, pandas' CSV writer and json, never the loader, so tests of the loader check it against the
format document rather than against itself.

    python -m mmanalysis.synth OUT_DIR [--count N] [--seed S]   writes the five experiments
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

TIMER_HZ = 16_000_000
TICK_COUNTS = 1_137_778  # 71.111 ms at 16 MHz, the profiler's default
TICK_US = TICK_COUNTS * 1e6 / TIMER_HZ
LATE_BOUND_US = 1000.0

# name -> (mode, distance, load): the paper's five experiments (section 7.2 to 7.5)
EXPERIMENTS = {
    "verification": ("verification", 1, False),
    "normal-1ahead": ("normal", 1, False),
    "mixed-1ahead": ("mixed", 1, False),
    "mixed-2ahead": ("mixed", 2, False),
    "mixed-2ahead-loaded": ("mixed", 2, True),
}


def synthetic_events(mode: str, distance: int, load: bool, count: int, seed: int = 0) -> pd.DataFrame:
    """One run's rows, every column of the format, drawn from a crude model (not a measurement)."""
    rng = np.random.default_rng(seed)
    n = count
    event = np.arange(n)
    created_tc = 100 + event  # one event per tick, aligned generation
    created_phase = rng.uniform(0.02, 0.2, n)
    scheduled_tc = created_tc + distance
    sent_s = (event + created_phase + 0.001) * TICK_US / 1e6
    outcome = np.full(n, "ok", dtype=object)
    reason = np.full(n, "", dtype=object)
    ack_tc = np.full(n, np.nan)
    ack_phase = np.full(n, np.nan)
    slack = np.full(n, np.nan)
    fired_tc = np.full(n, np.nan)

    if mode == "normal":  # the PC fires itself: tens of ms late, wide spread
        lat_us = np.clip(rng.normal(14_000, 6_000, n), 200, None)
    else:
        lat_us = rng.gamma(9.0, 4.0, n) + 4.0  # ~40 us, ISR dispatch
        spikes = rng.random(n) < 0.01
        lat_us[spikes] += rng.uniform(100, 400, spikes.sum())
    if mode == "mixed":  # SCHEDULE travels to the executor; ACK says when it arrived
        prop_ticks = rng.lognormal(np.log(0.5 if load else 0.4), 0.8 if load else 0.7, n)
        arrival = created_tc + created_phase + prop_ticks
        ack_tc = np.floor(arrival)
        ack_phase = np.round((arrival - ack_tc) * 65536) / 65536
        slack = scheduled_tc - ack_tc - ack_phase
        past_due = slack <= 0
        outcome[past_due] = "missed"
        reason[past_due] = "past_due"
        fired_tc = np.where(past_due, np.nan, scheduled_tc)
        if n > 5:  # one lost event, to exercise the accounting
            outcome[n // 2], reason[n // 2] = "lost", "seq_gap"
    elif mode == "verification":
        fired_tc = scheduled_tc.astype(float)
    if n > 10 and mode != "mixed":  # a timeout now and then
        outcome[n // 3], reason[n // 3] = "missed", "timeout"
    if n > 20:  # an early event, so the outcome is exercised
        outcome[n // 4], reason[n // 4] = "early", "early"
        lat_us[n // 4] = -12.5

    counts = np.round(lat_us * TIMER_HZ / 1e6)
    reported = np.isin(outcome, ["ok", "early"])
    late = reported & (counts * 1e6 / TIMER_HZ >= LATE_BOUND_US)
    outcome[late], reason[late] = "late", "late"
    counts = np.where(reported, counts, np.nan)
    result_tc = scheduled_tc + np.floor(counts / TICK_COUNTS)
    result_counts = counts - np.floor(counts / TICK_COUNTS) * TICK_COUNTS

    def ints(a):
        return pd.array(np.where(np.isnan(a), None, a), dtype="Int64") if np.asarray(a).dtype.kind == "f" \
            else pd.array(a, dtype="Int64")

    return pd.DataFrame({
        "event": event, "tag": (0x1000 + event) & 0xFFFF, "event_id": event % 8, "mode": mode,
        "distance": distance, "scheduled_tc": scheduled_tc, "created_tc": created_tc,
        "created_phase": np.round(created_phase, 6), "sent_s": np.round(sent_s, 6),
        "ack_tc": ints(ack_tc), "ack_phase": ack_phase, "slack_ticks": np.round(slack, 6),
        "fired_tc": ints(fired_tc), "result_tc": ints(result_tc), "result_counts": ints(result_counts),
        "latency_counts": ints(counts), "latency_us": counts * 1e6 / TIMER_HZ,
        "outcome": outcome, "reason": reason, "measurable": np.ones(n, dtype=bool), "stall_us": np.full(n, np.nan),
    })


def sidecar(name: str, rows: pd.DataFrame, load: bool = False, valid: bool = True) -> dict:
    mode = str(rows["mode"].iloc[0]) if len(rows) else "mixed"
    distance = int(rows["distance"].iloc[0]) if len(rows) else 2
    m = rows["outcome"].isin(["ok", "late"]).to_numpy()
    lat = rows["latency_us"].to_numpy(dtype=float)[m]
    q = (lambda p: float(np.percentile(lat, p))) if len(lat) else (lambda p: None)
    return {
        "format": "mmrig-run", "format_version": 2, "mmrig_version": "0.1.0",
        "created": "2026-11-22T07:45:00+00:00", "name": name,
        "config": {"mode": mode, "distance": distance, "rate_ms": round(TICK_US / 1000, 3), "count": len(rows),
                   "duration_s": None, "random_ids": False, "generation": "aligned", "accuracy": 0,
                   "late_bound_us": LATE_BOUND_US, "dispatch": "isr", "load": load, "baud": 9600},
        "target": {"kind": "synthetic", "paced": False, "profiler": None, "executor": None,
                   "note": "mmanalysis.synth: drawn from a model, not measured"},
        "nodes": {"profiler": None, "executor": None},
        "timebase": {"timer_hz": TIMER_HZ, "tick_counts": TICK_COUNTS},
        "bench": None,
        "valid": valid, "invalid_reason": None if valid else "synthetic: marked invalid on purpose",
        "counters": {}, "cpu": {"normal_mode_cpu_s": 0.0, "wall_s": 0.0},
        "summary": {"n": int(len(lat)), "mean_us": float(lat.mean()) if len(lat) else None,
                    "variance_us2": float(lat.var()) if len(lat) else None, "min_us": q(0), "p50_us": q(50),
                    "p99_us": q(99), "p999_us": q(99.9), "max_us": q(100),
                    "outcomes": {o: int((rows["outcome"] == o).sum()) for o in ("ok", "late", "early", "missed", "lost")}},
    }


def write_run(stem: Path | str, rows: pd.DataFrame, meta: dict) -> tuple[Path, Path]:
    """Writes STEM.csv and STEM.json exactly as docs/data-format.md says (a dot in STEM stays: NAME.attempt1)."""
    stem = Path(stem)
    if stem.suffix in (".csv", ".json"):
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, js = stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".json")
    rows.to_csv(csv, index=False)
    js.write_text(json.dumps(meta, indent=2) + "\n")
    return csv, js


def write_experiment(out_dir: Path | str, name: str, count: int = 200, seed: int = 0) -> tuple[Path, Path]:
    mode, distance, load = EXPERIMENTS[name]
    rows = synthetic_events(mode, distance, load, count, seed)
    return write_run(Path(out_dir) / name, rows, sidecar(name, rows, load=load))


def write_experiments(out_dir: Path | str, count: int = 200, seed: int = 0) -> list[Path]:
    """The five experiments as synthetic runs; returns the CSV paths."""
    return [write_experiment(out_dir, name, count, seed + i)[0] for i, name in enumerate(EXPERIMENTS)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmanalysis.synth", description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for p in write_experiments(args.out_dir, args.count, args.seed):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
