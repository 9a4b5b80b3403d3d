"""Every command in docs/lab.md is run here: `bash lab` blocks verbatim, `bash lab-dry` blocks (boards, root,
network) by shell syntax check plus `make -n` or a look-up of the program."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "docs" / "lab.md"
VENV_BIN = ROOT / ".venv" / "bin"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, str]]:
    return [(info.strip(), body) for info, body in FENCE.findall(LAB.read_text())]


def commands(kind: str) -> list[str]:
    return [line for info, body in blocks() if info == f"bash {kind}" for line in body.splitlines() if line.strip()]


def test_every_command_block_is_marked():
    infos = [info for info, _ in blocks()]
    assert infos, "no fenced blocks found"
    assert all(i in ("bash lab", "bash lab-dry") for i in infos), infos
    assert commands("lab") and commands("lab-dry")


def test_lab_commands_run(tmp_path):
    from mmhil.bench import ensure_built

    ensure_built()  # the smoke test runs on the virtual bench
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", MPLBACKEND="Agg")
    for info, body in blocks():
        if info != "bash lab":
            continue
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=150)
        assert r.returncode == 0, f"{body}\n--- stdout\n{r.stdout[-2000:]}\n--- stderr\n{r.stderr[-2000:]}"
    # what the rehearsal promises exists
    assert (tmp_path / "practice-report" / "report.html").stat().st_size > 0
    assert "SYNTHETIC DATA" in (tmp_path / "practice-report" / "report.md").read_text()
    assert (tmp_path / "practice-lab.ipynb").stat().st_size > 0
    assert "targets: bench" in (tmp_path / "smoke-report" / "report.md").read_text()
    assert (tmp_path / "smoke-lab.ipynb").stat().st_size > 0


@pytest.mark.parametrize("line", commands("lab-dry"))
def test_dry_commands_are_sound(line):
    assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line
    argv = shlex.split(line.split("|")[0])
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
            from mmsched.cli import build_parser
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
