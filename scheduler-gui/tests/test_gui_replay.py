"""The runs' "Replay with trace around this event": a paced bench run opened in the window, its worst event
replayed on the bench from the run's record of its inputs with the executor traced around it, and the executor
profile window opening at that moment (a real window under Xvfb; the screenshot is looked at)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"


@pytest.mark.paced
def test_a_late_event_replayed_with_trace_opens_the_profile_at_its_moment(make_win, qtbot, tmp_path, bench) -> None:
    from mmhil import BenchEndpoint
    from mmrig.gui.replayaction import SHOW_MS, WINDOW_MS
    from mmsched.model.config import RunConfig
    from mmsched.run.runner import run

    out = tmp_path / "runs" / "loaded"
    out.parent.mkdir(parents=True)
    cfg = RunConfig(mode="mixed", dispatch="task", executor_load="cpu,periodic=10ms/2ms", count=12, out=out)
    run(cfg, BenchEndpoint())
    df = pd.read_csv(out.with_suffix(".csv"))
    worst = int(df.loc[df["latency_us"].idxmax(), "event"])
    win = make_win()
    assert win.open_run(out.with_suffix(".csv"))
    assert win.replay_around(worst)
    qtbot.waitUntil(lambda: getattr(win, "profile_window", None) is not None and win.replay_worker is None,
                    timeout=120000)
    w = win.profile_window
    qtbot.waitExposed(w)
    assert w.runs[0].name == f"loaded around event {worst}" and w.runs[0].trace_file().is_file()
    a, b = w.gantt.x_range()
    assert abs(a - (WINDOW_MS - SHOW_MS[0])) < 0.5 and abs(b - (WINDOW_MS + SHOW_MS[1])) < 0.5
    assert "0 differ" in win.log_view.toPlainText(), win.log_view.toPlainText()
    qtbot.wait(300)
    SHOTS.mkdir(parents=True, exist_ok=True)
    w.grab().save(str(SHOTS / "gui_replay_around_event.png"))


def test_a_run_without_a_record_says_why_in_one_line(make_win, tmp_path) -> None:
    from mmrig.gui.replayaction import why_not

    assert "not on disk" in why_not({}, None)
    csv = tmp_path / "x.csv"
    csv.write_text("event\n")
    assert "no record of its inputs" in why_not({"target": {"kind": "boards"}}, csv)
    assert "incomplete" in why_not({"inputs": {"file": "x.inputs", "complete": False}}, csv)
    assert why_not({"inputs": {"file": "x.inputs", "complete": True}}, csv) is None
