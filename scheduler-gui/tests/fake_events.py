"""Events made by hand for the scheduler core's unit tests: one as the run makes it (`ev`), and N finished on
time (`finished`), against the AVR profiler's time base (TB)."""

from __future__ import annotations

import mmproto as mp
from mmsched.model.event import Event
from mmsched.verdict.outcome import apply_result

TB = mp.TimeBase(16_000_000, 1_137_778)


def ev(i: int, eid: int = 0, tc: int = 10, tag: int | None = None) -> Event:
    return Event(i, tag if tag is not None else 100 + i, eid, "mixed", 2, tc, tc - 2, 0.1)


def finished(n: int) -> list[Event]:
    out = []
    for i in range(n):
        e = ev(i, eid=i % 8)
        apply_result(e, mp.Result(e.event_id, 0, i, e.scheduled_tc, 22 + i), TB, 1000.0)
        out.append(e)
    return out
