"""Starting the app: QApplication, the main window, settings."""

from __future__ import annotations

import sys

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mmrig.gui.gcpolicy import gui_thread_gc
from mmrig.gui.window import MainWindow


def run_app(argv: list[str], settings_path: str | None = None) -> int:
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    app.setOrganizationName("mmrig")
    app.setApplicationName("scheduler")
    settings = QSettings(settings_path, QSettings.Format.IniFormat) if settings_path else QSettings("mmrig", "scheduler")
    gc_policy = gui_thread_gc()     # Qt objects collected in the GUI thread only (gcpolicy.py)
    win = MainWindow(settings)
    win.show()
    try:
        return app.exec()
    finally:
        gc_policy.stop()
