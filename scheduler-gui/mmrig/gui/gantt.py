"""The executor's run as a Gantt chart (after the ProfileAnalyzer view of Prisching and Rinner, "Thread-based
analysis of embedded applications"): one row per interrupt vector and per task, a bar per instance, coloured by
category (mmanalysis.exectrace.CATEGORY_OF_*), x in milliseconds of virtual time from the trace's first record, zoom
and pan on x with the mouse (the rows stay put), vertical lines at the timecode edges (the ticks) and a marker per
event edge the executor drove.

Built for minute-long traces (hundreds of thousands of segments): the rows are kept as numpy arrays and
drawn by one item with a handful of batched `drawRects` calls per repaint, never one graphics item per
bar. Zoomed out, where many bars would fall into one pixel, each row is drawn as its occupancy per pixel
column (a bar's height is the share of that pixel's time the row ran; very short bursts keep a minimum
height so a 10 us interrupt stays visible); zoomed in, each bar is drawn as it is (at least a pixel wide).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from mmanalysis import exectrace as et
# the task order, the colours (categories, timecode and event edges), the top row's name and a segment's category
# are the report's Gantt figure's: one definition for both views
from mmanalysis.ganttplot import (CATEGORY_COLOURS, EVENT_COLOUR, PINS, TASK_PRIORITY,  # noqa: F401  (the GUI's API too)
                                  TICK_COLOUR, category_of)

BAR_HEIGHT = 0.72            # of a row's height (1.0)
MIN_SHARE = 0.18             # zoomed out: the least height a pixel column with any activity gets


@dataclass
class Layer:
    """One colour of one row: sorted, non-overlapping bars, in ms from the trace start and in cycles."""

    what: str                    # "isr", "task" or "sleep"
    category: str
    start_ms: np.ndarray
    end_ms: np.ndarray
    start_cycle: np.ndarray
    end_cycle: np.ndarray
    _cum: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return int(self.start_ms.size)

    @property
    def colour(self) -> str:
        return CATEGORY_COLOURS[self.category]

    def busy_before(self, x: np.ndarray) -> np.ndarray:
        """ms this layer ran before each x (a non-decreasing step-and-ramp function): a pixel column's
        occupancy is the difference at its two edges."""
        if self._cum is None:
            self._cum = np.concatenate(([0.0], np.cumsum(self.end_ms - self.start_ms)))
        k = np.searchsorted(self.start_ms, x, side="right")          # bars that began at or before x
        inside = np.where(k > 0, np.clip(x - self.start_ms[np.maximum(k - 1, 0)], 0.0,
                                         (self.end_ms - self.start_ms)[np.maximum(k - 1, 0)]), 0.0)
        return self._cum[np.maximum(k - 1, 0)] * (k > 0) + inside


@dataclass
class Row:
    label: str                   # "isr PCINT2", "task tc", "task idle" (the Perfetto trace's track names)
    kind: str                    # "isr", "task" or "pins"
    name: str
    layers: list[Layer]


@dataclass
class GanttData:
    """A trace made ready to draw: rows top to bottom, and the edges. Pure numpy; no Qt."""

    cpu_hz: int
    start_cycle: int
    end_cycle: int
    rows: list[Row]
    tick_ms: np.ndarray          # timecode edges
    tick_value: np.ndarray       # the port's value after each
    event_ms: np.ndarray         # event strobe rising edges
    event_id: np.ndarray
    segments: int                # timeline segments the rows were built from

    @property
    def total_ms(self) -> float:
        return self.ms(self.end_cycle)

    def ms(self, cycle: float) -> float:
        return (cycle - self.start_cycle) * 1000.0 / self.cpu_hz

    def cycle(self, ms: float) -> int:
        return int(round(self.start_cycle + ms * self.cpu_hz / 1000.0))

    @classmethod
    def from_trace(cls, tr: et.ExecTrace, segments: Sequence[et.Segment] | None = None,
                   task_priority: Sequence[str] = TASK_PRIORITY) -> "GanttData":
        segs = et.timeline(tr) if segments is None else segments
        scale = 1000.0 / tr.cpu_hz

        def layer(what: str, category: str, pairs: list[tuple[int, int]]) -> Layer:
            a = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
            return Layer(what, category, (a[:, 0] - tr.start) * scale, (a[:, 1] - tr.start) * scale,
                         a[:, 0], a[:, 1])

        # interrupts: when each handler ran (under FreeRTOS's port a switch inside one leaves it open while
        # other tasks run, and its tail runs when the interrupted task comes back: exectrace.model)
        by_vector: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for s in segs:
            if s.kind == "isr":
                by_vector[s.name].append((s.start, s.end))
        number = {n: v for v, n in tr.vectors.items()}
        rows = [Row(f"isr {n}", "isr", n, [layer("isr", category_of("isr", n), by_vector[n])])
                for n in sorted(by_vector, key=lambda n: (number.get(n, 1 << 16), n))]
        # tasks: what each ran, without the interrupts inside; sleep goes to the idle row, paler
        by_task: dict[str, list[tuple[int, int]]] = defaultdict(list)
        sleep: list[tuple[int, int]] = []
        for s in segs:
            if s.kind == "task":
                by_task[s.name].append((s.start, s.end))
            elif s.kind == "sleep":
                sleep.append((s.start, s.end))
        rank = {n: i for i, n in enumerate(task_priority)}
        names = sorted((n for n in by_task if n != "idle"), key=lambda n: (n not in rank, rank.get(n, 0), n))
        for n in names:
            rows.append(Row(f"task {n}", "task", n, [layer("task", category_of("task", n), by_task[n])]))
        if "idle" in by_task or sleep:
            idle = [layer("sleep", "sleep", sleep)] if sleep else []
            if "idle" in by_task:
                idle.append(layer("task", "idle", by_task["idle"]))
            rows.append(Row("task idle", "task", "idle", idle))
        ticks = et.timecode_edges(tr)
        events = et.event_edges(tr)
        if ticks or events:
            rows.insert(0, Row(PINS, "pins", PINS, []))
        return cls(tr.cpu_hz, tr.start, tr.end, rows,
                   np.asarray([(c - tr.start) * scale for c, _ in ticks], dtype=float),
                   np.asarray([v for _, v in ticks], dtype=np.int64),
                   np.asarray([(c - tr.start) * scale for c, _ in events], dtype=float),
                   np.asarray([i for _, i in events], dtype=np.int64), len(segs))

    def row_index(self, label: str) -> int:
        for i, r in enumerate(self.rows):
            if r.label == label:
                return i
        raise KeyError(label)


class GanttItem(pg.GraphicsObject):
    """Every bar, tick line and event marker of a GanttData in one item: each repaint picks the bars in
    view (binary search), merges or bins them to the pixel, and draws each colour with one drawRects."""

    def __init__(self, data: GanttData) -> None:
        super().__init__()
        self.data = data
        self._rects = pg.Qt.internals.PrimitiveArray(QRectF, 4)
        self._lines = pg.Qt.internals.PrimitiveArray(QLineF, 4)
        self._brushes = {c: QBrush(QColor(col)) for c, col in CATEGORY_COLOURS.items()}
        self.last_mode = ""          # "exact" or "binned": how the last repaint drew (tests, the status line)
        self.last_rects = 0

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt
        return QRectF(0.0, -0.5, max(self.data.total_ms, 1e-9), len(self.data.rows))

    def _view(self) -> tuple[float, float, float]:
        vr = self.viewRect()
        px = self.pixelWidth()
        if vr is None or not px or not math.isfinite(px):
            return 0.0, self.data.total_ms, max(self.data.total_ms, 1e-9) / 1000
        return max(vr.left(), 0.0), min(vr.right(), self.data.total_ms), px

    def layer_rects(self, row: int, layer: Layer, x0: float, x1: float, px: float) -> np.ndarray:
        """(n, 4) x, y, w, h of what to draw of `layer` in [x0, x1] at `px` ms a pixel."""
        top = row - BAR_HEIGHT / 2
        i0 = int(np.searchsorted(layer.end_ms, x0, side="left"))
        i1 = int(np.searchsorted(layer.start_ms, x1, side="right"))
        n = i1 - i0
        if n <= 0:
            return np.empty((0, 4))
        columns = (x1 - x0) / px
        if n <= max(columns / 2, 1):                  # few bars: each as it is, at least a pixel wide
            s, e = layer.start_ms[i0:i1], layer.end_ms[i0:i1]
            w = np.maximum(e - s, px)
            out = np.empty((n, 4))
            out[:, 0], out[:, 1], out[:, 2], out[:, 3] = s, top, w, BAR_HEIGHT
            self.last_mode = self.last_mode or "exact"
            return out
        # many: occupancy per pixel column
        self.last_mode = "binned"
        nb = int(min(math.ceil(columns), 8192))
        edges = x0 + (x1 - x0) * np.arange(nb + 1) / nb
        occ = np.diff(layer.busy_before(edges)) / ((x1 - x0) / nb)
        keep = np.flatnonzero(occ > 1e-9)
        h = np.clip(np.maximum(occ[keep], MIN_SHARE), 0, 1) * BAR_HEIGHT
        out = np.empty((keep.size, 4))
        out[:, 0] = edges[keep]
        out[:, 2] = (x1 - x0) / nb
        out[:, 1] = top + BAR_HEIGHT - h              # from the row's baseline up
        out[:, 3] = h
        return out

    def paint(self, p, *_args) -> None:
        x0, x1, px = self._view()
        if x1 <= x0:
            return
        p.setPen(Qt.PenStyle.NoPen)
        self.last_mode = ""
        self.last_rects = 0
        for i, row in enumerate(self.data.rows):
            for layer in row.layers:
                r = self.layer_rects(i, layer, x0, x1, px)
                if not r.size:
                    continue
                self._rects.resize(r.shape[0])
                self._rects.ndarray()[:] = r
                p.setBrush(self._brushes[layer.category])
                p.drawRects(*self._rects.drawargs())
                self.last_rects += r.shape[0]
        self._paint_ticks(p, x0, x1, px)

    def _paint_ticks(self, p, x0: float, x1: float, px: float) -> None:
        t = self.data.tick_ms
        i0, i1 = np.searchsorted(t, x0), np.searchsorted(t, x1, side="right")
        xs = t[i0:i1]
        if not xs.size:
            return
        step = max(1, int(math.ceil(xs.size * 6 * px / max(x1 - x0, 1e-12))))   # at least 6 px apart
        xs = xs[::step]
        self._lines.resize(xs.size)
        a = self._lines.ndarray()
        a[:, 0], a[:, 1], a[:, 2], a[:, 3] = xs, -0.5, xs, len(self.data.rows) - 0.5
        pen = QPen(QColor(TICK_COLOUR))
        pen.setCosmetic(True)
        pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.drawLines(*self._lines.drawargs())

    # ---- tooltips ---------------------------------------------------------------------------------------
    def hoverEvent(self, ev) -> None:  # noqa: N802 - pyqtgraph's hover protocol
        if ev.isExit():
            self.setToolTip("")
            return
        pos = ev.pos()
        self.setToolTip(self.describe_at(pos.x(), int(round(pos.y())), self.pixelWidth() or 0.0))

    def describe_at(self, x: float, row: int, px: float = 0.0) -> str:
        """What is at x ms in row `row`: the bar (name, kind, category, start and end as ms and cycle,
        duration), or the nearest edge on the pins row; "" for nothing within 3 pixels."""
        d = self.data
        if not 0 <= row < len(d.rows):
            return ""
        tol = 3 * px
        r = d.rows[row]
        if r.kind == "pins":
            best = ""
            for xs, vals, what in ((d.tick_ms, d.tick_value, "timecode edge: port reads {v}"),
                                   (d.event_ms, d.event_id, "event edge: strobe with id {v}")):
                if xs.size:
                    k = int(np.clip(np.searchsorted(xs, x), 0, xs.size - 1))
                    for j in (k - 1, k):
                        if 0 <= j < xs.size and abs(xs[j] - x) <= tol:
                            best = (what.format(v=int(vals[j])) +
                                    f"\n{xs[j]:.4f} ms (cycle {d.cycle(xs[j])})")
            return best
        for layer in r.layers:
            if not len(layer):
                continue
            k = int(np.searchsorted(layer.start_ms, x, side="right")) - 1
            for j in (k, k + 1):
                if 0 <= j < len(layer) and layer.start_ms[j] - tol <= x <= layer.end_ms[j] + tol:
                    a, b = int(layer.start_cycle[j]), int(layer.end_cycle[j])
                    what = "asleep (in the idle task)" if layer.what == "sleep" else f"{r.label} ({layer.category})"
                    return (f"{what}\nfrom {d.ms(a):.4f} ms to {d.ms(b):.4f} ms\n"
                            f"cycles {a} .. {b}: {b - a} cycles = {(b - a) * 1e6 / d.cpu_hz:.2f} us")
        return ""


class GanttWidget(QWidget):
    """The chart with its tool row (fit, zoom in and out, the visible span) and its legend; a message in
    its place when there is nothing to draw (a run that was not traced, a trace that cannot be read)."""

    rangeChanged = Signal(float, float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        tools = QHBoxLayout()
        self.fit_button = QPushButton("Fit")
        self.fit_button.setToolTip("Show the whole trace (the mouse wheel zooms the time axis, dragging pans it)")
        self.zoom_in_button = QPushButton("Zoom in")
        self.zoom_out_button = QPushButton("Zoom out")
        for b in (self.fit_button, self.zoom_in_button, self.zoom_out_button):
            b.setAutoDefault(False)
            tools.addWidget(b)
        self.span_label = QLabel("")
        tools.addWidget(self.span_label, 1)
        self.legend = QLabel(self._legend_html())
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        tools.addWidget(self.legend)
        lay.addLayout(tools)
        self.stack = QStackedWidget()
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setObjectName("gantt_message")
        self.message.setStyleSheet("background:#fff8e5;color:#4d3800;padding:12px;border:1px solid #e8cf8a;")
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.getViewBox().invertY(True)
        bottom = self.plot.getAxis("bottom")
        bottom.enableAutoSIPrefix(False)
        self.plot.setLabel("bottom", "virtual time from the trace start (ms)")
        self.stack.addWidget(self.plot)
        self.stack.addWidget(self.message)
        lay.addWidget(self.stack, 1)
        self.data: GanttData | None = None
        self.item: GanttItem | None = None
        self.events: pg.ScatterPlotItem | None = None
        self.fit_button.clicked.connect(self.fit)
        self.zoom_in_button.clicked.connect(lambda: self.zoom(0.5))
        self.zoom_out_button.clicked.connect(lambda: self.zoom(2.0))
        self.plot.getViewBox().sigXRangeChanged.connect(self._range_changed)
        self.show_message("No executor trace shown.")

    @staticmethod
    def _legend_html() -> str:
        parts = [f"<span style='color:{c};font-size:14px'>&#9632;</span>&nbsp;{name}"
                 for name, c in CATEGORY_COLOURS.items() if name != "sleep"]
        parts.append(f"<span style='color:{CATEGORY_COLOURS['sleep']};font-size:14px'>&#9632;</span>&nbsp;asleep")
        parts.append(f"<span style='color:{TICK_COLOUR}'>&#8942;</span>&nbsp;tick")
        parts.append(f"<span style='color:{EVENT_COLOUR}'>&#9660;</span>&nbsp;event")
        return "&nbsp;&nbsp;".join(parts)

    # ---- content -------------------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        for b in (self.fit_button, self.zoom_in_button, self.zoom_out_button):
            b.setEnabled(False)
        self.span_label.setText("")

    def message_text(self) -> str | None:
        return self.message.text() if self.stack.currentWidget() is self.message else None

    def set_trace(self, tr: et.ExecTrace, segments: Sequence[et.Segment] | None = None) -> GanttData:
        data = GanttData.from_trace(tr, segments)
        self.set_data(data)
        return data

    def set_data(self, data: GanttData) -> None:
        if not data.rows:
            self.data = None
            self.show_message("The executor trace has no records: nothing ran, or the trace was cut off.")
            return
        self.data = data
        pi = self.plot.getPlotItem()
        if self.item is not None:
            pi.removeItem(self.item)
        if self.events is not None:
            pi.removeItem(self.events)
        self.item = GanttItem(data)
        pi.addItem(self.item)
        self.events = pg.ScatterPlotItem(x=data.event_ms, y=np.zeros(data.event_ms.size), symbol="t", size=9,
                                         pen=None, brush=pg.mkBrush(EVENT_COLOUR), pxMode=True)
        self.events.setToolTip("event edges: the executor's strobe (hover the pins row for each id)")
        pi.addItem(self.events)
        n = len(data.rows)
        left = self.plot.getAxis("left")
        left.setTicks([[(i, r.label) for i, r in enumerate(data.rows)], []])
        left.setStyle(tickLength=0)
        vb = self.plot.getViewBox()
        vb.disableAutoRange()
        total = max(data.total_ms, 1e-6)
        vb.setLimits(xMin=0.0, xMax=total, yMin=-0.6, yMax=n - 0.4, minXRange=min(total, 1e-3),
                     minYRange=n + 0.2, maxYRange=n + 0.2)
        vb.setYRange(-0.6, n - 0.4, padding=0)
        self.stack.setCurrentWidget(self.plot)
        for b in (self.fit_button, self.zoom_in_button, self.zoom_out_button):
            b.setEnabled(True)
        self.fit()

    # ---- navigation ----------------------------------------------------------------------------------
    def row_names(self) -> list[str]:
        return [r.label for r in self.data.rows] if self.data else []

    def bars(self, label: str) -> list[tuple[float, float]]:
        """The bars of a row, every layer, at full resolution: (start ms, end ms), in time order."""
        assert self.data is not None
        row = self.data.rows[self.data.row_index(label)]
        out = [(float(a), float(b)) for layer in row.layers for a, b in zip(layer.start_ms, layer.end_ms)]
        return sorted(out)

    def x_range(self) -> tuple[float, float]:
        a, b = self.plot.getViewBox().viewRange()[0]
        return float(a), float(b)

    def fit(self) -> None:
        if self.data is not None:
            self.plot.getViewBox().setXRange(0.0, max(self.data.total_ms, 1e-6), padding=0)

    def set_x_range(self, a: float, b: float) -> None:
        self.plot.getViewBox().setXRange(a, b, padding=0)

    def zoom(self, factor: float, center: float | None = None) -> None:
        """Scales the visible span by `factor` (< 1 zooms in) around `center` (ms; the span's middle)."""
        a, b = self.x_range()
        c = (a + b) / 2 if center is None else center
        self.set_x_range(c - (c - a) * factor, c + (b - c) * factor)

    def _range_changed(self, _vb, rng) -> None:
        a, b = float(rng[0]), float(rng[1])
        span = b - a
        unit = f"{span:.3f} ms" if span < 10 else f"{span:.1f} ms" if span < 10_000 else f"{span / 1000:.2f} s"
        if self.data is not None:
            self.span_label.setText(f"showing {a:.3f} .. {b:.3f} ms ({unit} of {self.data.total_ms / 1000:.3f} s)")
        self.rangeChanged.emit(a, b)
