"""The runs' "Replay with trace around this event": a paced bench run opened in the window is computed again on the
bench from its record of its inputs (mmhil.replay, docs/replay.md) with the executor traced within a tick either
side of the event, in a thread of its own; the result comes back by a signal and opens the executor profile window
at that moment. The run itself paid nothing for the trace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QThread, Signal

WINDOW_MS = 71.111        # one tick either side of the event's moment
SHOW_MS = (2.0, 3.0)      # the Gantt opens on the event: this much before and after its moment


@dataclass
class Traced:
    """What the replay gave: the run's name, the event, the windowed executor trace and its profile, the comparison's
    first line (the replay identical to the run, or where not)."""

    name: str
    event: int
    folder: Path
    trace: Path
    profile: dict[str, Any]
    said: str


def why_not(sidecar: dict[str, Any] | None, csv: Path | None) -> str | None:
    """Why this run cannot be replayed from the window (one line), or None."""
    if csv is None or not csv.is_file():
        return "the run is not on disk: open it (File > Open run) or let it finish with an output folder"
    inputs = (sidecar or {}).get("inputs") or {}
    if not inputs.get("file"):
        return "the run has no record of its inputs: only paced bench runs keep one (docs/replay.md)"
    if not inputs.get("complete"):
        return "the run's record of its inputs is incomplete: it cannot be replayed exactly"
    return None


class ReplayWorker(QThread):
    done = Signal(object)        # Traced
    failed = Signal(str)

    def __init__(self, csv: Path, event: int, parent=None) -> None:
        super().__init__(parent)
        self.csv, self.event = Path(csv), int(event)

    def run(self) -> None:  # noqa: D401 - QThread's entry point
        from mmanalysis import exectrace
        from mmhil.replay import ReplayError, replay, replay_paths, report_lines

        try:
            result, fig = replay(self.csv, self.csv.parent, around=str(self.event), window_ms=WINDOW_MS)
            trace = replay_paths(self.csv.parent, self.csv.stem)["around_exectrace"]
            profile = exectrace.profile(exectrace.read(trace))
        except (ReplayError, exectrace.ExecTraceError, OSError, ValueError) as exc:
            self.failed.emit(f"replay: {exc}")
            return
        profile["files"] = {"exectrace": trace.name}
        self.done.emit(Traced(self.csv.stem, self.event, self.csv.parent, trace, profile,
                              report_lines(self.csv.stem, result, fig)[0]))


__all__ = ["ReplayWorker", "SHOW_MS", "Traced", "WINDOW_MS", "why_not"]
