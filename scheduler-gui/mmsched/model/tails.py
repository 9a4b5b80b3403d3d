"""A long stream of durations in bounded memory, for its tails: how late normal mode's firing thread woke, FIRE by
FIRE, over a run of hours (3.6 million an hour at 1 kHz: kept as a list of floats, 32 bytes each, 115 MB an hour).
Counted in bins of BIN_S (cyclictest's histogram counts whole microseconds; these are a tenth of one), the least,
the largest and how many exact: the memory is the bins the values fall in, whatever the run's length."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BIN_S = 1e-7


@dataclass
class Tails:
    counts: dict[int, int] = field(default_factory=dict)    # bin (value / BIN_S, rounded) -> how many
    n: int = 0
    min: float = math.inf
    max: float = -math.inf

    def append(self, value_s: float) -> None:
        k = round(value_s / BIN_S)
        self.counts[k] = self.counts.get(k, 0) + 1
        self.n += 1
        self.min, self.max = min(self.min, value_s), max(self.max, value_s)

    def __len__(self) -> int:
        return self.n

    def quantile(self, q: float) -> float:
        """The nearest-rank `q` quantile, to the bin (never outside the least and the largest); NaN for none."""
        if not self.n:
            return math.nan
        rank, seen = max(1, math.ceil(round(q * self.n, 6))), 0
        for k in sorted(self.counts):
            seen += self.counts[k]
            if seen >= rank:
                return min(max(k * BIN_S, self.min), self.max)
        return self.max


__all__ = ["BIN_S", "Tails"]
