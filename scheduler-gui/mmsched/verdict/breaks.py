"""A run's threshold break (`mmrig run --break-us US`, as EVL latmus's -A and cyclictest's -b): the first event
whose latency exceeds US, or that ends late or missed, ends the run's event generation; the events in flight end as
usual and the run is written, its sidecar's `break` naming the event. The run pays nothing for tracing: a paced
bench run is computed again from its record of its inputs with the executor traced (`mmrig replay --trace`)."""

from __future__ import annotations

from typing import Any

from ..model.event import Event

PAST = ("late", "missed")


def breaks_at(ev: Event, break_us: float | None) -> bool:
    """Whether EV is past the break: late or missed, or measured with a latency above BREAK_US."""
    if break_us is None or ev.event < 0:
        return False
    if ev.outcome in PAST:
        return True
    return ev.outcome == "ok" and ev.latency_us is not None and ev.latency_us > break_us


def break_section(ev: Event | None, break_us: float) -> dict[str, Any]:
    """The sidecar's `break`: the threshold and the event past it (None: no event was)."""
    if ev is None:
        return {"us": break_us, "event": None}
    return {"us": break_us, "event": ev.event, "outcome": ev.outcome, "reason": ev.reason,
            "latency_us": ev.latency_us, "scheduled_tc": ev.scheduled_tc, "due_counts": ev.due_counts}


__all__ = ["break_section", "breaks_at"]
