"""The run's live view (the GUI, a progress line), Qt-free: `hook(kind, obj)` is called from the run's threads
with ("timecode", extended tc), ("event", Event) whenever an event is created or changes, ("phase",
"running"/"done"), ("profiler_report", the profiler's histogram), and in normal mode before it fires ("tick_fit",
(TIMECODEs the tick fit has, those it needs)) at each TIMECODE; it must be quick and must not mutate what it is
given. A hook that raises is counted, never let break the run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .tally import Tally


@dataclass
class View:
    tally: Tally
    hook: Callable[[str, Any], None] | None = None

    def notify(self, kind: str, obj: Any) -> None:
        if self.hook is not None:
            try:
                self.hook(kind, obj)
            except Exception:  # noqa: BLE001 - a broken view must not break the run
                self.tally.count("observer_errors")


__all__ = ["View"]
