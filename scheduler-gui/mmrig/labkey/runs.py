"""The lab key's runs (mmrig.labkey): which runs the key makes, lockstep or paced, and making them through
`mmrig run` in a subprocess, as a student would, once more after a rig error or, paced, a host stall."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

from mmanalysis.safefiles import output_folder

from mmrig.experiments import BY_NAME
from mmrig.labkey.privilege import OWN, STUDENT, as_student, scheduling


@dataclass(frozen=True)
class KeyRun:
    """One run the key makes: its name (the handout's), `mmrig run` options, lockstep or paced."""
    name: str
    options: tuple[str, ...]
    lockstep: bool
    count: int | None = None      # None: the key's --count; step 5's runs are the handout's 60 events

    @classmethod
    def of(cls, experiment: str, lockstep: bool, name: str | None = None) -> "KeyRun":
        """A run of one of the paper's experiments (mmrig.experiments), under its own name unless NAME."""
        return cls(name or experiment, BY_NAME[experiment].run_options(), lockstep)

    def argv(self, out: Path, count: int) -> list[str]:
        n = self.count if self.count is not None else count
        return ["run", *self.options, "--count", str(min(n, count)), "--quiet", "--force", "-o", str(out / self.name),
                *(["--unpaced"] if self.lockstep else [])]


# Lockstep where the answer must not depend on the host, paced where the question is about the PC.
RUNS: tuple[KeyRun, ...] = (
    KeyRun.of("exp1-verification", lockstep=True),
    KeyRun.of("exp1i-verification-isr", lockstep=True),      # ours beside the paper's design: the dispatch alone differs
    KeyRun.of("exp2-normal", lockstep=False),
    KeyRun.of("exp3-mixed-1ahead", lockstep=True),
    # paced, as the students run it (the demo): free-running generation's share on time depends on where the
    # PC's 97 ms timer falls in the tick and on how late the PC sends, both the PC's timing; in lockstep it
    # would be one fixed pattern, not what a student's paced run shows
    KeyRun.of("exp3b-mixed-1ahead-free", lockstep=False),
    KeyRun.of("exp4-mixed-2ahead", lockstep=True),
    KeyRun.of("exp4i-mixed-2ahead-isr", lockstep=True),
    # experiment 4 paced: the idle side of Q9's heavy load, on the same host as experiment 5
    KeyRun.of("exp4-mixed-2ahead", lockstep=False, name="exp4p-mixed-2ahead-paced"),
    KeyRun.of("exp5-mixed-2ahead-load", lockstep=False),
    # step 5: task dispatch traced, the executor idle and under its own load
    KeyRun("inside-idle", ("--mode", "mixed", "--dispatch", "task", "--trace"), lockstep=True, count=60),
    KeyRun("inside-loaded", ("--mode", "mixed", "--dispatch", "task", "--trace", "--executor-load",
                             "cpu,periodic=10ms/2ms"), lockstep=True, count=60),
)


@dataclass
class Made:
    """A run the key made: its sidecar, its rows (mmanalysis.read_run), and how long it took."""
    run: KeyRun
    meta: dict[str, Any]
    df: Any
    wall_s: float
    tries: int
    command: str

    @property
    def valid(self) -> bool:
        return bool(self.meta.get("valid", True))

    @property
    def summary(self) -> dict[str, Any]:
        return self.meta.get("summary") or {}

    @cached_property
    def summary_row(self) -> dict[str, Any]:
        """The run's stats.summarize row, computed once: several answers read it (Q7, Q8, ...)."""
        from mmanalysis.reader import RunSet
        from mmanalysis.stats import summarize

        return summarize(RunSet(self.df, {self.run.name: self.meta})).iloc[0].to_dict()

    @cached_property
    def link(self):
        """The run's propagation.link_stats, computed once: several answers read it."""
        from mmanalysis.propagation import link_stats

        return link_stats(self.df, self.meta)


@dataclass
class Key:
    """What the key is computed from: the runs by name, `mmrig proto sizes`' table, each command's wall time."""
    runs: dict[str, Made] = field(default_factory=dict)
    proto_sizes: str = ""
    timings: list[tuple[str, float]] = field(default_factory=list)
    # made with the user's own privileges (True), as a student's (False: privilege.py); None: read from runs made
    # earlier (read_key), how they were made is not known
    realtime: bool | None = None

    @property
    def scheduling(self) -> str:
        """How the paced runs were scheduled, in words and from their sidecars."""
        got = scheduling([m.meta for m in self.runs.values() if not m.run.lockstep])
        asked = "runs made earlier" if self.realtime is None else OWN if self.realtime else STUDENT
        return f"{asked}; the paced runs' benches got: {got}"


def mmrig_command() -> list[str]:
    """The `mmrig` command line of this interpreter (works in the checkout and installed alike)."""
    return [sys.executable, "-m", "mmrig"]


LEFT_FILES = (0, 1, 3)     # `mmrig` exit codes after which the run's files are there: 1 a gate (none asked), 3 invalid


def run_mmrig(argv: list[str], log: Callable[[str], None] | None, check: bool = True,
              realtime: bool = False) -> subprocess.CompletedProcess:
    """`mmrig ARGV` in a subprocess, as a student's (privilege.as_student) unless REALTIME; RuntimeError (with its
    stderr's end) if CHECK and it left no files."""
    if log:
        log("mmrig " + " ".join(argv))
    r = subprocess.run([*mmrig_command(), *argv], capture_output=True, text=True,
                       preexec_fn=None if realtime else as_student)
    if check and r.returncode not in LEFT_FILES:
        raise RuntimeError(f"mmrig {' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r


TRIES = 2     # a run is made at most twice: after a rig error (exit 2), or paced and invalid by bench lag alone


def make_run(run: KeyRun, out: Path, count: int, log: Callable[[str], None] | None = print,
             realtime: bool = False) -> Made:
    from mmanalysis.reader import read_run

    t0 = time.monotonic()
    argv = run.argv(out, count)
    for attempt in range(1, TRIES + 1):
        r = run_mmrig(argv, log, check=attempt == TRIES, realtime=realtime)   # the last try's rig error raises
        if r.returncode not in LEFT_FILES:
            # a rig error (the bench did not start or answer in time, e.g. on a machine busy with other work)
            if log:
                log(f"  {run.name}: rig error ({r.returncode}: {r.stderr.strip().splitlines()[-1:]}), running it again")
            continue
        meta = json.loads((out / f"{run.name}.json").read_text())
        codes = {x.get("code") for x in meta.get("invalid_reasons") or []}
        if meta.get("valid", True) or run.lockstep or codes != {"bench_lag"} or attempt == TRIES:
            break
        if log:
            log(f"  {run.name}: invalid by bench lag ({meta.get('invalid_reason')}), running it again")
    data = read_run(out / f"{run.name}.csv")
    return Made(run, meta, data.df, time.monotonic() - t0, attempt, "mmrig " + " ".join(argv))


def read_made(run: KeyRun, folder: Path, command: str = "") -> Made | None:
    """RUN as made earlier into FOLDER (its NAME.csv and NAME.json), None when it is not there."""
    from mmanalysis.reader import read_run

    csv = folder / f"{run.name}.csv"
    if not csv.is_file() or not csv.with_suffix(".json").is_file():
        return None
    data = read_run(csv)
    meta = dict(next(iter(data.meta.values())))
    meta.pop("_csv", None)
    return Made(run, meta, data.df, 0.0, 1, command or f"(read from {csv})")


def read_key(folder: Path, proto_sizes: str) -> Key:
    """A Key of the runs of RUNS already in FOLDER (a run not there is left out: the key says so), with
    PROTO_SIZES as `mmrig proto sizes --baud 9600`'s table: to render a key again, or from prepared runs."""
    key = Key(proto_sizes=proto_sizes)
    for run in RUNS:
        made = read_made(run, folder)
        if made is not None:
            key.runs[run.name] = made
    return key


def make_key(out: Path, count: int = 200, log: Callable[[str], None] | None = print, realtime: bool = False) -> Key:
    """Every run of RUNS into OUT, as a student's runs (privilege.as_student) unless REALTIME, and `mmrig proto
    sizes --baud 9600`'s table."""
    output_folder(out)          # made if missing (its parent must exist), never through a planted link
    key = Key(realtime=realtime)
    t0 = time.monotonic()
    key.proto_sizes = run_mmrig(["proto", "sizes", "--baud", "9600"], log).stdout
    key.timings.append(("mmrig proto sizes --baud 9600", time.monotonic() - t0))
    for run in RUNS:
        made = make_run(run, out, count, log, realtime)
        key.runs[run.name] = made
        key.timings.append((made.command, made.wall_s))
    return key
