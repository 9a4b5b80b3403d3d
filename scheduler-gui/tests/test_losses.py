"""The profiler's loss reports (mmsched.verdict.losses): flags, counter readings, and holding silent events for them."""

from __future__ import annotations

from dataclasses import fields

import mmproto as mp
from mmsched.model.event import Event
from mmsched.verdict.losses import QUERY_S, LossReports, losses_in


def counters(node_a: int = 0, node_b: int = 0) -> mp.Counters:
    return mp.Counters(**{f.name: 0 for f in fields(mp.Counters)} | {"node_a": node_a, "node_b": node_b})


def event(n: int) -> Event:
    return Event(n, n, n % 8, "mixed", 4, 10, 6, 0.5, fired_tc=10)


def test_losses_are_overflows_plus_spurious_edges_and_wrap() -> None:
    assert losses_in(counters(3, 4)) == 7
    assert losses_in({"node_a": 0xFFFF, "node_b": 2}) == 1


def test_a_flag_is_a_report() -> None:
    r = LossReports()
    r.flagged()
    assert r.reports == 1


def test_a_counter_rise_no_flag_explains_is_a_report_and_one_flags_explain_is_not() -> None:
    r = LossReports()
    r.baseline({"node_a": 0, "node_b": 5})
    r.flagged()
    r.reading(counters(0, 6))            # one loss, one flag: already reported
    assert r.reports == 1
    r.reading(counters(0, 8))            # two more, no flag: the tail of a burst
    assert r.reports == 2
    r.reading(counters(0, 8))
    assert r.reports == 2


def test_no_baseline_no_report_from_counters() -> None:
    r = LossReports()
    r.reading(counters(0, 9))
    assert r.reports == 0 and r.counted == 9


def test_silent_events_are_held_until_counters_asked_after_they_were_due_come() -> None:
    r, asked = LossReports(), []
    r.baseline({"node_a": 0, "node_b": 0})
    ask = lambda: asked.append(1) or True          # noqa: E731
    assert r.hold([event(1), event(2)], 10.0, ask) == {1, 2} and len(asked) == 1
    assert r.hold([event(1), event(2)], 10.1, ask) == {1, 2} and len(asked) == 1   # one request at a time
    r.reading(counters(0, 2))
    assert r.reports == 1
    assert r.hold([event(1), event(2)], 10.2, ask) == set()
    # a later silent event needs an answer asked after it was due
    assert r.hold([event(3)], 10.3, ask) == {3} and len(asked) == 2


def test_an_unanswered_request_releases_the_held_events() -> None:
    r = LossReports()
    assert r.hold([event(1)], 0.0, lambda: True) == {1}
    assert r.hold([event(1)], QUERY_S + 0.01, lambda: True) == set()
    assert r.unanswered == 1 and r.reports == 0


def test_nothing_is_held_when_the_request_cannot_be_sent() -> None:
    assert LossReports().hold([event(1)], 0.0, lambda: False) == set()
