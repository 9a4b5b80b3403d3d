"""Figures (matplotlib, Agg): each function returns a Figure; save() writes it as PNG and SVG.

Figures are built with matplotlib.figure.Figure, never pyplot: no GUI backend is touched (headless, CI),
savefig renders with Agg (PNG) and the SVG backend, and in Jupyter a returned Figure displays inline.

Every figure draws the runs it is given (callers pass the valid, not-set-aside runs: mmanalysis.selection),
each run in one colour of its own, the same in every figure (run_colors); latency axes fit the data
(mmanalysis.axes: log only where the data spans decades, a range of equal values drawn readably, plain tick
labels); labels are placed in rows of their own so they never overlap; where a figure compares with the
paper, the paper's means are drawn as reference lines. Artists of a run carry gid "run:NAME", reference lines
gid "ref:..." (the figure test reads them). Where the runs drawn come from two profiler kinds (avr, 8051:
mmanalysis.profiler_kind), each run's label says its kind ("NAME [8051]"), so the two are never confused.

- timeline:     latency over time, one run, late bound and non-measured outcomes marked on a strip at the top
- histogram:    latency histogram with log counts (cyclictest / OSADL style): fixed bins of a stated width
                from 0, an overflow bin, one step curve per run, identical runs kept visible, runs whose
                ranges are more than 10x apart in panels of their own
- cdf:          share of events <= x, min and max marked and labelled per run, the paper's means as lines
- load_cdf:     one CDF per PC load condition, one panel per experiment (mode, distance, generation;
                figures 6-9 of Liu et al., "Implementing Hybrid Operating Systems with Two-Level
                Hardware Interrupts"): in loadcdf.py with its grouping, re-exported here
- compare:      runs side by side on one latency axis, each run's mean and variance under it, the paper's
                mean of its experiment as a black bar
- slack:        mixed mode: how long each SCHEDULE took to reach the executor, and the slack it had left against
                the tick phase it was created at (missed events on the zero line: no slack)
- missed_phase: mixed mode: ok and missed events by the tick phase they were created at (the demo's text bars)
- worst_over_time, long_term_histogram: one run's worst case over time and its long-term histogram in 1 us
                bins (OSADL's two plots): in worstcase.py, drawn here among the report's figures
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from . import axes as fit
from . import canvas
from .histogram import bin_counts, check_bin_us, default_bin_us
from .latstats import measured, variance_text
# the load CDF and its grouping live in loadcdf.py, the helpers every figure module shares in plotbase.py;
# re-exported so that callers keep plots.load_cdf, mmanalysis.plots.load_cdf_panels, plots.us_text ...
from .loadcdf import GENERATION_WORDS, LOAD_COLORS, experiment_key, experiment_title, load_cdf, load_cdf_panels  # noqa: F401
from .plotbase import EXPERIMENT_ORDER, us_text  # noqa: F401
from .plotbase import axis_fraction as _axis_fraction, ordered_runs as _runs
from .paper import PAPER, PaperRow
from .phasebars import bin_labels, phase_histogram
from .propagation import propagation_ms
from .reader import RunSet, profiler_kind
from .safefiles import atomic_write, subfolder
from .schema import DEFAULT_LATE_BOUND_US, MEASURED, load_condition
from .worstcase import long_term_histogram, worst_over_time

COLORS = {"ok": "tab:green", "late": "tab:orange", "early": "tab:purple", "missed": "tab:red", "lost": "tab:gray"}
# Where a figure marks each event by its outcome, each outcome has a marker of its own in shape and colour (the
# colour, COLORS'), so that it reads in print and to a reader who cannot tell the colours apart; the run is then
# the marker's outline. All filled, so that the outline can carry the run's colour.
OUTCOME_MARKERS = {"ok": "o", "late": "^", "early": "v", "missed": "X", "lost": "D"}


def run_colors(data: RunSet, runs: list[str] | None = None) -> dict[str, tuple]:
    """One colour per run, none repeated: tab10 up to 10 runs, tab20 up to 20, then evenly around a hue circle.
    Keyed on every run of DATA in the paper's order, so a run has the same colour in every figure."""
    order = _runs(data, None)
    n = len(order)
    if n <= 10:
        cols = [colormaps["tab10"](i) for i in range(n)]
    elif n <= 20:
        cols = [colormaps["tab20"](i) for i in range(n)]
    else:
        cols = [colormaps["hsv"](i / n) for i in range(n)]
    return dict(zip(order, cols))


def paper_row(data: RunSet, run: str) -> PaperRow | None:
    """The paper's experiment RUN belongs to (mmanalysis.paper), or None."""
    cfg = data.meta[run].get("config", {})
    return next((p for p in PAPER if p.match(cfg)), None)


def _late_bound(data: RunSet, run: str) -> float:
    return float(data.meta[run].get("config", {}).get("late_bound_us") or DEFAULT_LATE_BOUND_US)


def _tick_s(data: RunSet, run: str) -> float:
    tb = data.meta[run]["timebase"]
    return tb["tick_counts"] / tb["timer_hz"]


def _label(data: RunSet, run: str) -> str:
    m = data.meta[run]
    suffix = "" if m.get("valid", True) else " (INVALID)"
    kind = f" [{profiler_kind(m)}]" if len({profiler_kind(x) for x in data.meta.values()}) > 1 else ""
    kind = "" if run.endswith(kind) else kind        # read with label_kinds: the name says it already
    return f"{run}{kind}{suffix}"


def _measured(data: RunSet, run: str) -> np.ndarray:
    """The run's measured latencies (ok, late, measurable: mmanalysis.latstats.measured), in event order."""
    df = data.df[data.df["run"] == run]
    return measured(df)["latency_us"].to_numpy(dtype=float)


def _legend(ax, **kw) -> None:
    if ax.get_legend_handles_labels()[0]:
        legend = ax.legend(**kw)
        if kw.get("bbox_to_anchor", (0.0,))[0] > 1:       # beside the axes: the canvas widens for it
            canvas.beside(legend)


DPI = canvas.DPI
RASTER_POINTS = 400      # a point cloud of more markers than this goes into the SVG as one image


def save(fig, out_dir: Path | str, stem: str, formats=("png", "svg")) -> list[Path]:
    """FIG as OUT_DIR/STEM.png and .svg: the whole figure, sized to what is drawn on it (canvas.fit, at the
    DPI the PNG is written at: a legend beside its axes is inside the canvas, never cut at its edge). Every
    figure function fits its figure already; fitting here too costs one measurement and keeps a figure drawn
    elsewhere (a caller's) whole."""
    out_dir = subfolder(out_dir)      # the writer's own figures/ folder: refused if a link or another's holds it
    canvas.fit(fig)
    paths = []
    for fmt in formats:
        p = out_dir / f"{stem}.{fmt}"
        buf = io.BytesIO()              # rendered here, then written as every file of ours is (safefiles)
        fig.savefig(buf, format=fmt, dpi=fig.dpi)
        atomic_write(p, buf.getvalue())
        paths.append(p)
    return paths


def timeline(data: RunSet, run: str):
    df = data.df[data.df["run"] == run]
    fig = Figure(figsize=(8, 3.6))
    ax = fig.subplots()
    tc = df["scheduled_tc"].to_numpy(dtype=float, na_value=np.nan)
    t = (tc - (np.nanmin(tc) if len(tc) else 0.0)) * _tick_s(data, run)
    lat = df["latency_us"].to_numpy()
    outcome = df["outcome"].astype(str).to_numpy()
    meas = np.isin(outcome, MEASURED) & df["measurable"].to_numpy(dtype=bool)
    for o in MEASURED:
        m = meas & (outcome == o)
        if o != "ok" and not m.any():
            continue
        ax.plot(t[m], lat[m], OUTCOME_MARKERS[o], ls="", ms=3, color=COLORS[o], label=f"{o} ({m.sum()})",
                rasterized=m.sum() > RASTER_POINTS)
    unmeas = np.isin(outcome, MEASURED) & ~meas
    strip = ax.get_xaxis_transform()         # x in data, y in axes fraction: a strip above the data
    if unmeas.any():
        ax.plot(t[unmeas], np.full(unmeas.sum(), 0.97), "|", color="k", transform=strip,
                label=f"displaced by a host stall ({unmeas.sum()}, left out)")
    for o in ("early", "missed", "lost"):
        m = outcome == o
        if m.any():
            ax.plot(t[m], np.full(m.sum(), 0.97), OUTCOME_MARKERS[o], ls="", color=COLORS[o], transform=strip,
                    label=f"{o} ({m.sum()}, no latency: top strip)")
    values = lat[meas]
    bound = _late_bound(data, run)
    sc = fit.fit_scale(values)
    if len(values) and values.max() >= bound / 10:   # the late bound only where the data comes near it
        ax.axhline(bound, color="k", lw=0.8, ls="--", label=f"late bound ({us_text(bound)} us)")
        sc = fit.fit_scale(np.append(values, bound))
    fit.apply(ax, sc, "y")
    if sc.hi > sc.lo and not sc.log:
        ax.set_ylim(sc.lo, sc.hi + (sc.hi - sc.lo) * 0.12)   # room for the strip
    ax.set_xlabel("time since first scheduled tick (s)")
    ax.set_ylabel("latency (us)" + (", log" if sc.log else ""))
    ax.set_title(f"latency over time: {_label(data, run)}", fontsize=9)
    _legend(ax, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return canvas.fit(fig)


HIST_QUANTILE = 99.9      # the default upper limit of the histogram's range: this percentile, rounded up
HIST_MAX_BINS = 500       # more than this many bins across a figure's width is noise: a default width grows
HIST_FAMILIES = (("executor", "verification and mixed mode (the executor fires)"),
                 ("pc", "normal mode (the PC fires)"))
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 1)))


def _family(data: RunSet, run: str) -> str:
    """Whose latency a run measures: "pc" (normal mode: hundreds of us to ms) or "executor" (a few us)."""
    return "pc" if data.meta[run].get("config", {}).get("mode") == "normal" else "executor"


PANEL_RANGE_RATIO = 10.0   # runs whose ranges differ by more than this share no panel (range: HIST_QUANTILE)


def range_groups(per_run: dict[str, np.ndarray], ratio: float = PANEL_RANGE_RATIO) -> list[list[str]]:
    """RUNS (name -> measured latencies) in groups whose ranges are within RATIO of one another, narrowest first,
    each group's runs in the order given. A run's range is its HIST_QUANTILE percentile, what a panel's axis
    is taken from: three runs at 1.375 us beside one that reached 1,273 us shared a 0-1000 us axis, where the
    three filled its first pixel; apart, each panel's axis fits its own runs."""
    top = {r: max(float(np.percentile(v, HIST_QUANTILE)), 1e-9) for r, v in per_run.items() if len(v)}
    groups: list[list[str]] = []
    floor = 0.0
    for r in sorted(top, key=lambda r: top[r]):
        if groups and top[r] <= floor * ratio:
            groups[-1].append(r)
        else:
            groups.append([r])
            floor = top[r]
    order = list(per_run)
    return [sorted(g, key=order.index) for g in groups]


def histogram_panels(data: RunSet, runs: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """The histogram's panels: (title, runs), one per kind of latency (HIST_FAMILIES) and, within a kind, one per
    group of runs whose ranges are within PANEL_RANGE_RATIO of one another (range_groups)."""
    runs = _runs(data, runs)
    per_run = {r: _measured(data, r) for r in runs}
    panels = []
    for fam, title in HIST_FAMILIES:
        members = {r: per_run[r] for r in runs if _family(data, r) == fam and len(per_run[r])}
        groups = range_groups(members)
        for g in groups:
            panels.append((title if len(groups) == 1 else
                           f"{title}, runs up to {us_text(max(float(members[r].max()) for r in g))} us", g))
    return panels


def nice_ceiling(x: float, step: float) -> float:
    """The smallest of 1, 2, 5 x 10^k that is >= X, as a whole number of STEPs (at least one step)."""
    if not np.isfinite(x) or x <= 0:
        return step
    k = 10.0 ** np.floor(np.log10(x))
    nice = next(m * k for m in (1.0, 2.0, 5.0, 10.0) if m * k >= x * (1 - 1e-12))
    return max(float(np.ceil(nice / step - 1e-9)) * step, step)


def hist_range(values: np.ndarray, bin_us: float, max_us: float | None = None) -> tuple[int, float]:
    """(bins, limit): fixed bins of BIN_US from 0 up to LIMIT (= bins x bin_us); events at or past it are the
    overflow. LIMIT is MAX_US when given (rounded up to a whole bin), else the HIST_QUANTILE percentile of
    VALUES rounded up to 1, 2 or 5 x 10^k: a few outliers far out do not squeeze the body of the histogram
    into a few pixels; they are counted in the overflow bin instead, as cyclictest and OSADL do."""
    bin_us = check_bin_us(bin_us)
    if max_us is not None:
        top = float(max_us)
    else:
        top = nice_ceiling(float(np.percentile(values, HIST_QUANTILE)) if len(values) else bin_us, bin_us)
        top = max(top, bin_us)
    bins = max(int(np.ceil(top / bin_us - 1e-9)), 1)
    return bins, bins * bin_us


def histogram(data: RunSet, runs: list[str] | None = None, bin_us: float | None = None,
              max_us: float | None = None):
    """Fixed bins from 0 us, each BIN_US wide (default: histogram.default_bin_us, 1 us for the executor's
    latencies, 10 us for normal mode's), up to a limit (MAX_US, default the 99.9th percentile rounded up,
    see hist_range), then one overflow bin, drawn apart at the right and labelled with its count, as
    cyclictest's and OSADL's latency plots. Log counts. One panel per kind of latency (the executor fires:
    verification and mixed; the PC fires: normal mode), since microseconds and milliseconds on one linear
    axis would leave one of them a sliver; within a kind, runs whose ranges differ by more than
    PANEL_RANGE_RATIO get a panel each for the same reason (histogram_panels).

    Runs with the same data must stay visible (the bench's runs are often identical to the cycle). One
    curve per run as a step outline, and three things keep identical outlines apart rather than one
    hiding the other: each later run is drawn thinner than the one before it (so equal outlines nest as a
    wide line with narrower ones of other colours inside), with a line style of its own (solid, dashed,
    dotted...: distinct in print as well), and shifted right by k/K of a bin (K runs in the panel), which
    never moves a count out of its own bin. The legend also names any run whose counts equal an earlier
    run's ("same counts as ..."), so it is said even where the outlines coincide to the pixel."""
    runs = [r for r in _runs(data, runs)]
    colors = run_colors(data)
    per_run = {r: _measured(data, r) for r in runs}
    panels = histogram_panels(data, runs)
    n = max(len(panels), 1)
    fig = Figure(figsize=(9, 3.4 * n + 0.3))
    axs = fig.subplots(n, 1, squeeze=False)[:, 0]
    if not panels:
        axs[0].text(0.5, 0.5, "no measured events", ha="center", transform=axs[0].transAxes)
    for ax, (title, members) in zip(axs, panels):
        fam = _family(data, members[0])
        pooled = np.concatenate([per_run[r] for r in members])
        if bin_us is not None:
            width = check_bin_us(bin_us)
        else:       # the .hist file's width, coarser (x 2, 5, 10...) only where the range would take too many bins
            width = default_bin_us("normal" if fam == "pc" else "mixed")
            while hist_range(pooled, width, max_us)[0] > HIST_MAX_BINS:
                width = nice_ceiling(width * 1.5, width / 10)
        bins, limit = hist_range(pooled, width, max_us)
        edges = np.arange(bins + 1, dtype=float) * width
        slot = max(limit * 0.06, width)                   # the overflow bin's width on the axis, apart
        gap = slot * 0.5
        ox = limit + gap                                  # where the overflow bin starts
        k_all = len(members)
        seen: dict[tuple, str] = {}
        total_over = 0
        top = 1.0
        for k, run in enumerate(members):
            counts, over, _under = bin_counts(per_run[run], width, bins)
            counts = np.asarray(counts)
            total_over += over
            top = max(top, float(counts.max(initial=0)), float(over))
            same = seen.setdefault((tuple(counts), over), run)
            note = f"; same counts as {same}" if same != run else ""
            lw = max(2.8 - 1.8 * k / max(k_all - 1, 1), 1.0)
            ls = LINE_STYLES[k % len(LINE_STYLES)]
            shift = width * k / k_all
            label = f"{_label(data, run)} (n={len(per_run[run])}, overflow {over}{note})"
            st = ax.stairs(np.where(counts > 0, counts, 0.8), edges + shift, baseline=0.8, color=colors[run],
                           lw=lw, ls=ls, label=label)
            st.set_gid(f"run:{run}")
            # the overflow bin: one narrow bar per run, side by side inside the bin (never stacked)
            x0 = ox + slot * k / k_all
            bar = ax.stairs([max(over, 0.8)], [x0, x0 + slot / k_all], baseline=0.8, color=colors[run],
                            fill=over > 0, alpha=0.85, lw=1.0)
            bar.set_gid(f"overflow:{run}")
        ax.axvspan(ox, ox + slot, color="0.92", zorder=0, lw=0)
        # beside its bin, to the left (inside the axes), never over the legend
        ax.text(ox - gap * 0.3, 0.97, f"overflow: {total_over} \u2265 {us_text(limit)} us \u2192",
                transform=ax.get_xaxis_transform(), ha="right", va="top", fontsize=7, gid="overflow-label",
                bbox=dict(boxstyle="square,pad=0.15", fc="white", ec="none", alpha=0.8))
        ax.set_xlim(0, ox + slot)
        ax.set_yscale("log")
        ax.set_ylim(0.8, top * 6)                         # room above the highest bin for the overflow label
        ax.yaxis.set_major_formatter(fit.FuncFormatter(lambda v, _pos: fit.number_text(v)))
        # counts spanning a decade or two (a panel of one run): labels at 1, 2, 5 (and 3 under 1.7 decades), whole
        # counts as plain numbers, never matplotlib's minor '6 x 10^0'
        decades = np.log10(top * 6 / 0.8)
        ax.yaxis.set_major_locator(fit.LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0) if decades < 1.7
                                                  else (1.0, 2.0, 5.0) if decades < 3 else (1.0,)))
        ax.yaxis.set_minor_formatter(fit.NullFormatter())
        ax.xaxis.set_major_locator(fit.MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10]))
        ax.xaxis.set_major_formatter(fit.FuncFormatter(lambda v, _pos: fit.number_text(v) if v <= limit else ""))
        ax.set_xlabel(f"latency (us): bins of {width:g} us from 0 to {us_text(limit)} us, then the overflow bin "
                      f"(>= {us_text(limit)} us)", fontsize=8)
        ax.set_ylabel("events (log)")
        ax.set_title(f"latency histogram, {title}\nmeasured events (ok + late, measurable)", fontsize=9)
        ax.grid(True, axis="y", which="major", alpha=0.3)
        _legend(ax, fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return canvas.fit(fig)


def _paper_refs(data: RunSet, runs: list[str]) -> list[PaperRow]:
    """The paper's experiments with a mean that RUNS belong to, in the paper's order."""
    keys = {p.key for r in runs if (p := paper_row(data, r)) is not None and p.mean_us is not None}
    return [p for p in PAPER if p.key in keys]


REF_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))


CDF_LABELLED_RUNS = 6     # up to this many runs a CDF labels each min and max beside its dot; beyond, the legend


def cdf(data: RunSet, runs: list[str] | None = None):
    """One step curve per run; its min and max marked and labelled, each label on a row of its own (min labels
    up from the bottom, max labels down from the top, joined to their dot by a thin line), so none overlap;
    the paper's mean of each experiment shown as a grey vertical line. With more than CDF_LABELLED_RUNS runs
    (`--all` brings in every attempt) the rows of labels would fill the axes and pile on each other: the
    dots stay, and each run's min and max are said in its legend entry instead."""
    runs = [r for r in _runs(data, runs) if len(_measured(data, r))]
    colors = run_colors(data)
    refs = _paper_refs(data, runs)
    n = max(len(runs), 1)
    labelled = n <= CDF_LABELLED_RUNS
    fig = Figure(figsize=(9, max(4.2, (0.5 if labelled else 0.17) * n + 1.5)))
    ax = fig.subplots()
    step = min(7.0, 44.0 / n)
    lats = {r: np.sort(_measured(data, r)) for r in runs}
    min_row = {r: i for i, r in enumerate(sorted(runs, key=lambda r: -lats[r][0]))}
    max_row = {r: i for i, r in enumerate(sorted(runs, key=lambda r: lats[r][-1]))}
    sc = fit.fit_scale(np.concatenate([*lats.values(), [p.mean_us for p in refs]]) if runs else [])
    for run in runs:
        lat = lats[run]
        color = colors[run]
        y = np.arange(1, len(lat) + 1) / len(lat) * 100
        xs, ys = np.concatenate([[lat[0]], lat]), np.concatenate([[0.0], y])
        extremes = "" if labelled else f", min {us_text(lat[0])} us, max {us_text(lat[-1])} us"
        (line,) = ax.step(xs, ys, where="post", color=color, lw=1.4,
                          label=f"{_label(data, run)} (n={len(lat)}{extremes})")
        line.set_gid(f"run:{run}")
        for x, yy, what, ty in ((lat[0], y[0], "min", 4 + step * (min_row[run] + 0.5)),
                                (lat[-1], 100.0, "max", 100 - step * (max_row[run] + 0.5))):
            ha = "left" if _axis_fraction(sc, x) < 0.5 else "right"   # the label reads into the axes
            ax.plot([x], [yy], "o", color=color, ms=5 if labelled else 3.5, zorder=3, gid=f"run:{run}")
            if not labelled:
                continue
            # 6 points beside the dot's x, the leader from the label's near edge: it never crosses a label
            left = ha == "left"
            ax.annotate(f"{what} {us_text(x)} us", (x, yy), xytext=(6 if left else -6, ty),
                        textcoords=("offset points", "data"), ha=ha, va="center", fontsize=7, color=color,
                        arrowprops=dict(arrowstyle="-", color=color, lw=0.5, relpos=(0.0 if left else 1.0, 0.5)),
                        bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.7))
    for i, p in enumerate(refs):
        ax.axvline(p.mean_us, color="0.35", lw=1.0, ls=REF_STYLES[i % len(REF_STYLES)], gid=f"ref:{p.key}",
                   label=f"paper {p.section}, {p.experiment}: mean {us_text(p.mean_us)} us")
    if not runs:
        ax.text(0.5, 0.5, "no measured events", ha="center", transform=ax.transAxes)
    fit.apply(ax, sc, "x")
    ax.set_ylim(0, 105)
    ax.set_xlabel("latency (us" + (", log" if sc.log else "") + ")")
    ax.set_ylabel("events with latency <= x (%)")
    ax.set_title("cumulative distribution of latency (measured events: ok + late, measurable)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return canvas.fit(fig)


def compare(data: RunSet, runs: list[str] | None = None):
    """Runs side by side on one latency axis (log only where the data spans decades): each run's measured
    latencies as a strip of dots in its colour, its mean and variance (us²) and its unmeasured outcomes under it,
    and the paper's mean of its experiment as a black bar across its strip."""
    runs = _runs(data, runs)
    colors = run_colors(data)
    fig = Figure(figsize=(max(6.0, 1.55 * len(runs) + 1.4), 4.6))
    ax = fig.subplots()
    rng = np.random.default_rng(0)
    values, ticks = [], []
    for i, run in enumerate(runs):
        lat = _measured(data, run)
        values.append(lat)
        if len(lat):
            ax.plot(i + rng.uniform(-0.28, 0.28, len(lat)), lat, ".", ms=3, color=colors[run], alpha=0.7,
                    gid=f"run:{run}", rasterized=len(lat) > RASTER_POINTS)
        p = paper_row(data, run)
        if p is not None and p.mean_us is not None:
            ax.plot([i - 0.4, i + 0.4], [p.mean_us, p.mean_us], "-", color="k", lw=2.2, gid=f"ref:{p.key}")
            values.append(np.array([p.mean_us]))
        df = data.df[data.df["run"] == run]
        counts = df["outcome"].value_counts()
        other = ", ".join(f"{o} {int(counts.get(o, 0))}" for o in ("late", "early", "missed", "lost") if counts.get(o, 0))
        cfg = data.meta[run].get("config", {})
        stats = (f"mean {us_text(lat.mean())} us\nvar {variance_text(float(lat.var(ddof=1)))}" if len(lat) > 1
                 else "no data")
        ticks.append(f"{_label(data, run)}\n{cfg.get('mode')}, {cfg.get('distance')} ahead, "
                     f"{load_condition(cfg.get('load'))}\n{stats}" + (f"\n{other}" if other else "")
                     + ("\npaper: " + p.short.replace(", var", "\nvar").replace(" (", "\n(") if p is not None else ""))
    if runs:
        ax.plot([], [], "-", color="k", lw=2.2, label="the paper's mean for this experiment (section 7)")
    sc = fit.fit_scale(np.concatenate(values) if values else [])
    fit.apply(ax, sc, "y")
    ax.set_xticks(range(len(runs)), ticks, fontsize=6.5)
    ax.set_xlim(-0.6, len(runs) - 0.4)
    ax.set_ylabel("latency (us" + (", log" if sc.log else "") + ")")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.set_title("runs side by side (measured events: ok + late, measurable)", fontsize=9)
    _legend(ax, fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.06))
    fig.tight_layout()
    return canvas.fit(fig)


def _mixed_runs(data: RunSet, runs: list[str] | None) -> list[str]:
    out = []
    for run in _runs(data, runs):
        df = data.df[data.df["run"] == run]
        if (data.meta[run].get("config", {}).get("mode") == "mixed" or df["ack_tc"].notna().any()) and len(df):
            out.append(run)
    return out


def slack(data: RunSet, runs: list[str] | None = None):
    """Mixed runs. Left: how long each SCHEDULE took from its creation on the PC to the executor's ACK (ms).
    Right: the slack the event had left when the executor had it (ticks) against the tick phase the PC created
    it at; a missed (refused, past due) event had none: it is drawn on the zero line as a red cross at its
    creation phase. Left, colour: the run. Right, each outcome's marker differs in shape and colour
    (OUTCOME_MARKERS, COLORS), its outline in the run's colour."""
    runs = _mixed_runs(data, runs)
    colors = run_colors(data)
    fig = Figure(figsize=(11, 4.2))
    (ax1, ax2) = fig.subplots(1, 2)
    props = {}
    for run in runs:
        df = data.df[data.df["run"] == run]
        p = propagation_ms(df, _tick_s(data, run))
        props[run] = p[~np.isnan(p)]
    all_p = np.concatenate([p for p in props.values() if len(p)] or [np.array([])])
    sc = fit.fit_scale(all_p, allow_log=False)
    edges = np.linspace(sc.lo, sc.hi, 41)
    outcome_seen: dict[str, int] = {}
    for run in runs:
        df = data.df[data.df["run"] == run]
        if len(props[run]):
            counts, _ = np.histogram(props[run], edges)
            st = ax1.stairs(counts, edges, color=colors[run], lw=1.4,
                            label=f"{_label(data, run)}: mean {props[run].mean():.2f} ms, max {props[run].max():.2f} ms")
            st.set_gid(f"run:{run}")
        outcome = df["outcome"].astype(str).to_numpy()
        phase = df["created_phase"].to_numpy(dtype=float, na_value=np.nan)
        sl = df["slack_ticks"].to_numpy(dtype=float, na_value=np.nan)
        for o in ("ok", "late", "missed", "lost", "early"):
            m = outcome == o
            if o in ("missed", "lost"):      # no slack known (refused, past due; never acknowledged): the zero line
                y = np.where(np.isnan(sl[m]), 0.0, sl[m])
            else:
                m &= ~np.isnan(sl)
                y = sl[m]
            if not m.any():
                continue
            outcome_seen[o] = outcome_seen.get(o, 0) + int(m.sum())
            ax2.plot(phase[m], y, OUTCOME_MARKERS[o], ls="", color=colors[run], mfc=COLORS[o], mec=colors[run],
                     mew=0.8, ms=6 if o in ("missed", "lost") else 4.5, gid=f"run:{run}",
                     rasterized=int(m.sum()) > RASTER_POINTS)
        if len(df):
            ax2.plot([], [], "o", ls="", color=colors[run], mfc="none", mec=colors[run], mew=1.6,
                     label=f"{_label(data, run)} (the markers' outline)")
    for o in [o for o in OUTCOME_MARKERS if o in outcome_seen]:
        words = {"missed": "missed: no slack left (without an ACK phase: on the zero line)",
                 "lost": "lost (without an ACK phase: on the zero line)"}
        ax2.plot([], [], OUTCOME_MARKERS[o], ls="", color=COLORS[o], mfc=COLORS[o], mec=COLORS[o], ms=6,
                 gid=f"outcome:{o}", label=f"{words.get(o, o)} ({outcome_seen[o]})")
    if not runs:
        for ax in (ax1, ax2):
            ax.text(0.5, 0.5, "no mixed-mode run with ACK data", ha="center", transform=ax.transAxes)
    else:
        fit.apply(ax1, sc, "x")
    tick_ms = _tick_s(data, runs[0]) * 1e3 if runs else float("nan")
    ax1.set_xlabel("propagation delay, creation -> executor ACK (ms)")
    ax1.set_ylabel("SCHEDULE frames")
    ax1.set_title(f"how long SCHEDULE took to reach the executor (1 tick = {tick_ms:.2f} ms)", fontsize=9)
    _legend(ax1, fontsize=6.5, loc="upper left", bbox_to_anchor=(0.0, -0.18))
    ax2.axhline(0, color="k", lw=0.8)
    ax2.set_xlabel("tick phase at creation (>= 1: next tick begun, its TIMECODE not in yet)", fontsize=8)
    ax2.set_ylabel("slack at the executor (ticks)")
    ax2.set_title("slack left against creation phase: missed events had none", fontsize=9)
    _legend(ax2, fontsize=6.5, loc="upper left", bbox_to_anchor=(0.0, -0.18))
    fig.tight_layout()
    return canvas.fit(fig)


def missed_phase(data: RunSet, runs: list[str] | None = None):
    """Mixed runs with missed events: ok and missed events per bin of the tick phase the PC created them at
    (bins of mmanalysis.phasebars, as the demo's text chart), stacked, one panel per run."""
    cand = _mixed_runs(data, runs)
    with_missed = [r for r in cand if (data.df.loc[data.df["run"] == r, "outcome"] == "missed").any()]
    n = max(len(with_missed), 1)
    fig = Figure(figsize=(8, 2.8 * n + 0.6))
    axs = fig.subplots(n, 1, squeeze=False)[:, 0]
    labels = bin_labels()
    x = np.arange(len(labels))
    for ax, run in zip(axs, with_missed):
        df = data.df[data.df["run"] == run]
        phase = df["created_phase"].to_numpy(dtype=float, na_value=np.nan)
        outcome = df["outcome"].astype(str).to_numpy()
        ok = np.asarray(phase_histogram(phase[outcome == "ok"]))
        miss = np.asarray(phase_histogram(phase[outcome == "missed"]))
        ax.bar(x, ok, color=COLORS["ok"], label=f"ok ({ok.sum()})")
        ax.bar(x, miss, bottom=ok, color=COLORS["missed"], label=f"missed ({miss.sum()})")
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_ylabel("events")
        ax.set_title(f"{_label(data, run)}: events by the tick phase the PC created them at", fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
        ax.set_ylim(0, max((ok + miss).max(), 1) * 1.15)
    if not with_missed:
        names = ", ".join(cand) or "none"
        axs[0].text(0.5, 0.5, f"no missed events in the mixed runs ({names})", ha="center", va="center",
                    transform=axs[0].transAxes, fontsize=8, wrap=True)
        axs[0].set_xticks([])
        axs[0].set_yticks([])
    axs[-1].set_xlabel("tick phase at creation (>= 1.0: the next tick had begun, its TIMECODE not yet arrived)")
    fig.tight_layout()
    return canvas.fit(fig)


CAPTIONS: dict[str, str] = {
    "cdf": "Cumulative distribution of each run's latency (measured events: ok and late, measurable), the "
           "paper's mean of each experiment as a grey vertical line; each run's minimum and maximum marked.",
    "load-cdf": "Latency distribution under each PC load condition, one panel per experiment measured under "
                "two or more conditions (mode, distance and, in mixed mode, event generation: tick-aligned and "
                "free-running runs are never pooled).",
    "histogram": "Latency histogram in fixed bins from 0 us (the width is on the axis), events beyond the "
                 "range counted in the overflow bin at the right, log counts; one outline per run, identical "
                 "runs drawn nested and named in the legend; runs whose ranges are more than 10x apart in "
                 "panels of their own.",
    "compare": "Every run's measured latencies side by side on one axis, with its mean and variance, and the "
               "paper's mean of its experiment as a black bar.",
    "slack": "Mixed mode: how long each SCHEDULE frame took to reach the executor, and the slack it had left "
             "against the tick phase it was created at; missed events had none.",
    "missed-phase": "Mixed runs with missed events: ok and missed events by the tick phase the PC created them "
                    "at.",
}
# The figures drawn once per run or campaign: their file name is the prefix and the name (figure_stem)
TIMELINE_PREFIX = "timeline-"
WORST_PREFIX = "worst-over-time-"
LONG_TERM_PREFIX = "long-term-histogram-"
GANTT_PREFIX = "gantt-"
ON_TIME_PREFIX = "on-time-"


def figure_stem(prefix: str, name: str) -> str:
    """The file name (no suffix) of a run's or campaign's figure: PREFIX and NAME with every character but letters,
    digits and -_. made _, so that a name never makes a path or a hidden file; `caption` reads NAME back."""
    return prefix + "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


CAPTION_PREFIXES = {
    TIMELINE_PREFIX: "Latency over time of run {}: every measured event, the late bound where the data comes near "
                 "it, and events without a latency on the strip at the top.",
    WORST_PREFIX: "The worst case over time of run {}: the largest latency and the 99th percentile of each interval "
                  "of the run (the sidecar's maxima, as OSADL plots consecutive maxima), the run's phases shaded.",
    LONG_TERM_PREFIX: "Long-term latency histogram of run {}: every measured event in 1 us bins from 0 to the "
                      "run's maximum, log counts (OSADL's long-term plot).",
    GANTT_PREFIX: "What the executor ran during run {} (ProfileAnalyzer style): one row per interrupt and task, "
              "the timecode edges and the events the executor drove; the whole run above, and a zoom on the "
              "event with the longest dispatch below.",
    ON_TIME_PREFIX: "On-time share against distance, campaign {}.",
}


def caption(name: str) -> str:
    """The sentence that says what figure NAME shows (the report's Markdown and HTML both use it)."""
    if name in CAPTIONS:
        return CAPTIONS[name]
    for prefix, words in CAPTION_PREFIXES.items():
        if name.startswith(prefix):
            return words.format(name[len(prefix):])
    return name


def all_figures(data: RunSet, out_dir: Path | str, runs: list[str] | None = None, bin_us: float | None = None,
                max_us: float | None = None, workers: int | None = None) -> dict[str, list[Path]]:
    """Every figure for RUNS (default: all) that has something to show, as PNG and SVG under OUT_DIR: a
    figure with nothing in it (no mixed run for `slack`, no missed event for `missed-phase`, no experiment
    under two load conditions for `load-cdf`) is left out rather than drawn empty. Returns name -> paths;
    `caption(name)` says what each shows. BIN_US, MAX_US: the histogram's bin width and range (us).
    WORKERS: processes drawing them (render)."""
    runs = _runs(data, runs)
    measured_runs = [r for r in runs if len(_measured(data, r))]
    mixed = _mixed_runs(data, runs)
    jobs: list[Job] = []
    both = ("png", "svg")
    if measured_runs:
        jobs.append(("cdf", cdf, (runs,), {}, both))
    if any(len(c) >= 2 for c in load_cdf_panels(data, runs).values()):
        jobs.append(("load-cdf", load_cdf, (runs,), {}, both))
    if measured_runs:
        jobs.append(("histogram", histogram, (runs,), {"bin_us": bin_us, "max_us": max_us}, both))
    jobs.append(("compare", compare, (runs,), {}, both))
    if mixed:
        jobs.append(("slack", slack, (runs,), {}, both))
    if any((data.df.loc[data.df["run"] == r, "outcome"] == "missed").any() for r in mixed):
        jobs.append(("missed-phase", missed_phase, (runs,), {}, both))
    for run in runs:     # one a run: PNG only (a diagnostic view, not a paper figure; half the time of SVG too)
        jobs.append((figure_stem(TIMELINE_PREFIX, run), timeline, (run,), {}, ("png",)))
    jobs += worst_case_jobs(measured_runs)
    return render(data, Path(out_dir), jobs, workers)


def worst_case_jobs(runs: list[str]) -> list[Job]:
    """The worst case over time and the long-term histogram of each of RUNS (worstcase.py)."""
    jobs: list[Job] = []
    for run in runs:
        jobs.append((figure_stem(WORST_PREFIX, run), worst_over_time, (run,), {}, ("png",)))
        jobs.append((figure_stem(LONG_TERM_PREFIX, run), long_term_histogram, (run,), {}, ("png",)))
    return jobs


def counted_figures(data: RunSet, out_dir: Path | str, runs: list[str], workers: int | None = None
                    ) -> dict[str, list[Path]]:
    """The two worst-case figures of RUNS measured by the profiler's histogram alone (no event rows): from their
    sidecar's `maxima` (the profiler's reports) and `histogram` (its 1 us cells); a run with nothing counted has
    none."""
    drawn = [r for r in runs if int((data.meta[r].get("maxima") or {}).get("n") or 0) > 0]
    return render(data, Path(out_dir), worst_case_jobs(drawn), workers) if drawn else {}


_RENDER_DATA: RunSet | None = None       # what forked workers draw from (inherited, never pickled)
# a figure to draw: (name, function(data, *args, **kwargs) -> Figure, args, kwargs, formats)
Job = tuple[str, Callable[..., Figure], tuple, dict, tuple[str, ...]]


def _render_one(job: Job, out_dir: Path) -> list[Path]:
    name, draw, args, kwargs, formats = job
    return save(draw(_RENDER_DATA, *args, **kwargs), out_dir, name, formats)


def render(data: RunSet, out_dir: Path, jobs: list[Job], workers: int | None = None) -> dict[str, list[Path]]:
    """Draws and saves each job (name, figure function, its arguments after DATA, its keywords, formats), in
    the jobs' order (a function of a module, so that it reaches a forked worker by its name). Figures are independent and drawing them is CPU work in matplotlib (text
    layout, ticks, rasterising): WORKERS processes (default: the CPUs this process may use, at most 4) draw
    them side by side, forked so that DATA is shared, not copied through a pipe. Where fork is not there, or
    a worker dies, they are drawn here, one after the other."""
    import os

    global _RENDER_DATA
    if workers is None:
        workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4)
    workers = min(workers, len(jobs))
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        if "fork" in multiprocessing.get_all_start_methods():
            _RENDER_DATA = data
            try:
                with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                    done = list(pool.map(_render_one, jobs, [out_dir] * len(jobs)))
                return {job[0]: paths for job, paths in zip(jobs, done)}
            except (BrokenProcessPool, OSError):
                pass                     # drawn here instead
            finally:
                _RENDER_DATA = None
    _RENDER_DATA = data
    try:
        return {job[0]: _render_one(job, out_dir) for job in jobs}
    finally:
        _RENDER_DATA = None
