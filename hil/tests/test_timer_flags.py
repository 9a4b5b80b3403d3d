"""simavr 1.6 TIFRn quirk (docs/bench.md, Known simavr quirks): a write to TIFRn must clear only the flags
written as 1. simavr 1.6 cleared every set flag of the timer, so the profiler's `TIFR5 = _BV(ICF5)` in its
capture ISR also took a pending TOV5 and its interrupt: the overflow ISR never ran, every later 32-bit
timestamp was 65536 counts short and the next tick came 65536 cycles late. The bench replaces the handler.

The repro is the profiler image alone (one-node mode) with the lockstep run's case: two edges 22 and 1072
cycles after the port change of tick 36, whose Timer5 overflow falls 12 cycles before that change (inside
the tick ISR, interrupts off), so the first capture ISR runs while TOV5 is pending. Ticks 30..40 all get
the same pair, so a tick with an overflow in that window is covered even if the boot timing moves."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import mmproto

from mmhil.bench import BENCH_BIN, PROFILER_ELF

BENCH = os.environ.get("MMBENCH", str(BENCH_BIN))
TICK = 1137778
PAIR = (22, 1072)            # cycles after the tick's port change: the executor's two edges of tick 36
TICKS = range(30, 41)


def run(tmp_path: Path, name: str, stimulus: str, cycles: int) -> list[list[str]]:
    stim, trace = tmp_path / f"{name}.stim", tmp_path / f"{name}.trace"
    stim.write_text(stimulus)
    subprocess.run([BENCH, "--profiler", str(PROFILER_ELF), "--stimulus", str(stim), "--trace", str(trace),
                    "--until-cycles", str(cycles), "--uart-timing", "simavr", "--run-dir", str(tmp_path / name)],
                   check=True, capture_output=True, timeout=120)
    return [ln.split() for ln in trace.read_text().splitlines()]


def test_capture_isr_does_not_lose_a_pending_timer_overflow(tmp_path: Path) -> None:
    probe = run(tmp_path, "probe", "", 6_000_000)
    t1 = next(int(p[1]) for p in probe if p[0] == "A" and int(p[2], 16) == 1)
    tick = lambda k: t1 + (k - 1) * TICK  # noqa: E731
    lines = [f"E {tick(k) + off} {(2 * i + k) % 8:x}\n" for k in TICKS for i, off in enumerate(PAIR)]
    tr = run(tmp_path, "pairs", "".join(lines), tick(TICKS[-1] + 2))

    ports = [(int(p[1]), int(p[2], 16)) for p in tr if p[0] == "A" and int(p[1]) >= t1]
    assert [c - t1 for c, _ in ports] == [k * TICK for k in range(len(ports))], "a tick came late"
    edges = [(int(p[2]), int(p[3], 16)) for p in tr if p[0] == "E"]  # (applied cycle, id)
    results = [m.message for m in mmproto.StreamDecoder().feed(bytes(int(p[2], 16) for p in tr if p[0] == "T"))
               if isinstance(m.message, mmproto.Result)]
    assert len(results) == len(edges) == 2 * len(TICKS)
    for (at, eid), r in zip(edges, results):
        k = 1 + (at - t1) // TICK
        assert (r.event_id, r.timecode) == (eid, k & 0xFF), (r, k)
        assert r.counts == at - tick(k), (r, at - tick(k))  # ICR5 = the count of the cycle it went in
