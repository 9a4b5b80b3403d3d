"""`mmrig lab key`: the instructor's answer key of docs/lab.md, every figure computed from runs made for it.

The key runs what its answers need on the virtual bench, through the `mmrig` command line in a subprocess,
as a student types it:

- lockstep (`--unpaced`) where the answer must not depend on the host: the executor alone, mixed 1 tick
  ahead tick-aligned and 2 ticks ahead, and the two executor runs of step 5 (`--trace`);
- paced where the question is about the PC: normal mode, mixed 1 tick ahead with free-running generation
  (the paper's method, Q6: paced as the students run it, since its share on time is the PC's timing), and
  mixed 2 ticks ahead idle and under heavy load (the propagation delay and slack the load can move).

The runs are made as a student's, whoever makes the key: without real-time priority, locked memory or nice
-10 (mmrig.labkey.privilege), unless --realtime; the key says what the paced runs' benches got. A paced run
invalid by bench lag alone (a host stall), or any run that ended in a rig error, is run once more; an answer whose run is still invalid says so instead of giving figures. `mmrig proto sizes` gives the
SCHEDULE frame's line time. The Markdown written has one section per question (Q1..Q11) and names the
command and the runs it came from, so the key is regenerated whenever the rig changes.

This module is the command and its parser; the key's parts each have a module of their own:
runs (which runs, and making them), figures (the figures the answers quote) and render
(the Markdown).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from mmanalysis.labkeyfiles import KEY_FILE, key_runs_folder   # light: no figures, only the names


def cmd_lab_key(args: Any) -> int:
    from mmanalysis.safefiles import atomic_write, output_problem
    from mmrig.labkey.render import render      # loaded when the key is made, not when `mmrig` parses options
    from mmrig.labkey.runs import make_key

    out: Path = args.out
    runs = args.runs or key_runs_folder(out)    # where the class report finds the key's runs
    t0 = time.monotonic()
    log = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    if (problem := output_problem(out)) is not None:     # said now, not after every experiment has run
        print(f"lab key: --out: {problem}", file=sys.stderr)
        return 2
    try:
        key = make_key(runs, count=args.count, log=log, realtime=args.realtime)
    except (RuntimeError, OSError, ValueError) as exc:
        print(f"lab key: {exc}", file=sys.stderr)
        return 2
    command = "mmrig lab key" + (f" --count {args.count}" if args.count != 200 else "") + \
        (" --realtime" if args.realtime else "")
    text = render(key, command, args.count)
    try:
        atomic_write(out, (text + "\n").encode())
    except OSError as exc:
        print(f"lab key: cannot write {out}: {exc.strerror or exc} (the runs are in {runs})", file=sys.stderr)
        return 2
    print(f"wrote {out} (answer key, Q1-Q11; runs in {runs}; {time.monotonic() - t0:.0f} s; {key.scheduling})")
    return 0


def add_lab_key_parser(subparsers) -> None:
    """`mmrig lab key`: registered by mmrig.cli beside report and profile."""
    lab = subparsers.add_parser("lab", help="the classroom lab (docs/lab.md): the instructor's answer key")
    sub = lab.add_subparsers(dest="lab_command", required=True)
    p = sub.add_parser("key", help="run what docs/lab.md's questions need on the bench and write the answer key",
                       description="Runs the lab's experiments on the virtual bench (lockstep where the answer must "
                                   "not depend on the host, paced where the question is about the PC) through "
                                   "`mmrig run`, then writes the answer key (Markdown) with every figure computed "
                                   "from those runs. About 2-3 minutes at 200 events.")
    p.add_argument("--out", type=Path, default=Path(KEY_FILE), help=f"the key (default {KEY_FILE})")
    p.add_argument("--runs", type=Path, default=None, help="where the runs go (default: OUT's name + -runs)")
    p.add_argument("--count", type=int, default=200, help="events per experiment (default 200; step 5's at most 60)")
    p.add_argument("--quiet", "-q", action="store_true", help="no line per run")
    p.add_argument("--realtime", action="store_true",
                   help="run with your own privileges (as root: SCHED_FIFO, locked memory); by default the runs get "
                        "a student's (no real-time priority), as the class's do")
    p.set_defaults(func=cmd_lab_key)
