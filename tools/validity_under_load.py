#!/usr/bin/env python3
"""How the paced bench's validity by cause holds up on this machine (docs/bench.md, "Validity by cause").

    .venv/bin/python tools/validity_under_load.py [--demos N] [--normal-runs N] [--hog] [--out DIR]

--demos N        runs `mmrig demo` N times in a row (each in DIR/demoK) and prints, per experiment, the attempt
                 that counted and the demo's exit status
--normal-runs N  runs `mmrig run --mode normal --count 200` N times and prints, per run, whether it was valid,
                 its share of events not measurable and the share of its time the bench's stalls covered, and
                 whether unmeasurable_share <= 2 x stall_time_share + 1 % (the two should agree: a stall costs
                 only what it touches)
--gui-mixed N    N mixed runs of 200 events started from the GUI's window (under Xvfb, the window as a user has
                 it: its own run process), each run's validity and its events not measurable
--hog            a CPU hog beside every run (`stress-ng --cpu 1` at nice 0: a user's browser)

Figures only; it asserts nothing (the suite's tests assert what the rig promises on any host). Exit status 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from mmanalysis.safefiles import atomic_write   # every output through one safe opening

ROOT = Path(__file__).resolve().parent.parent
MMRIG = [sys.executable, "-m", "mmrig"]


@contextmanager
def hog(on: bool) -> Iterator[None]:
    """`stress-ng --cpu 1` at nice 0 for as long as the block runs (nothing if not `on`)."""
    p = subprocess.Popen(["stress-ng", "--cpu", "1", "--quiet"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL) if on else None
    try:
        yield
    finally:
        if p is not None:
            p.terminate()
            p.wait()


def demos(n: int, out: Path, with_hog: bool) -> None:
    print(f"## mmrig demo x {n}" + (" (stress-ng --cpu 1 beside it)" if with_hog else ""))
    rows: dict[str, list[str]] = {}
    for k in range(1, n + 1):
        d = out / f"demo{k}"
        d.mkdir(parents=True, exist_ok=True)
        t = time.monotonic()
        with hog(with_hog):
            done = subprocess.run([*MMRIG, "demo", "--out-dir", str(d)], capture_output=True, text=True, cwd=ROOT)
        atomic_write(d / "demo.txt", (done.stdout + done.stderr).encode())
        print(f"demo {k}: exit {done.returncode} in {time.monotonic() - t:.0f} s ({d}/demo.txt)")
        for side in sorted(d.glob("*.json")):
            if ".attempt" in side.stem:
                continue
            meta = json.loads(side.read_text())
            tries = 1 + len(list(d.glob(f"{side.stem}.attempt*.json")))
            rows.setdefault(side.stem, []).append(f"{tries}{'' if meta['valid'] else ' (invalid)'}")
    print(f"| experiment | attempt that counted, demos 1..{n} |\n|---|---|")
    for name, tries in rows.items():
        print(f"| {name} | {', '.join(tries)} |")


def normal_runs(n: int, out: Path, with_hog: bool) -> None:
    print(f"## mmrig run --mode normal --count 200 x {n}" + (" (stress-ng --cpu 1 beside it)" if with_hog else ""))
    print("| run | valid | unmeasurable | unmeasurable_share | stall_time_share | <= 2 x stall + 1 % | largest displacement |")
    print("|---|---|---|---|---|---|---|")
    out.mkdir(parents=True, exist_ok=True)
    for k in range(1, n + 1):
        o = out / f"normal{k}"
        with hog(with_hog):
            subprocess.run([*MMRIG, "run", "--mode", "normal", "--count", "200", "--out", str(o), "--force"],
                           capture_output=True, text=True, cwd=ROOT)
        meta = json.loads(o.with_suffix(".json").read_text())
        m = meta["measurability"]
        u, st = m["unmeasurable_share"], m["stall_time_share"] or 0.0
        worst = max((x for x in m["events"]), key=lambda x: x["us"], default=None)
        print(f"| {k} | {'yes' if meta['valid'] else 'NO'} | {m['unmeasurable']} | {u:.1%} | {st:.2%} | "
              f"{'yes' if u <= 2 * st + 0.01 else 'NO'} | "
              f"{'-' if worst is None else worst['byte'] + ' ' + format(worst['us'], '.0f') + ' us'} |")


GUI_RUN = """
import json, sys, time
from pathlib import Path
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from mmrig.gui.window import MainWindow
out = Path(sys.argv[1])
app = QApplication([])
win = MainWindow(QSettings(str(out / "settings.ini"), QSettings.Format.IniFormat), runs_dir=out / "runs")
win.quiet = True
win.resize(1280, 800)
win.show()
win.run_settings.set_mode("mixed")
win.run_settings.distance.setValue(2)
win.run_settings.rate.setValue(0)
win.run_settings.length.setValue(200)
win.start_button.click()
deadline = time.monotonic() + 300
while win.running and time.monotonic() < deadline:
    app.processEvents()
    time.sleep(0.01)
r = win.result
print(json.dumps(None if r is None else {"valid": r.sidecar.get("valid"), "reason": r.sidecar.get("invalid_reason"),
      "unmeasurable": r.sidecar["measurability"]["unmeasurable"], "events": len(r.events),
      "outcomes": r.sidecar["summary"]["outcomes"]}))
"""


def gui_mixed(n: int, out: Path, with_hog: bool) -> None:
    print(f"## a 200-event mixed run from the GUI x {n}" + (" (stress-ng --cpu 1 beside it)" if with_hog else ""))
    print("| run | valid | events | not measurable | ok/late/early/missed/lost |\n|---|---|---|---|---|")
    for k in range(1, n + 1):
        d = out / f"gui{k}"
        d.mkdir(parents=True, exist_ok=True)
        with hog(with_hog):
            done = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", sys.executable, "-c", GUI_RUN,
                                   str(d)], capture_output=True, text=True, cwd=ROOT)
        lines = done.stdout.strip().splitlines()
        got = json.loads(lines[-1]) if lines and lines[-1].startswith(("{", "null")) else None
        if got is None:
            print(f"| {k} | no run ({(done.stderr.strip().splitlines() or ['?'])[-1][:100]}) | | | |")
            continue
        o = got["outcomes"]
        print(f"| {k} | {'yes' if got['valid'] else 'NO: ' + str(got['reason'])[:80]} | {got['events']} | "
              f"{got['unmeasurable']} | {'/'.join(str(o.get(x, 0)) for x in ('ok', 'late', 'early', 'missed', 'lost'))} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demos", type=int, default=0)
    ap.add_argument("--normal-runs", type=int, default=0)
    ap.add_argument("--gui-mixed", type=int, default=0)
    ap.add_argument("--hog", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "validity")
    a = ap.parse_args()
    if a.demos:
        demos(a.demos, a.out, a.hog)
    if a.normal_runs:
        normal_runs(a.normal_runs, a.out, a.hog)
    if a.gui_mixed:
        gui_mixed(a.gui_mixed, a.out, a.hog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
