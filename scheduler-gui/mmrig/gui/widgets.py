"""Small widgets of the main window: the eight event LEDs, the timecode display, the statistics panel,
the load indicator, the live plots."""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (QButtonGroup, QFormLayout, QGridLayout, QGroupBox, QLabel, QProgressBar, QRadioButton,
                               QSizePolicy, QWidget)

from mmanalysis import variance_text
from mmanalysis.latstats import run_summary

from mmsched.event import OUTCOMES
from mmsched.stats import summarize
from mmrig.gui.rows import Row

pg.setConfigOptions(antialias=False, background="w", foreground="k")


def radio_pair(owner: QWidget, first: str, second: str) -> tuple[QRadioButton, QRadioButton, QButtonGroup]:
    """Two exclusive radio buttons, the first checked, and the group that keeps them exclusive (owned by OWNER)."""
    a, b = QRadioButton(first), QRadioButton(second)
    a.setChecked(True)
    group = QButtonGroup(owner)
    group.addButton(a)
    group.addButton(b)
    return a, b, group


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
        self.bar.setFixedWidth(190)
        self.label = QLabel("no run yet")
        self.label.setObjectName("progress")
        lay.addWidget(self.bar, 0, 0)
        lay.addWidget(self.label, 0, 1)
        lay.setColumnStretch(1, 1)
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


WARMUP_WINDOW = 40     # events: a start-up stall is looked for among a run's first events only


def warmup_until(event: np.ndarray, lat_us: np.ndarray, sent_s: np.ndarray, tick_us: float,
                 window: int = WARMUP_WINDOW) -> int | None:
    """The start-up artefact of a run, or None: events with an index below the returned one are its warm-up.

    Arrays: the measured events in event order. The artefact (issue 21): the PC's firing path stalled for more
    than a tick while the run was starting (the GUI and the run's process start up together), so an event of
    its first WARMUP_WINDOW ended more than a whole tick late, and the events that waited behind the stall were
    then sent back to back (less than a quarter tick apart), each a tick less late than the one before
    (295, 236, 177, 118 ms). Warm-up: every event up to the last one of that backlog. A run without such a stall
    has none; a stall after the first WARMUP_WINDOW events is the PC's behaviour and is never marked."""
    if not event.size:
        return None
    early = event < event[0] + window
    late = np.flatnonzero(early & (lat_us > tick_us))
    if not late.size:
        return None
    k = int(late[-1])
    while k + 1 < event.size and np.isfinite(sent_s[k + 1]) and np.isfinite(sent_s[k]) \
            and 0 <= sent_s[k + 1] - sent_s[k] < tick_us / 4e6:
        k += 1
    return int(event[k]) + 1


def rows_warmup(rows: Sequence[Row], tick_us: float) -> int | None:
    """warmup_until over rows (an opened run's, a compared run's)."""
    m = [r for r in rows if r.latency_us is not None and r.outcome in ("ok", "late") and r.measurable]
    m.sort(key=lambda r: r.event)
    return warmup_until(np.array([r.event for r in m], dtype=float), np.array([r.latency_us for r in m], dtype=float),
                        np.array([np.nan if r.sent_s is None else r.sent_s for r in m], dtype=float), tick_us)


def _nice_step(span: float) -> float:
    """A 1-2-2.5-5 step of at least span / 40 (the histogram's bin width)."""
    raw = max(span, 1e-9) / 40
    mag = 10 ** np.floor(np.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return float(m * mag)
    return float(10 * mag)


LOG_RATIO = 100.0      # automatic axes: log when the largest latency is this many times the smallest (2 decades)


def spans_decades(lo: float, hi: float) -> bool:
    return lo > 0 and hi / lo >= LOG_RATIO


def _unit(us: float) -> tuple[str, float]:
    a = abs(us)
    return ("s", 1e6) if a >= 1e6 else ("ms", 1e3) if a >= 1e3 else ("us", 1.0)


def latency_tick(us: float) -> str:
    """One latency on a log axis, with its unit: 1 us, 20 us, 1 ms, 300 ms, 2 s."""
    if us <= 0:
        return "0"
    unit, div = _unit(us)
    return f"{us / div:.3g} {unit}"


def latency_ticks(values: Sequence[float], spacing_us: float) -> list[str]:
    """Latencies on a linear axis: one unit for the whole axis (the largest value's), as many decimals as
    the spacing needs: 0, 100 ms, 200 ms (never 100000200000)."""
    if not len(values):
        return []
    unit, div = _unit(max(abs(v) for v in values))
    step = abs(spacing_us) / div
    places = max(0, int(np.ceil(-np.log10(step)))) if step > 0 else 0
    return ["0" if abs(v) < 1e-12 * max(1.0, div) else f"{v / div:.{places}f} {unit}" for v in values]


class LatencyAxis(pg.AxisItem):
    """An axis of latencies (us in the data): labels carry their unit (us, ms, s) and no two labels ever
    touch. pyqtgraph draws a level's labels without checking them against each other, so on a narrow plot
    "100000" and "200000" ran together: here a label that would come within GAP_PX of one already placed
    (major ticks first) is left out. `drawn` keeps the last drawn labels (rect, text) for tests."""

    GAP_PX = 6

    def __init__(self, orientation: str, **kw: Any) -> None:
        super().__init__(orientation, **kw)
        self.drawn: list[tuple[QRectF, str]] = []

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph
        if self.logMode:
            return [latency_tick(10.0 ** float(v) * scale) for v in values]
        return latency_ticks([float(v) * scale for v in values], float(spacing) * scale)

    def generateDrawSpecs(self, p):  # noqa: N802 - pyqtgraph
        specs = super().generateDrawSpecs(p)
        if not specs:
            return specs
        axis_spec, tick_specs, text_specs = specs
        horizontal = self.orientation in ("top", "bottom")
        g = self.GAP_PX / 2
        kept, taken = [], []
        for rect, flags, text in text_specs:
            grown = rect.adjusted(-g, 0, g, 0) if horizontal else rect.adjusted(0, -g, 0, g)
            if any(grown.intersects(t) for t in taken):
                continue
            taken.append(grown)
            kept.append((rect, flags, text))
        self.drawn = [(QRectF(r), t) for r, _, t in kept]
        return axis_spec, tick_specs, kept


def _plot(title: str, latency_axis: str) -> pg.PlotWidget:
    w = pg.PlotWidget(title=title, axisItems={latency_axis: LatencyAxis(latency_axis)})
    # a title never widens its plot (pyqtgraph makes the title's width the plot's minimum: a long one pushed the
    # plot past the window's edge, cutting its axis); a title wider than the plot is cut at the plot's edge
    label = w.getPlotItem().titleLabel
    keep = label.updateMin

    def update_min() -> None:
        keep()
        label.setMinimumWidth(0)
    label.updateMin = update_min
    return w


AXIS_MODES = ("auto", "log", "linear")


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
        self.time_plot = _plot(self.TIME_TITLE, "left")
        self.time_plot.setLabel("bottom", "event")
        # no units=: pyqtgraph would rescale microseconds with SI prefixes ("kus"); the ticks carry the unit
        self.time_plot.setLabel("left", "latency")
        self.time_plot.showGrid(x=True, y=True, alpha=0.3)
        self.hist_plot = _plot("histogram", "bottom")
        self.hist_plot.setLabel("bottom", "latency")
        self.hist_plot.setLabel("left", "events")
        self.cdf_plot = _plot("CDF", "bottom")
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
        self.warm_band = pg.LinearRegionItem(values=(0, 0), movable=False, brush=pg.mkBrush(0, 0, 0, 22),
                                             pen=pg.mkPen(None))
        self.warm_band.setZValue(-10)
        self.warm_band.hide()
        self.time_plot.addItem(self.warm_band, ignoreBounds=True)
        self.references: list[tuple[str, float, str]] = []
        self._ref_items: list[tuple[pg.PlotWidget, str, Any, float]] = []
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
        self.warm_band.hide()
        self.time_plot.setTitle(self.TIME_TITLE)
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
            warm = pg.PlotDataItem([], [], pen=None, symbol="o", symbolSize=5, pxMode=True,
                                   symbolBrush=self.WARMUP_COLOUR, symbolPen=None, skipFiniteCheck=True)
            self.time_plot.addItem(warm, ignoreBounds=True)     # out of the axis range
            self.warm_curves.append(warm)
            self._markers.append(True)
            self.hist_curves.append(self.hist_plot.plot([], [], stepMode="center", fillLevel=0,
                                                        brush=pg.mkBrush(col + "80"), pen=pg.mkPen(col),
                                                        skipFiniteCheck=True))
            self.cdf_curves.append(self.cdf_plot.plot([], [], pen=pg.mkPen(col, width=2), skipFiniteCheck=True))

    def set_log(self, on: bool | None) -> None:
        """True: log latency axes; False: linear; None: automatic (log when the data span decades)."""
        self.set_axis_mode("auto" if on is None else "log" if on else "linear")

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

    def set_references(self, refs: Sequence[tuple[str, float, str]]) -> None:
        """Reference latencies (label, us, colour), e.g. the paper's means: a dashed line on each plot (across
        the time plot, up the histogram and the CDF), inside the axes' ranges."""
        for plot, _, item, _ in self._ref_items:
            plot.removeItem(item)
        self._ref_items = []
        self.references = sorted(((t, float(us), c) for t, us, c in refs if us and us > 0), key=lambda r: r[1])
        for k, (text, us, colour) in enumerate(self.references):
            pen = pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine)
            # labels inside the plot: above a horizontal line at its right end; beside a vertical one, on its left
            # for the largest (right) reference, so it is not cut off at the plot's edge
            side = 1 if k == len(self.references) - 1 and len(self.references) > 1 else 0
            for plot, angle in ((self.time_plot, 0), (self.hist_plot, 90), (self.cdf_plot, 90)):
                line = pg.InfiniteLine(angle=angle, pen=pen, movable=False,
                                       label=text if plot is not self.hist_plot else None,
                                       labelOpts={"color": colour, "position": 0.97 if angle == 0 else 0.15 + 0.5 * k,
                                                  "anchors": [(1, 1), (1, 1)] if angle == 0 else [(side, 0), (side, 0)]})
                plot.addItem(line, ignoreBounds=True)
                self._ref_items.append((plot, "line", line, us))
                # an invisible point at the reference keeps it inside the auto range
                pt = pg.PlotDataItem([0], [0], pen=None, symbol="o", symbolSize=1, symbolBrush=(0, 0, 0, 0),
                                     symbolPen=None)
                plot.addItem(pt)
                self._ref_items.append((plot, "point", pt, us))
        self._place_references()

    def _place_references(self) -> None:
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
        main, warm = [], []
        for (x, v), cut in zip(arrays, self.warmup):
            if cut is None:
                main.append((x, v))
                warm.append((x[:0], v[:0]))
            else:
                w = x < cut
                main.append((x[~w], v[~w]))
                warm.append((x[w], v[w]))
        values = [v for _, v in main if v.size]
        refs = [us for _, us, _ in self.references]
        if values or refs:
            lo = min([float(v.min()) for v in values] + refs)
            hi = max([float(v.max()) for v in values] + refs)
        else:
            lo = hi = 0.0
        if self.axis_mode == "auto":
            self._apply_log(spans_decades(lo, hi))
        elif not getattr(self, "_log_applied", False):
            self._apply_log(self.axis_mode == "log")
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
        left_out = sum(w.size for _, w in warm)
        if "hist" in parts:
            self.hist_plot.setTitle("histogram" + (f" (−{left_out} warm-up)" if left_out else ""), size="8pt")
        if "cdf" in parts:
            self.cdf_plot.setTitle("CDF" + (f" (−{left_out} warm-up)" if left_out else ""), size="8pt")

    def _show_warmup(self, warm: list[tuple[np.ndarray, np.ndarray]]) -> None:
        cuts = [c for c in self.warmup if c is not None]
        n = sum(w.size for _, w in warm)
        if not cuts or not n:
            self.warm_band.hide()
            self.time_plot.setTitle(self.TIME_TITLE)
            return
        end = max(cuts)
        self.warm_band.setRegion((-0.5, end - 0.5))
        self.warm_band.show()
        worst = max(float(w.max()) for _, w in warm if w.size)
        # short: the plot is ~380 px wide in the main window, and a title wider than that widens the plot
        self.time_plot.setTitle(f"{self.TIME_TITLE} <span style='color:#555'>(warm-up: first {end} events, "
                                f"to {latency_tick(worst)})</span>", size="9pt")

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
