"""The class report's first page: one line a group (passed, missing, look at) and the problems and notes counted
by kind, so a teacher sees in a minute which groups need reading; the details (every line, the tables, the
grading) follow it.

- A group *passed* when its grading has no `no` (a range the key's own figure fails too is the range's, counted
  apart), nothing of the handout's nine runs is missing and nothing asks
  to be looked at; *missing* when runs or lab.html are missing; *look at* when a figure failed its check, a run
  file is unreadable, a run is a byte-identical copy of another group's (the same CSV sha256) or a run is short.
- A run is short when it has fewer than half the events the class's runs have (their median): 30 events where
  the handout asks 200 leaves a p99 resting on a single event.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from .classgrading import Graded, failed
from .reader import RunSet, profiler_kind
from .report import shorten
from .runvariant import HANDIN

from .classhandin import Group, Row

SHORT_SHARE = 0.5     # a run with fewer events than this share of the class's median is short
LOOK_CHARS = 80       # a Markdown 'look at' cell longer than this is cut (the detail tables' flags cap)


@dataclass
class GroupLine:
    """One group's line on the first page."""
    group: str
    status: str                      # passed | missing | look at
    checks: str                      # "8 of 9 yes, 1 out of range as the key's" (a range the key fails too); "-"
    missing: list[str] = field(default_factory=list)
    look_at: list[str] = field(default_factory=list)

    @property
    def cells(self) -> list[str]:
        return [self.group, self.status, self.checks, ", ".join(self.missing) or "-", "; ".join(self.look_at) or "-"]

    @property
    def md_cells(self) -> list[str]:
        """cells, the 'look at' one cut at LOOK_CHARS for a Markdown table (the HTML and the grading have it all)."""
        return self.cells[:-1] + [shorten(self.cells[-1], LOOK_CHARS)]


LINE_HEADERS = ["group", "status", "checks as expected", "missing", "look at"]


def identical_handins(groups: list[Group]) -> dict[str, list[tuple[str, int]]]:
    """Per group, the other groups that handed in byte-identical run CSVs (the same sha256), with how many."""
    owners: dict[str, set[str]] = {}
    for g in groups:
        for sha in g.csv_sha256.values():
            owners.setdefault(sha, set()).add(g.name)
    out: dict[str, list[tuple[str, int]]] = {}
    for g in groups:
        shared = Counter(o for sha in g.csv_sha256.values() for o in owners[sha] if o != g.name)
        if shared:
            out[g.name] = sorted(shared.items())
    return out


def short_runs(data: RunSet | None, groups: list[Group]) -> dict[str, list[tuple[str, int, float]]]:
    """Per group, its AVR runs with fewer events than SHORT_SHARE of the class's median: (run, events, median)."""
    if data is None:
        return {}
    events = data.df.groupby("run", observed=True).size()
    counts = {r: int(events.get(r, 0)) for g in groups for r in g.runs if profiler_kind(data.meta[r]) == "avr"}
    if not counts:
        return {}
    mid = median(counts.values())
    out: dict[str, list[tuple[str, int, float]]] = {}
    for g in groups:
        few = [(r.split("/", 1)[1], counts[r], mid) for r in g.runs if r in counts and counts[r] < SHORT_SHARE * mid]
        if few:
            out[g.name] = few
    return out


def missing_runs(g: Group, rows: dict[str, list[Row]]) -> list[str]:
    """The handout's runs (runvariant.HANDIN) the group has no valid AVR run of ('exp2 (no valid run)' when it
    handed in only invalid ones), and lab.html when it is missing; ROWS: the group's AVR rows of each table."""
    out = []
    for name, key, v in HANDIN:
        mine = [r for r in rows.get(key, []) if r.variant == v]
        if not any(r.shown for r in mine):
            out.append(f"{name} (no valid run)" if any(r.left_out for r in mine) else name)
    return out + (["lab.html"] if g.lab_html is None else [])


def group_line(g: Group, graded: list[Graded], missing: list[str], identical: list[tuple[str, int]],
               short: list[tuple[str, int, float]]) -> GroupLine:
    """G's line from its grading (GRADED), the handout's runs it lacks (MISSING), the groups it shares identical
    run CSVs with (IDENTICAL) and its short runs (SHORT)."""
    checked = [x for x in graded if x.verdict == "yes" or x.verdict.startswith("no")]
    yes = sum(x.verdict == "yes" for x in checked)
    off = sum(x.verdict.startswith("no") and not failed(x.verdict) for x in checked)
    no: dict[str, list[str]] = {}         # "exp2" -> ["mean", "p99"]: the grading below says why
    for x in checked:
        if failed(x.verdict):
            run, what = x.figure.short.split(" ", 1)
            no.setdefault(run, []).append(what)
    # what the files say first (the Markdown cell is cut at LOOK_CHARS), then the failed checks, which the
    # group's grading table gives in full
    look = [f"unreadable: {Path(f).name}" for f, _, _ in g.unreadable]
    look += [f"copy of {other} ({n} CSV{'s' if n > 1 else ''})" for other, n in identical]
    look += [f"short: {run} ({n} events)" for run, n, _ in short]
    look += ["no: " + ", ".join(f"{run} ({', '.join(w)})" for run, w in no.items())] if no else []
    if not g.runs and not g.unreadable:
        look.append("no runs handed in")
    status = "look at" if look else "missing" if missing else "passed"
    checks = f"{yes} of {len(checked)} yes" + (f", {off} out of range as the key's" if off else "")
    return GroupLine(g.name, status, checks if checked else "-", missing, look)


def kinds_table(groups: list[Group], key_problems: list[str]) -> list[list[str]]:
    """The problems and notes counted by kind: [kind, problem | note, count, groups]."""
    count: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], list[str]] = {}
    for g in groups:
        for sort, kind in g.kinds:
            count[(sort, kind)] += 1
            where.setdefault((sort, kind), [])
            if g.name not in where[(sort, kind)]:
                where[(sort, kind)].append(g.name)
    rows = [[kind, sort, str(n), ", ".join(where[(sort, kind)])]
            for (sort, kind), n in sorted(count.items(), key=lambda kv: (kv[0][0] != "problem", -kv[1], kv[0][1]))]
    if key_problems:
        rows.insert(0, ["the key's run unreadable", "problem", str(len(key_problems)), "(the key)"])
    return rows
