"""`mmrig`: the one command line of the rig. Subcommands are added as the parts of the rig land."""

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

NOT_BUILT_YET = """\
mmrig demo: NOT BUILT YET.

The demo runs the paper's five experiments (executor-only verification, normal mode, mixed 1 tick
ahead, mixed 2 ticks ahead, mixed 2 ticks ahead under heavy PC load) on the virtual bench. These parts
are missing, so there is no experiment to run:
  - profiler firmware (8051 and ATmega2560)        profiler-fw/   not built yet
  - FreeRTOS executor (ATmega2560)                 executor/      not built yet
  - the virtual bench (simavr, two MCUs)           hil/           not built yet
  - scheduler core and experiment runner           scheduler-gui/ not built yet

What exists today is the wire protocol every node will speak (protocol/SPEC.md), in C and in Python,
tested over one set of vectors. Here is what each message costs on the paper's 9600-baud line:
"""


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


def cmd_demo(_: argparse.Namespace) -> int:
    print(NOT_BUILT_YET)
    print(markdown_table((9600,)))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from mmhil import run_bench_foreground  # the bench lives in hil/ (mmhil); this only parses arguments

    return run_bench_foreground(args.run_dir, not args.unpaced, args.vcd, args.profiler, args.executor, args.until)


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
    bench.add_argument("--unpaced", action="store_true", help="as fast as possible instead of wall-clock time")
    bench.add_argument("--run-dir", type=Path, default=None, help="where the ptys and the control socket go")
    bench.add_argument("--vcd", type=Path, default=None, help="write a VCD trace of the wired ports here")
    bench.add_argument("--profiler", type=Path, default=None, help="profiler image (default: profiler-fw build)")
    bench.add_argument("--executor", type=Path, default=None, help="executor image (default: executor build)")
    bench.add_argument("--until", type=float, default=None, help="stop after this many seconds of virtual time")
    bench.set_defaults(func=cmd_bench)

    demo = sub.add_parser("demo", help="the paper's five experiments on the virtual bench")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
