"""A run's configuration: the cyclictest-like options of `mmrig run`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

MODES = ("mixed", "normal", "verification")


@dataclass
class RunConfig:
    mode: str = "mixed"
    distance: int = 2
    rate_ms: float | None = None      # None: one event per tick ('tick')
    count: int | None = 200
    duration_s: float | None = None
    random_ids: bool = False
    generation: str = "aligned"       # aligned (right after a new TIMECODE) or free (a timer at the rate)
    accuracy: int = 0                 # normal mode: 0 plain sleep .. 100 busy-wait the last 20 ms
    discipline: bool = False          # normal mode: fire by tick starts the profiler's own stamps place (servo.py)
    # normal mode: where the firing thread runs. "own": a process with no GUI in it (the command line, or
    # the GUI's run process); "gui": inside the GUI's process, sharing its interpreter lock on purpose
    firing_process: str = "own"
    dispatch: str = "isr"             # executor dispatch: isr or task
    load: bool = False
    late_bound_us: float = 1000.0
    max_in_flight: int = 8
    timeout_ticks: int = 6            # an event with no RESULT this many ticks after its tick is missed
    seed: int = 1
    name: str = "run"
    out: Path | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if self.generation not in ("aligned", "free"):
            raise ValueError("generation must be aligned or free")
        if self.dispatch not in ("isr", "task"):
            raise ValueError("dispatch must be isr or task")
        if self.firing_process not in ("own", "gui"):
            raise ValueError("firing_process must be own or gui")
        if not 0 <= self.accuracy <= 100:
            raise ValueError("accuracy must be 0..100")
        if self.count is None and self.duration_s is None:
            raise ValueError("give a count or a duration")
        if self.distance < (1 if self.mode != "normal" else 0) or self.distance > 255:
            raise ValueError("distance out of range (mixed/verification: 1..255 ticks)")

    def sidecar(self, baud: int, tick_s: float) -> dict[str, object]:
        d = asdict(self)
        d["rate_ms"] = self.rate_ms if self.rate_ms is not None else round(tick_s * 1000, 3)
        d["rate"] = "tick" if self.rate_ms is None else "ms"
        d["baud"] = baud
        d["out"] = str(self.out) if self.out else None
        return d
