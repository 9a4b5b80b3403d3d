"""What the PC's load can move in mixed mode, where the bench's latency cannot: how long each SCHEDULE frame
took from its creation on the PC to the executor's ACK (the propagation delay, in ms), the slack the event
had left when it arrived (slack_ticks), and the events missed because it had none.

From the CSV (docs/data-format.md): propagation = (ack_tc + ack_phase) - (created_tc + created_phase), in ticks,
over the rows whose ACK carries a phase; slack_ticks as written. The demo's notes and the report's load table
both call `link_stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class LinkStats:
    """One mixed run's SCHEDULE link: propagation delay (ms) and slack (ticks) over the rows with an exact
    ACK, and the missed events of the run."""
    events: int
    n: int                          # rows with an exact ACK (a phase)
    prop_mean_ms: float | None
    prop_p50_ms: float | None
    prop_p99_ms: float | None
    prop_max_ms: float | None
    slack_min_ticks: float | None
    slack_p50_ticks: float | None
    missed: int

    def text(self) -> str:
        if not self.n:
            return f"no SCHEDULE with an exact ACK; missed {self.missed} of {self.events}"

        def f(x: float | None, spec: str) -> str:
            return "-" if x is None else format(x, spec)
        return (f"SCHEDULE propagation mean {f(self.prop_mean_ms, '.2f')} ms, p99 {f(self.prop_p99_ms, '.2f')} ms, "
                f"max {f(self.prop_max_ms, '.2f')} ms; slack min {f(self.slack_min_ticks, '.3f')} ticks; "
                f"missed {self.missed} of {self.events}")


def propagation_ms(df: Any, tick_s: float) -> np.ndarray:
    """Per row: creation -> executor ACK in ms; NaN where there is no ACK or no phase."""
    ack = df["ack_tc"].to_numpy(dtype=float, na_value=np.nan) + df["ack_phase"].to_numpy(dtype=float, na_value=np.nan)
    created = df["created_tc"].to_numpy(dtype=float, na_value=np.nan) + df["created_phase"].to_numpy(dtype=float, na_value=np.nan)
    return (ack - created) * tick_s * 1e3


def tick_s(meta: dict) -> float:
    tb = meta["timebase"]
    return float(tb["tick_counts"]) / float(tb["timer_hz"])


def link_stats(df: Any, meta: dict) -> LinkStats:
    """LinkStats of one run's rows DF (a run's DataFrame, mmanalysis.read_run) and its sidecar META."""
    prop = propagation_ms(df, tick_s(meta))
    prop = prop[~np.isnan(prop)]
    sl = df["slack_ticks"].to_numpy(dtype=float, na_value=np.nan)
    sl = sl[~np.isnan(sl)]
    missed = int((df["outcome"].astype(str) == "missed").sum())

    def q(a: np.ndarray, p: float) -> float | None:
        return float(np.quantile(a, p)) if len(a) else None
    return LinkStats(events=len(df), n=len(prop), prop_mean_ms=float(prop.mean()) if len(prop) else None,
                     prop_p50_ms=q(prop, 0.5), prop_p99_ms=q(prop, 0.99), prop_max_ms=q(prop, 1.0),
                     slack_min_ticks=q(sl, 0.0), slack_p50_ticks=q(sl, 0.5), missed=missed)
