"""Fixtures the GUI test modules share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def make_win(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from mmrig.gui.window import MainWindow

    made = []

    def make(ini: Path | None = None):
        w = MainWindow(QSettings(str(ini or tmp_path / "settings.ini"), QSettings.Format.IniFormat),
                       runs_dir=tmp_path / "runs")
        w.quiet = True
        qtbot.addWidget(w)
        w.resize(1280, 800)
        w.show()
        made.append(w)
        return w
    yield make
    for w in made:
        if w.worker is not None:
            w.worker.stop()
            qtbot.waitUntil(lambda: w.worker is None, timeout=30000)
