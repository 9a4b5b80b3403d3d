"""The scheduler's own counters of a run (the sidecar's `counters.scheduler`): what it counted as it went (frames
lost in a sequence gap, checks it skipped, requests sent again...), by name. Every part of the run that counts is
given this, not the runner."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n


__all__ = ["Tally"]
