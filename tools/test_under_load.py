#!/usr/bin/env python3
"""`make test` with other work on the machine, as a user's laptop has: a CPU hog beside it.

    .venv/bin/python tools/test_under_load.py [--runs N] [--cpus K] [--target TARGET] [--log-dir DIR]

Runs `make TARGET` (default test) N times (default 3), each with `stress-ng --cpu K` (default 2) at nice 0
beside it for exactly as long as the make runs, and prints per run: its exit status, its wall time and the
summary lines the suites printed ("N passed ...", "make test: all suites passed"); each run's whole output
goes to DIR/runK.log (default build/test-under-load/). Exit status: 0 when every run passed, else 1.
The test suite asserts what the rig promises on any host; this is how that claim is checked.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"(\d+ (passed|failed)|make [a-z-]+: all suites passed|Error \d+)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cpus", type=int, default=2, help="stress-ng --cpu K (default 2: both of a 2-vCPU VM)")
    ap.add_argument("--target", default="test")
    ap.add_argument("--log-dir", type=Path, default=ROOT / "build" / "test-under-load")
    a = ap.parse_args()
    if shutil.which("stress-ng") is None:
        print("test_under_load: stress-ng is not installed (make setup installs it)", file=sys.stderr)
        return 2
    a.log_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for k in range(1, a.runs + 1):
        hog = subprocess.Popen(["stress-ng", "--cpu", str(a.cpus), "--quiet"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        try:
            done = subprocess.run(["make", a.target], cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True)
        finally:
            hog.terminate()
            hog.wait()
        wall = time.monotonic() - t0
        log = a.log_dir / f"run{k}.log"
        log.write_text(done.stdout + done.stderr)
        lines = [ln.strip() for ln in (done.stdout + done.stderr).splitlines() if SUMMARY.search(ln)]
        failed += done.returncode != 0
        print(f"run {k}: exit {done.returncode}, {wall:.0f} s, stress-ng --cpu {a.cpus} beside it ({log})")
        for ln in lines:
            print(f"  {ln}")
    print(f"{a.runs - failed} of {a.runs} runs passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
