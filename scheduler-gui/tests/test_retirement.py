"""A long run's ended events leave memory (retirement.py, eventstore.py): a lockstep run that retires them writes
the same CSV and the same figures as one that holds every event to its end; an event is judged before it leaves
(the scheduler's own late creation) and counted at the end; one an open fault touched stays held; a run whose end
reads a byte record (a paced bench) judges the retired ones by it a chunk at a time, and normal mode's end, which
acts across events, judges them as it does a list."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from mmhil import BenchEndpoint, LockstepEndpoint
from mmhil.bench import ensure_built
from mmsched.link.endpoint import Verdict
from mmsched.model.byterecord import ByteRecord, Entry
from mmsched.model.config import RunConfig
from mmsched.model.event import Event
from mmsched.model.eventbytes import EventBytes, Sent
from mmsched.model.eventstore import EventStore
from mmsched.run import retirement as retirement_module
from mmsched.run import runner as runner_module
from mmsched.run.finish import mark_unmeasurable
from mmsched.run.retirement import Retirement
from mmsched.model.servo import drift_of, lower_bound
from mmsched.verdict.budget import Floor, apply_budget, budget_summary
from mmsched.verdict.crowding import crowded_fires
from mmsched.verdict.faults import FaultLedger

TICK_S, BASE_S = 0.01, 100.0

# the figures that are the run's, not the host's (what the CPU or the bench process did differs run to run)
HOSTS = ("cpu", "target", "bench", "config", "created", "csv_sha256", "environment")


def run_of(out: Path, keep: int | None, monkeypatch) -> tuple[str, dict, int]:
    """(the CSV's hash, the sidecar without the host's figures, how many events retired) of an 800-event series
    at 1 kHz."""
    monkeypatch.setattr(runner_module, "Retirement",      # (None: more held than the run makes)
                        lambda *a, **k: Retirement(*a, **k, keep=10**9 if keep is None else keep, chunk=32))
    cfg = RunConfig(name="r", out=out, count=800, mode="mixed", generation="periodic", rate_ms=1.0, baud=500000,
                    raw=True)
    res = runner_module.Runner(cfg, LockstepEndpoint()).run()
    monkeypatch.undo()
    sidecar = {k: v for k, v in json.loads(res.json_path.read_text()).items() if k not in HOSTS}
    retired = res.events.retired if isinstance(res.events, EventStore) else 0
    return hashlib.sha256(res.csv_path.read_bytes()).hexdigest(), sidecar, retired


def test_a_run_that_retires_its_events_writes_what_one_that_holds_them_does(tmp_path: Path, monkeypatch) -> None:
    ensure_built()
    held_csv, held_sidecar, none = run_of(tmp_path / "held", None, monkeypatch)
    csv, sidecar, retired = run_of(tmp_path / "retired", 64, monkeypatch)
    assert none == 0 and retired >= 800 - 64 - 32, retired
    assert sidecar["valid"] and sidecar["summary"]["n"] > 750
    assert csv == held_csv
    assert sidecar == held_sidecar


def late(k: int, phase: float) -> Event:
    e = Event(k, k, k, "mixed", 1, 10 + k, 9 + k, phase, created_at=float(k))
    e.finish("missed", "past_due")
    return e


def test_an_event_is_judged_before_it_leaves_and_counted_at_the_end(tmp_path: Path) -> None:
    store = EventStore(tmp_path)
    r = Retirement(store, FaultLedger(), tick_s=0.0071, stale_phase=1.2, keep=2, chunk=2)
    for k, phase in enumerate((0.3, 1.5, 0.2, 0.4)):      # event 1 made 1.5 ticks into its tick: the scheduler's
        store.append(late(k, phase))
        r.ended()
    assert store.retired == 2 and store[1].measurable is False and store[1].stall_us == round(1.5 * 7100, 1)
    figures, why = mark_unmeasurable(store, None, Verdict(), 9600, retired=r)
    assert figures["late_creations"] == 1 and figures["unmeasurable"] == 1 and why is not None   # 1 of 4: > 5 %
    assert [e["event"] for e in figures["events"]] == [1]


def test_an_event_an_open_fault_touched_stays_held(tmp_path: Path) -> None:
    store, faults = EventStore(tmp_path), FaultLedger()
    f = faults.raise_("timecode_fault", "executor", 0.0, "the count went wrong", [])
    r = Retirement(store, faults, tick_s=0.0071, stale_phase=1.2, keep=2, chunk=2)
    for k in range(4):
        e = late(k, 0.1)
        e.fault = f.kind if k == 1 else None
        store.append(e)
        r.ended()
    assert store.retired == 1                               # up to the touched one
    faults.close(1.0)
    store.append(late(4, 0.1))
    r.ended()
    assert store.retired == 3 and [e.event for e in store] == [0, 1, 2, 3, 4]


def test_a_paced_benchs_events_are_judged_at_its_end_and_a_faults_reach_stays_held() -> None:
    assert BenchEndpoint.keeps_byte_record and not LockstepEndpoint.keeps_byte_record
    assert retirement_module.KEEP >= 256       # the last 256 a fault reaches back to stay held


def scheduled(k: int, outcome: str, reason: str | None) -> Event:
    e = Event(k, k, k, "mixed", 2, 10 + k, 8 + k, 0.25, created_at=0.01 * k)
    e.bytes.sent = Sent("executor", 12 * k, 0.01 * k, size=12, ended=0.01 * k + 0.0001)
    e.finish(outcome, reason)
    return e


def test_retired_events_judged_at_the_end_by_the_byte_record_as_held_ones_are(tmp_path: Path) -> None:
    """A paced bench's run: its record comes at the end. Events retired before are read back, judged by it and
    written back a chunk at a time; the figures and the marks are those of the same events held in a list."""
    refused = {3, 7, 11}                          # their SCHEDULE entered the line 5 ms late: refused past_due
    def events() -> list[Event]:
        return [scheduled(k, "missed", "past_due") if k in refused else scheduled(k, "ok", None) for k in range(14)]
    record = ByteRecord({"executor": [Entry("executor", 1, 12 * k, 12, 0.01 * k + 0.0001,
                                            0.005 if k in refused else 0.00002) for k in range(14)]})
    verdict = Verdict(record=record, bound_us=1000.0)
    held = events()
    expected, why = mark_unmeasurable(held, None, verdict, 500000)
    store = EventStore(tmp_path)
    r = Retirement(store, FaultLedger(), tick_s=0.0071, stale_phase=1.2, keep=4, chunk=4, judge_now=False)
    for e in events():
        store.append(e)
        r.ended()
    assert store.retired == 8 and not r.judgement.marked        # not judged as they left: no record yet
    figures, why2 = mark_unmeasurable(store, None, verdict, 500000, retired=r)
    assert figures == expected and why2 == why and figures["unmeasurable"] == 3
    assert [(e.event, e.measurable, e.stall_us) for e in store] == [(e.event, e.measurable, e.stall_us) for e in held]
    assert not store[3].measurable and store[3].stall_us is not None and store.held_at(3) is None   # written back


@pytest.mark.long
def test_a_run_in_its_own_process_that_retired_events_hands_every_one_back(tmp_path: Path) -> None:
    """The GUI runs a run in a process of its own (mmrig.child) and takes its RunResult over a pipe: a run long
    enough to retire events (KEEP + CHUNK and more) hands back every event, in order, as its CSV has them."""
    import pandas as pd

    from mmrig.child import RunProcess

    ensure_built()
    n = retirement_module.KEEP + retirement_module.CHUNK + 600
    cfg = RunConfig(name="r", out=tmp_path / "r", count=n, mode="mixed", generation="periodic", rate_ms=1.0,
                    baud=500000, raw=True)
    last = None
    for kind, obj in RunProcess(cfg, LockstepEndpoint()).start().messages():
        last = (kind, obj)
    assert last is not None and last[0] == "result", last
    res = last[1]
    assert len(res.events) == n and [e.event for e in res.events] == list(range(n))
    csv = pd.read_csv(res.csv_path)
    assert list(csv["latency_us"].round(3).fillna(-1)) == [round(e.latency_us, 3) if e.latency_us is not None
                                                           else -1 for e in res.events]


def test_a_long_runs_process_sends_every_final_row_then_its_newest_events(tmp_path: Path, monkeypatch) -> None:
    """A run longer than the GUI keeps rows for (mmrig.child.ROWS_KEPT): its process sends each event's final row
    in order, a batch at a time, then a result of the run's length holding its newest events only, not the
    gigabytes of a whole hour in one message."""
    import pickle

    from mmrig import child
    from mmsched.model.result import RunResult

    monkeypatch.setattr(child, "ROWS_KEPT", 100)
    monkeypatch.setattr(child, "FINAL_BATCH", 64)
    store = EventStore(tmp_path)
    for k in range(300):
        e = late(k, 0.1)
        store.append(e)
    store.retire(200)
    sent: list = []
    out = type("Out", (), {"send": lambda self, batch: sent.append(batch) or True})()
    res = child.sent_result(RunResult(store, {"summary": {}}, None, None), out)
    rows = [r for batch in sent for kind, rs in batch for r in rs if kind == "rows"]
    assert [r.event for r in rows] == list(range(300)) and rows[7] == child.Row.of(store[7])
    assert all(len(rs) <= 64 for batch in sent for _, rs in batch)
    back = pickle.loads(pickle.dumps(res)).events
    assert len(back) == 300 and [e.event for e in back] == list(range(300 - 64, 300)) and not back.whole
    short = EventStore(tmp_path)
    short.append(late(0, 0.1))
    assert child.sent_result(RunResult(short, {}, None, None), out).events is short


def normal_run(n: int) -> tuple[list[Event], ByteRecord]:
    """N normal-mode events 10 ms apart (so the drift is fitted: over 20 s), each due at its tick's start, written a
    little late, stamped by a profiler whose crystal runs 30 ppm fast after a varying line; every 97th lost
    unanswered, every 400th to 409th put on the line back to back with the one before (a stall handed over), and
    every 53rd not measurable; with the byte record of where each FIRE entered the line."""
    rng = np.random.default_rng(7)
    entries, events = [], []
    for k in range(n):
        tc = k + 1
        e = Event(k, k + 1, k % 8, "normal", 1, tc, tc - 1, 0.0)
        e.fire_at = BASE_S + tc * TICK_S
        e.written_at = e.fire_at + rng.exponential(20e-6)
        e.write_ended_at = e.written_at + 5e-6
        e.bytes = EventBytes(sent=Sent("profiler", 9 * k, e.written_at, 1, 9, e.write_ended_at))
        entered = e.written_at + 30e-6 if k % 400 >= 10 else (entries[-1].entered + 1e-6 if k else e.written_at)
        entries.append(Entry("profiler", 1, 9 * k, 9, entered, 0.0))
        if k % 97 == 5:
            e.finish("lost", "no_answer")
        else:
            e.stamp_s = (entered + rng.exponential(15e-6) - BASE_S) * (1 + 30e-6)
            e.latency_us = (e.stamp_s - tc * TICK_S) * 1e6
            e.finish("ok", None)
        e.measurable = k % 53 != 0
        events.append(e)
    by: dict = {"profiler": entries}
    return events, ByteRecord(by, {}, 20e-6)


def test_normal_modes_end_over_retired_events_judges_as_over_a_list(tmp_path: Path) -> None:
    """Normal mode's end acts across events: crowding against the FIREs written before, the budget's reference a
    window of 33 FIREs centred on each with the drift over the whole run. Over a store whose events are mostly
    retired (read back and changed a chunk at a time) it gives what it gives over the same events in a list."""
    listed, rec = normal_run(3000)
    stored_events, _ = normal_run(3000)
    store = EventStore(tmp_path)
    for e in stored_events:
        store.append(e)
    for _ in range(10):
        store.retire(256)
    assert store.retired == 2560
    busy = 0.0005                                            # a FIRE's time on the profiler, so some crowd
    crowded = crowded_fires(listed, rec, busy, 1)
    assert crowded and crowded_fires(store, rec, busy, 1) == crowded
    entered = lambda ev: rec.entry("profiler", 1, ev.bytes.sent.offset).entered   # noqa: E731
    assert apply_budget(store, TICK_S, 7.0, entered=entered) == apply_budget(listed, TICK_S, 7.0, entered=entered) > 2900
    for a, b in zip(listed, store, strict=True):
        assert (a.est_error_us, a.wakeup_us, a.write_us, a.line_us) == (b.est_error_us, b.wakeup_us, b.write_us,
                                                                          b.line_us), a.event
    assert budget_summary(store, Floor(), False) == budget_summary(listed, Floor(), False)
    drift = drift_of((e.write_ended_at, lower_bound(e.write_ended_at, e.stamp_s, 7e-6)) for e in listed
                     if e.stamp_s is not None and e.measurable)
    assert drift == pytest.approx(-30e-6, rel=0.2)            # the windows were carried by a fitted drift
