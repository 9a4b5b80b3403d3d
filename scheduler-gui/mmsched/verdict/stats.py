"""Statistics of a run in the scheduler: the run summary (the one definition in mmanalysis.latstats) and
mixed mode's slack distribution."""

from __future__ import annotations

from array import array
from typing import Iterable

import numpy as np

from mmanalysis.latstats import summarize_rows, variance_text
from mmanalysis.phasebars import phase_histogram
from mmanalysis.schema import NOMINAL_TICK_S

from ..model.event import Event


def summarize(events: Iterable[Event]) -> dict[str, object]:
    """The sidecar's summary of these events (mmanalysis.latstats.run_summary)."""
    return summarize_rows(events)


def slack_distribution(events: Iterable[Event]) -> dict[str, object]:
    """Mixed mode: slack (ticks left when the executor had the event) of on-time and refused events,
    so a 1-tick-ahead run's misses can be explained from data. The created-phase histogram is in
    mmanalysis.phasebars' bins: ten of 0.1 over the tick, then one for phase >= 1 (an event created after the
    next tick began but before its TIMECODE frame arrived: the scheduler still counted the old tick)."""
    # one pass keeping numbers (a long run's events are read back from disk: eventstore.py), and the refused
    # past_due ones (late_schedules: a handful in a run that is not broken)
    n = {"ok": 0, "missed": 0}
    slack: dict[str, array] = {"ok": array("d"), "missed": array("d")}
    phase: dict[str, array] = {"ok": array("d"), "missed": array("d")}
    refused: list[Event] = []
    for e in events:
        if e.outcome in n:
            n[e.outcome] += 1
            if e.slack_ticks is not None:
                slack[e.outcome].append(e.slack_ticks)
            if e.created_phase is not None:
                phase[e.outcome].append(e.created_phase)
        if e.reason == "past_due":
            refused.append(e)
    out: dict[str, object] = {}
    for label in ("ok", "missed"):
        s, ph = np.frombuffer(slack[label], dtype=float), np.frombuffer(phase[label], dtype=float)
        out[label] = {"n": n[label],
                      "slack_min": float(s.min()) if s.size else None,
                      "slack_p50": float(np.median(s)) if s.size else None,
                      "created_phase_min": float(ph.min()) if ph.size else None,
                      "created_phase_max": float(ph.max()) if ph.size else None,
                      "created_phase_histogram": phase_histogram(ph)}
    out["past_due"] = late_schedules(refused)
    return out


CAUSES = ("creation", "stall", "write", "line")    # late_schedules' causes of a refusal, in the order it names them


def refusal_cause(e: Event, tick_s: float = NOMINAL_TICK_S) -> str:
    """Why the executor refused E past_due, from its row and its SCHEDULE's write: `creation` (made at or past
    its own distance: created_phase >= distance, the SCHEDULE had no slack to lose; stall_us says by how much a
    host stall delayed it), `stall` (a host stall held its SCHEDULE past the mode's bound: not measurable,
    stall_us), `write` (the PC's write call took the larger part of the journey) or `line` (the line and the
    executor's reading took it)."""
    if e.created_phase is not None and e.scheduled_tc - e.created_tc - e.created_phase <= 0:
        return "creation"
    if not e.measurable and e.stall_us is not None:
        return "stall"
    sent = e.bytes.sent
    if sent is not None and sent.ended is not None and e.ack_tc is not None and e.created_phase is not None:
        write_s = sent.ended - sent.at
        journey_s = (e.ack_tc - e.created_tc - e.created_phase) * tick_s
        if write_s >= journey_s - write_s:
            return "write"
    return "line"


def _ms_range(xs: list[float]) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo / 1000:.0f} ms" if round(lo / 1000) == round(hi / 1000) else f"{lo / 1000:.0f}-{hi / 1000:.0f} ms"


def _phase_range(xs: list[float]) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.2f}" if round(lo, 2) == round(hi, 2) else f"{lo:.2f}-{hi:.2f}"


def late_schedules(events: list[Event], tick_s: float = NOMINAL_TICK_S) -> dict[str, object]:
    """Mixed mode: the events the executor refused past_due, each by its cause (refusal_cause), in words that
    name it. An ERROR carries the executor's tick at receipt but no phase, so a SCHEDULE's journey is known from
    below: it reached the executor no sooner than the start of that tick, `ack_tc - created_tc - created_phase`
    ticks after its creation, while its slack at creation was `scheduled_tc - created_tc - created_phase` ticks.
    The journey and slack figures are over the SCHEDULEs that had a slack to lose (made before their distance ran
    out): one made too late has none, and its words say when it was made instead. On boards a slow line (or a PC
    slow to write) is part of the system: this says how slow, instead of leaving a bare past_due."""
    sel = [e for e in events if e.reason == "past_due" and e.ack_tc is not None and e.created_phase is not None]
    if not sel:
        return {"n": 0, "text": None}
    by: dict[str, list[Event]] = {c: [] for c in CAUSES}
    for e in sel:
        by[refusal_cause(e, tick_s)].append(e)
    travelled = [e for c in CAUSES if c != "creation" for e in by[c]]
    out: dict[str, object] = {"n": len(sel), "causes": {c: len(v) for c, v in by.items()}}
    parts = []
    if made := by["creation"]:
        phases = [float(e.created_phase) for e in made if e.created_phase is not None]
        stalls = [float(e.stall_us) for e in made if e.stall_us is not None]
        ahead = sorted({e.scheduled_tc - e.created_tc for e in made})
        # stall_us on such a row: how late it was made (mmsched.verdict.validity: a TIMECODE a host stall held, or the
        # scheduler reading its TIMECODEs late); the event is then not measurable, the rig's
        why = (f"a stall of {_ms_range(stalls)} (stall_us) delayed {'its' if len(made) == 1 else 'their'} creation "
               "(the rig's, not the system's)" if stalls else "the PC read its TIMECODE late")
        parts.append(f"{len(made)} made too late: created at tick phase {_phase_range(phases)}, at or past "
                     f"{'its' if len(made) == 1 else 'their'} distance of {'/'.join(map(str, ahead))} "
                     f"tick{'s' if ahead != [1] else ''}, so due before {'it was' if len(made) == 1 else 'they were'} "
                     f"made: {why}")
    if held := by["stall"]:
        parts.append(f"{len(held)} held by a host stall of {_ms_range([float(e.stall_us) for e in held])} on "
                     "the way (not measurable: the rig's, not the system's)")
    if travelled:
        journey = np.array([e.ack_tc - e.created_tc - e.created_phase for e in travelled], dtype=float)
        slack = np.array([e.scheduled_tc - e.created_tc - e.created_phase for e in travelled], dtype=float)
        out |= {"journey_min_ticks_p50": round(float(np.median(journey)), 6),
                "journey_min_ticks_max": round(float(journey.max()), 6),
                "slack_at_creation_ticks_p50": round(float(np.median(slack)), 6)}
        if wrote := by["write"]:
            took = [float(e.bytes.sent.ended - e.bytes.sent.at) * 1e6 for e in wrote]   # type: ignore[union-attr]
            parts.append(f"{len(wrote)} because the PC's write took {_ms_range(took)}, the larger part of the "
                         "journey")
        if line := by["line"]:
            parts.append(f"{len(line)} because the line and the PC's writing took longer than the distance "
                         "allows")
        parts.append(f"the SCHEDULEs that had a slack reached the executor at least {np.median(journey):.2f} "
                     f"ticks after they were made (median; up to {journey.max():.2f}), against a slack of "
                     f"{np.median(slack):.2f} ticks at creation (median)")
    out["text"] = f"{len(sel)} events refused past_due: " + "; ".join(parts)
    return out


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
