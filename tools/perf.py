#!/usr/bin/env python3
"""Runs every benchmark of the project, writes the figures to one JSON file and prints a table.

A benchmark is any executable listed in BENCHMARKS that prints a JSON list of figures on stdout:
    {"name": str, "unit": str, "median": float, "max": float, "runs": int, "note": str}
Each benchmark repeats its measurement itself and reports the median and the maximum of its runs, so
a noisy shared machine shows up as spread instead of being hidden by one lucky run. Later parts of the
rig add their benchmark to BENCHMARKS.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

from mmanalysis.safefiles import atomic_write   # every output through one safe opening

ROOT = Path(__file__).resolve().parents[1]
STREAM = ROOT / "build/perf/decoder_stream.bin"
BENCHMARKS: list[list[str]] = [
    [sys.executable, str(ROOT / "protocol/python/perf/perf_decoder.py"), str(STREAM)],
    [str(ROOT / "protocol/c/build/perf_decoder"), str(STREAM)],
    [sys.executable, str(ROOT / "hil/perf/perf_bench.py")],
    [sys.executable, str(ROOT / "hil/perf/perf_bench8051.py")],
    [sys.executable, str(ROOT / "hil/perf/perf_replay.py")],
    [sys.executable, str(ROOT / "analysis/perf/perf_summary.py")],
    [sys.executable, str(ROOT / "analysis/perf/perf_report.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_gui.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_gui_gantt.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_lockstep.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_sweep.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_sweep_scale.py"), "10000"],  # real points: MMRIG_PERF_SWEEP_POINTS
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_runs_in_one_process.py"), "2000"],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_long_run_memory.py")],   # 10^7 events: ~14 min
    # a row per event: 2 x 10^5 events (~4 min) against 10^4, the slope a 10^6 one would grow by
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_rows_memory.py"), "--count", "200000"],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_clean_rate.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_normal_vs_cyclictest.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_normal_khz_vs_cyclictest.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_mixed_khz.py")],
    [sys.executable, str(ROOT / "scheduler-gui/perf/perf_gui_firing.py")],
    [sys.executable, str(ROOT / "executor/perf/perf_tick_tasks.py")],
    [sys.executable, str(ROOT / "tools/usbserial_figures.py"), "--json"],
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "perf/results.json")
    parser.add_argument("--only", action="append", default=[], metavar="PART",
                        help="run only the benchmarks whose program's path holds PART (repeatable); their figures "
                             "replace the same-named ones in OUT, the others there are kept (make perf ONLY=PART)")
    args = parser.parse_args()
    figures: list[dict] = []
    failed: list[str] = []
    chosen = [c for c in BENCHMARKS if not args.only or any(part in " ".join(c) for part in args.only)]
    if not chosen:
        print(f"perf: no benchmark's path holds {', '.join(args.only)}", file=sys.stderr)
        return 2
    for command in chosen:
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            failed.append(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}")
            continue
        figures += json.loads(done.stdout)
    by_name = {f["name"]: f for f in figures}
    py, c = by_name.get("python decoder throughput"), by_name.get("C decoder throughput (host)")
    if py and c:
        figures.append({"name": "C / Python decoder speed", "unit": "ratio", "median": c["median"] / py["median"],
                        "max": c["max"] / py["max"], "runs": min(c["runs"], py["runs"]),
                        "note": "both measured in this run"})
    if args.only and args.out.is_file():
        try:                                 # the others' figures from the last run, kept
            new = {f["name"] for f in figures}
            figures = [f for f in json.loads(args.out.read_text()).get("figures", []) if f["name"] not in new] + figures
        except (ValueError, AttributeError, TypeError):
            pass
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out, (json.dumps({"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": platform.node(),
                                        "python": platform.python_version(), "figures": figures}, indent=2)
                            + "\n").encode())
    width = max(len(f["name"]) for f in figures) if figures else 10
    print(f"{'benchmark':<{width}}  {'median':>14}  {'max':>14}  {'unit':<10} runs  note")
    for f in figures:
        print(f"{f['name']:<{width}}  {f['median']:>14.4g}  {f['max']:>14.4g}  {f['unit']:<10} {f['runs']:>4}  {f['note']}")
    print(f"figures written to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    for failure in failed:
        print(f"BENCHMARK FAILED: {failure}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
