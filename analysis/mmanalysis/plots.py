"""Figures (matplotlib, Agg): each function returns a Figure; save() writes it as PNG and SVG.

Figures are built with matplotlib.figure.Figure, never pyplot: no GUI backend is touched (headless, CI),
savefig renders with Agg (PNG) and the SVG backend, and in Jupyter a returned Figure displays inline.

- timeline:  latency over time, one run (log y), late bound and non-measured outcomes marked
- histogram: latency histogram with log counts (OSADL style), one step curve per run
- cdf:       share of events <= x on a log time axis, min and max marked per run (seeds/003 style)
- load_cdf:  one CDF per PC load condition (idle, cpu, memory, disk, network, heavy, all), one panel per mode and
             distance, one log time axis, min and max of each marked and labelled (seeds/003's figures 6-9)
- compare:   runs side by side, shared log latency axis (normal vs mixed, 1 vs 2 ticks, idle vs loaded)
- slack:     mixed mode: propagation delay of SCHEDULE to the executor and the slack left, by outcome,
             which is what explains late and missed events
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .reader import RunSet
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


def _late_bound(data: RunSet, run: str) -> float:
    return float(data.meta[run].get("config", {}).get("late_bound_us") or DEFAULT_LATE_BOUND_US)


def _tick_s(data: RunSet, run: str) -> float:
    tb = data.meta[run]["timebase"]
    return tb["tick_counts"] / tb["timer_hz"]


def _label(data: RunSet, run: str) -> str:
    m = data.meta[run]
    suffix = "" if m.get("valid", True) else " (INVALID)"
    return f"{run}{suffix}"


def _legend(ax, **kw) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def save(fig, out_dir: Path | str, stem: str, formats=("png", "svg")) -> list[Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = out_dir / f"{stem}.{fmt}"
        fig.savefig(p, dpi=110, bbox_inches="tight")
        paths.append(p)
    return paths


def timeline(data: RunSet, run: str):
    df = data.df[data.df["run"] == run]
    fig = Figure(figsize=(8, 3.6))
    ax = fig.subplots()
    tc = df["scheduled_tc"].to_numpy(dtype=float, na_value=np.nan)
    t = (tc - (tc.min() if len(tc) else 0.0)) * _tick_s(data, run)
    lat = df["latency_us"].to_numpy()
    outcome = df["outcome"].astype(str).to_numpy()
    for o in MEASURED:
        m = outcome == o
        ax.plot(t[m], lat[m], ".", ms=3, color=COLORS[o], label=f"{o} ({m.sum()})")
    measured = np.isin(outcome, MEASURED)
    top = np.nanmax(lat[measured]) * 2 if measured.any() else 1e4
    for o in ("early", "missed", "lost"):
        m = outcome == o
        if m.any():
            ax.plot(t[m], np.full(m.sum(), top), "v" if o != "early" else "^", color=COLORS[o],
                    label=f"{o} ({m.sum()}, not a latency)")
    ax.axhline(_late_bound(data, run), color="k", lw=0.8, ls="--", label="late bound")
    ax.set_yscale("log")
    ax.set_xlabel("time since first scheduled tick (s)")
    ax.set_ylabel("latency (us)")
    ax.set_title(f"latency over time: {_label(data, run)}")
    _legend(ax, fontsize=7, loc="upper right")
    return fig


def histogram(data: RunSet, runs: list[str] | None = None, bins: int = 100):
    fig = Figure(figsize=(8, 3.6))
    ax = fig.subplots()
    measured = data.df["outcome"].isin(MEASURED)
    lat_all = data.df.loc[measured, "latency_us"]
    lo, hi = (float(lat_all.min()), float(lat_all.max())) if len(lat_all) else (0.0, 1.0)
    edges = np.linspace(min(lo, 0.0), hi if hi > lo else lo + 1, bins + 1)
    for run in _runs(data, runs):
        m = measured & (data.df["run"] == run)
        lat = data.df.loc[m, "latency_us"].to_numpy()
        if len(lat):
            counts, _ = np.histogram(lat, edges)
            ax.stairs(np.where(counts > 0, counts, 0.8), edges, label=f"{_label(data, run)} (n={len(lat)})",
                      baseline=0.8)
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xlabel("latency (us)")
    ax.set_ylabel("events (log)")
    ax.set_title("latency histogram (ok + late events)")
    _legend(ax, fontsize=7)
    return fig


def cdf(data: RunSet, runs: list[str] | None = None):
    fig = Figure(figsize=(8, 4.2))
    ax = fig.subplots()
    measured = data.df["outcome"].isin(MEASURED)
    for i, run in enumerate(_runs(data, runs)):
        lat = np.sort(data.df.loc[measured & (data.df["run"] == run), "latency_us"].to_numpy())
        lat = lat[lat > 0]  # a log axis; early events are not measured rows anyway
        if not len(lat):
            continue
        y = np.arange(1, len(lat) + 1) / len(lat) * 100
        (line,) = ax.step(lat, y, where="post", label=f"{_label(data, run)} (n={len(lat)})")
        for x, yy, what in ((lat[0], y[0], "min"), (lat[-1], 100.0, "max")):
            ax.plot([x], [yy], "o", color=line.get_color(), ms=5)
            ax.annotate(f"{what} {x:.4g} us", (x, yy), textcoords="offset points", xytext=(4, -10 - 9 * i if what == "max" else 4 + 9 * i),
                        fontsize=7, color=line.get_color())
    ax.set_xscale("log")
    ax.set_ylim(0, 105)
    ax.set_xlabel("latency (us, log)")
    ax.set_ylabel("events with latency <= x (%)")
    ax.set_title("cumulative distribution of latency (ok + late events)")
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax, fontsize=7, loc="lower right")
    return fig


LOAD_COLORS = {"idle": "black", "cpu": "tab:red", "memory": "tab:blue", "disk": "tab:orange",
               "network": "tab:purple", "heavy": "tab:olive", "all": "tab:brown"}


def us_text(x: float) -> str:
    """A latency for a label: whole microseconds from 100 us up (29290, not 2.929e+04), else 4 digits."""
    return f"{x:.0f}" if x >= 100 else f"{x:.4g}"


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
            for x, yy, what, ty, ha in ((lat[0], y[0], "min", 4 + step * (min_row[cond] + 0.5), "left"),
                                        (lat[-1], 100.0, "max", 100 - step * (max_row[cond] + 0.5), "right")):
                ax.plot([x], [yy], "o", color=color, ms=5, zorder=3)
                ax.annotate(f"{what} {us_text(x)} us", (x, yy), xytext=(x, ty), textcoords="data", ha=ha, va="center",
                            fontsize=7, color=color, arrowprops=dict(arrowstyle="-", color=color, lw=0.5),
                            bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.6))
        ax.set_ylim(0, 105)
        ax.set_ylabel("events <= x (%)")
        ax.set_title(f"{mode} mode, {distance} tick{'s' if distance != 1 else ''} ahead: latency by PC load",
                     fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="PC load", title_fontsize=7)
    axes[0].set_xscale("log")
    axes[0].set_xlim(lo / 1.6, hi * 1.6)
    axes[-1].set_xlabel("latency (us, log)")
    fig.suptitle("cumulative distribution of latency per load condition (ok + late, measurable events)", fontsize=9)
    fig.tight_layout()
    return fig


def compare(data: RunSet, runs: list[str] | None = None):
    runs = _runs(data, runs)
    fig = Figure(figsize=(2.6 * max(len(runs), 1) + 1, 3.8))
    axes = fig.subplots(1, max(len(runs), 1), sharey=True,
                             squeeze=False)
    measured = data.df["outcome"].isin(MEASURED)
    for ax, run in zip(axes[0], runs):
        df = data.df[data.df["run"] == run]
        m = measured[df.index]
        lat = df.loc[m, "latency_us"].to_numpy()
        ev = df.loc[m, "event"].to_numpy(dtype=float)
        ax.plot(ev, lat, ".", ms=2)
        ax.axhline(_late_bound(data, run), color="k", lw=0.8, ls="--")
        counts = df["outcome"].value_counts()
        cfg = data.meta[run].get("config", {})
        stats = f"mean {lat.mean():.4g} us\nvar {lat.var(ddof=1) / 1e6:.3g} ms^2" if len(lat) > 1 else "no data"
        lost = ", ".join(f"{o} {int(counts.get(o, 0))}" for o in ("late", "early", "missed", "lost") if counts.get(o, 0))
        ax.set_title(f"{_label(data, run)}\n{cfg.get('mode')} d={cfg.get('distance')} load={load_condition(cfg.get('load'))}",
                     fontsize=8)
        ax.set_xlabel("event\n" + stats.replace("\n", ", ") + ("\n" + lost if lost else ""), fontsize=7)
    axes[0][0].set_yscale("log")
    axes[0][0].set_ylabel("latency (us, log)")
    fig.suptitle("runs side by side (ok + late events; dashed: late bound)", fontsize=9)
    fig.tight_layout()
    return fig


def slack(data: RunSet, runs: list[str] | None = None):
    """Mixed runs: propagation delay (creation -> ACK at the executor) and slack_ticks, by outcome.

    A row with ACK.timecode but no phase (e.g. a refused, past_due event) gives a bound only:
    slack <= scheduled_tc - ack_tc, drawn as a left-pointing triangle; it is left out of the propagation histogram."""
    fig = Figure(figsize=(10, 4))
    (ax1, ax2) = fig.subplots(1, 2)
    any_data = False
    seen: dict[str, int] = {}
    for run in _runs(data, runs):
        df = data.df[(data.df["run"] == run) & data.df["ack_tc"].notna()]
        if df.empty:
            continue
        any_data = True
        tick_ms = _tick_s(data, run) * 1e3
        created = df["created_tc"].to_numpy(dtype=float) + df["created_phase"].to_numpy()
        ack_tc = df["ack_tc"].to_numpy(dtype=float, na_value=np.nan)
        phase = df["ack_phase"].to_numpy()
        exact = ~np.isnan(phase)
        prop_ms = (ack_tc + np.where(exact, phase, 0.0) - created) * tick_ms
        ok_prop = exact & ~np.isnan(prop_ms)
        if ok_prop.any():
            ax1.hist(prop_ms[ok_prop], bins=40, histtype="step", label=_label(data, run))
        outcome = df["outcome"].astype(str).to_numpy()
        sl = df["slack_ticks"].to_numpy()
        sl = np.where(np.isnan(sl), df["scheduled_tc"].to_numpy(dtype=float) - ack_tc, sl)
        lat = df["latency_us"].to_numpy()
        for o, color in COLORS.items():
            for bound in (False, True):
                mm = (outcome == o) & (exact != bound)
                if not mm.any():
                    continue
                y = np.where(np.isnan(lat[mm]) | (lat[mm] <= 0), 1e5, lat[mm])  # no latency: drawn on the top line
                key = (o, bound)
                seen[key] = seen.get(key, 0) + int(mm.sum())
                ax2.plot(sl[mm], y, _marker(o, bound), color=color, ms=4)
    for (o, bound), k in seen.items():
        ax2.plot([], [], _marker(o, bound), color=COLORS[o],
                 label=f"{o} ({k})" + (": slack <= x, ACK without phase" if bound else ""))
    if not any_data:
        for ax in (ax1, ax2):
            ax.text(0.5, 0.5, "no mixed-mode run with ACK data", ha="center", transform=ax.transAxes)
    else:
        ax1.axvline(_tick_s(data, data.runs[0]) * 1e3, color="k", ls="--", lw=0.8, label="one tick")
    ax1.set_xlabel("propagation delay, creation -> executor ACK (ms)")
    ax1.set_ylabel("events")
    ax1.set_title("how long SCHEDULE took to reach the executor")
    _legend(ax1, fontsize=6)
    ax2.axvline(0, color="k", lw=0.8)
    ax2.set_yscale("log")
    ax2.set_xlabel("slack_ticks (time left when the executor had it)")
    ax2.set_ylabel("latency (us); no latency: top line")
    ax2.set_title("slack explains missed (past_due) and late events")
    _legend(ax2, fontsize=6)
    fig.tight_layout()
    return fig


def _marker(outcome: str, bound: bool) -> str:
    if bound:
        return "<"
    return "x" if outcome in ("missed", "lost", "early") else "."


def all_figures(data: RunSet, out_dir: Path | str, runs: list[str] | None = None) -> dict[str, list[Path]]:
    """Every figure for RUNS (default: all), as PNG and SVG under OUT_DIR. Returns name -> paths."""
    runs = _runs(data, runs)
    out: dict[str, list[Path]] = {}
    out["cdf"] = save(cdf(data, runs), out_dir, "cdf")
    out["load-cdf"] = save(load_cdf(data, runs), out_dir, "load-cdf")
    out["histogram"] = save(histogram(data, runs), out_dir, "histogram")
    out["compare"] = save(compare(data, runs), out_dir, "compare")
    out["slack"] = save(slack(data, runs), out_dir, "slack")
    for run in runs:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run)
        out[f"timeline-{safe}"] = save(timeline(data, run), out_dir, f"timeline-{safe}")
    return out
