"""`mmrig replay RUN`: a paced bench run computed again on the bench from its record of its inputs
(`NAME.inputs`), with no PC in the loop, and compared with the run event by event (mmhil.replay)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmanalysis.explain import Explanation

EPILOG = """exit codes:
  0  every event compared is identical (each RESULT and ACK the same, cycle for cycle)
  1  some event differs: the first is named, with what may explain it
  2  the run cannot be replayed (no record, an incomplete one, a record that is not the one its sidecar says
     the run wrote: its size, SHA-256 or reads; a bad file, a window wider than the replay, a file that cannot
     be made in --keep or, without it, in NAME.replay/ beside the run): one line, and nothing is run
--trace, --vcd, --around and --pc-moments write files: into --keep DIR, or without it into NAME.replay/ beside
the run's CSV (made if missing; one line on stderr says where)
--around on a mixed or verification run ends with the event explained from the executor's trace around it, as
`mmrig explain` does (its latency split into the parts it met; --json: the document's `explanation`)
a fault injected into the run that the replay cannot put where the run had it (docs/replay.md) is a note
naming it and why, and what differs from its tick on is not counted as a difference
"""


def cmd_replay(args: argparse.Namespace) -> int:
    from mmanalysis.inputrecord import InputRecordError
    from mmanalysis.safefiles import output_folder
    from mmanalysis.schema import SchemaError
    from mmhil.replay import ReplayError, as_json, replay, report_lines

    csv = Path(args.run)
    csv = csv.with_suffix(".csv") if csv.suffix in (".json", ".inputs", "") else csv
    beside = None
    if (args.trace or args.vcd or args.around or args.pc_moments) and not args.keep:
        # their files are the point: kept in a folder beside the run, named in one line, not refused
        args.keep = beside = csv.with_name(f"{csv.stem}.replay")
    made = beside is not None and not beside.exists()
    if not (math.isfinite(args.window_ms) and args.window_ms > 0):
        print(f"mmrig replay: --window-ms must be > 0, not {args.window_ms:g}", file=sys.stderr)
        return 2
    try:
        if args.keep:
            output_folder(args.keep)       # made if missing (not its parents), never through a planted link
        result, figures = replay(csv, args.keep, traced=args.trace, around=args.around, window_ms=args.window_ms,
                                 pc_moments=args.pc_moments, vcd=args.vcd)
    except (ReplayError, InputRecordError, SchemaError, OSError, KeyError, ValueError) as exc:
        where = f" (the replay's files go to {beside} without --keep DIR)" if beside is not None else ""
        if made and beside is not None and beside.is_dir() and not any(beside.iterdir()):
            beside.rmdir()                 # a replay refused leaves no empty folder behind
        print(f"mmrig replay: {exc}{where}", file=sys.stderr)
        return 2
    if beside is not None:
        print(f"mmrig replay: the replay's files are in {beside}/ (--keep DIR puts them elsewhere)", file=sys.stderr)
    explained = around_explanation(csv, figures, args.keep)
    if args.json:
        doc = json.loads(as_json(csv.stem, result, figures))
        if explained is not None:
            doc["explanation"] = explained.as_dict() if not isinstance(explained, str) else {"error": explained}
        print(json.dumps(doc))
    else:
        print("\n".join(report_lines(csv.stem, result, figures)))
        if args.keep:
            print(f"the bench's trace of the replay: {figures['trace']}")
        if explained is not None:
            from mmanalysis.explain import format_explanation

            print(format_explanation(explained) if not isinstance(explained, str) else f"explain: {explained}")
    if result.latencies is not None:
        return 0 if not result.latencies.summary()["max_abs_diff_us"] and not result.latencies.unmatched else 1
    return 0 if result.exact else 1


def around_explanation(csv: Path, figures: dict[str, Any], keep: Path | None) -> Explanation | str | None:
    """The --around event of a mixed or verification run explained from the trace the replay just wrote around it
    (mmrig.eventtrace), or why it cannot be (a line); None without --around or for a normal-mode run, whose
    executor plays no part."""
    from mmanalysis.explain import ExplainError
    from mmanalysis.explainexec import EXEC_MODES

    from mmrig.eventtrace import explain_run_exec, run_mode

    if not figures.get("around") or run_mode(csv) not in EXEC_MODES:
        return None
    try:
        return explain_run_exec(csv, str(figures["around"]["event"]), keep)[0]
    except ExplainError as exc:
        return str(exc)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="compute a recorded paced bench run again on the bench and compare it",
                       description="Runs the same images on the bench, unpaced, with the PC's bytes of RUN's record "
                                   "(RUN.inputs, written beside every paced bench run) put on the nodes' lines at the "
                                   "cycles they entered them, and compares every event's RESULT and ACK with the "
                                   "run's CSV.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="the run's CSV (or its .json, or its name without a suffix)")
    p.add_argument("--json", action="store_true", help="the comparison as one JSON document on stdout")
    p.add_argument("--trace", action="store_true",
                   help="the executor traced through the whole replay: NAME.replay.exectrace, "
                        ".perfetto-trace (open in ui.perfetto.dev) and the wires' .vcd (PulseView); the run itself "
                        "paid nothing for it")
    p.add_argument("--vcd", action="store_true",
                   help="the wires' VCD of the whole replay (PulseView): NAME.replay.vcd in --keep DIR (or "
                        "NAME.replay/)")
    p.add_argument("--around", default=None, metavar="EVENT|worst|late",
                   help="also trace the executor and the wires only around this event (its number, the worst, or "
                        "the first late or missed): NAME.around.exectrace, .perfetto-trace, .vcd in --keep DIR "
                        "(default: NAME.replay/ beside the run)")
    p.add_argument("--window-ms", type=float, default=71.111, metavar="MS",
                   help="--around's window: this much either side of the event's moment (default one tick)")
    p.add_argument("--pc-moments", action="store_true",
                   help="replay NAME.pc.inputs instead: the PC's writes at its own moments placed by the run's tick "
                        "fit, as a board run knows them (a board run always replays so): each event's latency beside "
                        "the simulator's, NAME.vs-sim.csv and .png in --keep DIR (or NAME.replay/)")
    p.add_argument("--keep", type=Path, default=None, metavar="DIR",
                   help="keep the bench's trace of the replay (every byte and pin with its cycle) in DIR, and the "
                        "files of --trace, --vcd, --around and --pc-moments (default for those: NAME.replay/ beside "
                        "the run)")
    p.set_defaults(func=cmd_replay)
