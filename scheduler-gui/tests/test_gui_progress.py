"""A run's progress: events ended, elapsed time and the time left while it goes (on the bench), what it
took after."""

from __future__ import annotations

import pytest


def test_progress_unit() -> None:
    from mmrig.gui.widgets.progress import clock_text, remaining_s

    assert remaining_s(0, 200, 3.0, None) is None                      # nothing ended: nothing to go on
    assert remaining_s(11, 200, 4.0 + 10 * 0.0711, 4.0) == pytest.approx(189 * 0.0711)
    assert remaining_s(5, None, 12.0, 3.0, duration_s=30.0, started_s=2.0) == pytest.approx(20.0)
    assert (clock_text(14.2), clock_text(75), clock_text(3725)) == ("0:14", "1:15", "1:02:05")


@pytest.mark.paced
def test_progress_during_a_run(make_win, qtbot, bench) -> None:
    win = make_win()
    win.run_settings.set_mode("verification")
    win.run_settings.length.setValue(40)
    texts: list[str] = []
    win.start_run()
    assert win.running and "starting" in win.live.progress.label.text()

    def seen() -> bool:
        texts.append(win.live.progress.label.text())
        return 10 <= win.live.progress.done < 40 and "left" in texts[-1]
    qtbot.waitUntil(seen, timeout=60000)
    mid = texts[-1]
    assert "/ 40 events" in mid and "elapsed 0:" in mid and "about 0:0" in mid, mid
    assert win.live.progress.bar.maximum() == 40 and 10 <= win.live.progress.bar.value() < 40
    assert win.live.progress.isVisible()
    qtbot.waitUntil(lambda: not win.running, timeout=60000)
    assert win.live.progress.bar.value() == 40 and "run over: 40 events" in win.live.progress.label.text()
    # the run auto-saved into the window's runs folder
    assert win.result.csv_path.parent == win.runs_folder.runs_dir
    # after it: the statistics are named for the run (not "live"), the log shows its last line
    assert win.live.stats.title() == f"Statistics: {win.result.sidecar['name']}"
    bar = win.log_view.verticalScrollBar()
    assert bar.value() == bar.maximum()
