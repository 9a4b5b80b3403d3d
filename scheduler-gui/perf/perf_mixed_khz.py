#!/usr/bin/env python3
"""Mixed mode at a kilohertz (`mmrig run --mode mixed --generation periodic`): the executor is sent the schedule
grid in PERIODIC frames and fires each moment inside its tick (docs/kilohertz.md). In one run of this script:

  sustained   the paced bench, one event every 1 ms, ISR dispatch, both links at 500000 baud (a RESULT and a
              FIRED per event: 115200 baud carries 569 a second, not 1,000), for MINUTES (default 2; the aim
              is 10, but after about 155,000 events the executor's moments slip a tick and the run falls
              behind: docs/kilohertz.md, "Known limits"): events,
              outcomes, whether every event is accounted for (the run's invariant), and p50 .. max;
  highest     the paced bench at 500000 baud, a probe of PROBE_S seconds at each of 1, 0.8, 0.667 and 0.5 ms
              (1,000 .. 2,000 a second; the profiler's result output and the executor's own work per event
              stop it well below what the lines would carry): the highest rate at which every event of the
              probe is accounted for (valid, none lost or missed; early and late events are the executor's
              results), and what stopped the next one;
  task        lockstep (virtual time: exact, whatever the host does), task dispatch with the bench's trace of
              the executor (`--trace`): its CPU share (1 - idle) and the latency percentiles at 1 ms, against the
              same at one event a tick (14 a second), 4,000 and 200 events;
  lockstep    the lockstep bench's own speed at 1 ms: wall seconds for 20,000 events, and what that makes of
              10^6 (a derived figure, said so; 10^6 events are not run here).

stdout: a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py; stderr and
perf/mixed_khz.txt: the table. MMRIG_MIXED_KHZ_MINUTES (or --minutes), --probe-s, --skip-sustained.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmanalysis import measured, read_run
from perf_normal_khz_vs_cyclictest import QUANTILES, nearest_rank

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "perf/mixed_khz.txt"
RATES_MS = ("1", "0.8", "0.667", "0.5")


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
    args = parser.parse_args(argv)
    lines, figs = [], []
    with tempfile.TemporaryDirectory(prefix="mmrig-mixed-khz-") as d:
        tmp = Path(d)
        if not args.skip_sustained:
            sc, wall = run(tmp / "sustained", "-i", "1", "--baud", "500000", "-D", str(args.minutes * 60))
            t = tails(tmp / "sustained")
            why = clean(sc)
            n = sc["summary"]["events"]
            lines.append(f"sustained: 1 ms, 500000 baud, ISR, paced, {args.minutes:g} min: {n} events, "
                         f"ok/late/early/missed/lost {outcomes(sc)}, accounted "
                         f"{'yes' if (sc.get('invariant') or {}).get('ok') else 'NO'}, "
                         f"{'valid' if sc.get('valid') else 'INVALID: ' + str(sc.get('invalid_reason'))}; "
                         + ", ".join(f"{k} {t[k]:.3f} us" for k in ("p50", "p99", "p99.9", "p99.99", "max") if k in t)
                         + f" ({wall:.0f} s wall)")
            figs.append(figure("mixed_khz_sustained_events", "events", n,
                               f"1 ms for {args.minutes:g} min, paced; {why or 'every event accounted for, on time'}"))
            for k in ("p50", "p99", "p99.9", "p99.99", "max"):
                if k in t and sc.get("valid"):
                    figs.append(figure(f"mixed_khz_sustained_{k.replace('.', '_')}_us", "us", t[k],
                                       "mixed, periodic, 1 ms, ISR dispatch, paced bench, 500000 baud"))
        best, stop = None, None
        for rate in RATES_MS:
            count = int(args.probe_s * 1000 / float(rate))
            sc, _ = run(tmp / f"r{rate.replace('.', '_')}", "-i", rate, "--baud", "500000", "--count", str(count))
            why = clean(sc)
            lines.append(f"highest: {rate} ms ({1000 / float(rate):,.0f}/s), 500000 baud, {count} events: "
                         f"ok/late/early/missed/lost {outcomes(sc)}, {why or 'clean'}")
            if why:
                stop = f"{rate} ms: {why}"
                break
            best = float(rate)
        if best is not None:
            figs.append(figure("mixed_khz_highest_clean_rate_per_s", "events/s", 1000 / best,
                               f"paced, 500000 baud, probes of {args.probe_s:g} s; next: {stop or 'none tried'}"))
        lines.append(f"highest clean rate: {'none' if best is None else f'{1000 / best:,.0f} events/s'}"
                     + (f" (next: {stop})" if stop else ""))
        for label, rate, count in (("1 ms", "1", 4000), ("a tick", "71.111", 200)):
            sc, _ = run(tmp / f"task{count}", "-i", rate, "--baud", "500000", "--count", str(count),
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
        sc, wall = run(tmp / "lockstep", "-i", "1", "--baud", "500000", "--count", "20000", "--unpaced")
        per_s = sc["summary"]["events"] / wall
        lines.append(f"lockstep: 20,000 events at 1 ms in {wall:.1f} s wall ({per_s:,.0f} events/s, {outcomes(sc)}); "
                     f"10^6 would take about {1e6 / per_s / 60:.0f} min at that speed (derived, not run)")
        figs.append(figure("mixed_lockstep_events_per_wall_s", "events/s", per_s,
                           "lockstep, 1 ms, 20,000 events; 10^6 not run (derived: " f"{1e6 / per_s / 60:.0f} min)"))
    text = "\n".join(lines) + "\n"
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text)
    print(text, file=sys.stderr, end="")
    print(json.dumps(figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
