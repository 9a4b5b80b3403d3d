"""Command line: `mmrig report RUNS... --out DIR` (add_report_parser, which mmrig.cli wires in, as it does
profile and capture), and on its own: `python -m mmanalysis report RUNS...`, `... summary RUNS...`,
`... lab RESULTS --out X.ipynb`, `... profile OUT.exectrace [--perfetto X]`, `... capture X.sr --run OUT.csv`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .csvsafe import write_frame
from .safefiles import atomic_write, output_problem
from .schema import SchemaError


def cmd_report(args: argparse.Namespace) -> int:
    import pandas as pd

    from .classreport import is_class_folder
    from .reader import read_each, run_files
    from .report import headline, report

    if len(args.runs) == 1 and is_class_folder(args.runs[0]):
        return cmd_class_report(args)
    try:
        # the 8051 demo's results/8051/NAME beside the AVR's results/NAME: "NAME [8051]", never a clash of names
        data, problems = read_each(run_files(args.runs), label_kinds=True)
    except FileNotFoundError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    for problem in problems:          # a run the reader refuses: named, and the others reported
        print(f"report: left out: {problem}", file=sys.stderr)
    if data is None:
        print("report: no run could be read: nothing written", file=sys.stderr)
        return 2
    try:
        paths = report(data, args.out, title=args.title, figures=not args.no_figures, include_all=args.all,
                       not_read=problems, bin_us=args.bin_us, hist_max_us=args.hist_max_us,
                       host_trace=not args.no_trace)
    except OSError as exc:            # a folder that cannot be written, a link or a FIFO planted at a name
        return cannot_write(args.out, exc)
    # a few lines here; the tables (20 columns and more) are in the report itself
    print("\n".join(headline(data, pd.read_csv(paths["comparison"]), include_all=args.all)))
    print(f"report: {paths['md']} (Markdown), {paths['html']} (HTML); tables {paths['summary']}, {paths['comparison']}"
          + (f"; figures in {paths['figures']}" if paths["figures"].is_dir() else ""))
    return 1 if problems else 0


def cannot_write(out: Path, exc: OSError) -> int:
    """The one line for a report that could not be written (exit 2)."""
    where = f" ({exc.filename})" if exc.filename and exc.strerror and str(exc.filename) not in exc.strerror else ""
    print(f"report: cannot write the report in {out}: {exc.strerror or exc}{where}", file=sys.stderr)
    return 2


def cmd_class_report(args: argparse.Namespace) -> int:
    """`mmrig report CLASS`: the class overview (mmanalysis.classreport), a few lines on the terminal."""
    from . import classreport

    cr = classreport.read_class(args.runs[0])
    if cr.data is None:
        print("\n".join([f"report: {args.runs[0]}: a class folder, but no group has a readable run"]
                        + [f"problem: {x}" for x in cr.problems]), file=sys.stderr)
        return 2
    title = args.title if args.title != DEFAULT_TITLE else "mmrig class overview"
    try:
        rep = classreport.class_report(cr, args.out, title=title, figures=not args.no_figures,
                                       include_all=args.all)
    except OSError as exc:
        return cannot_write(args.out, exc)
    print("\n".join(classreport.headline(cr, rep)))
    print(f"report: {rep.md} (Markdown), {rep.html} (HTML); table {rep.table}"
          + (f"; figures in {rep.figures}" if rep.figures.is_dir() else ""))
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    import pandas as pd

    from .reader import read_runs
    from .stats import summarize

    try:
        data = read_runs(args.runs)
    except (SchemaError, FileNotFoundError) as exc:
        print(f"summary: {exc}", file=sys.stderr)
        return 2
    table = summarize(data, by=args.by)
    cols = [c for c in (["run", "mode", "distance", "load", "profiler_kind", "valid"] if args.by == "run"
                          else ["mode", "distance", "load", "profiler_kind"])
            + ["events", "ok", "late", "early", "missed", "lost", "n", "mean_us", "var_ms2", "p99_us", "max_us",
               "jitter_max_us"] if c in table]
    with pd.option_context("display.width", 200, "display.max_columns", 50):
        print(table[cols].to_csv(index=False) if args.csv else table[cols].to_string(index=False))
    return 0


DEFAULT_TITLE = "mmrig latency report"
REPORT_EPILOG = """\
exit codes:
  0  every run read, the report written
  1  the report written without the runs the reader refused: each named on a line of stderr ('report: left out:
     FILE, line N: why'; a byte that is not UTF-8 by its offset) and in the report's 'Runs not read'
  2  nothing written: no run could be read, or a path is neither a run nor a folder of runs (or no such file);
     or the report could not be written in --out (a folder that cannot be written, a link planted as the
     folder or its figures/, a FIFO at a file's name: one line)
"""


def add_report_parser(subparsers) -> None:
    """Adds the `report` subcommand to an argparse subparsers object (mmrig's or ours)."""
    p = subparsers.add_parser("report", help="Markdown + HTML report of runs, against the paper's section 7",
                              description="Loads runs (NAME.csv + NAME.json, or directories of them), writes "
                                          "report.md, report.html, summary CSVs and figures (PNG, SVG) to --out. "
                                          "One class folder (one subfolder per group, each group's runs in "
                                          "GROUP/results/ or GROUP/) gives the class overview instead: a table "
                                          "and a CDF per experiment across the groups.",
                              epilog=REPORT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="run files (NAME.csv or NAME.json) or directories of runs, "
                                                      "or one class folder of group folders")
    p.add_argument("--out", type=Path, default=Path("report"), help="output directory (default: ./report)")
    p.add_argument("--title", default=DEFAULT_TITLE, help=f"the report's title (default {DEFAULT_TITLE!r})")
    p.add_argument("--no-figures", action="store_true", help="tables only (faster)")
    p.add_argument("--no-trace", action="store_true",
                   help="leave the runs' host traces out of 'The worst events, explained': each wake-up one part, "
                        "not split (faster: trace-cmd reads each run's whole trace, seconds a run)")
    p.add_argument("--all", action="store_true",
                   help="show invalid runs and set-aside attempts (NAME.attemptK) in the figures and the run table "
                        "(a class's figures) too, marked (default: listed apart with their reasons); the comparison "
                        "with the paper never takes them")
    p.add_argument("--bin-us", type=_positive_us, default=None, metavar="US",
                   help="the histogram's bin width in us (default: 1 us for verification and mixed mode, 10 us for "
                        "normal mode, as `mmrig run --hist`; coarser only where the range would take over 500 bins)")
    p.add_argument("--hist-max-us", type=_positive_us, default=None, metavar="US",
                   help="the histogram's range: bins from 0 up to US, events at or past it counted in the overflow "
                        "bin (default: the 99.9th percentile rounded up to 1, 2 or 5 x 10^k)")
    p.set_defaults(func=cmd_report)


def _positive_us(text: str) -> float:
    from .histogram import check_bin_us

    try:
        return check_bin_us(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("histogram bin width", "a value")) from None


def add_summary_parser(subparsers) -> None:
    p = subparsers.add_parser("summary", help="print summary statistics per run or per group")
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--by", choices=["run", "group"], default="run", help="group = (mode, distance, load)")
    p.add_argument("--csv", action="store_true", help="CSV instead of an aligned table")
    p.set_defaults(func=cmd_summary)


NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "lab.ipynb"


def execute_notebook(results: Path, out: Path, figures: Path | None = None, timeout: int = 300) -> Path:
    """Runs the lab notebook headless on RESULTS (via MMRIG_RESULTS) and writes the executed copy to OUT."""
    import os
    import tempfile

    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = {"MMRIG_RESULTS": str(Path(results).resolve()),
           "MMRIG_FIGURES": str(Path(figures or Path(out).with_suffix("")).resolve())}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits the environment
    try:
        # IPC (Unix sockets in the Jupyter runtime directory, private to the user), not TCP on localhost: a
        # kernel on TCP without CurveZMQ keys logs "Kernel is running over TCP without encryption" (ipykernel's
        # kernelapp), and nothing here needs the network. The sockets go in a private temporary directory
        # (the default, ./kernel-ipc-N, would litter the student's directory).
        with tempfile.TemporaryDirectory(prefix="mmrig-kernel-") as sockets:
            # as configuration, not a KernelManager of ours: the client then owns the kernel and shuts it down
            # when done (one it does not own is left to notice its parent exit, with a warning on stderr)
            config = Config()
            config.KernelManager.transport = "ipc"
            config.KernelManager.ip = str(Path(sockets) / "kernel")
            NotebookClient(nb, timeout=timeout, kernel_name="python3", config=config,
                           resources={"metadata": {"path": str(Path(out).resolve().parent)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    atomic_write(Path(out), nbformat.writes(nb).encode())     # as every file of ours: never through a planted link
    return Path(out)


def cmd_lab(args: argparse.Namespace) -> int:
    try:
        import nbclient  # noqa: F401
    except ImportError:
        print("lab: needs nbclient and ipykernel: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    from nbclient.exceptions import CellExecutionError

    if (problem := output_problem(args.out)) is not None:       # said before the notebook runs
        print(f"lab: --out: {problem}", file=sys.stderr)
        return 2
    try:
        out = execute_notebook(args.results, args.out)
    except CellExecutionError as exc:
        print(f"lab: the notebook failed:\n{exc}", file=sys.stderr)
        return 1
    print(f"wrote {out} (executed lab notebook; figures in {out.with_suffix('')})")
    return 0


def add_lab_parser(subparsers) -> None:
    p = subparsers.add_parser("lab", help="execute the lab notebook headless on a results directory")
    p.add_argument("results", type=Path, help="directory of runs")
    p.add_argument("--out", type=Path, default=Path("lab-executed.ipynb"), help="executed notebook")
    p.set_defaults(func=cmd_lab)


def _run_rows(csv: Path | None):
    """The run's rows (its CSV, checked against its sidecar), or None."""
    if csv is None:
        return None
    from .reader import read_runs

    return read_runs([csv]).df


def cmd_profile(args: argparse.Namespace) -> int:
    from . import exectrace, perfettotrace

    if args.perfetto is not None and (problem := output_problem(args.perfetto)) is not None:
        print(f"profile: --perfetto: {problem}", file=sys.stderr)          # said before the trace is read
        return 2
    try:
        tr = exectrace.read(args.trace)
        rows = _run_rows(args.run)
    except (exectrace.ExecTraceError, SchemaError, FileNotFoundError, OSError) as exc:
        print(f"profile: {exc}", file=sys.stderr)
        return 2
    print("\n".join(exectrace.profile_table(exectrace.profile(tr))))
    if args.perfetto is not None:
        try:
            counts = perfettotrace.write(tr, args.perfetto, rows)
        except OSError as exc:           # (the folder changed since the check)
            print(f"profile: --perfetto: cannot write {args.perfetto}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"\nwrote {args.perfetto} ({counts['slices']} slices, {counts['instants']} instants): open it in "
              "ui.perfetto.dev")
    return 0


def add_profile_parser(subparsers) -> None:
    p = subparsers.add_parser("profile", help="the executor's profile (C_i, T_i, U) from a bench trace, and its "
                                              "Perfetto trace")
    p.add_argument("trace", type=Path, help="OUT.exectrace (mmrig run --trace, or mmbench --exec-trace)")
    p.add_argument("--run", type=Path, default=None, help="the run's OUT.csv: its events on the Perfetto trace")
    p.add_argument("--perfetto", type=Path, default=None, help="write the Perfetto trace here")
    p.set_defaults(func=cmd_profile)


def cmd_capture(args: argparse.Namespace) -> int:
    from . import lacapture

    out = args.out or args.capture.with_suffix(".lined-up.csv")
    if args.out is not None and (problem := output_problem(out)) is not None:
        print(f"capture: --out: {problem}", file=sys.stderr)               # said before the capture is read
        return 2
    try:
        channels = lacapture.parse_channels(args.channels) if args.channels else None
        tr = lacapture.read_sr(args.capture, channels)
        rows = _run_rows(args.run)
    except (lacapture.CaptureError, SchemaError, FileNotFoundError, OSError) as exc:
        print(f"capture: {exc}", file=sys.stderr)
        return 2
    lined = lacapture.line_up(tr, rows)
    try:
        write_frame(lined, out, index=False)
    except OSError as exc:               # (beside the capture, or the folder changed since the check)
        print(f"capture: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(lacapture.summary(lined, tr))
    print(f"wrote {out}")
    return 0


def add_capture_parser(subparsers) -> None:
    p = subparsers.add_parser("capture", help="a logic analyzer's capture (sigrok .sr) lined up with a run's CSV")
    p.add_argument("capture", type=Path, help="CAPTURE.sr (PulseView, sigrok-cli)")
    p.add_argument("--run", type=Path, required=True, help="the run's OUT.csv (with its OUT.json)")
    p.add_argument("--channels", default=None, metavar="MAP",
                   help="our wires to the capture's channels, e.g. timecode0=D0,...,strobe=D11 (default: the "
                        "capture's channels carry our names: timecode0..7, event_id0..2, strobe)")
    p.add_argument("--out", type=Path, default=None, help="the lined-up CSV (default CAPTURE.lined-up.csv)")
    p.set_defaults(func=cmd_capture)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mmanalysis", description="mmrig run analysis")
    sub = parser.add_subparsers(dest="command", required=True)
    add_report_parser(sub)
    add_summary_parser(sub)
    add_lab_parser(sub)
    add_profile_parser(sub)
    add_capture_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
