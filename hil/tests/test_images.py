"""The real images (profiler-fw/build/avr/profiler.elf, executor/build/avr/executor.elf) on the bench:
boot and HELLO through the ptys, a SCHEDULE 2 ticks ahead through pyserial (ACK, the edge on the
wired port, the profiler's RESULT and its latency per SPEC.md section 7), and determinism."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mmproto as mp
from mmhil import Bench, Rig
from mmhil.bench import BENCH_BIN, EXECUTOR_ELF, PROFILER_ELF

sys.path.insert(0, str(Path(__file__).parent))
from helpers import vcd_changes  # noqa: E402

# the MODE frames these tests send, by their protocol names
MIXED_ISR = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0, random_ids=0)

F_CPU = 16_000_000
TICK_S = 1_137_778 / F_CPU


@pytest.mark.paced
def test_schedule_two_ticks_ahead_gives_ack_edge_and_result(tmp_path: Path) -> None:
    vcd = tmp_path / "run" / "wires.vcd"   # `vcd on FILE`: a plain name in the run directory
    with Bench(run_dir=tmp_path / "run", lag_bound_us=100000) as bench, Rig.on_bench(bench) as rig:
        hp, he = rig.hellos["profiler"], rig.hellos["executor"]
        assert (hp.proto_version, hp.node_kind, he.proto_version, he.node_kind) == (mp.PROTO_VERSION, 1, mp.PROTO_VERSION, 2)
        tb = rig.time_base()
        rig.send("executor", MIXED_ISR)
        _, status = rig.wait_for("executor", mp.Status, timeout=2.0)
        assert status.mode == 2
        rig.drain("profiler")
        _, now = rig.wait_for("profiler", mp.Timecode, timeout=2.0)     # a tick just began
        bench.vcd(True, vcd)
        target = now.timecode + 2
        rig.send("executor", mp.Schedule(tag=4242, event_id=5, timecode=target))
        _, ack = rig.wait_for("executor", mp.Ack, timeout=1.0)
        assert (ack.tag, ack.event_id) == (4242, 5)
        assert ack.timecode in (now.timecode, now.timecode + 1)
        _, fired = rig.wait_for("executor", mp.Fired, timeout=1.0)
        assert (fired.tag, fired.timecode) == (4242, target)
        _, result = rig.wait_for("profiler", mp.Result, timeout=1.0)
        bench.vcd(False)
    assert result.event_id == 5 and result.flags & 1 == 0                  # an edge, not a FIRE frame
    latency_counts = tb.latency_counts(target, result)                     # SPEC.md section 7
    latency_us = tb.counts_to_us(latency_counts)
    assert 0 <= latency_us < 10.0, latency_us                              # ISR dispatch: a few us
    # the bench's own view of the same edge: strobe change minus the timecode change before it
    changes = vcd_changes(vcd)
    strobe = [t for t, name, _ in changes if name == "strobe"]
    assert len(strobe) == 1
    ids = {name: lv for t, name, lv in changes if name.startswith("event_id") and t <= strobe[0]}
    assert sum(lv << int(n[-1]) for n, lv in ids.items()) == 5 or not ids  # id lines as the executor set them
    tick = max(t for t, name, _ in changes if name.startswith("timecode") and t <= strobe[0])
    assert strobe[0] - tick == latency_counts                             # Timer5 counts CPU cycles


def schedule_script(path: Path) -> Path:
    lines = ["0.05 profiler " + mp.Query(what=mp.Hello.TYPE).wire(0).hex(" "),
             "0.05 executor " + MIXED_ISR.wire(0).hex(" ")]
    first_tick = 0.2404  # the profiler's tick 0 begins about here after boot
    for k in range(1, 25):
        t = first_tick + (k + 0.3) * TICK_S
        lines.append(f"{t:.6f} executor " + mp.Schedule(tag=100 + k, event_id=k & 7, timecode=k + 2).wire(k).hex(" "))
    path.write_text("\n".join(lines) + "\n")
    return path


def run_unpaced(tmp_path: Path, name: str, script: Path) -> bytes:
    trace = tmp_path / f"{name}.trace"
    subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                    "--run-dir", str(tmp_path / name), "--unpaced", "--until", "2.5", "--script", str(script),
                    "--trace", str(trace)], check=True, capture_output=True, timeout=60)
    return trace.read_bytes()


def test_unpaced_runs_are_deterministic(tmp_path: Path) -> None:
    script = schedule_script(tmp_path / "script.txt")
    a = run_unpaced(tmp_path, "a", script)
    b = run_unpaced(tmp_path, "b", script)
    assert a == b                                     # every UART byte and pin change, same cycle
    decoders = {"profiler": mp.StreamDecoder(), "executor": mp.StreamDecoder()}
    got: dict[str, list[mp.Message]] = {"profiler": [], "executor": []}
    for line in a.decode().splitlines():
        kind, cycle, node, value = line.split()
        if kind == "O":
            got[node] += [r.message for r in decoders[node].feed(bytes([int(value, 16)]))]
    results = [m for m in got["profiler"] if isinstance(m, mp.Result)]
    fired = [m for m in got["executor"] if isinstance(m, mp.Fired)]
    assert len(results) >= 15 and len(fired) == len(results)   # not a trivially equal pair of runs
    assert [r.event_id for r in results] == [f.event_id for f in fired]
    assert all(r.timecode == f.timecode for r, f in zip(results, fired))
