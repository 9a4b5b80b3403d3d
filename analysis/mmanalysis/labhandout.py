"""The lab handout's command blocks (docs/lab.md), one reading for every side that runs them: the handout's own
test (analysis/tests/test_lab_doc.py) and the student pass that times them for the handout's timetable
(tools/lab_pass.py).

Each fenced block is marked with what it is: `bash lab` (run verbatim in the student's lab folder), `bash
lab-short` (the experiments: a test runs them with fewer events), `bash lab-dry` (boards, root, the network:
checked, never run here). The step a block belongs to is the `### N. ...` heading above it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
STEP = re.compile(r"^### (.+)$", re.M)
KINDS = ("bash lab", "bash lab-short", "bash lab-dry")


@dataclass(frozen=True)
class Block:
    """One fenced block: its marking (`bash lab`, ...), its text and the step heading above it ('' before any)."""

    kind: str
    body: str
    step: str

    @property
    def runs(self) -> bool:
        """A block a student runs on the bench (not a boards', root's or network's one)."""
        return self.kind in ("bash lab", "bash lab-short")


def blocks(text: str) -> list[Block]:
    """Every fenced block of the handout's text, in order, with the step it stands in."""
    steps = [(m.start(), m.group(1).strip()) for m in STEP.finditer(text)]
    out = []
    for m in FENCE.finditer(text):
        step = next((name for at, name in reversed(steps) if at < m.start()), "")
        out.append(Block(m.group(1).strip(), m.group(2), step))
    return out


def read(path: Path) -> list[Block]:
    return blocks(path.read_text())


__all__ = ["Block", "FENCE", "KINDS", "blocks", "read"]
