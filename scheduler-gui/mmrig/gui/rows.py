"""What the view keeps of an event: an immutable snapshot taken in the run's thread (so the GUI never
reads an Event the runner is still changing), and the same rows read back from a run's CSV."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from mmsched.event import Event


class Row(NamedTuple):
    event: int
    event_id: int
    scheduled_tc: int
    created_tc: int
    sent_s: float | None
    ack_tc: int | None
    fired_tc: int | None
    result_tc: int | None
    latency_us: float | None
    outcome: str | None
    reason: str | None
    measurable: bool = True
    stall_us: float | None = None


def snapshot(ev: Event) -> Row:
    return Row(ev.event, ev.event_id, ev.scheduled_tc, ev.created_tc, ev.sent_s, ev.ack_tc, ev.fired_tc,
               ev.result_tc, ev.latency_us, ev.outcome, ev.reason, ev.measurable, ev.stall_us)


def _opt(v: Any, kind=float):
    return None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else kind(v)


def load_run(path: str | Path) -> tuple[list[Row], dict[str, Any], str]:
    """Reads NAME.csv + NAME.json with the analysis loader (mmanalysis.read_run: the run format's one
    reader). Returns (rows, sidecar, name). Raises ValueError (mmanalysis.SchemaError, naming the file,
    line and column) if the files are not a run."""
    from mmanalysis import read_run

    p = Path(path)
    if p.suffix not in (".csv", ".json"):
        p = p.with_name(p.name + ".csv")
    data = read_run(p)
    (name, sidecar), = data.meta.items()
    rows = [Row(int(r.event), int(r.event_id), int(r.scheduled_tc), int(r.created_tc), _opt(r.sent_s),
                _opt(r.ack_tc, int), _opt(r.fired_tc, int), _opt(r.result_tc, int), _opt(r.latency_us),
                str(r.outcome), _opt(r.reason, str), bool(r.measurable), _opt(r.stall_us))
            for r in data.df.itertuples(index=False)]
    return rows, sidecar, name
