"""A run's worst case over time, as OSADL's QA farm shows a system's after long runs: the maxima of consecutive
intervals against the run's time, and the long-term histogram in 1 us bins on a log count axis.

- worst_over_time:     max and p99 of each interval of the run's time (the sidecar's `maxima`, mmanalysis.maxima;
                       recomputed from the CSV for a run written before it), the run's phases (the sidecar's
                       `phases`, when it has them) shaded and named, the late bound where the data comes near it;
                       a run of one interval says so on the figure
- long_term_histogram: every measured latency in bins of 1 us from 0 to the run's maximum, log counts, no overflow
                       bin (OSADL's long-term plot: the whole tail, however far it reaches)

Both over the measured events (ok and late, measurable: mmanalysis.latstats), one figure per run. Artists carry
gid "run:NAME" (the lines and bins), "phase:NAME" (a phase's band) and "note:one-interval" (figure tests read them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import StepPatch

from . import axes as fit
from . import canvas
from .histogram import bin_counts
from .latstats import measured
from .maxima import DEFAULT_EVERY_S, maxima_of_rows
from .plotbase import us_text
from .reader import RunSet
from .schema import DEFAULT_LATE_BOUND_US

LONG_TERM_BIN_US = 1.0          # OSADL's long-term histogram: 1 us bins
MAX_COLOR, P99_COLOR = "tab:red", "tab:blue"


def run_maxima(data: RunSet, run: str) -> dict[str, Any]:
    """RUN's worst case over time: its sidecar's `maxima`, or, for a run written before the sidecar had it, the
    same from its CSV at the default interval (times from the first scheduled tick: `clock` "first tick")."""
    meta = data.meta[run]
    if isinstance(meta.get("maxima"), dict):
        return meta["maxima"]
    tb = meta["timebase"]
    df = data.df[data.df["run"] == run]
    return maxima_of_rows(df.itertuples(), DEFAULT_EVERY_S, tb["tick_counts"] / tb["timer_hz"], tb["timer_hz"])


def profiler_cells(meta: dict[str, Any]) -> tuple[np.ndarray, float, int, int, float] | None:
    """A run on the profiler's histogram alone: (its cells of 1 us up to the highest holding a latency, the run's
    maximum, the latencies counted, those in the overflow cell, where the overflow begins in us) from its
    sidecar's `histogram`; None for any other run or one with nothing counted."""
    h = meta.get("histogram") or {}
    s = meta.get("summary") or {}
    if not s.get("from_profiler_histogram") or abs(float(h.get("bin_us") or 0) - LONG_TERM_BIN_US) > 1e-9:
        return None
    counts = np.asarray(h.get("counts") or [], dtype=float)
    over = int(h.get("overflow") or 0)
    n = int(counts.sum()) + over
    if not n or s.get("max_us") is None:
        return None
    full = np.flatnonzero(counts)
    return (counts[:(int(full[-1]) + 1 if full.size else 1)], float(s["max_us"]), n, over,
            float(h.get("range_us") or len(counts) * LONG_TERM_BIN_US))


def time_unit(span_s: float) -> tuple[str, float]:
    """The unit a time axis of SPAN_S seconds reads best in: s up to 10 min, min up to 10 h, then h."""
    return ("s", 1.0) if span_s <= 600 else ("min", 60.0) if span_s <= 36_000 else ("h", 3600.0)


def duration_text(seconds: float) -> str:
    """An interval for a label: '5 min', '1 h', '90 min', '10 s', '0.5 s'."""
    for unit, scale in (("h", 3600.0), ("min", 60.0)):
        if seconds >= scale and seconds % scale == 0:
            return f"{seconds / scale:g} {unit}"
    return f"{seconds:g} s"


def _shade_phases(ax, phases: list[dict[str, Any]], scale: float) -> None:
    """Each phase a band of its own shade (alternating, so neighbours stay apart), its name at the top."""
    strip = ax.get_xaxis_transform()
    for k, p in enumerate(phases):
        try:
            start, end = float(p["start_s"]) / scale, float(p["end_s"]) / scale
        except (KeyError, TypeError, ValueError):
            continue            # a phase without both ends (a run cut short in it): nothing to draw
        name = str(p.get("name") or p.get("condition") or f"phase {k + 1}")
        ax.axvspan(start, end, color="0.88" if k % 2 == 0 else "0.95", zorder=0, lw=0, gid=f"phase:{name}")
        ax.text((start + end) / 2, 0.98, name, transform=strip, ha="center", va="top", fontsize=7, color="0.3",
                clip_on=True)


def worst_over_time(data: RunSet, run: str) -> Figure:
    """Max and p99 of each interval as steps across the run's time (an interval without a measured event: a gap),
    each interval's max marked at its worst; phases shaded; a run of one interval noted as such."""
    meta = data.meta[run]
    m = run_maxima(data, run)
    iv = list(m["intervals"])
    every = float(m["every_s"])
    phases = meta.get("phases") if isinstance(meta.get("phases"), list) else []
    ends = [float(p["end_s"]) for p in phases if isinstance(p, dict) and isinstance(p.get("end_s"), (int, float))]
    end = max([iv[-1]["end_s"] if iv else every, *ends])     # the whole run: a last phase may end past its events
    unit, scale = time_unit(end)
    edges = np.array([iv[0]["start_s"]] + [i["end_s"] for i in iv] if iv else [0.0, every]) / scale
    nan = float("nan")
    maxes = np.array([nan if i["max_us"] is None else i["max_us"] for i in iv], dtype=float)
    p99s = np.array([nan if i["p99_us"] is None else i["p99_us"] for i in iv], dtype=float)
    fig = Figure(figsize=(9, 3.8))
    ax = fig.subplots()
    _shade_phases(ax, phases, scale)
    if iv:
        # (baseline None: no edges down to 0 at either end, only the steps)
        ax.stairs(maxes, edges, baseline=None, color=MAX_COLOR, lw=1.8, label="max of the interval", gid=f"run:{run}")
        ax.stairs(p99s, edges, baseline=None, color=P99_COLOR, lw=1.2, ls="--", label="p99 of the interval",
                  gid=f"run:{run}")
        mid = (edges[:-1] + edges[1:]) / 2
        ax.plot(mid, maxes, "o", ms=3.5, color=MAX_COLOR, gid=f"run:{run}")
    values = np.concatenate([maxes[~np.isnan(maxes)], p99s[~np.isnan(p99s)]])
    bound = float(meta.get("config", {}).get("late_bound_us") or DEFAULT_LATE_BOUND_US)
    sc = fit.fit_scale(values)
    if len(values) and values.max() >= bound / 10:       # the late bound only where the data comes near it
        ax.axhline(bound, color="k", lw=0.8, ls=":", label=f"late bound ({us_text(bound)} us)")
        sc = fit.fit_scale(np.append(values, bound))
    fit.apply(ax, sc, "y")
    if sc.log:                                           # room above the highest step for the phases' names
        ax.set_ylim(sc.lo, sc.hi * (sc.hi / sc.lo) ** 0.12)
    elif sc.hi > sc.lo:
        ax.set_ylim(sc.lo, sc.hi + (sc.hi - sc.lo) * 0.15)
    ax.set_xlim(min(0.0, edges[0]), end / scale)
    counted = sum(i["count"] for i in iv)
    if len(iv) == 1:
        ax.text(0.5, 0.12, f"one interval: the run's {counted} measured events all lie in its first "
                f"{duration_text(every)} (mmrig run --maxima-every sets the interval)", transform=ax.transAxes,
                ha="center", va="center", fontsize=8, gid="note:one-interval", wrap=True,
                bbox=dict(boxstyle="square,pad=0.3", fc="white", ec="0.6", alpha=0.9))
    elif not iv:
        ax.text(0.5, 0.5, "no measured events", transform=ax.transAxes, ha="center", va="center", fontsize=8)
    clock = ("time since generation started" if m.get("clock") == "run"
             else "time since the first scheduled tick")
    ax.set_xlabel(f"{clock} ({unit}); intervals of {duration_text(every)}")
    ax.set_ylabel("latency (us" + (", log" if sc.log else "") + ")")
    whose = ("counted by the profiler; intervals between its reports" if m.get("from") == "profiler reports"
             else "measurable")
    ax.set_title(f"the worst case over time: {run} (measured events: ok + late, {whose}; n={counted})", fontsize=9)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        canvas.beside(ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0)))
    return canvas.fit(fig)


def long_term_histogram(data: RunSet, run: str) -> Figure:
    """Every measured latency in 1 us bins from 0 to the run's maximum (no overflow), log counts; the maximum
    marked and labelled."""
    df = data.df[data.df["run"] == run]
    values = measured(df)["latency_us"].to_numpy(dtype=float)
    cells = profiler_cells(data.meta[run]) if not len(values) else None
    fig = Figure(figsize=(9, 3.6))
    ax = fig.subplots()
    n = len(values) if cells is None else cells[2]
    if len(values) or cells is not None:
        if cells is None:
            top = float(values.max())
            bins = max(int(np.floor(top / LONG_TERM_BIN_US)) + 1, 1)
            counts, _over, _under = bin_counts(values, LONG_TERM_BIN_US, bins)
            counts = np.asarray(counts, dtype=float)
        else:                    # the profiler's own 1 us cells, up to the highest one holding a latency
            counts, top, _n, over, past = cells
            bins = len(counts)
            if over:
                ax.text(0.99, 0.85, f"{over} past {us_text(past)} us (the profiler's overflow "
                        f"cell), the largest {us_text(top)} us", transform=ax.transAxes, ha="right", va="top",
                        fontsize=7, color=MAX_COLOR)
        edges = np.arange(bins + 1, dtype=float) * LONG_TERM_BIN_US
        # the bins as one step patch added as an artist, out of the layout: Axes.stairs would walk its path's 2 x
        # bins segments to update the data limits (set below anyway), and the layout once more, 3 of the 4 s a
        # normal-mode run's 39,000 bins took to draw
        steps = StepPatch(np.where(counts > 0, counts, 0.8), edges, baseline=0.8, color="tab:green", lw=1.2,
                          fill=True, alpha=0.8, gid=f"run:{run}")
        steps.set_in_layout(False)
        ax.add_artist(steps)
        # each non-empty bin also as a line of at least a pixel: across a normal-mode run's tens of ms a 1 us bin is
        # a fraction of a pixel wide (39,000 bins on 900 px) and a bin of a few events would not be drawn at all
        full = np.flatnonzero(counts)
        ax.vlines(edges[full] + LONG_TERM_BIN_US / 2, 0.8, counts[full], color="tab:green", lw=1.0,
                  gid=f"bins:{run}")
        ax.set_yscale("log")
        ax.axvline(top, color=MAX_COLOR, lw=0.8, ls="--", gid="max")
        ax.text(top, 0.97, f" max {us_text(top)} us", transform=ax.get_xaxis_transform(), ha="right", va="top",
                fontsize=7, color=MAX_COLOR)
        ax.set_xlim(0, max(edges[-1], top) * 1.02)          # (the overflow's largest past the cells)
        top_count = max(counts.max() * 3, 10.0)            # a decade at least: a run of single events reads too
        ax.set_ylim(0.8, top_count)
        decades = np.log10(top_count / 0.8)               # labels at 1, 2, 5 where the counts span few decades
        ax.yaxis.set_major_locator(fit.LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades < 3 else (1.0,)))
    else:
        ax.text(0.5, 0.5, "no measured events", transform=ax.transAxes, ha="center", va="center", fontsize=8)
    if not n:
        ax.set_yscale("log")
    ax.yaxis.set_major_formatter(fit.FuncFormatter(lambda v, _pos: fit.number_text(v)))
    ax.yaxis.set_minor_formatter(fit.NullFormatter())
    ax.set_xlabel(f"latency (us): bins of {LONG_TERM_BIN_US:g} us from 0 to the maximum"
                  + ("" if cells is None else ": the profiler's own cells"), fontsize=8)
    ax.set_ylabel("events (log)")
    ax.set_title(f"long-term latency histogram: {run} (n={n}, measured events: ok + late"
                 + (", measurable)" if cells is None else ", counted by the profiler)"), fontsize=9)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    fig.tight_layout()
    return canvas.fit(fig)


__all__ = ["LONG_TERM_BIN_US", "long_term_histogram", "run_maxima", "worst_over_time"]
