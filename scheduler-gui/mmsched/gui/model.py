"""The event schedule list as a Qt model over the core's events (their snapshots): new rows go in with
beginInsertRows in chunks, changed rows with one dataChanged per batch, so thousands of rows stay smooth."""

from __future__ import annotations

from typing import Any, Iterable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from .rows import Row

HEADERS = ("event", "id", "scheduled tc", "sent (s)", "acked tc", "fired tc", "latency (us)", "outcome")
OUTCOME_COLOURS = {"ok": QColor("#1b7f3a"), "late": QColor("#b36b00"), "early": QColor("#7a3db8"),
                   "missed": QColor("#c0392b"), "lost": QColor("#7f7f7f")}
CHUNK = 512


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


class EventModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []
        self._waiting: dict[int, Row] = {}    # rows that arrived before an earlier one (kept until contiguous)
        self.revision = 0                     # bumps on every change: views redraw only when it moved

    # ---- Qt API ------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        r = self.rows[index.row()]
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if c == 0:
                return str(r.event)
            if c == 1:
                return str(r.event_id)
            if c == 2:
                return str(r.scheduled_tc)
            if c == 3:
                return _fmt(r.sent_s)
            if c == 4:
                return _fmt(r.ack_tc)
            if c == 5:
                return _fmt(r.fired_tc)
            if c == 6:
                return _fmt(r.latency_us)
            if c == 7:
                if r.outcome is None:
                    return "pending"
                return r.outcome if not r.reason or r.reason == r.outcome else f"{r.outcome} ({r.reason})"
        elif role == Qt.ItemDataRole.ForegroundRole and c == 7 and r.outcome:
            return OUTCOME_COLOURS.get(r.outcome)
        elif role == Qt.ItemDataRole.TextAlignmentRole and c != 7:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    # ---- feeding -----------------------------------------------------------------------------
    def clear(self) -> None:
        self.beginResetModel()
        self.rows = []
        self._waiting.clear()
        self.revision += 1
        self.endResetModel()

    def set_rows(self, rows: Iterable[Row]) -> None:
        self.beginResetModel()
        self.rows = sorted(rows, key=lambda r: r.event)
        self._waiting.clear()
        self.revision += 1
        self.endResetModel()

    def apply(self, batch: Iterable[Row]) -> None:
        """One batch of snapshots: updates of known rows, then the new rows appended in chunks."""
        lo = hi = None
        n = len(self.rows)
        for row in batch:
            if row.event < n:
                self.rows[row.event] = row
                lo = row.event if lo is None else min(lo, row.event)
                hi = row.event if hi is None else max(hi, row.event)
            elif row.event >= 0:
                self._waiting[row.event] = row
        if lo is not None:
            self.dataChanged.emit(self.index(lo, 0), self.index(hi, len(HEADERS) - 1))
        new: list[Row] = []
        while n + len(new) in self._waiting:
            new.append(self._waiting.pop(n + len(new)))
        for start in range(0, len(new), CHUNK):
            part = new[start:start + CHUNK]
            first = len(self.rows)
            self.beginInsertRows(QModelIndex(), first, first + len(part) - 1)
            self.rows.extend(part)
            self.endInsertRows()
        if lo is not None or new:
            self.revision += 1
