"""FIREs the profiler lost because the ones before came to it faster than it takes them: the 8051 takes one FIRE at
a time (grid.holds_one_fire) and frees it only once its RESULT has been sent (grid.fire_busy_s); the AVR keeps a
ring of AVR_RING results and puts each out in its own time per event (grid.event_busy_s), so a FIRE is lost only
when the AVR_RING before it came faster than that. The firing thread never writes two FIREs that close
(grid.line_gap_s): FIREs that arrive so are the rig's doing (the bench's input path handing over a stall's bytes at
once, or the firing thread's gap too short). Such a loss is the rig's, judged by cause: the event not measurable
(validity.judge), its no_answer fault excused and the profiler's result_overflows it cost not counted again
(docs/kilohertz.md)."""

from __future__ import annotations

from bisect import insort
from typing import Any, Iterable

from ..model.grid import event_busy_s, fire_busy_s
from ..model.byterecord import ByteRecord
from .validity import Cause


# The AVR profiler's result ring (profiler-fw/board/avr/pf_board_cfg.h: PF_RING_LEN): a FIRE is lost to it only
# when this many RESULTs wait to go out
AVR_RING = 32


# How far a FIRE may come before one made earlier in the order of writing: the firing thread writes them in the
# order of their moments, which is the order they are made (a grid's moments inside one tick are made in order
# too); this many is room beyond that for a reorder the rig never makes.
SETTLE = 256


def crowded_fires(events: Iterable[Any], record: ByteRecord, busy_s: float, window: int = 1) -> dict[int, Cause]:
    """Normal mode: the events whose FIRE went unanswered though it entered the profiler's line less than
    `window` x `busy_s` after the FIRE `window` before it: faster than the profiler takes them. On a profiler that
    takes one FIRE at a time (window 1, busy_s grid.fire_busy_s) it may still have held the one before; on the AVR
    (window AVR_RING, busy_s grid.event_busy_s) its ring may have been full. Either the line brought them closer
    than the PC wrote them (a displacement of the endpoint: the firing thread keeps them further apart, firing.py)
    or the profiler took longer than allowed for: the loss is the rig's either way, and only that event is not
    measurable (the ones before were answered). (A paced run beside a busy host: a FIRE entered the 8051's line
    48 ms after the PC wrote it, the next one, written 73 ms later, 25 ms after it, and was lost.)

    One pass over `events` in the order made (a long run's are read back from its scratch file, eventstore.py),
    holding the last `window` + SETTLE FIREs in the order written: each is judged once the FIREs written before
    it have all come."""
    out: dict[int, Cause] = {}
    fires: list[Any] = []                    # the last FIREs, in the order written

    def judge(before: Any, e: Any) -> None:
        if e.outcome != "lost" or e.reason != "no_answer":
            return
        a = record.entry(before.bytes.sent.node, before.bytes.sent.gen, before.bytes.sent.offset)
        b = record.entry(e.bytes.sent.node, e.bytes.sent.gen, e.bytes.sent.offset)
        if a is None or b is None:
            return
        on_line, wrote = b.entered - a.entered, e.bytes.sent.at - before.bytes.sent.at
        if on_line >= busy_s * window:
            return
        if window == 1:
            why = (f"FIRE entered the profiler's line {on_line * 1e3:.1f} ms after event {before.event}'s "
                   f"(written {wrote * 1e3:.1f} ms after it): the profiler, which takes one FIRE at a time, may "
                   "still have held that one")
        else:
            why = (f"FIRE entered the profiler's line {on_line * 1e3:.1f} ms after event {before.event}'s, "
                   f"{window} FIREs before it (written {wrote * 1e3:.1f} ms apart): faster than the profiler puts "
                   f"their RESULTs out ({busy_s * 1e6:.0f} us each), its ring of {window} full")
        out[e.event] = Cause("crowded FIRE", round((busy_s * window - on_line) * 1e6, 1), why)

    for e in events:
        if e.mode != "normal" or e.bytes.sent is None:
            continue
        insort(fires, e, key=lambda f: f.bytes.sent.at)
        if len(fires) > window + SETTLE:     # the first `window` of the run are never judged: none came before
            judge(fires[0], fires[window])
            del fires[0]
    for i in range(window, len(fires)):
        judge(fires[i - window], fires[i])
    return out


def counters_explained(crowded: dict[int, Cause]) -> dict[str, dict[str, int]]:
    """The profiler's COUNTERS rise the crowded FIREs account for, one result_overflows each (node_a: SPEC.md
    section 5), for recovery.judge_counters."""
    return {"profiler": {"node_a": len(crowded)}}


def judge_crowding(events: Iterable[Any], record: ByteRecord | None, one_fire: bool, baud: int, faults: Any
                   ) -> dict[int, Cause]:
    """A normal run's crowded FIREs (`crowded_fires`: one at a time on the 8051, the ring's worth on the AVR),
    their no_answer faults excused in `faults` (a FaultLedger); {} without a byte record."""
    if record is None:
        return {}
    crowded = (crowded_fires(events, record, fire_busy_s(baud)) if one_fire
               else crowded_fires(events, record, event_busy_s(baud), AVR_RING))
    if crowded:
        faults.excuse(crowded.keys(), "no_answer",
                      "the FIREs before it came to the profiler faster than it takes them (measurability.events)")
    return crowded
