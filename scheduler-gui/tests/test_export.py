"""A run's files (mmsched.export.write_run): the CSV read back by bare pandas, the summary beside it."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from mmsched.event import COLUMNS
from mmsched.export import write_run
from mmsched.stats import summarize

sys.path.insert(0, str(Path(__file__).parent))
from fake_events import ev, finished  # noqa: E402


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
