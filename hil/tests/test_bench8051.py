"""The three-node bench with the paper's 8051 profiler (docs/bench.md, "The 8051 profiler"): the 87C51 image
profiler-fw/build/mcs51/profiler.ihx on ucsim's 8051 core beside the simavr executor, one exact time base
(11.0592 MHz = 432/625 of 16 MHz), P1 -> the executor's port K, PC0..3 -> P0, the UART on profiler.tty.

- it comes up: HELLO from both nodes, the 8051's tick exactly 65536 machine cycles on the bench's clock,
  the status says what the profiler is (kind, clock, its P2 LEDs);
- a lockstep mixed-mode run (the scheduler's Runner) accounts for every event, its VCD has the P1 and P0
  changes, and the same lockstep run twice gives the same bytes;
- a reset of the 8051 node (its RST pin) restarts its timecode; faults, cuts and stuck wires on its lines;
  what does not apply is refused with one line;
- the bound: over 2000 events the 8051's stamp of each edge against the bench's exact edge time lies within
  the stated -2.2 .. +684 us (profiler-fw/README.md, "8051 timestamp error").
Skipped where build/ucsim is missing (tools/ucsim.sh could not build ucsim's 8051 core)."""

from __future__ import annotations

import bisect
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import mmproto as mp
from mmhil import BenchEndpoint, LockstepEndpoint
from mmhil.bench import BENCH_BIN, EXECUTOR_ELF, F_CPU, HAS_8051, PROFILER_IHX, Bench, BenchError, ensure_built
from mmsched.model.config import RunConfig
from mmsched.run.runner import run

sys.path.insert(0, str(Path(__file__).parent))
from helpers import lockstep_session, vcd_changes  # noqa: E402

pytestmark = pytest.mark.skipif(not HAS_8051, reason="build/ucsim is missing (bash tools/ucsim.sh builds ucsim's "
                                                     "8051 core): this bench has no 8051 profiler")

# 65536 machine cycles of 12 clocks at 11.0592 MHz, in 16 MHz global cycles: 786432 x 625 / 432
TICK_GLOBAL = 65536 * 12 * 625 / 432          # 1137777.78 cycles = 71.111 ms
MACHINE_CYCLE = 12 * 625 / 432                # 17.36 global cycles
BOUND_US = (-2.2, 684.0)                      # the 8051's edge stamps' stated error bound (docs/hardware.md)


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    try:
        ensure_built(profiler_kind="8051")
    except BenchError as exc:
        pytest.skip(f"the 8051 profiler image cannot be built here: {str(exc).splitlines()[0]}")


def script(path: Path) -> Path:
    """Both nodes asked for their HELLO."""
    path.write_text(f"0.05 profiler {mp.Query(what=mp.Hello.TYPE).wire(0).hex(' ')}\n"
                    f"0.06 executor {mp.Query(what=mp.Hello.TYPE).wire(0).hex(' ')}\n")
    return path


def unpaced(tmp_path: Path, name: str, *extra: str, until_s: float = 2.0) -> tuple[str, dict]:
    trace = tmp_path / f"{name}.trace"
    done = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_IHX), "--executor", str(EXECUTOR_ELF),
                           "--run-dir", str(tmp_path / name), "--unpaced", "--until", str(until_s),
                           "--script", str(script(tmp_path / "script.txt")), "--trace", str(trace), *extra],
                          check=True, capture_output=True, timeout=120)
    return trace.read_text(), json.loads(done.stdout)


def frames(trace: str) -> dict[str, list[mp.Message]]:
    decs = {"profiler": mp.StreamDecoder(), "executor": mp.StreamDecoder()}
    out: dict[str, list] = {"profiler": [], "executor": []}
    for line in trace.splitlines():
        kind, _cycle, node, value = line.split()
        if kind == "O":
            out[node] += [r.message for r in decs[node].feed(bytes([int(value, 16)]))]
    return out


def p1_edges(trace: str) -> list[tuple[int, int]]:
    """(global cycle, P1 value) at each change of the timecode wires (one P1 write: one time)."""
    bits: dict[int, int] = {}
    edges: list[tuple[int, int]] = []
    for line in trace.splitlines():
        kind, cycle, name, value = line.split()
        if kind == "W" and name.startswith("timecode"):
            bits[int(name[8:])] = int(value)
            v = sum(b << i for i, b in bits.items())
            if edges and edges[-1][0] == int(cycle):
                edges[-1] = (int(cycle), v)
            else:
                edges.append((int(cycle), v))
    return edges


def test_comes_up_with_hello_from_both_and_an_exact_tick(tmp_path: Path) -> None:
    trace, st = unpaced(tmp_path, "up")
    got = frames(trace)
    hp = [m for m in got["profiler"] if isinstance(m, mp.Hello)]
    he = [m for m in got["executor"] if isinstance(m, mp.Hello)]
    assert hp and he
    assert (hp[0].cpu_hz, hp[0].timer_hz, hp[0].tick_counts, hp[0].baud) == (11_059_200, 921_600, 65_536, 9600)
    assert he[0].cpu_hz == 16_000_000
    assert sum(isinstance(m, mp.Timecode) for m in got["profiler"]) >= 25        # 2 s of 71.1 ms ticks
    # the tick on the bench's clock: P1 changes 65536 machine cycles apart (the ISR's P1 write jitters by
    # one machine cycle with the instruction it interrupts), no drift over the run
    edges = [t for t, _ in p1_edges(trace)][2:]          # after the reset latch (0xFF) and the image's P1 = 0
    gaps = [b - a for a, b in zip(edges, edges[1:])]
    assert all(abs(g - TICK_GLOBAL) <= MACHINE_CYCLE + 2 for g in gaps), sorted(set(gaps))
    assert abs((edges[-1] - edges[0]) / len(gaps) - TICK_GLOBAL) < MACHINE_CYCLE
    p = st["nodes"]["profiler"]
    assert (p["kind"], p["clock_hz"], p["state"], p["mcusr"]) == ("8051", 11_059_200, "running", None)
    assert st["nodes"]["executor"]["kind"] == "avr"
    # its own clock: the global time x 432/625 (a core ends up to one instruction, 48 clocks, past it)
    assert 0 <= p["cycle"] - st["cycle"] * 432 / 625 < 60
    assert p["leds"] == (~p["p2"]) & 0xFF and p["p1"] == p1_edges(trace)[-1][1]
    assert p["uart"]["node_baud"] == 9600 and p["uart"]["in"] == 7     # the QUERY frame's bytes
    assert st["wires"]["changes"] > 50                   # the P1 bits that changed, ~2 a tick


def test_refusals_one_line(tmp_path: Path) -> None:
    cases = [
        (["--executor", str(EXECUTOR_ELF), "--arduino"], "--arduino is for the AVR profiler"),
        (["--executor", str(EXECUTOR_ELF), "--unconnected", "event"], "--unconnected event is for the AVR"),
        ([], "runs on the bench with an executor"),
        (["--executor", str(EXECUTOR_ELF), "--profiler-kind", "z80"], "not avr or 8051"),
    ]
    for args, why in cases:
        done = subprocess.run([str(BENCH_BIN), "--profiler", str(PROFILER_IHX), "--run-dir", str(tmp_path / "r"),
                               "--unpaced", "--until", "0.01", *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and why in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def run_vcd(tmp_path: Path, name: str, cfg_extra: dict, n: int) -> tuple[pd.DataFrame, dict, Path]:
    out = tmp_path / name
    out.mkdir()
    vcd = out / "wires.vcd"
    cfg = RunConfig(name=name, out=out / name, mode="mixed", distance=2, count=n, **cfg_extra)
    result = run(cfg, LockstepEndpoint(profiler_kind="8051", vcd=vcd))
    assert result.valid, result.sidecar["invalid_reason"]
    assert result.sidecar["invariant"]["ok"]
    return pd.read_csv(out / f"{name}.csv"), result.sidecar, vcd


def test_lockstep_mixed_run_accounts_for_every_event(tmp_path: Path) -> None:
    n = 300                                           # over one 8-bit timecode wrap
    df, side, vcd = run_vcd(tmp_path, "mixed", {}, n)
    assert len(df) == n and (df.outcome == "ok").all(), df.outcome.value_counts()
    assert side["target"]["profiler_kind"] == "8051"
    assert side["nodes"]["profiler"]["timer_hz"] == 921_600 and side["nodes"]["profiler"]["tick_counts"] == 65_536
    names = [name for _, name, _ in vcd_changes(vcd)]
    assert sum(nm == "strobe" for nm in names) == n                            # P0.3: one toggle an event
    assert sum(nm.startswith("event_id") for nm in names) > 0                  # P0.0..2
    assert sum(nm == "timecode0" for nm in names) >= n                         # P1.0 toggles every tick


def test_lockstep_runs_are_deterministic(tmp_path: Path) -> None:
    a_trace, a_replies, a_seen = lockstep_session(tmp_path, "a", grant_s=2.0, events=15, profiler_kind="8051")
    b_trace, b_replies, b_seen = lockstep_session(tmp_path, "b", grant_s=2.0, events=15, profiler_kind="8051")
    assert a_trace == b_trace                        # every byte and pin change at the same cycle
    assert a_replies == b_replies and a_seen == b_seen
    results = [r.message for r in mp.StreamDecoder().feed(a_seen["profiler"]) if isinstance(r.message, mp.Result)]
    fired = [r.message for r in mp.StreamDecoder().feed(a_seen["executor"]) if isinstance(r.message, mp.Fired)]
    assert len(results) >= 12 and len(fired) == len(results)   # the host's bytes went in and were acted on


def test_reset_of_the_8051_restarts_its_timecode(tmp_path: Path) -> None:
    """The reset command at 1.0 s of a lockstep bench (a timed action: the same moment every run)."""
    trace = tmp_path / "reset.trace"
    with Bench(run_dir=tmp_path / "r", lockstep=True, profiler_kind="8051", trace=trace) as bench:
        bench.grant(int(0.5 * F_CPU), frame=False)
        bench.reset("profiler", at_s=1.0)
        bench.grant(int(2.0 * F_CPU), frame=False)
        st = bench.status()
        bench.stop()
        bench.wait(30)
    assert st["nodes"]["profiler"]["resets"] == 1 and st["nodes"]["profiler"]["state"] == "running"
    at = int(1.0 * F_CPU)
    edges = p1_edges(trace.read_text())
    before = [v for t, v in edges if t < at]
    after = [v for t, v in edges if t >= at]
    assert before == [0xFF, 0, *range(1, len(before) - 1)] and before[-1] >= 12   # ~1 s of 71.1 ms ticks
    assert after[:6] == [0xFF, 0, 1, 2, 3, 4]                 # RST: the latch high, then its count from 0
    tcs = [m.timecode for m in frames(trace.read_text())["profiler"] if isinstance(m, mp.Timecode)]
    drops = [(a, b) for a, b in zip(tcs, tcs[1:]) if b < a]
    assert len(drops) == 1 and drops[0][1] <= 1, tcs           # the TIMECODE frames count again from 0


def test_faults_cuts_and_stuck_wires_on_its_lines(tmp_path: Path) -> None:
    with Bench(run_dir=tmp_path / "r", paced=False, profiler_kind="8051") as bench:
        bench.fault("profiler", "out", "drop", 1.0)
        bench.cut("timecode", 0.5)
        bench.control("stuck event 3 1 0.2")
        t0 = bench.status()["virtual_s"]
        while bench.status()["virtual_s"] < t0 + 1.0:
            time.sleep(0.02)
        st = bench.status()
        bench.stop()
    u = st["nodes"]["profiler"]["uart"]
    assert u["fault_dropped"][1] > 0 and u["out"] >= u["fault_dropped"][1]
    assert st["wires"]["cut_dropped"] > 0


@pytest.mark.paced
def test_paced_normal_mode_runs(tmp_path: Path) -> None:
    """Normal mode on the paced bench: the host reads the 8051's timebase from its HELLO (921600 Hz, 65536
    counts a tick) and the run completes, valid, with every event accounted for. Its outcomes are not judged
    here (docs/bench.md, "The 8051 profiler": its TIMECODE bytes come with gaps, which the host's tick
    estimate does not expect). A FIRE the 8051 lost because it still held the one before (it takes one at a
    time: a late wake-up of the PC, or the bench's input path, brought two close) is the rig's loss, judged by
    cause (bench_lag), never a fault that voids the run (no_answer, node_errors)."""
    n = 30
    for attempt in range(3):                  # a paced run the host displaced too much of is run again
        cfg = RunConfig(name=f"normal{attempt}", out=tmp_path / f"normal{attempt}", mode="normal", distance=2, count=n)
        result = run(cfg, BenchEndpoint(profiler_kind="8051"))
        if result.valid or result.reasons != ["bench_lag"]:
            break
    else:
        pytest.skip(f"the host displaced the paced bench's bytes in three runs: {result.sidecar['invalid_reason']}")
    assert result.valid, result.sidecar["invalid_reason"]
    assert result.sidecar["timebase"]["timer_hz"] == 921_600 and result.sidecar["timebase"]["tick_counts"] == 65_536
    assert sum(result.sidecar["summary"]["outcomes"].values()) == n
    assert result.sidecar["budget"]["floor"]["n"] > 0        # floor calibration injects on the 8051's P1 edge


@pytest.mark.long
def test_edge_stamps_within_the_stated_bound(tmp_path: Path) -> None:
    """2000 events, one a tick, task dispatch under CPU and periodic load (the edges at spread phases of the
    8051's poll loop). Each RESULT's latency (counts at 921600 Hz from its tick) against the bench's exact
    edge: the strobe's change in the VCD less the P1 change of that tick (both in global cycles)."""
    n = 2000
    df, _side, vcd = run_vcd(tmp_path, "bound", {"dispatch": "task", "executor_load": "cpu,periodic=10ms/3ms"}, n)
    ticks: list[int] = []
    strobes: list[int] = []
    ids: dict[int, int] = {}
    level: dict[str, int] = {}
    for t, name, v in vcd_changes(vcd):
        level[name] = v
        if name.startswith("timecode") and t and (not ticks or ticks[-1] != t):
            ticks.append(t)          # ticks[T]: the P1 write of timecode T (the first: the image's P1 = 0)
        if name == "strobe":
            strobes.append(t)
            ids[t] = level.get("event_id0", 0) | level.get("event_id1", 0) << 1 | level.get("event_id2", 0) << 2
    rows = df[df.result_counts.notna()]
    assert len(rows) == n, df.outcome.value_counts()
    errors = []
    for r in rows.itertuples():
        tick = ticks[int(r.result_tc)]
        reported = tick + r.result_counts * 16e6 / 921_600
        # the edge this RESULT stamps: the strobe change with its id within 1 ms before .. 10 us after
        near = strobes[bisect.bisect_left(strobes, reported - 16_000):bisect.bisect_right(strobes, reported + 160)]
        edge = [s for s in near if ids[s] == r.event_id]
        assert len(edge) == 1, (r, near)
        errors.append((reported - edge[0]) / 16)
    lo, med, hi = min(errors), statistics.median(errors), max(errors)
    print(f"\n8051 edge stamp error over {len(errors)} events: min {lo:.2f} / median {med:.2f} / max {hi:.2f} us "
          f"(stated bound {BOUND_US[0]} .. +{BOUND_US[1]} us)")
    assert BOUND_US[0] <= lo and hi <= BOUND_US[1]
