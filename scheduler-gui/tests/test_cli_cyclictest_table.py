"""docs/hil.md's table of `mmrig run` options side by side with cyclictest's: every mmrig option it names is one
`mmrig run` accepts, and the options cyclictest's users reach for first are in it (a row saying 'no equivalent'
where none fits)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from mmrig.cli import build_parser

HIL_MD = Path(__file__).resolve().parents[2] / "docs" / "hil.md"
HEADING = "### mmrig run options side by side with cyclictest's"


def table() -> list[tuple[str, str, str]]:
    """The table's rows: (cyclictest cell, mmrig run cell, note)."""
    text = HIL_MD.read_text()
    assert HEADING in text, f"{HIL_MD} has no section {HEADING!r}"
    rows = []
    for line in text.split(HEADING, 1)[1].splitlines():
        if line.startswith("### "):
            break
        if not line.startswith("| ") or line.startswith("|---") or line.startswith("| cyclictest |"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        assert len(cells) == 3, line
        rows.append((cells[0], cells[1], cells[2]))
    return rows


def run_options() -> set[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices["run"]._option_string_actions)


def options_in(cell: str) -> list[str]:
    return re.findall(r"`(-{1,2}[A-Za-z][-A-Za-z0-9]*)", cell)


def test_every_mmrig_option_in_the_table_is_one_mmrig_run_accepts() -> None:
    accepted = run_options()
    named = [(row[0], opt) for row in table() for opt in options_in(row[1])]
    assert len(named) >= 15, named
    assert [(c, o) for c, o in named if o not in accepted] == []


def test_the_table_covers_what_cyclictest_users_reach_for() -> None:
    rows = table()
    cyclictest = {opt for row in rows for opt in options_in(row[0])}
    for opt in ("-i", "-l", "-D", "-p", "-m", "-h", "-q", "--json", "-b", "-t", "-a"):
        assert opt in cyclictest, opt
    for c, mm, _ in rows:
        assert options_in(mm) or mm == "no equivalent", (c, mm)     # an option, or said plainly that there is none
    by_ct = {options_in(c)[0]: (mm, note) for c, mm, note in rows}
    assert by_ct["-h"][0] == "`--hist`, `--histogram-us`" and "`-h` is help" in by_ct["-h"][1]
    assert by_ct["-p"][0] == "`-p`, `--priority`" and by_ct["-m"][0] == "`-m`, `--mlockall`"
    assert by_ct["-t"][0] == by_ct["-a"][0] == "no equivalent"
