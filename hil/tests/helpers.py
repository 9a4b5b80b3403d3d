"""Helpers shared by the bench tests."""

from __future__ import annotations

import time
from pathlib import Path

import serial

from mmhil.bench import FIXTURE_ELF, Bench


def fixture_bench(tmp_path: Path, **kw) -> Bench:
    """A bench with the test fixture image in both slots (hil/bench/tests/fixture.c)."""
    return Bench(profiler_elf=FIXTURE_ELF, executor_elf=FIXTURE_ELF, run_dir=tmp_path / "run", **kw)


def read_lines(port: serial.Serial, prefix: str, count: int, timeout: float = 5.0) -> list[str]:
    """Reads text lines from a fixture until `count` lines start with `prefix`."""
    got: list[str] = []
    buf = b""
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        buf += port.read(max(1, port.in_waiting))
        *lines, buf = buf.split(b"\n")
        got += [ln.decode(errors="replace") for ln in lines if ln.decode(errors="replace").startswith(prefix)]
    return got


def read_exactly(port: serial.Serial, n: int, timeout: float = 5.0) -> bytes:
    """The bench reported n bytes written to the pty: read them all (they may still be in the kernel)."""
    got = b""
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        got += port.read(n - len(got))
    return got


def vcd_changes(path: Path) -> list[tuple[int, str, int]]:
    """(time in CPU cycles, signal name, level) for every change after the header (the bench's VCD counts
    one time unit per cycle: `$timescale 62500 ps`)."""
    ids: dict[str, str] = {}
    out: list[tuple[int, str, int]] = []
    t = 0
    body = False
    for line in path.read_text().splitlines():
        if line.startswith("$var"):
            _, _, _, ident, name, _ = line.split()
            ids[ident] = name
        elif line.startswith("$enddefinitions"):
            body = True
        elif line.startswith("$dumpvars"):
            body = False   # initial values, not changes
        elif line == "$end":
            body = True
        elif body and line.startswith("#"):
            t = int(line[1:])
        elif body and line[:1] in "01" and len(line) == 2:
            out.append((t, ids[line[1]], int(line[0])))
    return out
