"""Validity by cause: which events of a run the rig can stand behind (docs/bench.md, "Validity by cause").

A paced bench keeps virtual time on wall time, and the host sometimes stalls it for a few milliseconds.
Everything that happens inside the simulation happens in virtual time, which no stall can bend; what a
stall can bend is where the simulation meets the PC: the moment a byte the PC wrote entered a node's line,
and the moment a byte a node sent reached the PC. An event's figure depends on a handful of those byte
moments, so an event is judged by them, not by whether a stall happened anywhere near it:

- normal mode: the latency is the FIRE's stamp minus the tick's start. It is bent by (a) the moment the
  FIRE entered the profiler's line (on the bench: the stamp its bytes got on the host clock, against the
  return of the PC's write: the write call itself and the firing thread's wake-up are the PC's, its result),
  (b) the moment the TIMECODE frame the PC placed its FIRE by reached the PC (held back, it makes the PC fire
  late) and (c) with the native firing thread, the moment the run's own loop queued the FIRE: queued after its
  moment, no thread could have met it (a "late feed", the rig's). Which frame: the naive estimator's minimum filter rests on one
  frame of its window (`TimecodeTracker.basis`); the disciplined one (servo.py) rests on the FIRE whose
  bound anchors it, and the TIMECODE frames only pick the tick.
- mixed mode: the latency is measured inside the simulation (the executor's edge against the profiler's
  capture). A displacement can change only the outcome, through the SCHEDULE's entry into the executor's
  line and the TIMECODE frame the event was created from (and a creation from a stale view: a frame due
  before the event was made but held past that moment). An event that still ended on time is measurable
  whatever its bytes met; its displacement is kept in `stall_us` (the slack it cost).
- verification: the executor makes its own events; no byte of the PC's is in them.

An event is not measurable when one of its bytes was displaced past the mode's bound (the bench's lag
bound: 1 ms in normal mode; a tenth of a SCHEDULE's spare time in mixed mode, mmhil.endpoint); `stall_us`
says by how much and the sidecar's `measurability.events` which byte. The scheduler's own late creations
(it read its TIMECODEs late; mixed and verification: `late_creations`) stay as they were. A run is invalid
when more than MAX_UNMEASURABLE_SHARE of its events are not measurable.

The bytes are noted as each event is made (eventbytes.py) and looked up in what the endpoint recorded of the
bytes it carried (byterecord.py; the paced bench's); where there is none (boards, lockstep) only late creations
are judged.

Used by `mmsched.run.runner` (a run's events) and `mmhil.Rig` (a HIL script's events), one rule for both.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from mmanalysis.schema import MAX_UNMEASURABLE_SHARE
from mmproto import Timecode
from mmproto.wiretime import wire_time_s

from ..model.byterecord import ByteRecord, Stall, stall_time_share
from ..model.eventbytes import Basis, EventBytes, Sent
from ..model.framearrivals import FrameArrivals

# How far past its own TIMECODE frame's line time an event may be made before it counts as the scheduler's
# own late creation: a tenth of a tick (7.1 ms), far above the few hundred us a paced run's reader takes.
LATE_READ_MARGIN_TICKS = 0.1


@dataclass(frozen=True)
class Cause:
    """One byte an endpoint displaced: which (`byte`, words for people in `detail`) and by how much."""

    byte: str
    us: float
    detail: str


def entered_at(record: ByteRecord, sent: Sent | None) -> float | None:
    """When the first byte of `sent` went onto its node's line, on the host clock (None: not in the record)."""
    e = record.entry(sent.node, sent.gen, sent.offset) if sent is not None else None
    return e.entered if e is not None else None


def entry_delay(record: ByteRecord, sent: Sent, what: str) -> Cause | None:
    """How long after the PC's write of `sent` returned its first byte went onto the node's line: the rig's part
    (the host side's hop, the bench's reader waking, the simulation's lead), or None if the record does not hold
    it. Counted from the write's return, not its start: a slow write call is the PC's own (the budget's
    write_us), never a fault of the rig, as a late wake-up of the firing thread is the PC's (wakeup_us)."""
    e = record.entry(sent.node, sent.gen, sent.offset)
    if e is None:
        return None
    us = max(0.0, e.entered - sent.returned) * 1e6
    return Cause(what, round(us, 1), f"{what} entered the {sent.node}'s line {us:.0f} us after the PC's write "
                                     f"returned (the bench's reader late: the rig's)")


def timecode_held(record: ByteRecord, basis: Basis, what: str, frames: FrameArrivals | None = None) -> Cause:
    """How late the bench handed over the TIMECODE frame of `basis`: the longest hold of a byte due from the
    tick's start (widened by 2 ms for the estimate's own error) to the frame's arrival, and no more than the frame
    arrived behind its neighbours (`frames`, framearrivals.py): a hold of its first bytes that ended before its
    last leaves its arrival, and every estimate resting on it, where it was."""
    held = record.held_between("profiler", basis.start - 0.002, basis.arrived)
    excess = frames.excess(basis.tick, basis.arrived) if frames is not None else None
    if excess is None or held <= excess:
        us = held * 1e6
        return Cause(what, round(us, 1), f"{what} (tick {basis.tick}) reached the PC {us:.0f} us late")
    us = excess * 1e6
    return Cause(what, round(us, 1), f"{what} (tick {basis.tick}) reached the PC {us:.0f} us behind its neighbours "
                                     f"(the bench held bytes near it up to {held * 1e6:.0f} us)")


def causes(mode: str, deps: EventBytes, record: ByteRecord, frames: FrameArrivals | None = None) -> list[Cause]:
    """Every displacement the record shows on the bytes of one event (the largest first); `frames`: the run's
    TIMECODE arrivals, which bound how late a frame it rests on was (timecode_held)."""
    out: list[Cause | None] = []
    if mode == "normal":
        if deps.fed is not None and deps.fed.at > deps.fed.aimed:
            us = (deps.fed.at - deps.fed.aimed) * 1e6
            out.append(Cause("late feed", round(us, 1), f"the run queued the FIRE {us:.0f} us after its moment: its own "
                                                         "loop was late (the rig's), not the PC's firing thread"))
        if deps.sent is not None:
            out.append(entry_delay(record, deps.sent, "FIRE"))
        if deps.anchor is not None:
            out.append(entry_delay(record, deps.anchor, "anchor FIRE"))
        elif deps.basis is not None:
            out.append(timecode_held(record, deps.basis, "TIMECODE", frames))
    elif mode == "mixed":
        if deps.sent is not None:
            out.append(entry_delay(record, deps.sent, "SCHEDULE"))
        if deps.basis is not None:
            out.append(timecode_held(record, deps.basis, "TIMECODE", frames))
        if deps.created_at is not None:
            stale = record.held_across("profiler", deps.created_at) * 1e6
            if stale > 0:
                out.append(Cause("stale view", round(stale, 1), f"a frame due before the event was made was held "
                                                                 f"{stale:.0f} us past that moment"))
    return sorted((c for c in out if c is not None), key=lambda c: -c.us)


def deciding(mode: str, outcome: str | None, reason: str | None, found: list[Cause], bound_us: float) -> Cause | None:
    """The displacement past the bound that makes the event not measurable, or None. Mixed mode: only if
    the event did not end on time (a SCHEDULE that arrived late but before its deadline changed nothing)."""
    past = [c for c in found if c.us > bound_us]
    if not past or mode == "verification":
        return None
    if mode == "mixed" and (outcome == "ok" or (outcome == "missed" and reason != "past_due") or outcome == "lost"):
        return None
    return past[0]


def late_creation(mode: str, created_phase: float | None, distance: int, stale_phase: float) -> bool:
    """The scheduler's own stall (mixed, verification): an event made at or after its own scheduled moment
    because the scheduler read its TIMECODEs late (created_phase past the distance and past `stale_phase`,
    one tick plus the frame's line time plus LATE_READ_MARGIN_TICKS: a free-running timer that expires just
    after a tick began, before that tick's frame crossed the line, is no stall; docs/bench.md). Normal mode:
    the PC is what is measured, its lateness is the result."""
    return mode != "normal" and created_phase is not None and created_phase >= max(distance, stale_phase)


# ---- a run's judgement ----------------------------------------------------------------------------

@dataclass
class Judgement:
    """Validity by cause over a run's events: the marked ones with their cause, the figures for the sidecar."""

    marked: dict[int, Cause] = field(default_factory=dict)        # event -> what made it not measurable
    kept: dict[int, Cause] = field(default_factory=dict)          # displaced past the bound, still on time
    delays_us: list[float] = field(default_factory=list)          # each judged event's largest displacement
    unjudged: int = 0                     # events whose bytes neither the record nor the stall intervals reach
    by_stalls: int = 0                    # events whose bytes the record no longer held, judged by the stalls

    def merge(self, other: "Judgement") -> None:
        """OTHER's events judged with these (a long run's retired events, judged as they left: retirement.py)."""
        self.marked.update(other.marked)
        self.kept.update(other.kept)
        self.delays_us.extend(other.delays_us)
        self.unjudged += other.unjudged
        self.by_stalls += other.by_stalls

    def share(self, events: int) -> float:
        return len(self.marked) / events if events else 0.0

    def figures(self, events: int, stalls: list[Stall], window: tuple[float, float] | None, bound_us: float | None,
                late_creations: int) -> dict[str, Any]:
        """The sidecar's `measurability` section."""
        d = sorted(self.delays_us)

        def q(p: float) -> float | None:
            return None if not d else round(d[min(len(d) - 1, math.ceil(p * len(d)) - 1)], 1)
        return {"rule": "by cause", "bound_us": bound_us, "stalls": len(stalls),
                "stall_time_share": round(stall_time_share(stalls, *window), 6) if window else None,
                "late_creations": late_creations, "unmeasurable": len(self.marked),
                "unmeasurable_share": round(self.share(events), 6), "max_unmeasurable_share": MAX_UNMEASURABLE_SHARE,
                "displacement_us": {"n": len(d), "p50": q(0.5), "p99": q(0.99), "max": d[-1] if d else None},
                "unjudged": self.unjudged, "judged_by_stalls": self.by_stalls,
                "events": [{"event": i, "byte": c.byte, "us": c.us, "detail": c.detail, "measurable": False}
                           for i, c in sorted(self.marked.items())]
                + [{"event": i, "byte": c.byte, "us": c.us, "detail": c.detail, "measurable": True}
                   for i, c in sorted(self.kept.items())]}


# A byte written this long before a stall began may still have been on its way into the bench when it stalled
# (the pty's hop and the bench's reader: tens of microseconds, a frame's line time at 9600 baud about 20 ms)
STALL_REACH_S = 0.025


def byte_moments(deps: EventBytes) -> list[float]:
    """The host moments an event's bytes went on their way: its FIRE or SCHEDULE written, its anchor FIRE
    written, its TIMECODE complete."""
    return [t for t in (deps.sent.at if deps.sent is not None else None,
                        deps.anchor.at if deps.anchor is not None else None,
                        deps.basis.arrived if deps.basis is not None else None) if t is not None]


def stall_cause(moments: list[float], stalls: Sequence[Stall], bound_us: float) -> Cause | None:
    """An event whose bytes the record no longer holds (it keeps the last 65,536 reads), judged by the stall
    intervals instead: the largest stall past the bound that one of its bytes' `moments` lies in (from
    STALL_REACH_S before it began to its end), which may have displaced that byte as far; None if none did. The
    stalls the bench's, one after another."""
    worst: Stall | None = None
    for t in moments:
        i = bisect.bisect_right(stalls, t + STALL_REACH_S, key=lambda st: st.start) - 1
        while i >= 0 and stalls[i].end >= t:      # (one after another: an earlier one ended earlier)
            if stalls[i].lag_us > bound_us and (worst is None or stalls[i].lag_us > worst.lag_us):
                worst = stalls[i]
            i -= 1
    if worst is None:
        return None
    return Cause("stall", round(worst.lag_us, 1), f"a host stall of {worst.lag_us:.0f} us met its bytes on their "
                 "way; the bench's record, which keeps its last 65,536 reads, no longer holds them to say how far")


def judge(events: list[Any], record: ByteRecord | None, bound_us: float | None, stale_phase: float,
          tick_s: float, crowded: dict[int, Cause] | None = None, frames: FrameArrivals | None = None,
          stalls: Sequence[Stall] = (), stalls_since: float | None = None) -> Judgement:
    """Judges every event (objects with `event`, `mode`, `outcome`, `reason`, `distance`, `created_phase` and
    `bytes`, an EventBytes) and marks them: `measurable` False and `stall_us` where a displacement past the
    bound decided it; `stall_us` alone where one was past the bound but the event still ended on time.
    `stale_phase`: late_creation's; `tick_s`: the tick, for a late creation's lag. `crowded`: lost FIREs the
    profiler may have dropped while it held the one before (crowding.crowded_fires), marked with that cause.
    `frames`: the run's TIMECODE arrivals (framearrivals.py), or None (the record's holds alone). An event whose
    bytes the record no longer holds is judged by the `stalls` (stall_cause), from `stalls_since` on (the host
    moment before which the bench dropped stalls; None: it kept them all), else counted unjudged."""
    j = Judgement()
    crowded = crowded or {}
    for e in events:
        if e.outcome == "lost":            # a fault of the rig already names it, or a displacement caused it
            if e.event in crowded:
                j.marked[e.event] = crowded[e.event]
            continue
        c = found = None
        if record is not None and bound_us is not None and e.mode != "verification":
            sent = e.bytes.sent
            found = causes(e.mode, e.bytes, record, frames)
            if sent is not None and record.entry(sent.node, sent.gen, sent.offset) is None:
                # its frame is not in the record (a long run's older than its last reads, a re-plugged port)
                moments = byte_moments(e.bytes)
                if stalls_since is not None and min(moments) < stalls_since:
                    j.unjudged += 1
                else:
                    j.by_stalls += 1
                    if (gone := stall_cause(moments, stalls, bound_us)) is not None:
                        found = sorted([*found, gone], key=lambda c: -c.us)
            if found:
                j.delays_us.append(found[0].us)
                c = deciding(e.mode, e.outcome, e.reason, found, bound_us)
        if c is not None:                  # a byte the endpoint displaced: named before a late creation it caused
            j.marked[e.event] = c          # (a TIMECODE held 70 ms makes the event from it late too)
        elif late_creation(e.mode, e.created_phase, e.distance, stale_phase):
            lag = round(e.created_phase * tick_s * 1e6, 1)
            j.marked[e.event] = Cause("late creation", lag, f"the scheduler made the event {e.created_phase:.2f} "
                                                            f"ticks into its tick: it read its TIMECODEs late")
        elif found and found[0].us > bound_us:
            j.kept[e.event] = found[0]
    for e in events:
        c = j.marked.get(e.event) or j.kept.get(e.event)
        if c is not None:
            e.stall_us = c.us
            e.measurable = e.event not in j.marked
    return j


def stale_phase(tick_s: float, baud: int) -> float:
    """late_creation's `stale_phase` at this tick and line rate: one tick, the TIMECODE frame's line time and
    LATE_READ_MARGIN_TICKS."""
    return 1.0 + wire_time_s(Timecode, baud) / tick_s + LATE_READ_MARGIN_TICKS if tick_s else 1e9


def judge_run(chunks: Iterable[list[Any]], n: int, verdict: Any, tick_s: float, baud: int,
              crowded: dict[int, Cause] | None = None, frames: FrameArrivals | None = None,
              before: Judgement | None = None) -> tuple[dict[str, Any], str | None]:
    """A run's judgement: every event judged (`judge`) by the endpoint's verdict (its byte record, bound,
    stalls and window), the sidecar's `measurability`, and why the run is invalid (more than
    MAX_UNMEASURABLE_SHARE of its `n` events not measurable) or None. The events come in `chunks` (a run's
    list whole, or a long run's retired events read back and written back a chunk at a time:
    EventStore.changing); `before`, the judgement of those judged as they retired (retirement.py)."""
    j = Judgement()
    if before is not None:
        j.merge(before)
    stale = stale_phase(tick_s, baud)
    for chunk in chunks:
        j.merge(judge(chunk, verdict.record, verdict.bound_us, stale, tick_s, crowded, frames, verdict.stalls,
                      verdict.stalls_since))
    late = sum(1 for c in j.marked.values() if c.byte == "late creation")
    share = j.share(n)
    reason = None
    if share > MAX_UNMEASURABLE_SHARE:
        worst = max(j.marked.values(), key=lambda c: c.us)
        reason = (f"{len(j.marked)} of {n} events ({share:.1%}) not measurable, more than "
                  f"{MAX_UNMEASURABLE_SHARE:.0%}: a host stall displaced a byte they depend on (worst: {worst.detail})")
    return j.figures(n, verdict.stalls, verdict.window, verdict.bound_us, late), reason


__all__ = ["Cause", "Judgement", "causes", "deciding", "entered_at", "entry_delay", "judge", "judge_run", "late_creation",
           "stale_phase", "timecode_held"]
