"""The one signal path from the core to the GUI. `EventFeed` is the Runner's observer: it is called in
the run's threads, keeps snapshots in a locked buffer and emits them as batches (at most every
`flush_s`, and on every TIMECODE, so ~14 batches/s at one frame per tick); Qt queues the signals to
the GUI thread. A run in its own process (mmrig.child) takes the snapshots there and batches them
itself: the worker hands each batch to `deliver`. The benchmark feeds synthetic events through the same
object."""

from __future__ import annotations

import threading
import time
from typing import Any

from PySide6.QtCore import QObject, Signal

from mmsched.model.event import Event
from mmrig.gui.rows import Row


LIT_KEPT = 4096      # lit events remembered one by one: far more than a run has in flight


class EventFeed(QObject):
    batch = Signal(object)        # list[Row], in order of change (a row may appear more than once)
    timecode = Signal(int)        # extended timecode
    fired = Signal(int)           # event id whose pulse the profiler captured (the LEDs)
    phase = Signal(str)
    tick_fit = Signal(object)     # (TIMECODEs the tick fit has, those it needs): normal mode before it fires

    def __init__(self, flush_s: float = 0.05) -> None:
        super().__init__()
        self.flush_s = flush_s
        self._lock = threading.Lock()
        self._pending: dict[int, Any] = {}
        self._last_flush = time.monotonic()
        # events whose LED has been lit (a run's own process resends rows): the recent ones, and every one below
        # `_lit_below`, which moves up as they grow (a set of every event was 60 bytes an event, 200 MB an hour)
        self._lit: set[int] = set()
        self._lit_below = 0

    def __call__(self, kind: str, obj: Any) -> None:
        if kind == "event":
            ev: Event = obj
            row = Row.of(ev)
            with self._lock:
                self._pending.pop(row.event, None)    # keep the newest snapshot, in change order
                self._pending[row.event] = row
            if row.result_tc is not None and row.outcome in ("ok", "late", "early"):
                self.fired.emit(row.event_id)
            if time.monotonic() - self._last_flush >= self.flush_s:
                self.flush()
        elif kind == "timecode":
            self.timecode.emit(int(obj))
            self.flush()
        elif kind == "phase":
            self.flush()
            self.phase.emit(str(obj))
        elif kind == "tick_fit":
            self.tick_fit.emit(tuple(obj))

    def deliver(self, rows: list[Row]) -> None:
        """A batch of snapshots taken elsewhere (a run in its own process), emitted as they are; an event's
        pulse lights its LED once, when its row first comes with a measured outcome."""
        for row in rows:
            if (row.result_tc is not None and row.outcome in ("ok", "late", "early") and row.event >= self._lit_below
                    and row.event not in self._lit):
                self._lit.add(row.event)
                self.fired.emit(row.event_id)
        if len(self._lit) > 2 * LIT_KEPT:
            self._lit_below = max(self._lit) - LIT_KEPT
            self._lit = {e for e in self._lit if e >= self._lit_below}
        if rows:
            self.batch.emit(rows)

    def flush(self) -> None:
        with self._lock:
            rows = list(self._pending.values())
            self._pending.clear()
            self._last_flush = time.monotonic()
        if rows:
            self.batch.emit(rows)
