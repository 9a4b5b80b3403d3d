"""Inputs left unconnected (--unconnected GROUP): the group's wires are not there, and an input with
nothing driving it floats: with its internal pull-up off the bench toggles it at random (seeded noise, a
few changes per millisecond), with the pull-up on it reads 1. The firmware's pull-ups (profiler: the
strobe PL1/ICP5 and the ids PC0..2; executor: the timecode port K) are what keeps that noise out: the
same run with the test-only PULLUPS=0 images shows what it does without them. Lockstep: the runs do not
depend on the host."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import serial

import mmproto as mp
from mmhil.bench import EXECUTOR_ELF, F_CPU, PROFILER_ELF, ROOT, Bench, BenchError, make

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import read_exactly  # noqa: E402

RUN_S = 3.0


def no_pullups_image(node: str) -> Path:
    """The test-only image without the pull-ups (make avr PULLUPS=0: build/avr-pullups-0)."""
    fw = {"profiler": ROOT / "profiler-fw", "executor": ROOT / "executor"}[node]
    elf = fw / "build/avr-pullups-0" / f"{node}.elf"
    done = make(fw, "avr", "PULLUPS=0")      # (under the build lock: the default image shares its kernel objects)
    assert done.returncode == 0 and elf.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return elf


FIRE_TAGS = range(1000, 1020)      # profiler runs: one FIRE every 0.1 s from 1.0 s on


def run_unconnected(tmp_path: Path, node: str, group: str, elf: Path) -> tuple[list[mp.Message], dict]:
    """RUN_S of bench time with `group` unconnected, the node's output read all along (the profiler also
    gets a FIRE frame every 0.1 s from 1.0 s on, as in normal mode); then its COUNTERS asked for. Returns
    the node's messages and the bench status."""
    images = {"profiler_elf": elf} if node == "profiler" else {"executor_elf": elf}
    msgs: list[mp.Message] = []
    with Bench(run_dir=tmp_path / "b", lockstep=True, unconnected=(group,), seed=7, **images) as bench:
        port = serial.Serial(bench.tty(node), 9600, timeout=0.05)
        dec, seen = mp.StreamDecoder(), 0
        try:
            def grant(seconds: float, written: int = 0) -> None:
                nonlocal seen
                r = bench.grant(int(seconds * F_CPU), frame=False, written={node: written})
                new = read_exactly(port, r["out"][node] - seen)
                seen += len(new)
                msgs.extend(f.message for f in dec.feed(new))
            written, seq, tags = 0, 0, iter(FIRE_TAGS)
            for tenth in range(1, int(RUN_S * 10) + 1):
                if node == "profiler" and tenth >= 10:
                    tag = next(tags, None)
                    if tag is not None:
                        fire = mp.Fire(event_id=tag & 7, tag=tag).wire(seq)
                        seq += 1
                        port.write(fire)
                        port.flush()
                        written += len(fire)
                grant(tenth / 10, written)
            query = mp.Query(mp.Counters.TYPE).wire(seq)
            port.write(query)
            port.flush()
            grant(RUN_S + 0.2, written + len(query))
        finally:
            port.close()
        status = bench.status()
    return msgs, status


def counters(msgs: list[mp.Message]) -> mp.Counters:
    found = [m for m in msgs if isinstance(m, mp.Counters)]
    assert found, "no COUNTERS answer"
    return found[-1]


@pytest.mark.parametrize("pullups", [True, False], ids=["pullups", "no-pullups"])
def test_profiler_event_inputs_unconnected(tmp_path: Path, pullups: bool) -> None:
    elf = PROFILER_ELF if pullups else no_pullups_image("profiler")
    msgs, st = run_unconnected(tmp_path, "profiler", "event", elf)
    assert st["unconnected"] == ["event"]
    results = [m for m in msgs if isinstance(m, mp.Result)]
    fired = [m for m in results if m.flags & 1 and m.tag in FIRE_TAGS]
    edges = [m for m in results if not m.flags & 1]
    c = counters(msgs)
    print(f"profiler, event unconnected, pull-ups {'on' if pullups else 'off'}: noise changes "
          f"{st['noise_changes']['event']}, edge RESULTs {len(edges)}, FIRE RESULTs {len(fired)} of "
          f"{len(FIRE_TAGS)}, spurious_edges {c.node_b}, result_overflows {c.node_a}")
    assert c.node_c == len(FIRE_TAGS)                        # every FIRE was timestamped
    if pullups:
        # the noise ran (the inputs floated until the firmware turned the pull-ups on) and then had no effect
        assert edges == []
        assert len(fired) == len(FIRE_TAGS)
        assert c.node_b == 0 and c.node_a == 0
        assert st["noise_changes"]["event"] < 20
    else:
        assert st["noise_changes"]["event"] > 1000 * RUN_S   # a few per millisecond on 4 pins
        assert len(edges) > 50
        assert c.node_a > 0                                  # the ring overflowed...
        assert len(fired) < len(FIRE_TAGS)                   # ...and FIRE results were lost with it


@pytest.mark.parametrize("pullups", [True, False], ids=["pullups", "no-pullups"])
def test_executor_timecode_inputs_unconnected(tmp_path: Path, pullups: bool) -> None:
    elf = EXECUTOR_ELF if pullups else no_pullups_image("executor")
    msgs, st = run_unconnected(tmp_path, "executor", "timecode", elf)
    assert st["unconnected"] == ["timecode"]
    c = counters(msgs)
    print(f"executor, timecode unconnected, pull-ups {'on' if pullups else 'off'}: noise changes "
          f"{st['noise_changes']['timecode']}, timecode_glitches {c.node_d}")
    if pullups:
        assert c.node_d == 0
        assert st["noise_changes"]["timecode"] < 40
    else:
        assert st["noise_changes"]["timecode"] > 1000 * RUN_S
        assert c.node_d > 100


def test_unconnected_bad_group_is_one_line_exit_2(tmp_path: Path) -> None:
    bench = Bench(run_dir=tmp_path / "b", paced=False, unconnected=("timecod",))
    with pytest.raises(BenchError, match="status 2") as err:
        bench.start()
    assert "--unconnected: 'timecod' is not a line group (timecode or event)" in err.value.log_tail
