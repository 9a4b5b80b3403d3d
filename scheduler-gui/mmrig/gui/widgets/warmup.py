"""A run's warm-up: the start-up stall the latency plots mark, found in a run's first events, and the one
count of it that every plot's title shows. Qt-free.

The count is of measured events (ok or late, with a latency) before the cut: the grey points of the time
plot, which are the very points left out of the axes, the histogram and the CDF. It is not the cut's event
index: the events a stall made missed or lost have no latency, so "first 30 events" on the time plot would
disagree with the 16 measured events the histogram leaves out."""

from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

from mmrig.gui.rows import Row

WARMUP_WINDOW = 40     # events: a start-up stall is looked for among a run's first events only


def warmup_until(event: np.ndarray, lat_us: np.ndarray, sent_s: np.ndarray, tick_us: float,
                 window: int = WARMUP_WINDOW) -> int | None:
    """The start-up artefact of a run, or None: events with an index below the returned one are its warm-up.

    Arrays: the measured events in event order. The artefact: the PC's firing path stalled for more
    than a tick while the run was starting (the GUI and the run's process start up together), so an event of
    its first WARMUP_WINDOW ended more than a whole tick late, and the events that waited behind the stall were
    then sent back to back (less than a quarter tick apart), each a tick less late than the one before
    (295, 236, 177, 118 ms). Warm-up: every event up to the last one of that backlog. A run without such a stall
    has none; a stall after the first WARMUP_WINDOW events is the PC's behaviour and is never marked."""
    if not event.size:
        return None
    early = event < event[0] + window
    late = np.flatnonzero(early & (lat_us > tick_us))
    if not late.size:
        return None
    k = int(late[-1])
    while k + 1 < event.size and np.isfinite(sent_s[k + 1]) and np.isfinite(sent_s[k]) \
            and 0 <= sent_s[k + 1] - sent_s[k] < tick_us / 4e6:
        k += 1
    return int(event[k]) + 1


def rows_warmup(rows: Sequence[Row], tick_us: float) -> int | None:
    """warmup_until over rows (an opened run's, a compared run's)."""
    m = [r for r in rows if r.latency_us is not None and r.outcome in ("ok", "late") and r.measurable]
    m.sort(key=lambda r: r.event)
    return warmup_until(np.array([r.event for r in m], dtype=float), np.array([r.latency_us for r in m], dtype=float),
                        np.array([np.nan if r.sent_s is None else r.sent_s for r in m], dtype=float), tick_us)


Series = Tuple[np.ndarray, np.ndarray]     # (event index, latency us) of one run's measured events


def split_at_warmup(arrays: Sequence[Series], cuts: Sequence[int | None]) -> tuple[list[Series], list[Series]]:
    """Each series split at its cut (the event index its warm-up ends before, None: no warm-up): the events
    kept, and those of the warm-up."""
    kept, warm = [], []
    for (x, v), cut in zip(arrays, cuts):
        if cut is None:
            kept.append((x, v))
            warm.append((x[:0], v[:0]))
        else:
            w = x < cut
            kept.append((x[~w], v[~w]))
            warm.append((x[w], v[w]))
    return kept, warm


def warmup_count(warm: Sequence[Series]) -> int:
    """The warm-up figure: measured events in the warm-ups of all the series (what the plots leave out)."""
    return sum(int(v.size) for _, v in warm)
