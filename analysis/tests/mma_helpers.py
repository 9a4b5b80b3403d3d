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



# The runs of the lab as generated stand-ins: name -> (synth experiment, generation, dispatch, paced, discipline).
# HANDIN: the nine runs `mmrig demo` makes (docs/lab.md step 3); KEY: those of `mmrig lab key`
# (mmrig.labkey.runs.RUNS) the class report grades with, lockstep or paced as the key makes them (its two step-5
# runs are no paper experiment's: left out).
HANDIN_RUNS = {
    "exp1-verification": ("verification", "aligned", "task", True, False),
    "exp1i-verification-isr": ("verification", "aligned", "isr", True, False),
    "exp2-normal": ("normal-1ahead", "aligned", "task", True, False),
    "exp2b-normal-disciplined": ("normal-1ahead", "aligned", "task", True, True),
    "exp3-mixed-1ahead": ("mixed-1ahead", "aligned", "task", True, False),
    "exp3b-mixed-1ahead-free": ("mixed-1ahead", "free", "task", True, False),
    "exp4-mixed-2ahead": ("mixed-2ahead", "aligned", "task", True, False),
    "exp4i-mixed-2ahead-isr": ("mixed-2ahead", "aligned", "isr", True, False),
    "exp5-mixed-2ahead-load": ("mixed-2ahead-loaded", "aligned", "task", True, False),
}
KEY_RUNS = {
    "exp1-verification": ("verification", "aligned", "task", False, False),
    "exp1i-verification-isr": ("verification", "aligned", "isr", False, False),
    "exp2-normal": ("normal-1ahead", "aligned", "task", True, False),
    "exp3-mixed-1ahead": ("mixed-1ahead", "aligned", "task", False, False),
    "exp3b-mixed-1ahead-free": ("mixed-1ahead", "free", "task", True, False),
    "exp4-mixed-2ahead": ("mixed-2ahead", "aligned", "task", False, False),
    "exp4i-mixed-2ahead-isr": ("mixed-2ahead", "aligned", "isr", False, False),
    "exp4p-mixed-2ahead-paced": ("mixed-2ahead", "aligned", "task", True, False),
    "exp5-mixed-2ahead-load": ("mixed-2ahead-loaded", "aligned", "task", True, False),
}


def standin_runs(folder: Path, runs: dict[str, tuple], seed: int = 900, count: int = 40) -> Path:
    """Generated stand-ins (mmanalysis.synth, posing as bench runs) of RUNS (HANDIN_RUNS, KEY_RUNS) in FOLDER,
    each drawn with a seed of its own so no two runs share their figures."""
    import json

    from mmanalysis import synth

    for i, (name, (experiment, generation, dispatch, paced, discipline)) in enumerate(runs.items()):
        csv = synth._handin_run(folder, name, experiment, "bench", count, seed + i, generation, dispatch=dispatch)
        js = csv.with_suffix(".json")
        meta = json.loads(js.read_text())
        meta["target"]["paced"] = paced
        meta["config"]["discipline"] = discipline
        js.write_text(json.dumps(meta, indent=2) + "\n")
    return folder


def standin_key(folder: Path, count: int = 40) -> Path:
    """Stand-ins for the runs `mmrig lab key --out CLASS/lab-key.md` writes to FOLDER (CLASS/lab-key-runs/)."""
    return standin_runs(folder, KEY_RUNS, 900, count)
