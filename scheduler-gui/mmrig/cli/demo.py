"""`mmrig demo` (`make demo`): the paper's experiments on the paced bench, the table against the paper."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mmproto import PROFILER_KINDS


def cmd_demo(args: argparse.Namespace) -> int:
    from mmrig.demo import (NO_VALID_RUN, RESULTS, avr_figures, beside_table, no_valid_run, notes, polling_added,
                       results_dir, run_demo, table, verdicts)

    kind = args.profiler_kind
    if kind == "8051":
        from mmhil.bench import HAS_8051
        if not HAS_8051:     # one line before any run: the bench program has no 8051 core here
            print("mmrig demo: --profiler-kind 8051 needs ucsim's core in the bench program (build/ucsim, "
                  "tools/ucsim.sh; docs/bench.md 'The 8051 profiler')", file=sys.stderr)
            return 2
    count = args.count or (30 if args.quick else 200)
    out_dir = args.out_dir or results_dir(kind)
    rows = run_demo(count=count, out_dir=out_dir, attempts=args.attempts, profiler_kind=kind)
    print()
    profiler = ("the 8051 profiler (the paper's 87C51 image, polled input)" if kind == "8051"
                else "the AVR profiler (input capture)")
    print(f"mmrig demo: the paper's experiments on the paced virtual bench with {profiler}, {count} events each "
          f"(files in {out_dir})")
    print(table(rows))
    print(verdicts(rows))
    text = notes(rows)
    if text:
        print(text)
    if kind != "avr":
        avr_dir = out_dir.parent if args.out_dir else RESULTS
        avr = avr_figures(avr_dir)
        print()
        print(f"With the 8051 profiler beside the AVR profiler ({avr_dir}/) and the paper:")
        print(beside_table(rows, avr, avr_dir))
        print(polling_added(rows, avr))
    bad = [row.ex.name for row in rows if not row.result.sidecar["invariant"]["ok"]]
    if bad:
        print("accounting invariant violated in: " + ", ".join(bad), file=sys.stderr)
        return 1
    invalid = no_valid_run(rows)
    if invalid:
        print(f"mmrig demo: no valid run of {', '.join(invalid)} (exit status {NO_VALID_RUN}; its runs are kept, "
              "marked invalid, never a result)", file=sys.stderr)
        return NO_VALID_RUN
    return 0


DEMO_EPILOG = """\
exit status:
  0  every experiment has a valid run (the table shows it)
  1  an experiment broke the accounting invariant (every event ends in exactly one row): a rig bug
  2  --profiler-kind 8051 and the bench program has no 8051 core (build/ucsim)
  3  an experiment has no valid run: every attempt was invalid (kept on disk, marked, never a result)

A run invalid only because the host stalled the bench is set aside (NAME.attemptK) and run again, up to
--attempts times (a loaded experiment at most twice: its load makes stalls likely and each retry runs the
load again)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="the paper's five experiments on the virtual bench",
                          description="The paper's five experiments on the paced virtual bench, a table beside the "
                                      "paper's section 7 figures and what each experiment shows against them.",
                          epilog=DEMO_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--quick", action="store_true", help="30 events per experiment (CI)")
    demo.add_argument("--count", type=int, default=None, help="events per experiment (default 200)")
    demo.add_argument("--out-dir", type=Path, default=None,
                      help="where the CSV + JSON go (default results/, results/8051/ with --profiler-kind 8051; "
                           "an 8051 demo reads the AVR figures from the folder above its --out-dir)")
    demo.add_argument("--profiler-kind", "--profiler", dest="profiler_kind", choices=PROFILER_KINDS, default="avr",
                      help="the bench's profiler: avr (input capture; default) or 8051 (the paper's 87C51 image, its "
                           "event input polled; its runs go to results/8051/ and the table sets them beside the AVR "
                           "demo's in results/ and the paper's). --profiler: the same (the demo has no board ports)")
    demo.add_argument("--attempts", type=int, default=4,
                      help="runs per experiment while it is invalid by host stalls alone (more than 5%% of its events "
                           "not measurable; default 4; a loaded experiment at most 2)")
    demo.set_defaults(func=cmd_demo)
