"""mmhil: the virtual bench (hil/bench, simavr) from Python, and the Rig API that drives either the
bench or real boards through pyserial; its pytest plugin is mmhil.pytest_plugin (docs/hil.md)."""

from . import frames
from .bench import Bench, BenchError, ensure_built
from .cli import run_bench_foreground
from .endpoint import BenchEndpoint, LockstepEndpoint
from .eventresult import EventResult, summarize
from .rig import Rig, RigError

__all__ = ["Bench", "BenchEndpoint", "BenchError", "EventResult", "LockstepEndpoint", "Rig", "RigError", "ensure_built",
           "frames", "run_bench_foreground", "summarize"]
