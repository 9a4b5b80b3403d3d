"""A run in phases (`mmrig run --phases idle:2h,load=cpu:1h,load=io:1h`, docs/long-runs.md): the PC's load
conditions one after the other, as OSADL measures a system for hours, first near idle, then under defined loads.

This module is the plan and its arithmetic: the parsing of the option, each phase's duration, the run's length
(their sum), where each phase starts on the plan, and which phase a moment of the run belongs to once the
switches have happened (`PhaseSpan`, what mmsched.model.phasedload records). It starts nothing.

The option's syntax: comma-separated parts, each `[load=]CONDITION:DURATION`. CONDITION is one of
mmsched.model.load's conditions, or `io`, the issue's and OSADL's word for the disk condition (recorded as
`disk`, the phase keeping the name `io`). DURATION is a number with s, m (or min) or h; a plain number is
seconds. A phase is named after the word it was given by (`idle`, `cpu`, `io`); a word given again gets its
position among its namesakes (`cpu`, `cpu#2`), so every phase has a name of its own in the sidecar and the report.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from .load import CONDITIONS

ALIASES = {"io": "disk"}            # the word the issue (and OSADL's "I/O load") uses for the disk condition
WORDS = (*CONDITIONS, *ALIASES)
UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
DURATION = re.compile(r"([0-9]*\.?[0-9]+)(s|m|min|h)?")
KEY = "load"
FORM = "each part is [load=]CONDITION:DURATION, e.g. idle:2h or load=cpu:20s"


class PhaseError(ValueError):
    """A --phases text that cannot be read: one line naming the part and the field."""


@dataclass(frozen=True)
class Phase:
    name: str            # the word it was given by, unique in its plan (cpu, cpu#2)
    condition: str       # mmsched.model.load's condition it runs (io -> disk)
    duration_s: float


@dataclass(frozen=True)
class PhaseSpan:
    """One phase as it happened, on the run's clock relative to the run's start (the CSV's sent_s's clock):
    `start_s` when its condition was in place (its stress-ng started; idle: the previous one gone), `end_s`
    when the switch away from it began (its stop asked), or the run's end; `error` why its condition could not
    be started (then it ran with nothing added)."""

    name: str
    condition: str
    command: list[str] | None
    start_s: float
    end_s: float | None
    error: str | None = None


def _duration(text: str, part: int, given: str) -> float:
    m = DURATION.fullmatch(text.strip().lower())
    if m is None:
        raise PhaseError(f"--phases: part {part} ({given!r}): duration {text!r} is not a time (a number with s, m or "
                         "h; a plain number is seconds)")
    value = float(m.group(1)) * UNITS[m.group(2) or "s"]
    if not math.isfinite(value) or value <= 0:
        raise PhaseError(f"--phases: part {part} ({given!r}): duration {text!r} must be above 0")
    return value


def _part(text: str, part: int) -> tuple[str, str, float]:
    """(word, condition, duration) of part number PART (from 1)."""
    given = text.strip()
    if not given:
        raise PhaseError(f"--phases: part {part} is empty: {FORM}")
    head, colon, tail = given.rpartition(":")
    if not colon:
        raise PhaseError(f"--phases: part {part} ({given!r}): no duration (':DURATION'): {FORM}")
    key, eq, word = head.partition("=")
    if not eq:
        key, word = KEY, head
    if key.strip() != KEY:
        raise PhaseError(f"--phases: part {part} ({given!r}): field {key.strip()!r} is not one a phase has (only "
                         f"load=CONDITION): {FORM}")
    word = word.strip()
    if word not in WORDS:
        raise PhaseError(f"--phases: part {part} ({given!r}): condition {word!r} is not one of {', '.join(WORDS)}")
    return word, ALIASES.get(word, word), _duration(tail, part, given)


@dataclass(frozen=True)
class PhasePlan:
    phases: tuple[Phase, ...]
    text: str                         # as it was given (the sidecar's config.phases_text)

    @classmethod
    def parse(cls, text: str) -> "PhasePlan":
        """The plan of a --phases text (PhaseError, one line naming the part and the field, if it cannot be read)."""
        if not isinstance(text, str) or not text.strip():
            raise PhaseError(f"--phases: no phase given: {FORM}")
        phases: list[Phase] = []
        seen: dict[str, int] = {}
        for i, part in enumerate(text.split(","), 1):
            word, condition, duration = _part(part, i)
            seen[word] = seen.get(word, 0) + 1
            phases.append(Phase(word if seen[word] == 1 else f"{word}#{seen[word]}", condition, duration))
        return cls(tuple(phases), text.strip())

    @property
    def total_s(self) -> float:
        """The run's length: the phases' durations added."""
        return math.fsum(p.duration_s for p in self.phases)

    @property
    def starts_s(self) -> tuple[float, ...]:
        """Where each phase starts on the plan, seconds from the run's start (the first at 0)."""
        out, t = [], 0.0
        for p in self.phases:
            out.append(t)
            t += p.duration_s
        return tuple(out)

    def planned(self, t_s: float) -> int | None:
        """The phase the plan puts moment T_S (seconds from the run's start) in; None before 0 or from the end on."""
        if t_s < 0 or t_s >= self.total_s:
            return None
        starts = self.starts_s
        return max(i for i, s in enumerate(starts) if s <= t_s)

    def sidecar(self) -> list[dict[str, object]]:
        return [{"name": p.name, "condition": p.condition, "duration_s": p.duration_s} for p in self.phases]


def phase_of(t_s: float, spans: Sequence[PhaseSpan]) -> int | None:
    """The phase moment T_S (seconds from the run's start) belongs to as the switches happened: the one whose
    [start_s, end_s) holds it (an open end_s: to the end of time). None inside a switch (after a phase's end_s,
    before the next one's start_s: the previous condition being stopped, the next being started) or before the
    first phase: such a moment counts in the whole run only."""
    for i, s in enumerate(spans):
        if s.start_s <= t_s and (s.end_s is None or t_s < s.end_s):
            return i
    return None
