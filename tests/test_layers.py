"""What may import what (docs/architecture.md, "Layers"), read from the sources: every `import`, `from ...
import` (relative ones resolved), `importlib.import_module("...")` and `__import__("...")` of every module of
the project's packages, at any depth (an import inside a function is a dependency too, only a later one).

The packages stand in layers, each importing only those below it:

    mmrig        the application layer: every entry point (command line, demo, sweep, lab key, fault
                 campaign, soak, pytest plugin, the desktop app)
    mmhil        the bench and the Rig (and the bench as the core's endpoint)
    mmsched      the scheduler's headless core
    mmanalysis   the run format, statistics, figures, reports
    mmproto      the wire protocol

So there is no import cycle between packages, and on the scheduler's side only the application layer imports
the bench. Inside the scheduler's core each floor imports only the floors CORE_FLOORS names below it (three storeys:
model and host on the ground, link and verdict on them, run on top), and no module of the core imports another in
a loop. Qt is imported by the desktop app (`mmrig.gui`) alone. A few modules are also imported in a fresh
interpreter, to check what they pull in when they load (the GUI's run process must not load Qt)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"mmproto": "protocol/python/mmproto", "mmanalysis": "analysis/mmanalysis",
            "mmsched": "scheduler-gui/mmsched", "mmhil": "hil/mmhil", "mmrig": "scheduler-gui/mmrig"}
LAYERS = ("mmproto", "mmanalysis", "mmsched", "mmhil", "mmrig")      # bottom to top
# mmsched's floors and what each may import (docs/architecture.md, "Scheduler core"): the model and the host's
# threads know nothing of each other or of runs; the links run on the host's threads; a verdict is given records
# of the model, never a link or a run
CORE_FLOORS = {"model": (), "host": (), "link": ("model", "host"), "verdict": ("model",),
               "run": ("model", "host", "link", "verdict")}
QT = ("PySide6", "pyqtgraph", "shiboken6")
QT_HOME = "mmrig.gui"


def module_name(path: Path, package: str) -> str:
    rel = path.relative_to(ROOT / PACKAGES[package]).with_suffix("")
    parts = [package, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, package: str) -> set[str]:
    """Every module name the file imports, at any depth, absolute."""
    name = module_name(path, package)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)   # `from pkg import module`
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Name) and node.func.id == "__import__")
                   or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"))):
            found.add(node.args[0].value)
    return found


def sources() -> dict[str, tuple[str, set[str]]]:
    """module -> (its package, the modules it imports)"""
    out = {}
    for package, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            out[module_name(path, package)] = (package, imported(path, package))
    return out


SOURCES = sources()


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for package, deps in SOURCES.values():
        graph[package] |= {d.split(".")[0] for d in deps if d.split(".")[0] in PACKAGES} - {package}
    return graph


def test_every_package_was_read() -> None:
    assert {"mmsched.run.runner", "mmsched.verdict.validity", "mmhil.rig", "mmrig.cli.run", "mmrig.gui.window",
            "mmanalysis.reader", "mmproto.link"} <= set(SOURCES)


def a_loop(graph: dict[str, set[str]]) -> list[str] | None:
    """A loop of imports in `graph` (node -> the nodes it imports), as the path around it, or None (a depth-first
    walk: a node met again while it is still being walked closes a loop)."""
    state: dict[str, int] = {}

    def loop_from(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for q in sorted(graph[m]):
            if state.get(q) == 1:
                return path + [m, q]
            if q not in state and (found := loop_from(q, path + [m])):
                return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := loop_from(m, [])):
            return found
    return None


def test_no_import_cycle_between_packages() -> None:
    assert (c := a_loop(package_graph())) is None, f"import cycle: {' -> '.join(c)}"


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_a_module_imports_only_its_layer_and_those_below(module: str) -> None:
    package, deps = SOURCES[module]
    floor = LAYERS.index(package)
    above = sorted(d for d in deps if d.split(".")[0] in LAYERS[floor + 1:])
    assert above == [], f"{module} ({package}) imports from a layer above it: {above}"
    qt = sorted(d for d in deps if d.split(".")[0] in QT)
    assert not qt or module == QT_HOME or module.startswith(QT_HOME + "."), f"{module} imports Qt: {qt}"


def test_on_the_schedulers_side_only_the_application_layer_imports_the_bench() -> None:
    users = {m for m, (p, deps) in SOURCES.items() if p in ("mmsched", "mmrig") and any(
        d.split(".")[0] == "mmhil" for d in deps)}
    assert users and all(m.startswith("mmrig") for m in users), sorted(users)


@pytest.mark.parametrize("module, banned", [
    ("mmrig.child", QT),                  # the GUI's run process: spawned, it must not load Qt
    ("mmrig.cli", QT),                    # the command line loads Qt only for `mmrig gui`
    ("mmsched.run.runner", ("mmhil", "mmrig", *QT)),
    ("mmhil", ("mmsched", "mmrig", "pandas", *QT)),   # pytest loads it with the plugin in every session: lazy
    ("mmhil.bench", ("mmsched", "mmrig", "pandas", *QT)),   # a script that only starts a bench
])
def test_what_a_module_pulls_in_when_it_loads(module: str, banned: tuple[str, ...]) -> None:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    bad = [m for m in done.stdout.split() if m.split(".")[0] in banned]
    assert bad == [], f"{module} pulls in {bad[:5]}"


def core_floor(module: str) -> str | None:
    """The floor of a module of the core (mmsched.FLOOR.x), or None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "mmsched" and len(parts) > 1 and parts[1] in CORE_FLOORS else None


def owner(name: str) -> str | None:
    """The module an imported name belongs to: the longest prefix that is a module of the project."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in SOURCES:
            return ".".join(parts[:i])
    return None


CORE = sorted(m for m in SOURCES if m.startswith("mmsched."))


def test_every_module_of_the_core_stands_on_a_floor() -> None:
    assert [m for m in CORE if core_floor(m) is None] == []
    assert {core_floor(m) for m in CORE} == set(CORE_FLOORS)


@pytest.mark.parametrize("module", CORE)
def test_a_core_module_imports_only_its_floor_and_those_below(module: str) -> None:
    floor = core_floor(module) or "model"
    allowed = {floor, *CORE_FLOORS[floor]}
    outside = sorted(d for d in SOURCES[module][1] if (f := core_floor(d)) and f not in allowed)
    assert outside == [], f"{module} ({floor}: may import {sorted(allowed)}) imports {outside}"


def test_no_import_loop_inside_the_core() -> None:
    graph = {m: {o for d in SOURCES[m][1] if (o := owner(d)) and o != m and o in CORE and not o.endswith("__init__")
                 and core_floor(o) and o.count(".") > 1} for m in CORE}
    assert (c := a_loop(graph)) is None, f"import loop: {' -> '.join(c)}"
