"""`mmrig`: the one command line of the rig: run, sweep, demo, report, bench, boards, gui, proto."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
import time
from pathlib import Path

import serial

from mmproto import PROFILER_KINDS, StreamDecoder
from mmproto.messages import SPEC_NAMES
from mmproto.wiretime import markdown_table

from . import __version__

def cmd_proto_sizes(args: argparse.Namespace) -> int:
    print(markdown_table(tuple(args.baud)))
    return 0


def cmd_proto_decode(args: argparse.Namespace) -> int:
    """Decodes a capture file or a live serial port (any pyserial URL) and prints each message."""
    decoder = StreamDecoder()
    if Path(args.source).is_file():
        chunks = [Path(args.source).read_bytes()]
        source = None
    else:
        try:
            source = serial.serial_for_url(args.source, baudrate=args.baud, timeout=0.2)
        except (serial.SerialException, ValueError) as exc:
            print(f"mmrig proto decode: cannot open {args.source}: {exc}", file=sys.stderr)
            return 2
        deadline = time.monotonic() + args.duration if args.duration else None
        chunks = iter(lambda: source.read(256) if deadline is None or time.monotonic() < deadline else None, None)
    try:
        for chunk in chunks:
            for r in decoder.feed(chunk):
                lost = f"  ({r.lost_before} lost before)" if r.lost_before else ""
                print(f"seq {r.seq:3d}  {SPEC_NAMES[type(r.message)]:<11} {r.message}{lost}")
    except KeyboardInterrupt:
        pass
    except serial.SerialException as exc:
        print(f"mmrig proto decode: port {args.source} failed: {exc}", file=sys.stderr)
    finally:
        if source is not None:
            source.close()
    print("counters: " + " ".join(f"{k}={v}" for k, v in decoder.counters.as_dict().items()))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import (NO_VALID_RUN, RESULTS, avr_figures, beside_table, no_valid_run, notes, polling_added,
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


def parse_rate(text: str) -> float | None:
    if text == "tick":
        return None
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("rate must be > 0 ms or 'tick'")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value


def percent(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be 0..100, not {text}")
    return value


def fail_on(text: str) -> tuple[str, ...]:
    from .gates import parse_fail_on

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
  2  usage or rig error: bad option, a port that cannot be opened, a bench that cannot start (no run)
  3  invalid run: kept on disk, never a result; its gates are not judged
  1  a gate failed (--fail-on, --max-latency-us, --min-on-time)
  0  the run is valid and every gate passed (or none was given)
  130  interrupted twice with Ctrl-C (once: event generation stops, the run ends and is written as usual)

output: the summary (or with --json one JSON document) on stdout; log lines, warnings and errors on stderr;
on a terminal a live progress line on stderr (events done, on time, p99 and max so far, bench lag),
none when stderr is not a terminal, nor with -q or --json.
files (--out OUT): OUT.csv and OUT.json (docs/data-format.md: the sidecar has the histogram and the
environment), OUT.hist with --hist (latmus-like: '#' header lines with the environment, then
'bin_start_us count' lines), FILE with --junit (one testsuite: a testcase for validity, one per gate).
"""


def ensure_closed(endpoint: object) -> None:
    """After an error out of a run: the endpoint released (a bench ended), whatever the run got to. close() is
    safe to call twice; an endpoint error that escaped mid-run (a lockstep grant that timed out) can leave it
    open otherwise, and a bench orphaned."""
    try:
        endpoint.close()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - best effort; the error being reported is the one that matters
        pass


def cmd_run(args: argparse.Namespace) -> int:
    from mmanalysis.histogram import hist_text
    from mmproto import LinkError

    from .budget import format_budget
    from .config import RunConfig
    from .endpoint import Boards, Endpoint, EndpointError
    from .exload import ExecutorLoad
    from .export import run_paths
    from .gates import EXIT_CODES, EXIT_ERROR, Gates, exit_code, judge
    from .junit import files_words, junit_xml, write_junit
    from .runner import Runner
    from .stats import format_summary

    gates = Gates(args.fail_on or (), args.max_latency_us, args.min_on_time)
    name = args.name if args.name is not None else (args.out.name if args.out else "run")
    t0 = time.monotonic()

    def usage_or_rig_error(text: str) -> int:
        """One line on stderr, the JUnit report (an <error>) if asked for, exit 2. Never a traceback."""
        print(f"mmrig run: {text}", file=sys.stderr)
        if args.junit is not None:
            try:
                write_junit(args.junit, junit_xml(name, judge(gates, {}, valid=False), valid=False, error=text,
                                                  time_s=time.monotonic() - t0))
            except OSError as exc:
                print(f"mmrig run: cannot write {args.junit}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR

    # Every bad input ends here, one line and exit 2, before a bench is started or a port opened.
    if (args.ppm_profiler or args.ppm_executor) and args.profiler is not None:
        return usage_or_rig_error("--ppm-profiler / --ppm-executor set the bench's crystals; boards have their own")
    if not args.reset_on_open and args.profiler is None:
        return usage_or_rig_error("--no-reset-on-open is for boards (--profiler PORT); the bench's ptys reset nothing")
    if args.arduino and args.profiler is not None:
        return usage_or_rig_error("--arduino makes the bench behave as a Mega; boards are what they are")
    if args.profiler_kind != "avr" and args.profiler is not None:
        return usage_or_rig_error("--profiler-kind chooses the bench's profiler; a board is what was flashed")
    if args.profiler_kind == "8051" and args.arduino:
        return usage_or_rig_error("--arduino is for the Megas; the 8051 profiler has no bootloader on the bench")
    if (args.profiler is None) != (args.executor is None) and args.mode != "normal":
        return usage_or_rig_error("give both --profiler and --executor (or neither, for the bench)")
    if args.trace and args.out is None:
        return usage_or_rig_error("--trace writes OUT.exectrace, OUT.perfetto-trace and OUT.vcd: give --out OUT")
    if args.hist == "" and args.out is None:
        return usage_or_rig_error("--hist without a FILE writes OUT.hist: give --out OUT too (or --hist FILE)")
    if args.lag_bound_us is not None and not (math.isfinite(args.lag_bound_us) and args.lag_bound_us > 0):
        return usage_or_rig_error(f"--lag-bound-us must be > 0, not {args.lag_bound_us}")
    count = args.count if args.count is not None or args.duration is not None else 200
    try:
        cfg = RunConfig(mode=args.mode, distance=args.distance, rate_ms=args.rate, count=count,
                        duration_s=args.duration, random_ids=args.random_ids, generation=args.generation,
                        accuracy=args.accuracy, discipline=args.discipline, dispatch=args.dispatch, load=args.load,
                        executor_load=ExecutorLoad.parse(args.executor_load), trace=args.trace,
                        late_bound_us=args.late_bound_us, max_in_flight=args.max_in_flight, baud=args.baud, name=name,
                        out=args.out)
    except ValueError as exc:
        text = str(exc)
        if args.name is None and args.out is not None and text.startswith("--name "):
            text = "--out: the run's name " + text.removeprefix("--name ") + " (or give --name)"
        return usage_or_rig_error(text)
    from .load import unavailable as load_unavailable
    problem = load_unavailable(cfg.load)
    if problem:
        return usage_or_rig_error(f"--load {cfg.load}: {problem}")
    for what, port in (("--profiler", args.profiler), ("--executor", args.executor)):
        if port and "://" not in port and not Path(port).exists():
            return usage_or_rig_error(f"{what}: no such port: {port}")
    for what, path in (("--out", args.out), ("--junit", args.junit), ("--hist", args.hist or None)):
        if path is not None:
            parent = Path(path).parent
            if Path(path).is_dir():
                return usage_or_rig_error(f"{what}: {path} is a directory")
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                return usage_or_rig_error(f"{what}: cannot create {parent}: {exc.strerror or exc}")
            if not os.access(parent, os.W_OK | os.X_OK):
                return usage_or_rig_error(f"{what}: {parent} is not writable")
    if args.out is not None and not args.force:
        for existing in run_paths(args.out):
            if existing.exists():
                return usage_or_rig_error(f"--out: {existing} exists; --force to overwrite")
    endpoint: Endpoint
    images = None
    if args.profiler is not None:
        endpoint = boards = Boards(args.profiler, args.executor, reset_on_open=args.reset_on_open)
        for warning in boards.warnings():   # an FTDI latency timer above 1 ms: one line each, with the fix
            print(f"mmrig run: WARNING: {warning.text}", file=sys.stderr)
    else:
        from mmhil import BenchEndpoint, LockstepEndpoint  # the entry point chooses; the core never imports it
        from mmhil.bench import default_images

        bench_opts = dict(ppm_profiler=args.ppm_profiler, ppm_executor=args.ppm_executor, arduino=args.arduino,
                          profiler_kind=args.profiler_kind)
        endpoint = (LockstepEndpoint(**bench_opts) if args.unpaced else
                    BenchEndpoint(lag_bound_us=args.lag_bound_us, **bench_opts))
        images = default_images(args.profiler_kind)   # what Bench() loads

    if cfg.trace and endpoint.trace_path() is not None:
        return usage_or_rig_error(f"--trace: {endpoint.trace_path()}")

    # The live progress line: on a terminal only, never into a file or a pipe, nor with -q or --json.
    progress = None
    if not args.quiet and not args.json and sys.stderr.isatty():
        from .progress import ProgressLine, bench_lag_text

        lag = (lambda: "lockstep") if args.unpaced and args.profiler is None else bench_lag_text(endpoint.health)
        progress = ProgressLine(sys.stderr, cfg.count, lag, name=name)
    if args.quiet:
        log = None
    elif progress is not None:
        log = progress.print_above
    else:
        def log(text: str) -> None:
            print(text, file=sys.stderr)
    runner = Runner(cfg, endpoint, log, images=images, histogram_us=args.histogram_us)
    if progress is not None:
        runner.observer = progress.observer
        progress.start()

    def first_interrupt(signum: int, frame: object) -> None:
        # Ctrl-C once: generation stops, the events in flight end, the run is written; twice: abort.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        runner.stop_requested.set()
        (log or (lambda t: print(t, file=sys.stderr)))("mmrig run: stopping (Ctrl-C again to abort)")

    def terminated(signum: int, frame: object) -> None:
        # SIGTERM / SIGHUP (a CI timeout, a closed terminal): the run ends early, is written with the events
        # so far and marked invalid (reason interrupted); the bench is stopped as after any run
        runner.interrupt(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGINT, first_interrupt)
    previous_term = {sig: signal.signal(sig, terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        result = runner.run()
    except (LinkError, EndpointError) as exc:
        ensure_closed(endpoint)
        return usage_or_rig_error(str(exc).splitlines()[0])
    except OSError as exc:                       # the run's files could not be written
        ensure_closed(endpoint)
        return usage_or_rig_error(f"cannot write the run: {exc}")
    except KeyboardInterrupt:
        ensure_closed(endpoint)
        print("mmrig run: interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
        for sig, handler in previous_term.items():
            signal.signal(sig, handler)
        if progress is not None:
            progress.close()

    files: list[Path] = [p for p in (result.csv_path, result.json_path) if p is not None]
    hist_path = None
    if args.hist is not None:
        hist_path = Path(args.hist) if args.hist else Path(result.csv_path or args.out).with_suffix(".hist")
        try:
            hist_path.write_text(hist_text(result.sidecar))
        except OSError as exc:
            return usage_or_rig_error(f"cannot write {hist_path}: {exc.strerror or exc}")
        files.append(hist_path)
    verdicts = judge(gates, result.summary, result.valid)
    code = exit_code(result.valid, verdicts)
    where = files_words(files)

    text = [format_summary(cfg.name, result.summary)]
    if "budget" in result.sidecar:
        text.append(format_budget(result.sidecar["budget"]))
    if files:
        text.append("wrote " + ", ".join(str(p) for p in files))
    else:
        text.append("nothing written (no --out): give -o NAME to keep the run as NAME.csv and NAME.json")
    text.append("n, mean, variance: the measured events (ok, late; measurable: no byte of theirs displaced by a host stall); "
                "the rest counted apart")
    verdict_lines = []
    if not result.valid:
        kept = "kept on disk, not a result" if files else "not a result"
        verdict_lines.append(f"INVALID RUN ({kept}): {result.sidecar['invalid_reason']}")
        if not gates.empty:
            verdict_lines.append(f"gates not judged: the run is invalid ({where})")
    else:
        verdict_lines += [f"FAIL {v.text}; {where}" for v in verdicts if v.failed]
        if verdicts and code == 0:
            verdict_lines.append(f"PASS all {len(verdicts)} gate{'s' if len(verdicts) > 1 else ''} "
                                 f"({gates.options()})")

    if args.json:
        doc = {"name": cfg.name, "valid": result.valid, "exit_code": code, "exit": EXIT_CODES[code],
               "invalid_reasons": result.sidecar.get("invalid_reasons") or [],
               "summary": result.summary, "histogram": result.sidecar.get("histogram"),
               "gates": [v.as_dict() for v in verdicts],
               "files": {"csv": str(result.csv_path) if result.csv_path else None,
                         "json": str(result.json_path) if result.json_path else None,
                         "hist": str(hist_path) if hist_path else None,
                         "junit": str(args.junit) if args.junit else None},
               "config": result.sidecar.get("config"), "target": result.sidecar.get("target"),
               "environment": result.sidecar.get("environment")}
        if "budget" in result.sidecar:
            doc["budget"] = result.sidecar["budget"]
        print(dumps_readable(doc))
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
                                              files=files, time_s=time.monotonic() - t0, properties=props,
                                              system_out="\n".join(text + verdict_lines)))
        except OSError as exc:
            return usage_or_rig_error(f"cannot write {args.junit}: {exc.strerror or exc}")
    return code


SWEEP_EPILOG = """\
exit codes: 0 every point valid; 3 some point invalid or failed (kept on disk, listed in campaign.json);
2 bad input or a cluster that cannot be reached (one line, nothing run); 130 interrupted (the points done
are kept: run the same command again, or --resume --out FOLDER, to continue).
files: FOLDER/points/POINT.csv + .json (each a normal run), FOLDER/campaign.json (the campaign's sidecar),
FOLDER/figures/on_time.png + .svg. docs/campaigns.md: clusters on other machines, the limits.
"""


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import (DISPATCHES, EXIT_INTERRUPTED, LOADS, Campaign, Plan, SweepError, describe, parse_bauds,
                        parse_choices, parse_distances, parse_rates, run_campaign)

    def error(text: str) -> int:
        print(f"mmrig sweep: {text}", file=sys.stderr)
        return 2

    log = (lambda _t: None) if args.quiet else (lambda t: print(t, file=sys.stderr, flush=True))
    try:
        if args.workers is not None and args.workers < 1:
            raise SweepError(f"--workers must be at least 1, not {args.workers}")
        if args.paced and (args.cluster or args.workers):
            raise SweepError("--paced points run one at a time in this process (they measure the host): "
                             "no --workers or --cluster with --paced")
        given = [a for a in ("distance", "rate", "dispatch", "load", "baud", "count", "mode")
                 if getattr(args, a) is not None]
        if args.resume and not given:
            plan = None                         # the folder's own axes and options
        else:
            if args.distance is None:
                raise SweepError("--distance is required (e.g. 1..4), or --resume --out FOLDER to continue one")
            plan = Plan(distance=parse_distances(args.distance), rate=parse_rates(args.rate or "tick"),
                        dispatch=parse_choices(args.dispatch or "isr", DISPATCHES, "--dispatch"),
                        load=parse_choices(args.load or "idle", LOADS, "--load"),
                        baud=parse_bauds(args.baud) if args.baud else None, mode=args.mode or "mixed",
                        count=args.count if args.count is not None else 200, paced=args.paced,
                        profiler_kind=args.profiler_kind)
        if args.out.exists() and not args.out.is_dir():
            raise SweepError(f"--out: {args.out} exists and is not a folder")
        camp = Campaign.open(args.out, plan)
        plan = camp.plan
        if plan.paced and any(x != "idle" for x in plan.load) and shutil.which("stress-ng") is None:
            raise SweepError("--load needs stress-ng, which is not installed (apt-get install stress-ng)")
    except SweepError as exc:
        return error(str(exc))

    from mmhil.sweeptask import run_point   # the entry point chooses the bench; the core never does

    try:
        args.out.mkdir(parents=True, exist_ok=True)
        camp.save()
    except OSError as exc:
        return error(f"--out: cannot write {args.out}: {exc.strerror or exc}")
    log(f"mmrig sweep: campaign {args.out} ({describe(plan)}): {len(plan.points())} points")
    def stop(signum: int, frame: object) -> None:
        # SIGTERM / SIGHUP (a CI timeout, a closed terminal) end the campaign as Ctrl-C does: the points done
        # are kept, the cluster and the benches are closed, the sidecar says interrupted
        raise KeyboardInterrupt(signal.Signals(signum).name)

    # The handlers stay until the figures are written: a signal at any moment ends the campaign as Ctrl-C
    # does, never with a traceback nor with the sidecar left saying "running".
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    figures = []
    try:
        try:
            outcome = run_campaign(camp, run_point, workers=args.workers, cluster=args.cluster, log=log)
        except SweepError as exc:
            return error(str(exc))
        except OSError as exc:
            return error(f"cannot write the campaign: {exc}")
        except KeyboardInterrupt:        # before the campaign's own handling began (setting it up)
            camp.doc["status"] = "interrupted"
            camp.save()
            print(f"mmrig sweep: interrupted while starting; run the same command again (or --resume --out "
                  f"{args.out})", file=sys.stderr)
            return EXIT_INTERRUPTED
        if outcome.interrupted:
            print(f"mmrig sweep: interrupted; the points done are kept: run the same command again (or --resume "
                  f"--out {args.out}) to continue", file=sys.stderr)
        from mmanalysis.sweepplots import write_figures

        try:
            figures = write_figures(args.out)
        except (OSError, ValueError) as exc:
            print(f"mmrig sweep: figures not written: {exc}", file=sys.stderr)
        except KeyboardInterrupt:
            print("mmrig sweep: interrupted while writing the figures (not written); the points are kept",
                  file=sys.stderr)
            outcome.interrupted = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    totals = camp.doc.get("totals", {})
    print(f"campaign {args.out}: {totals.get('done')}/{totals.get('points')} points done "
          f"({len(outcome.ran)} run now, {len(outcome.skipped)} already complete), "
          f"{len(outcome.invalid)} invalid, {len(outcome.failed)} failed; "
          f"virtual time {totals.get('virtual_s', 0):.1f} s; status {camp.doc.get('status')}")
    if figures:
        print("wrote " + ", ".join(str(p) for p in [camp.path, *figures]))
    if len(camp.plan.rate) > 1:
        from mmanalysis.sweepplots import highest_clean_rates

        for (baud, d, dispatch, load), c in highest_clean_rates(camp.doc).items():
            best = f"{c.per_s:.1f} events/s ({c.rate})" if c.per_s is not None else "none of the rates"
            above = f"; at {c.next_rate}: {c.why}" if c.next_rate else ""
            print(f"highest clean rate, {baud} baud, distance {d}, {dispatch}, {load}: {best}{above}")
    for name in outcome.invalid:
        print(f"INVALID point (kept, not a result): {name}: {camp.doc['points'][name].get('invalid_reason')}")
    for name in outcome.failed:
        print(f"FAILED point (no run; runs again on --resume): {name}: {camp.doc['points'][name].get('error')}")
    return outcome.exit_code


def cmd_bench(args: argparse.Namespace) -> int:
    from mmhil import run_bench_foreground  # the bench lives in hil/ (mmhil); this only parses arguments

    return run_bench_foreground(args.run_dir, not args.unpaced, args.vcd, args.profiler, args.executor, args.until,
                                lockstep=args.lockstep, ppm_profiler=args.ppm_profiler, ppm_executor=args.ppm_executor,
                                arduino=args.arduino, bootloader=args.bootloader, unconnected=tuple(args.unconnected),
                                profiler_kind=args.profiler_kind)


BOARDS_EPILOG = """\
Without PORT: lists the serial ports and checks each USB one. With --bench: starts the virtual bench and
checks its two ptys (--arduino: a bench that behaves as a Mega: its bootloader, a reset on open).

Each node's HELLO is read as a run reads it (listening first where opening the port resets the board: an
Arduino's DTR; --no-reset-on-open for an adapter without that) and compared with the HELLO the built image
sends at its own boot (the image run alone in the bench for a moment). An FTDI adapter's latency timer is
read from sysfs. With both nodes found: a self-test of --count events (5) in verification mode.

exit status:
  0  every port answered, matches its image, and the self-test (if run) was on time
  1  something to fix: the lines after the table say what (--expect-image: mismatch or no answer)
  2  usage error (bad option, no such port, an image that cannot be read)
"""


def cmd_boards(args: argparse.Namespace) -> int:
    from . import boards as b

    def usage(text: str) -> int:
        print(f"mmrig boards: {text}", file=sys.stderr)
        return b.EXIT_USAGE

    ports: list[str] = list(args.ports) + ([args.port] if args.port else [])
    if args.arduino and not args.bench:
        return usage("--arduino is for --bench (a bench that behaves as a Mega)")
    if args.bench and ports:
        return usage("give ports or --bench, not both")
    if args.bench and not args.reset_on_open:
        return usage("--no-reset-on-open is for boards; the bench's ptys reset nothing (or --arduino)")
    if args.expect_image is not None and len(ports) != 1 and not args.bench:
        return usage("--expect-image checks one port: give --port PORT")
    if len(ports) > 2:
        return usage("at most two ports (the profiler's and the executor's)")
    if args.count < 1:
        return usage(f"--count must be at least 1, not {args.count}")
    for port in ports:
        if "://" not in port and not Path(port).exists():
            return usage(f"no such port: {port}")
    # the built images' boot HELLOs (the bench runs each alone for a moment); the defaults only if built
    from mmhil import images as im
    from mmhil.bench import EXECUTOR_ELF, PROFILER_ELF

    known: dict[str, tuple[str, object]] = {}
    notes: list[str] = []
    if args.expect_image is not None:
        wanted = {None: args.expect_image}
    else:
        wanted = {"profiler": args.profiler_image, "executor": args.executor_image}
    for role, given in wanted.items():
        path = given if given is not None else (PROFILER_ELF if role == "profiler" else EXECUTOR_ELF)
        if given is None and not Path(path).exists():
            notes.append(f"no built {role} image ({path}): its HELLO is not compared (make -C "
                         f"{'profiler-fw' if role == 'profiler' else 'executor'} avr)")
            continue
        try:
            boot = im.boot(Path(path), role)
        except im.ImageError as exc:
            return usage(str(exc))
        known[b.ROLE.get(boot.hello.node_kind, "?")] = (str(path), boot.hello)
    bench = None
    try:
        if args.bench:
            from mmhil import Bench, BenchError

            bench = Bench(arduino=args.arduino)
            try:
                bench.start()
            except BenchError as exc:
                print(f"mmrig boards: the bench did not start: {str(exc).splitlines()[0]}", file=sys.stderr)
                return b.EXIT_FIX
            ports = [bench.profiler_port, bench.executor_port]
            reset_on_open = args.arduino
            notes.append("the bench's LEDs are not in its status: the LED self-test is not read (look at a real "
                         "board)")
            if args.expect_image is not None:       # the node the image is for
                role = next(iter(known), "profiler")
                ports = [bench.profiler_port if role == "profiler" else bench.executor_port]
        else:
            reset_on_open = args.reset_on_open
        infos: dict[str, b.PortInfo] = {}
        if not ports:
            listed = b.list_ports()
            infos = {p.device: p for p in listed}
            ports = [p.device for p in listed if p.vid_pid]
            notes += [f"{p.device} ({p.description or 'no description'}): not a USB port, not checked"
                      for p in listed if not p.vid_pid]
            if not listed:
                notes.append("no serial ports found (is the board plugged in? dmesg says which tty it became)")
        checks = [b.check_port(p, known, args.baud, reset_on_open, info=infos.get(p), timeout_s=args.timeout)
                  for p in ports]
        if args.expect_image is not None:
            c = checks[0]
            if c.hello is not None and c.image is None and known:   # the other node's image: every field judged
                c.image_path, c.image = next(iter(known.values()))
                c.diff = b.differences(c.hello, c.image)
            code, line = b.expect_line(c)
            if args.json:
                print(json.dumps({**checks[0].as_dict(), "exit": code}, indent=2))
            else:
                print(line)
            return code
        report = b.Report(checks, notes=notes)
        found = report.roles()
        if "profiler" in found and "executor" in found and not args.no_self_test:
            from .endpoint import Boards

            rate = args.baud or found["profiler"].hello.baud
            endpoint = Boards(found["profiler"].port, found["executor"].port, baud=rate, reset_on_open=reset_on_open)
            if not args.json:
                print(f"self-test: {args.count} events in verification mode ...", file=sys.stderr)
            report.self_test = b.self_test(endpoint, args.count)
        elif not args.no_self_test and checks:
            report.notes.append("self-test skipped: it needs both nodes")
        print(json.dumps(report.as_dict(), indent=2) if args.json else b.text(report))
        return report.exit_code()
    finally:
        if bench is not None:
            bench.close()


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from .gui import main as gui_main   # the only place the command line touches Qt
    except ImportError as exc:
        print(f"mmrig gui: PySide6 / pyqtgraph missing ({exc}); run tools/setup.sh", file=sys.stderr)
        return 2
    return gui_main([], str(args.settings) if args.settings else None)


def ppm(text: str) -> int:
    """A crystal offset: a whole number of ppm, -10000..10000 (the bench's range)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of ppm") from None
    if not -10000 <= v <= 10000:   # the bench's range (PPM_MAX in hil/bench/cosim.h)
        raise argparse.ArgumentTypeError(f"{v} ppm: the bench takes -10000..10000")
    return v


def add_profiler_kind_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profiler-kind", choices=PROFILER_KINDS, default="avr",
                   help="the bench's profiler: avr (the ATmega2560 image, input capture; default) or 8051 (the "
                        "paper's 87C51 image on ucsim's core, its event input polled; docs/bench.md)")


def add_ppm_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("bench crystals (docs/bench.md, 'Crystal offsets')")
    g.add_argument("--ppm-profiler", type=ppm, default=0, metavar="N",
                   help="the bench's profiler clock N ppm fast (negative: slow), as a real crystal is; default 0")
    g.add_argument("--ppm-executor", type=ppm, default=0, metavar="N", help="the same for the executor")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mmrig", description="mixed-mode real-time test rig")
    parser.add_argument("--version", action="version", version=f"mmrig {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    proto = sub.add_parser("proto", help="wire protocol tools").add_subparsers(dest="proto_command", required=True)
    sizes = proto.add_parser("sizes", help="bytes and line time of every message (SPEC.md section 8)")
    sizes.add_argument("--baud", type=int, nargs="+", default=[9600, 115200])
    sizes.set_defaults(func=cmd_proto_sizes)
    decode = proto.add_parser("decode", help="decode a capture file or a serial port (pyserial URL)")
    decode.add_argument("source", help="file path, /dev/ttyUSB0, socket://host:port, loop://, ...")
    decode.add_argument("--baud", type=int, default=9600)
    decode.add_argument("--duration", type=float, default=0.0, help="stop reading a port after this many seconds")
    decode.set_defaults(func=cmd_proto_decode)

    bench = sub.add_parser("bench", help="run the virtual bench (both AVR images in simavr) in the foreground")
    bench_time = bench.add_mutually_exclusive_group()
    bench_time.add_argument("--unpaced", action="store_true", help="as fast as possible instead of wall-clock time")
    bench_time.add_argument("--lockstep", action="store_true",
                            help="virtual time advances only when granted (control socket `grant`, or mmhil.Rig)")
    bench.add_argument("--run-dir", type=Path, default=None, help="where the ptys and the control socket go")
    bench.add_argument("--vcd", type=Path, default=None, help="write a VCD trace of the wired ports here")
    bench.add_argument("--profiler", type=Path, default=None, help="profiler image (default: profiler-fw build)")
    bench.add_argument("--executor", type=Path, default=None, help="executor image (default: executor build)")
    bench.add_argument("--until", type=float, default=None, help="stop after this many seconds of virtual time")
    add_profiler_kind_option(bench)
    bench.add_argument("--arduino", action="store_true",
                       help="both nodes as an Arduino Mega: the stock bootloader first, a reset when a port is opened")
    bench.add_argument("--bootloader", type=Path, default=None, metavar="HEX",
                       help="with --arduino: this bootloader instead of Debian's stk500boot_v2_mega2560.hex")
    bench.add_argument("--unconnected", action="append", default=[], choices=["timecode", "event"],
                       help="leave this wire group unconnected: inputs with no pull-up pick up noise (repeatable)")
    add_ppm_options(bench)
    bench.set_defaults(func=cmd_bench)

    # analysis owns `mmrig report`, `mmrig profile` and `mmrig capture`; no Qt, no bench
    from mmanalysis.cli import add_capture_parser, add_profile_parser, add_report_parser

    add_report_parser(sub)
    add_profile_parser(sub)
    add_capture_parser(sub)
    __import__("mmanalysis.labkey").labkey.add_lab_key_parser(sub)   # mmrig lab key (runs the bench via mmrig run)

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

    run = sub.add_parser("run", help="one experiment run (cyclictest-like), CSV + JSON out, summary printed",
                         description="One experiment run (cyclictest-like): CSV + JSON out, the summary printed, "
                                     "gates judged for CI.",
                         epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--mode", choices=("mixed", "normal", "verification"), default="mixed")
    run.add_argument("--distance", "-d", type=int, default=2, help="schedule distance, ticks ahead (default 2)")
    run.add_argument("--rate", "-i", type=parse_rate, default=None,
                     help="ms between events, or 'tick' (default: one per tick)")
    run.add_argument("--count", "-l", type=int, default=None, help="events (default 200 unless --duration)")
    run.add_argument("--duration", "-D", type=float, default=None, help="seconds of event generation")
    run.add_argument("--random-ids", action="store_true")
    run.add_argument("--generation", choices=("aligned", "free"), default="aligned",
                     help="aligned: right after a new TIMECODE; free: a timer at the rate (the paper's)")
    run.add_argument("--accuracy", type=int, default=0, help="normal mode: 0 plain sleep .. 100 busy-wait last 20 ms")
    run.add_argument("--discipline", action="store_true",
                     help="normal mode: fire by tick starts placed from the profiler's own stamps (a servo), "
                          "not by TIMECODE arrivals alone (the paper's way, the default)")
    run.add_argument("--dispatch", choices=("isr", "task"), default="isr", help="executor dispatch path")
    run.add_argument("--load", nargs="?", const="heavy", default="idle", metavar="CONDITION",
                     help="PC load (stress-ng) during the run: idle (none, the default), cpu, memory, disk, network "
                          "(loopback only, in a network namespace of its own), heavy (cpu + memory + disk: the "
                          "paper's heavy load) or all (heavy + network); --load alone is heavy")
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
    run.add_argument("--late-bound-us", type=float, default=1000.0)
    run.add_argument("--lag-bound-us", type=float, default=None,
                     help="paced bench: an event a byte of which a host stall displaced by more than this is not "
                          "measurable, validity by cause (default: normal 1000; mixed and verification a tenth of the "
                          "schedule's spare time: 4700 one tick ahead, 11800 two ahead); the run is invalid when more "
                          "than 5%% of its events are not measurable")
    run.add_argument("--max-in-flight", type=int, default=8)
    run.add_argument("--out", "-o", type=Path, default=None, help="writes OUT.csv and OUT.json")
    run.add_argument("--name", default=None,
                     help="the run's name (default: OUT's file name, or 'run'): 1..64 of A-Z a-z 0-9 . _ -")
    run.add_argument("--force", action="store_true", help="overwrite an existing OUT.csv / OUT.json")
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
    report = run.add_argument_group("output")
    report.add_argument("--json", action="store_true",
                        help="print the summary, histogram, gates, files and environment as one JSON document on "
                             "stdout (words go to stderr)")
    report.add_argument("--junit", type=Path, default=None, metavar="FILE",
                        help="write a JUnit XML report: a testcase for validity and one per gate")
    report.add_argument("--histogram-us", type=positive_float, default=None, metavar="BIN",
                        help="latency histogram bin width in us (1000 fixed bins from 0, and an overflow count); "
                             "default 1 in mixed and verification mode, 10 in normal mode")
    report.add_argument("--hist", nargs="?", const="", default=None, metavar="FILE",
                        help="also write the histogram as a latmus-like text file (default OUT.hist): '#' lines "
                             "with the environment, then 'bin_start_us count' lines")
    report.add_argument("--quiet", "-q", action="store_true",
                        help="no progress line and no log lines (warnings, errors and the summary still)")
    run.set_defaults(func=cmd_run)

    sweep = sub.add_parser("sweep", help="a campaign: a grid of runs over distance, rate, baud, dispatch, load",
                           description="A campaign: one run per point of the grid (the product of the axes) in one "
                                       "folder, lockstep points in parallel as Dask tasks, paced ones one at a "
                                       "time; resumable.",
                           epilog=SWEEP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_argument("--distance", "-d", default=None, metavar="D",
                       help="schedule distances, ticks ahead: a range 1..4 or a list 1,2,4")
    sweep.add_argument("--rate", "-i", default=None, metavar="RATES",
                       help="tick, Nticks (tick-aligned) or Xms (the free-running timer), comma-separated "
                            "(default tick)")
    sweep.add_argument("--baud", default=None, metavar="BAUDS",
                       help="link rates, e.g. 9600,115200 (BAUD after each point's handshake; the nodes refuse one "
                            "their UART cannot make)")
    sweep.add_argument("--dispatch", default=None, metavar="PATHS", help="isr, task or isr,task (default isr)")
    sweep.add_argument("--load", default=None, metavar="LOADS",
                       help="PC load conditions: idle, cpu, memory, disk, network, heavy, all (default idle; "
                            "anything but idle needs --paced)")
    sweep.add_argument("--mode", choices=("mixed", "verification", "normal"), default=None,
                       help="default mixed (normal needs --paced)")
    sweep.add_argument("--count", "-l", type=int, default=None, help="events per point (default 200)")
    add_profiler_kind_option(sweep)
    sweep.add_argument("--out", "-o", type=Path, required=True, help="the campaign folder")
    sweep.add_argument("--paced", action="store_true",
                       help="points on the paced bench, one at a time (they measure the host); default lockstep")
    where_sweep = sweep.add_mutually_exclusive_group()
    where_sweep.add_argument("--workers", type=int, default=None,
                             help="lockstep: a local Dask cluster of N processes (default the CPU count)")
    where_sweep.add_argument("--cluster", default=None, metavar="tcp://HOST:PORT",
                             help="lockstep: a running Dask scheduler whose workers have this mmrig installed")
    sweep.add_argument("--resume", action="store_true",
                       help="continue the campaign in --out (its own axes unless given); rerunning the same "
                            "command does the same")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no line per point")
    sweep.set_defaults(func=cmd_sweep)

    boards = sub.add_parser("boards", help="which port is which node, its firmware against the build, the link's "
                                           "latency, and a short self-test",
                            description="Identify the rig's boards by their HELLO, compare each with the built "
                                        "image's, read the USB-serial latency, and run a short self-test.",
                            epilog=BOARDS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    boards.add_argument("ports", nargs="*", metavar="PORT", help="serial ports or pyserial URLs (at most two)")
    boards.add_argument("--port", default=None, help="the one port --expect-image checks")
    boards.add_argument("--expect-image", type=Path, default=None, metavar="IMAGE",
                        help="compare the port's HELLO with IMAGE's boot HELLO (an AVR ELF, or a .hex with its .elf "
                             "beside it); one line; exit 0 match, 1 mismatch or no answer (the flash targets)")
    boards.add_argument("--bench", action="store_true", help="start the virtual bench and check its two ptys")
    boards.add_argument("--arduino", action="store_true", help="with --bench: a bench that behaves as a Mega")
    boards.add_argument("--baud", type=int, default=None,
                        help="the ports' rate (default: the built images' rate, else 9600)")
    boards.add_argument("--no-reset-on-open", dest="reset_on_open", action="store_false",
                        help="opening the ports does not reset the boards (an adapter without DTR reset): ask at once")
    boards.add_argument("--profiler-image", type=Path, default=None, metavar="ELF",
                        help="the profiler image to compare with (default: the checkout's build)")
    boards.add_argument("--executor-image", type=Path, default=None, metavar="ELF",
                        help="the executor image to compare with (default: the checkout's build)")
    boards.add_argument("--count", type=int, default=5, metavar="N",
                        help="self-test events in verification mode (default 5)")
    boards.add_argument("--no-self-test", action="store_true", help="identify and compare only")
    boards.add_argument("--timeout", type=float, default=5.0, help="seconds per port for its HELLO (default 5)")
    boards.add_argument("--json", action="store_true", help="the report as JSON on stdout")
    boards.set_defaults(func=cmd_boards)

    gui = sub.add_parser("gui", help="the PySide6 desktop app (virtual bench or serial ports)")
    gui.add_argument("--settings", type=Path, default=None, help="an INI file for the settings (default: QSettings)")
    gui.set_defaults(func=cmd_gui)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
