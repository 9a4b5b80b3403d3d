"""When the runner judges an event by its deadline (mmsched.run.deadlines): only once every frame received is read."""

from __future__ import annotations

import mmproto as mp


def test_deadline_waits_for_the_frames_already_received() -> None:
    # A starved scheduler reads a backlog: the newer TIMECODEs move the deadline past an event while the
    # executor's refusal of it still waits in the inbox. The event must end by that refusal (past_due),
    # not as a timeout.
    from types import SimpleNamespace

    from mmsched.run import deadlines
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import Boards
    from mmsched.run.runner import Runner
    from mmsched.run.runstate import RunState

    r = Runner(RunConfig(mode="mixed", distance=2, count=1), Boards("loop://"))
    r.state = RunState.after_handshake(r.cfg, mp.Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0), 0.0)
    tag, eid = r.state.generator.next()
    e = r.book.new_event(tag, eid, "mixed", 2, 10, 8, 0.1)                    # made as the run makes them
    e.ack_tc = 8                                                        # the executor had it (ACKed)
    r.state.tracker = SimpleNamespace(current=10 + r.cfg.timeout_ticks + 3)   # far past its deadline
    r.inbox.put("a frame not handled yet")                              # e.g. the executor's ERROR
    deadlines.check_deadlines(r.state, r.book, r.faults, r.session, r.tally, r.cfg.timeout_ticks, r.now())
    assert not e.terminal                                               # judged only once all is read
    r.inbox.get()
    deadlines.check_deadlines(r.state, r.book, r.faults, r.session, r.tally, r.cfg.timeout_ticks, r.now())
    assert (e.outcome, e.reason) == ("missed", "timeout")               # ACKed, then nothing: a timeout


def test_silence_is_judged_only_once_every_frame_received_is_read() -> None:
    # A run's thread held up for seconds reads frames that arrived long ago: the profiler was not silent, the
    # run was behind. Only an empty inbox with no frame for SILENCE_S is a silent profiler (a link fault).
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import Boards
    from mmsched.run.recovery import SILENCE_S
    from mmsched.run.runner import Runner
    from mmsched.run.runstate import RunState

    r = Runner(RunConfig(mode="normal", count=1), Boards("loop://"))
    r.state = RunState.after_handshake(r.cfg, mp.Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0), 0.0)
    r.state.last_profiler_frame = 10.0                   # the newest frame read so far arrived at 10 s
    now = 10.0 + SILENCE_S + 0.5
    r.inbox.put("a TIMECODE that arrived at 10.1 s, not read yet")
    assert not r.recovery.profiler_silent(r.state, now)
    r.inbox.get()
    assert r.recovery.profiler_silent(r.state, now)
    r.state.link_failed = True                            # said once
    assert not r.recovery.profiler_silent(r.state, now)


def test_a_request_written_after_its_own_deadline_gets_the_timeout_for_its_answer() -> None:
    # A scheduler that read its TIMECODEs late made an event 8.9 ticks into its tick, its deadline long gone;
    # its SCHEDULE was judged unanswered 38 ms after the write, before the executor's refusal could come back
    # (a paced run under load: no_answer voided the run). A written request's silence counts from its write.
    from types import SimpleNamespace

    from mmsched.run import deadlines
    from mmsched.model.config import RunConfig
    from mmsched.link.endpoint import Boards
    from mmsched.run.runner import Runner
    from mmsched.run.runstate import RunState
    from mmsched.model.eventbytes import Sent

    r = Runner(RunConfig(mode="mixed", distance=2, count=1), Boards("loop://"))
    r.state = RunState.after_handshake(r.cfg, mp.Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0), 0.0)
    tag, eid = r.state.generator.next()
    e = r.book.new_event(tag, eid, "mixed", 2, 10, 8, 8.9)
    clock = SimpleNamespace(t=100.0)
    r.endpoint.clock = lambda: clock.t
    e.bytes.sent = Sent("executor", 0, 100.0 - 0.038)                  # written 38 ms ago
    r.state.tracker = SimpleNamespace(current=10 + r.cfg.timeout_ticks + 6)   # its deadline long past
    deadlines.check_deadlines(r.state, r.book, r.faults, r.session, r.tally, r.cfg.timeout_ticks, r.now())
    assert not e.terminal                                               # its answer may still be on the way
    clock.t = 100.0 + r.cfg.timeout_ticks * r.state.timebase.tick_s
    deadlines.check_deadlines(r.state, r.book, r.faults, r.session, r.tally, r.cfg.timeout_ticks, r.now())
    assert e.terminal and e.reason == "no_answer"                       # a timeout after the write: silent
