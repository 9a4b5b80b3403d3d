#!/usr/bin/env python3
"""Normal mode at a kilohertz beside cyclictest at a kilohertz: the same interval (1 ms), the same number of
samples (100,000 each by default), the tails a latency tool is read for (p99.9, p99.99, the maximum).

In one run of this script, on the same machine:

  cyclictest -i 1000, SCHED_FIFO 10 and mlockall (`-m -p 10`; not root: SCHED_OTHER, the note says so), alone:
      the host's own reference;
  then at the same time, side by side:
  cyclictest -i 1000 at what mmrig's firing thread asks of Linux: SCHED_OTHER, timer slack 1 ns (inherited from
      this script), /dev/cpu_dma_latency left alone (`--policy=other --default-system`), and
  mmrig normal mode on the paced virtual bench, one event every 1 ms on a schedule grid (mmsched.grid), both
      links at 500000 baud (a RESULT is 18 bytes: 0.36 ms of line there, 1.56 ms at 115200, which cannot carry
      one a millisecond): `mmrig run --mode normal -i 1 --baud 500000 --count N`.
  Side by side, because the bench is part of the machine then: it runs both boards' firmware at SCHED_FIFO 10
  and keeps about one of this VM's two CPUs, so mmrig's firing thread and cyclictest's SCHED_OTHER thread wake
  up on the same loaded host (alone, cyclictest would see an idle one).

Figures: n, p50, p99, p99.9, p99.99 and max in us, nearest rank (cyclictest: its 1 us histogram, wake-ups past
its 20 ms range counted as its maximum; mmrig: the run's measured, measurable events, mmanalysis.measured), and
mmrig / cyclictest (SCHED_OTHER) ratios. An mmrig run the bench marked invalid gives no figures (its reason is
printed). The two are not the same measurement: cyclictest's latency is a wake-up's lateness on the host's own
clock; mmrig's runs from the moment the profiler defines to the profiler's stamp of the FIRE, so it holds the
PC's tick estimate, its firing thread's wake-up, the write and the line (the budget columns split it).

stdout: a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py; stderr and
perf/normal_khz_vs_cyclictest.txt: the table. MMRIG_KHZ_SAMPLES (or --samples): samples of each (default
100000, about 6 minutes for the three).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from mmanalysis import measured, read_run
from mmsched.firing import set_thread_timer_slack_ns
from perf_normal_vs_cyclictest import REFUSED, Failure, env_int, quantile_from_histogram

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "perf/normal_khz_vs_cyclictest.txt"
HIST_US = 20000
BAUD = 500000
BESIDE_LEAD_S = 6.0      # mmrig's handshake, BAUD and calibrations before its first event (about 5 s)
QUANTILES = (("p50", 0.50), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999))


@dataclass
class Tail:
    """One case's figures, in us; `why` instead when it has none."""

    label: str
    note: str
    n: int = 0
    q: dict[str, float] | None = None
    max: float | None = None
    why: str | None = None


def nearest_rank(values: np.ndarray, q: float) -> float:
    s = np.sort(values)
    return float(s[max(1, math.ceil(round(q * len(s), 6))) - 1])


def cyclictest(tmp: Path, samples: int, label: str, attempts: list[tuple[str, list[str]]]) -> Tail:
    """cyclictest with the first of `attempts` (what it is, its options) the host allows."""
    for what, options in attempts:
        out = tmp / "cyclictest.json"
        out.unlink(missing_ok=True)
        command = ["cyclictest", *options, "-q", "-i", "1000", "-l", str(samples), "-h", str(HIST_US),
                   "--histfile=/dev/null", f"--json={out}"]
        done = subprocess.run(command, capture_output=True, text=True, preexec_fn=lambda: set_thread_timer_slack_ns(1))
        if done.returncode == 0 and out.is_file():
            thread = json.loads(out.read_text())["thread"]["0"]
            hist = {int(k): int(v) for k, v in thread.get("histogram", {}).items()}
            cycles, top = int(thread["cycles"]), float(thread["max"])
            return Tail(label, what, n=cycles, max=top,
                        q={k: quantile_from_histogram(hist, cycles, p, top) for k, p in QUANTILES})
        if REFUSED not in done.stderr:
            first = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[0]
            raise Failure(f"{' '.join(command)}: exit {done.returncode}: {first}")
    return Tail(label, "refused", why="cyclictest refused every policy tried (no right to SCHED_FIFO)")


def side_by_side(first: Callable[[], Tail], second: Callable[[], Tail], lead_s: float) -> tuple[Tail, Tail]:
    """`first` in a thread, `second` `lead_s` later in this one; both Tails (an exception of either raised)."""
    got: list[Tail] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            got.append(first())
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        time.sleep(lead_s)
        other = second()
    finally:
        thread.join()
    if errors:
        raise errors[0]
    return got[0], other

def mmrig(tmp: Path, samples: int) -> Tail:
    label = "mmrig normal -i 1 ms, paced bench, beside"
    out = tmp / "khz"
    command = [sys.executable, "-m", "mmrig", "run", "--mode", "normal", "-i", "1", "--baud", str(BAUD),
               "--count", str(samples), "-q", "-o", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    sidecar_path = out.with_suffix(".json")
    if done.returncode not in (0, 3) or not sidecar_path.is_file():
        first = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise Failure(f"mmrig run: exit {done.returncode}: {first}")
    sidecar = json.loads(sidecar_path.read_text())
    grid = sidecar.get("grid") or {}
    outcomes = sidecar["summary"]["outcomes"]
    note = (f"{BAUD} baud, {grid.get('per_s')} events/s asked, naive tick estimate; outcomes "
            + "/".join(str(outcomes.get(k, 0)) for k in ("ok", "late", "early", "missed", "lost"))
            + " ok/late/early/missed/lost")
    if not sidecar.get("valid", True):
        return Tail(label, note, why=f"run invalid: {sidecar.get('invalid_reason')}")
    run = read_run(out.with_suffix(".csv"))
    lat = measured(run.df)["latency_us"].to_numpy(dtype=float)
    if not len(lat):
        return Tail(label, note, why="no measurable event")
    return Tail(label, note, n=len(lat), max=float(lat.max()), q={k: nearest_rank(lat, p) for k, p in QUANTILES})


def fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def table(tails: list[Tail], ref: Tail, mm: Tail, samples: int, load: str) -> str:
    keys = [k for k, _ in QUANTILES]
    head = f"{'case':<40} {'n':>7} " + " ".join(f"{k + ' us':>10}" for k in keys) + f" {'max us':>10}"
    lines = [f"normal mode at 1 kHz beside cyclictest at 1 kHz (the two 'beside' ran at the same time): {samples} "
             f"samples each asked; {load}", head,
             "-" * len(head)]
    for t in tails:
        if t.q is None:
            lines.append(f"{t.label:<40} no figures: {t.why}")
            continue
        lines.append(f"{t.label:<40} {t.n:>7} " + " ".join(f"{fmt(t.q[k]):>10}" for k in keys) + f" {fmt(t.max):>10}")
    if mm.q is not None and ref.q is not None:
        ratios = [mm.q[k] / ref.q[k] if ref.q[k] > 0 else None for k in keys]
        lines.append(f"{'mmrig / cyclictest (SCHED_OTHER)':<40} {'':>7} "
                     + " ".join(f"{fmt(r):>10}" for r in ratios)
                     + f" {fmt(mm.max / ref.max if ref.max else None):>10}")
    lines += [f"{t.label}: {t.note}" for t in tails]
    return "\n".join(lines)


def figures_json(tails: list[Tail], ref: Tail, mm: Tail, load: str) -> list[dict]:
    out: list[dict] = []
    for t in tails:
        if t.q is None:
            continue
        for k, v in [*t.q.items(), ("max", t.max)]:
            out.append({"name": f"{t.label} {k}", "unit": "us", "median": v, "max": v, "runs": 1,
                        "note": f"n {t.n}; {t.note}; {load}"})
    if mm.q is not None and ref.q is not None:
        for k, v in mm.q.items():
            if ref.q[k] > 0:
                out.append({"name": f"mmrig normal 1 kHz / cyclictest 1 kHz {k}", "unit": "ratio",
                            "median": v / ref.q[k], "max": v / ref.q[k], "runs": 1,
                            "note": f"one run each, at the same time on the same machine; against {ref.label}"})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        parser.add_argument("--samples", type=int, default=env_int("MMRIG_KHZ_SAMPLES", 100_000))
        args = parser.parse_args(argv)
        if args.samples <= 0:
            raise Failure("--samples must be > 0")
        if shutil.which("cyclictest") is None:
            raise Failure("cyclictest not found: install Debian's rt-tests (tools/setup.sh does)")
        load_before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory(prefix="mmrig-khz-") as name:
            tmp = Path(name)
            print("cyclictest -i 1000, SCHED_FIFO, alone", file=sys.stderr, flush=True)
            fifo = cyclictest(tmp, args.samples, "cyclictest -i 1000 -m -p 10, alone",
                                 [("SCHED_FIFO 10, mlockall", ["-m", "-p", "10"]),
                                  ("SCHED_OTHER: SCHED_FIFO refused, not root", ["-m", "--policy=other"])])
            print("cyclictest -i 1000, SCHED_OTHER, beside mmrig run --mode normal -i 1", file=sys.stderr, flush=True)
            # mmrig first: its handshake, BAUD and calibrations take about 5 s before its events begin
            mm, other = side_by_side(
                lambda: mmrig(tmp, args.samples),
                lambda: cyclictest(tmp, args.samples, "cyclictest -i 1000 SCHED_OTHER, beside",
                                   [("SCHED_OTHER, 1 ns slack, no PM tuning: as mmrig's firing thread, run beside it",
                                     ["-m", "--policy=other", "--default-system"])]), BESIDE_LEAD_S)
        load = f"1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)"
        tails = [fifo, other, mm]
        text = table(tails, other, mm, args.samples, load)
        print(text, file=sys.stderr)
        TABLE.parent.mkdir(parents=True, exist_ok=True)
        TABLE.write_text(text + "\n")
        print(json.dumps(figures_json(tails, other, mm, load)))
        return 0
    except Failure as exc:
        print(f"perf_normal_khz_vs_cyclictest: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
