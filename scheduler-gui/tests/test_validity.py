"""Validity by cause (mmsched.verdict.validity), one layer: the record's look-ups and the rule per mode, on hand-made
records. The same rule on the real paced bench: test_event_validity.py."""

from __future__ import annotations

import pytest

from mmsched.model.grid import event_busy_s, fire_busy_s
from mmsched.verdict.crowding import AVR_RING, crowded_fires
from mmsched.model.framearrivals import FrameArrivals
from mmsched.model.byterecord import ByteRecord, Entry, Held, Stall, stall_time_share
from mmsched.model.eventbytes import Basis, EventBytes, Fed, Sent
from mmsched.verdict.validity import causes, deciding, judge
from mmsched.model.event import Event

T = 1_137_778 / 16e6          # the AVR profiler's tick


def record(entries=(), held=()) -> ByteRecord:
    by: dict = {}
    for e in entries:
        by.setdefault(e.node, []).append(e)
    hb: dict = {}
    for h in held:
        hb.setdefault(h.node, []).append(h)
    return ByteRecord(by, hb, 20e-6)


def test_a_written_frame_is_found_by_its_offset_in_the_read_that_held_it() -> None:
    rec = record([Entry("profiler", 1, 0, 10, 100.0, 0.0), Entry("profiler", 1, 10, 20, 100.5, 5e-6),
                  Entry("profiler", 2, 0, 10, 200.0, 0.0)])
    assert rec.entry("profiler", 1, 0).stamp == 100.0
    assert rec.entry("profiler", 1, 25).offset == 10          # inside the second read
    assert rec.entry("profiler", 1, 30) is None               # never read (not recorded)
    assert rec.entry("profiler", 2, 3).stamp == 200.0         # a re-plugged port counts again from 0
    assert rec.entry("executor", 1, 0) is None


def test_held_output_is_looked_up_by_its_moment() -> None:
    rec = record(held=[Held("profiler", 10.000, 10.010, 10, 0.004), Held("profiler", 11.0, 11.0, 1, 0.030)])
    assert rec.held_between("profiler", 9.99, 10.001) == pytest.approx(0.004)
    assert rec.held_between("profiler", 10.02, 10.9) == 0.0
    assert rec.held_between("profiler", 10.5, 11.5) == pytest.approx(0.030)
    # a byte due at 11.0 was held 30 ms: the PC's view at 11.01 was 20 ms stale, at 11.05 no longer
    assert rec.held_across("profiler", 11.01) == pytest.approx(0.020)
    assert rec.held_across("profiler", 11.05) == 0.0
    assert rec.held_across("profiler", 10.9) == 0.0


def normal_event(written: float, offset: int, basis: Basis) -> Event:
    e = Event(0, 1, 3, "normal", 1, 101, 100, 0.15)
    e.bytes = EventBytes(sent=Sent("profiler", offset, written), basis=basis, created_at=written - 0.06)
    return e


def test_normal_mode_judges_the_fire_by_its_entry_against_the_pcs_write() -> None:
    # the FIRE written at 50.0 was stamped by the bench 80 us later and put on the line 10 us after that
    rec = record([Entry("profiler", 1, 40, 10, 50.000080, 10e-6)])
    e = normal_event(50.0, 40, Basis(95, 49.0, 49.0104))
    found = causes("normal", e.bytes, rec)
    assert [c.byte for c in found][0] == "FIRE" and found[0].us == pytest.approx(90.0)
    assert deciding("normal", "ok", None, found, 1000.0) is None          # under the bound: part of the figure
    assert deciding("normal", "ok", None, found, 50.0) is found[0]        # past it: not measurable


def test_a_fire_counts_from_the_writes_return_and_a_slow_write_is_the_pcs() -> None:
    # the write began at 50.0 and returned 3 ms later (the PC's own call: its write_us); the bench had the bytes
    # 50 us after the return: only those 50 us are the rig's
    rec = record([Entry("profiler", 1, 40, 10, 50.00305, 0.0)])
    e = normal_event(50.0, 40, Basis(95, 49.0, 49.0104))
    e.bytes.sent = Sent("profiler", 40, 50.0, ended=50.003)
    found = causes("normal", e.bytes, rec)
    assert found[0].byte == "FIRE" and found[0].us == pytest.approx(50.0)
    assert "after the PC's write returned" in found[0].detail and "the rig's" in found[0].detail
    assert deciding("normal", "ok", None, found, 1000.0) is None


def test_a_moment_the_run_queued_after_it_passed_is_the_runs_lateness_not_the_pcs() -> None:
    # the native firing thread got the moment 2.5 ms after it: no thread could have met it (the run's loop was
    # held off the CPU): not measurable, named so; 0.2 ms late stays in the figure (under the bound)
    rec = record([Entry("profiler", 1, 40, 10, 50.0031, 0.0)])
    e = normal_event(50.003, 40, Basis(95, 49.0, 49.0104))
    e.bytes.fed = Fed(50.0025, 50.0)
    found = causes("normal", e.bytes, rec)
    assert found[0].byte == "late feed" and found[0].us == pytest.approx(2500.0)
    assert "its own loop was late (the rig's)" in found[0].detail
    assert deciding("normal", "late", "late", found, 1000.0) is found[0]
    e.bytes.fed = Fed(50.0002, 50.0)
    assert deciding("normal", "ok", None, causes("normal", e.bytes, rec), 1000.0) is None
    e.bytes.fed = Fed(49.95, 50.0)                    # queued 50 ms ahead, as it should be: no cause at all
    assert all(c.byte != "late feed" for c in causes("normal", e.bytes, rec))


def test_normal_mode_judges_the_timecode_its_estimate_rests_on() -> None:
    rec = record([Entry("profiler", 1, 40, 10, 50.00005, 0.0)], [Held("profiler", 49.001, 49.0104, 10, 0.0025)])
    e = normal_event(50.0, 40, Basis(95, 49.0, 49.0129))
    c = deciding("normal", "ok", None, causes("normal", e.bytes, rec), 1000.0)
    assert c is not None and c.byte == "TIMECODE" and c.us == pytest.approx(2500.0)
    # the disciplined estimate rests on a FIRE instead: the TIMECODE no longer counts
    e.bytes.anchor = Sent("profiler", 40, 50.0)
    assert deciding("normal", "ok", None, causes("normal", e.bytes, rec), 1000.0) is None


def mixed_event(outcome: str, reason: str | None) -> Event:
    e = Event(0, 1, 3, "mixed", 1, 101, 100, 0.15)
    e.bytes = EventBytes(sent=Sent("executor", 0, 20.0), basis=Basis(100, 19.99, 20.0), created_at=20.0)
    e.outcome, e.reason = outcome, reason
    return e


@pytest.mark.parametrize("outcome, reason, voided", [("missed", "past_due", True), ("late", None, True),
                                                     ("ok", None, False), ("missed", "duplicate", False)])
def test_mixed_mode_voids_only_an_event_whose_displaced_bytes_could_have_changed_its_outcome(
        outcome: str, reason: str | None, voided: bool) -> None:
    rec = record([Entry("executor", 1, 0, 12, 20.0200, 0.0)])            # the SCHEDULE entered 20 ms late
    e = mixed_event(outcome, reason)
    j = judge([e], rec, 4700.0, 1.25, T)
    assert e.measurable is not voided and e.stall_us == pytest.approx(20000.0)   # kept: its slack marked
    assert (0 in j.marked) is voided and (0 in j.kept) is not voided
    assert j.figures(1, [], (0.0, 100.0), 4700.0, 0)["events"][0]["byte"] == "SCHEDULE"


def test_a_late_creation_the_endpoint_caused_is_named_for_the_held_timecode() -> None:
    """The bench held a tick's TIMECODE 70 ms, so the event made from it was made late too (phase 1.9 of a
    1-ahead event): the byte the endpoint displaced is named, not the scheduler's reading (seen beside
    stress-ng: the mark said "late creation" for a TIMECODE the bench had held)."""
    rec = record([Entry("executor", 1, 0, 12, 20.0001, 0.0)], [Held("profiler", 19.93, 19.9405, 10, 0.070)])
    e = mixed_event("missed", "past_due")
    e.bytes.basis = Basis(100, 19.93, 20.0)
    e.created_phase = 1.9
    j = judge([e], rec, 4700.0, 1.25, T)
    assert j.marked[0].byte == "TIMECODE" and not e.measurable and e.stall_us == pytest.approx(70000.0)
    j = judge([e], None, None, 1.25, T)                  # without a record: the late creation alone
    assert j.marked[0].byte == "late creation"


def test_mixed_mode_names_a_creation_from_a_stale_view() -> None:
    # a profiler byte due 1 ms before the event was made reached the PC 9 ms after it: a TIMECODE held across
    rec = record([Entry("executor", 1, 0, 12, 20.0001, 0.0)], [Held("profiler", 19.999, 19.999, 1, 0.010)])
    e = mixed_event("missed", "past_due")
    e.bytes.basis = Basis(100, 19.93, 19.9405)       # made by a free-running timer from the frame before
    c = deciding("mixed", e.outcome, e.reason, causes("mixed", e.bytes, rec), 4700.0)
    assert c is not None and c.byte == "stale view" and c.us == pytest.approx(9000.0)


def test_verification_events_have_no_byte_of_the_pcs() -> None:
    rec = record([Entry("executor", 1, 0, 12, 30.0, 0.0)])
    e = mixed_event("missed", "past_due")
    e.mode = "verification"
    assert judge([e], rec, 1.0, 1.25, T).marked == {} and e.measurable


def test_fires_a_stall_handed_to_the_avr_at_once_are_the_rigs_loss_once_its_ring_is_full() -> None:
    """The AVR keeps AVR_RING results and puts each out in its own 750 us (grid.event_busy_s). The PC wrote 60
    FIREs 1 ms apart; the bench's input path held FIREs 10 to 59 for 100 ms and put them on the line back to back
    (180 us apart, a FIRE's line time at 500000 baud): the ring filled and 50 to 59 were lost. Those losses are the
    rig's; a FIRE lost though the ring's worth before it came at the PC's pace is not excused."""
    busy = event_busy_s(500000)
    entries, evs = [], []
    for i in range(60):
        written = 10.0 + 0.001 * i
        entered = written + 0.0001 if i < 10 else 10.110 + 0.00018 * (i - 10)
        entries.append(Entry("profiler", 1, 9 * i, 9, entered, 0.0))
        e = normal_event(written, 9 * i, Basis(95, 9.0, 9.01))
        e.event = i
        e.finish(*(("lost", "no_answer") if i >= 50 or i == 9 else ("late", "late")))
        evs.append(e)
    crowded = crowded_fires(evs, record(entries), busy, AVR_RING)
    assert sorted(crowded) == list(range(50, 60))        # 9: the 32 before it came 1 ms apart, a fault of its own
    assert f"{AVR_RING} FIREs before it" in crowded[50].detail and "ring of 32 full" in crowded[50].detail
    assert crowded[50].us == pytest.approx((busy - 0.00018) * AVR_RING * 1e6, abs=0.2)   # event 18 to 50: 32 x 180 us


def test_without_a_record_only_late_creations_are_judged() -> None:
    late, fine = mixed_event("missed", "past_due"), mixed_event("ok", None)
    late.created_phase, late.event, fine.event = 2.1, 0, 1
    j = judge([late, fine], None, None, 1.25, T)
    assert set(j.marked) == {0} and j.marked[0].byte == "late creation" and fine.measurable
    assert late.stall_us == pytest.approx(2.1 * T * 1e6, rel=1e-6)


def test_stall_time_share_counts_each_stall_with_its_lag_inside_the_window() -> None:
    stalls = [Stall(10.0, 10.002, 1500.0), Stall(19.999, 20.001, 1000.0)]
    # 2 ms + 1.5 ms, and the second cut at the window's end (1 ms of its 3 ms)
    assert stall_time_share(stalls, 0.0, 20.0) == pytest.approx((0.0035 + 0.001) / 20.0)
    assert stall_time_share([], 0.0, 20.0) == 0.0 and stall_time_share(stalls, 5.0, 5.0) == 0.0


def test_a_fire_the_line_crowded_into_the_one_before_is_the_rigs_loss_not_measurable() -> None:
    """The 8051 takes one FIRE at a time for 29.2 ms (grid.fire_busy_s at 9600 baud). Event 1's FIRE entered
    its line 48 ms after the PC wrote it; event 2's, written 73 ms after event 1's, entered 25 ms after it and
    was lost: the endpoint crowded it. Event 4, lost though it entered 60 ms after event 3, was not crowded:
    its loss stays a fault of the rig's line."""
    busy = fire_busy_s(9600)
    rec = record([Entry("profiler", 1, 0, 9, 10.0 + 0.048, 0.0), Entry("profiler", 1, 9, 9, 10.073 + 0.0001, 0.0),
                  Entry("profiler", 1, 18, 9, 11.0, 0.0), Entry("profiler", 1, 27, 9, 11.060, 0.0)])
    evs = []
    for i, (at, off) in enumerate([(10.0, 0), (10.073, 9), (11.0, 18), (11.060, 27)], start=1):
        e = normal_event(at, off, Basis(95, 9.0, 9.01))
        e.event = i
        evs.append(e)
    for e in evs[0], evs[2]:
        e.finish("late", "late")
    for e in evs[1], evs[3]:
        e.finish("lost", "no_answer")
    crowded = crowded_fires(evs, rec, busy)
    assert list(crowded) == [2]
    assert "entered the profiler's line 25.1 ms after event 1's" in crowded[2].detail
    j = judge(evs, rec, 1000.0, 1e9, T, crowded)
    assert set(j.marked) == {1, 2}                       # event 1: its own FIRE displaced 48 ms; event 2: crowded
    assert not evs[1].measurable and evs[3].measurable   # event 4 is lost by a fault its own reason names


def arrivals_around(tick: int, at: float, late_s: float = 0.0, n: int = 8) -> list[tuple[int, float]]:
    """TIMECODE arrivals of ticks tick-n..tick+n, every one `T` after the one before, tick `tick` at `at` plus
    `late_s` (a small read jitter on the others, as a PC has)."""
    return [(tick + k, at + k * T + (late_s if k == 0 else 20e-6 * (k % 3))) for k in range(-n, n + 1)]


def test_a_hold_of_a_timecodes_early_bytes_that_left_its_arrival_on_time_voids_nothing() -> None:
    # the bench stalled 1.09 ms inside the frame of tick 95 and caught up before its last byte: a run of bytes due
    # from 48.9995 to 49.0003 held up to 1.09 ms, but the frame completed at 49.0104 like its neighbours
    rec = record([Entry("profiler", 1, 40, 10, 50.00005, 0.0)], [Held("profiler", 48.9995, 49.0003, 3, 0.00109)])
    e = normal_event(50.0, 40, Basis(95, 49.0, 49.0104))
    assert deciding("normal", "ok", None, causes("normal", e.bytes, rec), 1000.0) is not None   # the record alone
    frames = FrameArrivals(arrivals_around(95, 49.0104), T)
    found = causes("normal", e.bytes, rec, frames)
    assert deciding("normal", "ok", None, found, 1000.0) is None
    assert all(c.us < 50 for c in found if c.byte == "TIMECODE")


def test_a_timecode_that_reached_the_pc_late_through_a_hold_still_voids_the_events_placed_from_it() -> None:
    rec = record([Entry("profiler", 1, 40, 10, 50.00005, 0.0)], [Held("profiler", 49.001, 49.0104, 10, 0.0025)])
    e = normal_event(50.0, 40, Basis(95, 49.0, 49.0129))
    frames = FrameArrivals(arrivals_around(95, 49.0104, late_s=0.0025), T)
    c = deciding("normal", "ok", None, causes("normal", e.bytes, rec, frames), 1000.0)
    assert c is not None and c.byte == "TIMECODE" and c.us == pytest.approx(2500.0, abs=25.0)


def test_a_frame_late_by_the_pcs_own_read_is_not_the_benchs() -> None:
    # the PC read tick 95's frame 3 ms late, the bench held nothing near it: no cause (the PC's own cost)
    e = normal_event(50.0, 40, Basis(95, 49.0, 49.0134))
    frames = FrameArrivals(arrivals_around(95, 49.0104, late_s=0.003), T)
    assert causes("normal", e.bytes, record([Entry("profiler", 1, 40, 10, 50.00005, 0.0)]), frames)[0].byte == "FIRE"
    assert frames.excess(95, 49.0134) == pytest.approx(0.003, abs=25e-6)


def test_frame_arrivals_judge_a_frame_only_against_neighbours_of_its_own_tick_grid() -> None:
    # the profiler reset after tick 100: ticks count again from 0 on a grid 30 ms later; neither side's envelope
    # reaches into the other
    before = [(90 + k, 10.0 + k * T) for k in range(11)]
    after = [(k, before[-1][1] + 0.030 + (k + 1) * T) for k in range(11)]
    frames = FrameArrivals(before + after, T)
    assert frames.excess(100, before[-1][1]) == pytest.approx(0.0, abs=1e-9)
    assert frames.excess(0, after[0][1]) == pytest.approx(0.0, abs=1e-9)
    assert frames.excess(42, 11.0) is None                   # not a frame of the run


def test_an_event_older_than_the_record_is_judged_by_the_stalls_its_bytes_met() -> None:
    """The bench keeps its last 65,536 reads: an hour's run's earlier events are no longer in its record. Their
    bytes are judged by the stall intervals instead (kept far longer): a FIRE written inside a stall past the
    bound is not measurable, one written in a stall under the bound or between stalls is; an event from before
    the first stall the bench kept is counted unjudged, never quietly taken as measured."""
    rec = record([Entry("profiler", 1, 900, 9, 99.0, 0.0)])            # the record holds a later read only
    stalls = [Stall(10.0, 10.004, 3500.0), Stall(12.0, 12.002, 400.0)]
    inside, mild, between, early = (normal_event(at, 9 * k, Basis(95, at - 0.01, at - 0.009))
                                    for k, at in enumerate((10.001, 12.001, 11.0, 5.0)))
    for k, e in enumerate((inside, mild, between, early)):
        e.event = k
        e.finish("late", "late")
    j = judge([inside, mild, between], rec, 1000.0, 1e9, T, stalls=stalls)
    assert set(j.marked) == {0} and j.marked[0].byte == "stall" and j.marked[0].us == 3500.0
    assert "no longer holds them" in j.marked[0].detail and not inside.measurable and inside.stall_us == 3500.0
    assert mild.measurable and between.measurable and (j.by_stalls, j.unjudged) == (3, 0)
    j = judge([early], rec, 1000.0, 1e9, T, stalls=stalls, stalls_since=10.0)
    assert (j.by_stalls, j.unjudged) == (0, 1) and early.measurable
    figures = j.figures(1, stalls, (0.0, 20.0), 1000.0, 0)
    assert figures["unjudged"] == 1 and figures["judged_by_stalls"] == 0


def test_the_runs_end_says_how_its_older_events_were_judged_in_80_columns() -> None:
    from mmsched.run.finish import older_than_record

    assert older_than_record({"judged_by_stalls": 0, "unjudged": 0}) is None
    said = older_than_record({"judged_by_stalls": 3_456_789, "unjudged": 12})
    assert said.splitlines() == ["3,456,789 events judged by the bench's stalls (older than its 65,536 reads)",
                                 "12 events older than its stalls too: unjudged"]
    assert max(map(len, said.splitlines())) <= 80
