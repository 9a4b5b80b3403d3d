"""Small widgets of the main window: the eight event LEDs, the timecode display, the statistics panel,
the load indicator, the live plots."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QFormLayout, QGridLayout, QGroupBox, QLabel, QProgressBar, QSizePolicy, QWidget

from mmanalysis import variance_text
from mmanalysis.latstats import run_summary

from ..event import OUTCOMES
from ..stats import summarize
from .rows import Row

pg.setConfigOptions(antialias=False, background="w", foreground="k")


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


# (label, summary key, format): a format string, or a function (the variance: mmanalysis.variance_text, the
# one way every view of the project shows a variance: us², 4 significant digits, grouped)
STAT_FIELDS = (("n (ok+late)", "n", "{:d}"), ("mean", "mean_us", "{:.3f} us"), ("variance", "variance_us2", variance_text),
               ("min", "min_us", "{:.3f} us"), ("p50", "p50_us", "{:.3f} us"), ("p99", "p99_us", "{:.3f} us"),
               ("p99.9", "p999_us", "{:.3f} us"), ("max", "max_us", "{:.3f} us"))


class StatsPanel(QGroupBox):
    """The run's summary (mmsched.stats.summarize, the same numbers the JSON sidecar carries)."""

    def __init__(self, title: str = "Statistics", parent=None) -> None:
        super().__init__(title, parent)
        form = QFormLayout(self)
        form.setContentsMargins(8, 4, 8, 4)
        form.setVerticalSpacing(1)
        self.labels: dict[str, QLabel] = {}
        for text, key, _ in STAT_FIELDS:
            self.labels[key] = QLabel("-")
            form.addRow(text, self.labels[key])
        self.labels["outcomes"] = QLabel("-")
        form.addRow("ok/late/early/missed/lost", self.labels["outcomes"])
        self.labels["on_time_share"] = QLabel("-")
        form.addRow("on time", self.labels["on_time_share"])
        self.labels["unmeasurable"] = QLabel("-")
        form.addRow("not measurable", self.labels["unmeasurable"])
        self.summary: dict[str, Any] | None = None

    def show_rows(self, rows: Sequence[Row]) -> dict[str, Any]:
        done = [r for r in rows if r.outcome is not None]
        s = summarize(done)   # type: ignore[arg-type] - Row has the fields summarize reads
        self.show_summary(s, pending=len(rows) - len(done))
        return s

    def show_arrays(self, lat: np.ndarray, code: np.ndarray, unmeasurable: int = 0) -> dict[str, Any]:
        """show_rows from the model's per-event arrays (latency or NaN, outcome code or -1): the same numbers
        as summarize over the finished rows, computed in numpy instead of a walk over the row list."""
        counts = np.bincount(code[code >= 0].astype(np.intp), minlength=len(OUTCOMES))
        done = int(counts.sum())
        lat_ok = lat[(code == OUTCOMES.index("ok")) | (code == OUTCOMES.index("late"))]
        lat_ok = lat_ok[~np.isnan(lat_ok)]        # NaN: not measurable (the model keeps no latency for them)
        s = run_summary(lat_ok, {o: int(counts[i]) for i, o in enumerate(OUTCOMES)}, unmeasurable)
        self.show_summary(s, pending=int(code.size) - done)
        return s

    def show_summary(self, s: dict[str, Any], pending: int = 0) -> None:
        self.summary = s
        for _, key, fmt in STAT_FIELDS:
            v = s.get(key)
            self.labels[key].setText("-" if v is None else fmt(v) if callable(fmt) else fmt.format(v))
        o = s.get("outcomes", {})
        text = "/".join(str(o.get(k, 0)) for k in ("ok", "late", "early", "missed", "lost"))
        self.labels["outcomes"].setText(text + (f"  (+{pending} pending)" if pending else ""))
        share = s.get("on_time_share")
        self.labels["on_time_share"].setText("-" if share is None else f"{100 * share:.1f} %")
        self.labels["unmeasurable"].setText(f"{s.get('unmeasurable') or 0} (host stall: left out)")


def clock_text(s: float) -> str:
    """Seconds as m:ss (h:mm:ss from an hour)."""
    s = max(0, int(round(s)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def remaining_s(done: int, total: int | None, elapsed_s: float, first_done_s: float | None,
                duration_s: float | None = None, started_s: float | None = None) -> float | None:
    """Estimated seconds left of a run: by events, the pace of the events ended so far (from the first one's end,
    so the start-up before it does not count as pace); by duration, the generation time left plus the tail.
    None while there is nothing to go on."""
    if duration_s is not None:
        return None if started_s is None else max(0.0, duration_s - (elapsed_s - started_s))
    if not total or first_done_s is None or done < 2:
        return None
    pace = (elapsed_s - first_done_s) / (done - 1)
    return max(0.0, (total - done) * pace)


class RunProgress(QWidget):
    """During a run: events ended / total as a bar, elapsed time and the estimated time left (a label that tests and
    screenshots read); after it, what the run took."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.label = QLabel("no run yet")
        self.label.setObjectName("progress")
        lay.addWidget(self.bar, 0, 0)
        lay.addWidget(self.label, 1, 0)
        self.reset()

    def reset(self) -> None:
        self.total: int | None = None
        self.duration_s: float | None = None
        self.t0: float | None = None
        self.first_done: float | None = None
        self.first_created: float | None = None
        self.done = 0
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setFormat("")

    def start(self, total: int | None, duration_s: float | None, now: float | None = None) -> None:
        self.reset()
        self.total, self.duration_s = total, duration_s
        self.t0 = time.monotonic() if now is None else now
        if total:
            self.bar.setRange(0, total)
        else:
            self.bar.setRange(0, max(1, int(round((duration_s or 1) * 10))))
        self.bar.setFormat("%v / %m events" if total else "%p %")
        self.label.setText("starting: bench, HELLO, calibration...")

    def update_counts(self, done: int, created: int, now: float | None = None) -> str:
        """The run has created `created` events and ended `done` of them; returns the label's text."""
        if self.t0 is None:
            return self.label.text()
        now = time.monotonic() if now is None else now
        elapsed = now - self.t0
        if created and self.first_created is None:
            self.first_created = elapsed
        if done and self.first_done is None:
            self.first_done = elapsed
        self.done = done
        left = remaining_s(done, self.total, elapsed, self.first_done, self.duration_s, self.first_created)
        if self.total:
            self.bar.setValue(min(done, self.total))
            head = f"{done} / {self.total} events"
        else:
            gen = 0.0 if self.first_created is None else elapsed - self.first_created
            self.bar.setValue(min(self.bar.maximum(), int(round(gen * 10))))
            self.bar.setFormat(f"{done} events, %p % of {self.duration_s:g} s")
            head = f"{done} events ended"
        text = (f"{head}, elapsed {clock_text(elapsed)}, "
                + ("remaining: estimating..." if left is None else f"about {clock_text(left)} left"))
        self.label.setText(text)
        return text

    def finish(self, done: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        took = clock_text(now - self.t0) if self.t0 is not None else "?"
        if self.total:
            self.bar.setValue(min(done, self.total))
        else:
            self.bar.setRange(0, 1)
            self.bar.setValue(1)
            self.bar.setFormat(f"{done} events")
        self.label.setText(f"run over: {done} events ended in {took}")
        self.t0 = None


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


class Plots(QWidget):
    """Latency per event over time (log axis option), histogram, CDF.

    Built for live data: the curves are created once and only get setData; the time plot draws markers
    while there are few points and a peak-downsampled, clipped line beyond SCATTER_MAX; the histogram
    keeps its bin edges (1-2-2.5-5 steps) until the data leave them, so its axis stays put; the CDF draws at
    most CDF_POINTS quantiles."""

    COLOURS = ("#1f77b4", "#d62728")
    SCATTER_MAX = 500
    CDF_POINTS = 1000

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.time_plot = pg.PlotWidget(title="latency per event")
        self.time_plot.setLabel("bottom", "event")
        # no units=: pyqtgraph would rescale microseconds with SI prefixes ("kus")
        self.time_plot.setLabel("left", "latency (us)")
        self.time_plot.showGrid(x=True, y=True, alpha=0.3)
        self.hist_plot = pg.PlotWidget(title="histogram")
        self.hist_plot.setLabel("bottom", "latency (us)")
        self.hist_plot.setLabel("left", "events")
        self.cdf_plot = pg.PlotWidget(title="CDF")
        self.cdf_plot.setLabel("bottom", "latency (us)")
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
        self.hist_curves: list[pg.PlotDataItem] = []
        self.cdf_curves: list[pg.PlotDataItem] = []
        self._markers: list[bool] = []
        self._edges: np.ndarray | None = None
        self._flat: dict[tuple[int, str], list[bool]] = {}
        self.log_y = False
        self.set_series(1)

    def set_series(self, n: int) -> None:
        for plot, curves in ((self.time_plot, self.time_curves), (self.hist_plot, self.hist_curves),
                             (self.cdf_plot, self.cdf_curves)):
            for c in curves:
                plot.removeItem(c)
            curves.clear()
        self._markers = []
        self._edges = None
        for plot in (self.time_plot, self.hist_plot):
            plot.enableAutoRange()  # a new run: forget the last run's view (zooming turns it off)
        self.cdf_plot.enableAutoRange(axis="x")
        for i in range(n):
            col = self.COLOURS[i % len(self.COLOURS)]
            tc = self.time_plot.plot([], [], pen=None, symbol="s", symbolSize=3, pxMode=True,
                                     symbolBrush=col, symbolPen=None, skipFiniteCheck=True)
            tc.setDownsampling(auto=True, method="peak")
            tc.setClipToView(True)
            self.time_curves.append(tc)
            self._markers.append(True)
            self.hist_curves.append(self.hist_plot.plot([], [], stepMode="center", fillLevel=0,
                                                        brush=pg.mkBrush(col + "80"), pen=pg.mkPen(col),
                                                        skipFiniteCheck=True))
            self.cdf_curves.append(self.cdf_plot.plot([], [], pen=pg.mkPen(col, width=2), skipFiniteCheck=True))

    def set_log(self, on: bool) -> None:
        self.log_y = on
        self.time_plot.setLogMode(y=on)

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

    def show(self, series: Sequence[Sequence[Row]]) -> None:  # type: ignore[override]
        self.show_arrays([latency_arrays(rows) for rows in series])

    PARTS = ("time", "hist", "cdf")

    def show_arrays(self, arrays: Sequence[tuple[np.ndarray, np.ndarray]], parts: Sequence[str] = PARTS) -> None:
        """One (event index, latency us) pair of arrays per series. `parts`: which of the three plots to
        update (a live view updates them in turn, so one event-loop pass never repaints all three)."""
        if len(arrays) != len(self.time_curves):
            self.set_series(len(arrays))
        if "hist" in parts and any(v.size for _, v in arrays):
            lo = min(float(v.min()) for _, v in arrays if v.size)
            hi = max(float(v.max()) for _, v in arrays if v.size)
            edges = self._bin_edges(lo, hi)
        for i, (x, v) in enumerate(arrays):
            if "time" in parts:
                if self.log_y:
                    keep = v > 0
                    x, vt = x[keep], v[keep]
                else:
                    vt = v
                self._style(i, vt.size)
                self.time_curves[i].setData(x, vt)
            if v.size:
                if "hist" in parts:
                    counts, _ = np.histogram(v, bins=edges)
                    self.hist_curves[i].setData(edges, counts)
                if "cdf" not in parts:
                    continue
                s = np.sort(v)
                p = np.arange(1, s.size + 1) / s.size
                if s.size > self.CDF_POINTS:
                    k = np.unique(np.linspace(0, s.size - 1, self.CDF_POINTS).round().astype(int))
                    s, p = s[k], p[k]
                self.cdf_curves[i].setData(s, p)
            else:
                if "hist" in parts:
                    self.hist_curves[i].setData([], [])
                if "cdf" in parts:
                    self.cdf_curves[i].setData([], [])
        values = [v for _, v in arrays if v.size]
        if values:
            lo, hi = min(float(v.min()) for v in values), max(float(v.max()) for v in values)
            if "time" in parts:
                if self.log_y and lo > 0:
                    self._fit_flat(self.time_plot, "y", np.log10(lo), np.log10(hi))
                elif not self.log_y:
                    self._fit_flat(self.time_plot, "y", lo, hi)
            if "cdf" in parts:
                self._fit_flat(self.cdf_plot, "x", lo, hi)

    def _fit_flat(self, plot: pg.PlotWidget, axis: str, lo: float, hi: float) -> None:
        """pyqtgraph auto-ranges data of zero spread by keeping the last span (a run of identical 1.375 us
        latencies after a run up to 3 ms showed as +-1600 us around it): give such data a span of its own,
        and hand the axis back to auto-range once the data spreads."""
        vb = plot.getViewBox()
        flat = self._flat.setdefault((id(plot), axis), [False])
        if hi - lo < 1e-9:
            pad = max(abs(lo) * 0.1, 0.5)
            (vb.setYRange if axis == "y" else vb.setXRange)(lo - pad, hi + pad, padding=0)
            flat[0] = True
        elif flat[0]:
            vb.enableAutoRange(axis=vb.YAxis if axis == "y" else vb.XAxis)
            flat[0] = False
