"""Runs grouped by profiler kind: the sidecar's target.profiler_kind ("avr" or "8051"; a sidecar
without it is from before the 8051 bench: "avr") as a column of read_runs, a key of the group summary, rows of
their own in the comparison with the paper, a column of the run table, and each run's kind in figure labels
when two kinds are drawn. Synthetic runs; the 8051 ones shifted by the polling the bench measured (about 70 us)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmanalysis import plots, profiler_kind, read_run, read_runs, synth
from mmanalysis.report import comparison, headline, report
from mmanalysis.stats import summarize

POLLING_US = 70.0    # the 8051's mean stamp delay on the bench (mmrig run --profiler-kind 8051: 70 us)


def write(out: Path, name: str, kind: str | None, seed: int) -> None:
    rows = synth.synthetic_events("mixed", 2, False, 60, seed)
    if kind == "8051":
        rows["latency_us"] = rows["latency_us"] + POLLING_US
    meta = synth.sidecar(name, rows)
    meta["config"]["load"] = "idle"
    if kind is not None:                 # None: a sidecar from before the 8051 bench, no key at all
        meta["target"]["profiler_kind"] = kind
    synth.write_run(out / name, rows, meta)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("kinds")
    write(d, "m2-avr", "avr", 1)
    write(d, "m2-old", None, 2)
    (d / "8051").mkdir()
    write(d / "8051", "m2-8051", "8051", 3)
    return d


def test_a_sidecar_without_the_key_is_avr(runs) -> None:
    assert profiler_kind({"target": {"kind": "bench"}}) == "avr" and profiler_kind({}) == "avr"
    assert profiler_kind({"target": {"profiler_kind": "8051"}}) == "8051"
    assert set(read_run(runs / "m2-old.csv").df["profiler_kind"]) == {"avr"}


def test_read_runs_has_a_profiler_kind_column_to_group_by(runs) -> None:
    data = read_runs(runs)
    by_run = data.df.groupby("run", observed=True)["profiler_kind"].first().astype(str).to_dict()
    assert by_run == {"m2-8051": "8051", "m2-avr": "avr", "m2-old": "avr"}
    assert list(data.df["profiler_kind"].cat.categories) == ["avr", "8051"]
    means = data.df[data.df["outcome"].isin(["ok", "late"])].groupby("profiler_kind", observed=True)["latency_us"].mean()
    assert means["8051"] - means["avr"] > POLLING_US / 2       # what pandas users group by it for


def test_group_summary_never_pools_the_two_kinds(runs) -> None:
    data = read_runs(runs)
    g = summarize(data, by="group")
    assert sorted(g["profiler_kind"].astype(str)) == ["8051", "avr"]
    assert dict(zip(g["profiler_kind"].astype(str), g["events"])) == {"avr": 120, "8051": 60}
    per_run = summarize(data).set_index("run")
    assert per_run.loc["m2-old", "profiler_kind"] == "avr" and per_run.loc["m2-8051", "profiler_kind"] == "8051"


def test_comparison_and_headline_have_a_row_per_kind(runs) -> None:
    data = read_runs(runs)
    comp = comparison(data)
    rows = comp[comp["section"] == "7.4"]
    m2 = rows[rows["experiment"] == "mixed, 2 ticks ahead"]
    assert list(m2["profiler"]) == ["avr", "8051"]
    assert list(m2["runs"]) == ["m2-avr, m2-old", "m2-8051"]
    avr, i8051 = m2["mean (us)"].tolist()
    assert i8051 - avr > POLLING_US / 2
    lines = headline(data, comp)
    assert any("mixed, 2 ticks ahead [profiler 8051]:" in x for x in lines)
    assert any("mixed, 2 ticks ahead [profiler avr]:" in x for x in lines)


def test_one_kind_leaves_labels_and_headline_as_they_were(runs) -> None:
    data = read_runs([runs / "m2-avr.csv", runs / "m2-old.csv"])
    assert plots._label(data, "m2-avr") == "m2-avr"
    assert not any("[profiler" in x for x in headline(data, comparison(data)))


def test_report_labels_runs_by_kind(runs, tmp_path) -> None:
    data = read_runs(runs)
    assert plots._label(data, "m2-8051") == "m2-8051 [8051]" and plots._label(data, "m2-old") == "m2-old [avr]"
    out = report(data, tmp_path, figures=False)
    md = out["md"].read_text()
    assert "profilers: avr, 8051 (grouped apart" in md
    assert "| profiler_kind |" in md and "| profiler |" in md


def test_mmrig_report_of_results_keeps_the_8051_demos_runs_apart_by_name(tmp_path) -> None:
    """The lab's step 6: results/NAME (AVR) and results/8051/NAME (the 8051 demo) have one name; `mmrig report
    results` names the 8051 one "NAME [8051]" (once), the AVR one NAME, and an 8051 attempt set aside stays set
    aside."""
    import subprocess
    import sys

    from mmanalysis.selection import is_set_aside

    res = tmp_path / "results"
    write(res, "exp4-mixed-2ahead", "avr", 1)
    (res / "8051").mkdir()
    write(res / "8051", "exp4-mixed-2ahead", "8051", 2)
    done = subprocess.run([sys.executable, "-m", "mmanalysis", "report", str(res), "--out", str(tmp_path / "rep"),
                           "--no-figures"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "exp4-mixed-2ahead [8051]" in md and "[8051] [8051]" not in md and str(res) not in md
    assert is_set_aside("exp4-mixed-2ahead.attempt1 [8051]") and not is_set_aside("exp4-mixed-2ahead [8051]")
