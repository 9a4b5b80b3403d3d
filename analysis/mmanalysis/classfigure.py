"""The class report's figure for a class of many groups: one experiment, one row a group and variant, its
latencies as a range (min to max) with p50 and p99 marked, the key's rows on top, the paper's mean as a line.

A CDF with a line a group stops reading past a few groups (20 groups with task and ISR dispatch were 41 lines,
their legend beside the axes longer than the plot); here each group is a row of its own whatever the class's
size, the figure grows with the rows, and its legend (what the marks mean, four entries) sits inside the axes
in a band above the rows, where no row is drawn. Rows without a result say why (missing, unreadable, no valid
run) in grey at their place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from . import axes as fit
from . import canvas
from .latstats import measured
from .paper import PaperRow
from .reader import RunSet

ROW_IN = 0.22          # inches a row: 20 groups with two designs each fit a 10-inch figure
LEGEND_ROWS = 1.6      # the empty band above the rows the legend sits in: rows of the figure per legend row
LEGEND_COLUMNS = 4
VARIANT_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:olive")
KEY_SHADE = "#eef3fb"


@dataclass(frozen=True)
class Band:
    """One row of the figure: its label, its variant (the colour), its measured latencies (empty: WHY instead)."""
    label: str
    variant: str
    latencies: np.ndarray
    why: str = ""
    key: bool = False


def band(label: str, variant: str, data: RunSet, runs: list[str], why: str = "", key: bool = False) -> Band:
    """RUNS' measured latencies (ok and late, measurable) pooled under LABEL."""
    if not runs:
        return Band(label, variant, np.array([]), why or "no run", key)
    rows = measured(data.df[data.df["run"].isin(runs)])
    return Band(label, variant, rows["latency_us"].to_numpy(dtype=float), why, key)


def summary_figure(p: PaperRow, bands: list[Band]) -> Figure:
    """P's figure: a row per band (top to bottom in BANDS' order), the paper's mean as a dashed line."""
    n = max(len(bands), 1)
    variants = list(dict.fromkeys(b.variant for b in bands))
    entries = 4 + (p.mean_us is not None) + len(variants)
    band_rows = LEGEND_ROWS * -(-entries // LEGEND_COLUMNS)       # the legend's rows, in rows of the figure
    fig = Figure(figsize=(9.0, 1.4 + ROW_IN * (n + band_rows)))
    ax = fig.add_subplot(1, 1, 1)
    color = {v: VARIANT_COLORS[i % len(VARIANT_COLORS)] for i, v in enumerate(variants)}
    values = [x for b in bands for x in b.latencies[np.isfinite(b.latencies)]]
    if p.mean_us is not None:
        values.append(p.mean_us)
    scale = fit.fit_scale(values or [1.0])
    for i, b in enumerate(bands):
        y = n - 1 - i
        if b.key:
            ax.axhspan(y - 0.5, y + 0.5, color=KEY_SHADE, zorder=0, gid=f"key:{b.label}")
        if not len(b.latencies):
            ax.text(0.01, y, b.why, transform=ax.get_yaxis_transform(), va="center", ha="left", fontsize=7,
                    color="0.45", gid=f"absent:{b.label}")
            continue
        lat = b.latencies
        lo, p50, p99, hi = (float(np.percentile(lat, q)) for q in (0, 50, 99, 100))
        c = color[b.variant]
        ax.plot([lo, hi], [y, y], color=c, lw=1.2, gid=f"run:{b.label}", solid_capstyle="butt")
        ax.plot([hi], [y], "|", color=c, ms=8, mew=1.5)
        ax.plot([p50], [y], "o", color=c, ms=4.5)
        ax.plot([p99], [y], "D", mfc="white", mec=c, ms=4.5)
    if p.mean_us is not None:
        ax.axvline(p.mean_us, color="black", ls="--", lw=0.9, gid=f"ref:{p.key}")
    fit.apply(ax, scale, "x")
    ax.set_ylim(-0.7, n - 0.5 + band_rows)
    ax.set_yticks(range(n), [b.label for b in reversed(bands)], fontsize=7)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlabel("latency (us" + (", log)" if scale.log else ")"))
    handles = [ax.plot([], [], "-", color="0.3", lw=1.2)[0], ax.plot([], [], "o", color="0.3", ms=4.5)[0],
               ax.plot([], [], "D", mfc="white", mec="0.3", ms=4.5)[0], ax.plot([], [], "|", color="0.3", ms=8)[0]]
    labels = ["min to max", "p50", "p99", "max"]
    if p.mean_us is not None:
        handles.append(ax.plot([], [], "--", color="black", lw=0.9)[0])
        labels.append(f"paper: mean {p.mean_us:g} us")
    handles += [ax.plot([], [], "s", color=color[v], ms=6)[0] for v in variants]
    labels += variants
    ax.legend(handles, labels, loc="upper center", ncol=min(len(labels), LEGEND_COLUMNS), fontsize=7, frameon=True,
              framealpha=0.95, borderaxespad=0.3, handlelength=1.5, columnspacing=1.0)
    ax.set_title(f"{p.section} {p.experiment}: latency per group (ok + late, measurable events); the key's rows "
                 "shaded", fontsize=9)
    return canvas.fit(fig)
