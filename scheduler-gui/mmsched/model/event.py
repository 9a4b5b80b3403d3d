"""One scheduled event and its row in the run CSV. The columns, outcomes and reasons are the run format's
(`mmanalysis.schema`, docs/data-format.md): defined there once, for the writer and every reader."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from mmanalysis.schema import COLUMN_NAMES as COLUMNS
from mmanalysis.schema import DERIVED_COLUMNS, OUTCOMES, REASONS
from mmanalysis.schema import in_stats as in_the_figures

from .eventbytes import EventBytes
from .slotpickle import SlotPickle


# slots: a run holds every event it made until its end; without a __dict__ each is about a third of the size
# (a 5,000-event lockstep mixed run: its events 8.5 -> 2.2 MB by tracemalloc, with their EventBytes)
@dataclass(slots=True)
class Event(SlotPickle):
    event: int
    tag: int
    event_id: int
    mode: str
    distance: int
    scheduled_tc: int
    created_tc: int
    created_phase: float | None
    due_counts: int = 0                   # due this many profiler counts into scheduled_tc (a grid's moment: grid.py)
    sent_s: float | None = None
    ack_tc: int | None = None
    ack_phase: float | None = None
    slack_ticks: float | None = None
    fired_tc: int | None = None
    result_tc: int | None = None
    result_counts: int | None = None
    latency_counts: int | None = None
    latency_us: float | None = None
    outcome: str | None = None
    reason: str | None = None
    measurable: bool = True               # False: a byte its figure depends on was displaced past the bound
    stall_us: float | None = None         # ... by this much (validity.py); set on a measurable one that met it too
    # normal mode's latency budget (budget.py): the five add up to latency_us
    est_error_us: float | None = None
    wakeup_us: float | None = None
    line_us: float | None = None
    floor_us: float | None = None
    write_us: float | None = None
    # bookkeeping, not exported
    fire_at: float | None = field(default=None, repr=False)        # normal mode: host time the FIRE was aimed at
    written_at: float | None = field(default=None, repr=False)     # normal mode: host time right before its write
    write_ended_at: float | None = field(default=None, repr=False)  # ... and right after the write returned
    stamp_s: float | None = field(default=None, repr=False)        # normal mode: the profiler's stamp, its timer
    created_at: float | None = field(default=None, repr=False)     # run clock at creation
    edge_tag: int | None = field(default=None, repr=False)
    fired_order: int | None = field(default=None, repr=False)
    # frames the run had seen lost when this event was created: a later loss may have carried its result
    lost_frames_at_create: int = field(default=0, repr=False)
    # the profiler's loss reports so far when it was made (losses.py): a later one may have been its edge
    loss_reports_at_create: int = field(default=0, repr=False)
    # the kind of the first rig fault that touched it (faults.py): then it can only end ok or lost
    fault: str | None = field(default=None, repr=False)
    # the bytes its figure depends on (validity.py), noted as it is made
    bytes: EventBytes = field(default_factory=EventBytes, repr=False)

    @property
    def terminal(self) -> bool:
        return self.outcome is not None

    def finish(self, outcome: str, reason: str | None) -> None:
        """Gives the event its one terminal outcome; a second call is a bug (the invariant's first line).
        An event a fault of the rig touched ends lost with the fault as its reason unless it ended ok: a miss,
        a refusal or an odd latency then cannot be told apart from the fault's doing (faults.py)."""
        if self.outcome is not None:
            raise AssertionError(f"event {self.event} already ended as {self.outcome}/{self.reason}")
        if self.fault is not None and outcome != "ok":
            outcome, reason = "lost", self.fault
        assert outcome in OUTCOMES and (reason is None or reason in REASONS)
        self.outcome, self.reason = outcome, reason

    @property
    def in_stats(self) -> bool:
        """The row is in the summary's latency figures (the CSV's in_stats: mmanalysis.schema.in_stats)."""
        return in_the_figures(self.outcome, self.measurable)

    def row(self) -> list[object]:
        return [getattr(self, c) for c in COLUMNS]


EXPORTED = ({f.name for f in fields(Event)} | set(DERIVED_COLUMNS)) & set(COLUMNS)
assert EXPORTED == set(COLUMNS)
