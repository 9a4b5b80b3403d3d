"""What the view keeps of an event: an immutable snapshot taken in the run's thread (so the GUI never
reads an Event the runner is still changing), and the same rows read back from a run's CSV."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NamedTuple

from ..event import Event


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


def snapshot(ev: Event) -> Row:
    return Row(ev.event, ev.event_id, ev.scheduled_tc, ev.created_tc, ev.sent_s, ev.ack_tc, ev.fired_tc,
               ev.result_tc, ev.latency_us, ev.outcome, ev.reason)


def _num(v: Any, kind=float):
    if v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
        return None
    return kind(float(v)) if kind is int else kind(v)


def load_run(path: str | Path) -> tuple[list[Row], dict[str, Any] | None, str]:
    """Reads NAME.csv (+ NAME.json when it is there). Returns (rows, sidecar or None, name).
    Raises ValueError with a readable message if the file is not a run."""
    import csv

    p = Path(path)
    if p.suffix == ".json":
        p = p.with_suffix(".csv")
    if p.suffix != ".csv":
        p = p.with_name(p.name + ".csv")
    if not p.exists():
        raise ValueError(f"{p} does not exist")
    rows: list[Row] = []
    with open(p, newline="") as f:
        reader = csv.DictReader(f)
        need = {"event", "event_id", "scheduled_tc", "latency_us", "outcome"}
        if reader.fieldnames is None or not need <= set(reader.fieldnames):
            raise ValueError(f"{p.name} is not an mmrig run CSV (columns {sorted(need)} missing)")
        for r in reader:
            rows.append(Row(int(r["event"]), int(r["event_id"]), int(r["scheduled_tc"]),
                            _num(r.get("created_tc"), int) or 0, _num(r.get("sent_s")), _num(r.get("ack_tc"), int),
                            _num(r.get("fired_tc"), int), _num(r.get("result_tc"), int), _num(r.get("latency_us")),
                            r.get("outcome") or None, r.get("reason") or None))
    side = p.with_suffix(".json")
    sidecar = None
    if side.exists():
        try:
            sidecar = json.loads(side.read_text())
        except ValueError as exc:
            raise ValueError(f"{side.name} is not valid JSON: {exc}") from exc
    name = (sidecar or {}).get("name") or p.stem
    return rows, sidecar, name
