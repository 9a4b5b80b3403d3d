"""The virtual bench as the scheduler core's endpoint (`mmsched.link.endpoint.Endpoint`): the core runs against
it exactly as against boards; what is bench-specific lives here: starting and stopping the bench, its
priority over the scheduler's load, its bound and what it recorded of the run's bytes.

Validity by cause (mmsched.verdict.validity, docs/bench.md): the paced bench stamps the PC's bytes on the host clock
and records how late it handed its nodes' output over; an event is not measurable when a byte its figure
depends on was displaced past the mode's bound:
- normal mode: 1 ms, the paper's late bound (a displacement of the FIRE or of the TIMECODE it was placed by
  enters the latency directly; below the bound it is part of the figure's `line`, and the sidecar gives its
  distribution);
- mixed and verification: a displacement only shifts the PC's messages, so the bound is a tenth of the time
  a SCHEDULE written right after its TIMECODE has to spare before its tick: 47 ms one tick ahead at 9600
  baud (SPEC.md section 8), one tick (71.1 ms) more per further tick of distance, i.e. 4.7 ms one tick
  ahead and 11.8 ms two ahead. `lag_bound_us=` overrides it.
The bench's stall intervals (its lag above the same bound) are kept for the share of the run they covered.
"""

from __future__ import annotations

import os
import queue
import subprocess
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from mmanalysis.safefiles import move_into
from mmanalysis.schema import NOMINAL_TICK_S
from mmproto import Item, Link
from mmsched.host import renice, rtkit
from mmsched.model.config import RunConfig
from mmsched.link.endpoint import Endpoint, EndpointError, Ports, Verdict
from mmsched.model.reason import Reason
from mmsched.model.byterecord import HeldByFault
from mmsched.verdict.tracefiles import traced_paths

from . import timing
from .bench import Bench, BenchError, profiler_kind_of
from .linemodel import IDEAL, LineModel
from .lockstep import Stepper, stamped

NORMAL_LAG_BOUND_US = 1000.0
SPARE_ONE_AHEAD_US = 47_000.0
TICK_US = NOMINAL_TICK_S * 1e6   # rounded to 100 us, the bound is the same as with 71_111 us at every distance 1..255
DEFAULT_LAG_BOUND_US = 1000.0


def lag_bound_us(mode: str, distance: int) -> float:
    if mode == "normal":
        return NORMAL_LAG_BOUND_US
    return round(0.1 * (SPARE_ONE_AHEAD_US + (max(distance, 1) - 1) * TICK_US), -2)


def lag_summary(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The bench's lag figures over the window between two `status` replies, from the difference of
    their histograms (bins: 1 us wide below 1 ms, 1 ms wide above): samples, p99.9, max (lower edge
    of the highest occupied bin, or the bench's max if that grew in the window) and the samples over the
    bound. Figures for a reader: validity is judged per event (mmsched.verdict.validity), not from these."""
    lb, la = before.get("lag", {}), after.get("lag", {})
    hb = {int(lo): n for lo, n in lb.get("histogram_us", [])}
    diff = sorted((int(lo), n - hb.get(int(lo), 0)) for lo, n in la.get("histogram_us", []))
    diff = [(lo, n) for lo, n in diff if n > 0]
    samples = sum(n for _, n in diff)
    exceeded = int(la.get("exceeded", 0)) - int(lb.get("exceeded", 0))
    p999 = None
    if samples:
        want, acc = 0.999 * samples, 0
        for lo, n in diff:
            acc += n
            if acc >= want:
                p999 = float(lo)
                break
    top = float(diff[-1][0]) if diff else 0.0
    max_us = float(la.get("max_us", 0.0)) if float(la.get("max_us", 0.0)) > float(lb.get("max_us", 0.0)) else top
    bound = float(la.get("bound_us", DEFAULT_LAG_BOUND_US))
    return {"lag_bound_us": bound, "lag_max_us": max_us, "lag_p999_us": p999, "lag_samples": samples,
            "lag_exceeded": exceeded, "paced": bool(after.get("paced", True)),
            "virtual_s": after.get("virtual_s"), "wall_s": after.get("wall_s"),
            "host": after.get("host"),   # what the bench was granted: scheduling policy, mlock, ...
            "hostin": after.get("hostin")}   # the input stamping thread: its priority, bytes moved and how far


def raise_priority(pid: int) -> str:
    """Puts process `pid` (all its threads) above the scheduler's load (nice -10); returns what was done.

    The bench stands for hardware, which a loaded PC cannot slow down, so its simulation must not be
    starved by the load (nor by anything else on the machine: every run raises it, loaded or not, so that
    loaded and idle runs compare like with like). SCHED_FIFO was tried first and dropped: on this 2-core
    machine a FIFO bench once stopped answering for over 5 s right after the switch (no HELLO), which an
    experiment cannot afford; nice -10 cannot starve anything and still wins the CPU from stress-ng's
    nice-0 workers. (A paced bench started with --realtime already runs SCHED_FIFO; this is the fallback.)"""
    changed, every = renice.renice(-10, pid)
    if not changed:
        return "none (not permitted)"
    return "nice -10" if every else f"nice -10 ({len(changed)} threads; some refused)"


STAMP_PRIORITY = 11        # the stamping thread's real-time priority, one above the simulation's (hostin.c)
SIMULATION_PRIORITY = 10   # the simulation's, as --realtime asks for it (pacing.c)
SIMULATION_NICE = -15      # RealtimeKit's floor (MinNiceLevel) on Debian: where it will not make the simulation real-time
# the bench's RLIMIT_RTTIME soft limit under RealtimeKit: its SIGXCPU makes the simulation leave real-time (pacing.c)
# well before rtkit's hard limit (200 ms) would kill it
RTTIME_SOFT_US = 100_000


def realtime_through_rtkit(bench: Bench) -> dict[str, Any] | None:
    """A paced bench whose threads the host kept off SCHED_FIFO (a user without RLIMIT_RTPRIO) asks RealtimeKit,
    as PipeWire does for its audio threads: the input stamping thread at real-time priority 11 and the simulation
    at 10 (rtkit's SCHED_RR). rtkit kills a real-time thread that runs 200 ms without a sleep: the stamping thread
    sleeps in poll between reads; the simulation sleeps whenever it is ahead, and catching up after a long host
    stall leaves real-time at the soft limit's warning (100 ms, pacing.c) rather than run on. Where rtkit will not
    make the simulation real-time, nice -15. None: nothing to ask (the bench runs SCHED_FIFO already); else what
    was asked and given, for the sidecar's target.rtkit."""
    try:
        st = bench.status()
    except (BenchError, OSError):
        return None
    host, hostin = st.get("host") or {}, st.get("hostin") or {}
    if str(host.get("sched", "")).startswith("fifo") or not hostin.get("running"):
        return None
    lim = rtkit.limits()
    if isinstance(lim, str):
        return {"asked": True, "why": lim}
    out: dict[str, Any] = {"asked": True, "limits": {"max_realtime_priority": lim.max_realtime_priority,
                                                     "min_nice_level": lim.min_nice_level,
                                                     "rttime_usec_max": lim.rttime_usec_max}}
    stamp = rtkit.realtime(int(hostin["tid"]), STAMP_PRIORITY, bench.pid, soft_usec=RTTIME_SOFT_US)
    sim_tid = int(host.get("tid") or bench.pid)
    sim = rtkit.realtime(sim_tid, SIMULATION_PRIORITY, bench.pid, soft_usec=RTTIME_SOFT_US)
    sim_why = sim.why
    if sim.priority is None:
        nice = max(SIMULATION_NICE, lim.min_nice_level)
        fallback = rtkit.make_high_priority(sim_tid, nice, bench.pid)
        sim_why = f"{sim.why}; nice {nice}" + (f" refused too: {fallback}" if fallback else " instead")
    try:                                # what each thread runs at now, read back by the bench
        now = bench.status()
    except (BenchError, OSError):
        now = {}
    out["stamping"] = {"sched": (now.get("hostin") or {}).get("sched"), "why": stamp.why}
    out["simulation"] = {"sched": (now.get("host") or {}).get("sched"), "why": sim_why}
    return out


@dataclass
class BenchEndpoint(Endpoint):
    """A bench started for one run: paced (virtual time on wall time: the PC is measured) or unpaced."""

    paced: bool = True
    keeps_byte_record = True               # its `timing` record, handed over at the run's end (_verdict)
    lag_bound_us: float | None = None      # None: lag_bound_us(mode, distance) of the run
    baud: int = 9600
    profiler_elf: Path | None = None       # None: the images of the checkout or of the installed package
    executor_elf: Path | None = None
    # The executor trace of the run (hil/bench/exectrace.h): on when the run's window starts (begin), off
    # when it ends (verdict), and the file moved here when the bench closes (its run directory goes with
    # it); then exec_trace_path is this path. None: no trace.
    exec_trace: Path | None = None
    exec_trace_path: Path | None = field(default=None, init=False)
    vcd: Path | None = None                # the wired ports' VCD of the whole bench (cycle timescale), or None
    ppm_profiler: int = 0                  # crystal offsets of the bench's nodes (Bench, docs/bench.md)
    ppm_executor: int = 0
    # both nodes as an Arduino Mega 2560 (Bench(arduino=True), docs/bench.md "Arduino mode"): the bootloader
    # after every reset, and each open of a node's port resets it, so the session's handshake must wait for
    # the node's boot HELLO rather than ask at once
    arduino: bool = False
    # "8051": the paper's 87C51 profiler image on the bench's 8051 core (Bench(profiler_kind=...), docs/bench.md
    # "The 8051 profiler"); None: as the image says. The run's identity (sidecar) says which profiler ran
    profiler_kind: str | None = None
    # the bench's host side the links open: "socket" (its line sockets) or "pty" (Bench.line, docs/bench.md)
    line: str = "socket"
    # the USB-serial adapter on both lines (mmhil.linemodel): ideal (none), ftdi[:latency=MS], cdc-16u2
    line_model: LineModel = IDEAL
    kind: str = field(default="bench", init=False)
    bench: Bench | None = field(default=None, init=False)
    priority: str | None = field(default=None, init=False)
    rtkit: dict[str, Any] | None = field(default=None, init=False)   # what RealtimeKit gave the bench's threads
    _before: dict[str, Any] | None = field(default=None, init=False)
    _trace_file: Path | None = field(default=None, init=False)    # in the bench's run directory
    _trace_on: bool = field(default=False, init=False)
    # whether `close` ends the bench: the one `open` started is this endpoint's; one it was given (`around`) stays
    # with whoever started it
    _owns_bench: bool = field(default=True, init=False)

    @classmethod
    def around(cls, bench: Bench) -> "BenchEndpoint":
        """The endpoint of a bench someone else started (a HIL script's, which `mmhil.Rig` talks to): as the bench
        is (its rate, crystals, Arduino mode, profiler, line), no `open` (its ports are there: `Bench.port`), and
        `close` leaves it running for its starter to close."""
        ep = cls(baud=bench.baud, lag_bound_us=bench.lag_bound_us, ppm_profiler=bench.ppm_profiler,
                 ppm_executor=bench.ppm_executor, arduino=bench.arduino, profiler_kind=bench.profiler_kind,
                 line=bench.line)
        ep.paced = bench.paced and not bench.lockstep
        ep.bench, ep._owns_bench = bench, False
        return ep

    def open(self, cfg: RunConfig) -> Ports:
        if self.lag_bound_us is None:
            self.lag_bound_us = lag_bound_us(cfg.mode, cfg.distance)
        self.trace_to(cfg)
        # Paced runs measure the PC against wall time, so the bench asks for real-time scheduling
        # (SCHED_FIFO 10, locked memory; it falls back to nice -10 and reports what it got).
        ports = self.start_bench(paced=self.paced, lag_bound_us=self.lag_bound_us, realtime=self.paced)
        self.priority = raise_priority(self.bench.pid)
        if self.paced:
            self.rtkit = realtime_through_rtkit(self.bench)
        return ports

    def start_bench(self, **mode: Any) -> Ports:
        """The run's bench, with this endpoint's images, baud, crystals and VCD, in `mode` (paced or lockstep)."""
        bench = Bench(baud=self.baud, profiler_elf=self.profiler_elf, executor_elf=self.executor_elf,
                      vcd_file=self.vcd, ppm_profiler=self.ppm_profiler, ppm_executor=self.ppm_executor,
                      arduino=self.arduino, profiler_kind=self.profiler_kind, line=self.line,
                      line_model=self.line_model.spec, **mode)
        try:
            self.bench = bench.start()
        except BenchError as exc:
            raise EndpointError("bench_failed", str(exc)) from exc
        # a bench in Arduino mode resets a node when its port is opened: the links listen for its boot HELLO first
        return Ports(self.bench.profiler_port, self.bench.executor_port, reset_on_open=self.bench.arduino)

    def trace_to(self, cfg: RunConfig) -> None:
        """A traced run (RunConfig.trace): the executor's trace and the wires' VCD go beside its CSV. The run's
        folder is made now: the bench writes the VCD from its start (with no folder it exits before it is
        ready), long before the run's own files make their folder."""
        if cfg.trace and cfg.out is not None:
            paths = traced_paths(cfg.out)
            try:
                paths["vcd"].parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise EndpointError("bench_failed", f"cannot create {paths['vcd'].parent} for the run's trace: "
                                                    f"{exc.strerror or exc}") from exc
            self.exec_trace = self.exec_trace or paths["exectrace"]
            self.vcd = self.vcd or paths["vcd"]

    def status(self) -> dict[str, Any] | None:
        if self.bench is None or not self.bench.alive():
            return None
        try:
            return self.bench.status()
        except (BenchError, OSError):  # a dead bench is reported by the links
            return None

    # ---- the executor trace of the run (exec_trace) ----------------------------------------------
    def _exec_trace_start(self) -> None:
        if self.exec_trace is None or self.bench is None:
            return
        try:
            self._trace_file = self.bench.exec_trace(True, "exectrace.txt")
        except (BenchError, OSError) as exc:
            raise EndpointError("bench_failed", f"exectrace on: {exc}") from exc
        self._trace_on = True

    def _exec_trace_stop(self) -> None:
        if not self._trace_on or self.bench is None:
            return
        self._trace_on = False
        try:
            self.bench.exec_trace(False)
        except (BenchError, OSError):   # a bench that died: no file (the bench writes one whole, or none)
            pass

    def _exec_trace_collect(self) -> None:
        """Before the bench closes: the trace out of its run directory, to `exec_trace`."""
        self._exec_trace_stop()
        if self._trace_file is None or self.exec_trace is None or not self._trace_file.exists():
            return
        # renamed over its place beside the run's CSV, across file systems copied through a new temporary file:
        # a link planted under that name is replaced, never written through (safefiles; shutil.move copied
        # through it, and moved into a directory a link pointed to)
        dest = move_into(self._trace_file, self.exec_trace)
        self._trace_file = None
        self.exec_trace_path = dest

    def reopen_refusal(self, node: str, wait_s: float = 0.0) -> str | None:
        """A bench's ports end with the bench. Once it has ended (killed, crashed) its NODE.tty links lead to
        /dev/pts numbers the kernel gives to the next ptys made, another bench's in a parallel run: reopening
        them wrote this run's handshake into that bench's nodes and took its HELLO for our node's return."""
        bench = self.bench
        if bench is None or bench.process is None:
            return None
        try:
            # (the kernel closes a dying process's ptys before it can be waited for: the port vanishes a moment
            # before the bench is seen to have ended; the session gives it `wait_s` the first time it asks)
            code = bench.process.wait(wait_s) if wait_s > 0 else bench.process.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return None                      # alive: a hang-up fault, a re-plug to come
        return f"the bench (pid {bench.pid}) ended with status {code}; its ports went with it"

    def begin(self) -> None:
        self._before = self.status()
        self._exec_trace_start()

    def verdict(self) -> Verdict:
        return replace(self._verdict(), held_by_fault=self._held_by_fault())

    def _held_by_fault(self) -> list[HeldByFault]:
        """The PC's bytes this bench's injected delays held back (mmsched.verdict.injected); none if it cannot say."""
        if self.bench is None or not self.bench.alive():
            return []
        try:
            return timing.held_by_fault(self.bench.injected())
        except (BenchError, OSError):
            return []

    def _verdict(self) -> Verdict:
        self._exec_trace_stop()
        after = self.status()
        if self._before is None or after is None:
            section = {"lag_bound_us": self.lag_bound_us, "lag_max_us": None, "lag_p999_us": None}
            return Verdict([Reason("bench_status", "bench status unavailable (lag unknown)")], section)
        section = lag_summary(self._before, after)
        try:
            # the whole record: an event's estimate can rest on frames from before the window (probes, the
            # minimum filter's older TIMECODEs); the window's bytes are a few hundred entries
            reply = self.bench.timing(since_s=0.0) if self.bench else None
        except (BenchError, OSError):
            reply = None
        if reply is None:
            return Verdict([Reason("bench_status", "the bench's record of the run's bytes is unavailable")], section)
        ws = float(reply["wall_start_s"])
        window = (ws + float(self._before["virtual_s"]), ws + float(after["virtual_s"]))
        every = timing.stalls(reply)
        stalls = [s for s in every if s.end >= window[0]]
        section["stalls"] = [[round(s.start - ws, 6), round(s.end - ws, 6), s.lag_us] for s in stalls]
        section["wall_start_s"] = ws
        # the bench keeps its last 4,096 stalls (pacing.h: MAX_STALLS): before the first it kept, none is known
        since = every[0].start if int(reply.get("stalls_dropped", 0)) and every else None
        return Verdict([], section, timing.byte_record(reply), self.lag_bound_us, stalls, stalls_since=since,
                       window=window, inputs=timing.bench_reads(reply),
                       inputs_dropped=int(reply.get("inputs_dropped", 0)),
                       commands=timing.bench_commands(reply), commands_dropped=int(reply.get("commands_dropped", 0)))

    def trace_path(self) -> str | None:
        return None                          # the bench sees every cycle of the executor

    def trace_files(self) -> dict[str, Path]:
        files = {"exectrace": self.exec_trace_path, "vcd": self.vcd}
        return {k: Path(v) for k, v in files.items() if v is not None and Path(v).is_file()}

    def injection_path(self) -> str | None:
        return None if self.bench is not None and self.bench.alive() else "the bench is not running"

    def inject_on_edge(self, frame: bytes) -> None:
        """The bench puts the frame into the profiler's receiver, its first start bit on the next edge of the
        profiler's timecode port (docs/bench.md, "Floor calibration")."""
        assert self.bench is not None
        try:
            self.bench.inject("profiler", frame, 0)
        except (BenchError, OSError) as exc:
            raise EndpointError("bench_failed", f"inject: {exc}") from exc

    def health(self) -> dict[str, Any] | None:
        st = self.status()
        if not st:
            return None
        lag = st.get("lag", {})
        return {"lag_max_us": lag.get("max_us"), "lag_p99_us": lag.get("p99_us"), "bound_us": lag.get("bound_us"),
                "exceeded": lag.get("exceeded"), "speed": st.get("speed"), "virtual_s": st.get("virtual_s")}

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "paced": self.paced,
                "profiler": self.bench.profiler_port if self.bench else None,
                "executor": self.bench.executor_port if self.bench else None,
                "bench_pid": self.bench.pid if self.bench is not None and self.bench.process else None,
                "priority": self.priority, "rtkit": self.rtkit,
                "ppm": {"profiler": self.ppm_profiler, "executor": self.ppm_executor},
                "arduino": self.arduino, "line_model": self.line_model.params(),
                "profiler_kind": self.bench.running_profiler_kind if self.bench is not None
                else profiler_kind_of(self.profiler_elf, self.profiler_kind)}

    def close(self) -> None:
        if self.bench is not None and self._owns_bench:
            self._exec_trace_collect()
            self.bench.close()


@dataclass
class LockstepEndpoint(BenchEndpoint):
    """A `--lockstep` bench: virtual time advances only as far as the run has handled everything before
    it (mmhil.lockstep), so the outcome never depends on how fast or busy the host is and the same seed
    gives the same CSV. The run's clock is virtual time; every frame is stamped with the virtual time at
    which its last byte was complete.

    Normal mode is refused: in lockstep the PC fires at exactly the moment it computes, so there is no
    PC lateness to measure, which is the whole point of normal mode (use a paced run). So is a run in phases of
    PC load (RunConfig.phases): a load acts on the host's time, and nothing a lockstep run measures depends on it."""

    paced: bool = field(default=False, init=False)
    wall_clock = False       # the run's clock is virtual: the process's own stalls move nothing (ownstall.py)
    keeps_byte_record = False   # nothing to judge by: no byte of a virtual clock is displaced (_verdict)
    stepper: Stepper | None = field(default=None, init=False)
    _pending: deque = field(default_factory=deque, init=False)
    _inbox: "queue.Queue[Item] | None" = field(default=None, init=False)

    def open(self, cfg: RunConfig) -> Ports:
        if cfg.mode == "normal":
            raise EndpointError("lockstep_normal", "normal mode measures the PC's own timing against wall time; "
                                "in lockstep the PC is never late by construction: run it paced (without --unpaced)")
        if cfg.phases is not None:
            # (a 3 s idle, 3 s cpu, 2 s idle run here: the bench went 20x the wall's pace, the cpu phase's stress-ng
            # ran 0.15 wall seconds and stopping it took 0.5 virtual seconds of the next phase)
            raise EndpointError("lockstep_phases", "--phases needs a wall clock: each phase is a PC load on the host's "
                                "time, while a lockstep run's clock is virtual (at the bench's pace, many times the "
                                "wall's) and its outcome never depends on the PC's load: run it paced (without --unpaced)")
        self.trace_to(cfg)
        ports = self.start_bench(lockstep=True)
        self.stepper = Stepper(self.bench)
        return ports

    @classmethod
    def around(cls, bench: Bench) -> "LockstepEndpoint":
        """A started `--lockstep` bench's endpoint (BenchEndpoint.around), which grants its time from here on (a
        bench no one has granted time yet: its Stepper counts from cycle 0)."""
        ep = super().around(bench)
        assert isinstance(ep, LockstepEndpoint)
        ep.stepper = Stepper(bench)
        return ep

    def attach(self, links: dict[str, Link], inbox: "queue.Queue[Item]") -> None:
        assert self.stepper is not None
        self.stepper.links = links
        self._inbox = inbox
        self.stepper.on_step = lambda _virtual_s: self._take()   # after every grant: what it brought

    def clock(self) -> float:
        return self.stepper.virtual_s if self.stepper is not None else 0.0

    def _take(self) -> None:
        """What the links put in the inbox moves to `_pending`, stamped with the virtual time of the last
        grant's stop (every frame in it was complete exactly then: mmhil.lockstep)."""
        assert self._inbox is not None
        self._pending.extend(stamped(self._inbox, self.clock()))

    def wait_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Steps virtual time until `done()` (False after `timeout_s` of it); what arrives meanwhile is kept
        for the run."""
        assert self.stepper is not None
        try:
            return self.stepper.wait_until(done, timeout_s)
        except BenchError as exc:
            raise EndpointError("bench_failed", str(exc)) from exc

    def next_item(self, inbox: "queue.Queue[Item]", timeout_s: float) -> Item | None:
        # (_take also between grants: a LinkDown the reader put there meanwhile)
        self.wait_until(lambda: self._take() or bool(self._pending), max(0.0, timeout_s))
        return self._pending.popleft() if self._pending else None

    def has_pending(self, inbox: "queue.Queue[Item]") -> bool:
        return bool(self._pending) or not inbox.empty()

    def backlog(self, inbox: "queue.Queue[Item]") -> int:
        return len(self._pending) + inbox.qsize()

    def begin(self) -> None:
        self._exec_trace_start()

    def _verdict(self) -> Verdict:
        self._exec_trace_stop()
        st = self.status()
        section = {"lockstep": True, "paced": False, "virtual_s": self.clock(),
                   "grants": self.stepper.grants if self.stepper else 0,
                   "wall_s": st.get("wall_s") if st else None, "speed": st.get("speed") if st else None}
        return Verdict([], section)

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "lockstep": True}

    def close(self) -> None:
        super().close()
        if self.stepper is not None:
            # what `attach` handed the stepper goes: the links' clock is this endpoint's, so links kept here make a
            # reference cycle (the endpoint, its bench handle, the links and their buffers) that only a full
            # collection frees, which a run does not make while its events go on (mmsched.host.quiet)
            self.stepper.links = {}
            self.stepper.on_step = None
