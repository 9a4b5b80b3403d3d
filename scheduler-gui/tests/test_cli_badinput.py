"""Bad `mmrig run` input: one clear line on stderr and exit 2, never a traceback, and before any
bench is started or port opened (so: fast, and no run files). The value checks live in RunConfig, so the GUI
and the pytest plugin get them too. An existing run is not overwritten without --force."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmsched.model.config import RunConfig

MMRIG = [sys.executable, "-m", "mmrig"]

# (argv after `run --unpaced -o {tmp}/r`, a word the error line must contain). {tmp} is the test's tmp_path.
BAD = [
    (["--count", "0"], "--count"),
    (["--count", "-5"], "--count"),
    (["--duration", "-1"], "--duration"),
    (["--duration", "0"], "--duration"),
    (["--duration", "nan"], "--duration"),
    (["--distance", "0"], "--distance"),
    (["--distance", "100000"], "--distance"),
    (["--mode", "normal", "--distance", "-1"], "--distance"),
    (["--accuracy", "500"], "--accuracy"),
    (["--accuracy", "-1"], "--accuracy"),
    (["--rate", "nan"], "--rate"),
    (["--rate", "inf"], "--rate"),
    (["--rate", "-1"], "--rate"),
    (["--rate", "abc"], "--rate"),
    (["--max-in-flight", "0"], "--max-in-flight"),
    (["--late-bound-us", "-3"], "--late-bound-us"),
    (["--late-bound-us", "nan"], "--late-bound-us"),
    (["--lag-bound-us", "-1"], "--lag-bound-us"),
    (["--profiler", "/dev/mmrig-no-such-port", "--executor", "/dev/mmrig-no-such-port2"], "--profiler"),
    (["--no-reset-on-open"], "--no-reset-on-open"),
    (["--profiler", "/dev/mmrig-no-such-port"], "--executor"),
    (["-o", "/proc/mmrig-x/y"], "--out"),
    (["-o", "{tmp}"], "--out"),
    (["-o", "{tmp}/+evil"], "--out"),
    (["-o", "{tmp}/a b"], "--out"),
    (["-o", "{tmp}/no/such/folder/x"], "--out: no such folder"),     # refused, never made
    (["--name", "=cmd"], "--name"),
    (["--name", "-x"], "--name"),
    (["--name", "@x"], "--name"),
    (["--name", "a/b"], "--name"),
    (["--name", "x" * 65], "--name"),
    (["--name", ".."], "--name"),
    (["--name", ""], "--name"),
    (["--executor-load", "cpu,gpu"], "--executor-load"),
    (["--executor-load", "periodic=10ms/9ms"], "--executor-load"),
    (["--executor-load", "periodic=0ms/0ms"], "--executor-load"),
    (["--mode", "normal", "--executor-load", "cpu"], "--executor-load"),
    (["--load", "gpu"], "--load"),
    (["--line", "usb"], "--line"),
    (["--line", "ftdi:latency=0"], "--line"),
    (["--line", "ftdi:latency=256"], "--line"),
    (["--line", "ftdi:timer=4"], "--line"),
    (["--line", "cdc-16u2:latency=1"], "--line"),
    (["--line", "ftdi", "--profiler", "/dev/mmrig-no-such-port", "--executor", "/dev/mmrig-no-such-port2"], "--line"),
    (["--load", "true"], "--load"),
    (["--load", "Idle"], "--load"),
    (["--ppm-profiler", "10001"], "--ppm-profiler"),
    (["--ppm-executor", "fast"], "--ppm-executor"),
    (["--ppm-profiler", "10", "--profiler", "/dev/mmrig-x", "--executor", "/dev/mmrig-y"], "--ppm-profiler"),
]


def check_one_line(proc: subprocess.CompletedProcess, word: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if len(lines) > 1:   # argparse: the usage, then one error line
        assert lines[0].startswith("usage: "), proc.stderr
        assert lines[-1].startswith("mmrig run: error: "), proc.stderr
    else:
        assert len(lines) == 1 and lines[0].startswith("mmrig run: "), proc.stderr
    assert word in lines[-1], lines[-1]
    return lines[-1]


@pytest.mark.parametrize("argv,word", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_one_line_exit_2(tmp_path: Path, argv: list[str], word: str) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    # MMRIG_ROOT names no checkout: a bench started before the input was refused would fail with that instead
    proc = subprocess.run([*MMRIG, "run", "--unpaced", "-q", "-o", str(tmp_path / "r"), *argv],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MMRIG_ROOT": str(tmp_path / "no-checkout")})
    check_one_line(proc, word)
    assert proc.stdout == ""
    assert "checkout" not in proc.stderr, proc.stderr      # refused before any bench was looked for
    assert not [p for p in tmp_path.rglob("*") if p.is_file()], "run files were written"
    assert not (tmp_path / "no").exists(), "a folder was made for -o"


def test_load_without_stress_ng(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = subprocess.run([*MMRIG, "run", "--unpaced", "--load", "-o", str(tmp_path / "r")], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PATH": str(empty)})
    assert "stress-ng" in check_one_line(proc, "--load")
    assert not list(tmp_path.glob("r.*"))


@pytest.mark.parametrize("kw,word", [
    ({"count": 0}, "--count"), ({"count": -5}, "--count"), ({"count": None, "duration_s": -1.0}, "--duration"),
    ({"rate_ms": math.nan}, "--rate"), ({"rate_ms": math.inf}, "--rate"), ({"rate_ms": 0.0}, "--rate"),
    ({"distance": 0}, "--distance"), ({"distance": 256}, "--distance"), ({"accuracy": 101}, "--accuracy"),
    ({"max_in_flight": 0}, "--max-in-flight"), ({"late_bound_us": -3.0}, "--late-bound-us"),
    ({"timeout_ticks": 0}, "timeout_ticks"), ({"name": "=1+1"}, "--name"), ({"name": "a" * 65}, "--name"),
    ({"load": "gpu"}, "--load"), ({"load": 1}, "--load"), ({"load": ""}, "--load"),
])
def test_runconfig_refuses(kw: dict, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        RunConfig(**kw)


def test_runconfig_accepts_the_edges() -> None:
    RunConfig(count=1, distance=255, accuracy=100, max_in_flight=1, name="a" * 64)
    RunConfig(mode="normal", distance=0, count=None, duration_s=0.5, rate_ms=0.84, baud=500000,
              name="gui-normal-20260101-120000")


@pytest.mark.parametrize(("rate_ms", "baud", "words"), [
    (1.0, None, "at 9600 baud (the nodes' rate as built) the profiler's line carries 41 (a RESULT per event"),
    (1.0, 115200, "run the links faster (--baud 250000)"),
    (0.1, 1000000, "the AVR profiler takes 1,198 (a FIRE in and a RESULT out, 750 us of its own CPU each")])
def test_a_normal_mode_grid_faster_than_the_line_is_refused(rate_ms: float, baud: int | None, words: str) -> None:
    # a RESULT per event must fit the profiler's line and its own time, or its result ring fills and results
    # are lost
    with pytest.raises(ValueError, match=r"--rate") as exc:
        RunConfig(mode="normal", rate_ms=rate_ms, baud=baud)
    assert words in str(exc.value)
    RunConfig(mode="mixed", rate_ms=rate_ms, baud=baud)        # mixed events are due at tick starts: no grid


def test_existing_run_needs_force(tmp_path: Path) -> None:
    from mmhil.bench import ensure_built
    ensure_built()
    out = tmp_path / "x"
    argv = [*MMRIG, "run", "--unpaced", "-q", "--count", "3", "-o", str(out)]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    before = (tmp_path / "x.csv").stat().st_mtime_ns
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert "exists; --force to overwrite" in check_one_line(again, "--out")
    assert (tmp_path / "x.csv").stat().st_mtime_ns == before
    (tmp_path / "x.csv").unlink()                        # the sidecar alone is enough to refuse
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert "x.json exists" in check_one_line(again, "--out")
    forced = subprocess.run([*argv, "--force"], capture_output=True, text=True, timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "x.csv").exists() and (tmp_path / "x.json").exists()
