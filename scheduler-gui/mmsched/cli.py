"""`mmrig`: the one command line of the rig: run, demo, report, bench, gui, proto."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import serial

from mmproto import StreamDecoder
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
    from .demo import RESULTS, notes, run_demo, table

    count = args.count or (30 if args.quick else 200)
    rows = run_demo(count=count, out_dir=args.out_dir or RESULTS, attempts=args.attempts)
    print()
    print(f"mmrig demo: the paper's experiments on the paced virtual bench, {count} events each "
          f"(files in {args.out_dir or RESULTS})")
    print(table(rows))
    text = notes(rows)
    if text:
        print(text)
    bad = [row.ex.name for row in rows if not row.result.sidecar["invariant"]["ok"]]
    if bad:
        print("accounting invariant violated in: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


def parse_rate(text: str) -> float | None:
    if text == "tick":
        return None
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("rate must be > 0 ms or 'tick'")
    return value


def cmd_run(args: argparse.Namespace) -> int:
    from mmproto import LinkError

    from .budget import format_budget
    from .config import RunConfig
    from .endpoint import Boards, Endpoint, EndpointError
    from .runner import run
    from .stats import format_summary

    if (args.profiler is None) != (args.executor is None) and args.mode != "normal":
        print("mmrig run: give both --profiler and --executor (or neither, for the bench)", file=sys.stderr)
        return 2
    count = args.count if args.count is not None or args.duration is not None else 200
    cfg = RunConfig(mode=args.mode, distance=args.distance, rate_ms=args.rate, count=count,
                    duration_s=args.duration, random_ids=args.random_ids, generation=args.generation,
                    accuracy=args.accuracy, discipline=args.discipline, dispatch=args.dispatch, load=args.load,
                    late_bound_us=args.late_bound_us,
                    max_in_flight=args.max_in_flight, name=args.name or (args.out.name if args.out else "run"),
                    out=args.out)
    endpoint: Endpoint
    if args.profiler is not None:
        endpoint = boards = Boards(args.profiler, args.executor)
        for warning in boards.warnings():   # an FTDI latency timer above 1 ms: one line each, with the fix
            print(f"mmrig run: WARNING: {warning.text}", file=sys.stderr)
    else:
        from mmhil import BenchEndpoint, LockstepEndpoint  # the entry point chooses; the core never imports it

        endpoint = LockstepEndpoint() if args.unpaced else BenchEndpoint(lag_bound_us=args.lag_bound_us)
    try:
        result = run(cfg, endpoint, log=lambda text: print(text, file=sys.stderr))
    except (LinkError, EndpointError) as exc:
        print(f"mmrig run: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    print(format_summary(cfg.name, result.summary))
    if "budget" in result.sidecar:
        print(format_budget(result.sidecar["budget"]))
    if result.csv_path:
        print(f"wrote {result.csv_path} and {result.json_path}")
    if not result.valid:
        print(f"INVALID RUN (kept on disk, not a result): {result.sidecar['invalid_reason']}")
        return 3
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from mmhil import run_bench_foreground  # the bench lives in hil/ (mmhil); this only parses arguments

    return run_bench_foreground(args.run_dir, not args.unpaced, args.vcd, args.profiler, args.executor, args.until,
                                lockstep=args.lockstep)


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from .gui import main as gui_main   # the only place the command line touches Qt
    except ImportError as exc:
        print(f"mmrig gui: PySide6 / pyqtgraph missing ({exc}); run tools/setup.sh", file=sys.stderr)
        return 2
    return gui_main([], str(args.settings) if args.settings else None)


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
    bench.set_defaults(func=cmd_bench)

    from mmanalysis.cli import add_report_parser  # analysis owns `mmrig report`; no Qt, no bench

    add_report_parser(sub)

    demo = sub.add_parser("demo", help="the paper's five experiments on the virtual bench")
    demo.add_argument("--quick", action="store_true", help="30 events per experiment (CI)")
    demo.add_argument("--count", type=int, default=None, help="events per experiment (default 200)")
    demo.add_argument("--out-dir", type=Path, default=None, help="where the CSV + JSON go (default results/)")
    demo.add_argument("--attempts", type=int, default=4,
                      help="runs per experiment while it is invalid by bench lag alone (default 4)")
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser("run", help="one experiment run (cyclictest-like), CSV + JSON out, summary printed")
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
    run.add_argument("--load", action="store_true", help="heavy PC load (stress-ng) during the run")
    run.add_argument("--late-bound-us", type=float, default=1000.0)
    run.add_argument("--lag-bound-us", type=float, default=None,
                     help="bench: lag above this invalidates the run (default: normal 1000; mixed and verification a tenth of the schedule's spare time: 4700 one tick ahead, 11800 two ahead)")
    run.add_argument("--max-in-flight", type=int, default=8)
    run.add_argument("--out", "-o", type=Path, default=None, help="writes OUT.csv and OUT.json")
    run.add_argument("--name", default=None)
    where = run.add_mutually_exclusive_group()
    where.add_argument("--bench", action="store_true", help="the paced virtual bench (default)")
    where.add_argument("--unpaced", "--lockstep", dest="unpaced", action="store_true",
                       help="the virtual bench in lockstep: virtual time advances only as far as the scheduler has "
                            "handled it, so the outcome never depends on the host (tests, CI, the firmware's figures; "
                            "not normal mode)")
    run.add_argument("--profiler", default=None, help="real profiler port or pyserial URL")
    run.add_argument("--executor", default=None, help="real executor port or pyserial URL")
    run.set_defaults(func=cmd_run)

    gui = sub.add_parser("gui", help="the PySide6 desktop app (virtual bench or serial ports)")
    gui.add_argument("--settings", type=Path, default=None, help="an INI file for the settings (default: QSettings)")
    gui.set_defaults(func=cmd_gui)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
