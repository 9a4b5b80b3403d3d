"""The event schedule list as a Qt model over the core's events (their snapshots): new rows go in with
beginInsertRows in chunks, changed rows with one dataChanged per batch, so thousands of rows stay smooth. A run of
hours keeps the newest ROWS_KEPT as rows (mmrig.child: a Row and its text are about 800 bytes, 2.9 GB an hour at
1 kHz), the oldest leaving the top of the table as new ones come; the CSV has every row.

A view paints every visible cell many times a second and asks several roles per cell, so `data` only
indexes: each row's display strings are formatted once, when the row arrives or changes. The model also
keeps each event's latency and outcome in numpy arrays (indexed by event, the whole run: 14 bytes an event) for
the live plots and statistics, so they never walk the row list in Python."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from mmsched.model.event import OUTCOMES
from mmsched.model.eventstore import EventStore
from mmrig.child import ROWS_KEPT
from mmrig.gui.rows import Row
from mmrig.gui.widgets.warmup import WARMUP_WINDOW, warmup_until

AVR_TIMER_HZ = 16_000_000    # the AVR profiler's input-capture counter, until a HELLO or a run says otherwise
HEADERS = ("event", "id", "scheduled tc", "sent (s)", "acked tc", "fired tc", "latency (us)", "outcome")
# the headers as the table shows them: a second line for the unit, so each column is as narrow as its numbers and
# the outcome keeps room beside the plots at 1280 x 800
HEADER_LINES = tuple(h.replace(" ", "\n", 1) if " " in h else h for h in HEADERS)
OUTCOME_COLOURS = {"ok": QColor("#1b7f3a"), "late": QColor("#b36b00"), "early": QColor("#7a3db8"),
                   "missed": QColor("#c0392b"), "lost": QColor("#7f7f7f")}
CHUNK = 512
NCOLS = len(HEADERS)
OUTCOME_CODE = {o: i for i, o in enumerate(OUTCOMES)}     # outcome code in `codes`; -1: pending
PENDING = -1

_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def scheduled(r: Row, timer_hz: float) -> str:
    """The tick an event is due in, and for a grid's moment inside it how far in (the profiler's counts at
    `timer_hz`, in ms): "82 +1.250 ms"."""
    if not r.due_counts:
        return str(r.scheduled_tc)
    return f"{r.scheduled_tc} +{1e3 * r.due_counts / timer_hz:.3f} ms"


def outcome_text(r: Row) -> str:
    """The outcome cell: short, so it shows whole in the table's last column (about 90 px at 1280 x 800: "missed
    (past_due)" showed as "missed ..."); the reason and the whole story are its tooltip (outcome_tip)."""
    if r.outcome is None:
        return "pending"
    return r.outcome + (", stalled" if not r.measurable else "")


def outcome_tip(r: Row) -> str:
    """The outcome cell's tooltip: the outcome, its reason and, for a latency the rig cannot stand behind, why."""
    if r.outcome is None:
        return "pending: no outcome yet"
    tip = r.outcome if not r.reason or r.reason == r.outcome else f"{r.outcome} (reason: {r.reason})"
    if not r.measurable:
        tip += (f", not measurable: a host stall displaced a byte of it by {r.stall_us or 0:.0f} us, so its latency "
                "is left out of the plots and the statistics")
    return tip


def display(r: Row, timer_hz: float = AVR_TIMER_HZ) -> tuple[str, ...]:
    """The row's eight cells as the table shows them (`timer_hz`: the profiler's, for a moment inside a tick)."""
    return (str(r.event), str(r.event_id), scheduled(r, timer_hz), _fmt(r.sent_s), _fmt(r.ack_tc), _fmt(r.fired_tc),
            _fmt(r.latency_us), outcome_text(r))


class EventModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []             # the newest events' (ROWS_KEPT), from event `first` on
        self.first = 0                        # the event of rows[0]: the ones before left the table
        self._text: list[tuple[str, ...]] = []    # display strings, parallel to rows
        self._waiting: dict[int, Row] = {}    # rows that arrived before an earlier one (kept until contiguous)
        self.revision = 0                     # bumps on every change: views redraw only when it moved
        self.resets = 0                       # bumps on clear / set_rows: arrays taken before are stale
        self.timer_hz = AVR_TIMER_HZ           # the profiler's counter (its HELLO; an opened run's timebase)
        self._alloc(1024)

    # ---- per-event arrays (plots and statistics) -------------------------------------------------
    def _alloc(self, n: int) -> None:
        # 14 bytes an event (50 MB an hour at 1 kHz): the event's number as int32 (an opened journal may miss some),
        # and its moment only for the first events, where the warm-up is looked for
        self._lat = np.full(n, np.nan)
        self._code = np.full(n, PENDING, dtype=np.int8)
        self._unmeasurable = np.zeros(n, dtype=bool)
        self._ev = np.zeros(n, dtype=np.int32)
        self._sent = np.full(3 * WARMUP_WINDOW, np.nan)

    def _grow(self, need: int) -> None:
        if need > self._lat.size:
            size = max(need, 2 * self._lat.size)
            lat, code, ev, unm, sent = self._lat, self._code, self._ev, self._unmeasurable, self._sent
            self._alloc(size)
            self._sent = sent
            self._lat[:lat.size] = lat
            self._code[:code.size] = code
            self._ev[:ev.size] = ev
            self._unmeasurable[:unm.size] = unm

    def _record(self, pos: int, r: Row) -> None:
        self._code[pos] = OUTCOME_CODE.get(r.outcome, PENDING) if r.outcome is not None else PENDING
        # a latency the rig cannot stand behind (a host stall displaced a byte of it) is not plotted or summarised
        self._lat[pos] = np.nan if r.latency_us is None or not r.measurable else r.latency_us
        self._unmeasurable[pos] = not r.measurable
        self._ev[pos] = r.event
        if pos < self._sent.size:
            self._sent[pos] = np.nan if r.sent_s is None else r.sent_s

    @property
    def count(self) -> int:
        """Events the model has: the rows' and the ones before them that left the table."""
        return self.first + len(self.rows)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(latency us or NaN, outcome code or -1) per event, views of the model's own arrays: do not keep."""
        n = self.count
        return self._lat[:n], self._code[:n]

    def unmeasurable(self) -> int:
        """Events a host stall displaced a byte of past the bound (their latency is left out)."""
        return int(self._unmeasurable[:self.count].sum())

    def latency_points(self) -> tuple[np.ndarray, np.ndarray]:
        """(event index, latency us) of the rows with a latency and outcome ok or late (as latency_arrays)."""
        lat, code = self.arrays()
        keep = ((code == OUTCOME_CODE["ok"]) | (code == OUTCOME_CODE["late"])) & ~np.isnan(lat)
        i = np.flatnonzero(keep)
        return self._ev[i].astype(float), lat[i]

    def warmup(self, tick_us: float) -> int | None:
        """The run's start-up stall (warmup_until over its first events), or None."""
        lat, code = self.arrays()
        n = min(self.count, 3 * WARMUP_WINDOW)
        keep = ((code[:n] == OUTCOME_CODE["ok"]) | (code[:n] == OUTCOME_CODE["late"])) & ~np.isnan(lat[:n])
        i = np.flatnonzero(keep)
        return warmup_until(self._ev[i].astype(float), lat[i], self._sent[i], tick_us)

    # ---- Qt API ------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else NCOLS

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < NCOLS:
            if role == Qt.ItemDataRole.DisplayRole:
                return HEADER_LINES[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = _DISPLAY) -> Any:
        # called for every visible cell and role on every paint: index only, no formatting
        role = int(role)
        if role == _DISPLAY:
            try:
                return self._text[index.row()][index.column()]
            except IndexError:
                return None
        if role == _ALIGN:
            return _RIGHT if index.column() != 7 else None
        if role == _TOOLTIP and index.column() == 7:
            row = index.row()                      # asked on hover only: formatted then
            return outcome_tip(self.rows[row]) if 0 <= row < len(self.rows) else None
        if role == _FOREGROUND and index.column() == 7:
            row = index.row()
            if 0 <= row < len(self.rows):
                o = self.rows[row].outcome
                return OUTCOME_COLOURS.get(o) if o else None
        return None

    # ---- feeding -----------------------------------------------------------------------------
    def clear(self) -> None:
        self.beginResetModel()
        self.rows = []
        self.first = 0
        self._text = []
        self._waiting.clear()
        self._alloc(1024)
        self.revision += 1
        self.resets += 1
        self.endResetModel()

    def set_rows(self, rows: Iterable[Row]) -> None:
        self.beginResetModel()
        every = sorted(rows, key=lambda r: r.event)
        self._waiting.clear()
        self._alloc(max(1024, len(every)))
        for pos, r in enumerate(every):
            self._record(pos, r)
        self.first = max(0, len(every) - ROWS_KEPT)
        self.rows = every[self.first:]
        self._text = [display(r, self.timer_hz) for r in self.rows]
        self.revision += 1
        self.resets += 1
        self.endResetModel()

    def end_on(self, events: Sequence[Any]) -> None:
        """The run's final events (the core's, the same the CSV has): the table and arrays end on them. A long
        run's come as its rows a batch at a time: from its own process before its result (mmrig.child, whose
        result then holds only a tail: nothing more here), from this one through `apply`."""
        if isinstance(events, EventStore) and not events.whole:
            return
        if len(events) <= ROWS_KEPT:
            self.set_rows([Row.of(e) for e in events])
            return
        batch: list[Row] = []
        for e in events:                      # (a long run's read back from its scratch file a chunk at a time)
            batch.append(Row.of(e))
            if len(batch) == CHUNK * 8:
                self.apply(batch)
                batch = []
        self.apply(batch)

    def apply(self, batch: Iterable[Row]) -> None:
        """One batch of snapshots: updates of known rows (of an event that left the table, its arrays only),
        then the new rows appended in chunks, then the oldest rows past ROWS_KEPT removed."""
        lo = hi = None
        n = self.count
        for row in batch:
            if self.first <= row.event < n:
                pos = row.event - self.first
                self.rows[pos] = row
                self._text[pos] = display(row, self.timer_hz)
                self._record(row.event, row)
                lo = pos if lo is None else min(lo, pos)
                hi = pos if hi is None else max(hi, pos)
            elif 0 <= row.event < n:
                self._record(row.event, row)
                self.revision += 1
            elif row.event >= 0:
                self._waiting[row.event] = row
        if lo is not None:
            self.dataChanged.emit(self.index(lo, 0), self.index(hi, NCOLS - 1))
        new: list[Row] = []
        while n + len(new) in self._waiting:
            new.append(self._waiting.pop(n + len(new)))
        if new:
            self._grow(n + len(new))
            for pos, r in enumerate(new, n):
                self._record(pos, r)
        for start in range(0, len(new), CHUNK):
            part = new[start:start + CHUNK]
            first = len(self.rows)
            self.beginInsertRows(QModelIndex(), first, first + len(part) - 1)
            self.rows.extend(part)
            self._text.extend(display(r, self.timer_hz) for r in part)
            self.endInsertRows()
        if len(self.rows) >= ROWS_KEPT + CHUNK:     # (a chunk over: rows leave a chunk at a time, not one a row)
            gone = len(self.rows) - ROWS_KEPT
            self.beginRemoveRows(QModelIndex(), 0, gone - 1)
            del self.rows[:gone]
            del self._text[:gone]
            self.first += gone
            self.endRemoveRows()
        if lo is not None or new:
            self.revision += 1
