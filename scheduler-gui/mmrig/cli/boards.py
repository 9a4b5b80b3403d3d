"""`mmrig boards`: which port is which node, each node's HELLO against the built image's, the USB-serial
latency, a short self-test (the probing itself is `mmsched.run.boards`; the images' HELLOs come from `mmhil`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .options import positive_float


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
    from mmsched.run import boards as b
    from mmsched.model.config import baud_problem

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
    if args.baud is not None and (problem := baud_problem(args.baud)):
        return usage(f"--baud {problem}")         # 0 opened the ports at 0 baud and said all was well
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
            from mmsched.link.endpoint import Boards

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


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    boards.add_argument("--timeout", type=positive_float, default=5.0,
                        help="seconds per port for its HELLO, > 0 (default 5; -1 read NO ANSWER of a live node)")
    boards.add_argument("--json", action="store_true", help="the report as JSON on stdout")
    boards.set_defaults(func=cmd_boards)
