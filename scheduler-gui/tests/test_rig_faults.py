"""Faults of the rig are never faults of the system under test: the ledger, the taint rule, the
counters' judgement and the timecode checks, one layer at a time. End to end on the bench:
hil/tests/test_campaign.py."""

from __future__ import annotations

import pytest

from mmsched.model.event import Event
from mmsched.verdict.faults import FaultLedger, counter_faults, describe_counters
from mmsched.verdict.outcome import silent_outcome
from mmsched.model.timecode import TimecodeTracker


def ev(n: int) -> Event:
    return Event(n, n + 1, 0, "mixed", 2, 10 + n, 8 + n, 0.1)


def test_a_touched_event_that_misses_is_lost_with_the_fault_and_one_that_is_ok_stays_ok() -> None:
    missed, refused, on_time = ev(0), ev(1), ev(2)
    for e in (missed, refused, on_time):
        e.fault = "node_reset"
    missed.finish("missed", "timeout")
    refused.finish("missed", "past_due")
    on_time.finish("ok", None)
    assert (missed.outcome, missed.reason) == ("lost", "node_reset")
    assert (refused.outcome, refused.reason) == ("lost", "node_reset")
    assert (on_time.outcome, on_time.reason) == ("ok", None)


def test_an_open_fault_touches_events_in_flight_and_new_ones_until_closed() -> None:
    led = FaultLedger()
    done, flying = ev(0), ev(1)
    done.finish("ok", None)
    led.raise_("node_reset", "executor", 1.0, "HELLO mid-run", [done, flying])
    assert done.fault is None and flying.fault == "node_reset"
    during = ev(2)
    led.created(during)
    assert during.fault == "node_reset"
    led.close(1.5, "node_reset", "executor")
    after = ev(3)
    led.created(after)
    assert after.fault is None
    (reason,) = led.reasons()
    assert reason.code == "node_reset" and "2 events touched" in reason.text and "1.000 s" in reason.text
    assert led.section()[0]["closed_s"] == 1.5 and led.section()[0]["events"] == 2


def test_a_moment_fault_touches_only_what_it_is_given_and_does_not_stay_open() -> None:
    led = FaultLedger()
    e = ev(0)
    led.raise_("no_answer", "executor", 2.0, "SCHEDULE never answered", [e], window=False)
    later = ev(1)
    led.created(later)
    assert e.fault == "no_answer" and later.fault is None and not led.is_open("no_answer")


def test_a_reset_seen_late_takes_over_the_timecode_faults_it_caused() -> None:
    led = FaultLedger()
    e = ev(0)
    led.raise_("timecode_fault", "executor", 1.28, "ERROR stamped at tick 256", [e])
    e.finish("missed", "past_due")
    assert (e.outcome, e.reason) == ("lost", "timecode_fault")
    led.raise_("timecode_fault", "executor", 0.1, "long before", [])
    led.explain("timecode_fault", 1.51 - 1.0, "node_reset", "profiler")
    assert (e.outcome, e.reason) == ("lost", "node_reset")
    assert [f.kind for f in led.faults] == ["node_reset", "timecode_fault"]   # the older one stays what it was
    assert led.faults[0].node == "profiler"


def test_counter_rises_are_judged_against_the_baseline_and_wrap() -> None:
    before = {"rx_bad_crc": 65535, "rx_bad_cobs": 3, "node_a": 7, "node_d": 0}
    after = {"rx_bad_crc": 1, "rx_bad_cobs": 3, "node_a": 7, "node_d": 2}
    got = counter_faults("executor", before, after, reset=False)
    assert got == {"node_errors": {"rx_bad_crc": 2}, "timecode_fault": {"node_d": 2}}
    assert describe_counters("executor", got["node_errors"]) == "executor: bad CRC +2"
    # the executor's node_a is a refusal of the system under test, never a fault of the rig
    assert counter_faults("executor", {"node_a": 0}, {"node_a": 5}, reset=False) == {}
    # a node that reset counts from 0 again; glitches after any reset are the reset's
    assert counter_faults("executor", before, {"node_d": 3}, reset=True, any_reset=True) == {"node_reset": {"node_d": 3}}


def test_lost_timecode_frames_do_not_disagree_a_count_that_went_back_does() -> None:
    t = TimecodeTracker(tick_s=0.1)
    t.update(300, 1.0)
    assert not t.disagrees(303)              # three frames lost on the line: our extension agrees
    assert t.disagrees(3)                    # the profiler reset: its count went back
    assert t.disagrees(300 + 256 + 1)        # a count 256 ahead of its own low byte's extension
    t.restart()
    assert t.current is None and t.update(3, 2.0) == 3 and t.disagreements == 0


@pytest.mark.parametrize("lost,answered,reports,want", [
    (0, True, 0, ("missed", "timeout")), (0, False, 0, ("lost", "no_answer")), (2, False, 0, ("lost", "seq_gap")),
    (1, True, 0, ("lost", "seq_gap")), (0, True, 1, ("lost", "result_lost")), (1, True, 1, ("lost", "seq_gap"))])
def test_silence_is_a_miss_only_when_the_request_was_answered_and_nothing_was_lost(
        lost: int, answered: bool, reports: int, want: tuple[str, str]) -> None:
    assert silent_outcome(lost, answered, reports) == want


def test_a_frame_the_bench_held_back_names_the_injected_delay_not_the_system_under_test() -> None:
    from mmsched.model.byterecord import HeldByFault
    from mmsched.verdict.injected import attribute
    from mmsched.model.eventbytes import Sent

    held_miss, clear_miss, held_but_ok = ev(0), ev(1), ev(2)
    held_miss.bytes.sent = Sent("executor", 100, 1.0, 1, 14)      # bytes 100..113: the run holds 110..119
    clear_miss.bytes.sent = Sent("executor", 200, 1.1, 1, 14)
    held_but_ok.bytes.sent = Sent("executor", 114, 1.2, 1, 14)
    held_miss.finish("missed", "past_due")
    clear_miss.finish("missed", "past_due")
    held_but_ok.finish("ok", None)
    led = FaultLedger()
    held_miss.created_at = 12.5
    named = attribute([held_miss, clear_miss, held_but_ok], [HeldByFault("executor", 1, 110, 10, 40_000.0)], led,
                      lambda t: t - 10.0)
    assert named == 1
    assert (held_miss.outcome, held_miss.reason) == ("lost", "injected_delay")
    assert (clear_miss.outcome, clear_miss.reason) == ("missed", "past_due")      # not the fault's: stays
    assert (held_but_ok.outcome, held_but_ok.reason) == ("ok", None)
    (reason,) = led.reasons()
    assert reason.code == "injected_delay" and "40.0 ms" in reason.text and "1 events touched" in reason.text
    assert led.section()[0]["at_s"] == 2.5                  # seen at the held event's creation


def test_a_hold_on_another_opening_of_the_port_names_nothing() -> None:
    from mmsched.model.byterecord import HeldByFault
    from mmsched.verdict.injected import attribute
    from mmsched.model.eventbytes import Sent

    e = ev(0)
    e.bytes.sent = Sent("executor", 100, 1.0, 2, 14)
    e.finish("missed", "past_due")
    assert attribute([e], [HeldByFault("executor", 1, 100, 20, 5000.0)], FaultLedger(), lambda t: t) == 0
    assert e.reason == "past_due"


def test_a_fault_excused_for_the_events_it_touched_stays_recorded_but_voids_nothing() -> None:
    """validity.crowded_fires: an unanswered FIRE the profiler lost because it still held the one before is
    judged not measurable, so its no_answer fault makes no invalid reason; another no_answer still does."""
    led = FaultLedger()
    crowded, other = ev(1), ev(2)
    led.raise_("no_answer", "profiler", 1.0, "FIRE of event 1 (tag 2) never answered", (crowded,), window=False)
    assert [r.code for r in led.reasons()] == ["no_answer"]
    assert led.excuse({crowded.event}, "no_answer", "crowded") == 1
    assert led.reasons() == [] and led.section()[0]["excused"] == "crowded"
    led.raise_("no_answer", "profiler", 2.0, "FIRE of event 2 (tag 3) never answered", (other,), window=False)
    assert led.excuse({crowded.event}, "no_answer", "crowded") == 0
    assert [r.code for r in led.reasons()] == ["no_answer"] and "event 2" in led.reasons()[0].text


def test_a_counter_rise_already_judged_is_not_a_fault_again_but_the_rest_of_it_is() -> None:
    before, after = {"node_a": 3, "node_b": 0}, {"node_a": 5, "node_b": 0}
    assert counter_faults("profiler", before, after, reset=False, explained={"node_a": 2}) == {}
    assert counter_faults("profiler", before, after, reset=False, explained={"node_a": 1}) == \
        {"node_errors": {"node_a": 1}}
