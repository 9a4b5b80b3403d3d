"""`mmrig bench`: a bench in the foreground until Ctrl-C (the scheduler's cli only parses the arguments)."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from .bench import Bench, BenchError


def run_bench_foreground(run_dir: Path | None, paced: bool, vcd: Path | None, profiler: Path | None = None,
                         executor: Path | None = None, until_s: float | None = None, realtime: bool = False,
                         lockstep: bool = False, ppm_profiler: int = 0, ppm_executor: int = 0,
                         arduino: bool = False, bootloader: Path | None = None,
                         unconnected: tuple[str, ...] = (), profiler_kind: str | None = None) -> int:
    """`mmrig bench`. arduino: --arduino (both nodes as an Arduino Mega 2560: its bootloader, a reset on each
    open of a port), bootloader: --bootloader HEX, unconnected: one --unconnected GROUP each, profiler_kind:
    --profiler-kind (avr, or 8051: the 87C51 image on ucsim's core) (docs/bench.md)."""
    bench = Bench(profiler_elf=profiler, executor_elf=executor, run_dir=run_dir, paced=paced and not lockstep,
                  vcd_file=vcd, until_s=until_s, realtime=realtime, lockstep=lockstep, ppm_profiler=ppm_profiler,
                  ppm_executor=ppm_executor, arduino=arduino, bootloader=bootloader, unconnected=tuple(unconnected),
                  profiler_kind=profiler_kind)
    try:
        bench.start()
    except BenchError as exc:
        print(f"mmrig bench: {exc}", file=sys.stderr)
        return 1
    print(f"profiler port  {bench.profiler_port}")
    print(f"executor port  {bench.executor_port}")
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
