"""Where a run's nodes are: the interface the scheduler core runs against, and real boards.

The core never knows what is behind an endpoint. Boards (serial ports, here) and the virtual bench
(`mmhil.BenchEndpoint`) implement the same interface; only the entry points (the command line, the demo,
the GUI) choose which to build. An endpoint

- opens the nodes' ports for a run (`open`) and closes them (`close`);
- says what it is (`identity`, for the sidecar) and how it is doing (`health`, for a live view);
- owns the run's clock (`clock`) and how the run waits (`next_item`, `wait_until`, `has_pending`): the
  host's monotonic clock and a plain queue wait here; a co-simulation advances its own time instead
  (mmhil.LockstepEndpoint);
- judges whether the figures of the run's window can be trusted (`begin` at the window's start,
  `verdict` at its end), with reasons as codes (`mmanalysis.schema.INVALID_REASONS`) a view maps to words,
  and hands over what it recorded of the bytes it carried, by which each event is judged (validity.py).
"""

from __future__ import annotations

import abc
import dataclasses
import queue
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mmanalysis.inputrecord import BenchRead
from mmproto import Item, Link, poll_until

from ..model.config import RunConfig
from ..model.byterecord import ByteRecord, HeldByFault, Stall
from ..model.reason import Reason


class EndpointError(RuntimeError):
    """The endpoint could not be used (a bench that would not start, a port that is not there). `code` is
    one of the invalid-run reason codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Ports:
    """Serial ports or pyserial URLs of the nodes; no executor for a normal-mode run on boards.
    `reset_on_open`: opening a port resets its node (an Arduino's DTR pulls its reset line), so the
    handshake listens for the node's boot HELLO before it asks (mmproto.link.HELLO_LISTEN_S), and a
    reopened port's HELLO is the node's reset, not an answer."""

    profiler: str
    executor: str | None
    reset_on_open: bool = False


@dataclass
class Verdict:
    """An endpoint's judgement of a run's window: its reasons (none: trusted), the sidecar section that
    backs it up (the bench's lag figures, say), and what validity by cause judges each event by
    (mmsched.verdict.validity): the record of the bytes the endpoint carried (None: it keeps none, as boards and a
    lockstep bench), the bound past which a displacement voids an event, the stalls and the window
    [start, end] on the run's clock (for the share of the run the stalls covered); and the PC's bytes a
    fault the endpoint injected held back (mmsched.verdict.injected; only a bench injects)."""

    reasons: list[Reason] = field(default_factory=list)
    section: dict[str, Any] | None = None
    record: ByteRecord | None = None
    bound_us: float | None = None
    stalls: list[Stall] = field(default_factory=list)
    stalls_since: float | None = None        # the host moment before which the endpoint dropped stalls (None: none)
    window: tuple[float, float] | None = None
    held_by_fault: list[HeldByFault] = field(default_factory=list)   # bytes its own injected faults held back
    # the reads of the PC's bytes with the cycle each entered its line (a paced bench: mmanalysis.inputrecord),
    # and how many the endpoint's record dropped; None: it keeps none (boards, a lockstep bench)
    inputs: list[BenchRead] | None = None
    inputs_dropped: int = 0
    # ... and the commands that changed the simulation (faults, resets, injections) with their cycles
    commands: list[tuple[int, str]] = field(default_factory=list)
    commands_dropped: int = 0

    @property
    def valid(self) -> bool:
        return not self.reasons


class Endpoint(abc.ABC):
    kind: str = "?"          # "bench" or "boards": the sidecar's target.kind
    wall_clock = True        # the run's clock is the host's (a lockstep bench's is virtual: it never stalls for the run)
    # it hands over a record of the bytes it carried at the run's end (Verdict.record; a paced bench), by which
    # the run's events are judged then: they are kept to the end (mmsched.run.retirement)
    keeps_byte_record = False
    baud: int = 9600         # the rate the nodes start at (their build-time rate); RunConfig.baud moves them

    @abc.abstractmethod
    def open(self, cfg: RunConfig) -> Ports:
        """Makes the nodes reachable for a run of this configuration."""

    def attach(self, links: dict[str, Link], inbox: "queue.Queue[Item]") -> None:
        """The run's links, once open, and the inbox they feed (an endpoint that controls time needs
        their byte counts and stamps what arrives)."""

    def clock(self) -> float:
        """The run's clock, in seconds: when frames arrived, when events were created and sent."""
        return time.monotonic()

    def next_item(self, inbox: "queue.Queue[Item]", timeout_s: float) -> Item | None:
        """The next frame or link fault, or None if none came within `timeout_s` of the run's clock."""
        try:
            return inbox.get(timeout=max(0.0, timeout_s))
        except queue.Empty:
            return None

    def has_pending(self, inbox: "queue.Queue[Item]") -> bool:
        """Whether a frame already received is still waiting to be handled."""
        return not inbox.empty()

    def backlog(self, inbox: "queue.Queue[Item]") -> int:
        """How many frames already received wait to be handled (about: the reader threads add to it)."""
        return inbox.qsize()

    def wait_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Waits (on the run's clock) until `done()`; False after `timeout_s`."""
        return poll_until(done, timeout_s)

    def begin(self) -> None:
        """The run's measured window starts now."""

    def reopen_refusal(self, node: str, wait_s: float = 0.0) -> str | None:
        """None if `node`'s vanished port may come back (a board replugged: the base case), else why it cannot
        (the session then does not try it: its path may lead to someone else's device by now). It may take up to
        `wait_s` to tell."""
        return None

    def injection_path(self) -> str | None:
        """None if `inject_on_edge` works here, else why not (the base case: boards, no loopback wired)."""
        return "this target cannot inject a frame on the tick's edge (boards: no loopback path)"

    def inject_on_edge(self, frame: bytes) -> None:
        """Floor calibration: puts `frame` into the profiler's receiver with its first start bit exactly on
        the next tick's edge, with no PC timing in it (only where `injection_path()` is None)."""
        raise EndpointError("bench_failed", self.injection_path() or "no injection path")

    def trace_path(self) -> str | None:
        """None if this target can trace the executor from outside for a run (`RunConfig.trace`), else why
        not (the base case: boards, where nothing watches the executor's core)."""
        return "the executor's trace is taken by the virtual bench, which sees every cycle; boards have no such view"

    def trace_files(self) -> dict[str, Path]:
        """After `close`: the files a traced run recorded, by kind ("exectrace": the executor's trace, "vcd":
        the wired ports), where `open` was told to put them (beside the run's CSV)."""
        return {}

    def verdict(self) -> Verdict:
        """Called once the run's window has ended (before `close`)."""
        return Verdict()

    def health(self) -> dict[str, Any] | None:
        """Live figures for a view (the bench's lag), or None."""
        return None

    @abc.abstractmethod
    def identity(self) -> dict[str, Any]:
        """The sidecar's `target` section."""

    def close(self) -> None:
        """Releases what `open` took; safe to call twice."""


@dataclass
class Boards(Endpoint):
    """Real boards on serial ports (paths such as /dev/ttyUSB0, or pyserial URLs: socket://, rfc2217://).
    A normal-mode run needs no executor. A port on an FTDI adapter whose latency timer is above 1 ms gets a
    warning (`warnings()`, and the sidecar's target section), since the PC reads its frames that much late
    (usbserial.py; `sysfs` is where the adapters' attributes are read, a fake tree in tests). With
    `latency_timer_ms` the FTDI ports' timers are set to it when the run opens and put back when it closes
    (`mmrig run --latency-timer MS`; `latency_timer_problem()` says first whether this user may)."""

    profiler: str
    executor: str | None = None
    baud: int = 9600
    sysfs: str = field(default="/sys", repr=False)
    # an Arduino's USB port resets the board when opened (DTR); False for an adapter wired without that
    # (`mmrig run --no-reset-on-open`)
    reset_on_open: bool = True
    latency_timer_ms: int | None = None       # the FTDI ports' latency timer for the run (None: left as it is)
    kind: str = field(default="boards", init=False)
    # the timers the run set, as they were before (kept for the sidecar), and whether they are still set
    _timers_before: dict[str, "usbserial.LatencyTimer"] = field(default_factory=dict, init=False, repr=False)
    _timers_live: bool = field(default=False, init=False, repr=False)

    def usb_latency_timers(self) -> dict[str, "usbserial.LatencyTimer | None"]:
        """Each given port's FTDI latency timer (None: not an FTDI adapter, a pty or a URL)."""
        from . import usbserial

        ports = {"profiler": self.profiler, "executor": self.executor}
        return {role: usbserial.latency_timer(port, self.sysfs) for role, port in ports.items() if port}

    def warnings(self, timers: dict | None = None) -> list["usbserial.PortWarning"]:
        """What the user should fix before trusting the timing (code "usb_latency_timer": an FTDI latency
        timer above 1 ms, as the run will have it), one per port; `timers`: the ports' latency timers if
        already read."""
        from . import usbserial

        timers = self.run_timers(self.usb_latency_timers() if timers is None else timers)
        found = [usbserial.latency_warning(role, t) for role, t in timers.items()]
        return [w for w in found if w is not None]

    def run_timers(self, timers: dict[str, "usbserial.LatencyTimer | None"]
                   ) -> dict[str, "usbserial.LatencyTimer | None"]:
        """`timers` as the run has them: at `latency_timer_ms` where it sets them (before, during or after it)."""
        if self.latency_timer_ms is None:
            return timers
        return {role: None if t is None else dataclasses.replace(t, ms=self.latency_timer_ms)
                for role, t in timers.items()}

    def latency_timer_problem(self) -> str | None:
        """Why `latency_timer_ms` cannot be set on these ports by this user (no FTDI port among them, a value
        the chip does not take, no permission), or None."""
        from . import usbserial

        if self.latency_timer_ms is None:
            return None
        timers = {role: t for role, t in self.usb_latency_timers().items() if t is not None}
        if not timers:
            ports = ", ".join(p for p in (self.profiler, self.executor) if p)
            return f"no FTDI port (driver ftdi_sio) among {ports}: nothing has a latency timer to set"
        return next((why for t in timers.values()
                     if (why := usbserial.set_problem(t, self.latency_timer_ms)) is not None), None)

    def open(self, cfg: RunConfig) -> Ports:
        if not self.profiler:
            raise EndpointError("port_error", "no profiler port given")
        if self.executor is None and cfg.mode != "normal":
            raise EndpointError("port_error", f"a {cfg.mode} run needs the executor's port too")
        self._set_latency_timers()
        return Ports(self.profiler, self.executor if cfg.mode != "normal" else None, self.reset_on_open)

    def _set_latency_timers(self) -> None:
        """The FTDI ports' timers to `latency_timer_ms` for the run, each one's value kept to put back."""
        from . import usbserial

        if self.latency_timer_ms is None or self._timers_live:
            return
        self._timers_before.clear()
        self._timers_live = True
        for role, timer in self.usb_latency_timers().items():
            if timer is None:
                continue
            try:
                usbserial.set_latency_timer(timer, self.latency_timer_ms)
            except usbserial.LatencyTimerError as exc:
                self.close()                       # the ones set already go back
                raise EndpointError("latency_timer", str(exc)) from exc
            self._timers_before[role] = timer

    def close(self) -> None:
        """The latency timers the run set go back to what they were."""
        from . import usbserial

        if not self._timers_live:
            return
        self._timers_live = False
        for timer in self._timers_before.values():
            try:
                usbserial.set_latency_timer(timer, timer.ms)
            except usbserial.LatencyTimerError:
                pass          # unplugged meanwhile: a new plug-in starts at the driver's default anyway

    def identity(self) -> dict[str, Any]:
        from . import usbserial

        timers = self.run_timers(self.usb_latency_timers())
        return {"kind": self.kind, "paced": None, "profiler": self.profiler, "executor": self.executor,
                "bench_pid": None, "reset_on_open": self.reset_on_open,
                "usb_latency_timer_ms": {role: t.ms if t is not None else None for role, t in timers.items()},
                "usb_drivers": {role: usbserial.driver(port, self.sysfs)
                                for role, port in (("profiler", self.profiler), ("executor", self.executor)) if port},
                "latency_timer_set": None if self.latency_timer_ms is None else
                {"ms": self.latency_timer_ms, "before_ms": {r: t.ms for r, t in self._timers_before.items()},
                 "restored": bool(self._timers_before) and not self._timers_live},
                "warnings": [{"code": w.code, "text": w.text} for w in self.warnings(timers)]}


