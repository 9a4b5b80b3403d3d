#!/usr/bin/env python3
"""Benchmark: one long lockstep run at 1 kHz, mixed mode's periodic series on the AVR profiler's histogram alone
(`--generation periodic -i 1ms --baud 115200 --no-raw`, default 10^7 events: about 14 minutes on the 2-vCPU VM),
as `mmrig run -D 5h` would be for hours on the bench. The resident sets of the run's process and of every process
under it (the bench) are read from /proc once a second; the figure is how much their sum's peak in the run's last
tenth exceeds its peak in the first tenth (target < 10 %), with events a second. Prints a JSON list of
{"name","unit","median","max","runs","note"} for tools/perf.py; `--count N` for a shorter look."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """VmRSS of `pid` in KB (or another of /proc's status fields: VmHWM, its peak so far), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it, from /proc's children lists."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*") if Path(f"/proc/{p}/task").exists() else ():
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except (FileNotFoundError, ProcessLookupError):
                pass
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mmrig-long-") as tmp:
        cmd = [sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--generation", "periodic", "-i", "1ms",
               "--baud", "115200", "--no-raw", "--count", str(args.count), "--unpaced", "-q",
               "-o", str(Path(tmp) / "long")]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        samples: list[tuple[float, int, int]] = []        # (s since start, run's process KB, all under it KB)
        while proc.poll() is None:
            own = rss_kb(proc.pid)
            samples.append((time.monotonic() - t0, own, sum(rss_kb(p) for p in descendants(proc.pid))))
            time.sleep(1.0)
        wall = time.monotonic() - t0
        out = proc.stdout.read() if proc.stdout else ""
        if proc.returncode != 0:
            print(out, file=sys.stderr)
            raise SystemExit(f"the long run exited {proc.returncode}")
        sidecar = json.loads((Path(tmp) / "long.json").read_text())
    tenth = max(1, len(samples) // 10)
    first, last = samples[:tenth], samples[-tenth:]
    peak_first, peak_last = max(s[2] for s in first), max(s[2] for s in last)
    growth = 100 * (peak_last - peak_first) / peak_first
    own_first, own_last = max(s[1] for s in first), max(s[1] for s in last)
    hist = sidecar.get("profiler_histogram") or {}
    print(json.dumps([
        {"name": f"long run's memory, {args.count:,} events at 1 kHz (periodic, histogram alone, lockstep)",
         "unit": "%", "median": growth, "max": growth, "runs": 1,
         "note": f"target < 10 %: peak RSS of the run and the bench {peak_first / 1024:.1f} MB in the first tenth, "
                 f"{peak_last / 1024:.1f} MB in the last (the run's own process {own_first / 1024:.1f} -> "
                 f"{own_last / 1024:.1f} MB); {len(samples)} samples, one a second; valid {sidecar.get('valid')}; "
                 f"histogram keys {sorted(hist)[:6]}"},
        {"name": "long lockstep run, events a second", "unit": "events/s", "median": args.count / wall,
         "max": args.count / wall, "runs": 1, "note": f"{args.count:,} events in {wall:.0f} s wall"},
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
