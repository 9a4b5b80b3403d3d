"""The accounting invariant (BRIEF.md, docs/data-format.md): every event the scheduler created ends in
exactly one terminal row, with a reason exactly when it is not ok, and a latency exactly when it was
measured (or, on a row a fault of the rig touched, when its RESULT came before the fault made it lost). Checked at the end of every run; a violation fails the run."""

from __future__ import annotations

from typing import Any, Sequence

from ..model.event import OUTCOMES, REASONS, Event


class InvariantViolation(AssertionError):
    pass


def check_invariant(events: Sequence[Event], created: int, summary: dict[str, object] | None = None) -> None:
    problems: list[str] = []
    if len(events) != created:
        problems.append(f"{created} events created, {len(events)} rows")
    # one pass over the rows (a long run's are read back from disk: eventstore.py); the tags are checked for
    # reuse only where they cannot wrap (16 bits)
    tags: list[int] | None = [] if len(events) <= 0xFFFF else None
    in_order, measured, rows = True, 0, 0
    for k, e in enumerate(events):
        rows += 1
        in_order = in_order and e.event == k
        measured += e.outcome in ("ok", "late") and e.measurable
        if tags is not None and e.mode != "verification":     # (the executor's own restart after its reset)
            tags.append(e.tag)
        if e.outcome not in OUTCOMES:
            problems.append(f"event {e.event}: no terminal outcome ({e.outcome!r})")
        elif (e.outcome == "ok") != (e.reason is None) or (e.reason is not None and e.reason not in REASONS):
            problems.append(f"event {e.event}: outcome {e.outcome} with reason {e.reason!r}")
        elif (e.outcome in ("ok", "late", "early")) != (e.latency_us is not None) \
                and not (e.outcome == "lost" and e.reason == e.fault):
            # (a row a fault of the rig touched keeps the latency its RESULT gave: lost, but nothing thrown away)
            problems.append(f"event {e.event}: outcome {e.outcome} with latency {e.latency_us!r}")
    if not in_order or rows != len(events):
        problems.append("event numbers are not 0..n-1 in creation order")
    if summary is not None:
        outs = summary["outcomes"]
        assert isinstance(outs, dict)
        if sum(outs.values()) != len(events):
            problems.append(f"outcome counts {outs} do not add up to {len(events)} events")
        if summary["n"] != measured:
            problems.append(f"summary n {summary['n']} != ok + late less the unmeasurable ({measured})")
    if tags is not None and len(set(tags)) != len(tags):
        problems.append("a tag was used twice in one run")
    if problems:
        raise InvariantViolation("; ".join(problems[:10]) + (f" (+{len(problems) - 10} more)" if len(problems) > 10 else ""))


def judged(events: Sequence[Event], created: int, summary: dict[str, Any]) -> dict[str, Any]:
    """The sidecar's `invariant` for a run's rows: {"ok": True, "error": None}, or why it broke."""
    try:
        check_invariant(events, created, summary)
    except InvariantViolation as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": True, "error": None}
