"""Faults of the rig seen during a run, and what they do to the events they touch (nothing lost,
nothing misattributed).

A fault of the rig is never a fault of the system under test. The runner reports what it sees here: a node
that reset (a HELLO in the middle of a run, or a profiler timecode that went back), a timecode the nodes
disagree on (an ACK stamped in another tick than the profiler's, the executor's own glitch counter), a
request no node answered (a SCHEDULE or a FIRE lost on the line, or its answer), frames lost or garbled on a
line, a port that went away and came back. Each becomes a `Fault` with its kind, node, host time and details.

What it does to events:
- every event in flight when the fault is seen, and every event created while it is *open* (until the rig
  has recovered: the node set up again, the timecode offset learned again), is *tainted* with its kind;
- a tainted event that ends anything but `ok` ends `lost` with the kind as its reason (`Event.finish`): its
  miss or its odd latency cannot be told apart from the fault's doing. A tainted event that ends ok keeps
  its row: its RESULT joined it in the usual way and its latency is within bound.
- the run is invalid, with one reason per kind (`reasons()`), so its figures are never taken for a result.

One definition of the kinds (their titles and texts for every view are mmanalysis.schema's INVALID_REASONS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Iterable

from ..model.reason import Reason
from ..model.event import Event

# kind -> what the invalid reason says about it (details follow)
KINDS = {
    "node_reset": "a node reset during the run",
    "timecode_fault": "the nodes disagreed on the timecode",
    "no_answer": "requests went unanswered (lost on the line, or their answers were)",
    "link_errors": "frames were lost or garbled on a line",
    "node_errors": "a node's own fault counters rose during the run",
    "link_fault": "a serial port went away and came back",
    "injected_delay": "the bench's injected delay held back the PC's frames on a line",
}

# The COUNTERS fields that count faults of the rig (SPEC.md section 5), by node, with what they mean. The
# executor's node_a..c are its refusals (the system under test's own answers), not faults of the rig.
RIG_COUNTERS: dict[str, dict[str, str]] = {
    "profiler": {"rx_bad_crc": "bad CRC", "rx_bad_cobs": "bad COBS", "rx_too_long": "too long",
                 "rx_too_short": "too short", "rx_bad_message": "bad message", "tx_dropped": "frames not sent",
                 "node_a": "results lost (ring full)",
                 "node_b": "edges it could not timestamp (closer together than its capture separates, or glitches)",
                 "node_d": "ticks whose TIMECODE was not sent",
                 "rx_ring_overflow": "input bytes lost (ring full)", "rx_hw_overrun": "input bytes lost (UART overrun)"},
    "executor": {"rx_bad_crc": "bad CRC", "rx_bad_cobs": "bad COBS", "rx_too_long": "too long",
                 "rx_too_short": "too short", "rx_bad_message": "bad message", "tx_dropped": "frames not sent",
                 "node_d": "timecode glitches",
                 "rx_ring_overflow": "input bytes lost (ring full)", "rx_hw_overrun": "input bytes lost (UART overrun)"},
}
COUNTER_KIND = {"node_d": "timecode_fault"}   # a glitch counter names a timecode fault, the rest node errors


@dataclass
class Fault:
    kind: str
    node: str
    at_s: float                      # run clock (seconds since generation started) when it was seen
    detail: str
    open: bool = True                # new events are tainted until the rig has recovered
    closed_s: float | None = None
    touched: list[Event] = field(default_factory=list, repr=False)   # the events it tainted
    excused: str | None = None       # why it is no fault of the run after all (FaultLedger.excuse)

    @property
    def tainted(self) -> int:
        return len(self.touched)

    def section(self) -> dict[str, Any]:
        return {"kind": self.kind, "node": self.node, "at_s": self.at_s, "closed_s": self.closed_s,
                "detail": self.detail, "events": self.tainted, **({"excused": self.excused} if self.excused else {})}


@dataclass
class FaultLedger:
    faults: list[Fault] = field(default_factory=list)

    def raise_(self, kind: str, node: str, at_s: float, detail: str, in_flight: Iterable[Event],
               window: bool = True) -> Fault:
        """Records a fault and taints the events in flight. `window`: it stays open (tainting new events)
        until `close(kind, node)`; else it is a moment (a lost frame, an unanswered request)."""
        assert kind in KINDS, kind
        f = Fault(kind, node, round(at_s, 6), detail, open=window, closed_s=None if window else round(at_s, 6))
        self.faults.append(f)
        for ev in in_flight:
            self.taint(ev, f)
        return f

    def taint(self, ev: Event, f: Fault) -> None:
        if not ev.terminal and ev.fault is None:
            ev.fault = f.kind
            f.touched.append(ev)

    def reach_back(self, f: Fault, ended: Iterable[Event]) -> None:
        """Events that already ended late, early or missed where the fault's evidence shows it was already
        at work (a timecode fault is proven only at an event's deadline, ticks after the count went wrong):
        they become lost with its kind, as if it had been seen in time."""
        for ev in ended:
            if ev.outcome in ("late", "early", "missed") and ev.fault is None:
                ev.fault, ev.outcome, ev.reason = f.kind, "lost", f.kind
                f.touched.append(ev)

    def created(self, ev: Event) -> None:
        """A new event: an open fault taints it (the rig has not recovered yet)."""
        for f in self.faults:
            if f.open:
                self.taint(ev, f)
                return

    def is_open(self, kind: str, node: str | None = None) -> bool:
        return any(f.open and f.kind == kind and (node is None or f.node == node) for f in self.faults)

    def close(self, at_s: float, kind: str | None = None, node: str | None = None) -> None:
        """The rig has recovered: the open faults (of `kind` and `node`, or all) stop tainting new events."""
        for f in self.faults:
            if f.open and kind in (None, f.kind) and node in (None, f.node):
                f.open, f.closed_s = False, round(at_s, 6)

    def explain(self, kind: str, since_s: float, by: str, node: str) -> None:
        """Faults of `kind` seen since `since_s` were the doing of a later, better-named fault (`by` of `node`):
        a profiler's reset shows first as a timecode the executor disagrees with, its HELLO comes later.
        They and the events they touched take the better name."""
        for f in self.faults:
            if f.kind == kind and f.at_s >= since_s:
                f.detail += f" (the {node}'s reset, seen before its HELLO)"
                f.kind, f.node = by, node
                for ev in f.touched:
                    ev.fault = by
                    if ev.outcome == "lost" and ev.reason == kind:
                        ev.reason = by

    def excuse(self, numbers: Collection[int], kind: str, why: str) -> int:
        """The faults of `kind` that touched only the events numbered `numbers` were no fault of the run: the
        events are judged not measurable for what caused them (crowding.crowded_fires). They stay in the sidecar
        with `why`, but make no invalid reason. Returns how many were excused. (By number, not by the objects: a
        long run's ended events are read back from its scratch file as copies, eventstore.py.)"""
        n = 0
        for f in self.faults:
            if f.kind == kind and f.excused is None and f.touched and all(e.event in numbers for e in f.touched):
                f.excused = why
                n += 1
        return n

    def reasons(self) -> list[Reason]:
        """One invalid reason per kind, with how often and where (excused faults make none)."""
        out = []
        for kind, what in KINDS.items():
            these = [f for f in self.faults if f.kind == kind and f.excused is None]
            if not these:
                continue
            first = these[0]
            more = f" ({len(these)} times, first at {first.at_s:.3f} s)" if len(these) > 1 else f" at {first.at_s:.3f} s"
            touched = sum(f.tainted for f in these)
            tail = f"; {touched} events touched" if touched else ""
            out.append(Reason(kind, f"{kind}: {what}{more}: {first.detail}{tail}"))
        return out

    def section(self) -> list[dict[str, Any]]:
        return [f.section() for f in self.faults]


def counter_faults(node: str, before: dict[str, int] | None, after: dict[str, int] | None,
                   reset: bool, any_reset: bool = False, explained: dict[str, int] | None = None
                   ) -> dict[str, dict[str, int]]:
    """The rig-fault counters that rose on `node` over the run: kind -> {field: increase}. A node that reset
    restarted its counters at 0, so its final values are the increase since then (`reset`). When any node
    reset (`any_reset`), timecode glitches are its doing (the port restarts from 0, or the executor's count
    restarts), so they are named node_reset. `explained`: field -> the part of its rise already judged
    (the FIREs a one-FIRE profiler lost holding the one before: crowding.py), not counted again."""
    if after is None:
        return {}
    out: dict[str, dict[str, int]] = {}
    for name in RIG_COUNTERS.get(node, {}):
        if name not in after:
            continue
        base = 0 if reset or before is None else before.get(name, 0)
        rise = (after[name] - base) & 0xFFFF        # the counters wrap at 65536 (SPEC.md section 5)
        rise = max(0, rise - (explained or {}).get(name, 0))
        if rise:
            kind = COUNTER_KIND.get(name, "node_errors")
            if kind == "timecode_fault" and any_reset:
                kind = "node_reset"
            out.setdefault(kind, {})[name] = rise
    return out


def describe_counters(node: str, rises: dict[str, int]) -> str:
    return f"{node}: " + ", ".join(f"{RIG_COUNTERS[node][k]} +{v}" for k, v in rises.items())
