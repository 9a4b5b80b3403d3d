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
- histogram:    latency histogram with log counts (OSADL style), one step curve per run, bins from the data
- cdf:          share of events <= x, min and max marked and labelled per run, the paper's means as lines
- load_cdf:     one CDF per PC load condition, one panel per mode and distance (seeds/003's figures 6-9)
- compare:      runs side by side on one latency axis, each run's mean and variance under it, the paper's
                mean of its experiment as a black bar
- slack:        mixed mode: how long each SCHEDULE took to reach the executor, and the slack it had left against
                the tick phase it was created at (missed events on the zero line: no slack)
- missed_phase: mixed mode: ok and missed events by the tick phase they were created at (the demo's text bars)
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from . import axes as fit
from .latstats import measured, variance_text
from .paper import PAPER, PaperRow
from .phasebars import bin_labels, phase_histogram
from .propagation import propagation_ms
from .reader import RunSet, profiler_kind
from .safefiles import atomic_write
from .schema import DEFAULT_LATE_BOUND_US, LOAD_CONDITIONS, MEASURED, load_condition

COLORS = {"ok": "tab:green", "late": "tab:orange", "early": "tab:purple", "missed": "tab:red", "lost": "tab:gray"}


EXPERIMENT_ORDER = {"verification": 0, "normal": 1, "mixed": 2}


def _runs(data: RunSet, runs: list[str] | None) -> list[str]:
    """RUNS as given, or every run in the paper's order: verification, normal, mixed by distance, then loaded."""
    if runs:
        return [r for r in runs if r in data.meta]

    def key(r):
        c = data.meta[r].get("config", {})
        load = load_condition(c.get("load"))
        return (EXPERIMENT_ORDER.get(c.get("mode"), 9), load != "idle",
                LOAD_CONDITIONS.index(load) if load in LOAD_CONDITIONS else 99, c.get("distance") or 0, r)
    return sorted(data.meta, key=key)


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
    return f"{run}{kind}{suffix}"


def _measured(data: RunSet, run: str) -> np.ndarray:
    """The run's measured latencies (ok, late, measurable: mmanalysis.latstats.measured), in event order."""
    df = data.df[data.df["run"] == run]
    return measured(df)["latency_us"].to_numpy(dtype=float)


def _legend(ax, **kw) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def us_text(x: float) -> str:
    """A latency for a label: whole microseconds from 100 us up (29290, not 2.929e+04), else 4 digits."""
    return f"{x:.0f}" if x >= 100 else f"{x:.4g}"


def save(fig, out_dir: Path | str, stem: str, formats=("png", "svg")) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = out_dir / f"{stem}.{fmt}"
        buf = io.BytesIO()              # rendered here, then written as every file of ours is (safefiles)
        fig.savefig(buf, format=fmt, dpi=110, bbox_inches="tight")
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
        ax.plot(t[m], lat[m], ".", ms=3, color=COLORS[o], label=f"{o} ({m.sum()})")
    unmeas = np.isin(outcome, MEASURED) & ~meas
    strip = ax.get_xaxis_transform()         # x in data, y in axes fraction: a strip above the data
    if unmeas.any():
        ax.plot(t[unmeas], np.full(unmeas.sum(), 0.97), "|", color="k", transform=strip,
                label=f"displaced by a host stall ({unmeas.sum()}, left out)")
    for o in ("early", "missed", "lost"):
        m = outcome == o
        if m.any():
            ax.plot(t[m], np.full(m.sum(), 0.97), "v" if o != "early" else "^", color=COLORS[o], transform=strip,
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
    return fig


def histogram(data: RunSet, runs: list[str] | None = None, bins: int = 60):
    """Log counts; the bins span the measured latencies of RUNS (log-spaced where they span decades)."""
    runs = _runs(data, runs)
    colors = run_colors(data)
    fig = Figure(figsize=(8, 3.6))
    ax = fig.subplots()
    per_run = {r: _measured(data, r) for r in runs}
    everything = np.concatenate([v for v in per_run.values() if len(v)] or [np.array([])])
    sc = fit.fit_scale(everything)
    edges = np.geomspace(sc.lo, sc.hi, bins + 1) if sc.log else np.linspace(sc.lo, sc.hi, bins + 1)
    for run, lat in per_run.items():
        if len(lat):
            counts, _ = np.histogram(lat, edges)
            st = ax.stairs(np.where(counts > 0, counts, 0.8), edges, baseline=0.8, color=colors[run], lw=1.4,
                           label=f"{_label(data, run)} (n={len(lat)})")
            st.set_gid(f"run:{run}")
    if not len(everything):
        ax.text(0.5, 0.5, "no measured events", ha="center", transform=ax.transAxes)
    fit.apply(ax, sc, "x")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.yaxis.set_major_formatter(fit.FuncFormatter(lambda v, _pos: fit.number_text(v)))
    ax.set_xlabel("latency (us" + (", log" if sc.log else "") + f"); {bins} bins over the data's range")
    ax.set_ylabel("events (log)")
    ax.set_title("latency histogram (measured events: ok + late, measurable)", fontsize=9)
    _legend(ax, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def _paper_refs(data: RunSet, runs: list[str]) -> list[PaperRow]:
    """The paper's experiments with a mean that RUNS belong to, in the paper's order."""
    keys = {p.key for r in runs if (p := paper_row(data, r)) is not None and p.mean_us is not None}
    return [p for p in PAPER if p.key in keys]


def _axis_fraction(sc: fit.Scale, x: float) -> float:
    """Where X lies along an axis of scale SC, 0 (low end) to 1."""
    if sc.log:
        return float(np.log(x / sc.lo) / np.log(sc.hi / sc.lo))
    return float((x - sc.lo) / (sc.hi - sc.lo)) if sc.hi > sc.lo else 0.5


REF_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))


def cdf(data: RunSet, runs: list[str] | None = None):
    """One step curve per run; its min and max marked and labelled, each label on a row of its own (min labels
    up from the bottom, max labels down from the top, joined to their dot by a thin line), so none overlap;
    the paper's mean of each experiment shown as a grey vertical line."""
    runs = [r for r in _runs(data, runs) if len(_measured(data, r))]
    colors = run_colors(data)
    refs = _paper_refs(data, runs)
    n = max(len(runs), 1)
    fig = Figure(figsize=(9, max(4.2, 0.5 * n + 1.5)))
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
        (line,) = ax.step(xs, ys, where="post", color=color, lw=1.4, label=f"{_label(data, run)} (n={len(lat)})")
        line.set_gid(f"run:{run}")
        for x, yy, what, ty in ((lat[0], y[0], "min", 4 + step * (min_row[run] + 0.5)),
                                (lat[-1], 100.0, "max", 100 - step * (max_row[run] + 0.5))):
            ha = "left" if _axis_fraction(sc, x) < 0.5 else "right"   # the label reads into the axes
            ax.plot([x], [yy], "o", color=color, ms=5, zorder=3, gid=f"run:{run}")
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
    return fig


LOAD_COLORS = {"idle": "black", "cpu": "tab:red", "memory": "tab:blue", "disk": "tab:orange",
               "network": "tab:purple", "heavy": "tab:olive", "all": "tab:brown"}


def load_cdf_data(data: RunSet, runs: list[str] | None = None) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    """(mode, distance) -> load condition -> the sorted latencies (us) of the measured events (ok + late,
    measurable, > 0) of RUNS (default: all) pooled per condition. Groups in the paper's order, conditions in
    LOAD_CONDITIONS' order. What load_cdf draws; a view that draws its own (the GUI) can take it as it is."""
    df = data.df
    measured = df["outcome"].isin(MEASURED).to_numpy() & df["measurable"].to_numpy(dtype=bool)
    groups: dict[tuple[str, int], dict[str, list[np.ndarray]]] = {}
    for run in _runs(data, runs):
        cfg = data.meta[run].get("config", {})
        m = measured & (df["run"] == run).to_numpy()
        lat = df["latency_us"].to_numpy()[m]
        lat = lat[lat > 0]                                   # a log axis
        if not len(lat):
            continue
        key = (str(cfg.get("mode")), int(cfg.get("distance") or 0))
        groups.setdefault(key, {}).setdefault(load_condition(cfg.get("load")), []).append(lat)

    def order(c: str) -> tuple[int, str]:
        return (LOAD_CONDITIONS.index(c) if c in LOAD_CONDITIONS else len(LOAD_CONDITIONS), c)
    out = {}
    for key in sorted(groups, key=lambda k: (EXPERIMENT_ORDER.get(k[0], 9), k[1])):
        out[key] = {c: np.sort(np.concatenate(groups[key][c])) for c in sorted(groups[key], key=order)}
    return out


def load_cdf(data: RunSet, runs: list[str] | None = None):
    """Latency CDFs, one line per load condition, one panel per (mode, distance), on one log time axis shared
    by every panel; each line's min and max marked with a dot and labelled. The labels never overlap: each
    gets a row of its own (min labels stacked up from the bottom, max labels down from the top, joined to
    their dot by a thin line)."""
    groups = load_cdf_data(data, runs)
    n = max(len(groups), 1)
    fig = Figure(figsize=(9, 3.6 * n))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    if not groups:
        axes[0].text(0.5, 0.5, "no measured events", ha="center", transform=axes[0].transAxes)
    all_lat = np.concatenate([lat for g in groups.values() for lat in g.values()]) if groups else np.array([1.0])
    lo, hi = float(all_lat.min()), float(all_lat.max())
    sc = fit.fit_scale([lo, hi])
    for ax, ((mode, distance), conds) in zip(axes, groups.items()):
        step = min(7.0, 44.0 / max(len(conds), 1))          # % of the axis per label row
        # rows: the largest min nearest the bottom, the smallest max nearest the top, so that no leader line
        # (vertical, from a label's edge to its dot) runs through a label between it and its dot
        names = list(conds)
        min_row = {c: r for r, c in enumerate(sorted(names, key=lambda c: -conds[c][0]))}
        max_row = {c: r for r, c in enumerate(sorted(names, key=lambda c: conds[c][-1]))}
        for i, (cond, lat) in enumerate(conds.items()):
            color = LOAD_COLORS.get(cond, f"C{i}")
            y = np.arange(1, len(lat) + 1) / len(lat) * 100
            ax.step(lat, y, where="post", color=color, lw=1.4, label=f"{cond} (n={len(lat)})")
            for x, yy, what, ty in ((lat[0], y[0], "min", 4 + step * (min_row[cond] + 0.5)),
                                    (lat[-1], 100.0, "max", 100 - step * (max_row[cond] + 0.5))):
                left = _axis_fraction(sc, x) < 0.5      # the label reads into the axes, 6 points beside its dot
                ax.plot([x], [yy], "o", color=color, ms=5, zorder=3)
                ax.annotate(f"{what} {us_text(x)} us", (x, yy), xytext=(6 if left else -6, ty),
                            textcoords=("offset points", "data"), ha="left" if left else "right", va="center",
                            fontsize=7, color=color,
                            arrowprops=dict(arrowstyle="-", color=color, lw=0.5, relpos=(0.0 if left else 1.0, 0.5)),
                            bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.6))
        ax.set_ylim(0, 105)
        ax.set_ylabel("events <= x (%)")
        ax.set_title(f"{mode} mode, {distance} tick{'s' if distance != 1 else ''} ahead: latency by PC load",
                     fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="PC load", title_fontsize=7)
    for ax in axes:
        fit.apply(ax, sc, "x")
    axes[-1].set_xlabel("latency (us" + (", log" if sc.log else "") + ")")
    fig.suptitle("cumulative distribution of latency per load condition (ok + late, measurable events)", fontsize=9)
    fig.tight_layout()
    return fig


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
                    gid=f"run:{run}")
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
    return fig


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
    creation phase. Colour: the run; marker: the outcome."""
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
            ax2.plot(phase[m], y, "x" if o in ("missed", "lost") else ".", color=colors[run],
                     ms=5 if o in ("missed", "lost") else 3, gid=f"run:{run}")
        if len(df):
            ax2.plot([], [], "s", color=colors[run], label=_label(data, run))
    for o, k in outcome_seen.items():
        words = {"missed": "missed: no slack left (without an ACK phase: on the zero line)",
                 "lost": "lost (without an ACK phase: on the zero line)"}
        ax2.plot([], [], "x" if o in ("missed", "lost") else ".", color="k",
                 label=f"{words.get(o, o)} ({k})")
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
    return fig


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
    return fig


def all_figures(data: RunSet, out_dir: Path | str, runs: list[str] | None = None) -> dict[str, list[Path]]:
    """Every figure for RUNS (default: all), as PNG and SVG under OUT_DIR. Returns name -> paths."""
    runs = _runs(data, runs)
    out: dict[str, list[Path]] = {}
    out["cdf"] = save(cdf(data, runs), out_dir, "cdf")
    out["load-cdf"] = save(load_cdf(data, runs), out_dir, "load-cdf")
    out["histogram"] = save(histogram(data, runs), out_dir, "histogram")
    out["compare"] = save(compare(data, runs), out_dir, "compare")
    out["slack"] = save(slack(data, runs), out_dir, "slack")
    out["missed-phase"] = save(missed_phase(data, runs), out_dir, "missed-phase")
    for run in runs:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run)
        out[f"timeline-{safe}"] = save(timeline(data, run), out_dir, f"timeline-{safe}")
    return out
