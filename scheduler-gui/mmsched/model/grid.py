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

import math
from dataclasses import dataclass
from typing import Any

from mmanalysis.schema import NOMINAL_TICK_S
from mmproto import HELLO_FLAG_8051, Hello, Result, Timecode
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


def holds_one_fire(hello: Hello) -> bool:
    """Whether the profiler takes one FIRE at a time: the 8051 (HELLO flag bit 2) keeps a single FIRE tag, for
    want of RAM (profiler-fw/board/mcs51/pf_board_cfg.h), and frees it only once that FIRE's RESULT has been
    sent; a FIRE that comes before then is lost (SPEC.md section 4, HELLO). The AVR queues a tag per ring record."""
    return bool(hello.flags & HELLO_FLAG_8051)


# The 8051 puts its bytes out from its foreground loop, with gaps between them: in 37 paced normal runs at 9600
# baud (8051 profiler, 2026-11-28) every one of 43 lost FIREs had entered its line at most 36.4 ms after the FIRE
# before it, the answered ones from 31.7 ms on (two at 22 ms, with no TIMECODE ahead of their RESULT); with the
# FIREs written 42 ms apart, 2 of 404 were still lost, 42.2 and 42.4 ms after the one before (each after a FIRE
# that came 62 ms into its tick, its RESULT behind the next tick's TIMECODE). A TIMECODE's and a RESULT's line
# time are 29.2 ms together: the 8051 may hold a FIRE for 1.45 times that.
ONE_FIRE_PACING = 1.5


def fire_busy_s(baud: int) -> float:
    """How long after a FIRE entered its line a profiler that holds one FIRE may still hold it: a TIMECODE frame
    that may be leaving first, then the FIRE's RESULT, at the 8051's pace (ONE_FIRE_PACING): 43.75 ms at 9600 baud
    (a FIRE's own line time is the same for both FIREs and cancels out)."""
    return (wire_time_s(Timecode, baud) + wire_time_s(Result, baud)) * ONE_FIRE_PACING


# The AVR profiler's own time per event, whatever its line's rate. Measured on the paced bench (simavr: the
# ATmega2560's cycles at 16 MHz, as on the board), `mmrig run --mode normal -m -p 80 -i MS --baud B -D 8`,
# 2026-11-29: at 500000 baud none lost at 0.85, 0.8 and 0.75 ms (1,333 events a second); at 0.65, 0.55 and 0.5 ms
# (1,538 to 2,000 FIREs a second) it put out 1,312, 1,300 and 1,250 RESULTs a second and lost the rest (its ring
# full), and at 1000000 baud, 0.5 ms, 1,272 a second: its CPU sets the pace, not the line. Fitted to those, a RESULT
# costs it about 670 us to put out and a FIRE about 80 us to take in. (A normal run at 1 kHz that lost a stall's
# FIREs fed back to back 410 us apart, the RESULT's line time with the margin, filled its ring: two in three
# 60-second runs beside a CPU hog.) Mixed mode's edges make RESULTs with no FIRE: 670 us, about the 1,250 a second
# the bench's mixed runs carried with a RESULT each.
AVR_RESULT_BUSY_S = 670e-6
AVR_FIRE_BUSY_S = 80e-6


def event_busy_s(baud: int, one_fire: bool = False, fires: bool = True) -> float:
    """The profiler's time per event, without the margin: a RESULT's line time or the AVR's own time for it and
    (`fires`: normal mode) its FIRE, whichever is longer; `fire_busy_s` for a profiler that holds one FIRE."""
    if one_fire:
        return fire_busy_s(baud)
    own = AVR_RESULT_BUSY_S + (AVR_FIRE_BUSY_S if fires else 0.0)
    return max(wire_time_s(Result, baud), own)


def cpu_bound(baud: int, one_fire: bool = False, fires: bool = True) -> bool:
    """Whether the profiler's own time, not its line, limits the events at `baud`."""
    return not one_fire and event_busy_s(baud, one_fire, fires) > wire_time_s(Result, baud)


def line_gap_s(baud: int, one_fire: bool = False, fires: bool = True) -> float:
    """The least time between two events the profiler and its line carry at `baud`: `event_busy_s`, with
    LINE_MARGIN (also the firing thread's least gap between two FIREs, firing.py). A profiler that holds one
    FIRE (`holds_one_fire`) is busy until the RESULT has left, and a TIMECODE frame may be leaving ahead of it:
    its gap is `fire_busy_s` with the margin (at 9600 baud 48.6 ms, not 20.8; two FIREs written 22 ms apart
    lost the second in a paced run)."""
    return event_busy_s(baud, one_fire, fires) / LINE_MARGIN


def line_limit_per_s(baud: int, tick_s: float = NOMINAL_TICK_S, one_fire: bool = False, fires: bool = True) -> float:
    """Events a second the profiler and its line carry at `baud` with a RESULT each (and the ticks' TIMECODEs),
    with LINE_MARGIN. Normal mode (`fires`): 41 at 9600, 569 at 115200, 1,196 at 250000 and above (the AVR's own
    time: AVR_RESULT_BUSY_S + AVR_FIRE_BUSY_S); mixed mode's edges: 1,243 at 250000, 1,340 above (17 at 9600 for
    a profiler that holds one FIRE)."""
    free = 1.0 - wire_time_s(Timecode, baud) / tick_s
    return free / line_gap_s(baud, one_fire, fires)


def line_problem(rate_s: float, baud: int, as_built: bool = False, one_fire: bool = False,
                 fires: bool = True) -> str | None:
    """Why a grid at `rate_s` cannot be carried at `baud` (a sentence naming --rate and --baud), or None.
    `as_built`: `baud` is the nodes' rate after a reset, not one asked for. `one_fire`: the profiler holds one
    FIRE at a time (`holds_one_fire`). `fires`: a FIRE per event comes in (normal mode)."""
    limit = line_limit_per_s(baud, one_fire=one_fire, fires=fires)
    if 1.0 / rate_s <= limit:
        return None
    fits = next((b for b in (115200, 250000, 500000, 1000000)
                 if 1.0 / rate_s <= line_limit_per_s(b, one_fire=one_fire, fires=fires)), None)
    built = " (the nodes' rate as built)" if as_built else ""
    us = event_busy_s(baud, one_fire, fires) * 1e6
    if cpu_bound(baud, one_fire, fires):
        what = "a FIRE in and a RESULT out" if fires else "a RESULT out"
        return (f"--rate {rate_s * 1000:g} ms is {1.0 / rate_s:,.0f} events a second, but the AVR profiler takes "
                f"{limit:,.0f} ({what}, {us:,.0f} us of its own CPU each, at any link rate): "
                f"--rate {math.ceil(100_000.0 / limit) / 100:.2f} ms or slower")
    each = (f"a RESULT per event and a TIMECODE ahead of it, {us:,.0f} us each: the 8051 takes one FIRE at a time"
            if one_fire else f"a RESULT per event, {us:,.0f} us each")
    return (f"--rate {rate_s * 1000:g} ms is {1.0 / rate_s:,.0f} events a second, but at {baud} baud{built} the "
            f"profiler's line carries {limit:,.0f} ({each}): "
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
