"""When a long run's ended events leave memory (eventstore.py), and how they are judged.

An event is retired only when nothing but the run's end's judgement can change it: it has ended, it lies `KEEP`
events or more behind the newest (a FIRED that comes after its RESULT, a fault that reaches back to the last 256
events: both find it held), and no open fault of the rig has touched it. Validity by cause is then judged:

- as the event leaves, where the endpoint keeps no byte record (boards, a lockstep bench): an event is judged by
  its own creation alone, which `validity.judge` does here, chunk by chunk, exactly as the end would;
- at the run's end, where it keeps one (a paced bench, whose `timing` record comes then): the end reads the
  retired events back a chunk at a time, judges each by the record and writes it back (EventStore.changing):
  the same judgement, one chunk in memory at a time.

Normal mode's end acts across events too, and reads them in passes the same way: a FIRE crowded by the ones
written before it (crowding.crowded_fires, holding the last few hundred FIREs), the budget's reference, a window
of 33 FIREs centred on each event with the drift over the whole run (budget.apply_budget), the no_answer faults
of crowded FIREs excused by the events' numbers (faults.FaultLedger.excuse).

A run shorter than KEEP + CHUNK events retires nothing: what it writes and holds is as before."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice

from ..model.eventstore import EventStore
from ..verdict.faults import FaultLedger
from ..verdict.validity import Judgement, judge

# Events held behind the newest: far more than a FIRED can trail its RESULT (a few ticks) or a fault reaches
# back (recovery.py: 256).
KEEP = 4096
# Events retired at a time, in the run's own thread: about 10 us each to judge and pickle with their bytes, so a
# chunk holds the loop up about 2.5 ms, a third of a tick, where a creation counts as the scheduler's own late
# one only past a tick and a tenth (validity.late_creation) on a board's wall clock.
CHUNK = 256


@dataclass
class Retirement:
    store: EventStore
    faults: FaultLedger
    tick_s: float
    stale_phase: float                       # validity.late_creation's, at the run's line rate
    judge_now: bool = True                   # judged as they leave (no byte record), else at the run's end
    keep: int = KEEP
    chunk: int = CHUNK
    judgement: Judgement = field(default_factory=Judgement)   # the retired events' validity (judge_now)
    failed: str | None = None                # why events stopped retiring (the scratch file failed), or None

    def ended(self) -> None:
        """An event ended: when KEEP + CHUNK are held, the oldest CHUNK leave (fewer: up to the first that may
        still change), judged first."""
        held = self.store.held
        if self.failed is not None or len(held) < self.keep + self.chunk:
            return
        n = next((i for i, e in enumerate(islice(held, self.chunk))
                  if not e.terminal or (e.fault is not None and self.faults.is_open(e.fault))), self.chunk)
        if n:
            judged = judge(held[:n], None, None, self.stale_phase, self.tick_s) if self.judge_now else None
            try:
                self.store.retire(n)
            except OSError as exc:            # the run goes on holding its events, as a short one does
                self.failed = f"the run's events stay in memory: its scratch file failed ({exc.strerror or exc})"
                return
            if judged is not None:
                self.judgement.merge(judged)


__all__ = ["CHUNK", "KEEP", "Retirement"]
