"""A traced run's files (RunConfig.trace): the executor's trace the endpoint recorded beside the
run's CSV, turned into the sidecar's `executor_profile` (mmanalysis.exectrace.profile: per task and
interrupt C_i, T_i, U; time by category; the context switch; the dispatch as the wires show it) and a
Perfetto trace with the run's events on it. Board-agnostic: it reads files, whoever wrote them."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Sequence

from ..model.event import Event
from .export import run_stem


def traced_paths(out: Path) -> dict[str, Path]:
    """Where a traced run's files go: OUT.exectrace (the bench's record), OUT.vcd (the wired ports),
    OUT.perfetto-trace (written here)."""
    stem = run_stem(out)
    return {kind: stem.with_name(stem.name + suffix) for kind, suffix in
            (("exectrace", ".exectrace"), ("vcd", ".vcd"), ("perfetto", ".perfetto-trace"))}


def executor_profile(files: dict[str, Path], events: Sequence[Event], out: Path) -> dict[str, Any]:
    """The sidecar section of a traced run; writes OUT.perfetto-trace. A trace that is missing or cannot be
    read gives {"error": why}: the run's latency figures do not depend on it, so it is named, not fatal."""
    import pandas as pd

    from mmanalysis import exectrace, perfettotrace

    path = files.get("exectrace")
    if path is None or not Path(path).is_file():
        return {"error": f"no executor trace was recorded ({path or 'the target gave none'})"}
    try:
        tr = exectrace.read(path)
    except (exectrace.ExecTraceError, OSError) as exc:
        return {"error": str(exc)}
    section = exectrace.profile(tr)
    delays = exectrace.dispatch_delays(tr)
    section["dispatch_us"] = ({"n": len(delays), "min": round(min(delays), 4), "median": round(statistics.median(delays), 4),
                               "max": round(max(delays), 4)} if delays else {"n": 0})
    rows = pd.DataFrame([{"event": e.event, "tag": e.tag, "event_id": e.event_id, "scheduled_tc": e.scheduled_tc,
                          "outcome": e.outcome, "reason": e.reason, "latency_us": e.latency_us} for e in events])
    target = traced_paths(out)["perfetto"]
    counts = perfettotrace.write(tr, target, rows if len(rows) else None)
    section["perfetto_counts"] = counts
    section["files"] = {k: Path(v).name for k, v in {**files, "perfetto": target}.items() if Path(v).is_file()}
    return section
