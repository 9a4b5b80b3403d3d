"""Lockstep runs behind a USB-serial adapter's timing (`--line`, hil/bench/uart_usb.c): the tick estimate's error
moves from the ideal line's by exactly what the adapter model predicts for each TIMECODE frame, computed here from
the latency timer (or the 16U2's flush period) and the 1 ms USB frame alone, and each run is byte-identical run to
run, as every lockstep run is."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mmhil import LockstepEndpoint
from mmhil.bench import F_CPU, ensure_built
from mmhil.linemodel import LineModel
from mmsched.model.config import RunConfig
from mmsched.model.result import RunResult
from mmsched.run.runner import run
from mmsched.verdict.tickestimate import estimate_errors_s

FRAME_CYCLES = F_CPU // 1000                 # a full-speed USB frame, 1 ms
BAUD = 9600
RUN = dict(mode="mixed", distance=2, count=150, random_ids=True, seed=7)


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    ensure_built()


def lockstep_run(folder: Path, name: str, spec: str) -> RunResult:
    folder.mkdir(parents=True, exist_ok=True)
    result = run(RunConfig(name=name, out=folder / name, **RUN), LockstepEndpoint(line_model=LineModel.parse(spec)))
    assert result.valid, result.sidecar["invalid_reason"]
    return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    base = tmp_path_factory.mktemp("lines")
    return {spec: lockstep_run(base / spec.replace(":", "_").replace("=", "_"), "r", spec)
            for spec in ("ideal", "ftdi:latency=16", "cdc-16u2")}


def ceil_to(cycle: int, step: int) -> int:
    return -(-cycle // step) * step


def predicted_arrival_s(ideal_s: float, spec: str) -> float:
    """When the host has a frame whose last byte was complete at `ideal_s` (its arrival on the ideal line), as
    the chip's rule says: ftdi, the latency timer's next expiry (it runs from the bench's start and restarts
    with every packet, status-only ones too: a grid); cdc-16u2, the next Timer0 overflow (clk/256 of 16 MHz,
    65536 cycles), then the next USB frame."""
    cycle = round(ideal_s * F_CPU)
    model = LineModel.parse(spec)
    if model.kind == "ftdi":
        return ceil_to(cycle, model.latency_ms * FRAME_CYCLES) / F_CPU
    return ceil_to(ceil_to(cycle, 256 * 256), FRAME_CYCLES) / F_CPU


def before_the_end(result: RunResult) -> dict[int, float]:
    """The run's TIMECODE arrivals up to its last event's tick. After that the run asks the profiler for its
    COUNTERS, and the adapter hands that QUERY to the profiler at a USB frame, not at once: its answer moves the
    profiler's last frames on the wire itself, which is not the TIMECODE's hold this test is about."""
    last = int(pd.read_csv(result.csv_path)["scheduled_tc"].max())
    return {tc: at for tc, at in result.timecodes if tc <= last}


@pytest.mark.parametrize("spec", ["ftdi:latency=16", "cdc-16u2"])
def test_each_timecode_arrives_when_the_adapter_model_says(runs: dict[str, RunResult], spec: str) -> None:
    # at 9600 baud the 62 data bytes of a full FTDI packet take 64.6 ms, the 97 that flush a 16U2 101 ms: more
    # than the timer's 16 ms and the flush's 4.1 ms, so no packet fills and every frame waits for the timer
    assert 62 * 10 / BAUD > 0.016 and 97 * 10 / BAUD > 256 * 256 / F_CPU
    ideal, model = before_the_end(runs["ideal"]), before_the_end(runs[spec])
    assert len(ideal) > 140 and ideal.keys() == model.keys()
    for tc, at in ideal.items():
        assert model[tc] == pytest.approx(predicted_arrival_s(at, spec), abs=1 / F_CPU), tc


# the longest a frame can wait: the FTDI's timer (its expiries are on the frame grid), the 16U2's flush period and
# the frame after it
@pytest.mark.parametrize("spec, hold_s", [("ftdi:latency=16", 0.016), ("cdc-16u2", 256 * 256 / F_CPU + 0.001)])
def test_the_tick_estimates_error_moves_by_the_models_hold(runs: dict[str, RunResult], spec: str,
                                                           hold_s: float) -> None:
    wire_s = 10 * 10 / BAUD                       # a TIMECODE frame: 10 bytes of 10 bits
    tick_s = 1_137_778 / F_CPU
    ideal = before_the_end(runs["ideal"])
    predicted = [(tc, predicted_arrival_s(at, spec)) for tc, at in ideal.items()]
    measured = sorted(before_the_end(runs[spec]).items())
    err_ideal = np.array(estimate_errors_s(sorted(ideal.items()), wire_s, tick_s))
    err_model = np.array(estimate_errors_s(measured, wire_s, tick_s))
    err_predicted = np.array(estimate_errors_s(predicted, wire_s, tick_s))
    assert np.abs(err_ideal).max() < 60e-6                        # the ideal line: every frame on the grid
    np.testing.assert_allclose(err_model, err_predicted, atol=2 / F_CPU)
    # each frame's hold is below that, and about half of it on average
    assert 0 <= err_model.min() and err_model.max() < hold_s
    assert hold_s / 4 < err_model.mean() - err_ideal.mean() < hold_s * 3 / 4
    # and the sidecar says as much over the run's frames
    assert runs[spec].sidecar["tick_estimate"]["mean_us"] > runs["ideal"].sidecar["tick_estimate"]["mean_us"] + 1000
    assert runs[spec].sidecar["target"]["line_model"] == LineModel.parse(spec).params()


@pytest.mark.parametrize("spec", ["ideal", "ftdi:latency=16"])
def test_a_line_model_run_is_byte_identical_run_to_run(runs: dict[str, RunResult], tmp_path: Path, spec: str) -> None:
    again = lockstep_run(tmp_path, "r", spec)
    assert again.csv_path is not None and runs[spec].csv_path is not None
    assert again.csv_path.read_bytes() == runs[spec].csv_path.read_bytes()
    assert again.timecodes == runs[spec].timecodes
    assert again.sidecar["tick_estimate"] == runs[spec].sidecar["tick_estimate"]


def test_the_models_cost_differs_from_the_ideal_line(runs: dict[str, RunResult]) -> None:
    # the adapter moves the frames, so the runs differ (mixed mode's slack rides on the TIMECODE's arrival)
    assert runs["ftdi:latency=16"].csv_path.read_bytes() != runs["ideal"].csv_path.read_bytes()
    assert math.isclose(runs["ideal"].summary["mean_us"], runs["ftdi:latency=16"].summary["mean_us"], abs_tol=1.0)
