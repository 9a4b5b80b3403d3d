"""What may import what (docs/architecture.md, "Import rules"), checked module by module in a fresh
interpreter: the scheduler core knows neither Qt nor the bench; the protocol and the analysis know no one
above them; only entry points (the command line, the demo, the GUI) choose the bench or boards."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import mmanalysis
import mmhil
import mmproto
import mmsched

ENTRY_POINTS = {"mmsched.cli", "mmsched.demo", "mmsched.__main__"}
QT = ("PySide6", "pyqtgraph")


def modules(package) -> list[str]:
    """The package and its modules, less __main__ (a program: importing it runs it)."""
    found = [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted([package.__name__] + [m for m in found if not m.endswith(".__main__")])


CORE = [m for m in modules(mmsched) if m not in ENTRY_POINTS and not m.startswith("mmsched.gui")]
# module -> prefixes of modules it must not pull in, directly or through anything it imports
RULES = {
    **{m: ("mmhil", *QT) for m in CORE},
    **{m: ("mmsched", "mmhil", "mmanalysis", *QT) for m in modules(mmproto)},
    **{m: ("mmsched", "mmhil", *QT) for m in modules(mmanalysis)},
    **{m: QT for m in modules(mmhil)},
}


def loaded_after_import(module: str) -> list[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_core_has_modules_to_check() -> None:
    assert {"mmsched.runner", "mmsched.endpoint", "mmsched.session", "mmsched.runstate"} <= set(CORE)
    assert "mmproto.link" in RULES and "mmhil.endpoint" in RULES


@pytest.mark.parametrize("module", sorted(RULES))
def test_import_rules(module: str) -> None:
    banned = RULES[module]
    bad = [m for m in loaded_after_import(module) if m.split(".")[0] in banned]
    assert bad == [], f"{module} pulls in {bad[:5]}"
