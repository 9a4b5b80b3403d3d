#!/usr/bin/env python3
"""Normal mode at a kilohertz beside cyclictest at a kilohertz, alternated, idle and beside a CPU hog.

In one run of this script, on the same machine, one after the other (never at the same time: each measures the
machine, not the other), first with nothing else running and then beside `stress-ng --cpu 1` (a stand-in for a
browser, started for that half of the cases and stopped after it):

  cyclictest -m -p 80 -i 1000 -l N                  the host's own wake-up latency (SCHED_FIFO 80, mlockall)
  mmrig run --mode normal -m -p 80 -i 1ms --baud 500000 -l N
                                                    normal mode's native firing thread at the same priority, its
                                                    links on the bench's line sockets (the default)
  the same with --bench-port pty                    the same run through the bench's ptys (the kernel's tty hop)

Without the right to SCHED_FIFO 80 (root, CAP_SYS_NICE, RLIMIT_RTPRIO), cyclictest and -p are left out: the
script says so and measures at SCHED_OTHER (its note).

Figures, nearest rank, in us: p50, p99, p99.9 and the maximum of the wake-up (cyclictest: its latency, 1 us
histogram, each missed period an overrun, not a sample; mmrig: its firing thread's own, the sleep's return minus the
moment, over the FIREs it slept for: the sidecar's `cpu.fire_woke_late_us`; a FIRE due already when the thread took
it, after a late one, is an overrun, counted in the note with the budget's wakeup_us, the moment to the write's
start over every FIRE) and of mmrig's whole latency (the measured, measurable events); mmrig / cyclictest wake-up ratios in the same
condition; each mmrig run's voided share (events not measurable: a byte of theirs the bench displaced past the
bound) beside its stalled share (the share of the run's window the bench's stalls covered). A run the bench marked
invalid still gives its wake-up figures (they are the PC's, not the bench's), marked so.

stdout: a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py; stderr and
perf/normal_khz_vs_cyclictest.txt: the table. --samples N (MMRIG_KHZ_SAMPLES): events and wake-ups of each case
(default 100000: about 11 minutes for the six cases).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mmanalysis import measured, read_run
from mmsched.host.rtsched import fifo_refusal
from mmanalysis.safefiles import atomic_write   # every output through one safe opening
from perf_normal_vs_cyclictest import REFUSED, Failure, env_int, quantile_from_histogram

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "perf/normal_khz_vs_cyclictest.txt"
HIST_US = 20000
BAUD = 500000
PRIORITY = 80
QUANTILES = (("p50", 0.50), ("p99", 0.99), ("p99.9", 0.999))


@dataclass
class Tail:
    """One case's figures in us; `why` instead of figures when it has none."""

    label: str
    note: str
    wake: dict[str, float] | None = None         # p50, p99, p99.9, max of the wake-up
    latency: dict[str, float] | None = None      # ... of the whole latency (mmrig)
    n: int = 0
    extra: dict[str, float] = field(default_factory=dict)   # voided and stalled shares
    why: str | None = None


def nearest_rank(values: np.ndarray, q: float) -> float:
    s = np.sort(values)
    return float(s[max(1, math.ceil(round(q * len(s), 6))) - 1])


def tails_of(values: np.ndarray) -> dict[str, float]:
    return {**{k: nearest_rank(values, p) for k, p in QUANTILES}, "max": float(values.max())}


def cyclictest(tmp: Path, samples: int, fifo: bool, label: str) -> Tail:
    out = tmp / "cyclictest.json"
    out.unlink(missing_ok=True)
    policy = ["-p", str(PRIORITY)] if fifo else ["--policy=other"]
    command = ["cyclictest", "-m", *policy, "-q", "-i", "1000", "-l", str(samples), "-h", str(HIST_US),
               "--histfile=/dev/null", f"--json={out}"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not out.is_file():
        if REFUSED in done.stderr:
            return Tail(label, " ".join(command), why="cyclictest refused the policy (no right to SCHED_FIFO)")
        first = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[0]
        raise Failure(f"{' '.join(command)}: exit {done.returncode}: {first}")
    thread = json.loads(out.read_text())["thread"]["0"]
    hist = {int(k): int(v) for k, v in thread.get("histogram", {}).items()}
    cycles, top = int(thread["cycles"]), float(thread["max"])
    wake = {k: quantile_from_histogram(hist, cycles, p, top) for k, p in QUANTILES}
    return Tail(label, " ".join(command[:-3]), wake={**wake, "max": top}, n=cycles)


def mmrig(tmp: Path, samples: int, fifo: bool, port: str, label: str) -> Tail:
    out = tmp / f"khz-{port}"
    rt = ["-p", str(PRIORITY), "-m"] if fifo else []
    command = [sys.executable, "-m", "mmrig", "run", "--mode", "normal", *rt, "-i", "1ms", "--baud", str(BAUD),
               "-l", str(samples), "--bench-port", port, "-q", "--force", "-o", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    sidecar_path = out.with_suffix(".json")
    if done.returncode not in (0, 1, 3) or not sidecar_path.is_file():
        first = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise Failure(f"mmrig run: exit {done.returncode}: {first}")
    sidecar = json.loads(sidecar_path.read_text())
    outcomes = sidecar["summary"]["outcomes"]
    m = sidecar.get("measurability") or {}
    cpu = sidecar.get("cpu") or {}
    valid = sidecar.get("valid", True)
    note = (f"{' '.join(command[3:-4])}: firing {cpu.get('firing')} at {cpu.get('firer_sched')}, outcomes "
            + "/".join(str(outcomes.get(k, 0)) for k in ("ok", "late", "early", "missed", "lost"))
            + " ok/late/early/missed/lost" + ("" if valid else f"; INVALID: {sidecar.get('invalid_reason')}"))
    df = read_run(out.with_suffix(".csv")).df
    to_write = df["wakeup_us"].dropna().to_numpy(dtype=float)
    lat = measured(df)["latency_us"].to_numpy(dtype=float)
    extra = {"voided_share": float(m.get("unmeasurable_share") or 0.0),
             "stalled_share": float(m.get("stall_time_share") or 0.0)}
    woke = cpu.get("fire_woke_late_us")
    if woke is None or not len(to_write):
        return Tail(label, note, why="no event has a wake-up figure", extra=extra)
    # the wake-up as cyclictest measures its own (the thread's sleep returned, after its moment); the budget's
    # wakeup_us runs on to the write's start (a write the line's gap held after a late one is later still)
    to = tails_of(to_write)
    note += (f"; moment to write start (the budget's wakeup_us) p50/p99/p99.9/max {to['p50']:.1f}/{to['p99']:.1f}/"
             f"{to['p99.9']:.1f}/{to['max']:.1f} us, {cpu.get('fires_held_for_line')} writes held for the line, "
             f"{cpu.get('fire_overruns')} overruns (due already when the thread took them)")
    return Tail(label, note, wake={k: float(woke[k]) for k in ("p50", "p99", "p99.9", "max")},
                latency=tails_of(lat) if len(lat) and valid else None, n=int(woke["n"]), extra=extra)


class Hog:
    """stress-ng --cpu 1 (a browser's stand-in) for the lifetime of the block."""

    def __enter__(self) -> "Hog":
        if shutil.which("stress-ng") is None:
            raise Failure("stress-ng not found (Debian: apt-get install stress-ng; tools/setup.sh installs it)")
        self.proc = subprocess.Popen(["stress-ng", "--cpu", "1", "--quiet"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        time.sleep(2.0)
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:,.1f}"


def table(rows: list[tuple[str, Tail]], samples: int, load: str) -> str:
    keys = [k for k, _ in QUANTILES] + ["max"]
    head = (f"{'case':<34} {'n':>7} " + " ".join(f"{'wake ' + k:>11}" for k in keys)
            + " " + " ".join(f"{'lat ' + k:>11}" for k in keys) + f" {'voided':>7} {'stalled':>7}")
    lines = [f"normal mode at 1 kHz against cyclictest at 1 kHz, alternated, {samples} samples each asked; {load}",
             head, "-" * len(head)]
    for condition, t in rows:
        label = f"{condition}: {t.label}"
        if t.wake is None:
            lines.append(f"{label:<34} no figures: {t.why}")
            continue
        lat = t.latency or {}
        lines.append(f"{label:<34} {t.n:>7} " + " ".join(f"{fmt(t.wake[k]):>11}" for k in keys) + " "
                     + " ".join(f"{fmt(lat.get(k)):>11}" for k in keys)
                     + (f" {t.extra['voided_share']:>7.2%} {t.extra['stalled_share']:>7.2%}" if t.extra else ""))
    for condition in ("idle", "stress-ng --cpu 1"):
        ref = next((t for c, t in rows if c == condition and t.label == "cyclictest" and t.wake), None)
        mm = next((t for c, t in rows if c == condition and t.label == "mmrig socket" and t.wake), None)
        if ref and mm:
            lines.append(f"{condition + ': wake-up mmrig / cyclictest':<34} {'':>7} "
                         + " ".join(f"{fmt(mm.wake[k] / ref.wake[k] if ref.wake[k] else None):>11}" for k in keys))
    lines += [f"{c}: {t.label}: {t.note}" for c, t in rows]
    return "\n".join(lines)


def figures_json(rows: list[tuple[str, Tail]], load: str) -> list[dict]:
    out: list[dict] = []
    for condition, t in rows:
        for part, figs in (("wake-up", t.wake), ("latency", t.latency)):
            for k, v in (figs or {}).items():
                out.append({"name": f"normal 1 kHz {condition}: {t.label} {part} {k}", "unit": "us", "median": v,
                            "max": v, "runs": 1, "note": f"n {t.n}; {t.note}; {load}"})
        for k, v in t.extra.items():
            out.append({"name": f"normal 1 kHz {condition}: {t.label} {k}", "unit": "share", "median": v, "max": v,
                        "runs": 1, "note": t.note})
    for condition in ("idle", "stress-ng --cpu 1"):
        ref = next((t for c, t in rows if c == condition and t.label == "cyclictest" and t.wake), None)
        mm = next((t for c, t in rows if c == condition and t.label == "mmrig socket" and t.wake), None)
        if ref and mm:
            for k in [q for q, _ in QUANTILES] + ["max"]:
                if ref.wake[k]:
                    r = mm.wake[k] / ref.wake[k]
                    out.append({"name": f"normal 1 kHz {condition}: wake-up mmrig / cyclictest {k}", "unit": "ratio",
                                "median": r, "max": r, "runs": 1, "note": "one run each, alternated, same machine"})
    return out


def main(argv: list[str] | None = None) -> int:
    # A TERM (make perf stopped, a CI timeout) ends the run through the blocks' exits, so the hog and the runs
    # started for it stop too: Python's default TERM would leave stress-ng spinning on a CPU.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        parser.add_argument("--samples", type=int, default=env_int("MMRIG_KHZ_SAMPLES", 100_000))
        args = parser.parse_args(argv)
        if args.samples <= 0:
            raise Failure("--samples must be > 0")
        if shutil.which("cyclictest") is None:
            raise Failure("cyclictest not found: install Debian's rt-tests (tools/setup.sh does)")
        fifo = fifo_refusal(PRIORITY) is None
        load_before = os.getloadavg()[0]
        rows: list[tuple[str, Tail]] = []
        with tempfile.TemporaryDirectory(prefix="mmrig-khz-") as name:
            tmp = Path(name)
            for condition in ("idle", "stress-ng --cpu 1"):
                hog = Hog() if condition != "idle" else None
                if hog:
                    hog.__enter__()
                try:
                    for label, case in (("cyclictest", lambda: cyclictest(tmp, args.samples, fifo, "cyclictest")),
                                        ("mmrig socket", lambda: mmrig(tmp, args.samples, fifo, "socket",
                                                                       "mmrig socket")),
                                        ("mmrig pty", lambda: mmrig(tmp, args.samples, fifo, "pty", "mmrig pty"))):
                        print(f"{condition}: {label}", file=sys.stderr, flush=True)
                        rows.append((condition, case()))
                finally:
                    if hog:
                        hog.__exit__()
        load = (f"{'SCHED_FIFO ' + str(PRIORITY) if fifo else 'SCHED_OTHER (no right to SCHED_FIFO here)'}; 1-min "
                f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)")
        text = table(rows, args.samples, load)
        print(text, file=sys.stderr)
        TABLE.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(TABLE, (text + "\n").encode())
        print(json.dumps(figures_json(rows, load)))
        return 0
    except Failure as exc:
        print(f"perf_normal_khz_vs_cyclictest: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
