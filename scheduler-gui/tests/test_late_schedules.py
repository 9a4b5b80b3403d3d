"""The words for a refused SCHEDULE (mmsched.verdict.stats.late_schedules): each refusal by its cause, from the row and
the SCHEDULE's write: a creation a host stall delayed past the distance, a stall on the way, the PC's write, the
line; never a negative journey or slack in words."""

from __future__ import annotations

import re

from mmsched.model.event import Event
from mmsched.verdict.stats import late_schedules, refusal_cause
from mmsched.model.eventbytes import Sent


def refused(created_phase: float, ack_tc: int, write_s: float = 0.0002, stall_us: float | None = None,
            measurable: bool = True, distance: int = 1) -> Event:
    e = Event(event=0, tag=1, event_id=0, mode="mixed", distance=distance, scheduled_tc=10 + distance,
              created_tc=10, created_phase=created_phase, ack_tc=ack_tc, outcome="missed", reason="past_due",
              measurable=measurable, stall_us=stall_us)
    e.bytes.sent = Sent("executor", 0, 5.0, size=13, ended=5.0 + write_s)
    return e


def test_a_creation_a_host_stall_delayed_past_the_distance_is_named():
    # seen beside stress-ng: made at tick phase 1.28 and 1.73, one tick ahead, after stalls of 111-117 ms;
    # the journey and slack counted from such a creation are negative, and were printed as such
    made = [refused(1.28, 11, stall_us=111_000.0, measurable=False), refused(1.73, 11, stall_us=117_000.0,
                                                                              measurable=False)]
    assert [refusal_cause(e) for e in made] == ["creation", "creation"]
    late = late_schedules(made)
    assert late["n"] == 2 and late["causes"] == {"creation": 2, "stall": 0, "write": 0, "line": 0}
    text = str(late["text"])
    assert text == ("2 events refused past_due: 2 made too late: created at tick phase 1.28-1.73, at or past "
                    "their distance of 1 tick, so due before they were made: a stall of 111-117 ms (stall_us) "
                    "delayed their creation (the rig's, not the system's)"), text
    assert "journey_min_ticks_p50" not in late and not re.search(r"(?<![\d.])-\d", text)


def test_each_refusal_by_its_cause_and_no_negative_figure():
    events = [refused(1.28, 11, stall_us=111_000.0, measurable=False),    # made too late
              refused(0.9, 11),                                           # the line: 13.5 ms, little slack
              refused(0.5, 11, write_s=0.050),                            # the PC's write: 50 ms of 35.6 or more
              refused(0.6, 11, stall_us=40_000.0, measurable=False)]      # a stall held its SCHEDULE
    assert [refusal_cause(e) for e in events] == ["creation", "line", "write", "stall"]
    late = late_schedules(events)
    text = str(late["text"])
    assert late["causes"] == {"creation": 1, "stall": 1, "write": 1, "line": 1}
    assert text.startswith("4 events refused past_due: 1 made too late: created at tick phase 1.28, at or past its "
                           "distance of 1 tick, so due before it was made: a stall of 111 ms (stall_us) delayed "
                           "its creation"), text
    assert "1 held by a host stall of 40 ms on the way" in text
    assert "1 because the PC's write took 50 ms" in text and "1 because the line and the PC's writing" in text
    assert not re.search(r"(?<![\d.])-\d", text), text
    # over the three that had a slack: 0.1, 0.5, 0.4 ticks
    assert late["slack_at_creation_ticks_p50"] == 0.4 and late["journey_min_ticks_p50"] == 0.4


def test_a_creation_the_pc_made_late_without_a_stall():
    late = late_schedules([refused(2.05, 12, distance=2)])
    assert str(late["text"]).endswith("at or past its distance of 2 ticks, so due before it was made: the PC read "
                                      "its TIMECODE late"), late["text"]
