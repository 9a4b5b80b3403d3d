#!/usr/bin/env python3
"""Speed of the three-node bench with the paper's 8051 profiler (docs/bench.md, "The 8051 profiler"),
unpaced, as a multiple of real time, beside the AVR bench in the same run for the ratio.

Workload as perf_bench.py's: the profiler's timecode flowing (a TIMECODE frame a tick), the executor in mixed
mode with one SCHEDULE per tick, 2 ticks ahead (each giving ACK, the event edge on P0, FIRED and the
profiler's RESULT). The 8051's tick is 71.111 ms from 0.45 ms after power-on; the AVR profiler's 71.111 ms
from 0.2404 s. The two benches are run alternately (round robin), so they see the same machine; a
shorter traced run of each first checks that the workload's events come back as RESULTs.

  bench unpaced speed, 8051 profiler    virtual s per wall s (target >= 3x real time)
  bench unpaced speed, AVR profiler     the same workload on the two-AVR bench
  8051 / AVR bench speed                the ratio of the medians (and of the maxima)

Prints the figures as JSON for tools/perf.py. Usage: perf_bench8051.py [--runs N] [--virtual S]. Exits 0
with no figures (a line on stderr) where the bench has no 8051 core (build/ucsim missing).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_bench import BENCH, EXECUTOR, FIRST_TICK_S, PROFILER, TICK_S, workload  # noqa: E402
from perf_bench import run as bench_run  # noqa: E402  (the AVR bench's benchmark: the same workload and run)


PROFILERS = {
    # name: (image, the tick in s, tick 0's start after power-on in s)
    "8051": (ROOT / "profiler-fw/build/mcs51/profiler.ihx", 65536 * 12 / 11_059_200, 7257 / 16e6),
    "AVR": (PROFILER, TICK_S, FIRST_TICK_S),
}


def run(tmp: Path, name: str, script: Path, seconds: float, trace: Path | None = None) -> tuple[float, dict]:
    return bench_run(tmp, script, seconds, paced=False, extra=["--trace", str(trace)] if trace else None,
                     profiler=PROFILERS[name][0])


def results_in(trace: Path) -> int:
    dec = mp.StreamDecoder()
    n = 0
    for line in trace.read_text().splitlines():
        kind, _cycle, node, value = line.split()
        if kind == "O" and node == "profiler":
            n += sum(isinstance(r.message, mp.Result) for r in dec.feed(bytes([int(value, 16)])))
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--virtual", type=float, default=30.0, help="virtual seconds per run")
    args = ap.parse_args()
    if not (ROOT / "build/ucsim/VERSION").is_file():
        print("perf_bench8051: build/ucsim is missing (tools/ucsim.sh): no 8051 bench to measure", file=sys.stderr)
        print("[]")
        return 0
    for need in (BENCH, EXECUTOR, *(p[0] for p in PROFILERS.values())):
        if not need.exists():
            sys.exit(f"{need} missing: run `make -C hil all` and `make -C profiler-fw mcs51`")
    speeds: dict[str, list[float]] = {name: [] for name in PROFILERS}
    with tempfile.TemporaryDirectory(prefix="mmbench-perf51.") as d:
        tmp = Path(d)
        scripts = {name: workload(tmp / f"{name}.txt", args.virtual, tick, first)
                   for name, (_img, tick, first) in PROFILERS.items()}
        check = {}
        for name in PROFILERS:                      # the workload works: RESULTs back for its SCHEDULEs
            run(tmp, name, scripts[name], 5.0, trace=tmp / f"{name}.trace")
            check[name] = results_in(tmp / f"{name}.trace")
            if check[name] < 60:
                sys.exit(f"perf_bench8051: only {check[name]} RESULTs from the {name} profiler in 5 s")
        changes = {}
        for _ in range(args.runs):
            for name in PROFILERS:
                wall, st = run(tmp, name, scripts[name], args.virtual)
                speeds[name].append(args.virtual / wall)
                changes[name] = st["wires"]["changes"]
    s51, avr = speeds["8051"], speeds["AVR"]
    note = (f"three nodes unpaced, 1 SCHEDULE/tick 2 ticks ahead, {args.virtual:g} s virtual/run, "
            f"runs alternating with the AVR bench")
    figures = [
        {"name": "bench unpaced speed, 8051 profiler", "unit": "x real time", "median": statistics.median(s51),
         "max": max(s51), "runs": len(s51),
         "note": f"{note}; {changes['8051']} pin changes/run, {check['8051']} RESULTs in a 5 s check; target >= 3"},
        {"name": "bench unpaced speed, AVR profiler (same run)", "unit": "x real time",
         "median": statistics.median(avr), "max": max(avr), "runs": len(avr),
         "note": f"the same workload, two AVRs; {changes['AVR']} pin changes/run, {check['AVR']} RESULTs in 5 s"},
        {"name": "8051 / AVR bench speed", "unit": "ratio", "median": statistics.median(s51) / statistics.median(avr),
         "max": max(s51) / max(avr), "runs": len(s51), "note": "medians (and maxima) of the two above"},
    ]
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
