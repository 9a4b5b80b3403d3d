"""`mmrig run`: one experiment run, cyclictest-like: CSV + JSON out, the summary printed, gates judged for CI."""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mmanalysis.histfile import hist_text
from mmanalysis.safefiles import atomic_write, existing, output_problem
from mmproto import LinkError
from mmsched.verdict.budget import format_budget
from mmsched.model.grid import format_grid
from mmsched.verdict.phasefigures import format_phases
from mmsched.verdict.profhist import format_profiler_histogram
from mmsched.model.config import FIRINGS, RunConfig, aligned_rate_problem
from mmsched.link.endpoint import Boards, Endpoint, EndpointError
from mmsched.model.exload import ExecutorLoad
from mmsched.host.rtsched import fifo_refusal, lock_memory
from mmsched.verdict.export import journal_paths, record_paths, run_paths
from mmsched.verdict.journal import RunNotWritten
from mmsched.model.load import unavailable as load_unavailable
from mmsched.model.result import RunResult
from mmsched.run.runner import Runner
from mmsched.verdict.tracefiles import traced_paths

from mmrig.attempts import keep_invalid
from mmrig.endpoints import LOCKSTEP, Target, bench_images, choose_endpoint
from mmrig.eventtrace import break_explanation as exec_break_explanation
from mmrig.gates import EXIT_CODES, EXIT_ERROR, Gates, exit_code, judge
from mmrig.junit import files_words, junit_xml, write_junit

from . import tracehost
from .options import (add_line_model_option, add_ppm_options, add_profiler_kind_option, duration_s,
                      latency_timer_ms, parse_interval, parse_rate, percent, positive_float)
from .summary import summary_text


def fail_on(text: str) -> tuple[str, ...]:
    from mmrig.gates import parse_fail_on

    try:
        return parse_fail_on(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--fail-on: ")) from None


def dumps_readable(doc: object) -> str:
    """Indented JSON with every list of plain numbers on one line (the histogram's 1000 counts)."""
    text = json.dumps(doc, indent=2, default=str)
    return re.sub(r"\[\s*(-?[0-9][-+0-9.eE]*(?:,\s*-?[0-9][-+0-9.eE]*)*)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)


RUN_EPILOG = """\
exit codes (the first that applies wins):
  2  usage or rig error: bad option, an interval aligned generation cannot honour (not a whole number of
     ticks), -p or -m where the host does not allow them (as cyclictest), --trace-host where the host trace cannot
     be recorded (not root and no tracefs the user may write, no trace-cmd), an output where no file can be made
     (tried before the run: made and removed; its folder must exist, never as a link, and no FIFO, device or
     folder may hold its name, --force or not), a port that cannot be opened, a bench that cannot start (no run); or the
     run's files could not be written at its end (a full disk): the one line names the journal that holds its
     events, OUT.partial.csv + OUT.partial.json, which `mmrig report` reads (incomplete, invalid)
  3  invalid run: kept on disk, never a result; its gates are not judged
  102  a break (--break-us): an event past the threshold, late or missed stopped the run; written up to it,
       with the command that replays it traced (EVL latmus's code for its -A)
  1  a gate failed (--fail-on, --max-latency-us, --min-on-time)
  0  the run is valid and every gate passed (or none was given)
  130  interrupted twice with Ctrl-C (once: event generation stops, the run ends and is written as usual);
       the events that ended stay in the journal, OUT.partial.csv

the summary's n, mean and variance are of the measured events (ok and late; measurable: no byte of theirs
displaced by a host stall); left out: the ok and late events a stall displaced (n + left out = ok + late). Within
80 columns it is a table of n, mean, variance, min, p99 and max with the outcomes, p50 and p99.9 under it; on a
terminal wider than 139 columns one row with every figure (--json and OUT.json always have every figure).

output: the summary (or with --json one JSON document) on stdout; log lines, warnings and errors on stderr;
on a terminal a live progress line on stderr, fixed fields that fit 80 columns whole (events done of the total,
the share on time, avg and max latency so far in us, events a second, the time left, bench lag or 'lockstep'),
and on a wider terminal the run's name, min, p99, the lag's p99 and the time so far too (normal mode first says it
waits for its tick fit, N of 64 TIMECODEs); none when stderr is not a terminal, nor with -q or --json.
files (--out OUT): OUT.csv and OUT.json (docs/data-format.md: the sidecar has the histogram and the
environment), written at the end; meanwhile each event goes to the journal OUT.partial.csv as it ends (with
OUT.partial.json), removed once OUT.csv and OUT.json are written;
OUT.hist with --hist (cyclictest's -h format: '#' header lines with the environment, '# Histogram', a
'%06d %06d' line per bin, cyclictest's trailer with the overflows' event numbers), FILE with --junit (one testsuite: a testcase for validity, one per gate),
OUT.exectrace, OUT.perfetto-trace and OUT.vcd with --trace, OUT.host.dat with --trace-host (the PC's scheduler
trace: `mmrig explain OUT worst`). A name any of them would take that is taken already
(a dangling link too) is refused before the run starts (exit 2) unless --force; each file is written to a new
temporary file beside it and renamed over it, so a link planted under its name is replaced, never written through.
"""


def ensure_closed(endpoint: object) -> None:
    """After an error out of a run: the endpoint released (a bench ended), whatever the run got to. close() is
    safe to call twice; an endpoint error that escaped mid-run (a lockstep grant that timed out) can leave it
    open otherwise, and a bench orphaned."""
    try:
        endpoint.close()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - best effort; the error being reported is the one that matters
        pass


class Refusal(Exception):
    """A bad option or a rig error: one line on stderr, exit 2, never a traceback."""


@dataclass
class Invocation:
    """One `mmrig run`: its options, gates and name, the moment it began, and how it ends (`refuse`)."""

    args: argparse.Namespace
    gates: Gates
    name: str
    t0: float = field(default_factory=time.monotonic)

    def refuse(self, text: str) -> int:
        """One line on stderr, the JUnit report (an <error>) if asked for (and not the refused output itself),
        exit 2. Never a traceback."""
        print(f"mmrig run: {text}", file=sys.stderr)
        # the report of a refused run, unless the refusal is about the report itself, or its name is taken and
        # --force was not given
        if self.args.junit is not None and not text.startswith("--junit:") and \
                (self.args.force or not existing([self.args.junit])):
            try:
                write_junit(self.args.junit, junit_xml(self.name, judge(self.gates, {}, valid=False), valid=False,
                                                       error=text, time_s=time.monotonic() - self.t0))
            except OSError as exc:
                print(f"mmrig run: cannot write {self.args.junit}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR


def check_options(args: argparse.Namespace) -> None:
    """Options that contradict each other or cannot be honoured (Refusal), before anything is started."""
    if (args.ppm_profiler or args.ppm_executor) and args.profiler is not None:
        raise Refusal("--ppm-profiler / --ppm-executor set the bench's crystals; boards have their own")
    if not args.reset_on_open and args.profiler is None:
        raise Refusal("--no-reset-on-open is for boards (--profiler PORT); the bench's ptys reset nothing")
    if args.arduino and args.profiler is not None:
        raise Refusal("--arduino makes the bench behave as a Mega; boards are what they are")
    if args.profiler_kind != "avr" and args.profiler is not None:
        raise Refusal("--profiler-kind chooses the bench's profiler; a board is what was flashed")
    if args.latency_timer is not None and args.profiler is None:
        raise Refusal("--latency-timer sets a board's FTDI adapter; the bench's is --line ftdi:latency=MS")
    if args.line != "ideal" and args.profiler is not None:
        raise Refusal("--line models the bench's USB-serial adapter; boards have theirs (--latency-timer sets an "
                      "FTDI's)")
    if args.profiler_kind == "8051" and args.arduino:
        raise Refusal("--arduino is for the Megas; the 8051 profiler has no bootloader on the bench")
    if (args.profiler is None) != (args.executor is None) and args.mode != "normal":
        raise Refusal("give both --profiler and --executor (or neither, for the bench)")
    if args.trace and args.out is None:
        raise Refusal("--trace writes OUT.exectrace, OUT.perfetto-trace and OUT.vcd: give --out OUT")
    if args.hist == "" and args.out is None:
        raise Refusal("--hist without a FILE writes OUT.hist: give --out OUT too (or --hist FILE)")
    if args.lag_bound_us is not None and not (math.isfinite(args.lag_bound_us) and args.lag_bound_us > 0):
        raise Refusal(f"--lag-bound-us must be > 0, not {args.lag_bound_us}")
    if args.interval is not None:                  # -i given: from here on the run's rate in ms, as --rate's
        args.rate = args.interval
    problem = aligned_rate_problem(args.mode, args.generation, args.rate)   # --rate 0.5 was quietly one a tick
    if problem:
        # -i 1000 (1 ms, as cyclictest reads it) said in the option the user gave, then in --rate's ms
        raise Refusal(problem if args.interval is None else f"-i {args.rate * 1000:g}us is {problem}")


def run_config(args: argparse.Namespace, name: str) -> RunConfig:
    """The run's configuration from the options (Refusal naming the option that is wrong)."""
    # (a run in phases lasts their sum: no count of its own unless one is given, which RunConfig refuses)
    count = args.count if args.count is not None or args.duration is not None or args.phases is not None else 200
    try:
        cfg = RunConfig(mode=args.mode, distance=args.distance, rate_ms=args.rate, count=count,
                        duration_s=args.duration, random_ids=args.random_ids, generation=args.generation, raw=args.raw,
                        accuracy=args.accuracy, discipline=args.discipline, dispatch=args.dispatch, load=args.load,
                        phases=args.phases,
                        executor_load=ExecutorLoad.parse(args.executor_load), trace=args.trace,
                        late_bound_us=args.late_bound_us, maxima_every_s=args.maxima_every, break_us=args.break_us,
                        max_in_flight=args.max_in_flight,
                        baud=args.baud, priority=args.priority, mlockall=args.mlockall, firing=args.firing,
                        seed=args.seed, name=name, out=args.out)
    except ValueError as exc:
        text = str(exc)
        if args.name is None and args.out is not None and text.startswith("--name "):
            text = "--out: the run's name " + text.removeprefix("--name ") + " (or give --name)"
        raise Refusal(text) from None
    problem = load_unavailable(cfg.load)
    if problem:
        raise Refusal(f"--load {cfg.load}: {problem}")
    for phase in cfg.phases.phases if cfg.phases is not None else ():
        if (problem := load_unavailable(phase.condition)) is not None:
            raise Refusal(f"--phases: phase {phase.name} ({phase.condition}): {problem}")
    return cfg


def check_realtime(cfg: RunConfig) -> None:
    """-p and -m as cyclictest takes them: where the host does not allow SCHED_FIFO at that priority, or locking the
    memory, the run is refused (one line: what the kernel said and how to allow it), never run at another policy
    than asked. The memory is locked here, for the whole run (a second mlockall when the firing thread starts is
    harmless)."""
    if cfg.priority is not None and (why := fifo_refusal(cfg.priority)):
        raise Refusal(f"-p {cfg.priority}: {why}")
    if cfg.mlockall and (why := lock_memory()):
        raise Refusal(f"-m: {why}")


def probe_writable(what: str, path: Path) -> None:
    """A file can be made at PATH as every file of ours is (safefiles.output_problem: its folder there and no link,
    no FIFO, device or folder at its name, a temporary file made in the folder and removed again). No folder is
    made: an OUT in a folder that is not there is a typing error, refused."""
    if (problem := output_problem(path)) is not None:
        raise Refusal(f"{what}: {problem}")


def check_files(args: argparse.Namespace) -> None:
    """The ports exist, a file can be made where every output goes, the run's files (and a journal left by a run
    that could not be written) are not there yet (unless --force)."""
    for what, port in (("--profiler", args.profiler), ("--executor", args.executor)):
        if port and "://" not in port and not Path(port).exists():
            raise Refusal(f"{what}: no such port: {port}")
    if args.out is not None and Path(args.out).is_dir():
        raise Refusal(f"--out: {args.out} is a directory (OUT names the run's files: OUT.csv, OUT.json)")
    for what, path in (("--junit", args.junit), ("--hist", args.hist or None)):
        if path is not None and Path(path).is_dir():
            raise Refusal(f"{what}: {path} is a directory")
    if not args.force:
        for what, path in run_files(args):
            if existing([path]):
                raise Refusal(f"{what}: {path} exists; --force to overwrite")
        journal, _ = journal_paths(args.out) if args.out is not None else (None, None)
        if journal is not None and existing([journal]):
            raise Refusal(f"--out: {journal} holds the events of a run that could not be written (`mmrig report "
                          f"{journal}` reads it): move it away, or --force to overwrite")
    journal = [("--out", p) for p in (journal_paths(args.out) if args.out is not None else ())]
    for what, path in run_files(args) + journal:
        probe_writable(what, Path(path))


def hist_path(args: argparse.Namespace) -> Path | None:
    """Where --hist writes: its FILE, else OUT.hist (beside OUT.csv)."""
    if args.hist is None:
        return None
    return Path(args.hist) if args.hist else run_paths(args.out)[0].with_suffix(".hist")


def run_files(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """Every file the run will write, with the option that asks for it: OUT.csv and OUT.json, the records of its
    inputs OUT.inputs and OUT.pc.inputs (a run on a wall clock: not --unpaced), OUT.hist or --hist FILE, --junit
    FILE, and --trace's OUT.exectrace, OUT.vcd and OUT.perfetto-trace. Each is refused up front if its name is taken
    (a dangling link too) unless --force, or if a FIFO, a device or a folder holds it even with --force; each is
    then written through a new temporary file renamed over it (mmanalysis.safefiles), so with --force a link
    planted under the name is replaced, never written through."""
    files: list[tuple[str, Path]] = []
    if args.out is not None:
        files += [("--out", p) for p in run_paths(args.out)]
        if not args.unpaced:
            files += [("--out", p) for p in record_paths(args.out)]
    if (hist := hist_path(args)) is not None:
        files.append(("--hist", hist))
    if args.junit is not None:
        files.append(("--junit", Path(args.junit)))
    if args.trace and args.out is not None:
        files += [("--trace", p) for p in traced_paths(args.out).values()]
    return files + tracehost.files(args)


def target_of(args: argparse.Namespace) -> Target:
    return Target.of(args.profiler, args.executor, lockstep=args.unpaced, reset_on_open=args.reset_on_open,
                     profiler_kind=args.profiler_kind, ppm_profiler=args.ppm_profiler, ppm_executor=args.ppm_executor,
                     arduino=args.arduino, lag_bound_us=args.lag_bound_us, bench_port=args.bench_port,
                     line_model=args.line, latency_timer_ms=args.latency_timer)


def progress_line(args: argparse.Namespace, cfg: RunConfig, endpoint: Endpoint, lockstep: bool) -> Any:
    """The live progress line: on a terminal only, never into a file or a pipe, nor with -q or --json."""
    if args.quiet or args.json or not sys.stderr.isatty():
        return None
    from mmrig.progress import ProgressLine, bench_lag_text

    lag = (lambda: "lockstep") if lockstep else bench_lag_text(endpoint.health)
    return ProgressLine(sys.stderr, cfg.count, lag, name=cfg.name)


def run_with_signals(runner: Runner, log: Callable[[str], None]) -> RunResult:
    """The run, Ctrl-C once ending event generation (the run is written as usual), SIGTERM / SIGHUP ending it
    early, written and marked invalid (interrupted). KeyboardInterrupt escapes on a second Ctrl-C."""

    def first_interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        runner.stop_requested.set()
        log("mmrig run: stopping (Ctrl-C again to abort)")

    def terminated(signum: int, frame: object) -> None:
        runner.interrupt(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGINT, first_interrupt)
    previous_term = {sig: signal.signal(sig, terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return runner.run()
    finally:
        signal.signal(signal.SIGINT, previous)
        for sig, handler in previous_term.items():
            signal.signal(sig, handler)


def cmd_run(args: argparse.Namespace) -> int:
    inv = Invocation(args, Gates(args.fail_on or (), args.max_latency_us, args.min_on_time),
                     args.name if args.name is not None else (args.out.name if args.out else "run"))
    try:
        check_options(args)        # every bad input ends here, one line and exit 2, before a port is opened
        cfg = run_config(args, inv.name)
        check_files(args)
        check_realtime(cfg)
        if (why := tracehost.check(args)) is not None:
            raise Refusal(why)
    except Refusal as exc:
        return inv.refuse(str(exc))
    if args.force and args.out is not None and (kept := keep_invalid(*run_paths(args.out))) is not None:
        # a rerun of an invalid run keeps it as an earlier try, as `mmrig demo` does, for the teacher to see
        print(f"mmrig run: the invalid run at {run_paths(args.out)[0]} kept as {kept.name} (an earlier try)",
              file=sys.stderr)
    target = target_of(args)
    endpoint = choose_endpoint(target)
    if isinstance(endpoint, Boards):
        if (why := endpoint.latency_timer_problem()) is not None:
            return inv.refuse(f"--latency-timer: {why}")
        for warning in endpoint.warnings():   # an FTDI latency timer above 1 ms: one line each, what it costs, the fix
            print(f"mmrig run: WARNING: {warning.text}", file=sys.stderr)
    if cfg.trace and endpoint.trace_path() is not None:
        return inv.refuse(f"--trace: {endpoint.trace_path()}")
    progress = progress_line(args, cfg, endpoint, target.where == LOCKSTEP)
    log: Callable[[str], None] | None = None if args.quiet else (
        progress.print_above if progress is not None else (lambda text: print(text, file=sys.stderr)))
    runner = Runner(cfg, endpoint, log, images=bench_images(target), histogram_us=args.histogram_us)
    if progress is not None:
        runner.observer = progress.observer
        progress.start()
    try:
        host_trace = tracehost.start(args)       # before the run's first event: the trace spans the run
    except tracehost.HostTraceError as exc:
        ensure_closed(endpoint)
        return inv.refuse(f"--trace-host: {exc}")
    try:
        result = run_with_signals(runner, log or (lambda t: print(t, file=sys.stderr)))
        if (problem := tracehost.finish(host_trace, result)) is not None:
            print(f"mmrig run: {problem}", file=sys.stderr)
        host_trace = None
    except (LinkError, EndpointError) as exc:
        ensure_closed(endpoint)
        return inv.refuse(str(exc).splitlines()[0])
    except RunNotWritten as exc:                 # which file, why, and the journal that holds the events
        ensure_closed(endpoint)
        return inv.refuse(str(exc))
    except OSError as exc:                       # the run's files could not be written
        ensure_closed(endpoint)
        return inv.refuse(f"cannot write the run: {exc}")
    except KeyboardInterrupt:
        ensure_closed(endpoint)
        journal = journal_paths(args.out)[0] if args.out is not None else None
        kept = f": the events that ended are in {journal}" if journal is not None and journal.exists() else ""
        print(f"mmrig run: interrupted{kept}", file=sys.stderr)
        return 130
    finally:
        if host_trace is not None:               # the run ended in an error: its trace is not kept
            host_trace.abort()
        if progress is not None:
            progress.close()
    return report(inv, cfg, result)


def report(inv: Invocation, cfg: RunConfig, result: RunResult) -> int:
    """The run's summary (or --json), its histogram file, its gates and JUnit report; the exit code."""
    args = inv.args
    files: list[Path] = [p for p in (result.csv_path, result.json_path) if p is not None]
    hist = hist_path(args)
    if hist is not None:
        try:
            atomic_write(hist, hist_text(result.sidecar, shlex.join(["mmrig", *sys.argv[1:]])).encode())
        except OSError as exc:
            return inv.refuse(f"cannot write {hist}: {exc.strerror or exc}")
        files.append(hist)
    verdicts = judge(inv.gates, result.summary, result.valid)
    broke = (result.sidecar.get("break") or {}).get("event") is not None
    code = exit_code(result.valid, verdicts, broke)
    text = summary_lines(cfg, result, files, shutil.get_terminal_size().columns) + \
        break_lines(result.sidecar, result.csv_path) + \
        tracehost.break_explanation(result) + \
        exec_break_explanation(result.sidecar, result.csv_path)
    verdict_lines = gate_lines(inv.gates, result, verdicts, code, files)
    if args.json:
        print(dumps_readable(json_document(cfg, result, verdicts, code, files, hist, args.junit)))
        for line in verdict_lines:
            print(line, file=sys.stderr)
    else:
        print("\n".join(text + verdict_lines))
    if args.junit is not None:
        props = {k: result.sidecar["config"].get(k) for k in ("mode", "distance", "count", "rate_ms", "dispatch")}
        props["target"] = (result.sidecar.get("target") or {}).get("kind")
        try:
            write_junit(args.junit, junit_xml(cfg.name, verdicts, valid=result.valid,
                                              reasons=[r["text"] for r in result.sidecar.get("invalid_reasons") or []],
                                              files=files, time_s=time.monotonic() - inv.t0, properties=props,
                                              system_out="\n".join(text + verdict_lines)))
        except OSError as exc:
            return inv.refuse(f"cannot write {args.junit}: {exc.strerror or exc}")
    return code


def break_lines(sidecar: dict[str, Any], csv: Path | None) -> list[str]:
    """The break (--break-us) in words, and the one command that computes the moments around it again traced."""
    b = sidecar.get("break")
    if not b:
        return []
    if b.get("event") is None:
        return [f"break: no event past {b['us']:g} us"]
    lat = f"{b['latency_us']:.3f} us" if b.get("latency_us") is not None else "no latency"
    lines = [f"break: event {b['event']} ({b['outcome']}, {lat}; the break is {b['us']:g} us) at tick "
             f"{b['scheduled_tc']}: generation stopped there"]
    target = sidecar.get("target") or {}
    if csv is None:
        lines.append("give --out to keep the run: a replay reads its files")
    elif (sidecar.get("inputs") or {}).get("complete"):
        lines.append(f"replay it with the executor traced around it: mmrig replay {csv} --around {b['event']} "
                     f"--keep {csv.parent}")
    elif ((sidecar.get("executor_profile") or {}).get("files") or {}).get("exectrace"):
        lines.append(f"the executor's trace of the run: {sidecar['executor_profile']['files']['exectrace']} "
                     f"(mmrig explain {csv} {b['event']})")
    elif target.get("lockstep"):
        lines.append("a lockstep run is made again by running it again: the same command with --trace")
    else:
        lines.append("no record of the run's inputs to replay it from (boards: not built yet)")
    return lines


def summary_lines(cfg: RunConfig, result: RunResult, files: list[Path], columns: int = 80) -> list[str]:
    """The printed summary, fitted to `columns` (the terminal's width); --json and the files have all of it."""
    text = [summary_text(cfg.name, result.summary, columns)]
    if "budget" in result.sidecar:
        text.append(format_budget(result.sidecar["budget"]))
    if "grid" in result.sidecar:
        text.append(format_grid(result.sidecar["grid"]))
    if "phases" in result.sidecar:
        text.append(format_phases(result.sidecar["phases"]))
    if "profiler_histogram" in result.sidecar:
        text.append(format_profiler_histogram(result.sidecar["profiler_histogram"]))
    if files:
        text.append("wrote " + ", ".join(str(p) for p in files))
    else:
        text.append("nothing written: give -o NAME to keep the run as NAME.csv and NAME.json")
    return text


def gate_lines(gates: Gates, result: RunResult, verdicts: list[Any], code: int, files: list[Path]) -> list[str]:
    where = files_words(files)
    if not result.valid:
        kept = "kept on disk, not a result" if files else "not a result"
        lines = [f"INVALID RUN ({kept}): {result.sidecar['invalid_reason']}"]
        if not gates.empty:
            lines.append(f"gates not judged: the run is invalid ({where})")
        return lines
    lines = [f"FAIL {v.text}; {where}" for v in verdicts if v.failed]
    if verdicts and code == 0:
        lines.append(f"PASS all {len(verdicts)} gate{'s' if len(verdicts) > 1 else ''} ({gates.options()})")
    return lines


def json_document(cfg: RunConfig, result: RunResult, verdicts: list[Any], code: int, files: list[Path],
                  hist_path: Path | None, junit: Path | None) -> dict[str, Any]:
    """`mmrig run --json`: one document on stdout."""
    doc = {"name": cfg.name, "valid": result.valid, "exit_code": code, "exit": EXIT_CODES[code],
           "invalid_reasons": result.sidecar.get("invalid_reasons") or [],
           "summary": result.summary, "histogram": result.sidecar.get("histogram"),
           "gates": [v.as_dict() for v in verdicts],
           "files": {"csv": str(result.csv_path) if result.csv_path else None,
                     "json": str(result.json_path) if result.json_path else None,
                     "hist": str(hist_path) if hist_path else None, "junit": str(junit) if junit else None},
           "config": result.sidecar.get("config"), "target": result.sidecar.get("target"),
           "environment": result.sidecar.get("environment")}
    if "budget" in result.sidecar:
        doc["budget"] = result.sidecar["budget"]
    if "phases" in result.sidecar:             # a run in phases: each phase's boundaries, summary and histogram
        doc["phases"] = result.sidecar["phases"]
    return doc


def add_normal_mode_options(run: argparse.ArgumentParser) -> None:
    """Normal mode's firing: the accuracy slider, cyclictest's -p and -m, the firing thread, the servo."""
    normal = run.add_argument_group("normal mode (the PC fires)")
    normal.add_argument("--accuracy", type=int, default=0, help="normal mode: 0 plain sleep .. 100 busy-wait last 20 ms")
    normal.add_argument("--priority", "-p", type=int, default=None, metavar="PRIO",
                     help="normal mode: the firing thread at SCHED_FIFO PRIO, 1..99 (cyclictest's -p); where the "
                          "kernel refuses it (no root, CAP_SYS_NICE or RLIMIT_RTPRIO) RealtimeKit is asked, at most "
                          "its ceiling (said); refused, as cyclictest does, where neither allows it; default: "
                          "SCHED_OTHER, as the process is")
    normal.add_argument("--mlockall", "-m", action="store_true",
                     help="normal mode: lock the run's memory (mlockall MCL_CURRENT|MCL_FUTURE, cyclictest's -m); "
                          "refused where the host does not allow it (root, CAP_IPC_LOCK or RLIMIT_MEMLOCK)")
    normal.add_argument("--firing", choices=FIRINGS, default="native",
                     help="normal mode: what writes each FIRE at its moment: native, a C thread (clock_nanosleep to "
                          "the moment, no interpreter lock on its path: as cyclictest's thread; the default), or "
                          "python, a Python thread (what a Python application of your own would get)")
    normal.add_argument("--discipline", action="store_true",
                     help="normal mode: fire by tick starts placed from the profiler's own stamps (a servo), "
                          "not by TIMECODE arrivals alone (the paper's way, the default)")


def add_output_options(run: argparse.ArgumentParser) -> None:
    """What a run prints and writes besides its CSV and JSON: --json, --junit, the break, the host's trace, the
    histogram, -q."""
    report = run.add_argument_group("output")
    report.add_argument("--json", action="store_true",
                        help="print the summary, histogram, gates, files and environment as one JSON document on "
                             "stdout (words go to stderr)")
    report.add_argument("--junit", type=Path, default=None, metavar="FILE",
                        help="write a JUnit XML report: a testcase for validity and one per gate")
    report.add_argument("-b", "--break-us", type=positive_float, default=None, metavar="US",
                        help="stop at the first event whose latency exceeds US, or that ends late or missed (as "
                             "latmus -A): the run is written up to it, exit 102, and the command that replays it "
                             "with the executor traced is printed; cyclictest's -b US")
    tracehost.add_options(report)
    report.add_argument("--hist", nargs="?", const="", default=None, metavar="FILE",
                        help="the histogram file, cyclictest's -h/--histogram (here -h is help): the latency "
                             "histogram in cyclictest's format (default OUT.hist): '#' lines with the command line "
                             "and the environment, '# Histogram', a '%%06d %%06d' line per bin (its start in us, its "
                             "count), then cyclictest's trailer (Total, Min/Avg/Max Latencies, Histogram Overflows and "
                             "the overflows' event numbers); every run's OUT.json has the histogram too")
    report.add_argument("--histogram-us", type=positive_float, default=None, metavar="BIN",
                        help="the histogram's bin width in us (1000 fixed bins from 0, and an overflow count; "
                             "cyclictest's -h US: 1 us bins up to US); default 1 in mixed and verification mode, "
                             "10 in normal mode")
    report.add_argument("--maxima-every", type=duration_s, default=300.0, metavar="DURATION",
                        help="the worst case over time in OUT.json ('maxima'): count, max and p99 of the latency per "
                             "interval this long of the run, as OSADL plots consecutive maxima: seconds, or with a "
                             "unit as -D takes it (30s, 5m, 1h; default 5m); mmrig report draws them")
    report.add_argument("--quiet", "-q", action="store_true",
                        help="no progress line and no log lines (warnings, errors and the summary still)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="one experiment run (cyclictest-like), CSV + JSON out, summary printed",
                         description="One experiment run (cyclictest-like): CSV + JSON out, the summary printed, "
                                     "gates judged for CI.",
                         epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--mode", choices=("mixed", "normal", "verification"), default="mixed",
                     help="mixed: the PC schedules, the executor fires (the default); normal: the PC fires itself, "
                          "no executor; verification: the executor schedules and fires its own events, the PC only "
                          "listens (the executor alone, the paper's section 5.2)")
    run.add_argument("--distance", "-d", type=int, default=2, help="schedule distance, ticks ahead (default 2)")
    interval = run.add_mutually_exclusive_group()
    interval.add_argument("-i", "--interval", dest="interval", type=parse_interval, default=None, metavar="US",
                          help="between events, cyclictest's -i: a plain number is microseconds (-i 1000 is 1 ms), "
                               "or with a unit: 500us, 1ms, 71.111ms, 1tick, 2ticks (default: one per tick)")
    interval.add_argument("--rate", dest="rate", type=parse_rate, default=None, metavar="MS",
                          help="the same in milliseconds, as the GUI's slider: a plain number is ms (--rate 1 is "
                               "-i 1ms), or with a unit, or 'tick'. Normal mode faster than a tick makes events due "
                               "at moments inside ticks, a schedule grid (e.g. -i 1ms --baud 500000: 1,000 a second, "
                               "docs/kilohertz.md); aligned generation honours only a whole number of ticks "
                               "(71.111ms, 142.222ms, ...): another interval is refused with the nearest it honours, "
                               "not rounded")
    run.add_argument("--count", "-l", type=int, default=None, help="events (default 200 unless --duration)")
    run.add_argument("--duration", "-D", type=duration_s, default=None,
                     help="event generation this long: seconds, or with a unit (90s, 10m, 1h) as cyclictest's -D")
    run.add_argument("--random-ids", action="store_true",
                     help="each event's 3-bit id drawn at random (the paper's slider; --seed), not counted up")
    run.add_argument("--seed", type=int, default=1, metavar="N",
                     help="the seed of --random-ids' ids (default 1): in lockstep the same seed gives the same CSV")
    run.add_argument("--generation", choices=("aligned", "free", "periodic"), default="aligned",
                     help="aligned: right after a new TIMECODE; free: a timer at the rate (the paper's); periodic "
                          "(mixed): the executor is sent the whole schedule in PERIODIC frames and fires its moments "
                          "inside ticks (-i 1ms --baud 500000: 1,000 events a second)")
    raw = run.add_mutually_exclusive_group()
    raw.add_argument("--raw", dest="raw", action="store_const", const=True, default=None,
                     help="a periodic series: a RESULT per event, one CSV row each (refused where the profiler's line "
                          "cannot carry them); by default where it can, else the AVR profiler's histogram alone")
    raw.add_argument("--no-raw", dest="raw", action="store_const", const=False,
                     help="a periodic series: the AVR profiler's own histogram alone (its 1 us cells, min/max/mean "
                          "and outcomes, no RESULT per event: -i 1ms at 115200 baud; the CSV has no event rows)")
    add_normal_mode_options(run)
    run.add_argument("--dispatch", choices=("isr", "task"), default="isr", help="executor dispatch path")
    run.add_argument("--load", nargs="?", const="heavy", default="idle", metavar="CONDITION",
                     help="PC load (stress-ng) during the run: idle (none, the default), cpu, memory, disk, network "
                          "(loopback only, in a network namespace of its own), heavy (cpu + memory + disk: the "
                          "paper's heavy load) or all (heavy + network); --load alone is heavy")
    run.add_argument("--phases", default=None, metavar="PHASES",
                     help="the PC's load in phases, one after the other, e.g. idle:2h,load=cpu:1h,load=io:1h: each "
                          "part [load=]CONDITION:DURATION (a --load condition, or io for disk; a duration with s, m or "
                          "h); the run lasts their sum (no --count, --duration or --load with it) and its sidecar and "
                          "report give each phase's figures apart (docs/long-runs.md)")
    run.add_argument("--trace", action="store_true",
                     help="bench: trace the executor from outside (task switches, interrupts, pins): writes "
                          "OUT.exectrace, OUT.perfetto-trace (ui.perfetto.dev), OUT.vcd (PulseView, GTKWave) and "
                          "the executor's profile (C_i, T_i, U) into OUT.json")
    run.add_argument("--executor-load", default="none", metavar="LOAD",
                     help="the executor's own load: none, or any of cpu, periodic=PERIOD/EXEC (a task above the "
                          "timecode task, e.g. 10ms/2ms), rx=N (frames/s it decodes and drops), comma-separated")
    run.add_argument("--baud", type=int, default=None, metavar="RATE",
                     help="run both links at RATE baud (e.g. 115200): asked of the nodes with BAUD after the "
                          "handshake; default: the rate they start at (their HELLO, 9600 as built)")
    run.add_argument("--late-bound-us", type=float, default=1000.0, metavar="US",
                     help="an event this late or later (us after its tick's start) ends 'late', not 'ok' "
                          "(default 1000)")
    run.add_argument("--lag-bound-us", type=float, default=None,
                     help="paced bench: an event a byte of which a host stall displaced by more than this is not "
                          "measurable, validity by cause (default: normal 1000; mixed and verification a tenth of the "
                          "schedule's spare time: 4700 one tick ahead, 11800 two ahead); the run is invalid when more "
                          "than 5%% of its events are not measurable")
    run.add_argument("--max-in-flight", type=int, default=8, metavar="N",
                     help="at most N events scheduled and not yet ended at once: a new one past it is skipped, and "
                          "counted (default 8; a schedule grid has no cap)")
    run.add_argument("--out", "-o", type=Path, default=None, help="writes OUT.csv and OUT.json")
    run.add_argument("--name", default=None,
                     help="the run's name (default: OUT's file name, or 'run'): 1..64 of A-Z a-z 0-9 . _ -")
    run.add_argument("--force", action="store_true",
                     help="replace the run's files that exist already (OUT.csv, OUT.json, the --hist, --junit and "
                          "--trace files); an invalid run at OUT is kept first, as OUT.attemptK (an earlier try); "
                          "without --force a taken name is refused before the run starts")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--bench", action="store_true", help="the paced virtual bench (default)")
    where.add_argument("--unpaced", "--lockstep", dest="unpaced", action="store_true",
                       help="the virtual bench in lockstep: virtual time advances only as far as the scheduler has "
                            "handled it, so the outcome never depends on the host (tests, CI, the firmware's figures; "
                            "not normal mode)")
    add_ppm_options(run)
    run.add_argument("--profiler", default=None, help="real profiler port or pyserial URL")
    run.add_argument("--executor", default=None, help="real executor port or pyserial URL")
    add_profiler_kind_option(run)
    add_line_model_option(run)
    run.add_argument("--latency-timer", type=latency_timer_ms, default=None, metavar="MS",
                     help="boards: set the FTDI ports' latency timer to MS (1..255; 1 for timing) for the run and put "
                          "it back after (root, or the udev rule of docs/usb-serial.md); the sidecar records both")
    run.add_argument("--bench-port", choices=("socket", "pty"), default="socket",
                     help="the bench: which host side of its lines the run opens: socket (the default: the PC's "
                          "bytes reach the bench's reader in the write call itself) or pty (what other programs "
                          "open: the kernel's tty hop included, milliseconds on a busy machine; docs/bench.md)")
    run.add_argument("--arduino", action="store_true",
                     help="the bench behaves as two Arduino Megas: their stock bootloader runs first and opening a "
                          "port resets the node (docs/bench.md, 'Arduino mode')")
    run.add_argument("--no-reset-on-open", dest="reset_on_open", action="store_false",
                     help="boards: opening the ports does not reset the nodes (an adapter without DTR reset), so "
                          "the handshake asks for HELLO at once instead of listening 1.5 s for the boot HELLO of "
                          "an Arduino its open reset")
    gate = run.add_argument_group("gates (CI): exit 1 when one fails, see the exit codes below")
    gate.add_argument("--fail-on", type=fail_on, default=None, metavar="OUTCOMES",
                      help="fail if any event ended with one of these outcomes: a comma list of late,missed,early,lost")
    gate.add_argument("--max-latency-us", type=positive_float, default=None, metavar="N",
                      help="fail if the largest measured latency is above N us (or nothing was measured)")
    gate.add_argument("--min-on-time", type=percent, default=None, metavar="PCT",
                      help="fail if fewer than PCT %% of the events were on time (ok)")
    add_output_options(run)
    run.set_defaults(func=cmd_run)
