"""Faults the endpoint itself injected, named where they struck: on the virtual bench the rig knows what it did
to a line (`fault NODE in delay`), so an event whose SCHEDULE (mixed) or FIRE (normal) the bench held back is
lost with that fault's name, never a miss of the system under test.

The bench records the host's bytes whose stop bit ended later than it would have with no injected delay (its
own delay, or one before it that the line had not caught up on), as runs of the host's byte stream per pty
opening (hil/bench/faulthold.c); the PC knows where each event's frame lies in that stream (validity.Sent). An
event whose frame overlaps a held run, and that did not end ok, ends `lost` with reason `injected_delay`, and
the run gets one fault of that kind (so it is invalid, with the reason named). An event that ended ok despite
the hold keeps its row, as any event a fault touched but did not spoil (faults.py).

Boards have no such record (a slow line is part of the system there): `Verdict.held_by_fault` is empty."""

from __future__ import annotations

from typing import Callable, Iterable

from ..model.byterecord import HeldByFault
from ..model.event import Event
from .faults import FaultLedger


def attribute(events: Iterable[Event], held: list[HeldByFault], faults: FaultLedger,
              rel: Callable[[float], float]) -> int:
    """Ends `lost`/`injected_delay` every event not ok whose frame the bench held back; one fault per node
    records them, seen at the first such event's creation (`rel` maps the run's clock to the sidecar's
    seconds). Returns how many events it named."""
    if not held:
        return 0
    named: dict[str, list[tuple[Event, float]]] = {}
    for ev in events:
        sent = ev.bytes.sent
        if sent is None or ev.outcome == "ok":
            continue
        hit = [h for h in held if h.holds(sent.node, sent.gen, sent.offset, sent.size)]
        if hit:
            named.setdefault(sent.node, []).append((ev, max(h.held_us for h in hit)))
    for node, hits in named.items():
        worst = max(us for _, us in hits)
        frame = "FIRE" if node == "profiler" else "SCHEDULE"
        first = min((ev.created_at for ev, _ in hits if ev.created_at is not None), default=None)
        f = faults.raise_("injected_delay", node, rel(first) if first is not None else 0.0,
                          f"the bench's injected delay on the {node}'s input held back the {frame} of "
                          f"{len(hits)} events (up to {worst / 1000:.1f} ms)", [], window=False)
        for ev, _ in hits:
            ev.fault, ev.outcome, ev.reason = f.kind, "lost", f.kind
            f.touched.append(ev)
    return sum(len(h) for h in named.values())


__all__ = ["attribute"]
