"""A run's configuration: the cyclictest-like options of `mmrig run`."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from mmanalysis.schema import NOMINAL_TICK_S

from .exload import ExecutorLoad
from .grid import line_problem, wants_grid
from .load import condition as load_condition
from .phaseplan import PhasePlan

FIRINGS = ("native", "python")   # normal mode: what writes each FIRE at its moment
MODES = ("mixed", "normal", "verification")
DEFAULT_TIMEOUT_TICKS = 6     # an event with no RESULT this many ticks after its tick is missed

# A run's name becomes file names (NAME.csv, NAME.json) and a CSV/JSON field: letters, digits and ._- only, at
# most 64, and never starting with = + - @ (a spreadsheet would read it as a formula: CSV injection).
NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")


def name_problem(name: str) -> str | None:
    """Why `name` is not a safe run name (the name quoted, then why), or None."""
    if not isinstance(name, str):
        return f"{name!r} is not a string"
    if name[:1] in ("=", "+", "-", "@"):
        return f"{name!r} must not start with = + - or @ (a spreadsheet reads it as a formula)"
    if not NAME_RE.fullmatch(name):
        return f"{name!r}: use 1..64 letters, digits and ._- only"
    if set(name) == {"."}:
        return f"{name!r} is not a file name"
    return None


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite_positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def baud_problem(baud: object) -> str | None:
    """What is wrong with a link rate asked for (BAUD carries hundreds of baud, SPEC.md 0x06), or None."""
    if not _whole(baud) or baud % 100 or not 300 <= baud <= 6_553_500:  # type: ignore[operator]
        return f"must be a rate in hundreds of baud, 300..6553500 (e.g. 9600, 115200), not {baud}"
    return None


ALIGNED_TOLERANCE = 0.01      # a whole number of ticks within 1 %: a Mega's resonator alone is off by up to 0.5 %


def aligned_rate_problem(mode: str, generation: str, rate_ms: float | None,
                         tick_s: float = NOMINAL_TICK_S) -> str | None:
    """Why an interval cannot be honoured where events are made on tick starts (one sentence naming --rate, the
    value, what the generation does and what to use instead), or None.

    Aligned generation (mixed mode; normal mode at a tick or slower) makes an event right after a TIMECODE, one every
    `round(rate / tick)` ticks, at least one (RunState.every_ticks); verification mode's executor schedules its own
    events every whole number of ticks whatever the generation. Anything else ran quietly at the nearest whole number
    of ticks: `--rate 0.5` or `--rate 90` as one a tick. Normal mode faster than a tick is a schedule grid (events due
    inside ticks: grid.py), free and periodic generation keep any interval: not judged here."""
    if rate_ms is None or not _finite_positive(rate_ms):
        return None
    if mode == "verification":
        pass
    elif generation != "aligned" or (mode == "normal" and rate_ms / 1000.0 < tick_s):
        return None
    tick_ms = tick_s * 1000.0
    k = max(1, round(rate_ms / tick_ms))
    if abs(k * tick_ms - rate_ms) <= ALIGNED_TOLERANCE * rate_ms:
        return None
    asked = f"--rate {rate_ms:g} ms"
    below = max(1, math.floor(rate_ms / tick_ms))
    nearest = " or ".join(f"{n * tick_ms:.3f}ms ({n}tick{'s' if n > 1 else ''})"
                          for n in ((below,) if rate_ms < tick_ms else (below, below + 1)))
    whole = f"--rate tick or a whole number of ticks, the nearest {nearest}"
    if mode == "verification":
        does = (f"at most one event a tick ({tick_ms:.3f} ms)" if rate_ms < tick_ms else
                f"one every whole number of ticks: {rate_ms:g} ms would run as {k * tick_ms:.3f} ms")
        return f"{asked}: verification mode's executor schedules its own events on tick starts, {does}; use {whole}"
    if rate_ms < tick_ms:
        instead = ("--generation periodic (the executor fires a series inside ticks, up to a kilohertz: "
                   "docs/kilohertz.md) or --generation free (a SCHEDULE at each interval)" if mode == "mixed" else
                   "--generation free")
        return (f"{asked}: aligned generation makes at most one event a tick ({tick_ms:.3f} ms), right after its "
                f"TIMECODE; for {rate_ms:g} ms use {instead}; or the nearest it honours, {nearest}")
    return (f"{asked}: aligned generation makes an event right after a TIMECODE, one every whole number of ticks: "
            f"{rate_ms:g} ms would run as {k * tick_ms:.3f} ms; use --generation free (the paper's scheduling timer, "
            f"any interval) or {whole}")


@dataclass
class RunConfig:
    mode: str = "mixed"
    distance: int = 2
    rate_ms: float | None = None      # None: one event per tick ('tick')
    count: int | None = 200
    duration_s: float | None = None
    random_ids: bool = False
    # aligned (right after a new TIMECODE), free (a timer at the rate), or periodic (mixed mode: the executor is
    # sent the schedule grid itself, PERIODIC frames, and fires its moments inside ticks: series.py)
    generation: str = "aligned"
    # a periodic series: a RESULT per event (True), the AVR profiler's histogram alone (False: no per-event rows,
    # the line is not the limit: profhist.py), or None: RESULTs where the profiler's line carries them, else the
    # histogram alone
    raw: bool | None = None
    accuracy: int = 0                 # normal mode: 0 plain sleep .. 100 busy-wait the last 20 ms
    discipline: bool = False          # normal mode: fire by tick starts the profiler's own stamps place (servo.py)
    # normal mode: where the firing thread runs. "own": a process with no GUI in it (the command line, or
    # the GUI's run process); "gui": inside the GUI's process, sharing its interpreter lock on purpose
    firing_process: str = "own"
    # normal mode: what writes each FIRE at its moment. "native": a C thread (nativefirer.py: clock_nanosleep, no
    # interpreter lock on its path, as cyclictest's thread); "python": a Python thread (firing.py), what a Python
    # application of the user's own would get. The sidecar's `cpu.firing` says which ran (and why, if not this)
    firing: str = "native"
    # normal mode, as cyclictest's -p and -m: the firing thread at SCHED_FIFO `priority` (1..99; None: as the process
    # is, SCHED_OTHER), the process's memory locked (mlockall). The sidecar's `cpu` says what was in effect
    priority: int | None = None
    mlockall: bool = False
    dispatch: str = "isr"             # executor dispatch: isr or task
    load: str = "idle"              # PC load condition (load.CONDITIONS); True/False read as all/idle
    # the PC's load in phases, one condition after the other (phaseplan.py; or its --phases text): the run lasts
    # their sum (duration_s is set to it; count must be None), and `load` stays idle
    phases: PhasePlan | None = None
    executor_load: ExecutorLoad = ExecutorLoad()   # what the executor does besides firing (exload.py; or its text)
    trace: bool = False               # the bench's trace of the executor: NAME.exectrace, .perfetto-trace, .vcd
    baud: int | None = None           # the links' rate for the run (BAUD after the handshake); None: the nodes' own
    late_bound_us: float = 1000.0
    # the sidecar's worst case over time (`maxima`, mmanalysis.maxima): count, max and p99 per interval of this many
    # seconds of the run, as OSADL plots the maxima of consecutive 5-minute intervals (mmrig run --maxima-every)
    maxima_every_s: float = 300.0
    # stop at the first event whose latency exceeds this (or that ends late or missed), as latmus -A does: the
    # run is written up to it and its sidecar's `break` names it (mmrig run --break-us); None: no break
    break_us: float | None = None
    max_in_flight: int = 8
    timeout_ticks: int = DEFAULT_TIMEOUT_TICKS
    seed: int = 1
    name: str = "run"
    out: Path | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if self.generation not in ("aligned", "free", "periodic"):
            raise ValueError("--generation must be aligned, free or periodic")
        if self.generation == "periodic" and self.mode != "mixed":
            raise ValueError(f"--generation periodic is mixed mode's (the executor fires the series), not {self.mode}'s")
        if self.generation == "periodic" and self.random_ids:
            raise ValueError("--random-ids: a periodic series' ids go round 0..7 (the executor numbers its moments)")
        if self.raw is not None and self.generation != "periodic":
            raise ValueError("--raw / --no-raw: a periodic series' choice (--mode mixed --generation periodic)")
        if self.dispatch not in ("isr", "task"):
            raise ValueError("dispatch must be isr or task")
        if self.firing_process not in ("own", "gui"):
            raise ValueError("firing_process must be own or gui")
        if self.firing not in FIRINGS:
            raise ValueError(f"--firing must be one of {', '.join(FIRINGS)}, not {self.firing}")
        # Each message names the command line's option (the GUI's field of the same name).
        if not _whole(self.accuracy) or not 0 <= self.accuracy <= 100:
            raise ValueError(f"--accuracy must be 0..100, not {self.accuracy}")
        if self.priority is not None and (not _whole(self.priority) or not 1 <= self.priority <= 99):
            raise ValueError(f"--priority must be 1..99 (SCHED_FIFO, as cyclictest's -p), not {self.priority}")
        for asked, option in ((self.priority is not None, "--priority"), (self.mlockall, "--mlockall")):
            if asked and self.mode != "normal":
                raise ValueError(f"{option} is for normal mode's firing thread (cyclictest's {option[1:3]}); in "
                                 f"{self.mode} mode the executor fires and the PC's timing is not in the latency")
        self.check_phases()
        if self.count is None and self.duration_s is None:
            raise ValueError("give a count or a duration (--count or --duration)")
        if self.count is not None and (not _whole(self.count) or self.count < 1):
            raise ValueError(f"--count must be at least 1, not {self.count}")
        if self.duration_s is not None and not _finite_positive(self.duration_s):
            raise ValueError(f"--duration must be > 0 seconds, not {self.duration_s}")
        if self.rate_ms is not None and not _finite_positive(self.rate_ms):
            raise ValueError(f"--rate must be > 0 ms or 'tick', not {self.rate_ms}")
        low = 1 if self.mode != "normal" else 0
        if not _whole(self.distance) or not low <= self.distance <= 255:
            raise ValueError(f"--distance must be {low}..255 ticks in {self.mode} mode, not {self.distance}")
        if self.break_us is not None and not _finite_positive(self.break_us):
            raise ValueError(f"--break-us must be > 0, not {self.break_us}")
        if not _finite_positive(self.maxima_every_s):
            raise ValueError(f"--maxima-every must be > 0 seconds, not {self.maxima_every_s}")
        if not _finite_positive(self.late_bound_us):
            raise ValueError(f"--late-bound-us must be > 0, not {self.late_bound_us}")
        if not _whole(self.max_in_flight) or self.max_in_flight < 1:
            raise ValueError(f"--max-in-flight must be at least 1, not {self.max_in_flight}")
        if not _whole(self.timeout_ticks) or self.timeout_ticks < 1:
            raise ValueError(f"timeout_ticks must be at least 1, not {self.timeout_ticks}")
        self.load = load_condition(self.load)          # ValueError naming --load and the conditions
        if isinstance(self.executor_load, str):        # the option's text, as scripts and run_experiment give it
            self.executor_load = ExecutorLoad.parse(self.executor_load)
        if not isinstance(self.executor_load, ExecutorLoad):
            raise ValueError("executor_load must be an ExecutorLoad or its text (e.g. 'cpu,periodic=10ms/2ms')")
        if self.mode == "normal" and not self.executor_load.none:
            raise ValueError("--executor-load: normal mode does not use the executor (the PC fires the events)")
        if self.baud is not None and baud_problem(self.baud):
            raise ValueError(f"--baud {baud_problem(self.baud)}")
        if wants_grid(self.mode, None if self.rate_ms is None else self.rate_ms / 1000.0, NOMINAL_TICK_S,
                      self.generation) and (self.generation != "periodic" or self.raw):
            # (a periodic series with raw unset may run on the profiler's histogram alone: judged after the
            # handshake, when the profiler has said whether it keeps one: runstate.py)
            problem = line_problem((self.rate_ms or 1000.0 * NOMINAL_TICK_S) / 1000.0, self.baud or 9600,
                                   as_built=self.baud is None, fires=self.mode == "normal")
            if problem:
                raise ValueError(problem)
        problem = name_problem(self.name)
        if problem:
            raise ValueError(f"--name {problem}")

    def check_phases(self) -> None:
        """A run in phases lasts their sum: a count, another duration or a --load for the whole run contradict it
        (ValueError, one line naming both options); the --phases text is read into its plan."""
        if isinstance(self.phases, str):
            self.phases = PhasePlan.parse(self.phases)       # PhaseError (a ValueError) naming the part and field
        if self.phases is None:
            return
        if not isinstance(self.phases, PhasePlan):
            raise ValueError("phases must be a PhasePlan or its --phases text (e.g. 'idle:2h,load=cpu:1h')")
        total = self.phases.total_s
        if self.count is not None:
            raise ValueError(f"--count {self.count} contradicts --phases: a run in phases lasts their sum ({total:g} s), "
                             "not a number of events; leave --count out")
        if self.duration_s is not None and not math.isclose(self.duration_s, total, rel_tol=0, abs_tol=1e-3):
            raise ValueError(f"--duration {self.duration_s:g} s contradicts --phases, whose phases add up to {total:g} s; "
                             "leave --duration out")
        if load_condition(self.load) != "idle":
            raise ValueError(f"--load {load_condition(self.load)} runs one condition for the whole run, --phases one "
                             "per phase; give one of them")
        self.duration_s = total

    def sidecar(self, baud: int, tick_s: float) -> dict[str, object]:
        d = asdict(self)
        # a run in phases has no one load condition: `phases` (a reader's load column then, never pooled with idle)
        d["load"] = "phases" if self.phases is not None else self.load
        d["phases"] = self.phases.sidecar() if self.phases is not None else None
        d["phases_text"] = self.phases.text if self.phases is not None else None
        d["rate_ms"] = self.rate_ms if self.rate_ms is not None else round(tick_s * 1000, 3)
        d["rate"] = "tick" if self.rate_ms is None else "ms"
        d["baud"] = baud
        d["executor_load_text"] = str(self.executor_load)
        d["out"] = str(self.out) if self.out else None
        return d
