"""The load CDF figure (the figures 6-9 of Liu et al., "Implementing Hybrid Operating Systems with Two-Level Hardware
Interrupts"): latency CDFs, one line per PC load condition, one panel per experiment, and the grouping it draws
(experiment_key, experiment_title, load_cdf_panels), which the GUI's compare window draws with pyqtgraph as well.
Split out of plots.py, which re-exports every name here (callers keep `plots.load_cdf`,
`mmanalysis.plots.load_cdf_panels`...) and draws it in all_figures.

The helpers it shares with plots.py (the runs' order, axis_fraction, us_text) are in plotbase.py, which both
import at their top.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from . import axes as fit
from . import canvas
from .plotbase import EXPERIMENT_ORDER, axis_fraction, ordered_runs, us_text
from .reader import RunSet, profiler_kind
from .schema import LOAD_CONDITIONS, MEASURED, load_condition


LOAD_COLORS = {"idle": "black", "cpu": "tab:red", "memory": "tab:blue", "disk": "tab:orange",
               "network": "tab:purple", "heavy": "tab:olive", "all": "tab:brown"}


GENERATION_WORDS = {"aligned": "tick-aligned generation", "free": "free-running generation",
                    "periodic": "periodic series"}


def experiment_key(meta: dict, kinds: int = 1) -> tuple[str, int, str, str]:
    """The experiment a run belongs to, as the report's tables split them (report.comparison): mode and
    distance; in mixed mode the event generation too (tick-aligned and free-running 1-ahead runs are two
    experiments: one leaves the SCHEDULE a whole tick, the other is the paper's method); and the profiler
    kind where KINDS > 1 (avr and 8051 stamps are never pooled). The load condition is not in it: it is
    what a load CDF compares inside one experiment. Missing parts are ""."""
    cfg = meta.get("config", {}) or {}
    mode = str(cfg.get("mode"))
    gen = str(cfg.get("generation") or "aligned") if mode == "mixed" else ""
    return (mode, int(cfg.get("distance") or 0), gen, profiler_kind(meta) if kinds > 1 else "")


def experiment_title(key: tuple[str, int, str, str]) -> str:
    mode, distance, gen, kind = key
    words = [f"{mode} mode, {distance} tick{'s' if distance != 1 else ''} ahead"]
    if gen:
        words.append(GENERATION_WORDS.get(gen, f"generation {gen}"))
    if kind:
        words.append(f"profiler {kind}")
    return ", ".join(words)


def load_cdf_panels(data: RunSet, runs: list[str] | None = None
                    ) -> dict[tuple[str, int, str, str], dict[str, np.ndarray]]:
    """experiment_key -> load condition -> the sorted latencies (us, > 0) of the measured events of RUNS
    pooled per condition: what load_cdf draws, one panel each. Only experiments with measured events are
    there (no empty panel); experiments in the paper's order, conditions in LOAD_CONDITIONS' order."""
    df = data.df
    measured_rows = df["outcome"].isin(MEASURED).to_numpy() & df["measurable"].to_numpy(dtype=bool)
    run_col = df["run"].to_numpy()
    lat_col = df["latency_us"].to_numpy(dtype=float)
    chosen = ordered_runs(data, runs)
    kinds = len({profiler_kind(data.meta[r]) for r in chosen})
    groups: dict[tuple[str, int, str, str], dict[str, list[np.ndarray]]] = {}
    for run in chosen:
        lat = lat_col[measured_rows & (run_col == run)]
        lat = lat[lat > 0]                                   # a log axis
        if not len(lat):
            continue
        key = experiment_key(data.meta[run], kinds)
        cond = load_condition(data.meta[run].get("config", {}).get("load"))
        groups.setdefault(key, {}).setdefault(cond, []).append(lat)

    def order(c: str) -> tuple[int, str]:
        return (LOAD_CONDITIONS.index(c) if c in LOAD_CONDITIONS else len(LOAD_CONDITIONS), c)
    gen_order = {"": 0, "aligned": 0, "free": 1, "periodic": 2}
    out = {}
    for key in sorted(groups, key=lambda k: (EXPERIMENT_ORDER.get(k[0], 9), k[1], gen_order.get(k[2], 3), k[2], k[3])):
        out[key] = {c: np.sort(np.concatenate(groups[key][c])) for c in sorted(groups[key], key=order)}
    return out


def load_cdf(data: RunSet, runs: list[str] | None = None, min_conditions: int = 2):
    """Latency CDFs, one line per load condition, one panel per experiment (load_cdf_panels: mode, distance,
    generation: the aligned and the free-running runs are never pooled), each panel on a latency axis of its
    own (normal mode's milliseconds and the executor's microseconds side by side on one axis would leave
    both a sliver); each line's min and max marked with a dot and labelled. The labels never overlap: each
    gets a row of its own (min labels stacked up from the bottom, max labels down from the top, joined to
    their dot by a thin line). Only experiments measured under MIN_CONDITIONS load conditions or more get a
    panel (one line compares nothing, and the run's CDF is in `cdf` already); with none, the figure says so
    in one panel, and all_figures leaves it out."""
    groups = {k: v for k, v in load_cdf_panels(data, runs).items() if len(v) >= min_conditions}
    n = max(len(groups), 1)
    fig = Figure(figsize=(9, 3.3 * n))
    axes = fig.subplots(n, 1, squeeze=False)[:, 0]
    if not groups:
        axes[0].text(0.5, 0.5, f"no experiment measured under {min_conditions} load conditions or more",
                     ha="center", transform=axes[0].transAxes)
    for ax, (key, conds) in zip(axes, groups.items()):
        panel = np.concatenate(list(conds.values()))
        sc = fit.fit_scale([float(panel.min()), float(panel.max())])
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
                left = axis_fraction(sc, x) < 0.5      # the label reads into the axes, 6 points beside its dot
                ax.plot([x], [yy], "o", color=color, ms=5, zorder=3)
                ax.annotate(f"{what} {us_text(x)} us", (x, yy), xytext=(6 if left else -6, ty),
                            textcoords=("offset points", "data"), ha="left" if left else "right", va="center",
                            fontsize=7, color=color,
                            arrowprops=dict(arrowstyle="-", color=color, lw=0.5, relpos=(0.0 if left else 1.0, 0.5)),
                            bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.6))
        fit.apply(ax, sc, "x")
        ax.set_ylim(0, 105)
        ax.set_ylabel("events <= x (%)")
        ax.set_xlabel("latency (us" + (", log" if sc.log else "") + ")", fontsize=8)
        ax.set_title(f"{experiment_title(key)}: latency by PC load", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        canvas.beside(ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="PC load",
                                title_fontsize=7))
    fig.suptitle("cumulative distribution of latency per load condition (ok + late, measurable events)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / fig.get_size_inches()[1]))   # the suptitle's own band
    return canvas.fit(fig)
