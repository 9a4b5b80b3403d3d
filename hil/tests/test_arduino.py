"""Arduino mode (--arduino): both nodes behave as an Arduino Mega 2560. Every reset starts the
stock stk500v2 bootloader, which waits ~0.8 s for a byte before it starts the application, and opening a
node's port (DTR) resets that node. The host's side is raw pyserial + mmproto.StreamDecoder here (not
Link.handshake, which asks with QUERY at once). Lockstep, so the moment of every host action is exact."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import serial

import mmproto as mp
from mmhil.bench import F_CPU, Bench, BenchError

# the stock bootloader's wait for a first byte before it jumps to the application: measured here as the
# delay of the HELLO after a reset with the bootloader less that without it, 1.1033 - 0.2708 = 0.8325 s
# (0.835 s when first measured in simavr)
BOOT_WAIT_S = (0.80, 0.87)


def trace_lines(path: Path, kind: str, node: str) -> list[tuple[int, str]]:
    """(cycle, rest) of the --trace records of one kind ("R", "O", "I") for one node."""
    out = []
    for line in path.read_text().splitlines():
        f = line.split()
        if f[0] == kind and f[2] == node:
            out.append((int(f[1]), " ".join(f[3:])))
    return out


def first_frame_after(path: Path, node: str, cycle: int) -> tuple[int, mp.Received]:
    """The first frame the node put out after `cycle` (by its bytes in the trace) and the cycle its last
    byte was complete."""
    dec = mp.StreamDecoder()
    for c, hexbyte in trace_lines(path, "O", node):
        if c <= cycle:
            continue
        for frame in dec.feed(bytes([int(hexbyte, 16)])):
            return c, frame
    raise AssertionError(f"no frame from the {node} after cycle {cycle}")


def grant_to(bench: Bench, seconds: float, written: dict[str, int] | None = None) -> dict:
    return bench.grant(int(seconds * F_CPU), frame=False, written=written)


def read_frames(port: serial.Serial, seconds: float = 0.3, dec: mp.StreamDecoder | None = None) -> list[mp.Received]:
    """The frames read in `seconds`; `dec`: the decoder of a wait made of several calls, so that a frame whose
    bytes straddle two calls is still whole (a fresh decoder per call dropped such a HELLO: no frame for 20 s)."""
    dec = dec if dec is not None else mp.StreamDecoder()
    frames, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        frames += dec.feed(port.read(4096))
    return frames


def hello_delay_without_bootloader(tmp_path: Path) -> float:
    """The application's own start: reset (the reset command, no bootloader) to its HELLO complete."""
    trace = tmp_path / "plain.trace"
    with Bench(run_dir=tmp_path / "plain", lockstep=True, trace=trace) as bench:
        grant_to(bench, 2.0)
        bench.reset("profiler")
        grant_to(bench, 3.0)
    end, frame = first_frame_after(trace, "profiler", 2 * F_CPU)
    assert isinstance(frame.message, mp.Hello)
    return (end - 2 * F_CPU) / F_CPU


def test_open_resets_then_bootloader_silence_then_hello(tmp_path: Path) -> None:
    app_start = hello_delay_without_bootloader(tmp_path)
    trace = tmp_path / "t.trace"
    with Bench(run_dir=tmp_path / "b", lockstep=True, arduino=True, trace=trace) as bench:
        grant_to(bench, 2.0)        # power-on: the bootloader, then the application (TIMECODE frames)
        st = bench.status()
        assert st["arduino"] is True
        assert st["nodes"]["profiler"]["open_resets"] == 0
        assert st["nodes"]["profiler"]["bootloader_bytes"] > 4000
        port = serial.Serial(bench.tty("profiler"), 9600, timeout=0.05)
        try:
            grant_to(bench, 2.5)    # the bootloader is waiting: nothing
            assert read_frames(port) == []
            grant_to(bench, 3.2)
            frames = read_frames(port)
        finally:
            port.close()
        st = bench.status()
    assert frames and isinstance(frames[0].message, mp.Hello), frames[:2]
    assert frames[0].message.reset_cause == 0      # the bootloader clears MCUSR, as on the board
    assert st["nodes"]["profiler"]["open_resets"] == 1
    assert st["nodes"]["executor"]["open_resets"] == 0
    (reset, what), = trace_lines(trace, "R", "profiler")
    assert what == "open" and reset == 2 * F_CPU     # at the grant point where the bench saw the open
    end, frame = first_frame_after(trace, "profiler", reset)
    assert isinstance(frame.message, mp.Hello)
    delay = (end - reset) / F_CPU
    print(f"open -> HELLO complete: {delay:.4f} s, of which the application's start {app_start:.4f} s")
    assert BOOT_WAIT_S[0] < delay - app_start < BOOT_WAIT_S[1]


def test_a_byte_in_the_bootloader_window_keeps_it_there(tmp_path: Path) -> None:
    """One byte 0.4 s after the open (at the host's 9600 baud: the bootloader at 115200 reads it as 0x00
    with a framing error, a byte all the same) and the node stays in the bootloader for seconds."""
    trace = tmp_path / "t.trace"
    with Bench(run_dir=tmp_path / "b", lockstep=True, arduino=True, trace=trace) as bench:
        grant_to(bench, 2.0)
        port = serial.Serial(bench.tty("profiler"), 9600, timeout=0.05)
        try:
            grant_to(bench, 2.4, written={"profiler": 0})
            port.write(mp.Query(mp.Hello.TYPE).wire(0)[:1])   # the first byte of a QUERY
            port.flush()
            grant_to(bench, 2.4 + 0.001, written={"profiler": 1})
            for s in range(3, 16):
                grant_to(bench, float(s))
        finally:
            port.close()
        st = bench.status()
    assert st["nodes"]["profiler"]["baud_mismatch_garbled"] == 1
    (reset, _), = trace_lines(trace, "R", "profiler")
    end, frame = first_frame_after(trace, "profiler", reset)
    assert isinstance(frame.message, mp.Hello)
    stay = (end - reset) / F_CPU
    print(f"open -> HELLO with a byte at 0.4 s: {stay:.3f} s")
    assert stay > 3.0


def test_each_open_resets_again_close_does_not(tmp_path: Path) -> None:
    trace = tmp_path / "t.trace"
    with Bench(run_dir=tmp_path / "b", paced=False, arduino=True, trace=trace) as bench:
        for _ in range(2):
            with serial.Serial(bench.tty("executor"), 9600, timeout=0.05) as port:
                frames: list[mp.Received] = []
                dec, end = mp.StreamDecoder(), time.monotonic() + 20
                while not frames and time.monotonic() < end:
                    frames = read_frames(port, 0.1, dec)
                assert frames and isinstance(frames[0].message, mp.Hello), frames[:1]
        time.sleep(0.3)             # closed: no reset
        st = bench.status()
    assert st["nodes"]["executor"]["open_resets"] == 2
    assert st["nodes"]["executor"]["resets"] == 2
    assert st["nodes"]["profiler"]["open_resets"] == 0
    assert [w for _, w in trace_lines(trace, "R", "executor")] == ["open", "open"]


def test_bad_bootloader_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hex"
    bad.write_text(":10000000000102030405060708090A0B0C0D0E0F78\n:00000001FF\n")   # data at 0: not the boot section
    with pytest.raises(BenchError, match="outside the boot section"):
        Bench(run_dir=tmp_path / "b", paced=False, arduino=True, bootloader=bad).start()


def test_endpoint_passes_arduino_on() -> None:
    from mmhil.endpoint import BenchEndpoint

    ep = BenchEndpoint(arduino=True)
    ep.start_bench(paced=False)
    assert ep.bench is not None
    try:
        assert ep.bench.arduino is True
        assert "--arduino" in ep.bench.command()
        assert ep.bench.status()["arduino"] is True
    finally:
        ep.bench.close()


@pytest.mark.paced
def test_paced_open_then_hello_after_the_bootloader(tmp_path: Path) -> None:
    """Paced (virtual time on wall time): the host sees the same on its own clock, from below: the bench is
    never ahead of wall time, so nothing comes before the bootloader's wait (about 1 s) has passed on the
    host's clock too, except by what the bench lagged behind wall time when the open came: a bench the host
    stalled (its lag, in the status) resets the node at a virtual moment already past on the wall, and then
    catches up (CI once saw the Hello 0.52 s after the open). How long after that it comes depends on the host
    (a loaded one reads late): the exact timing is the lockstep tests' (the watchdog test below, test_watchdog.py)."""
    with Bench(run_dir=tmp_path / "b", arduino=True) as bench:
        time.sleep(1.5)             # past the power-on bootloader: the application runs
        port = serial.Serial(bench.tty("profiler"), 9600, timeout=0.02)
        opened = time.monotonic()
        try:
            dec, first = mp.StreamDecoder(), None
            while first is None and time.monotonic() - opened < 60:
                frames = dec.feed(port.read(4096))
                if frames:
                    first = frames[0], time.monotonic() - opened
        finally:
            port.close()
        st = bench.status()
    assert first is not None and isinstance(first[0].message, mp.Hello), first
    lag_s = st["lag"]["max_us"] / 1e6
    # never before the bootloader's wait less the lag the bench recorded, on any host
    assert first[1] > 0.95 - lag_s, (first[1], lag_s)
    assert st["nodes"]["profiler"]["open_resets"] == 1


def test_a_watchdog_reset_waits_in_the_bootloader_too(tmp_path: Path) -> None:
    """After a watchdog reset this bootloader means to jump to the application at once (it reads WDRF),
    but its jump is an EICALL through a null pointer with EIND = 1 (its start-up sets EIND for its own
    calls in the upper flash): it lands at byte 0x20000, in empty flash, which runs (0xFFFF words) up to
    the bootloader at 0x3E000 again (61,440 words: 3.84 ms), and that run, MCUSR cleared, waits its full
    time. So on a Mega every watchdog reset costs the bootloader's wait too, and the application's
    MCUSR is 0. The test image hil/bench/tests/wdt.c reports MCUSR, enables a 15 ms watchdog, is never fed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_watchdog import wdt_bench

    trace = tmp_path / "t.trace"
    with wdt_bench(tmp_path, lockstep=True, arduino=True, trace=trace) as bench:
        grant_to(bench, 2.7)
        st = bench.status()["nodes"]["executor"]
    out = bytes(int(h, 16) for _, h in trace_lines(trace, "O", "executor"))
    resets = [c for c, what in trace_lines(trace, "R", "executor") if what == "watchdog"]
    assert st["wdt_resets"] == len(resets) == 3
    assert out.split(b"\n")[:3] == [b"MCUSR 00"] * 3
    first, gaps = resets[0] / F_CPU, [(b - a) / F_CPU for a, b in zip(resets, resets[1:])]
    print(f"first watchdog reset at {first:.4f} s, then every {gaps[0]:.4f} s")
    # power-on: the bootloader's wait, the image's start, its 16 ms watchdog
    assert BOOT_WAIT_S[0] + 0.016 < first < BOOT_WAIT_S[1] + 0.03
    # each later one: the slide through empty flash (3.84 ms) and the same again
    assert all(abs(g - first - 0.00384) < 0.0005 for g in gaps), gaps
