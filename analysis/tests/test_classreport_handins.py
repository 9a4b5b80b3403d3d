"""The class overview on a class with what goes wrong in a real one (synth.class_handins(faults=True)): an 8051
run beside the AVR runs (kept apart, labelled "NAME [8051]", never pooled nor graded), a missing lab.html, an
invalid run, a corrupted CSV (its experiment's row says 'unreadable: FILE: REASON'), a bench without real-time
priority: each one line in the report's problems list and on the terminal; flag cells capped; the grading
table with the key's figures. And the lab notebook, which lists the 8051 run apart as "NAME [8051]"."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import execute, outputs  # noqa: E402

import mmanalysis as mm  # noqa: E402
from mmanalysis import classreport, synth  # noqa: E402

UNREADABLE = ("group-05: unreadable: group-05/results/run2.csv: run2.csv does not match its sidecar (csv_sha256): "
              "written by another run or cut short")
ONE_LINE_EACH = [
    "problem: group-03: no lab.html",                                   # a missing file
    f"problem: {UNREADABLE}",                                           # a corrupted CSV
    "note: group-01: exp1-verification [8051]: a run of the 8051 profiler",   # an 8051 run
    "note: group-02: 5_mixed2_heavy: invalid: the bench fell behind",   # an invalid run
    "note: group-05: bench not real-time (bench.host.sched other",
]


def _key(folder: Path) -> None:
    """Stand-in key runs where `mmrig lab key --out CLASS/lab-key.md` writes them (CLASS/lab-key-runs/): the
    generated bench runs of group-01's style, the normal mode one paced."""
    key = folder / classreport.KEY_FOLDER
    for i, (experiment, name) in enumerate(zip(synth.EXPERIMENTS, synth.HANDIN_NAMES[0])):
        synth._handin_run(key, name, experiment, "bench", 40, 900 + i)


@pytest.fixture(scope="module")
def class_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("class") / "class"
    synth.class_handins(d, groups=5, count=40, seed=1, faults=True)
    _key(d)
    return d


@pytest.fixture(scope="module")
def cli(class_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "rep"
    r = subprocess.run([sys.executable, "-m", "mmanalysis", "report", str(class_dir), "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    return r, out


def test_each_fault_is_one_line_in_the_report_and_on_the_terminal(cli):
    r, out = cli
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    md = (out / "report.md").read_text()
    problems = md.split("## Problems\n", 1)[1].split("\n## ", 1)[0]
    for want in ONE_LINE_EACH:
        on_terminal = [x for x in lines if x.startswith(want)]
        in_report = [x for x in problems.splitlines() if x.startswith(f"- {want}")]
        assert len(on_terminal) == 1 and len(in_report) == 1, (want, r.stdout, problems)
    assert "lab-key-runs" not in r.stdout.split("runs per group: ", 1)[1].splitlines()[0]   # the key is no group
    assert "problem: the key" not in r.stdout


def test_the_8051_run_is_kept_apart(class_dir, cli):
    _, out = cli
    table = pd.read_csv(out / "class.csv", keep_default_na=False)
    ex = table[(table["experiment"] == "executor only (verification)")]
    g1 = ex[ex["group"].str.startswith("group-01")]
    assert list(g1["group"]) == ["group-01", "group-01 [8051]"]
    avr, i8051 = g1.iloc[0], g1.iloc[1]
    assert avr["runs"] == "exp1-verification" and float(avr["mean (us)"]) == pytest.approx(synth.BENCH_DISPATCH_US, abs=0.1)
    assert "lower than the paper's" in avr["verdict"] and "8051" not in avr["flags"]
    assert i8051["runs"] == "exp1-verification [8051]" and float(i8051["mean (us)"]) > float(avr["mean (us)"]) + 30
    assert "8051 profiler (step 6)" in i8051["flags"]
    # the CDF has a line of its own for it
    cr = classreport.read_class(class_dir)
    p = next(p for p in classreport.PAPER if p.key == "executor")
    fig = classreport.experiment_figure(cr, p, classreport.experiment_rows(cr, p))
    gids = {ln.get_gid() for ln in fig.axes[0].lines if ln.get_drawstyle() == "steps-post"}
    assert {"run:group-01", "run:group-01 [8051]"} <= gids


def test_a_corrupted_csv_row_says_unreadable_and_why(cli):
    _, out = cli
    table = pd.read_csv(out / "class.csv", keep_default_na=False)
    row = table[(table["experiment"].str.startswith("normal")) & (table["group"] == "group-05")].iloc[0]
    assert row["verdict"] == "unreadable: " + UNREADABLE.split("unreadable: ", 1)[1] and row["flags"] == "unreadable"


def test_bench_scheduling_flag_cells_capped(cli):
    _, out = cli
    table = pd.read_csv(out / "class.csv", keep_default_na=False)
    ex = table[table["experiment"] == "executor only (verification)"].set_index("group")
    assert ex.loc["group-01", "bench sched"] == "fifo 10" and ex.loc["group-03", "bench sched"] == "-"   # boards
    assert ex.loc["group-05", "bench sched"] == "other" and "bench not real-time" in ex.loc["group-05", "flags"]
    long = [f for f in table["flags"] if len(f) > classreport.FLAG_CHARS]
    assert long, "the fixture should have a flags cell over the cap"
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for full in long:
        assert full not in [c.strip() for line in md.splitlines() if line.startswith("| ") for c in line.split("|")]
        assert f"[1] {full}" in md or any(f"] {full}" in line for line in md.splitlines() if line.startswith("Flags"))
        import html as h
        assert f"title='{h.escape(full, quote=True)}'" in html
    for line in md.splitlines():
        if line.startswith("| group-"):
            assert len(line.rstrip(" |").rsplit(" | ", 1)[1]) <= classreport.FLAG_CHARS, line


def test_grading_table_puts_the_group_beside_the_key(cli):
    _, out = cli
    md = (out / "report.md").read_text()
    grading = md.split("## Grading: each group's figures beside the key's\n", 1)[1]
    assert "the key's runs in lab-key-runs/ (5 runs" in grading
    sections = dict(s.split("\n", 1) for s in grading.split("\n### ")[1:])
    assert list(sections) == [f"group-0{i}" for i in range(1, 6)]
    g1 = sections["group-01"]
    assert "answers: [" in g1 and "group-01/lab.html" in g1 and "fifo 10" in g1
    exp1 = next(line for line in g1.splitlines() if "exp1 executor alone: mean" in line)
    cells = [c.strip() for c in exp1.strip("|").split("|")]
    assert cells[2] == cells[3] == "36.88" and cells[5] == "yes"   # over the AVR run only, as the key
    assert "**no lab.html**" in sections["group-03"]
    normal5 = next(line for line in sections["group-05"].splitlines() if "exp2 normal mode: mean" in line)
    assert normal5.split("|")[3].strip() == "unreadable"               # its normal run is unreadable


def test_notebook_lists_the_8051_run_apart(tmp_path, monkeypatch):
    results = tmp_path / "results"
    synth._handin_run(results, "exp1-verification", "verification", "bench", 30, 1)
    for name, experiment in (("exp2-normal", "normal-1ahead"), ("exp4-mixed-2ahead", "mixed-2ahead")):
        synth._handin_run(results, name, experiment, "bench", 30, 2)
    synth._handin_run(results / "8051", "exp1-verification", "verification", "bench", 30, 3, profiler_kind="8051")
    data = mm.read_runs(results, label_kinds=True)
    assert sorted(data.runs) == ["exp1-verification", "exp1-verification [8051]", "exp2-normal", "exp4-mixed-2ahead"]
    assert mm.profiler_kind(data.meta["exp1-verification"]) == "avr"
    nb = execute(results, tmp_path, monkeypatch)
    summary = "".join(o.get("data", {}).get("text/plain", "") for o in nb.cells[5].outputs)
    assert "exp1-verification" in summary and "[8051]" not in summary           # sections 1-6: the AVR runs
    last = "\n".join(outputs(nb)[0][-4:])
    assert "exp1-verification [8051]" in last and "8051" in last
