"""The distribution holds every module of every import package (a wheel is built and looked into), and
a non-editable install of it works from a new virtual environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pristine_copy(dest: Path) -> None:
    """The distribution's sources alone (no build/ or *.egg-info left by earlier builds: a stale
    SOURCES.txt would put modules in the wheel that the packages list leaves out)."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, dest / name)
    for folder in meta["package-dir"].values():
        for py in (ROOT / folder).rglob("*.py"):
            (dest / py.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(py, dest / py.relative_to(ROOT))


def pip_from_pristine(tmp_path: Path, *args: str) -> None:
    """`pip ARGS... SRC` (no deps, no build isolation: offline) on a pristine copy of the sources."""
    src = tmp_path / "src"
    src.mkdir()
    pristine_copy(src)
    done = subprocess.run([sys.executable, "-m", "pip", *args, "--no-deps", "--no-build-isolation", "-q", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_wheel_holds_every_module(tmp_path: Path) -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    out = tmp_path / "wheel"
    pip_from_pristine(tmp_path, "wheel", "-w", str(out))
    (wheel,) = out.glob("mmrig-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    want = set()
    for package, folder in meta["package-dir"].items():
        for py in (ROOT / folder).rglob("*.py"):
            want.add(f"{package}/{py.relative_to(ROOT / folder).as_posix()}")
    missing = sorted(want - inside)
    assert missing == [], f"modules left out of the wheel (pyproject's packages list): {missing}"


def test_an_installed_copy_runs_the_gui_help_and_a_lockstep_run(tmp_path: Path) -> None:
    # pip install . (not editable) into its own directory, used from the checkout as a user would: the GUI
    # is there, and the bench and the images are found in the checkout (mmhil.paths)
    site = tmp_path / "site"
    pip_from_pristine(tmp_path, "install", "--target", str(site))
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import mmrig.gui, mmhil; print(mmrig.gui.__file__)"],
                           capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr       # the installed copy, not the tree
    helped = subprocess.run([sys.executable, "-m", "mmrig", "gui", "--help"], capture_output=True, text=True,
                            env=env, cwd=ROOT, timeout=60)
    assert helped.returncode == 0 and "usage: mmrig gui" in helped.stdout
    ran = subprocess.run([sys.executable, "-m", "mmrig", "run", "--unpaced", "-l", "5"], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=120)
    assert ran.returncode == 0 and "5/0/0/0/0" in ran.stdout, ran.stdout + ran.stderr[-2000:]
    outside = subprocess.run([sys.executable, "-m", "mmrig", "run", "--unpaced", "-l", "5"], capture_output=True,
                             text=True, env=env, cwd=tmp_path, timeout=120)
    assert outside.returncode == 2 and "needs an mmrig checkout" in outside.stderr
