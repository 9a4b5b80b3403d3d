"""A run in phases (mmsched.model.phaseplan): each phase's figures apart, the sidecar's `phases` section
(docs/data-format.md, docs/long-runs.md).

An event belongs to the phase in which the PC did its part for it, on the run's clock, against the phases'
boundaries as they happened (PhaseSpan): in normal mode the moment its FIRE was aimed at (Event.fire_at: the
firing thread's wake-up, which is what normal mode measures; the CSV's sent_s is when the write began, that
moment plus the wake-up's lateness); in mixed mode the moment it was made (Event.created_at: its SCHEDULE goes out
at once, and the executor's firing does not depend on the PC's load); in verification mode the moment the
executor's LOCAL_EVENT arrived. By creation alone, an event made in the last ticks of a phase fired in the next:
a 20 s idle phase took a FIRE written 98 ms into the cpu phase, 69 ms late while stress-ng started, as idle's
worst. Those moments grow with the event number (events are made in the order they are due), so each phase's
events are one range of the CSV's `event` column (first_event .. last_event), which is how a reader of the files
(mmanalysis.phasetable) finds them again.

An event whose moment falls in a switch (after the previous phase's end_s, before this one's start_s: the old
stress-ng being stopped, the new one started; a few ms) is counted in the whole run only, in no phase, and each
phase says how many fell in the switch into it (switch_events): neither condition was in place then.

Each phase gets the same summary figures as the whole run's `summary` (mmsched.verdict.stats.summarize) and its
latency histogram in the run's bins.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from mmanalysis.histogram import latency_histogram

from ..model.event import Event
from ..model.phaseplan import PhasePlan, PhaseSpan, phase_of
from ..model.reason import Reason
from .stats import summarize


def pc_moment(e: Event, t0: float) -> float:
    """When the PC did its part for event E, seconds from the run's start: its FIRE's aimed moment (normal mode),
    else the moment it was made."""
    at = e.fire_at if e.fire_at is not None else e.created_at
    return (at if at is not None else t0) - t0


def where(e: Event, spans: Sequence[PhaseSpan], t0: float) -> tuple[int | None, int | None]:
    """(the phase event E belongs to, None if it fell in a switch; the phase switched into, for one that did)."""
    t = round(pc_moment(e, t0), 6)                 # (the spans' moments are to the microsecond too)
    k = phase_of(t, spans)
    return (k, None) if k is not None else (None, next((i for i, s in enumerate(spans) if t < s.start_s), None))


def phase_events(spans: Sequence[PhaseSpan], events: Sequence[Event], t0: float) -> tuple[list[list[Event]], list[int]]:
    """The events of each phase, and how many fell in the switch into each (none for the first: it is in place
    before the first event is made)."""
    by: list[list[Event]] = [[] for _ in spans]
    switching = [0] * len(spans)
    for e in events:
        k, nxt = where(e, spans, t0)
        if k is not None:
            by[k].append(e)
        elif nxt is not None:
            switching[nxt] += 1
    return by, switching


def boundaries(plan: PhasePlan, spans: Sequence[PhaseSpan]) -> list[dict[str, Any]]:
    """Each phase of PLAN as far as SPANS go: its name, condition, stress-ng command, planned and actual boundaries
    (seconds from the run's start) and error; a phase not reached (yet, or ever: the run ended early) planned only,
    its start_s and end_s null. The part of the sidecar's `phases` the run's journal keeps as the switches happen
    (mmsched.verdict.journal), before any event of the phase is known."""
    out: list[dict[str, Any]] = []
    for k, p in enumerate(plan.phases):
        s = spans[k] if k < len(spans) else None
        out.append({"name": p.name, "condition": p.condition, "command": s.command if s is not None else None,
                    "planned_start_s": plan.starts_s[k], "planned_s": p.duration_s,
                    "start_s": s.start_s if s is not None else None, "end_s": s.end_s if s is not None else None,
                    "error": s.error if s is not None else None})
    return out


def phases_section(plan: PhasePlan, spans: Sequence[PhaseSpan], events: Sequence[Event], t0: float,
                   bin_us: float) -> list[dict[str, Any]]:
    """The sidecar's `phases`: per phase its boundaries (boundaries()), its events (count and range), those that
    fell in the switch into it, its summary and its histogram; a phase the run never reached (it ended early: an
    interrupt, a fault) has none."""
    # one pass for the phases' ranges, then two for each phase's figures, keeping no event: a long run's events
    # are read back from disk (mmsched.model.eventstore)
    n, first, last, switching = [0] * len(spans), [None] * len(spans), [None] * len(spans), [0] * len(spans)
    for e in events:
        k, nxt = where(e, spans, t0)
        if k is not None:
            n[k] += 1
            first[k] = e.event if first[k] is None else first[k]
            last[k] = e.event
        elif nxt is not None:
            switching[nxt] += 1

    def of(k: int) -> Iterator[Event]:
        return (e for e in events if where(e, spans, t0)[0] == k)
    out = []
    for k, entry in enumerate(boundaries(plan, spans)):
        reached = k < len(spans)
        out.append({**entry, "events": n[k] if reached else 0, "first_event": first[k] if reached else None,
                    "last_event": last[k] if reached else None, "switch_events": switching[k] if reached else 0,
                    "summary": summarize(of(k) if reached else []),
                    "histogram": latency_histogram(of(k) if reached else [], bin_us)})
    return out


def phase_reasons(spans: Sequence[PhaseSpan]) -> list[Reason]:
    """A phase whose condition could not be started ran with nothing added: its figures are not of its
    condition, so the run is invalid (as a --load that cannot start makes it)."""
    return [Reason("load_unavailable", f"--phases {s.error}: the phase ran with nothing added") for s in spans
            if s.error is not None]


def format_phases(section: Sequence[dict[str, Any]]) -> str:
    """`mmrig run`'s lines for a run in phases: each phase's boundaries, events and latency figures (us)."""
    def us(v: Any) -> str:
        return "-" if v is None else f"{v:.1f}"
    lines = [f"{'phase':<10} {'condition':<9} {'from_s':>9} {'to_s':>9} {'events':>7} {'n':>7} {'mean_us':>9} "
             f"{'p99_us':>9} {'max_us':>9}  ok/late/early/missed/lost"]
    for p in section:
        s, o = p["summary"], p["summary"]["outcomes"]
        span = "not reached" if p["start_s"] is None else f"{p['start_s']:>9.3f} {p['end_s']:>9.3f}"
        lines.append(f"{p['name']:<10} {p['condition']:<9} {span:>19} {p['events']:>7} {s['n']:>7} "
                     f"{us(s['mean_us']):>9} {us(s['p99_us']):>9} {us(s['max_us']):>9}  "
                     f"{o['ok']}/{o['late']}/{o['early']}/{o['missed']}/{o['lost']}"
                     + (f"  ({p['switch_events']} fell in the switch into it: in the whole only)"
                        if p["switch_events"] else "") + (f"  ERROR {p['error']}" if p["error"] else ""))
    return "\n".join(lines)
