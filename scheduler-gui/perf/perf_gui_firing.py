#!/usr/bin/env python3
"""Normal mode's latency from the GUI against the command line, in one run of this program.

The same normal-mode run (paced virtual bench, COUNT events one per tick, two ticks ahead) three ways:
  cli  the command line's path: mmsched.run.runner.run in a plain process of its own (no Qt anywhere),
  proc the GUI's run process (mmrig.child.RunProcess) started from this program with no window
       updating: the run-process machinery alone (proc/cli) apart from the GUI's load (own/proc),
  own  the GUI window (offscreen platform, live table, plots and statistics) with firing_process="own":
       the run in a process of its own (mmrig.child),
  gui  the same window with firing_process="gui": the run in the GUI's process, sharing its interpreter
       lock with the event loop and the live plots (the path that once measured p50 4 ms against the command line's 0.5 ms),
at accuracy 100 and 0, interleaved round by round so machine noise spreads over all cases. The latency of
a run is that of its measured (ok / late), measurable events (per-event validity: an event a bench stall
met is left out). Prints a JSON list of {"name","unit","median","max","runs","note"} for tools/perf.py:
p50 and p99 per case and accuracy (median and max over the rounds), and the ratios own/cli and gui/cli of
the medians (max: the worst round's ratio). Target: own p50 within ~1.3x of cli.

MMGUI_FIRING_RUNS (default 3) rounds, MMGUI_FIRING_COUNT (default 150) events per run, MMGUI_FIRING_CASES
(default cli,proc,own,gui) which ways.

The child processes are spawned: they re-import this file as __mp_main__, so it imports Qt only inside
the functions that need it (a run's process must not load Qt)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

RUNS = int(os.environ.get("MMGUI_FIRING_RUNS", "3"))
COUNT = int(os.environ.get("MMGUI_FIRING_COUNT", "150"))
ACCURACIES = (100, 0)
CASES = tuple(os.environ.get("MMGUI_FIRING_CASES", "cli,proc,own,gui").split(","))
DISTANCE = 2


def latencies(csv_path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """Latency (us) of the measured, measurable events of a run's CSV, their firing thread's wake-up
    lateness (the budget's wakeup_us, where the run format has it: the part the GUI's lock would add to),
    and how many events the run had."""
    import pandas as pd

    df = pd.read_csv(csv_path)
    keep = df["outcome"].isin(("ok", "late")) & df["measurable"].astype(bool) & df["latency_us"].notna()
    wake = df.loc[keep, "wakeup_us"].dropna().to_numpy(float) if "wakeup_us" in df else np.array([])
    return df.loc[keep, "latency_us"].to_numpy(float), wake, len(df)


def budget_p50(csv_path: Path) -> str:
    """The p50 of each part of the latency budget (where the run format has it), for the progress lines."""
    import pandas as pd

    df = pd.read_csv(csv_path)
    df = df[df["outcome"].isin(("ok", "late"))]
    parts = [c for c in ("est_error_us", "wakeup_us", "line_us", "floor_us") if c in df]
    return " ".join(f"{c[:-3]} {df[c].median():.1f}" for c in parts)


# ---- (a) the command line's path ------------------------------------------------------------------------
def cli_child(accuracy: int, out: str) -> int:
    """`perf_gui_firing.py --cli ACC OUT`: one run as `mmrig run --mode normal` makes it."""
    from mmhil import BenchEndpoint
    from mmsched.model.config import RunConfig
    from mmsched.run.runner import run

    cfg = RunConfig(mode="normal", distance=DISTANCE, count=COUNT, accuracy=accuracy, name=Path(out).name,
                    out=Path(out))
    result = run(cfg, BenchEndpoint())
    print(json.dumps({"valid": result.valid, "qt": [m for m in sys.modules if m.startswith(("PySide6", "pyqtgraph"))]}))
    return 0


def run_cli(accuracy: int, out: Path) -> dict:
    done = subprocess.run([sys.executable, __file__, "--cli", str(accuracy), str(out)], capture_output=True, text=True,
                          timeout=COUNT * 0.2 + 120)
    if done.returncode != 0:
        raise RuntimeError(f"cli run failed: {done.stderr[-2000:]}")
    info = json.loads(done.stdout.strip().splitlines()[-1])
    assert info["qt"] == [], info
    return {"csv": out.with_name(out.name + ".csv"), "json": out.with_name(out.name + ".json")}


def run_proc(accuracy: int, out: Path) -> dict:
    from mmhil import BenchEndpoint
    from mmrig.child import RunProcess
    from mmsched.model.config import RunConfig

    cfg = RunConfig(mode="normal", distance=DISTANCE, count=COUNT, accuracy=accuracy, name=out.name, out=out)
    proc = RunProcess(cfg, BenchEndpoint()).start()
    for kind, obj in proc.messages():
        if kind == "result":
            assert obj.sidecar["config"]["firing_process"] == "own" and proc.started["qt"] == []
            return {"csv": obj.csv_path, "json": obj.json_path}
        if kind in ("failed", "died"):
            raise RuntimeError(f"run process: {obj}")
    raise RuntimeError("run process: no result")


# ---- (b), (c) the GUI window --------------------------------------------------------------------------------
class Gui:
    def __init__(self, tmp: Path) -> None:
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from mmrig.gui.window import MainWindow

        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        self.win = MainWindow(QSettings(str(tmp / "perf.ini"), QSettings.Format.IniFormat), runs_dir=tmp / "gui")
        self.win.quiet = True
        self.win.resize(1280, 800)
        self.win.show()
        self.child_qt: list[str] = []
        self.cpu_share = 0.0          # the GUI process's CPU time over the last run's wall time

    def run(self, accuracy: int, in_gui: bool) -> dict:
        from PySide6.QtCore import QEventLoop, QTimer

        w = self.win
        w.set_mode("normal")
        w.distance.setValue(DISTANCE)
        w.rate.setValue(0)
        w.length_unit.setCurrentText("events")
        w.length.setValue(COUNT)
        w.accuracy.setValue(accuracy)
        w.fire_in_gui.setChecked(in_gui)
        cpu0, wall0 = time.process_time(), time.monotonic()
        w.start_run()
        worker = w.worker
        assert worker is not None and (worker.child is None) == in_gui, "the run went the wrong way"
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(50)
        poll.timeout.connect(lambda: None if w.running else loop.quit())
        poll.start()
        deadline = QTimer()
        deadline.setSingleShot(True)
        deadline.timeout.connect(loop.quit)
        deadline.start(int((COUNT * 0.2 + 120) * 1000))
        loop.exec()                      # the GUI's own event loop: live table, plots and statistics redraw
        poll.stop()
        self.cpu_share = (time.process_time() - cpu0) / (time.monotonic() - wall0)
        if w.running or w.result is None:
            raise RuntimeError(f"GUI run did not finish: {[p.text for p in w.problems]}")
        if worker.child is not None:
            self.child_qt += worker.child.started.get("qt", [])
        assert w.result.sidecar["config"]["firing_process"] == ("gui" if in_gui else "own")
        return {"csv": w.result.csv_path, "json": w.result.json_path}

    def close(self) -> None:
        self.win.close()


def main() -> int:
    figures: dict[tuple[str, int], dict[str, list]] = {
        (c, a): {"p50": [], "p99": [], "wake50": [], "n": [], "invalid": [], "gui_cpu": []}
        for c in CASES for a in ACCURACIES}
    with tempfile.TemporaryDirectory(prefix="perf_gui_firing.") as d:
        tmp = Path(d)
        gui = Gui(tmp)
        try:
            for r in range(RUNS):
                for acc in ACCURACIES:
                    for case in CASES:
                        t0 = time.monotonic()
                        if case == "cli":
                            files = run_cli(acc, tmp / "cli" / f"r{r}-a{acc}")
                        elif case == "proc":
                            files = run_proc(acc, tmp / "proc" / f"r{r}-a{acc}")
                        else:
                            files = gui.run(acc, in_gui=case == "gui")
                        lat, wake, n = latencies(Path(files["csv"]))
                        side = json.loads(Path(files["json"]).read_text())
                        f = figures[(case, acc)]
                        f["p50"].append(float(np.percentile(lat, 50)) if lat.size else float("nan"))
                        f["p99"].append(float(np.percentile(lat, 99)) if lat.size else float("nan"))
                        f["wake50"].append(float(np.percentile(wake, 50)) if wake.size else float("nan"))
                        f["n"].append(int(lat.size))
                        f["invalid"].append(0 if side["valid"] else 1)
                        parts = budget_p50(Path(files["csv"]))
                        if case in ("own", "gui"):
                            parts += f"; GUI process CPU {gui.cpu_share:.0%}"
                            f["gui_cpu"].append(gui.cpu_share)
                        print(f"round {r} acc {acc:3d} {case:3s}: p50 {f['p50'][-1]:8.1f} us  "
                              f"p99 {f['p99'][-1]:8.1f} us  wake-up p50 {f['wake50'][-1]:7.1f} us  ({lat.size}/{n} "
                              f"measured, {'valid' if side['valid'] else 'INVALID'}, "
                              f"{time.monotonic() - t0:.1f} s) {parts}",
                              file=sys.stderr)
        finally:
            gui.close()
        child_qt = sorted(set(gui.child_qt))
    out = []
    for acc in ACCURACIES:
        for case in CASES:
            f = figures[(case, acc)]
            where = {"cli": "command-line path (Runner in a plain process)",
                     "proc": "the GUI's run process (mmrig.child) with no window updating",
                     "own": "GUI window, run in its own process (firing_process=own)",
                     "gui": "GUI window, run in the GUI's process (firing_process=gui)"}[case]
            note = (f"{where}; normal mode, paced bench, {COUNT} events/run, accuracy {acc}; measured events per "
                    f"run {f['n']}; invalid (bench lag) runs {sum(f['invalid'])}"
                    + (f"; GUI process CPU {statistics.median(f['gui_cpu']):.0%} of a core" if f["gui_cpu"] else ""))
            for q, what in (("p50", "latency p50"), ("p99", "latency p99"), ("wake50", "firing wake-up p50")):
                vals = [v for v in f[q] if v == v]
                if not vals and q == "wake50":
                    continue
                out.append({"name": f"normal {what} [{case}, accuracy {acc}]", "unit": "us",
                            "median": round(statistics.median(vals), 1) if vals else None,
                            "max": round(max(vals), 1) if vals else None, "runs": len(vals), "note": note})
        cli = figures[("cli", acc)]["p50"] if "cli" in CASES else []
        for case in [c for c in ("proc", "own", "gui") if c in CASES and cli]:
            mine = figures[(case, acc)]["p50"]
            per_round = [m / c for m, c in zip(mine, cli) if c > 0 and m == m and c == c]
            out.append({"name": f"normal latency p50 ratio {case}/cli [accuracy {acc}]", "unit": "ratio",
                        "median": round(statistics.median(mine) / statistics.median(cli), 3),
                        "max": round(max(per_round), 3) if per_round else None, "runs": len(per_round),
                        "note": {"proc": "run process, no GUI load, p50 / command line p50: the machinery's own cost",
                                 "own": "GUI (own process) p50 / command line p50; target <= ~1.3",
                                 "gui": "GUI (in-process firing) p50 / command line p50: the GUI's load and lock"}[case]
                        + (f"; median of per-round ratios {statistics.median(per_round):.3f}" if per_round else "")})
    out.append({"name": "run process imported Qt", "unit": "modules", "median": len(child_qt), "max": len(child_qt),
                "runs": RUNS * len(ACCURACIES), "note": f"must be 0: {child_qt or 'none'}"})
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--cli":
        raise SystemExit(cli_child(int(sys.argv[2]), sys.argv[3]))
    raise SystemExit(main())
