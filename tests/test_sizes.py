"""Rooms of one concept each, by size (docs/architecture.md), outside tests: a function over 120 lines fails;
a Python source file over 700 lines is a warning, not a failure, because a file is split only along a concept
(a room that holds one concept stays whole however long it is; cutting it at a line count scatters the concept).
A function or file that must stay larger is listed below with its reason."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("protocol/python/mmproto", "analysis/mmanalysis", "scheduler-gui/mmsched", "scheduler-gui/mmrig",
           "hil/mmhil", "tools", "protocol/vectors", "scheduler-gui/perf", "hil/perf", "analysis/perf",
           "protocol/python/perf", "executor/perf", "executor/tests/simrun.py", "profiler-fw/tools")
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 120
# path (from the root) -> why it may be larger; function: "path:name"
FILE_EXCEPTIONS: dict[str, str] = {}
FUNCTION_EXCEPTIONS: dict[str, str] = {}


def python_files() -> list[Path]:
    out = []
    for s in SOURCES:
        p = ROOT / s
        out += [p] if p.is_file() else sorted(p.rglob("*.py")) if p.is_dir() else []
    return [p for p in out if "tests" not in p.relative_to(ROOT).parts[:-1] or p.name == "simrun.py"]


def test_there_are_sources_to_measure() -> None:
    assert len(python_files()) > 100


def test_files_over_the_limit_are_warned() -> None:
    # a warning line per file over MAX_FILE_LINES (pytest lists them in its summary): a reason to look for a
    # second concept in the file, not to cut it at a line count
    files = python_files()
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in files}
    assert len(sizes) == len(files) > 100 and sum(sizes.values()) > 0, "no Python sources measured"
    for path, n in sorted(sizes.items()):
        if n > MAX_FILE_LINES and path not in FILE_EXCEPTIONS:
            warnings.warn(f"{path}: {n} lines, over {MAX_FILE_LINES}: split it if it holds more than one concept",
                          UserWarning, stacklevel=1)


def test_no_function_over_the_limit() -> None:
    over = {}
    for p in python_files():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                key = f"{p.relative_to(ROOT)}:{node.name}"
                if n > MAX_FUNCTION_LINES and key not in FUNCTION_EXCEPTIONS:
                    over[key] = n
    assert over == {}


def test_every_exception_is_still_needed() -> None:
    # an exception listed for a room that has since been made small enough is taken out of the list
    for path in FILE_EXCEPTIONS:
        assert len((ROOT / path).read_text().splitlines()) > MAX_FILE_LINES, path
