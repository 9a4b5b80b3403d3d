"""The executor's trace that holds an event, for its explanation (`mmrig explain`, `mmrig replay --around`, a
mixed run's `--break-us`; mmanalysis.explainexec): the run's own (a run with --trace), the trace around it that a
replay left in the folder (NAME.around.exectrace), or a replay around it made now (mmhil.replay: the recorded run
computed again in lockstep, byte-identical, the executor traced a tick either side of the event)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmanalysis.exectrace import ExecTrace, ExecTraceError, read as read_trace
from mmanalysis.explain import Explanation, ExplainError, no_latency, read_one_run, select_rows
from mmanalysis.explainexec import (EXEC_MODES, default_keep, explain_exec_event, left_traces, own_trace,
                                    trace_holds)


@dataclass
class TraceSource:
    """Where an event's executor trace came from: the trace, and the words a reader is told."""

    trace: ExecTrace
    words: str
    notes: list[str] = field(default_factory=list)


def _read(path: Path) -> ExecTrace:
    try:
        return read_trace(path)
    except (ExecTraceError, OSError) as exc:
        raise ExplainError(f"cannot read the executor trace {path}: {exc}") from None


def trace_for(csv: Path, meta: dict[str, Any], row: dict[str, Any], keep: Path | None,
              cache: dict[Path, TraceSource] | None = None, whole: bool = False) -> TraceSource:
    """The executor trace that holds event `row` of the run at `csv`: the run's own, else the trace of a whole
    replay or around the event that a replay left in KEEP (NAME.replay/ beside the run without it) if it holds the
    event, else a replay into KEEP: around the event, or with `whole` (several events to explain: one replay for
    all) the executor traced through all of it. ExplainError (one line) when none can be had: a lockstep run
    without --trace, a run with no complete record."""
    cache = {} if cache is None else cache
    keep = default_keep(csv) if keep is None else keep
    left = left_traces(csv, meta, keep)
    for path, words in left:
        if path in cache or path.is_file():
            if path not in cache:
                cache[path] = TraceSource(_read(path), words)
            if trace_holds(cache[path].trace, [row]):
                return cache[path]
    source = replayed(csv, meta, row, keep, whole)
    if whole:
        cache[keep / f"{csv.stem}.replay.exectrace"] = source
    return source


def replayed(csv: Path, meta: dict[str, Any], row: dict[str, Any], keep: Path, whole: bool = False) -> TraceSource:
    """The run replayed in lockstep from its record with the executor traced around event `row` (or through the
    whole replay: `whole`), into KEEP."""
    from mmanalysis.inputrecord import InputRecordError
    from mmanalysis.safefiles import output_folder
    from mmhil.replay import ReplayError, replay

    target = meta.get("target") or {}
    record = meta.get("pc_inputs" if target.get("kind") == "boards" else "inputs") or {}
    if not record.get("file"):
        if target.get("lockstep"):
            raise ExplainError("a lockstep run keeps no record to replay, and this one has no executor trace: run "
                               "it again with --trace (the same command gives the same run)")
        raise ExplainError("the run has neither an executor trace (--trace) nor a record of its inputs to replay")
    try:
        output_folder(keep)
        if whole:
            comparison, figures = replay(csv, keep, traced=True)
        else:
            comparison, figures = replay(csv, keep, around=str(int(row["event"])))
    except (ReplayError, InputRecordError, OSError, KeyError, ValueError) as exc:
        raise ExplainError(f"the replay around event {row['event']} failed: {exc}") from None
    path = keep / f"{csv.stem}.{'replay' if whole else 'around'}.exectrace"
    if not path.is_file():
        raise ExplainError(f"the replay for event {row['event']} wrote no executor trace "
                           f"({(figures.get('files') or {}).get('error', 'no reason given')})")
    notes = []
    if not comparison.exact:
        first = comparison.differences[0]["what"] if comparison.differences else "RESULTs no event had"
        notes.append(f"the replay was not identical to the run ({len(comparison.differences)} events differ, first: "
                     f"{first}): the executor's part may not be the run's")
    what = "a replay of the whole run, traced" if whole else "a replay of the run around it"
    return TraceSource(_read(path), f"{what} ({path}: identical to the run, {comparison.identical} of "
                                    f"{comparison.compared} events)" if comparison.exact else f"{what} ({path})",
                       notes)


def explain_exec_rows(csv: Path, meta: dict[str, Any], rows: list[dict[str, Any]], keep: Path | None,
                      run: str) -> list[Explanation]:
    """Each event of `rows` (a mixed or verification run's) explained from the executor trace that holds it."""
    cache: dict[Path, TraceSource] = {}
    out = []
    for row in rows:
        if str(row.get("mode")) not in EXEC_MODES:
            raise ExplainError(f"event {row['event']} is a {row.get('mode')}-mode event")
        if row.get("latency_us") is None or math.isnan(float(row["latency_us"])):
            raise no_latency(row, meta)         # no replay for an event with nothing to split
        # several events: one replay traced through the whole run serves them all (a replay costs its whole
        # computation, 4.7 s for 200 events beside loads; the whole trace is 0.6 MB)
        source = trace_for(csv, meta, row, keep, cache, whole=len(rows) > 1)
        ex = explain_exec_event(row, meta, source.trace, run=run)
        ex.notes += [f"from {source.words}"] + source.notes
        out.append(ex)
    return out


def explain_run_exec(csv: Path, which: str, keep: Path | None) -> list[Explanation]:
    """The events `which` names (a number, worst or late) of the mixed or verification run at `csv`, explained."""
    df, meta, name = read_one_run(csv)
    return explain_exec_rows(Path(meta["_csv"]), meta, select_rows(df, which), keep, name)


def run_mode(csv: Path) -> str | None:
    """The run's mode as its sidecar says (None: no sidecar to read)."""
    import json

    try:
        return str((json.loads(csv.with_suffix(".json").read_text()).get("config") or {}).get("mode"))
    except (OSError, ValueError):
        return None


def break_explanation(sidecar: dict[str, Any], csv: Path | None) -> list[str]:
    """A mixed or verification run's break (--break-us) explained from the executor's trace: the run's own
    (--trace), else a replay around the event into the run's folder (the files the printed `mmrig replay ...
    --around N --keep DIR` command writes). Nothing for a run without a break or of normal mode."""
    from mmanalysis.explain import format_explanation

    b = sidecar.get("break") or {}
    mode = (sidecar.get("config") or {}).get("mode")
    if b.get("event") is None or csv is None or mode not in EXEC_MODES or b.get("latency_us") is None:
        return []
    target = sidecar.get("target") or {}
    if own_trace(csv, sidecar) is None and not (sidecar.get("inputs") or {}).get("complete"):
        return [] if target.get("lockstep") else ["explain: no executor trace and no complete record to replay"]
    try:
        return [format_explanation(e) for e in explain_run_exec(csv, str(b["event"]), csv.parent)]
    except ExplainError as exc:
        return [f"explain: {exc}"]
