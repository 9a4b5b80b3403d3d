"""Many events of one run explained (mmanalysis.explain's `explain_event`, one event at a time), its host trace read
once for all of them: the report's "The worst events, explained" (explainreport.py) and the GUI's explanation of
the selected event (mmrig.gui.explainer) use it. trace-cmd's report of a trace is read line by line whatever
stretches are kept (a 300-event kilohertz run's 3.3 MB trace: 600,000 lines, 6 to 16 s on the 2-vCPU VM beside
other engineers' tests), and explaining an event from a trace already read takes about 20 ms: so the trace is read
once, for every event asked for, and each event is explained from it.

A mixed or verification event is explained from the executor's trace (explainexec.py) that is on disk: the run's
own (a run with --trace) or one a replay left beside it (NAME.replay/); no replay is made here (`mmrig explain RUN
EVENT` makes one). An event the explanation does not give (no latency, no executor trace on disk) comes back as
`Refused` with its one-line reason: listed, never dropped. One line per event (`one_line`): the largest part first with its time
and share, then the next parts briefly."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .exectrace import ExecTrace, ExecTraceError, read as read_exec_trace
from .explain import (ExplainError, Explanation, Part, check_trace_file, event_windows, explain_event,
                      no_latency, read_one_run)
from .explainexec import EXEC_MODES, explain_exec_event, left_traces, trace_holds
from .schedtrace import SchedTrace, TraceError, read_trace, windows_keep
from .schema import MEASURED

WORST = 10          # the report's worst events of a run
NEXT_PARTS = 3      # parts one line names after the largest; the rest are summed
NAMES = 2           # who ran, by name, in the largest part's words (an asleep part, IRQs, softirqs)
# explain_event's note for an event explained without a trace: the run's own note replaces it where the run has
# a trace that could not be read (the run was traced: "run with --trace-host" would mislead)
NO_TRACE_NOTE = "no host trace"
# the beginnings of explain_event's notes that say why a traced run's wake-up was left unsplit (the ring no longer
# held the moment, the thread not seen, no run_clock); its other notes (steal, a bench stall) are no such reason
NOT_SPLIT_NOTES = ("the trace", "the sidecar does not place")


@dataclass
class Refused:
    """An event the explanation does not give, and why (ExplainError's one line)."""

    run: str
    event: int
    outcome: str
    latency_us: float | None
    why: str


@dataclass
class WorstEvents:
    """A run's worst measured events, worst first, each explained or refused; `trace_note`: said once for the
    run when its wake-ups are not split by a host trace (none recorded, or one that could not be read)."""

    run: str
    measured: int
    items: list[Explanation | Refused] = field(default_factory=list)
    trace_note: str | None = None
    side: str = "host"      # whose trace explains them: "host" (normal mode) or "executor" (mixed, verification)


def _latency(row: dict[str, Any]) -> float | None:
    v = row.get("latency_us")
    return None if v is None or pd.isna(v) else float(v)


def measured_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The events whose latency is a figure of the run: ok and late, and measurable (the run's statistics')."""
    if "in_stats" in df:
        return df[df["in_stats"].astype(bool)]
    return df[df["outcome"].isin(MEASURED) & df["measurable"].astype(bool)]


class RunExplainer:
    """One run's events explained: `df` its rows (the reader's), `meta` its sidecar (with `_csv`, where its host
    trace lies beside it), `run` its name. The host trace is read at the first explanation, for the events that
    explanation asks for (`explain_rows`), or for every event with a latency (`explain`, one event at a time)."""

    def __init__(self, df: pd.DataFrame, meta: dict[str, Any], run: str, use_trace: bool = True) -> None:
        self.df = df
        self.meta = meta
        self.run = run
        self.use_trace = use_trace
        self.trace: SchedTrace | None = None
        self.trace_note: str | None = None
        self._read = False
        self._exec: dict[Path, ExecTrace | None] = {}    # executor traces on disk, read once (None: unreadable)

    @classmethod
    def open(cls, csv_path: Path | str, use_trace: bool = True) -> RunExplainer:
        """The run at `csv_path` (NAME.csv or NAME.json); ExplainError (one line) if it cannot be read."""
        df, meta, name = read_one_run(csv_path)
        return cls(df, meta, name, use_trace)

    @property
    def traced(self) -> bool:
        """The run recorded a host trace (`mmrig run --trace-host`)."""
        return bool((self.meta.get("host_trace") or {}).get("file"))

    def read_trace_for(self, rows: list[dict[str, Any]]) -> None:
        """The host trace around `rows`' moments, once (later calls keep what the first read)."""
        if self._read:
            return
        self._read = True
        if rows and all(str(r.get("mode")) in EXEC_MODES for r in rows):
            # the executor's side: explained from its trace on disk; a run with none says so once
            if not any(self.exec_trace_for(r) for r in rows):
                self.trace_note = ("no executor trace on disk (the run made without --trace, never replayed): "
                                   "`mmrig explain RUN worst` replays it and explains each event")
            return
        section = self.meta.get("host_trace") or {}
        if not self.use_trace:
            self.trace_note = "the host trace left out: each wake-up is one part, not split"
            return
        if not section.get("file"):
            self.trace_note = ("no host trace (the run was made without --trace-host): each wake-up is one part, "
                               "not split by what held the firing thread's CPU")
            return
        path = Path(self.meta.get("_csv") or ".").parent / section["file"]
        try:
            check_trace_file(path, section)
            self.trace = read_trace(path, windows_keep(event_windows(rows, self.meta)))
        except (OSError, TraceError, ExplainError) as exc:
            self.trace_note = f"the run's host trace could not be read ({exc}): each wake-up is one part, not split"

    def exec_trace_for(self, row: dict[str, Any]) -> tuple[ExecTrace, str] | None:
        """The executor trace on disk that holds event `row`, with the words for it, or None."""
        csv = Path(self.meta.get("_csv") or f"{self.run}.csv")
        for path, words in left_traces(csv, self.meta):
            if path not in self._exec:
                try:
                    self._exec[path] = read_exec_trace(path) if path.is_file() else None
                except (ExecTraceError, OSError):
                    self._exec[path] = None
            tr = self._exec[path]
            if tr is not None and trace_holds(tr, [row]):
                return tr, words
        return None

    def explain_exec_row(self, row: dict[str, Any]) -> Explanation:
        """A mixed or verification event, from an executor trace on disk (ExplainError where there is none)."""
        if _latency(row) is None:
            raise no_latency(row, self.meta)    # (before any trace: a lost event's fault says why, a trace cannot)
        found = self.exec_trace_for(row)
        if found is None:
            raise ExplainError(f"event {int(row['event'])}: no executor trace on disk holds it (`mmrig explain RUN "
                               f"{int(row['event'])}` replays it)")
        tr, words = found
        ex = explain_exec_event(row, self.meta, tr, run=self.run)
        ex.notes.append(f"from {words}")
        return ex

    def explain_row(self, row: dict[str, Any]) -> Explanation | Refused:
        """One event (its row as a dict), from the trace already read (read_trace_for), or a mixed or verification
        one from the executor's trace on disk."""
        try:
            if str(row.get("mode")) in EXEC_MODES:
                return self.explain_exec_row(row)
            ex = explain_event(row, self.meta, self.trace, run=self.run)
        except ExplainError as exc:
            return Refused(self.run, int(row["event"]), str(row.get("outcome")), _latency(row), str(exc))
        if self.trace_note is not None and self.traced:
            ex.notes = [self.trace_note if n.startswith(NO_TRACE_NOTE) else n for n in ex.notes]
        return ex

    def explain_rows(self, rows: list[dict[str, Any]]) -> list[Explanation | Refused]:
        self.read_trace_for(rows)
        return [self.explain_row(r) for r in rows]

    def explain(self, event: int) -> Explanation | Refused:
        """Event number `event`; the first call reads the trace around every event with a latency, so that the
        next are explained at once (ExplainError if the run has no such event)."""
        found = self.df[self.df["event"] == event]
        if found.empty:
            raise ExplainError(f"the run has no event {event}")
        if not self._read:
            self.read_trace_for([r for _, r in self.df[self.df["latency_us"].notna()].iterrows()])
        return self.explain_row(found.iloc[0].to_dict())

    def worst(self, n: int = WORST) -> WorstEvents:
        """The run's `n` worst measured events by latency, worst first, the trace read around them alone."""
        measured = measured_rows(self.df)
        rows = [r.to_dict() for _, r in measured.sort_values("latency_us", ascending=False, kind="stable")
                .head(n).iterrows()]
        items = self.explain_rows(rows) if rows else []
        side = "executor" if rows and all(str(r.get("mode")) in EXEC_MODES for r in rows) else "host"
        return WorstEvents(self.run, len(measured), items, self.trace_note, side)


def part_label(p: Part, names: int = 0) -> str:
    """A part in a few words: the thread that held the CPU by itself (its name, pid, policy, CPU), the others by
    what they are; with `names`, that many of who ran inside it, the longest first."""
    label = {"est_error": "tick estimate's error", "wakeup": "wake-up (not split)",
             "wakeup.asleep": "the firing thread asleep past its moment",
             "wakeup.own": "the firing thread's own path to its write", "wakeup.idle": "CPU idle after the wake-up",
             "wakeup.unknown": "unknown part of the wake-up", "wakeup.rounding": "the stamps' rounding",
             "unknown": "unknown"}.get(p.key, p.words)
    by_name = p.detail.get("by_name_us") or {}
    if names and by_name:
        top = sorted(by_name.items(), key=lambda x: -x[1])[:names]
        label += " (" + ", ".join(f"{n} {us:.1f} us" for n, us in top) + (", ..." if len(by_name) > names else "") + ")"
    return label


def one_line(item: Explanation | Refused, run: bool = False) -> str:
    """An event in one line: its outcome and latency, the largest part with its time and share, then the next
    NEXT_PARTS by size, briefly, and the rest summed, and why a traced run's wake-up was left unsplit; a refused
    event with its reason. `run`: the run's name too. A run without a trace says so once (WorstEvents.trace_note),
    not here."""
    who = f"{item.run} event {item.event}" if run else f"event {item.event}"
    if isinstance(item, Refused):
        lat = f", {item.latency_us:.1f} us" if item.latency_us is not None else ""
        # ("event 3 is a mixed-mode event: ..." after "event 3 (ok, 1.4 us)": the number once)
        return f"{who} ({item.outcome}{lat}): not explained: {item.why.removeprefix(f'event {item.event} is ')}"
    parts = sorted(item.parts, key=lambda p: -p.us)
    big, rest = parts[0], [p for p in parts[1:] if abs(p.us) >= 0.05]
    text = (f"{who} ({item.outcome}, {item.latency_us:.1f} us): {part_label(big, NAMES)} {big.us:.1f} us "
            f"({big.share * 100:.1f}%)")
    if rest:
        text += "; then " + ", ".join(f"{part_label(p)} {p.us:.1f} us" for p in rest[:NEXT_PARTS])
        more = rest[NEXT_PARTS:]
        if more:
            text += f", {len(more)} more {sum(p.us for p in more):.1f} us"
    if big.key == "wakeup" or any(p.key == "wakeup" for p in rest):
        why = next((n for n in item.notes if n.startswith(NOT_SPLIT_NOTES)), None)
        if why is not None:
            text += f" (wake-up not split: {why.split(':')[0]})"
    return text


__all__ = ["NEXT_PARTS", "Refused", "RunExplainer", "WORST", "WorstEvents", "measured_rows", "one_line",
           "part_label"]
