"""`mmrig lab key`: the instructor's answer key, made from runs on the bench (short: few events)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mmrig.labkey.figures import schedule_line_ms
from mmrig.labkey.render import QUESTIONS
from mmrig.labkey.runs import RUNS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis" / "tests"))
from mma_helpers import subprocess_env  # noqa: E402  (the analysis tests' helper: this checkout first)

# paced runs whose timing a neighbour's bench would starve: after the parallel phase, by themselves
pytestmark = pytest.mark.alone


def test_schedule_line_time_is_read_from_proto_sizes():
    table = "| message | type | body bytes | wire bytes | ms at 9600 baud |\n|---|---|---|---|---|\n" \
            "| SCHEDULE | 0x20 | 7 | 13 | 13.542 |\n"
    assert schedule_line_ms(table) == (13, 13.542)
    with pytest.raises(ValueError):
        schedule_line_ms("| HELLO | 0x01 | 22 | 28 | 29.167 |")


def test_the_keys_runs_go_where_the_class_report_reads_them():
    """`mmrig lab key`'s default --out puts its runs in the folder the class report reads as the key's."""
    from pathlib import Path

    from mmanalysis import classreport
    from mmanalysis.labkeyfiles import key_runs_folder
    from mmrig.cli import build_parser

    args = build_parser().parse_args(["lab", "key"])
    assert key_runs_folder(args.out).name == classreport.KEY_FOLDER == "lab-key-runs"
    assert key_runs_folder(Path("CLASS/lab-key.md")) == Path("CLASS") / classreport.KEY_FOLDER


def test_every_question_of_the_handout_has_a_section():
    questions = set(re.findall(r"\*\*(Q\d+)\.\*\*", (ROOT / "docs" / "lab.md").read_text()))
    assert questions == set(QUESTIONS)


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> tuple[str, Path]:
    from mmhil.bench import ensure_built

    ensure_built()
    d = tmp_path_factory.mktemp("key")
    r = subprocess.run([sys.executable, "-m", "mmrig", "lab", "key", "--count", "15", "--quiet",
                        "--out", "key.md"], cwd=d, env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{r.stdout[-2000:]}\n--- stderr\n{r.stderr[-4000:]}"
    assert "wrote key.md" in r.stdout
    return (d / "key.md").read_text(), d / "key-runs"


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (Q\d+)\. .*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.mark.paced
def test_the_key_answers_every_question_with_figures(key):
    text, runs = key
    secs = sections(text)
    assert list(secs) == list(QUESTIONS)
    for q, body in secs.items():
        # a figure computed from a run (or, for a run the host made invalid, the words saying so)
        assert re.search(r"\d", body.split("Expected answer")[0]) or "no valid run" in body, (q, body)
        assert "Expected answer" in body, q
    for run in RUNS:
        assert (runs / f"{run.name}.csv").exists() and (runs / f"{run.name}.json").exists(), run.name


def test_the_key_says_it_ran_as_a_student(key):
    text, runs = key
    line = next(x for x in text.splitlines() if x.startswith("Scheduling: "))
    assert line.startswith("Scheduling: as a student: no real-time priority"), line
    got = {json.loads((runs / f"{r.name}.json").read_text())["bench"]["host"]["sched"] for r in RUNS if not r.lockstep}
    assert f"the paced runs' benches got: {', '.join(sorted(got))}" in line, (line, got)


def test_the_key_figures_are_the_runs_figures(key):
    text, runs = key
    secs = sections(text)
    meta = json.loads((runs / "exp1-verification.json").read_text())
    assert meta["config"]["count"] == 15 and meta["environment"]["target"]["lockstep"]
    row = next(line for line in secs["Q1"].splitlines() if "`exp1-verification`" in line)
    assert f"| {meta['summary']['mean_us']:.3f} |" in row
    normal = json.loads((runs / "exp2-normal.json").read_text())
    assert not normal["environment"]["target"]["lockstep"]     # normal mode measures the PC: paced
    if normal["valid"]:
        assert f"mean {normal['summary']['mean_us']:.3f} us" in secs["Q2"]
    sizes = subprocess.run([sys.executable, "-m", "mmrig", "proto", "sizes", "--baud", "9600"],
                           capture_output=True, text=True, check=True).stdout
    wire, ms = schedule_line_ms(sizes)
    assert abs(ms - wire * 10 / 9600 * 1e3) < 1e-3       # 10 bit times a byte
    assert f"SCHEDULE is {wire} bytes on the wire, {ms:.3f} ms" in secs["Q7"]
    loaded = json.loads((runs / "inside-loaded.json").read_text())
    assert "executor_profile" in loaded and f"n {loaded['summary']['n']}," in secs["Q10"]


def test_an_out_that_is_a_folder_is_refused_before_any_experiment_runs(tmp_path: Path) -> None:
    """`lab key --out DIR` ran every experiment, then a traceback: the name is tried first, one line, exit 2."""
    import time

    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mmrig", "lab", "key", "--out", str(tmp_path), "--count", "5"],
                          capture_output=True, text=True, timeout=60, env=subprocess_env())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"lab key: --out: {tmp_path} is a folder", done.stderr
    assert time.monotonic() - t0 < 30 and list(tmp_path.iterdir()) == []


# the key's runs a group hands in as its own (the demo's names): every graded figure of the group is the key's
HANDED_IN = ("exp1-verification", "exp1i-verification-isr", "exp2-normal", "exp3-mixed-1ahead",
             "exp3b-mixed-1ahead-free", "exp4-mixed-2ahead", "exp4i-mixed-2ahead-isr", "exp5-mixed-2ahead-load")


@pytest.mark.paced        # reads the key fixture, whose paced runs are its point
def test_the_class_report_grades_against_a_real_key(key, tmp_path):
    """The class report with the eleven runs `mmrig lab key` made in CLASS/lab-key-runs/ and a group that handed
    in the key's own runs: each graded figure is read from the one key run it names (the key's `run` column is
    categorical over all eleven), task and ISR dispatch are rows of their own, and the group's figures are the
    key's."""
    import shutil

    from mmanalysis import classgrading, classreport
    from mmanalysis.selection import is_set_aside

    _, runs = key
    cls = tmp_path / "class"
    shutil.copytree(runs, cls / classreport.KEY_FOLDER)
    group = cls / "group-a" / "results"
    group.mkdir(parents=True)
    for name in HANDED_IN:
        for ext in (".csv", ".json"):
            shutil.copy(runs / f"{name}{ext}", group / f"{name}{ext}")
    (cls / "group-a" / "lab.html").write_text("<html></html>")
    cr = classreport.read_class(cls)
    # the eleven runs, and the tries a host stall voided, kept as NAME.attemptK (invalid: never the key's figures)
    made = [r for r in cr.key.runs if not is_set_aside(r)] if cr.key is not None else []
    assert len(made) == len(RUNS) == 11 and not cr.problems
    assert all(not cr.key.meta[r].get("valid", True) for r in cr.key.runs if is_set_aside(r))
    rep = classreport.class_report(cr, tmp_path / "rep", figures=False)
    executor = {r.values["group"]: r.shown for r in rep.tables["executor"]}
    assert executor == {"group-a": ["group-a/exp1-verification"],
                        "group-a (ISR dispatch)": ["group-a/exp1i-verification-isr"]}
    graded = classgrading.grade(cr.data, cr.key, {k: [r for r in rs if r.kind == "avr"]
                                                  for k, rs in rep.tables.items()})
    for g in graded:
        run = classgrading.key_run(cr.key, g.figure)
        if run is None:       # a paced run of the key the host made invalid: no figure, said so
            assert not all(m.get("valid", True) for m in cr.key.meta.values()), g.figure
            assert g.key == "-"
            continue
        alone = classgrading.figure_value(cr.key.df[cr.key.df["run"] == run], {run: cr.key.meta[run]},
                                          g.figure.stat)
        assert g.key == alone.text != "-", (g.figure.what, run, g.key)
        if run in HANDED_IN and cr.key.meta[run].get("valid", True):
            assert g.group == g.key, (g.figure.what, g.group, g.key)
            if g.figure.near_key:
                assert g.verdict == "yes", (g.figure.what, g.verdict)


@pytest.mark.paced        # its exp2b is paced, as the students run it; and it reads the key fixture
def test_a_class_planted_from_the_keys_runs_is_graded_as_planted(key, tmp_path):
    """Twenty groups planted from real bench runs (the key's, with a paced exp2b and a lockstep 8051 run beside
    them; mmanalysis.plantclass: copied and varied, one corrupted, one missing, one identical to another, one
    8051, one short): the class report's first page marks each group as planted."""
    import shutil

    from mma_helpers import check_planted
    from mmanalysis import classreport, plantclass
    from mmanalysis.reader import read_sidecar

    _, runs = key
    source = tmp_path / "source"
    shutil.copytree(runs, source, ignore=shutil.ignore_patterns("inside-*"))
    (source / "8051").mkdir()
    made = [subprocess.run([sys.executable, "-m", "mmrig", "run", *argv, "--count", "15", "--quiet", "-o",
                            str(source / out)], env=subprocess_env(), capture_output=True, text=True, timeout=300)
            for argv, out in ((("--mode", "normal", "--distance", "1", "--discipline"), "exp2b-normal-disciplined"),
                              (("--profiler-kind", "8051", "--unpaced", "--mode", "verification", "--distance", "1",
                                "--dispatch", "task", "--executor-load", "cpu"), "8051/exp1-verification"))]
    assert made[0].returncode in (0, 3), made[0].stderr             # 3: invalid, kept (a host stall)
    assert made[1].returncode in (0, 2), made[1].stderr             # 2: the bench was built without the 8051 core
    planted = plantclass.plant_class(source, tmp_path / "class", groups=20, key=runs)
    assert [p.what for p in planted if p.what != "clean"] == \
        ["corrupted", "missing", "copy of group-02"] + (["8051"] if made[1].returncode == 0 else []) + ["short"]
    chosen = plantclass.handin_runs(source)
    lacks = tuple(name for name, _, _ in plantclass.HANDIN
                  if name not in chosen or not read_sidecar(chosen[name].with_suffix(".json")).get("valid", True))
    rep = classreport.class_report(tmp_path / "class", tmp_path / "rep", figures=False)
    check_planted(rep.md.read_text(), [{"group": p.group, "what": p.what, "run": p.run} for p in planted], lacks)
