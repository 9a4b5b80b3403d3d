"""A PERIODIC series seen from a HIL script (SPEC.md 0x28, protocol version 5): the moments the PC asked for
(a schedule grid: mmsched.model.grid), each event's RESULT joined to its moment as a run joins them
(mmsched.verdict.matching.series_result: same id, the latest moment at or before the edge), and what the series shows
(outcomes, latencies, a histogram in fixed cells). Two moments with one id are 8 periods apart: a latency of 8
periods or more would be taken for the next moment's, which the series says (`ambiguous_after_us`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mmproto as mp
from mmsched.model.event import Event
from mmsched.model.grid import Grid
from mmsched.verdict.matching import Matcher
from mmsched.verdict.outcome import apply_result


@dataclass(frozen=True)
class Moment:
    """Event k of a series: its tag and id, the tick it is due in (the profiler's timeline) and how far in."""

    k: int
    tag: int
    event_id: int
    tc: int
    counts: int


def moments(tag: int, event_id: int, start_tc: int, first: int, period: int, tick_counts: int,
            count: int) -> list[Moment]:
    """Every moment of a series as SPEC.md section 5 (PERIODIC) defines it, exact in the profiler's counts: the
    grid's (mmsched.model.grid.Grid), with the executor's tags and ids."""
    grid = Grid(start_tc, period, tick_counts, 1, first_counts=first)
    return [Moment(k, (tag + k) & 0xFFFF, (event_id + k) & 7, *grid.moment(k)) for k in range(count)]


@dataclass
class SeriesResult:
    """What a series gave: each moment's Event (outcome, latency in us and counts, `due_counts`), the FIRED
    frames the executor sent, the RESULTs no moment took, and the period, in us."""

    events: list[Event]
    period_us: float
    fired: int = 0
    unjoined: list[mp.Result] = field(default_factory=list)
    # the profiler's own histogram of the series (protocol 6, an AVR profiler: mmsched.verdict.profhist's section, with
    # its agreement with these events); None where the profiler keeps none (the 8051)
    profiler_histogram: dict[str, Any] | None = None

    @property
    def outcomes(self) -> dict[str, int]:
        out = {o: 0 for o in ("ok", "late", "early", "missed", "lost")}
        for e in self.events:
            out[e.outcome or "missed"] += 1
        return out

    @property
    def latencies_us(self) -> list[float]:
        return [e.latency_us for e in self.events if e.outcome in ("ok", "late") and e.latency_us is not None]

    @property
    def ambiguous_after_us(self) -> float:
        """A latency from here on would be joined to the next moment of the same id (see the module)."""
        return 8 * self.period_us

    def histogram(self, cell_us: float = 1.0) -> dict[int, int]:
        """Counts per fixed cell of `cell_us` (cell i holds [i, i + 1) x cell_us), as latmus and cyclictest keep
        them: only the cells with events."""
        out: dict[int, int] = {}
        for v in self.latencies_us:
            i = int(v // cell_us)
            out[i] = out.get(i, 0) + 1
        return dict(sorted(out.items()))


def finish(ms: list[Moment], results: list[mp.Result], tb: mp.TimeBase, late_bound_us: float, created_tc: int,
           distance: int, period_us: float, fired: int) -> SeriesResult:
    """The series' events, each with its outcome: joined to its RESULT (ok, late, early); else lost when the
    profiler said it lost results (a RESULT's lost-before flag: a fault of the rig, not the executor's), else
    missed."""
    matcher = Matcher()
    events = []
    for m in ms:
        e = Event(event=m.k, tag=m.tag, event_id=m.event_id, mode="mixed", distance=distance, scheduled_tc=m.tc,
                  created_tc=created_tc, created_phase=None, due_counts=m.counts)
        matcher.track_series(e)
        events.append(e)
    for r in results:
        for e, got in matcher.series_result(r, tb.tick_counts):
            apply_result(e, got, tb, late_bound_us)
    lost = any(r.flags & mp.RESULT_FLAG_LOST_BEFORE for r in results)
    for e in events:
        if not e.terminal:
            e.finish(*(("lost", "result_lost") if lost else ("missed", "timeout")))
    return SeriesResult(events, period_us, fired, matcher.pending_series)
