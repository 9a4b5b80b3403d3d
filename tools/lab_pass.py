#!/usr/bin/env python3
"""The student pass: every command block of the lab handout a student runs on the bench (docs/lab.md's `bash lab`
and `bash lab-short` blocks, verbatim, the experiments at their full 200 events), in the handout's order, in a
fresh lab folder, timed block by block: the figures the handout's timetable and the instructor's guide quote, from
one pass.

    .venv/bin/python tools/lab_pass.py [--hog] [--out DIR]

--hog   `stress-ng --cpu 1` beside the whole pass at nice 0 (a browser and the other programs of a lab PC)
--out   the lab folder (default: a new folder under /tmp); it must not exist yet

Run it as the student would: a normal user, in a clone of their own after `make setup`. It prints, for each block,
its step, its first command, its time and exit status; for `mmrig demo`, the try of each experiment that counted
(an earlier try a host stall voided is kept as NAME.attemptK); and the date, the user, the load average and the
scheduling the bench got. Figures only: it asserts nothing (analysis/tests/test_lab_doc.py runs the same blocks as a
test). Exit status 0; 1 if a block failed (its output is printed); 2 if --out is taken or its parent missing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import getpass
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmanalysis.labhandout import read

ROOT = Path(__file__).resolve().parent.parent


def demo_tries(results: Path) -> dict[str, int]:
    """Each experiment of the demo and the try that counted (1: its first)."""
    out = {}
    for side in sorted(results.glob("*.json")):
        if ".attempt" in side.name:
            continue
        out[side.stem] = 1 + len(list(results.glob(f"{side.stem}.attempt*.json")))
    return out


def bench_sched(results: Path) -> str:
    """The scheduling the bench's simulation got in the demo's runs (the sidecar's bench.host.sched), as one set."""
    seen = set()
    for side in results.glob("*.json"):
        host = (json.loads(side.read_text()).get("bench") or {}).get("host") or {}
        if host.get("sched"):
            seen.add(host["sched"])
    return ", ".join(sorted(seen)) or "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hog", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lab = args.out or Path(tempfile.mkdtemp(prefix="mmrig-lab-pass-"))
    if args.out is not None:
        try:
            lab.mkdir()                 # a fresh lab folder, as a student starts with (never a link's target)
        except OSError as exc:
            print(f"lab_pass: --out {lab}: {exc.strerror} (it must be a new folder in an existing one)")
            return 2
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}", MPLBACKEND="Agg")
    hog = subprocess.Popen(["stress-ng", "--cpu", "1", "--quiet"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) if args.hog else None
    rows, failed, total = [], 0, 0.0
    started = dt.datetime.now(dt.timezone.utc)
    try:
        for block in read(ROOT / "docs" / "lab.md"):
            if not block.runs:
                continue
            t0 = time.monotonic()
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", block.body], cwd=lab, env=env, capture_output=True,
                               text=True)
            took = time.monotonic() - t0
            total += took
            first = next(line for line in block.body.splitlines() if line.strip())
            more = len([line for line in block.body.splitlines() if line.strip()]) - 1
            rows.append((block.step, first + (f" (+{more})" if more else ""), took, r.returncode))
            if r.returncode != 0:
                failed += 1
                print(f"--- {first}: exit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}", file=sys.stderr)
    finally:
        if hog is not None:
            hog.terminate()
            hog.wait()
    load = os.getloadavg()
    print(f"# the student pass, {started:%Y-%m-%d %H:%M} UTC, as {getpass.getuser()} (uid {os.getuid()}), "
          f"{'beside stress-ng --cpu 1' if args.hog else 'nothing beside it'}; load average at the end "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; lab folder {lab}\n")
    print("| step | block (its first command) | s | exit |\n|---|---|---|---|")
    for step, first, took, rc in rows:
        print(f"| {step} | `{first}` | {took:.0f} | {rc} |")
    print(f"| | all blocks | {total:.0f} | |")
    results = lab / "results"
    if results.is_dir():
        tries = demo_tries(results)
        firsts = sum(1 for n in tries.values() if n == 1)
        print(f"\nmmrig demo: {firsts} of {len(tries)} experiments valid at their first try; the bench's scheduling: "
              f"{bench_sched(results)}")
        for name, n in tries.items():
            if n > 1:
                print(f"  {name}: counted at try {n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
