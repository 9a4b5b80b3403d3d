"""The distribution holds every module of every import package (a wheel is built and looked into), and
a non-editable install of it works from a new virtual environment."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_wheel_holds_every_module(tmp_path: Path) -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    src, out = tmp_path / "src", tmp_path / "wheel"
    src.mkdir()
    pristine_copy(src)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("mmrig-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    want = set()
    for package, folder in meta["package-dir"].items():
        for py in (ROOT / folder).rglob("*.py"):
            want.add(f"{package}/{py.relative_to(ROOT / folder).as_posix()}")
    missing = sorted(want - inside)
    assert missing == [], f"modules left out of the wheel (pyproject's packages list): {missing}"
