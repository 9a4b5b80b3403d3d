"""The class overview (mmanalysis.classreport) on generated hand-ins (mmanalysis.synth.class_handins): which
folders are classes, one table per experiment with a row per group and the right flags, one CDF per experiment
with one line per valid group (a group's colour the same in every figure, no overlapping labels, the axis
fitting the data), bad group folders as one line each, never a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.colors import to_hex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import edit_line  # noqa: E402
from test_figures import check_axis, check_no_overlap, refs  # noqa: E402

from mmanalysis import classreport, measured, synth  # noqa: E402
from mmanalysis.paper import PAPER  # noqa: E402
from mmanalysis.axes import LOG_RATIO  # noqa: E402

GROUPS = [f"group-0{i}" for i in range(1, 6)]


@pytest.fixture(scope="module")
def class_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("class") / "class"
    synth.class_handins(d, groups=5, count=40, seed=1)
    synth.write_experiments(d / "group-01" / "practice", count=20)   # not in results/: never read
    return d


@pytest.fixture(scope="module")
def cr(class_dir):
    return classreport.read_class(class_dir)


@pytest.fixture(scope="module")
def rep(cr, tmp_path_factory):
    return classreport.class_report(cr, tmp_path_factory.mktemp("class-report"))


def test_which_folders_are_classes(class_dir, experiments_dir, tmp_path):
    assert classreport.is_class_folder(class_dir)
    assert not classreport.is_class_folder(class_dir / "group-01")          # a group: it has results/
    assert not classreport.is_class_folder(class_dir / "group-01" / "results")   # runs of its own
    assert not classreport.is_class_folder(experiments_dir)
    camp = tmp_path / "campaign"                        # a sweep campaign: campaign.json, its runs in points/
    synth.write_experiment(camp / "points", "mixed-2ahead", count=10)
    (camp / "campaign.json").write_text("{}")
    assert not classreport.is_class_folder(camp)
    (tmp_path / "empty" / "a").mkdir(parents=True)
    assert not classreport.is_class_folder(tmp_path / "empty")


def test_groups_and_their_runs(cr):
    assert [g.name for g in cr.groups] == GROUPS and not cr.problems
    runs = {g.name: len(g.runs) for g in cr.groups}
    # group-01's practice/ folder is not its hand-in; group-02 has a set-aside attempt; group-05 no experiment 5
    assert runs == {"group-01": 5, "group-02": 6, "group-03": 5, "group-04": 5, "group-05": 4}
    assert all(r.split("/")[0] == cr.data.meta[r]["_group"] for r in cr.data.runs)


def test_one_table_per_experiment_a_row_per_group_and_the_flags(rep):
    md = rep.md.read_text()
    for p in PAPER:
        assert f"## {p.section} {p.experiment}\n" in md
    table = pd.read_csv(rep.table, keep_default_na=False)
    for p in PAPER:
        rows = table[table["experiment"] == p.experiment]
        assert [g.split(" ")[0] for g in rows["group"]] == GROUPS, p.key
    by = {(p.key, r["group"].split(" ")[0]): r
          for p in PAPER for _, r in table[table["experiment"] == p.experiment].iterrows()}
    for p in PAPER:     # generated hand-ins: synthetic whatever they pose as
        assert by[(p.key, "group-01")]["flags"] == "SYNTHETIC (bench-like)"
        assert by[(p.key, "group-03")]["flags"] == "SYNTHETIC (boards-like)"
        assert by[(p.key, "group-04")]["flags"] == "SYNTHETIC"
    normal2 = by[("normal", "group-02")]
    assert normal2["runs"] == "2_normal"          # the valid retry, the attempt only flagged
    assert "2_normal.attempt1: set-aside attempt; invalid: the bench fell behind" in normal2["flags"]
    loaded2 = by[("loaded", "group-02")]
    assert loaded2["verdict"].startswith("not a result") and "invalid: the bench fell behind" in loaded2["flags"]
    assert loaded2["runs"] == "5_mixed2_heavy (left out)"
    missing = by[("loaded", "group-05")]
    assert missing["flags"] == "missing" and missing["events"] == ""
    assert "(generation free)" in by[("mixed1", "group-03")]["group"]
    assert "**SYNTHETIC DATA in this class" in md
    html = rep.html.read_text()
    # a table per experiment, then one grading table per group with runs
    assert html.count("<table>") == len(PAPER) + len(GROUPS) and "<img src='figures/cdf-executor.svg'" in html


def _lines(fig) -> dict[str, str]:
    """group label -> the colour of its CDF line (the step line carries gid run:LABEL)."""
    return {ln.get_gid()[4:]: to_hex(ln.get_color()) for ln in fig.axes[0].lines
            if (ln.get_gid() or "").startswith("run:") and ln.get_drawstyle() == "steps-post"}


def test_one_cdf_per_experiment_one_line_per_valid_group(cr, rep):
    assert sorted(p.name for p in rep.figures.glob("cdf-*.png")) == sorted(f"cdf-{p.key}.png" for p in PAPER)
    colours: dict[str, set[str]] = {}
    for p in PAPER:
        rows = rep.tables[p.key]
        fig = classreport.experiment_figure(cr, p, rows)
        lines = _lines(fig)
        want = {r.values["group"] for r in rows if r.shown}
        assert set(lines) == want, p.key
        if p.key == "loaded":      # group-02's only run is invalid, group-05 has none
            assert not any(g.startswith(("group-02", "group-05")) for g in lines)
        assert len(set(lines.values())) == len(lines), f"groups share a colour in {p.key}"
        for label, c in lines.items():
            colours.setdefault(label.split(" ")[0], set()).add(c)
        check_no_overlap(fig)
        data = [*measured(cr.data.df[cr.data.df["run"].isin([x for r in rows for x in r.shown])])["latency_us"],
                *refs(fig, "x")]
        check_axis(fig.axes[0], "x", data)
        ax = fig.axes[0]
        # log where the groups' latencies span decades (normal's ms beside the executor's tens of us), else linear
        positive = [x for x in data if x > 0]
        assert ax.get_xscale() == ("log" if max(positive) / min(positive) >= LOG_RATIO else "linear"), p.key
        if p.mean_us is not None:
            assert refs(fig, "x") == [p.mean_us, p.mean_us]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        for r in rows:
            if not r.shown:
                assert any(t.startswith(r.values["group"] + ":") for t in legend), (p.key, legend)
    assert all(len(cs) == 1 for cs in colours.values()), f"a group changes colour between figures: {colours}"


def test_all_draws_left_out_runs_apart_marked(cr, rep):
    p = next(p for p in PAPER if p.key == "normal")
    fig = classreport.experiment_figure(cr, p, rep.tables["normal"], include_all=True)
    lines = _lines(fig)
    assert "group-02: 2_normal.attempt1" in lines and "group-02" in lines
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("group-02: 2_normal.attempt1 (INVALID)") for t in legend)
    check_no_overlap(fig)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmanalysis", "report", *args], capture_output=True, text=True,
                          timeout=120)


def test_cli_bad_group_folders_are_one_line_each(class_dir, tmp_path):
    cls = tmp_path / "class"
    shutil.copytree(class_dir, cls)
    (cls / "group-06").mkdir()                                              # nothing handed in
    bad = cls / "group-07"
    shutil.copytree(class_dir / "group-03", bad)                            # runs in the group folder itself
    edit_line(bad / "normal.csv", 9, "outcome", "maybe")
    (bad / "notes.csv").write_text("event,tag\n1,2\n")                       # a run CSV without its sidecar
    synth.write_experiment(cls / "group-01", "mixed-2ahead", count=10)     # beside results/: not read, said
    r = _run(str(cls), "--out", str(tmp_path / "rep"), "--no-figures")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and r.stderr == ""
    out = r.stdout.splitlines()
    assert len([x for x in out if not x.startswith(("problem:", "note:"))]) <= 4, r.stdout   # then one per problem
    assert out[1] == ("runs per group: group-01 5, group-02 6, group-03 5, group-04 5, group-05 4, group-06 0, "
                      "group-07 4")
    problems = [x for x in out if x.startswith("problem:")]
    assert problems == [
        "problem: group-01: 1 run(s) directly in group-01/ not read (mixed-2ahead.csv): the group's runs are those "
        "in group-01/results/",
        "problem: group-06: no runs (NAME.csv + NAME.json) in group-06/, no lab.html",
        "problem: group-07: group-07/notes.csv: no sidecar notes.json beside it, not read",
        "problem: group-07: unreadable: group-07/normal.csv: line 9, column 'outcome': unknown value 'maybe' "
        "(allowed: ok, late, early, missed, lost)"], out
    assert out[-1].startswith("report: ") and (tmp_path / "rep" / "report.html").is_file()
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Problems" in md and "line 9, column 'outcome'" in md
    # a class where no group has a readable run: exit 2, one line each, no report
    only_bad = tmp_path / "only-bad"
    shutil.copytree(bad, only_bad / "group-07")
    for f in (only_bad / "group-07").glob("*.json"):
        if f.stem != "normal":
            f.unlink()
            f.with_suffix(".csv").unlink()
    r = _run(str(only_bad), "--out", str(tmp_path / "rep2"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines()[0].endswith("a class folder, but no group has a readable run")
    assert len(r.stderr.splitlines()) == 3 and not (tmp_path / "rep2").exists()


def test_a_run_named_twice_in_a_group_is_told_apart(tmp_path):
    g = tmp_path / "class" / "g1" / "results"
    synth.write_experiment(g, "mixed-2ahead", count=10)
    csv, js = synth.write_experiment(g / "again", "mixed-2ahead", count=10, seed=5)
    assert json.loads(js.read_text())["name"] == "mixed-2ahead"
    cr = classreport.read_class(tmp_path / "class")
    assert len(cr.data.runs) == 2 and len(set(cr.data.runs)) == 2, cr.data.runs
    assert "g1/mixed-2ahead" in cr.data.runs and all(r.startswith("g1/") for r in cr.data.runs)


def test_a_run_of_no_paper_experiment_is_named_not_dropped(tmp_path):
    g = tmp_path / "class" / "g1"
    synth.write_experiment(g, "mixed-2ahead", count=10)
    rows = synth.synthetic_events("mixed", 3, False, 10)
    synth.write_run(g / "three-ahead", rows, synth.sidecar("three-ahead", rows))
    rep = classreport.class_report(tmp_path / "class", tmp_path / "rep", figures=False)
    md = rep.md.read_text()
    assert "none of the paper's experiments (not in the tables): g1/three-ahead (mixed, 3 ahead, load idle)" in md
    assert "three-ahead" not in pd.read_csv(rep.table)["runs"].astype(str).str.cat()


def test_target_flags_of_measured_and_generated_runs():
    from mmanalysis.classreport import target_flag
    from mmanalysis.selection import run_kind as _kind

    assert target_flag(_kind({"target": {"kind": "bench"}})) == "bench"
    assert target_flag(_kind({"target": {"kind": "boards"}})) == "boards"
    assert target_flag(_kind({"target": {"kind": "synthetic"}})) == "SYNTHETIC"
    assert target_flag(_kind({"synthetic": True, "target": {"kind": "boards"}})) == "SYNTHETIC (boards-like)"
