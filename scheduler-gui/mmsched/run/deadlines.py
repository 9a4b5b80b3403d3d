"""An event's deadline: its tick plus the run's timeout (`timeout_ticks`) by the profiler's timecode. Silence is
judged only once every frame already received is read; an event whose result the profiler may have lost is
held for its COUNTERS (losses.py) before it ends. A silent event ends missed, or lost when a frame that may have
carried its answer was lost (outcome.silent_outcome): a fault of the rig, never of the system under test."""

from __future__ import annotations

import mmproto as mp
from mmproto import LinkError

from . import recovery
from ..model.event import Event
from .eventbook import EventBook
from ..verdict.faults import FaultLedger
from ..verdict.outcome import silent_outcome
from .runstate import RunState
from ..link.session import Session
from ..model.tally import Tally



# How often the in-flight events are looked over while the timecode stands still: an event's deadline is its tick
# plus the timeout (a new TIMECODE always looks), and what waits on a request's own time (answer_on_the_way) ends at
# most this much later. Looking on every frame cost a kilohertz run most of its loop's time.
RESCAN_S = 0.02


def check_deadlines(st: RunState, book: EventBook, faults: FaultLedger, session: Session, tally: Tally,
                    timeout_ticks: int, now: float) -> None:
    """Ends the events of `book` whose deadline (their tick plus the timeout) the profiler's timecode has passed
    at run clock `now`; a silent one that was never answered is a fault of the rig in `faults`. The profiler is
    asked for its COUNTERS (through `session`) when a result may have been lost."""
    cur = st.tracker.current
    if cur is None:
        return
    wait_s = timeout_ticks * st.timebase.tick_s
    if cur == st.deadlines_scanned[0] and now < st.deadlines_scanned[1] + RESCAN_S:
        return
    if session.pending():
        # Judge silence only once every frame already received is read: a starved scheduler reading a
        # backlog sees the newer TIMECODEs before the executor's refusal of an event it is about to
        # call timed out. (Frames are handled in microseconds, so the inbox is empty nearly always.)
        return
    st.deadlines_scanned = (cur, now)
    due = [e for e in book.in_flight()
           if cur >= e.scheduled_tc + timeout_ticks and not answer_on_the_way(e, now, wait_s)]
    if not due:
        return
    book.join(st.matcher.join_unfired(due, st.lost_frames))
    recovery.check_fired_ticks(st, book, faults, due, st.rel(now))
    held = st.losses.hold((e for e in due if not e.terminal and put_out(e)
                           and e.lost_frames_at_create == st.lost_frames
                           and e.loss_reports_at_create == st.losses.reports), now,
                          lambda: ask_losses(session, tally))
    for e in due:
        if not e.terminal and e.event not in held:
            heard = answered(e)
            if not heard and not e.fault:
                faults.raise_("no_answer", "executor" if e.mode == "mixed" else "profiler", st.rel(now),
                              f"{'SCHEDULE' if e.mode == 'mixed' else 'FIRE'} of event {e.event} "
                              f"(tag {e.tag}) never answered", (e,), window=False)
            book.end(e, *silent_outcome(st.lost_frames - e.lost_frames_at_create, heard,
                                        st.losses.reports - e.loss_reports_at_create))
    st.matcher.drop_stale_results(cur - 2 * timeout_ticks)


def answer_on_the_way(e: Event, now: float, wait_s: float) -> bool:
    """Whether the event's request went out less than the run's timeout (`wait_s`) ago: its answer may still be
    on the way. An event made after its own deadline (a scheduler that read its TIMECODEs late made one 8.9 ticks
    into its tick) would else be judged silent before its SCHEDULE could be answered (38 ms after the write, in
    a paced run under load); a request's silence counts from its write, as an event's from its tick."""
    return e.bytes.sent is not None and now - e.bytes.sent.at < wait_s


def put_out(e: Event) -> bool:
    """Whether the event's edge or frame went out to the profiler: the executor said FIRED (mixed,
    verification), or the PC wrote its FIRE (normal). Only then can a missing RESULT be the profiler's."""
    return e.written_at is not None if e.mode == "normal" else e.fired_tc is not None

def ask_losses(session: Session, tally: Tally) -> bool:
    """QUERY(COUNTERS) to the profiler for losses.LossReports.hold; False if it cannot be sent."""
    if not session.alive("profiler"):
        return False
    try:
        session.send("profiler", mp.Query(what=mp.Counters.TYPE))
    except LinkError:
        return False
    tally.count("loss_queries")
    return True

def answered(e: Event) -> bool:
    """Whether the node answered the request that made the event: a SCHEDULE's ACK or ERROR (an ERROR
    ends the event, so a silent one had none), a written FIRE's RESULT (a silent one had none). An event
    never requested (verification mode, a FIRE the PC never wrote) was not the rig's to answer."""
    if e.mode == "mixed":
        return e.ack_tc is not None
    if e.mode == "normal":
        return e.written_at is None
    return True
