"""The headless experiment runner: one run of one mode against the bench or real boards, from the
HELLO handshake to the CSV + JSON on disk.

One thread (the caller's) owns every event: it takes frames and link faults from the sessions' shared
inbox in arrival order, creates events (tick-aligned right after a new TIMECODE, or free-running on a
timer), joins ACK / ERROR / FIRED / RESULT to them, ends them at their deadline, and writes the run.
Normal mode adds the Firer thread, which only writes FIRE frames at their moment.

Executor and profiler timecodes. Both nodes extend the same 8-bit port value, but the executor's
32-bit count starts from the port value at its own boot, so its high bytes can differ from the
profiler's (e.g. an executor reset later than the profiler). The run learns `tc_offset` =
profiler timecode - executor timecode from the executor's STATUS (answer to MODE) against the
profiler's last TIMECODE, rounded to a multiple of 256 (the low bytes agree, up to the one tick the
frames may straddle); SCHEDULE timecodes are sent as T - offset, and ACK / FIRED / LOCAL_EVENT / ERROR
timecodes are read as value + offset. Every ACK checks it (mapped ACK timecode within one tick of the
profiler's); a failed check re-learns it from a fresh STATUS and counts `tc_offset_changes`.
"""

from __future__ import annotations

import datetime as dt
import os
import queue
import resource
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mmproto as mp

from . import __version__
from .config import RunConfig
from .event import Event
from .export import write_run
from .firing import Firer
from .generator import Generator
from .invariant import InvariantViolation, check_invariant
from .load import Load, raise_priority
from .matching import RESULT_FIRE, RESULT_LOST_BEFORE, Matcher
from .outcome import apply_result, refusal_reason, silent_outcome
from .session import Arrival, Item, LinkDown, Session, SessionError
from .stats import slack_distribution, summarize
from .target import Target, lag_window
from .timecode import TimecodeTracker

MODE_CODES = {"verification": 1, "mixed": 2}
DISPATCH_CODES = {"isr": 0, "task": 1}
SILENCE_S = 3.0            # no profiler frame for this long: the profiler link is faulty
RECONNECT_S = 2.0
# The bench's lag bound. Normal mode: the PC's FIRE is stamped in virtual time, so lag enters the
# measured latency directly: 1 ms, the paper's late bound. Mixed and verification: the latency is
# measured wholly inside virtual time (executor edge -> profiler capture on one simulated clock); lag
# only shifts the PC's messages in virtual time by at most the lag, so the bound is a tenth of the time a
# SCHEDULE written right after its TIMECODE has to spare before its tick: 47 ms one tick ahead at 9600
# baud (SPEC.md section 8), one tick (71.1 ms) more per further tick of distance, i.e. 4.7 ms one tick
# ahead and 11.8 ms two ahead. `--lag-bound-us` overrides it.
NORMAL_LAG_BOUND_US = 1000.0
SPARE_ONE_AHEAD_US = 47_000.0
TICK_US = 71_111.0


def lag_bound_us(mode: str, distance: int) -> float:
    if mode == "normal":
        return NORMAL_LAG_BOUND_US
    return round(0.1 * (SPARE_ONE_AHEAD_US + (max(distance, 1) - 1) * TICK_US), -2)


def round256(d: int) -> int:
    return ((d + 128) // 256) * 256


@dataclass
class RunResult:
    events: list[Event]
    sidecar: dict[str, Any]
    csv_path: Path | None
    json_path: Path | None

    @property
    def valid(self) -> bool:
        return bool(self.sidecar["valid"])

    @property
    def summary(self) -> dict[str, Any]:
        return self.sidecar["summary"]


@dataclass
class Runner:
    cfg: RunConfig
    target: Target
    log: Any = None                                   # callable(str) for progress lines, or None
    events: list[Event] = field(default_factory=list, init=False)
    inbox: "queue.Queue[Item]" = field(default_factory=queue.Queue, init=False)
    sessions: dict[str, Session] = field(default_factory=dict, init=False)
    counters: dict[str, int] = field(default_factory=dict, init=False)
    link_faults: list[dict[str, Any]] = field(default_factory=list, init=False)
    node_counters: dict[str, Any] = field(default_factory=dict, init=False)
    invalid: list[str] = field(default_factory=list, init=False)
    tc_offset: int = field(default=0, init=False)
    # Hooks for a live view (the GUI), Qt-free: `observer(kind, obj)` is called from the run's threads
    # with ("timecode", extended tc), ("event", Event) whenever an event is created or changes, and
    # ("phase", "running"/"done"); it must be quick and must not mutate what it is given. Setting
    # `stop_requested` ends event generation early; the events in flight still end as usual.
    observer: Any = None
    stop_requested: threading.Event = field(default_factory=threading.Event, init=False)

    def notify(self, kind: str, obj: Any) -> None:
        if self.observer is not None:
            try:
                self.observer(kind, obj)
            except Exception:  # noqa: BLE001 - a broken view must not break the run
                self.count("observer_errors")

    # ---------------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        if self.log:
            self.log(text)

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    def run(self) -> RunResult:
        cfg = self.cfg
        wall0 = time.monotonic()
        cpu0 = time.process_time()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        load: Load | None = None
        priority = None
        lag_before = lag_after = None
        firer: Firer | None = None
        try:
            if self.target.lag_bound_us is None:
                self.target.lag_bound_us = lag_bound_us(cfg.mode, cfg.distance)
            prof_url, exe_url = self.target.open()
            if self.target.pid is not None:
                # A realtime bench already runs SCHED_FIFO (see bench.host in the sidecar); nice -10 is
                # the fallback that still keeps it above the load's nice-0 workers.
                priority = raise_priority(self.target.pid)
            self.sessions["profiler"] = Session("profiler", prof_url, self.inbox)
            if exe_url and (cfg.mode != "normal" or self.target.kind == "bench"):
                self.sessions["executor"] = Session("executor", exe_url, self.inbox)
            for s in self.sessions.values():
                s.open()
            for s in self.sessions.values():
                s.handshake()
            hello = self.sessions["profiler"].hello
            assert hello is not None
            self.timebase = mp.TimeBase.from_hello(hello)
            self.baud = hello.baud
            self.tracker = TimecodeTracker(self.timebase.tick_s, self.baud)
            if cfg.load:
                load = Load(self.expected_duration_s() + 30).start()
                self.say(f"load: {' '.join(load.command)}; bench priority: {priority}")
            self.setup_modes()
            lag_before = self.target.status()
            if cfg.mode == "normal":
                firer = Firer(self.send_fire, cfg.accuracy, on_error=self.fire_failed).start()
            self.firer = firer
            self.notify("phase", "running")
            self.loop(firer)
        except SessionError as exc:
            self.invalid.append(f"session: {exc}")
            self.say(f"run failed: {exc}")
        finally:
            if firer is not None:
                firer.stop()
            if load is not None:
                load.stop()
            self.finish_nodes()
            lag_after = self.target.status()
            self.target.close()
            for s in self.sessions.values():
                s.close()
        wall = time.monotonic() - wall0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = {"normal_mode_cpu_s": firer.cpu_s if firer else 0.0, "wall_s": wall,
               "process_cpu_s": time.process_time() - cpu0,
               "process_cpu_share": (time.process_time() - cpu0) / wall if wall > 0 else None,
               "normal_mode_cpu_share": (firer.cpu_s / wall) if firer and wall > 0 else None,
               "involuntary_context_switches": ru1.ru_nivcsw - ru0.ru_nivcsw,
               "accuracy": cfg.accuracy if cfg.mode == "normal" else None,
               "fire_wakeup_late_us_max": (max(firer.late_wakeups_s) * 1e6) if firer and firer.late_wakeups_s else None}
        result = self.export(lag_before, lag_after, cpu, load, priority)
        self.notify("phase", "done")
        return result

    def expected_duration_s(self) -> float:
        if self.cfg.duration_s is not None:
            return self.cfg.duration_s
        every = self.rate_s() if self.rate_s() else self.timebase.tick_s
        return (self.cfg.count or 0) * every + self.cfg.distance * self.timebase.tick_s + 5

    def rate_s(self) -> float:
        return self.cfg.rate_ms / 1000.0 if self.cfg.rate_ms is not None else self.timebase.tick_s

    # ---- setup -----------------------------------------------------------------------------------
    def wait_item(self, want: type, node: str, timeout: float, where=None) -> Arrival:
        """Handles everything that arrives until a message of type `want` from `node` comes."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SessionError(f"{node}: no {want.__name__} within {timeout} s")
            try:
                item = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            self.handle(item)
            if isinstance(item, LinkDown):
                raise SessionError(f"{item.node} port vanished: {item.error}")
            if item.node == node and isinstance(item.message, want) and (where is None or where(item.message)):
                return item

    def setup_modes(self) -> None:
        cfg = self.cfg
        self.generating = False
        self.wait_item(mp.Timecode, "profiler", 3.0)
        self.wait_item(mp.Timecode, "profiler", 3.0)   # two frames: the tick estimate has a base
        exe = self.sessions.get("executor")
        if exe is not None:
            mode = MODE_CODES.get(cfg.mode, 0)
            period = max(1, round(self.rate_s() / self.timebase.tick_s))
            frame = mp.Mode(mode, DISPATCH_CODES[cfg.dispatch], cfg.distance if mode == 1 else 0,
                            period if mode == 1 else 0, int(cfg.random_ids) if mode == 1 else 0)
            for attempt in range(3):          # a frame can be lost (noise, a busy host): ask again
                exe.send(frame)
                try:
                    st = self.wait_item(mp.Status, "executor", 1.5, where=lambda m: m.mode == mode)
                    break
                except SessionError:
                    if attempt == 2 or exe.vanished is not None:
                        raise
                    self.count("mode_retries")
            self.learn_offset(st.message)
        self.t0 = time.monotonic()
        self.generator = Generator(cfg.distance, cfg.random_ids, cfg.max_in_flight, cfg.seed)
        self.matcher = Matcher()
        self.lost_frames = 0           # seq gaps on either link + RESULTs flagged lost-before
        self.last_gen_tc: int | None = None
        self.next_free_at = self.t0
        self.generating = True
        self.local_ignored: set[int] = set()
        self.last_profiler_frame = time.monotonic()
        self.link_failed = False

    def learn_offset(self, status: mp.Status) -> None:
        assert self.tracker.current is not None
        new = round256(self.tracker.current - status.timecode)
        if new != self.tc_offset:
            self.count("tc_offset_changes") if self.counters.get("tc_offset_learned") else None
            self.counters["tc_offset_learned"] = 1
        self.tc_offset = new

    # ---- the loop --------------------------------------------------------------------------------
    def loop(self, firer: Firer | None) -> None:
        cfg = self.cfg
        hard_stop = time.monotonic() + self.expected_duration_s() * 2 + 30
        while True:
            now = time.monotonic()
            wake = 0.05
            if self.generating and cfg.generation == "free":
                wake = max(0.0, min(wake, self.next_free_at - now))
            try:
                item = self.inbox.get(timeout=wake)
                self.handle(item)
            except queue.Empty:
                pass
            now = time.monotonic()
            if self.generating:
                if self.stop_requested.is_set():
                    self.generating = False
                    self.counters["stopped_early"] = 1
                elif cfg.duration_s is not None and now - self.t0 >= cfg.duration_s:
                    self.generating = False
                elif cfg.count is not None and len(self.events) >= cfg.count:
                    self.generating = False
                elif cfg.generation == "free" and cfg.mode != "verification" and now >= self.next_free_at:
                    self.next_free_at += self.rate_s()
                    if self.next_free_at < now:             # we stalled: do not burst to catch up
                        self.count("free_timer_overruns")
                        self.next_free_at = now + self.rate_s()
                    self.create()
            self.check_deadlines()
            if now - self.last_profiler_frame > SILENCE_S and not self.link_failed:
                self.link_fault(LinkDown("profiler", now, f"silent for {SILENCE_S} s"), reconnect=False)
            if self.link_failed:
                break
            if not self.generating and all(e.terminal for e in self.events):
                break
            if now > hard_stop:
                self.invalid.append("run did not finish in time")
                break

    # ---- creating events -------------------------------------------------------------------------
    def create(self) -> None:
        cfg = self.cfg
        if self.tracker.current is None:
            return
        got = self.generator.next()
        if got is None:
            return
        tag, eid = got
        now = time.monotonic()
        cur = self.tracker.current
        ev = Event(len(self.events), tag, eid, cfg.mode, cfg.distance, cur + cfg.distance, cur,
                   round(self.tracker.phase(now, cur), 6))
        ev._lost_at_create = self.lost_frames  # type: ignore[attr-defined]
        self.events.append(ev)
        self.matcher.track(ev)
        if cfg.mode == "mixed":
            try:
                t = time.monotonic()
                self.sessions["executor"].send(mp.Schedule(tag, eid, (ev.scheduled_tc - self.tc_offset) & 0xFFFFFFFF))
                ev.sent_s = round(t - self.t0, 6)
            except SessionError:
                self.end(ev, "lost", "link_fault")
        elif cfg.mode == "normal":
            assert self.firer is not None
            self.firer.add(ev, self.tracker.tick_start(ev.scheduled_tc))
        self.notify("event", ev)

    def send_fire(self, ev: Event) -> None:
        t = time.monotonic()
        self.sessions["profiler"].send(mp.Fire(ev.event_id, ev.tag))
        ev.sent_s = round(t - self.t0, 6)
        self.notify("event", ev)

    def fire_failed(self, ev: Event, exc: BaseException) -> None:
        self.count("fire_write_failures")

    def end(self, ev: Event, outcome: str, reason: str | None) -> None:
        ev.finish(outcome, reason)
        self.matcher.forget(ev)
        if ev.tag not in self.local_ignored:
            self.generator.done(ev.event_id)
        if ev.event >= 0:
            self.notify("event", ev)

    def join(self, pairs: list[tuple[Event, mp.Result]]) -> None:
        for ev, r in pairs:
            if ev.event < 0:            # a verification event beyond the run's count: not ours
                continue
            if ev.terminal:
                self.count("results_after_deadline")
                continue
            apply_result(ev, r, self.timebase, self.cfg.late_bound_us)
            self.matcher.forget(ev)
            self.generator.done(ev.event_id)
            self.notify("event", ev)

    # ---- handling frames -------------------------------------------------------------------------
    def handle(self, item: Item) -> None:
        if isinstance(item, LinkDown):
            self.link_fault(item)
            return
        msg, node = item.message, item.node
        if item.received.lost_before:
            self.count(f"{node}_seq_lost", item.received.lost_before)
            if getattr(self, "generating", None) is not None:
                self.lost_frames += item.received.lost_before
        if node == "profiler":
            self.last_profiler_frame = item.at
        if isinstance(msg, mp.Hello):
            if getattr(self, "generating", None) is not None:
                self.count(f"{node}_hello_midrun")
            return
        if isinstance(msg, mp.Counters):
            self.node_counters[node] = dict(msg.__dict__)
            return
        if node == "profiler":
            if isinstance(msg, mp.Timecode):
                tc = self.tracker.update(msg.timecode, item.at)
                self.notify("timecode", tc)
                if getattr(self, "generating", False) and self.cfg.generation == "aligned" \
                        and self.cfg.mode != "verification":
                    every = max(1, round(self.rate_s() / self.timebase.tick_s))
                    if self.last_gen_tc is None or tc - self.last_gen_tc >= every:
                        self.last_gen_tc = tc
                        self.create()
            elif isinstance(msg, mp.Result):
                self.on_result(msg)
            elif isinstance(msg, mp.Error):
                self.count(f"profiler_error_{msg.code}")
            return
        # executor
        if not hasattr(self, "matcher"):
            if isinstance(msg, mp.Status):
                return
            return
        off = self.tc_offset
        if isinstance(msg, mp.Ack):
            ev = self.matcher.by_tag.get(msg.tag)
            if ev is None:
                self.count("unknown_acks")
                return
            ev.ack_tc = msg.timecode + off
            ev.ack_phase = round(msg.phase / 65536, 6)
            ev.slack_ticks = round(ev.scheduled_tc - ev.ack_tc - ev.ack_phase, 6)
            self.notify("event", ev)
            cur = self.tracker.current
            if cur is not None and not (cur - 2 <= ev.ack_tc <= cur + 1):
                self.count("ack_timecode_mismatch")
                self.sessions["executor"].send(mp.Query(0x23))
        elif isinstance(msg, mp.Error):
            if msg.ref_type in (mp.Schedule.TYPE,):
                ev = self.matcher.by_tag.get(msg.ref_tag)
                if ev is not None and not ev.terminal:
                    ev.ack_tc = msg.timecode + off
                    self.end(ev, "missed", refusal_reason(msg.code))
                    return
            self.count(f"executor_error_{msg.code}")
        elif isinstance(msg, mp.Status):
            if self.counters.get("ack_timecode_mismatch"):
                self.learn_offset(msg)
        elif isinstance(msg, mp.LocalEvent):
            self.on_local_event(msg, item.at)
        elif isinstance(msg, mp.Fired):
            ev = self.matcher.by_tag.get(msg.tag)
            if ev is None:
                self.count("unknown_fired")
                return
            self.join(self.matcher.fired(ev, msg.timecode + off))

    def on_result(self, r: mp.Result) -> None:
        if not hasattr(self, "matcher"):
            return
        if r.flags & RESULT_LOST_BEFORE:
            self.count("profiler_results_lost_flag")
            self.lost_frames += 1
        if r.flags & RESULT_FIRE:
            ev = self.matcher.fire_result(r)
            if ev is not None:
                self.join([(ev, r)])
        else:
            self.join(self.matcher.edge_result(r))

    def on_local_event(self, msg: mp.LocalEvent, at: float) -> None:
        """Verification mode: the executor scheduled an event itself; it becomes one of ours while the
        run is generating (the first `count` of them), else it is followed but not accounted."""
        cfg = self.cfg
        tc = msg.timecode + self.tc_offset
        cur = self.tracker.current if self.tracker.current is not None else tc - cfg.distance
        if cfg.mode != "verification" or not self.generating:
            ghost = Event(-1, msg.tag, msg.event_id, "verification", cfg.distance, tc, cur, None)
            self.local_ignored.add(msg.tag)
            self.matcher.track(ghost)
            self.count("local_events_not_accounted")
            return
        ev = Event(len(self.events), msg.tag, msg.event_id, "verification", tc - cur, tc, cur,
                   round(self.tracker.phase(at, cur), 6))
        ev._lost_at_create = self.lost_frames  # type: ignore[attr-defined]
        self.events.append(ev)
        self.generator.in_flight_ids[msg.event_id] = self.generator.in_flight_ids.get(msg.event_id, 0) + 1
        self.generator.in_flight += 1
        self.generator.created += 1
        self.matcher.track(ev)
        self.notify("event", ev)

    # ---- deadlines and faults --------------------------------------------------------------------
    def check_deadlines(self) -> None:
        cur = self.tracker.current
        if cur is None or not hasattr(self, "matcher"):
            return
        due = [e for e in self.events if not e.terminal and cur >= e.scheduled_tc + self.cfg.timeout_ticks]
        if not due or not self.inbox.empty():
            # Judge silence only once every frame already received is read: a starved scheduler reading a
            # backlog sees the newer TIMECODEs before the executor's refusal of an event it is about to
            # call timed out. (Frames are handled in microseconds, so the inbox is empty nearly always.)
            return
        self.join(self.matcher.join_unfired(due))
        for e in due:
            if not e.terminal:
                lost = self.lost_frames - getattr(e, "_lost_at_create", 0)
                self.end(e, *silent_outcome(lost))
        self.matcher.drop_stale_results(cur - 2 * self.cfg.timeout_ticks)

    def link_fault(self, down: LinkDown, reconnect: bool = True) -> None:
        if self.link_failed:
            return
        if down.node == "executor" and self.cfg.mode == "normal":
            self.link_faults.append({"node": down.node, "at_s": self.rel(down.at), "error": down.error,
                                     "reconnected": False, "affected": 0})
            return
        self.say(f"link fault: {down.node}: {down.error}")
        affected = [e for e in self.events if not e.terminal]
        for e in affected:
            self.end(e, "lost", "link_fault")
        ok = self.sessions[down.node].reconnect(RECONNECT_S) if reconnect else False
        self.link_faults.append({"node": down.node, "at_s": self.rel(down.at), "error": down.error,
                                 "reconnected": ok, "affected": len(affected)})
        self.invalid.append(f"link_fault: {down.node} port vanished at {self.rel(down.at):.3f} s "
                            f"({'reconnected' if ok else 'reconnect failed'}); {len(affected)} events lost")
        self.link_failed = True
        self.generating = False

    def rel(self, t: float) -> float:
        return round(t - getattr(self, "t0", t), 6)

    def finish_nodes(self) -> None:
        """Executor back to idle, then COUNTERS from both nodes (best effort: a dead link says nothing)."""
        exe = self.sessions.get("executor")
        try:
            if exe is not None and exe.vanished is None and self.cfg.mode != "normal":
                exe.send(mp.Mode(0, DISPATCH_CODES[self.cfg.dispatch], 0, 0, 0))
        except SessionError:
            pass
        asked = []
        for name, s in self.sessions.items():
            try:
                if s.vanished is None and s.hello is not None:
                    s.send(mp.Query(0x04))
                    asked.append(name)
            except SessionError:
                pass
        deadline = time.monotonic() + 0.5
        while asked and time.monotonic() < deadline and any(n not in self.node_counters for n in asked):
            try:
                item = self.inbox.get(timeout=0.05)
            except queue.Empty:
                continue
            if isinstance(item, Arrival) and isinstance(item.message, mp.Counters):
                self.node_counters[item.node] = dict(item.message.__dict__)
            elif isinstance(item, Arrival) and hasattr(self, "matcher"):
                try:
                    self.handle(item)
                except Exception:  # noqa: BLE001 - late frames after the run cannot change it
                    pass

    # ---- the run's files ---------------------------------------------------------------------------
    def export(self, lag_before, lag_after, cpu, load, priority) -> RunResult:
        cfg = self.cfg
        for e in self.events:                 # a run cut short (error) still accounts for every event
            if not e.terminal:
                self.end(e, "lost", "link_fault") if self.link_failed or self.invalid else self.end(e, "missed", "timeout")
        summary = summarize(self.events)
        created = self.generator.created if hasattr(self, "generator") else 0
        try:
            check_invariant(self.events, created, summary)
            invariant = {"ok": True, "error": None}
        except InvariantViolation as exc:
            invariant = {"ok": False, "error": str(exc)}
            self.invalid.append(f"accounting invariant violated: {exc}")
        bench = None
        if self.target.kind == "bench":
            bench = lag_window(lag_before, lag_after) if lag_before and lag_after else \
                {"lag_bound_us": self.target.lag_bound_us, "lag_max_us": None, "lag_p999_us": None, "valid": False}
            if not bench["valid"]:
                self.invalid.append(
                    f"bench lag bound exceeded: max {bench.get('lag_max_us')} us > {bench['lag_bound_us']} us"
                    if lag_before and lag_after else "bench status unavailable (lag unknown)")
        hellos = {n: s.hello_dict() for n, s in self.sessions.items()}
        m = getattr(self, "matcher", None)
        sched_counters = dict(self.counters)
        if m is not None:
            sched_counters.update(edge_order_breaks=m.edge_order_breaks, joined_without_fired=m.joined_without_fired,
                                  unmatched_results=m.unmatched_results + len(m.pending_results))
        if hasattr(self, "generator"):
            sched_counters["generator_skipped"] = self.generator.skipped
        for n, s in self.sessions.items():
            sched_counters[f"{n}_decoder"] = s.decoder.counters.as_dict()
            sched_counters[f"{n}_decoder_before_hello"] = s.before_hello
            sched_counters[f"{n}_reconnects"] = s.reconnects
        sched_counters["tc_offset"] = self.tc_offset
        if hasattr(self, "tracker"):
            sched_counters["timecode_jumps"] = self.tracker.jumps
        tick_s = self.timebase.tick_s if hasattr(self, "timebase") else 0.0
        sidecar: dict[str, Any] = {
            "format": "mmrig-run", "format_version": 1, "mmrig_version": __version__,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "name": cfg.name,
            "config": cfg.sidecar(getattr(self, "baud", 9600), tick_s),
            "target": self.target.identity(),
            "nodes": {"profiler": hellos.get("profiler"), "executor": hellos.get("executor")},
            "timebase": {"timer_hz": self.timebase.timer_hz, "tick_counts": self.timebase.tick_counts}
            if hasattr(self, "timebase") else None,
            "bench": bench,
            "valid": not self.invalid, "invalid_reason": "; ".join(self.invalid) if self.invalid else None,
            "counters": {"scheduler": sched_counters, "profiler": self.node_counters.get("profiler"),
                         "executor": self.node_counters.get("executor")},
            "cpu": cpu,
            "load": {"command": load.command if load else None, "bench_priority": priority,
                     "scheduler_nice": os.getpriority(os.PRIO_PROCESS, 0)},
            "link_faults": self.link_faults,
            "invariant": invariant,
            "summary": summary,
        }
        if cfg.mode == "mixed":
            sidecar["slack"] = slack_distribution(self.events)
        csv_path = json_path = None
        if cfg.out is not None:
            csv_path, json_path = write_run(cfg.out, self.events, sidecar)
        return RunResult(self.events, sidecar, csv_path, json_path)


def run(cfg: RunConfig, target: Target | None = None, log=None) -> RunResult:
    return Runner(cfg, target or Target(), log).run()
