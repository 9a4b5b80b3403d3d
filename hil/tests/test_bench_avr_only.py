"""The bench built where ucsim's 8051 core is not (no build/ucsim: a machine where the sdcc source package
could not be had, or the installed package): hil/bench/Makefile builds the AVR bench alone, which works,
and refuses the 8051 profiler's image with one line (exit status 2). Built in a copy of the bench's
sources with no build/ucsim beside it (about 15 s of compiling)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mmhil.bench import BENCH_DIR, EXECUTOR_ELF, PROFILER_ELF, PROFILER_IHX, ensure_built


@pytest.fixture(scope="module")
def avr_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ensure_built()
    bench = tmp_path_factory.mktemp("avr-only") / "hil/bench"
    bench.mkdir(parents=True)
    for f in [*BENCH_DIR.glob("*.c"), *BENCH_DIR.glob("*.h"), BENCH_DIR / "Makefile"]:
        shutil.copy2(f, bench / f.name)
    done = subprocess.run(["make", "-C", str(bench), "build/mmbench"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mmbench: avr-only" in done.stdout and (bench / "build/variant").read_text().strip() == "avr-only"
    return bench / "build/mmbench"


def test_avr_bench_works_without_ucsim(avr_only: Path, tmp_path: Path) -> None:
    done = subprocess.run([str(avr_only), "--profiler", str(PROFILER_ELF), "--executor", str(EXECUTOR_ELF),
                           "--run-dir", str(tmp_path / "r"), "--unpaced", "--until", "1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    st = json.loads(done.stdout)
    assert st["nodes"]["profiler"]["kind"] == "avr" and st["wires"]["changes"] > 0


def test_8051_image_refused_with_one_line(avr_only: Path, tmp_path: Path) -> None:
    image = PROFILER_IHX                                      # need not exist: the name is refused first
    done = subprocess.run([str(avr_only), "--profiler", str(image), "--executor", str(EXECUTOR_ELF),
                           "--run-dir", str(tmp_path / "r"), "--unpaced", "--until", "0.1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"mmbench: {image}: an 8051 profiler image, but this mmbench was built without the 8051 core "
        "(build/ucsim is missing: bash tools/ucsim.sh, then make -C hil/bench)"]
