"""Starting the app: QApplication, the main window, settings."""

from __future__ import annotations

import sys

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from mmrig.gui.window import MainWindow


def run_app(argv: list[str], settings_path: str | None = None) -> int:
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    app.setOrganizationName("mmrig")
    app.setApplicationName("scheduler")
    settings = QSettings(settings_path, QSettings.Format.IniFormat) if settings_path else QSettings("mmrig", "scheduler")
    win = MainWindow(settings)
    win.show()
    return app.exec()
