from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mmanalysis import read_runs, summarize, synth


def raw(csv_path: Path) -> list[dict]:
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


def expected(rows: list[dict], tick_counts: int) -> dict:
    """The statistics, from the CSV text with numpy, independently of mmanalysis."""
    m = [r for r in rows if r["outcome"] in ("ok", "late")]
    lat = np.array([float(r["latency_us"]) for r in m])
    ticks = np.array([int(r["latency_counts"]) for r in m]) / tick_counts
    jit = np.abs(np.diff(lat))
    out = {"n": len(lat), "mean_us": lat.mean(), "var_us2": lat.var(ddof=1), "std_us": lat.std(ddof=1),
           "min_us": lat.min(), "max_us": lat.max(), "p50_us": np.median(lat), "p90_us": np.percentile(lat, 90),
           "p99_us": np.percentile(lat, 99), "p999_us": np.percentile(lat, 99.9),
           "mean_ticks": ticks.mean(), "p99_ticks": np.percentile(ticks, 99), "max_ticks": ticks.max(),
           "jitter_mean_us": jit.mean(), "jitter_max_us": jit.max(), "events": len(rows)}
    for o in ("ok", "late", "early", "missed", "lost"):
        out[o] = sum(r["outcome"] == o for r in rows)
    return out


@pytest.mark.parametrize("name", list(synth.EXPERIMENTS))
def test_per_run_against_numpy(experiments_dir, name):
    s = summarize(read_runs(experiments_dir)).set_index("run").loc[name]
    exp = expected(raw(experiments_dir / f"{name}.csv"), synth.TICK_COUNTS)
    for k, v in exp.items():
        assert s[k] == pytest.approx(v, rel=1e-9), k
    assert s["var_ms2"] == pytest.approx(exp["var_us2"] / 1e6)
    assert s["ok_share"] == pytest.approx(exp["ok"] / exp["events"])
    assert s["early"] >= 1 and s["missed"] + s["lost"] >= 1  # the synthetic runs exercise every outcome


def test_unmeasured_rows_never_folded_in(tmp_path):
    rows = synth.synthetic_events("mixed", 2, False, 50, seed=2)
    # an early row carries a (negative) latency; missed/lost rows get absurd ones: none may count
    rows.loc[rows["outcome"] == "lost", ["latency_us", "latency_counts"]] = [1e9, 16_000_000_000_000]
    synth.write_run(tmp_path / "r", rows, synth.sidecar("r", rows))
    s = summarize(read_runs(tmp_path / "r.csv")).iloc[0]
    kept = rows[rows["outcome"].isin(["ok", "late"])]["latency_us"]
    assert s["n"] == len(kept) < 50
    assert s["min_us"] == kept.min() > 0 and s["max_us"] == kept.max() < 1e6


def test_jitter_skips_unmeasured_events(tmp_path):
    rows = synth.synthetic_events("verification", 1, False, 6, seed=0)
    rows["latency_counts"] = pd.array([160, 320, None, 800, 480, 480], dtype="Int64")
    rows["latency_us"] = rows["latency_counts"].astype(float) / 16
    rows["outcome"] = ["ok", "ok", "missed", "ok", "ok", "ok"]
    rows["reason"] = ["", "", "timeout", "", "", ""]
    synth.write_run(tmp_path / "j", rows, synth.sidecar("j", rows))
    data = read_runs(tmp_path / "j.csv")
    assert data.df["jitter_us"].tolist()[1:] == [10.0, pytest.approx(np.nan, nan_ok=True), 30.0, 20.0, 0.0]
    s = summarize(data).iloc[0]
    assert (s["jitter_mean_us"], s["jitter_max_us"]) == (15.0, 30.0)


def test_groups_pool_runs_and_skip_invalid(tmp_path):
    for i in range(2):
        synth.write_experiment(tmp_path, "mixed-2ahead", count=30, seed=i)
        (tmp_path / "mixed-2ahead.csv").rename(tmp_path / f"m{i}.csv")
        meta = json.loads((tmp_path / "mixed-2ahead.json").read_text())
        (tmp_path / "mixed-2ahead.json").unlink()
        (tmp_path / f"m{i}.json").write_text(json.dumps(dict(meta, name=f"m{i}")))
    rows = synth.synthetic_events("mixed", 2, False, 30, seed=9)
    synth.write_run(tmp_path / "bad", rows, synth.sidecar("bad", rows, valid=False))
    data = read_runs(tmp_path)
    g = summarize(data, by="group")
    assert len(g) == 1 and g.iloc[0]["events"] == 60  # the invalid run is left out
    lat = np.concatenate([pd.read_csv(tmp_path / f"m{i}.csv").query("outcome in ['ok','late']")["latency_us"]
                          for i in range(2)])
    assert g.iloc[0]["mean_us"] == pytest.approx(lat.mean()) and g.iloc[0]["p99_us"] == pytest.approx(np.percentile(lat, 99))
    per_run = summarize(data).set_index("run")
    assert not per_run.loc["bad", "valid"] and per_run.loc["m0", "valid"]
    # jitter never spans two runs: pooled max is the max of the per-run maxima
    assert g.iloc[0]["jitter_max_us"] == max(per_run.loc["m0", "jitter_max_us"], per_run.loc["m1", "jitter_max_us"])


def test_summary_of_a_million_events_counts_them_all(experiments_dir):
    # how long it takes is analysis/perf/perf_summary.py's figure (make perf), not an assertion here
    data = read_runs(experiments_dir / "mixed-2ahead.csv")
    big = pd.concat([data.df] * 5000, ignore_index=True)  # 1,000,000 rows
    assert len(big) == 1_000_000
    s = summarize(big)
    assert s.iloc[0]["events"] == 1_000_000


def test_group_rows_follow_their_keys(experiments_dir):
    data = read_runs(experiments_dir)
    g = summarize(data, by="group")
    per_run = summarize(data).set_index("run")
    assert len(g) == 5
    for _, row in g.iterrows():
        name = next(n for n, cfg in synth.EXPERIMENTS.items() if (cfg[0], cfg[1], "heavy" if cfg[2] else "idle") == (row["mode"], row["distance"], row["load"]))
        assert row["mean_us"] == per_run.loc[name, "mean_us"] and row["events"] == per_run.loc[name, "events"]
