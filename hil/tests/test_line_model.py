"""The bench's USB-serial line models (--line-model, hil/bench/uart_usb.c) seen from the host's side: behind an
FTDI model every frame the host gets arrives at one of the latency timer's expiries (a lockstep frame grant stops
there, not at the delimiter's stop bit), the bench's status names the model and its parameters, and a model the
chip does not have is refused at start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import serial

from mmhil.bench import Bench, BenchError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import read_exactly  # noqa: E402

F_CPU = 16_000_000
MS = F_CPU // 1000


def frame_stops(bench: Bench, grants: int) -> list[int]:
    """The cycles where `grants` frame grants stopped, the host reading what each brought."""
    stops = []
    p = serial.Serial(bench.tty("profiler"), 9600, timeout=0.05)
    e = serial.Serial(bench.tty("executor"), 9600, timeout=0.05)
    with p, e:
        got = {"profiler": 0, "executor": 0}
        for _ in range(grants):
            r = bench.grant(10 * F_CPU, frame=True)
            assert r["stop"] == "frame"
            stops.append(r["cycle"])
            for n, port in (("profiler", p), ("executor", e)):
                data = read_exactly(port, r["out"][n] - got[n])
                got[n] = r["out"][n]
                assert data == b"" or data.endswith(b"\x00")       # whole frames, as on the ideal line
    return stops


def test_behind_an_ftdi_every_frame_arrives_at_a_latency_timer_expiry(tmp_path: Path) -> None:
    with Bench(run_dir=tmp_path / "run", lockstep=True, line_model="ftdi:latency=4") as bench:
        stops = frame_stops(bench, 12)
        uart = bench.status()["nodes"]["profiler"]["uart"]["line_model"]
    # at 9600 baud no 62-byte packet fills within 4 ms, so every packet is the timer's: on its 4 ms grid
    assert all(s % (4 * MS) == 0 for s in stops), stops
    assert uart["model"] == "ftdi" and uart["latency_timer_ms"] == 4 and uart["packet_data_bytes"] == 62
    assert uart["frame_us"] == 1000 and uart["packets"] >= 1 and uart["full_packets"] == 0


def test_the_ideal_line_stops_at_the_stop_bit_as_before(tmp_path: Path) -> None:
    with Bench(run_dir=tmp_path / "run", lockstep=True) as bench:
        stops = frame_stops(bench, 6)
        assert bench.status()["nodes"]["profiler"]["uart"]["line_model"] == {"model": "ideal"}
    assert not all(s % MS == 0 for s in stops)           # stop bits fall anywhere, not on USB frames


@pytest.mark.parametrize("spec", ["ftdi:latency=0", "ftdi:latency=256", "usb", "cdc-16u2:latency=1"])
def test_a_model_the_chip_does_not_have_is_refused(tmp_path: Path, spec: str) -> None:
    with pytest.raises(BenchError) as exc:
        Bench(run_dir=tmp_path / "run", lockstep=True, line_model=spec).start()
    assert "--line-model" in str(exc.value)
