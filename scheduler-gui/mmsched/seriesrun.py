"""Mixed mode on a schedule grid, the run's side: sending the grid to the executor as PERIODIC series, making
each moment's event as it comes near (with the tag and id the executor gives it), and the executor's answers to
the series (ACK, a refusal, FIRED). The plan itself (moments, tags, chunks) is series.py's; the Runner calls
these at the points its docstring names."""

from __future__ import annotations

import math

import mmproto as mp
from mmproto import LinkError

from . import profhist
from .event import Event
from .endpoint import Reason
from .outcome import refusal_reason
from .runface import RunFace
from .series import Chunk, SeriesPlan
from .validity import Basis, Sent


def send_series(r: RunFace, now: float) -> None:
    """Mixed mode on a grid: the grid to the executor as PERIODIC series (series.py), the first two at once
    (the executor queues one behind the running one); the rest as each begins (next_series_when_one_begins)."""
    cfg, st = r.cfg, r.state
    assert st is not None and st.grid is not None and st.tracker.current is not None
    total = cfg.count if cfg.count is not None else max(1, math.ceil(
        (cfg.duration_s or 0.0) * 1e6 / st.grid.interval_us))
    cur = st.tracker.current
    st.series = SeriesPlan(st.grid, total, cur, round(st.tracker.phase(now, cur), 6),
                           Basis(cur, st.tracker.tick_start(cur), st.tracker.last_arrival()))
    for chunk in st.series.chunks[:2]:
        send_chunk(r, chunk)
    if profhist.profiler_keeps_histograms(r.session.links["profiler"].hello):
        st.profiler_hist = profhist.arm(r.session, st.grid, total, cfg.late_bound_us, st.timebase.timer_hz,
                                        raw=not st.histogram_only)
    if st.histogram_only:
        st.grid.next_k = total              # every moment is the executor's now: the run makes no event of its own
        st.next_free_at = math.inf          # nor wakes to make one (the loop wakes for frames and every 50 ms)


HANDOVER_TICKS = 2      # a series sent this many ticks after the one before it began (see follow_counted)


def follow_counted(r: RunFace) -> None:
    """A series on the profiler's histogram alone (profhist.py): each next series sent once the one before it
    has begun (by the profiler's tick, not by a FIRED: a quiet series sends none until its last), and the end
    of generation when the profiler's final report came or every moment's window has closed (the run then
    ends the profiler's series and takes its final report: nodesetup.finish_profiler_histogram).

    "Begun" is HANDOVER_TICKS ticks after the tick of its first moment: in that tick itself the series before
    it may still have moments to fire (a 10-minute run that sent at the tick's TIMECODE had 6 of its 10 series
    refused LIST_FULL, the executor's queue still taken); the next series' first moment is a whole series
    (60 s at 1 kHz) away, so the margin costs nothing."""
    st = r.state
    assert st is not None and st.series is not None and st.grid is not None
    cur = st.tracker.current
    if cur is None:
        return
    for c in st.series.chunks[1:]:
        if c.sent is None and c.refused is None:
            before = st.series.chunks[c.index - 1]
            if before.sent is not None and cur >= st.grid.moment(before.first_k)[0] + HANDOVER_TICKS:
                send_chunk(r, c)
            break
    hist = st.profiler_hist
    last_tc = st.grid.moment(st.series.total - 1)[0]
    windows = math.ceil(8 * st.grid.interval_counts / st.grid.tick_counts)     # an edge's id's next moment
    if hist is None or hist.final or cur > last_tc + windows + r.cfg.timeout_ticks:
        st.generating = False


def send_chunk(r: RunFace, chunk: Chunk) -> None:
    st = r.state
    assert st is not None and st.series is not None
    try:
        t = r.now()
        w = r.session.send_frame("executor", st.series.frame(chunk, st.tc_offset, quiet=st.histogram_only))
        chunk.sent = Sent("executor", w.offset, t, w.gen, w.size, w.ended)
    except LinkError:
        chunk.refused = "link_fault"
    r.count("series_sent")


def next_series_when_one_begins(r: RunFace, k: int) -> None:
    """Moment k fired: if it begins a series, the one before it has ended and the executor's queue is free for
    the next. By the moment, not the tag: tags wrap at 65536, so a later series' first tag is also an earlier
    series' tag (a 10-minute run sent its fourth series when the first reached that tag, and it was refused)."""
    st = r.state
    assert st is not None and st.series is not None
    c = st.series.starting_at(k)
    if c is not None and c.index + 1 < len(st.series.chunks):
        nxt = st.series.chunks[c.index + 1]
        if nxt.sent is None and nxt.refused is None:
            send_chunk(r, nxt)


def catch_up_series(r: RunFace, tag: int, now: float) -> None:
    """A FIRED for a moment whose event is not made yet (the run's thread was held up): make the events up
    to it now, so that the FIRED has its event and the join its key."""
    st = r.state
    assert st is not None and st.series is not None and st.grid is not None
    k = st.series.k_of_tag(tag, st.grid.next_k)
    if k is None or k - st.grid.next_k > 4096:
        return
    while st.grid.next_k <= k:
        r.create(now, st.grid.take())
    r.count("series_events_made_late")


def create_in_series(r: RunFace, k: int, tc: int, due: int) -> None:
    """Moment k of a periodic series: its event, with the tag and id the executor gives it, made in the tick
    the grid was laid (when the executor was sent it), its bytes its series' frame. One the executor refused
    ends at once, missed with the executor's reason."""
    st = r.state
    assert st is not None and st.series is not None
    s = st.series
    chunk = s.chunk_of(k)
    st.generator.adopt(s.event_id(k))          # in flight, as every event of the run (its end frees it)
    ev = r.new_event(s.tag(k), s.event_id(k), "mixed", tc - s.created_tc, tc, s.created_tc, s.created_phase,
                     at=chunk.sent.at if chunk.sent is not None else None)
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
        r.end(ev, "lost" if chunk.refused == "link_fault" else "missed", chunk.refused)
    elif st.matcher.pending_series:
        r.join(st.matcher.series_result(None, st.timebase.tick_counts))   # its RESULT came first
    r.notify("event", ev)


def acked(ev: Event, chunk: Chunk, tick_counts: int) -> None:
    """An event of an answered series: its ACK is the series' (the run's answered check reads it), its slack
    the time from the ACK to its moment inside its tick."""
    assert chunk.ack_tc is not None and chunk.ack_phase is not None
    ev.ack_tc, ev.ack_phase = chunk.ack_tc, chunk.ack_phase
    ev.slack_ticks = round(ev.scheduled_tc + ev.due_counts / tick_counts - ev.ack_tc - ev.ack_phase, 6)


def on_series_answer(r: RunFace, msg: mp.Message, at: float) -> bool:
    """An executor frame that answers a series (its ACK, or ERROR refusing it): True if it was one. A refused
    series' events made so far end missed with the executor's reason; the rest end so as they are made."""
    st = r.state
    assert st is not None and st.series is not None
    if isinstance(msg, mp.Ack) and (chunk := st.series.chunk_by_tag(msg.tag)) is not None:
        chunk.acked = True                  # a series taken (its events are made as their moments come)
        chunk.ack_tc, chunk.ack_phase = msg.timecode + st.tc_offset, round(msg.phase / 65536, 6)
        for ev in r.in_flight():            # its events made before the ACK came: answered too
            if st.series.chunk_of(ev.event) is chunk:
                acked(ev, chunk, st.timebase.tick_counts)
        r.recovery.check_executor_tick(st, chunk.ack_tc, f"ACK of series {chunk.index}", at)
        return True
    if isinstance(msg, mp.Error) and msg.ref_type == mp.Periodic.TYPE \
            and (chunk := st.series.chunk_by_tag(msg.ref_tag)) is not None:
        chunk.refused = refusal_reason(msg.code)
        r.count(f"series_refused_{msg.code}")
        if st.histogram_only:               # the profiler would count its moments missed, as if the executor's
            r.invalid.append(Reason("series_refused", f"the executor refused series {chunk.index} "
                                    f"({chunk.refused}): its {chunk.count} moments never ran, and the profiler's "
                                    "histogram counts them missed; not a result"))
        for ev in r.in_flight():
            if st.series.chunk_of(ev.event) is chunk:
                r.end(ev, "missed", chunk.refused)
        return True
    return False


def on_series_fired(r: RunFace, tag: int, ev: Event | None, at: float, fired_tc: int) -> Event | None:
    """A FIRED of a series: its event (made now if its moment came before the run's thread made it), or None
    when there is nothing more to do (its event ended already, its RESULT having come first: the FIRED's tick
    is noted on it all the same). Sends the next series when this FIRED begins one."""
    st = r.state
    assert st is not None and st.series is not None and st.grid is not None
    if st.histogram_only:                   # no events of the run's own: the profiler counts them
        r.count("series_fired")
        return None
    if ev is None:
        k = st.series.k_made(tag, st.grid.next_k)
        if k is not None:
            done = r.events[k]
            if done.fired_tc is None:
                done.fired_tc = fired_tc
                r.notify("event", done)
            r.count("series_fired_after_result")
            next_series_when_one_begins(r, k)
            return None
        catch_up_series(r, tag, at)
        ev = st.matcher.by_tag.get(tag)
    if ev is not None:
        next_series_when_one_begins(r, ev.event)
    return ev
