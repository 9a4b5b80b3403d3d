"""A PERIODIC series seen from a HIL script (SPEC.md 0x28, protocol version 5): the moments the PC asked for,
each event's RESULT joined to its moment, and what the series shows (outcomes, latencies, a histogram in
fixed cells).

Joining. The profiler's RESULT for an edge carries the edge's event id, its tick and its counts, not the
event's tag (the executor's port shows 3 bits of id). Moments come `period` apart and ids go round 8, so two
moments with the same id are 8 periods apart: an edge is the event whose moment with that id is the latest
at or before it (at most EARLY_COUNTS after, which would make the event early). A latency of 8 periods or
more would be taken for the next moment's: the series says so (`ambiguous_after_us`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mmproto as mp
from mmsched.event import Event
from mmsched.outcome import apply_result

EARLY_COUNTS = 0        # an edge before its moment is early: joined to that moment only if not before it


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
    """Every moment of a series as SPEC.md section 5 (PERIODIC) defines it, exact in the profiler's counts."""
    out = []
    for k in range(count):
        m = first + k * period
        out.append(Moment(k, (tag + k) & 0xFFFF, (event_id + k) & 7, start_tc + m // tick_counts, m % tick_counts))
    return out


@dataclass
class SeriesResult:
    """What a series gave: each moment's Event (outcome, latency in us and counts, `due_counts`), the FIRED
    frames the executor sent, the RESULTs no moment took, and the period, in us."""

    events: list[Event]
    period_us: float
    fired: int = 0
    unjoined: list[mp.Result] = field(default_factory=list)

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


def join(results: list[mp.Result], ms: list[Moment], tick_counts: int) -> tuple[dict[int, mp.Result], list[mp.Result]]:
    """Each moment's RESULT by the rule of the module (k -> RESULT), and the RESULTs no moment took."""
    by_id: dict[int, list[Moment]] = {}
    for m in ms:
        by_id.setdefault(m.event_id, []).append(m)
    taken: dict[int, mp.Result] = {}
    left = []
    for r in results:
        at = r.timecode * tick_counts + r.counts
        best = None
        for m in by_id.get(r.event_id, []):
            due = m.tc * tick_counts + m.counts
            if due <= at + EARLY_COUNTS and m.k not in taken:
                best = m                  # the latest such moment (the list is in time order)
            elif due > at + EARLY_COUNTS:
                break
        if best is None:
            left.append(r)
        else:
            taken[best.k] = r
    return taken, left


def finish(ms: list[Moment], results: list[mp.Result], tb: mp.TimeBase, late_bound_us: float, created_tc: int,
           distance: int, period_us: float, fired: int) -> SeriesResult:
    """The series' events, each with its outcome: joined to its RESULT (ok, late, early); else lost when the
    profiler said it lost results (a RESULT's lost-before flag: a fault of the rig, not the executor's), else
    missed."""
    taken, left = join(results, ms, tb.tick_counts)
    lost = any(r.flags & mp.RESULT_FLAG_LOST_BEFORE for r in results)
    events = []
    for m in ms:
        e = Event(event=m.k, tag=m.tag, event_id=m.event_id, mode="mixed", distance=distance, scheduled_tc=m.tc,
                  created_tc=created_tc, created_phase=None, due_counts=m.counts)
        r = taken.get(m.k)
        if r is not None:
            apply_result(e, r, tb, late_bound_us)
        else:
            e.finish(*(("lost", "result_lost") if lost else ("missed", "timeout")))
        events.append(e)
    return SeriesResult(events, period_us, fired, left)
