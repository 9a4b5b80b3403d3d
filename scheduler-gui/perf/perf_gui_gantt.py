#!/usr/bin/env python3
"""Benchmark: the executor profile's Gantt chart of a long trace. The hand-made trace of
analysis/tests/data/handmade.exectrace repeated 20,000 times end to end (25 s of executor time, over 300,000
segments, the trace tests/test_gui_profile.py checks binned): the time from the trace's segments to the
chart's first paint zoomed out (the data, the widget, one paint, each row as its occupancy per pixel
column), and one repaint zoomed in to 2 ms (each bar drawn as it is). Prints a JSON list of
{"name","unit","median","max","runs","note"} for tools/perf.py. Needs no display (offscreen platform)."""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from mmanalysis import exectrace as et  # noqa: E402
from mmrig.gui.gantt import GanttData, GanttWidget  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_gui_profile import repeated_trace  # noqa: E402  (the test's long trace, one definition)

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
REPS = 20_000


def one_run(trace, segs) -> tuple[float, float, str, str]:
    """(s from the segments to the first paint zoomed out, s of a repaint zoomed in, the two draw modes)."""
    g = GanttWidget()
    g.resize(1200, 400)
    g.show()
    t0 = time.perf_counter()
    g.set_data(GanttData.from_trace(trace, segs))
    g.grab()
    built = time.perf_counter() - t0
    out_mode = g.item.last_mode
    g.set_x_range(1000.0, 1002.0)
    t0 = time.perf_counter()
    g.grab()
    zoomed = time.perf_counter() - t0
    in_mode = g.item.last_mode
    g.close()
    g.deleteLater()
    return built, zoomed, out_mode, in_mode


def main() -> int:
    app = QApplication.instance() or QApplication(["perf-gantt"])
    with tempfile.TemporaryDirectory(prefix="perf-gantt-") as tmp:
        path = Path(tmp) / "long.exectrace"
        path.write_text(repeated_trace(REPS))
        trace = et.read(path)
    segs = et.timeline(trace)
    built, zoomed = [], []
    for _ in range(RUNS):
        b, z, out_mode, in_mode = one_run(trace, segs)
        assert (out_mode, in_mode) == ("binned", "exact"), (out_mode, in_mode)
        built.append(b)
        zoomed.append(1000.0 * z)
        app.processEvents()
    print(json.dumps([
        {"name": "Gantt of a 25 s trace: data + widget + first paint", "unit": "s",
         "median": statistics.median(built), "max": max(built), "runs": RUNS,
         "note": f"{len(segs)} segments, 1200 px wide, zoomed out (binned); the test asked < 5 s"},
        {"name": "Gantt of a 25 s trace: repaint zoomed to 2 ms", "unit": "ms",
         "median": statistics.median(zoomed), "max": max(zoomed), "runs": RUNS,
         "note": "each bar drawn as it is (exact); the test asked < 1 s"},
    ]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
