"""`mmrig bench` (`make bench`): a virtual bench in the foreground until Ctrl-C, its ports printed."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from mmhil.bench import Bench, BenchError

from .options import add_line_model_option, add_ppm_options, add_profiler_kind_option


def run_bench_foreground(run_dir: Path | None, paced: bool, vcd: Path | None, profiler: Path | None = None,
                         executor: Path | None = None, until_s: float | None = None, realtime: bool = False,
                         lockstep: bool = False, ppm_profiler: int = 0, ppm_executor: int = 0,
                         arduino: bool = False, bootloader: Path | None = None,
                         unconnected: tuple[str, ...] = (), profiler_kind: str | None = None,
                         line_model: str = "ideal") -> int:
    """`mmrig bench`. arduino: --arduino (both nodes as an Arduino Mega 2560: its bootloader, a reset on each
    open of a port), bootloader: --bootloader HEX, unconnected: one --unconnected GROUP each, profiler_kind:
    --profiler-kind (avr, or 8051: the 87C51 image on ucsim's core), line_model: --line (the USB-serial adapter
    on both lines) (docs/bench.md)."""
    bench = Bench(profiler_elf=profiler, executor_elf=executor, run_dir=run_dir, paced=paced and not lockstep,
                  vcd_file=vcd, until_s=until_s, realtime=realtime, lockstep=lockstep, ppm_profiler=ppm_profiler,
                  ppm_executor=ppm_executor, arduino=arduino, bootloader=bootloader, unconnected=tuple(unconnected),
                  profiler_kind=profiler_kind, line_model=line_model)
    try:
        bench.start()
    except BenchError as exc:
        print(f"mmrig bench: {exc}", file=sys.stderr)
        return 1
    for node in ("profiler", "executor"):       # the pty for any serial program, the line socket for mmrig's links
        print(f"{node} port  {bench.tty(node)}\n{'':15}{bench.socket_url(node)}  (the line socket: docs/bench.md)")
    print(f"control socket {bench.control_path}   (commands: status, reset NODE, fault ..., garbage ..., cut ..., "
          f"hangup NODE S, stuck ..., vcd on|off, grant, stalls, sleep, inject, stop: docs/bench.md)")
    mode = ("lockstep (virtual time advances only by `grant` on the control socket, or mmhil.Rig)" if lockstep else
            "paced (virtual time = wall time)" if paced else "unpaced (as fast as possible)")
    print(f"mode           {mode}")
    if bench.running_profiler_kind == "8051":
        print("profiler       the 8051 image (87C51 at 11.0592 MHz) on ucsim's core, its event input polled")
    if ppm_profiler or ppm_executor:
        print(f"crystals       profiler {ppm_profiler:+d} ppm, executor {ppm_executor:+d} ppm")
    if arduino:
        print("boards         Arduino Mega 2560: the stk500v2 bootloader after every reset (~0.83 s before the "
              "application starts), and opening a port resets its node (DTR)")
    if unconnected:
        print(f"unconnected    {', '.join(unconnected)} (inputs with no pull-up pick up noise)")
    if line_model != "ideal":
        print(f"USB line       {line_model} on both lines (docs/usb-serial.md)")
    sys.stdout.flush()
    stopping = False

    def on_signal(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        while bench.alive() and not stopping:
            time.sleep(0.2)
    finally:
        bench.close()
    if bench.final_status:
        st = bench.final_status
        print(json.dumps({k: st[k] for k in ("virtual_s", "valid", "lag", "host") if k in st}))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    return run_bench_foreground(args.run_dir, not args.unpaced, args.vcd, args.profiler, args.executor, args.until,
                                lockstep=args.lockstep, ppm_profiler=args.ppm_profiler, ppm_executor=args.ppm_executor,
                                arduino=args.arduino, bootloader=args.bootloader, unconnected=tuple(args.unconnected),
                                profiler_kind=args.profiler_kind, line_model=args.line)




def add_parser(sub: argparse._SubParsersAction) -> None:
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
    add_line_model_option(bench)
    bench.add_argument("--arduino", action="store_true",
                       help="both nodes as an Arduino Mega: the stock bootloader first, a reset when a port is opened")
    bench.add_argument("--bootloader", type=Path, default=None, metavar="HEX",
                       help="with --arduino: this bootloader instead of Debian's stk500boot_v2_mega2560.hex")
    bench.add_argument("--unconnected", action="append", default=[], choices=["timecode", "event"],
                       help="leave this wire group unconnected: inputs with no pull-up pick up noise (repeatable)")
    add_ppm_options(bench)
    bench.set_defaults(func=cmd_bench)
