"""What an endpoint recorded of the bytes it carried, on the host clock (the paced bench's: mmhil.timing), which
validity by cause judges each event by (validity.py): every read of the PC's bytes with the moment it entered the
node's line, every run of a node's output handed to the PC late, the stretches in which the bench could not keep
its timing, and the PC's bytes an injected fault held back (injected.py). Boards and a lockstep bench keep none.

Byte offsets count the bytes the PC wrote to a port since it opened it (a pty loses nothing from host to bench),
so a frame the PC wrote is found in the record exactly; frames the PC received are found by their moment, since
opening a port drops what was waiting in it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entry:
    """Bytes the PC wrote to `node` that reached the endpoint together: `n` bytes from stream offset `offset`
    of the port's `gen`-th opening, stamped at host time `stamp`, put on the line `moved_s` after it."""

    node: str
    gen: int
    offset: int
    n: int
    stamp: float
    moved_s: float

    @property
    def entered(self) -> float:
        """When the first byte went onto the node's line, on the host clock."""
        return self.stamp + self.moved_s


@dataclass(frozen=True)
class Held:
    """A run of `node`'s output bytes, due from `due0` to `due1` (host clock), each handed to the PC at
    least the record's `held_min_s` and at most `late_s` after its moment."""

    node: str
    due0: float
    due1: float
    n: int
    late_s: float


@dataclass
class ByteRecord:
    """What an endpoint recorded of the bytes it carried, on the host clock: every read of the PC's bytes
    (`entries`, in offset order per node) and every run of output handed over late (`held`, in due order:
    a node's runs do not overlap). Output later than `held_min_s` is always in `held`; `dropped`: records
    the endpoint no longer had."""

    entries: dict[str, list[Entry]] = field(default_factory=dict)
    held: dict[str, list[Held]] = field(default_factory=dict)
    held_min_s: float = 0.0
    dropped: int = 0
    _keys: dict[str, list[tuple[int, int]]] = field(default_factory=dict, init=False, repr=False)
    _due1: dict[str, list[float]] = field(default_factory=dict, init=False, repr=False)
    _due0: dict[str, list[float]] = field(default_factory=dict, init=False, repr=False)
    _longest: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # the lookups' indexes, made once: a run judges every event against them (a kilohertz run's 10,000
        # events against 9,000 held runs took 1.5 s when each lookup rebuilt them; 100,000 would take minutes)
        self._keys = {n: [(e.gen, e.offset) for e in es] for n, es in self.entries.items()}
        self._due1 = {n: [h.due1 for h in hs] for n, hs in self.held.items()}
        self._due0 = {n: [h.due0 for h in hs] for n, hs in self.held.items()}
        self._longest = {n: max((h.late_s for h in hs), default=0.0) for n, hs in self.held.items()}

    def entry(self, node: str, gen: int, offset: int) -> Entry | None:
        """The read that held byte `offset` of the port's `gen`-th opening, or None (not recorded)."""
        i = bisect.bisect_right(self._keys.get(node, []), (gen, offset)) - 1
        if i < 0:
            return None
        e = self.entries[node][i]
        return e if e.gen == gen and e.offset <= offset < e.offset + e.n else None

    def held_between(self, node: str, t0: float, t1: float) -> float:
        """The latest any byte of `node` due from `t0` to `t1` was handed over, in seconds (0: none late)."""
        runs, worst = self.held.get(node, []), 0.0
        for i in range(bisect.bisect_left(self._due1.get(node, []), t0), len(runs)):
            if runs[i].due0 > t1:
                break
            worst = max(worst, runs[i].late_s)
        return worst

    def held_across(self, node: str, t: float) -> float:
        """How long after `t` a byte of `node` due by `t` was still held (0: none): the PC's view at `t` was
        that much stale through the endpoint's fault."""
        runs = self.held.get(node, [])
        if not runs:
            return 0.0
        longest = self._longest[node]
        worst = 0.0
        for i in range(bisect.bisect_right(self._due0[node], t) - 1, -1, -1):
            h = runs[i]
            if h.due1 + longest <= t:
                break
            worst = max(worst, min(h.due1, t) + h.late_s - t)
        return worst


@dataclass(frozen=True)
class Stall:
    """A stretch of the host clock in which the bench could not keep its timing, with the largest lag in it
    (the catch-up included: from `start` to `end`)."""

    start: float
    end: float
    lag_us: float


def stall_time_share(stalls: list[Stall], t0: float, t1: float) -> float:
    """The share of the window [t0, t1] the stalls covered (each from its start to its end plus its lag)."""
    if t1 <= t0:
        return 0.0
    covered = sum(max(0.0, min(s.end + s.lag_us / 1e6, t1) - max(s.start, t0)) for s in stalls)
    return min(1.0, covered / (t1 - t0))


@dataclass(frozen=True)
class HeldByFault:
    """Host bytes `offset` .. `offset + n - 1` of the node's `gen`-th port opening, held back by an injected
    fault by up to `held_us`."""

    node: str
    gen: int
    offset: int
    n: int
    held_us: float

    def holds(self, node: str, gen: int, offset: int, size: int) -> bool:
        return node == self.node and gen == self.gen and offset < self.offset + self.n and self.offset < offset + size
