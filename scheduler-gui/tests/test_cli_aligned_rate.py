"""Aligned generation makes an event right after a TIMECODE, one every whole number of ticks (71.111 ms each): an
interval it cannot honour (`--rate 0.5`, `--rate 90` in mixed mode, `-i 1000`: 1 ms) ran quietly as one a tick, or
as 14 ticks. `mmrig run` refuses it: one line naming the option and the value, what aligned generation does, the
nearest intervals it honours and what else to use; exit 2, before any bench is started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmanalysis.schema import NOMINAL_TICK_S
from mmsched.model.config import aligned_rate_problem

MMRIG = [sys.executable, "-m", "mmrig"]
TICK_MS = NOMINAL_TICK_S * 1000


@pytest.mark.parametrize("mode, generation, rate_ms", [
    ("mixed", "aligned", None), ("mixed", "aligned", TICK_MS), ("mixed", "aligned", 71.0),
    ("mixed", "aligned", 142.222), ("mixed", "aligned", 1000.0), ("mixed", "aligned", 500.0),
    ("mixed", "free", 90.0), ("mixed", "free", 20.0), ("mixed", "periodic", 1.0),
    ("normal", "aligned", 1.0), ("normal", "aligned", 0.5), ("normal", "aligned", 142.222),
    ("normal", "free", 90.0), ("verification", "aligned", 142.222), ("verification", "aligned", None)])
def test_what_aligned_generation_honours_is_accepted(mode: str, generation: str, rate_ms: float | None) -> None:
    # whole ticks within 1 % (a Mega's resonator alone is off by up to 0.5 %), 'tick', the other generations, and
    # normal mode below a tick (a schedule grid: events due inside ticks)
    assert aligned_rate_problem(mode, generation, rate_ms) is None


@pytest.mark.parametrize("mode, generation, rate_ms, words", [
    ("mixed", "aligned", 0.5, ["--rate 0.5 ms", "at most one event a tick (71.111 ms)", "--generation periodic",
                               "--generation free"]),
    ("mixed", "aligned", 90.0, ["--rate 90 ms", "whole number of ticks", "would run as 71.111 ms",
                                "--generation free"]),
    ("mixed", "aligned", 200.0, ["--rate 200 ms", "would run as 213.333 ms", "--generation free",
                                 "the nearest 142.222ms (2ticks) or 213.333ms (3ticks)"]),
    ("normal", "aligned", 100.0, ["--rate 100 ms", "would run as 71.111 ms", "--generation free"]),
    ("verification", "free", 90.0, ["--rate 90 ms", "verification", "whole number of ticks", "142.222ms"]),
    ("verification", "aligned", 0.5, ["--rate 0.5 ms", "verification", "at most one event a tick"])])
def test_what_it_cannot_honour_is_named_with_what_to_use(mode: str, generation: str, rate_ms: float,
                                                          words: list[str]) -> None:
    text = aligned_rate_problem(mode, generation, rate_ms)
    assert text is not None and "\n" not in text
    for w in words:
        assert w in text, (w, text)


@pytest.mark.parametrize("argv, words", [
    (["--rate", "0.5"], ["--rate 0.5 ms", "--generation periodic"]),
    (["--rate", "90"], ["--rate 90 ms", "would run as 71.111 ms", "the nearest 71.111ms (1tick) or 142.222ms (2ticks)"]),
    (["-i", "500us"], ["-i 500us is --rate 0.5 ms"]),
    (["-i", "1000", "--unpaced", "-l", "5"], ["-i 1000us is --rate 1 ms", "the nearest it honours, 71.111ms (1tick)"]),
    (["--mode", "normal", "-i", "100ms"], ["-i 100000us is --rate 100 ms", "--generation free"])])
def test_mmrig_run_refuses_it_in_one_line_exit_2(argv: list[str], words: list[str], tmp_path: Path) -> None:
    proc = subprocess.run([*MMRIG, "run", *argv, "-o", str(tmp_path / "r")], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout")})
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("mmrig run: "), proc.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert "checkout" not in proc.stderr and not list(tmp_path.iterdir())
