"""docs/data-format.md opens with three lines of pandas that reproduce a run's summary from its CSV alone. They are
run here, as the document gives them, on a real lockstep run on the bench (mixed mode, one tick ahead, free-running
generation: some of its events are missed, so not every row is in the figures)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "data-format.md"


def opening_lines() -> list[str]:
    """The lines of the first code block of docs/data-format.md, which must come before any other section."""
    text = DOC.read_text()
    m = re.search(r"```python\n(.*?)```", text, flags=re.S)
    assert m and "\n## " not in text[:m.start()], "docs/data-format.md does not open with its pandas lines"
    return m.group(1).strip().splitlines()


@pytest.fixture(scope="module")
def lockstep_run(tmp_path_factory) -> Path:
    from mmhil.bench import ensure_built

    ensure_built()
    out = tmp_path_factory.mktemp("lockstep") / "free-1ahead"
    r = subprocess.run([sys.executable, "-m", "mmrig", "run", "--mode", "mixed", "--distance", "1", "--generation",
                        "free", "--rate", "97", "--count", "30", "--unpaced", "--out", str(out)],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f"mmrig run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return out.with_suffix(".csv")


def test_the_documents_pandas_lines_give_the_summary(lockstep_run: Path) -> None:
    lines = opening_lines()
    assert len(lines) == 3 and lines[0] == "import pandas as pd" and '"NAME.csv"' in lines[1]
    scope: dict = {}
    exec("\n".join(lines[:2]).replace('"NAME.csv"', repr(str(lockstep_run))), scope)
    figures = eval(lines[2].split("#")[0], scope)
    summary = json.loads(lockstep_run.with_suffix(".json").read_text())["summary"]
    df = scope["df"]
    assert summary["n"] < len(df) and summary["outcomes"]["missed"] > 0      # rows that are not in the figures
    assert figures["count"] == summary["n"]
    assert figures["mean"] == pytest.approx(summary["mean_us"], rel=1e-12)
    assert figures["max"] == summary["max_us"]
    # and what the document says beside them: the variance and the 99th percentile too
    kept = df[df.in_stats].latency_us
    assert kept.var() == pytest.approx(summary["variance_us2"], rel=1e-9, abs=1e-12)
    assert kept.quantile(0.99) == pytest.approx(summary["p99_us"], rel=1e-12)
