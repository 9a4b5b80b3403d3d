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


# ---- the rate slider says what 0 means ---------------------------------------------------------------------------
def test_rate_slider_says_every_tick_at_zero(make_win) -> None:
    win = make_win()
    win.rate.setValue(0)
    assert "every tick" in win.rate_label.text() and "71.1 ms" in win.rate_label.text()
    assert "every tick" in win.rate.toolTip() and win.rate.toolTip() == win.rate_label.toolTip()
    assert win.config().rate_ms is None
    win.rate.setValue(15)
    assert win.rate_label.text() == "schedule rate: every 150 ms" and "150 ms" in win.rate.toolTip()
    assert "every tick" not in win.rate_label.text() and win.config().rate_ms == 150.0
    # the profiler's HELLO gives the tick: the words follow it
    win.rate.setValue(0)
    win.show_health({"nodes": {"profiler": {"hello": {"fw_version": 1, "proto_version": 4, "cpu_hz": 16_000_000,
                                                       "tick_counts": 1000, "timer_hz": 100_000, "baud": 9600},
                                             "bytes_in": 0, "frames_in": 0, "frames_out": 0}}})
    assert "every tick (10.0 ms)" in win.rate_label.text()


# ---- runs go to a per-user folder, shown and changeable ----------------------------------------------------------
def test_runs_folder_is_per_user_shown_and_changeable(qtbot, tmp_path, monkeypatch) -> None:
    from PySide6.QtCore import QSettings

    from mmsched.gui.window import RUNS_ENV, MainWindow

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(RUNS_ENV, raising=False)
    cwd = tmp_path / "started-here"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    ini = str(tmp_path / "s.ini")

    def make() -> MainWindow:
        w = MainWindow(QSettings(ini, QSettings.Format.IniFormat))
        w.quiet = True
        qtbot.addWidget(w)
        return w

    win = make()
    # not ./results/gui of wherever the app was started: the user's data folder
    assert win.runs_dir == tmp_path / "xdg" / "mmrig" / "scheduler" / "runs", win.runs_dir
    assert cwd not in win.runs_dir.parents
    assert str(win.runs_dir) in win.runs_label.text()
    assert win.config().name.startswith("gui-")
    # changed: shown, kept for the next start
    win.set_runs_dir(tmp_path / "mine")
    assert str(tmp_path / "mine") in win.runs_label.text()
    win.close()
    assert make().runs_dir == tmp_path / "mine"
    # the environment variable (tests, scripts) comes first
    monkeypatch.setenv(RUNS_ENV, str(tmp_path / "env-runs"))
    assert make().runs_dir == tmp_path / "env-runs"


# ---- progress and time left during a run ------------------------------------------------------------------------
def test_progress_unit() -> None:
    from mmsched.gui.widgets import clock_text, remaining_s

    assert remaining_s(0, 200, 3.0, None) is None                      # nothing ended: nothing to go on
    assert remaining_s(11, 200, 4.0 + 10 * 0.0711, 4.0) == pytest.approx(189 * 0.0711)
    assert remaining_s(5, None, 12.0, 3.0, duration_s=30.0, started_s=2.0) == pytest.approx(20.0)
    assert (clock_text(14.2), clock_text(75), clock_text(3725)) == ("0:14", "1:15", "1:02:05")


def test_progress_during_a_run(make_win, qtbot) -> None:
    win = make_win()
    win.set_mode("verification")
    win.length.setValue(40)
    texts: list[str] = []
    win.start_run()
    assert win.running and "starting" in win.progress.label.text()

    def seen() -> bool:
        texts.append(win.progress.label.text())
        return 10 <= win.progress.done < 40 and "left" in texts[-1]
    qtbot.waitUntil(seen, timeout=60000)
    mid = texts[-1]
    assert "/ 40 events" in mid and "elapsed 0:" in mid and "about 0:0" in mid, mid
    assert win.progress.bar.maximum() == 40 and 10 <= win.progress.bar.value() < 40
    assert win.progress.isVisible()
    qtbot.waitUntil(lambda: not win.running, timeout=60000)
    assert win.progress.bar.value() == 40 and "run over: 40 events" in win.progress.label.text()
    # the run auto-saved into the window's runs folder
    assert win.result.csv_path.parent == win.runs_dir
