"""`mmrig run --trace-host`: the PC's own scheduler trace over the run (mmsched.run.hosttrace), NAME.host.dat beside the
run's CSV, the sidecar's `host_trace`; and with `--break-us`, the explanation of the event the run stopped at
(mmanalysis.explain), as `rtla timerlat -a` prints its auto-analysis."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mmsched.verdict.export import write_sidecar
from mmsched.run.hosttrace import DEFAULT_BUFFER_KB, HostTrace, HostTraceError, host_path, refusal
from mmsched.model.result import RunResult


def add_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--trace-host", action="store_true",
                       help="record the PC's own scheduler trace over the run with trace-cmd (sched_switch, wake-ups, "
                            "IRQs, softirqs, workqueues on every CPU, CLOCK_MONOTONIC) into OUT.host.dat, for `mmrig "
                            "explain`; needs root or a tracefs the user may write, trace-cmd, and --out "
                            "(docs/explain.md)")
    group.add_argument("--trace-host-kb", type=int, default=DEFAULT_BUFFER_KB, metavar="KB",
                       help=f"--trace-host's bound: at most about KB kilobytes of trace per CPU are kept, the last "
                            f"seconds of the run (trace-cmd record -m; default {DEFAULT_BUFFER_KB}: 6 to 12 s of a 1 kHz "
                            f"normal run on a busy 2-CPU machine, docs/explain.md)")


def check(args: argparse.Namespace) -> str | None:
    """Why --trace-host cannot be honoured (one line for the refusal, exit 2), or None."""
    if not args.trace_host:
        return None
    if args.out is None:
        return "--trace-host writes OUT.host.dat: give --out OUT"
    if args.unpaced:
        return "--trace-host traces the PC's wall clock; a lockstep run (--unpaced) has none"
    if args.trace_host_kb < 64:
        return f"--trace-host-kb must be at least 64, not {args.trace_host_kb}"
    if (why := refusal()) is not None:
        return f"--trace-host: {why}"
    return None


def files(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """The file --trace-host writes, with its option (for the run's checks of every output up front)."""
    return [("--trace-host", host_path(args.out))] if args.trace_host and args.out is not None else []


def start(args: argparse.Namespace) -> HostTrace | None:
    """The recording started (HostTraceError: one line), or None without --trace-host."""
    if not args.trace_host:
        return None
    trace = HostTrace(host_path(args.out), buffer_kb=args.trace_host_kb)
    trace.start()
    return trace


def finish(trace: HostTrace | None, result: RunResult) -> str | None:
    """The recording stopped, its file beside the run and its `host_trace` in the run's sidecar (and in
    `result.sidecar`); a line saying what went wrong, or None."""
    if trace is None:
        return None
    try:
        section: dict[str, Any] = trace.stop()
    except (HostTraceError, OSError) as exc:
        section = {"file": None, "error": str(exc)}
    result.sidecar["host_trace"] = section
    if result.json_path is not None:
        try:
            doc = json.loads(result.json_path.read_text())
            doc["host_trace"] = section
            write_sidecar(result.json_path, doc)
        except (OSError, ValueError) as exc:
            return f"cannot add host_trace to {result.json_path}: {exc}"
    return None if section.get("file") else f"--trace-host: {section['error']}"


def break_explanation(result: RunResult) -> list[str]:
    """The break's event explained from the run's files (a run with --break-us and --trace-host), or nothing."""
    b = result.sidecar.get("break") or {}
    if b.get("event") is None or result.csv_path is None or not (result.sidecar.get("host_trace") or {}).get("file"):
        return []
    from mmanalysis.explain import ExplainError, explain_run, format_explanation

    try:
        return [format_explanation(e) for e in explain_run(result.csv_path, b["event"])]
    except ExplainError as exc:
        return [f"explain: {exc}"]
