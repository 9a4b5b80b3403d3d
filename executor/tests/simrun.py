"""Runs the executor image in the one-node simavr harness and parses what it recorded."""

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


def _path(env: str, default: Path) -> Path:
    return Path(os.environ.get(env, default))


ELF = _path("EXECUTOR_ELF", HERE.parent / "build/avr/executor.elf")
HARNESS = _path("EXECUTOR_HARNESS", HERE.parent / "build/host/simavr_harness")


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
    frames: list[Frame] = field(default_factory=list)
    decoder: mmproto.StreamDecoder = field(default_factory=mmproto.StreamDecoder)
    end_cycle: int = 0
    end_state: int = -1

    def of(self, cls) -> list[Frame]:
        return [f for f in self.frames if isinstance(f.msg, cls)]


def run_sim(script: list[tuple[int, bytes]], cycles: int, start_tc: int = 0, skew: int = 0,
            glitches: list[tuple[int, int]] = ()) -> SimRun:
    """script: (cycle, bytes) in cycle order; the harness paces bytes at the baud rate."""
    assert ELF.exists(), f"{ELF} missing: run `make -C executor avr`"
    assert HARNESS.exists(), f"{HARNESS} missing: run `make -C executor harness`"
    lines = [f"{c} " + " ".join(f"{b:02x}" for b in data) for c, data in script]
    lines += [f"G {c} {v:02x}" for c, v in glitches]
    lines.sort(key=lambda s: int(s.split()[1] if s.startswith("G") else s.split()[0]))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        args = [str(HARNESS), str(ELF), "--cycles", str(cycles), "--start-tc", str(start_tc),
                "--script", path]
        if skew:
            args += ["--skew", str(skew)]
        out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=120).stdout
    finally:
        os.unlink(path)
    run = SimRun()
    for line in out.splitlines():
        parts = line.split()
        if not parts or parts[0] == "Loaded":
            continue
        kind, cyc = parts[0], int(parts[1])
        val = int(parts[2])
        if kind == "K":
            run.port_k.append((cyc, val))
        elif kind == "C":
            run.port_c.append((cyc, val))
        elif kind == "T":
            run.tx.append((cyc, val))
            for r in run.decoder.feed(bytes([val])):
                run.frames.append(Frame(cyc, r.seq, r.message))
        elif kind == "R":
            run.rx.append((cyc, val))
        elif kind == "L":
            run.led.append((cyc, val))
        elif kind == "G":
            run.glitches.append((cyc, val))
        elif kind == "END":
            run.end_cycle, run.end_state = cyc, val
    return run
