"""The live latency plots: latency per event, histogram, CDF."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QGridLayout, QWidget

from mmrig.gui.rows import Row
from mmrig.gui.widgets.latency_axis import AXIS_MODES, latency_tick, plot_widget, spans_decades
from mmrig.gui.widgets.warmup import rows_warmup, split_at_warmup, warmup_count


def latency_arrays(rows: Sequence[Row]) -> tuple[np.ndarray, np.ndarray]:
    """(event index, latency us) of the rows with a latency (ok and late; early rows have none)."""
    pts = [(r.event, r.latency_us) for r in rows
           if r.latency_us is not None and r.outcome in ("ok", "late") and r.measurable]
    if not pts:
        return np.empty(0), np.empty(0)
    a = np.asarray(pts, dtype=float)
    return a[:, 0], a[:, 1]


def _nice_step(span: float) -> float:
    """A 1-2-2.5-5 step of at least span / 40 (the histogram's bin width)."""
    raw = max(span, 1e-9) / 40
    mag = 10 ** np.floor(np.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return float(m * mag)
    return float(10 * mag)


@dataclass(frozen=True)
class Reference:
    """A reference latency drawn across the plots (e.g. the paper's mean of an experiment): `label` the whole
    sentence, on the line's tooltip; `tick` its name at the axis edge (the axis says the figure); `short` the
    shortest name, for the small CDF's top axis, where a longer label near the edge is dropped by the axis."""

    label: str
    us: float
    colour: str
    tick: str
    short: str


class Plots(QWidget):
    """Latency per event over time, histogram, CDF.

    Latency axes: "auto" (the default) goes log when the data (and the reference lines) span two decades or
    more, linear otherwise; "log" and "linear" force it (View > Latency axis). Labels carry their unit and
    never run together (LatencyAxis). A run's start-up stall (warmup_until) is drawn in grey on a shaded band,
    named in the time plot's title, and kept out of the axes' ranges, the histogram and the CDF. Reference
    lines (the paper's means: set_references) are dashed, labelled, and inside the ranges.

    Built for live data: the curves are created once and only get setData; the time plot draws markers
    while there are few points and a peak-downsampled, clipped line beyond SCATTER_MAX; the histogram
    keeps its bin edges (1-2-2.5-5 steps) until the data leave them, so its axis stays put; the CDF draws at
    most CDF_POINTS quantiles."""

    COLOURS = ("#1f77b4", "#d62728")
    WARMUP_COLOUR = "#9a9a9a"
    SCATTER_MAX = 500
    CDF_POINTS = 1000
    TIME_TITLE = "latency per event"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.time_plot = plot_widget(self.TIME_TITLE, "left")
        self.time_plot.setLabel("bottom", "event")
        # no units=: pyqtgraph would rescale microseconds with SI prefixes ("kus"); the ticks carry the unit
        self.time_plot.setLabel("left", "latency")
        self.time_plot.showGrid(x=True, y=True, alpha=0.3)
        self.hist_plot = plot_widget("histogram", "bottom")
        self.hist_plot.setLabel("bottom", "latency")
        self.hist_plot.setLabel("left", "events")
        self.cdf_plot = plot_widget("CDF", "bottom")
        self.cdf_plot.setLabel("bottom", "latency")
        self.cdf_plot.setYRange(0, 1)
        self.cdf_plot.showGrid(x=True, y=True, alpha=0.3)
        for w in (self.time_plot, self.hist_plot, self.cdf_plot):
            w.setMinimumHeight(140)
        lay.addWidget(self.time_plot, 0, 0, 1, 2)
        lay.addWidget(self.hist_plot, 1, 0)
        lay.addWidget(self.cdf_plot, 1, 1)
        lay.setRowStretch(0, 3)
        lay.setRowStretch(1, 2)
        self.time_curves: list[pg.PlotDataItem] = []
        self.warm_curves: list[pg.PlotDataItem] = []
        self.hist_curves: list[pg.PlotDataItem] = []
        self.cdf_curves: list[pg.PlotDataItem] = []
        self._markers: list[bool] = []
        self._edges: np.ndarray | None = None
        self._flat: dict[tuple[int, str], list[bool]] = {}
        self.axis_mode = "auto"
        self.log_y = False                  # the latency axes are log now (forced, or auto over these data)
        self.warmup: list[int | None] = []  # per series: events below this index are its warm-up
        self.warmup_events = 0              # measured events in the warm-ups (warmup.warmup_count)
        self.warm_band = pg.LinearRegionItem(values=(0, 0), movable=False, brush=pg.mkBrush(0, 0, 0, 22),
                                             pen=pg.mkPen(None))
        self.warm_band.setZValue(-10)
        self.warm_band.hide()
        self.time_plot.addItem(self.warm_band, ignoreBounds=True)
        self.references: list[Reference] = []
        self._ref_items: list[tuple[pg.PlotWidget, str, Any, float]] = []
        self._title_forms: list[str] = []       # the time plot's title, longest first (_fit_title)
        self._title_shown: str | None = None
        self.time_plot.installEventFilter(self)
        self.set_series(1)

    # ---- series, axis mode, references ---------------------------------------------------------------------
    def set_series(self, n: int) -> None:
        for plot, curves in ((self.time_plot, self.time_curves), (self.time_plot, self.warm_curves),
                             (self.hist_plot, self.hist_curves), (self.cdf_plot, self.cdf_curves)):
            for c in curves:
                plot.removeItem(c)
            curves.clear()
        self._markers = []
        self._edges = None
        self.warmup = [None] * n
        self.warmup_events = 0
        self.warm_band.hide()
        self._plain_title()
        self._empty_axes()          # a new run: forget the last run's view (its ranges, a zoom)
        for i in range(n):
            col = self.COLOURS[i % len(self.COLOURS)]
            tc = self.time_plot.plot([], [], pen=None, symbol="s", symbolSize=3, pxMode=True,
                                     symbolBrush=col, symbolPen=None, skipFiniteCheck=True)
            tc.setDownsampling(auto=True, method="peak")
            tc.setClipToView(True)
            self.time_curves.append(tc)
            warm = pg.PlotDataItem([], [], pen=None, symbol="o", symbolSize=5, pxMode=True,
                                   symbolBrush=self.WARMUP_COLOUR, symbolPen=None, skipFiniteCheck=True)
            self.time_plot.addItem(warm, ignoreBounds=True)     # out of the axis range
            self.warm_curves.append(warm)
            self._markers.append(True)
            self.hist_curves.append(self.hist_plot.plot([], [], stepMode="center", fillLevel=0,
                                                        brush=pg.mkBrush(col + "80"), pen=pg.mkPen(col),
                                                        skipFiniteCheck=True))
            self.cdf_curves.append(self.cdf_plot.plot([], [], pen=pg.mkPen(col, width=2), skipFiniteCheck=True))

    def set_axis_mode(self, mode: str) -> None:
        if mode not in AXIS_MODES:
            raise ValueError(f"axis mode {mode!r}: one of {', '.join(AXIS_MODES)}")
        self.axis_mode = mode
        if mode != "auto":
            self._apply_log(mode == "log")

    def _apply_log(self, on: bool) -> None:
        if on == self.log_y and getattr(self, "_log_applied", False):
            return
        self._log_applied = True
        self.log_y = on
        self._edges = None
        self.time_plot.setLogMode(y=on)
        self.hist_plot.setLogMode(x=on)
        self.cdf_plot.setLogMode(x=on)
        for plot in (self.time_plot, self.hist_plot, self.cdf_plot):
            plot.enableAutoRange()
            self._flat.pop((id(plot), "y" if plot is self.time_plot else "x"), None)
        self.cdf_plot.setYRange(0, 1)
        self._place_references()

    def set_references(self, refs: Sequence[Reference]) -> None:
        """Reference latencies, e.g. the paper's means: a dashed line on each plot (across the time plot, up the
        histogram and the CDF), inside the axes' ranges."""
        for plot, _, item, _ in self._ref_items:
            plot.removeItem(item)
        self._ref_items = []
        self.references = sorted((r for r in refs if r.us and r.us > 0), key=lambda r: r.us)
        for ref in self.references:
            us = float(ref.us)
            pen = pg.mkPen(ref.colour, width=1.5, style=Qt.PenStyle.DashLine)
            # no label inside the plot (it lay across the runs' points): the label is a tick at the axis edge
            # (_place_references), the time plot's right axis and the CDF's top one
            for plot, angle in ((self.time_plot, 0), (self.hist_plot, 90), (self.cdf_plot, 90)):
                line = pg.InfiniteLine(angle=angle, pen=pen, movable=False)
                line.setToolTip(ref.label)
                plot.addItem(line, ignoreBounds=True)
                self._ref_items.append((plot, "line", line, us))
                # an invisible point at the reference keeps it inside the auto range
                pt = pg.PlotDataItem([0], [0], pen=None, symbol="o", symbolSize=1, symbolBrush=(0, 0, 0, 0),
                                     symbolPen=None)
                plot.addItem(pt)
                self._ref_items.append((plot, "point", pt, us))
        self._place_references()

    def _place_references(self) -> None:
        # the labels: ticks of an axis of their own at the plot's edge, at the lines' positions (view coordinates:
        # log10 of the latency on a log axis)
        for plot, side in ((self.time_plot, "right"), (self.cdf_plot, "top")):
            if not self.references:
                plot.hideAxis(side)
                continue
            axis = plot.getAxis(side)
            axis.setTicks([[(float(np.log10(r.us)) if self.log_y else r.us, r.short if side == "top" else r.tick)
                            for r in self.references], []])
            axis.setTextPen(pg.mkPen(self.references[0].colour))
            axis.setStyle(tickLength=5)
            plot.showAxis(side)
        for plot, kind, item, us in self._ref_items:
            pos = us          # setLogMode transforms the data items, not an InfiniteLine's position
            if kind == "line":
                item.setPos(float(np.log10(us)) if self.log_y else us)
            elif plot is self.time_plot:
                x0 = self.time_curves[0].xData if self.time_curves and self.time_curves[0].xData is not None else None
                item.setData([float(x0[0]) if x0 is not None and len(x0) else 0.0], [pos])
            elif plot is self.cdf_plot:
                item.setData([pos], [0.5])
            else:
                item.setData([pos], [0.0])

    # ---- drawing -------------------------------------------------------------------------------------------
    def _style(self, i: int, npts: int) -> None:
        """Markers for a few points, a line beyond SCATTER_MAX (switched only when crossing it)."""
        markers = npts <= self.SCATTER_MAX
        if markers == self._markers[i]:
            return
        col = self.COLOURS[i % len(self.COLOURS)]
        c = self.time_curves[i]
        if markers:
            c.setPen(None)
            c.setSymbol("s")
        else:
            c.setSymbol(None)
            c.setPen(pg.mkPen(col, width=1))
        self._markers[i] = markers

    def _bin_edges(self, lo: float, hi: float) -> np.ndarray:
        if self.log_y:
            # 10 bins per decade (20 below one decade of spread), on round log steps
            per = 10 if hi / lo >= 10 else 20
            a, b = np.floor(np.log10(lo) * per), np.ceil(np.log10(hi) * per)
            if b <= a:
                b = a + 1
            return 10.0 ** (np.arange(a, b + 1) / per)
        e = self._edges
        if e is not None and e[0] <= lo and hi < e[-1] and (e[-1] - e[0]) <= 4 * max(hi - lo, 1e-6):
            return e
        if hi - lo < 1e-6:
            lo, hi = lo - 0.5, hi + 0.5
        step = _nice_step(hi - lo)
        first = np.floor(lo / step) * step
        n = int(np.floor((hi - first) / step)) + 1
        self._edges = first + step * np.arange(n + 1)
        return self._edges

    def show(self, series: Sequence[Sequence[Row]], tick_us: float | None = None) -> None:  # type: ignore[override]
        """Rows per series (an opened or compared run); tick_us: look for a start-up stall (warmup_until)."""
        warm = [rows_warmup(rows, tick_us) if tick_us else None for rows in series]
        self.show_arrays([latency_arrays(rows) for rows in series], warmup=warm)

    PARTS = ("time", "hist", "cdf")

    def show_arrays(self, arrays: Sequence[tuple[np.ndarray, np.ndarray]], parts: Sequence[str] = PARTS,
                    warmup: Sequence[int | None] | None = None) -> None:
        """One (event index, latency us) pair of arrays per series. `parts`: which of the three plots to
        update (a live view updates them in turn, so one event-loop pass never repaints all three). `warmup`:
        per series, the event index its warm-up ends before (None: none)."""
        if len(arrays) != len(self.time_curves):
            self.set_series(len(arrays))
        self.warmup = list(warmup) if warmup is not None else [None] * len(arrays)
        main, warm = split_at_warmup(arrays, self.warmup)
        self.warmup_events = warmup_count(warm)     # the one figure both titles show
        values = [v for _, v in main if v.size]
        refs = [float(r.us) for r in self.references]
        if values or refs:
            lo = min([float(v.min()) for v in values] + refs)
            hi = max([float(v.max()) for v in values] + refs)
        else:
            lo = hi = 0.0
        if self.axis_mode == "auto":
            self._apply_log(spans_decades(lo, hi))
        elif not getattr(self, "_log_applied", False):
            self._apply_log(self.axis_mode == "log")
        if not values and not refs and not any(wv.size for _, wv in warm):
            self._empty_axes()
        if "hist" in parts and values:
            vlo, vhi = min(float(v.min()) for v in values), max(float(v.max()) for v in values)
            if self.log_y:
                vlo = min((float(v[v > 0].min()) for v in values if (v > 0).any()), default=1.0)
            edges = self._bin_edges(vlo, vhi)
        for i, ((x, v), (wx, wv)) in enumerate(zip(main, warm)):
            if "time" in parts:
                if self.log_y:
                    keep, wkeep = v > 0, wv > 0
                    x, vt, wx, wv = x[keep], v[keep], wx[wkeep], wv[wkeep]
                else:
                    vt = v
                self._style(i, vt.size)
                self.time_curves[i].setData(x, vt)
                self.warm_curves[i].setData(wx, wv)
            if v.size:
                if "hist" in parts:
                    counts, _ = np.histogram(v, bins=edges)
                    self.hist_curves[i].setData(edges, counts)
                if "cdf" not in parts:
                    continue
                s = np.sort(v[v > 0] if self.log_y else v)
                p = np.arange(1, s.size + 1) / max(s.size, 1)
                if s.size > self.CDF_POINTS:
                    k = np.unique(np.linspace(0, s.size - 1, self.CDF_POINTS).round().astype(int))
                    s, p = s[k], p[k]
                self.cdf_curves[i].setData(s, p)
            else:
                if "hist" in parts:
                    self.hist_curves[i].setData([], [])
                if "cdf" in parts:
                    self.cdf_curves[i].setData([], [])
        if "time" in parts:
            self._show_warmup(warm)
            self._place_references()
        if values or refs:
            if "time" in parts:
                if self.log_y and lo > 0:
                    self._fit_flat(self.time_plot, "y", np.log10(lo), np.log10(hi))
                elif not self.log_y:
                    self._fit_flat(self.time_plot, "y", lo, hi)
            if "cdf" in parts:
                if self.log_y and lo > 0:
                    self._fit_flat(self.cdf_plot, "x", np.log10(lo), np.log10(hi))
                elif not self.log_y:
                    self._fit_flat(self.cdf_plot, "x", lo, hi)
        n = self.warmup_events
        if "hist" in parts:
            self.hist_plot.setTitle("histogram" + (f" (−{n} warm-up)" if n else ""), size="8pt")
        if "cdf" in parts:
            self.cdf_plot.setTitle("CDF" + (f" (−{n} warm-up)" if n else ""), size="8pt")

    def _show_warmup(self, warm: list[tuple[np.ndarray, np.ndarray]]) -> None:
        cuts = [c for c in self.warmup if c is not None]
        n = self.warmup_events
        if not cuts or not n:
            self.warm_band.hide()
            self._plain_title()
            return
        end = max(cuts)
        self.warm_band.setRegion((-0.5, end - 0.5))
        self.warm_band.show()
        worst = max(float(w.max()) for _, w in warm if w.size)
        said = f"warm-up: {n} events, to {latency_tick(worst)}"
        grey = "<span style='color:#555'>{}</span>"
        self._title_forms = [f"{self.TIME_TITLE} " + grey.format(f"({said})"), "latency " + grey.format(f"({said})"),
                             grey.format(said), grey.format(f"warm-up: {n}")]
        self.time_plot.setToolTip(f"{self.TIME_TITLE}; {said}: grey, on the shaded band, left out of the axes, "
                                  "the histogram and the CDF")
        self._fit_title()

    TITLE_SIZE = "9pt"

    def _fit_title(self) -> None:
        """The time plot's title: the longest of its forms that fits above the plot. A title wider than the plot
        widens the plot past its widget, which cuts the title's end and the plot's right edge off ("... to 93.7 m"
        in a main window 380 px wide); the whole sentence is the plot's tooltip."""
        forms = self._title_forms
        if not forms:
            return
        font = QFont(self.time_plot.font())
        font.setPointSizeF(float(self.TITLE_SIZE.rstrip("pt")))
        fm = QFontMetrics(font)
        # the room beside the left axis, less the title's text margins (QTextDocument's 4 px each side) and a few px
        room = self.time_plot.width() - self.time_plot.getPlotItem().getAxis("left").width() - 16
        plain = [re.sub(r"<[^>]+>", "", f) for f in forms]
        best = next((f for f, t in zip(forms, plain) if fm.horizontalAdvance(t) <= room), forms[-1])
        if best != self._title_shown:
            self._title_shown = best
            self.time_plot.setTitle(best, size=self.TITLE_SIZE)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt
        if obj is self.time_plot and event.type() == QEvent.Type.Resize:
            self._fit_title()                      # a narrower plot may need a shorter title
        return False

    def _empty_axes(self) -> None:
        """Axes with nothing to show: a range of their own, not the last run's (pyqtgraph's auto-range keeps the
        last range when there are no data), auto-range on again for the data to come."""
        for plot, y in ((self.time_plot, (0.0, 1.0)), (self.hist_plot, (0.0, 1.0)), (self.cdf_plot, (0.0, 1.0))):
            vb = plot.getViewBox()
            vb.setRange(xRange=(0.0, 1.0), yRange=y, padding=0)
            if plot is self.cdf_plot:
                vb.enableAutoRange(axis=vb.XAxis)      # the CDF's y stays 0..1
            else:
                vb.enableAutoRange()
        self._flat.clear()

    def _plain_title(self) -> None:
        self._title_forms = []
        self._title_shown = None
        self.time_plot.setToolTip("")
        self.time_plot.setTitle(self.TIME_TITLE)

    def _fit_flat(self, plot: pg.PlotWidget, axis: str, lo: float, hi: float) -> None:
        """pyqtgraph auto-ranges data of zero spread by keeping the last span (a run of identical 1.375 us
        latencies after a run up to 3 ms showed as +-1600 us around it): give such data a span of its own,
        and hand the axis back to auto-range once the data spreads."""
        vb = plot.getViewBox()
        flat = self._flat.setdefault((id(plot), axis), [False])
        if hi - lo < 1e-9:
            pad = max(abs(lo) * 0.1, 0.5) if not self.log_y else 0.1
            (vb.setYRange if axis == "y" else vb.setXRange)(lo - pad, hi + pad, padding=0)
            flat[0] = True
        elif flat[0]:
            vb.enableAutoRange(axis=vb.YAxis if axis == "y" else vb.XAxis)
            flat[0] = False
