"""The nodes' set-up for a run and their wind-down, around the run's events.

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

import mmproto as mp
from mmproto import Arrival, LinkError

from . import profhist
from .runface import RunFace
from .timecode import round256



class SetupError(RuntimeError):
    """A node said HELLO but did not answer the run's set-up."""

    code = "setup"


class LineBudget(SetupError):
    """The nodes' line cannot carry the run's schedule grid (grid.line_problem): a RESULT per event."""

    code = "line_budget"


class LoadUnavailable(SetupError):
    """The run's PC load could not be started (mmsched.load.unavailable says why)."""

    code = "load_unavailable"


def setup_modes(r: RunFace) -> None:
    """Two TIMECODE frames (the tick estimate has a base), the executor's MODE for the run answered by its STATUS
    (asked up to three times: a frame can be lost), the offset of its timecode learned, the nodes' counters read
    before the run, (normal mode's calibrations follow: calibration.py)."""
    cfg, st = r.cfg, r.state
    assert st is not None
    r.wait_item(mp.Timecode, "profiler", 3.0)
    r.wait_item(mp.Timecode, "profiler", 3.0)   # two frames: the tick estimate has a base
    if r.session.has("executor"):
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
            r.session.send("executor", frame)
            try:
                # the STATUS of this MODE: its mode and the load it now runs (a refused MODE changes neither)
                got = r.wait_item(mp.Status, "executor", 1.5, where=lambda m: (
                    m.mode, m.cpu_load, m.periodic_period_us, m.periodic_exec_us) == (
                    mode, frame.cpu_load, frame.periodic_period_us, frame.periodic_exec_us))
                break
            except SetupError:
                if attempt == 2 or not r.session.alive("executor"):
                    raise
                r.count("mode_retries")
        learn_offset(r, got.message)
    baseline_counters(r)


def baseline_counters(r: RunFace) -> None:
    """The nodes' COUNTERS before the run: on boards they hold earlier runs' counts, so the run judges
    their rise (faults.counter_faults). A node that does not answer is not judged by its counters."""
    for node, link in r.session.links.items():
        link.send(mp.Query(what=mp.Counters.TYPE))
        try:
            got = r.wait_item(mp.Counters, node, 1.5)
            r.counters_before[node] = dict(got.message.__dict__)
            if node == "profiler" and r.state is not None:
                r.state.losses.baseline(r.counters_before[node])
        except SetupError:
            r.count(f"{node}_counters_unjudged")
    r.node_counters.clear()


def learn_offset(r: RunFace, status: mp.Status) -> None:
    """tc_offset = the profiler's timecode - the executor's, from its STATUS against the profiler's last
    TIMECODE, rounded to a multiple of 256 (the module's text)."""
    st = r.state
    assert st is not None and st.tracker.current is not None
    new = round256(st.tracker.current - status.timecode)
    if new != st.tc_offset and st.offset_learned:
        r.count("tc_offset_changes")
    st.offset_learned = True
    r.counters["tc_offset_learned"] = 1
    st.tc_offset = new


def finish_nodes(r: RunFace) -> None:
    """The profiler's histogram's final report, executor back to idle, then COUNTERS from both nodes (best
    effort: a dead link says nothing)."""
    finish_profiler_histogram(r)
    try:
        if r.session.alive("executor") and r.cfg.mode != "normal":
            r.session.send("executor", mp.Mode(mode=mp.ExecutorMode.IDLE,
                                                  dispatch=mp.Dispatch[r.cfg.dispatch.upper()],
                                                  distance=0, period=0, random_ids=0))
    except LinkError:
        pass
    asked = []
    for name, link in r.session.links.items():
        try:
            if link.vanished is None and link.hello is not None:
                link.send(mp.Query(what=mp.Counters.TYPE))
                asked.append(name)
        except LinkError:
            pass
    deadline = r.now() + 0.5
    while asked and r.now() < deadline and any(n not in r.node_counters for n in asked):
        item = r.endpoint.next_item(r.inbox, 0.05)
        if isinstance(item, Arrival) and isinstance(item.message, mp.Counters):
            r.node_counters[item.node] = dict(item.message.__dict__)
        elif isinstance(item, Arrival) and r.state is not None:
            try:
                r.handle(item)
            except Exception:  # noqa: BLE001 - late frames after the run cannot change it
                pass


def finish_profiler_histogram(r: RunFace) -> None:
    """Ends the profiler's series (HIST_ARM count 0) and takes its final full report (profhist.py): best effort,
    a histogram with no final report says so in the sidecar."""
    hist = r.state.profiler_hist if r.state is not None else None
    if hist is None or hist.final or not r.session.alive("profiler"):
        return
    try:
        r.session.send("profiler", profhist.end_message())
    except LinkError:
        return
    deadline = r.now() + profhist.FINAL_WAIT_S
    while not hist.final and r.now() < deadline:
        item = r.endpoint.next_item(r.inbox, 0.05)
        if isinstance(item, Arrival):
            try:
                r.handle(item)
            except Exception:  # noqa: BLE001 - late frames after the run cannot change it
                pass
