"""The PC load indicator: no load, a load armed for the next run, or a load on now."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel


class LoadIndicator(QLabel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.set_state(False, False)

    def set_state(self, armed: bool, running: bool) -> None:
        self.active = armed and running
        if armed and running:
            self.setText("  HEAVY LOAD ON  ")
            self.setStyleSheet("background:#c0392b;color:white;font-weight:bold;border-radius:4px;")
        elif armed:
            self.setText("  heavy load armed  ")
            self.setStyleSheet("background:#f5c26b;color:black;border-radius:4px;")
        else:
            self.setText("  no load  ")
            self.setStyleSheet("background:#d5d5d5;color:#333;border-radius:4px;")
