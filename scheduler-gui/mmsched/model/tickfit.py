"""The profiler's tick length as this host's clock sees it, fitted from TIMECODE arrivals.

A TIMECODE frame for tick x completes on the host at y = start(x) + wire time + delay, and delays only
ever add (a frame already on the line, the OS, USB polling, the bench's lag). So the tick grid
start(x) = a + b x lies under every point (x, y - wire), and the points closest to it are the frames that
met the least delay. The fit is the line under all points that is closest to them on average (the linear
programme of Moon, Skelly and Towsley, "Estimation and removal of clock skew from network delay
measurements", 1999): its solution is the edge of the points' lower convex hull above their mean x. A few
frames held up by a stall or a busy line lie above the hull and do not move it.

Why fit at all: a Mega's ceramic resonator is off by up to 0.5 %. With the tick length taken from HELLO,
the estimate of a tick's start (a minimum over the last frames, timecode.py) drifts by the offset times
the window: a profiler 0.5 % slow made normal mode's FIREs go out 2.4-5.5 ms early.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

# points handed to the hull at a time from numpy columns: a whole run's frames as Python floats at once would be
# 9 MB for a 5-hour run's 250,000 (its own arrays are 4 MB); a chunk is a few hundred KB
CHUNK = 8192


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def lower_hull(points: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The lower convex hull of points sorted by x (Andrew's monotone chain), left to right."""
    hull: list[tuple[float, float]] = []
    for p in points:
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) <= 0:
            hull.pop()
        hull.append(p)
    return hull


def lower_envelope_slope(points: Sequence[tuple[float, float]]) -> float | None:
    """The slope of the line under every point that is closest to them on average (sorted by x, at least two
    distinct x). None when there are fewer than two distinct x."""
    if len(points) < 2 or points[0][0] == points[-1][0]:
        return None
    return hull_slope(lower_hull(points), sum(p[0] for p in points) / len(points))


def lower_envelope_slope_xy(x: np.ndarray, y: np.ndarray) -> float | None:
    """`lower_envelope_slope` of the points (x[i], y[i]), already sorted by x (then y), as numpy columns: the
    points go to the hull a chunk at a time."""
    if x.size < 2 or x[0] == x[-1]:
        return None
    return hull_slope(lower_hull(_chunked(x, y)), float(x.mean()))


def _chunked(x: np.ndarray, y: np.ndarray) -> Iterator[tuple[float, float]]:
    for i in range(0, x.size, CHUNK):
        yield from zip(x[i:i + CHUNK].tolist(), y[i:i + CHUNK].tolist())


def hull_slope(hull: list[tuple[float, float]], mean_x: float) -> float | None:
    """The slope of the lower hull's edge above the points' mean x."""
    for left, right in zip(hull, hull[1:]):
        if left[0] <= mean_x <= right[0] and right[0] > left[0]:
            return (right[1] - left[1]) / (right[0] - left[0])
    return None  # not reached: the hull spans the points' x range, which holds their mean


__all__ = ["hull_slope", "lower_envelope_slope", "lower_envelope_slope_xy", "lower_hull"]
