"""The headless experiment runner: one run of one mode against an endpoint (boards or the bench; the runner
never knows which), from the HELLO handshake to the CSV + JSON on disk.

One thread (the caller's) owns every event: it takes frames and link faults from the session's inbox in
arrival order (through the endpoint, which owns the run's clock), creates events (tick-aligned right after
a new TIMECODE, or free-running on a timer), joins ACK / ERROR / FIRED / RESULT to them, ends them at their
deadline, and writes the run. Normal mode adds the Firer thread, which only writes FIRE frames at their
moment.

Executor and profiler timecodes. Both nodes extend the same 8-bit port value, but the executor's
32-bit count starts from the port value at its own boot, so its high bytes can differ from the
profiler's (e.g. an executor reset later than the profiler). The run learns `tc_offset` =
profiler timecode - executor timecode from the executor's STATUS (answer to MODE) against the
profiler's last TIMECODE, rounded to a multiple of 256 (the low bytes agree, up to the one tick the
frames may straddle); SCHEDULE timecodes are sent as T - offset, and ACK / FIRED / LOCAL_EVENT / ERROR
timecodes are read as value + offset. Every ACK checks it (mapped ACK timecode within one tick of the
profiler's); a failed check is a timecode fault, and the offset is learned again from a fresh STATUS.

Faults of the rig (faults.py, issue 18). A node that resets mid-run (a HELLO, or a profiler timecode that
went back), a timecode the nodes disagree on, a request nobody answered, frames lost on a line and the
nodes' own fault counters are recorded as faults; the events they touch end `lost` with the fault's kind,
never as misses of the system under test, and the run is invalid. The run recovers where it can and goes
on: an executor that reset gets its MODE again, a profiler that reset starts the timecode count again, and
the offset is learned again; until then the fault is open and the events created meanwhile are touched too.
"""

from __future__ import annotations

import datetime as dt
import os
import resource
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import mmproto as mp
from mmanalysis.histogram import default_bin_us, latency_histogram
from mmanalysis.schema import FORMAT, FORMAT_VERSION, MAX_UNMEASURABLE_SHARE
from mmproto import Arrival, Item, LinkDown, LinkError
from mmproto.wiretime import wire_time_s

from . import __version__
from .budget import Floor, apply_budget, budget_summary
from .config import RunConfig
from .endpoint import Endpoint, EndpointError, Reason, Verdict
from .environment import collect as collect_environment
from .event import Event
from .export import write_run
from .faults import FaultLedger, counter_faults, describe_counters
from .firing import Firer
from .invariant import InvariantViolation, check_invariant
from .load import Load
from .outcome import apply_result, refusal_reason, silent_outcome
from .result import RunResult
from .runstate import BadHello, RunState
from .servo import ClockServo
from .session import Session
from .stats import slack_distribution, summarize
from .timecode import round256
from .tracefiles import executor_profile
from .validity import LATE_READ_MARGIN_TICKS, Basis, Sent, judge

SILENCE_S = 3.0            # no profiler frame for this long: the profiler link is faulty
FLOOR_PROBES = 5           # normal mode: FIREs injected on a tick's edge (the floor calibration)
CLOCK_PROBES = 8           # normal mode, disciplined: FIREs written at start to lock the servo
PROBE_TAG0 = 0xFF00        # tags of the rig's own probes (the run's events start at 1, in order)
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


class SetupError(RuntimeError):
    """A node said HELLO but did not answer the run's set-up."""

    code = "setup"


class LoadUnavailable(SetupError):
    """The run's PC load could not be started (mmsched.load.unavailable says why)."""

    code = "load_unavailable"


@dataclass
class Runner:
    cfg: RunConfig
    endpoint: Endpoint
    log: Callable[[str], None] | None = None          # progress lines, or None
    events: list[Event] = field(default_factory=list, init=False)
    session: Session = field(init=False)
    state: RunState | None = field(default=None, init=False)   # from the handshake on
    counters: dict[str, int] = field(default_factory=dict, init=False)
    link_faults: list[dict[str, Any]] = field(default_factory=list, init=False)
    node_counters: dict[str, Any] = field(default_factory=dict, init=False)
    invalid: list[Reason] = field(default_factory=list, init=False)
    firer: Firer | None = field(default=None, init=False)
    faults: FaultLedger = field(default_factory=FaultLedger, init=False)
    counters_before: dict[str, Any] = field(default_factory=dict, init=False)   # COUNTERS at set-up, by node
    reset_nodes: set[str] = field(default_factory=set, init=False)              # nodes that reset mid-run
    mode_frame: mp.Mode | None = field(default=None, init=False)                # the executor's MODE of this run
    # the FIREs written (probes and events) by their write moment: the servo's anchor is one (validity.py)
    fires_sent: dict[float, Sent] = field(default_factory=dict, init=False, repr=False)
    _open: list[Event] = field(default_factory=list, init=False, repr=False)    # events not ended yet (in_flight)
    # Hooks for a live view (the GUI), Qt-free: `observer(kind, obj)` is called from the run's threads
    # with ("timecode", extended tc), ("event", Event) whenever an event is created or changes, and
    # ("phase", "running"/"done"); it must be quick and must not mutate what it is given. Setting
    # `stop_requested` ends event generation early; the events in flight still end as usual.
    observer: Any = None
    stop_requested: threading.Event = field(default_factory=threading.Event, init=False)
    # The sidecar's environment and histogram (issue 17): the images the endpoint ran, by node (and "bench"),
    # hashed into `environment` (only the entry point that chose the endpoint knows them), and the latency
    # histogram's bin width in us (None: mmanalysis.histogram's default for the mode).
    images: dict[str, Any] | None = None
    histogram_us: float | None = None

    def __post_init__(self) -> None:
        self.session = Session(self.endpoint)

    @property
    def inbox(self):
        return self.session.inbox

    @property
    def over(self) -> bool:
        """Generation has ended and every event has its outcome: from here the ports are closed on purpose
        (views stop reading health then). Thread-safe enough for a poller: it reads a copy of the list."""
        st = self.state
        events = list(self.events)
        return st is not None and not st.generating and bool(events) and all(e.terminal for e in events)

    def interrupt(self, why: str) -> None:
        """A signal (SIGTERM, SIGHUP) ends the run early: generation stops, the events in flight end, and the
        run is written, marked invalid with the reason (issue 18: nothing lost, nothing taken for a result)."""
        if not any(r.code == "interrupted" for r in self.invalid):
            self.invalid.append(Reason("interrupted", f"interrupted: {why}; the events so far are kept"))
        self.stop_requested.set()

    def notify(self, kind: str, obj: Any) -> None:
        if self.observer is not None:
            try:
                self.observer(kind, obj)
            except Exception:  # noqa: BLE001 - a broken view must not break the run
                self.count("observer_errors")

    def say(self, text: str) -> None:
        if self.log:
            self.log(text)

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    def now(self) -> float:
        return self.endpoint.clock()

    # ---- one run ---------------------------------------------------------------------------------
    def run(self) -> RunResult:
        """The whole run. A port that cannot be opened or an endpoint that cannot start raises (LinkError,
        EndpointError: nothing was run); anything after that ends in a run on disk, invalid if need be."""
        cfg = self.cfg
        wall0 = time.monotonic()
        cpu0 = time.process_time()
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        load: Load | None = None
        verdict = Verdict()
        try:
            self.session.open(self.endpoint.open(cfg))
        except BaseException:
            self.session.close()
            self.endpoint.close()
            raise
        try:
            self.session.handshake()
            if cfg.baud is not None:
                self.session.change_baud(cfg.baud)
                self.say(f"links at {cfg.baud} baud")
            hello = self.session.links["profiler"].hello
            assert hello is not None
            self.state = RunState.after_handshake(cfg, hello, self.now())
            if cfg.load != "idle":
                try:
                    load = Load(self.expected_duration_s() + 30, cfg.load).start()
                except RuntimeError as exc:      # the entry points check first; a run still says it, never a traceback
                    raise LoadUnavailable(f"--load {cfg.load}: {exc}") from exc
                self.say(f"load {cfg.load}: {' '.join(load.command)}")
            self.setup_modes()
            self.endpoint.begin()
            if cfg.mode == "normal":
                self.firer = Firer(self.send_fire, cfg.accuracy, on_error=self.fire_failed).start()
            self.notify("phase", "running")
            self.loop()
        except (LinkError, SetupError, EndpointError, BadHello) as exc:
            # (an endpoint that fails mid-run, e.g. a lockstep bench that stopped answering: the events so far
            # are written, the run marked invalid)
            self.invalid.append(Reason(exc.code, f"session: {exc}"))
            self.say(f"run failed: {exc}")
        finally:
            if self.firer is not None:
                self.firer.stop()
            if load is not None:
                load.stop()
            try:
                self.finish_nodes()
                verdict = self.endpoint.verdict()
            except (LinkError, EndpointError) as exc:   # the nodes' counters are best effort; closing is not
                if not self.invalid:
                    self.invalid.append(Reason(exc.code, f"session: {exc}"))
            finally:
                self.endpoint.close()
                self.session.close()
        wall = time.monotonic() - wall0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        firer = self.firer
        cpu = {"normal_mode_cpu_s": firer.cpu_s if firer else 0.0, "wall_s": wall,
               "process_cpu_s": time.process_time() - cpu0,
               "process_cpu_share": (time.process_time() - cpu0) / wall if wall > 0 else None,
               "normal_mode_cpu_share": (firer.cpu_s / wall) if firer and wall > 0 else None,
               "involuntary_context_switches": ru1.ru_nivcsw - ru0.ru_nivcsw,
               "accuracy": cfg.accuracy if cfg.mode == "normal" else None,
               "fire_wakeup_late_us_max": (max(firer.late_wakeups_s) * 1e6) if firer and firer.late_wakeups_s else None,
               "firer_timer_slack_ns": firer.timer_slack_ns if firer else None}
        result = self.export(verdict, cpu, load)
        self.notify("phase", "done")
        return result

    def expected_duration_s(self) -> float:
        assert self.state is not None
        if self.cfg.duration_s is not None:
            return self.cfg.duration_s
        return (self.cfg.count or 0) * self.state.rate_s(self.cfg) + self.cfg.distance * self.state.timebase.tick_s + 5

    # ---- setup -----------------------------------------------------------------------------------
    def wait_item(self, want: type, node: str, timeout: float, where=None) -> Arrival:
        """Handles everything that arrives until a message of type `want` from `node` comes."""
        deadline = self.now() + timeout
        while True:
            left = deadline - self.now()
            if left <= 0:
                raise SetupError(f"{node}: no {want.__name__} within {timeout} s")
            item = self.endpoint.next_item(self.inbox, left)
            if item is None:
                continue
            self.handle(item)
            if isinstance(item, LinkDown):
                raise LinkError("port_error", f"{item.node} port vanished: {item.error}")
            if item.node == node and isinstance(item.message, want) and (where is None or where(item.message)):
                return item

    def setup_modes(self) -> None:
        cfg, st = self.cfg, self.state
        assert st is not None
        self.wait_item(mp.Timecode, "profiler", 3.0)
        self.wait_item(mp.Timecode, "profiler", 3.0)   # two frames: the tick estimate has a base
        if self.session.has("executor"):
            mode = {"verification": mp.ExecutorMode.VERIFICATION, "mixed": mp.ExecutorMode.MIXED}.get(
                cfg.mode, mp.ExecutorMode.IDLE)
            own = mode == mp.ExecutorMode.VERIFICATION   # the executor schedules its own events
            load = cfg.executor_load
            frame = mp.Mode(mode=mode, dispatch=mp.Dispatch[cfg.dispatch.upper()],
                            distance=cfg.distance if own else 0, period=st.every_ticks(cfg) if own else 0,
                            random_ids=int(cfg.random_ids) if own else 0, cpu_load=int(load.cpu),
                            periodic_period_us=load.period_us, periodic_exec_us=load.exec_us)
            self.mode_frame = frame
            for attempt in range(3):          # a frame can be lost (noise, a busy host): ask again
                self.session.send("executor", frame)
                try:
                    # the STATUS of this MODE: its mode and the load it now runs (a refused MODE changes neither)
                    got = self.wait_item(mp.Status, "executor", 1.5, where=lambda m: (
                        m.mode, m.cpu_load, m.periodic_period_us, m.periodic_exec_us) == (
                        mode, frame.cpu_load, frame.periodic_period_us, frame.periodic_exec_us))
                    break
                except SetupError:
                    if attempt == 2 or not self.session.alive("executor"):
                        raise
                    self.count("mode_retries")
            self.learn_offset(got.message)
        self.baseline_counters()
        if cfg.mode == "normal":
            self.calibrate_floor()
            if cfg.discipline:
                self.calibrate_clock()
            self.fit_tick()
        st.start_generating(self.now())

    def fit_tick(self) -> None:
        """Normal mode fires at its estimate of each tick's start, so it waits until the tick length is fitted from
        the TIMECODE arrivals (timecode.py): with HELLO's nominal length a profiler 0.5 % slow made FIREs go out
        milliseconds early. At most the fit's frames and a margin; a run whose profiler's timecodes do not fit
        (no real clock is 2 % off) goes on with the nominal length, counted."""
        st = self.state
        assert st is not None
        for _ in range(st.tracker.fit_min_frames + 8):
            if st.tracker.fitted:
                return
            self.wait_item(mp.Timecode, "profiler", 3.0)
        if not st.tracker.fitted:
            self.count("tick_not_fitted")

    def baseline_counters(self) -> None:
        """The nodes' COUNTERS before the run: on boards they hold earlier runs' counts, so the run judges
        their rise (faults.counter_faults). A node that does not answer is not judged by its counters."""
        for node, link in self.session.links.items():
            link.send(mp.Query(what=mp.Counters.TYPE))
            try:
                got = self.wait_item(mp.Counters, node, 1.5)
                self.counters_before[node] = dict(got.message.__dict__)
                if node == "profiler" and self.state is not None:
                    self.state.losses.baseline(self.counters_before[node])
            except SetupError:
                self.count(f"{node}_counters_unjudged")
        self.node_counters.clear()

    # ---- normal mode's calibrations (docs/normal-mode.md) --------------------------------------------
    def probe_tag(self) -> int:
        st = self.state
        assert st is not None
        tag = PROBE_TAG0 + len(st.probe_tags)
        st.probe_tags.add(tag)
        return tag

    def wait_probe(self, tag: int) -> mp.Result | None:
        st = self.state
        assert st is not None
        try:
            return self.wait_item(mp.Result, "profiler", 2 * st.timebase.tick_s + 1.0,
                                  where=lambda m: m.tag == tag).message
        except SetupError:
            self.count("probes_unanswered")
            return None

    def calibrate_floor(self) -> None:
        """The rig's own part of every normal-mode latency, with no PC timing in it: FIREs the endpoint
        injects into the profiler with their first start bit on a tick's edge; the latency the profiler
        reports for them is its floor (stamping, interrupt entry)."""
        st = self.state
        assert st is not None
        why = self.endpoint.injection_path()
        if why is not None:
            st.floor = Floor(why=why)
            return
        link = self.session.links["profiler"]
        samples = []
        for _ in range(FLOOR_PROBES):
            tag = self.probe_tag()
            self.endpoint.inject_on_edge(link.prepare(mp.Fire(event_id=0, tag=tag)))
            r = self.wait_probe(tag)
            if r is not None and r.counts < st.timebase.tick_counts // 2:   # stamped in the edge's tick
                samples.append(round(st.timebase.counts_to_us(r.counts), 3))
        st.floor = Floor(samples, "bench_inject", None if samples else "no injected FIRE was answered")
        st.servo.floor_s = (st.floor.us or 0.0) / 1e6

    def calibrate_clock(self) -> None:
        """Disciplined normal mode: a short exchange before the run locks the servo (servo.py); each
        FIRE of the run refines it from then on."""
        st = self.state
        assert st is not None
        link = self.session.links["profiler"]
        for _ in range(CLOCK_PROBES):
            tag = self.probe_tag()
            w = link.write_frame(link.prepare(mp.Fire(event_id=0, tag=tag)))
            self.fires_sent[w.began] = Sent("profiler", w.offset, w.began, w.opens)
            r = self.wait_probe(tag)
            if r is not None:
                st.servo.add(w.began, st.timebase.seconds(r.timecode, r.counts))
        if not st.servo.ready:
            self.count("discipline_unlocked_at_start")

    def learn_offset(self, status: mp.Status) -> None:
        st = self.state
        assert st is not None and st.tracker.current is not None
        new = round256(st.tracker.current - status.timecode)
        if new != st.tc_offset and st.offset_learned:
            self.count("tc_offset_changes")
        st.offset_learned = True
        self.counters["tc_offset_learned"] = 1
        st.tc_offset = new

    # ---- the loop --------------------------------------------------------------------------------
    def loop(self) -> None:
        cfg, st = self.cfg, self.state
        assert st is not None
        hard_stop = self.now() + self.expected_duration_s() * 2 + 30
        while True:
            wake = 0.05
            if st.generating and cfg.generation == "free" and cfg.mode != "verification":
                # (verification: the executor creates the events, the free timer never runs; waking for it
                # would spin, and in lockstep never let time advance)
                wake = max(0.0, min(wake, st.next_free_at - self.now()))
            if st.generating and cfg.executor_load.rx_per_s:
                wake = max(0.0, min(wake, st.next_nop_at - self.now()))
            item = self.endpoint.next_item(self.inbox, wake)
            new_tc = self.handle(item) if item is not None else None
            now = self.now()
            if st.generating:
                self.generate(now, new_tc)
                self.send_rx_load(now)
            self.check_deadlines()
            self.check_recovery(now)
            if now - st.last_profiler_frame > SILENCE_S and not st.link_failed:
                self.link_fault(LinkDown("profiler", now, f"silent for {SILENCE_S} s"), reconnect=False)
            if st.link_failed:
                break
            if not st.generating and not self.in_flight():
                break
            if now > hard_stop:
                self.invalid.append(Reason("run_timeout", "run did not finish in time"))
                break

    # ---- creating events: the one place ----------------------------------------------------------
    def generate(self, now: float, new_tc: int | None) -> None:
        """Ends generation when the run's length is reached, else creates the event that is due now: right
        after a new TIMECODE (tick-aligned) or when the free-running timer expired. Verification runs
        create none here: the executor schedules them (on_local_event)."""
        cfg, st = self.cfg, self.state
        assert st is not None
        if self.stop_requested.is_set():
            st.generating = False
            self.counters["stopped_early"] = 1
        elif cfg.duration_s is not None and now - st.t0 >= cfg.duration_s:
            st.generating = False
        elif cfg.count is not None and len(self.events) >= cfg.count:
            st.generating = False
        elif cfg.mode == "verification":
            pass
        elif cfg.generation == "aligned":
            if new_tc is not None and (st.last_gen_tc is None or new_tc - st.last_gen_tc >= st.every_ticks(cfg)):
                st.last_gen_tc = new_tc
                st.creation_due = True
            if st.creation_due and not self.backlog():
                st.creation_due = False
                self.create(now)
        elif now >= st.next_free_at and not self.backlog():
            st.next_free_at += st.rate_s(cfg)
            if st.next_free_at < now:             # we stalled: do not burst to catch up
                self.count("free_timer_overruns")
                st.next_free_at = now + st.rate_s(cfg)
            self.create(now)

    def backlog(self) -> bool:
        """Frames already received wait in the inbox: a newer TIMECODE may be among them, so an event made now
        would be made from a stale timecode (issue 21: a busy start made events 5 ticks stale, all past due).
        Creation waits until they are handled (microseconds: the loop takes them at once)."""
        if not self.endpoint.has_pending(self.inbox):
            return False
        self.count("creations_deferred")
        return True

    def send_rx_load(self, now: float) -> None:
        """--executor-load rx=N: a NOP to the executor every 1/N s while events are made (receive interrupts
        and serial-task work on the line the SCHEDULEs share). After a stall, one NOP, no burst."""
        st, rate = self.state, self.cfg.executor_load.rx_per_s
        assert st is not None
        if not rate or now < st.next_nop_at or not self.session.has("executor"):
            return
        self.session.send("executor", mp.Nop(fill=0))
        self.count("nops_sent")
        st.next_nop_at += 1.0 / rate
        if st.next_nop_at < now:
            st.next_nop_at = now + 1.0 / rate

    def new_event(self, tag: int, event_id: int, mode: str, distance: int, scheduled_tc: int, created_tc: int,
                  phase: float | None, accounted: bool = True, at: float | None = None) -> Event:
        """Every event of the run is made here (the scheduler's and the executor's own), and followed by
        the matcher; `accounted=False` for an executor event outside the run (not a row of ours)."""
        st = self.state
        assert st is not None
        ev = Event(len(self.events) if accounted else -1, tag, event_id, mode, distance, scheduled_tc, created_tc,
                   phase, lost_frames_at_create=st.lost_frames, loss_reports_at_create=st.losses.reports,
                   created_at=self.now() if at is None else at)
        st.matcher.track(ev)
        if accounted:
            self.events.append(ev)
            self._open.append(ev)
            self.faults.created(ev)
        return ev

    def create(self, now: float) -> None:
        cfg, st = self.cfg, self.state
        assert st is not None
        if st.tracker.current is None:
            return
        got = st.generator.next()
        if got is None:
            return
        tag, eid = got
        cur = st.tracker.current
        ev = self.new_event(tag, eid, cfg.mode, cfg.distance, cur + cfg.distance, cur,
                            round(st.tracker.phase(now, cur), 6))
        ev.bytes.created_at = ev.created_at
        if cfg.mode == "mixed":
            ev.bytes.basis = Basis(cur, st.tracker.tick_start(cur), st.tracker.last_arrival())
            try:
                t = self.now()
                w = self.session.send_frame("executor", mp.Schedule(
                    tag=tag, event_id=eid, timecode=(ev.scheduled_tc - st.tc_offset) & 0xFFFFFFFF))
                ev.sent_s = round(t - st.t0, 6)
                ev.bytes.sent = Sent("executor", w.offset, t, w.opens)
            except LinkError:
                self.end(ev, "lost", "link_fault")
        elif cfg.mode == "normal":
            assert self.firer is not None
            # encoded now, written at the moment: the firing thread only writes (firing.py)
            wire = self.session.links["profiler"].prepare(mp.Fire(event_id=eid, tag=tag))
            at = st.tracker.tick_start(ev.scheduled_tc)          # the paper's estimate (timecode.py)
            basis_tc, arrived = st.tracker.basis()
            ev.bytes.basis = Basis(basis_tc, st.tracker.tick_start(basis_tc), arrived)
            if cfg.discipline:
                disciplined = st.servo.tick_start(ev.scheduled_tc, near=at)
                if disciplined is None:
                    self.count("discipline_unlocked")   # no two FIREs agree yet: the naive estimate
                else:
                    ev.bytes.anchor = self.fires_sent.get(st.servo.anchor_written_at(at))   # type: ignore[arg-type]
                    at = disciplined
            ev.fire_at = at
            self.firer.add(ev, at, wire)
        self.notify("event", ev)

    def on_local_event(self, msg: mp.LocalEvent, at: float) -> None:
        """Verification mode: the executor scheduled an event itself; it becomes one of ours while the
        run is generating (the first `count` of them), else it is followed but not accounted."""
        cfg, st = self.cfg, self.state
        assert st is not None
        tc = msg.timecode + st.tc_offset
        cur = st.tracker.current if st.tracker.current is not None else tc - cfg.distance
        if cfg.mode != "verification" or not st.generating:
            st.local_ignored.add(msg.tag)
            self.new_event(msg.tag, msg.event_id, "verification", cfg.distance, tc, cur, None, accounted=False)
            self.count("local_events_not_accounted")
            return
        ev = self.new_event(msg.tag, msg.event_id, "verification", tc - cur, tc, cur,
                            round(st.tracker.phase(at, cur), 6), at=at)
        st.generator.adopt(msg.event_id)
        self.notify("event", ev)

    def send_fire(self, ev: Event, wire: bytes) -> None:
        st = self.state
        assert st is not None
        w = self.session.links["profiler"].write_frame(wire)
        ev.written_at = w.began
        ev.sent_s = round(w.began - st.t0, 6)
        ev.bytes.sent = self.fires_sent[w.began] = Sent("profiler", w.offset, w.began, w.opens)
        self.notify("event", ev)

    def fire_failed(self, ev: Event, exc: BaseException) -> None:
        self.count("fire_write_failures")

    # ---- ending events ---------------------------------------------------------------------------
    def end(self, ev: Event, outcome: str, reason: str | None) -> None:
        st = self.state
        assert st is not None
        ev.finish(outcome, reason)
        st.matcher.forget(ev)
        if ev.tag not in st.local_ignored:
            st.generator.done(ev.event_id)
        if ev.event >= 0:
            self.notify("event", ev)

    def join(self, pairs: list[tuple[Event, mp.Result]]) -> None:
        st = self.state
        assert st is not None
        if st.matcher.edges_missing > st.losses.edges_missing:
            # the profiler reported fewer edges than the executor put out: its capture lost some unawares
            st.losses.edges_gone(st.matcher.edges_missing)
        for ev, r in pairs:
            if ev.event < 0:            # a verification event beyond the run's count: not ours
                continue
            if ev.terminal:
                self.count("results_after_deadline")
                continue
            apply_result(ev, r, st.timebase, self.cfg.late_bound_us)
            st.matcher.forget(ev)
            st.generator.done(ev.event_id)
            self.notify("event", ev)

    # ---- handling frames -------------------------------------------------------------------------
    def handle(self, item: Item) -> int | None:
        """One frame or link fault. Returns the extended timecode if the item was a new TIMECODE."""
        st = self.state
        assert st is not None
        if isinstance(item, LinkDown):
            self.link_fault(item)
            return None
        msg, node = item.message, item.node
        if item.received.lost_before:
            self.count(f"{node}_seq_lost", item.received.lost_before)
            if st.generating or self.events:
                st.lost_frames += item.received.lost_before
                self.faults.raise_("link_errors", node, self.rel(item.at),
                                   f"{item.received.lost_before} frames from the {node} lost (sequence gap)", (),
                                   window=False)
        if node == "profiler":
            st.last_profiler_frame = item.at
        if isinstance(msg, mp.Hello):
            if self.session.answered_hello(node):
                return None                      # the answer to our reconnect's handshake, not a reset
            if (st.generating or self.events) and node in self.measured_nodes():
                self.count(f"{node}_hello_midrun")
                self.node_reset(node, f"the {node} said HELLO mid-run ({reset_cause_text(msg)})", item.at)
            elif st.generating or self.events:
                self.count(f"{node}_hello_midrun")   # a node the mode does not use: nothing it measures
            return None
        if isinstance(msg, mp.Counters):
            self.node_counters[node] = dict(msg.__dict__)
            if node == "profiler":
                st.losses.reading(msg)
            return None
        if node == "profiler":
            if isinstance(msg, mp.Timecode):
                self.check_timecode(msg.timecode, item.at)
                tc = st.tracker.update(msg.timecode, item.at)
                self.recovered_timecode(item.at)
                self.notify("timecode", tc)
                return tc
            if isinstance(msg, mp.Result):
                self.on_result(msg)
            elif isinstance(msg, mp.Error):
                self.count(f"profiler_error_{msg.code}")
            return None
        self.on_executor(msg, item.at)
        return None

    def on_executor(self, msg: mp.Message, at: float) -> None:
        st = self.state
        assert st is not None
        off = st.tc_offset
        if isinstance(msg, mp.Ack):
            ev = st.matcher.by_tag.get(msg.tag)
            if ev is None:
                self.count("unknown_acks")
                return
            ev.ack_tc = msg.timecode + off
            ev.ack_phase = round(msg.phase / 65536, 6)
            ev.slack_ticks = round(ev.scheduled_tc - ev.ack_tc - ev.ack_phase, 6)
            self.notify("event", ev)
            self.check_executor_tick(ev.ack_tc, f"ACK of tag {msg.tag}", at)
        elif isinstance(msg, mp.Error):
            if msg.ref_type == mp.Schedule.TYPE:
                ev = st.matcher.by_tag.get(msg.ref_tag)
                if ev is not None and not ev.terminal:
                    ev.ack_tc = msg.timecode + off
                    # a refusal stamped in another tick than the profiler's is the rig's clock, not the SUT's
                    self.check_executor_tick(ev.ack_tc, f"ERROR {msg.code} for tag {msg.ref_tag}", at)
                    self.end(ev, "missed", refusal_reason(msg.code))
                    return
            self.count(f"executor_error_{msg.code}")
        elif isinstance(msg, mp.Status):
            if self.mode_frame is not None and msg.mode != self.mode_frame.mode:
                return
            if st.recovering == "mode":          # set up again: its count follows the port after a few ticks
                self.recover("timecode", at)
            elif st.recovering == "status":
                self.learn_offset(msg)
                self.recovered(at)
        elif isinstance(msg, mp.LocalEvent):
            self.on_local_event(msg, at)
        elif isinstance(msg, mp.Fired):
            ev = st.matcher.by_tag.get(msg.tag)
            if ev is None:
                self.count("unknown_fired")
                return
            # it fired at the start of that tick and said so at once (13.5 ms of line at 9600 baud)
            self.check_executor_tick(msg.timecode + off, f"FIRED of tag {msg.tag}", at)
            self.join(st.matcher.fired(ev, msg.timecode + off))

    def on_result(self, r: mp.Result) -> None:
        st = self.state
        assert st is not None
        if r.flags & mp.RESULT_FLAG_LOST_BEFORE:
            self.count("profiler_results_lost_flag")
            st.losses.flagged()
        if r.flags & mp.RESULT_FLAG_FIRE:
            if r.tag in st.probe_tags:        # a calibration probe's: taken by wait_probe
                return
            ev = st.matcher.fire_result(r)
            if ev is not None:
                ev.stamp_s = st.timebase.seconds(r.timecode, r.counts)
                if ev.written_at is not None:
                    st.servo.add(ev.written_at, ev.stamp_s)
                self.join([(ev, r)])
        else:
            self.join(st.matcher.edge_result(r))

    # ---- deadlines and faults --------------------------------------------------------------------
    def check_deadlines(self) -> None:
        st = self.state
        assert st is not None
        cur = st.tracker.current
        if cur is None:
            return
        due = [e for e in self.in_flight() if cur >= e.scheduled_tc + self.cfg.timeout_ticks]
        if not due or self.endpoint.has_pending(self.inbox):
            # Judge silence only once every frame already received is read: a starved scheduler reading a
            # backlog sees the newer TIMECODEs before the executor's refusal of an event it is about to
            # call timed out. (Frames are handled in microseconds, so the inbox is empty nearly always.)
            return
        self.join(st.matcher.join_unfired(due))
        self.check_fired_ticks(due)
        held = st.losses.hold((e for e in due if not e.terminal and self.put_out(e)
                               and e.lost_frames_at_create == st.lost_frames
                               and e.loss_reports_at_create == st.losses.reports), self.now(), self.ask_losses)
        for e in due:
            if not e.terminal and e.event not in held:
                answered = self.answered(e)
                if not answered and not e.fault:
                    self.faults.raise_("no_answer", "executor" if e.mode == "mixed" else "profiler", self.rel(self.now()),
                                       f"{'SCHEDULE' if e.mode == 'mixed' else 'FIRE'} of event {e.event} "
                                       f"(tag {e.tag}) never answered", (e,), window=False)
                self.end(e, *silent_outcome(st.lost_frames - e.lost_frames_at_create, answered,
                                            st.losses.reports - e.loss_reports_at_create))
        st.matcher.drop_stale_results(cur - 2 * self.cfg.timeout_ticks)

    def put_out(self, e: Event) -> bool:
        """Whether the event's edge or frame went out to the profiler: the executor said FIRED (mixed,
        verification), or the PC wrote its FIRE (normal). Only then can a missing RESULT be the profiler's."""
        return e.written_at is not None if e.mode == "normal" else e.fired_tc is not None

    def ask_losses(self) -> bool:
        """QUERY(COUNTERS) to the profiler for losses.LossReports.hold; False if it cannot be sent."""
        if not self.session.alive("profiler"):
            return False
        try:
            self.session.send("profiler", mp.Query(what=mp.Counters.TYPE))
        except LinkError:
            return False
        self.count("loss_queries")
        return True

    def answered(self, e: Event) -> bool:
        """Whether the node answered the request that made the event: a SCHEDULE's ACK or ERROR (an ERROR
        ends the event, so a silent one had none), a written FIRE's RESULT (a silent one had none). An event
        never requested (verification mode, a FIRE the PC never wrote) was not the rig's to answer."""
        if e.mode == "mixed":
            return e.ack_tc is not None
        if e.mode == "normal":
            return e.written_at is None
        return True

    def check_executor_tick(self, tc: int, what: str, at: float) -> None:
        """An executor frame's timecode (mapped by the offset) must lie within a tick or two of the profiler's
        (the frame's own line time): else the nodes disagree on the tick, a timecode fault; the offset is
        learned again."""
        st = self.state
        assert st is not None
        cur = st.tracker.current
        if cur is None or cur - 2 <= tc <= cur + 1 or st.recovering is not None:
            return
        self.count("ack_timecode_mismatch")
        self.faults.raise_("timecode_fault", "executor", self.rel(at),
                           f"{what} stamped at tick {tc}, the profiler's is {cur}", self.in_flight())
        self.recover("status", at)

    def measured_nodes(self) -> set[str]:
        """The nodes whose faults can touch what the run measures: normal mode uses the profiler only."""
        return {"profiler"} if self.cfg.mode == "normal" else {"profiler", "executor"}

    def check_fired_ticks(self, due: list[Event]) -> None:
        """An event the executor says it fired at tick T whose edge the profiler stamped, with its id, at a
        neighbouring tick instead (a RESULT left unjoined): the executor's count and the profiler's disagree
        by that much, which no frame's timing can explain (a stuck or loose timecode wire). A timecode fault."""
        st = self.state
        assert st is not None
        for e in due:
            if e.terminal or e.fired_tc is None:
                continue
            near = [r for r in st.matcher.pending_results
                    if r.event_id == e.event_id and r.timecode != e.fired_tc and abs(r.timecode - e.fired_tc) <= 2]
            if near:
                f = self.faults.raise_("timecode_fault", "executor", self.rel(self.now()),
                                       f"event {e.event} fired at the executor's tick {e.fired_tc}, its edge came in "
                                       f"the profiler's tick {near[0].timecode}", [e, *self.in_flight()])
                # the count was wrong by the time this event fired: so for those due since
                # (the last events suffice: they are in creation order, a few per tick)
                self.faults.reach_back(f, [x for x in self.events[-256:]
                                           if x.terminal and x.scheduled_tc >= e.scheduled_tc - 1])

    def in_flight(self) -> list[Event]:
        # The events not yet ended, pruned here: a long run (a soak: 150,000 events in 3 h) must not scan
        # every event it ever made on every frame.
        self._open = [e for e in self._open if not e.terminal]
        return list(self._open)

    # ---- faults of the rig and recovering from them (faults.py) -----------------------------------
    def node_reset(self, node: str, detail: str, at: float) -> None:
        """A node reset mid-run: every event in flight ends lost now. An executor lost its list, its mode and
        (verification) its tag count: it gets the run's MODE again. A profiler restarted its timecode count,
        which every event in flight was scheduled on: the count, the tick estimate and the offset start again."""
        st = self.state
        assert st is not None
        self.reset_nodes.add(node)
        if node == "profiler":
            self.faults.explain("timecode_fault", self.rel(at) - RESET_EXPLAINS_S, "node_reset", node)
        self.faults.raise_("node_reset", node, self.rel(at), detail, self.in_flight())
        for e in self.in_flight():
            self.end(e, "lost", "node_reset")
        if node == "executor":
            if self.mode_frame is not None:
                self.recover("mode", at)
            return
        st.matcher.drop_stale_results(1 << 40)
        st.tracker.restart()
        st.servo = ClockServo(st.timebase.tick_s, floor_s=st.servo.floor_s)
        st.last_gen_tc = None
        self.recover("timecode", at)

    def check_timecode(self, timecode: int, at: float) -> None:
        """A TIMECODE whose own 32-bit count disagrees with our extension of the frames before it: gone back,
        the profiler reset (its HELLO was lost); gone forward, a fault of time."""
        st = self.state
        assert st is not None
        cur = st.tracker.current
        if cur is None or not st.tracker.disagrees(timecode):
            return
        if timecode < cur:
            self.node_reset("profiler", f"the profiler's timecode went back from {cur} to {timecode} "
                                        f"(a reset whose HELLO was not seen)", at)
        elif st.generating or self.events:
            self.faults.raise_("timecode_fault", "profiler", self.rel(at),
                               f"the profiler's timecode jumped from {cur} to {timecode}", self.in_flight())
            self.recover("timecode", at)

    def recover(self, step: str, at: float) -> None:
        """Starts the way back from a fault: `mode` (send the executor its MODE; its STATUS leads to
        `timecode`), `timecode` (RESYNC_TICKS TIMECODE frames: the tick estimate has a base and the executor's
        count follows the port again; then `status` if there is an executor), `status` (learn the offset from
        a fresh STATUS). The fault closes when the last step is done."""
        st = self.state
        assert st is not None
        st.recovering, st.recovery_tries, st.recovery_sent = step, 0, at
        st.recovery_tcs = 0
        self.send_recovery(at)

    def send_recovery(self, at: float) -> None:
        st = self.state
        assert st is not None
        try:
            if st.recovering == "mode" and self.mode_frame is not None:
                self.session.send("executor", self.mode_frame)
            elif st.recovering == "status":
                self.session.send("executor", mp.Query(what=mp.Status.TYPE))
        except LinkError:
            pass                                 # the link fault is reported by the link itself
        st.recovery_sent = at
        st.recovery_tries += 1

    def recovered_timecode(self, at: float) -> None:
        st = self.state
        assert st is not None
        if st.recovering != "timecode":
            return
        st.recovery_tcs += 1
        if st.recovery_tcs >= RESYNC_TICKS:      # the tick estimate has a base, the executor's count is right
            if self.session.has("executor") and self.mode_frame is not None and self.session.alive("executor"):
                self.recover("status", at)
            else:
                self.recovered(at)

    def recovered(self, at: float) -> None:
        st = self.state
        assert st is not None
        st.recovering = None
        self.faults.close(self.rel(at))

    def check_recovery(self, now: float) -> None:
        st = self.state
        assert st is not None
        if st.recovering in ("mode", "status") and now - st.recovery_sent > RECOVERY_RETRY_S \
                and st.recovery_tries < RECOVERY_TRIES:
            self.count("recovery_retries")
            self.send_recovery(now)

    def judge_counters(self) -> None:
        """The nodes' own fault counters take part in the verdict: each that rose is a fault of the run."""
        at = self.rel(self.now())
        for node, after in self.node_counters.items():
            if node not in self.measured_nodes():
                continue
            if node not in self.counters_before and node not in self.reset_nodes:
                continue                         # no baseline: the counters cannot be judged
            for kind, rises in counter_faults(node, self.counters_before.get(node), after,
                                              node in self.reset_nodes, bool(self.reset_nodes)).items():
                self.faults.raise_(kind, node, at, describe_counters(node, rises), (), window=False)

    def link_fault(self, down: LinkDown, reconnect: bool = True) -> None:
        st = self.state
        assert st is not None
        if st.link_failed:
            return
        if down.node == "executor" and self.cfg.mode == "normal":
            self.link_faults.append({"node": down.node, "at_s": self.rel(down.at), "error": down.error,
                                     "reconnected": False, "affected": 0})
            return
        self.say(f"link fault: {down.node}: {down.error}")
        affected = self.in_flight()
        for e in affected:
            self.end(e, "lost", "link_fault")
        ok = self.session.reconnect(down.node) if reconnect else False
        self.link_faults.append({"node": down.node, "at_s": self.rel(down.at), "error": down.error,
                                 "reconnected": ok, "affected": len(affected)})
        if ok:
            # back: the frames that came meanwhile are read now, late; the events made from them are touched
            # until the tick estimate has a base again
            self.faults.raise_("link_fault", down.node, self.rel(down.at),
                               f"the {down.node} port vanished ({down.error}) and was reopened", affected)
            self.recover("timecode", self.now())
            if self.session.reset_on_open and (st.generating or self.events) and down.node in self.measured_nodes():
                # (an Arduino's DTR) the reopen reset the node: the run's reset-fault path, as for a HELLO mid-run
                self.count(f"{down.node}_reset_by_reopen")
                self.node_reset(down.node, f"the {down.node}'s port was reopened, which resets it (reset on open)",
                                self.now())
            return
        self.invalid.append(Reason("link_fault", f"link_fault: {down.node} port vanished at {self.rel(down.at):.3f} s "
                                   f"(reconnect failed); {len(affected)} events lost"))
        st.link_failed = True
        st.generating = False

    def rel(self, t: float) -> float:
        return round(t - (self.state.t0 if self.state is not None else t), 6)

    def finish_nodes(self) -> None:
        """Executor back to idle, then COUNTERS from both nodes (best effort: a dead link says nothing)."""
        try:
            if self.session.alive("executor") and self.cfg.mode != "normal":
                self.session.send("executor", mp.Mode(mode=mp.ExecutorMode.IDLE,
                                                      dispatch=mp.Dispatch[self.cfg.dispatch.upper()],
                                                      distance=0, period=0, random_ids=0))
        except LinkError:
            pass
        asked = []
        for name, link in self.session.links.items():
            try:
                if link.vanished is None and link.hello is not None:
                    link.send(mp.Query(what=mp.Counters.TYPE))
                    asked.append(name)
            except LinkError:
                pass
        deadline = self.now() + 0.5
        while asked and self.now() < deadline and any(n not in self.node_counters for n in asked):
            item = self.endpoint.next_item(self.inbox, 0.05)
            if isinstance(item, Arrival) and isinstance(item.message, mp.Counters):
                self.node_counters[item.node] = dict(item.message.__dict__)
            elif isinstance(item, Arrival) and self.state is not None:
                try:
                    self.handle(item)
                except Exception:  # noqa: BLE001 - late frames after the run cannot change it
                    pass

    # ---- the run's files ---------------------------------------------------------------------------
    def mark_unmeasurable(self, verdict: Verdict) -> dict[str, Any]:
        """Validity by cause (validity.py): each event judged by the bytes its figure depends on, in the record
        of the endpoint (the paced bench's; none on boards or in lockstep, where only the scheduler's own late
        creations are judged); a run with more than MAX_UNMEASURABLE_SHARE of them not measurable is invalid.
        Returns the sidecar's `measurability`."""
        st = self.state
        tick_s = st.timebase.tick_s if st is not None else 0.0
        baud = st.baud if st is not None else self.endpoint.baud
        stale = 1.0 + wire_time_s(mp.Timecode, baud) / tick_s + LATE_READ_MARGIN_TICKS if tick_s else 1e9
        j = judge(self.events, verdict.record, verdict.bound_us, stale, tick_s)
        late = sum(1 for c in j.marked.values() if c.byte == "late creation")
        share = j.share(len(self.events))
        if share > MAX_UNMEASURABLE_SHARE:
            worst = max(j.marked.values(), key=lambda c: c.us)
            self.invalid.append(Reason("bench_lag", f"{len(j.marked)} of {len(self.events)} events ({share:.1%}) not "
                                                    f"measurable, more than {MAX_UNMEASURABLE_SHARE:.0%}: a host stall "
                                                    f"displaced a byte they depend on (worst: {worst.detail})"))
        return j.figures(len(self.events), verdict.stalls, verdict.window, verdict.bound_us, late)

    def export(self, verdict: Verdict, cpu: dict[str, Any], load: Load | None) -> RunResult:
        cfg, st = self.cfg, self.state
        self.invalid += verdict.reasons
        self.judge_counters()
        for e in self.events:                 # a run cut short (error) still accounts for every event
            if not e.terminal:
                failed = (st is not None and st.link_failed) or self.invalid
                self.end(e, "lost", "link_fault") if failed else self.end(e, "missed", "timeout")
        self.invalid += self.faults.reasons()
        validity = self.mark_unmeasurable(verdict)
        if cfg.mode == "normal" and st is not None:
            apply_budget(self.events, st.timebase.tick_s, st.floor.us)
        summary = summarize(self.events)
        created = st.generator.created if st is not None else 0
        try:
            check_invariant(self.events, created, summary)
            invariant = {"ok": True, "error": None}
        except InvariantViolation as exc:
            invariant = {"ok": False, "error": str(exc)}
            self.invalid.append(Reason("invariant", f"accounting invariant violated: {exc}"))
        sched_counters: dict[str, Any] = dict(self.counters)
        if st is not None:
            m = st.matcher
            sched_counters.update(edge_order_breaks=m.edge_order_breaks, edges_missing=m.edges_missing,
                                  joined_without_fired=m.joined_without_fired,
                                  unmatched_results=m.unmatched_results + len(m.pending_results))
            sched_counters["generator_skipped"] = st.generator.skipped
        sched_counters.update(self.session.counters())
        sched_counters["tc_offset"] = st.tc_offset if st is not None else 0
        if st is not None:
            sched_counters["timecode_jumps"] = st.tracker.jumps
            sched_counters["timecode_disagreements"] = st.tracker.disagreements
        hellos = self.session.hellos()
        identity = self.endpoint.identity()
        sidecar: dict[str, Any] = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "mmrig_version": __version__,
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "name": cfg.name,
            "config": cfg.sidecar(st.baud if st else self.endpoint.baud, st.timebase.tick_s if st else 0.0),
            "target": identity,
            "nodes": {"profiler": hellos.get("profiler"), "executor": hellos.get("executor")},
            "timebase": {"timer_hz": st.timebase.timer_hz, "tick_counts": st.timebase.tick_counts,
                         "profiler_clock_ppm": None if st.tracker.fit_ppm is None else round(st.tracker.fit_ppm, 1)}
            if st is not None else None,
            "bench": verdict.section,
            "measurability": validity,
            "valid": not self.invalid,
            "invalid_reason": "; ".join(r.text for r in self.invalid) if self.invalid else None,
            "invalid_reasons": [{"code": r.code, "text": r.text} for r in self.invalid],
            "counters": {"scheduler": sched_counters, "profiler": self.node_counters.get("profiler"),
                         "executor": self.node_counters.get("executor")},
            "cpu": cpu,
            "load": {"condition": cfg.load, "command": load.command if load else None, "bench_priority": identity.get("priority"),
                     "scheduler_nice": os.getpriority(os.PRIO_PROCESS, 0)},
            "link_faults": self.link_faults,
            "faults": self.faults.section(),
            "invariant": invariant,
            "summary": summary,
        }
        # issue 17: what a reader needs to trust the figure, and the latency histogram (docs/data-format.md)
        sidecar["environment"] = collect_environment(hellos, identity, self.images)
        sidecar["histogram"] = latency_histogram(self.events, self.histogram_us or default_bin_us(cfg.mode))
        if cfg.mode == "mixed":
            sidecar["slack"] = slack_distribution(self.events)
        if cfg.mode == "normal" and st is not None:
            sidecar["budget"] = budget_summary(self.events, st.floor, cfg.discipline)
            sidecar["servo"] = {"samples": st.servo.samples, "probes": len(st.probe_tags),
                                "locked": st.servo.ready, "drift_ppm": round(st.servo.drift * 1e6, 3)}
        if cfg.trace and cfg.out is not None:          # issue 19: the executor seen from outside
            sidecar["executor_profile"] = executor_profile(self.endpoint.trace_files(), self.events, cfg.out)
        csv_path = json_path = None
        if cfg.out is not None:
            csv_path, json_path = write_run(cfg.out, self.events, sidecar)
        return RunResult(self.events, sidecar, csv_path, json_path)


def reset_cause_text(hello: mp.Hello) -> str:
    """HELLO.reset_cause in words (SPEC.md section 5); a node that cannot tell says 0."""
    return "reset cause: " + mp.ResetCause.words(hello.reset_cause)


def run(cfg: RunConfig, endpoint: Endpoint, log: Callable[[str], None] | None = None) -> RunResult:
    return Runner(cfg, endpoint, log).run()


__all__ = ["EndpointError", "RunResult", "Runner", "SetupError", "run"]
