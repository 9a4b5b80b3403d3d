"""The headless experiment runner: one run of one mode against an endpoint (boards or the bench; the runner
never knows which), from the HELLO handshake to the CSV + JSON on disk.

One thread (the caller's) owns every event: it takes frames and link faults from the session's inbox in
arrival order (through the endpoint, which owns the run's clock), creates events (tick-aligned right after
a new TIMECODE, or free-running on a timer), joins ACK / ERROR / FIRED / RESULT to them and ends them at their
deadline; once the nodes have wound down it hands the run's record to the run's end, which judges and writes
it. Normal mode adds a firing thread, which only writes FIRE frames at their moment: a C thread by default
(nativefirer.py), or a Python one (firing.py, `--firing python`).

The rest of a run has rooms of its own, in the order a run enters them: the run state once the nodes said HELLO
(runstate.py), the nodes' set-up (nodesetup.py: MODE, the executor's timecode offset, the counters before),
normal mode's calibrations (calibration.py), the journal (journal.py), the firing thread (firers.py); during the
events faults of the rig and the way back from them (recovery.py), deadlines (deadlines.py) and a mixed run's
series (seriesrun.py); after them the nodes' wind-down (winddown.py: the counters after), the run's use of the
host (usage.py) and the run's end (finish.py: the judgement, the sidecar, the input records and the files). None
of them sees the Runner: each is given what it acts on, and the bundles several share are objects of their own
the Runner holds (the tally, the view, the event book; the run state from the handshake on; the finished run's
record at the end).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import mmproto as mp
from mmproto import Arrival, Item, LinkDown, LinkError

from . import calibration, deadlines, firers, nodesetup, nopload, winddown
from ..model.config import RunConfig
from ..link.endpoint import Endpoint, EndpointError, Verdict
from ..model.reason import Reason
from ..model.event import Event
from ..model.eventstore import EventStore
from ..verdict.faults import FaultLedger
from .firing import Firer, aim
from .nativefirer import NativeFirer
from ..verdict.journal import COUNTED_TEXT, Journal, incomplete
from ..model.load import Load
from ..model.phasedload import PhasedLoad
from ..model.phaseplan import PhaseSpan
from ..verdict.profslices import HistogramSlices
from ..host.loopnice import LoopNice
from ..model.grid import line_gap_s, line_problem
from .nodesetup import LineBudget, LoadUnavailable, SetupError
from ..verdict.outcome import refusal_reason
from ..host.ownstall import StallWatch
from ..host.quiet import quiet_interpreter
from .recovery import Recovery, reset_cause_text
from .retirement import Retirement
from ..verdict.validity import stale_phase
from ..verdict import profhist
from .seriesrun import SeriesRun
from ..model.result import RunResult
from .runrecord import RunRecord
from .runstate import BadHello, RunState
from .eventbook import EventBook
from .finish import finish_run
from ..model.tally import Tally
from ..model.view import View
from ..link.session import Session
from .usage import Usage
from ..model.eventbytes import Basis, Sent

# FIREs whose write the run keeps for the servo's anchor (aim: ev.bytes.anchor): the servo anchors on one of the
# last 16 it has a RESULT of (servo.ClockServo.window), and the FIREs written since whose RESULT has not come are
# a few ticks' worth (a FIRE unanswered for its timeout's ticks is lost); keeping every FIRE, an hour at 1 kHz
# kept 3.6 million.
FIRES_KEPT = 1024


def say_nothing(text: str) -> None:
    """A run with no `log`: its progress lines go nowhere."""


@dataclass
class Runner:
    cfg: RunConfig
    endpoint: Endpoint
    log: Callable[[str], None] | None = None          # progress lines, or None
    say: Callable[[str], None] = field(init=False, repr=False)       # one progress line: to `log`, or nowhere
    session: Session = field(init=False)
    tally: Tally = field(default_factory=Tally, init=False)          # the scheduler's own counters (tally.py)
    view: View = field(init=False)                                  # the live view's hook (view.py)
    book: EventBook = field(init=False)                             # the run's events (eventbook.py)
    recovery: Recovery = field(init=False)                          # faults of the rig and the way back
    series_run: SeriesRun = field(init=False)                           # mixed mode's PERIODIC series (seriesrun.py)
    node_counters: dict[str, Any] = field(default_factory=dict, init=False)
    invalid: list[Reason] = field(default_factory=list, init=False)
    firer: Firer | NativeFirer | None = field(default=None, init=False)
    firing_why: str | None = field(default=None, init=False)   # why the firing thread is not the one asked for
    faults: FaultLedger = field(default_factory=FaultLedger, init=False)
    counters_before: dict[str, Any] = field(default_factory=dict, init=False)   # COUNTERS at set-up, by node
    # the last FIRES_KEPT FIREs written (probes and events) by their write moment: the servo's anchor is one
    # (validity.py)
    fires_sent: dict[float, Sent] = field(default_factory=dict, init=False, repr=False)
    # Setting `stop_requested` ends event generation early; the events in flight still end as usual.
    stop_requested: threading.Event = field(default_factory=threading.Event, init=False)
    # The sidecar's environment and histogram: the images the endpoint ran, by node (and "bench"),
    # hashed into `environment` (only the entry point that chose the endpoint knows them), and the latency
    # histogram's bin width in us (None: mmanalysis.histogram's default for the mode).
    images: dict[str, Any] | None = None
    histogram_us: float | None = None
    # The run's journal (cfg.out only): each event's row as it ends, so a write failing at the end loses nothing
    journal: Journal | None = field(default=None, init=False)
    # When the run's own process was held off the CPU (ownstall.py): frames read right after say nothing of
    # when they came. Beats on the wall clock only (a lockstep bench's virtual clock never stalls for the run).
    own_stalls: StallWatch = field(default_factory=StallWatch, init=False)

    def __post_init__(self) -> None:
        self.say = self.log if self.log is not None else say_nothing
        self.session = Session(self.endpoint)
        if self.cfg.out is not None:
            self.journal = Journal(self.cfg.out)
        self.view = View(self.tally)
        self.book = EventBook(self.faults, self.tally, self.view, self.endpoint.clock, self.cfg.late_bound_us,
                              self.cfg.break_us, self.stop_requested, self.journal)
        self.recovery = Recovery(self.session, self.endpoint, self.book, self.faults, self.tally, self.own_stalls,
                                 self.cfg.mode, self.log)
        self.series_run = SeriesRun(self.cfg, self.session, self.endpoint, self.book, self.view, self.tally,
                                    self.recovery, self.invalid)

    @property
    def state(self) -> RunState | None:
        """What the run knows from the handshake on (runstate.py); None before it."""
        return self.book.state

    @state.setter
    def state(self, st: RunState | None) -> None:
        self.book.state = st

    @property
    def events(self) -> EventStore:
        return self.book.events

    @property
    def counters(self) -> dict[str, int]:
        return self.tally.counts

    @property
    def observer(self) -> Callable[[str, Any], None] | None:
        """The live view's hook (view.py); the entry points set it before the run."""
        return self.view.hook

    @observer.setter
    def observer(self, hook: Callable[[str, Any], None] | None) -> None:
        self.view.hook = hook

    @property
    def broke(self) -> Event | None:
        return self.book.broke

    @property
    def inbox(self):
        return self.session.inbox

    @property
    def over(self) -> bool:
        """Generation has ended and every event has its outcome: from here the ports are closed on purpose
        (views stop reading health then). Thread-safe enough for a poller: a length and a dict's emptiness."""
        st = self.state
        return st is not None and not st.generating and len(self.events) > 0 and not self.book.open

    def interrupt(self, why: str) -> None:
        """A signal (SIGTERM, SIGHUP) ends the run early: generation stops, the events in flight end, and the
        run is written, marked invalid with the reason: nothing lost, nothing taken for a result."""
        if not any(r.code == "interrupted" for r in self.invalid):
            self.invalid.append(Reason("interrupted", f"interrupted: {why}; the events so far are kept"))
        self.stop_requested.set()

    def now(self) -> float:
        return self.endpoint.clock()

    def journal_phases(self, spans: list[PhaseSpan]) -> None:
        """The phases so far into the run's journal (PhasedLoad.on_switch: the phases' thread, at each switch), so
        a run killed on the way says where they began."""
        if self.journal is not None and self.cfg.phases is not None and \
                (why := self.journal.phases(self.cfg.phases, spans)) is not None:
            self.say(why)

    def journal_counted(self) -> None:
        """A run on the profiler's histogram alone has no rows for its journal: its figures so far go there
        instead (the summary, the cells, the maxima and the phases as the reports give them), at each interval's
        edge and phase switch, so a run killed in its fifth hour keeps its first four."""
        st = self.state
        if self.journal is None or st is None or st.hist_slices is None or st.profiler_hist is None \
                or st.series is None:
            return
        hist, slices = st.profiler_hist, st.hist_slices
        s = hist.summary
        counted = 0 if s is None else s.ok + s.late + s.early + s.missed
        sections = {"summary": hist.run_summary(st.series.total, st.series.total - counted),
                    "histogram": hist.histogram_section(), "maxima": slices.maxima_section(hist),
                    "profiler_histogram": hist.section(()), **incomplete(COUNTED_TEXT)}
        if self.cfg.phases is not None and slices.spans:
            sections["phases"] = slices.phases_section(self.cfg.phases, hist)
        if (why := self.journal.sections(sections)) is not None:
            self.say(why)

    # ---- one run ---------------------------------------------------------------------------------
    def run(self) -> RunResult:
        """The whole run. A port that cannot be opened or an endpoint that cannot start raises (LinkError,
        EndpointError: nothing was run); anything after that ends in a run on disk, invalid if need be."""
        cfg = self.cfg
        usage = Usage()
        load: Load | PhasedLoad | None = None
        verdict = Verdict()
        loop_nice = LoopNice().raise_()       # the run's own threads above the machine's other work (loopnice.py)
        try:
            self.session.open(self.endpoint.open(cfg), reader_priority=cfg.priority)
        except BaseException:
            self.session.close()
            self.endpoint.close()
            loop_nice.restore()
            raise
        try:
            self.session.handshake()
            if cfg.baud is not None:
                self.session.change_baud(cfg.baud)
                self.say(f"links at {cfg.baud} baud")
            hello = self.session.links["profiler"].hello
            assert hello is not None
            self.state = RunState.after_handshake(cfg, hello, self.now())
            # a long run's memory bounded (retirement.py)
            self.book.retirement = Retirement(self.book.events, self.faults, self.state.timebase.tick_s,
                                              stale_phase(self.state.timebase.tick_s, self.state.baud),
                                              judge_now=not self.endpoint.keeps_byte_record)
            why = (line_problem(self.state.rate_s(cfg), self.state.baud, one_fire=self.state.one_fire,
                                fires=cfg.mode == "normal")
                   if self.state.on_grid else None)
            if cfg.generation == "periodic":    # a series: on the profiler's histogram alone if need be
                try:
                    self.state.histogram_only = profhist.histogram_only(cfg.raw, hello, why)
                except profhist.NoHistogram as exc:
                    raise LineBudget(str(exc)) from None
                if self.state.histogram_only:
                    self.say("the profiler's histogram alone measures this series: no RESULT per event, no event "
                             "rows" + (f" (a RESULT per event does not fit the profiler's line at {self.state.baud} "
                                       "baud: --raw needs a faster one)" if why and cfg.raw is None else ""))
            elif why:
                raise LineBudget(why)           # the nodes' own rate (no --baud) cannot carry the grid
            if cfg.load != "idle":
                try:
                    load = Load(self.state.expected_s + 30, cfg.load).start()
                except RuntimeError as exc:      # the entry points check first; a run still says it, never a traceback
                    raise LoadUnavailable(f"--load {cfg.load}: {exc}") from exc
                self.say(f"load {cfg.load}: {' '.join(load.command)}")
            nodesetup.setup_modes(cfg, self.state, self.session, self.wait_item, self.tally, self.counters_before)
            self.node_counters.clear()          # the run's own COUNTERS come at its end (finish_nodes)
            if cfg.mode == "normal":
                calibration.calibrate(self.state, self.endpoint, self.session, self.wait_item, self.tally,
                                      self.fires_sent, cfg.discipline)
            if self.journal is not None and (no_journal := self.journal.open_run(
                    cfg, self.state.timebase, self.state.baud, self.endpoint.identity(), self.session.hellos())):
                self.say(no_journal)
            self.state.start_generating(self.now())
            if cfg.phases is not None:          # the load in phases, from the run's start (phasedload.py)
                load = PhasedLoad(cfg.phases, self.now, self.state.t0, self.state.expected_s + 30, self.say,
                                  on_switch=self.journal_phases).start()
            if self.state.histogram_only:       # its phases and maxima from the profiler's reports (profslices.py)
                self.state.hist_slices = HistogramSlices(cfg.maxima_every_s,
                                                         load.spans if isinstance(load, PhasedLoad) else None)
            self.endpoint.begin()
            if cfg.mode == "normal":
                self.firer, self.firing_why = firers.start(cfg, self.session.links["profiler"],
                                                           line_gap_s(self.state.baud, self.state.one_fire),
                                                           self.state.rate_s(cfg), self.fire_written, self.fire_failed,
                                                           nice=loop_nice.measured_nice)
                if self.firing_why:
                    self.say(f"WARNING: {self.firing_why}; the FIREs go out from a Python thread (--firing python)")
                for why in (self.firer.sched_why, self.firer.memory_locked_why):   # (entry points refuse first)
                    if why:
                        self.say(f"WARNING: {why}; the run goes on without it (the sidecar's cpu says so)")
            self.view.notify("phase", "running")
            if self.endpoint.wall_clock:
                self.own_stalls.clock = self.endpoint.clock
                self.own_stalls.start()
            with quiet_interpreter():           # no full collection, a short lock switch (quiet.py)
                self.loop()
        except (LinkError, SetupError, EndpointError, BadHello) as exc:
            # (an endpoint that fails mid-run, e.g. a lockstep bench that stopped answering: the events so far
            # are written, the run marked invalid)
            self.invalid.append(Reason(exc.code, f"session: {exc}"))
            self.say(f"run failed: {exc}")
        finally:
            self.own_stalls.stop()
            if self.firer is not None:
                self.firer.stop()
            if load is not None:
                load.stop()
            try:
                winddown.finish_nodes(cfg, self.state, self.session, self.endpoint, self.handle, self.node_counters)
                verdict = self.endpoint.verdict()
            except (LinkError, EndpointError) as exc:   # the nodes' counters are best effort; closing is not
                if not self.invalid:
                    self.invalid.append(Reason(exc.code, f"session: {exc}"))
            finally:
                self.endpoint.close()
                self.session.close()
                loop_nice.restore()
        cpu = usage.section(self.firer, cfg.accuracy if cfg.mode == "normal" else None, self.firing_why)
        cpu["loop"] = loop_nice.section()
        record = RunRecord(cfg, self.state, self.events, self.counters, self.node_counters, self.counters_before,
                           self.invalid, self.faults, self.recovery.link_faults, self.session.links,
                           self.session.hellos(), self.session.counters(), self.endpoint.identity(), self.endpoint.baud,
                           self.endpoint.wall_clock,
                           self.endpoint.trace_files() if cfg.trace and cfg.out is not None else None,
                           self.images, self.histogram_us)
        result = finish_run(record, verdict, cpu, load, self.book, self.recovery, self.journal, self.say)
        self.view.notify("phase", "done")
        return result

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

    # ---- normal mode's calibrations (docs/normal-mode.md) --------------------------------------------
    # ---- the loop --------------------------------------------------------------------------------
    def loop(self) -> None:
        cfg, st = self.cfg, self.state
        assert st is not None
        hard_stop = self.now() + st.expected_s * 2 + 30
        while True:
            wake = 0.05
            if st.generating and (cfg.generation == "free" or st.grid is not None) and cfg.mode != "verification":
                # (verification: the executor creates the events, the free timer never runs; waking for it
                # would spin, and in lockstep never let time advance)
                wake = max(0.0, min(wake, st.next_free_at - self.now()))
            if st.generating and cfg.executor_load.rx_per_s:
                wake = max(0.0, min(wake, st.next_nop_at - self.now()))
            item = self.endpoint.next_item(self.inbox, wake)
            if self.firer is not None:
                self.firer.collect()            # the FIREs written so far, before a RESULT of theirs is joined
            new_tc = self.handle(item) if item is not None else None
            now = self.now()
            if st.generating:
                self.generate(now, new_tc)
                nopload.send_due_nop(st, cfg.executor_load.rx_per_s, self.session, self.tally, now)
            deadlines.check_deadlines(st, self.book, self.faults, self.session, self.tally, cfg.timeout_ticks,
                                     self.now())
            self.recovery.check_recovery(st, now)
            if (gave_up := self.recovery.check_silence(st, now)) is not None:
                self.invalid.append(gave_up)
            if st.link_failed:
                break
            if not st.generating and not self.book.in_flight():
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
        elif st.series is not None and st.histogram_only:
            self.series_run.follow_counted(st)      # no events made: the profiler counts them (profhist.py)
        elif st.series is not None:
            # a periodic series: the executor fires every moment it was sent, so the run makes an event for
            # each (its total set when the grid was laid), whatever the clock says
            if st.grid is not None and st.grid.next_k >= st.series.total:
                st.generating = False
            else:
                self.generate_on_grid(now)
        elif cfg.duration_s is not None and now - st.t0 >= cfg.duration_s:
            st.generating = False
        elif cfg.count is not None and len(self.events) >= cfg.count:
            st.generating = False
        elif cfg.mode == "verification":
            pass
        elif st.on_grid:
            self.generate_on_grid(now)
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
                self.tally.count("free_timer_overruns")
                st.next_free_at = now + st.rate_s(cfg)
            self.create(now)

    def generate_on_grid(self, now: float) -> None:
        """A schedule grid (grid.py): makes the event of every moment whose firing time is less than the firing
        thread's lead away, so that it has it before its moment; the loop wakes for the next one. A moment
        whose firing time has passed (the scheduler was held up) still gets its event, fired at once and late:
        in normal mode the PC is what is measured (cyclictest does the same after a late wake-up). A moment the
        generator refuses (its in-flight bound) gets none, counted in the grid's `skipped`."""
        cfg, st = self.cfg, self.state
        assert st is not None
        if st.tracker.current is None:
            return
        grid = st.grid if st.grid is not None else st.lay_grid(cfg, st.tracker.current)
        if cfg.mode == "mixed" and st.series is None:
            self.series_run.send_series(st, now)
            if st.histogram_only:
                return
        while (cfg.count is None or len(self.events) < cfg.count) and (st.series is None
                                                                      or grid.next_k < st.series.total):
            tc, due = grid.moment(grid.next_k)
            at = st.tracker.moment_start(tc, due / grid.tick_counts)
            lead = self.firer.lead_s if self.firer is not None else 0.0
            if at - lead > now:
                st.next_free_at = at - lead
                return
            grid.take()
            if not self.create(now, (tc, due)):
                grid.skipped += 1

    def backlog(self) -> bool:
        """Frames already received wait in the inbox: a newer TIMECODE may be among them, so an event made now
        would be made from a stale timecode (a busy start once made events 5 ticks stale, all past due).
        Creation waits until they are handled (microseconds: the loop takes them at once)."""
        if not self.session.pending():
            return False
        self.tally.count("creations_deferred")
        return True

    def create(self, now: float, moment: tuple[int, int] | None = None) -> bool:
        """Makes one event and sends its request: due at the start of the tick `distance` ahead, or at a grid's
        `moment` (tick, counts into it). False if none could be made (no timecode yet, the generator's bound)."""
        cfg, st = self.cfg, self.state
        assert st is not None
        if st.tracker.current is None:
            return False
        if st.series is not None and moment is not None and st.grid is not None:
            self.series_run.create_in_series(st, st.grid.next_k - 1, *moment)     # the tag and id: the executor's
            return True
        got = st.generator.next()
        if got is None:
            return False
        tag, eid = got
        cur = st.tracker.current
        tc, due = moment if moment is not None else (cur + cfg.distance, 0)
        ev = self.book.new_event(tag, eid, cfg.mode, tc - cur, tc, cur, round(st.tracker.phase(now, cur), 6))
        ev.due_counts = due
        ev.bytes.created_at = ev.created_at
        if cfg.mode == "mixed":
            ev.bytes.basis = Basis(cur, st.tracker.tick_start(cur), st.tracker.last_arrival())
            try:
                t = self.now()
                w = self.session.send_frame("executor", mp.Schedule(
                    tag=tag, event_id=eid, timecode=(ev.scheduled_tc - st.tc_offset) & 0xFFFFFFFF))
                ev.sent_s = round(t - st.t0, 6)
                ev.bytes.sent = Sent("executor", w.offset, t, w.gen, w.size, w.ended)
            except LinkError:
                self.book.end(ev, "lost", "link_fault")
        elif cfg.mode == "normal":
            assert self.firer is not None
            # encoded now, written at the moment: the firing thread only writes (firing.py)
            wire = self.session.links["profiler"].prepare(mp.Fire(event_id=eid, tag=tag))
            at = aim(st, ev, cfg.discipline, self.fires_sent, self.tally.count)
            ev.fire_at = at
            self.firer.add(ev, at, wire)
        self.view.notify("event", ev)
        return True

    def on_local_event(self, msg: mp.LocalEvent, at: float) -> None:
        """Verification mode: the executor scheduled an event itself; it becomes one of ours while the
        run is generating (the first `count` of them), else it is followed but not accounted."""
        cfg, st = self.cfg, self.state
        assert st is not None
        tc = msg.timecode + st.tc_offset
        cur = st.tracker.current if st.tracker.current is not None else tc - cfg.distance
        if cfg.mode != "verification" or not st.generating:
            st.local_ignored.add(msg.tag)
            self.book.new_event(msg.tag, msg.event_id, "verification", cfg.distance, tc, cur, None, accounted=False)
            self.tally.count("local_events_not_accounted")
            return
        ev = self.book.new_event(msg.tag, msg.event_id, "verification", tc - cur, tc, cur,
                            round(st.tracker.phase(at, cur), 6), at=at)
        st.generator.adopt(msg.event_id)
        self.view.notify("event", ev)

    def fire_written(self, ev: Event, w: mp.Written) -> None:
        """The event's FIRE is on the line: its write moment (the budget's wake-up and write parts, the servo's
        anchor) and where the bench finds its bytes."""
        st = self.state
        assert st is not None
        ev.written_at = w.began
        ev.write_ended_at = w.ended
        ev.sent_s = round(w.began - st.t0, 6)
        ev.bytes.sent = self.fires_sent[w.began] = Sent("profiler", w.offset, w.began, w.gen, w.size, w.ended)
        if len(self.fires_sent) > FIRES_KEPT:           # the oldest goes: no anchor reaches back that far
            del self.fires_sent[next(iter(self.fires_sent))]
        self.view.notify("event", ev)

    def fire_failed(self, ev: Event, exc: BaseException) -> None:
        self.tally.count("fire_write_failures")

    # ---- ending events ---------------------------------------------------------------------------
    # ---- handling frames -------------------------------------------------------------------------
    def handle(self, item: Item) -> int | None:
        """One frame or link fault. Returns the extended timecode if the item was a new TIMECODE."""
        st = self.state
        assert st is not None
        if isinstance(item, LinkDown):
            if (gave_up := self.recovery.link_fault(st, item)) is not None:
                self.invalid.append(gave_up)
            return None
        msg, node = item.message, item.node
        if item.received.lost_before:
            self.tally.count(f"{node}_seq_lost", item.received.lost_before)
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
            if (st.generating or self.events) and node in self.recovery.measured_nodes():
                self.tally.count(f"{node}_hello_midrun")
                self.recovery.node_reset(st, node, f"the {node} said HELLO mid-run ({reset_cause_text(msg)})", item.at)
            elif st.generating or self.events:
                self.tally.count(f"{node}_hello_midrun")   # a node the mode does not use: nothing it measures
            return None
        if isinstance(msg, mp.Counters):
            self.node_counters[node] = dict(msg.__dict__)
            if node == "profiler":
                st.losses.reading(msg)
            return None
        if node == "profiler":
            if isinstance(msg, mp.Timecode):
                self.recovery.check_timecode(st, msg.timecode, item.at)
                tc = st.tracker.update(msg.timecode, item.at)
                st.tc_arrivals.append(tc, item.at)
                self.recovery.recovered_timecode(st, item.at)
                self.view.notify("timecode", tc)
                if self.cfg.mode == "normal" and not st.generating:
                    # before normal mode fires it waits for the tick fit (calibration.fit_tick): how far it is
                    need = st.tracker.fit_min_frames
                    fit = need if st.tracker.fitted else min(st.tracker.frames, need - 1)
                    self.view.notify("tick_fit", (fit, need))
                return tc
            if isinstance(msg, mp.Result):
                self.on_result(msg)
            elif st.profiler_hist is not None and st.profiler_hist.take(msg):
                if isinstance(msg, mp.HistSummary):      # the profiler's own histogram (profhist.py)
                    # ... cut in time where it alone measures (profslices.py), into the journal at each edge
                    if st.hist_slices is not None and st.hist_slices.report(st.profiler_hist, st.rel(item.at)):
                        self.journal_counted()
                    self.view.notify("profiler_report", st.profiler_hist)
            elif isinstance(msg, mp.Error):
                self.tally.count(f"profiler_error_{msg.code}")
            return None
        self.on_executor(msg, item.at)
        return None

    def on_executor(self, msg: mp.Message, at: float) -> None:
        st = self.state
        assert st is not None
        off = st.tc_offset
        if st.series is not None and self.series_run.on_series_answer(st, msg, at):
            return                              # a series' ACK or refusal (seriesrun.py)
        if isinstance(msg, mp.Ack):
            ev = st.matcher.by_tag.get(msg.tag)
            if ev is None:
                self.tally.count("unknown_acks")
                return
            ev.ack_tc = msg.timecode + off
            ev.ack_phase = round(msg.phase / 65536, 6)
            ev.slack_ticks = round(ev.scheduled_tc - ev.ack_tc - ev.ack_phase, 6)
            self.view.notify("event", ev)
            self.recovery.check_executor_tick(st, ev.ack_tc, f"ACK of tag {msg.tag}", at)
        elif isinstance(msg, mp.Error):
            if msg.ref_type == mp.Schedule.TYPE:
                ev = st.matcher.by_tag.get(msg.ref_tag)
                if ev is not None and not ev.terminal:
                    ev.ack_tc = msg.timecode + off
                    # a refusal stamped in another tick than the profiler's is the rig's clock, not the SUT's
                    self.recovery.check_executor_tick(st, ev.ack_tc, f"ERROR {msg.code} for tag {msg.ref_tag}", at)
                    self.book.end(ev, "missed", refusal_reason(msg.code))
                    return
            self.tally.count(f"executor_error_{msg.code}")
        elif isinstance(msg, mp.Status):
            if st.mode_frame is not None and msg.mode != st.mode_frame.mode:
                return
            if st.recovering == "mode":          # set up again: its count follows the port after a few ticks
                self.recovery.recover(st, "timecode", at)
            elif st.recovering == "status":
                nodesetup.learn_offset(st, self.tally, msg)
                self.recovery.recovered(st, at)
        elif isinstance(msg, mp.LocalEvent):
            self.on_local_event(msg, at)
        elif isinstance(msg, mp.Fired):
            ev = st.matcher.by_tag.get(msg.tag)
            if st.series is not None:
                ev = self.series_run.on_series_fired(st, msg.tag, ev, at, msg.timecode + off)
                if ev is None:
                    return
            if ev is None:
                self.tally.count("unknown_fired")
                return
            # it fired at the start of that tick and said so at once (13.5 ms of line at 9600 baud)
            self.recovery.check_executor_tick(st, msg.timecode + off, f"FIRED of tag {msg.tag}", at)
            if st.series is not None:
                ev.fired_tc = msg.timecode + off      # a series' RESULT joins by its moment (matching.py)
                st.matcher.fired_count += 1
                self.view.notify("event", ev)
            else:
                self.book.join(st.matcher.fired(ev, msg.timecode + off))

    def on_result(self, r: mp.Result) -> None:
        st = self.state
        assert st is not None
        if r.flags & mp.RESULT_FLAG_LOST_BEFORE:
            self.tally.count("profiler_results_lost_flag")
            st.losses.flagged()
        if r.flags & mp.RESULT_FLAG_FIRE:
            if r.tag in st.probe_tags:        # a calibration probe's: taken by wait_probe
                return
            ev = st.matcher.fire_result(r)
            if ev is not None:
                ev.stamp_s = st.timebase.seconds(r.timecode, r.counts)
                if ev.written_at is not None:
                    st.servo.add(ev.written_at, ev.stamp_s)
                self.book.join([(ev, r)])
        elif st.series is not None:
            self.book.join(st.matcher.series_result(r, st.timebase.tick_counts))
        else:
            self.book.join(st.matcher.edge_result(r))

    # ---- faults of the rig and recovering from them (faults.py) -----------------------------------
    def rel(self, t: float) -> float:
        return round(t - (self.state.t0 if self.state is not None else t), 6)


def run(cfg: RunConfig, endpoint: Endpoint, log: Callable[[str], None] | None = None) -> RunResult:
    return Runner(cfg, endpoint, log).run()


__all__ = ["EndpointError", "RunResult", "Runner", "SetupError", "run"]
