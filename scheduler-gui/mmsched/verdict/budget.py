"""Normal mode's latency budget (docs/normal-mode.md): why a normal-mode event was as late as it was.

Every measured normal-mode latency is split into five parts that add up to it:

- est_error_us: the firing target minus the tick's start as the profiler's own FIRE stamps place it on the
  host clock (servo.reference_bases, a window centred on the event). The naive estimate from TIMECODE
  arrivals is late by whatever delayed those frames; a constant write delay also lands here (a host cannot
  tell it from a clock offset: servo.py).
- wakeup_us: the firing thread's write minus its target (host clock, exact: the native thread's stamp after
  its sleep and spin, or the Python thread's before its write).
- write_us: the write call itself, from its start to its return (host clock), or to the moment its bytes
  entered the line where the endpoint recorded it earlier (the bench's reader, at real-time priority, stamps
  them inside the call of a writer it preempts: what the call takes after that moves nothing): the PC's own,
  a slow write is its result.
- line_us: the write's end to the profiler's stamp, beyond the fastest FIRE of the window (the bench's
  pick-up of the bytes, or a USB adapter's variation): the reference places tick starts from the writes' ends.
- floor_us: the profiler's own part, measured by the floor calibration (a FIRE injected on the tick's edge,
  no PC timing in it); 0 where the endpoint cannot inject (boards), and then inside est_error_us.
"""

from __future__ import annotations

import statistics
from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from mmanalysis.latstats import latency_stats
from mmanalysis.schema import BUDGET_COLUMNS, MEASURED

from ..model.event import Event
from ..model.eventstore import EventStore
from ..model.servo import ReferenceWindow, drift_of, lower_bound


@dataclass
class Floor:
    """The floor calibration's outcome: the latency the profiler reports for a FIRE whose first start bit
    begins exactly on the tick's edge."""

    samples_us: list[float] = field(default_factory=list)
    source: str = "none"           # "bench_inject", or "none"
    why: str | None = None         # why there is no figure

    @property
    def us(self) -> float | None:
        return statistics.median(self.samples_us) if self.samples_us else None

    def sidecar(self) -> dict[str, Any]:
        return {"source": self.source, "us": self.us, "max_us": max(self.samples_us) if self.samples_us else None,
                "min_us": min(self.samples_us) if self.samples_us else None, "n": len(self.samples_us),
                "why": self.why}


def write_end(e: Event, entered: Callable[[Event], float | None] | None) -> float | None:
    """Where event `e`'s write call ends for the budget: its return, or where the endpoint recorded its bytes on
    the line if that was sooner (a reader that preempted the writer inside the call); None: never written."""
    if e.written_at is None:
        return None
    end = e.write_ended_at if e.write_ended_at is not None else e.written_at
    if entered is not None and (on_line := entered(e)) is not None:
        end = max(e.written_at, min(end, on_line))
    return end


def apply_budget(events: Sequence[Event], tick_s: float, floor_us: float | None, tick_counts: int = 1,
                 entered: Callable[[Event], float | None] | None = None, clock: float = 1.0) -> int:
    """Fills the budget columns of the normal-mode events that have a FIRE, its stamp and a latency (an event
    due inside its tick, `due_counts` of `tick_counts`, is aimed at that moment). `entered(ev)`: when the
    endpoint recorded its FIRE's bytes entering the line (host clock), or None. `clock`: host seconds a second of
    the profiler's timer (the tick length the run fitted over the nominal one): a Mega's resonator 0.5 % off
    put consecutive stamps 4.4 ms apart 22 us apart as host time, more than two bounds must agree within, and a
    1 s run's reference then had no FIRE to rest on (the drift is fitted over 20 s spans only, and up to 200 ppm).
    Returns how many got one.

    In passes over the events in order (a long run's are read back from its scratch file, eventstore.py, and
    changed a chunk at a time): the drift over the whole run (servo.drift_of), then each event's reference
    (servo.ReferenceWindow, reading the usable FIREs half a window ahead of the one it fills)."""
    floor = floor_us or 0.0

    def good() -> Iterator[tuple[int, float, float]]:
        # the reference counts from the write's end: the fastest FIRE's path beyond its own write call is the
        # line's zero, so a write call (the PC's) is never taken for part of the clocks' offset
        for i, e in enumerate(events):
            end = write_end(e, entered)
            if end is not None and e.stamp_s is not None and e.measurable and e.outcome in MEASURED:
                yield i, end, lower_bound(end, e.stamp_s * clock, floor / 1e6)

    window = ReferenceWindow(good(), drift_of((t, b) for _, t, b in good()))
    n = i = 0
    for chunk in events.changing() if isinstance(events, EventStore) else [events]:
        for e in chunk:
            end = write_end(e, entered)
            base = window.base(i, end) if end is not None and e.stamp_s is not None else None
            i += 1
            if base is None or e.fire_at is None or e.written_at is None or end is None or e.latency_us is None:
                continue
            due = base + (e.scheduled_tc + e.due_counts / tick_counts) * tick_s * clock
            e.est_error_us = round((e.fire_at - due) * 1e6, 3)
            e.wakeup_us = round((e.written_at - e.fire_at) * 1e6, 3)
            e.write_us = round((end - e.written_at) * 1e6, 3)
            e.floor_us = round(floor, 3)
            e.line_us = round(e.latency_us - e.est_error_us - e.wakeup_us - e.write_us - e.floor_us, 3)
            n += 1
    return n


def budget_summary(events: Iterable[Event], floor: Floor, disciplined: bool) -> dict[str, Any]:
    """The sidecar's `budget`: each part's p50 / p99 / max over the measured, measurable rows that have
    one, and which part holds the median back most. One pass, keeping the parts' numbers (a long run's events
    are read back from its scratch file)."""
    columns = {col: array("d") for col in BUDGET_COLUMNS}
    for e in events:
        if e.outcome in MEASURED and e.measurable and e.est_error_us is not None:
            for col, values in columns.items():
                v = getattr(e, col)
                values.append(np.nan if v is None else v)
    n = len(columns[BUDGET_COLUMNS[0]])
    parts: dict[str, Any] = {}
    for col, values in columns.items():
        st = latency_stats(np.frombuffer(values, dtype=float) if n else np.array([], dtype=float))
        parts[col] = {k: (None if np.isnan(st[k]) else round(float(st[k]), 3)) for k in ("mean", "p50", "p99", "max")}
    largest = max(BUDGET_COLUMNS, key=lambda c: parts[c]["p50"] if parts[c]["p50"] is not None else -np.inf) \
        if n else None
    return {"target": "disciplined" if disciplined else "naive", "n": n, "parts": parts,
            "largest_p50": largest, "floor": floor.sidecar(),
            "reference": "tick starts placed by the profiler's own FIRE stamps (servo.py), a window of 33 FIREs "
                         "centred on each event; a constant write delay is inside est_error_us"}


PART_WORDS = {"est_error_us": "tick estimate", "wakeup_us": "wake-up", "write_us": "write", "line_us": "line",
              "floor_us": "floor"}


def format_budget(budget: dict[str, Any]) -> str:
    """Two lines for a terminal: the floor, and each part's p50 / p99 (us)."""
    fl = budget["floor"]
    floor = (f"floor {fl['us']:.1f} us (the profiler's own: a FIRE injected on the tick's edge, {fl['n']} probes)"
             if fl["us"] is not None else f"floor unknown ({fl['why']}): inside the tick estimate")
    parts = []
    for col, words in PART_WORDS.items():
        p = budget["parts"].get(col)        # (a run before format 5 has no write part)
        if p is not None and p["p50"] is not None:
            parts.append(f"{words} {p['p50']:.1f} / {p['p99']:.1f}")
    largest = PART_WORDS.get(budget.get("largest_p50") or "", "-")
    return (f"{floor}\nbudget ({budget['target']} target, p50 / p99 us): {', '.join(parts) or '-'}; "
            f"largest at p50: {largest}")
