"""The schedule grid: events due at moments inside ticks, a fixed interval apart on the profiler's time base.

The paper's events are due at the start of a tick (71.1 ms apart at most one a tick: 14 events a second).
Latency tools sample at a kilohertz (cyclictest `-i 1000`, latmus' 1000 us period). A grid keeps the paper's
meaning, an event is due at a moment the profiler defines and its latency runs from that moment to the
profiler's stamp, with moments inside a tick: moment k is `k * interval_counts` profiler counts after the
start of tick `first_tc`, i.e. tick `first_tc + m // tick_counts`, `m % tick_counts` counts into it (the
run CSV's `scheduled_tc` and `due_counts`). The interval is a whole number of the profiler's counts, so
every moment is exact on its clock: 16000 counts for 1 ms on the ATmega2560 (16 MHz); on the 8051 (921.6 kHz)
1 ms is 922 counts, 1.000434 ms, and the sidecar gives the interval as run (`grid.interval_us`).

Used where the firing side can aim inside a tick: normal mode (the PC fires the FIRE at the moment), and mixed
mode with `--generation periodic` (the executor fires the grid it is sent in PERIODIC frames: series.py).
Mixed runs generated otherwise make tick-start events, SCHEDULE by SCHEDULE (docs/kilohertz.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mmanalysis.schema import NOMINAL_TICK_S
from mmproto import Result, Timecode
from mmproto.wiretime import wire_time_s

# The profiler's line carries a RESULT (18 bytes) per event and a TIMECODE (10 bytes) per tick; a grid whose
# events come faster than that line can carry them would fill the profiler's result ring (32) and lose results.
# A margin of a tenth keeps the line from running flat out.
LINE_MARGIN = 0.9


def wants_grid(mode: str, rate_s: float | None, tick_s: float, generation: str = "aligned") -> bool:
    """Events due at moments inside ticks: normal mode faster than one event a tick (the PC fires them), and
    mixed mode with periodic generation at any rate (the executor fires a PERIODIC series: series.py). Other
    mixed and verification events are due at tick starts (the executor's list fires there)."""
    if mode == "mixed":
        return generation == "periodic"
    return mode == "normal" and rate_s is not None and rate_s < tick_s


def line_gap_s(baud: int) -> float:
    """The least time between two events the profiler's line carries at `baud`: a RESULT's line time, with
    LINE_MARGIN (also the firing thread's least gap between two FIREs, firing.py)."""
    return wire_time_s(Result, baud) / LINE_MARGIN


def line_limit_per_s(baud: int, tick_s: float = NOMINAL_TICK_S) -> float:
    """Events a second the profiler's line carries at `baud` with a RESULT each (and the ticks' TIMECODEs),
    with LINE_MARGIN: 41 at 9600, 569 at 115200, 1,243 at 250000, 2,493 at 500000, 4,993 at 1000000."""
    free = 1.0 - wire_time_s(Timecode, baud) / tick_s
    return free / line_gap_s(baud)


def line_problem(rate_s: float, baud: int, as_built: bool = False) -> str | None:
    """Why a grid at `rate_s` cannot be carried at `baud` (a sentence naming --rate and --baud), or None.
    `as_built`: `baud` is the nodes' rate after a reset, not one asked for."""
    limit = line_limit_per_s(baud)
    if 1.0 / rate_s <= limit:
        return None
    fits = next((b for b in (115200, 250000, 500000, 1000000) if 1.0 / rate_s <= line_limit_per_s(b)), None)
    built = " (the nodes' rate as built)" if as_built else ""
    return (f"--rate {rate_s * 1000:g} ms is {1.0 / rate_s:,.0f} events a second, but at {baud} baud{built} the "
            f"profiler's line carries {limit:,.0f} (a RESULT per event, {wire_time_s(Result, baud) * 1e6:,.0f} us each): "
            + (f"run the links faster (--baud {fits})" if fits else "no rate of the links carries that"))


def interval_counts(rate_s: float, timer_hz: int) -> int:
    """The grid's interval in the profiler's counts: `rate_s` rounded to the nearest count, at least one."""
    return max(1, round(rate_s * timer_hz))


@dataclass
class Grid:
    first_tc: int            # moment 0 is the start of this tick
    interval_counts: int     # profiler counts between two moments
    tick_counts: int         # profiler counts per tick (HELLO.tick_counts)
    timer_hz: int            # profiler counts per second (HELLO.timer_hz)
    next_k: int = 0          # the next moment to make an event for
    skipped: int = 0         # moments that got no event (the generator's in-flight bound was reached)
    first_counts: int = 0    # moment 0 this many counts into first_tc (a HIL script's series: rig.series)

    def moment(self, k: int) -> tuple[int, int]:
        """Moment k as (tick, counts into that tick)."""
        m = self.first_counts + k * self.interval_counts
        return self.first_tc + m // self.tick_counts, m % self.tick_counts

    def take(self) -> tuple[int, int]:
        """The next moment, and move past it."""
        at = self.moment(self.next_k)
        self.next_k += 1
        return at

    @property
    def interval_us(self) -> float:
        return self.interval_counts * 1e6 / self.timer_hz

    def sidecar(self) -> dict[str, Any]:
        return {"first_tc": self.first_tc, "interval_counts": self.interval_counts,
                "interval_us": round(self.interval_us, 6), "per_s": round(1e6 / self.interval_us, 3),
                "moments": self.next_k, "skipped": self.skipped}


def format_grid(grid: dict[str, Any]) -> str:
    """One line for a terminal: the grid's pace and its moments (the sidecar's `grid`)."""
    skipped = f", {grid['skipped']} without an event" if grid["skipped"] else ""
    return (f"grid: an event every {grid['interval_us']:.3f} us ({grid['per_s']:,.1f} a second), due inside ticks from "
            f"tick {grid['first_tc']}: {grid['moments']} moments{skipped}")
