"""What one run gives back: its events, its sidecar and where both were written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .event import Event


@dataclass
class RunResult:
    events: list[Event]
    sidecar: dict[str, Any]
    csv_path: Path | None
    json_path: Path | None

    @property
    def valid(self) -> bool:
        return bool(self.sidecar["valid"])

    @property
    def summary(self) -> dict[str, Any]:
        return self.sidecar["summary"]

    @property
    def reasons(self) -> list[str]:
        """The codes of the run's invalid reasons (mmanalysis.schema.INVALID_REASONS)."""
        return [r["code"] for r in self.sidecar.get("invalid_reasons") or []]
