"""Two earlier runs side by side: their statistics and their latency plots overlaid (blue: A, red: B), their
latency CDF per PC load condition on a log time axis (the report's load-cdf: mmanalysis.plots'
load_cdf_panels, drawn here with pyqtgraph), and, when they are points of `mmrig sweep` campaigns, each
campaign's on-time share against distance (the report's on-time figure: mmanalysis.sweepplots' series)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QVBoxLayout

from mmsched.model.load import condition
from mmrig.gui.rows import load_run
from mmrig.gui.screenfit import fit_to_screen
from mmrig.gui.widgets.latency_axis import LatencyAxis, latency_tick
from mmrig.gui.widgets.plots import Plots, Reference
from mmrig.gui.widgets.stats import StatsPanel


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


PAPER_COLOUR = "#2ca02c"


class LoadCdf(pg.PlotWidget):
    """Latency CDF per load condition (the runs' measured events pooled per condition; per mode and distance
    when the runs differ in them), log time axis, min and max of each line marked and labelled: a label row
    of its own for each, min labels up from the bottom, max labels down from the top (as plots.load_cdf)."""

    def __init__(self, paths: list[Path], parent=None, refs: list | None = None,
                 run_colours: dict[tuple[str, int, str], str] | None = None) -> None:
        """refs: rows of mmanalysis.report.PAPER whose mean is drawn as a dashed line (inside the axis), named in the
        legend. run_colours: (mode, distance, load condition) -> the colour its run has in the rest of the window,
        for lines the conditions' colours do not tell apart."""
        super().__init__(parent, title="CDF per PC load condition", axisItems={"bottom": LatencyAxis("bottom")})
        from mmanalysis import read_runs
        from mmanalysis.plots import LOAD_COLORS, load_cdf_panels, us_text

        self.setLogMode(x=True, y=False)
        self.setLabel("bottom", "latency (log)")
        self.setLabel("left", "share of events \u2264 x")
        self.setYRange(0, 1.05)
        self.showGrid(x=True, y=True, alpha=0.3)
        # the legend under the axis, not on the data (inside, bottom right, it lay across a slow run's curve)
        legend = pg.LegendItem(colCount=2)
        self.plotItem.layout.addItem(legend, 4, 1)
        self.plotItem.legend = legend                       # plot(name=...) adds each line to it
        # one line per load condition within one experiment (mmanalysis.plots.experiment_key: tick-aligned and
        # free-running 1-ahead runs are two experiments, never pooled), as the report's load CDF
        groups = load_cdf_panels(read_runs([run_csv(p) for p in paths]))
        several = len(groups) > 1
        lines = [(f"{cond} ({' '.join([key[0], f'd={key[1]}', *filter(None, key[2:])])})" if several else cond, cond, lat)
                 for key, conds in groups.items() for cond, lat in conds.items()]
        keys = [(str(key[0]), int(key[1]), cond) for key, conds in groups.items() for cond in conds]
        self.lines: dict[str, pg.PlotDataItem] = {}
        self.labels: list[pg.TextItem] = []
        self.refs = list(refs or [])
        step = min(0.07, 0.44 / max(len(lines), 1))
        min_row = {n: r for r, (n, _, _) in enumerate(sorted(lines, key=lambda t: -t[2][0]))}
        max_row = {n: r for r, (n, _, _) in enumerate(sorted(lines, key=lambda t: t[2][-1]))}
        # the report's colour per load condition; where two lines share one (two runs of one condition in different
        # modes were both black), each line its run's colour in this window (A blue, B red), else one of its own
        colours = [_MPL.get(LOAD_COLORS.get(cond, ""), "#7f7f7f") for _, cond, _ in lines]
        if len(set(colours)) < len(colours):
            theirs = [(run_colours or {}).get(k) for k in keys]
            colours = theirs if None not in theirs and len(set(theirs)) == len(theirs) else \
                [LINE_COLOURS[i % len(LINE_COLOURS)] for i in range(len(lines))]
        for i, (name, cond, lat) in enumerate(lines):
            colour = pg.mkColor(colours[i])
            y = np.arange(1, len(lat) + 1) / len(lat)
            self.lines[name] = self.plot(np.repeat(lat, 2)[1:], np.repeat(y, 2)[:-1], pen=pg.mkPen(colour, width=2),
                                         name=f"{name} (n={len(lat)})")
            # a label row of its own per line: min labels up from the bottom, max labels down from the top
            for x, yy, what, ty, anchor in ((lat[0], y[0], "min", 0.04 + step * (min_row[name] + 0.5),
                                             (0, 0.5)),
                                            (lat[-1], 1.0, "max", 1.0 - step * (max_row[name] + 0.5),
                                             # a line of one value stands at the axis' left end: label it rightwards
                                             (0, 0.5) if lat[-1] == lat[0] else (1, 0.5))):
                self.plot([x], [yy], pen=None, symbol="o", symbolSize=7, symbolBrush=colour, symbolPen=colour)
                label = pg.TextItem(f"{what} {us_text(x)} us", color=colour, anchor=anchor)
                label.setPos(float(np.log10(x)), ty)          # view coordinates: log10 of the latency
                self.addItem(label)
                self.labels.append(label)
        for r in sorted(self.refs, key=lambda r: r.mean_us):
            # named in the legend: a label beside the line lay across the curves
            pen = pg.mkPen(PAPER_COLOUR, width=1.5, style=Qt.PenStyle.DashLine)
            self.addItem(pg.InfiniteLine(pos=float(np.log10(r.mean_us)), angle=90, movable=False, pen=pen),
                         ignoreBounds=True)
            legend.addItem(pg.PlotDataItem([], [], pen=pen), paper_label(r))
            self.plot([r.mean_us], [0.5], pen=None, symbol="o", symbolSize=1, symbolBrush=(0, 0, 0, 0), symbolPen=None)
        if lines:                                           # 1-2-5 ticks per decade: pyqtgraph labels every minor one
            lo = min([t[2][0] for t in lines] + [r.mean_us for r in self.refs])
            hi = max([t[2][-1] for t in lines] + [r.mean_us for r in self.refs])
            ticks = [(float(np.log10(m * 10.0 ** e)), latency_tick(m * 10.0 ** e))
                     for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1) for m in (1, 2, 5)]
            self.getAxis("bottom").setTicks([ticks, []])
            # each min / max label reads away from the nearer edge of the axis, so none runs off it ("9.98 us" was
            # all that showed of "max 59.98 us" near the left edge)
            mid = (np.log10(lo) + np.log10(hi)) / 2
            for label in self.labels:
                label.setAnchor((0, 0.5) if label.pos().x() <= mid else (1, 0.5))
        else:
            self.setTitle("CDF per PC load condition: no measured events")


def paper_rows(configs: list[dict]) -> list:
    """The paper's section 7 experiments (mmanalysis.report.PAPER, with a mean) the runs' configurations are, in
    the runs' order, each once: the references a comparison is drawn against."""
    from mmanalysis.report import PAPER

    found: list = []
    for cfg in configs:
        for row in PAPER:
            if row.mean_us is not None and row.match(cfg or {}) and row not in found:
                found.append(row)
                break
    return found


def paper_label(row) -> str:
    from mmanalysis.plots import us_text

    return f"paper {row.section} {row.key}: {us_text(row.mean_us)} us"


def paper_reference(row) -> Reference:
    """The paper's mean of ROW (a PaperRow) as the plots' reference line: the label whole on its tooltip,
    "paper 7.4 mixed2" at the axis edge, the section ("7.4") where the axis is short."""
    return Reference(label=paper_label(row), us=row.mean_us, colour=PAPER_COLOUR,
                     tick=f"paper {row.section} {row.key}", short=str(row.section))


def tick_us_of(sidecar: dict | None) -> float | None:
    tb = (sidecar or {}).get("timebase") or {}
    return 1e6 * tb["tick_counts"] / tb["timer_hz"] if tb.get("timer_hz") and tb.get("tick_counts") else None


def campaign_folder(csv: Path) -> Path | None:
    """The campaign a run is a point of (FOLDER/points/P.csv with FOLDER/campaign.json), or None."""
    folder = Path(csv).resolve().parent.parent
    return folder if Path(csv).resolve().parent.name == "points" and (folder / "campaign.json").is_file() else None


class OnTimePlot(pg.PlotWidget):
    """A campaign's on-time share against distance, one line per rate, baud, dispatch (and load), valid points
    dots, invalid ones crosses, the minimum safe distance a star (as sweepplots.on_time)."""

    def __init__(self, folder: Path, highlight: set[str], parent=None) -> None:
        from mmanalysis.sweepplots import load_campaign, min_safe_distance, series

        doc = load_campaign(folder)
        super().__init__(parent, title=f"on time against distance: campaign {doc.get('name')}")
        self.setLabel("bottom", "schedule distance (ticks ahead)")
        self.setLabel("left", "on time (%)")
        self.setYRange(-3, 105)
        self.showGrid(x=True, y=True, alpha=0.3)
        self.addLegend(offset=(-10, -10))
        lines = series(doc)
        loads = {k[3] for k in lines}
        self.safe: dict[str, int | None] = {}
        for i, (key, pts) in enumerate(lines.items()):
            rate, baud, dispatch, load = key
            name = f"{rate}, {baud} Bd, {dispatch}" + (f", {load}" if len(loads) > 1 else "")
            colour = pg.intColor(i, hues=max(len(lines), 3))
            safe = min_safe_distance(pts)
            self.safe[name] = safe
            d = [p[0] for p in pts]
            y = [100 * p[1] for p in pts]
            self.plot(d, y, pen=pg.mkPen(colour, width=2),
                      name=name + (f" (safe from {safe})" if safe is not None else " (no safe distance)"))
            ok = [(x, v) for x, v, p in zip(d, y, pts) if p[2]]
            bad = [(x, v) for x, v, p in zip(d, y, pts) if not p[2]]
            for sel, symbol in ((ok, "o"), (bad, "x")):
                if sel:
                    self.plot(*zip(*sel), pen=None, symbol=symbol, symbolSize=8, symbolBrush=colour, symbolPen=colour)
            if safe is not None:
                self.plot([safe], [100], pen=None, symbol="star", symbolSize=16, symbolBrush=None,
                          symbolPen=pg.mkPen(colour, width=2))
        # the compared points themselves, ringed
        self.ringed: list[str] = []
        for name, entry in doc.get("points", {}).items():
            s, v = entry.get("summary") or {}, entry.get("values") or {}
            if name in highlight and s.get("on_time_share") is not None:
                self.ringed.append(name)
                self.plot([int(v["distance"])], [100 * float(s["on_time_share"])], pen=None, symbol="o",
                          symbolSize=18, symbolBrush=None, symbolPen=pg.mkPen("k", width=1.5))


# a colour per line where the conditions' colours do not tell the lines apart: the compared runs' blue and red
# (Plots.COLOURS) first, then matplotlib's next tab: colours
LINE_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
# matplotlib's tab: colours by name, for the conditions plots.LOAD_COLORS names that way
_MPL = {"black": "#000000", "tab:red": "#d62728", "tab:blue": "#1f77b4", "tab:orange": "#ff7f0e",
        "tab:purple": "#9467bd", "tab:brown": "#8c564b"}


class CompareWindow(QDialog):
    def __init__(self, a: Path, b: Path, parent=None) -> None:
        super().__init__(parent)
        self.runs = [load_run(a), load_run(b)]
        names = [r[2] for r in self.runs]
        self.setWindowTitle(f"compare: {names[0]} vs {names[1]}")
        fit_to_screen(self, 1280, 800)
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
        # the paper's means for the experiments these runs are (mmanalysis.report.PAPER) as reference lines;
        # the latency axes go log when the runs (and those lines) span decades (a 1.375 us run beside a 300 ms one)
        self.paper = paper_rows([((sc or {}).get("config") or {}) for _, sc, _ in self.runs])
        self.plots = Plots()
        self.plots.set_references([paper_reference(r) for r in self.paper])
        ticks = [tick_us_of(sc) for _, sc, _ in self.runs]
        self.plots.show([r[0] for r in self.runs], tick_us=next((t for t in ticks if t), None))
        run_colours = {(str(cfg.get("mode")), int(cfg.get("distance") or 0), load_name(cfg.get("load"))): colour
                       for cfg, colour in zip([((sc or {}).get("config") or {}) for _, sc, _ in self.runs],
                                              Plots.COLOURS)}
        self.load_cdf = LoadCdf([a, b], refs=self.paper, run_colours=run_colours)
        if self.paper:
            lay.insertWidget(1, QLabel("dashed green: the paper's mean latency (section 7) for "
                                       + "; ".join(f"{r.experiment} ({r.section}): {r.mean_us:g} us" for r in self.paper)))
        bottom = QHBoxLayout()
        bottom.addWidget(self.plots, 3)
        side = QVBoxLayout()
        side.addWidget(self.load_cdf, 1)
        self.on_time: list[OnTimePlot] = []
        folders: dict[Path, set[str]] = {}
        for p in (a, b):
            folder = campaign_folder(run_csv(p))
            if folder is not None:
                folders.setdefault(folder, set()).add(run_csv(p).stem)
        for folder, names in folders.items():
            try:
                plot = OnTimePlot(folder, names)
            except (OSError, ValueError, KeyError) as exc:    # a campaign sidecar that cannot be read: say so
                side.addWidget(QLabel(f"campaign {folder}: {exc}"))
                continue
            self.on_time.append(plot)
            side.addWidget(plot, 1)
        bottom.addLayout(side, 2)
        lay.addLayout(bottom, 1)
