"""The timecode display: the profiler's last TIMECODE as 8 bits, port bits and the extended count."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget


class TimecodeDisplay(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        big = QFont("monospace")
        big.setStyleHint(QFont.StyleHint.Monospace)
        big.setPointSize(18)
        big.setBold(True)
        self.tc8 = QLabel("--")
        self.bits = QLabel("--------")
        self.ext = QLabel("--")
        for lab in (self.tc8, self.bits, self.ext):
            lab.setFont(big)
        lay.addWidget(QLabel("timecode (8-bit)"), 0, 0)
        lay.addWidget(QLabel("port bits"), 0, 1)
        lay.addWidget(QLabel("extended"), 0, 2)
        lay.addWidget(self.tc8, 1, 0)
        lay.addWidget(self.bits, 1, 1)
        lay.addWidget(self.ext, 1, 2)
        self.value: int | None = None

    def set_timecode(self, tc: int) -> None:
        self.value = tc
        low = tc & 0xFF
        self.tc8.setText(f"{low:3d}  0x{low:02X}")
        self.bits.setText(f"{low:08b}")
        self.ext.setText(f"{tc}")

    def reset(self) -> None:
        self.value = None
        self.tc8.setText("--")
        self.bits.setText("--------")
        self.ext.setText("--")
