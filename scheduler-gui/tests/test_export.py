"""A run's files (mmsched.verdict.export.write_run): the CSV read back by bare pandas, the summary beside it."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import mmproto as mp
from mmsched.model.event import COLUMNS
from mmsched.verdict.export import write_run
from mmsched.verdict.outcome import apply_result
from mmsched.verdict.stats import summarize

sys.path.insert(0, str(Path(__file__).parent))
from fake_events import TB, ev, finished  # noqa: E402


def test_export_is_read_by_bare_pandas(tmp_path: Path) -> None:
    evs = finished(3)
    m = ev(3)
    m.finish("missed", "past_due")
    evs.append(m)
    s = summarize(evs)
    csv_path, json_path = write_run(tmp_path / "run", evs, {"summary": s})
    df = pd.read_csv(csv_path)
    assert list(df.columns) == list(COLUMNS) and len(df) == 4
    assert df["outcome"].tolist() == ["ok", "ok", "ok", "missed"]
    assert df["reason"].isna().tolist() == [True, True, True, False]
    assert df["latency_us"].iloc[:3].tolist() == [1.375, 1.4375, 1.5] and pd.isna(df["latency_us"].iloc[3])
    assert s["n"] == 3 and s["outcomes"]["missed"] == 1 and s["mean_us"] == pytest.approx(1.4375)
    assert s["variance_us2"] == pytest.approx(0.00390625)
    assert json_path.exists()


def test_in_stats_marks_the_rows_the_summary_is_over(tmp_path: Path) -> None:
    """Bare pandas: `df[df.in_stats]` are the rows of the sidecar's summary (ok and late, measurable), so its n,
    mean and max are the summary's; a naive `df.latency_us.mean()` also takes an early row's negative latency and
    a row a host stall made not measurable."""
    evs = finished(3)                                         # ok: 1.375, 1.4375, 1.5 us
    late, early, stalled, missed = ev(3), ev(4), ev(5), ev(6)
    apply_result(late, mp.Result(0, 0, 3, late.scheduled_tc, 19_200), TB, 1000.0)          # 1200 us: late
    apply_result(early, mp.Result(0, 0, 4, early.scheduled_tc - 1, 1_137_000), TB, 1000.0)  # before its tick
    apply_result(stalled, mp.Result(0, 0, 5, stalled.scheduled_tc, 8_000), TB, 1000.0)      # 500 us, ok ...
    stalled.measurable, stalled.stall_us = False, 2541.3                                     # ... but displaced
    missed.finish("missed", "past_due")
    evs += [late, early, stalled, missed]
    assert [e.outcome for e in evs] == ["ok", "ok", "ok", "late", "early", "ok", "missed"]
    s = summarize(evs)
    csv_path, _ = write_run(tmp_path / "run", evs, {"summary": s})
    df = pd.read_csv(csv_path)
    assert df["in_stats"].dtype == bool
    assert df["in_stats"].tolist() == [True, True, True, True, False, False, False]
    got = df[df.in_stats].latency_us
    assert (len(got), got.mean(), got.max()) == (s["n"], pytest.approx(s["mean_us"]), s["max_us"])
    assert df.latency_us.mean() != pytest.approx(s["mean_us"])        # why the column is there
