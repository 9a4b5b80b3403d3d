"""`mmrig explain RUN EVENT|worst|late`: why an event was as late as it was. Normal mode: from the run's budget
and the PC's own scheduler trace (`mmrig run --trace-host`; mmanalysis.explain). Mixed and verification mode: from
the executor's trace around the event (the run's own with --trace, else a replay around it; mmrig.eventtrace,
mmanalysis.explainexec). docs/explain.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXPLAIN_EPILOG = """\
Each part is in the order the event met it. Normal mode: the tick estimate's error, the firing thread's wake-up
(with a host trace: the threads that held its CPU between the moment and the wake-up, with pid, policy and priority
and for how long; hard IRQs and softirqs in between; the CPU idle until the timer woke the thread; the thread's own
path to its write), the write call, the line and the profiler's floor. Mixed and verification mode, from the
executor's trace: the dispatch interrupt's entry and what held it off (the core asleep, another interrupt, a task's
critical section with its code addresses and function), its handler, interrupts and tasks that ran before the
timecode task, the kernel's switch to it and its path to the port write, then the wires and the profiler's capture;
a mixed event's SCHEDULE (sent, acknowledged, slack) as a note. The trace is the run's own (--trace), else the one
around the event a replay left in --keep DIR, else a replay around it made now (a paced bench run's record) into
--keep DIR (default NAME.replay/ beside the run). The parts add up to the latency; what the recorded data cannot
split is a part named "unknown" with its time.

exit codes:
  0  explained (every event asked for)
  1  nothing to explain: `late` and the run has no late event
  2  error: the run cannot be read, no such event, an event with no latency, a host trace that is not the run's or
     that trace-cmd cannot read, a mixed or verification run with neither an executor trace nor a record to
     replay it from (a lockstep run: run it again with --trace)
"""


def cmd_explain(args: argparse.Namespace) -> int:
    from mmanalysis.explain import ExplainError, explain_run, format_explanation
    from mmanalysis.explainexec import EXEC_MODES

    from mmrig.eventtrace import explain_run_exec, run_mode

    csv = Path(args.run)
    csv = csv.with_suffix(".csv") if csv.suffix in (".json", "") else csv
    try:
        if run_mode(csv) in EXEC_MODES:
            explanations = explain_run_exec(csv, args.event, args.keep)
        else:
            explanations = explain_run(args.run, args.event, use_trace=not args.no_trace)
    except ExplainError as exc:
        print(f"mmrig explain: {exc}", file=sys.stderr)
        return 2
    if not explanations:
        print(f"mmrig explain: {args.run} has no late event", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([e.as_dict() for e in explanations], indent=2))
    else:
        print("\n\n".join(format_explanation(e, width=args.width) for e in explanations))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="why an event was late: its latency split into its causes",
                       description="Why an event was as late as it was: its latency split into the parts it met. "
                                   "Normal mode: the wake-up split by the PC's scheduler trace (mmrig run "
                                   "--trace-host). Mixed and verification mode: the executor's trace around the "
                                   "event (the run's own with --trace, or a replay around it).",
                       epilog=EXPLAIN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", help="the run: NAME.csv or NAME.json (normal mode: its NAME.host.dat beside "
                                              "it)")
    p.add_argument("event", metavar="EVENT", nargs="?", default="worst",
                   help="an event number (the CSV's `event`), worst (the measured event with the largest latency; "
                        "the default) or late (every late event)")
    p.add_argument("--json", action="store_true", help="one JSON list of explanations on stdout, not paragraphs")
    p.add_argument("--no-trace", action="store_true",
                   help="normal mode: leave the host trace out: the budget's parts alone (faster: trace-cmd "
                        "report reads the whole trace)")
    p.add_argument("--keep", type=Path, default=None, metavar="DIR",
                   help="mixed and verification mode: where the replay around the event writes its files, and where "
                        "an around trace of an earlier replay is read from (default NAME.replay/ beside the run)")
    p.add_argument("--width", type=int, default=80, metavar="COLS", help="the paragraph's width (default 80)")
    p.set_defaults(func=cmd_explain)
