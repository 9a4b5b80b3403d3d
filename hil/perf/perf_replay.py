#!/usr/bin/env python3
"""A paced run's record of its inputs and its replay (docs/replay.md), measured: a paced mixed run of COUNT events
with random ids and a paced normal run of COUNT * 2 / 3 events, each replayed (`mmrig replay`): the record's size per
1,000 events, the replay's speed against real time (the run's virtual seconds over the replay's wall seconds), and
whether every event came out identical.

stdout: a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py; stderr and perf/replay.txt:
the table. --count (default 300).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "perf/replay.txt"


def mmrig(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mmrig", *args], capture_output=True, text=True, cwd=ROOT)


def figure(name: str, unit: str, value: float, note: str) -> dict:
    return {"name": name, "unit": unit, "median": round(value, 3), "max": round(value, 3), "runs": 1, "note": note}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args(argv)
    lines, figs = [], []
    with tempfile.TemporaryDirectory(prefix="mmrig-replay-") as d:
        for mode, count, extra in (("mixed", args.count, ["--random-ids"]), ("normal", args.count * 2 // 3, [])):
            out = Path(d) / mode
            t0 = time.monotonic()
            run = mmrig("run", "--mode", mode, "--count", str(count), "-q", "-o", str(out), *extra)
            run_wall = time.monotonic() - t0
            if run.returncode not in (0, 3):
                raise SystemExit(f"mmrig run --mode {mode}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
            rep = mmrig("replay", str(out.with_suffix(".csv")), "--json")
            if rep.returncode not in (0, 1):
                raise SystemExit(f"mmrig replay: exit {rep.returncode}: {rep.stderr.strip()[-300:]}")
            doc = json.loads(rep.stdout)
            per_1000 = doc["record_bytes"] / count * 1000
            speed = doc["virtual_s"] / max(doc["wall_s"], 1e-6)
            lines.append(f"{mode}: {count} events, run {run_wall:.1f} s wall; record {doc['record_bytes']:,} bytes "
                         f"({per_1000:,.0f} per 1,000 events, {doc['reads']} reads); replay {doc['virtual_s']:.1f} s "
                         f"of virtual time in {doc['wall_s']:.2f} s wall ({speed:,.0f} x real time); "
                         f"{doc['identical']} of {doc['compared']} events identical")
            figs += [figure(f"replay_{mode}_record_bytes_per_1000_events", "bytes", per_1000,
                            f"paced {mode} run, {count} events"),
                     figure(f"replay_{mode}_speed_x_real_time", "x", speed,
                            f"the run's virtual seconds over the replay's wall seconds, {count} events"),
                     figure(f"replay_{mode}_events_differing", "events", float(doc["compared"] - doc["identical"]),
                            "0: every event's RESULT and ACK identical")]
    text = "\n".join(lines) + "\n"
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text)
    print(text, file=sys.stderr, end="")
    print(json.dumps(figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
