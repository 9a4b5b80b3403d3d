"""The error of the paper's tick estimate over a run: how far each TIMECODE frame's arrival, less its wire time
(when the PC believes the tick began), lies above the tick grid the run's frames allow.

The grid is the lower envelope of all (timecode, arrival - wire) points (tickfit.py, the clock-skew fit): the
frames that met the least delay define it, and whatever a frame met beyond that is its error: a USB-serial
adapter holding it (an FTDI latency timer: up to 16 ms; the Mega's 16U2: up to 4.1 ms), a frame already on the
line, the OS. On the bench's ideal line every frame lies on the grid within a cycle, so a run under a line model
(`mmrig run --line`) shows here what the adapter alone costs normal mode, whose FIREs are placed from these
arrivals, and mixed mode, whose slack shrinks by as much. The sidecar's `tick_estimate` section, over the run's
window (`in_window`): the frames before generation began were at another rate where the run asked for one (a
BAUD after the handshake: their wire time is not the run's), and the ones after its last event's tick share the
line with the answers to the run's closing QUERY.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..model.tcarrivals import TimecodeArrivals, as_columns
from ..model.tickfit import lower_envelope_slope_xy

Arrivals = TimecodeArrivals | Iterable[tuple[int, float]]
Grid = tuple[float, float]


def tick_grid(arrivals: Arrivals, wire_s: float, tick_s: float) -> Grid | None:
    """(base, slope): tick T began at `base + slope * T` on the run's clock, the lower envelope of the frames'
    (timecode, arrival - wire) points; `tick_s`, the nominal tick, is the slope when the points do not fit one
    (fewer than two ticks). None without frames."""
    ticks, at = as_columns(arrivals)
    if not ticks.size:
        return None
    x, y = ticks.astype(np.float64), at - wire_s
    order = np.lexsort((y, x))                                # by tick, then arrival: the hull's order
    x, y = x[order], y[order]
    slope = lower_envelope_slope_xy(x, y) or tick_s
    return float(np.min(y - slope * x)), slope               # the grid's tick 0: under every point


def estimate_errors_s(arrivals: Arrivals, wire_s: float, tick_s: float, grid: Grid | None = None) -> np.ndarray:
    """Each frame's error in seconds, in the order of `arrivals` ((extended timecode, arrival) pairs on the run's
    clock), from `grid` (tick_grid's, computed here when not given)."""
    grid = grid if grid is not None else tick_grid(arrivals, wire_s, tick_s)
    if grid is None:
        return np.zeros(0)
    base, slope = grid
    ticks, at = as_columns(arrivals)
    return at - wire_s - (base + slope * ticks.astype(np.float64))


def in_window(arrivals: TimecodeArrivals, start: float, last_tc: int | None) -> TimecodeArrivals:
    """The frames that arrived from `start` (the run clock when generation began) and are of ticks up to `last_tc`
    (the last event's; None: no event, no upper end)."""
    return arrivals.window(start, last_tc)


def tick_estimate_section(arrivals: Arrivals, wire_s: float, tick_s: float, grid: Grid | None = None) -> dict[str, Any]:
    """The sidecar's `tick_estimate`: the frames and their errors' mean, p50, p99 and max in us (None without
    frames), from `grid` (tick_grid's over the same frames) when given."""
    errors = estimate_errors_s(arrivals, wire_s, tick_s, grid) * 1e6
    if not errors.size:
        return {"frames": 0, "mean_us": None, "p50_us": None, "p99_us": None, "max_us": None}
    return {"frames": int(errors.size), "mean_us": round(float(errors.mean()), 3),
            "p50_us": round(float(np.percentile(errors, 50)), 3), "p99_us": round(float(np.percentile(errors, 99)), 3),
            "max_us": round(float(errors.max()), 3)}


__all__ = ["Grid", "estimate_errors_s", "in_window", "tick_estimate_section", "tick_grid"]
