from __future__ import annotations

import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mma_helpers import NOTEBOOK, execute, outputs  # noqa: E402


def test_notebook_is_clean_and_has_questions():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert all(f"**Q{i}.**" in text for i in range(1, 10))
    assert "parameters" in nb.cells[1].metadata.get("tags", [])



def test_notebook_runs_on_synthetic_results(experiments_dir, tmp_path, monkeypatch):
    nb = execute(experiments_dir, tmp_path, monkeypatch)
    texts, images = outputs(nb)
    joined = "\n".join(texts)
    assert images == 6  # compare, histogram, cdf, slack, missed-phase, timeline: each shown once
    assert "mixed-2ahead-loaded" in joined and ("lower than the paper's" in joined)
    assert "largest jitter:" in joined
    assert {p.name for p in (tmp_path / "figs").iterdir()} >= {"compare.png", "cdf.svg", "slack.png"}


def test_lab_command_runs_the_kernel_without_tcp(experiments_dir, tmp_path):
    """`python -m mmanalysis lab` talks to its kernel over IPC: no 'Kernel is running over TCP without
    encryption' warning on stderr, and no socket files left in the student's directory."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(
        str(root / p) for p in ("protocol/python", "scheduler-gui", "hil", "analysis")))
    r = subprocess.run([sys.executable, "-m", "mmanalysis", "lab", str(experiments_dir), "--out", "lab.ipynb"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "TCP" not in r.stderr and "encryption" not in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lab", "lab.ipynb"]
