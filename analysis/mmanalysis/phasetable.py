"""Runs in phases (`mmrig run --phases`, docs/long-runs.md): one row per phase and one for the whole run, from
the CSV, for the report and phases.csv.

A phase's rows are the CSV's events first_event .. last_event of its entry in the sidecar's `phases` (the
scheduler assigned each by the moment the PC did its part for it: mmsched.verdict.phasefigures); an event whose
moment fell in a switch is in no phase's range, in the whole only. Each row's figures are mmanalysis.stats.summarize's, the same as the
run table's; where the sidecar's own per-phase summary disagrees with what the CSV gives, `problems` says so.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import pandas as pd

from .reader import RunSet
from .stats import summarize

HEADERS = ["run", "phase", "condition", "start_s", "end_s", "events", "switch_events", "ok", "late", "early", "missed",
           "lost", "n", "mean_us", "var_us2", "min_us", "p50_us", "p99_us", "p999_us", "max_us"]
WHOLE = "whole"
WORDS = ("Each phase's figures apart, then the whole run's. An event belongs to the phase in which the PC did its "
         "part for it, on the run's clock: in normal mode the moment its FIRE was aimed at, otherwise the moment it "
         "was made; start_s and end_s are the switches as they happened, seconds from the run's start (sent_s's "
         "clock). An event whose moment fell in a switch (the previous stress-ng being stopped, the next one "
         "started: a few ms) is counted in the whole only: switch_events says how many, by the phase switched "
         "into.")


def phased_runs(data: RunSet, runs: list[str]) -> list[str]:
    """RUNS whose sidecar has phases, in their order."""
    return [r for r in runs if isinstance(data.meta[r].get("phases"), list) and data.meta[r]["phases"]]


def _figures(rows: pd.DataFrame) -> dict[str, Any]:
    if rows.empty:
        return {"events": 0, "n": 0}
    return summarize(rows.assign(_part=0), by="_part").iloc[0].to_dict()


def phase_frame(data: RunSet, runs: list[str]) -> pd.DataFrame:
    """One row per phase of each phased run of RUNS, then its whole run: HEADERS' columns."""
    rows = []
    for r in phased_runs(data, runs):
        df = data.df[data.df["run"] == r]
        for p in data.meta[r]["phases"]:
            first, last = p.get("first_event"), p.get("last_event")
            sel = df[(df["event"] >= first) & (df["event"] <= last)] if first is not None else df.iloc[:0]
            rows.append({**_figures(sel), "run": r, "phase": p.get("name"), "condition": p.get("condition"),
                         "start_s": p.get("start_s"), "end_s": p.get("end_s"),
                         "switch_events": p.get("switch_events")})
        whole = _figures(df)
        rows.append({**whole, "run": r, "phase": WHOLE, "condition": "phases",
                     "start_s": min((p["start_s"] for p in data.meta[r]["phases"] if p.get("start_s") is not None),
                                    default=None),
                     "end_s": max((p["end_s"] for p in data.meta[r]["phases"] if p.get("end_s") is not None),
                                  default=None),
                     "switch_events": sum(int(p.get("switch_events") or 0) for p in data.meta[r]["phases"])})
    return pd.DataFrame(rows, columns=HEADERS) if rows else pd.DataFrame(columns=HEADERS)


def _seconds(x: Any) -> Any:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def table_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """The report's rows: the boundaries in ms steps (a switch is ms long), the rest as the report formats it."""
    return [[_seconds(row.get(h)) if h in ("start_s", "end_s") else row.get(h) for h in HEADERS]
            for _, row in frame.iterrows()]


def section(frame: pd.DataFrame, table: Callable[[list[str], list[list[Any]]], str], heading: Callable[[str], str],
            para: Callable[[str], str]) -> list[str]:
    """The report's section of runs in phases (nothing without one), through its TABLE, HEADING and PARA writers
    (Markdown or HTML)."""
    if not len(frame):
        return []
    return [heading("Runs in phases"), para(WORDS), table(HEADERS, table_rows(frame)), ""]


def problems(data: RunSet, frame: pd.DataFrame) -> list[str]:
    """Where a phase's summary in the sidecar disagrees with its rows in the CSV (events, n, mean)."""
    out = []
    for r in phased_runs(data, list(frame["run"].unique()) if len(frame) else []):
        got = frame[frame["run"] == r].set_index("phase")
        for p in data.meta[r]["phases"]:
            s = p.get("summary") or {}
            if p.get("name") not in got.index:
                continue
            row = got.loc[p["name"]]
            if s.get("events") is not None and int(s["events"]) != int(row["events"]):
                out.append(f"{r}, phase {p['name']}: sidecar says {s['events']} events, the CSV has {row['events']}")
            elif s.get("n") is not None and int(s["n"]) != int(row["n"]):
                out.append(f"{r}, phase {p['name']}: sidecar n={s['n']}, the CSV has {row['n']} ok+late rows")
            elif s.get("mean_us") is not None and not math.isclose(s["mean_us"], row["mean_us"], rel_tol=1e-6,
                                                                   abs_tol=1e-6):
                out.append(f"{r}, phase {p['name']}: sidecar mean {s['mean_us']} us, the CSV gives {row['mean_us']} us")
    return out


def headline(frame: pd.DataFrame) -> list[str]:
    """A line per phase for a terminal: its events and latency figures."""
    def us(x: Any) -> str:
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"
    lines = []
    for r in frame["run"].unique() if len(frame) else []:
        lines.append(f"phases of {r} (latency in us):")
        for _, p in frame[frame["run"] == r].iterrows():
            lines.append(f"  {p['phase']:<10} {p['condition']:<8} events {int(p['events']):>6}  n {int(p['n']):>6}  "
                         f"mean {us(p.get('mean_us'))}  p99 {us(p.get('p99_us'))}  max {us(p.get('max_us'))}")
    return lines
