"""The worst case over time (numpy only): a run's latency cut into consecutive intervals of its time, and per
interval how many events were measured, the largest latency and the 99th percentile, as OSADL's QA farm plots
the maxima of consecutive intervals so that a reader sees whether a run's worst case came once or keeps coming.

What is counted is what every latency figure of mmrig is over (`latstats`): the measured events (`ok`, `late`)
that are measurable, each with its `latency_us` (the figure the summary gives in every mode: the executor's
event edge in mixed and verification mode, the PC's FIRE in normal mode, both from the start of the event's
moment). The percentile is the summary's (numpy's linear interpolation), so a run of one interval has the
summary's `p99_us` and `max_us` there.

An event's time is its moment: the start of its tick `scheduled_tc` plus `due_counts`, on the profiler's time
base (the clock that defines time on the rig), counted from the first tick an event of the run was scheduled
for (`first_tc`). Where the run knows when that tick began on its own clock (`t0_run_s`: seconds since
generation started, the clock of the CSV's `sent_s` and of the sidecar's `phases`) and how long a tick lasts
on it (`run_tick_s`: a board's resonator is off by up to 0.5 %, 18 s an hour), times are on the run's clock, so
that the intervals line up with the phases; a run read from its CSV alone counts from its first scheduled tick
on the profiler's clock (`clock` says which).

`IntervalMaxima` takes events one at a time (`add`), in any order, and gives the sidecar's section at the end
(`section`): a run computes it once from its events; a long run's writer can fold each event in as it ends. It
keeps each measured latency (8 bytes) until `section`, for the exact percentile.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .latstats import QUANTILES, is_measured

DEFAULT_EVERY_S = 300.0          # OSADL's interval: 5 minutes
CLOCKS = {"run": "seconds since generation started (the run's clock: sent_s, phases)",
          "first tick": "seconds since the run's first scheduled tick began (the run's clock not known)"}


def moment_s(scheduled_tc: int, due_counts: int, first_tc: int, tick_s: float, timer_hz: float) -> float:
    """An event's moment in seconds after the start of tick `first_tc`, on the profiler's time base."""
    return (int(scheduled_tc) - int(first_tc)) * tick_s + int(due_counts or 0) / timer_hz


@dataclass
class IntervalMaxima:
    """The maxima of consecutive intervals of `every_s` seconds: interval k holds the events whose time t_s is
    in [k * every_s, (k + 1) * every_s)."""

    every_s: float = DEFAULT_EVERY_S
    _values: dict[int, array] = field(default_factory=dict, init=False, repr=False)
    _worst: dict[int, tuple[float, int | None]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.every_s, (int, float)) and math.isfinite(self.every_s) and self.every_s > 0):
            raise ValueError(f"the maxima's interval must be > 0 seconds, not {self.every_s!r}")

    def add(self, t_s: float, latency_us: float, event: int | None = None) -> None:
        """One measured event: its time in the run (s), its latency (us) and its event number (the CSV's `event`),
        kept for the interval's worst."""
        k = math.floor(t_s / self.every_s)
        self._values.setdefault(k, array("d")).append(float(latency_us))
        worst = self._worst.get(k)
        # the first of equals (by event number where given), as the histogram's worst
        if worst is None or latency_us > worst[0] or (latency_us == worst[0] and event is not None
                                                       and worst[1] is not None and event < worst[1]):
            self._worst[k] = (float(latency_us), event)

    @property
    def n(self) -> int:
        return sum(len(v) for v in self._values.values())

    def section(self) -> dict[str, Any]:
        """`{"every_s", "n", "intervals": [{"start_s", "end_s", "count", "max_us", "p99_us", "max_event"}]}`: every
        interval from the first (the one of time 0, or an earlier one that holds an event) to the last that holds
        one, those without a measured event with count 0 and null figures; the last may be cut short by the run's
        end."""
        out: dict[str, Any] = {"every_s": self.every_s, "n": self.n, "intervals": []}
        if not self._values:
            return out
        for k in range(min(0, min(self._values)), max(self._values) + 1):
            v = np.frombuffer(self._values[k], dtype=float) if k in self._values else np.empty(0)
            worst = self._worst.get(k)
            out["intervals"].append({
                "start_s": round(k * self.every_s, 6), "end_s": round((k + 1) * self.every_s, 6), "count": int(v.size),
                "max_us": round(float(v.max()), 3) if v.size else None,
                "p99_us": round(float(np.quantile(v, QUANTILES["p99"])), 3) if v.size else None,
                "max_event": None if worst is None or worst[1] is None else int(worst[1])})
        return out


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def maxima_of_rows(rows: Iterable[Any], every_s: float, tick_s: float, timer_hz: float,
                   t0_run_s: float | None = None, run_tick_s: float | None = None) -> dict[str, Any]:
    """The sidecar's `maxima` section of objects with `event`, `scheduled_tc`, `due_counts`, `outcome`,
    `latency_us` and `measurable` (the scheduler's events, or `DataFrame.itertuples()` of a run): each measured
    event at its moment (moment_s, from the first tick any event was scheduled for; `tick_s` and `timer_hz`, the
    profiler's), on the run's clock where `t0_run_s` (that tick's start there) is given, a tick lasting
    `run_tick_s` there (None: `tick_s`); else from the first scheduled tick. Adds `clock`, `first_tc`, `t0_run_s`
    and `run_tick_s` to IntervalMaxima.section."""
    rows = rows if isinstance(rows, Sequence) else list(rows)   # (two passes; a Sequence is read again, not held)
    first_tc = min((int(r.scheduled_tc) for r in rows if not _missing(r.scheduled_tc)), default=None)
    acc = IntervalMaxima(every_s)
    on_run_clock = t0_run_s is not None
    shift = t0_run_s if on_run_clock else 0.0
    scale = (run_tick_s / tick_s) if on_run_clock and run_tick_s else 1.0
    for r in rows:
        if first_tc is None or not is_measured(r) or _missing(r.latency_us):
            continue
        due = getattr(r, "due_counts", 0)      # (rows without it: every event due at its tick's start, as before v4)
        t = shift + scale * moment_s(r.scheduled_tc, due, first_tc, tick_s, timer_hz)
        acc.add(t, float(r.latency_us), int(r.event))
    return {"clock": "run" if on_run_clock else "first tick", "first_tc": first_tc,
            "t0_run_s": round(t0_run_s, 6) if on_run_clock else None,
            "run_tick_s": round(tick_s * scale, 9) if on_run_clock else None, **acc.section()}


__all__ = ["CLOCKS", "DEFAULT_EVERY_S", "IntervalMaxima", "maxima_of_rows", "moment_s"]
