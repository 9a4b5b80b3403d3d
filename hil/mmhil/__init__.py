"""mmhil: the virtual bench (hil/bench, simavr) from Python, and the Rig API that drives either the
bench or real boards through pyserial."""

from .bench import Bench, BenchError, ensure_built
from .rig import Arrival, Link, Rig, RigError
from .cli import run_bench_foreground

__all__ = ["Arrival", "Bench", "BenchError", "Link", "Rig", "RigError", "ensure_built", "run_bench_foreground"]
