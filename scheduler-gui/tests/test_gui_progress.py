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
    assert bar.value() == bar.maximum(), win.log_view.toPlainText()[-3000:]


def test_the_progress_and_the_statistics_count_from_one_snapshot(make_win, qtbot) -> None:
    """A user saw, in one frame of a running run, the bar at 86 / 200, its text at 71 / 200 and the statistics at
    n = 63: the statistics are redrawn once a round of the live parts, the progress every tick, each from the model
    as it was then. Now the progress shows the counts the statistics were last drawn from, in every frame."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from fake_events import finished
    from mmrig.gui.rows import Row

    win = make_win()
    live = win.live
    live.start_live(200, None)
    live.running = True
    events = finished(120)
    for k in range(0, 120, 7):                      # rows arrive while the live parts take their turns
        win.model.apply([Row.of(e) for e in events[k:k + 7]])
        live.redraw()
        outcomes = live.stats.labels["outcomes"].text().split()[0]
        ended_in_stats = sum(int(x) for x in outcomes.split("/")) if live.stats.summary else 0
        assert live.progress.done == ended_in_stats
        assert live.progress.bar.value() == live.progress.done
        assert live.progress.label.text().startswith(f"{live.progress.done} / 200 events")
    for _ in range(4):                              # a whole round with no new rows: the statistics catch up
        live.redraw()
    assert live.progress.done == 120 and live.stats.summary["outcomes"]["ok"] == 120


def test_a_run_that_ended_leaves_no_timecode_on_show(make_win) -> None:
    """The timecode display said the last run's value after it ended, as though the line were live."""
    from mmrig.gui.worker import Problem

    win = make_win()
    win.quiet = True
    win.live.timecode.set_timecode(300)
    win.on_failed(Problem("the bench stopped", "it stopped"))
    assert win.live.timecode.ext.text() == "--" and win.live.timecode.value is None


def test_normal_mode_waiting_for_its_tick_fit_says_so_in_the_command_lines_words(make_win, qtbot) -> None:
    """The GUI said "remaining: estimating..." while a normal run gathered its tick fit, where the command line
    says "waiting for the tick fit (N of 64 TIMECODEs)": the run's notification reaches the progress through the
    feed, in the same words."""
    from mmrig.gui.feed import EventFeed
    from mmrig.progress import tick_fit_words

    win = make_win()
    live = win.live
    live.start_live(200, None)
    live.running = True
    feed = EventFeed()
    win.attach_feed(feed)                            # the one path from the core into the view
    with qtbot.waitSignal(feed.tick_fit, timeout=1000):
        feed("tick_fit", (12, 64))                   # as the Runner's observer calls it
    live.update_progress()
    assert tick_fit_words(12, 64) in live.progress.label.text()
    feed("tick_fit", (64, 64))                       # fitted: the events begin
    live.update_progress()
    assert "tick fit" not in live.progress.label.text()
