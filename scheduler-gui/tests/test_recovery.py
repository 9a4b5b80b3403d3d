"""The runner's judgement of an executor frame's tick (mmsched.run.recovery.check_executor_tick), one layer: the
nodes disagree only when the executor's tick cannot be the one in force by the PC's own estimate of the tick,
not merely when the PC has not read the profiler's newest TIMECODE yet (a busy host, frames lost on a line)."""

from __future__ import annotations

import mmproto as mp

from mmsched.run import recovery
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Boards
from mmsched.run.runner import Runner
from mmsched.run.runstate import RunState

TICK = 1_137_778 / 16e6


def runner_that_read_timecodes_up_to(last: int) -> Runner:
    """A mixed run whose PC has read the profiler's TIMECODEs 1..last, each as its frame completed."""
    r = Runner(RunConfig(mode="mixed", distance=2, count=1), Boards("loop://"))
    r.state = RunState.after_handshake(r.cfg, mp.Hello(2, 1, 0x100, 16_000_000, 16_000_000, 1_137_778, 9600, 1, 0), 0.0)
    for tc in range(1, last + 1):
        r.state.tracker.update(tc, tc * TICK + r.state.tracker.wire_s)
    r.state.mode_frame = mp.Mode(mode=mp.ExecutorMode.MIXED, dispatch=mp.Dispatch.ISR, distance=0, period=0, random_ids=0)
    r.sent = []                                                       # what recovery asks the nodes (no links here)
    r.session.send = lambda node, message: r.sent.append((node, message))   # type: ignore[method-assign]
    return r


def test_an_executor_ahead_of_the_last_timecode_read_but_on_the_pcs_tick_is_no_fault() -> None:
    # The PC read TIMECODE 25; three ticks later (its reader starved, or TIMECODEs 26-28 lost on the line) the
    # executor's ERROR stamped at tick 28 arrives: the tick in force by the PC's clock is 28, the nodes agree.
    r = runner_that_read_timecodes_up_to(25)
    r.recovery.check_executor_tick(r.state, 28, "ERROR 3 for tag 3", 28 * TICK + 0.013)
    assert r.faults.section() == [] and r.counters.get("ack_timecode_mismatch") is None


def test_an_executor_ahead_of_any_tick_the_pc_can_explain_is_a_timecode_fault_at_once() -> None:
    """Ten ticks ahead of the clock: no late read makes a frame look new, so the nodes disagree."""
    r = runner_that_read_timecodes_up_to(25)
    r.recovery.check_executor_tick(r.state, 35, "ACK of tag 4", 25 * TICK + 0.013)
    faults = r.faults.section()
    assert [f["kind"] for f in faults] == ["timecode_fault"] and "ACK of tag 4 stamped at tick 35" in faults[0]["detail"]
    assert r.counters["ack_timecode_mismatch"] == 1


def test_an_executor_behind_the_pc_for_good_is_a_timecode_fault_at_its_second_frame() -> None:
    """Ten ticks behind, and still so a tick later with nothing agreeing between: the counts differ for good (a
    slipped count, a loose wire), a timecode fault named by the first frame."""
    r = runner_that_read_timecodes_up_to(25)
    r.recovery.check_executor_tick(r.state, 15, "ACK of tag 4", 25 * TICK + 0.013)
    assert r.faults.section() == [] and r.counters["tick_checks_suspect"] == 1
    r.state.tracker.update(26, 26 * TICK + r.state.tracker.wire_s)
    r.recovery.check_executor_tick(r.state, 16, "FIRED of tag 4", 26 * TICK + 0.013)
    faults = r.faults.section()
    assert [f["kind"] for f in faults] == ["timecode_fault"] and "ACK of tag 4 stamped at tick 15" in faults[0]["detail"]
    assert r.counters["ack_timecode_mismatch"] == 1


def test_one_frame_read_late_while_the_rest_of_the_process_ran_is_no_fault_of_the_nodes() -> None:
    """A loaded host held the run's reader back 4 ticks while its stall watch kept beating (seen: an ACK stamped
    at tick 144 read at 148, the bench's output on time): the next frame agrees, so the nodes agree: no fault,
    counted. Frames read in the same late batch are no second witness either."""
    r = runner_that_read_timecodes_up_to(148)
    late = 148 * TICK + 0.013
    t = 140 * TICK
    while t < late:                                     # the process ran on, beating every 5 ms
        t += 0.005
        r.own_stalls.beat(t)
    r.recovery.check_executor_tick(r.state, 144, "ACK of tag 130", late)
    r.recovery.check_executor_tick(r.state, 144, "FIRED of tag 129", late + 0.002)      # the same batch
    assert r.faults.section() == []
    r.recovery.check_executor_tick(r.state, 149, "ACK of tag 131", 149 * TICK + 0.013)
    assert r.faults.section() == [] and r.counters["tick_checks_not_confirmed"] == 1
    assert r.state.tick_suspect is None


def test_a_frame_read_right_after_the_pcs_own_stall_is_no_evidence_of_the_nodes() -> None:
    """The run's process was held off the CPU for 5 ticks (stopped, or starved on a loaded host): when it ran
    again it read the executor's FIRED of tick 27 and the profiler's TIMECODEs up to 32 in one go, in either
    order. When the FIRED arrived is unknown, so its tick says nothing of the nodes: no timecode fault (CI saw
    one, and an event lost to it). The process's own stall watch (mmsched.host.ownstall) says so."""
    r = runner_that_read_timecodes_up_to(32)
    resumed = 32 * TICK + 0.013
    r.own_stalls.beat(27 * TICK + 0.02)
    r.own_stalls.beat(resumed)                          # nothing ran in between: a stall of 5 ticks
    r.recovery.check_executor_tick(r.state, 27, "FIRED of tag 21", resumed + 0.001)
    assert r.faults.section() == [] and r.counters["tick_checks_after_own_stall"] == 1
    # long after the stall the same tick is a disagreement again
    t = resumed
    while t < 40 * TICK:                                # the process ran on, beating every 5 ms
        t += 0.005
        r.own_stalls.beat(t)
    r.recovery.check_executor_tick(r.state, 27, "FIRED of tag 22", 40 * TICK + 0.001)
    while t < 41.1 * TICK:
        t += 0.005
        r.own_stalls.beat(t)
    r.recovery.check_executor_tick(r.state, 28, "FIRED of tag 23", 41.1 * TICK)
    assert [f["kind"] for f in r.faults.section()] == ["timecode_fault"]


def test_a_frame_read_from_a_long_backlog_is_no_evidence_of_the_nodes() -> None:
    """The run's loop fell 10 ticks behind (a kilohertz run on a busy host): hundreds of frames wait. A FIRED of
    tick 86 handled when the PC's clock says 103 says when the loop got to it, not when it came: not judged
    (counted). With no backlog the same frame is a timecode fault."""
    r = runner_that_read_timecodes_up_to(93)
    for _ in range(recovery.BACKLOG_FRAMES):
        r.inbox.put(object())
    r.recovery.check_executor_tick(r.state, 86, "FIRED of tag 5213", 103 * TICK)
    assert r.faults.section() == [] and r.counters["tick_checks_in_backlog"] == 1
    while not r.inbox.empty():
        r.inbox.get()
    r.recovery.check_executor_tick(r.state, 86, "FIRED of tag 5213", 103 * TICK)
    r.recovery.check_executor_tick(r.state, 87, "FIRED of tag 5214", 104.1 * TICK)
    assert [f["kind"] for f in r.faults.section()] == ["timecode_fault"]
