"""The Rig: the two serial links of the rig, the same object on the virtual bench or on real boards.

The links are the scheduler's own session with its nodes (mmsched.link.session.Session: an `mmproto.Link` per
node feeding one inbox, the HELLO handshake, BAUD), over the endpoint of the Rig's kind: `Boards`, the bench's
`BenchEndpoint`, or its `LockstepEndpoint` on a lockstep bench (mmhil.endpoint: `around` the bench the script
started). The Rig opens, hands-shakes, re-bauds, sends and closes through that session, as `mmrig run` does, and
reads its inbox one node at a time (mmsched.link.nodequeues), so a HIL script reads each node's frames in order with
`recv`, `wait_for` and `drain`.

On top of the frames, the experiment's own verbs, so that a test reads like the experiment:

    rig.mode("mixed", dispatch="isr")                     # MODE, STATUS back, the executor's timeline learnt
    ev = rig.schedule(5, ticks_ahead=2, dispatch="isr")   # one event two ticks ahead -> EventResult
    ev = rig.fire(3)                                      # normal mode: the PC's FIRE at the next tick
                                                          # (paced bench or boards: not in lockstep)

Each returns when its event has ended, with the outcome in the run format's words (mmsched.verdict.outcome
decides it, as in `mmrig run`), the latency and the ticks the nodes reported. On the paced bench each event
is judged by the bytes its figure depends on, as a run's are (mmsched.verdict.validity: validity by cause): one a
host stall displaced past the mode's bound is done again (`retries`), and kept as not measurable if it keeps
being displaced: a stall of the host is the rig's fault, never the firmware's.

On a lockstep bench (`Bench(lockstep=True)`) a wait steps virtual time, through the endpoint (mmhil.lockstep): a
wait for a frame grants time frame by frame until one comes, timeouts count in virtual seconds, frames
are stamped with the virtual moment they were complete, and `advance(seconds)` lets time run with nothing
to wait for. A script then gives the same result however busy the host is.

A Rig with no executor URL (`Rig(profiler_url, None)`) is a profiler alone: normal mode only.
"""

from __future__ import annotations

import dataclasses
import queue
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Iterator, TypeVar

import mmproto as mp
from mmproto import Arrival, Hello, Item, Link, LinkDown, LinkError, Message
from mmanalysis.schema import DEFAULT_LATE_BOUND_US
from mmsched.link.endpoint import Boards, Endpoint, EndpointError, Ports
from mmsched.link.nodequeues import NodeQueues
from mmsched.link.session import Session
from mmsched.model.config import DEFAULT_TIMEOUT_TICKS
from mmsched.verdict import profhist
from mmsched.model.exload import ExecutorLoad
from mmsched.model.grid import Grid
from mmsched.model.event import Event
from mmsched.verdict.outcome import apply_result, refusal_reason, silent_outcome
from mmsched.model.timecode import TimecodeTracker, round256
from mmsched.model.eventbytes import Basis, Sent
from mmsched.verdict.validity import Cause, causes, deciding

from . import frames, timing
from .bench import Bench, BenchError
from .endpoint import NORMAL_LAG_BOUND_US, BenchEndpoint, LockstepEndpoint, lag_bound_us
from .eventresult import EventResult
from .series import SeriesResult, finish, moments
from .lockstep import Stepper

M = TypeVar("M", bound=Message)
NODES = ("profiler", "executor")
LATE_BOUND_US = DEFAULT_LATE_BOUND_US      # at or above it an event is late, as in `mmrig run`
TIMEOUT_TICKS = DEFAULT_TIMEOUT_TICKS      # no RESULT this many ticks after its tick: missed
PHASE_BINS = 10                            # a periodic executor load's period in tenths (Rig.sample_load_phases)


class RigError(RuntimeError):
    pass


@contextmanager
def bench_errors() -> Iterator[None]:
    """A lockstep endpoint says its bench failed as EndpointError("bench_failed"), a reason for a run's sidecar; a
    script on the Rig gets the bench's own BenchError, as from the bench itself."""
    try:
        yield
    except EndpointError as exc:
        if isinstance(exc.__cause__, BenchError):
            raise exc.__cause__ from None
        raise


def endpoint_of(bench: Bench | None, ports: Ports, baud: int) -> Endpoint:
    """The endpoint a Rig's session runs over: `Boards` on `ports` at `baud`, else the one of the bench's kind
    around it (the bench's own rate)."""
    if bench is None:
        return Boards(ports.profiler, ports.executor, baud, reset_on_open=ports.reset_on_open)
    return (LockstepEndpoint if bench.lockstep else BenchEndpoint).around(bench)


@dataclass
class Rig:
    """Both links. `Rig(profiler_url, executor_url)` for real boards, `Rig.on_bench(bench)` for the bench."""

    profiler_url: str
    executor_url: str | None
    baud: int = 9600
    bench: Bench | None = None
    late_bound_us: float = LATE_BOUND_US
    timeout_ticks: int = TIMEOUT_TICKS
    retries: int = 2              # paced bench: an event a host stall displaced is done again this many times
    # Opening a port resets its node (an Arduino's DTR): the handshake listens for the boot HELLO before it
    # asks (mmproto.link.HELLO_LISTEN_S). None: True on boards, False on a bench (on_bench passes the
    # bench's own); False for boards behind an adapter without DTR reset (saves the listening).
    reset_on_open: bool | None = None
    # With a periodic executor load (rig.mode(executor_load="periodic=10ms/2ms")), rig.schedule spreads its
    # events' ticks over the load's period: back to back they are 3 ticks apart, 213.33 ms, a constant 3.33 ms
    # step against 10 ms, three phases for ever (the bench's clocks are exact), which may all miss the task. Before
    # each event it waits a tick or more, up to PHASE_BINS, for a tick in the least sampled tenth of the
    # period; `phases_covered` says how many tenths the events sampled. False: back to back, as before.
    sample_load_phases: bool = True
    session: Session = field(init=False)           # the links, over the endpoint of the Rig's kind
    by_node: NodeQueues = field(init=False)        # the session's inbox, one node at a time
    hellos: dict[str, Hello] = field(default_factory=dict, init=False)
    tracker: TimecodeTracker | None = field(default=None, init=False)   # tick starts, from TIMECODE frames
    tc_offset: int = field(default=0, init=False)    # profiler timecode - executor timecode (a multiple of 256)
    executor_mode: tuple[str, str] | None = field(default=None, init=False)   # (mode, dispatch) last set
    executor_load: str = field(default="none", init=False)                   # the load it was given with them ...
    exload: ExecutorLoad = field(default_factory=ExecutorLoad, init=False)   # ... parsed once, for every event's phase
    results: list[EventResult] = field(default_factory=list, init=False)      # every event this rig ended
    phase_bins: list[int] = field(default_factory=lambda: [0] * PHASE_BINS, init=False)   # since the load was set
    _tag: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.reset_on_open is None:
            self.reset_on_open = self.bench is None
        ports = Ports(self.profiler_url, self.executor_url, self.reset_on_open)
        self.session = Session(endpoint_of(self.bench, ports, self.baud))
        self.session.prepare(ports)          # the links from the start (opened by `open`)
        self.by_node = NodeQueues(self.session.endpoint, self.session.inbox, self.nodes)

    def __repr__(self) -> str:
        ports = ", ".join(f"{n} {link.url}" for n, link in self.links.items())
        return f"Rig({self.kind}: {ports}; {len(self.results)} events ended)"

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(n for n in NODES if n == "profiler" or self.executor_url is not None)

    @property
    def endpoint(self) -> Endpoint:
        return self.session.endpoint

    @property
    def links(self) -> dict[str, Link]:
        return self.session.links

    @property
    def stepper(self) -> Stepper | None:
        """A lockstep bench's time (its endpoint's), or None."""
        return self.endpoint.stepper if isinstance(self.endpoint, LockstepEndpoint) else None

    def now(self) -> float:
        """Virtual seconds on a lockstep bench, else time.monotonic(): the endpoint's clock."""
        return self.endpoint.clock()

    def advance(self, seconds: float) -> None:
        """Lockstep: lets virtual time run `seconds` (frames that come meanwhile are queued). Elsewhere time
        runs by itself: this sleeps."""
        if self.endpoint.wall_clock:
            time.sleep(seconds)
            return
        with bench_errors():
            self.endpoint.wait_until(lambda: False, seconds)

    @classmethod
    def on_bench(cls, bench: Bench, **kw) -> "Rig":
        """The Rig of a started bench. A bench in Arduino mode (`Bench(arduino=True)`: the stock bootloader, a
        reset when a pty is opened) resets a node as its link opens, so the links listen first."""
        return cls(bench.profiler_port, bench.executor_port, bench.baud, bench, reset_on_open=bench.arduino, **kw)

    @property
    def profiler(self) -> Link:
        return self.links["profiler"]

    @property
    def executor(self) -> Link:
        self.need_executor("the executor link")
        return self.links["executor"]

    @property
    def kind(self) -> str:
        """"lockstep", "bench" (paced or unpaced) or "boards"."""
        return "boards" if self.bench is None else "lockstep" if self.stepper is not None else "bench"

    def need_executor(self, what: str) -> None:
        if "executor" not in self.links:
            raise RigError(f"{what} needs an executor, and this rig has a profiler only (no executor port)")

    def open(self, hello_timeout: float = 5.0) -> "Rig":
        """Opens the links and reads a HELLO from each (the link asks with QUERY: a node that booted
        before the port was opened said hello to nobody; with `reset_on_open` it listens first, for the
        boot HELLO of the node the open reset, and `hello_timeout` covers both), checking version and node
        kind."""
        try:
            with bench_errors():
                self.session.open_links()
                self.session.handshake(hello_timeout)
        except LinkError as exc:
            self.close()
            raise RigError(str(exc)) from exc
        self._hellos_heard()
        self.tracker = TimecodeTracker.for_profiler(self.hellos["profiler"])
        return self

    def _hellos_heard(self) -> None:
        """Each node's HELLO as its link last heard it (the handshake's, or BAUD's answer at the new rate)."""
        self.hellos.update((n, link.hello) for n, link in self.links.items() if link.hello is not None)

    def change_baud(self, baud: int) -> None:
        """Moves both links to `baud` with BAUD (SPEC.md 0x06; the nodes start at `self.baud`, their
        build-time rate): each node answers with HELLO at the new rate, which replaces `hellos`. Raises
        RigError when a node refuses the rate (its UART cannot make it) or is not heard at it."""
        try:
            with bench_errors():
                self.session.change_baud(baud)
        except LinkError as exc:
            self._hellos_heard()         # a node moved before the other refused keeps its new HELLO
            raise RigError(str(exc)) from exc
        self._hellos_heard()
        self.tracker = TimecodeTracker.for_profiler(self.hellos["profiler"])

    def send(self, node: str, message: Message) -> float:
        """Sends one frame; returns the Rig's clock after the write returned."""
        if node not in self.links:
            self.need_executor(f"sending {type(message).__name__}")
        try:
            return self.session.send(node, message)
        except LinkError as exc:
            raise RigError(str(exc)) from exc

    def _seen(self, node: str, item: Item) -> Arrival:
        """Every frame read passes here: a failed link raises, TIMECODE frames feed the tick estimate."""
        if isinstance(item, LinkDown):
            raise RigError(f"{node} link failed: {item.error}")
        if node == "profiler" and self.tracker is not None and isinstance(item.message, mp.Timecode):
            self.tracker.update(item.message.timecode, item.at)
        return item

    def recv(self, node: str, timeout: float = 1.0) -> Arrival:
        """The node's next frame. Raises queue.Empty after `timeout` (virtual seconds in lockstep), RigError
        if its link failed."""
        if node not in self.nodes:
            self.need_executor("reading the executor")
        with bench_errors():
            item = self.by_node.next(node, timeout)
        if item is None:
            raise queue.Empty
        return self._seen(node, item)

    def recv_any(self, timeout: float) -> Arrival | None:
        """The next frame from either node (None after `timeout`)."""
        with bench_errors():
            item = self.by_node.next_any(timeout)
        return None if item is None else self._seen(item.node, item)

    def drain(self, node: str) -> list[Arrival]:
        """Takes everything queued so far (so that the next wait_for sees only fresh frames)."""
        with bench_errors():
            items = self.by_node.drain(node)
        return [self._seen(node, item) for item in items]

    def wait_for(self, node: str, kind: type[M], timeout: float = 2.0,
                 where: Callable[[M], bool] | None = None) -> tuple[Arrival, M]:
        """The node's next message of this kind (others that arrive meanwhile are discarded)."""
        deadline = self.now() + timeout
        while True:
            left = deadline - self.now()
            if left <= 0:
                raise RigError(f"{node}: no {kind.__name__} within {timeout} s")
            try:
                a = self.recv(node, left)
            except queue.Empty:
                continue
            if isinstance(a.message, kind) and (where is None or where(a.message)):
                return a, a.message

    def time_base(self) -> mp.TimeBase:
        return mp.TimeBase.from_hello(self.hellos["profiler"])

    @property
    def tick_s(self) -> float:
        return self.time_base().tick_s

    def next_tick(self) -> int:
        """Waits for the profiler's next TIMECODE (a tick has just begun) and returns its timecode."""
        self.drain("profiler")
        _, tc = self.wait_for("profiler", mp.Timecode, 2 * self.tick_s + 1.0)
        return tc.timecode

    # ---- the experiment's verbs ----------------------------------------------------------------
    def mode(self, mode: str = "mixed", *, dispatch: str = "isr", distance: int = 0, period: int = 0,
             random_ids: bool = False, executor_load: "str | ExecutorLoad" = "none", **old: object) -> mp.Status:
        """Puts the executor in `mode` ("idle", "verification", "mixed") with `dispatch` ("isr", "task") and
        `executor_load` (as `mmrig run --executor-load` and run_experiment's `executor_load`:
        "cpu,periodic=10ms/2ms"; "none" turns it off; `load=`, its former name, warns); returns its
        STATUS, which echoes the load and counts what it ran (cpu_loops, periodic_runs). Also learns the executor's timeline against the profiler's (its 32-bit timecode count
        started at its own boot: the offset is a multiple of 256), which `schedule` uses."""
        self.need_executor("rig.mode")
        load = frames.executor_load_of(executor_load, old, "rig.mode")
        frame = frames.mode(mode, dispatch=dispatch, distance=distance, period=period, random_ids=random_ids,
                            executor_load=load)
        status: mp.Status | None = None
        for _ in range(3):      # a frame can be lost (a cut line, a busy host): ask again
            self.drain("executor")
            self.send("executor", frame)
            try:
                _, status = self.wait_for("executor", mp.Status, 1.5, where=lambda s: (
                    s.mode, s.dispatch, s.cpu_load, s.periodic_period_us, s.periodic_exec_us) == (
                    frame.mode, frame.dispatch, frame.cpu_load, frame.periodic_period_us, frame.periodic_exec_us))
                break
            except RigError:
                continue
        if status is None:
            raise RigError(f"executor: no STATUS in mode {mode}/{dispatch} after 3 MODE frames")
        self.tc_offset = round256(self.next_tick() - status.timecode)
        self.executor_mode = (mp.ExecutorMode(frame.mode).name.lower(), mp.Dispatch(frame.dispatch).name.lower())
        if str(load) != self.executor_load:
            self.phase_bins = [0] * PHASE_BINS     # another load: its phases are sampled afresh
        self.executor_load, self.exload = str(load), load
        return status

    @property
    def phases_covered(self) -> int:
        """Of the tenths of the periodic executor load's period, how many an event's tick began in (since the
        load was set; 0 without a periodic load). 10 of 10: the events met the task at every phase."""
        return sum(1 for n in self.phase_bins if n)

    def load_phase_us(self, tc: int) -> float | None:
        """Where in the periodic executor load's period tick `tc` begins (us, from a tick starting at 0 mod the
        period), from the profiler's time base; None without a periodic load."""
        period = self.exload.period_us
        if not period:
            return None
        tb = self.time_base()
        return float(Fraction(tc * tb.tick_counts * 1_000_000, tb.timer_hz) % period)

    def _phase_bin(self, tc: int) -> int | None:
        phase = self.load_phase_us(tc)
        return None if phase is None else min(PHASE_BINS - 1, int(phase * PHASE_BINS / self.exload.period_us))

    def _spread_phase(self, now_tc: int, ticks_ahead: int) -> int:
        """Waits for the tick (now or up to PHASE_BINS later) whose target tick begins in the least sampled tenth
        of the load's period (the soonest of those); returns it. No periodic load, or sample_load_phases False:
        `now_tc` at once."""
        if not self.sample_load_phases or self._phase_bin(now_tc + ticks_ahead) is None:
            return now_tc
        bins = [self._phase_bin(now_tc + ticks_ahead + e) for e in range(PHASE_BINS)]
        least = min(self.phase_bins[b] for b in bins if b is not None)
        wait = next(e for e, b in enumerate(bins) if b is not None and self.phase_bins[b] == least)
        for _ in range(wait):
            now_tc = self.next_tick()
        return now_tc

    def schedule(self, event_id: int, ticks_ahead: int = 2, dispatch: str = "isr", *,
                 late_bound_us: float | None = None) -> EventResult:
        """Mixed mode, one event: right after a tick begins, SCHEDULE `event_id` (0..7) for the tick
        `ticks_ahead` later; waits for its ACK (or ERROR), the profiler's RESULT and the executor's FIRED.
        Puts the executor in mixed mode with `dispatch` first if it is not."""
        dispatch = self._in_mixed_mode("rig.schedule", event_id, ticks_ahead, dispatch)
        bound = late_bound_us if late_bound_us is not None else self.late_bound_us
        return self._judged(lambda: self._schedule_once(event_id, ticks_ahead, dispatch, bound),
                            lag_bound_us("mixed", ticks_ahead))

    def series(self, count: int, period_ms: float, *, ticks_ahead: int = 2, first_ms: float = 0.0,
               event_id: int = 0, dispatch: str = "isr", late_bound_us: float | None = None) -> SeriesResult:
        """Mixed mode, a periodic schedule in one frame (PERIODIC, protocol version 5): `count` events
        `period_ms` apart (a whole number of the profiler's counts), the first `first_ms` into the tick
        `ticks_ahead` after the current one; ids go round from `event_id`. The executor places each moment in
        the tick it measures in its own clock. Waits for the series' ACK (a refusal raises RigError with the
        executor's reason), then for every RESULT and FIRED until the last moment plus the rig's timeout;
        returns each moment's event (outcome, latency from its moment) and the histogram. Every event needs a
        RESULT on the profiler's line: at 9600 baud that is about 41 a second (`rig.change_baud` first)."""
        if not 1 <= count <= 0xFFFF:
            raise ValueError(f"count {count}: 1..65535")
        self._in_mixed_mode("rig.series", event_id, ticks_ahead, dispatch)
        tb, tick = self.time_base(), self.tick_s
        period = round(period_ms * 1e-3 * tb.timer_hz)
        first = round(first_ms * 1e-3 * tb.timer_hz)
        if period < 1 or not 0 <= first < tb.tick_counts:
            raise ValueError(f"period_ms {period_ms} / first_ms {first_ms}: a period of at least one count, the "
                             f"first moment inside the tick ({tb.tick_counts} counts)")
        bound = late_bound_us if late_bound_us is not None else self.late_bound_us
        self.drain("executor")
        now_tc = self.next_tick()
        start = now_tc + ticks_ahead
        tag = self._tag % 0xFEFF + 1
        self._tag = (tag + count - 1) % 0xFEFF           # the series' tags are its own (tag .. tag + count - 1)
        ms = moments(tag, event_id, start, first, period, tb.tick_counts, count)
        self.send("executor", mp.Periodic(tag=tag, event_id=event_id, timecode=(start - self.tc_offset) & 0xFFFFFFFF,
                                          first=first, period=period, tick_counts=tb.tick_counts, count=count))
        _, ack = self.wait_for("executor", mp.Message, 1.5, where=lambda m: (
            isinstance(m, mp.Ack) and m.tag == tag) or (isinstance(m, mp.Error) and m.ref_tag == tag
                                                        and m.ref_type == mp.Periodic.TYPE))
        if isinstance(ack, mp.Error):
            raise RigError(f"rig.series: the executor refused the series: {refusal_reason(ack.code)}")
        hist = None
        if profhist.profiler_keeps_histograms(self.hellos["profiler"]):      # the profiler's own histogram too
            hist = profhist.arm(self, Grid(start, period, tb.tick_counts, tb.timer_hz, first_counts=first), count,
                                bound, tb.timer_hz, event_id)
        last = ms[-1]
        deadline = self.now() + (last.tc - now_tc + self.timeout_ticks) * tick
        results: list[mp.Result] = []
        fired = 0
        while self.now() < deadline and (len(results) < count or fired < count):
            a = self.recv_any(deadline - self.now())
            if a is None:
                break
            m = a.message
            if isinstance(m, mp.Result) and not m.flags & mp.RESULT_FLAG_FIRE:
                results.append(m)
            elif isinstance(m, mp.Fired) and (m.tag - tag) & 0xFFFF < count:
                fired += 1
            elif hist is not None:
                hist.take(m)
        if hist is not None:
            self._final_report(hist)
        done = finish(ms, results, tb, bound, now_tc, ticks_ahead, period / tb.timer_hz * 1e6, fired)
        done.profiler_histogram = None if hist is None else hist.section(done.events)
        return done

    def _final_report(self, hist: profhist.ProfilerHistogram) -> None:
        """Ends the profiler's series and takes its final full report (profhist.py)."""
        self.send("profiler", profhist.end_message())
        deadline = self.now() + profhist.FINAL_WAIT_S
        while not hist.final and self.now() < deadline:
            a = self.recv_any(deadline - self.now())
            if a is None:
                break
            hist.take(a.message)

    def cancel(self, tag: int | None = None, timeout: float = 1.5) -> mp.Cancelled:
        """Takes the event with `tag` (as sent in a SCHEDULE) out of the executor's list before it fires, or
        every pending event with no tag; returns the executor's CANCELLED (`removed`: 0 when the event had
        fired or was never there; `pending`: what is left). A script that scheduled events by hand ends
        with `rig.cancel()` so none fires into the next one."""
        self.need_executor("rig.cancel")
        frame = frames.cancel(tag)
        self.send("executor", frame)
        _, done = self.wait_for("executor", mp.Cancelled, timeout, where=lambda c: c.tag == frame.tag)
        return done

    def fire(self, event_id: int, ticks_ahead: int = 1, *, late_bound_us: float | None = None,
             spin_s: float = 0.002) -> EventResult:
        """Normal mode, one event: the PC itself writes a FIRE frame at its estimate of the start of the tick
        `ticks_ahead` after the current one (from the profiler's TIMECODE frames; sleeping, then spinning
        the last `spin_s`); the profiler stamps its first byte. Not on a lockstep bench: normal mode measures
        the PC against wall time, and in lockstep the PC is never late by construction (as `mmrig run`)."""
        if self.stepper is not None:
            raise RigError("rig.fire: normal mode measures the PC's own timing against wall time; in lockstep the "
                           "PC is never late by construction: use the paced bench or boards")
        frames.check_event_id(event_id)
        if not 1 <= ticks_ahead <= 255:
            raise ValueError(f"ticks_ahead {ticks_ahead}: 1..255")
        bound = late_bound_us if late_bound_us is not None else self.late_bound_us
        return self._judged(lambda: self._fire_once(event_id, ticks_ahead, bound, spin_s), NORMAL_LAG_BOUND_US)

    # ---- inside the verbs ------------------------------------------------------------------------
    def _in_mixed_mode(self, verb: str, event_id: int, ticks_ahead: int, dispatch: str) -> str:
        """A mixed-mode verb's checks (an event id, ticks ahead, an executor), then the executor in mixed mode
        with `dispatch` if it is not (keeping the load it was given); returns the dispatch's name."""
        frames.check_event_id(event_id)
        if not 1 <= ticks_ahead <= 255:
            raise ValueError(f"ticks_ahead {ticks_ahead}: 1..255")
        self.need_executor(verb)
        dispatch = frames.by_name(mp.Dispatch, dispatch, "dispatch").name.lower()
        if self.executor_mode != ("mixed", dispatch):
            self.mode("mixed", dispatch=dispatch, executor_load=self.exload)
        return dispatch

    def _next_tag(self) -> int:
        self._tag = self._tag % 0xFEFF + 1     # 1..0xFEFF (the runner keeps 0xFF00.. for its probes)
        return self._tag

    def _seq_lost(self) -> int:
        return sum(link.decoder.counters.seq_lost for link in self.links.values())

    def _ended(self, event: Event, dispatch: str | None, **ticks: float | None) -> EventResult:
        return EventResult(event_id=event.event_id, tag=event.tag, mode=event.mode, dispatch=dispatch,
                           scheduled_tc=event.scheduled_tc, outcome=event.outcome or "missed", reason=event.reason,
                           latency_us=event.latency_us, latency_counts=event.latency_counts,
                           result_tc=event.result_tc, **ticks)

    def _schedule_once(self, event_id: int, ticks_ahead: int, dispatch: str, bound: float) -> tuple[EventResult, Event]:
        assert self.tracker is not None
        tb, tick = self.time_base(), self.tick_s
        self.drain("executor")
        now_tc = self._spread_phase(self.next_tick(), ticks_ahead)
        target, tag, lost0 = now_tc + ticks_ahead, self._next_tag(), self._seq_lost()
        ev = Event(event=len(self.results) + 1, tag=tag, event_id=event_id, mode="mixed", distance=ticks_ahead,
                   scheduled_tc=target, created_tc=now_tc, created_phase=None)
        ev.bytes.basis = Basis(now_tc, self.tracker.tick_start(now_tc), self.tracker.last_arrival())
        ev.bytes.created_at = self.now()
        w = self._write("executor", self.executor.prepare(frames.schedule(
            event_id=event_id, tag=tag, timecode=(target - self.tc_offset) & 0xFFFFFFFF)))
        ev.bytes.sent = Sent("executor", w.offset, w.began, w.gen, w.size, w.ended)
        deadline = self.now() + (ticks_ahead + self.timeout_ticks) * tick
        ack_tc = fired_tc = None
        result: mp.Result | None = None
        while ev.outcome is None:
            left = deadline - self.now()
            if left <= 0:
                break
            a = self.recv_any(left)
            if a is None:
                break
            m = a.message
            if isinstance(m, mp.Ack) and m.tag == tag:
                ack_tc = m.timecode + self.tc_offset
            elif isinstance(m, mp.Error) and m.ref_tag == tag and m.ref_type == mp.Schedule.TYPE:
                ev.finish("missed", refusal_reason(m.code))
            elif isinstance(m, mp.Fired) and m.tag == tag:
                fired_tc = m.timecode + self.tc_offset
            elif (isinstance(m, mp.Result) and not m.flags & mp.RESULT_FLAG_FIRE and m.event_id == event_id
                  and result is None and m.timecode >= target - 1):
                result = m
                deadline = min(deadline, self.now() + tick)    # its FIRED follows within a few ms
            if result is not None and fired_tc is not None:
                break
        if result is not None:
            apply_result(ev, result, tb, bound)
        elif ev.outcome is None:
            ev.finish(*silent_outcome(self._seq_lost() - lost0))
        phase = self._phase_bin(target)
        if phase is not None:
            self.phase_bins[phase] += 1
        return self._ended(ev, dispatch, ack_tc=ack_tc, fired_tc=fired_tc, load_phase_us=self.load_phase_us(target)), ev

    def _write(self, node: str, wire: bytes) -> mp.Written:
        try:
            return self.links[node].write_frame(wire)
        except LinkError as exc:
            raise RigError(str(exc)) from exc

    def _fire_once(self, event_id: int, ticks_ahead: int, bound: float, spin_s: float) -> tuple[EventResult, Event]:
        assert self.tracker is not None
        tb, tick = self.time_base(), self.tick_s
        now_tc = self.next_tick()
        while self.tracker.frames < 3:      # a few frames under the estimate's minimum filter
            now_tc = self.next_tick()
        target, tag, lost0 = now_tc + ticks_ahead, self._next_tag(), self._seq_lost()
        ev = Event(event=len(self.results) + 1, tag=tag, event_id=event_id, mode="normal", distance=ticks_ahead,
                   scheduled_tc=target, created_tc=now_tc, created_phase=None)
        wire = self.profiler.prepare(frames.fire(event_id=event_id, tag=tag))
        at = self.tracker.tick_start(target)
        basis_tc, arrived = self.tracker.basis()
        ev.bytes.basis = Basis(basis_tc, self.tracker.tick_start(basis_tc), arrived)
        while (left := at - time.monotonic()) > spin_s:
            time.sleep(left - spin_s)
        while time.monotonic() < at:
            pass
        w = self._write("profiler", wire)
        ev.bytes.sent = Sent("profiler", w.offset, w.began, w.gen, w.size, w.ended)
        try:
            _, result = self.wait_for("profiler", mp.Result, (self.timeout_ticks + 1) * tick,
                                      where=lambda r: bool(r.flags & mp.RESULT_FLAG_FIRE) and r.tag == tag)
            apply_result(ev, result, tb, bound)
        except RigError:
            ev.finish(*silent_outcome(self._seq_lost() - lost0))
        return self._ended(ev, None), ev

    def _judged(self, once: Callable[[], tuple[EventResult, Event]], bound_us: float) -> EventResult:
        """Paced bench: validity by cause (mmsched.verdict.validity), as for a run's events. An event a byte of which
        the bench displaced past `bound_us` in a way that could change its figure is done again (up to
        `retries` times), else kept as not measurable with the displacement. Elsewhere (boards, lockstep):
        once, judged by nothing (no record of the bytes)."""
        attempt = 0
        while True:
            attempt += 1
            v0 = self._bench_virtual_s()
            res, ev = once()
            cause = self._displaced(ev, v0, bound_us) if v0 is not None else None
            if cause is None:
                res = dataclasses.replace(res, attempts=attempt)
                break
            if attempt > self.retries:
                res = dataclasses.replace(res, measurable=False, stall_us=cause.us, attempts=attempt)
                break
        self.results.append(res)
        return res

    def _bench_virtual_s(self) -> float | None:
        if self.bench is None or self.stepper is not None or not self.bench.paced:
            return None
        try:
            return float(self.bench.control("stalls since 1e12")["virtual_s"])
        except (BenchError, OSError):
            return None

    def _displaced(self, ev: Event, v0: float, bound_us: float) -> Cause | None:
        """The displacement that voids the event, from the bench's record since shortly before it began (the
        estimate's TIMECODE can be a few seconds old), or None."""
        assert self.bench is not None
        try:
            record = timing.byte_record(self.bench.timing(since_s=max(0.0, v0 - 5.0)))
        except (BenchError, OSError):
            return None
        return deciding(ev.mode, ev.outcome, ev.reason, causes(ev.mode, ev.bytes, record), bound_us)

    def close(self) -> None:
        """Closes the links; the bench, if any, stays with whoever started it."""
        self.session.close()

    def __enter__(self) -> "Rig":
        # `with Rig(...).open() as rig` (a file's habit) enters an open rig: it is not opened twice
        return self if self.links and all(link.is_open for link in self.links.values()) else self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
