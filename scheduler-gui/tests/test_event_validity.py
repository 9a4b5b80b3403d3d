"""Validity by cause on the paced bench (mmsched.verdict.validity, docs/bench.md "Validity by cause"): a host stall
injected on purpose (the bench's `sleep` command) moves no byte the PC wrote, so a FIRE the bench slept
through is stamped where the PC put it; and only an event whose own bytes a stall displaced past the bound in
a way that could change its outcome is marked, with the byte and the amount."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mmhil import BenchEndpoint
from mmhil.bench import ensure_built
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Verdict
from mmsched.run.runner import Runner

# paced runs whose timing a neighbour's bench would starve: after the parallel phase, by themselves
pytestmark = pytest.mark.alone

F_CPU = 16_000_000
TICK_COUNTS = 1_137_778         # the AVR profiler's tick in its 16 MHz timer's counts (its HELLO)


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


def keep_verdict(endpoint: BenchEndpoint) -> list[Verdict]:
    """The endpoint's verdict (its byte record) kept for the test once the run has it."""
    kept: list[Verdict] = []
    real = endpoint.verdict

    def verdict() -> Verdict:
        kept.append(real())
        return kept[-1]

    endpoint.verdict = verdict            # type: ignore[method-assign]
    return kept


@pytest.mark.paced
def test_a_fire_the_bench_slept_through_enters_at_the_moment_the_pc_wrote_it(tmp_path: Path) -> None:
    """The bench sleeps 20 ms from 5 ms before a FIRE is due: the stamping thread takes the FIRE as the PC
    writes it and the simulation, catching up, puts it on the profiler's line at that moment. The event is
    measurable and its latency is the PC's write moment plus the bench's measured hop to the line minus the
    tick's start plus the profiler's own part, within 2 us. The tick's start is the bench's own (the floor
    calibration's FIREs are injected on a timecode edge whose cycle it reports); the profiler's own part is
    what the same sum leaves for the run's other events (constant to a few tens of ns: its stamping path).
    Before the stamping thread, the FIRE entered where the simulation had frozen, about 15 ms too early."""
    cfg = RunConfig(mode="normal", distance=1, count=45, out=tmp_path / "slept")
    endpoint = BenchEndpoint()
    runner = Runner(cfg, endpoint)
    verdicts = keep_verdict(endpoint)
    sleeps: list[tuple[int, float]] = []      # (event, virtual second the sleep began)
    edges: list[dict[str, Any]] = []

    def sleep_before_fires() -> None:
        while runner.state is None or not runner.state.generating:
            time.sleep(0.01)
        assert endpoint.bench is not None
        edges.extend(i for i in endpoint.bench.status()["injections"] if i.get("edge_cycle") is not None)
        done: set[int] = set()
        while len(sleeps) < 6 and not runner.over:
            now = time.monotonic()
            due = [e for e in list(runner.events) if e.fire_at is not None and e.written_at is None
                   and e.event not in done and 0.012 < e.fire_at - now < 0.08]
            if not due:
                time.sleep(0.002)
                continue
            e = due[0]
            done.add(e.event)
            time.sleep(max(0.0, e.fire_at - 0.005 - time.monotonic()))
            sleeps.append((e.event, float(endpoint.bench.sleep(20)["virtual_s"])))
            time.sleep(0.3)

    t = threading.Thread(target=sleep_before_fires, daemon=True)
    t.start()
    result = runner.run()
    t.join(5)
    assert edges and sleeps, (edges, sleeps)
    record, ws = verdicts[0].record, result.sidecar["bench"]["wall_start_s"]
    edge = edges[-1]

    def own_part_us(e: Any) -> float:
        """The latency minus (the FIRE's entry on the line - the tick's true start): the profiler's own part."""
        entry = record.entry("profiler", e.bytes.sent.gen, e.bytes.sent.offset)
        t_edge = e.scheduled_tc - ((e.scheduled_tc - edge["port"]) & 0xFF)    # port: the timecode's low byte
        tick_v = edge["edge_cycle"] / F_CPU + (e.scheduled_tc - t_edge) * TICK_COUNTS / F_CPU
        return e.latency_us - (entry.entered - ws - tick_v) * 1e6

    slept_through = []
    for event, v_sleep in sleeps:
        e = result.events[event]
        entry = record.entry("profiler", e.bytes.sent.gen, e.bytes.sent.offset)
        assert entry is not None and e.written_at is not None
        if ws + v_sleep <= entry.stamp <= ws + v_sleep + 0.020:
            slept_through.append(e)
        # (else the PC wrote it outside the sleep, on a busy host: not this test's case)
    assert slept_through, f"no FIRE was written while the bench slept ({sleeps})"
    others = sorted(own_part_us(e) for e in result.events
                    if e not in slept_through and e.outcome in ("ok", "late") and e.latency_us is not None)
    own = others[len(others) // 2]
    assert 0 < own <= runner.state.floor.us + 1.0, others        # the profiler's part, at most its floor
    bound_us = verdicts[0].bound_us
    clean = []
    for e in slept_through:
        hop_us = (record.entry("profiler", e.bytes.sent.gen, e.bytes.sent.offset).entered - e.written_at) * 1e6
        if hop_us > bound_us:
            # the stamping thread itself woke late (a busy host: 2.8 ms seen in CI beside other tests): that is
            # a displacement of the FIRE the rig must name, with the record's own figure, not a latency
            assert not e.measurable and e.stall_us >= round(hop_us, 1) - 0.1, (e.stall_us, hop_us)
            continue
        clean.append(e)
        # its FIRE entered where the PC wrote it: never the cause of its mark. (The sleep may also hold the
        # TIMECODE frame the PC aimed a FIRE by, which the run then names: a fresh check saw one held 3.75 ms.)
        why = {x["event"]: x["byte"] for x in result.sidecar["measurability"]["events"] if not x["measurable"]}
        assert e.outcome in ("ok", "late") and why.get(e.event) in (None, "TIMECODE", "anchor FIRE"), \
            (e.outcome, e.stall_us, hop_us, why.get(e.event))
        # the profiler's own part, as for the FIREs no sleep met: its quiet-edge figure, or up to the floor when the
        # FIRE met the TIMECODE frame's TX interrupt (13.4 us against 6.9, docs/normal-mode.md; 14.0 seen here
        # beside a CPU hog), never the sleep's 20 ms
        assert own - 2.0 <= own_part_us(e) <= runner.state.floor.us + 2.0, (e.event, e.latency_us, hop_us, own,
                                                                            runner.state.floor.us)
    # the sleep's 20 ms never void a FIRE: at least one slept-through FIRE met a stamping thread on time
    assert clean, f"every slept-through FIRE met a late stamping thread ({[e.stall_us for e in slept_through]})"
    # every event the run marked names the byte that voided it; stalls never void more than they touch
    m = result.sidecar["measurability"]
    marked = {x["event"] for x in m["events"] if not x["measurable"]}
    assert marked == {e.event for e in result.events if not e.measurable}
    assert result.valid or [r["code"] for r in result.sidecar["invalid_reasons"]] == ["bench_lag"]


def held_timecode_run(out: Path) -> tuple[Any, pd.DataFrame, list[int]]:
    """A mixed 1-ahead tick-aligned run of 40 events with the bench asleep 70 ms from just before two ticks
    begin: its result, its CSV and the ticks whose start the bench slept through."""
    cfg = RunConfig(mode="mixed", distance=1, count=40, generation="aligned", out=out)
    endpoint = BenchEndpoint()
    runner = Runner(cfg, endpoint)
    held: list[int] = []

    def sleep_at_ticks() -> None:
        while runner.state is None or len(runner.events) < 6:
            time.sleep(0.01)
        st = runner.state
        assert endpoint.bench is not None
        for _ in range(2):
            tick = st.tracker.current + 1
            time.sleep(max(0.0, st.tracker.tick_start(tick) - 0.001 - time.monotonic()))
            endpoint.bench.sleep(70)
            held.append(tick)
            time.sleep(1.0)

    t = threading.Thread(target=sleep_at_ticks, daemon=True)
    t.start()
    result = runner.run()
    t.join(5)
    return result, pd.read_csv(out.with_suffix(".csv")), held


@pytest.mark.paced
def test_a_timecode_held_past_the_deadline_voids_the_event_made_from_it_alone(tmp_path: Path) -> None:
    """Mixed mode, one tick ahead, tick-aligned: the bench sleeps 70 ms from just before a tick begins, so that
    tick's TIMECODE reaches the PC ~70 ms late and the SCHEDULE made from it can only arrive after its tick
    began (past due). That event keeps its outcome and is not measurable, naming the TIMECODE and the amount;
    the events around it, whose bytes the sleep did not displace past the bound, stay measurable and on time."""
    for attempt in range(3):               # a loaded host may start the sleep after the TIMECODE went out
        result, df, held = held_timecode_run(tmp_path / f"held{attempt}")
        causes = {x["event"]: x for x in result.sidecar["measurability"]["events"]}
        # the events made from a held tick that name the held frame (on a loaded host the scheduler may also read
        # a tick late by itself: those name their late creation, as the rule for its own stalls says)
        named = {i for i, x in causes.items() if x["byte"] in ("TIMECODE", "stale view")}
        hit = df[df["created_tc"].isin(held) & (df["stall_us"] > 50_000) & df["event"].isin(named)]
        if len(hit):
            break
    else:
        pytest.skip(f"in 3 runs no event made from a held tick ({held}) named the held frame: the host moved the sleep")
    late = df[df["created_tc"].isin(held) & (df["stall_us"] > 50_000) & ~df["event"].isin(named)]
    assert all(causes[i]["byte"] == "late creation" for i in late["event"]), late
    for row in hit.itertuples():
        x = causes[row.event]
        assert x["byte"] in ("TIMECODE", "stale view") and x["us"] == row.stall_us
        # past due, as a SCHEDULE made that late can rarely arrive in time: kept as it ended, not a result; or,
        # when the sleep began late on a loaded host (beside stress-ng), still on time: measurable, its slack
        # marked (validity.deciding: an event that ended ok is measurable whatever its bytes met)
        if row.outcome == "ok":
            assert row.measurable, row
        else:
            assert (row.outcome, row.reason, row.measurable) == ("missed", "past_due", False), row
    rest = df[~df["event"].isin(hit["event"])]
    # every other event stays measurable, or names the displaced byte (another stall of this host); one the PC
    # itself sent too late on a loaded host is missed past_due, measurable: a result about the PC, not the rig
    assert (rest["measurable"] | rest["event"].isin(causes)).all(), rest[~rest["measurable"]]
    assert rest["outcome"].isin(["ok", "missed"]).all() and (rest[rest["outcome"] == "missed"]["reason"] == "past_due").all(), \
        rest[rest["outcome"] != "ok"]
    assert result.valid or [r["code"] for r in result.sidecar["invalid_reasons"]] == ["bench_lag"]


@pytest.mark.paced
def test_no_event_is_made_from_a_timecode_older_than_one_waiting_in_the_inbox(tmp_path: Path) -> None:
    # A GUI run started with TIMECODE frames queued (the process busy starting) made its first
    # events from timecodes about 5 ticks stale (created_phase 4.83, 3.84, ...): missed past_due, a fault of
    # the scheduler. Here the scheduler's loop is held for 5 ticks right after generation starts, so frames
    # queue; every event must be made from the newest timecode, and be on time.
    cfg = RunConfig(mode="mixed", distance=2, count=12, out=tmp_path / "backlog")
    runner = Runner(cfg, BenchEndpoint())
    real_generate = runner.generate
    held: list[int] = []

    def generate(now: float, new_tc: int | None) -> None:
        if not held:
            held.append(1)
            time.sleep(0.36)               # about 5 ticks of 71.1 ms: frames pile up in the inbox
        real_generate(runner.now(), new_tc)

    runner.generate = generate             # type: ignore[method-assign]
    result = runner.run()
    df = pd.read_csv(tmp_path / "backlog.csv")
    # the events made from the backlog, right after the hold (later ones measure this host's own delays: on a
    # loaded one the loop can be a tick late again, which is the PC's lateness, not a stale frame chosen)
    # An event made a tick or more late is the rig's to name, never a miss of the executor's: beside stress-ng
    # the loop was once held again after the hold (event 0 made at phase 2.05, before a newer frame came).
    first = df.head(4)
    prompt = first[first["created_phase"] < 1.2]
    assert len(prompt) >= 2, first[["event", "created_tc", "created_phase", "outcome", "reason"]]
    assert (prompt["outcome"] == "ok").all(), prompt[prompt["outcome"] != "ok"][["event", "created_phase", "reason"]]
    late = first[first["created_phase"] >= 1.2]
    assert (~late["measurable"] & late["stall_us"].notna()).all(), late[["event", "created_phase", "measurable"]]
    assert result.sidecar["counters"]["scheduler"].get("creations_deferred", 0) >= 1
