"""Events the run's end marks not measurable (finish.mark_unmeasurable): made after their own moment by a stalled
host, against a free-running event that missed as the paper's did."""

from __future__ import annotations

import pytest

import mmproto as mp


@pytest.mark.parametrize("mode, marked", [("mixed", True), ("normal", False)])
def test_an_event_the_scheduler_made_after_its_own_moment_is_not_measurable(mode: str, marked: bool) -> None:
    # Seen in a paced soak: a TIMECODE read 2.08 ticks late made an event for distance 2 already past
    # its tick; the executor refused it (past_due) and the run blamed the executor. No line could have
    # delivered it: the rig's host stalled, so where the executor is measured the event is not measurable.
    # In normal mode the PC is what is measured, and its lateness is the result.
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import Boards, Verdict
    from mmsched.run.finish import mark_unmeasurable
    from mmsched.run.runner import Runner
    from mmsched.run.runstate import RunState

    r = Runner(RunConfig(mode=mode, distance=2, count=2), Boards("loop://"))
    r.state = RunState.after_handshake(r.cfg, mp.Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0), 0.0)
    late = r.book.new_event(*r.state.generator.next(), mode, 2, 22632, 22630, 2.08)
    on_time = r.book.new_event(*r.state.generator.next(), mode, 2, 22633, 22631, 0.1)
    faulted = r.book.new_event(*r.state.generator.next(), mode, 2, 22634, 22632, 2.5)   # made late, after a fault
    r.book.end(late, "missed", "past_due")
    r.book.end(on_time, "ok", None)
    r.book.end(faulted, "lost", "link_fault")                # its fault names it already: not marked again
    figures, _ = mark_unmeasurable(r.events, r.state, Verdict(), r.endpoint.baud)
    assert late.measurable is not marked and on_time.measurable and faulted.measurable
    assert figures["unmeasurable"] == int(marked) and figures["late_creations"] == int(marked)
    if marked:
        assert late.stall_us == pytest.approx(2.08 * r.state.timebase.tick_s * 1e6, rel=1e-3)


def test_a_free_running_event_made_before_its_tick_code_arrived_is_no_stall() -> None:
    # distance 1, free generation: a timer that expires just after a tick began, before that tick's TIMECODE
    # crossed the line, makes its event on the tick before (phase 1.0 .. 1.15 at 9600 baud) and it misses:
    # the paper's 1-tick experiment, a result, not a host stall. Past that window the next TIMECODE was
    # there and not read: a stall.
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import Boards, Verdict
    from mmsched.run.finish import mark_unmeasurable
    from mmsched.run.runner import Runner
    from mmsched.run.runstate import RunState

    r = Runner(RunConfig(mode="mixed", distance=1, count=2, generation="free", rate_ms=97.0), Boards("loop://"))
    r.state = RunState.after_handshake(r.cfg, mp.Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0), 0.0)
    in_window = r.book.new_event(*r.state.generator.next(), "mixed", 1, 101, 100, 1.10)
    stalled = r.book.new_event(*r.state.generator.next(), "mixed", 1, 102, 101, 1.40)
    for e in (in_window, stalled):
        r.book.end(e, "missed", "past_due")
    mark_unmeasurable(r.events, r.state, Verdict(), r.endpoint.baud)
    assert in_window.measurable and not stalled.measurable
