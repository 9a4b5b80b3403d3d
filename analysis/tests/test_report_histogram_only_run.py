"""A periodic series measured by the AVR profiler's histogram alone (`mmrig run --no-raw`): its CSV has no event
rows by design and its sidecar's summary comes from the profiler's histogram, so the report must not take the
empty CSV for a disagreement with that summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mmanalysis import read_runs, summarize
from mmanalysis.report import consistency, report


@pytest.fixture(scope="module")
def histogram_only_run(tmp_path_factory) -> Path:
    from mmhil.bench import ensure_built

    ensure_built()
    out = tmp_path_factory.mktemp("hist-only")
    r = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--generation", "periodic", "-i", "1ms",
                        "--count", "500", "--unpaced", "--no-raw", "--out", str(out / "series")],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f"mmrig run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return out


def test_a_run_on_the_profilers_histogram_alone_is_not_a_disagreement(histogram_only_run: Path) -> None:
    data = read_runs(histogram_only_run)
    meta = data.meta["series"]
    assert data.df.empty and meta["summary"]["n"] == 500 and meta["summary"]["from_profiler_histogram"]
    assert consistency(data, summarize(data, by="run")) == []
    md = report(data, histogram_only_run / "rep", figures=False)["md"].read_text()
    assert "disagrees" not in md
    assert "| series | 1 | 500 |" in md.split("## The profiler's own histograms")[1]   # its figures: there


def test_a_run_with_rows_that_disagree_with_its_summary_is_still_flagged(histogram_only_run: Path,
                                                                          tmp_path: Path) -> None:
    """The same sidecar without the histogram's mark: an empty CSV against n=500 is a disagreement."""
    import json
    import shutil

    shutil.copy(histogram_only_run / "series.csv", tmp_path / "series.csv")
    meta = json.loads((histogram_only_run / "series.json").read_text())
    del meta["summary"]["from_profiler_histogram"]
    (tmp_path / "series.json").write_text(json.dumps(meta))
    data = read_runs(tmp_path)
    problems = consistency(data, summarize(data, by="run"))
    assert "series: sidecar summary n=500, CSV has 0 ok+late rows" in problems
