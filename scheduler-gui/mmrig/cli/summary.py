"""`mmrig run`'s printed summary, fitted to the terminal as cyclictest's lines are: within 80 columns the figures
a reader compares first (n, mean, variance, min, p99, max) as a table and the rest under it as words; on a
terminal wide enough for it the whole one-row table (mmsched.verdict.stats.format_summary: 139 columns). --json and the
run's files always hold everything."""

from __future__ import annotations

from typing import Any

from mmanalysis.latstats import variance_text
from mmsched.verdict.stats import format_summary

NAME_WIDTH = 14


def _us(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def narrow_summary(name: str, s: dict[str, Any], columns: int = 80) -> str:
    """The summary in at most `columns` - 1 columns (79 at 80: a line as wide as the terminal wraps on some):
    a header and a row (a name wider than its column goes on a line of its own), then the outcomes, the events
    left out, p50 and p99.9, in words wrapped at the width."""
    o = s["outcomes"]
    left_out = int(o["ok"]) + int(o["late"]) - int(s["n"])      # n + left out = ok + late
    head = (f"{'run':<{NAME_WIDTH}} {'n':>7} {'mean_us':>10} {'variance':>15} {'min_us':>9} {'p99_us':>9} "
            f"{'max_us':>9}")
    shown = name if len(name) <= NAME_WIDTH else ""
    row = (f"{shown:<{NAME_WIDTH}} {s['n']:>7} {_us(s.get('mean_us')):>10} {variance_text(s.get('variance_us2')):>15} "
           f"{_us(s.get('min_us')):>9} {_us(s.get('p99_us')):>9} {_us(s.get('max_us')):>9}")
    lines = [head] + ([] if shown else [name]) + [row]
    words = [f"ok/late/early/missed/lost {o['ok']}/{o['late']}/{o['early']}/{o['missed']}/{o['lost']}",
             f"left out {left_out}", f"p50/p99.9 {_us(s.get('p50_us'))}/{_us(s.get('p999_us'))} us"]
    line = ""
    for w in words:
        if line and len(line) + 2 + len(w) > columns - 1:
            lines.append(line)
            line = ""
        line = f"{line}  {w}" if line else f"  {w}"
    lines.append(line)
    return "\n".join(lines)


def summary_text(name: str, s: dict[str, Any], columns: int) -> str:
    """The whole one-row table where the terminal is wider than it, else the narrow one."""
    wide = format_summary(name, s)
    if max(len(line) for line in wide.splitlines()) < columns:
        return wide
    return narrow_summary(name, s, columns)


__all__ = ["narrow_summary", "summary_text"]
