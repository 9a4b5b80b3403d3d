"""A class's hand-ins as the class report reads them: each group's folder and what was found in it (`Group`), the
whole class's runs in one RunSet (`ClassRuns`), and one group's runs of one experiment (`Row`). The report reads
them (classreport.py), grades the rows (classgrading.py) and sums each group up in a line (classsummary.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .reader import RunSet


@dataclass
class Group:
    """One group's hand-in: where its runs were looked for, the runs read (names in the class RunSet) and
    one line per problem (a folder without runs, a run file the reader refused)."""
    name: str
    folder: Path
    runs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)       # not a fault of the files: 8051 runs, invalid runs, ...
    unreadable: list[tuple[str, str, dict | None]] = field(default_factory=list)   # (file, reason, its config)
    lab_html: Path | None = None
    kinds: list[tuple[str, str]] = field(default_factory=list)   # ("problem" | "note", kind) of each line above
    csv_sha256: dict[str, str] = field(default_factory=dict)     # run -> its CSV's sha256 (identical hand-ins)

    def problem(self, kind: str, text: str) -> None:
        """A fault of the hand-in, one line; KIND groups it with the class's others of its kind."""
        self.problems.append(text)
        self.kinds.append(("problem", kind))

    def note(self, kind: str, text: str) -> None:
        """What the tables do with a run, or how it was made: no fault of the files."""
        self.notes.append(text)
        self.kinds.append(("note", kind))


@dataclass
class ClassRuns:
    """Every readable run of the class in one RunSet (runs named GROUP/NAME, sidecar `_group`), and the groups."""
    data: RunSet | None
    groups: list[Group]
    path: Path | None = None

    key: RunSet | None = None      # the key's runs (KEY_FOLDER), when the class folder holds them
    key_problems: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [p for g in self.groups for p in g.problems] + self.key_problems

    @property
    def notes(self) -> list[str]:
        return [p for g in self.groups for p in g.notes]


@dataclass
class Row:
    """One group's runs of one experiment (one variant of it, one profiler kind)."""
    group: str
    variant: str
    shown: list[str]        # valid, not set aside: pooled into the figures
    left_out: list[tuple[str, str]]   # (run, why)
    values: dict[str, Any]
    kind: str = "avr"
    stats: Any = None       # the pooled runs' summarize row (None: no events)
