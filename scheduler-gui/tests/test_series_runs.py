"""Mixed mode at a kilohertz end to end (`mmrig run --mode mixed --generation periodic`): the executor is sent
the schedule grid in PERIODIC frames (mmsched.model.series) and fires its moments inside ticks; every moment has its
row, due at its moment, with its latency from that moment to the profiler's capture of the edge.

Lockstep runs assert the figures exactly (virtual time); the paced run asserts only what the rig promises on any
host: every event accounted for, none missed or early by the executor's doing or the rig's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mmsched.model.config import RunConfig

MMRIG = [sys.executable, "-m", "mmrig"]
# the executor's compare interrupt at 1 kHz (TIMER1_COMPC, docs/long-runs.md): the most it holds a tick's stamp up
EXEC_COMPARE_ISR_US = 38.5


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    from mmhil.bench import ensure_built
    ensure_built()


def run(tmp_path: Path, *args: str) -> tuple[int, pd.DataFrame, dict, str]:
    out = tmp_path / "series"
    done = subprocess.run([*MMRIG, "run", "--mode", "mixed", "--generation", "periodic", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=240)
    text = done.stdout + done.stderr
    assert (tmp_path / "series.json").is_file(), text
    return done.returncode, pd.read_csv(tmp_path / "series.csv"), json.loads((tmp_path / "series.json").read_text()), text


def moments_are_the_grid(df: pd.DataFrame, sidecar: dict) -> None:
    grid, tb = sidecar["grid"], sidecar["timebase"]
    since = (df["scheduled_tc"] - grid["first_tc"]) * tb["tick_counts"] + df["due_counts"]
    assert (since % grid["interval_counts"] == 0).all() and since.is_monotonic_increasing and since.is_unique
    got = df[df["latency_counts"].notna()]
    want = (got["result_tc"] - got["scheduled_tc"]) * tb["tick_counts"] + got["result_counts"] - got["due_counts"]
    assert (got["latency_counts"] == want).all()


def test_a_kilohertz_series_in_lockstep_puts_every_event_on_time(tmp_path: Path) -> None:
    code, df, sidecar, text = run(tmp_path, "-i", "1ms", "--baud", "500000", "--count", "3000", "--unpaced")
    assert code == 0 and sidecar["valid"] and sidecar["invariant"]["ok"], text
    assert len(df) == 3000 and df["event"].tolist() == list(range(3000))
    assert (df["outcome"] == "ok").all(), df["outcome"].value_counts()
    assert df["due_counts"].nunique() > 2500 and df["fired_tc"].notna().all()
    assert sidecar["grid"]["per_s"] == 1000.0 and sidecar["grid"]["periodic"] == {
        "series": 1, "sent": 1, "acked": 1, "refused": []}
    moments_are_the_grid(df, sidecar)
    # the executor's moment, from its timer interrupt: 4 to 12 us after its time, more when it met the kernel
    assert df["latency_us"].min() > 0 and df["latency_us"].median() < 20 and df["latency_us"].max() < 100
    assert "1,000.0 a second" in text
    # the AVR profiler's own histogram of the same edges: its cells are the PC's, cell for cell
    ph = sidecar["profiler_histogram"]
    assert ph["final"] and ph["complete"] and ph["agreement"]["agrees"], ph["agreement"]
    assert (ph["ok"], ph["late"], ph["early"], ph["missed"], ph["stray"]) == (3000, 0, 0, 0, 0)
    pc = df["latency_counts"] // 16
    assert ph["counts"] == [int((pc == i).sum()) for i in range(1000)]
    assert ph["max_us"] == df["latency_us"].max() and ph["worst"]["event"] == int(df["latency_us"].idxmax())
    assert ph["reports"] >= 3                    # a report a second (14 ticks) over the 3 s, and the final one
    assert "agrees with the PC's, cell for cell" in text


def test_a_run_longer_than_one_series_goes_on_without_a_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PERIODIC carries at most 65535 events; a longer run is several, the executor queueing the next behind
    the running one. Run in this process with series of 400, so that 1,000 events are three of them."""
    from mmhil import LockstepEndpoint
    from mmsched.model import series
    from mmsched.run.runner import Runner

    monkeypatch.setattr(series, "CHUNK", 400)
    cfg = RunConfig(mode="mixed", generation="periodic", rate_ms=1.0, baud=500000, count=1000,
                    out=tmp_path / "long")
    result = Runner(cfg, LockstepEndpoint()).run()
    assert result.valid and result.summary["outcomes"]["ok"] == 1000, result.summary
    assert result.sidecar["grid"]["periodic"] == {"series": 3, "sent": 3, "acked": 3, "refused": []}
    df = pd.read_csv(tmp_path / "long.csv")
    moments_are_the_grid(df, result.sidecar)
    assert df["latency_us"].max() < 100                       # the moments around each hand-over too


@pytest.mark.paced
def test_a_kilohertz_series_on_the_paced_bench_accounts_for_every_event(tmp_path: Path) -> None:
    code, df, sidecar, text = run(tmp_path, "-i", "1ms", "--baud", "500000", "--count", "2000")
    if code == 3:          # valid, or invalid only because host stalls displaced bytes too many events depend on
        assert [r["code"] for r in sidecar["invalid_reasons"]] == ["bench_lag"], text
    else:
        assert code == 0 and sidecar["valid"], text
    assert len(df) == 2000 and sidecar["invariant"]["ok"]
    moments_are_the_grid(df, sidecar)
    # the executor fires in virtual time: no host stall makes it miss; a measurable event is on time, or early by
    # the executor's own doing: a tick whose edge it stamped late (its 1 kHz compare interrupt, 38.5 us of every
    # millisecond, held the pin-change interrupt up) puts the next tick's later moments out early by as much
    # (docs/long-runs.md; 14 of 2,000 in one run of make check, none in most)
    measurable = df[df["measurable"]]
    assert measurable["outcome"].isin(["ok", "early"]).all(), measurable["outcome"].value_counts()
    early = measurable[measurable["outcome"] == "early"]
    assert (early["latency_us"] > -EXEC_COMPARE_ISR_US).all(), early["latency_us"].min()


def histogram_alone(df: pd.DataFrame, sidecar: dict, total: int) -> None:
    """A series on the profiler's histogram alone: no event rows, every moment counted by the profiler, the
    run's histogram and summary its figures, and the executor's line quiet (one FIRED a series)."""
    assert df.empty and list(df.columns)[:3] == ["event", "tag", "event_id"]
    s, h, ph = sidecar["summary"], sidecar["histogram"], sidecar["profiler_histogram"]
    assert ph["final"] and ph["complete"] and not ph["raw"] and sidecar["invariant"]["ok"]
    assert sum(s["outcomes"].values()) == total == s["from_profiler_histogram"]["series_events"]
    assert s["n"] == h["n"] == sum(h["counts"]) + h["overflow"] == ph["ok"] + ph["late"]
    assert sidecar["counters"]["scheduler"].get("series_fired", 0) == sidecar["grid"]["periodic"]["series"]
    assert sidecar["counters"]["executor"]["tx_dropped"] == 0


def test_a_kilohertz_series_on_the_histogram_alone_fits_a_115200_baud_line(tmp_path: Path) -> None:
    """At 115200 baud a RESULT per event does not fit the profiler's line at 1 kHz (569 a second): the run
    takes the AVR profiler's histogram alone, and quiet series (a FIRED for each series' last event only)."""
    code, df, sidecar, text = run(tmp_path, "-i", "1ms", "--baud", "115200", "--count", "3000", "--unpaced", "--hist")
    assert code == 0 and sidecar["valid"], text
    assert "the profiler's histogram alone measures this series" in text
    histogram_alone(df, sidecar, 3000)
    assert sidecar["summary"]["outcomes"]["ok"] == 3000 and sidecar["summary"]["max_us"] < 100
    hist = (tmp_path / "series.hist").read_text().splitlines()
    assert sum(int(line.split()[1]) for line in hist if not line.startswith("#")) == 3000
    # the report reads it with the same reader: its figures in the profilers' table, no row in the run table
    from mmanalysis.report import report
    md = report([tmp_path / "series.csv"], tmp_path / "report", figures=False)["md"].read_text()
    table = md.split("## The profiler's own histograms")[1]
    assert "| series | 1 | 3000 | 0 | 0 | 0 | 0 |" in table
    assert "| series |" not in md.split("## Runs shown")[1].split("##")[0]
    # a RESULT per event asked for at that line: refused in one line, before a port is opened
    done = subprocess.run([*MMRIG, "run", "--mode", "mixed", "--generation", "periodic", "-i", "1ms", "--baud", "115200",
                           "--raw", "--out", str(tmp_path / "raw")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--baud 250000" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_long_run_on_the_histogram_alone_hands_each_series_over_by_the_tick(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Quiet series send no FIRED to begin the next by: the run sends each next one a little after the one
    before it began, by the profiler's tick, and the executor takes every one (series of 400: 1,000 events are
    three). A series sent too soon is refused (LIST_FULL) and the run says so: invalid, never its moments as
    the executor's misses."""
    from mmhil import LockstepEndpoint
    from mmsched.model import series
    from mmsched.run.runner import Runner

    monkeypatch.setattr(series, "CHUNK", 400)
    cfg = RunConfig(mode="mixed", generation="periodic", rate_ms=1.0, baud=115200, raw=False, count=1000,
                    out=tmp_path / "long")
    result = Runner(cfg, LockstepEndpoint()).run()
    assert result.valid and result.summary["outcomes"]["ok"] == 1000, (result.summary, result.sidecar["invalid_reasons"])
    assert result.sidecar["grid"]["periodic"] == {"series": 3, "sent": 3, "acked": 3, "refused": []}
    assert result.sidecar["counters"]["scheduler"]["series_fired"] == 3        # each series' last event


@pytest.mark.paced
def test_a_kilohertz_series_on_the_histogram_alone_on_the_paced_bench_accounts_for_every_event(
        tmp_path: Path) -> None:
    code, df, sidecar, text = run(tmp_path, "-i", "1ms", "--baud", "115200", "--count", "2000", "--no-raw")
    assert code in (0, 3), text
    histogram_alone(df, sidecar, 2000)


@pytest.mark.parametrize("kw, words", [
    ({"mode": "normal", "generation": "periodic", "rate_ms": 1.0}, "mixed mode's"),
    ({"mode": "mixed", "generation": "periodic", "rate_ms": 1.0, "baud": 500000, "random_ids": True}, "go round"),
    ({"mode": "mixed", "generation": "periodic", "rate_ms": 1.0, "raw": True}, "--baud 250000"),
    ({"mode": "mixed", "generation": "free", "rate_ms": 1.0, "raw": False}, "periodic series' choice"),
])
def test_a_periodic_series_it_cannot_run_is_refused_in_one_line(kw: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        RunConfig(**kw)


def test_a_series_begins_at_a_moment_not_at_a_tag() -> None:
    """Tags wrap at 65536: the third series' first tag is also an event of the first series (a 10-minute run
    sent its fourth series when the first reached that tag, and the executor refused it). A series begins at
    its first moment."""
    from mmsched.model.grid import Grid
    from mmsched.model.series import SeriesPlan

    plan = SeriesPlan(Grid(10, 16000, 1_137_778, 16_000_000), 200_000, 9, 0.5)
    assert [c.first_k for c in plan.chunks] == [0, 60_000, 120_000, 180_000]
    assert plan.tag(54_464) == plan.tag(120_000)                 # the same tag, 65,536 moments apart
    assert plan.starting_at(54_464) is None and plan.starting_at(120_000) is plan.chunks[2]
    assert plan.starting_at(0) is plan.chunks[0] and plan.starting_at(200_000) is None


def test_a_series_on_the_histogram_alone_killed_on_the_way_keeps_the_profilers_figures_so_far(tmp_path: Path) -> None:
    """A run with no event rows (`--no-raw`) has nothing for its journal's rows: at each edge of its maxima the
    journal's json gets its figures so far (the profiler's summary, cells and maxima), so a run killed with SIGKILL
    keeps them, and `mmrig report` reads them as an incomplete run, never a result."""
    import signal
    import time

    out = tmp_path / "k"
    partial = out.with_name("k.partial.json")
    proc = subprocess.Popen([*MMRIG, "run", "--generation", "periodic", "-i", "1ms", "--baud", "115200", "--no-raw",
                             "--unpaced", "-D", "600s", "--maxima-every", "1s", "-q", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    meta: dict = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len((meta.get("maxima") or {}).get("intervals") or []) < 3:
            time.sleep(0.2)
            try:
                meta = json.loads(partial.read_text())
            except (FileNotFoundError, json.JSONDecodeError):
                pass
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    meta = json.loads(partial.read_text())
    assert meta["incomplete"] and not out.with_suffix(".json").exists() and not meta["valid"]
    assert meta["invalid_reasons"][0]["code"] == "incomplete" and "profiler's figures" in meta["invalid_reason"]
    s, m = meta["summary"], meta["maxima"]
    assert s["from_profiler_histogram"] and s["n"] > 0 and m["from"] == "profiler reports"
    # (a report's cells are sent before its summary: they may lag it by the edges of their sending)
    assert m["n"] == s["n"] >= meta["histogram"]["n"] > 0 and len(m["intervals"]) >= 3
    assert not meta["profiler_histogram"]["final"]
    r = subprocess.run([*MMRIG, "report", str(partial.with_suffix(".csv")), "--all", "--out", str(tmp_path / "rep"),
                        "--no-trace"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "incomplete" in md and "| k | 1 |" in md.split("## The profiler's own histograms")[1]
    assert (tmp_path / "rep" / "figures" / "worst-over-time-k.png").exists()
