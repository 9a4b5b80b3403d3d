"""Wheel build step (pyproject.toml: [tool.setuptools.cmdclass] build_py): puts the virtual bench's data in
the built package, so that `pip install .` (not editable) gives a working bench away from the checkout:

    mmhil/data/profiler.elf, mmhil/data/executor.elf   the firmware images, as built by `make build`
    mmhil/data/bench/                                  the bench's C sources and Makefile (mmhil.paths builds
                                                       the program from them on first use)

Setuptools loads this file by itself at build time (not the mmhil package): it imports only the standard
library and setuptools. Images that are not built are left out with a warning; the installed package then
says what is missing and how to get it when a bench is started (mmhil.bench.ensure_built).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools.command.build_py import build_py

BENCH_FILES = ("Makefile", "*.c", "*.h", "tests/fixture.c")
IMAGES = {"profiler.elf": "profiler-fw/build/avr/profiler.elf", "executor.elf": "executor/build/avr/executor.elf"}


def stage(root: Path, data: Path) -> list[str]:
    """Copies the bench sources and the built images from checkout `root` into `data`; returns what was
    missing (nothing is copied without the bench's sources: a source tree that is not a checkout)."""
    bench = root / "hil/bench"
    if not (bench / "Makefile").is_file():
        return ["hil/bench (not an mmrig checkout)"]
    for pattern in BENCH_FILES:
        for f in bench.glob(pattern):
            (data / "bench" / f.relative_to(bench)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, data / "bench" / f.relative_to(bench))
    missing = []
    for name, rel in IMAGES.items():
        if (root / rel).is_file():
            shutil.copy2(root / rel, data / name)
        else:
            missing.append(rel)
    return missing


class BuildPy(build_py):
    """build_py, then the bench data into the build's mmhil/data (never into the source tree)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return                     # an editable install finds the checkout itself (mmhil.paths)
        root = Path(self.distribution.src_root or Path.cwd()).resolve()
        missing = stage(root, Path(self.build_lib) / "mmhil" / "data")
        if missing:
            print(f"mmhil: not in the package (build them first for a bench that works away from the checkout): "
                  f"{', '.join(missing)}", file=sys.stderr)
