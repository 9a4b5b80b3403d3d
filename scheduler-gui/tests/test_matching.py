"""Joining FIRED and RESULT frames to their events (mmsched.verdict.matching): either order, edge counts, lost FIREDs,
normal mode's FIRE tag, and RESULTs nothing joins."""

from __future__ import annotations

import sys
from pathlib import Path

import mmproto as mp
from mmsched.verdict.matching import Matcher

sys.path.insert(0, str(Path(__file__).parent))
from fake_events import ev  # noqa: E402


def test_matcher_counts_fired_events_the_profiler_counted_no_edge_for() -> None:
    # three events fired in one tick; the profiler's capture lost the middle one's edge unawares (two more
    # edges before it read the first: the capture register held the last), so its edge count steps by one
    m = Matcher()
    a, b, c = ev(0, eid=1, tc=10), ev(1, eid=2, tc=10), ev(2, eid=3, tc=10)
    for e in (a, b, c):
        m.track(e)
        m.fired(e, 10)
    m.edge_result(mp.Result(1, 0, 7, 10, 22))
    assert m.edge_result(mp.Result(3, 0, 8, 10, 800)) == [(c, mp.Result(3, 0, 8, 10, 800))]
    assert (m.edge_order_breaks, m.edges_missing) == (1, 1)


def test_matcher_joins_in_either_order_and_checks_edge_order() -> None:
    m = Matcher()
    a, b, c = ev(0, eid=1, tc=10), ev(1, eid=1, tc=10), ev(2, eid=2, tc=11)
    for e in (a, b, c):
        m.track(e)
    assert m.fired(a, 10) == []                                  # FIRED first, RESULT later
    r1 = mp.Result(1, 0, 7, 10, 22)
    assert m.edge_result(r1) == [(a, r1)]
    r2 = mp.Result(1, 0, 8, 10, 40)                              # RESULT first, FIRED later
    assert m.edge_result(r2) == []
    assert m.fired(b, 10) == [(b, r2)]
    r3 = mp.Result(2, 0, 10, 11, 22)                             # edge count jumped by 2: a spurious edge
    m.fired(c, 11)
    assert m.edge_result(r3) == [(c, r3)]
    assert m.edge_order_breaks == 1 and m.edges_missing == 0      # more edges than fired: none missing
    # a RESULT whose FIRED was lost joins the unfired event of that tick and id as a last resort
    d = ev(3, eid=4, tc=12)
    m.track(d)
    r4 = mp.Result(4, 0, 11, 12, 22)
    assert m.edge_result(r4) == []
    assert m.join_unfired([d]) == [(d, r4)] and m.joined_without_fired == 1
    # normal mode: the FIRE tag
    n = ev(4, eid=5, tc=13, tag=999)
    m.track(n)
    assert m.fire_result(mp.Result(5, 1, 999, 13, 5)) is n
    assert m.fire_result(mp.Result(5, 1, 12345, 13, 5)) is None and m.unmatched_results == 1


def test_unmatched_edge_results_are_bounded_and_counted() -> None:
    """A stream of RESULTs nothing joins (a spurious strobe, a lost executor link) must not pile up: each
    join scans what waits (unbounded, it took 12 ms a RESULT at 100k pending)."""
    from mmproto import Result
    from mmsched.verdict.matching import MAX_PENDING_RESULTS, Matcher

    m = Matcher()
    n = MAX_PENDING_RESULTS * 4
    for k in range(n):
        assert m.edge_result(Result(event_id=k % 8, flags=0, tag=k & 0xFFFF, timecode=k, counts=0)) == []
    assert len(m.pending_results) == MAX_PENDING_RESULTS
    assert m.unmatched_results == n - MAX_PENDING_RESULTS
    assert m.pending_results[0].timecode == n - MAX_PENDING_RESULTS      # the oldest went first


def test_a_result_of_the_next_tick_joins_an_unfired_event_only_when_no_frame_was_lost_since() -> None:
    """The last resort also takes a RESULT of the tick after the event's (an edge a whole tick late). With frames
    lost on the lines since the event was made, that RESULT may be another edge's (a fault soak: the event's FIRED
    and RESULT both lost to injected corruption, the next tick's edge of the same id joined it, and the event was
    recorded late by 71 ms: a fault of the rig blamed on the system under test). Then only its own tick's RESULT
    joins it; otherwise it ends by its deadline, lost to the frames lost (seq_gap)."""
    m = Matcher()
    e = ev(0, eid=4, tc=1582)
    e.lost_frames_at_create = 5
    m.track(e)
    next_tick = mp.Result(4, 0, 70, 1583, 22)
    assert m.edge_result(next_tick) == []
    assert m.join_unfired([e], lost_frames=6) == []                  # a frame was lost since it was made
    assert m.join_unfired([e], lost_frames=5) == [(e, next_tick)]    # none lost: a real edge a tick late
    f = ev(1, eid=5, tc=1590)
    f.lost_frames_at_create = 5
    m.track(f)
    own_tick = mp.Result(5, 0, 71, 1590, 22)
    m.edge_result(own_tick)
    assert m.join_unfired([f], lost_frames=9) == [(f, own_tick)]     # its own tick's RESULT still joins


def test_the_matcher_holds_only_what_waits_for_its_partner_however_long_the_run() -> None:
    """A long run's matcher must not keep a key for every (tick, id) it ever joined: 100,000 events fired and
    joined, in either order or forgotten at a deadline, leave nothing waiting."""
    m = Matcher()
    for k in range(100_000):
        e = ev(k, eid=k % 8, tc=k)
        m.track(e)
        r = mp.Result(k % 8, 0, k & 0xFFFF, k, 22)
        if k % 3 == 0:
            assert m.fired(e, k) == [] and m.edge_result(r) == [(e, r)]
        elif k % 3 == 1:
            assert m.edge_result(r) == [] and m.fired(e, k) == [(e, r)]
        else:
            m.fired(e, k)               # its RESULT never comes: the deadline ends it
        m.forget(e)
    assert (len(m.by_tag), len(m.pending_fired), len(m.pending_results)) == (0, 0, 0)
