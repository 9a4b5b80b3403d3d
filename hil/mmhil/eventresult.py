"""What one event a HIL script scheduled (`Rig.schedule`) or fired (`Rig.fire`) came to: its outcome in the
run format's words (ok / late / early / missed / lost, mmanalysis.schema), its latency, and the ticks the
nodes reported on the way. A list of them summarises like a run (`summarize`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from mmanalysis.latstats import summarize_rows


@dataclass(frozen=True)
class EventResult:
    event_id: int
    tag: int
    mode: str                        # "mixed" (the executor fired it) or "normal" (the PC's FIRE)
    dispatch: str | None             # mixed: "isr" or "task"
    scheduled_tc: int                # the tick it was meant for (the profiler's timeline)
    outcome: str                     # ok / late / early / missed / lost
    reason: str | None = None        # why it is not ok (mmanalysis.schema.REASONS), else None
    latency_us: float | None = None  # from the start of tick `scheduled_tc` to the profiler's stamp
    latency_counts: int | None = None
    ack_tc: int | None = None        # mixed: the tick the executor acknowledged it in
    fired_tc: int | None = None      # mixed: the tick the executor says it fired in (FIRED)
    result_tc: int | None = None     # the profiler's tick when the event reached it
    measurable: bool = True          # False: the paced bench displaced a byte it depends on (mmsched.verdict.validity)
    stall_us: float | None = None    # by this much
    attempts: int = 1                # Rig.schedule / fire do an event again that was displaced so
    # mixed, with a periodic executor load: where in the load's period the event's tick began (us, counted from
    # the tick whose start is 0 mod the period; the task's own offset unknown, the same for every event)
    load_phase_us: float | None = None

    @property
    def on_time(self) -> bool:
        return self.outcome == "ok"

    def __str__(self) -> str:
        lat = f"{self.latency_us:.3f} us" if self.latency_us is not None else "no latency"
        why = f" ({self.reason})" if self.reason else ""
        ticks = f"tick {self.scheduled_tc}"
        if self.ack_tc is not None:
            ticks += f", acked in {self.ack_tc}"
        if self.fired_tc is not None:
            ticks += f", fired in {self.fired_tc}"
        stall = "" if self.measurable else f", not measurable: displaced {self.stall_us:.0f} us by a host stall"
        return f"event {self.event_id} ({self.mode}{'/' + self.dispatch if self.dispatch else ''}, {ticks}): " \
               f"{self.outcome}{why}, {lat}{stall}"

    def __repr__(self) -> str:
        return f"<{self}>"


def summarize(results: Iterable[EventResult]) -> dict[str, Any]:
    """The run summary of these events, as a run's sidecar has it (mmanalysis.latstats.run_summary):
    n, mean_us, p50_us, p99_us, p999_us, max_us, outcomes, on_time_share, unmeasurable."""
    return summarize_rows(results)
