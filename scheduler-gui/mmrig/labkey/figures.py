"""The figures the lab key's answers quote (mmrig.labkey), each read from a run the key made (labkey_runs.Made)
or from `mmrig proto sizes`, and the words an answer gives instead when its run is invalid."""

from __future__ import annotations

from typing import Any

import numpy as np

from mmrig.labkey.runs import RUNS, Key, KeyRun, Made


def f(x: Any, spec: str = ".3f") -> str:
    """A figure as the key prints it: SPEC's format, '-' for a missing one (None, NaN, not a number)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if v != v else format(v, spec)


def schedule_line_ms(proto_sizes: str) -> tuple[int, float]:
    """(wire bytes, ms at 9600 baud) of the SCHEDULE frame, from `mmrig proto sizes --baud 9600`."""
    for line in proto_sizes.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "SCHEDULE":
            return int(cells[3]), float(cells[4])
    raise ValueError("no SCHEDULE line in `mmrig proto sizes`")


def experiment_runs(runs: dict[str, Made]) -> list[Made]:
    """The key's valid runs of the five experiments (not step 5's traced `inside-*` runs), in RUNS' order."""
    return [runs[r.name] for r in RUNS if r.name in runs and runs[r.name].valid and not r.name.startswith("inside")]


def missing_experiment_runs(runs: dict[str, Made]) -> list[str]:
    """The experiment runs of RUNS (not step 5's) the key has no valid run of."""
    return [r.name for r in RUNS if not r.name.startswith("inside") and (r.name not in runs or not runs[r.name].valid)]


def histogram(made: Made) -> dict[str, Any]:
    """The run's latency histogram: its sidecar's `histogram` (what the GUI and the report draw), or, for a run
    whose sidecar has none, the same histogram computed from its rows at the mode's default bin width."""
    h = made.meta.get("histogram")
    if h and h.get("counts") is not None:
        return h
    from mmanalysis.histogram import default_bin_us, latency_histogram

    mode = str((made.meta.get("config") or {}).get("mode") or "mixed")
    return latency_histogram(made.df.itertuples(index=False), default_bin_us(mode))


def tail_events(made: Made) -> tuple[int, int, int, float | None, float | None]:
    """From the run's latency histogram (`histogram`): (tallest bin's count, bins holding 1 or 2 events, events
    in them, their lowest and highest bin edge in us). On a linear count axis such a bar is at most
    2 / tallest of the plot's height; on log counts it is a third of the way up or more."""
    h = histogram(made)
    counts = np.asarray(h.get("counts") or [], dtype=float)
    if not len(counts) or counts.max() == 0:
        return 0, 0, 0, None, None
    small = (counts > 0) & (counts <= 2)
    idx = np.flatnonzero(small)
    lo = float(idx[0] * h["bin_us"]) if len(idx) else None
    hi = float((idx[-1] + 1) * h["bin_us"]) if len(idx) else None
    return int(counts.max()), int(small.sum()), int(counts[small].sum()), lo, hi


def filled_bins(made: Made) -> int:
    """How many bins of the run's latency histogram hold an event."""
    return int((np.asarray(histogram(made).get("counts") or [], dtype=float) > 0).sum())


def reasons(made: Made) -> str:
    """The reasons of the events not ok, with their counts ('past_due 5'), 'none' or '-' (no reason column)."""
    if "reason" not in made.df:
        return "-"
    r = made.df.loc[made.df["outcome"].astype(str) != "ok", "reason"].dropna().astype(str).value_counts()
    return ", ".join(f"{k} {v}" for k, v in r.items()) or "none"


def slack_table(made: Made) -> dict[str, int]:
    """The notebook's slack table for one mixed run: every event, missed ones included."""
    df = made.df
    sl = df["slack_ticks"].astype(float)
    cls = np.where(sl.isna(), "no ACK / refused", np.where(sl <= 0, "slack <= 0", "slack > 0"))
    out: dict[str, int] = {}
    for c, o in zip(cls, df["outcome"].astype(str)):
        out[f"{c} / {o}"] = out.get(f"{c} / {o}", 0) + 1
    return out


def valid(key: Key, name: str) -> Made | None:
    """The key's run NAME when it is there and valid; None otherwise (`no_valid_run` says why)."""
    m = key.runs.get(name)
    return m if m is not None and m.valid else None


def key_run(name: str) -> KeyRun | None:
    return next((r for r in RUNS if r.name == name), None)


# the students' run that answers what a key run would have (the key's paced exp4 is their exp4)
STUDENTS_RUN = {"exp4p-mixed-2ahead-paced": "results/exp4-mixed-2ahead", "inside-idle": "inside/idle",
                "inside-loaded": "inside/loaded"}


def advice(name: str) -> str:
    """What to do when the key has no valid run of NAME: the students' own run answers it, and how to make it."""
    run = key_run(name)
    theirs = STUDENTS_RUN.get(name, f"results/{name}")
    how = ""
    if run is not None:
        lock = ["--unpaced"] if run.lockstep else []
        how = (f"; if theirs is invalid too, it is run again alone: `mmrig run {' '.join(run.options + tuple(lock))} "
               f"--count {run.count or 200} --out {theirs} --force` (docs/lab.md, step {5 if run.count else 3})")
    return (f"the students' own valid `{theirs}` answers it (judge it against docs/lab-instructor.md, \"Expected "
            f"ranges\"){how}; regenerate the key, with nothing else running, for figures of this machine.")


def no_valid_run(key: Key, name: str, what: str = "this question") -> str:
    """The words an answer gives instead of figures when the key has no valid run of NAME (missing or invalid):
    always starting "no valid run of `NAME`", which the key's test looks for."""
    m = key.runs.get(name)
    why = ("no run of it in this key" if m is None
           else f"its run is invalid: {m.meta.get('invalid_reason') or 'no reason given'}")
    return f"no valid run of `{name}` ({why}): {what} cannot be answered from this key; {advice(name)}"


def priority_words(made: Made) -> str:
    """The bench's scheduling, memory lock and priority fallback during the run (its sidecar's)."""
    host = (made.meta.get("bench") or {}).get("host") or {}
    load = made.meta.get("load") or {}
    return (f"bench scheduling {host.get('sched', '?')}, memory locked {host.get('mlock', '?')}, "
            f"bench priority fallback {load.get('bench_priority', '?')}")
