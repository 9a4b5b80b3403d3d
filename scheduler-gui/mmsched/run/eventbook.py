"""The run's events: every one it made (its rows, in the order made), those still in flight, and the one way an
event is made and the one way it ends. Ending one lets the matcher and the generator go of it, writes its row to
the run's journal, tells the view, and stops generation when it is past the run's break (breaks.py).

Shared by the run's parts that make or end events (the runner's loop, deadlines, recovery, a series): each is
given the book, not the runner."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

import mmproto as mp

from ..verdict.breaks import breaks_at
from ..model.event import Event
from ..model.eventstore import EventStore
from ..verdict.faults import FaultLedger
from ..verdict.journal import Journal
from ..verdict.outcome import apply_result
from .retirement import Retirement
from .runstate import RunState
from ..model.tally import Tally
from ..model.view import View


@dataclass
class EventBook:
    faults: FaultLedger
    tally: Tally
    view: View
    clock: Callable[[], float]
    late_bound_us: float | None
    break_us: float | None
    stop: threading.Event                     # set when generation is to end (the run's break)
    journal: Journal | None = None            # cfg.out only: each event's row as it ends
    state: RunState | None = None             # from the handshake on (its matcher and generator follow each event)
    events: EventStore = field(default_factory=EventStore)
    retirement: Retirement | None = None      # mixed, verification: a long run's ended events leave memory
    broke: Event | None = None                # the event past break_us
    # the events not ended yet, by number, in the order they were made: each leaves as it ends (`ended`), so the
    # loop's every look at them costs what is in flight, not what the run has made (a kilohertz run that rebuilt
    # the list on every frame fell further behind with every event, as its list grew)
    open: dict[int, Event] = field(default_factory=dict, repr=False)

    def in_flight(self) -> list[Event]:
        """The events not ended yet, in the order they were made."""
        return [e for e in self.open.values() if not e.terminal]

    def new_event(self, tag: int, event_id: int, mode: str, distance: int, scheduled_tc: int, created_tc: int,
                  phase: float | None, accounted: bool = True, at: float | None = None) -> Event:
        """Every event of the run is made here (the scheduler's and the executor's own), and followed by
        the matcher; `accounted=False` for an executor event outside the run (not a row of ours)."""
        st = self.state
        assert st is not None
        ev = Event(len(self.events) if accounted else -1, tag, event_id, mode, distance, scheduled_tc, created_tc,
                   phase, lost_frames_at_create=st.lost_frames, loss_reports_at_create=st.losses.reports,
                   created_at=self.clock() if at is None else at)
        st.matcher.track(ev)
        if accounted:
            self.events.append(ev)
            self.open[ev.event] = ev
            self.faults.created(ev)
        return ev

    def end(self, ev: Event, outcome: str, reason: str | None) -> None:
        st = self.state
        assert st is not None
        ev.finish(outcome, reason)
        st.matcher.forget(ev)
        if ev.tag not in st.local_ignored:
            st.generator.done(ev.event_id)
        if ev.event >= 0:
            self.ended(ev)

    def join(self, pairs: list[tuple[Event, mp.Result]]) -> None:
        """Events and the RESULTs the matcher joined them to: each ends by its result."""
        st = self.state
        assert st is not None
        if st.matcher.edges_missing > st.losses.edges_missing:
            # the profiler reported fewer edges than the executor put out: its capture lost some unawares
            st.losses.edges_gone(st.matcher.edges_missing)
        for ev, r in pairs:
            if ev.event < 0:            # a verification event beyond the run's count: not ours
                continue
            if ev.terminal:
                self.tally.count("results_after_deadline")
                continue
            apply_result(ev, r, st.timebase, self.late_bound_us)
            st.matcher.forget(ev)
            st.generator.done(ev.event_id)
            self.ended(ev)

    def ended(self, ev: Event) -> None:
        """EV has its outcome: into the journal, then to the view; the run's break, if it is past it."""
        self.open.pop(ev.event, None)
        if self.journal is not None:
            self.journal.add(ev)
        self.view.notify("event", ev)
        if self.broke is None and breaks_at(ev, self.break_us):
            self.broke = ev
            self.stop.set()                   # generation ends; the events in flight end as usual
        if self.retirement is not None:
            self.retirement.ended()


__all__ = ["EventBook"]
