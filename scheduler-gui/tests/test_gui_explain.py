"""The selected event's explanation in the main window (mmrig.gui.explainer, widgets/explanation.py): selecting a
row of an opened run shows why that event was as late as it was in the pane under the table, computed in a thread
of its own; events the explanation does not give say why. On the recorded explanation fixture
(analysis/tests/explain_fixture.py), and on a real traced normal run of the paced bench; the screenshots
(build/screenshots/gui-explanation*.png) are looked at."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"
sys.path.insert(0, str(ROOT / "analysis" / "tests"))
from explain_fixture import (EVENT, last_event_with_a_wakeup, record_traced_normal_run, recorded_event,  # noqa: E402,I001
                             recorded_trace, write_traced_normal_run)


@pytest.fixture
def trace_reads(monkeypatch) -> list[str]:
    """The threads the host trace was read in (each read gives the recorded trace)."""
    from mmanalysis import runexplainer

    threads: list[str] = []
    trace = recorded_trace()
    monkeypatch.setattr(runexplainer, "read_trace",
                        lambda path, keep: threads.append(threading.current_thread().name) or trace)
    return threads


def select(win, event: int) -> None:
    row = next(i for i, r in enumerate(win.model.rows) if r.event == event)
    win.live.table.selectRow(row)
    win.live.table.scrollTo(win.model.index(row, 0))        # in view, as a row the user clicks (the screenshots)


def pane_text(win) -> str:
    return win.live.explanation.toPlainText()


def test_the_selected_event_is_explained_under_the_table(make_win, qtbot, tmp_path, trace_reads) -> None:
    csv = write_traced_normal_run(tmp_path / "runs", recorded_event())
    win = make_win()
    assert win.open_run(csv) and not win.live.explanation.isVisible()
    select(win, EVENT)
    qtbot.waitUntil(lambda: "mmspinner" in pane_text(win), timeout=10000)
    assert trace_reads and threading.main_thread().name not in trace_reads     # read in the worker's thread
    text = pane_text(win)
    assert text.startswith("Event 17 (late, 4448.2 us, tick 70): largest part mmspinner (pid 3341, rt 90) held CPU 1 "
                           "4368.3 us (98.2%)")
    assert "tick estimate's error 12.5 us (0.3%)" in text and "profiler's floor" in text and "Steal on CPU 1" in text
    pane = win.live.explanation
    assert pane.isVisible() and pane.height() >= 100 and win.live.table.height() >= 150
    assert pane.horizontalScrollBar().maximum() == 0                                   # wrapped, never sideways
    # another event of the same run: explained from the trace already read
    select(win, 3)
    qtbot.waitUntil(lambda: pane_text(win).startswith("Event 3 (ok"), timeout=10000)
    assert len(trace_reads) == 1
    qtbot.wait(300)
    SHOTS.mkdir(parents=True, exist_ok=True)
    select(win, EVENT)
    qtbot.waitUntil(lambda: "mmspinner" in pane_text(win), timeout=10000)
    qtbot.wait(300)
    assert win.grab().save(str(SHOTS / "gui-explanation.png"))


def test_a_quick_second_selection_is_the_one_shown(make_win, qtbot, tmp_path, trace_reads) -> None:
    win = make_win()
    assert win.open_run(write_traced_normal_run(tmp_path / "runs", recorded_event()))
    select(win, EVENT)
    select(win, 4)
    qtbot.waitUntil(lambda: pane_text(win).startswith("Event 4 (ok"), timeout=10000)
    qtbot.wait(500)                  # the answer for event 17 came (or comes) too, and is not shown
    assert pane_text(win).startswith("Event 4 (ok") and win.live.explanation.event == 4


def test_events_the_explanation_does_not_give_say_why(make_win, qtbot, tmp_path, synthetic_run, trace_reads) -> None:
    win = make_win()
    assert win.open_run(write_traced_normal_run(tmp_path / "runs", recorded_event()))
    select(win, 6)
    qtbot.waitUntil(lambda: "not explained" in pane_text(win), timeout=10000)
    assert pane_text(win) == "event 6 (missed): not explained: event 6 has no latency (missed: timeout): nothing to split"
    assert win.open_run(synthetic_run(tmp_path, [40.0, 41.0, 1500.0], "mixed-run"))
    assert not win.live.explanation.isVisible()              # the opened run's rows replaced the others: closed
    select(win, 2)
    qtbot.waitUntil(lambda: "not explained" in pane_text(win), timeout=10000)
    assert pane_text(win) == ("event 2 (late, 1500.0 us): not explained: event 2: no executor trace on disk holds it "
                              "(`mmrig explain RUN 2` replays it)")


def test_a_run_still_going_or_not_on_disk_says_so(make_win, qtbot, tmp_path, trace_reads, monkeypatch) -> None:
    win = make_win()
    assert win.open_run(write_traced_normal_run(tmp_path / "runs", recorded_event()))
    with monkeypatch.context() as m:
        m.setattr(type(win), "running", property(lambda self: True))
        select(win, EVENT)
        assert pane_text(win) == ("Event 17: the run is still going: its events are explained once it has ended")
    (tmp_path / "runs" / "fx.csv").unlink()
    select(win, 3)
    assert "Event 3: the run is not on disk" in pane_text(win) and win.live.explanation.isVisible()
    assert trace_reads == []


@pytest.mark.paced
def test_a_traced_bench_run_explained_in_the_window(make_win, qtbot, tmp_path, display) -> None:
    csv = record_traced_normal_run(tmp_path / "runs" / "traced")
    win = make_win()
    assert win.open_run(csv)
    last = last_event_with_a_wakeup(csv)
    select(win, last)
    qtbot.waitUntil(lambda: pane_text(win).startswith(f"Event {last} ("), timeout=90000)
    text = pane_text(win)
    # the wake-up split by the trace: the parts name what ran, not one unsplit wake-up
    assert "wake-up (not split)" not in text and "largest part" in text, text
    assert any(w in text for w in ("held CPU", "own path", "asleep past its moment", "softirqs")), text
    qtbot.wait(300)
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert win.grab().save(str(SHOTS / "gui-explanation-bench.png"))
