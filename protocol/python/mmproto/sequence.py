"""Counting lost frames from 8-bit sequence numbers (protocol/SPEC.md section 4)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SeqTracker:
    last: int | None = None
    lost: int = 0

    def accept(self, seq: int, is_hello: bool = False) -> int:
        """Records one accepted frame; returns how many frames were lost just before it."""
        gap = 0
        if self.last is not None and not is_hello:
            gap = (seq - self.last - 1) & 0xFF
        self.last = seq
        self.lost += gap
        return gap
