"""Nothing of the last run stays on screen where it no longer applies: normal mode's latency budget goes when
the next run starts, a plot without data drops the last run's axes, and "Follow newest event" still shows the
last rows after the run's final rows replace the live ones. The run itself is a stand-in (no bench): these are
the window's own reactions to a run starting and ending."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication


class StandInWorker(QObject):
    """What MainWindow.start_run wires of a RunWorker; the test ends the run with on_finished."""

    log = Signal(str)
    health = Signal(dict)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(self, *_args) -> None:
        super().__init__()

    def stop(self) -> None:
        from mmrig.gui.worker import Problem

        self.failed.emit(Problem("Stopped", "the stand-in run was stopped"))      # the window ends the run


@pytest.fixture
def stand_in_runs(monkeypatch):
    import mmrig.gui.window as window

    monkeypatch.setattr(window, "RunWorker", StandInWorker)
    monkeypatch.setattr(window, "start_in_thread", lambda worker: None)


def events(n: int, mode: str = "mixed") -> list:
    from mmsched.model.event import Event

    evs = []
    for i in range(n):
        e = Event(i, i, i % 8, mode, 2, 100 + i, 98 + i, 0.1, latency_us=1.375 + i % 3, result_tc=100 + i)
        e.finish("ok", None)
        evs.append(e)
    return evs


def finished_run(evs: list):
    from mmsched.model.result import RunResult
    from mmsched.verdict.stats import summarize


    return RunResult(evs, {"name": "mixed-run", "valid": True, "summary": summarize(evs), "timebase": {"timer_hz": 16_000_000, "tick_counts": 1_137_778},   # the profiler's
                           "config": {"mode": "mixed", "distance": 2}}, None, None)


def test_normal_modes_budget_goes_when_a_mixed_run_starts(make_win, stand_in_runs, tmp_path, normal_with_stall,
                                                          write_normal) -> None:
    from mmsched.verdict.budget import PART_WORDS

    _, lat, sent = normal_with_stall(first=10)
    csv = write_normal(tmp_path, "normal-run", lat, sent)
    sidecar = json.loads(csv.with_suffix(".json").read_text())
    sidecar["budget"] = {"floor": {"us": 12.0, "n": 5}, "target": "naive", "largest_p50": next(iter(PART_WORDS)),
                         "parts": {col: {"p50": 100.0, "p99": 900.0} for col in PART_WORDS}}
    csv.with_suffix(".json").write_text(json.dumps(sidecar))
    win = make_win()
    assert win.open_run(csv)
    assert win.live.budget_label.isVisible()                         # the normal run's budget, as it should
    win.run_settings.set_mode("mixed")
    win.start_run()
    assert win.running
    assert not win.live.budget_label.isVisible() and win.live.budget_label.text() == ""
    win.on_finished(finished_run(events(20)))
    assert not win.live.budget_label.isVisible()                     # a mixed run has no budget of its own


def test_a_plot_without_data_drops_the_last_runs_axes(shown_plots, qtbot) -> None:
    plots = shown_plots()
    plots.set_axis_mode("linear")
    plots.show_arrays([(np.arange(100.0), 50_000.0 + 10 * np.arange(100.0))])
    qtbot.wait(20)
    assert plots.time_plot.getViewBox().viewRange()[1][1] > 50_000                 # the run's axes
    for start_of_next_run in (lambda: plots.set_series(1), lambda: plots.show_arrays([(np.empty(0), np.empty(0))])):
        start_of_next_run()
        qtbot.wait(20)
        (tx0, tx1), (ty0, ty1) = plots.time_plot.getViewBox().viewRange()
        hx1 = plots.hist_plot.getViewBox().viewRange()[0][1]
        cx1 = plots.cdf_plot.getViewBox().viewRange()[0][1]
        assert ty1 < 1000 and tx1 < 50 and hx1 < 1000 and cx1 < 1000, ((tx0, tx1), (ty0, ty1), hx1, cx1)
    # and the next run's data still take the axes (auto-range is back on)
    plots.show_arrays([(np.arange(10.0), 200.0 + np.arange(10.0))])
    qtbot.wait(20)
    ty0, ty1 = plots.time_plot.getViewBox().viewRange()[1]
    assert ty0 <= 200 and 209 <= ty1 < 1000, (ty0, ty1)


def test_follow_newest_event_shows_the_last_rows_when_the_run_ends(make_win, stand_in_runs, qtbot) -> None:
    from mmrig.gui.rows import Row

    win = make_win()
    assert win.live.follow
    win.start_run()
    evs = events(300)
    win.model.apply([Row.of(e) for e in evs[:250]])       # the live rows so far: the table follows them
    QApplication.processEvents()
    win.on_finished(finished_run(evs))                    # the core's final rows replace them: 300 of them
    qtbot.wait(50)
    table = win.live.table
    last = table.visualRect(win.model.index(win.model.rowCount() - 1, 0))
    assert win.model.rowCount() == 300
    assert table.viewport().rect().contains(last), (last, table.viewport().rect())
    # the end of a run often brings a banner (the host fell behind) or a budget above the table, which makes it
    # shorter: the last rows stay in view
    win.live.show_banner("<b>Bench fell behind</b>: " + "host stalls displaced bytes past the bound; " * 4)
    qtbot.wait(50)
    last = table.visualRect(win.model.index(win.model.rowCount() - 1, 0))
    assert table.viewport().rect().contains(last), (last, table.viewport().rect())
