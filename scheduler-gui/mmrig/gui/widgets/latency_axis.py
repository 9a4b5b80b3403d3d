"""Latencies on an axis: tick labels with their unit, labels that never run together, when to go log."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

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


def log_label(exponent: float, scale: float) -> str:
    """The label of a log axis's tick at 10^exponent (us, times `scale`); none past any float (a view range an
    auto-range ran out to while a run's first latencies came in)."""
    try:
        return latency_tick(10.0 ** exponent * scale)
    except OverflowError:
        return ""


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
            return [log_label(float(v), scale) for v in values]
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


def plot_widget(title: str, latency_axis: str) -> pg.PlotWidget:
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
