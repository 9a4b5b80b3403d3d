"""Mixed mode on a schedule grid, the run's side: sending the grid to the executor as PERIODIC series, making
each moment's event as it comes near (with the tag and id the executor gives it), and the executor's answers to
the series (ACK, a refusal, FIRED). The plan itself (moments, tags, chunks) is series.py's; the Runner calls
these at the points its docstring names.

`SeriesRun` is given what it acts on: the run's configuration, the session (the PERIODIC frames), the endpoint
(the run clock), the run's events (each moment's event is made and ended there), the view, the tally, the
recovery (an ACK's tick is checked) and the run's invalid reasons (a refused series the profiler alone counts
makes the run invalid); each step is given the run state."""

from __future__ import annotations

import math
from dataclasses import dataclass

import mmproto as mp
from mmproto import LinkError

from ..verdict import profhist
from ..model.config import RunConfig
from ..model.event import Event
from ..link.endpoint import Endpoint
from ..model.reason import Reason
from .eventbook import EventBook
from ..verdict.outcome import refusal_reason
from .recovery import Recovery
from .runstate import RunState
from ..model.series import Chunk, SeriesPlan
from ..link.session import Session
from ..model.tally import Tally
from ..model.view import View
from ..model.eventbytes import Basis, Sent


HANDOVER_TICKS = 2      # a series sent this many ticks after the one before it began (see follow_counted)


def acked(ev: Event, chunk: Chunk, tick_counts: int) -> None:
    """An event of an answered series: its ACK is the series' (the run's answered check reads it), its slack
    the time from the ACK to its moment inside its tick."""
    assert chunk.ack_tc is not None and chunk.ack_phase is not None
    ev.ack_tc, ev.ack_phase = chunk.ack_tc, chunk.ack_phase
    ev.slack_ticks = round(ev.scheduled_tc + ev.due_counts / tick_counts - ev.ack_tc - ev.ack_phase, 6)


@dataclass
class SeriesRun:
    cfg: RunConfig
    session: Session
    endpoint: Endpoint
    book: EventBook
    view: View
    tally: Tally
    recovery: Recovery
    invalid: list[Reason]

    def send_series(self, st: RunState, now: float) -> None:
        """Mixed mode on a grid: the grid to the executor as PERIODIC series (series.py), the first two at once
        (the executor queues one behind the running one); the rest as each begins (next_series_when_one_begins)."""
        cfg = self.cfg
        assert st.grid is not None and st.tracker.current is not None
        total = cfg.count if cfg.count is not None else max(1, math.ceil(
            (cfg.duration_s or 0.0) * 1e6 / st.grid.interval_us))
        cur = st.tracker.current
        st.series = SeriesPlan(st.grid, total, cur, round(st.tracker.phase(now, cur), 6),
                               Basis(cur, st.tracker.tick_start(cur), st.tracker.last_arrival()))
        for chunk in st.series.chunks[:2]:
            self.send_chunk(st, chunk)
        if profhist.profiler_keeps_histograms(self.session.links["profiler"].hello):
            st.profiler_hist = profhist.arm(self.session, st.grid, total, cfg.late_bound_us, st.timebase.timer_hz,
                                            raw=not st.histogram_only)
        if st.histogram_only:
            st.grid.next_k = total              # every moment is the executor's now: the run makes no event of its own
            st.next_free_at = math.inf          # nor wakes to make one (the loop wakes for frames and every 50 ms)

    def follow_counted(self, st: RunState) -> None:
        """A series on the profiler's histogram alone (profhist.py): each next series sent once the one before it
        has begun (by the profiler's tick, not by a FIRED: a quiet series sends none until its last), and the end
        of generation when the profiler's final report came or every moment's window has closed (the run then
        ends the profiler's series and takes its final report: winddown.finish_profiler_histogram).

        "Begun" is HANDOVER_TICKS ticks after the tick of its first moment: in that tick itself the series before
        it may still have moments to fire (a 10-minute run that sent at the tick's TIMECODE had 6 of its 10 series
        refused LIST_FULL, the executor's queue still taken); the next series' first moment is a whole series
        (60 s at 1 kHz) away, so the margin costs nothing."""
        assert st.series is not None and st.grid is not None
        cur = st.tracker.current
        if cur is None:
            return
        for c in st.series.chunks[1:]:
            if c.sent is None and c.refused is None:
                before = st.series.chunks[c.index - 1]
                if before.sent is not None and cur >= st.grid.moment(before.first_k)[0] + HANDOVER_TICKS:
                    self.send_chunk(st, c)
                break
        hist = st.profiler_hist
        last_tc = st.grid.moment(st.series.total - 1)[0]
        windows = math.ceil(8 * st.grid.interval_counts / st.grid.tick_counts)     # an edge's id's next moment
        if hist is None or hist.final or cur > last_tc + windows + self.cfg.timeout_ticks:
            st.generating = False

    def send_chunk(self, st: RunState, chunk: Chunk) -> None:
        assert st.series is not None
        try:
            t = self.endpoint.clock()
            w = self.session.send_frame("executor", st.series.frame(chunk, st.tc_offset, quiet=st.histogram_only))
            chunk.sent = Sent("executor", w.offset, t, w.gen, w.size, w.ended)
        except LinkError:
            chunk.refused = "link_fault"
        self.tally.count("series_sent")

    def next_series_when_one_begins(self, st: RunState, k: int) -> None:
        """Moment k fired: if it begins a series, the one before it has ended and the executor's queue is free for
        the next. By the moment, not the tag: tags wrap at 65536, so a later series' first tag is also an earlier
        series' tag (a 10-minute run sent its fourth series when the first reached that tag, and it was refused)."""
        assert st.series is not None
        c = st.series.starting_at(k)
        if c is not None and c.index + 1 < len(st.series.chunks):
            nxt = st.series.chunks[c.index + 1]
            if nxt.sent is None and nxt.refused is None:
                self.send_chunk(st, nxt)

    def catch_up_series(self, st: RunState, tag: int, now: float) -> None:
        """A FIRED for a moment whose event is not made yet (the run's thread was held up): make the events up
        to it now, so that the FIRED has its event and the join its key."""
        assert st.series is not None and st.grid is not None
        k = st.series.k_of_tag(tag, st.grid.next_k)
        if k is None or k - st.grid.next_k > 4096:
            return
        while st.grid.next_k <= k:
            moment = st.grid.take()
            if st.tracker.current is not None:      # as the run's own creation: none before a timecode
                self.create_in_series(st, st.grid.next_k - 1, *moment)
        self.tally.count("series_events_made_late")

    def create_in_series(self, st: RunState, k: int, tc: int, due: int) -> None:
        """Moment k of a periodic series: its event, with the tag and id the executor gives it, made in the tick
        the grid was laid (when the executor was sent it), its bytes its series' frame. One the executor refused
        ends at once, missed with the executor's reason."""
        assert st.series is not None
        s = st.series
        chunk = s.chunk_of(k)
        st.generator.adopt(s.event_id(k))          # in flight, as every event of the run (its end frees it)
        ev = self.book.new_event(s.tag(k), s.event_id(k), "mixed", tc - s.created_tc, tc, s.created_tc,
                                 s.created_phase, at=chunk.sent.at if chunk.sent is not None else None)
        ev.due_counts = due
        st.matcher.track_series(ev)
        ev.bytes.basis = s.basis
        ev.bytes.sent = chunk.sent
        ev.bytes.created_at = ev.created_at
        if chunk.acked:
            acked(ev, chunk, st.timebase.tick_counts)
        if chunk.sent is not None:
            ev.sent_s = round(chunk.sent.at - st.t0, 6)
        if chunk.refused is not None:
            self.book.end(ev, "lost" if chunk.refused == "link_fault" else "missed", chunk.refused)
        elif st.matcher.pending_series:
            self.book.join(st.matcher.series_result(None, st.timebase.tick_counts))   # its RESULT came first
        self.view.notify("event", ev)

    def on_series_answer(self, st: RunState, msg: mp.Message, at: float) -> bool:
        """An executor frame that answers a series (its ACK, or ERROR refusing it): True if it was one. A refused
        series' events made so far end missed with the executor's reason; the rest end so as they are made."""
        assert st.series is not None
        if isinstance(msg, mp.Ack) and (chunk := st.series.chunk_by_tag(msg.tag)) is not None:
            chunk.acked = True                  # a series taken (its events are made as their moments come)
            chunk.ack_tc, chunk.ack_phase = msg.timecode + st.tc_offset, round(msg.phase / 65536, 6)
            for ev in self.book.in_flight():            # its events made before the ACK came: answered too
                if st.series.chunk_of(ev.event) is chunk:
                    acked(ev, chunk, st.timebase.tick_counts)
            self.recovery.check_executor_tick(st, chunk.ack_tc, f"ACK of series {chunk.index}", at)
            return True
        if isinstance(msg, mp.Error) and msg.ref_type == mp.Periodic.TYPE \
                and (chunk := st.series.chunk_by_tag(msg.ref_tag)) is not None:
            chunk.refused = refusal_reason(msg.code)
            self.tally.count(f"series_refused_{msg.code}")
            if st.histogram_only:               # the profiler would count its moments missed, as if the executor's
                self.invalid.append(Reason("series_refused", f"the executor refused series {chunk.index} "
                                           f"({chunk.refused}): its {chunk.count} moments never ran, and the "
                                           "profiler's histogram counts them missed; not a result"))
            for ev in self.book.in_flight():
                if st.series.chunk_of(ev.event) is chunk:
                    self.book.end(ev, "missed", chunk.refused)
            return True
        return False

    def on_series_fired(self, st: RunState, tag: int, ev: Event | None, at: float, fired_tc: int) -> Event | None:
        """A FIRED of a series: its event (made now if its moment came before the run's thread made it), or None
        when there is nothing more to do (its event ended already, its RESULT having come first: the FIRED's tick
        is noted on it all the same). Sends the next series when this FIRED begins one."""
        assert st.series is not None and st.grid is not None
        if st.histogram_only:                   # no events of the run's own: the profiler counts them
            self.tally.count("series_fired")
            return None
        if ev is None:
            k = st.series.k_made(tag, st.grid.next_k)
            if k is not None:
                done = self.book.events.held_at(k)     # (retired, it is final: its row went out without it)
                if done is not None and done.fired_tc is None:
                    done.fired_tc = fired_tc
                    self.view.notify("event", done)
                self.tally.count("series_fired_after_result")
                self.next_series_when_one_begins(st, k)
                return None
            self.catch_up_series(st, tag, at)
            ev = st.matcher.by_tag.get(tag)
        if ev is not None:
            self.next_series_when_one_begins(st, ev.event)
        return ev
