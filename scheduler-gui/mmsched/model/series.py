"""Mixed mode on a schedule grid: the executor's periodic series (PERIODIC, protocol version 5).

With `--generation periodic` a mixed run does not send a SCHEDULE per event: it lays a grid (grid.py) from the
tick `distance` ahead and sends the executor the grid itself, in PERIODIC frames of at most CHUNK events
(the frame's count is 16 bits). The executor places each moment in the tick it measures in its own clock and
fires it; each event's RESULT and FIRED come back as for listed events and are joined the same way
(matching.py: by tick and id, in firing order). The run's events are made as their moments come near
(runner.generate_on_grid, as in normal mode), each bearing the tag and id the executor gives that moment:
tags go up by one from TAG0 and wrap at 65536 (only a few ticks' worth are ever in flight), ids go round 0..7.

A run longer than CHUNK events is several series: the executor queues one behind the running one (SPEC.md
PERIODIC), so the first two go out at once and each next one when the FIRED of the series before it begins
(the one before it is then running and the queue free again).

An event's bytes for validity by cause (validity.py) are its series' frame (as a listed event's are its
SCHEDULE), the TIMECODE the grid was laid from, and when its series was sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mmproto as mp

from .grid import Grid
from .eventbytes import Basis, Sent

CHUNK = 60_000          # events per PERIODIC (its count is a u16)
TAG0 = 1


@dataclass
class Chunk:
    """One PERIODIC: the grid's moments first_k .. first_k + count - 1."""

    index: int
    first_k: int
    count: int
    sent: Sent | None = None
    acked: bool = False
    refused: str | None = None          # the executor's refusal (outcome.refusal_reason), if it refused it
    ack_tc: int | None = None           # its ACK: the tick (profiler's timeline) and phase the executor took it in
    ack_phase: float | None = None


@dataclass
class SeriesPlan:
    grid: Grid
    total: int                          # the run's events
    created_tc: int                     # the tick the grid was laid in (each event's created_tc)
    created_phase: float
    basis: Basis | None = None
    chunks: list[Chunk] = field(default_factory=list)
    size: int = 0                       # events per series (CHUNK when the plan was made)

    def __post_init__(self) -> None:
        self.size = self.size or CHUNK
        if not self.chunks:
            self.chunks = [Chunk(i, k, min(self.size, self.total - k))
                           for i, k in enumerate(range(0, self.total, self.size))]

    @staticmethod
    def tag(k: int) -> int:
        return (TAG0 + k) & 0xFFFF

    @staticmethod
    def event_id(k: int) -> int:
        return k & 7

    def chunk_of(self, k: int) -> Chunk:
        return self.chunks[k // self.size]

    def starting_at(self, k: int) -> Chunk | None:
        """The series whose first moment is moment k, if one is."""
        return self.chunks[k // self.size] if k % self.size == 0 and k < self.total else None

    def frame(self, chunk: Chunk, tc_offset: int, quiet: bool = False) -> mp.Periodic:
        """The chunk's PERIODIC, its first tick in the executor's timeline. `quiet`: a FIRED for its last event
        only (protocol 6: a run on the profiler's histogram alone, whose 13-byte FIREDs at a kilohertz would not
        fit a 115200-baud line)."""
        tc, due = self.grid.moment(chunk.first_k)
        return mp.Periodic(tag=self.tag(chunk.first_k), event_id=self.event_id(chunk.first_k),
                           timecode=(tc - tc_offset) & 0xFFFFFFFF, first=due, period=self.grid.interval_counts,
                           tick_counts=self.grid.tick_counts, count=chunk.count,
                           flags=mp.Periodic.FLAG_QUIET if quiet else 0)

    def chunk_by_tag(self, tag: int) -> Chunk | None:
        """The series whose first event has this tag and is not answered yet (its ACK or ERROR carries it)."""
        return next((c for c in self.chunks if c.sent is not None and not c.acked and c.refused is None
                     and self.tag(c.first_k) == tag), None)

    def k_of_tag(self, tag: int, from_k: int) -> int | None:
        """The first moment at or after `from_k` whose event has this tag, if the run has it."""
        k = from_k + ((tag - self.tag(from_k)) & 0xFFFF)
        return k if k < self.total else None

    def k_made(self, tag: int, next_k: int, within: int = 4096) -> int | None:
        """The latest moment before `next_k` (an event made already) whose event has this tag, if it is one of
        the last `within` made."""
        back = (self.tag(next_k - 1) - tag) & 0xFFFF
        k = next_k - 1 - back
        return k if k >= 0 and back < within else None

    def sidecar(self) -> dict[str, object]:
        return {"series": len(self.chunks), "sent": sum(c.sent is not None for c in self.chunks),
                "acked": sum(c.acked for c in self.chunks),
                "refused": [{"series": c.index, "reason": c.refused} for c in self.chunks if c.refused]}
