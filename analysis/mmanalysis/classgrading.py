"""The class report's grading: per group, the figures the handout's questions rest on, beside the key's and the
range docs/lab-instructor.md ("Expected ranges") gives for the bench, and whether the group's is as expected.

- Each figure is read from the runs of one experiment *and* variant (mmanalysis.runvariant: the executor's design,
  mixed mode's generation, normal mode's discipline): exp1i's ISR dispatch is never graded as exp1.
- A range is a bound a better figure passes: a normal-mode mean of 80 us passes "a few hundred us", a p99 of 0.9 ms
  passes "about 1-1.5 ms". A figure that fails says by how much and against what.
- An event the rig could not measure (a host stall displaced a byte it depends on: the CSV's `measurable` False,
  `stall_us`) is the rig's, never the system's: a missed event under a stall is counted apart from the missed
  events the graded figure counts, and the share on time is over the measurable events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from .paper import PAPER
from .reader import RunSet, profiler_kind
from .report import _cell
from .runvariant import variant
from .selection import run_kind
from .stats import summarize

from .classhandin import Row


@dataclass(frozen=True)
class Figure:
    """A figure a question's answer rests on: the STAT of the group's valid AVR runs of the paper's EXPERIMENT
    (PaperRow.key) and VARIANT (runvariant.variant's value). STAT is a summarize column, or `missed` (the missed
    events the system caused: measurable ones) or `ok_share` (on time among the measurable events).
    AT_MOST / AT_LEAST: the bounds of docs/lab-instructor.md's "Expected ranges" for the bench (WORDS: the guide's
    own words); both for a figure neither side of which is better. NEAR_KEY: the group's figure should be the
    key's (within 10 %, or 1 us): the executor's dispatch on the bench's exact clock, which the PC cannot move."""
    question: str
    experiment: str
    variant: str
    stat: str
    what: str
    at_most: float | None = None
    at_least: float | None = None
    words: str = ""
    near_key: bool = False

    @property
    def short(self) -> str:
        """'exp2 p99' of 'exp2 normal mode: p99 (us)': the first page's words for it."""
        what = self.what.split(": ", 1)
        return f"{what[0].split(' ')[0]} {what[1].split(' (')[0].replace('missed events', 'missed')}"

    @property
    def bounded(self) -> bool:
        return self.at_most is not None or self.at_least is not None

    @property
    def expected_text(self) -> str:
        if self.near_key:
            return "the key's (within 10 % or 1 us)"
        if not self.bounded:
            return "-"
        lo, hi = self.at_least, self.at_most
        bound = (f"{fig_text(self.stat, lo)}-{fig_text(self.stat, hi)}" if lo is not None and hi is not None else
                 f"at most {fig_text(self.stat, hi)}" if hi is not None else f"at least {fig_text(self.stat, lo)}")
        return f"{bound} ({self.words})" if self.words else bound


TASK = "task dispatch"
ALIGNED_TASK = f"generation aligned, {TASK}"

# docs/lab-instructor.md's "Expected ranges" (bench) as bounds; change both together. Normal mode's figures are
# the PC's (a better PC passes); exp3b's share on time is where the PC's free-running timer falls in the tick, so
# neither side is better: the guide's "about 60-70 %" with the few points it says runs move by (55-75 %).
GRADING: tuple[Figure, ...] = (
    Figure("Q1", "executor", TASK, "mean_us", "exp1 executor alone: mean (us)", near_key=True),
    Figure("Q1", "executor", TASK, "var_us2", "exp1 executor alone: variance (us²)"),
    Figure("Q1, Q4", "mixed2", ALIGNED_TASK, "mean_us", "exp4 mixed 2 ahead: mean (us)", near_key=True),
    Figure("Q4", "mixed2", ALIGNED_TASK, "p99_us", "exp4 mixed 2 ahead: p99 (us)"),
    Figure("Q2", "normal", "naive", "mean_us", "exp2 normal mode: mean (us)", at_most=1000,
           words="a few hundred us"),
    Figure("Q2, Q4", "normal", "naive", "p99_us", "exp2 normal mode: p99 (us)", at_most=1500,
           words="about 1-1.5 ms"),
    Figure("Q1, Q4", "normal", "naive", "max_us", "exp2 normal mode: max (us)", at_most=3000, words="1.5-3 ms"),
    Figure("Q2", "normal", "naive", "ok_share", "exp2 normal mode: on time", at_least=0.90, words="90-97 %"),
    Figure("Q6", "mixed1", f"generation free, {TASK}", "ok_share", "exp3b mixed 1 ahead, free-running: on time",
           at_most=0.75, at_least=0.55, words="about 60-70 %"),
    Figure("Q9", "loaded", ALIGNED_TASK, "missed", "exp5 heavy load: missed events", at_most=0, words="none"),
    Figure("Q9", "loaded", ALIGNED_TASK, "mean_us", "exp5 heavy load: mean (us)", near_key=True),
)
GRADING_HEADERS = ["question", "figure", "the group's", "the key's", "expected (instructor's guide)", "as expected?"]


@dataclass(frozen=True)
class Value:
    """A graded figure of some runs: X, and what the cell says beside it (missed events under host stalls, the
    measurable events a share is over)."""
    x: float | None
    stat: str
    stall_missed: int = 0
    measurable: int | None = None
    events: int | None = None

    @property
    def text(self) -> str:
        out = fig_text(self.stat, self.x)
        if self.stat == "missed" and self.stall_missed:
            out += f" (+{self.stall_missed} under host stalls: the rig's)"
        if self.stat == "ok_share" and self.measurable is not None and self.events and self.measurable < self.events:
            out += f" of {self.measurable} measurable"
        return out


def figure_value(df: pd.DataFrame, meta: dict[str, dict], stat: str) -> Value:
    """STAT over the rows DF of the runs META (pooled): a summarize figure, or the system's missed events and the
    share on time over the measurable events."""
    pooled = df.assign(run="all")
    s = summarize(RunSet(pooled, {"all": next(iter(meta.values()))}), by="run", valid_only=False)
    if s.empty:
        return Value(None, stat)
    row = s.iloc[0]
    measurable = df["measurable"].astype(bool)
    missed = df["outcome"].astype(str) == "missed"
    if stat == "missed":
        return Value(int((missed & measurable).sum()), stat, stall_missed=int((missed & ~measurable).sum()))
    if stat == "ok_share":
        n = int(measurable.sum())
        ok = int(((df["outcome"].astype(str) == "ok") & measurable).sum())
        return Value(ok / n if n else None, stat, measurable=n, events=len(df))
    return Value(row[stat], stat)


def fig_text(stat: str, x: Any) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "-"
    if stat == "ok_share":
        return f"{100 * float(x):.1f} %"
    if stat == "missed":
        return str(int(x))
    return _cell("var (us²)" if stat == "var_us2" else stat, float(x))


def key_run(key: RunSet | None, f: Figure) -> str | None:
    """The key's run F's figure is read from: its valid AVR run of the experiment and variant (the paced one when
    the key has both, as the students' runs are paced); None when the key has none."""
    if key is None:
        return None
    p = next(p for p in PAPER if p.key == f.experiment)
    runs = [r for r, m in key.meta.items() if m.get("valid", True) and profiler_kind(m) == "avr"
            and p.match(m.get("config", {})) and variant(m["config"]) == f.variant]
    runs.sort(key=lambda r: not (key.meta[r].get("target") or {}).get("paced"))
    return runs[0] if runs else None


def key_value(key: RunSet | None, f: Figure) -> Value:
    """F's figure in the key's run key_run names. The key's `run` column is categorical with every run of the
    key: the run's rows are taken alone, so the figure is that run's."""
    run = key_run(key, f)
    if run is None:
        return Value(None, f.stat)
    return figure_value(key.df[key.df["run"] == run], {run: key.meta[run]}, f.stat)


def key_figure(key: RunSet | None, f: Figure) -> float | None:
    return key_value(key, f).x


def judge(f: Figure, x: float | None, key: float | None, bench: bool) -> str:
    """'yes', 'no: WHY' or '-' (nothing to check: no figure, no key for a key figure, no range off the bench). A
    figure out of its range says so whether the key's is or not, and adds when the key's own is out too: the
    range may not fit this machine (a key made here gave an exp2 max of 13.5 ms, against 1.5-3 ms)."""
    out = _judge(f, x, key, bench)
    if out.startswith("no: ") and not f.near_key and key is not None and key == key \
            and _judge(f, key, None, True).startswith("no: "):
        out += f"; the key's {fig_text(f.stat, key)} too{RANGE_OFF}"
    return out


RANGE_OFF = ": the range may not fit this machine"    # judge's words when the key's own figure fails a range too


def failed(verdict: str) -> bool:
    """A check the group's figure failed and the key's passed (a range the key fails too is the range's)."""
    return verdict.startswith("no") and not verdict.endswith(RANGE_OFF)


def _judge(f: Figure, x: float | None, key: float | None, bench: bool) -> str:
    if x is None or x != x:
        return "-"
    if f.near_key:
        if key is None or key != key:
            return "-"
        tol = max(1.0, 0.1 * abs(key))
        if abs(x - key) <= tol:
            return "yes"
        return f"no: {abs(x - key):.2f} us from the key's {fig_text(f.stat, key)} (more than {tol:.2f} us)"
    if not f.bounded or not bench:
        return "-"
    if f.at_most is not None and x > f.at_most:
        return f"no: {fig_text(f.stat, x)} is above {fig_text(f.stat, f.at_most)}"
    if f.at_least is not None and x < f.at_least:
        return f"no: {fig_text(f.stat, x)} is below {fig_text(f.stat, f.at_least)}"
    return "yes"


def _absent(rows: list[Row]) -> str:
    """The group's cell of a figure it has no valid run for, from the experiment table's rows of that variant:
    'unreadable' (a file the reader refused would have filled it), 'no valid run', 'missing'."""
    flags = " ".join(str(r.values.get("flags") or "") for r in rows)
    if "unreadable" in flags:
        return "unreadable"
    if any(r.left_out for r in rows):
        return "no valid run"
    return "missing"


@dataclass(frozen=True)
class Graded:
    """One figure of one group: the table's cells and the verdict alone ('yes', 'no: ...', '-', or the absent
    cell's word: missing, unreadable, no valid run)."""
    figure: Figure
    group: str
    key: str
    verdict: str
    absent: str | None = None

    @property
    def cells(self) -> list[str]:
        return [self.figure.question, self.figure.what, self.group, self.key, self.figure.expected_text,
                self.verdict]


def grade(data: RunSet, key: RunSet | None, rows: dict[str, list[Row]]) -> list[Graded]:
    """GRADING for one group: ROWS, the group's AVR rows of each experiment table (by PaperRow.key), its runs in
    DATA; the key's runs in KEY (None: no key)."""
    out = []
    for f in GRADING:
        mine = [r for r in rows.get(f.experiment, []) if r.variant == f.variant]
        row = next((r for r in mine if r.shown and r.stats is not None), None)
        k = key_value(key, f)
        if row is None:
            why = _absent(mine)
            out.append(Graded(f, why, k.text, "-", why))
            continue
        v = figure_value(data.df[data.df["run"].isin(row.shown)], {r: data.meta[r] for r in row.shown}, f.stat)
        bench = all(run_kind(data.meta[r]).endswith("bench") for r in row.shown)
        out.append(Graded(f, v.text, k.text, judge(f, v.x, k.x, bench)))
    return out
