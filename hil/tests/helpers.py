"""Helpers shared by the bench tests."""

from __future__ import annotations

import time
from pathlib import Path

import serial

import mmproto as mp
from mmhil.bench import F_CPU, FIXTURE_ELF, Bench

# the MODE frame the lockstep sessions send, by its protocol names
MIXED_ISR = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0, random_ids=0)


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


def lockstep_session(tmp_path: Path, name: str, grant_s: float = 1.6, events: int = 10,
                     **bench_kw) -> tuple[bytes, list[dict], dict[str, bytes]]:
    """Real images in lockstep: grant frame by frame up to `grant_s` of bench time; after the executor's HELLO
    put it in mixed mode, after each profiler TIMECODE schedule an event two ticks ahead (`events` of them).
    Every host decision depends on bench output only, so two sessions must match byte for byte. Returns the
    --trace bytes, the grant replies and what each node wrote. `bench_kw` go to Bench (profiler_kind=...)."""
    trace = tmp_path / f"{name}.trace"
    replies: list[dict] = []
    seen = {"profiler": b"", "executor": b""}
    written = {"profiler": 0, "executor": 0}
    with Bench(run_dir=tmp_path / name, lockstep=True, trace=trace, **bench_kw) as bench:
        ports = {n: serial.Serial(bench.tty(n), 9600, timeout=0.05) for n in ("profiler", "executor")}
        decoders = {n: mp.StreamDecoder() for n in ports}
        seq, tag, moded = 0, 100, False
        try:
            while True:
                r = bench.grant(int(grant_s * F_CPU), frame=True, written=dict(written))
                replies.append(r)
                for n, port in ports.items():
                    new = read_exactly(port, r["out"][n] - len(seen[n]))
                    seen[n] += new
                    for res in decoders[n].feed(new):
                        m = res.message
                        if n == "executor" and isinstance(m, mp.Hello) and not moded:
                            wire = MIXED_ISR.wire(seq)
                        elif n == "profiler" and isinstance(m, mp.Timecode) and moded and tag < 100 + events:
                            wire = mp.Schedule(tag=tag, event_id=tag & 7, timecode=m.timecode + 2).wire(seq)
                            tag += 1
                        else:
                            continue
                        moded = True
                        seq += 1
                        ports["executor"].write(wire)
                        written["executor"] += len(wire)
                if r["stop"] != "frame":
                    break
        finally:
            for port in ports.values():
                port.close()
    return trace.read_bytes(), replies, seen


RECORDED = Path(__file__).resolve().parent / "data"    # paced runs' files, recorded once (recorded_run)
RECORDED_FILES = (".csv", ".json", ".inputs", ".pc.inputs")    # what a replay reads of a run (data/record.py keeps)


def recorded_run(folder: Path, name: str) -> Path:
    """A copy in FOLDER of the paced run NAME kept in hil/tests/data (its CSV, sidecar and records of inputs): what a
    replay reads, without a paced bench of its own each time (the fast tier runs no paced bench: conftest.py). How
    they are made, and made again when an image changes what it does: hil/tests/data/record.py (RERECORD)."""
    for suffix in RECORDED_FILES:
        (folder / f"{name}{suffix}").write_bytes((RECORDED / f"{name}{suffix}").read_bytes())
    return folder / f"{name}.csv"


# said where a replay of a recorded run differs: the likely reason first, then the way out
RERECORD = ("a replay of a run recorded in hil/tests/data differs: if an image changed what it does, record the "
            "runs again: .venv/bin/python hil/tests/data/record.py")
