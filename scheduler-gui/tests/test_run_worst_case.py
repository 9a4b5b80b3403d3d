"""A run's worst case over time in its sidecar (`maxima`, `mmrig run --maxima-every`): the intervals of the run's
clock, each measured event in the one of its moment, the figures the CSV gives again; and its .hist file in
cyclictest's format naming the events past the histogram's range. Lockstep runs: the same every time, whatever
the host does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mmanalysis.maxima import maxima_of_rows

MMRIG = [sys.executable, "-m", "mmrig"]
# the task dispatch under a periodic task of the executor's: latencies from tens of us to 2 ms, not one constant
SPREAD = ["--dispatch", "task", "--executor-load", "periodic=10ms/2ms"]


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    from mmhil.bench import ensure_built
    ensure_built()


def mmrig(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([*MMRIG, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], pd.DataFrame]:
    out = tmp_path_factory.mktemp("maxima") / "spread"
    done = mmrig("run", "--lockstep", "-D", "20s", *SPREAD, "--maxima-every", "5s", "-q", "-o", str(out), "--hist")
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return out, json.loads(out.with_suffix(".json").read_text()), pd.read_csv(out.with_suffix(".csv"))


def test_the_sidecar_has_the_maxima_of_consecutive_intervals_of_the_runs_clock(run) -> None:
    _, sidecar, df = run
    m = sidecar["maxima"]
    assert sidecar["config"]["maxima_every_s"] == m["every_s"] == 5.0 and m["clock"] == "run"
    iv = m["intervals"]
    assert [(i["start_s"], i["end_s"]) for i in iv] == [(5.0 * k, 5.0 * (k + 1)) for k in range(len(iv))]
    assert len(iv) in (4, 5)                                # 20 s of generation, the last events a few ticks later
    assert sum(i["count"] for i in iv) == m["n"] == sidecar["summary"]["n"] == int(df["in_stats"].sum())
    assert max(i["max_us"] for i in iv if i["count"]) == round(sidecar["summary"]["max_us"], 3)
    assert all(i["p99_us"] <= i["max_us"] for i in iv if i["count"])
    assert len({i["max_us"] for i in iv if i["count"]}) > 1        # a spread, not one constant latency
    # the first event's tick began its distance (2 ticks) after it was made, early in the run's first tick
    tick_s = sidecar["timebase"]["tick_counts"] / sidecar["timebase"]["timer_hz"]
    assert 0 < m["t0_run_s"] < 4 * tick_s and m["first_tc"] == int(df["scheduled_tc"].min())
    for i in iv:                                            # the event named is the interval's worst, in the CSV
        if i["count"]:
            assert df.loc[df["event"] == i["max_event"], "latency_us"].round(3).item() == i["max_us"]


def test_the_csv_gives_the_same_intervals_again(run) -> None:
    _, sidecar, df = run
    m, tb = sidecar["maxima"], sidecar["timebase"]
    again = maxima_of_rows(df.itertuples(), m["every_s"], tb["tick_counts"] / tb["timer_hz"], tb["timer_hz"],
                           m["t0_run_s"], m["run_tick_s"])
    assert again == m


def test_a_run_shorter_than_the_interval_is_one_interval_with_the_summarys_figures(tmp_path: Path) -> None:
    out = tmp_path / "short"
    done = mmrig("run", "--lockstep", "--count", "40", *SPREAD, "-q", "-o", str(out))
    assert done.returncode in (0, 1), done.stderr
    sidecar = json.loads(out.with_suffix(".json").read_text())
    m, s = sidecar["maxima"], sidecar["summary"]
    assert m["every_s"] == 300.0                           # OSADL's five minutes by default
    (iv,) = m["intervals"]
    assert (iv["count"], iv["max_us"], iv["p99_us"]) == (s["n"], round(s["max_us"], 3), round(s["p99_us"], 3))


@pytest.mark.parametrize("bad", ["0", "-5m", "soon", "nan"])
def test_an_interval_that_is_no_time_is_one_line_and_exit_2(bad: str) -> None:
    done = mmrig("run", "--lockstep", "--count", "3", "--maxima-every", bad, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1].startswith("mmrig run: ") and "--maxima-every" in done.stderr


def test_the_hist_file_names_the_events_past_its_range_as_cyclictest_names_its_cycles(run) -> None:
    out, sidecar, df = run
    lines = out.with_suffix(".hist").read_text().splitlines()
    past = df[df["in_stats"] & (df["latency_us"] >= 1000.0)]["event"].tolist()   # 1000 bins of 1 us
    assert past and sidecar["histogram"]["overflow_events"] == past
    assert f"# Histogram Overflows: {len(past):05d}" in lines
    assert lines[-2:] == ["# Histogram Overflow at cycle number:", "# Thread 0:" + "".join(f" {e:05d}" for e in past)]
    assert f"# Max Latencies: {int(df.loc[df['in_stats'], 'latency_us'].max()):05d}" in lines
