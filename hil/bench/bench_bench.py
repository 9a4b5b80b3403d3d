#!/usr/bin/env python3
"""Speed and pacing of the virtual bench at the paper's default workload: both real images simulated,
the profiler's timecode flowing (14.06 ticks/s, a TIMECODE frame each), the executor in mixed mode with
one SCHEDULE per tick, 2 ticks ahead (each giving ACK, the event edge, FIRED and the profiler's RESULT).

  unpaced speed: virtual seconds per wall second (target >= 3x real time)
  paced lag:     p99.9 and maximum of wall - virtual time while paced (target p99.9 <= 100 us, idle machine)

Prints the figures as JSON for tools/perf.py. Usage: bench_bench.py [--runs N] [--virtual S] [--paced-s S]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "protocol/python"))
import mmproto as mp  # noqa: E402

BENCH = ROOT / "hil/bench/build/mmbench"
PROFILER = ROOT / "profiler-fw/build/avr/profiler.elf"
EXECUTOR = ROOT / "executor/build/avr/executor.elf"
TICK_S = 1_137_778 / 16_000_000
FIRST_TICK_S = 0.2404  # the profiler's tick 0 begins about here after boot


def workload(path: Path, seconds: float) -> Path:
    lines = ["0.05 executor " + mp.Mode(2, 0, 0, 0, 0).wire(0).hex(" ")]
    k = 1
    while FIRST_TICK_S + (k + 0.3) * TICK_S < seconds:
        lines.append(f"{FIRST_TICK_S + (k + 0.3) * TICK_S:.6f} executor "
                     + mp.Schedule(k & 0xFFFF, k & 7, k + 2).wire(k & 0xFF).hex(" "))
        k += 1
    path.write_text("\n".join(lines) + "\n")
    return path


def run(tmp: Path, script: Path, seconds: float, paced: bool, spin: bool = False) -> tuple[float, dict]:
    cmd = [str(BENCH), "--profiler", str(PROFILER), "--executor", str(EXECUTOR), "--run-dir", str(tmp / "run"),
           "--until", str(seconds), "--script", str(script), "--lag-bound-us", "100"]
    if not paced:
        cmd.append("--unpaced")
    if spin:
        cmd.append("--spin")
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"bench failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - start, json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--virtual", type=float, default=60.0, help="virtual seconds per unpaced run")
    ap.add_argument("--paced-s", type=float, default=5.0, help="seconds per paced run")
    args = ap.parse_args()
    for need in (BENCH, PROFILER, EXECUTOR):
        if not need.exists():
            sys.exit(f"{need} missing: run `make -C hil all`")
    with tempfile.TemporaryDirectory(prefix="mmbench-perf.") as d:
        tmp = Path(d)
        script = workload(tmp / "script.txt", max(args.virtual, args.paced_s))
        speeds, events = [], 0
        for _ in range(args.runs):
            wall, st = run(tmp, script, args.virtual, paced=False)
            speeds.append(args.virtual / wall)
            events = st["wires"]["changes"]
        paced_runs = max(3, args.runs // 2)
        lag: dict[bool, tuple[list[float], list[float]]] = {}
        for spin in (False, True):
            p999, maxima = [], []
            for _ in range(paced_runs):
                _, st = run(tmp, script, args.paced_s, paced=True, spin=spin)
                p999.append(st["lag"]["p999_us"])
                maxima.append(st["lag"]["max_us"])
            lag[spin] = (p999, maxima)
    print(json.dumps([
        {"name": "bench unpaced speed", "unit": "x real time", "median": statistics.median(speeds), "max": max(speeds),
         "runs": args.runs,
         "note": f"both images, 1 SCHEDULE/tick 2 ticks ahead, {args.virtual:g} s virtual/run, {events} pin changes; target >= 3"},
    ] + [fig for spin, (p999, maxima) in lag.items() for fig in (
        {"name": f"bench paced lag p99.9{' (--spin)' if spin else ''}", "unit": "us", "median": statistics.median(p999),
         "max": max(p999), "runs": paced_runs,
         "note": f"{args.paced_s:g} s paced runs, same workload, {'busy-wait' if spin else 'ppoll'} pacing; target <= 100 on an idle machine"},
        {"name": f"bench paced lag max{' (--spin)' if spin else ''}", "unit": "us", "median": statistics.median(maxima),
         "max": max(maxima), "runs": paced_runs, "note": "largest wall - virtual seen in a run"},
    )]))


if __name__ == "__main__":
    main()
