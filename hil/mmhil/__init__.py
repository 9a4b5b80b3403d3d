"""mmhil: the virtual bench (hil/bench, simavr) from Python, and the Rig API that drives either the
bench or real boards through pyserial, and the bench as the scheduler core's endpoint. The pytest plugin
that puts them in a test session is the application layer's (mmrig.pytest_plugin, docs/hil.md).

The names below load on first use (PEP 562): pytest loads the plugin, and with it this package, in every
session where mmrig is installed, which must not pay for the bench, the scheduler and pandas up front."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"Bench": "bench", "BenchError": "bench", "ensure_built": "bench",
          "BenchEndpoint": "endpoint", "LockstepEndpoint": "endpoint", "EventResult": "eventresult",
          "summarize": "eventresult", "Rig": "rig", "RigError": "rig", "SeriesResult": "series"}

__all__ = sorted([*_WHERE, "frames"])


def __getattr__(name: str) -> Any:
    if name == "frames":
        return importlib.import_module(".frames", __name__)
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module 'mmhil' has no attribute {name!r}")
