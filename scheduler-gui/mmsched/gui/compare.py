"""Two earlier runs side by side: their statistics and their latency plots overlaid (blue: A, red: B), and
their latency CDF per PC load condition on a log time axis (the report's load-cdf: mmanalysis.plots'
load_cdf_data, drawn here with pyqtgraph)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QVBoxLayout

from ..load import condition
from .rows import load_run
from .widgets import Plots, StatsPanel


def load_name(value: object) -> str:
    """The run's load condition (a sidecar from before named loads has true/false: all/idle)."""
    try:
        return condition(value)
    except ValueError:
        return str(value)


def run_csv(path: Path) -> Path:
    """NAME, NAME.csv or NAME.json -> NAME.csv (as rows.load_run takes them)."""
    p = Path(path)
    return p.with_suffix(".csv") if p.suffix in (".csv", ".json") else p.with_name(p.name + ".csv")


class LoadCdf(pg.PlotWidget):
    """Latency CDF per load condition (the runs' measured events pooled per condition; per mode and distance
    when the runs differ in them), log time axis, min and max of each line marked and labelled: a label row
    of its own for each, min labels up from the bottom, max labels down from the top (as plots.load_cdf)."""

    def __init__(self, paths: list[Path], parent=None) -> None:
        super().__init__(parent, title="CDF per PC load condition")
        from mmanalysis import read_runs
        from mmanalysis.plots import LOAD_COLORS, load_cdf_data, us_text

        self.setLogMode(x=True, y=False)
        self.setLabel("bottom", "latency (us, log)")
        self.setLabel("left", "share of events \u2264 x")
        self.setYRange(0, 1.05)
        self.showGrid(x=True, y=True, alpha=0.3)
        self.addLegend(offset=(-10, -10))                   # bottom right: the labels are bottom left, top right
        groups = load_cdf_data(read_runs([run_csv(p) for p in paths]))
        several = len(groups) > 1
        lines = [(f"{cond} ({mode} d={d})" if several else cond, cond, lat)
                 for (mode, d), conds in groups.items() for cond, lat in conds.items()]
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.labels: list[pg.TextItem] = []
        step = min(0.07, 0.44 / max(len(lines), 1))
        min_row = {n: r for r, (n, _, _) in enumerate(sorted(lines, key=lambda t: -t[2][0]))}
        max_row = {n: r for r, (n, _, _) in enumerate(sorted(lines, key=lambda t: t[2][-1]))}
        for i, (name, cond, lat) in enumerate(lines):
            colour = pg.mkColor(_MPL.get(LOAD_COLORS.get(cond, ""), "#7f7f7f"))
            y = np.arange(1, len(lat) + 1) / len(lat)
            self.lines[name] = self.plot(np.repeat(lat, 2)[1:], np.repeat(y, 2)[:-1], pen=pg.mkPen(colour, width=2),
                                         name=f"{name} (n={len(lat)})")
            for x, yy, what, ty, anchor in ((lat[0], y[0], "min", 0.04 + step * (min_row[name] + 0.5), (0, 0.5)),
                                            (lat[-1], 1.0, "max", 1.0 - step * (max_row[name] + 0.5), (1, 0.5))):
                self.plot([x], [yy], pen=None, symbol="o", symbolSize=7, symbolBrush=colour, symbolPen=colour)
                label = pg.TextItem(f"{what} {us_text(x)} us", color=colour, anchor=anchor)
                label.setPos(float(np.log10(x)), ty)          # view coordinates: log10 of the latency
                self.addItem(label)
                self.labels.append(label)
        if lines:                                           # 1-2-5 ticks per decade: pyqtgraph labels every minor one
            lo, hi = min(t[2][0] for t in lines), max(t[2][-1] for t in lines)
            ticks = [(float(np.log10(m * 10.0 ** e)), f"{m * 10.0 ** e:g}")
                     for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1) for m in (1, 2, 5)]
            self.getAxis("bottom").setTicks([ticks, []])
        else:
            self.setTitle("CDF per PC load condition: no measured events")


# matplotlib's tab: colours by name, for the conditions plots.LOAD_COLORS names that way
_MPL = {"black": "#000000", "tab:red": "#d62728", "tab:blue": "#1f77b4", "tab:orange": "#ff7f0e",
        "tab:purple": "#9467bd", "tab:brown": "#8c564b"}


class CompareWindow(QDialog):
    def __init__(self, a: Path, b: Path, parent=None) -> None:
        super().__init__(parent)
        self.runs = [load_run(a), load_run(b)]
        names = [r[2] for r in self.runs]
        self.setWindowTitle(f"compare: {names[0]} vs {names[1]}")
        self.resize(1100, 700)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.panels: list[StatsPanel] = []
        for (rows, sidecar, name), colour in zip(self.runs, Plots.COLOURS):
            panel = StatsPanel(name)
            panel.setStyleSheet(f"QGroupBox {{ color: {colour}; font-weight: bold; }}")
            summary = (sidecar or {}).get("summary")
            if summary:
                panel.show_summary(summary)
            else:
                panel.show_rows(rows)
            cfg = (sidecar or {}).get("config") or {}
            col = QVBoxLayout()
            col.addWidget(panel)
            col.addWidget(QLabel(f"mode {cfg.get('mode', '?')}, distance {cfg.get('distance', '?')}, "
                                 f"load {load_name(cfg.get('load'))}, "
                                 f"{'valid' if (sidecar or {}).get('valid', True) else 'INVALID'}"))
            top.addLayout(col)
            self.panels.append(panel)
        lay.addLayout(top)
        self.plots = Plots()
        self.plots.show([r[0] for r in self.runs])
        self.load_cdf = LoadCdf([a, b])
        bottom = QHBoxLayout()
        bottom.addWidget(self.plots, 3)
        bottom.addWidget(self.load_cdf, 2)
        lay.addLayout(bottom, 1)
