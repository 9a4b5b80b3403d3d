"""The figures the lab key's answers quote (mmrig.labkey), each read from a run the key made (labkey_runs.Made)
or from `mmrig proto sizes`, and the words an answer gives instead when its run is invalid."""

from __future__ import annotations

from typing import Any

import numpy as np

from mmrig.labkey.runs import Made


def f(x: Any, spec: str = ".3f") -> str:
    """A figure as the key prints it: SPEC's format, '-' for a missing one (None, NaN, not a number)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if v != v else format(v, spec)


def schedule_line_ms(proto_sizes: str) -> tuple[int, float]:
    """(wire bytes, ms at 9600 baud) of the SCHEDULE frame, from `mmrig proto sizes --baud 9600`."""
    for line in proto_sizes.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "SCHEDULE":
            return int(cells[3]), float(cells[4])
    raise ValueError("no SCHEDULE line in `mmrig proto sizes`")


def experiment_runs(runs: dict[str, Made]) -> list[Made]:
    """The key's valid runs of the five experiments (not step 5's traced `inside-*` runs)."""
    return [m for m in runs.values() if m.valid and not m.run.name.startswith("inside")]


def tail_events(made: Made) -> tuple[int, int, int, float | None, float | None]:
    """From the run's latency histogram (sidecar `histogram`): (tallest bin's count, bins holding 1 or 2
    events, events in them, their lowest and highest bin edge in us). On a linear count axis such a bar is at
    most 2 / tallest of the plot's height; on log counts it is a third of the way up or more."""
    h = made.meta.get("histogram") or {}
    counts = np.asarray(h.get("counts") or [], dtype=float)
    if not len(counts) or counts.max() == 0:
        return 0, 0, 0, None, None
    small = (counts > 0) & (counts <= 2)
    idx = np.flatnonzero(small)
    lo = float(idx[0] * h["bin_us"]) if len(idx) else None
    hi = float((idx[-1] + 1) * h["bin_us"]) if len(idx) else None
    return int(counts.max()), int(small.sum()), int(counts[small].sum()), lo, hi


def reasons(made: Made) -> str:
    """The reasons of the events not ok, with their counts ('past_due 5'), 'none' or '-' (no reason column)."""
    if "reason" not in made.df:
        return "-"
    r = made.df.loc[made.df["outcome"].astype(str) != "ok", "reason"].dropna().astype(str).value_counts()
    return ", ".join(f"{k} {v}" for k, v in r.items()) or "none"


def slack_table(made: Made) -> dict[str, int]:
    """The notebook's slack table for one mixed run: every event, missed ones included."""
    df = made.df
    sl = df["slack_ticks"].astype(float)
    cls = np.where(sl.isna(), "no ACK / refused", np.where(sl <= 0, "slack <= 0", "slack > 0"))
    out: dict[str, int] = {}
    for c, o in zip(cls, df["outcome"].astype(str)):
        out[f"{c} / {o}"] = out.get(f"{c} / {o}", 0) + 1
    return out


def invalid_words(made: Made) -> str | None:
    """What an answer says instead of figures when its run is invalid; None for a valid run."""
    if made.valid:
        return None
    return f"no valid run ({made.run.name}: {made.meta.get('invalid_reason')}): not answered from this run"


def priority_words(made: Made) -> str:
    """The bench's scheduling, memory lock and priority fallback during the run (its sidecar's)."""
    host = (made.meta.get("bench") or {}).get("host") or {}
    load = made.meta.get("load") or {}
    return (f"bench scheduling {host.get('sched', '?')}, memory locked {host.get('mlock', '?')}, "
            f"bench priority fallback {load.get('bench_priority', '?')}")
