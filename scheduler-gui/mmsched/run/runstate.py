"""What a run knows once both nodes have said HELLO: built there, it lives until the run ends.

Before the handshake a run has only its configuration, its endpoint and its links; everything that needs
the profiler's clock (the time base, the timecode tracker) or belongs to the schedule (generator, result
matcher, the executor's timecode offset, what was lost) is created here, in one place, so no part of the
runner has to ask whether it exists yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mmproto import Hello, Mode, TimeBase

from ..model.config import RunConfig
from ..model.generator import Generator
from ..model.grid import Grid, holds_one_fire, interval_counts, wants_grid
from ..verdict.profhist import ProfilerHistogram
from ..verdict.profslices import HistogramSlices
from ..model.series import SeriesPlan
from ..verdict.losses import LossReports
from ..verdict.budget import Floor
from ..verdict.matching import Matcher
from ..model.servo import ClockServo
from ..model.tcarrivals import TimecodeArrivals
from ..model.timecode import TimecodeTracker


class BadHello(RuntimeError):
    """The profiler's HELLO describes a clock no run can be built on (a zero or absurd rate, tick or baud)."""

    code = "bad_hello"


# What a profiler may sensibly report (SPEC.md section 5, HELLO): field -> (least, most)
HELLO_SENSE = {"cpu_hz": (1_000, 1_000_000_000), "timer_hz": (1_000, 1_000_000_000), "baud": (300, 4_000_000)}
TICK_SENSE_S = (100e-6, 10.0)


def check_hello(hello: Hello) -> None:
    """Raises BadHello naming the first field that makes no sense (a timer_hz of 0 divided by zero before)."""
    for name, (lo, hi) in HELLO_SENSE.items():
        v = getattr(hello, name)
        if not lo <= v <= hi:
            raise BadHello(f"profiler HELLO: {name} = {v} is not in {lo}..{hi}")
    tick_s = hello.tick_counts / hello.timer_hz
    if not TICK_SENSE_S[0] <= tick_s <= TICK_SENSE_S[1]:
        raise BadHello(f"profiler HELLO: tick_counts = {hello.tick_counts} at {hello.timer_hz} Hz is a tick of "
                       f"{tick_s:.3g} s, not in {TICK_SENSE_S[0]:g}..{TICK_SENSE_S[1]:g} s")


def interval_s(cfg: RunConfig, tick_s: float) -> float:
    """Time between events: the configured rate, or one tick."""
    return cfg.rate_ms / 1000.0 if cfg.rate_ms is not None else tick_s


def expected_duration_s(cfg: RunConfig, tick_s: float) -> float:
    """How long a run's events take to make and end: its duration, else its count at its rate, the last one's
    distance and 5 s."""
    if cfg.duration_s is not None:
        return cfg.duration_s
    return (cfg.count or 0) * interval_s(cfg, tick_s) + cfg.distance * tick_s + 5


@dataclass(frozen=True)
class TickSuspect:
    """An executor frame stamped in a tick the PC could not explain when it read it (recovery.check_executor_tick)."""
    tc: int           # the executor's tick (mapped by the offset)
    what: str         # the frame, in words ("ACK of tag 4")
    at: float         # when the PC read it
    cur: int          # the profiler's last TIMECODE read then
    clock: int        # the tick in force by the PC's clock then
    in_flight: tuple = ()   # the events in flight then: the ones a fault confirmed later touches


@dataclass
class RunState:
    timebase: TimeBase
    baud: int
    tracker: TimecodeTracker
    generator: Generator
    matcher: Matcher
    servo: ClockServo                  # normal mode: tick starts from the profiler's FIRE stamps
    t0: float                          # run clock when generation started (sent_s counts from it)
    # how long its events take (expected_duration_s): its PC load lasts this much and more, its loop gives up at twice
    expected_s: float
    tc_offset: int = 0                 # profiler timecode - executor timecode (nodesetup.py)
    mode_frame: Mode | None = None     # the executor's MODE of this run (nodesetup.setup_modes; sent again after a reset)
    offset_learned: bool = False
    lost_frames: int = 0               # sequence gaps on either link
    losses: LossReports = field(default_factory=LossReports)   # the profiler's reports of lost results
    generating: bool = False
    last_gen_tc: int | None = None     # tick-aligned generation: the tick of the last event created
    creation_due: bool = False         # tick-aligned: that tick's event waits for the inbox to be empty
    next_free_at: float = 0.0          # free-running generation: run clock of the next event
    on_grid: bool = False              # normal mode faster than a tick: events due inside ticks (grid.py)
    one_fire: bool = False             # the profiler takes one FIRE at a time (the 8051: grid.holds_one_fire)
    grid: Grid | None = None           # that grid: laid from the first tick generation sees
    series: SeriesPlan | None = None   # mixed mode on a grid: the PERIODIC frames that carry it (series.py)
    profiler_hist: ProfilerHistogram | None = None   # ... and the profiler's own histogram of it (profhist.py)
    histogram_only: bool = False       # ... which alone measures it: no RESULT per event, no event rows (profhist.py)
    hist_slices: HistogramSlices | None = None   # ... its reports kept at the edges of phases and maxima
    # every TIMECODE's (timecode, arrival): the run's tick fit over its whole length places the PC's writes on the
    # profiler's time base for a board run's record of its inputs (inputlog.py); 14 a second, 16 bytes each
    tc_arrivals: TimecodeArrivals = field(default_factory=TimecodeArrivals)
    next_nop_at: float = 0.0           # --executor-load rx=N: run clock of the next NOP to the executor
    local_ignored: set[int] = field(default_factory=set)   # tags of executor events outside the run
    last_profiler_frame: float = 0.0
    # the timecode and the run clock of the deadlines' last look at the events in flight (deadlines.py)
    deadlines_scanned: tuple[int | None, float] = (None, float("-inf"))
    link_failed: bool = False
    floor: Floor = field(default_factory=Floor)            # normal mode: the floor calibration's outcome
    probe_tags: set[int] = field(default_factory=set)      # tags of the rig's own calibration FIREs
    # the way back from a fault of the rig (Recovery.recover): the step under way, when its request went out,
    # how often, and the TIMECODE frames seen since a profiler's restart
    recovering: str | None = None
    # an executor frame whose tick disagreed with the PC's, not yet judged (recovery.check_executor_tick): a fault
    # of the nodes only if a frame read a tick or more later disagrees too, with none agreeing in between
    tick_suspect: "TickSuspect | None" = None
    recovery_sent: float = 0.0
    recovery_tries: int = 0
    recovery_tcs: int = 0

    @classmethod
    def after_handshake(cls, cfg: RunConfig, profiler_hello: Hello, now: float) -> "RunState":
        check_hello(profiler_hello)
        timebase = TimeBase.from_hello(profiler_hello)
        expected_s = expected_duration_s(cfg, timebase.tick_s)
        grid = wants_grid(cfg.mode, None if cfg.rate_ms is None else cfg.rate_ms / 1000.0, timebase.tick_s,
                          cfg.generation)
        generator = Generator(cfg.random_ids, None if grid else cfg.max_in_flight, cfg.seed, unique_ids=not grid)
        return cls(timebase=timebase, baud=profiler_hello.baud, on_grid=grid, one_fire=holds_one_fire(profiler_hello),
                   tracker=TimecodeTracker.for_profiler(profiler_hello),
                   generator=generator, matcher=Matcher(),
                   servo=ClockServo(timebase.tick_s), expected_s=expected_s,
                   t0=now, next_free_at=now, last_profiler_frame=now)

    def rel(self, t: float) -> float:
        """Run clock `t` as seconds since generation started (the faults' and the CSV's time)."""
        return round(t - self.t0, 6)

    def start_generating(self, now: float) -> None:
        self.t0 = self.next_free_at = self.next_nop_at = now
        self.generating = True

    @property
    def profiler_clock(self) -> float:
        """Host seconds a second of the profiler's timer: the tick length fitted from the TIMECODE arrivals over
        HELLO's (1 before the fit). Normal mode's servo and budget take the profiler's stamps at this rate."""
        return self.tracker.tick_len_s / self.timebase.tick_s

    def rate_s(self, cfg: RunConfig) -> float:
        """Time between events: the configured rate, or one tick."""
        return interval_s(cfg, self.timebase.tick_s)

    def lay_grid(self, cfg: RunConfig, current_tc: int) -> Grid:
        """The grid, from the start of the tick `distance` ticks after the current one (at least the next one:
        the current tick's start has passed)."""
        self.grid = Grid(current_tc + max(1, cfg.distance), interval_counts(self.rate_s(cfg), self.timebase.timer_hz),
                         self.timebase.tick_counts, self.timebase.timer_hz)
        return self.grid

    def every_ticks(self, cfg: RunConfig) -> int:
        """Tick-aligned generation: one event every this many ticks."""
        return max(1, round(self.rate_s(cfg) / self.timebase.tick_s))
