"""Faults of the rig and the way back from them (faults.py keeps the ledger; this is what the run does).

A node that resets mid-run (a HELLO, or a profiler timecode that went back), a timecode the nodes disagree on,
a request nobody answered, frames lost on a line and the nodes' own fault counters are recorded as faults; the
events they touch end `lost` with the fault's kind, never as misses of the system under test, and the run is
invalid. The run recovers where it can and goes on: an executor that reset gets its MODE again, a profiler that
reset starts the timecode count again, and the offset is learned again (nodesetup.learn_offset); until then the
fault is open and the events created meanwhile are touched too.
"""

from __future__ import annotations

import mmproto as mp
from mmproto import LinkDown, LinkError

from .endpoint import Reason
from .event import Event
from .eventbook import EventBook
from .faults import FaultLedger, counter_faults, describe_counters
from .runface import RunFace
from .runstate import RunState, TickSuspect
from .servo import ClockServo


SILENCE_S = 3.0            # no profiler frame for this long: the profiler link is faulty
RECOVERY_RETRY_S = 1.5     # a recovery request (MODE, QUERY STATUS) not answered this long is sent again
RECOVERY_TRIES = 4         # ... this many times; then the fault stays open to the end of the run
# TIMECODE frames to wait after a node's restart before the offset is learned again: the executor's timecode
# extension takes a changed port value as a glitch and resynchronises on the next one (executor/core/ex_tc.c),
# so its count is right from the second change on; the third frame leaves a tick of margin.
RESYNC_TICKS = 3
# A profiler that resets drops its timecode port at once, so the executor's frames disagree with the tick
# (a timecode fault) before the profiler's HELLO arrives: its boot and the frame take 30-300 ms (bench: 228 ms
# from `reset profiler` to the HELLO). Timecode faults this recent are put down to the reset.
RESET_EXPLAINS_S = 1.0


# Frames waiting to be handled beyond which the run's loop is behind (a kilohertz run on a busy host), so a
# frame's arrival says little of when it came: a 2-minute run at 1 ms had its loop 10 ticks behind, read a FIRED
# 17 ticks after its tick and took it for a timecode fault (104,559 events lost to it). A healthy run has a few
# frames waiting at most (two an event at 1 kHz, handled in tens of us); a fault of the nodes persists and is
# judged when the loop has caught up.
BACKLOG_FRAMES = 256


def check_executor_tick(r: RunFace, tc: int, what: str, at: float) -> None:
    """An executor frame's timecode (mapped by the offset), arrived at `at`, must be a tick the PC can explain:
    within two ticks before (the frame's own line time, a frame that waited) and one after (the estimate's own
    error) the tick in force, which is the newer of the profiler's last TIMECODE read and the tick the PC's clock
    says is in force at `at` (timecode.now_tc). The last TIMECODE alone lags when the PC read its frames late or
    some were lost on the line: that is no disagreement of the nodes. Else the nodes disagree on the tick, a
    timecode fault; the offset is learned again. Not judged at all when the run's own process was held off the
    CPU at `at` or up to two ticks before it (ownstall.py), nor while BACKLOG_FRAMES or more frames wait to be
    handled (the loop is behind): when the frame came is unknown then.

    A frame whose tick is *behind* is not yet a fault: on a loaded host the run's reader thread can be held back
    while the rest of the process runs (seen on a 2-vCPU VM at load 4: an ACK read four ticks, 284 ms, after the
    executor sent it, the bench's output on time and the process's stall watch quiet), and a late read makes a
    frame look old, never new. A disagreement of the nodes (a loose or stuck timecode wire, a count that slipped)
    persists: the fault is raised when a frame read at least a tick after the first disagrees too, with no frame
    agreeing in between; an agreeing frame clears it (counted). A frame *ahead* of the PC's tick is a fault at once."""
    st = r.state
    assert st is not None
    cur = st.tracker.current
    if cur is None or st.recovering is not None:
        return
    if r.own_stalls.covers(at, 2 * st.timebase.tick_s):
        r.count("tick_checks_after_own_stall")
        return
    if r.endpoint.backlog(r.inbox) >= BACKLOG_FRAMES:
        r.count("tick_checks_in_backlog")
        return
    clock = st.tracker.now_tc(at) if st.tracker.ready else cur
    first = st.tick_suspect
    if min(cur, clock) - 2 <= tc <= max(cur, clock) + 1:
        if first is not None:               # a lone disagreement: that frame was read late, the nodes agree
            r.count("tick_checks_not_confirmed")
            st.tick_suspect = None
        return
    if first is None and tc < min(cur, clock) - 2:
        # behind the PC's tick: what a frame read late looks like (a late read never makes a tick look ahead)
        st.tick_suspect = TickSuspect(tc, what, at, cur, clock, tuple(r.in_flight()))
        r.count("tick_checks_suspect")
        return
    if first is None:                       # ahead of any tick the PC can explain: no late read makes that
        st.tick_suspect = TickSuspect(tc, what, at, cur, clock, tuple(r.in_flight()))
        raise_tick_fault(r)
        recover(r, "status", at)
        return
    if at - first.at < st.timebase.tick_s:  # read in the same late batch as the first: no new evidence
        return
    raise_tick_fault(r, f"; {what} read {at - first.at:.3f} s later at tick {tc} disagreed too")
    recover(r, "status", at)


def raise_tick_fault(r: RunFace, more: str = "") -> None:
    """The pending disagreement (RunState.tick_suspect) as a timecode fault, dated at its first frame, touching the
    events in flight then and now."""
    st = r.state
    assert st is not None and st.tick_suspect is not None
    first, st.tick_suspect = st.tick_suspect, None
    r.count("ack_timecode_mismatch")
    touched = list(first.in_flight) + [e for e in r.in_flight() if all(e is not x for x in first.in_flight)]
    r.faults.raise_("timecode_fault", "executor", r.rel(first.at),
                    f"{first.what} stamped at tick {first.tc}, the profiler's is {first.cur} (by the PC's clock "
                    f"{first.clock}){more}", touched)


def measured_nodes(r: RunFace) -> set[str]:
    """The nodes whose faults can touch what the run measures: normal mode uses the profiler only."""
    return {"profiler"} if r.cfg.mode == "normal" else {"profiler", "executor"}


def check_fired_ticks(st: RunState, book: EventBook, faults: FaultLedger, due: list[Event], at_s: float) -> None:
    """An event the executor says it fired at tick T whose edge the profiler stamped, with its id, at a
    neighbouring tick instead (a RESULT left unjoined): the executor's count and the profiler's disagree
    by that much, which no frame's timing can explain (a stuck or loose timecode wire). A timecode fault in
    `faults`, seen at `at_s`."""
    for e in due:
        if e.terminal or e.fired_tc is None:
            continue
        near = [res for res in st.matcher.pending_results
                if res.event_id == e.event_id and res.timecode != e.fired_tc and abs(res.timecode - e.fired_tc) <= 2]
        if near:
            f = faults.raise_("timecode_fault", "executor", at_s,
                              f"event {e.event} fired at the executor's tick {e.fired_tc}, its edge came in "
                              f"the profiler's tick {near[0].timecode}", [e, *book.in_flight()])
            # the count was wrong by the time this event fired: so for those due since
            # (the last events suffice: they are in creation order, a few per tick)
            faults.reach_back(f, [x for x in book.events[-256:]
                                  if x.terminal and x.scheduled_tc >= e.scheduled_tc - 1])


def node_reset(r: RunFace, node: str, detail: str, at: float) -> None:
    """A node reset mid-run: every event in flight ends lost now. An executor lost its list, its mode and
    (verification) its tag count: it gets the run's MODE again. A profiler restarted its timecode count,
    which every event in flight was scheduled on: the count, the tick estimate and the offset start again."""
    st = r.state
    assert st is not None
    r.reset_nodes.add(node)
    if node == "profiler":
        if st.tick_suspect is not None:     # the reset's first sign, not yet confirmed: it is the reset's doing
            raise_tick_fault(r)
        r.faults.explain("timecode_fault", r.rel(at) - RESET_EXPLAINS_S, "node_reset", node)
    r.faults.raise_("node_reset", node, r.rel(at), detail, r.in_flight())
    for e in r.in_flight():
        r.end(e, "lost", "node_reset")
    if node == "executor":
        if r.mode_frame is not None:
            recover(r, "mode", at)
        return
    st.matcher.drop_stale_results(1 << 40)
    st.tracker.restart()
    st.servo = ClockServo(st.timebase.tick_s, floor_s=st.servo.floor_s)
    st.last_gen_tc = None
    recover(r, "timecode", at)


def check_timecode(r: RunFace, timecode: int, at: float) -> None:
    """A TIMECODE whose own 32-bit count disagrees with our extension of the frames before it: gone back,
    the profiler reset (its HELLO was lost); gone forward, a fault of time."""
    st = r.state
    assert st is not None
    cur = st.tracker.current
    if cur is None or not st.tracker.disagrees(timecode):
        return
    if timecode < cur:
        node_reset(r, "profiler", f"the profiler's timecode went back from {cur} to {timecode} "
                                    f"(a reset whose HELLO was not seen)", at)
    elif st.generating or r.events:
        r.faults.raise_("timecode_fault", "profiler", r.rel(at),
                           f"the profiler's timecode jumped from {cur} to {timecode}", r.in_flight())
        recover(r, "timecode", at)


def recover(r: RunFace, step: str, at: float) -> None:
    """Starts the way back from a fault: `mode` (send the executor its MODE; its STATUS leads to
    `timecode`), `timecode` (RESYNC_TICKS TIMECODE frames: the tick estimate has a base and the executor's
    count follows the port again; then `status` if there is an executor), `status` (learn the offset from
    a fresh STATUS). The fault closes when the last step is done."""
    st = r.state
    assert st is not None
    st.recovering, st.recovery_tries, st.recovery_sent = step, 0, at
    st.recovery_tcs = 0
    send_recovery(r, at)


def send_recovery(r: RunFace, at: float) -> None:
    st = r.state
    assert st is not None
    try:
        if st.recovering == "mode" and r.mode_frame is not None:
            r.session.send("executor", r.mode_frame)
        elif st.recovering == "status":
            r.session.send("executor", mp.Query(what=mp.Status.TYPE))
    except LinkError:
        pass                                 # the link fault is reported by the link itself
    st.recovery_sent = at
    st.recovery_tries += 1


def recovered_timecode(r: RunFace, at: float) -> None:
    st = r.state
    assert st is not None
    if st.recovering != "timecode":
        return
    st.recovery_tcs += 1
    if st.recovery_tcs >= RESYNC_TICKS:      # the tick estimate has a base, the executor's count is right
        if r.session.has("executor") and r.mode_frame is not None and r.session.alive("executor"):
            recover(r, "status", at)
        else:
            recovered(r, at)


def recovered(r: RunFace, at: float) -> None:
    st = r.state
    assert st is not None
    st.recovering = None
    r.faults.close(r.rel(at))


def check_recovery(r: RunFace, now: float) -> None:
    st = r.state
    assert st is not None
    if st.recovering in ("mode", "status") and now - st.recovery_sent > RECOVERY_RETRY_S \
            and st.recovery_tries < RECOVERY_TRIES:
        r.count("recovery_retries")
        send_recovery(r, now)


def judge_counters(r: RunFace, explained: dict[str, dict[str, int]] | None = None) -> None:
    """The nodes' own fault counters take part in the verdict: each that rose is a fault of the run, less
    what `explained` (node -> field -> count) says was judged already."""
    at = r.rel(r.now())
    for node, after in r.node_counters.items():
        if node not in measured_nodes(r):
            continue
        if node not in r.counters_before and node not in r.reset_nodes:
            continue                         # no baseline: the counters cannot be judged
        for kind, rises in counter_faults(node, r.counters_before.get(node), after, node in r.reset_nodes,
                                          bool(r.reset_nodes), (explained or {}).get(node)).items():
            r.faults.raise_(kind, node, at, describe_counters(node, rises), (), window=False)


def profiler_silent(r: RunFace, now: float) -> bool:
    """No profiler frame arrived for SILENCE_S: a link fault. Judged, as deadlines are, only once every frame
    received is read: a run's thread held up for seconds (a starved host) reads frames that arrived long ago, and
    the oldest of them is no sign that the profiler went quiet."""
    st = r.state
    assert st is not None
    return now - st.last_profiler_frame > SILENCE_S and not st.link_failed and not r.session.pending()


def check_silence(r: RunFace, now: float) -> None:
    """A silent profiler (profiler_silent) is a fault of its link, not reconnected."""
    if profiler_silent(r, now):
        link_fault(r, LinkDown("profiler", now, f"silent for {SILENCE_S} s"), reconnect=False)


def link_fault(r: RunFace, down: LinkDown, reconnect: bool = True) -> None:
    st = r.state
    assert st is not None
    if st.link_failed:
        return
    if down.node == "executor" and r.cfg.mode == "normal":
        r.link_faults.append({"node": down.node, "at_s": r.rel(down.at), "error": down.error,
                                 "reconnected": False, "affected": 0})
        return
    r.say(f"link fault: {down.node}: {down.error}")
    affected = r.in_flight()
    for e in affected:
        r.end(e, "lost", "link_fault")
    ok = r.session.reconnect(down.node) if reconnect else False
    refusal = r.session.refusals.get(down.node) if reconnect else None
    r.link_faults.append({"node": down.node, "at_s": r.rel(down.at), "error": down.error,
                             "reconnected": ok, "affected": len(affected),
                             **({"not_reopened": refusal} if refusal is not None else {})})
    if ok:
        # back: the frames that came meanwhile are read now, late; the events made from them are touched
        # until the tick estimate has a base again
        r.faults.raise_("link_fault", down.node, r.rel(down.at),
                           f"the {down.node} port vanished ({down.error}) and was reopened", affected)
        recover(r, "timecode", r.now())
        if r.session.reset_on_open and (st.generating or r.events) and down.node in measured_nodes(r):
            # (an Arduino's DTR) the reopen reset the node: the run's reset-fault path, as for a HELLO mid-run
            r.count(f"{down.node}_reset_by_reopen")
            node_reset(r, down.node, f"the {down.node}'s port was reopened, which resets it (reset on open)",
                            r.now())
        return
    why = f"not reopened: {refusal}" if refusal is not None else "reconnect failed"
    r.invalid.append(Reason("link_fault", f"link_fault: {down.node} port vanished at {r.rel(down.at):.3f} s "
                               f"({why}); {len(affected)} events lost"))
    st.link_failed = True
    st.generating = False


def reset_cause_text(hello: mp.Hello) -> str:
    """HELLO.reset_cause in words (SPEC.md section 5); a node that cannot tell says 0."""
    return "reset cause: " + mp.ResetCause.words(hello.reset_cause)
