"""The mmrig pytest plugin (mmrig.pytest_plugin), run as a user runs it: pytest in a process of its own on a
test file, on the lockstep bench, on two xdist workers, on "boards" (the ptys of a bench this test starts,
opened as serial ports), and from an installed copy away from the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mmhil import Bench
from mmhil.bench import EXECUTOR_ELF, PROFILER_ELF

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
import pytest

@pytest.mark.rig_needs("executor")
def test_schedule(rig):
    ev = rig.schedule(5, ticks_ahead=2)
    assert ev.on_time and ev.latency_us < 5.0, ev

@pytest.mark.rig_needs("executor")
def test_schedule_again(rig):
    assert rig.schedule(3, ticks_ahead=1).on_time

@pytest.mark.rig_needs("faults")
def test_faults(bench):
    bench.fault("executor", "in", "drop", 0.5)

@pytest.mark.rig_needs("paced")
def test_fire(rig):
    assert rig.fire(2).outcome in ("ok", "late")
'''


def pytest_run(where: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """A pytest session of its own in WHERE, as a user starts one: none of this session's xdist worker variables
    (a suite run with -n 2 would otherwise make the inner session think it is worker gwN)."""
    base = {k: v for k, v in (env if env is not None else os.environ).items() if not k.startswith("PYTEST_")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-ra", *args],
                          cwd=where, capture_output=True, text=True, env=base, timeout=timeout)


def suite(tmp_path: Path, text: str = SUITE, name: str = "test_suite.py") -> Path:
    d = tmp_path / "suite"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return d


def junit(path: Path) -> dict[str, dict[str, object]]:
    """testcase name -> {"outcome": passed/failed/skipped, "message", "properties": {name: [values]}}."""
    out: dict[str, dict[str, object]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props: dict[str, list[str]] = {}
        for p in case.iter("property"):
            props.setdefault(p.get("name", ""), []).append(p.get("value", ""))
        bad = case.find("failure")
        skip = case.find("skipped")
        outcome = "failed" if bad is not None else "skipped" if skip is not None else "passed"
        message = (bad if bad is not None else skip).get("message", "") if outcome != "passed" else ""
        out[case.get("name", "")] = {"outcome": outcome, "message": message, "properties": props}
    return out


def test_two_workers_each_get_a_bench_of_their_own(tmp_path: Path) -> None:
    # --dist each: both workers run every test, at the same time, each on a bench of its own
    d = suite(tmp_path)
    done = pytest_run(d, "--rig", "lockstep", "-n", "2", "--dist", "each", "--junitxml", str(tmp_path / "junit.xml"),
                      "--rig-results", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    cases = junit(tmp_path / "junit.xml")
    assert {k: v["outcome"] for k, v in cases.items()} == {
        "test_schedule": "passed", "test_schedule_again": "passed", "test_faults": "passed", "test_fire": "skipped"}
    assert "needs wall-clock time" in str(cases["test_fire"]["message"]) and "--rig lockstep" in str(cases["test_fire"]["message"])
    docs = [json.loads((tmp_path / f"runs/{w}/test_suite/test_schedule.rig.json").read_text()) for w in ("gw0", "gw1")]
    assert [doc["worker"] for doc in docs] == ["gw0", "gw1"]                 # no shared result paths
    assert docs[0]["bench_run_dir"] != docs[1]["bench_run_dir"]               # nor benches
    assert docs[0]["events"] == docs[1]["events"]                             # lockstep: the same events,
    assert docs[0]["events"][0]["latency_us"] == 1.375                        # the firmware's figure


def test_a_failing_run_names_its_files(tmp_path: Path) -> None:
    d = suite(tmp_path, '''
def test_task_dispatch_under_5_us(run_experiment):
    run = run_experiment(mode="mixed", distance=2, dispatch="task", count=5)
    assert run.p99_us < 5.0
''')
    done = pytest_run(d, "--rig", "lockstep", "--junitxml", str(tmp_path / "junit.xml"),
                      "--rig-results", str(tmp_path / "runs"))
    assert done.returncode == 1, done.stdout[-3000:]
    csv = tmp_path / "runs/test_suite/test_task_dispatch_under_5_us.csv"
    assert csv.is_file() and csv.with_suffix(".json").is_file()
    # the assertion names it (pytest shortens a long line's middle). 36.7475 since protocol version 4 (was
    # 36.6875): the profiler's boot HELLO, which now carries its run-time rate, leaves 195 cycles later
    # (lockstep trace), and the lockstep host's whole exchange shifts with it against the tick phase; 36.8075
    # since the AVR profiler keeps 32 FIRE tags, not 8 (a different image: 48 more bytes of RAM for its start-up
    # to clear), a shift of the same kind; 36.935 since the executor's pin-change interrupt looks for a series'
    # moment waiting for the edge (protocol version 5: 3 cycles on every edge, tests/cycleprof.py 587 -> 590);
    # 36.875 since protocol version 6 (the AVR profiler's histograms: another image, whose start-up clears its
    # 4 KB of cells in pf_init, and a new executor image), a shift of the same kind
    assert f"where 36.875 = RunResult({str(csv)[:60]}" in done.stdout
    assert f"csv: {csv}" in done.stdout                                          # the report's mmrig runs section
    props = junit(tmp_path / "junit.xml")["test_task_dispatch_under_5_us"]["properties"]
    assert props == {"mmrig_csv": [str(csv)], "mmrig_json": [str(csv.with_suffix(".json"))]}


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    d = suite(tmp_path, '''
import pytest

@pytest.mark.rig_needs("oscilloscope")
def test_x():
    pass
''')
    no_port = pytest_run(d, "--rig", "ports")
    assert no_port.returncode == 4 and "--rig ports needs --profiler PORT" in no_port.stderr
    assert "Traceback" not in no_port.stderr
    megas = pytest_run(d, "--profiler", "/dev/null", "--rig-arduino")
    assert megas.returncode == 4 and "--rig-arduino makes the bench behave as Megas" in megas.stderr
    no_dtr = pytest_run(d, "--rig", "lockstep", "--no-reset-on-open")
    assert no_dtr.returncode == 4 and "--no-reset-on-open is for boards" in no_dtr.stderr
    unknown = pytest_run(d, "--rig", "lockstep")
    assert unknown.returncode == 4, unknown.stdout + unknown.stderr
    assert "rig_needs('oscilloscope'): one of executor, bench, faults, paced, lockstep, capture" in unknown.stderr
    (d / "test_suite.py").write_text('''
def test_typo(run_experiment):
    run_experiment(mode="mixed", cuont=5)
''')
    typo = pytest_run(d, "--rig", "lockstep")
    assert typo.returncode == 1 and "run_experiment: unknown option 'cuont' (RunConfig fields:" in typo.stdout
    assert "Traceback" not in typo.stdout


@pytest.mark.paced
@pytest.mark.alone
def test_boards_run_what_they_can_and_skip_the_rest_saying_why(tmp_path: Path) -> None:
    # the "boards" are the two ptys of a paced bench: to the plugin they are serial ports like /dev/ttyUSB0
    d = suite(tmp_path)
    with Bench(run_dir=tmp_path / "boards", realtime=True) as boards:
        both = pytest_run(d, "--profiler", boards.profiler_port, "--executor", boards.executor_port,
                          "--junitxml", str(tmp_path / "both.xml"))
        alone = pytest_run(d, "--rig", "ports", "--profiler", boards.profiler_port,
                           "--junitxml", str(tmp_path / "alone.xml"))
    assert both.returncode == 0, both.stdout[-3000:]
    cases = junit(tmp_path / "both.xml")
    assert {k: v["outcome"] for k, v in cases.items()} == {
        "test_schedule": "passed", "test_schedule_again": "passed", "test_faults": "skipped", "test_fire": "passed"}
    assert str(cases["test_faults"]["message"]).startswith("needs fault injection (the bench's control channel); "
                                                           "this rig is --rig ports (boards: profiler ")
    assert alone.returncode == 0, alone.stdout[-3000:]
    cases = junit(tmp_path / "alone.xml")
    assert {k: v["outcome"] for k, v in cases.items()} == {
        "test_schedule": "skipped", "test_schedule_again": "skipped", "test_faults": "skipped", "test_fire": "passed"}
    assert str(cases["test_schedule"]["message"]).startswith("needs an executor node; this rig is --rig ports")
    assert "no executor)" in str(cases["test_schedule"]["message"])


def installable_copy(dest: Path) -> None:
    """The distribution's sources, the bench's sources and the built images (what `pip install .` in a
    checkout after `make build` sees), without the checkout's build leftovers."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dest / name)
    files = [py for folder in meta["package-dir"].values() for py in (ROOT / folder).rglob("*.py")]
    files += [f for f in (ROOT / "hil/bench").rglob("*") if f.is_file() and "build" not in f.relative_to(ROOT).parts]
    files += [PROFILER_ELF, EXECUTOR_ELF, ROOT / "profiler-fw/Makefile"]
    for f in files:
        (dest / f.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest / f.relative_to(ROOT))


@pytest.mark.long    # a copy installed into a venv of its own and the example suite run there: 14-17 s
def test_an_installed_copy_runs_the_example_suite_away_from_the_checkout(tmp_path: Path) -> None:
    src, site, away = tmp_path / "src", tmp_path / "site", tmp_path / "away"
    src.mkdir()
    away.mkdir()
    installable_copy(src)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--target", str(site), "--no-deps",
                           "--no-build-isolation", "-q", str(src)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (site / "mmhil/data/profiler.elf").is_file() and (site / "mmhil/data/bench/Makefile").is_file()
    shutil.copy2(ROOT / "hil/examples/test_mixed_mode.py", away)
    env = {**os.environ, "PYTHONPATH": str(site), "MMRIG_CACHE": str(tmp_path / "cache")}
    env.pop("MMRIG_ROOT", None)
    ran = pytest_run(away, "--rig", "lockstep", "-k", "one_event or two_ticks_ahead", env=env)
    assert ran.returncode == 0 and "2 passed" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert list((tmp_path / "cache").glob("bench-*/build/mmbench"))      # built from the shipped sources



@pytest.mark.paced
def test_a_suite_runs_normal_mode_at_500_events_a_second_on_a_grid(tmp_path: Path) -> None:
    # run_experiment takes RunConfig's fields: a rate below one tick in normal mode is a schedule grid
    d = suite(tmp_path, '''
def test_grid(run_experiment):
    run = run_experiment(mode="normal", rate_ms=2, baud=500000, count=300, require_valid=False)
    grid = run.sidecar["grid"]
    assert grid["per_s"] == 500.0 and grid["moments"] == 300 and grid["skipped"] == 0, grid
    assert len({e.due_counts for e in run.events}) > 250       # moments inside ticks, not tick starts
    assert sum(e.outcome in ("ok", "late", "early", "missed", "lost") for e in run.events) == 300
''')
    done = pytest_run(d, "--rig-results", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.paced
def test_a_suite_runs_a_kilohertz_series_on_the_profilers_histogram_alone(tmp_path: Path) -> None:
    # a periodic series at 1 kHz on a 115200-baud line: the AVR profiler's own figures, no event rows
    d = suite(tmp_path, '''
def test_series(run_experiment):
    run = run_experiment(mode="mixed", generation="periodic", rate_ms=1, baud=115200, raw=False, count=2000)
    ph = run.sidecar["profiler_histogram"]
    assert run.events == [] and ph["final"] and not ph["raw"]
    assert run.summary["outcomes"]["ok"] == ph["ok"] == 2000 and run.summary["max_us"] < 100
''')
    done = pytest_run(d, "--rig-results", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.paced
def test_a_session_break_fails_the_test_at_the_event_and_names_its_replay(tmp_path: Path) -> None:
    # --rig-break-us: mmrig run --break-us's equivalent for a suite (task dispatch is ~37 us: past 2 us at once)
    d = suite(tmp_path, '''
def test_task(run_experiment):
    run_experiment(mode="mixed", distance=2, dispatch="task", count=20)
''')
    done = pytest_run(d, "--rig-break-us", "2", "--rig-results", str(tmp_path / "runs"))
    assert done.returncode == 1, done.stdout[-3000:]
    assert "--rig-break-us 2: event 0 (ok, 36." in done.stdout and "replay it traced: mmrig replay " in done.stdout
    assert "--around 0 --keep" in done.stdout


MISSING_RIG_SUITE = '''
def test_run_a(run_experiment):
    run_experiment(mode="mixed", count=2)

def test_run_b(run_experiment):
    run_experiment(mode="mixed", count=2)

def test_rig(rig):
    rig.schedule(1)
'''


def fake_checkout(where: Path) -> Path:
    """A checkout whose bench cannot be built: its Makefile counts each attempt in attempts.log and fails."""
    (where / "hil/bench").mkdir(parents=True)
    (where / "profiler-fw").mkdir()
    (where / "profiler-fw/Makefile").write_text("all:\n\tfalse\n")
    (where / "hil/bench/Makefile").write_text(
        "all:\n\t@echo attempt >> ../../attempts.log\n\t@echo 'sim_avr.h: No such file or directory' >&2; false\n")
    return where


def summary_counts(stdout: str) -> dict[str, int]:
    """pytest's last line (`3 errors in 0.2s`, `1 failed, 2 passed in ...`) as {outcome: count}."""
    import re

    last = stdout.strip().splitlines()[-1]
    return {word if word.endswith("s") else word + "s": int(n)
            for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped)", last)}


def setup_errors(path: Path) -> dict[str, str]:
    """testcase name -> the message of its <error> (a setup error), from a JUnit XML file."""
    return {case.get("name", ""): err.get("message", "") for case in ET.parse(path).getroot().iter("testcase")
            for err in case.iter("error")}


def test_a_bench_that_cannot_be_built_errors_every_test_with_one_line_and_is_built_once(tmp_path: Path) -> None:
    # no boards, and a bench whose make fails: not a latency failure, one cause for the session, make tried once
    root = fake_checkout(tmp_path / "checkout")
    d = suite(tmp_path, MISSING_RIG_SUITE)
    done = pytest_run(d, "--rig", "lockstep", "--junitxml", str(tmp_path / "junit.xml"),
                      env={**os.environ, "MMRIG_ROOT": str(root)}, timeout=120)
    out = done.stdout
    assert done.returncode == 1 and summary_counts(out) == {"errors": 3}, out[-3000:]
    errors = setup_errors(tmp_path / "junit.xml")
    assert sorted(errors) == ["test_rig", "test_run_a", "test_run_b"], errors
    causes = set(errors.values())
    assert len(causes) == 1, causes                                            # the same line for each test
    cause = causes.pop()
    assert "\n" not in cause, cause
    assert cause.startswith("failed on setup with \"Failed: mmrig: no rig: the virtual bench cannot be built "
                            "(cannot build "), cause
    assert "make build" in cause and "--profiler PORT --executor PORT" in cause
    assert (root / "attempts.log").read_text().count("attempt") == 1           # the build tried once


def test_boards_that_are_not_there_error_every_test_with_one_line(tmp_path: Path) -> None:
    d = suite(tmp_path, MISSING_RIG_SUITE)
    done = pytest_run(d, "--profiler", str(tmp_path / "ttyACM0"), "--executor", str(tmp_path / "ttyACM1"),
                      "--junitxml", str(tmp_path / "junit.xml"), timeout=60)
    out = done.stdout
    assert done.returncode == 1 and summary_counts(out) == {"errors": 3}, out[-3000:]
    assert set(setup_errors(tmp_path / "junit.xml").values()) == {
        f"failed on setup with \"Failed: mmrig: no rig: --profiler {tmp_path / 'ttyACM0'}: no such port (is the "
        "board plugged in? `mmrig boards` lists the ports)\""}


def test_run_files_are_named_by_the_whole_node_id() -> None:
    from mmrig.pytest_plugin import safe_name

    assert safe_name("test_lat.py::test_run") == "test_lat/test_run"                  # as before, at the rootdir
    assert safe_name("suite_a/test_lat.py::test_run") == "suite_a/test_lat/test_run"
    assert safe_name("suite_b/test_lat.py::test_run") == "suite_b/test_lat/test_run"
    assert safe_name("s/test_lat.py::TestX::test_run[isr-2]") == "s/test_lat/TestX.test_run-isr-2"
    # what a file name cannot hold is replaced, and a digest of the node id keeps such names apart
    lossy = [safe_name(n) for n in ("t.py::test_x[a/b]", "t.py::test_x[a b]", "t.py::test_x[a-b]",
                                    "t.py::test_x[-a]", "t.py::test_x[a]", "../up/t.py::test_x")]
    assert len(set(lossy)) == len(lossy), lossy
    assert all(part not in ("", ".", "..") for name in lossy for part in name.split("/")), lossy
    assert all(set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/")
               for name in lossy), lossy


def test_two_suites_with_the_same_file_and_test_names_keep_a_run_file_each(tmp_path: Path) -> None:
    d = tmp_path / "suites"
    for s in ("suite_a", "suite_b"):
        (d / s).mkdir(parents=True)
        (d / s / "__init__.py").write_text("")
        (d / s / "test_lat.py").write_text('''
def test_run(run_experiment):
    assert run_experiment(mode="mixed", count=2).on_time_share == 1.0
''')
    done = pytest_run(d, "--rig", "lockstep", "--junitxml", str(tmp_path / "junit.xml"),
                      "--rig-results", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stdout[-3000:]
    csvs = {s: tmp_path / f"runs/{s}/test_lat/test_run.csv" for s in ("suite_a", "suite_b")}
    assert all(c.is_file() and c.with_suffix(".json").is_file() for c in csvs.values()), list((tmp_path / "runs").rglob("*"))
    mask = os.umask(0o022)
    os.umask(mask)                                  # the inner session's, inherited: 0644 under umask 022
    assert {oct(f.stat().st_mode & 0o777) for c in csvs.values() for f in (c, c.with_suffix(".json"))} == {
        oct(0o666 & ~mask)}
    props = {case.get("classname"): {p.get("name"): p.get("value") for p in case.iter("property")}
             for case in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")}
    assert props == {f"{s}.test_lat": {"mmrig_csv": str(c), "mmrig_json": str(c.with_suffix(".json"))}
                     for s, c in csvs.items()}


def test_rig_and_run_experiment_in_one_test_are_refused_alike_on_every_rig(tmp_path: Path) -> None:
    d = suite(tmp_path, '''
def test_both(rig, run_experiment):
    pass
''')
    lockstep = pytest_run(d, "--rig", "lockstep")
    ports = pytest_run(d, "--profiler", str(tmp_path / "nothing0"), "--executor", str(tmp_path / "nothing1"))
    why = ("test_suite.py::test_both: takes run_experiment and rig: a run opens its own bench or the boards' ports, "
           "which the rig holds open; take one or the other (two tests), on every rig")
    for done in (lockstep, ports):
        assert done.returncode == 4 and f"ERROR: {why}" in done.stderr, done.stdout[-2000:] + done.stderr[-2000:]
        assert "no such port" not in done.stdout + done.stderr and "Traceback" not in done.stderr
    (d / "test_suite.py").write_text('''
def test_both(bench, run_experiment):
    pass
''')
    bench = pytest_run(d, "--rig", "lockstep")
    assert bench.returncode == 4 and "test_both: takes run_experiment and bench: " in bench.stderr, bench.stderr


def test_rig_needs_with_a_keyword_or_with_no_need_is_a_usage_error(tmp_path: Path) -> None:
    d = suite(tmp_path, '''
import pytest

@pytest.mark.rig_needs(paced=True)
def test_x():
    pass
''')
    keyword = pytest_run(d, "--rig", "lockstep")
    assert keyword.returncode == 4, keyword.stdout[-2000:] + keyword.stderr[-2000:]
    assert ("ERROR: test_suite.py::test_x: rig_needs(paced=True): needs are named, not keywords "
            "(rig_needs('paced')): one of executor, bench, faults, paced, lockstep, capture") in keyword.stderr
    (d / "test_suite.py").write_text('''
import pytest

@pytest.mark.rig_needs()
def test_x():
    pass
''')
    empty = pytest_run(d, "--rig", "lockstep")
    assert empty.returncode == 4 and ("ERROR: test_suite.py::test_x: rig_needs() with no need: name one or more of "
                                      "executor, bench, faults, paced, lockstep, capture") in empty.stderr, empty.stderr


def test_the_docs_list_every_keyword_of_run_experiment_and_no_other() -> None:
    # docs/hil.md's table "run_experiment's keywords" against the fixture's signature, both ways; and each
    # `mmrig run` option it names is one of the command's
    import argparse
    import inspect
    import re

    from mmrig.cli import build_parser
    from mmrig.pytest_plugin import Experiment, RigTarget

    text = (ROOT / "docs/hil.md").read_text()
    table = text[text.index("### run_experiment's keywords"):]
    table = table[:table.index("\n### ", 1)]
    rows = [line.split("|")[1:4] for line in table.splitlines() if re.match(r"\| `\w+` \|", line)]
    documented = [re.fullmatch(r" `(\w+)` ", keyword)[1] for keyword, _, _ in rows]
    taken = list(inspect.signature(Experiment(None, RigTarget("lockstep"))).parameters)  # type: ignore[arg-type]
    assert sorted(documented) == sorted(taken)
    assert len(documented) == len(set(documented))
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    options = {o for a in sub.choices["run"]._actions for o in a.option_strings}
    named = {o for _, cli, _ in rows for o in re.findall(r"`(--?[a-z][a-z-]*)`", cli)}
    assert named and named <= options, named - options
