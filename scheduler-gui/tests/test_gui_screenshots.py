"""Screenshots, 1280 x 800, under Xvfb, looked at by a person (docs/gui.md): a window of each mode
after a run of SHOT_EVENTS events on the bench and one while the normal run goes, a run's warm-up marked,
and the compare window of the mixed and normal runs: build/screenshots/window-*.png, compare-*.png."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"
# 40 events a run in the suite (each mode's window, plots and tables filled: half a minute for the four runs);
# MMRIG_SHOT_EVENTS=200 for the documentation's screenshots (about a minute more)
SHOT_EVENTS = int(os.environ.get("MMRIG_SHOT_EVENTS", "40"))
# a run's screenshot by its mode ("normal-gui-process": normal mode fired from the GUI's process)
SHOT_NAMES = {"normal": "window-normal.png", "normal-gui-process": "window-normal-fired-from-gui.png",
              "mixed": "window-mixed.png", "verification": "window-verification.png"}


def grab(win, path: Path):
    img = win.grab().toImage()
    assert img.save(str(path)), path
    return img


@pytest.mark.paced
def test_screenshots_of_each_mode_the_warmup_and_the_compare_window(make_win, qtbot, display, bench,
                                                                     normal_with_stall, write_normal) -> None:
    """Runs of SHOT_EVENTS events on the bench in each mode, started from the GUI; one screenshot while the
    normal run goes (its progress), one after each run, one of an opened run with a warm-up, one of the compare
    window of the mixed and normal runs."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    win = make_win()
    win.resize(1280, 800)
    csvs = {}
    for mode in ("normal", "normal-gui-process", "mixed", "verification"):
        win.run_settings.set_mode(mode.split("-")[0])
        win.run_settings.fire_in_gui.setChecked(mode == "normal-gui-process")
        win.run_settings.length.setValue(SHOT_EVENTS)
        win.start_run()
        if mode == "normal":
            qtbot.waitUntil(lambda: win.live.progress.done >= SHOT_EVENTS // 2 or not win.running, timeout=90000)
            assert win.running and "left" in win.live.progress.label.text(), win.live.progress.label.text()
            grab(win, SHOTS / "window-normal-running.png")
        qtbot.waitUntil(lambda: not win.running, timeout=120000)
        assert win.result is not None, win.problems
        assert win.result.summary["events"] == SHOT_EVENTS, (win.result.sidecar.get("invalid_reason"), win.problems,
                                                             win.log_view.toPlainText()[-3000:])
        qtbot.wait(400)
        img = grab(win, SHOTS / SHOT_NAMES[mode])
        assert (img.width(), img.height()) == (1280, 800)
        colours = {img.pixel(x, y) for x in range(0, 1280, 16) for y in range(0, 800, 16)}
        assert len(colours) > 20                      # a rendered window, not a blank
        if display is not None:                       # the whole X screen, as the X server has it
            from PySide6.QtGui import QGuiApplication

            assert QGuiApplication.primaryScreen().grabWindow(0).save(str(SHOTS / f"xscreen-{SHOT_NAMES[mode]}"))
        csvs[mode] = win.result.csv_path
        print(f"{mode}: warm-up {win.live.plots.warmup}, log axes {win.live.plots.log_y}, {win.result.summary['outcomes']}")
    # the warm-up mark on a run known to have one: a synthetic normal run whose first events met a 295 ms stall
    tmp = SHOTS.parent / "synthetic-runs"
    tmp.mkdir(exist_ok=True)
    ev, lat, sent = normal_with_stall(first=0, n=200)
    csv = write_normal(tmp, "synthetic-normal-stall", lat, sent)
    assert win.open_run(csv) and win.live.plots.warmup == [5]
    qtbot.wait(400)
    grab(win, SHOTS / "window-warmup-marked.png")
    cmp = win.compare(csvs["mixed"], csvs["normal"])
    cmp.resize(1280, 800)
    qtbot.wait(400)
    img = grab(cmp, SHOTS / "compare-mixed-normal.png")
    assert (img.width(), img.height()) == (1280, 800)
