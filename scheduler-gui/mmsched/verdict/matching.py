"""Joining the profiler's RESULT frames to the events they measure.

Normal mode: RESULT.flags bit 0 (FIRE source) and RESULT.tag is the tag of our FIRE frame: a lookup.

Mixed and verification modes: an edge RESULT carries the event id, the profiler's timecode when the
edge arrived and the profiler's running edge count, but no tag of ours. The executor's FIRED frame
carries our tag, the id and the executor's timecode at which it put the event out. Each output edge is
exactly one FIRED, so the join key is (timecode of firing, event id), taken in firing order
(FIFO per key, for the rare case of two events with one id in one tick): a RESULT joins the earliest
FIRED event with the same key that has no RESULT yet. The two frames come over two links and either
may arrive first, so both sides wait in `pending_*` until their partner comes.

A periodic series (series.py, mixed mode on a schedule grid): a tick holds dozens of events, so several share
a (tick, id) key, and a moment at the very end of a tick fires in the next one (its FIRED names the tick it was
due in, its RESULT the tick its edge came in). Its RESULTs join by the moment instead (`series_result`): the
event with the RESULT's id whose moment is the latest at or before the edge (SERIES_EARLY_COUNTS earlier at
most); two moments with one id are 8 periods apart, so a latency under 8 periods is never taken for another
event's. A RESULT that comes before its event is made (the run's thread held up) waits in `pending_series`.

Cross-checks, counted (never guessed over): the edge count of consecutive joined RESULTs must step by
one per FIRED (`edge_order_breaks` otherwise: a spurious edge or a lost RESULT; when the profiler counted
fewer edges than the executor fired between two joined events, `edges_missing` says how many: an edge the
profiler never reported, which its capture can lose without knowing, so the runner takes it as a report of
lost results, losses.py); a RESULT whose
FIRED never came (a lost executor frame) joins, when its deadline is near, the not-yet-fired event
scheduled for that tick with that id (`joined_without_fired`); RESULTs that join nothing are
`unmatched_results`.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from mmproto import Result

from ..model.event import Event

# RESULTs waiting for their FIRED: a few ticks' worth at most in a healthy run (8 ids, a FIRED 10 ms behind).
# A stream that joins nothing (a floating strobe input, a silent executor) would otherwise grow without end
# and every join scans it all; beyond this the oldest is dropped and counted unmatched.
MAX_PENDING_RESULTS = 256


# An edge this many of the profiler's counts before its moment still joins it (early); the executor places a
# moment one of its own 4 us counts late on purpose, so an edge before it is the executor's mistake, measured.
SERIES_EARLY_COUNTS = 1600        # 100 us at 16 MHz


@dataclass
class Matcher:
    by_tag: dict[int, Event] = field(default_factory=dict)      # our tag -> event, while it is in flight
    # (tick, id) -> FIRED events waiting for their RESULT; a key leaves with its last event, so a run holds what
    # is in flight, not a key per event it ever fired (they were 850 bytes an event, kept for the whole run)
    pending_fired: dict[tuple[int, int], deque] = field(default_factory=dict)
    pending_results: list[Result] = field(default_factory=list)
    edge_order_breaks: int = 0
    edges_missing: int = 0        # FIRED events between two joined ones that the profiler counted no edge for
    joined_without_fired: int = 0
    unmatched_results: int = 0
    fired_count: int = 0
    _last_edge: tuple[int, int] | None = None  # (fired_order, edge tag) of the last joined pair
    series_by_id: dict[int, deque] = field(default_factory=lambda: defaultdict(deque))   # id -> events, due order
    pending_series: list[Result] = field(default_factory=list)

    def track(self, event: Event) -> None:
        self.by_tag[event.tag] = event

    def forget(self, event: Event) -> None:
        if self.by_tag.get(event.tag) is event:
            del self.by_tag[event.tag]
        key = (event.fired_tc, event.event_id)
        q = self.pending_fired.get(key)
        if event.fired_tc is not None and q is not None and event in q:
            q.remove(event)
            if not q:
                del self.pending_fired[key]

    # ---- normal mode -----------------------------------------------------------------------
    def fire_result(self, result: Result) -> Event | None:
        ev = self.by_tag.get(result.tag)
        if ev is None or ev.terminal or ev.event_id != result.event_id:
            self.unmatched_results += 1
            return None
        return ev

    # ---- a periodic series ------------------------------------------------------------------
    def track_series(self, event: Event) -> None:
        self.series_by_id[event.event_id].append(event)

    def series_result(self, result: Result | None, tick_counts: int) -> list[tuple[Event, Result]]:
        """Joins `result` (None: only retry those waiting) and the RESULTs waiting, each to the event of its id
        whose moment is the latest at or before its edge (see the module)."""
        if result is not None:
            self.pending_series.append(result)
        joined: list[tuple[Event, Result]] = []
        keep: list[Result] = []
        for r in self.pending_series:
            q = self.series_by_id.get(r.event_id)
            while q and q[0].terminal:
                q.popleft()
            at = r.timecode * tick_counts + r.counts + SERIES_EARLY_COUNTS
            best = None
            for e in q or ():
                if e.scheduled_tc * tick_counts + e.due_counts > at:
                    break
                if not e.terminal and all(e is not j for j, _ in joined):
                    best = e
            if best is None:
                keep.append(r)
            else:
                joined.append((best, r))
        if len(keep) > MAX_PENDING_RESULTS:
            self.unmatched_results += len(keep) - MAX_PENDING_RESULTS
            del keep[:len(keep) - MAX_PENDING_RESULTS]
        self.pending_series = keep
        return joined

    # ---- mixed / verification ----------------------------------------------------------------
    def fired(self, event: Event, timecode: int) -> list[tuple[Event, Result]]:
        """The executor reported `event` fired at `timecode` (profiler timeline). Returns joins made."""
        event.fired_tc = timecode
        event.fired_order = self.fired_count
        self.fired_count += 1
        self.pending_fired.setdefault((timecode, event.event_id), deque()).append(event)
        return self._join()

    def edge_result(self, result: Result) -> list[tuple[Event, Result]]:
        self.pending_results.append(result)
        joined = self._join()
        if len(self.pending_results) > MAX_PENDING_RESULTS:
            over = len(self.pending_results) - MAX_PENDING_RESULTS
            self.unmatched_results += over
            del self.pending_results[:over]
        return joined

    def _join(self) -> list[tuple[Event, Result]]:
        joined: list[tuple[Event, Result]] = []
        keep: list[Result] = []
        for r in self.pending_results:
            key = (r.timecode, r.event_id)
            q = self.pending_fired.get(key)
            if q:
                ev = q.popleft()
                if not q:
                    del self.pending_fired[key]
                self._check_order(ev, r)
                joined.append((ev, r))
            else:
                keep.append(r)
        self.pending_results = keep
        return joined

    def _check_order(self, ev: Event, r: Result) -> None:
        ev.edge_tag = r.tag
        if ev.fired_order is not None:
            if self._last_edge is not None:
                d_fired = ev.fired_order - self._last_edge[0]
                d_edge = (r.tag - self._last_edge[1]) & 0xFFFF
                if d_fired != d_edge:
                    self.edge_order_breaks += 1
                    if 0 <= d_edge < d_fired:
                        self.edges_missing += d_fired - d_edge
            self._last_edge = (ev.fired_order, r.tag)

    def join_unfired(self, candidates: list[Event], lost_frames: int = 0) -> list[tuple[Event, Result]]:
        """Last resort before a deadline: RESULTs still waiting join an event that never got its FIRED,
        scheduled for the RESULT's tick (or the one before, for an edge a whole tick late) with the same id.
        `lost_frames`: the frames the run has lost on its lines so far. An event made before some of them
        were lost joins only its own tick's RESULT: its FIRED and its RESULT may both have been lost, and the
        next tick's edge of the same id is then another event's, whose join made a fault of the rig a 71 ms
        late event of the system under test (seen in the fault soak)."""
        joined: list[tuple[Event, Result]] = []
        keep: list[Result] = []
        for r in self.pending_results:
            match = next((e for e in candidates if not e.terminal and e.fired_tc is None and e.event_id == r.event_id
                          and (e.scheduled_tc == r.timecode or (e.scheduled_tc == r.timecode - 1
                                                               and e.lost_frames_at_create == lost_frames))
                          and all(e is not j for j, _ in joined)), None)
            if match is not None:
                self.joined_without_fired += 1
                joined.append((match, r))
            else:
                keep.append(r)
        self.pending_results = keep
        return joined

    def drop_stale_results(self, before_tc: int) -> None:
        """RESULTs for ticks older than `before_tc` that joined nothing are counted and dropped."""
        keep = [r for r in self.pending_results if r.timecode >= before_tc]
        self.unmatched_results += len(self.pending_results) - len(keep)
        self.pending_results = keep
