"""Issue 21, "The GUI": one variance unit, the rate slider's words, a per-user runs folder, progress during a run,
latency axes that fit the data (log across decades, tick labels apart), the compare window against the paper, the
normal mode warm-up marked, and a mixed run from the GUI with every event on time."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from gui_display import start_xvfb  # noqa: E402


@pytest.fixture(scope="session")
def display():
    yield start_xvfb()


@pytest.fixture(scope="session")
def qapp_args(display):
    return ["mmgui-tests"]


def synthetic_run(path: Path, latencies: list[float], name: str, mode: str = "mixed", distance: int = 2) -> Path:
    from mmsched.event import Event
    from mmsched.export import write_run
    from mmsched.stats import summarize

    evs = []
    for i, lat in enumerate(latencies):
        e = Event(i, i, i % 8, mode, distance, 100 + i, 98 + i, 0.1, latency_us=lat, result_tc=100 + i)
        e.finish("ok" if lat < 1000 else "late", None if lat < 1000 else "late")
        evs.append(e)
    write_run(path / name, evs, {"format": "mmrig-run", "format_version": 1, "name": name, "valid": True,
                                 "summary": summarize(evs), "config": {"mode": mode, "distance": distance},
                                 "timebase": {"timer_hz": 16_000_000, "tick_counts": 1_137_778}})
    return path / f"{name}.csv"


# ---- one variance unit ---------------------------------------------------------------------------------------
def test_variance_is_shown_as_variance_text(make_win, tmp_path) -> None:
    # the GUI showed "983881016.6235 us²": the project's one way is mmanalysis.variance_text
    from mmanalysis import variance_text

    lat = [1000.0 + 62_000.0 * (i % 2) for i in range(10)]
    a = synthetic_run(tmp_path, lat, "wide")
    win = make_win()
    assert win.open_run(a)
    var = float(np.var(lat, ddof=1))
    text = win.stats.labels["variance_us2"].text()
    assert text == variance_text(var) and "," in text and text.endswith(" us²"), text
    win.stats.show_rows(win.model.rows)                  # the live path (the core's summarize) says it the same
    assert win.stats.labels["variance_us2"].text() == variance_text(var)
    cmp = win.compare(a, a)
    assert all(p.labels["variance_us2"].text() == variance_text(var) for p in cmp.panels)
