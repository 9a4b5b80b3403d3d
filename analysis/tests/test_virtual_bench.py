"""A real run on the virtual bench (both AVR images in simavr, `mmrig run --unpaced`), then the analysis and
the lab notebook on it: the loader against what the scheduler actually writes, not against our own writer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mmanalysis import read_runs, summarize
from mmanalysis.report import consistency, report

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import execute, outputs  # noqa: E402


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory) -> Path:
    from mmhil.bench import ensure_built

    ensure_built()  # the bench program and the real profiler and executor images
    out = tmp_path_factory.mktemp("bench") / "results"
    out.mkdir()            # mmrig run makes no folder for --out: a missing one is a typing error
    r = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--distance", "2",
                        "--count", "20", "--unpaced", "--out", str(out / "mixed-2ahead")],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f"mmrig run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return out


def test_bench_run_loads_and_agrees_with_its_sidecar(bench_run):
    data = read_runs(bench_run)
    meta = data.meta["mixed-2ahead"]
    assert meta["target"]["kind"] == "bench" and meta["valid"] is True
    assert len(data.df) == 20 and data.df["event"].tolist() == list(range(20))
    per_run = summarize(data)
    assert per_run.iloc[0]["events"] == 20
    assert consistency(data, per_run) == []  # the scheduler's own summary and ours agree
    side = json.loads((bench_run / "mixed-2ahead.json").read_text())["summary"]
    assert per_run.iloc[0]["n"] == side["n"]


def test_notebook_and_report_on_a_bench_run(bench_run, tmp_path, monkeypatch):
    nb = execute(bench_run, tmp_path, monkeypatch)
    texts, images = outputs(nb)
    assert images == 6 and "mixed-2ahead" in "\n".join(texts)
    out = report(bench_run, tmp_path / "rep")
    md = out["md"].read_text()
    assert "SYNTHETIC" not in md and "targets: bench" in md
    assert "| mixed-2ahead |" in md.split("## Runs shown")[1]
