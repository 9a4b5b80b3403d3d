"""Mixed mode's slack distribution in the sidecar (mmsched.verdict.stats.slack_distribution): its created-phase histogram."""

from __future__ import annotations

from mmsched.model.event import Event
from mmsched.verdict.stats import slack_distribution


def test_phase_histogram_counts_every_event_including_phase_past_one() -> None:
    # a free-running generator can create an event after the next tick began but before its TIMECODE
    # arrived: phase >= 1 must land in the last bin, not fall off the histogram
    phases = [0.05, 0.55, 0.95, 1.0, 1.19]
    evs = []
    for i, ph in enumerate(phases):
        e = Event(event=i, tag=i, event_id=i % 8, mode="mixed", distance=1, scheduled_tc=10 + i, created_tc=9 + i,
                  created_phase=ph)
        e.finish("missed", "past_due")
        evs.append(e)
    hist = slack_distribution(evs)["missed"]["created_phase_histogram"]
    assert sum(hist) == len(phases)
    assert hist == [1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 2]
