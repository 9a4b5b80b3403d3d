"""`mmrig lab key`: every expected answer agrees with the key's own tables and figures, whatever its runs gave.

The key is rendered from prepared runs (mmanalysis.synth: the on-disk format of a real run, drawn from a model),
read back as `mmrig lab key` reads its own (mmrig.labkey.runs.read_key), in the situations a real key meets:
every run valid; the normal-mode run invalid (a host stall, paced); the free-running 1-tick-ahead run with the
largest jitter and a rare slow event; a run missing. Each answer's words are checked against the table or the
figures above them: the run named as having the largest jitter is the argmax of the jitter column, a run named
as having rare events has bins of 1 or 2 events, a question whose run is invalid or missing says "no valid run"
and asserts nothing about that run.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mmanalysis import synth

from mmrig.experiments import BY_NAME
from mmrig.labkey.render import QUESTIONS, render
from mmrig.labkey.runs import RUNS, KeyRun, read_key

PROTO_SIZES = ("| message | type | body bytes | wire bytes | ms at 9600 baud |\n|---|---|---|---|---|\n"
               "| SCHEDULE | 0x20 | 7 | 13 | 13.542 |\n")
NORMAL = "exp2-normal"
FREE = "exp3b-mixed-1ahead-free"


def option(run: KeyRun, name: str, default=None):
    o = run.options
    return o[o.index(name) + 1] if name in o else default


def set_latencies(rows, us: np.ndarray) -> None:
    """Replace the measured rows' latencies by US (one per measured row), in whole 16 MHz counts."""
    m = rows["outcome"].isin(["ok", "late"]).to_numpy()
    counts = np.round(np.asarray(us, dtype=float) * synth.TIMER_HZ / 1e6)
    rows.loc[m, "latency_counts"] = counts.astype(np.int64)
    rows.loc[m, "latency_us"] = counts * 1e6 / synth.TIMER_HZ
    rows.loc[m, "result_tc"] = rows.loc[m, "scheduled_tc"]
    rows.loc[m, "result_counts"] = counts.astype(np.int64)


def write_key_runs(folder: Path, count: int = 120, invalid: tuple[str, ...] = (), missing: tuple[str, ...] = (),
                   tweak=None) -> None:
    """Every run of RUNS as a synthetic run in FOLDER, configured as the key's; INVALID marked invalid (by bench
    lag, as a paced run on a busy host), MISSING not written; TWEAK(name, rows) may change a run's rows."""
    for i, run in enumerate(RUNS):
        if run.name in missing:
            continue
        mode = option(run, "--mode", "mixed")
        distance = int(option(run, "--distance", 2))
        load = option(run, "--load", "idle")
        rows = synth.synthetic_events(mode, distance, load == "heavy", run.count or count, seed=11 + i)
        if tweak is not None:
            tweak(run.name, rows)
        meta = synth.sidecar(run.name, rows, load=load == "heavy", valid=run.name not in invalid)
        meta["config"].update(generation=option(run, "--generation", "aligned"), load=load,
                              dispatch=option(run, "--dispatch", "isr"),
                              executor_load_text=option(run, "--executor-load", "none"))
        meta["target"] = {"kind": "bench", "paced": not run.lockstep, "lockstep": run.lockstep, "profiler": None,
                          "executor": None, "note": "mmanalysis.synth: drawn from a model, not measured"}
        if run.name in invalid:
            meta["invalid_reason"] = "21 of 120 events (17.5%) not measurable, more than 5%: a host stall"
            meta["invalid_reasons"] = [{"code": "bench_lag"}]
        synth.write_run(folder / run.name, rows, meta)


def make(folder: Path, **kw) -> tuple[str, dict[str, str]]:
    write_key_runs(folder, **kw)
    text = render(read_key(folder, PROTO_SIZES), "mmrig lab key (test)", 120)
    parts = re.split(r"^## (Q\d+)\. .*$", text.split("## Runs and compute time")[0], flags=re.M)
    secs = dict(zip(parts[1::2], parts[2::2]))
    assert list(secs) == list(QUESTIONS)
    return text, secs


def figures(sec: str) -> str:
    return sec.split("Expected answer:")[0]


def expected(sec: str) -> str:
    return sec.split("Expected answer:")[1]


NO_VALID = re.compile(r"no valid run of `([^`]+)` \(.*?for figures of this machine", re.S)


def claims(sec: str) -> str:
    """The expected answer without its "no valid run of X ..." clauses: what it asserts from figures."""
    return NO_VALID.sub("", expected(sec))


def table(sec: str) -> list[dict[str, str]]:
    lines = [x for x in figures(sec).splitlines() if x.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in x.strip("|").split("|")))) for x in lines[2:]]


def number(cell: str) -> float:
    return float(cell.replace(",", "").replace(" us²", ""))


def check_q1(secs: dict[str, str], absent: set[str]) -> None:
    """Q1: runs said to be lower than the paper are those whose table row is lower in mean and variance; a run
    said to miss a 1 ms deadline has its max over 1 ms in the table; an absent run's row says no valid run."""
    rows = {r["run"].strip("`"): r for r in table(secs["Q1"])}
    lower = re.search(r"Mean and variance lower than the paper's: (.*?)\.(?: [A-Z]|\s*$)", claims(secs["Q1"]), re.S)
    said_lower = set(re.findall(r"`([^`]+)` \(mean", lower.group(1))) if lower else set()
    for name, r in rows.items():
        paper = BY_NAME[name].paper
        if name in absent:
            assert r["verdict"] == "no valid run", r
            assert f"no valid run of `{name}`" in expected(secs["Q1"])
            continue
        if paper is None or paper.mean_us is None:
            continue
        is_lower = number(r["mean us"]) < paper.mean_us and number(r["var us²"]) < paper.var_us2
        assert (name in said_lower) == is_lower, (name, r, said_lower)
    for name in re.findall(r"`([^`]+)` has its max at ([\d.]+) us", claims(secs["Q1"])):
        assert number(rows[name[0]]["max us"]) >= 1000 and name[0] not in absent


def check_q8(secs: dict[str, str], absent: set[str]) -> None:
    """Q8: the run named as having the largest jitter is the argmax of the table's jitter column, its mode the
    table's."""
    j = table(secs["Q8"])
    top = max(j, key=lambda r: number(r["max jitter us"]))
    m = re.search(r"The largest maximum jitter is `([^`]+)`'s \((\w+) mode", expected(secs["Q8"]))
    assert m and m.group(1) == top["run"].strip("`") and m.group(2) == top["mode"], (m and m.groups(), top)
    if top["mode"] != "normal":
        assert "normal mode has the largest jitter" not in expected(secs["Q8"]).lower()
    assert not {r["run"].strip("`") for r in j} & absent


def check_q5(secs: dict[str, str], absent: set[str]) -> None:
    """Q5: every run whose histogram has bins of 1 or 2 events is named with them; "nothing to hide" only where
    every event is in one bin."""
    for line in figures(secs["Q5"]).splitlines():
        m = re.match(r"- `([^`]+)` .*?tallest bin (\d+) events; (\d+) bin\(s\)", line)
        if not m:
            continue
        name, bins = m.group(1), int(m.group(3))
        assert (f"`{name}`: " in expected(secs["Q5"])) == (bins > 0), (name, line, expected(secs["Q5"]))
        if bins:
            assert not re.search(rf"Nothing to hide in [^.]*`{re.escape(name)}`", expected(secs["Q5"]))
    assert "mixed runs have one bin only" not in expected(secs["Q5"])


def check_absent(secs: dict[str, str], absent: set[str]) -> None:
    """Every question whose run is absent (invalid or missing) says "no valid run" and claims nothing of it."""
    needs = {"Q1": [NORMAL, FREE, "exp4-mixed-2ahead"], "Q2": [NORMAL], "Q3": [NORMAL, FREE],
             "Q6": [FREE, "exp4-mixed-2ahead"], "Q9": ["exp4p-mixed-2ahead-paced", "exp5-mixed-2ahead-load"],
             "Q10": ["inside-loaded"]}
    for q, runs in needs.items():
        for name in set(runs) & absent:
            assert f"no valid run of `{name}`" in expected(secs[q]), (q, name, expected(secs[q]))
            assert f"`{name}`" not in claims(secs[q]), (q, name, claims(secs[q]))
    if NORMAL in absent:
        for q in ("Q1", "Q3", "Q8"):
            assert "normal mode" not in claims(secs[q]).lower() and "normal vs mixed is" not in claims(secs[q]), q
            assert "14.5 ms" not in claims(secs[q]) or q == "Q2", q


def check_consistent(secs: dict[str, str], absent: set[str]) -> None:
    """Every check, each on its own: one failure lists every contradiction of the key, not only the first."""
    failed = []
    for check in (check_q1, check_q8, check_q5, check_absent):
        try:
            check(secs, absent)
        except AssertionError as exc:
            failed.append(f"{check.__name__}: {str(exc)[:600]}")
    assert not failed, "\n".join(failed)


def test_all_runs_valid(tmp_path):
    text, secs = make(tmp_path)
    check_consistent(secs, set())
    assert "no valid run" not in text
    # the model's normal mode is milliseconds late with a wide spread: its jitter is the largest
    assert "The largest maximum jitter is `exp2-normal`'s (normal mode" in secs["Q8"]
    assert "Largest difference in latency: normal vs mixed 2 ahead" in secs["Q3"]


def test_normal_mode_invalid(tmp_path):
    text, secs = make(tmp_path, invalid=(NORMAL, "exp2b-normal-disciplined"))
    check_consistent(secs, {NORMAL})
    assert expected(secs["Q2"]).strip().startswith(f"no valid run of `{NORMAL}` (its run is invalid: 21 of 120")
    assert "--mode normal --distance 1 --count 200 --out results/exp2-normal --force" in secs["Q2"]
    assert "**No valid run of" in text and f"`{NORMAL}` (paced, INVALID)" in text


def test_free_running_run_has_the_largest_jitter_and_a_rare_event(tmp_path):
    def tweak(name, rows):
        n = int(rows["outcome"].isin(["ok", "late"]).sum())
        if name == NORMAL:        # a steady normal mode: 500 us, a few us of spread
            set_latencies(rows, 500 + np.arange(n) % 3)
        elif name == FREE:        # one slow dispatch at 950 us among ~40 us
            lat = rows.loc[rows["outcome"].isin(["ok", "late"]), "latency_us"].to_numpy(dtype=float, copy=True)
            lat[n // 2] = 950.0
            set_latencies(rows, lat)
    text, secs = make(tmp_path, tweak=tweak)
    check_consistent(secs, set())
    assert f"The largest maximum jitter is `{FREE}`'s (mixed mode" in secs["Q8"]
    assert f"`{FREE}`: " in expected(secs["Q5"])


def test_a_run_missing(tmp_path):
    text, secs = make(tmp_path, missing=(FREE, "inside-loaded"))
    check_consistent(secs, {FREE, "inside-loaded"})
    assert f"no valid run of `{FREE}` (no run of it in this key)" in secs["Q6"]
    assert f"`{FREE}` (paced, NOT MADE)" in text


def test_the_key_runs_exp3b_paced_as_the_students_do():
    free = next(r for r in RUNS if r.name == FREE)
    assert not free.lockstep and "--unpaced" not in free.argv(Path("x"), 10)
