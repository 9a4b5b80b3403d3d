"""Runs the executor image alone in the bench (hil/bench/build/mmbench, one-node mode: docs/bench.md)
and parses what it recorded. The stimulus plays the profiler (the timecode port, a tick every TICK
cycles) and the scheduler's serial line."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import mmproto

HERE = Path(__file__).resolve().parent
F_CPU = 16_000_000
TICK = 1_137_778  # cycles per timecode tick: 71.111 ms, the profiler's tick
BAUD = 9600
CPB = -(-10 * F_CPU // BAUD)  # cycles per character (10 bit times), rounded up
ROOT = HERE.parents[1]


def _path(env: str, default: Path) -> Path:
    return Path(os.environ.get(env, default))


ELF = _path("EXECUTOR_ELF", HERE.parent / "build/avr/executor.elf")
# the same sources built with EX_TEST_HOOKS (make avr-test): hang trigger and check-in markers
TEST_ELF = _path("EXECUTOR_TEST_ELF", HERE.parent / "build/avr-test/executor-test.elf")
BENCH = _path("MMBENCH", ROOT / "hil/bench/build/mmbench")


@dataclass
class Frame:
    cycle: int  # cycle of the frame's last byte (the delimiter)
    seq: int
    msg: mmproto.Message


@dataclass
class SimRun:
    port_k: list[tuple[int, int]] = field(default_factory=list)   # (cycle, timecode) at each change
    port_c: list[tuple[int, int]] = field(default_factory=list)   # (cycle, value)
    tx: list[tuple[int, int]] = field(default_factory=list)
    rx: list[tuple[int, int]] = field(default_factory=list)
    led: list[tuple[int, int]] = field(default_factory=list)
    glitches: list[tuple[int, int]] = field(default_factory=list)
    marks: list[tuple[int, int]] = field(default_factory=list)    # (cycle, GPIOR2 value): test image
    frames: list[Frame] = field(default_factory=list)
    decoder: mmproto.StreamDecoder = field(default_factory=mmproto.StreamDecoder)
    end_cycle: int = 0
    end_state: int = -1

    def of(self, cls) -> list[Frame]:
        return [f for f in self.frames if isinstance(f.msg, cls)]


def stimulus(script: list[tuple[int, bytes]], cycles: int, start_tc: int = 0, skew: int = 0,
             glitches: list[tuple[int, int]] = ()) -> str:
    """The bench's stimulus (docs/bench.md): the timecode starts at start_tc and steps by one every TICK
    cycles from cycle TICK on; with skew, each tick's high nibble reaches the port `skew` cycles after
    its low nibble. Script bytes go to the UART no earlier than their cycle, one character apart."""
    lines = [f"K 0 {start_tc & 0xFF:02x}"]
    for k in range(1, cycles // TICK + 1):
        lines.append(f"K {k * TICK} {(start_tc + k) & 0xFF:02x}" + (f" {skew}" if skew else ""))
    lines += [f"U {c} " + " ".join(f"{b:02x}" for b in data) for c, data in script]
    lines += [f"G {c} {v:02x}" for c, v in glitches]
    return "\n".join(lines) + "\n"


def run_bench(stim: str, cycles: int, extra: list[str] = (), elf: Path | None = None) -> str:
    """Runs the bench on a stimulus; returns its trace. The UART keeps simavr's own timing
    (--uart-timing simavr: received bytes handed over one per 11 bit times, see
    test_executor_sim._delivered), which these tests and their figures are written against."""
    elf = elf or ELF
    assert elf.exists(), f"{elf} missing: run `make -C executor avr avr-test`"
    assert BENCH.exists(), f"{BENCH} missing: run `make -C hil/bench all`"
    with tempfile.TemporaryDirectory(prefix="ex-bench.") as d:
        path, trace = Path(d) / "stimulus.txt", Path(d) / "trace.txt"
        path.write_text(stim)
        subprocess.run([str(BENCH), "--executor", str(elf), "--stimulus", str(path), "--trace", str(trace),
                        "--until-cycles", str(cycles), "--baud", str(BAUD), "--uart-timing", "simavr",
                        "--run-dir", str(Path(d) / "run"),
                        *extra], check=True, capture_output=True, text=True, timeout=300)
        return trace.read_text()


def run_sim(script: list[tuple[int, bytes]], cycles: int, start_tc: int = 0, skew: int = 0,
            glitches: list[tuple[int, int]] = (), elf: Path | None = None, ticks: bool = True,
            raw: list[tuple[int, int]] = ()) -> SimRun:
    """script: (cycle, bytes) in cycle order; the bench paces bytes at the baud rate. ticks=False: no
    profiler (the timecode port stays at start_tc). raw: (cycle, byte) handed to the UART at their
    cycle, not paced (the bench's R lines: bytes at another rate than --baud, after a BAUD)."""
    stim = stimulus(script, cycles if ticks else 0, start_tc, skew, glitches)
    stim += "".join(f"R {c} {b:02x}\n" for c, b in raw)
    out = run_bench(stim, cycles, elf=elf)
    run = SimRun()
    for line in out.splitlines():
        parts = line.split()
        kind, cyc = parts[0], int(parts[1])
        if kind == "K":
            run.port_k.append((cyc, int(parts[2], 16)))
        elif kind == "C":
            run.port_c.append((cyc, int(parts[2], 16)))
        elif kind == "T":   # the cycle the executor wrote UDR0
            val = int(parts[2], 16)
            run.tx.append((cyc, val))
            for r in run.decoder.feed(bytes([val])):
                run.frames.append(Frame(cyc, r.seq, r.message))
        elif kind == "I":   # the cycle the byte was handed to the USART's receiver
            run.rx.append((cyc, int(parts[3], 16)))
        elif kind == "L":
            run.led.append((cyc, int(parts[2])))
        elif kind == "D":
            run.marks.append((cyc, int(parts[2], 16)))
        elif kind == "G":
            run.glitches.append((cyc, int(parts[2], 16)))
        elif kind == "END":
            run.end_cycle, run.end_state = cyc, int(parts[2])
    return run
