"""One-node mode: one image alone, unpaced, the other node played from a stimulus file (docs/bench.md).
The firmware tests (executor/tests, profiler-fw/tests) run their images this way; this checks the mode
itself with the test fixture."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mmhil.bench import BENCH_BIN, FIXTURE_ELF


def run_alone(tmp_path: Path, node: str, stimulus: str, cycles: int, *extra: str) -> list[list[str]]:
    stim, trace = tmp_path / "stim.txt", tmp_path / "trace.txt"
    stim.write_text(stimulus)
    subprocess.run([str(BENCH_BIN), f"--{node}", str(FIXTURE_ELF), "--stimulus", str(stim), "--trace", str(trace),
                    "--until-cycles", str(cycles), "--run-dir", str(tmp_path / "run"), *extra],
                   check=True, capture_output=True, timeout=60)
    return [ln.split() for ln in trace.read_text().splitlines()]


def text_out(lines: list[list[str]]) -> str:
    return bytes(int(p[3], 16) for p in lines if p[0] == "O").decode()


def test_executor_alone_timecode_stimulus_and_pcint2(tmp_path: Path) -> None:
    """K lines drive port K (with the PCINT2 simavr lacks); the fixture reports each value it saw."""
    lines = run_alone(tmp_path, "executor", "K 0 00\nK 200000 05\nG 400000 0a\nK 600000 33 48\n", 1_600_000)
    assert [p for p in lines if p[0] in "KG"] == [["K", "0", "00"], ["K", "200000", "05"], ["G", "400000", "0a"],
                                                   ["K", "600000", "33"]]
    # the skewed edge: the low nibble first (0x03 over 0x0a's high nibble), then the high one
    assert text_out(lines).replace("BOOT\n", "") == "K 05\nK 0a\nK 03\nK 33\n"
    assert lines[-1][0] == "END" and int(lines[-1][1]) >= 1_600_000


def test_profiler_alone_event_and_uart_stimulus(tmp_path: Path) -> None:
    """E lines toggle the strobe on ICP5 (the fixture reports each capture with the id lines); U lines
    are host bytes paced at the baud rate (bench timing: the byte enters when its stop bit ends)."""
    lines = run_alone(tmp_path, "profiler", "E 300000 5\nE 400000 2\nU 500000 48\n", 1_200_000)
    edges = [p for p in lines if p[0] == "E"]
    assert [(p[1], p[3], p[4]) for p in edges] == [("300000", "5", "1"), ("400000", "2", "0")]
    out = text_out(lines)
    assert out.count("\nC ") + out.startswith("C ") == 2 and "FIXTURE\n" in out
    delivered = [int(p[1]) for p in lines if p[0] == "I"]
    # 10 bit times at 9600 baud (16667 cycles, rounded up); alone, the core runs in simavr's own loop,
    # so the byte goes in at the first instruction boundary from then on (the longest instruction: 5)
    assert len(delivered) == 1 and 500000 + 16667 <= delivered[0] <= 500000 + 16667 + 5
    tx = [p for p in lines if p[0] == "T"]
    assert tx and len(tx) == sum(1 for p in lines if p[0] == "O")   # UDR writes and completions
