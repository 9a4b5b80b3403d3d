"""The profiler's reports of results it lost, and whether an event with no RESULT was one of them.

The profiler loses a result when its ring is full (COUNTERS.node_a, result_overflows) or when two strobe
edges come closer together than its capture separates, or a glitch moves the strobe (node_b,
spurious_edges: the AVR separates edges from 85 cycles, 5.3 us, apart on; our executor leaves 20 us between
the edges of one tick, but another system under test may not). Either way it sets the lost-before flag on the next RESULT it
stores. An event that was put out (its FIRED came, or its FIRE was written) but got no RESULT by its
deadline is `lost` (reason `result_lost`, a fault of the rig) when such a report came after it was made,
and `missed` only when the profiler says it lost nothing.

The last events of a burst may have no later RESULT to carry the flag. Before such an event is called
missed, the runner asks the profiler's COUNTERS once (`hold`); a rise in node_a + node_b beyond what the
flags since the last reading account for (each flag stands for at least one loss) is a report too. The
test errs toward the rig: a flag that stood for several losses makes a later silent event lost, never a
lost one missed. COUNTERS may overtake RESULTs still in the ring (the profiler sends it first), so a flag
can come after the counters that counted its loss; it then counts against the next reading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mmproto import Counters

from ..model.event import Event

QUERY_S = 0.5     # a COUNTERS answer later than this: the held events are judged without it


def losses_in(counters: Counters | dict[str, int]) -> int:
    """The profiler's lost results so far: result_overflows + spurious_edges (SPEC.md, COUNTERS)."""
    c = counters if isinstance(counters, dict) else counters.__dict__
    return (c["node_a"] + c["node_b"]) & 0xFFFF


@dataclass
class LossReports:
    reports: int = 0                      # loss reports so far (flags, counter rises no flag explains, gaps)
    edges_missing: int = 0                # the matcher's edges_missing when last taken as a report
    counted: int | None = None            # losses_in at the last COUNTERS reading (None: no baseline)
    flags_since_reading: int = 0
    asked_at: float | None = None         # our COUNTERS request still unanswered, sent then
    answered_through: float = float("-inf")   # events due by then have had their answer
    due_since: dict[int, float] = field(default_factory=dict)   # held event -> when first seen due
    unanswered: int = 0

    def flagged(self) -> None:
        """A RESULT with the lost-before flag."""
        self.reports += 1
        self.flags_since_reading += 1

    def edges_gone(self, edges_missing: int) -> None:
        """The matcher's edges_missing rose to this (edges its counters do not count: not a flag)."""
        self.edges_missing = edges_missing
        self.reports += 1

    def baseline(self, counters: dict[str, int] | None) -> None:
        self.counted = losses_in(counters) if counters is not None else None

    def reading(self, counters: Counters) -> None:
        """A COUNTERS frame from the profiler during the run."""
        now = losses_in(counters)
        if self.counted is not None and ((now - self.counted) & 0xFFFF) > self.flags_since_reading:
            self.reports += 1
        self.counted, self.flags_since_reading = now, 0
        if self.asked_at is not None:
            self.answered_through, self.asked_at = self.asked_at, None

    def hold(self, silent: Iterable[Event], now: float, ask: Callable[[], bool]) -> set[int]:
        """Of the events put out with no RESULT and no loss report since they were made (`silent`), those
        to keep open until the profiler's COUNTERS, asked for after they were due, have come. `ask` sends
        the request and says whether it could."""
        silent = list(silent)
        if not silent:
            return set()
        for e in silent:
            self.due_since.setdefault(e.event, now)
        if self.asked_at is not None and now - self.asked_at > QUERY_S:
            self.unanswered += 1                     # no answer: judge with what we have
            self.answered_through, self.asked_at = self.asked_at, None
        waiting = {e.event for e in silent if self.due_since[e.event] > self.answered_through}
        if waiting and self.asked_at is None:
            if not ask():
                return set()
            self.asked_at = now
        return waiting
