"""Statistics of a run in the scheduler: the run summary (the one definition in mmanalysis.latstats) and
mixed mode's slack distribution."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from mmanalysis.latstats import summarize_rows, variance_text
from mmanalysis.phasebars import phase_histogram

from ..model.event import Event


def summarize(events: Iterable[Event]) -> dict[str, object]:
    """The sidecar's summary of these events (mmanalysis.latstats.run_summary)."""
    return summarize_rows(events)


def slack_distribution(events: Iterable[Event]) -> dict[str, object]:
    """Mixed mode: slack (ticks left when the executor had the event) of on-time and refused events,
    so a 1-tick-ahead run's misses can be explained from data. The created-phase histogram is in
    mmanalysis.phasebars' bins: ten of 0.1 over the tick, then one for phase >= 1 (an event created after the
    next tick began but before its TIMECODE frame arrived: the scheduler still counted the old tick)."""
    out: dict[str, object] = {}
    evs = list(events)
    for label, sel in (("ok", [e for e in evs if e.outcome == "ok"]),
                       ("missed", [e for e in evs if e.outcome == "missed"])):
        s = np.array([e.slack_ticks for e in sel if e.slack_ticks is not None], dtype=float)
        ph = np.array([e.created_phase for e in sel if e.created_phase is not None], dtype=float)
        out[label] = {"n": len(sel),
                      "slack_min": float(s.min()) if s.size else None,
                      "slack_p50": float(np.median(s)) if s.size else None,
                      "created_phase_min": float(ph.min()) if ph.size else None,
                      "created_phase_max": float(ph.max()) if ph.size else None,
                      "created_phase_histogram": phase_histogram(ph)}
    out["past_due"] = late_schedules(evs)
    return out


def late_schedules(events: list[Event]) -> dict[str, object]:
    """Mixed mode: the events the executor refused past_due, explained by their SCHEDULE's journey against
    their slack. An ERROR carries the executor's tick at receipt but no phase, so the journey is known from
    below: it reached the executor no sooner than the start of that tick, `ack_tc - created_tc -
    created_phase` ticks after its creation, while its slack at creation was `scheduled_tc - created_tc -
    created_phase` ticks. On boards a slow line (or a PC slow to write) is part of the system: this says
    how slow, instead of leaving a bare past_due."""
    sel = [e for e in events if e.reason == "past_due" and e.ack_tc is not None and e.created_phase is not None]
    if not sel:
        return {"n": 0, "text": None}
    journey = np.array([e.ack_tc - e.created_tc - e.created_phase for e in sel], dtype=float)
    slack = np.array([e.scheduled_tc - e.created_tc - e.created_phase for e in sel], dtype=float)
    text = (f"{len(sel)} events refused past_due: their SCHEDULE reached the executor at least "
            f"{np.median(journey):.2f} ticks after it was made (median; up to {journey.max():.2f}), against a slack "
            f"of {np.median(slack):.2f} ticks (median): the line and the PC's writing took longer than the "
            f"distance allows")
    return {"n": len(sel), "journey_min_ticks_p50": round(float(np.median(journey)), 6),
            "journey_min_ticks_max": round(float(journey.max()), 6),
            "slack_at_creation_ticks_p50": round(float(np.median(slack)), 6), "text": text}


def format_summary(name: str, s: dict[str, object]) -> str:
    o = s["outcomes"]
    assert isinstance(o, dict)

    def f(key: str) -> str:
        v = s.get(key)
        return "-" if v is None else f"{v:.3f}"
    # n + left out = ok + late: the measured events a host stall displaced a byte of are counted, not in n
    left_out = int(o["ok"]) + int(o["late"]) - int(s["n"])   # type: ignore[call-overload]
    head = f"{'run':<22} {'n':>5} {'left out':>8} {'mean_us':>10} {'variance':>16} {'min_us':>10} {'p50_us':>10} " \
           f"{'p99_us':>10} {'p99.9_us':>10} {'max_us':>10}  ok/late/early/missed/lost"
    var = variance_text(s.get("variance_us2"))   # type: ignore[arg-type]
    line = f"{name:<22} {s['n']:>5} {left_out:>8} {f('mean_us'):>10} {var:>16} {f('min_us'):>10} {f('p50_us'):>10} " \
           f"{f('p99_us'):>10} {f('p999_us'):>10} {f('max_us'):>10}  " \
           f"{o['ok']}/{o['late']}/{o['early']}/{o['missed']}/{o['lost']}"
    return head + "\n" + line
