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

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model.tickfit import lower_envelope_slope


def tick_grid(arrivals: Sequence[tuple[int, float]], wire_s: float, tick_s: float) -> tuple[float, float] | None:
    """(base, slope): tick T began at `base + slope * T` on the run's clock, the lower envelope of the frames'
    (timecode, arrival - wire) points; `tick_s`, the nominal tick, is the slope when the points do not fit one
    (fewer than two ticks). None without frames."""
    points = sorted((float(tc), at - wire_s) for tc, at in arrivals)
    if not points:
        return None
    slope = lower_envelope_slope(points) or tick_s
    return min(y - slope * x for x, y in points), slope      # the grid's tick 0: under every point


def estimate_errors_s(arrivals: Sequence[tuple[int, float]], wire_s: float, tick_s: float) -> list[float]:
    """Each frame's error in seconds, in the order of `arrivals` ((extended timecode, arrival) pairs on the run's
    clock)."""
    grid = tick_grid(arrivals, wire_s, tick_s)
    if grid is None:
        return []
    base, slope = grid
    return [at - wire_s - (base + slope * tc) for tc, at in arrivals]



def in_window(arrivals: Sequence[tuple[int, float]], start: float, last_tc: int | None) -> list[tuple[int, float]]:
    """The frames that arrived from `start` (the run clock when generation began) and are of ticks up to `last_tc`
    (the last event's; None: no event, no upper end)."""
    return [(tc, at) for tc, at in arrivals if at >= start and (last_tc is None or tc <= last_tc)]


def tick_estimate_section(arrivals: Sequence[tuple[int, float]], wire_s: float, tick_s: float) -> dict[str, Any]:
    """The sidecar's `tick_estimate`: the frames and their errors' mean, p50, p99 and max in us (None without
    frames)."""
    errors = np.asarray(estimate_errors_s(arrivals, wire_s, tick_s)) * 1e6
    if not errors.size:
        return {"frames": 0, "mean_us": None, "p50_us": None, "p99_us": None, "max_us": None}
    return {"frames": int(errors.size), "mean_us": round(float(errors.mean()), 3),
            "p50_us": round(float(np.percentile(errors, 50)), 3), "p99_us": round(float(np.percentile(errors, 99)), 3),
            "max_us": round(float(errors.max()), 3)}


__all__ = ["estimate_errors_s", "in_window", "tick_estimate_section", "tick_grid"]
