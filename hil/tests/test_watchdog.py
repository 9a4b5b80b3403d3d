"""Watchdog resets on the bench (simavr 1.6 parks them where the two-node loop never looked;
docs/bench.md, "Watchdog"). The test image hil/bench/tests/wdt.c reports MCUSR at start, enables the
watchdog at 15 ms and stops feeding it ('F' from the host: it feeds it)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import serial

from mmhil.bench import BENCH_BIN, BENCH_DIR, FIXTURE_ELF, Bench, ensure_built, make

WDT_ELF = BENCH_DIR / "build/wdt.elf"
F_CPU = 16_000_000
BITE = 256_000 + 133_482      # watchdog 16.0 ms (2048 cycles of 128 kHz) + the image's start up to wdt_enable


def wdt_bench(tmp_path: Path, **kw) -> Bench:
    if not WDT_ELF.exists():
        assert make(BENCH_DIR, "build/wdt.elf").returncode == 0
    ensure_built(FIXTURE_ELF, WDT_ELF)
    return Bench(profiler_elf=FIXTURE_ELF, executor_elf=WDT_ELF, run_dir=tmp_path / "run", **kw)


def test_a_watchdog_timeout_resets_the_node_with_wdrf(tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    with wdt_bench(tmp_path, lockstep=True, trace=trace) as bench:
        bench.grant(F_CPU // 10, frame=False)                   # 0.1 s
        st = bench.status()["nodes"]["executor"]
    out = bytes(int(ln.split()[3], 16) for ln in trace.read_text().splitlines()
                if ln.startswith("O ") and ln.split()[2] == "executor")
    # the first start is power-on (PORF), every later one a watchdog reset (WDRF), seen by the image
    assert out.split(b"\n")[:4] == [b"MCUSR 01", b"MCUSR 08", b"MCUSR 08", b"MCUSR 08"]   # (a 5th under way)
    assert st["wdt_resets"] == 4 and st["resets"] == 4
    resets = [int(ln.split()[1]) for ln in trace.read_text().splitlines() if ln.startswith("R ")]
    assert resets == [BITE * k for k in range(1, 5)]


def test_one_node_mode_counts_the_watchdog_reset_too(tmp_path: Path) -> None:
    r = subprocess.run([str(BENCH_BIN), "--executor", str(WDT_ELF), "--until-cycles", str(BITE + 1000),
                        "--run-dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert '"wdt_resets":1' in r.stdout and "watchdog reset at cycle %d" % BITE in r.stderr


def test_a_fed_watchdog_does_not_bite_and_the_reset_command_sets_extrf(tmp_path: Path) -> None:
    with wdt_bench(tmp_path, lockstep=True) as bench:
        port = serial.Serial(bench.tty("executor"), 9600, timeout=0.05)
        with port:
            bench.grant(F_CPU // 100, frame=False)             # 10 ms: the image reported and enabled it
            port.write(b"F")
            bench.grant(F_CPU // 10, frame=False, written={"profiler": 0, "executor": 1})
            st = bench.status()["nodes"]["executor"]
            assert st["wdt_resets"] == 0 and st["uart"]["in"] == 1
            bench.reset("executor")                            # the RESET pin: EXTRF
            bench.grant(F_CPU // 10 + F_CPU // 50, frame=False, written={"profiler": 0, "executor": 1})
            got = b""
            deadline = time.monotonic() + 2
            while got.count(b"\n") < 2 and time.monotonic() < deadline:
                got += port.read(64)
    assert got.split(b"\n")[:2] == [b"MCUSR 01", b"MCUSR 02"]
