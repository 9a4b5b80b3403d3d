"""The latency histogram of a run, defined once (numpy only), as cyclictest's `-h` and EVL latmus's histogram
file give it: fixed bins from 0 us, each `bin_us` wide, `bins` of them, and an overflow count past the last.

What is counted is what every latency figure of mmrig is over (`latstats`): the measured events (`ok` and
`late`) that are measurable. `early`, `missed` and `lost` are never folded in. So
`sum(counts) + overflow + underflow == summary.n` (underflow, a measured latency below 0, cannot happen: a
negative latency is the outcome `early`; it is counted, never dropped, should it ever).

Bin `i` holds latencies `i * bin_us <= x < (i + 1) * bin_us`. The default width is 1 us for mixed and
verification runs (the executor's latency is a few microseconds; 1000 bins reach the default late bound)
and 10 us for normal mode (the PC fires: hundreds of microseconds to milliseconds; 1000 bins reach 10 ms).

`overflow_events` names the events past the last bin by their number (the CSV's `event`), the first `bins`
of them, as cyclictest keeps its overflows' cycle numbers.

The worst event is the measured, measurable one with the largest latency (the first of equals): its event
number, latency, tick (`scheduled_tc`) and the host time its frame was written (`sent_s`, seconds since the
run started), which is where to look in the CSV, a VCD or the bench's stall list.

Its text file (`mmrig run --hist`) is histfile.py's.
"""

from __future__ import annotations

from array import array
import math
from typing import Any, Iterable

import numpy as np

from .latstats import is_measured

DEFAULT_BINS = 1000
DEFAULT_BIN_US = {"mixed": 1.0, "verification": 1.0, "normal": 10.0}


def default_bin_us(mode: str) -> float:
    return DEFAULT_BIN_US.get(mode, 1.0)


def check_bin_us(bin_us: float) -> float:
    """The bin width as a positive finite float; ValueError otherwise (the command line's usage error)."""
    try:
        value = float(bin_us)
    except (TypeError, ValueError):
        raise ValueError(f"histogram bin width must be a number of us, not {bin_us!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"histogram bin width must be > 0 us, not {bin_us!r}")
    return value


def bin_counts(values: Iterable[float], bin_us: float, bins: int = DEFAULT_BINS) -> tuple[list[int], int, int]:
    """(counts per bin, overflow, underflow) of these latencies in us."""
    bin_us = check_bin_us(bin_us)
    x = np.fromiter(values, dtype=float)
    x = x[~np.isnan(x)]
    idx = np.floor(x / bin_us).astype(np.int64)
    under = int((idx < 0).sum())
    over = int((idx >= bins).sum())
    inside = idx[(idx >= 0) & (idx < bins)]
    counts = np.bincount(inside, minlength=bins)[:bins] if inside.size else np.zeros(bins, dtype=np.int64)
    return [int(c) for c in counts], over, under


def _r(v: float | None, nd: int = 6) -> float | None:
    return None if v is None else round(float(v), nd)


def latency_histogram(rows: Iterable[Any], bin_us: float, bins: int = DEFAULT_BINS) -> dict[str, Any]:
    """The sidecar's `histogram` section of objects with `event`, `outcome`, `latency_us`, `measurable`,
    `scheduled_tc` and `sent_s` attributes (the scheduler's events, or `DataFrame.itertuples()` of a run)."""
    bin_us = check_bin_us(bin_us)
    # one pass keeping numbers, not rows: a long run's rows are read back from disk (mmsched's eventstore.py)
    latencies = array("d")                 # (8 bytes each: a million are 8 MB)
    w = None
    past: list[int] = []
    for r in rows:
        if not is_measured(r) or r.latency_us is None or (isinstance(r.latency_us, float) and math.isnan(r.latency_us)):
            continue
        latencies.append(float(r.latency_us))
        if w is None or (r.latency_us, -int(r.event)) > (w.latency_us, -int(w.event)):
            w = r
        if math.floor(float(r.latency_us) / bin_us) >= bins:
            past.append(int(r.event))
    counts, over, under = bin_counts(latencies, bin_us, bins)
    worst = None
    if w is not None:
        sent = getattr(w, "sent_s", None)
        worst = {"event": int(w.event), "latency_us": _r(w.latency_us), "outcome": w.outcome,
                 "scheduled_tc": int(w.scheduled_tc),
                 "sent_s": None if sent is None or (isinstance(sent, float) and math.isnan(sent)) else _r(sent)}
    # the events past the last bin, by number, as many as there are bins: cyclictest keeps the cycle numbers of its
    # overflows in a buffer of its histogram's size and counts the rest ("# 00012 others" in its file)
    past = sorted(past)[:bins]
    return {"bin_us": bin_us, "bins": bins, "range_us": _r(bin_us * bins), "n": len(latencies), "counts": counts,
            "overflow": over, "underflow": under, "overflow_events": past, "worst": worst}


__all__ = ["DEFAULT_BINS", "DEFAULT_BIN_US", "bin_counts", "check_bin_us", "default_bin_us", "latency_histogram"]
