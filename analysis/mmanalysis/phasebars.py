"""Events by the tick phase at which the scheduler created them (created_phase): the bins (bins of 0.1 from 0,
the last one >= 1.0, i.e. created after the next tick began but before its TIMECODE arrived), the histogram
in them (phase_histogram: the sidecar's `slack.*.created_phase_histogram`, which mmsched.verdict.stats writes with
it) and a text bar chart of it for a terminal (the demo). plots.missed_phase draws the same histogram as a
figure for the report.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

PHASE_EDGES = [i / 10 for i in range(11)] + [np.inf]


def bin_labels() -> list[str]:
    """'0.0-0.1', ..., '0.9-1.0', '>= 1.0'."""
    return [f"{a:.1f}-{b:.1f}" for a, b in zip(PHASE_EDGES[:-2], PHASE_EDGES[1:-1])] + [">= 1.0"]


def phase_histogram(created_phase: Sequence[float]) -> list[int]:
    """Counts per bin of CREATED_PHASE (NaN left out, a slightly negative phase counted in the first bin)."""
    ph = np.asarray(created_phase, dtype=float)
    ph = ph[~np.isnan(ph)]
    return np.histogram(np.clip(ph, 0.0, None), bins=PHASE_EDGES)[0].tolist()


def phase_bars(counts: Sequence[int], other: Sequence[int] | None = None, width: int = 40,
               what: str = "missed", other_what: str = "ok") -> str:
    """A text bar chart, one line per phase bin: '0.8-0.9 | ########            12 missed, 8 ok'.
    Bars of COUNTS ('#'), scaled to WIDTH characters for the largest count; OTHER (optional, e.g. the ok
    events) is printed beside each bar as a number, so a reader sees which phases lose events."""
    counts = [int(c) for c in counts]
    top = max(counts, default=0)
    labels = bin_labels() if len(counts) == len(PHASE_EDGES) - 1 else [str(i) for i in range(len(counts))]
    lw = max(len(s) for s in labels) if labels else 0
    scale = f"{top / width:.3g}" if top > width else "1"
    lines = [f"{'phase':>{lw}} | {what} events by the tick phase they were created at (# = {scale})"]
    for i, (label, c) in enumerate(zip(labels, counts)):
        bar = "#" * (round(c / top * width) if top > width else c) if top else ""
        if c and not bar:
            bar = "."                    # fewer than half a character: still visible
        extra = f", {int(other[i])} {other_what}" if other is not None else ""
        lines.append(f"{label:>{lw}} | {bar:<{min(width, max(top, 1))}} {c} {what}{extra}")
    return "\n".join(lines)
