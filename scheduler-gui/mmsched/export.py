"""Writing a run: NAME.csv (one row per event, columns of docs/data-format.md in order) and NAME.json
(the sidecar). `pandas.read_csv("NAME.csv")` with no arguments reads it right."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Sequence

from .event import COLUMNS, Event


def _cell(v: object) -> object:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return repr(round(v, 9))
    return v


def write_csv(path: Path, events: Sequence[Event]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for e in events:
            w.writerow([_cell(v) for v in e.row()])


def write_sidecar(path: Path, sidecar: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sidecar, indent=2, default=str) + "\n")


def write_run(out: Path, events: Sequence[Event], sidecar: dict[str, Any]) -> tuple[Path, Path]:
    """`out` is the path without suffix (or with .csv / .json, which is stripped)."""
    out = Path(out)
    if out.suffix in (".csv", ".json"):
        out = out.with_suffix("")
    csv_path, json_path = out.with_name(out.name + ".csv"), out.with_name(out.name + ".json")
    write_csv(csv_path, events)
    write_sidecar(json_path, sidecar)
    return csv_path, json_path
