"""Crystal offsets on the bench (--ppm-profiler, --ppm-executor; docs/bench.md, "Crystal offsets"): each
core counts its own cycles at 16 MHz x (1 + ppm/1e6) of the bench's global virtual time.

- 0 ppm is today's bench: the same --trace, byte for byte (against the bench before the option existed
  this was checked by hand; here: the explicit 0 against the default);
- the profiler's tick, measured in global time from the --trace W records, is its HELLO's tick in its own
  cycles scaled by 1e6 / (1e6 + ppm);
- a lockstep mixed run with the two crystals 400 ppm apart: every event ok, the run valid, the latency
  that of 0 ppm (22 cycles) plus at most the sub-cycle phase between the two clocks, and the executor's
  extended timecode (its FIRED) on the profiler's over two 8-bit wraps;
- a paced run works with offsets set, and the status says what ran."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

import mmproto as mp
from mmhil import BenchEndpoint, LockstepEndpoint
from mmhil.bench import BENCH_BIN, EXECUTOR_ELF, PROFILER_ELF, Bench, ensure_built
from mmsched.model.config import RunConfig
from mmsched.run.runner import run

F_CPU = 16_000_000
NOMINAL_TICK = 1_137_778                       # the profiler's tick in its own cycles (docs/bench.md)
LATENCY_0PPM_COUNTS = 22                       # mixed mode, ISR dispatch, both crystals nominal: 1.375 us


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


def script(path: Path) -> Path:
    """The profiler asked for its HELLO; nothing else (the profiler ticks on its own from boot)."""
    path.write_text("0.05 profiler " + mp.Query(what=mp.Hello.TYPE).wire(0).hex(" ") + "\n")
    return path


def unpaced(tmp_path: Path, name: str, *extra: str, until_s: float = 2.5) -> tuple[str, dict]:
    trace = tmp_path / f"{name}.trace"
    done = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                           "--run-dir", str(tmp_path / name), "--unpaced", "--until", str(until_s),
                           "--script", str(script(tmp_path / "script.txt")), "--trace", str(trace), *extra],
                          check=True, capture_output=True, timeout=120)
    return trace.read_text(), json.loads(done.stdout)


def tick_edges(trace: str) -> list[int]:
    """The global cycles the timecode port changed at (one PORTA write changes its bits in one cycle)."""
    return sorted({int(line.split()[1]) for line in trace.splitlines()
                   if line.startswith("W ") and line.split()[2].startswith("timecode")})


def profiler_hello(trace: str) -> mp.Hello:
    dec = mp.StreamDecoder()
    for line in trace.splitlines():
        kind, _cycle, node, value = line.split()
        if kind == "O" and node == "profiler":
            for r in dec.feed(bytes([int(value, 16)])):
                if isinstance(r.message, mp.Hello):
                    return r.message
    raise AssertionError("no HELLO from the profiler")


def test_zero_ppm_is_the_default_bench(tmp_path: Path) -> None:
    default, st = unpaced(tmp_path, "default")
    zero, st0 = unpaced(tmp_path, "zero", "--ppm-profiler", "0", "--ppm-executor", "0")
    assert zero == default                                       # every pin change and byte, same cycle
    for s in (st, st0):
        assert {n: v["ppm"] for n, v in s["nodes"].items()} == {"profiler": 0, "executor": 0}
        for v in s["nodes"].values():     # a core may end up to one instruction past the target
            assert 0 <= v["cycle"] - s["cycle"] < 8
    ticks = tick_edges(default)
    assert {b - a for a, b in zip(ticks, ticks[1:])} == {NOMINAL_TICK}


@pytest.mark.parametrize("args, why", [
    (["--ppm-profiler", "10001"], "-10000 to 10000"),
    (["--ppm-executor", "-20000"], "-10000 to 10000"),
    (["--ppm-executor", "12.5"], "not an integer"),
    (["--ppm-profiler", ""], "not an integer"),
])
def test_bad_offsets_are_refused(tmp_path: Path, args: list[str], why: str) -> None:
    done = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                           "--run-dir", str(tmp_path / "r"), "--unpaced", "--until", "0.01", *args],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and why in done.stderr, done.stderr


def test_one_node_mode_refuses_offsets(tmp_path: Path) -> None:
    done = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--until-cycles", "1000",
                           "--run-dir", str(tmp_path / "r"), "--ppm-profiler", "50"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "two-node mode" in done.stderr, done.stderr


@pytest.mark.parametrize("ppm_p, ppm_e", [(200, -200), (-1000, 1000)])
def test_profiler_tick_follows_its_crystal(tmp_path: Path, ppm_p: int, ppm_e: int) -> None:
    """The profiler's tick is HELLO.tick_counts timer counts = tick_counts * cpu_hz / timer_hz of its own
    cycles; in global time that is x 1e6 / (1e6 + ppm). A W record is the executor's cycle of the edge
    (rounded up) in global cycles (rounded up), so one edge is up to 2 cycles after the moment: each tick
    is within 2 cycles, and over the run there is no drift (the mean within 0.1 cycle)."""
    trace, st = unpaced(tmp_path, "drift", "--ppm-profiler", str(ppm_p), "--ppm-executor", str(ppm_e))
    hello = profiler_hello(trace)
    own = hello.tick_counts * hello.cpu_hz / hello.timer_hz
    assert own == NOMINAL_TICK
    expected = own * 1e6 / (1e6 + ppm_p)       # +200: 1137550.5 cycles, 227.5 shorter than nominal
    ticks = tick_edges(trace)
    lengths = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(lengths) >= 30
    assert all(abs(d - expected) < 2 for d in lengths), (expected, sorted(set(lengths)))
    assert abs((ticks[-1] - ticks[0]) / len(lengths) - expected) < 0.1
    # each core's own clock at the end: global cycles x (1e6 + ppm) / 1e6 (rounded up; a core may end up
    # to one instruction past it)
    g = st["cycle"]
    assert st["nodes"]["profiler"]["ppm"] == ppm_p and st["nodes"]["executor"]["ppm"] == ppm_e
    for node, ppm in (("profiler", ppm_p), ("executor", ppm_e)):
        assert 0 <= st["nodes"][node]["cycle"] - -(-g * (1_000_000 + ppm) // 1_000_000) < 8


def test_lockstep_mixed_run_with_drifting_crystals(tmp_path: Path) -> None:
    """Profiler +200 ppm, executor -200 ppm; one event a tick, 2 ahead, over two 8-bit timecode wraps.
    The executor fires on the profiler's edge: its own crystal changes only how long its 22 cycles of
    response take (22 x 400e-6 of a cycle longer, in profiler cycles). What two crystals add is the phase:
    the edge reaches the executor up to one of its cycles after the profiler made it, and the profiler's
    input capture latches the strobe at its own next cycle. With one clock (0 ppm) that phase is always 0
    and every latency is 22 counts (1.375 us); with two it is 22 plus the phase rounded up: 23 counts
    (1.4375 us), now and then 24 when the phase is within 0.01 cycle of a whole one."""
    n = 2 * 256 + 18
    cfg = RunConfig(name="drift", out=tmp_path / "drift", mode="mixed", distance=2, count=n)
    result = run(cfg, LockstepEndpoint(ppm_profiler=200, ppm_executor=-200))
    assert result.valid, result.sidecar["invalid_reason"]
    assert result.sidecar["invariant"]["ok"]
    df = pd.read_csv(tmp_path / "drift.csv")
    assert len(df) == n and (df["outcome"] == "ok").all(), df["outcome"].value_counts()
    assert df["measurable"].all()
    # the executor's extended timecode kept up with the profiler's past two wraps of the 8-bit port
    assert df["scheduled_tc"].max() > 512
    assert (df["fired_tc"] == df["scheduled_tc"]).all() and (df["result_tc"] == df["scheduled_tc"]).all()
    counts = df["latency_counts"]
    assert counts.between(LATENCY_0PPM_COUNTS, LATENCY_0PPM_COUNTS + 2).all(), counts.value_counts()
    assert LATENCY_0PPM_COUNTS < counts.mean() < LATENCY_0PPM_COUNTS + 1.1, counts.value_counts()
    assert (df["latency_us"] == df["latency_counts"] / 16).all()     # the profiler's own 16 MHz counts


@pytest.mark.paced
def test_paced_run_with_offsets(tmp_path: Path) -> None:
    """Paced: virtual (global) time on wall time, each core on its own crystal; a short mixed run."""
    with Bench(run_dir=tmp_path / "b", paced=True, ppm_profiler=300, ppm_executor=-100) as bench:
        time.sleep(0.5)
        st = bench.status()
    nodes = st["nodes"]
    assert nodes["profiler"]["ppm"] == 300 and nodes["executor"]["ppm"] == -100
    assert nodes["profiler"]["cycle"] > nodes["executor"]["cycle"]  # 400 ppm apart, the same moment
    cfg = RunConfig(name="paced", out=tmp_path / "paced", mode="mixed", distance=2, count=10)
    result = run(cfg, BenchEndpoint(ppm_profiler=200, ppm_executor=-200))
    df = pd.read_csv(tmp_path / "paced.csv")
    assert len(df) == 10 and result.sidecar["invariant"]["ok"]
    if result.valid:
        measured = df[df["measurable"]]
        assert (measured["outcome"] == "ok").all(), df[["outcome", "reason"]]
        assert measured["latency_counts"].between(LATENCY_0PPM_COUNTS, LATENCY_0PPM_COUNTS + 2).all()
    else:       # a shared host may stall the bench past its lag bound: that, and nothing else
        assert "lag" in result.sidecar["invalid_reason"], result.sidecar["invalid_reason"]
