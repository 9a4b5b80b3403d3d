"""Normal mode faster than one event a tick, end to end on the paced virtual bench (both AVR images in simavr):
`mmrig run --mode normal -i 2ms` as a user runs it, events due at moments inside ticks (mmsched.model.grid), their
latency measured from each moment to the profiler's stamp of the FIRE.

What is asserted is what the rig promises on any host: every moment of the grid has its row or is counted as
skipped, each row's moment is a grid moment, and its latency runs from that moment. How late a loaded host's
firing thread is, is the result (some events may be `late`), never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

# paced runs whose timing a neighbour's bench would starve: after the parallel phase, by themselves
pytestmark = pytest.mark.alone

MMRIG = [sys.executable, "-m", "mmrig"]


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    from mmhil.bench import ensure_built
    ensure_built()


def run(tmp_path: Path, *args: str) -> tuple[int, pd.DataFrame, dict, str]:
    out = tmp_path / "grid"
    done = subprocess.run([*MMRIG, "run", "--mode", "normal", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=180)
    text = done.stdout + done.stderr
    assert (tmp_path / "grid.json").is_file(), text
    sidecar = json.loads((tmp_path / "grid.json").read_text())
    # valid, or invalid only because host stalls displaced bytes too many events depend on (validity by cause)
    if done.returncode == 3:
        assert [r["code"] for r in sidecar["invalid_reasons"]] == ["bench_lag"], text
    else:
        assert done.returncode == 0 and sidecar["valid"], text
    return done.returncode, pd.read_csv(tmp_path / "grid.csv"), sidecar, text


@pytest.mark.paced
def test_normal_mode_at_500_events_a_second_fires_at_moments_inside_ticks(tmp_path: Path) -> None:
    _, df, sidecar, text = run(tmp_path, "-i", "2ms", "--count", "400", "--baud", "500000")
    grid, tb = sidecar["grid"], sidecar["timebase"]
    assert grid["interval_counts"] == 32_000 and grid["interval_us"] == 2000.0 and grid["per_s"] == 500.0
    # every moment has its row (a grid's generator has no in-flight cap: generator.py), none twice
    assert len(df) == 400 and df["event"].tolist() == list(range(400))
    assert grid["moments"] == 400 and grid["skipped"] == 0, grid
    # each row's moment is a grid moment, in order: whole intervals after moment 0 (the start of first_tc)
    since = (df["scheduled_tc"] - grid["first_tc"]) * tb["tick_counts"] + df["due_counts"]
    assert (since % grid["interval_counts"] == 0).all() and since.is_monotonic_increasing and since.is_unique
    assert df["due_counts"].between(0, tb["tick_counts"] - 1).all() and df["due_counts"].nunique() > 300
    # the latency of every reported event runs from its moment (SPEC.md section 7)
    got = df[df["latency_counts"].notna()]
    assert len(got) >= 380, df["outcome"].value_counts()
    want = (got["result_tc"] - got["scheduled_tc"]) * tb["tick_counts"] + got["result_counts"] - got["due_counts"]
    assert (got["latency_counts"] == want).all()
    # aimed at the moment, not at its tick's start: the firing target minus the moment as the profiler's own
    # stamps place it (est_error_us) is the tick estimate's error, tens of us, at most hundreds under a stall;
    # aimed at the tick's start it would be the moment's distance into the tick, up to 71 ms, and every event
    # but a tick's first would be early
    budget = got[got["measurable"] & got["est_error_us"].notna()]
    assert len(budget) >= 300 and abs(budget["est_error_us"].median()) < 500.0, budget["est_error_us"].describe()
    assert (got["outcome"] == "early").mean() < 0.1, got["outcome"].value_counts()
    assert "links at 500000 baud" in text
    assert f"grid: an event every 2000.000 us (500.0 a second), due inside ticks from tick {grid['first_tc']}: " \
           "400 moments" in text


@pytest.mark.paced
@pytest.mark.parametrize("ppm", [-5000, 5000])
def test_a_moment_late_in_the_tick_is_scaled_by_the_tick_the_profiler_keeps(tmp_path: Path, ppm: int) -> None:
    """A Mega's resonator is off by up to 0.5 %: 70 ms into a tick the nominal length puts the moment 355 us
    off. The PC places a moment by the tick length it fitted from the TIMECODE arrivals, so a profiler 0.5 % slow
    makes no event early (by the nominal length the moments late in its ticks would come up to 355 us early) and
    one 0.5 % fast none late by the drift."""
    _, df, sidecar, _ = run(tmp_path, "-i", "5ms", "--count", "150", "--baud", "500000", "--ppm-profiler", str(ppm))
    assert sidecar["timebase"]["profiler_clock_ppm"] == pytest.approx(ppm, abs=150)
    # less the firing thread's own lateness (wakeup_us, host clock, exact): on a loaded host that varies by
    # hundreds of us from event to event, while what is looked for is the moment's placement
    measured = df[df["measurable"] & df["latency_us"].notna() & df["wakeup_us"].notna()]
    placed = measured["latency_us"] - measured["wakeup_us"]
    tick = sidecar["timebase"]["tick_counts"]
    first, last = placed[measured["due_counts"] < 0.15 * tick], placed[measured["due_counts"] > 0.75 * tick]
    assert len(first) >= 15 and len(last) >= 15, measured["due_counts"].describe()
    # placed by the fitted tick the latency does not depend on how far into its tick a moment is; by the nominal
    # one the moments late in a tick (0.8 of a tick, 57 ms, further in on average) would be 0.5 % of that,
    # 284 us, off: early at -5000 ppm, late at +5000
    shift = last.median() - first.median()
    assert abs(shift) < 120.0, (shift, measured[["due_counts", "latency_us", "wakeup_us"]])
