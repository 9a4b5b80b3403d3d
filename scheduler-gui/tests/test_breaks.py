"""The threshold break's rule (mmsched.verdict.breaks): which event ends a run's generation under --break-us."""

from __future__ import annotations

from mmsched.verdict.breaks import break_section, breaks_at
from mmsched.model.event import Event


def event(outcome: str, latency_us: float | None) -> Event:
    e = Event(3, 4, 1, "mixed", 2, 20, 18, 0.5)
    e.outcome, e.latency_us = outcome, latency_us
    return e


def test_past_the_threshold_late_or_missed_breaks_early_and_lost_do_not() -> None:
    assert breaks_at(event("ok", 40.1), 40) and not breaks_at(event("ok", 40.0), 40)
    assert breaks_at(event("late", 1200.0), 5000) and breaks_at(event("missed", None), 40)
    assert not breaks_at(event("early", -3.0), 40) and not breaks_at(event("lost", None), 40)
    assert not breaks_at(event("late", 1200.0), None)                 # no --break-us: never
    assert break_section(None, 40) == {"us": 40, "event": None}
    assert break_section(event("ok", 41.5), 40)["event"] == 3
