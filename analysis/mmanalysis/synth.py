"""Synthetic runs in the exact on-disk format of docs/data-format.md (CSV + JSON sidecar).

For tests, the benchmark and practice: the numbers are drawn from simple models of the paper's five
experiments, NOT measurements. Every sidecar says so (`target.kind = "synthetic"`). The writer uses only
numpy, pandas' CSV writer and json, never the loader, so tests of the loader check it against the
format document rather than against itself.

    python -m mmanalysis.synth OUT_DIR [--count N] [--seed S]   writes the five experiments
    python -m mmanalysis.synth CLASS --class-groups 5             a class of generated hand-ins (class_handins)
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from .schema import NOMINAL_TICK_S
from .paper import PAPER_EXECUTOR_LOAD
from .safefiles import atomic_write

TIMER_HZ = 16_000_000
TICK_COUNTS = round(NOMINAL_TICK_S * TIMER_HZ)  # the nominal tick in whole 16 MHz counts (1_137_778), the AVR profiler's
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
        lat_us = rng.gamma(9.0, 4.0, n) + 4.0  # ~40 us: the paper's design, its timecode thread executes events
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
                   "late_bound_us": LATE_BOUND_US, "dispatch": "task", "executor_load_text": PAPER_EXECUTOR_LOAD,
                   "load": load, "baud": 9600},
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
    atomic_write(csv, rows.to_csv(index=False).encode())
    atomic_write(js, (json.dumps(meta, indent=2) + "\n").encode())
    return csv, js


def write_experiment(out_dir: Path | str, name: str, count: int = 200, seed: int = 0) -> tuple[Path, Path]:
    mode, distance, load = EXPERIMENTS[name]
    rows = synthetic_events(mode, distance, load, count, seed)
    return write_run(Path(out_dir) / name, rows, sidecar(name, rows, load=load))


def write_experiments(out_dir: Path | str, count: int = 200, seed: int = 0) -> list[Path]:
    """The five experiments as synthetic runs; returns the CSV paths."""
    return [write_experiment(out_dir, name, count, seed + i)[0] for i, name in enumerate(EXPERIMENTS)]


BENCH_DISPATCH_US = 36.875  # the virtual bench's task dispatch (the paper's design, mmrig.experiments), what most events take
BENCH_ISR_US = 1.375        # the bench's ISR dispatch (ours): the pin-change interrupt writes the port, 22 cycles

# the five experiments as class_handins' groups name them (students name runs as they like); group 0 uses the
# demo's names (mmrig.demo)
HANDIN_NAMES = (
    ("exp1-verification", "exp2-normal", "exp3-mixed-1ahead", "exp4-mixed-2ahead", "exp5-mixed-2ahead-load"),
    ("1_verif", "2_normal", "3_mixed1", "4_mixed2", "5_mixed2_heavy"),
    ("verification", "normal", "mixed-d1-free", "mixed-d2", "mixed-d2-load"),
    None,                                                  # practice data as it is: write_experiments' names
    ("run1", "run2", "run3", "run4", None),                # experiment 5 never recorded
)


POLL_8051_US = (2.0, 135.0)   # a generated 8051 run: each stamp late by a uniform draw in this range (the polling)


def _handin_run(folder: Path, name: str, experiment: str, kind: str, count: int, seed: int,
                generation: str = "aligned", valid: bool = True, invalid_reason: str | None = None,
                profiler_kind: str = "avr", sched: str = "fifo 10", dispatch: str = "task") -> Path:
    """One run of a generated hand-in: drawn from the model like every synthetic run, its sidecar posing as a
    run on KIND (bench or boards) so a class report's flags can be tried; `target.note` says it was generated.
    PROFILER_KIND "8051": posing as the 8051 demo's run (docs/lab.md step 6), every stamp late by POLL_8051_US;
    SCHED: the bench's `bench.host.sched` (fifo 10, nice -10, other); DISPATCH the executor's (task: the paper's
    design, BENCH_DISPATCH_US on the bench; isr: ours, BENCH_ISR_US)."""
    mode, distance, load = EXPERIMENTS[experiment]
    rows = synthetic_events(mode, distance, load, count, seed)
    if kind == "bench" and mode != "normal":   # the bench's exact clock: one dispatch time for every event
        m = rows["outcome"].isin(["ok", "late"]).to_numpy()
        dispatch_us = BENCH_ISR_US if dispatch == "isr" else BENCH_DISPATCH_US
        counts = np.full(int(m.sum()), round(dispatch_us * TIMER_HZ / 1e6))
        if profiler_kind == "8051":
            poll = np.random.default_rng(seed).uniform(*POLL_8051_US, size=len(counts))
            counts = counts + np.round(poll * TIMER_HZ / 1e6).astype(int)
        rows.loc[m, "latency_counts"] = counts
        rows.loc[m, "latency_us"] = counts * 1e6 / TIMER_HZ
        rows.loc[m, "result_tc"] = rows.loc[m, "scheduled_tc"]
        rows.loc[m, "result_counts"] = counts
        rows.loc[m, ["outcome", "reason"]] = ["ok", None]
    meta = sidecar(name, rows, load=load, valid=valid)
    meta["config"]["generation"] = generation
    meta["config"]["dispatch"] = dispatch
    meta["config"]["load"] = "heavy" if load else "idle"
    meta["invalid_reason"] = None if valid else invalid_reason
    meta["target"] = {"kind": kind, "paced": kind == "bench", "profiler": None, "executor": None,
                      "profiler_kind": profiler_kind,
                      "note": f"mmanalysis.synth.class_handins: drawn from a model, posing as a {kind} run"}
    if kind == "bench":
        meta["bench"] = {"host": {"sched": sched, "mlock": sched == "fifo 10"}}
    meta["synthetic"] = True      # whatever it poses as, it is no measurement: every view flags it so
    return write_run(folder / name, rows, meta)[0]


LAB_HTML = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>lab</title></head><body><p>Generated by "
            "mmanalysis.synth.class_handins: a stand-in for the group's executed notebook (lab.html), no answers."
            "</p></body></html>\n")


def cut_short(csv: Path) -> None:
    """Leaves the run CSV as a write cut short leaves it: its sidecar records the whole file's csv_sha256 (as
    every run's does), then the file loses its second half, mid-line."""
    js = csv.with_suffix(".json")
    meta = json.loads(js.read_text())
    data = csv.read_bytes()
    meta["csv_sha256"] = hashlib.sha256(data).hexdigest()
    atomic_write(js, (json.dumps(meta, indent=2) + "\n").encode())
    atomic_write(csv, data[: len(data) // 2 + 7])


def class_handins(folder: Path | str, groups: int = 5, count: int = 60, seed: int = 0,
                  faults: bool = False) -> list[Path]:
    """A class folder of generated hand-ins for tests and practice: FOLDER/group-NN/, the five experiments each,
    with the variety a class has (the runs are drawn from the model, NOT measured; each sidecar's
    `target.note` says so), and each group's lab.html (a stand-in page: docs/lab.md "What to hand in"):

    - group-01: the virtual bench, the demo's run names, in results/;
    - group-02: the bench, in results/, its normal-mode run invalid and set aside (NAME.attempt1) beside the
      valid retry, and its loaded run invalid (the only one);
    - group-03: boards (its sidecars say `target.kind` boards), free-running generation for 1 tick ahead, the runs
      directly in the group folder;
    - group-04: practice data handed in as it is (`target.kind` synthetic, write_experiments' names);
    - group-05: the bench, experiment 5 missing, runs named run1..run4;
    - group-06 and on: the bench, like group-01.

    FAULTS adds what goes wrong in a real class: group-01 also handed in the 8051 demo's run of experiment 1
    (results/8051/exp1-verification, `target.profiler_kind` 8051: docs/lab.md step 6); group-03 no lab.html;
    group-05's bench ran without real-time priority (`bench.host.sched` other) and its normal-mode CSV was cut
    short (cut_short: its sidecar's csv_sha256 no longer matches).

    Returns the group folders."""
    folder = Path(folder)
    out = []
    for g in range(groups):
        gdir = folder / f"group-{g + 1:02d}"
        style = g if g < len(HANDIN_NAMES) else 0
        s = seed + 100 * g
        gdir.mkdir(parents=True, exist_ok=True)
        if not (faults and style == 2):
            atomic_write(gdir / "lab.html", LAB_HTML.encode())
        if style == 3:
            write_experiments(gdir / "results", count, s)
            out.append(gdir)
            continue
        kind = "boards" if style == 2 else "bench"
        runs = gdir if style == 2 else gdir / "results"
        sched = "other" if faults and style == 4 else "fifo 10"
        for i, (experiment, name) in enumerate(zip(EXPERIMENTS, HANDIN_NAMES[style])):
            if name is None:
                continue
            gen = "free" if style == 2 and experiment == "mixed-1ahead" else "aligned"
            valid, why = True, None
            if style == 1 and experiment == "mixed-2ahead-loaded":
                valid, why = False, "the bench fell behind wall time by 2,310 us (bound 1,000 us) in 14 % of the events"
            csv = _handin_run(runs, name, experiment, kind, count, s + i, gen, valid, why, sched=sched)
            if style == 1 and experiment == "normal-1ahead":
                _handin_run(runs, f"{name}.attempt1", experiment, kind, count, s + 50 + i, gen, False,
                            "the bench fell behind wall time by 5,120 us (bound 1,000 us) in 9 % of the events")
            if faults and style == 0 and experiment == "verification":
                _handin_run(runs / "8051", name, experiment, kind, count, s + 70 + i, profiler_kind="8051")
            if faults and style == 4 and experiment == "normal-1ahead":
                cut_short(csv)
        out.append(gdir)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mmanalysis.synth", description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--class-groups", type=int, default=0, metavar="N",
                    help="write a class folder of N generated groups' hand-ins instead (class_handins)")
    args = ap.parse_args(argv)
    if args.class_groups:
        for p in class_handins(args.out_dir, args.class_groups, args.count, args.seed):
            print(p)
        return 0
    for p in write_experiments(args.out_dir, args.count, args.seed):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
