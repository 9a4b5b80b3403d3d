"""Floor calibration: the bench puts bytes on a node's UART receive line with the first start bit a given
number of cycles after the next change of the profiler's timecode port (`inject`, docs/bench.md "Floor
calibration: inject"). With the real images a FIRE so injected gives the profiler's own floor: what it
reports for a FIRE whose start bit begins on the tick's edge."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest
import serial

import mmproto as mp
from mmhil import Bench, Rig
from mmhil.bench import BenchError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import fixture_bench, read_lines  # noqa: E402

F_CPU = 16_000_000
BAUD = 9600


def frame_cycles(n: int) -> int:
    """Cycles from the first start bit to the last stop bit's end of n back-to-back bytes (10 bits each)."""
    return math.ceil(n * 10 * F_CPU / BAUD)


def delivered(trace: Path, node: str) -> list[tuple[int, int]]:
    """(cycle, byte) of every byte that entered the node's receiver (trace `I` lines)."""
    out = []
    for line in trace.read_text().splitlines():
        f = line.split()
        if f[0] == "I" and f[2] == node:
            out.append((int(f[1]), int(f[3], 16)))
    return out


def check_frame(rec: dict, wire: bytes, trace_in: list[tuple[int, int]]) -> None:
    """The record is complete and on time, and the trace shows the frame whole, on the line alone."""
    assert rec["edge_cycle"] is not None and rec["late_cycles"] == 0
    assert rec["start_cycle"] == rec["edge_cycle"] + rec["delay_cycles"]
    # the last stop bit ends when the characters say (the delivering timer runs at an instruction
    # boundary: a running core may pass the cycle by its longest instruction, 5 cycles)
    assert 0 <= rec["end_cycle"] - rec["start_cycle"] - frame_cycles(len(wire)) <= 5
    first = next(i for i, (c, _) in enumerate(trace_in) if c > rec["start_cycle"])
    got = trace_in[first:first + len(wire)]
    assert bytes(b for _, b in got) == wire                  # nothing in between
    assert 0 <= got[0][0] - rec["start_cycle"] - frame_cycles(1) <= 5
    assert got[-1][0] == rec["end_cycle"]


def wait_for_all(rig: Rig, wants: dict[str, type], timeout: float, tag: int) -> dict[str, mp.Message]:
    """The profiler's next RESULT with this tag and the other kinds in `wants`, whatever their order."""
    got: dict[str, mp.Message] = {}
    deadline = rig.now() + timeout
    while len(got) < len(wants):
        left = deadline - rig.now()
        assert left > 0, f"only {sorted(got)} of {sorted(wants)} within {timeout} s"
        try:
            m = rig.recv("profiler", left).message
        except Exception:   # queue.Empty: go round, the deadline decides
            continue
        for name, kind in wants.items():
            if isinstance(m, kind) and (kind is not mp.Result or m.tag == tag):
                got[name] = m
    return got


# 800 and 2400 cycles: clear of the profiler's own transmit interrupts around the tick whether its
# TIMECODE frame starts at the port write (the first byte's UDRE interrupt then comes 16,647 cycles
# after the edge, where the first injected byte's stop bit ends for a delay of 0) or ~1550 cycles
# later (where it ends for a delay of ~1600): an interrupt being served delays the receive interrupt,
# and with it the stamp, by its length (~100 cycles, measured with each firmware).
DELAYS = (0, 800, 2400)


@pytest.mark.paced
@pytest.mark.parametrize("mode", ["paced", "lockstep"])
def test_fire_injected_on_the_tick_edge(tmp_path: Path, mode: str) -> None:
    trace = tmp_path / "trace.txt"
    kw = {"lockstep": True} if mode == "lockstep" else {"lag_bound_us": 100000}
    results: dict[int, tuple[dict, bytes, mp.Result]] = {}
    with Bench(run_dir=tmp_path / "run", trace=trace, **kw) as bench, Rig.on_bench(bench) as rig:
        tb = rig.time_base()
        rig.wait_for("profiler", mp.Timecode, timeout=2.0)     # ticking
        for k, delay in enumerate(DELAYS):
            tag = 0x4A00 + k
            wire = rig.profiler.prepare(mp.Fire(event_id=k, tag=tag))
            armed = bench.inject("profiler", wire, delay)
            assert armed["bytes"] == len(wire) and armed["delay_cycles"] == delay
            wants: dict[str, type] = {"result": mp.Result}
            if k == 1:
                # the host writes meanwhile: its frame waits on the line until the injection has ended
                rig.send("profiler", mp.Query(mp.Hello.TYPE))
                wants["hello"] = mp.Hello
            got = wait_for_all(rig, wants, 1.0, tag)
            results[delay] = (armed["id"], wire, got["result"])
        records = {r["id"]: r for r in bench.injections()}
        st = bench.status()
    assert st["inject_pending"] == []
    trace_in = delivered(trace, "profiler")
    counts = {}
    for delay, (rid, wire, res) in results.items():
        rec = records[rid]
        check_frame(rec, wire, trace_in)
        assert res.timecode & 0xFF == rec["port"]        # the RESULT names the tick whose edge it was
        counts[delay] = res.counts
    # the host's QUERY (k = 1) went in after the injected frame, not into it (check_frame: nothing in
    # between); in lockstep it reached the bench before the edge for sure, and waited on the line
    rec1 = records[results[DELAYS[1]][0]]
    host_after = [c for c, _ in trace_in if c > rec1["end_cycle"]]
    assert host_after and host_after[0] - rec1["end_cycle"] >= frame_cycles(1) - 1
    if mode == "lockstep":
        assert host_after[0] - rec1["end_cycle"] - frame_cycles(1) <= 5
    # The bench's delay is exact: two stamps clear of the profiler's own interrupts differ by it.
    assert abs((counts[DELAYS[2]] - counts[DELAYS[1]]) - (DELAYS[2] - DELAYS[1])) <= 2, counts
    floor_us = tb.counts_to_us(counts[0])
    clear_us = tb.counts_to_us(counts[DELAYS[1]] - DELAYS[1])
    print(f"\n{mode}: a FIRE whose start bit begins on the tick's edge is reported {floor_us:.3f} us late "
          f"({counts[0]} counts); {clear_us:.3f} us ({counts[DELAYS[1]] - DELAYS[1]} counts) "
          f"{DELAYS[1]} cycles after the edge; counts {counts}")
    assert 0 < floor_us < 30
    assert 0 < clear_us <= floor_us + tb.counts_to_us(2)


@pytest.mark.paced
def test_inject_with_the_fixture(tmp_path: Path) -> None:
    """The command's errors, one injection at a time, the pending list, and host bytes queued behind an
    injection: the fixture in the profiler slot walks PORTA on 'A'; an 'H' injected into the executor
    slot 100 cycles after the first change makes it say FIXTURE, and so does the 'H' the host wrote
    after arming it, which goes on the line only after the injected one."""
    trace = tmp_path / "trace.txt"
    with fixture_bench(tmp_path, trace=trace, lag_bound_us=100000) as bench:
        for bad in ("inject", "inject executor", "inject nobody 48", "inject executor 4", "inject executor zz",
                    "inject executor 48 -1", "inject executor 48 x", "inject executor " + "00" * 65):
            with pytest.raises(BenchError):
                bench.control(bad)
        p = serial.Serial(bench.tty("profiler"), 9600, timeout=0.05)
        e = serial.Serial(bench.tty("executor"), 9600, timeout=0.05)
        with p, e:
            time.sleep(0.1)
            armed = bench.inject("executor", b"H", 100)
            with pytest.raises(BenchError, match="armed or on the line"):
                bench.inject("executor", b"H")
            assert bench.status()["inject_pending"] == ["executor"]
            e.write(b"H")                      # held: an injection is armed
            assert read_lines(e, "FIXTURE", 1, timeout=0.3) == []
            p.write(b"A")                      # the profiler slot walks PORTA: the edge
            assert read_lines(e, "FIXTURE", 2) == ["FIXTURE", "FIXTURE"]
            st = bench.status()
    assert st["inject_pending"] == []
    rec = next(r for r in st["injections"] if r["id"] == armed["id"])
    assert rec["port"] == 1 and rec["late_cycles"] == 0 and rec["start_cycle"] == rec["edge_cycle"] + 100
    ex = delivered(trace, "executor")
    assert [b for _, b in ex] == [ord("H"), ord("H")]
    assert ex[0][0] == rec["end_cycle"] and 0 <= rec["end_cycle"] - rec["start_cycle"] - frame_cycles(1) <= 5
    assert ex[1][0] - ex[0][0] >= frame_cycles(1) - 1   # the host's byte went on the line after it
    # the wires saw the same edge: the executor slot's timecode0 rose at the recorded cycle
    edges = [int(ln.split()[1]) for ln in trace.read_text().splitlines() if ln.startswith("W ") and " timecode0 1" in ln]
    assert edges and edges[0] == rec["edge_cycle"]
