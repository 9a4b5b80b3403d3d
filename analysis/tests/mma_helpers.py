"""Helpers shared by the analysis tests (a unique module name: tests import it through sys.path)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "analysis" / "notebooks" / "lab.ipynb"


def subprocess_env() -> dict[str, str]:
    """The environment for a `python -m mmanalysis` / `mmrig.cli` subprocess: this checkout's packages first
    on PYTHONPATH (then the caller's), matplotlib without a display."""
    paths = [str(ROOT / p) for p in ("protocol/python", "scheduler-gui", "hil", "analysis")]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(paths))


def edit_line(csv_path: Path, line: int, column: str, value: str) -> None:
    """Sets COLUMN on LINE (1 = header) of a run CSV, as text."""
    lines = csv_path.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[line - 1].split(",")
    cells[header.index(column)] = value
    lines[line - 1] = ",".join(cells)
    csv_path.write_text("\n".join(lines) + "\n")


def execute(results: Path, workdir: Path, monkeypatch) -> nbformat.NotebookNode:
    """Runs lab.ipynb headless on RESULTS (through MMRIG_RESULTS, as a student would); raises on any error."""
    monkeypatch.setenv("MMRIG_RESULTS", str(results))
    monkeypatch.setenv("MMRIG_FIGURES", str(workdir / "figs"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def outputs(nb) -> tuple[list[str], int]:
    texts, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            images += "image/png" in data
            texts.append(data.get("text/plain", "") + out.get("text", ""))
    return texts, images


# `mmrig lab key`'s eleven runs (mmrig.labkey.runs.RUNS) as generated stand-ins: name -> (synth experiment,
# generation, dispatch, paced). The two step-5 runs are left out: their executor load puts a task above the
# timecode task (no paper experiment), or they are lockstep mixed runs the key never reads before the paced one.
KEY_RUNS = {
    "exp1-verification": ("verification", "aligned", "task", False),
    "exp1i-verification-isr": ("verification", "aligned", "isr", False),
    "exp2-normal": ("normal-1ahead", "aligned", "task", True),
    "exp3-mixed-1ahead": ("mixed-1ahead", "aligned", "task", False),
    "exp3b-mixed-1ahead-free": ("mixed-1ahead", "free", "task", True),
    "exp4-mixed-2ahead": ("mixed-2ahead", "aligned", "task", False),
    "exp4i-mixed-2ahead-isr": ("mixed-2ahead", "aligned", "isr", False),
    "exp4p-mixed-2ahead-paced": ("mixed-2ahead", "aligned", "task", True),
    "exp5-mixed-2ahead-load": ("mixed-2ahead-loaded", "aligned", "task", True),
}


def standin_key(folder: Path, count: int = 40) -> Path:
    """Generated stand-ins for the runs `mmrig lab key --out CLASS/lab-key.md` writes to FOLDER (CLASS/lab-key-runs/):
    the key's names and configs, each drawn with a seed of its own so no two runs share their figures."""
    import json

    from mmanalysis import synth

    for i, (name, (experiment, generation, dispatch, paced)) in enumerate(KEY_RUNS.items()):
        csv = synth._handin_run(folder, name, experiment, "bench", count, 900 + i, generation, dispatch=dispatch)
        js = csv.with_suffix(".json")
        meta = json.loads(js.read_text())
        meta["target"]["paced"] = paced
        js.write_text(json.dumps(meta, indent=2) + "\n")
    return folder
