"""Lockstep runs of the scheduler against the real images: outcomes that do not depend on the host, and the
same CSV from the same seed. Every case crosses the 8-bit timecode wrap at least twice (> 512 ticks)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mmproto as mp
from mmhil import LockstepEndpoint
from mmhil.bench import ensure_built
from mmproto.wiretime import wire_time_s
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import EndpointError
from mmsched.run.runner import run

TICK_S = 1_137_778 / 16_000_000
WRAPS = 2 * 256 + 8                       # ticks a run must span: two wraps of the 8-bit timecode and some


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


def count_for(rate_ms: float | None, generation: str) -> int:
    """Events enough for the run to span WRAPS ticks at this rate (tick-aligned generation rounds the rate
    to whole ticks)."""
    every_s = TICK_S if rate_ms is None else rate_ms / 1000
    if generation == "aligned":
        every_s = max(1, round(every_s / TICK_S)) * TICK_S
    return math.ceil(WRAPS * TICK_S / every_s)


def feasible(row: pd.Series) -> bool:
    """Could the executor have had this event in time? The SCHEDULE leaves right at creation in lockstep
    (the PC answers at once) and takes its wire time; the executor needs it before the tick begins.
    Tick-aligned events are created right after the TIMECODE frame, so always feasible one tick ahead;
    free-running ones created late in the tick one tick ahead are the paper's 1-tick failures."""
    wire_ticks = wire_time_s(mp.Schedule, 9600) / TICK_S
    return row["distance"] - row["created_phase"] - wire_ticks > 0.05


def lockstep_run(tmp_path: Path, name: str, **kw) -> pd.DataFrame:
    cfg = RunConfig(name=name, out=tmp_path / name, **kw)
    result = run(cfg, LockstepEndpoint())
    assert result.valid, result.sidecar["invalid_reason"]
    assert result.sidecar["invariant"]["ok"]
    return pd.read_csv(tmp_path / f"{name}.csv")


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mode=st.sampled_from(["mixed", "verification"]), distance=st.integers(1, 4),
       rate_ms=st.sampled_from([None, 50.0, 97.0, 130.0, 250.0]), generation=st.sampled_from(["aligned", "free"]),
       random_ids=st.booleans())
def test_every_feasible_event_is_on_time(tmp_path: Path, mode: str, distance: int, rate_ms: float | None,
                                         generation: str, random_ids: bool) -> None:
    if mode == "verification":
        rate_ms = None if rate_ms is None or rate_ms < TICK_S * 1000 else rate_ms   # the executor: whole ticks
    df = lockstep_run(tmp_path, f"{mode}-{distance}-{rate_ms}-{generation}-{random_ids}", mode=mode,
                      distance=distance, rate_ms=rate_ms, generation=generation, random_ids=random_ids,
                      count=count_for(rate_ms, generation if mode == "mixed" else "aligned"))
    assert df["scheduled_tc"].max() - df["scheduled_tc"].min() >= 2 * 256        # crossed the wrap twice
    ok = df["outcome"] == "ok"
    can = df.apply(feasible, axis=1) if mode == "mixed" else pd.Series(True, index=df.index)
    assert ok[can].all(), df[can & ~ok][["event", "created_phase", "outcome", "reason"]].head()
    # an infeasible event is refused by the executor as past due: never late, early or lost
    assert set(zip(df.loc[~ok, "outcome"], df.loc[~ok, "reason"])) <= {("missed", "past_due")}


def test_a_refused_event_is_explained_by_its_schedules_journey_against_its_slack(tmp_path: Path) -> None:
    # one tick ahead, free-running: the events made late in their tick are refused past_due (the paper's 1-tick
    # failures); each is explained: its SCHEDULE reached the executor no sooner than its own tick began
    cfg = RunConfig(name="late", out=tmp_path / "late", mode="mixed", distance=1, generation="free", rate_ms=97.0,
                    count=60, seed=3)
    said: list[str] = []
    result = run(cfg, LockstepEndpoint(), said.append)
    late = result.sidecar["slack"]["past_due"]
    refused = [e for e in result.events if e.reason == "past_due"]
    assert refused and late["n"] == len(refused), late
    # reaching the executor at or after its tick began means a journey at least as long as the slack it had
    assert late["journey_min_ticks_p50"] >= late["slack_at_creation_ticks_p50"], late
    assert any(line == late["text"] and "refused past_due" in line for line in said), said


def test_the_same_seed_gives_the_same_csv(tmp_path: Path) -> None:
    kw = dict(mode="mixed", distance=1, rate_ms=97.0, generation="free", random_ids=True, count=300, seed=7)
    first = lockstep_run(tmp_path, "first", **kw)
    second = lockstep_run(tmp_path, "second", **kw)
    # Every column is virtual time or derived from it in lockstep (sent_s too: the run's clock is virtual
    # time); only the sidecar has wall-clock figures (created, cpu, bench.wall_s).
    assert (tmp_path / "first.csv").read_bytes() == (tmp_path / "second.csv").read_bytes()
    assert (first["outcome"] == "missed").any() and (first["outcome"] == "ok").any()   # a run with both kinds


def test_normal_mode_is_refused_in_lockstep(tmp_path: Path) -> None:
    with pytest.raises(EndpointError) as err:
        run(RunConfig(mode="normal", count=3, out=tmp_path / "n"), LockstepEndpoint())
    assert err.value.code == "lockstep_normal" and not (tmp_path / "n.csv").exists()


def test_two_events_in_one_tick_are_both_measured(tmp_path: Path) -> None:
    # Rates below one tick put two events in some ticks; the executor fires the second right after the
    # first (~67 us). Deterministic in lockstep: event 46 of this run is such a case.
    df = lockstep_run(tmp_path, "two-per-tick", mode="mixed", distance=2, rate_ms=50.0, generation="free", count=60)
    assert (df["outcome"] == "ok").all(), df[df["outcome"] != "ok"][["event", "scheduled_tc", "fired_tc", "reason"]]


def gap0_executor() -> Path:
    """The executor image that puts the events of one tick out back to back, 25 cycles apart (make avr
    GAP_US=0): closer than the profiler's capture separates (85 cycles, profiler-fw/tests/test_avr.py)."""
    from mmhil.bench import EXECUTOR_ELF, make

    root = Path(EXECUTOR_ELF).resolve().parents[2]
    done = make(root, "-s", "avr", "GAP_US=0", timeout=600)   # (under the build lock: it shares the kernel objects)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root / "build/avr-gap-0/executor.elf"


def test_three_events_in_one_tick_are_all_measured(tmp_path: Path) -> None:
    # The executor leaves 20 us between the edges of one tick (exb_output_gap), so the profiler separates
    # them: at distance 4 and 33 events/s, ticks with three events; every event on time.
    df = lockstep_run(tmp_path, "three", mode="mixed", distance=4, rate_ms=30.0, generation="free", count=56)
    assert df.groupby("scheduled_tc")["event"].size().max() == 3
    assert (df["outcome"] == "ok").all(), df[df["outcome"] != "ok"][["event", "scheduled_tc", "reason"]]
    nth = df.groupby("scheduled_tc").cumcount()
    second = df[nth == 1].set_index("scheduled_tc")["latency_us"]
    third = df[nth == 2].set_index("scheduled_tc")["latency_us"]
    assert len(third) and ((third - second[third.index]) >= 20).all()   # the gap, as the rig measures it


@pytest.mark.parametrize("dispatch,rate_ms,count,lost_tail", [("isr", 30.0, 56, [54, 55]), ("task", 20.0, 40, None)])
def test_edges_too_close_to_separate_are_lost_not_missed(tmp_path: Path, dispatch: str, rate_ms: float, count: int,
                                                         lost_tail: list[int] | None) -> None:
    # With no gap (GAP_US=0) the executor puts a tick's events out 25 cycles apart. Before the profiler
    # armed the next capture first, the ISR path's pair came back as one RESULT with the third's id and the
    # second's time and the second was recorded missed; on the task path three edges before the capture ISR
    # ran left the capture register holding the last, the profiler never knowing. Now: the profiler drops what it cannot separate and says
    # so (spurious_edges, lost-before), the matcher sees fewer edges than FIRED events (edges_missing), and
    # those events end lost/result_lost, a fault of the rig; the run is invalid. The ISR case's last tick
    # (40) holds such a pair with no later RESULT to carry the flag: the profiler's COUNTERS, asked at the
    # deadline, tell.
    cfg = RunConfig(name="close", out=tmp_path / "close", mode="mixed", distance=4, rate_ms=rate_ms,
                    generation="free", count=count, dispatch=dispatch)
    result = run(cfg, LockstepEndpoint(executor_elf=gap0_executor()))
    df = pd.read_csv(tmp_path / "close.csv")
    per_tick = df.groupby("scheduled_tc")["event"].transform("size")
    assert set(df["outcome"]) == {"ok", "lost"}, df.groupby(["outcome", "reason"]).size()
    lost = df[df["outcome"] == "lost"]
    assert (lost["reason"] == "result_lost").all() and (per_tick[lost.index] >= 2).all()
    if lost_tail:
        assert list(lost["event"][-2:]) == lost_tail
        assert result.sidecar["counters"]["scheduler"]["loss_queries"] >= 1
    # the first of a tick, alone in its 25 cycles, is measured at its dispatch path's latency
    first = df[df.groupby("scheduled_tc").cumcount() == 0]
    assert first.loc[first["outcome"] == "ok", "latency_us"].max() < (10 if dispatch == "isr" else 60)
    assert not result.valid and "could not timestamp" in result.sidecar["invalid_reason"]


class FailsMidRun(LockstepEndpoint):
    """A lockstep bench whose stepping fails after a while (as a lockstep timeout on a starved host does)."""

    calls: int = 0

    def next_item(self, inbox, timeout_s):
        self.calls += 1
        if self.calls == 150:
            raise EndpointError("bench_failed", "lockstep: the profiler link read 27 of 28 bytes (test)")
        return super().next_item(inbox, timeout_s)


def test_an_endpoint_failing_mid_run_keeps_the_data_and_ends_the_bench(tmp_path: Path) -> None:
    target = FailsMidRun()
    result = run(RunConfig(mode="mixed", distance=2, count=60, out=tmp_path / "failed"), target)
    assert not result.valid and "bench_failed" in result.reasons, result.sidecar["invalid_reasons"]
    df = pd.read_csv(tmp_path / "failed.csv")
    assert 0 < len(df) < 60 and (df["outcome"] == "ok").any()      # what was measured before is kept
    assert target.bench is not None and not target.bench.alive()  # the bench was ended, not orphaned


def test_executor_load_shapes_task_dispatch_and_leaves_isr_dispatch_alone(tmp_path: Path) -> None:
    """A periodic task above the timecode task (10 ms period, 2 ms each) delays task dispatch by
    whatever of its job is left when the tick comes, and ISR dispatch not at all; the CPU-bound task and the
    NOP traffic ride along. The load reaches the executor in MODE and comes back in STATUS."""
    from mmsched.model.exload import ExecutorLoad

    load = ExecutorLoad.parse("cpu,periodic=10ms/2ms,rx=20")
    out = {}
    for dispatch in ("isr", "task"):
        cfg = RunConfig(mode="mixed", distance=2, count=120, dispatch=dispatch, executor_load=load,
                        name=dispatch, out=tmp_path / dispatch)
        result = run(cfg, LockstepEndpoint())
        assert result.valid and result.sidecar["invariant"]["ok"], result.sidecar["invalid_reason"]
        assert result.sidecar["config"]["executor_load_text"] == "cpu,periodic=10000/2000,rx=20"
        # 20 NOPs a second of the run's ~8.5 s went out, and the executor took every frame without a fault
        assert result.sidecar["counters"]["scheduler"]["nops_sent"] >= 20 * 8
        assert not any(v for k, v in result.sidecar["counters"]["executor"].items() if k != "rx_ok")
        out[dispatch] = pd.read_csv(tmp_path / f"{dispatch}.csv")
    isr, task = out["isr"]["latency_us"], out["task"]["latency_us"]
    # ISR dispatch: 22 cycles as idle, a little more when the edge meets the CPU task's critical section
    # (25 cycles with interrupts off each pass) or a multi-cycle instruction; never a job's milliseconds
    assert isr.median() == 1.375 and isr.min() >= 1.25 and isr.max() < 5.0
    # the idle figure (the tick missed the job); 36.6875 before the pin-change interrupt looked for a waiting
    # PERIODIC moment on every edge (3 cycles)
    assert task.min() == pytest.approx(36.875, abs=0.1)
    assert 1000 < task.max() < 2100                            # the tick came early in a job: up to 2 ms more
    share = (task > 100).mean()                                # about exec / period of the ticks meet a job
    assert 0.05 < share < 0.45, share


def test_a_traced_run_profiles_the_executor_from_outside(tmp_path: Path) -> None:
    """--trace on the bench writes the executor's trace, its Perfetto trace and the wires' VCD beside
    the CSV, and the sidecar's executor profile. The trace's own edge-to-edge dispatch (timecode edge in, event
    edge out, at the executor's pins) agrees with the profiler's latencies to the cycle: two instruments, one
    answer."""
    from mmanalysis import exectrace, perfettotrace

    cfg = RunConfig(mode="mixed", distance=2, count=60, dispatch="task", executor_load="cpu,periodic=10ms/2ms,rx=20",
                    trace=True, name="traced", out=tmp_path / "traced")
    result = run(cfg, LockstepEndpoint())
    assert result.valid, result.sidecar["invalid_reason"]
    prof = result.executor_profile
    assert prof is not None and "error" not in prof, prof
    assert set(prof["files"]) == {"exectrace", "perfetto", "vcd"} and result.exec_trace == tmp_path / "traced.exectrace"
    names = {(r["kind"], r["name"]) for r in prof["tasks"]}
    assert {("task", "tc"), ("task", "serial"), ("task", "status"), ("task", "idle"), ("task", "load_cpu"),
            ("task", "load_periodic"), ("isr", "PCINT2"), ("isr", "TIMER0_COMPA"), ("isr", "USART0_RX")} <= names
    periodic = next(r for r in prof["tasks"] if r["name"] == "load_periodic")
    # the job spins 2 ms of Timer3's time (board_load_job): an interrupt taken inside it is not its CPU time, so
    # a job is a few us short of 2 ms where one was (1998.9 us since protocol version 6's images)
    assert periodic["T_us"]["avg"] == pytest.approx(10_000, rel=1e-3) and periodic["C_us"]["min"] >= 1990
    assert 0.9 < prof["U"] <= 1.0 and prof["by_category"]["load"] > 0.9       # the CPU task takes what is left
    assert prof["stray_returns"] == 0 and prof["skipped_lines"] == 0
    # the context switch, from outside: PCINT2 switching to the timecode task against returning
    pcint = next(c for c in prof["service_calls"] if c["call"] == "PCINT2 interrupt")
    assert 5 < pcint["difference_us"] < 40
    # the same-work pair (PCINT2 wakes the timecode task either way): 231 cycles; its restore half 94
    cs = prof["context_switch"]
    assert cs["from"] == ["PCINT2 interrupt"] and cs["us"] == pytest.approx(14.4375)
    assert cs["restore_us"] == pytest.approx(94 / 16)
    df = pd.read_csv(tmp_path / "traced.csv")
    lat = sorted(df["latency_us"].dropna())
    assert prof["dispatch_us"]["n"] == len(lat)
    tr = exectrace.read(tmp_path / "traced.exectrace")
    assert sorted(exectrace.dispatch_delays(tr)) == pytest.approx(lat, abs=1e-9)
    # the Perfetto trace reads back with Perfetto's own protos, the run's events on it
    t = perfettotrace.read_back(tmp_path / "traced.perfetto-trace")
    scheduled = [p for p in t.packet if p.HasField("track_event") and p.track_event.name.startswith("scheduled event")]
    assert len(scheduled) == len(df)
    assert (tmp_path / "traced.vcd").read_text().startswith("$comment")


def test_a_run_at_115200_baud_asks_both_nodes_for_it_and_measures_as_at_9600(tmp_path: Path) -> None:
    # The baud is a run-time setting (BAUD, SPEC.md 0x06) the HELLO reports
    df = lockstep_run(tmp_path, "fast", mode="mixed", distance=1, rate_ms=20.0, generation="free", count=120,
                      baud=115_200)
    side = json.loads((tmp_path / "fast.json").read_text())
    assert side["config"]["baud"] == 115_200
    assert side["nodes"]["profiler"]["baud"] == side["nodes"]["executor"]["baud"] == 115_200
    # one tick ahead, free-running: at 115200 a SCHEDULE takes 1.1 ms, so only an event made in the last few
    # hundredths of a tick (its line time, the executor's arming) misses: 8 of 120 here (at 9600, 35 %, made
    # from phase 0.80 on: README's experiment 3b)
    assert set(df["outcome"]) <= {"ok", "missed"} and (df["outcome"] == "ok").mean() > 0.9
    assert df.loc[df["outcome"] == "missed", "created_phase"].min() > 0.95


def test_a_rate_a_node_cannot_make_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    result = run(RunConfig(mode="mixed", count=5, baud=300, out=tmp_path / "slow"), LockstepEndpoint())
    assert not result.valid and result.sidecar["invalid_reasons"][0]["code"] == "baud_refused"
    assert "cannot run at 300 baud" in result.sidecar["invalid_reason"] and result.summary["events"] == 0


def test_the_runs_loop_runs_above_other_work_and_the_process_is_put_back(tmp_path: Path) -> None:
    """The sidecar says what the run's own threads ran at (loopnice.py); after the run the caller's thread is at
    its nice again."""
    import os

    mine = os.getpriority(os.PRIO_PROCESS, 0)
    cfg = RunConfig(name="loop", out=tmp_path / "loop", mode="mixed", distance=1, count=5)
    result = run(cfg, LockstepEndpoint())
    loop = result.sidecar["cpu"]["loop"]
    assert loop["measured_nice"] == mine and os.getpriority(os.PRIO_PROCESS, 0) == mine
    assert loop["nice"] == min(-10, mine) or loop["why"], loop
