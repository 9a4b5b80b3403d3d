#!/usr/bin/env python3
"""Benchmark: what a run with a row per event holds, as its length grows. Two lockstep runs of mixed mode's
periodic series at 1 kHz with a RESULT per event (`--generation periodic -i 1ms --baud 500000 --raw --unpaced`),
of 10^4 events and of `--count N` (default 10^6); the peak resident set of each (the run's process and the bench,
each one's own peak, VmHWM, read from /proc twice a second, the run's exact from the kernel when it ends). The figure is the second's peak less the
first's, target < 100 MB (the issue's "a 10^6-event lockstep run's peak RSS within 100 MB of a 10^4-event
one's"): a run that streams its rows to disk and folds them in as they end would hold the same whatever its
length; one that keeps each event to its end grows by what an event costs. Prints a JSON list of
{"name","unit","median","max","runs","note"} for tools/perf.py."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf_long_run_memory import descendants, rss_kb

SMALL = 10_000


def peak_mb(count: int, folder: Path) -> tuple[float, float, bool]:
    """(peak RSS of the run and the bench in MB, wall seconds, valid) of one run of COUNT events."""
    cmd = [sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--generation", "periodic", "-i", "1ms",
           "--baud", "500000", "--raw", "--count", str(count), "--unpaced", "-q", "-o", str(folder / f"rows{count}")]
    t0 = time.monotonic()
    out_file = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=out_file, stderr=subprocess.STDOUT, text=True)
    # each process's own peak (VmHWM), the bench's as last seen and the run's from the kernel when it is reaped
    # (its last seconds, the judgement and the files, come after any look): their sum bounds the two together
    peaks: dict[int, int] = {}
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        for p in descendants(proc.pid):
            peaks[p] = max(peaks.get(p, 0), rss_kb(p, "VmHWM"))
        time.sleep(0.5)
    proc.returncode = os.waitstatus_to_exitcode(status)
    peaks[proc.pid] = max(peaks.get(proc.pid, 0), usage.ru_maxrss)
    peak = sum(peaks.values())
    wall = time.monotonic() - t0
    out_file.seek(0)
    out = out_file.read()
    if proc.returncode not in (0, 3):
        print(out, file=sys.stderr)
        raise SystemExit(f"the run of {count} events exited {proc.returncode}")
    valid = bool(json.loads((folder / f"rows{count}.json").read_text()).get("valid"))
    return peak / 1024, wall, valid


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mmrig-rows-") as tmp:
        small, small_wall, small_valid = peak_mb(SMALL, Path(tmp))
        big, big_wall, big_valid = peak_mb(args.count, Path(tmp))
    grows = big - small
    print(json.dumps([
        {"name": f"a run with a row per event: peak RSS of {args.count:,} events less {SMALL:,} (lockstep, 1 kHz)",
         "unit": "MB", "median": grows, "max": grows, "runs": 1,
         "note": f"target < 100 MB{' (at 10^6 events)' if args.count != 1_000_000 else ''}: {small:.1f} MB for "
                 f"{SMALL:,} events, {big:.1f} MB for {args.count:,} "
                 f"({1024 * grows / max(1, args.count - SMALL):.2f} KB an event more; valid {small_valid}, {big_valid}; "
                 f"{args.count / big_wall:,.0f} events a second)"},
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
