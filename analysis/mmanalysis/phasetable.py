"""Runs in phases (`mmrig run --phases`, docs/long-runs.md): one row per phase and one for the whole run, from
the CSV, for the report and phases.csv.

A phase's rows are the CSV's events first_event .. last_event of its entry in the sidecar's `phases` (the
scheduler assigned each by the moment the PC did its part for it: mmsched.verdict.phasefigures); an event whose
moment fell in a switch is in no phase's range, in the whole only. Each row's figures are mmanalysis.stats.summarize's, the same as the
run table's; where the sidecar's own per-phase summary disagrees with what the CSV gives, `problems` says so.

A run killed on the way is read from its journal (NAME.partial.csv, its sidecar `incomplete`: mmsched.verdict.journal),
whose `phases` were written as the switches happened: boundaries, no event ranges (no event of a phase is known
then). Its rows are found by time instead: a row is in the phase its `sent_s` falls in, the phase the run died in
running to its last row (its end_s null). Such runs are never a result: they get a table of their own
(`tables`), apart from phases.csv, saying so and how their rows were placed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
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
         "into. A run measured by the profiler's histogram alone (--no-raw: no event rows) has its phases from the "
         "profiler's reports, about one a second: what it counted between the first report after a phase began "
         "and the last one before it ended; the events of the reports around a switch are its switch_events.")
JOURNAL_HEADING = "Runs in phases, incomplete (never a result)"
JOURNAL_WORDS = ("Runs whose files were never written (the process killed, the disk full), read from their journal "
                 "(NAME.partial.csv and NAME.partial.json), listed whether shown or not. The journal records each "
                 "phase's start_s and end_s as the switch happens, but no event range, so here a row is in the phase "
                 "its sent_s falls in, from the phase's start_s to its end_s; the phase a run died in has no end_s "
                 "(-) and runs to its last row, and so has the whole. sent_s is when the PC's write for the event "
                 "began: in mixed mode its SCHEDULE, written as the event was made, the moment a complete run's "
                 "phases go by; in normal mode its FIRE, the moment it was aimed at plus the firing thread's wake-up "
                 "lateness (its wake-up column is filled at the run's end only), so an event aimed just before a "
                 "switch and written after it counts in the next phase here, in the previous one in a complete run. "
                 "A row without sent_s (verification mode; a FIRE never written) is in the whole only.")


def phased_runs(data: RunSet, runs: list[str]) -> list[str]:
    """RUNS whose sidecar has phases, in their order."""
    return [r for r in runs if isinstance(data.meta[r].get("phases"), list) and data.meta[r]["phases"]]


def _figures(rows: pd.DataFrame) -> dict[str, Any]:
    if rows.empty:
        return {"events": 0, "n": 0}
    return summarize(rows.assign(_part=0), by="_part").iloc[0].to_dict()


def _ranged(phases: list[dict[str, Any]]) -> bool:
    """A complete run's phases name their event ranges; a journal's have boundaries only."""
    return all("first_event" in p for p in phases)


def _by_range(df: pd.DataFrame, phases: list[dict[str, Any]]) -> list[tuple[pd.DataFrame, int]]:
    """Each phase's rows (its first_event .. last_event) and the events that fell in the switch into it."""
    out = []
    for p in phases:
        first, last = p.get("first_event"), p.get("last_event")
        sel = df[(df["event"] >= first) & (df["event"] <= last)] if first is not None else df.iloc[:0]
        out.append((sel, int(p.get("switch_events") or 0)))
    return out


def _by_time(df: pd.DataFrame, phases: list[dict[str, Any]]) -> list[tuple[pd.DataFrame, int]]:
    """A journal's phases: each phase's rows by sent_s in [start_s, end_s) (an end_s null: the phase the run died
    in, to its last row), and the rows whose sent_s fell in the switch into it (after the previous phase's end_s,
    before its start_s). A row without sent_s, or before the first phase, is in the whole only."""
    sent = pd.to_numeric(df["sent_s"], errors="coerce")
    out, prev_end = [], None
    for p in phases:
        start, end = p.get("start_s"), p.get("end_s")
        if start is None:                            # not begun when the journal ended
            out.append((df.iloc[:0], 0))
            continue
        inside = (sent >= start) & (sent < (math.inf if end is None else end))
        switch = int(((sent >= prev_end) & (sent < start)).sum()) if prev_end is not None else 0
        out.append((df[inside], switch))
        prev_end = end
    return out


def _counted(p: dict[str, Any]) -> bool:
    """A phase of a run on the profiler's histogram alone: its figures are the sidecar's, from the reports."""
    return p.get("from") == "profiler reports"


def _reported(summary: dict[str, Any]) -> dict[str, Any]:
    """A sidecar summary (a phase's, or the run's) as a row's figures: the profiler's counts and percentiles."""
    o = summary.get("outcomes") or {}
    return {"events": summary.get("events", 0), "n": summary.get("n", 0), "mean_us": summary.get("mean_us"),
            "var_us2": summary.get("variance_us2"), "min_us": summary.get("min_us"), "p50_us": summary.get("p50_us"),
            "p99_us": summary.get("p99_us"), "p999_us": summary.get("p999_us"), "max_us": summary.get("max_us"),
            **{k: o.get(k, 0) for k in ("ok", "late", "early", "missed", "lost")}}


def counted_frame(data: RunSet, runs: list[str]) -> pd.DataFrame:
    """The phases of RUNS measured by the profiler's histogram alone (no rows): each phase's figures and the whole
    run's from the sidecar (profslices.py: what the profiler counted between its reports in the phase)."""
    rows = []
    for r in phased_runs(data, runs):
        phases = data.meta[r]["phases"]
        if not all(_counted(p) for p in phases):
            continue
        for p in phases:
            rows.append({**_reported(p.get("summary") or {}), "run": r, "phase": p.get("name"),
                         "condition": p.get("condition"), "start_s": p.get("start_s"), "end_s": p.get("end_s"),
                         "switch_events": p.get("switch_events")})
        begun = [p for p in phases if p.get("start_s") is not None]
        rows.append({**_reported(data.meta[r].get("summary") or {}), "run": r, "phase": WHOLE, "condition": "phases",
                     "start_s": min((p["start_s"] for p in begun), default=None),
                     # the phase a killed run died in has no end: neither has the whole run
                     "end_s": None if any(p.get("end_s") is None for p in begun)
                     else max((p["end_s"] for p in begun), default=None),
                     "switch_events": sum(int(p.get("switch_events") or 0) for p in phases)})
    return pd.DataFrame(rows, columns=HEADERS) if rows else pd.DataFrame(columns=HEADERS)


def phase_frame(data: RunSet, runs: list[str]) -> pd.DataFrame:
    """One row per phase of each phased run of RUNS, then its whole run: HEADERS' columns. A run whose phases have
    no event ranges (a journal's) has its rows placed by sent_s."""
    rows = []
    for r in phased_runs(data, runs):
        df = data.df[data.df["run"] == r]
        phases = data.meta[r]["phases"]
        parts = _by_range(df, phases) if _ranged(phases) else _by_time(df, phases)
        for p, (sel, switch) in zip(phases, parts):
            rows.append({**_figures(sel), "run": r, "phase": p.get("name"), "condition": p.get("condition"),
                         "start_s": p.get("start_s"), "end_s": p.get("end_s"), "switch_events": switch})
        begun = [p for p in phases if p.get("start_s") is not None]
        # the phase a killed run died in has no end: neither has the whole run
        open_end = any(p.get("end_s") is None for p in begun)
        rows.append({**_figures(df), "run": r, "phase": WHOLE, "condition": "phases",
                     "start_s": min((p["start_s"] for p in begun), default=None),
                     "end_s": None if open_end else max((p["end_s"] for p in begun), default=None),
                     "switch_events": sum(switch for _, switch in parts)})
    return pd.DataFrame(rows, columns=HEADERS) if rows else pd.DataFrame(columns=HEADERS)


def journal_runs(data: RunSet, runs: list[str]) -> list[str]:
    """RUNS read from a journal (their sidecar says `incomplete`: the run's files were never written)."""
    return [r for r in runs if data.meta[r].get("incomplete") is True]


def ended_in(data: RunSet, run: str) -> str:
    """Where a journal's run in phases stops: the phase it died in (begun, no end_s) and its last row's sent_s."""
    phases = data.meta[run]["phases"]
    sent = pd.to_numeric(data.df.loc[data.df["run"] == run, "sent_s"], errors="coerce").dropna()
    last = f"the latest sent_s of its rows is {sent.max():.3f} s" if len(sent) else "none of its rows has a sent_s"
    reports = [p.get("counted_to_s") for p in phases if _counted(p) and p.get("counted_to_s") is not None]
    if reports:              # no rows (the profiler's histogram alone): its figures run to its last report kept
        last = f"its figures are the profiler's reports up to {max(reports):.3f} s (no event rows: --no-raw)"
    begun = [p for p in phases if p.get("start_s") is not None]
    if not begun:
        return f"{run}: no phase had begun; {last}"
    p = begun[-1]
    if p.get("end_s") is None:
        return (f"{run}: ended in phase {p.get('name')} (from {p['start_s']:.3f} s; no end_s: the process died in it, "
                f"{len(begun)} of {len(phases)} phases begun); {last}")
    return (f"{run}: every phase begun has its end_s ({len(begun)} of {len(phases)} phases, the last ending at "
            f"{p['end_s']:.3f} s: the run ended, its files were not written); {last}")


@dataclass
class PhaseTables:
    """The report's runs in phases: FRAME, the shown runs' (a result: phases.csv); JOURNALS, the runs read from
    a journal (never a result, shown or not), with a line each on where it stops (WHERE)."""

    frame: pd.DataFrame
    journals: pd.DataFrame
    where: list[str] = field(default_factory=list)


def tables(data: RunSet, shown: list[str], counted: list[str] | None = None) -> PhaseTables:
    """The runs in phases of DATA: the SHOWN runs' table (then the COUNTED ones', measured by the profiler's
    histogram alone: their figures from the sidecar), and the one of every run read from a journal."""
    journals = journal_runs(data, phased_runs(data, list(data.runs)))
    frames = [f for f in (phase_frame(data, [r for r in shown if r not in journals]),
                          counted_frame(data, [r for r in counted or [] if r not in journals])) if len(f)]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=HEADERS)
    # a journal's run on the profiler's histogram alone has its phases' figures in its json, as far as it went
    counted_journals = [r for r in journals if all(_counted(p) for p in data.meta[r]["phases"])]
    parts = [f for f in (phase_frame(data, [r for r in journals if r not in counted_journals]),
                         counted_frame(data, counted_journals)) if len(f)]
    return PhaseTables(frame, pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=HEADERS),
                       [ended_in(data, r) for r in journals])


def _seconds(x: Any) -> Any:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def table_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """The report's rows: the boundaries in ms steps (a switch is ms long), the rest as the report formats it."""
    return [[_seconds(row.get(h)) if h in ("start_s", "end_s") else row.get(h) for h in HEADERS]
            for _, row in frame.iterrows()]


def section(t: PhaseTables, table: Callable[[list[str], list[list[Any]]], str], heading: Callable[[str], str],
            para: Callable[[str], str]) -> list[str]:
    """The report's sections of runs in phases (nothing without one): the shown runs', then those read from a
    journal, through its TABLE, HEADING and PARA writers (Markdown or HTML)."""
    out = []
    if len(t.frame):
        out += [heading("Runs in phases"), para(WORDS), table(HEADERS, table_rows(t.frame)), ""]
    if len(t.journals):
        out += [heading(JOURNAL_HEADING), para(JOURNAL_WORDS), table(HEADERS, table_rows(t.journals)), ""]
        out += [para(w) for w in t.where] + [""]
    return out


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


def headline(t: PhaseTables) -> list[str]:
    """A line per phase for a terminal: its events and latency figures (a journal's runs marked)."""
    def us(x: Any) -> str:
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"
    lines = []
    for frame, mark in ((t.frame, ""), (t.journals, ", incomplete: from its journal, rows by sent_s, never a result")):
        for r in frame["run"].unique() if len(frame) else []:
            lines.append(f"phases of {r} (latency in us{mark}):")
            for _, p in frame[frame["run"] == r].iterrows():
                lines.append(f"  {p['phase']:<10} {p['condition']:<8} events {int(p['events']):>6}  "
                             f"n {int(p['n']):>6}  mean {us(p.get('mean_us'))}  p99 {us(p.get('p99_us'))}  "
                             f"max {us(p.get('max_us'))}")
    return lines
