"""The nodes' set-up for a run, before its events (their wind-down after them: winddown.py).

Executor and profiler timecodes. Both nodes extend the same 8-bit port value, but the executor's 32-bit count
starts from the port value at its own boot, so its high bytes can differ from the profiler's (e.g. an executor
reset later than the profiler). The run learns `tc_offset` = profiler timecode - executor timecode from the
executor's STATUS (answer to MODE) against the profiler's last TIMECODE, rounded to a multiple of 256 (the low
bytes agree, up to the one tick the frames may straddle); SCHEDULE timecodes are sent as T - offset, and ACK /
FIRED / LOCAL_EVENT / ERROR timecodes are read as value + offset. Every ACK checks it (recovery.py: mapped ACK
timecode within one tick of the profiler's); a failed check is a timecode fault, and the offset is learned again
from a fresh STATUS.
"""

from __future__ import annotations

from typing import Any, Callable

import mmproto as mp
from mmproto import Arrival

from ..model.config import RunConfig
from .runstate import RunState
from ..link.session import Session
from ..model.tally import Tally
from ..model.timecode import round256

# The run's wait for one frame (want, node, timeout, where): every frame that arrives meanwhile is handled as in the
# run (Runner.wait_item); raises SetupError when none comes in time.
Wait = Callable[..., Arrival]



class SetupError(RuntimeError):
    """A node said HELLO but did not answer the run's set-up."""

    code = "setup"


class LineBudget(SetupError):
    """The nodes' line cannot carry the run's schedule grid (grid.line_problem): a RESULT per event."""

    code = "line_budget"


class LoadUnavailable(SetupError):
    """The run's PC load could not be started (mmsched.model.load.unavailable says why)."""

    code = "load_unavailable"


def setup_modes(cfg: RunConfig, st: RunState, session: Session, wait: Wait, tally: Tally,
                counters_before: dict[str, Any]) -> None:
    """Two TIMECODE frames (the tick estimate has a base), the executor's MODE for the run answered by its STATUS
    (asked up to three times: a frame can be lost), the offset of its timecode learned, the nodes' counters read
    before the run into `counters_before`, by node (normal mode's calibrations follow: calibration.py)."""
    wait(mp.Timecode, "profiler", 3.0)
    wait(mp.Timecode, "profiler", 3.0)   # two frames: the tick estimate has a base
    if session.has("executor"):
        mode = {"verification": mp.ExecutorMode.VERIFICATION, "mixed": mp.ExecutorMode.MIXED}.get(
            cfg.mode, mp.ExecutorMode.IDLE)
        own = mode == mp.ExecutorMode.VERIFICATION   # the executor schedules its own events
        load = cfg.executor_load
        frame = mp.Mode(mode=mode, dispatch=mp.Dispatch[cfg.dispatch.upper()],
                        distance=cfg.distance if own else 0, period=st.every_ticks(cfg) if own else 0,
                        random_ids=int(cfg.random_ids) if own else 0, cpu_load=int(load.cpu),
                        periodic_period_us=load.period_us, periodic_exec_us=load.exec_us)
        st.mode_frame = frame
        for attempt in range(3):          # a frame can be lost (noise, a busy host): ask again
            session.send("executor", frame)
            try:
                # the STATUS of this MODE: its mode and the load it now runs (a refused MODE changes neither)
                got = wait(mp.Status, "executor", 1.5, where=lambda m: (
                    m.mode, m.cpu_load, m.periodic_period_us, m.periodic_exec_us) == (
                    mode, frame.cpu_load, frame.periodic_period_us, frame.periodic_exec_us))
                break
            except SetupError:
                if attempt == 2 or not session.alive("executor"):
                    raise
                tally.count("mode_retries")
        learn_offset(st, tally, got.message)
    baseline_counters(st, session, wait, tally, counters_before)


def baseline_counters(st: RunState, session: Session, wait: Wait, tally: Tally, before: dict[str, Any]) -> None:
    """The nodes' COUNTERS before the run into `before`, by node: on boards they hold earlier runs' counts, so the
    run judges their rise (faults.counter_faults). A node that does not answer is not judged by its counters."""
    for node, link in session.links.items():
        link.send(mp.Query(what=mp.Counters.TYPE))
        try:
            got = wait(mp.Counters, node, 1.5)
            before[node] = dict(got.message.__dict__)
            if node == "profiler":
                st.losses.baseline(before[node])
        except SetupError:
            tally.count(f"{node}_counters_unjudged")


def learn_offset(st: RunState, tally: Tally, status: mp.Status) -> None:
    """tc_offset = the profiler's timecode - the executor's, from its STATUS against the profiler's last
    TIMECODE, rounded to a multiple of 256 (the module's text)."""
    assert st.tracker.current is not None
    new = round256(st.tracker.current - status.timecode)
    if new != st.tc_offset and st.offset_learned:
        tally.count("tc_offset_changes")
    st.offset_learned = True
    tally.counts["tc_offset_learned"] = 1
    st.tc_offset = new
