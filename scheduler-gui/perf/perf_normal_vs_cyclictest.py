#!/usr/bin/env python3
"""Normal mode beside cyclictest: how much later than the host's own wake-up latency does the
PC fire a normal-mode event?

In one run, interleaved round by round (the order rotates each round) so that every case sees the same
machine:

  cyclictest, the classic reference: `cyclictest -m -p 10 -i 1000` (SCHED_FIFO 10, a wake-up every 1 ms,
      /dev/cpu_dma_latency 0). Without the right to SCHED_FIFO, cyclictest 2.4 refuses to start even with
      `-p 0` (`-p` always selects SCHED_FIFO; it checks for SCHED_FIFO first whatever the policy), so the
      fallback is `--policy=other` and, should that be refused too, no cyclictest figures; the notes say which.
  cyclictest at the rig's pace: `-i 71111 --policy=other --default-system`, timer slack 1 ns (inherited from
      this script), i.e. what mmrig's firing thread asks of Linux (SCHED_OTHER, one wake-up per tick, 1 ns
      slack, /dev/cpu_dma_latency left alone).
  mmrig normal mode on the paced virtual bench: `mmrig run --mode normal --accuracy A [--discipline]`,
      accuracy 0 and 100, naive (the paper's way) and disciplined (the servo on the profiler's stamps).

Figures per run: p50, p99 and max of the latency, in us (mmrig: the sidecar's "summary", over the measurable
ok/late events; cyclictest: its JSON histogram, 1 us bins). Over the rounds: the median and the maximum of
each run figure, and mmrig / cyclictest ratios taken within a round (both saw the same noise). A run the
bench marked invalid (its lag) is kept out and counted in the note.

stdout: a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py; stderr and
perf/normal_vs_cyclictest.txt: the table. Environment (or the same-named options): MMRIG_NVC_RUNS rounds
(default 3), MMRIG_NVC_COUNT events per mmrig run (default 150), MMRIG_NVC_CT_LOOPS wake-ups of the 1 ms
cyclictest (default 5000); about 3 minutes with the defaults.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mmanalysis.safefiles import atomic_write   # every output through one safe opening
from mmanalysis.schema import NOMINAL_TICK_S
from mmsched.host.rtsched import set_thread_timer_slack_ns

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "perf/normal_vs_cyclictest.txt"
TICK_US = round(NOMINAL_TICK_S * 1e6)   # the profiler's tick in whole us (cyclictest -i): 71111
HIST_US = 20000                    # cyclictest's histogram range; beyond it a wake-up only counts as overflow
REFUSED = "Unable to change scheduling policy"


class Failure(Exception):
    """A problem the script reports in one line (no traceback)."""


@dataclass
class Figures:
    """One run's latency figures, in us."""

    p50: float
    p99: float
    max: float
    n: int


@dataclass
class Case:
    key: str
    label: str
    runs: list[Figures | None] = field(default_factory=list)   # one per round; None: no figures that round
    invalid: int = 0
    invalid_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def valid(self) -> list[Figures]:
        return [f for f in self.runs if f is not None]


def env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise Failure(f"{name}={text!r} is not a whole number") from None
    if value <= 0:
        raise Failure(f"{name} must be > 0, not {value}")
    return value


# ---------------------------------------------------------------- cyclictest

def quantile_from_histogram(hist: dict[int, int], cycles: int, q: float, maximum: float) -> float:
    """The nearest-rank q-quantile of cyclictest's 1 us histogram; wake-ups past its range (overflows) count
    as the run's maximum."""
    rank = max(1, math.ceil(round(q * cycles, 6)))      # round: 0.99 * 5000 must be 4950, not 4950.000001
    seen = 0
    for us in sorted(hist):
        seen += hist[us]
        if seen >= rank:
            return float(us)
    return float(maximum)


def figures_from_cyclictest_json(data: dict) -> Figures:
    thread = data["thread"]["0"]
    hist = {int(k): int(v) for k, v in thread.get("histogram", {}).items()}
    cycles, maximum = int(thread["cycles"]), float(thread["max"])
    if cycles <= 0:
        raise Failure("cyclictest measured no wake-ups")
    return Figures(p50=quantile_from_histogram(hist, cycles, 0.50, maximum),
                   p99=quantile_from_histogram(hist, cycles, 0.99, maximum), max=maximum, n=cycles)


@dataclass
class Cyclictest:
    """One cyclictest variant with its privilege fallbacks: the first that starts is kept for later rounds."""

    interval_us: int
    loops: int
    attempts: list[tuple[str, list[str]]]          # (what it is, options)
    chosen: int = 0
    refused: str | None = None                    # why no attempt could run

    @property
    def policy(self) -> str:
        return self.attempts[self.chosen][0]

    def run(self, tmp: Path) -> Figures | None:
        while self.refused is None:
            what, options = self.attempts[self.chosen]
            out = tmp / "cyclictest.json"
            out.unlink(missing_ok=True)
            command = ["cyclictest", *options, "-q", "-i", str(self.interval_us), "-l", str(self.loops),
                       "-h", str(HIST_US), "--histfile=/dev/null", f"--json={out}"]
            done = subprocess.run(command, capture_output=True, text=True,
                                  preexec_fn=lambda: set_thread_timer_slack_ns(1))
            if done.returncode == 0 and out.is_file():
                try:
                    return figures_from_cyclictest_json(json.loads(out.read_text()))
                except (ValueError, KeyError, TypeError) as exc:
                    raise Failure(f"cyclictest wrote a JSON file this script cannot read ({exc})") from None
            if REFUSED in done.stderr:
                if self.chosen + 1 < len(self.attempts):
                    self.chosen += 1
                    continue
                self.refused = ("cyclictest refused to run (no right to SCHED_FIFO: run as root, or allow it "
                                "rtprio in /etc/security/limits.conf)")
                break
            first = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[0]
            raise Failure(f"{' '.join(command)}: exit {done.returncode}: {first}")
        return None


# ---------------------------------------------------------------- mmrig normal mode

def run_mmrig(tmp: Path, name: str, accuracy: int, discipline: bool, count: int) -> tuple[Figures | None, str | None]:
    """One paced normal-mode run through the command line; (figures, None), or (None, why not) if the run
    is invalid (the bench's lag, mostly)."""
    out = tmp / name
    command = [sys.executable, "-m", "mmrig", "run", "--mode", "normal", "--accuracy", str(accuracy),
               "--count", str(count), "-o", str(out)] + (["--discipline"] if discipline else [])
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    sidecar_path = out.with_suffix(".json")
    if done.returncode not in (0, 3) or not sidecar_path.is_file():
        first = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise Failure(f"mmrig run (accuracy {accuracy}{', disciplined' if discipline else ''}): "
                      f"exit {done.returncode}: {first}")
    sidecar = json.loads(sidecar_path.read_text())
    if discipline and not sidecar.get("config", {}).get("discipline", False):
        raise Failure("mmrig run --discipline: the sidecar's config says discipline=false")
    if not sidecar.get("valid", True):
        return None, str(sidecar.get("invalid_reason") or "invalid")
    s = sidecar["summary"]
    if not s.get("n") or s.get("p50_us") is None:
        return None, "no measurable event"
    return Figures(p50=float(s["p50_us"]), p99=float(s["p99_us"]), max=float(s["max_us"]), n=int(s["n"])), None


# ---------------------------------------------------------------- report

def fmt(v: float | None, digits: int = 0) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def paired_ratios(case: Case, ref: Case, stat: str) -> list[float]:
    """case / reference of one statistic, round by round (both ran in the same round, on the same noise)."""
    return [getattr(c, stat) / getattr(r, stat) for c, r in zip(case.runs, ref.runs)
            if c is not None and r is not None and getattr(r, stat) > 0]


def table(cases: list[Case], ref: Case, pace: Case) -> str:
    head = (f"{'case':<44} {'runs':>4} {'p50 us':>8} {'p99 us':>8} {'max us':>8}   "
            f"{'/ct p50':>7} {'/ct p99':>7} {'/ct max':>7}   {'/pace p50':>9} {'/pace p99':>9}")
    lines = [head, "-" * len(head)]
    for case in cases:
        v = case.valid()
        p50, p99 = med([f.p50 for f in v]), med([f.p99 for f in v])
        mx = max((f.max for f in v), default=None)
        cols = [fmt(med(paired_ratios(case, ref, s)), 1) if case is not ref else "1" for s in ("p50", "p99", "max")]
        pcols = [fmt(med(paired_ratios(case, pace, s)), 1) if case is not pace else "1" for s in ("p50", "p99")]
        runs = f"{len(v)}" + (f"+{case.invalid}i" if case.invalid else "")
        lines.append(f"{case.label:<44} {runs:>4} {fmt(p50):>8} {fmt(p99):>8} {fmt(mx):>8}   "
                     f"{cols[0]:>7} {cols[1]:>7} {cols[2]:>7}   {pcols[0]:>9} {pcols[1]:>9}")
    for case in cases:
        if case.invalid:
            lines.append(f"{case.label}: {case.invalid} invalid run(s): {'; '.join(case.invalid_reasons)}")
    lines.append("p50/p99: median over the rounds; max: the largest of the rounds; ratios: mmrig / cyclictest "
                 "within each round, median over the rounds (/ct: the SCHED_FIFO 1 ms reference; /pace: "
                 "cyclictest at one wake-up per tick, SCHED_OTHER, 1 ns slack). Ni = N runs invalid (bench lag), "
                 "left out.")
    return "\n".join(lines)


def figures_json(cases: list[Case], ref: Case, pace: Case, header: str) -> list[dict]:
    out: list[dict] = []
    for case in cases:
        v = case.valid()
        if not v:
            continue
        extra = "; ".join(case.notes)
        for stat in ("p50", "p99"):
            values = [getattr(f, stat) for f in v]
            note = f"max {max(f.max for f in v):.0f} us; n {min(f.n for f in v)}..{max(f.n for f in v)} per run"
            if case.invalid:
                note += f"; {case.invalid} invalid run(s) left out (bench lag: perf/normal_vs_cyclictest.txt)"
            if extra:
                note += f"; {extra}"
            if case is ref or case is pace:
                note = f"{header}; {note}"
            out.append({"name": f"{case.label} {stat}", "unit": "us", "median": statistics.median(values),
                        "max": max(values), "runs": len(values), "note": note})
    for case in cases:
        if case is ref or case is pace:
            continue
        for stat in ("p50", "p99"):
            r = paired_ratios(case, ref, stat)
            if r:
                out.append({"name": f"{case.label} / cyclictest {stat}", "unit": "ratio", "median": statistics.median(r),
                            "max": max(r), "runs": len(r),
                            "note": f"within each round, against {ref.label} ({ref.notes[0] if ref.notes else ''})"})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        parser.add_argument("--runs", type=int, default=env_int("MMRIG_NVC_RUNS", 3), help="rounds")
        parser.add_argument("--count", type=int, default=env_int("MMRIG_NVC_COUNT", 150), help="events per mmrig run")
        parser.add_argument("--ct-loops", type=int, default=env_int("MMRIG_NVC_CT_LOOPS", 5000),
                            help="wake-ups of the 1 ms cyclictest")
        args = parser.parse_args(argv)
        if min(args.runs, args.count, args.ct_loops) <= 0:
            raise Failure("--runs, --count and --ct-loops must be > 0")
        if shutil.which("cyclictest") is None:
            raise Failure("cyclictest not found: install Debian's rt-tests (tools/setup.sh does)")
        return measure(args)
    except Failure as exc:
        print(f"perf_normal_vs_cyclictest: {exc}", file=sys.stderr)
        return 1


def measure(args: argparse.Namespace) -> int:
    fifo = Cyclictest(1000, args.ct_loops, [("SCHED_FIFO 10, mlockall", ["-m", "-p", "10"]),
                                            ("SCHED_OTHER: SCHED_FIFO refused, not root", ["-m", "--policy=other"])])
    paced = Cyclictest(TICK_US, args.count, [("SCHED_OTHER, 1 ns slack, no PM tuning",
                                              ["-m", "--policy=other", "--default-system"])])
    ref = Case("ct", "cyclictest -i 1000 (1 ms)")
    pace = Case("ct_tick", f"cyclictest -i {TICK_US} (the tick)")
    mm = [Case(f"a{a}{'d' if d else 'n'}", f"mmrig normal, accuracy {a}, {'disciplined' if d else 'naive'}")
          for a in (0, 100) for d in (False, True)]
    params = {c.key: (a, d) for c, (a, d) in zip(mm, [(a, d) for a in (0, 100) for d in (False, True)])}
    order = [ref, *mm, pace]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mmrig-nvc-") as tmp_name:
        tmp = Path(tmp_name)
        for rnd in range(args.runs):
            for case in order[rnd % len(order):] + order[:rnd % len(order)]:
                print(f"round {rnd + 1}/{args.runs}: {case.label}", file=sys.stderr, flush=True)
                if case is ref or case is pace:
                    ct = fifo if case is ref else paced
                    case.runs.append(ct.run(tmp))
                else:
                    a, d = params[case.key]
                    figures, why = run_mmrig(tmp, f"{case.key}_{rnd}", a, d, args.count)
                    case.runs.append(figures)
                    if why is not None:
                        case.invalid += 1
                        case.invalid_reasons.append(why)
    load = f"1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after ({os.cpu_count()} CPUs)"
    for case, ct in ((ref, fifo), (pace, paced)):
        case.notes.append(ct.refused or ct.policy)
        if ct.refused is None and ct.chosen > 0:
            print(f"perf_normal_vs_cyclictest: SCHED_FIFO refused (not root): the 1 ms cyclictest ran as "
                  f"{ct.policy.split(':')[0]}", file=sys.stderr)
        if ct.refused:
            print(f"perf_normal_vs_cyclictest: {ct.refused}; no cyclictest figures", file=sys.stderr)
    text = table(order, ref, pace)
    text = (f"normal mode beside cyclictest: {args.runs} rounds, {args.count} events per mmrig run, "
            f"{args.ct_loops} cyclictest wake-ups at 1 ms ({ref.notes[0]}), {args.count} at the tick ({pace.notes[0]}); "
            f"{load}\n" + text)
    print(text, file=sys.stderr)
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(TABLE, (text + "\n").encode())
    print(json.dumps(figures_json(order, ref, pace, f"{args.runs} rounds interleaved with mmrig; {load}")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
