"""run51: the 8051 profiler image on ucsim's 8051 core linked into a C program (hil/bench/mcs51), the
foundation of the 8051 as the bench's third core.

Two unpaced runs of a few virtual seconds: one with run51's stand-in executor (each timecode change on
P1 answered by an event on P0 1.375 us later), one with FIRE frames into the UART's receiver. Each
prints one JSON object; the tests check it against the profiler's own statements: the tick (65536
machine cycles, profiler-fw/board/mcs51), P1 = timecode, and the 8051 timestamp error bound
(profiler-fw/README.md "8051 timestamp error": -2 .. +635 machine cycles, -2.2 .. +689 us).
Skipped where tools/ucsim.sh has not built build/ucsim.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mmhil.bench import HAS_8051, make, PROFILER_IHX as IHX
from mmhil.images import RUN51

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not HAS_8051,
                                reason="build/ucsim is missing: tools/ucsim.sh builds ucsim's 8051 core")

CYCLE_US = 12 / 11.0592            # one machine cycle
TICK = 65536                       # machine cycles (Timer0 mode 1 overflow)
TICK_JITTER = 30                   # profiler-fw/tests/test_mcs51.py: P1 changes after the overflow vary by this
ERROR_MIN_US = -2 * CYCLE_US       # the stated bound, profiler-fw/README.md "8051 timestamp error"
ERROR_MAX_US = 635 * CYCLE_US
EXECUTOR_US = 1.375                # run51's stand-in executor: its answer to a P1 change


@pytest.fixture(scope="module")
def run51() -> Path:
    if shutil.which("sdcc") is None and not IHX.exists():
        pytest.skip("no sdcc to build the 8051 profiler image")
    for target in (["-C", "hil", "mcs51"], ["-C", "profiler-fw", "mcs51"]):
        r = make(ROOT / target[1], "-s", target[2])
        assert r.returncode == 0, r.stdout + r.stderr
    assert RUN51.exists()
    return RUN51


def run(exe: Path, *args: str) -> dict[str, Any]:
    r = subprocess.run([str(exe), "--json", *args, str(IHX)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = json.loads(r.stdout)
    return out


@pytest.fixture(scope="module")
def with_executor(run51: Path) -> dict[str, Any]:
    return run(run51, "--seconds", "8", "--executor")


@pytest.fixture(scope="module")
def with_fire(run51: Path) -> dict[str, Any]:
    return run(run51, "--seconds", "5", "--fire-ms", "250")


def test_timecode_frames_at_the_tick(with_executor: dict[str, Any]) -> None:
    r = with_executor
    print(f"\nrun51: {r['timecode']} TIMECODE frames, first bytes {r['timecode_frame_min']}.."
          f"{r['timecode_frame_max']} machine cycles apart; P1 changes {r['tick_min']}..{r['tick_max']};"
          f" {r['speed']:.2f}x real time")
    assert r["hello"] == 1 and r["bad"] == 0 and r["other"] == 0
    assert r["timecode"] >= int((8 - 0.2) / (TICK * CYCLE_US * 1e-6))   # the LED self test first
    assert r["timecode_breaks"] == 0
    assert TICK - TICK_JITTER <= r["tick_min"] <= r["tick_max"] <= TICK + TICK_JITTER
    assert TICK - TICK_JITTER <= r["timecode_frame_min"] <= r["timecode_frame_max"] <= TICK + TICK_JITTER


def test_p1_is_the_timecode(with_executor: dict[str, Any]) -> None:
    r = with_executor
    assert r["p1_is_timecode"] == r["timecode"] and r["p1_not_timecode"] == 0


def test_result_latency_within_the_stated_bound(with_executor: dict[str, Any]) -> None:
    r = with_executor
    lat, err = r["latency_us"], r["error_us"]
    print(f"\nrun51: {r['edge_results']} RESULTs of {r['edges']} edges, latency min {lat['min']:.1f} / median "
          f"{lat['median']:.1f} / max {lat['max']:.1f} us; error against the edge {err['min']:.1f}.."
          f"{err['max']:.1f} us")
    # every edge answered but perhaps the last (its RESULT may still be on the line at the end)
    assert r["edges"] - 1 <= r["edge_results"] <= r["edges"] and r["edges"] >= 100
    assert r["id_mismatch"] == 0 and r["lost_before"] == 0
    assert ERROR_MIN_US <= err["min"] <= err["max"] <= ERROR_MAX_US
    assert EXECUTOR_US + ERROR_MIN_US <= lat["min"] <= lat["max"] <= EXECUTOR_US + 48 / 11.0592 + ERROR_MAX_US


def test_fire_frames_through_the_receiver(with_fire: dict[str, Any]) -> None:
    """mcs51_uart_rx: a FIRE's stamp is its first byte's start bit (the profiler subtracts one character
    from the poll that saw RI), so stamp - the moment run51 put the byte on the line is the poll error."""
    r = with_fire
    e = r["fire_error_us"]
    print(f"\nrun51: {r['fire_results']} of {r['fires']} FIREs answered, stamp - start bit {e['min']:.1f}.."
          f"{e['max']:.1f} us")
    assert r["fires"] >= 15 and r["fire_results"] >= r["fires"] - 1
    assert r["rx_lost"] == 0 and r["bad"] == 0
    assert ERROR_MIN_US <= e["min"] <= e["max"] <= ERROR_MAX_US


def test_node_reset(run51: Path) -> None:
    """mcs51_reset at 2.03 s: the profiler starts again (a second HELLO, timecodes from 1 again, P1 from
    0), and its RESULTs go on answering the stand-in's edges; a frame on the line at the reset is cut."""
    r = run(run51, "--seconds", "4", "--executor", "--reset-at", "2.03")
    assert r["resets"] == 1 and r["hello"] == 2 and r["bad"] <= 1
    assert r["timecode_breaks"] == 0 and r["p1_not_timecode"] == 0
    assert TICK - TICK_JITTER <= r["tick_min"] <= r["tick_max"] <= TICK + TICK_JITTER
    # two series of about (2 - 0.1) s / 71.1 ms ticks each (each begins after the LED self test)
    assert r["timecode"] >= 2 * int((2 - 0.2) / (TICK * CYCLE_US * 1e-6))
    assert r["edge_results"] >= r["edges"] - 1 and r["id_mismatch"] == 0


def p1_changes(writes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for t, v in writes:
        if not out or out[-1][1] != v:
            out.append((t, v))
    return out


@pytest.mark.skipif(shutil.which("s51") is None, reason="no s51 (Debian's sdcc-ucsim) to compare with")
def test_p1_clocks_equal_s51s(run51: Path, tmp_path: Path) -> None:
    """The port callback's clock is ucsim's own: the P1 changes run51 sees are those of s51's VCD of the
    same image, to the clock (s51 writes the VCD in whole ps; one clock is 90422.5 ps)."""
    vcd = tmp_path / "s51.vcd"
    cfg = tmp_path / "cfg.txt"
    cfg.write_text(f'file "{IHX}"\nset hw vcd[0] output "{vcd}"\nset hw vcd[0] add sfr[0x90]\n'
                   "set hw vcd[0] start\n")
    r = subprocess.run(["s51", "-t", "87C51", "-X", "11.0592M", "-C", str(cfg), "-c", "-"],
                       input="step 600000\nset hw vcd[0] stop\nquit\n", capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert "Simulated" in r.stdout, r.stdout[-1000:]
    theirs: list[tuple[int, int]] = []
    now = 0
    for line in vcd.read_text().splitlines():
        if line.startswith("#"):
            now = int(line[1:])
        elif line.startswith("b") and "x" not in line:
            clocks = now * 11_059_200 / 1e12      # whole clocks, written as whole ps (rounded)
            assert abs(clocks - round(clocks)) < 0.01
            theirs.append((round(clocks), int(line[1:].split()[0], 2)))
    trace = tmp_path / "run51.txt"
    subprocess.run([str(run51), "--seconds", "0.9", "--trace", str(trace), str(IHX)], check=True,
                   capture_output=True, timeout=60)
    ours = [(int(t), int(v, 16)) for t, k, v in (ln.split() for ln in trace.read_text().splitlines())
            if k == "P1"]
    theirs, ours = p1_changes(theirs), p1_changes(ours)
    n = min(len(theirs), len(ours))
    print(f"\nrun51 and s51: the first {n} P1 changes at the same clocks ({ours[n - 1][0]} the last)")
    assert n >= 12        # reset, board_init, board_start, the ticks of ~0.9 s
    assert ours[:n] == theirs[:n]


def test_same_run_whatever_the_quantum(run51: Path) -> None:
    """A co-simulation returns from mcs51_run_until often (to let other cores run): returning after every
    instruction must give the very same run, frame for frame and clock for clock."""
    runs = [run(run51, "--seconds", "3", "--executor", "--fire-ms", "150", *q) for q in ([], ["--quantum", "1"])]
    for r in runs:
        del r["wall_s"], r["speed"]
    assert runs[0] == runs[1] and runs[0]["fire_results"] >= 10


def test_bad_image_is_one_line_exit_2(run51: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ihx"
    bad.write_text(":10000000FFFF\n")
    r = subprocess.run([str(run51), str(bad)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "cannot load" in r.stderr


def test_ucsim_script_is_idempotent() -> None:
    r = subprocess.run(["bash", str(ROOT / "tools" / "ucsim.sh")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "nothing to do" in r.stdout
