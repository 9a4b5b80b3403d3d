#!/usr/bin/env python3
"""How long `mmrig report` takes on a folder of 11 runs (the demo's seven experiments and four more load
conditions, 2,000 synthetic events each, one of them traced): the budget is a few seconds.

Writes the folder once (mmanalysis.synth, the real on-disk format), then runs `python -m mmanalysis report
FOLDER --out OUT` as a user would, REPEATS times each: with figures, and with --no-figures (what reading and
the tables cost). Prints the figures as JSON for tools/perf.py, a list of {"name", "unit", "median", "max",
"runs", "note"}, with the figures' share of the time as a ratio.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmanalysis import exectrace, synth

REPEATS = 3
EVENTS = 2000
TRACE = Path(__file__).resolve().parents[1] / "tests" / "data" / "handmade.exectrace"
SPECS = [("exp1-verification", "verification", 1, "idle", "aligned"), ("exp2-normal", "normal", 1, "idle", "aligned"),
         ("exp2b-normal-disciplined", "normal", 1, "idle", "aligned"),
         ("exp3-mixed-1ahead", "mixed", 1, "idle", "aligned"), ("exp3b-mixed-1ahead-free", "mixed", 1, "idle", "free"),
         ("exp4-mixed-2ahead", "mixed", 2, "idle", "aligned"), ("exp5-mixed-2ahead-load", "mixed", 2, "heavy", "aligned"),
         ("mixed-2ahead-cpu", "mixed", 2, "cpu", "aligned"), ("mixed-2ahead-memory", "mixed", 2, "memory", "aligned"),
         ("mixed-1ahead-free-heavy", "mixed", 1, "heavy", "free"), ("normal-1ahead-cpu", "normal", 1, "cpu", "aligned")]


def make_folder(out: Path, events: int = EVENTS) -> Path:
    for i, (name, mode, distance, load, gen) in enumerate(SPECS):
        rows = synth.synthetic_events(mode, distance, load != "idle", events, seed=10 + i)
        meta = synth.sidecar(name, rows, load=load != "idle")
        meta["config"].update(load=load, generation=gen)
        if name == "exp4-mixed-2ahead":          # traced: the report draws its Gantt chart
            shutil.copy(TRACE, out / f"{name}.exectrace")
            prof = exectrace.profile(exectrace.read(out / f"{name}.exectrace"))
            meta["executor_profile"] = json.loads(json.dumps(dict(prof, files={"exectrace": f"{name}.exectrace"})))
        synth.write_run(out / name, rows, meta)
    return out


def timed(command: list[str], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else REPEATS
    with tempfile.TemporaryDirectory() as tmp:
        folder = make_folder(Path(tmp))
        report = [sys.executable, "-m", "mmanalysis", "report", str(folder), "--out", str(Path(tmp) / "report")]
        full = timed(report, repeats)
        tables = timed(report + ["--no-figures"], repeats)
        figures = len(list((Path(tmp) / "report" / "figures").glob("*.png")))
    note = f"{len(SPECS)} synthetic runs of {EVENTS} events, one traced; python -m mmanalysis report, a process each"
    print(json.dumps([
        {"name": "mmrig report, 11 runs, figures", "unit": "s", "median": statistics.median(full), "max": max(full),
         "runs": repeats, "note": f"{note}; {figures} figures (PNG, and SVG but for timelines); budget a few s"},
        {"name": "mmrig report, 11 runs, --no-figures", "unit": "s", "median": statistics.median(tables),
         "max": max(tables), "runs": repeats, "note": note + "; reading, tables, Markdown and HTML"},
        {"name": "mmrig report: with figures / without", "unit": "ratio",
         "median": statistics.median(full) / statistics.median(tables), "max": max(full) / min(tables),
         "runs": repeats, "note": "what the figures cost, as a multiple of the rest"},
    ]))


if __name__ == "__main__":
    main()
