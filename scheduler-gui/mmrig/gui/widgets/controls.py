"""Small general controls: two exclusive radio buttons, a one-line label that never widens its window."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QButtonGroup, QLabel, QRadioButton, QSizePolicy, QWidget


def radio_pair(owner: QWidget, first: str, second: str) -> tuple[QRadioButton, QRadioButton, QButtonGroup]:
    """Two exclusive radio buttons, the first checked, and the group that keeps them exclusive (owned by OWNER)."""
    a, b = QRadioButton(first), QRadioButton(second)
    a.setChecked(True)
    group = QButtonGroup(owner)
    group.addButton(a)
    group.addButton(b)
    return a, b, group


class ElidedLabel(QLabel):
    """A one-line label that never widens its window: a text wider than the label is drawn elided in the middle
    (the whole text is its tooltip and text())."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(120)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt
        return QSize(120, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt
        return QSize(min(super().sizeHint().width(), 520), super().sizeHint().height())

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt
        p = QPainter(self)
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, self.width())
        p.drawText(self.rect(), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight), text)
        p.end()
