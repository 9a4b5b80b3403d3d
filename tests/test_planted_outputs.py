"""Every output name the project writes, with a link and a FIFO planted at it as another user of a shared folder
would (`fs.protected_symlinks=0`): the link's target is never written (the link is replaced, or the command
refuses), a FIFO is refused in one line (exit 2) and never opened (a run used to hang on one where SIGTERM could
not end it), and nothing is written where a planted folder link points.

OUTPUTS is the one list of them, by command. Each command is first run clean, and what it leaves in its folder
must be exactly its list: a new output the list forgets fails here, so it cannot be forgotten."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mmanalysis import synth
from mmhil.bench import ensure_built

NOBODY = 65534
PRECIOUS = "precious\n"

# command -> the names it writes in its folder D (relative; {n} the run's name)
OUTPUTS: dict[str, list[str]] = {
    "run": ["{n}.csv", "{n}.json", "{n}.inputs", "{n}.pc.inputs", "{n}.hist", "{n}.junit.xml", "{n}.exectrace",
            "{n}.perfetto-trace", "{n}.vcd"],
    # written while the run goes, removed once the run's files are written: planted, they are checked too
    "run-journal": ["{n}.partial.csv", "{n}.partial.json"],
    "replay": ["{n}.replay.trace", "{n}.replay.exectrace", "{n}.replay.perfetto-trace", "{n}.replay.vcd",
               "{n}.around.exectrace", "{n}.around.perfetto-trace", "{n}.around.vcd"],
    "replay-pc": ["{n}.replay.trace", "{n}.vs-sim.csv", "{n}.vs-sim.png"],
    "report": ["report.md", "report.html", "summary.csv", "summary-groups.csv", "comparison.csv", "phases.csv"],
    "sweep": ["campaign.json", "points.jsonl", "sweep.lock", "points/d1-rtick-isr-idle.csv",
              "points/d1-rtick-isr-idle.json", "figures/on_time.png", "figures/on_time.svg"],
    "profile": ["{n}.perfetto-trace"],
    "capture": ["{n}.lined-up.csv"],
}
# a lockstep run writes the run's list but its records of inputs (only a run on a wall clock has them to keep)
OUTPUTS["run-lockstep"] = [n for n in OUTPUTS["run"] if not n.endswith(".inputs")]
# A paced run's point is the wall clock; what it writes is checked in the long tier (make check), the rest here.
COMMANDS = [pytest.param(c, marks=pytest.mark.paced) if c == "run" else c for c in OUTPUTS]
# a FIFO at each of a sweep's names is a sweep each, with its local cluster: 26 s, the long tier's
FIFO_COMMANDS = [pytest.param(c, marks=pytest.mark.long) if c == "sweep" else c for c in COMMANDS]
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hil" / "tests"))
from helpers import recorded_run  # noqa: E402  (a paced run's files recorded once: what replay reads)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "analysis" / "tests"))
from test_report_phases import phased_run  # noqa: E402  (a generated run in phases, as the scheduler writes one)
FOLDERS = {"report": ["figures"], "sweep": ["points", "figures"]}     # the folders the writer makes in D


def mmrig(*argv: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mmrig", *argv], capture_output=True, text=True, timeout=timeout)


def argv(command: str, d: Path, src: Path) -> list[str]:
    """The command line that writes COMMAND's outputs in D (SRC: a recorded run's files, or synthetic runs). Runs in
    lockstep but `run` itself: what a command writes and how it opens it do not depend on the wall clock."""
    return {
        "run": ["run", "--count", "5", "--trace", "--hist", "--junit", str(d / "r.junit.xml"), "-o", str(d / "r")],
        "run-lockstep": ["run", "--lockstep", "--count", "5", "--trace", "--hist", "--junit", str(d / "r.junit.xml"),
                         "-o", str(d / "r")],
        "run-journal": ["run", "--lockstep", "--count", "5", "-o", str(d / "r")],
        "replay": ["replay", str(src / "paced.csv"), "--trace", "--around", "2", "--keep", str(d)],
        "replay-pc": ["replay", str(src / "paced.csv"), "--pc-moments", "--keep", str(d)],
        "report": ["report", str(src), "--out", str(d)],
        "sweep": ["sweep", "--distance", "1", "--count", "3", "--workers", "1", "--out", str(d)],
        "profile": ["profile", str(src / "handmade.exectrace"), "--perfetto", str(d / "r.perfetto-trace")],
        "capture": ["capture", str(src / "capture" / "capture.sr"), "--run", str(src / "capture" / "run.csv"),
                    "--out", str(d / "r.lined-up.csv")],
    }[command]


def files_in(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*") if not p.is_dir()}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A paced run's files recorded once (hil/tests/data: what replay reads, the PC's inputs among them), two
    synthetic runs (what report reads), and the analysis tests' executor trace and logic analyzer capture (what
    profile and capture read)."""
    ensure_built()
    recorded = recorded_run(tmp_path_factory.mktemp("recorded"), "paced").parent   # a replay writes beside its run
    runs = tmp_path_factory.mktemp("runs")
    for name in ("mixed-2ahead", "mixed-1ahead"):
        synth.write_experiment(runs, name, count=30, seed=1)
    reported = tmp_path_factory.mktemp("reported")          # the report's: and a run in phases (its phases.csv)
    for f in runs.iterdir():
        shutil.copy(f, reported / f.name)
    phased_run(reported)
    data = Path(__file__).resolve().parent.parent / "analysis" / "tests" / "data"     # a trace and a capture
    return {"run": recorded, "run-lockstep": recorded, "run-journal": recorded, "replay": recorded,
            "replay-pc": recorded, "report": reported, "sweep": runs, "profile": data, "capture": data}


def names(command: str, d: Path) -> list[str]:
    """COMMAND's names: {n} is the run's, `r`, or for a replay the recorded run's, `paced` (its sidecar names it)."""
    return [n.format(n="paced" if command.startswith("replay") else "r") for n in OUTPUTS[command]]


def plant_link(at: Path, victim: Path) -> None:
    at.symlink_to(victim)
    if os.getuid() == 0:
        os.lchown(at, NOBODY, NOBODY)


def plant_fifo(at: Path) -> None:
    os.mkfifo(at)
    if os.getuid() == 0:
        os.chown(at, NOBODY, NOBODY)


def test_the_lists_are_the_codes_own() -> None:
    """The run's and the replay's names come from the code's one list of them (run_files, replay_paths)."""
    import argparse

    from mmhil.replay import replay_paths
    from mmrig.cli.run import run_files
    from mmsched.verdict.export import journal_paths

    args = argparse.Namespace(out=Path("r"), unpaced=False, hist="", junit=Path("r.junit.xml"), trace=True,
                              trace_host=False)
    assert sorted(str(p) for _, p in run_files(args)) == sorted(names("run", Path()))
    # --trace-host (root and a tracefs: not run here) adds the host trace beside them, checked as they are
    traced = argparse.Namespace(**{**vars(args), "trace_host": True})
    assert sorted(str(p) for _, p in run_files(traced)) == sorted(names("run", Path()) + ["r.host.dat"])
    lockstep = argparse.Namespace(**{**vars(args), "unpaced": True})
    assert sorted(str(p) for _, p in run_files(lockstep)) == sorted(names("run-lockstep", Path()))
    assert sorted(map(str, journal_paths(Path("r")))) == sorted(names("run-journal", Path()))
    assert sorted(p.name for p in replay_paths(Path(), "paced").values()) == \
        sorted(set(names("replay", Path())) | set(names("replay-pc", Path())))


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "run-journal"])
def test_a_clean_run_writes_exactly_its_list(command: str, sources: dict[str, Path], tmp_path: Path) -> None:
    d = tmp_path / "out"
    d.mkdir()
    done = mmrig(*argv(command, d, sources[command]))
    assert done.returncode in (0, 1, 3), done.stderr
    got = files_in(d)
    if command == "report":
        figures = {f for f in got if f.startswith("figures/")}
        assert figures and all(f.endswith((".png", ".svg")) for f in figures), got
        got -= figures
    assert got == set(names(command, d)), sorted(got ^ set(names(command, d)))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_link_planted_at_every_name_is_replaced_never_written_through(command: str, sources: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    d, mine = tmp_path / "out", tmp_path / "mine"
    d.mkdir()
    mine.mkdir()
    for sub in FOLDERS.get(command, []):
        (d / sub).mkdir()
    victims = {}
    for name in names(command, d):
        victim = mine / name.replace("/", "_")
        victim.write_text(PRECIOUS)
        plant_link(d / name, victim)
        victims[name] = victim
    extra = ["--force"] if command.startswith("run") else []
    done = mmrig(*argv(command, d, sources[command]), *extra)
    assert "Traceback" not in done.stderr, done.stderr
    for name, victim in victims.items():
        assert victim.read_text() == PRECIOUS, f"{name}: written through the planted link"
    if command != "sweep":                    # (a sweep refuses a campaign folder holding links: one line)
        assert done.returncode in (0, 1), done.stderr
        kept = [n for n in victims if (d / n).is_symlink()]
        assert kept == [], kept               # replaced (the journal then removed with the run's files written)
    else:
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.timeout(600)
@pytest.mark.parametrize("command", FIFO_COMMANDS)
def test_a_fifo_planted_at_any_name_is_refused_in_one_line_and_left_alone(command: str, sources: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    for name in names(command, tmp_path):
        d = tmp_path / name.replace("/", "_")
        d.mkdir()
        for sub in FOLDERS.get(command, []):
            (d / sub).mkdir()
        plant_fifo(d / name)
        extra = ["--force"] if command.startswith("run") else []
        done = mmrig(*argv(command, d, sources[command]), *extra, timeout=120)
        # (a sweep's figures failing is a line, not the campaign's exit: its points were run and kept)
        codes = (0, 1, 2) if command == "sweep" and name.startswith("figures/") else (1, 2)
        assert done.returncode in codes and "Traceback" not in done.stderr, (name, done.returncode, done.stderr)
        assert "is a FIFO" in done.stderr or "a FIFO, a device or a socket" in done.stderr, (name, done.stderr)
        assert stat.S_ISFIFO((d / name).lstat().st_mode), name


@pytest.mark.parametrize("command,option", [("report", "report"), ("sweep", "sweep"), ("replay", "replay")])
def test_a_folder_planted_as_a_link_sends_nothing_elsewhere(command: str, option: str, sources: dict[str, Path],
                                                            tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    d = tmp_path / "out"
    plant_link(d, elsewhere)
    done = mmrig(*argv(command, d, sources[command]))
    assert done.returncode == 2 and "is a symbolic link, not a folder: refused" in done.stderr, done.stderr
    assert list(elsewhere.iterdir()) == []
    if command in FOLDERS:                    # and a figures/ (or points/) link inside a real folder
        d2 = tmp_path / "real"
        d2.mkdir()
        for sub in FOLDERS[command]:
            plant_link(d2 / sub, elsewhere)
        done = mmrig(*argv(command, d2, sources[command]))
        assert done.returncode == 2 and "is a symbolic link" in done.stderr, done.stderr
        assert list(elsewhere.iterdir()) == []
    shutil.rmtree(elsewhere)
