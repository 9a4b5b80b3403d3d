"""Every command in docs/lab.md is run here, in a fresh directory as a student's own lab directory: `bash lab`
blocks verbatim, `bash lab-short` blocks with fewer events (the experiments: `--count` made small), in the
handout's order; `bash lab-dry` blocks (boards, root, network) by shell syntax check plus `make -n`, the
options parsed or a look-up of the program, and the boards' `mmrig run` lines run on the bench without their
ports (lockstep where the mode allows it, paced with few events where it does not)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from mmanalysis import labhandout
from mmanalysis.labhandout import KINDS

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "docs" / "lab.md"
VENV_BIN = ROOT / ".venv" / "bin"
SHORT_COUNT = 10            # events per experiment for `bash lab-short` blocks (the handout's 200 take minutes)


def blocks() -> list[tuple[str, str]]:
    return [(b.kind, b.body) for b in labhandout.read(LAB)]


def commands(kind: str) -> list[str]:
    return [line for info, body in blocks() if info == f"bash {kind}" for line in body.splitlines() if line.strip()]


def test_every_command_block_is_marked():
    infos = [info for info, _ in blocks()]
    assert infos, "no fenced blocks found"
    assert all(i in KINDS for i in infos), infos
    assert commands("lab") and commands("lab-short") and commands("lab-dry")


def shorten(body: str) -> str:
    """An experiment block with few events: every `--count N` becomes SHORT_COUNT."""
    return re.sub(r"--count \d+", f"--count {SHORT_COUNT}", body)


def lab_env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", MPLBACKEND="Agg")


def invalid_by_stalls_only(results: Path) -> None:
    """Every invalid run of the demo says so, and only for host stalls (bench_lag), each voided event named."""
    for side in results.glob("*.json"):
        meta = json.loads(side.read_text())
        if not meta["valid"]:
            assert [r["code"] for r in meta["invalid_reasons"]] == ["bench_lag"], (side, meta["invalid_reasons"])
            assert meta["measurability"]["events"], side


@pytest.mark.paced
@pytest.mark.alone
def test_lab_commands_run(tmp_path):
    from mmhil.bench import ensure_built

    ensure_built()  # the smoke test, the experiments and step 5 run on the virtual bench
    env = lab_env()
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    for info, body in blocks():
        if info not in ("bash lab", "bash lab-short"):
            continue
        body = shorten(body) if info == "bash lab-short" else body
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=300)
        if r.returncode == 3 and "mmrig demo" in body:
            # the demo's paced runs on a busy host: an experiment left without a valid run (every attempt had more
            # than 5 % of its events displaced by host stalls) is what the rig promises to say, not a failure of it
            invalid_by_stalls_only(tmp_path / "results")
            continue
        assert r.returncode == 0, f"{body}\n--- stdout\n{r.stdout[-2000:]}\n--- stderr\n{r.stderr[-2000:]}"
    # everything the lab writes went to the student's directory: the repository is as it was
    assert subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout == before
    # the smoke test in lockstep: what the handout promises, the same at every try
    smoke = json.loads((tmp_path / "smoke" / "mixed-2ahead.json").read_text())
    assert smoke["environment"]["target"]["lockstep"] and smoke["valid"]
    assert smoke["summary"]["outcomes"]["ok"] == 20 and smoke["summary"]["mean_us"] == 1.375
    # the experiments: every run the handout's questions name, from the bench, and the analysis made on them
    from mmrig.experiments import EXPERIMENTS

    for ex in EXPERIMENTS:
        meta = json.loads((tmp_path / "results" / f"{ex.name}.json").read_text())
        assert meta["config"]["count"] == SHORT_COUNT and meta["target"]["kind"] == "bench", ex.name
    assert (tmp_path / "report" / "report.html").stat().st_size > 0
    assert (tmp_path / "lab.ipynb").stat().st_size > 0
    assert (tmp_path / "inside" / "loaded.exectrace").exists()
    # what the rehearsal promises exists
    assert (tmp_path / "practice-report" / "report.html").stat().st_size > 0
    assert "SYNTHETIC DATA" in (tmp_path / "practice-report" / "report.md").read_text()
    assert (tmp_path / "practice-lab.ipynb").stat().st_size > 0
    assert "targets: bench" in (tmp_path / "smoke-report" / "report.md").read_text()
    assert (tmp_path / "smoke-lab.ipynb").stat().st_size > 0


BOARD_RUNS = [line for line in commands("lab-dry") if line.startswith("mmrig run ") and "--profiler" in line]
# the lines of the boards' block that make the folders its runs go into (a run makes none)
BOARD_MKDIRS = [line for info, body in blocks() if info == "bash lab-dry" and "--profiler" in body
                for line in body.splitlines() if line.startswith("mkdir ")]


def test_board_runs_are_the_bench_demos_experiments():
    """Boards and bench record the same experiments with the same options (experiment 3's generation too), so
    a class can put their runs side by side: each board line's run options parse to what the experiment's
    own (mmrig.experiments) do."""
    from mmrig.cli import build_parser
    from mmrig.experiments import BY_NAME, EXPERIMENTS

    shaping = ("mode", "distance", "rate", "generation", "accuracy", "discipline", "dispatch", "load",
               "executor_load", "random_ids")
    assert len(BOARD_RUNS) == len(EXPERIMENTS)
    for line in BOARD_RUNS:
        args = build_parser().parse_args(shlex.split(line)[1:])
        ex = BY_NAME[args.out.name]
        ours = build_parser().parse_args(["run", *ex.run_options()])
        assert {k: getattr(args, k) for k in shaping} == {k: getattr(ours, k) for k in shaping}, ex.name


@pytest.mark.paced
@pytest.mark.alone
def test_board_runs_run_on_the_bench(tmp_path):
    """The boards' commands for real, on the bench: ports left out, few events, lockstep where the mode allows
    it (normal mode and a PC load need the paced bench)."""
    from mmhil.bench import ensure_built

    ensure_built()
    for line in BOARD_MKDIRS:
        subprocess.run(shlex.split(line), cwd=tmp_path, check=True)
    for line in BOARD_RUNS:
        argv = shlex.split(shorten(line))
        for opt in ("--profiler", "--executor"):
            if opt in argv:
                i = argv.index(opt)
                del argv[i:i + 2]
        if "normal" not in argv and "--load" not in argv:
            argv.append("--unpaced")
        r = subprocess.run([*argv, "--quiet"], cwd=tmp_path, env=lab_env(), capture_output=True, text=True,
                           timeout=120)
        assert r.returncode in (0, 3), f"{argv}\n{r.stderr[-2000:]}"   # 3: a host stall voided a paced run
        out = tmp_path / argv[argv.index("--out") + 1]
        meta = json.loads(out.with_suffix(".json").read_text())
        assert meta["config"]["count"] == SHORT_COUNT and meta["target"]["kind"] == "bench"


@pytest.mark.parametrize("line", commands("lab-dry"))
def test_dry_commands_are_sound(line):
    assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line
    argv = shlex.split(line.split("|")[0])
    if argv[0] in ("cd", "source"):       # shell builtins: the directory and the environment of the lab
        return
    if argv[0] == "jupyter":              # installed by make setup (the dev extra), in the project's .venv
        assert (VENV_BIN / "jupyter").exists() or shutil.which("jupyter"), line
        return
    if argv[0] == "make":
        r = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        port = next((a.split("=", 1)[1] for a in argv if a.startswith("PORT=")), None)
        if port:  # a flash target: it ends in avrdude on that port
            assert re.search(rf"avrdude .*-P {re.escape(port)} ", r.stdout), r.stdout
        else:
            assert r.stdout.strip(), r.stderr
    elif argv[0] == "mmrig" or argv[:3] == ["python", "-m", "mmanalysis"]:
        # the options must exist: parse them with the real parser, without running anything
        if argv[0] == "mmrig":
            from mmrig.cli import build_parser
            rest = argv[1:]
        else:
            from mmanalysis.cli import build_parser
            rest = argv[3:]
        try:
            args = build_parser().parse_args(rest)
        except SystemExit as exc:
            pytest.fail(f"{line}: options rejected ({exc})")
        assert callable(args.func)
    else:
        for part in line.split("|"):
            prog = shlex.split(part)[0]
            if prog != "sudo":
                assert shutil.which(prog), prog
