"""Earlier tries of an experiment kept as NAME.attemptK: `mmrig demo` sets a run a host stall voided aside before
it runs the experiment again, and `mmrig run --force` does the same with an invalid run at its OUT, so a student's
manual rerun (docs/lab.md, "When an experiment has no valid run") keeps what the teacher should see. The report,
the notebook and the class report list such runs apart (mmanalysis.selection.is_set_aside)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mmanalysis.safefiles import atomic_write


def next_attempt(csv: Path) -> int:
    """The first K with no NAME.attemptK.csv beside CSV (NAME.csv)."""
    taken = [int(m.group(1)) for p in csv.parent.glob(f"{csv.stem}.attempt*.csv")
             if (m := re.fullmatch(re.escape(csv.stem) + r"\.attempt(\d+)", p.stem))]
    return max(taken, default=0) + 1


def set_aside(csv: Path, json_path: Path, attempt: int) -> Path:
    """Renames the run's CSV and sidecar to NAME.attemptK.* and its sidecar's name with them: kept, not
    overwritten. Returns the new CSV."""
    stem = f"{csv.stem}.attempt{attempt}"
    meta = json.loads(json_path.read_text())
    meta["name"] = stem
    atomic_write(json_path.with_name(stem + ".json"), (json.dumps(meta, indent=2) + "\n").encode())
    json_path.unlink()
    return csv.rename(csv.with_name(stem + ".csv"))


def keep_invalid(csv: Path, json_path: Path) -> Path | None:
    """An invalid run at CSV/JSON_PATH set aside as its next attempt (returns its new CSV); None when there is
    none, it is valid, or its sidecar cannot be read (then --force overwrites it, as before)."""
    if not csv.is_file() or not json_path.is_file():
        return None
    try:
        meta = json.loads(json_path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("valid", True):
        return None
    return set_aside(csv, json_path, next_attempt(csv))
