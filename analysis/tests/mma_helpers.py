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


def glance_rows(md: str) -> dict[str, list[str]]:
    """The class report's first page, one line a group: group -> [group, status, checks, missing, look at]."""
    page = md.split("## Groups at a glance\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in page.splitlines()
            if line.startswith("| group-")]
    return {r[0]: r for r in rows}


def check_planted(md: str, planted: list[dict], lacks: tuple[str, ...] = ()) -> None:
    """The first page of a class report over mmanalysis.plantclass's class marks each group as PLANTED (its
    planted.json) says, and nothing else: LACKS are the handout's runs the source had not, or only invalid (every
    group lacks them)."""
    rows = glance_rows(md)
    assert list(rows) == [p["group"] for p in planted]
    copied = {p["what"].split("copy of ", 1)[1]: p["group"] for p in planted if p["what"].startswith("copy of ")}
    for p in planted:
        g, what = p["group"], p["what"]
        status, look = rows[g][1], rows[g][4]
        missing = [x for x in rows[g][3].split(", ") if x != "-" and x.removesuffix(" (no valid run)") not in lacks]
        items = [x for x in look.split("; ") if x != "-" and not x.startswith("no: ")]
        if g in copied:          # the group another copied: flagged as the copy is, for the teacher to ask both
            assert len(items) == 1 and items[0].startswith(f"copy of {copied[g]} ("), (g, rows[g])
            items = []
        if what == "clean" or what == "8051":
            assert missing == [] and items == [], (g, rows[g])
            assert status in ("passed", "missing" if lacks else "passed") or g in copied \
                or look.startswith("no: "), (g, rows[g])
        elif what == "corrupted":
            assert status == "look at" and items == [f"unreadable: {p['run']}.csv"], (g, rows[g])
        elif what == "missing":
            assert status != "passed" and missing == ["exp5", "lab.html"] and items == [], (g, rows[g])
        elif what.startswith("copy of "):
            other = what.split("copy of ", 1)[1]
            assert status == "look at" and len(items) == 1 and items[0].startswith(f"copy of {other} ("), rows[g]
            assert rows[other][4].startswith(f"copy of {g} ("), rows[other]
        elif what == "short":
            assert status == "look at" and len(items) == 1 and items[0].startswith(f"short: {p['run']} ("), rows[g]
        else:
            raise AssertionError(f"unknown plant {what}")
    kinds = md.split("Problems and notes by kind", 1)[1].split("\n## ", 1)[0]
    i8051 = [p["group"] for p in planted if p["what"] == "8051"]
    if i8051:
        assert f"| 8051 run | note | 1 | {i8051[0]} |" in kinds, kinds
