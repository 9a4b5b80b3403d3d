"""What the view keeps of an event, `Row` (defined once, Qt-free, in mmrig.child: the run process sends
the same rows, and `Row.of` takes one in the run's thread), and the same rows read back from a run's CSV."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from mmrig.child import Row


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
                str(r.outcome), _opt(r.reason, str), bool(r.measurable), _opt(r.stall_us), int(r.due_counts))
            for r in data.df.itertuples(index=False)]
    return rows, sidecar, name


__all__ = ["Row", "load_run"]
