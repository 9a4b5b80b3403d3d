"""The documentation's screenshots (docs/screenshots/README.md): every window on the tests' 1280 x 800 Xvfb
screen, at the size it opens at there, showing runs made on the virtual bench from the GUI itself (the mixed run
on the lockstep bench, so its picture does not depend on this machine's load). Not part of
a test run (about two minutes of bench runs): set MMRIG_DOC_SHOTS to the folder to write, e.g.

    MMRIG_DOC_SHOTS=docs/screenshots .venv/bin/python -m pytest -q -p no:cacheprovider \\
        scheduler-gui/tests/test_gui_doc_screenshots.py

Each picture is checked to lie inside the screen; a person looks at them before they are committed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

ROOT = Path(__file__).resolve().parents[2]
OUT = os.environ.get("MMRIG_DOC_SHOTS", "")
EVENTS = int(os.environ.get("MMRIG_DOC_SHOT_EVENTS", "200"))     # events a run
MAX_BYTES = 300_000                                              # a picture in the docs stays small

pytestmark = pytest.mark.skipif(not OUT, reason="the documentation's screenshots: set MMRIG_DOC_SHOTS=FOLDER")


def shoot(qtbot, w: QWidget, name: str) -> Path:
    """W as OUT/NAME: inside the screen, saved as a small PNG (256 colours: flat GUI colours survive it)."""
    qtbot.waitExposed(w)
    for _ in range(3):
        QApplication.processEvents()
    qtbot.wait(400)
    room = w.screen().availableGeometry()
    assert room.contains(w.frameGeometry()), (name, w.frameGeometry(), room)
    out = Path(OUT) if Path(OUT).is_absolute() else ROOT / OUT
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    img = w.grab().toImage()
    small = img.convertToFormat(QImage.Format.Format_Indexed8)
    assert small.save(str(path), "PNG", 0), path
    if path.stat().st_size > MAX_BYTES:
        assert img.convertToFormat(QImage.Format.Format_RGB888).save(str(path), "PNG", 0)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {img.width()} x {img.height()}, "
          f"{path.stat().st_size // 1000} kB")
    return path


def run(win, qtbot, mode: str, trace: bool = False, mid_run: str | None = None, lockstep: bool = False):
    """A run of EVENTS events from the window; `lockstep`: on the lockstep bench (the window's own bench is the
    paced one), so the picture does not depend on this machine's load."""
    from mmrig.endpoints import Target, choose_endpoint

    win.connection.endpoint = (lambda: choose_endpoint(Target.of(lockstep=True))) if lockstep else \
        type(win.connection).endpoint.__get__(win.connection)
    rs = win.run_settings
    rs.set_mode(mode)
    rs.fire_in_gui.setChecked(False)
    rs.trace.setChecked(trace)
    rs.length_unit.setCurrentText("events")
    rs.length.setValue(EVENTS)
    win.start_run()
    if mid_run:
        qtbot.waitUntil(lambda: win.live.progress.done >= EVENTS // 2 or not win.running, timeout=120_000)
        assert win.running, ("the run ended before the mid-run picture", [p.details for p in win.problems],
                             win.log_view.toPlainText()[-1500:])
        shoot(qtbot, win, mid_run)
    qtbot.waitUntil(lambda: not win.running, timeout=240_000)
    assert win.result is not None, (win.problems, win.log_view.toPlainText()[-2000:])
    return win.result


def whole_and_valid(result) -> bool:
    return result.valid and result.summary["events"] == EVENTS


@pytest.mark.paced
def test_the_documentations_screenshots(make_win, qtbot, display, bench, tmp_path) -> None:
    assert display is not None, "the screenshots need Xvfb (real X rendering), not Qt's offscreen platform"
    win = make_win()
    from mmrig.gui.screenfit import fit_to_screen
    fit_to_screen(win, 1280, 800)
    # the main window during and after a mixed run on the lockstep bench, the executor traced
    mixed = run(win, qtbot, "mixed", trace=True, mid_run="main-window-running.png", lockstep=True)
    assert whole_and_valid(mixed), mixed.sidecar.get("invalid_reason")
    shoot(qtbot, win, "main-window-mixed.png")
    # its executor profile: the whole trace, then 40 ms around a timecode edge (the Gantt chart up close)
    win.profile_dialog()
    pw = win.profile_window
    shoot(qtbot, pw, "profile.png")
    data = pw.gantt.data
    assert data is not None and data.tick_ms.size > 2, pw.messages
    edge = float(data.tick_ms[2])
    pw.gantt.set_x_range(edge - 5.0, edge + 35.0)
    shoot(qtbot, pw, "profile-gantt-zoomed.png")
    pw.close()
    # a normal run (the PC fires: it measures this machine, so a busy one may make it invalid: up to three
    # tries for a valid one), then the two compared
    for _ in range(3):
        normal = run(win, qtbot, "normal")
        if whole_and_valid(normal):
            break
        print(f"normal run invalid or cut short ({normal.sidecar.get('invalid_reason')}): again")
    # its worst event selected: its explanation in the pane under the table
    worst = max((r.latency_us, i) for i, r in enumerate(win.model.rows) if r.latency_us is not None)[1]
    win.live.table.selectRow(worst)
    win.live.table.scrollTo(win.model.index(worst, 0))
    event = win.model.rows[worst].event
    qtbot.waitUntil(lambda: win.live.explanation.toPlainText().startswith(f"Event {event} ("), timeout=60_000)
    shoot(qtbot, win, "main-window-normal.png")
    cmp = win.compare(mixed.csv_path, normal.csv_path)
    assert cmp is not None, win.problems
    shoot(qtbot, cmp, "compare.png")
    cmp.close()
    # a tiny lockstep campaign from the sweep window
    sw = win.open_sweep(tmp_path / "campaign")
    sw.distance.setText("1..3")
    sw.rate.setText("tick")
    sw.count.setValue(40)
    sw.lockstep.setChecked(True)
    sw.workers.setValue(2)
    assert sw.start(), sw.errors
    qtbot.waitUntil(lambda: not sw.running, timeout=300_000)
    assert sw.exit_code == 0 and sw.has_figure(), "\n".join(sw.log_lines[-20:])
    shoot(qtbot, sw, "sweep.png")
    sw.close()
