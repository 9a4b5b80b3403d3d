#!/usr/bin/env python3
"""Mixed mode at a kilohertz (`mmrig run --mode mixed --generation periodic`): the executor is sent the schedule
grid in PERIODIC frames and fires each moment inside its tick (docs/kilohertz.md). In one run of this script:

  sustained   the paced bench, one event every 1 ms, ISR dispatch, both links at 115200 baud, on the AVR
              profiler's histogram alone (`--no-raw`: no RESULT per event, quiet series), for MINUTES (default 2;
              the issue's figure is 10: MMRIG_MIXED_KHZ_MINUTES=10): events, outcomes, whether every event is
              accounted for (the run's invariant), p50 .. p99.99 (the upper edges of the profiler's 1 us cells)
              and the maximum (exact);
  raw         the same at 500000 baud with a RESULT per event for one minute: the PC's own figures, and whether
              the profiler's histogram agrees with them cell for cell;
  highest     the paced bench on the histogram alone at 115200 baud, a probe of PROBE_S seconds at each of RATES_MS
              (1,000 .. 10,000 a second): the highest rate at which every event of the probe is accounted for
              and none missed (valid; early and late events are the executor's results), and what stopped the
              next one;
  task        lockstep (virtual time: exact, whatever the host does), task dispatch with the bench's trace of
              the executor (`--trace`): its CPU share (1 - idle) and the latency percentiles at 1 ms, against the
              same at one event a tick (14 a second), 4,000 and 200 events;
  lockstep    10^6 events at 1 ms on the histogram alone in lockstep, twice (MMRIG_LOCKSTEP_EVENTS or
              --lockstep-events to change it): the wall time of each, and whether both gave the same histogram and
              summary (virtual time: they must).

stdout: a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py; stderr and
perf/mixed_khz.txt: the table. MMRIG_MIXED_KHZ_MINUTES (or --minutes), --probe-s, --skip-sustained.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmanalysis import measured, read_run
from mmanalysis.safefiles import atomic_write   # every output through one safe opening
from perf_normal_khz_vs_cyclictest import QUANTILES, nearest_rank

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "perf/mixed_khz.txt"
RATES_MS = ("1", "0.5", "0.333", "0.25", "0.2", "0.125", "0.1")


def run(out: Path, *args: str) -> tuple[dict, float]:
    """One `mmrig run --mode mixed --generation periodic`; its sidecar and wall seconds."""
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--generation", "periodic",
                           "-q", "--force", "-o", str(out), *args], capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - t0
    sidecar = out.with_suffix(".json")
    if done.returncode not in (0, 3) or not sidecar.is_file():
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"mmrig run {' '.join(args)}: exit {done.returncode}: {last}")
    return json.loads(sidecar.read_text()), wall


def tails(out: Path) -> dict[str, float]:
    lat = measured(read_run(out.with_suffix(".csv")).df)["latency_us"].to_numpy(dtype=float)
    got = {k: nearest_rank(lat, q) for k, q in QUANTILES} if len(lat) else {}
    return {**got, "max": float(lat.max()) if len(lat) else float("nan"), "n": float(len(lat))}


def cell_tails(sc: dict) -> dict[str, float]:
    """A run on the profiler's histogram alone: each quantile as the upper edge of the cell holding it (nearest
    rank; at most the maximum), the maximum exact (the profiler's)."""
    h, top = sc["histogram"], sc["summary"]["max_us"]
    cells = list(h["counts"]) + [h["overflow"]]
    n = sum(cells)
    out: dict[str, float] = {}
    for k, q in QUANTILES:
        rank, cum = max(1, math.ceil(round(q * n, 9))), 0
        for i, c in enumerate(cells):
            cum += c
            if n and cum >= rank:
                out[k] = top if i == len(cells) - 1 else min(top, (i + 1) * h["bin_us"])
                break
    return {**out, "max": top if top is not None else float("nan"), "n": float(n)}


def outcomes(sc: dict) -> str:
    o = sc["summary"]["outcomes"]
    return "/".join(str(o.get(k, 0)) for k in ("ok", "late", "early", "missed", "lost"))


def clean(sc: dict) -> str | None:
    """Why a run does not have every event accounted for, or None: valid, the invariant holds, and none lost or
    missed (an early or late event is accounted for: it is a result, the executor's)."""
    o = sc["summary"]["outcomes"]
    if not sc.get("valid"):
        return f"invalid: {sc.get('invalid_reason')}"
    if not (sc.get("invariant") or {}).get("ok"):
        return "not every event accounted for"
    bad = {k: o.get(k, 0) for k in ("missed", "lost") if o.get(k, 0)}
    return None if not bad else ", ".join(f"{k} {v}" for k, v in bad.items())


def figure(name: str, unit: str, value: float, note: str) -> dict:
    return {"name": name, "unit": unit, "median": round(value, 3), "max": round(value, 3), "runs": 1, "note": note}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("MMRIG_MIXED_KHZ_MINUTES", "2")))
    parser.add_argument("--probe-s", type=float, default=20.0)
    parser.add_argument("--skip-sustained", action="store_true")
    parser.add_argument("--lockstep-events", type=int,
                        default=int(os.environ.get("MMRIG_LOCKSTEP_EVENTS", "1000000")))
    args = parser.parse_args(argv)
    lines, figs = [], []
    with tempfile.TemporaryDirectory(prefix="mmrig-mixed-khz-") as d:
        tmp = Path(d)
        if not args.skip_sustained:
            sc, wall = run(tmp / "sustained", "-i", "1ms", "--baud", "115200", "--no-raw", "-D", str(args.minutes * 60))
            t = cell_tails(sc)
            why = clean(sc)
            n = sc["summary"]["events"]
            lines.append(f"sustained: 1 ms, 115200 baud, ISR, paced, histogram alone, {args.minutes:g} min: {n} events, "
                         f"ok/late/early/missed/lost {outcomes(sc)}, accounted "
                         f"{'yes' if (sc.get('invariant') or {}).get('ok') else 'NO'}, "
                         f"{'valid' if sc.get('valid') else 'INVALID: ' + str(sc.get('invalid_reason'))}; "
                         + ", ".join(f"{k} {t[k]:.3f} us" for k in ("p50", "p99", "p99.9", "p99.99", "max") if k in t)
                         + f" (cell edges, max exact; {wall:.0f} s wall)")
            figs.append(figure("mixed_khz_sustained_events", "events", n,
                               f"1 ms for {args.minutes:g} min, paced, 115200 baud, histogram alone; "
                               f"{why or 'every event accounted for'}"))
            for k in ("p50", "p99", "p99.9", "p99.99", "max"):
                if k in t and sc.get("valid"):
                    figs.append(figure(f"mixed_khz_sustained_{k.replace('.', '_')}_us", "us", t[k],
                                       "mixed, periodic, 1 ms, ISR, paced, 115200 baud, the profiler's 1 us cells"))
            sc, wall = run(tmp / "raw", "-i", "1ms", "--baud", "500000", "--raw", "-D", "60")
            t = tails(tmp / "raw")
            agree = (sc.get("profiler_histogram") or {}).get("agreement") or {}
            lines.append(f"raw: 1 ms, 500000 baud, a RESULT each, 1 min: ok/late/early/missed/lost {outcomes(sc)}, "
                         f"{clean(sc) or 'clean'}; the PC's " + ", ".join(f"{k} {t[k]:.3f} us" for k in
                                                                          ("p50", "p99", "p99.9", "max") if k in t)
                         + f"; the profiler's histogram the same cell for cell: "
                         f"{'yes' if agree.get('agrees') else 'NO' if agree.get('checked') else 'not checked'}")
            figs.append(figure("mixed_khz_profiler_histogram_agrees", "bool", 1.0 if agree.get("agrees") else 0.0,
                               "1 ms, 500000 baud, 1 min: the profiler's cells and outcomes equal the PC's (1 = yes)"))
        best, stop = None, None
        for rate in RATES_MS:
            count = int(args.probe_s * 1000 / float(rate))
            sc, _ = run(tmp / f"r{rate.replace('.', '_')}", "--rate", rate, "--baud", "115200", "--no-raw",
                        "--count", str(count))
            why = clean(sc)
            lines.append(f"highest: {rate} ms ({1000 / float(rate):,.0f}/s), 115200 baud, histogram alone, {count} "
                         f"events: ok/late/early/missed/lost {outcomes(sc)}, {why or 'clean'}")
            if why:
                stop = f"{rate} ms: {why}"
                break
            best = float(rate)
        if best is not None:
            figs.append(figure("mixed_khz_highest_clean_rate_per_s", "events/s", 1000 / best,
                               f"paced, 115200 baud, histogram alone, probes of {args.probe_s:g} s; next: "
                               f"{stop or 'none tried'}"))
        lines.append(f"highest clean rate: {'none' if best is None else f'{1000 / best:,.0f} events/s'}"
                     + (f" (next: {stop})" if stop else ""))
        for label, rate, count in (("1 ms", "1", 4000), ("a tick", "71.111", 200)):
            sc, _ = run(tmp / f"task{count}", "--rate", rate, "--baud", "500000", "--count", str(count),
                        "--dispatch", "task", "--trace", "--unpaced")
            prof = sc.get("executor_profile") or {}
            share = 1 - ((prof.get("idle") or {}).get("share") or 0.0)
            t = tails(tmp / f"task{count}")
            lines.append(f"task dispatch at {label}: executor CPU {100 * share:.2f} % (U {prof.get('U', 0):.4f}), "
                         + ", ".join(f"{k} {t[k]:.3f} us" for k in ("p50", "p99", "max") if k in t)
                         + f", ok/late/early/missed/lost {outcomes(sc)}")
            key = "1ms" if rate == "1" else "tick"
            figs.append(figure(f"mixed_task_{key}_cpu_share_pct", "%", 100 * share,
                               f"lockstep, task dispatch, {count} events, executor busy share from the outside trace"))
            if "p99" in t:
                figs.append(figure(f"mixed_task_{key}_p99_us", "us", t["p99"], f"lockstep, task dispatch, {count} events"))
        n = args.lockstep_events
        runs = []
        for i in (1, 2):
            sc, wall = run(tmp / f"lockstep{i}", "-i", "1ms", "--baud", "115200", "--no-raw", "--count", str(n),
                           "--unpaced")
            runs.append((sc, wall))
        (sc, wall), (sc2, wall2) = runs
        same = sc["histogram"] == sc2["histogram"] and sc["summary"] == sc2["summary"]
        lines.append(f"lockstep: {n:,} events at 1 ms on the histogram alone, twice: {wall:.0f} s and {wall2:.0f} s "
                     f"wall ({n / max(wall, wall2):,.0f} events/s at the slower), {outcomes(sc)}, "
                     f"{clean(sc) or 'clean'}; the same histogram and summary both times: {'yes' if same else 'NO'}")
        figs.append(figure("mixed_lockstep_wall_s", "s", max(wall, wall2),
                           f"lockstep, 1 ms, {n:,} events on the histogram alone (the slower of two runs)"))
        figs.append(figure("mixed_lockstep_same_histogram", "bool", 1.0 if same else 0.0,
                           f"two lockstep runs of {n:,} events: the same cells and summary (1 = yes)"))
    text = "\n".join(lines) + "\n"
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(TABLE, text.encode())
    print(text, file=sys.stderr, end="")
    print(json.dumps(figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
