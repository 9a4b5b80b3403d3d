"""The eight event LEDs: the profiler's Port 2 in the paper."""

from __future__ import annotations

import time

from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget


class Leds(QWidget):
    """Eight LEDs, one per event id, lit for `hold_s` when the profiler captured that id's pulse
    (the profiler's Port 2 in the paper)."""

    def __init__(self, hold_s: float = 0.25, parent=None) -> None:
        super().__init__(parent)
        self.hold_s = hold_s
        self.lit_until = [0.0] * 8
        self.counts = [0] * 8
        self.setMinimumSize(QSize(8 * 30, 44))
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._timer = QTimer(self)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._tick)

    def light(self, event_id: int) -> None:
        if 0 <= event_id < 8:
            self.lit_until[event_id] = time.monotonic() + self.hold_s
            self.counts[event_id] += 1
            if not self._timer.isActive():
                self._timer.start()
            self.update()

    def lit(self) -> list[int]:
        now = time.monotonic()
        return [i for i in range(8) if self.lit_until[i] > now]

    def _tick(self) -> None:
        self.update()
        if not self.lit():
            self._timer.stop()

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        w = self.width() / 8
        d = min(w - 8, 22)
        now = time.monotonic()
        for i in range(8):
            x = i * w + (w - d) / 2
            on = self.lit_until[i] > now
            p.setPen(QColor("#333"))
            p.setBrush(QColor("#ff3b30") if on else QColor("#5a1f1c"))
            p.drawEllipse(QRectF(x, 2, d, d))
            p.setPen(QColor("#222"))
            p.drawText(QRectF(i * w, d + 4, w, 16), Qt.AlignmentFlag.AlignCenter, str(i))
        p.end()
