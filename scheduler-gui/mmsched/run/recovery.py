"""Faults of the rig and the way back from them (faults.py keeps the ledger; this is what the run does).

A node that resets mid-run (a HELLO, or a profiler timecode that went back), a timecode the nodes disagree on,
a request nobody answered, frames lost on a line and the nodes' own fault counters are recorded as faults; the
events they touch end `lost` with the fault's kind, never as misses of the system under test, and the run is
invalid. The run recovers where it can and goes on: an executor that reset gets its MODE again, a profiler that
reset starts the timecode count again, and the offset is learned again (nodesetup.learn_offset); until then the
fault is open and the events created meanwhile are touched too.

`Recovery` is given what it acts on: the session (the requests of the way back), the run's events (the ones a
fault ends), the fault ledger, the tally, the run's own stall watch and the endpoint (how far the loop is
behind); each check is given the run state. It keeps what it saw of the nodes: the nodes that reset
(`reset_nodes`) and the links that went away (`link_faults`), for the sidecar. A link given up is returned as
the run's invalid reason, not written into the run.
"""

from __future__ import annotations

import mmproto as mp
from mmproto import LinkDown, LinkError

from dataclasses import dataclass, field
from typing import Any, Callable

from ..link.endpoint import Endpoint
from ..model.reason import Reason
from ..model.event import Event
from .eventbook import EventBook
from ..verdict.faults import FaultLedger, counter_faults, describe_counters
from ..host.ownstall import StallWatch
from .runstate import RunState, TickSuspect
from ..model.servo import ClockServo
from ..link.session import Session
from ..model.tally import Tally


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
            faults.reach_back(f, [x for x in book.events.tail(256)
                                  if x.terminal and x.scheduled_tc >= e.scheduled_tc - 1])


@dataclass
class Recovery:
    session: Session
    endpoint: Endpoint
    book: EventBook
    faults: FaultLedger
    tally: Tally
    own_stalls: StallWatch
    mode: str                                  # the run's mode: which nodes it measures
    log: Callable[[str], None] | None = None   # progress lines, or None
    reset_nodes: set[str] = field(default_factory=set)               # nodes that reset mid-run
    link_faults: list[dict[str, Any]] = field(default_factory=list)  # the sidecar's `link_faults`

    def say(self, text: str) -> None:
        if self.log:
            self.log(text)

    def check_executor_tick(self, st: RunState, tc: int, what: str, at: float) -> None:
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
        agreeing in between; an agreeing frame clears it (counted). A frame *ahead* of the PC's tick is a fault at
        once."""
        cur = st.tracker.current
        if cur is None or st.recovering is not None:
            return
        if self.own_stalls.covers(at, 2 * st.timebase.tick_s):
            self.tally.count("tick_checks_after_own_stall")
            return
        if self.endpoint.backlog(self.session.inbox) >= BACKLOG_FRAMES:
            self.tally.count("tick_checks_in_backlog")
            return
        clock = st.tracker.now_tc(at) if st.tracker.ready else cur
        first = st.tick_suspect
        if min(cur, clock) - 2 <= tc <= max(cur, clock) + 1:
            if first is not None:               # a lone disagreement: that frame was read late, the nodes agree
                self.tally.count("tick_checks_not_confirmed")
                st.tick_suspect = None
            return
        if first is None and tc < min(cur, clock) - 2:
            # behind the PC's tick: what a frame read late looks like (a late read never makes a tick look ahead)
            st.tick_suspect = TickSuspect(tc, what, at, cur, clock, tuple(self.book.in_flight()))
            self.tally.count("tick_checks_suspect")
            return
        if first is None:                       # ahead of any tick the PC can explain: no late read makes that
            st.tick_suspect = TickSuspect(tc, what, at, cur, clock, tuple(self.book.in_flight()))
            self.raise_tick_fault(st)
            self.recover(st, "status", at)
            return
        if at - first.at < st.timebase.tick_s:  # read in the same late batch as the first: no new evidence
            return
        self.raise_tick_fault(st, f"; {what} read {at - first.at:.3f} s later at tick {tc} disagreed too")
        self.recover(st, "status", at)

    def raise_tick_fault(self, st: RunState, more: str = "") -> None:
        """The pending disagreement (RunState.tick_suspect) as a timecode fault, dated at its first frame, touching the
        events in flight then and now."""
        assert st.tick_suspect is not None
        first, st.tick_suspect = st.tick_suspect, None
        self.tally.count("ack_timecode_mismatch")
        touched = list(first.in_flight) + [e for e in self.book.in_flight() if all(e is not x for x in first.in_flight)]
        self.faults.raise_("timecode_fault", "executor", st.rel(first.at),
                           f"{first.what} stamped at tick {first.tc}, the profiler's is {first.cur} (by the PC's clock "
                           f"{first.clock}){more}", touched)

    def measured_nodes(self) -> set[str]:
        """The nodes whose faults can touch what the run measures: normal mode uses the profiler only."""
        return {"profiler"} if self.mode == "normal" else {"profiler", "executor"}

    def node_reset(self, st: RunState, node: str, detail: str, at: float) -> None:
        """A node reset mid-run: every event in flight ends lost now. An executor lost its list, its mode and
        (verification) its tag count: it gets the run's MODE again. A profiler restarted its timecode count,
        which every event in flight was scheduled on: the count, the tick estimate and the offset start again."""
        self.reset_nodes.add(node)
        if node == "profiler":
            if st.tick_suspect is not None:     # the reset's first sign, not yet confirmed: it is the reset's doing
                self.raise_tick_fault(st)
            self.faults.explain("timecode_fault", st.rel(at) - RESET_EXPLAINS_S, "node_reset", node)
        self.faults.raise_("node_reset", node, st.rel(at), detail, self.book.in_flight())
        for e in self.book.in_flight():
            self.book.end(e, "lost", "node_reset")
        if node == "executor":
            if st.mode_frame is not None:
                self.recover(st, "mode", at)
            return
        st.matcher.drop_stale_results(1 << 40)
        st.tracker.restart()
        st.servo = ClockServo(st.timebase.tick_s, floor_s=st.servo.floor_s)
        st.last_gen_tc = None
        self.recover(st, "timecode", at)

    def check_timecode(self, st: RunState, timecode: int, at: float) -> None:
        """A TIMECODE whose own 32-bit count disagrees with our extension of the frames before it: gone back,
        the profiler reset (its HELLO was lost); gone forward, a fault of time."""
        cur = st.tracker.current
        if cur is None or not st.tracker.disagrees(timecode):
            return
        if timecode < cur:
            self.node_reset(st, "profiler", f"the profiler's timecode went back from {cur} to {timecode} "
                                            f"(a reset whose HELLO was not seen)", at)
        elif st.generating or self.book.events:
            self.faults.raise_("timecode_fault", "profiler", st.rel(at),
                               f"the profiler's timecode jumped from {cur} to {timecode}", self.book.in_flight())
            self.recover(st, "timecode", at)

    def recover(self, st: RunState, step: str, at: float) -> None:
        """Starts the way back from a fault: `mode` (send the executor its MODE; its STATUS leads to
        `timecode`), `timecode` (RESYNC_TICKS TIMECODE frames: the tick estimate has a base and the executor's
        count follows the port again; then `status` if there is an executor), `status` (learn the offset from
        a fresh STATUS). The fault closes when the last step is done."""
        st.recovering, st.recovery_tries, st.recovery_sent = step, 0, at
        st.recovery_tcs = 0
        self.send_recovery(st, at)

    def send_recovery(self, st: RunState, at: float) -> None:
        try:
            if st.recovering == "mode" and st.mode_frame is not None:
                self.session.send("executor", st.mode_frame)
            elif st.recovering == "status":
                self.session.send("executor", mp.Query(what=mp.Status.TYPE))
        except LinkError:
            pass                                 # the link fault is reported by the link itself
        st.recovery_sent = at
        st.recovery_tries += 1

    def recovered_timecode(self, st: RunState, at: float) -> None:
        if st.recovering != "timecode":
            return
        st.recovery_tcs += 1
        if st.recovery_tcs >= RESYNC_TICKS:      # the tick estimate has a base, the executor's count is right
            if self.session.has("executor") and st.mode_frame is not None and self.session.alive("executor"):
                self.recover(st, "status", at)
            else:
                self.recovered(st, at)

    def recovered(self, st: RunState, at: float) -> None:
        st.recovering = None
        self.faults.close(st.rel(at))

    def check_recovery(self, st: RunState, now: float) -> None:
        if st.recovering in ("mode", "status") and now - st.recovery_sent > RECOVERY_RETRY_S \
                and st.recovery_tries < RECOVERY_TRIES:
            self.tally.count("recovery_retries")
            self.send_recovery(st, now)

    def judge_counters(self, st: RunState | None, node_counters: dict[str, Any], counters_before: dict[str, Any],
                       explained: dict[str, dict[str, int]] | None = None) -> None:
        """The nodes' own fault counters (`node_counters` at the end, `counters_before` at set-up, by node) take
        part in the verdict: each that rose is a fault of the run, less what `explained` (node -> field -> count)
        says was judged already."""
        at = st.rel(self.endpoint.clock()) if st is not None else 0.0
        for node, after in node_counters.items():
            if node not in self.measured_nodes():
                continue
            if node not in counters_before and node not in self.reset_nodes:
                continue                         # no baseline: the counters cannot be judged
            for kind, rises in counter_faults(node, counters_before.get(node), after, node in self.reset_nodes,
                                              bool(self.reset_nodes), (explained or {}).get(node)).items():
                self.faults.raise_(kind, node, at, describe_counters(node, rises), (), window=False)

    def profiler_silent(self, st: RunState, now: float) -> bool:
        """No profiler frame arrived for SILENCE_S: a link fault. Judged, as deadlines are, only once every frame
        received is read: a run's thread held up for seconds (a starved host) reads frames that arrived long ago, and
        the oldest of them is no sign that the profiler went quiet."""
        return now - st.last_profiler_frame > SILENCE_S and not st.link_failed and not self.session.pending()

    def check_silence(self, st: RunState, now: float) -> Reason | None:
        """A silent profiler (profiler_silent) is a fault of its link, not reconnected: the run's invalid reason."""
        if self.profiler_silent(st, now):
            return self.link_fault(st, LinkDown("profiler", now, f"silent for {SILENCE_S} s"), reconnect=False)
        return None

    def link_fault(self, st: RunState, down: LinkDown, reconnect: bool = True) -> Reason | None:
        """A port that went away: the events in flight end lost, the port is tried again (`reconnect`) and the
        way back begins. One that does not come back ends the run: its invalid reason is returned."""
        if st.link_failed:
            return None
        if down.node == "executor" and self.mode == "normal":
            self.link_faults.append({"node": down.node, "at_s": st.rel(down.at), "error": down.error,
                                     "reconnected": False, "affected": 0})
            return None
        self.say(f"link fault: {down.node}: {down.error}")
        affected = self.book.in_flight()
        for e in affected:
            self.book.end(e, "lost", "link_fault")
        ok = self.session.reconnect(down.node) if reconnect else False
        refusal = self.session.refusals.get(down.node) if reconnect else None
        self.link_faults.append({"node": down.node, "at_s": st.rel(down.at), "error": down.error,
                                 "reconnected": ok, "affected": len(affected),
                                 **({"not_reopened": refusal} if refusal is not None else {})})
        if ok:
            # back: the frames that came meanwhile are read now, late; the events made from them are touched
            # until the tick estimate has a base again
            self.faults.raise_("link_fault", down.node, st.rel(down.at),
                               f"the {down.node} port vanished ({down.error}) and was reopened", affected)
            self.recover(st, "timecode", self.endpoint.clock())
            if self.session.reset_on_open and (st.generating or self.book.events) \
                    and down.node in self.measured_nodes():
                # (an Arduino's DTR) the reopen reset the node: the run's reset-fault path, as for a HELLO mid-run
                self.tally.count(f"{down.node}_reset_by_reopen")
                self.node_reset(st, down.node, f"the {down.node}'s port was reopened, which resets it (reset on open)",
                                self.endpoint.clock())
            return None
        why = f"not reopened: {refusal}" if refusal is not None else "reconnect failed"
        st.link_failed = True
        st.generating = False
        return Reason("link_fault", f"link_fault: {down.node} port vanished at {st.rel(down.at):.3f} s "
                                    f"({why}); {len(affected)} events lost")


def reset_cause_text(hello: mp.Hello) -> str:
    """HELLO.reset_cause in words (SPEC.md section 5); a node that cannot tell says 0."""
    return "reset cause: " + mp.ResetCause.words(hello.reset_cause)
