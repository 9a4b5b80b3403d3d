"""FIREs the profiler lost while it may still have held the one before: the 8051 takes one FIRE at a time
(grid.holds_one_fire) and frees it only once its RESULT has been sent (grid.fire_busy_s). Such a loss is the rig's,
judged by cause: the event not measurable (validity.judge), its no_answer fault excused and the profiler's
result_overflows it cost not counted again (docs/kilohertz.md)."""

from __future__ import annotations

from typing import Any

from .grid import fire_busy_s
from .validity import ByteRecord, Cause


def crowded_fires(events: list[Any], record: ByteRecord, busy_s: float) -> dict[int, Cause]:
    """Normal mode on a profiler that takes one FIRE at a time (grid.holds_one_fire): the events whose FIRE
    went unanswered though it entered the profiler's line less than `busy_s` (grid.fire_busy_s) after the
    FIRE before it, which the profiler may still have held. Either the line brought the two closer than
    the PC wrote them (a displacement of the endpoint: the firing thread keeps them further apart, firing.py)
    or the profiler held the one before for longer than the gap allowed for: the loss is the rig's either
    way, and only that event is not measurable (the one before was answered). (A paced run beside a busy
    host: a FIRE entered the 8051's line 48 ms after the PC wrote it, the next one, written 73 ms later,
    25 ms after it, and was lost.)"""
    fires = sorted((e for e in events if e.mode == "normal" and e.bytes.sent is not None),
                   key=lambda e: e.bytes.sent.at)
    out: dict[int, Cause] = {}
    for before, e in zip(fires, fires[1:]):
        if e.outcome != "lost" or e.reason != "no_answer":
            continue
        a = record.entry(before.bytes.sent.node, before.bytes.sent.gen, before.bytes.sent.offset)
        b = record.entry(e.bytes.sent.node, e.bytes.sent.gen, e.bytes.sent.offset)
        if a is None or b is None:
            continue
        on_line, wrote = b.entered - a.entered, e.bytes.sent.at - before.bytes.sent.at
        if on_line < busy_s:
            out[e.event] = Cause("crowded FIRE", round((busy_s - on_line) * 1e6, 1),
                                 f"FIRE entered the profiler's line {on_line * 1e3:.1f} ms after event {before.event}'s "
                                 f"(written {wrote * 1e3:.1f} ms after it): the profiler, which takes one FIRE at a "
                                 f"time, may still have held that one")
    return out


def counters_explained(crowded: dict[int, Cause]) -> dict[str, dict[str, int]]:
    """The profiler's COUNTERS rise the crowded FIREs account for, one result_overflows each (node_a: SPEC.md
    section 5), for recovery.judge_counters."""
    return {"profiler": {"node_a": len(crowded)}}


def judge_crowding(events: list[Any], record: ByteRecord | None, one_fire: bool, baud: int, faults: Any
                   ) -> dict[int, Cause]:
    """A normal run's crowded FIREs (`crowded_fires`) on a profiler that takes one FIRE at a time, their
    no_answer faults excused in `faults` (a FaultLedger); {} for any other run or without a byte record."""
    if not one_fire or record is None:
        return {}
    crowded = crowded_fires(events, record, fire_busy_s(baud))
    if crowded:
        faults.excuse([e for e in events if e.event in crowded], "no_answer",
                      "the profiler may still have held the FIRE before (measurability.events)")
    return crowded
