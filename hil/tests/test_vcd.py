"""The bench's VCD of the wired ports: one time unit per CPU cycle ($timescale 62500 ps), so a viewer
samples it at the simulated clock's own 16 MHz, not at 10 GHz (docs/bench.md, "VCD of the wired ports")."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mmhil import Bench

sys.path.insert(0, str(Path(__file__).parent))
from helpers import vcd_changes  # noqa: E402

TICK = 1_137_778          # the profiler's tick in cycles (profiler-fw: 71.11 ms at 16 MHz)


@pytest.fixture(scope="module")
def vcd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("vcd")
    path = tmp / "wires.vcd"
    with Bench(run_dir=tmp / "run", paced=False, until_s=1.5, vcd_file=path) as bench:
        assert bench.wait(60) == 0
    return path


def timecode_changes(path: Path) -> list[int]:
    """The times of the timecode port's changes (all its bits change in one write: one time each)."""
    times: list[int] = []
    for t, name, _ in vcd_changes(path):
        if name.startswith("timecode") and t and t not in times:
            times.append(t)
    return times


def test_timescale_is_one_cpu_cycle(vcd: Path) -> None:
    head = vcd.read_text().split("$enddefinitions", 1)[0]
    assert re.search(r"\$timescale\s+62500 ps\s+\$end", head)
    times = timecode_changes(vcd)
    assert len(times) >= 12
    # one tick apart in cycles (the port write sits in the tick ISR: a few cycles of jitter at most)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(abs(g - TICK) <= 50 for g in gaps), gaps
    # the file ends with the time the bench stopped (--until 1.5 s), so a viewer shows all of it
    assert vcd.read_text().splitlines()[-1] == f"#{int(1.5 * 16_000_000)}"


def test_sigrok_reads_it_at_16_mhz(vcd: Path) -> None:
    """sigrok's VCD loader (PulseView's) takes the samplerate from the timescale: 1 / 62.5 ns."""
    cli = shutil.which("sigrok-cli")
    if cli is None:
        pytest.skip("sigrok-cli is not installed (Debian: apt-get install sigrok-cli); the header and times "
                    "are checked above")
    out = subprocess.run([cli, "-I", "vcd", "-i", str(vcd), "--show"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Samplerate: 16000000" in out.stdout, out.stdout


def test_gtkwave_reads_it_in_cycles_of_62500_ps(vcd: Path, tmp_path: Path) -> None:
    """GTKWave's own VCD loader takes the non-standard multiplier: its last time is the last change's cycle
    times 62500 ps. (Its converter vcd2fst does not: it writes a 10 ps timescale, docs/bench.md.)"""
    gtkwave, xvfb = shutil.which("gtkwave"), shutil.which("xvfb-run")
    if gtkwave is None or xvfb is None:
        pytest.skip("gtkwave or xvfb-run is not installed (Debian: apt-get install gtkwave xvfb)")
    out = tmp_path / "gtkwave.out"
    script = tmp_path / "max.tcl"
    script.write_text(f'set f [open "{out}" w]\nputs $f "[gtkwave::getMaxTime] [gtkwave::getTimeDimension]"\n'
                      "close $f\ngtkwave::/File/Quit\n")
    subprocess.run([xvfb, "-a", gtkwave, "-f", str(vcd), "-S", str(script)], capture_output=True, timeout=120)
    last = max(int(ln[1:]) for ln in vcd.read_text().splitlines() if ln.startswith("#"))
    assert out.read_text().split() == [str(last * 62500), "p"]
