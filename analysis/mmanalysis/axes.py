"""Axes that fit the data, for every latency figure (and any view that wants the same choice, e.g. the GUI):

- data that spans DECADES_LOG or more (max / min >= 20) gets a log axis, its limits a little beyond the data;
- anything narrower gets a linear axis padded by 5 % of the range;
- a range of equal values (the bench's 1.375 us, every event alike) gets a linear axis centred on the value,
  +-5 % of it (at least 0.01), so it reads as one value instead of four flat lines or an empty decade;
- tick labels are plain numbers ('1.375', '29290', '0.5', with the digits the tick spacing needs on a linear
  axis), never '1.38x10^0' or an offset, and a log axis labels only its
  decades (and 2 and 5 between them when it spans less than three decades, 1.5, 2, 3, 5, 7 under 1.7), so labels never run together.

`fit_scale(values)` says what to do; `apply(ax, scale, axis)` does it to a matplotlib axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, ScalarFormatter

LOG_RATIO = 20.0


@dataclass(frozen=True)
class Scale:
    log: bool
    lo: float
    hi: float


def number_text(x: float) -> str:
    """A tick label: whole numbers from 100 up ('29290'), else up to 4 significant digits ('1.375', '0.05')."""
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.4g}"


def fit_scale(values: Iterable[float], allow_log: bool = True) -> Scale:
    """The scale for VALUES (NaN and inf ignored; a log axis only for positive values spanning LOG_RATIO)."""
    v = np.asarray([x for x in values if x is not None], dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return Scale(False, 0.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    if allow_log and lo > 0 and hi / lo >= LOG_RATIO:
        pad = (hi / lo) ** 0.04
        return Scale(True, lo / pad, hi * pad)
    if hi == lo:
        d = max(abs(lo) * 0.05, 0.01)
        return Scale(False, lo - d, hi + d)
    pad = (hi - lo) * 0.05
    return Scale(False, lo - pad, hi + pad)


def apply(ax, scale: Scale, axis: str = "x") -> None:
    """Sets AXIS ('x' or 'y') of AX to SCALE, with plain-number tick labels."""
    a = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log" if scale.log else "linear")
    (ax.set_xlim if axis == "x" else ax.set_ylim)(scale.lo, scale.hi)
    fmt = FuncFormatter(lambda x, _pos: number_text(x))
    if scale.log:
        decades = np.log10(scale.hi / scale.lo)
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if decades < 1.7 else (1.0, 2.0, 5.0) if decades < 3 else (1.0,)
        a.set_major_locator(LogLocator(base=10, subs=subs))
        a.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10))))
        a.set_minor_formatter(NullFormatter())
        a.set_major_formatter(fmt)
    else:
        a.set_major_locator(MaxNLocator(nbins=6))
        plain = ScalarFormatter(useOffset=False)   # as many digits as the tick spacing needs: 14.035, 14.04
        plain.set_scientific(False)
        a.set_major_formatter(plain)
