"""What every figure module shares (plots.py, loadcdf.py), so that each imports it at its top and neither
imports the other's functions late: the runs in the paper's order, where a value lies along a fitted axis, and
a latency written for a label. plots re-exports these names."""

from __future__ import annotations

import numpy as np

from . import axes as fit
from .reader import RunSet
from .schema import LOAD_CONDITIONS, load_condition

EXPERIMENT_ORDER = {"verification": 0, "normal": 1, "mixed": 2}


def ordered_runs(data: RunSet, runs: list[str] | None) -> list[str]:
    """RUNS as given, or every run in the paper's order: verification, normal, mixed by distance, then loaded."""
    if runs:
        return [r for r in runs if r in data.meta]

    def key(r):
        c = data.meta[r].get("config", {})
        load = load_condition(c.get("load"))
        return (EXPERIMENT_ORDER.get(c.get("mode"), 9), load != "idle",
                LOAD_CONDITIONS.index(load) if load in LOAD_CONDITIONS else 99, c.get("distance") or 0, r)
    return sorted(data.meta, key=key)


def axis_fraction(sc: fit.Scale, x: float) -> float:
    """Where X lies along an axis of scale SC, 0 (low end) to 1."""
    if sc.log:
        return float(np.log(x / sc.lo) / np.log(sc.hi / sc.lo))
    return float((x - sc.lo) / (sc.hi - sc.lo)) if sc.hi > sc.lo else 0.5


def us_text(x: float) -> str:
    """A latency for a label: whole microseconds from 100 us up (29290, not 2.929e+04), else 4 digits."""
    return f"{x:.0f}" if x >= 100 else f"{x:.4g}"
